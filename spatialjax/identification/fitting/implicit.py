"""Derivatives of an optimum by the implicit function theorem, shared by the fits.

At an optimum ``∇_x F(x*; θ) = 0``, so ``dx* = −H⁻¹ d(∇_x F)`` (one linear
solve); ``with_derivative(x*, s)`` attaches it, ``s = −H⁻¹ ∇_x F(x*; θ)``
with ``H`` and ``x*`` held constant.
"""

from __future__ import annotations

import jax


def with_derivative(value, s):
    """``value + (s − stop_gradient(s))``: the value of ``value``, the derivative of ``s``."""
    return value + (s - jax.lax.stop_gradient(s))
