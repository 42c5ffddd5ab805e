"""The solver of every inertial fit: a primal interior-point Newton method (``InteriorPoint``).

``start_and_solve`` runs it on a whole robot (``fit_torques``), ``solve_body`` on one body
(``fit``), over ``x = [π_1, …, π_nb, φ]``. Derivation: docs page
``identification-methods.md#interior-point``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..._params import PSEUDO_INERTIA_BASIS
from ..._smallmat import ldl_pivots4
from . import reduction
from .solvers import InteriorPoint

LINE_SEARCH_STEPS = 40
NU = 4.0  # barrier parameter of −log det on 4×4 matrices (per body)
MU_DECREASE = 10.0  # μ divided by this along the central path
#: ``InteriorPoint``'s default cap on Newton iterations.
MAX_ITERS = InteriorPoint.max_iters
_E = np.asarray(PSEUDO_INERTIA_BASIS)  # (10, 4, 4)


class RobotProblem(NamedTuple):
    """A whole robot's reduced problem (all arrays in the data's dtype).

    Attributes:
      R: ``(p, p)`` factor of the weighted normal matrix, ``RᵀR = XᵀWX``.
      xc: ``(p,)`` its centre, a weighted least-squares solution (``R x_c = z``).
      rho2: ``()`` the weighted least-squares residual (the data term's minimum).
      k: ``(nb, 10)`` with ``k_iᵀπ_i = tr(J0_i⁻¹ J_i)``.
      logdet0: ``(nb,)`` ``log det J0_i``.
      gamma: ``()`` weight ``γ ≥ 0`` of the log-det divergence.
      nonneg: ``(ne,)`` bool, the extra coefficients kept ``≥ 0``.
      phi0: ``(ne,)`` prior values of the extra coefficients.
      wphi: ``(ne,)`` their prior weights (0: no prior term).
    """

    R: jax.Array
    xc: jax.Array
    rho2: jax.Array
    k: jax.Array
    logdet0: jax.Array
    gamma: jax.Array
    nonneg: jax.Array
    phi0: jax.Array
    wphi: jax.Array


def _J(pis):
    """``(nb, 4, 4)`` pseudo-inertias of ``(nb, 10)`` parameters: ``Σ_k π_k E_k``, one
    product with the constant basis (Wensing, Kim & Slotine 2017), which compiles
    to one kernel where ``_params.pseudo_inertia``'s entry-by-entry form is dozens (the
    fit's program calls it seven times). Symmetric to the bit: entries ``ab`` and ``ba``
    are the same sum."""
    return jnp.einsum("ni,iab->nab", pis, jnp.asarray(_E, pis.dtype))


def divergence_terms(pi0):
    """``k (nb, 10)`` with ``k_iᵀπ_i = tr(J0_i⁻¹ J_i)``, ``log det J0 (nb,)``, ``J0 ≻ 0 (nb,)``."""
    J0 = _J(pi0)
    d = ldl_pivots4(J0)
    ok = jnp.all(d > 0, axis=-1)
    J0s = jnp.where(ok[:, None, None], J0, jnp.eye(4, dtype=J0.dtype))
    K = jnp.linalg.inv(J0s)
    K = 0.5 * (K + jnp.swapaxes(K, -1, -2))
    k = jnp.einsum("nab,iab->ni", K, jnp.asarray(_E, J0.dtype))
    logdet0 = jnp.sum(jnp.log(jnp.where(ok[:, None], d, 1.0)), axis=-1)
    return k, logdet0, ok


def split_params(x, nb):
    """``x (10 nb + ne,)`` -> bodies ``(nb, 10)`` and extra coefficients ``(ne,)``."""
    return x[: 10 * nb].reshape(nb, 10), x[10 * nb :]


def logdets(pis):
    """``(log det J_i (nb,), all feasible ())``."""
    d = ldl_pivots4(_J(pis))
    feas = jnp.all(d > 0)
    return jnp.sum(jnp.log(jnp.where(d > 0, d, 1.0)), axis=-1), feas


def _extra_prior(phi, P: RobotProblem):
    """``Σ_j w_j (φ_j − φ0_j)²``: the extra coefficients' Gaussian prior (0 without one)."""
    return jnp.sum(P.wphi * jnp.square(phi - P.phi0))


def _value(x, P: RobotProblem, mu, nb):
    """``F_μ(x)`` (``+inf`` outside the interior); also ``F`` (``μ = 0``) and the data term."""
    pis, phi = split_params(x, nb)
    r = P.R @ (x - P.xc)  # centred: no cancellation against the data's energy
    data = r @ r + P.rho2
    logdet, feas = logdets(pis)
    feas = feas & jnp.all(jnp.where(P.nonneg, phi > 0, True))
    reg = jnp.sum(P.k * pis) - jnp.sum(logdet) + jnp.sum(P.logdet0) - 4.0 * nb
    log_phi = jnp.sum(jnp.where(P.nonneg, jnp.log(jnp.where(P.nonneg & (phi > 0), phi, 1.0)), 0))
    F = data + P.gamma * reg + _extra_prior(phi, P)
    Fmu = F - mu * (jnp.sum(logdet) + log_phi)
    ok = feas & jnp.isfinite(Fmu)
    return jnp.where(ok, Fmu, jnp.inf), F, data


def barrier_grad_hess(x, P: RobotProblem, mu, nb):
    """Gradient and Hessian of ``F_μ`` (exact, closed form)."""
    dtype = x.dtype
    pis, phi = split_params(x, nb)
    E = jnp.asarray(_E, dtype)
    J = _J(pis)
    d = ldl_pivots4(J)
    ok = jnp.all(d > 0, axis=-1)
    Jinv = jnp.linalg.inv(jnp.where(ok[:, None, None], J, jnp.eye(4, dtype=dtype)))
    Jinv = 0.5 * (Jinv + jnp.swapaxes(Jinv, -1, -2))
    g_logdet = jnp.einsum("nab,iab->ni", Jinv, E)  # ∇ log det J_i
    A = jnp.einsum("nab,ibc->niac", Jinv, E)
    H_body = jnp.einsum("niac,njca->nij", A, A)  # ∇²(−log det J_i)
    g = 2.0 * P.R.T @ (P.R @ (x - P.xc))
    gb = P.gamma * P.k - (P.gamma + mu) * g_logdet
    phi_safe = jnp.where(P.nonneg & (phi > 0), phi, 1.0)
    gphi = jnp.where(P.nonneg, -mu / phi_safe, 0.0) + 2.0 * P.wphi * (phi - P.phi0)
    g = g + jnp.concatenate([gb.reshape(-1), gphi])
    H = 2.0 * P.R.T @ P.R
    blk = jnp.einsum("nij,nm->nimj", (P.gamma + mu) * H_body, jnp.eye(nb, dtype=dtype))
    blk = blk.reshape(10 * nb, 10 * nb)
    H = H.at[: 10 * nb, : 10 * nb].add(blk)
    h_phi = jnp.where(P.nonneg, mu / phi_safe**2, 0.0) + 2.0 * P.wphi
    H = H + jnp.diag(jnp.concatenate([jnp.zeros(10 * nb, dtype), h_phi]))
    return g, H


def newton_direction(g, H):
    """``−H⁻¹ g`` with symmetric Jacobi scaling and a tiny ridge (``H`` positive semi-definite)."""
    dtype = g.dtype
    eps = jnp.finfo(dtype).eps
    h = jnp.diagonal(H)
    h = jnp.maximum(h, jnp.max(h) * eps + jnp.finfo(dtype).tiny)
    s = 1.0 / jnp.sqrt(h)
    Hs = s[:, None] * H * s[None, :]
    n = g.shape[0]
    Hs = Hs + (n * eps) * jnp.eye(n, dtype=dtype)
    L = jnp.linalg.cholesky(Hs)
    y = jax.scipy.linalg.cho_solve((L, True), s * g)
    return -s * y


def _max_step(x, dx, P: RobotProblem, nb):
    """Largest ``α`` keeping ``J_i(x + α dx) ≻ 0`` and ``φ_j + α dφ_j > 0`` (inf: none)."""
    dtype = x.dtype
    pis, phi = split_params(x, nb)
    dpis, dphi = split_params(dx, nb)
    L = jnp.linalg.cholesky(_J(pis))
    Linv = jax.scipy.linalg.solve_triangular(
        L, jnp.broadcast_to(jnp.eye(4, dtype=dtype), L.shape), lower=True
    )
    M = Linv @ _J(dpis) @ jnp.swapaxes(Linv, -1, -2)
    lam = jnp.linalg.eigvalsh(0.5 * (M + jnp.swapaxes(M, -1, -2)))[..., 0]
    big = jnp.asarray(jnp.inf, dtype)
    a_body = jnp.where(lam < 0, -1.0 / jnp.where(lam < 0, lam, -1.0), big)
    neg = P.nonneg & (dphi < 0)
    a_phi = jnp.where(neg, -phi / jnp.where(neg, dphi, -1.0), big)
    return jnp.minimum(jnp.min(a_body, initial=big), jnp.min(a_phi, initial=big))


class LoopState(NamedTuple):
    """The state of the Newton loop (what ``start_and_solve`` returns).

    Attributes:
      x: ``(p,)`` the last iterate (strictly feasible).
      mu: ``()`` the barrier weight ``μ`` reached.
      it: ``()`` int32 iterations taken.
      done: ``()`` bool, the loop stopped before ``max_iters``.
      converged: ``()`` bool, it stopped on the convergence test.
    """

    x: jax.Array
    mu: jax.Array
    it: jax.Array
    done: jax.Array
    converged: jax.Array


def _solve(P: RobotProblem, x0, nb, rtol, atol, max_iters):
    """Primal interior-point Newton method from a strictly feasible ``x0``; returns the state."""
    dtype = x0.dtype
    eps = jnp.finfo(dtype).eps
    nu = NU * nb + jnp.sum(P.nonneg)
    _, F0, _ = _value(x0, P, 0.0, nb)
    mu0 = 0.1 * (jnp.abs(F0) + atol) / nu
    alphas = 0.5 ** jnp.arange(LINE_SEARCH_STEPS, dtype=dtype)

    def cond(s: LoopState):
        return ~s.done & (s.it < max_iters)

    def body(s: LoopState):
        x, mu = s.x, s.mu
        Fmu, F, _ = _value(x, P, mu, nb)
        g, H = barrier_grad_hess(x, P, mu, nb)
        dx = newton_direction(g, H)
        dec = -(g @ dx)  # Newton decrement squared
        tol = rtol * jnp.abs(F) + atol
        final = nu * mu <= 0.1 * tol
        a0 = jnp.minimum(1.0, 0.99 * _max_step(x, dx, P, nb))
        trial = jax.vmap(lambda a: _value(x + a * dx, P, mu, nb)[0])(a0 * alphas)
        slack = 8 * eps * jnp.abs(Fmu)
        ok = trial <= Fmu + 1e-4 * a0 * alphas * (g @ dx) + slack
        first = jnp.argmax(ok)
        accepted = jnp.any(ok) & jnp.all(jnp.isfinite(dx))
        alpha = jnp.where(accepted, a0 * alphas[first], 0.0)
        x_new = jnp.where(accepted, x + alpha * dx, x)
        # converged: half the decrement (the estimated suboptimality) within tolerance, or a
        # Newton step below rounding (the decrement's own floor, where F* ≈ 0)
        tiny_step = jnp.max(jnp.abs(dx)) <= 64 * eps * jnp.max(jnp.abs(x))
        small = (0.5 * dec <= jnp.maximum(tol, 0.0)) | tiny_step
        conv = final & small
        centered = 0.5 * dec <= nu * mu
        mu_new = jnp.where(~final & (centered | ~accepted), mu / MU_DECREASE, mu)
        done = conv | (final & ~accepted)
        return LoopState(x_new, mu_new, s.it + 1, done, conv)

    s0 = LoopState(
        x0, mu0.astype(dtype), jnp.zeros((), jnp.int32), jnp.zeros((), bool), jnp.zeros((), bool)
    )
    return jax.lax.while_loop(cond, body, s0)


def atol_floor(rho2, gamma, logdet0):
    """Absolute floor of the tests: 16 ulps of the terms summed in ``F`` (reachable at F* = 0)."""
    eps = jnp.finfo(logdet0.dtype).eps
    nb = logdet0.shape[0]
    return 16 * eps * (rho2 + gamma * (4.0 * nb + jnp.sum(jnp.abs(logdet0))))


def start_and_solve(A, bvec, P: RobotProblem, prior_pi, rtol, atol, max_iters) -> LoopState:
    """Strictly feasible start (the prior bodies; extras by least squares), then the Newton loop."""
    nb = prior_pi.shape[0]
    p = A.shape[0]
    pis0 = prior_pi.reshape(-1)
    if p > 10 * nb:
        Fe = reduction.factor(A[10 * nb :, 10 * nb :], reduction.rank_rtol(p, A.dtype))
        phi0 = reduction.min_norm_solve(Fe, (bvec - A[:, : 10 * nb] @ pis0)[10 * nb :])
        # a coefficient explaining the data's whole energy along that column alone
        energy = jnp.sum(jnp.square(P.R @ P.xc)) + P.rho2  # Σ w τ²
        scale = jnp.sqrt(energy / Fe.d**2)
        phi0 = jnp.where(P.nonneg, jnp.maximum(phi0, 1e-3 * scale), phi0)
        x0 = jnp.concatenate([pis0, phi0])
    else:
        x0 = pis0
    return _solve(P, x0, nb, rtol, atol, max_iters)


def solve_body(R, xc, k, logdet0, gamma, pi0, rtol, atol, max_iters) -> LoopState:
    """The loop on one body without extra coefficients (``fit``), from ``pi0 (10,)``."""
    dtype = R.dtype
    empty = jnp.zeros((0,), dtype)
    zero = jnp.zeros((), dtype)
    P = RobotProblem(R, xc, zero, k[None], logdet0[None], gamma, empty > 0, empty, empty)
    return _solve(P, pi0, 1, rtol, atol, max_iters)


@functools.partial(jax.jit, static_argnames=("rtol", "max_iters"))
def solve_reduced(R, xc, rho2, prior_pi, gamma, nonneg, *, rtol, max_iters=MAX_ITERS):
    """The fit on reduced data ``‖R(x − x_c)‖² + ρ²``: ``(x, iterations, converged)``."""
    k, logdet0, _ = divergence_terms(prior_pi)
    zeros = jnp.zeros(nonneg.shape, R.dtype)
    P = RobotProblem(R, xc, rho2, k, logdet0, gamma, nonneg, zeros, zeros)
    A = R.T @ R
    atol = atol_floor(rho2, gamma, logdet0)
    out = start_and_solve(A, A @ xc, P, prior_pi, rtol, atol, max_iters)
    return out.x, out.it, out.converged
