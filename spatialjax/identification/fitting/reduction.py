"""A whole robot's torque data reduced to ``p × p``: normal equations and their factor.

``A = XᵀWX``, ``b = XᵀWτ`` of ``X = [Y | E]``, then ``A = D V Λ Vᵀ D`` column-scaled.
Derivation: docs page ``identification-methods.md#normal-equations``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


def gram(Y, E, tau, w):
    """Normal equations of ``X = [Y | E]`` with weights ``w (N, nv)``: ``A (p, p)``, ``b (p,)``."""
    if w is None:  # unit weights: no scaled copy of the data
        Ys, ts = Y.reshape(-1, Y.shape[-1]), tau.reshape(-1)
    else:
        sw = jnp.sqrt(w)[..., None]
        Ys = (Y * sw).reshape(-1, Y.shape[-1])
        ts = (tau * sw[..., 0]).reshape(-1)
    # einsum over the row axis (``Ys.T @ Ys`` makes XLA copy the transpose, which is slower)
    A = jnp.einsum("np,nq->pq", Ys, Ys)
    b = jnp.einsum("np,n->p", Ys, ts)
    if E.shape[-1]:
        Es = E.reshape(-1, E.shape[-1]) if w is None else (E * sw).reshape(-1, E.shape[-1])
        Aye = jnp.einsum("np,nq->pq", Ys, Es)
        Aee = jnp.einsum("np,nq->pq", Es, Es)
        A = jnp.concatenate([jnp.concatenate([A, Aye], -1), jnp.concatenate([Aye.T, Aee], -1)], -2)
        b = jnp.concatenate([b, jnp.einsum("np,n->p", Es, ts)])
    return A, b


def predict(Y, E, x):
    """``X x = Y π + E φ`` ``(N, nv)``."""
    p_y = Y.shape[-1]
    out = jnp.einsum("njp,p->nj", Y, x[:p_y])
    if E.shape[-1]:
        out = out + jnp.einsum("njp,p->nj", E, x[p_y:])
    return out


def joint_residuals(Y, E, tau, w, x):
    """Per-joint ``Σ_k w_kj (X_k x − τ_k)_j²`` ``(nv,)``, on the samples (no cancellation)."""
    r = predict(Y, E, x) - tau
    return jnp.sum(w * r * r, axis=0)


class Factor(NamedTuple):
    """Column-scaled eigen-factorisation of a normal matrix ``A = D V Λ Vᵀ D``.

    ``R = diag(sv) Vᵀ D`` satisfies ``RᵀR = A``; columns below ``√eps`` times the
    largest are dropped.

    Attributes:
      d: ``(p,)`` column norms ``D`` (1 for a dropped column).
      V: ``(p, p)`` eigenvectors of the column-scaled ``A``.
      sv: ``(p,)`` their singular values ``√Λ``, descending.
      keep: ``(p,)`` ``sv`` above the rank threshold.
      rank: ``()`` int32 number of kept values.
      cond: ``()`` ``sv[0] / sv[-1]`` (``inf`` where rank-deficient).
    """

    d: jax.Array
    V: jax.Array
    sv: jax.Array
    keep: jax.Array
    rank: jax.Array
    cond: jax.Array


def factor(A, rtol_eig) -> Factor:
    """``Factor`` of a positive semi-definite ``A``; eigenvalues below ``rtol_eig`` × largest: 0."""
    d = jnp.sqrt(jnp.maximum(jnp.diagonal(A), 0.0))
    # columns below √eps of the largest are rounding noise (a parameter that does not
    # enter the dynamics, computed as ~eps): dropped (zero rows and columns), not scaled up
    live = d > jnp.sqrt(jnp.finfo(A.dtype).eps) * jnp.max(d)
    d = jnp.where(live, d, 1.0)
    As = jnp.where(live[:, None] & live[None, :], A / d[:, None] / d[None, :], 0.0)
    lam, V = jnp.linalg.eigh(0.5 * (As + As.T))
    lam, V = jnp.maximum(lam[::-1], 0.0), V[:, ::-1]
    keep = lam > lam[0] * rtol_eig
    full = jnp.all(keep)
    sv = jnp.sqrt(lam)
    cond = jnp.where(full, sv[0] / jnp.where(full, sv[-1], 1.0), jnp.inf)
    return Factor(d, V, sv, keep, jnp.sum(keep).astype(jnp.int32), cond)


def base_condition(F: Factor):
    """``(cond, pivots)``: the column-scaled base regressor's condition number, base columns first.

    Greedy column pivoting (Businger & Golub 1965) as a pivoted Cholesky of ``A_s``.
    """
    dtype = F.sv.dtype
    p = F.sv.shape[-1]
    Rs = F.sv[:, None] * F.V.T  # R_sᵀ R_s = A_s, column-scaled
    As = Rs.T @ Rs
    tie = jnp.sqrt(jnp.finfo(dtype).eps)
    idx = jnp.arange(p)

    def step(k, state):
        S, taken, piv = state
        diag = jnp.where(taken, -jnp.inf, jnp.diagonal(S))
        best = jnp.max(diag)
        # the lowest index among the near-tied best; past the rank, the lowest index left
        cand = jnp.where(k < F.rank, diag >= best - tie, ~taken)
        j = jnp.argmax(cand).astype(jnp.int32)
        col = S[:, j]
        piv_d = S[j, j]
        ok = piv_d > 0
        root = jnp.sqrt(jnp.where(ok, piv_d, 1.0))
        u = jnp.where(ok & ~taken, col / root, 0.0).at[j].set(jnp.where(ok, root, 0.0))
        S = S - u[:, None] * u[None, :]
        return S, taken.at[j].set(True), piv.at[k].set(j)

    S0 = jnp.where(idx[:, None] == idx[None, :], jnp.maximum(jnp.diagonal(As), 0.0), As)
    _, _, piv = jax.lax.fori_loop(0, p, step, (S0, jnp.zeros(p, bool), jnp.zeros(p, jnp.int32)))
    m = idx < F.rank
    s = jnp.linalg.svd(jnp.where(m[None, :], Rs[:, piv], 0.0), compute_uv=False)
    smin = s[jnp.clip(F.rank - 1, 0, p - 1)]  # descending; zeros past ``rank``
    ok = (F.rank > 0) & (smin > 0)
    return jnp.where(ok, s[0] / jnp.where(ok, smin, 1.0), jnp.inf), piv.astype(jnp.int32)


def min_norm_solve(F: Factor, b):
    """Minimum-norm (in the column-scaled variables ``D x``) solution of ``A x = b``."""
    lam_inv = jnp.where(F.keep, 1.0 / jnp.where(F.keep, F.sv**2, 1.0), 0.0)
    return (F.V @ (lam_inv * (F.V.T @ (b / F.d)))) / F.d


def r_and_z(F: Factor, b):
    """``R = diag(sv) Vᵀ D`` and ``z`` with ``‖Rx − z‖² = xᵀAx − 2bᵀx + const``."""
    R = (F.sv[:, None] * F.V.T) * F.d[None, :]
    z = jnp.where(F.keep, (F.V.T @ (b / F.d)) / jnp.where(F.keep, F.sv, 1.0), 0.0)
    return R, z


def rank_rtol(p: int, dtype) -> float:
    """Rank threshold on the eigenvalues of the column-scaled normal matrix: ``10 p eps``."""
    return float(10 * p * np.finfo(dtype).eps)
