"""Derivatives of an optimum by the implicit function theorem, shared by the fits.

At an optimum ``∇_x F(x*; θ) = 0``, so ``dx* = −H⁻¹ d(∇_x F)`` (one linear
solve). ``with_derivative(x*, step, *operands)`` attaches it: ``step(*operands)``
is ``s = −H⁻¹ ∇_x F(x*; θ)`` with ``H`` and ``x*`` held constant, and only its
derivative is used (``s = 0`` at the optimum).
"""

from __future__ import annotations

import functools

import jax


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def with_derivative(value, step, *operands):
    """``value``, differentiated as ``value + step(*operands)``.

    ``step`` runs only when the result is differentiated (its JVP): a program
    that is not differentiated neither traces nor compiles it.
    """
    del step, operands
    return value


@with_derivative.defjvp
def _with_derivative_jvp(step, primals, tangents):
    value, *operands = primals
    d_value, *d_operands = tangents
    _, d_step = jax.jvp(step, tuple(operands), tuple(d_operands))
    return value, d_value + d_step
