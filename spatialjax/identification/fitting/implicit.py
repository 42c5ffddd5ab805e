"""Derivatives of an optimum by the implicit function theorem, shared by the fits.

The solvers iterate on stop-gradient copies of their inputs; at the computed
optimum ``x*`` of ``min_x F(x; θ)`` the gradient ``∇_x F(x*; θ) = 0``
defines ``x*(θ)``, so ``dx* = −H⁻¹ d(∇_x F)`` with ``H = ∇²_x F`` (one
linear solve, whatever the number of iterations). ``fit`` (one body) and
``fit_torques`` (a whole robot) attach that derivative to the value with
``with_derivative(x*, s)``, ``s`` being ``−H⁻¹ ∇_x F(x*; θ)`` with ``H``
and ``x*`` held constant: the value stays exactly ``x*`` and the derivative
is ``ds = dx*``.
"""

from __future__ import annotations

import jax


def with_derivative(value, s):
    """``value + (s − stop_gradient(s))``: the value of ``value``, the derivative of ``s``."""
    return value + (s - jax.lax.stop_gradient(s))
