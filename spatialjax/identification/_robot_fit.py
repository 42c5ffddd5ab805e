r"""Whole-robot inertial identification from joint torques: ``fit_torques``, ``fit_robot``.

One convex problem per robot (Wensing, Kim & Slotine 2017; Lee, Wensing &
Park 2020) over ``x = [π_1, …, π_nb, φ]`` (``nb`` body 10-vectors in the
``_params`` layout, then ``ne`` extra coefficients such as friction):

$$
\min_x\ F(x) = \sum_{k,j} w_{kj} (Y_k x − τ_k)_j^2
   + γ \sum_i \bigl(\mathrm{tr}(J_{0,i}^{-1} J_i) − \log\det J_i
   + \log\det J_{0,i} − 4\bigr)
\quad\text{s.t.}\quad J_i ≻ 0,\ φ_j ≥ 0\ (j ∈ \text{nonnegative}),
$$

solved by a primal interior-point Newton method on the full ``x`` after
reducing the data to the ``p × p`` normal equations (see
[`fit_torques`][spatialjax.identification.fit_torques]).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _params
from .._checks import as_float_array, broadcast_batch, is_concrete, same_dtype
from .._consistency import physical_consistency
from .._inertia import RigidBodyInertia
from .._params import PSEUDO_INERTIA_BASIS
from .._smallmat import ldl_pivots4
from ..multibody.friction import FRICTION_KINDS
from ._inputs import check_gamma, first_bad
from ._program import cpu_program
from ._robot_result import RobotFitResult
from ._status import FitStatus, status_code

#: Default relative spread ``s`` of the prior: ``γ = 2 / s²`` (see :func:`fit_torques`).
PRIOR_SPREAD = 0.5
NU_BODY = 4.0  # barrier parameter of −log det on 4×4 matrices
MU_DECREASE = 10.0
LINE_SEARCH_STEPS = 40
MAX_ITERS = 300


def _as_friction_model(friction):
    """A ``FrictionModel`` from one, a kind or a tuple of kinds."""
    from ..multibody import FrictionModel

    if isinstance(friction, FrictionModel):
        return friction
    kinds = (friction,) if isinstance(friction, str) else friction
    try:
        return FrictionModel(tuple(kinds))
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"friction: expected distinct entries of {FRICTION_KINDS} or a FrictionModel, got "
            f"{friction!r} ({e})"
        ) from None


def _default_rtol(dtype) -> float:
    return 1e-12 if np.dtype(dtype) == np.float64 else 1e-6


# ------------------------------------------------------------------ data reduction
def _gram(Y, E, tau, w):
    """Normal equations of ``X = [Y | E]`` with sample weights ``w (N, nv)``: ``A = XᵀWX (p, p)``,
    ``b = XᵀWτ (p,)``.

    One pass over the data as plain 2-D products over the ``N·nv`` stacked rows
    (XLA's CPU batched products over a middle joint axis are several times
    slower).
    """
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


def _predict(Y, E, x):
    """``X x = Y π + E φ`` ``(N, nv)``."""
    p_y = Y.shape[-1]
    out = jnp.einsum("njp,p->nj", Y, x[:p_y])
    if E.shape[-1]:
        out = out + jnp.einsum("njp,p->nj", E, x[p_y:])
    return out


def _joint_residuals(Y, E, tau, w, x):
    """Per-joint ``Σ_k w_kj (X_k x − τ_k)_j²`` ``(nv,)``, on the samples (no cancellation)."""
    r = _predict(Y, E, x) - tau
    return jnp.sum(w * r * r, axis=0)


class _Factor(NamedTuple):
    """Column-scaled eigen-factorisation of a normal matrix ``A = D V Λ Vᵀ D``.

    ``sv = √Λ`` (descending) are the singular values of the column-scaled
    stacked regressor ``X D⁻¹`` (``D``: its column norms); columns below
    ``√eps`` times the largest are rounding noise and dropped (zeroed).
    ``R = diag(sv) Vᵀ D`` satisfies ``RᵀR = A``.
    """

    d: jax.Array  # (p,)
    V: jax.Array  # (p, p)
    sv: jax.Array  # (p,) descending
    keep: jax.Array  # (p,) sv above the rank threshold
    rank: jax.Array  # () int32
    cond: jax.Array  # ()


def _factor(A, rtol_eig):
    """``_Factor`` of a numerically positive semi-definite ``A`` (eigenvalues clamped ≥ 0)."""
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
    return _Factor(d, V, sv, keep, jnp.sum(keep).astype(jnp.int32), cond)


def _base_condition(F: _Factor):
    """Condition number of the column-scaled base regressor, and its base column order.

    The base columns are chosen by greedy column pivoting (the pivot rule of QR
    with column pivoting, Businger & Golub 1965), run as a pivoted Cholesky
    factorisation of the column-scaled normal matrix ``A_s = V Λ Vᵀ`` (the Gram
    matrix of the column-scaled regressor ``X D⁻¹``, unit diagonal): at step
    ``k`` the column with the largest residual norm (diagonal of the Schur
    complement) is taken, except that every column whose residual norm² lies
    within ``√eps`` of the largest counts as tied with it and the *lowest
    column index* among them is taken. Columns of unit norm make that absolute
    tolerance a relative one, so the choice no longer depends on round-off in
    near-tied pivots (the first step is always a tie: every scaled column has
    norm 1). The first ``rank`` pivots are the base columns; the others follow in
    increasing index order. Returns ``σ_max / σ_min`` of the ``rank`` base
    columns of ``X D⁻¹`` (``inf`` for rank 0) and the ``(p,)`` int32 pivots.

    References:
      P. Businger, G. H. Golub, "Linear least squares solutions by Householder
      transformations", Numer. Math. 7, 1965 (column pivoting).
      W. Khalil, E. Dombre, *Modeling, Identification and Control of Robots*,
      2002, §12.4 (base parameters).
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


