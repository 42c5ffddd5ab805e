r"""The identification objective for one body, reduced to a 10-dimensional problem.

$$
F(π) = \sum_{k,j} w_{kj} (Y_k π − f_k)_j^2
     + γ \bigl(\mathrm{tr}(J_0^{-1} J(π)) − \log\det J(π) + \log\det J_0 − 4\bigr)
$$

The data term is reduced once, before any iteration, by a QR factorisation of
the whitened, augmented regressor ``[√w Y | √w f] = Q [[R, z], [0, ρ]]``: then
``Σ w (Yπ − f)² = ‖Rπ − z‖² + ρ²`` exactly, without the cancellation of the
normal equations, and every later evaluation costs a 10×10 product whatever
the number of samples. The regulariser's trace term is linear in ``π``:
``tr(J0⁻¹ J(π)) = kᵀπ``.

All functions here act on one body; ``fit`` maps them over bodies with ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ..._params import PSEUDO_INERTIA_BASIS, pseudo_inertia
from ..._smallmat import ldl_pivots4, lower_inverse, modified_cholesky


class Problem(NamedTuple):
    """One body's reduced problem (all arrays in the data's dtype).

    Attributes:
      R: ``(10, 10)`` upper-triangular factor of the whitened regressor.
      z: ``(10,)`` projected whitened wrenches.
      rho2: ``()`` residual of the unconstrained least-squares fit (``≥ 0``).
      k: ``(10,)`` with ``kᵀπ = tr(J0⁻¹ J(π))``.
      logdet0: ``()`` ``log det J0``.
      gamma: ``()`` regularisation weight ``γ ≥ 0``.
    """

    R: jax.Array
    z: jax.Array
    rho2: jax.Array
    k: jax.Array
    logdet0: jax.Array
    gamma: jax.Array


def reduce_data(Y, f, w):
    """``R, z, ρ²`` of one body from ``Y (N, 6, 10)``, ``f (N, 6)``, weights ``w (N, 6)``.

    ``Σ w (Yπ − f)² = ‖Rπ − z‖² + ρ²`` with ``W^½ Y = Q R`` (thin QR), ``z = Qᵀ W^½ f``
    and ``ρ² = ‖W^½ f − Q z‖²``. The factorisation depends on ``Y`` and ``w`` only,
    so under ``vmap`` with both shared (``in_axes=None``) it is computed once and each
    body costs one projection. Rows are padded with zeros to at least 10, so a single
    sample works too.
    """
    sw = jnp.sqrt(w)
    A = (Y * sw[..., None]).reshape(-1, 10)
    b = (f * sw).reshape(-1)
    if A.shape[0] < 10:
        A = jnp.concatenate([A, jnp.zeros((10 - A.shape[0], 10), A.dtype)], axis=0)
        b = jnp.concatenate([b, jnp.zeros((10 - b.shape[0],), b.dtype)])
    Q, R = jnp.linalg.qr(A)
    z = Q.T @ b
    r = b - Q @ z
    return R, z, r @ r


def prior_terms(J0):
    """``k`` with ``kᵀπ = tr(J0⁻¹ J(π))`` and ``log det J0`` for a positive definite ``J0``."""
    L = jnp.linalg.cholesky(J0)
    K = jax.scipy.linalg.cho_solve((L, True), jnp.eye(4, dtype=J0.dtype))
    zero = jnp.zeros(10, J0.dtype)
    k = jax.grad(lambda p: jnp.sum(K * pseudo_inertia(p)))(zero)
    return k, 2.0 * jnp.sum(jnp.log(jnp.diagonal(L)))


def logdet_pi(pi):
    """``(log det J(π), feasible)``; ``log det`` is ``-inf``/NaN-free only where feasible."""
    d = ldl_pivots4(pseudo_inertia(pi))
    feasible = jnp.all(d > 0, axis=-1)
    safe = jnp.where(feasible[..., None], d, jnp.ones_like(d))
    return jnp.sum(jnp.log(safe), axis=-1), feasible


#: ``(10, 4, 4)`` constant ``E_i = ∂J/∂π_i`` (from the one layout in ``_params``).
_E = PSEUDO_INERTIA_BASIS


def neg_logdet_hessian(J):
    """``∇²_π(−log det J) = [tr(J⁻¹ E_i J⁻¹ E_j)]_{ij}`` (``10 × 10``) for ``J ≻ 0``.

    Closed form (``J⁻¹`` from a written-out Cholesky factor): much cheaper
    inside the loop than differentiating ``log det`` twice.
    """
    Linv = lower_inverse(modified_cholesky(J, jnp.finfo(J.dtype).tiny))
    Jinv = Linv.T @ Linv
    A = jnp.einsum("ab,ibc->iac", Jinv, jnp.asarray(_E, J.dtype))
    return jnp.einsum("iac,jca->ij", A, A)


def hessian_pi(pi, P: Problem):
    """``∇²F(π) = 2RᵀR + γ ∇²(−log det J(π))`` (``10 × 10``)."""
    return 2.0 * P.R.T @ P.R + P.gamma * neg_logdet_hessian(pseudo_inertia(pi))
