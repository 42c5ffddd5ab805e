"""Distances between pseudo-inertias (Lee, Wensing & Park 2020; Lee & Park 2018).

Both take positive definite 4×4 pseudo-inertias ``J`` (or ``RigidBodyInertia`` objects).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _smallmat as smallmat
from ._checks import as_float_array, broadcast_batch, same_dtype


def _as_J(J, name):
    from ._inertia import RigidBodyInertia

    if isinstance(J, RigidBodyInertia):
        return J.pseudo_inertia()
    return as_float_array(J, name, (4, 4))


def _logdet_pd(J):
    L = jnp.linalg.cholesky(J)
    return 2.0 * jnp.sum(jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1)


def log_det_divergence(J, J0):
    """Bregman divergence of ``−log det`` (the "entropic" regulariser), ``≥ 0``.

    ``D(J ‖ J0) = tr(J0⁻¹ J) − log det J + log det J0 − 4`` (Lee, Wensing & Park, T-RO
    2020, eq. 31): zero iff ``J == J0``, frame-invariant, not symmetric; NaN where ``J`` or
    ``J0`` is not positive definite.

    Args:
      J: ``(..., 4, 4)`` pseudo-inertia (or ``RigidBodyInertia``).
      J0: ``(..., 4, 4)`` reference (prior) pseudo-inertia.

    Returns:
      ``(...)`` divergence.
    """
    J, J0 = _as_J(J, "J"), _as_J(J0, "J0")
    same_dtype(J=J, J0=J0)
    broadcast_batch("J", J.shape[:-2], "J0", J0.shape[:-2])
    return _log_det_divergence(J, J0)


@jax.jit
def _log_det_divergence(J, J0):
    """``log_det_divergence`` of checked arrays (one compiled program)."""
    L0 = jnp.linalg.cholesky(J0)
    shape = jnp.broadcast_shapes(J.shape, J0.shape)
    Y = jax.scipy.linalg.cho_solve((jnp.broadcast_to(L0, shape), True), jnp.broadcast_to(J, shape))
    return jnp.trace(Y, axis1=-2, axis2=-1) - _logdet_pd(J) + _logdet_pd(J0) - 4.0


@jax.custom_jvp
def _sum_log_sq_eig(M):
    """``Σ log² λᵢ(M)`` for symmetric positive definite ``M``."""
    return jnp.sum(jnp.log(jnp.linalg.eigvalsh(M)) ** 2, axis=-1)


@_sum_log_sq_eig.defjvp
def _sum_log_sq_eig_jvp(primals, tangents):
    # d Σ g(λᵢ) = tr(V diag(g'(λ)) Vᵀ dM): well defined even for repeated
    # eigenvalues (where differentiating eigh itself divides by λᵢ − λⱼ = 0).
    (M,), (dM,) = primals, tangents
    lam, V = jnp.linalg.eigh(M)
    logl = jnp.log(lam)
    G = jnp.einsum("...ik,...k,...jk->...ij", V, 2.0 * logl / lam, V, precision=smallmat.FULL)
    return jnp.sum(logl**2, axis=-1), jnp.sum(G * dM, axis=(-2, -1))


def geodesic_distance(J1, J2):
    """Affine-invariant Riemannian distance between pseudo-inertias.

    ``d = sqrt(½ Σ log² λᵢ(J1⁻¹ J2))`` (Lee & Park 2018, eq. 14): symmetric, invariant
    under a common frame change and scaling; finite gradients on positive definite inputs
    (0 at ``J1 == J2``); NaN where an input is not positive definite.

    Args:
      J1: ``(..., 4, 4)`` pseudo-inertia (or ``RigidBodyInertia``).
      J2: ``(..., 4, 4)`` pseudo-inertia (or ``RigidBodyInertia``).

    Returns:
      ``(...)`` distance.
    """
    J1, J2 = _as_J(J1, "J1"), _as_J(J2, "J2")
    same_dtype(J1=J1, J2=J2)
    broadcast_batch("J1", J1.shape[:-2], "J2", J2.shape[:-2])
    return _geodesic_distance(J1, J2)


@jax.jit
def _geodesic_distance(J1, J2):
    """``geodesic_distance`` of checked arrays (one compiled program)."""
    L1 = jnp.linalg.cholesky(J1)
    shape = jnp.broadcast_shapes(J1.shape, J2.shape)
    L1 = jnp.broadcast_to(L1, shape)
    # M = L1⁻¹ J2 L1⁻ᵀ has the eigenvalues of J1⁻¹ J2 and is symmetric
    A = jax.scipy.linalg.solve_triangular(L1, jnp.broadcast_to(J2, shape), lower=True)
    M = jax.scipy.linalg.solve_triangular(L1, jnp.swapaxes(A, -1, -2), lower=True)
    M = 0.5 * (M + jnp.swapaxes(M, -1, -2))
    s = 0.5 * _sum_log_sq_eig(M)
    # Bitwise-equal inputs are exactly distance 0 with gradient 0: rounding in M
    # would otherwise leave s ~ eps² > 0 and an O(1) gradient in a random direction.
    equal = jnp.all(jnp.broadcast_to(J1, shape) == jnp.broadcast_to(J2, shape), axis=(-2, -1))
    pos = (s > 0) & ~equal
    # sqrt with a zero (sub)gradient at s == 0; NaN (non-PD input) passes through
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), jnp.where(jnp.isnan(s), s, 0.0))