def _min_norm_solve(F: _Factor, b):
    """Minimum-norm (in the column-scaled variables ``D x``) solution of ``A x = b``."""
    lam_inv = jnp.where(F.keep, 1.0 / jnp.where(F.keep, F.sv**2, 1.0), 0.0)
    return (F.V @ (lam_inv * (F.V.T @ (b / F.d)))) / F.d


def _r_and_z(F: _Factor, b):
    """``R = diag(sv) Vᵀ D`` and ``z`` with ``‖Rx − z‖² = xᵀAx − 2bᵀx + const``."""
    R = (F.sv[:, None] * F.V.T) * F.d[None, :]
    z = jnp.where(F.keep, (F.V.T @ (b / F.d)) / jnp.where(F.keep, F.sv, 1.0), 0.0)
    return R, z


def _rank_rtol(p: int, dtype) -> float:
    """Rank threshold on the eigenvalues of the column-scaled normal matrix: ``10 p eps``.

    A normal matrix accumulated in floating point carries errors of about
    ``eps`` relative to its largest eigenvalue, so singular values of the
    column-scaled regressor below ``√(10 p eps) σ_max`` (``5e-7`` relative in
    float64, ``1e-2`` in float32 for ``p = 91``) are not resolved and count
    as unidentifiable.
    """
    return float(10 * p * np.finfo(dtype).eps)


# ------------------------------------------------------------------ objective pieces
_E = np.asarray(PSEUDO_INERTIA_BASIS)  # (10, 4, 4)


def _J(pis):
    """``(nb, 4, 4)`` pseudo-inertias of ``(nb, 10)`` parameters."""
    return _params.pseudo_inertia(pis)


def _prior_terms(pi0):
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


class _Problem(NamedTuple):
    R: jax.Array  # (p, p)
    xc: jax.Array  # (p,) centre: a weighted least-squares solution (R x_c = z)
    rho2: jax.Array  # ()
    k: jax.Array  # (nb, 10)
    logdet0: jax.Array  # (nb,)
    gamma: jax.Array  # ()
    nonneg: jax.Array  # (ne,) bool


def _split_x(x, nb):
    return x[: 10 * nb].reshape(nb, 10), x[10 * nb :]


def _logdets(pis):
    """``(log det J_i (nb,), all feasible ())``."""
    d = ldl_pivots4(_J(pis))
    feas = jnp.all(d > 0)
    return jnp.sum(jnp.log(jnp.where(d > 0, d, 1.0)), axis=-1), feas


def _value(x, P: _Problem, mu, nb):
    """``F_μ(x)`` (``+inf`` outside the interior); also ``F`` (``μ = 0``) and the data term."""
    pis, phi = _split_x(x, nb)
    r = P.R @ (x - P.xc)  # centred: no cancellation against the data's energy
    data = r @ r + P.rho2
    logdet, feas = _logdets(pis)
    feas = feas & jnp.all(jnp.where(P.nonneg, phi > 0, True))
    reg = jnp.sum(P.k * pis) - jnp.sum(logdet) + jnp.sum(P.logdet0) - 4.0 * nb
    log_phi = jnp.sum(jnp.where(P.nonneg, jnp.log(jnp.where(P.nonneg & (phi > 0), phi, 1.0)), 0))
    F = data + P.gamma * reg
    Fmu = F - mu * (jnp.sum(logdet) + log_phi)
    ok = feas & jnp.isfinite(Fmu)
    return jnp.where(ok, Fmu, jnp.inf), F, data


def _grad_hess_barrier(x, P: _Problem, mu, nb):
    """Gradient and Hessian of ``F_μ`` (exact, closed form)."""
    dtype = x.dtype
    pis, phi = _split_x(x, nb)
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
    gphi = jnp.where(P.nonneg, -mu / phi_safe, 0.0)
    g = g + jnp.concatenate([gb.reshape(-1), gphi])
    H = 2.0 * P.R.T @ P.R
    blk = jnp.einsum("nij,nm->nimj", (P.gamma + mu) * H_body, jnp.eye(nb, dtype=dtype))
    blk = blk.reshape(10 * nb, 10 * nb)
    H = H.at[: 10 * nb, : 10 * nb].add(blk)
    h_phi = jnp.where(P.nonneg, mu / phi_safe**2, 0.0)
    H = H + jnp.diag(jnp.concatenate([jnp.zeros(10 * nb, dtype), h_phi]))
    return g, H


def _newton_direction(g, H):
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


def _max_step(x, dx, P: _Problem, nb):
    """Largest ``α`` keeping ``J_i(x + α dx) ≻ 0`` and ``φ_j + α dφ_j > 0`` (inf: none)."""
    dtype = x.dtype
    pis, phi = _split_x(x, nb)
    dpis, dphi = _split_x(dx, nb)
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


class _LoopState(NamedTuple):
    x: jax.Array
    mu: jax.Array
    it: jax.Array
    done: jax.Array
    converged: jax.Array


def _solve(P: _Problem, x0, nb, rtol, atol, max_iters):
    """Primal interior-point Newton method from a strictly feasible ``x0``; returns the state."""
    dtype = x0.dtype
    eps = jnp.finfo(dtype).eps
    ne = x0.shape[0] - 10 * nb
    nu = NU_BODY * nb + jnp.sum(P.nonneg)
    _, F0, _ = _value(x0, P, 0.0, nb)
    mu0 = 0.1 * (jnp.abs(F0) + atol) / nu
    alphas = 0.5 ** jnp.arange(LINE_SEARCH_STEPS, dtype=dtype)
    del ne

    def cond(s: _LoopState):
        return ~s.done & (s.it < max_iters)

    def body(s: _LoopState):
        x, mu = s.x, s.mu
        Fmu, F, _ = _value(x, P, mu, nb)
        g, H = _grad_hess_barrier(x, P, mu, nb)
        dx = _newton_direction(g, H)
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
        return _LoopState(x_new, mu_new, s.it + 1, done, conv)

    s0 = _LoopState(
        x0, mu0.astype(dtype), jnp.zeros((), jnp.int32), jnp.zeros((), bool), jnp.zeros((), bool)
    )
    return jax.lax.while_loop(cond, body, s0)


def _atol(rho2, gamma, logdet0):
    """Absolute floor of the tests: 16 ulps of the terms summed in ``F`` (reachable at F* = 0)."""
    eps = jnp.finfo(logdet0.dtype).eps
    nb = logdet0.shape[0]
    return 16 * eps * (rho2 + gamma * (4.0 * nb + jnp.sum(jnp.abs(logdet0))))


def _start_and_solve(A, bvec, P: _Problem, prior_pi, rtol, atol, max_iters):
    """Strictly feasible start (the prior bodies; extras by least squares given them, the
    non-negative ones lifted to ``≥ 1e-3`` of their scale), then the interior-point loop."""
    nb = prior_pi.shape[0]
    p = A.shape[0]
    pis0 = prior_pi.reshape(-1)
    if p > 10 * nb:
        Fe = _factor(A[10 * nb :, 10 * nb :], _rank_rtol(p, A.dtype))
        phi0 = _min_norm_solve(Fe, (bvec - A[:, : 10 * nb] @ pis0)[10 * nb :])
        # a coefficient explaining the data's whole energy along that column alone
        energy = jnp.sum(jnp.square(P.R @ P.xc)) + P.rho2  # Σ w τ²
        scale = jnp.sqrt(energy / Fe.d**2)
        phi0 = jnp.where(P.nonneg, jnp.maximum(phi0, 1e-3 * scale), phi0)
        x0 = jnp.concatenate([pis0, phi0])
    else:
        x0 = pis0
    return _solve(P, x0, nb, rtol, atol, max_iters)


@functools.partial(jax.jit, static_argnames=("rtol", "max_iters"))
def _solve_reduced(R, xc, rho2, prior_pi, gamma, nonneg, *, rtol, max_iters=MAX_ITERS):
    """The fit on already reduced data ``‖R(x − x_c)‖² + ρ²`` (benchmarks): ``(x, iterations,
    converged)``. Same start and loop as [`fit_torques`][spatialjax.identification.fit_torques]."""
    k, logdet0, _ = _prior_terms(prior_pi)
    P = _Problem(R, xc, rho2, k, logdet0, gamma, nonneg)
    A = R.T @ R
    out = _start_and_solve(A, A @ xc, P, prior_pi, rtol, _atol(rho2, gamma, logdet0), max_iters)
    return out.x, out.it, out.converged


# ------------------------------------------------------------------ one problem
def _with_derivative(value, s):
    return value + (s - jax.lax.stop_gradient(s))


def _fit_one(
    Y, E, tau, w, prior_pi, gamma, given, nonneg, *, rtol, max_iters, prior_spread, sample_weights
):
    """One robot: ``Y (N, nv, 10 nb)``, ``E (N, nv, ne)``, ``tau (N, nv)``, sample weights ``w``.

    ``given = [weights given, γ given]``. Derivatives: the loop sees stop-gradient
    copies; the result carries the implicit-function-theorem derivative.
    """
    sg = jax.lax.stop_gradient
    dtype = Y.dtype
    eps = jnp.finfo(dtype).eps
    N, nv, p_y = Y.shape
    nb = p_y // 10
    p = p_y + E.shape[-1]
    has_w, has_gamma = given[0], given[1]

    # ---- reduction to p dimensions: normal equations (one pass over the data each)
    A0, b0 = _gram(sg(Y), sg(E), sg(tau), sg(w) if sample_weights else None)
    finite_in = jnp.all(jnp.isfinite(A0)) & jnp.all(jnp.isfinite(b0))
    finite_in = finite_in & jnp.all(jnp.isfinite(tau)) & jnp.all(jnp.isfinite(w))
    finite_in = finite_in & jnp.all(jnp.isfinite(prior_pi)) & (~has_gamma | jnp.isfinite(gamma))
    k, logdet0, prior_ok = _prior_terms(jnp.where(jnp.isfinite(prior_pi), prior_pi, 0.0))
    invalid = jnp.any(w < 0) | (has_gamma & (gamma < 0)) | ~jnp.all(prior_ok)
    bad = ~finite_in | invalid
    # invalid fits run a trivial problem (one iteration) and come back as NaN
    A0 = jnp.where(bad, jnp.eye(p, dtype=dtype), A0)
    b0 = jnp.where(bad, 0.0, b0)
    unit = jnp.asarray([1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0], dtype)
    prior_pi = jnp.where(bad, unit, prior_pi)
    k, logdet0, _ = _prior_terms(prior_pi)

    rows = N * nv
    rank_rtol = _rank_rtol(p, dtype)
    F0 = _factor(A0, rank_rtol)
    x_ls = _min_norm_solve(F0, b0)
    # per-joint noise from the ordinary-least-squares residuals (on the samples)
    e = _joint_residuals(sg(Y), sg(E), sg(tau), sg(w), x_ls)  # (nv,)
    n_eff = jnp.sum(sg(w), axis=0)  # (nv,) Σ_k w_kj (= N without sample weights)
    dof = jnp.maximum(rows - F0.rank, 1).astype(dtype) / rows
    var = e / jnp.maximum(n_eff * dof, jnp.finfo(dtype).tiny)
    rms2 = jnp.sum(sg(w * tau * tau), axis=0) / jnp.maximum(n_eff, jnp.finfo(dtype).tiny)
    var = jnp.maximum(var, eps * jnp.where(rms2 > 0, rms2, 1.0))
    var = jnp.where(bad, 1.0, var)
    noise_std = jnp.sqrt(var)
    c = sg(jnp.where(has_w, jnp.ones_like(var), 1.0 / var))  # joint weights
    wc = w * c  # the weights used: sample weights times joint weights
    A, bvec = _gram(Y, E, tau, wc)  # differentiable (implicit-function derivative below)
    A = jnp.where(bad, jnp.eye(p, dtype=dtype), A)
    bvec = jnp.where(bad, 0.0, bvec)
    Fw = _factor(sg(A), rank_rtol)
    R, _ = _r_and_z(Fw, sg(bvec))
    rank, (cond, _) = Fw.rank, _base_condition(Fw)
    # ρ² = the weighted least-squares residual (min of the data term), on the samples
    x_wls = _min_norm_solve(Fw, sg(bvec))
    rho2 = jnp.sum(_joint_residuals(sg(Y), sg(E), sg(tau), sg(wc), x_wls))
    rho2 = jnp.where(bad, 0.0, rho2)

    gamma = jnp.where(has_gamma, gamma, jnp.asarray(2.0 / prior_spread**2, dtype))
    P = _Problem(R, x_wls, rho2, sg(k), sg(logdet0), sg(gamma), nonneg)

    atol = jnp.where(bad, jnp.inf, _atol(rho2, gamma, logdet0))
    out = _start_and_solve(sg(A), sg(bvec), P, sg(prior_pi), rtol, atol, max_iters)
    x = sg(out.x)

    # ---- implicit function theorem at the optimum: ∇F_μ(x*; inputs) = 0, so
    # dx* = −H⁻¹ d(∇F_μ); the value stays exactly x*
    pis, phi = _split_x(x, nb)
    g_data = 2.0 * (A @ x - bvec)
    ldg = jax.grad(lambda q: jnp.sum(_logdets(q)[0]))(pis)
    gb = gamma * (k - ldg) - out.mu * ldg
    phi_safe = jnp.where(nonneg & (phi > 0), phi, 1.0)
    gphi = jnp.where(nonneg, -out.mu / phi_safe, 0.0)
    g_full = g_data + jnp.concatenate([gb.reshape(-1), gphi])
    _, H = _grad_hess_barrier(x, P, out.mu, nb)
    x = _with_derivative(x, _newton_direction(g_full, sg(H)))

    pis, phi = _split_x(x, nb)
    residual = jnp.sum(_joint_residuals(Y, E, tau, wc, x))
    logdet, _ = _logdets(pis)
    reg = jnp.sum(k * pis) - jnp.sum(logdet) + jnp.sum(logdet0) - 4.0 * nb
    objective = residual + gamma * reg

    finite_out = jnp.all(jnp.isfinite(x))
    undetermined = (gamma <= 0) & (rank < p)
    status = status_code(
        nonfinite_input=~finite_in,
        invalid_input=invalid,
        undetermined=undetermined,
        numerical_failure=~finite_out,
        not_converged=~out.converged,
    )
    nan = jnp.asarray(jnp.nan, dtype)

    def out_(v):
        return jnp.where(bad, nan, v)

    inertia = RigidBodyInertia(out_(pis))
    return RobotFitResult(
        inertia=inertia,
        extra=out_(phi),
        friction=None,
        objective=out_(objective),
        residual=out_(residual),
        iterations=out.it,
        converged=status == FitStatus.CONVERGED,
        status=status,
        gamma=out_(gamma),
        prior=RigidBodyInertia(out_(prior_pi)),
        noise_std=out_(noise_std),
        consistency=physical_consistency(inertia),
        rank=rank,
        condition_number=out_(cond),
    )


#: XLA's CPU back-end optimisation level for the fit's program: the run time is spent in
#: the data's matrix products (library calls) and O(p³) linear algebra, so LLVM's
#: optimisations buy nothing measurable while halving the compile time.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}


def _fit_batch_impl(
    Y,
    E,
    tau,
    w,
    prior_pi,
    gamma,
    given,
    nonneg,
    *,
    batch,
    rtol,
    max_iters,
    prior_spread,
    axes,
    sample_weights,
):
    """Flatten the batch, ``vmap`` one robot (unbatched inputs stay shared), restore the shape."""
    nbatch = int(np.prod(batch, dtype=np.int64))
    one = functools.partial(
        _fit_one,
        rtol=rtol,
        max_iters=max_iters,
        prior_spread=prior_spread,
        sample_weights=sample_weights,
    )
    flat, in_axes = _flatten_batch((Y, E, tau, w, prior_pi, gamma), _CORES, axes, batch)
    vone = jax.vmap(one, in_axes=(*in_axes, None, None), axis_size=nbatch)
    out = vone(*flat, given, nonneg)  # pyright: ignore[reportCallIssue]
    return jax.tree.map(lambda v: v.reshape(tuple(batch) + v.shape[1:]), out)


_FIT_STATIC = ("batch", "rtol", "max_iters", "prior_spread", "axes", "sample_weights")
_fit_batch = cpu_program(
    _fit_batch_impl, static_argnames=_FIT_STATIC, compiler_options=COMPILER_OPTIONS
)


#: core ranks of ``(Y, E, tau, w, prior_pi, gamma)``
_CORES = (3, 3, 2, 2, 2, 0)


def _flatten_batch(args, cores, axes, batch):
    """Batched arguments broadcast to ``batch`` and flattened; the others shared (``None``)."""
    nbatch = int(np.prod(batch, dtype=np.int64))
    flat, in_axes = [], []
    for a, rank, batched in zip(args, cores, axes, strict=True):
        core = a.shape[a.ndim - rank :]
        if batched:  # broadcast to the full batch, flattened
            flat.append(jnp.broadcast_to(a, tuple(batch) + core).reshape((nbatch,) + core))
            in_axes.append(0)
        else:  # shared by every fit of the batch (e.g. one regressor, many weightings)
            flat.append(a.reshape(core))
            in_axes.append(None)
    return flat, in_axes


# ------------------------------------------------------------------ input checks
def _check_finite_samples(x, name: str, what: str) -> None:
    """Eager: raise naming the first non-finite entry as sample / joint (/ column)."""
    if not is_concrete(x):
        return
    bad = ~np.isfinite(np.asarray(x))
    if np.any(bad):
        idx = first_bad(bad)
        core = idx[-len(what.split("/")) :]
        parts = ", ".join(f"{w} {i}" for w, i in zip(what.split("/"), core, strict=True))
        raise ValueError(
            f"{name}: expected finite values, got {np.asarray(x)[idx]} at {parts} "
            f"(index {idx}); remove or repair those samples"
        )


def _check_prior(prior, nb: int, dtype, body_names=None) -> jax.Array:
    if not isinstance(prior, RigidBodyInertia):
        raise TypeError(
            f"prior: expected a RigidBodyInertia of batch (..., nb={nb}), got "
            f"{type(prior).__name__}"
        )
    pi0 = prior.params
    if pi0.ndim < 2 or pi0.shape[-2] != nb:
        raise ValueError(
            f"prior: expected a RigidBodyInertia of batch shape (..., {nb}) (one body per "
            f"10 regressor columns), got batch shape {tuple(pi0.shape[:-1])}"
        )
    same_dtype(Y=jnp.zeros((), dtype), prior=pi0)
    if is_concrete(pi0):
        p = np.asarray(pi0, np.float64)
        ok = np.asarray(np.isfinite(p).all(axis=-1))
        lam = np.full(p.shape[:-1], -np.inf)
        J = _params.pseudo_inertia(np.where(ok[..., None], p, 0.0), np)
        lam[ok] = np.linalg.eigvalsh(J[ok])[..., 0]
        bad = ~(lam > 0)
        if np.any(bad):
            idx = first_bad(bad)
            i = idx[-1]
            who = f"body {i}" + (f" ({body_names[i]!r})" if body_names else "")
            raise ValueError(
                f"prior: every body must be fully physically consistent (pseudo-inertia J0 "
                f"positive definite) to serve as a log-det prior; {who} is not "
                f"(smallest eigenvalue of J0: {lam[idx]:.3g}, index {idx}). Replace it, e.g. "
                "with spatialjax.nearest_consistent(prior) (made strictly interior), or pass "
                "a prior of your own"
            )
    return pi0


def _check_weights(weights, n: int, nv: int, dtype):
    w = as_float_array(weights, "weights")
    same_dtype(Y=jnp.zeros((), dtype), weights=w)
    ws = (1,) * max(0, 2 - w.ndim) + tuple(w.shape)
    if ws[-1] not in (1, nv) or ws[-2] not in (1, n):
        raise ValueError(
            f"weights: expected a shape broadcastable to tau's (..., N, nv) = (..., {n}, {nv}), "
            f"such as (), ({nv},), ({n}, 1), ({n}, {nv}) or (..., {n}, {nv}); got shape "
            f"{tuple(w.shape)}"
        )
    w = w.astype(dtype).reshape(ws)
    if is_concrete(w):
        wn = np.asarray(w)
        if not np.all(np.isfinite(wn)):
            raise ValueError(
                f"weights: expected finite values, got NaN or inf at index "
                f"{first_bad(~np.isfinite(wn))}"
            )
        if np.any(wn < 0):
            raise ValueError(
                "weights: expected non-negative noise weights (1/σ²), got a negative value at "
                f"index {first_bad(wn < 0)}"
            )
    return w


def _prepare(Y, tau, extra, weights, what: str):
    """Shapes/dtypes of ``Y``, ``tau``, ``extra``, ``weights``; returns ``X = [Y | extra]`` etc."""
    Y = as_float_array(Y, "Y")
    if Y.ndim < 3:
        raise ValueError(
            f"Y: expected the joint-torque regressor of shape (..., N, nv, 10*nb) with a sample "
            f"axis N, got shape {tuple(Y.shape)}"
        )
    N, nv, P = Y.shape[-3:]
    if P % 10 or P == 0:
        raise ValueError(
            f"Y: expected 10 columns per body in the last axis (..., N, nv, 10*nb), got "
            f"shape {tuple(Y.shape)} ({P} columns)"
        )
    tau = as_float_array(tau, "tau")
    if tau.ndim < 2 or tuple(tau.shape[-2:]) != (N, nv):
        raise ValueError(
            f"tau: expected shape (..., N, nv) = (..., {N}, {nv}) to match Y of shape "
            f"{tuple(Y.shape)}, got shape {tuple(tau.shape)}"
        )
    dtype = same_dtype(Y=Y, tau=tau)
    batch = broadcast_batch("Y", Y.shape[:-3], "tau", tau.shape[:-2])
    ne = 0
    if extra is not None:
        extra = as_float_array(extra, "extra")
        if extra.ndim < 3 or tuple(extra.shape[-3:-1]) != (N, nv):
            raise ValueError(
                f"extra: expected shape (..., N, nv, ne) = (..., {N}, {nv}, ne) to match Y of "
                f"shape {tuple(Y.shape)}, got shape {tuple(extra.shape)}"
            )
        same_dtype(Y=Y, extra=extra)
        ne = extra.shape[-1]
    _check_finite_samples(tau, "tau", "sample/joint")
    _check_finite_samples(Y, "Y", "sample/joint/column")
    if extra is not None:
        _check_finite_samples(extra, "extra", "sample/joint/column")
        batch = broadcast_batch("Y and tau", batch, "extra", extra.shape[:-3])
        E = extra
    else:
        E = jnp.zeros((N, nv, 0), dtype)
    w = None
    if weights is not None:
        w = _check_weights(weights, N, nv, dtype)
        batch = broadcast_batch("Y and tau", batch, "weights", w.shape[:-2])
    return Y, E, tau, w, tuple(batch), dtype, (N, nv, P // 10, ne)


def least_squares_torques(Y, tau, *, extra=None, weights=None):
    r"""Ordinary (weighted, minimum-norm) least squares on the joint-torque regressor.

    Solves ``min_x Σ_{k,j} w_kj ((Y_k π + E_k φ) − τ_k)_j²`` with
    ``x = [π; φ]`` by the normal equations. Where the stacked regressor is
    rank-deficient (always for a real robot: some inertial parameters never
    enter the joint torques) the solution of minimum norm of the
    *column-scaled* coefficients ``D x`` is returned (``D``: the column
    norms of ``√W X``; columns below ``√eps`` times the largest are dropped),
    so that the choice among the equivalent solutions does not depend on
    units; singular values of the column-scaled regressor below
    ``√(10 p eps) σ_max`` count as zero, and dropped columns (parameters that
    never enter the dynamics) get 0. No physical consistency is imposed: this
    is the baseline that
    [`fit_torques`][spatialjax.identification.fit_torques] improves on. The regressor, torques and
    weights are each scaled to a largest entry of 1 before the normal equations are
    formed (the result is scaled back), so data of any magnitude that
    float64 holds are solved, not squared into overflow.

    Args:
      Y: ``(..., N, nv, 10 nb)`` joint-torque regressor
        ([`joint_torque_regressor`][spatialjax.multibody.joint_torque_regressor]).
      tau: ``(..., N, nv)`` measured joint torques.
      extra: optional ``(..., N, nv, ne)`` extra columns (friction).
      weights: optional weights broadcastable to ``(..., N, nv)`` (default 1).

    Returns:
      ``(pi (..., 10 nb), extra (..., ne))``; ``pi.reshape(..., nb, 10)`` gives
      the bodies' 10-vectors (``_params`` order).
    """
    Y, E, tau, w, batch, dtype, (N, nv, nb, ne) = _prepare(Y, tau, extra, weights, "lstsq")
    w = jnp.ones((N, nv), dtype) if w is None else jnp.broadcast_to(w, w.shape[:-2] + (N, nv))
    args = (Y, E, tau, w)
    axes = tuple(a.ndim > c for a, c in zip(args, _CORES, strict=False))
    x = _lstsq_batch(*args, batch=batch, axes=axes)
    return x[..., : 10 * nb], x[..., 10 * nb :]


def _lstsq_impl(Y, E, tau, w, *, batch, axes):
    p = Y.shape[-1] + E.shape[-1]
    rtol = _rank_rtol(p, Y.dtype)

    def one(Y, E, tau, w):
        # scaled to unit largest entries first: the normal equations square the data,
        # which overflows (or underflows) long before the solution does
        def unit(x):
            m = jnp.max(jnp.abs(x), initial=0.0)
            return jnp.where((m > 0) & jnp.isfinite(m), m, 1.0)

        sx = jnp.maximum(unit(Y), unit(E)) if E.shape[-1] else unit(Y)
        st, sw = unit(tau), unit(w)
        A, b = _gram(Y / sx, E / sx, tau / st, w / sw)
        return _min_norm_solve(_factor(A, rtol), b) * (st / sx)

    flat, in_axes = _flatten_batch((Y, E, tau, w), _CORES[:4], axes, batch)
    nbatch = int(np.prod(batch, dtype=np.int64))
    out = jax.vmap(one, in_axes=tuple(in_axes), axis_size=nbatch)(*flat)
    return out.reshape(tuple(batch) + (p,))


_lstsq_batch = cpu_program(
    _lstsq_impl, static_argnames=("batch", "axes"), compiler_options=COMPILER_OPTIONS
)


def fit_torques(
    Y,
    tau,
    *,
    prior: RigidBodyInertia,
    extra=None,
    extra_nonnegative=None,
    weights=None,
    gamma=None,
    prior_spread: float = PRIOR_SPREAD,
    rtol: float | None = None,
    max_iters: int = MAX_ITERS,
    solver: str | None = None,
    _body_names: tuple | None = None,
) -> RobotFitResult:
    r"""Physically consistent inertial parameters of a whole robot from joint torques.

    Solves, for every robot (or resample) of the batch, the convex problem
    (Wensing, Kim & Slotine 2017; Lee, Wensing & Park 2020)

    $$
    \min_{x = [π_1, …, π_{nb}, φ]}\ F(x) = \sum_{k,j} w_{kj}\,(Y_k π + E_k φ − τ_k)_j^2
       + γ \sum_{i=1}^{nb} D(J_i ‖ J_{0,i})
    \quad\text{s.t.}\quad J_i ≻ 0,\quad φ_j ≥ 0 \text{ where } \texttt{extra\_nonnegative}_j,
    $$

    $$
    D(J ‖ J_0) = \mathrm{tr}(J_0^{-1} J) − \log\det J + \log\det J_0 − 4,
    $$

    with ``J_i = J(π_i)`` the 4×4 pseudo-inertia of body ``i`` (``_params``
    layout), ``k`` the samples, ``j`` the joints and ``E`` the ``extra``
    columns. ``D`` is the log-det (Bregman) divergence: twice the
    Kullback–Leibler divergence between the zero-mean Gaussians of
    covariances ``J`` and ``J0``; for ``J = J0^{½}(1 + Δ)J0^{½}`` it is
    ``½‖Δ‖_F² + O(Δ³)``. Every returned body has ``J ≻ 0`` (fully
    physically consistent), whatever the data.

    **Defaults** (rules, not constants tuned to a trajectory):

    * ``weights``: ``w_kj = 1/σ̂_j²`` per joint, with ``σ̂_j²`` the
      ordinary-least-squares residual energy of joint ``j`` divided by
      ``N (1 − r/(N·nv))`` (``r``: numerical rank of the stacked regressor;
      the degrees-of-freedom correction, shared by all joints), floored at
      ``eps · mean(τ_j²)``. The data term is then a χ² whose expected value
      at the truth is about ``N·nv``; ``σ̂`` is reported as ``noise_std``.
      Note that samples at 1 kHz are correlated (filtered noise, unmodelled
      dynamics), which makes the data look more informative than ``N``
      independent samples: raise ``prior_spread``'s weight (lower
      ``prior_spread``) or pass ``gamma`` to compensate.
    * ``gamma``: ``γ = 2 / s²`` with ``s = prior_spread`` (default 0.5): the
      prior is read as a Gaussian belief that each eigenvalue of
      ``J0^{-½} J J0^{-½}`` is ``1 ± s``; ``D ≈ ½‖Δ‖²`` so the prior's
      ``−2 log p = ‖Δ‖²/s² = (2/s²) D``, the same units as the χ² data term.
      ``s = 0.5`` (CAD/URDF inertias right to within about ±50 %: CAD
      commonly misses cables, motors, reducers and the reflected rotor
      inertia) gives ``γ = 8``. The rule assumes weights are ``1/σ²``; with
      other weights pass ``gamma`` yourself.
    * ``prior``: required here; [`fit_robot`][spatialjax.identification.fit_robot] uses the model's
      inertias.

    **Solver**: the data are reduced to ``p = 10 nb + ne`` dimensions by the
    normal equations ``A = XᵀWX``, ``b = XᵀWτ`` (``X = [Y | E]``; two passes
    over the samples: unweighted for the least-squares noise estimate, then
    weighted), column-scaled and eigen-decomposed into ``R = √Λ Vᵀ D`` and
    ``z`` with ``Σ w r² = ‖Rx − z‖² + ρ²`` (``ρ²``, the weighted
    least-squares residual, is computed on the samples), so an iteration
    costs ``O(p³)`` whatever ``N``. The normal equations square the
    regressor's condition number; in float64 this costs nothing measurable
    (the optimum agrees with Clarabel on the QR-reduced data to ~1e-8), and
    directions the Gram matrix cannot resolve (singular values of the
    column-scaled regressor below ``√(10 p eps)``; 1e-2 relative in
    float32) are left to the prior. Then a primal interior-point Newton
    method on the full ``x`` minimises ``F_μ = F − μ(Σ_i log det J_i + Σ_j
    log φ_j)`` with the exact Hessian ``2RᵀR + (γ + μ) blockdiag ∇²(−log
    det J_i) + diag(μ/φ_j²)``, a fraction-to-boundary rule (0.99 of the
    largest step keeping every ``J_i ≻ 0`` and ``φ_j > 0``), and
    back-tracking (Armijo) line search; ``μ`` is divided by 10 whenever half
    the Newton decrement is ``≤ ν μ`` (``ν = 4 nb + #nonnegative``, the
    barrier parameter), down to ``ν μ ≤ 0.1 (rtol |F| + atol)``; converged when
    half the Newton decrement at that ``μ`` is ``≤ rtol |F| + atol``
    (``atol``: 16 ulps of the summed terms). Everything runs as one jitted
    ``lax.while_loop``, ``vmap``-ped over the batch. Newton's method fits
    this problem: ``p ≈ 100``, the objective is a quadratic plus
    self-concordant barriers, so damped Newton converges in tens of
    iterations regardless of the data's conditioning, where first-order
    methods crawl along poorly excited directions.

    Known limitation: where the prior's weight is negligible against the data
    and the data ask for an inconsistent body (e.g. weights far above the
    actual ``1/σ²``, or ``γ ≪ 1`` on noisy data), the optimum lies within
    ~1e-8 of ``det J = 0``; the Newton system's condition number then
    reaches ~1e16 and the loop may stop at ``max_iters`` with status
    ``NOT_CONVERGED`` (the bodies are still consistent, the objective a
    fraction of a percent above the optimum). The default weights and ``γ``
    keep the fit away from that regime on the data tested.

    Args:
      Y: ``(..., N, nv, 10 nb)`` joint-torque regressor (``Y @ π`` is the
        inverse dynamics; [`joint_torque_regressor`][spatialjax.multibody.joint_torque_regressor]).
      tau: ``(..., N, nv)`` measured joint torques.
      prior: ``RigidBodyInertia`` of batch ``(..., nb)``: the prior bodies
        ``J0_i`` (each must be fully consistent, ``J0 ≻ 0``).
      extra: optional ``(..., N, nv, ne)`` extra regressor columns (friction,
        [`friction_regressor`][spatialjax.multibody.friction_regressor]).
      extra_nonnegative: optional ``(ne,)`` booleans: which extra coefficients
        are constrained ``≥ 0`` (viscous and Coulomb friction). Default: none.
      weights: optional ``w ≥ 0`` broadcastable to ``(..., N, nv)``, inverse
        noise variances ``1/σ²`` (or bootstrap counts times those). Default:
        the per-joint rule above.
      gamma: ``γ ≥ 0``, scalar or ``(...)``. Default ``2 / prior_spread²``.
        ``γ = 0`` is the consistent (constrained) least-squares fit; it is
        ``UNDETERMINED`` where the regressor is rank-deficient.
      prior_spread: ``s > 0`` of the default ``γ`` rule.
      rtol: relative tolerance (default ``1e-12`` float64, ``1e-6`` float32).
      max_iters: cap on Newton iterations.
      solver: ``None`` or ``"interior_point"`` (the only solver).

    Returns:
      [`RobotFitResult`][spatialjax.identification.RobotFitResult] of batch shape ``(...)``.
      Differentiable with respect to ``Y``, ``tau``, ``extra``, ``weights``, ``prior`` and
      ``gamma`` by the implicit function theorem at the computed optimum
      (the default weights are treated as constants).

    Raises:
      ValueError: shapes that do not fit together (named, with what was
        received); (eagerly) NaN/inf in ``tau``/``Y``/``extra`` naming the
        sample and joint; a prior body that is not fully consistent; negative
        weights or ``γ``; with default weights, fewer torque samples
        ``N · nv`` than ``p + 1`` (the noise cannot be estimated).
      TypeError: non-float inputs, mixed float32/float64, a ``prior`` that is
        not a ``RigidBodyInertia``.

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, "Linear matrix inequalities for
      physically consistent inertial parameter identification: a statistical
      perspective on the mass distribution", IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, "Geometric robot dynamic
      identification: a convex programming approach", IEEE T-RO 36(2), 2020.
      J. Nocedal, S. J. Wright, *Numerical Optimization*, 2nd ed., 2006,
      ch. 19 (interior-point methods); S. Boyd, L. Vandenberghe, *Convex
      Optimization*, 2004, §9.6 and §11.3 (self-concordance, barrier method).
    """
    if solver not in (None, "interior_point"):
        raise ValueError(f"solver: expected None or 'interior_point', got {solver!r}")
    Y, E, tau, w, batch, dtype, (N, nv, nb, ne) = _prepare(Y, tau, extra, weights, "fit")
    p = 10 * nb + ne
    pi0 = _check_prior(prior, nb, dtype, _body_names)
    batch = broadcast_batch("Y and tau", batch, "prior", pi0.shape[:-2])
    if extra_nonnegative is None:
        nonneg = np.zeros(ne, bool)
    else:
        if extra is None:
            raise ValueError("extra_nonnegative: given without extra columns")
        nonneg = np.asarray(extra_nonnegative)
        if nonneg.dtype != bool or nonneg.shape != (ne,):
            raise ValueError(
                f"extra_nonnegative: expected {ne} booleans (one per extra column), got "
                f"{nonneg.dtype} array of shape {nonneg.shape}"
            )
    if weights is None and N * nv <= p:
        raise ValueError(
            f"tau: {N * nv} torque samples (N={N} samples × nv={nv} joints) but the problem has "
            f"p={p} parameters (10 per body × {nb} bodies + {ne} extra columns): at least "
            f"{p + 1} are needed to estimate the noise level (the default weights); record a "
            "longer log, or pass weights"
        )
    if gamma is not None:
        gamma, batch = check_gamma(gamma, Y, batch, "Y and tau")
    if not (np.isfinite(prior_spread) and prior_spread > 0):
        raise ValueError(f"prior_spread: expected a finite s > 0, got {prior_spread}")
    given = jnp.asarray([weights is not None, gamma is not None])
    w_arr = jnp.ones((N, nv), dtype) if w is None else w
    w_arr = jnp.broadcast_to(w_arr, w_arr.shape[:-2] + (N, nv))
    g_arr = jnp.zeros((), dtype) if gamma is None else gamma
    args = (Y, E, tau, w_arr, pi0.astype(dtype), g_arr)
    axes = tuple(a.ndim > c for a, c in zip(args, _CORES, strict=True))
    return _fit_batch(
        *args,
        given,
        jnp.asarray(nonneg),
        batch=tuple(batch),
        rtol=_default_rtol(dtype) if rtol is None else float(rtol),
        max_iters=int(max_iters),
        prior_spread=float(prior_spread),
        axes=axes,
        sample_weights=weights is not None,
    )


def fit_robot(
    model,
    q,
    v,
    a,
    tau,
    *,
    friction=FRICTION_KINDS,
    weights=None,
    gamma=None,
    prior: RigidBodyInertia | None = None,
    gravity=(0.0, 0.0, -9.81),
    solver: str | None = None,
    **options,
) -> RobotFitResult:
    r"""Identify every body of ``model`` (and joint friction) from a torque log.

    Builds ``Y = joint_torque_regressor(model, q, v, a, gravity)`` and the
    selected columns of ``friction_regressor(model, v)`` (per one-DoF joint
    ``τ_f = F_v v + F_c sign(v) + o``; ``F_v, F_c ≥ 0``, offset free), then
    calls [`fit_torques`][spatialjax.identification.fit_torques] with the model's inertias as the
    default prior. See [`fit_torques`][spatialjax.identification.fit_torques] for the objective, the
    default weights (``1/σ̂_j²`` from least-squares residuals) and ``γ`` (``2/s²``, ``s =
    0.5``).

    Args:
      model: [`Model`][spatialjax.multibody.Model] (its ``inertia`` is the
        default prior; joints locked in the model stay locked).
      q: ``(..., N, nq)`` positions; ``v``, ``a``, ``tau``: ``(..., N, nv)``
        velocities, accelerations and measured torques (model conventions).
      friction: a [`FrictionModel`][spatialjax.multibody.FrictionModel], or any subset
        of ``("viscous", "coulomb", "offset")``; ``()`` fits no friction.
      weights, gamma, solver: as in [`fit_torques`][spatialjax.identification.fit_torques].
      prior: ``RigidBodyInertia`` of batch ``(..., nb)``; default
        ``model.inertia`` (each body must be fully consistent: a massless or
        inconsistent URDF link raises, naming the link).
      gravity: gravitational acceleration in the world frame (m/s²).
      **options: ``prior_spread``, ``rtol``, ``max_iters`` of
        [`fit_torques`][spatialjax.identification.fit_torques].

    Returns:
      [`RobotFitResult`][spatialjax.identification.RobotFitResult] with ``friction``
      ``(..., n1, 3)`` ``[viscous, coulomb, offset]`` per one-DoF joint in body order (NaN for
      kinds not fitted).

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, IEEE T-RO 36(2), 2020.
    """
    from ..multibody import Model, joint_torque_regressor

    if not isinstance(model, Model):
        raise TypeError(f"model: expected a spatialjax.multibody.Model, got {type(model).__name__}")
    fm = _as_friction_model(friction)
    tau = as_float_array(tau, "tau")
    _check_finite_samples(tau, "tau", "sample/joint")
    # the caller's arrays are checked here: a NaN in q would otherwise surface as a
    # non-finite entry of Y, an array the caller never passed
    for name, x in (("q", q), ("v", v), ("a", a)):
        _check_finite_samples(as_float_array(x, name), name, "sample/column")
    Y = joint_torque_regressor(model, q, v, a, gravity)
    extra = nonneg = None
    n1 = fm.n_joints(model)
    cols = fm.columns(model)
    if fm.kinds:
        extra = fm.regressor(model, v)
        nonneg = fm.nonnegative(model)
    res = fit_torques(
        Y,
        tau,
        prior=model.inertia if prior is None else prior,
        extra=extra,
        extra_nonnegative=nonneg,
        weights=weights,
        gamma=gamma,
        solver=solver,
        _body_names=model.body_names,
        **options,
    )
    fr = jnp.full(res.extra.shape[:-1] + (3 * n1,), jnp.nan, res.extra.dtype)
    if fm.kinds:
        fr = fr.at[..., cols].set(res.extra)
    fields = {n: getattr(res, n) for n in res._data_fields}
    fields["friction"] = fr.reshape(fr.shape[:-1] + (n1, 3))
    return RobotFitResult._from_fields(**fields)
