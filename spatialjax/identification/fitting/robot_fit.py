r"""Whole-robot inertial identification from joint torques: ``fit_torques``, ``fit_robot``.

One convex problem per robot (Wensing, Kim & Slotine 2017; Lee, Wensing &
Park 2020) over ``x = [π_1, …, π_nb, φ]`` (``nb`` body 10-vectors in the
``_params`` layout, then ``ne`` extra coefficients such as friction):

$$
\min_x\ F(x) = \sum_{k,j} w_{kj} (Y_k x − τ_k)_j^2
   + γ \sum_i \bigl(\mathrm{tr}(J_{0,i}^{-1} J_i) − \log\det J_i
   + \log\det J_{0,i} − 4\bigr)
\quad\text{s.t.}\quad J_i ≻ 0,\ φ_j ≥ 0\ (j ∈ \text{nonnegative}).
$$

The data are reduced to the ``p × p`` normal equations (``reduction``) and
the problem is solved by a primal interior-point Newton method on the full
``x`` (``interior_point``, configured by ``InteriorPoint``); the arguments
are checked by ``inputs``. This module holds the public functions, one
robot's fit (default weights and ``γ``, the implicit-function derivative,
the result) and its map over the batch (see [`fit_torques`][spatialjax.identification.fit_torques]).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import as_float_array, broadcast_batch, require_finite
from ..._consistency import physical_consistency
from ..._inertia import RigidBodyInertia
from . import interior_point, reduction
from .implicit import with_derivative
from .inputs import (
    as_joint_model,
    check_extra_nonnegative,
    check_extra_prior,
    check_gamma,
    check_prior_bodies,
    check_prior_spread,
    check_torque_data,
    check_weights,
)
from .program import cpu_program
from .robot_result import RobotFitResult
from .solvers import InteriorPoint
from .status import FitStatus, status_code

#: Default relative spread ``s`` of the prior: ``γ = 2 / s²`` (see :func:`fit_torques`).
PRIOR_SPREAD = 0.5

#: XLA's CPU back-end optimisation level for the fit's program: the run time is spent in
#: the data's matrix products (library calls) and O(p³) linear algebra, so LLVM's
#: optimisations buy nothing measurable while halving the compile time.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}

# m = 1, h = 0, I = 1: the stand-in prior body of a fit whose inputs are invalid
_UNIT_BODY = (1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0)


# ------------------------------------------------------------------ one robot, in steps
def _guard_inputs(Y, E, tau, w, prior_pi, gamma, has_gamma, sample_weights):
    """Value checks that must run under ``jit`` (the eager path raised already), and the swap.

    Returns ``(A0, b0, prior_pi, finite_in, invalid, bad)``: the normal equations of the
    sample-weighted data (unweighted by the noise) and the prior bodies, replaced by a
    trivial problem (identity, zero, unit bodies) where the inputs are bad, so that such a
    fit costs one iteration and comes back as NaN with its status.
    """
    sg = jax.lax.stop_gradient
    dtype = Y.dtype
    p = Y.shape[-1] + E.shape[-1]
    A0, b0 = reduction.gram(sg(Y), sg(E), sg(tau), sg(w) if sample_weights else None)
    finite_in = jnp.all(jnp.isfinite(A0)) & jnp.all(jnp.isfinite(b0))
    finite_in = finite_in & jnp.all(jnp.isfinite(tau)) & jnp.all(jnp.isfinite(w))
    finite_in = finite_in & jnp.all(jnp.isfinite(prior_pi)) & (~has_gamma | jnp.isfinite(gamma))
    finite_prior = jnp.where(jnp.isfinite(prior_pi), prior_pi, 0.0)
    _, _, prior_ok = interior_point.divergence_terms(finite_prior)
    invalid = jnp.any(w < 0) | (has_gamma & (gamma < 0)) | ~jnp.all(prior_ok)
    bad = ~finite_in | invalid
    A0 = jnp.where(bad, jnp.eye(p, dtype=dtype), A0)
    b0 = jnp.where(bad, 0.0, b0)
    prior_pi = jnp.where(bad, jnp.asarray(_UNIT_BODY, dtype), prior_pi)
    return A0, b0, prior_pi, finite_in, invalid, bad


def _noise_variance(Y, E, tau, w, A0, b0, bad, rank_rtol):
    """Per-joint noise variance ``σ̂_j² (nv,)`` of the default weights' rule (``fit_torques``).

    From the ordinary-least-squares residuals on the samples, divided by ``N (1 − r/(N·nv))``
    (``r``: the numerical rank), floored at ``eps · mean(τ_j²)``; 1 for a swapped-out fit.
    """
    sg = jax.lax.stop_gradient
    dtype = Y.dtype
    eps = jnp.finfo(dtype).eps
    N, nv, _ = Y.shape
    rows = N * nv
    F0 = reduction.factor(A0, rank_rtol)
    x_ls = reduction.min_norm_solve(F0, b0)
    e = reduction.joint_residuals(sg(Y), sg(E), sg(tau), sg(w), x_ls)  # (nv,)
    n_eff = jnp.sum(sg(w), axis=0)  # (nv,) Σ_k w_kj (= N without sample weights)
    dof = jnp.maximum(rows - F0.rank, 1).astype(dtype) / rows
    var = e / jnp.maximum(n_eff * dof, jnp.finfo(dtype).tiny)
    rms2 = jnp.sum(sg(w * tau * tau), axis=0) / jnp.maximum(n_eff, jnp.finfo(dtype).tiny)
    var = jnp.maximum(var, eps * jnp.where(rms2 > 0, rms2, 1.0))
    return jnp.where(bad, 1.0, var)


def _weighted_reduction(Y, E, tau, wc, bad, rank_rtol):
    """The weighted normal equations and what the loop needs of them.

    Returns ``(A, bvec, R, x_wls, rho2, rank, cond)``: ``A``, ``bvec`` differentiable
    (the implicit-function derivative goes through them); ``R``, the weighted
    least-squares solution ``x_wls`` and its residual ``ρ²`` (on the samples) for the
    loop; the rank and the base regressor's condition number for the result.
    """
    sg = jax.lax.stop_gradient
    p = Y.shape[-1] + E.shape[-1]
    A, bvec = reduction.gram(Y, E, tau, wc)
    A = jnp.where(bad, jnp.eye(p, dtype=Y.dtype), A)
    bvec = jnp.where(bad, 0.0, bvec)
    Fw = reduction.factor(sg(A), rank_rtol)
    R, _ = reduction.r_and_z(Fw, sg(bvec))
    cond, _ = reduction.base_condition(Fw)
    x_wls = reduction.min_norm_solve(Fw, sg(bvec))
    rho2 = jnp.sum(reduction.joint_residuals(sg(Y), sg(E), sg(tau), sg(wc), x_wls))
    return A, bvec, R, x_wls, jnp.where(bad, 0.0, rho2), Fw.rank, cond


def _implicit_derivative(x, A, bvec, P, mu, k, gamma, nb):
    """The optimum ``x`` with its derivative attached (implicit function theorem).

    ``∇F_μ(x*; inputs) = 0``, so ``dx* = −H⁻¹ d(∇F_μ)``; the value stays exactly ``x*``.
    ``A``, ``bvec``, ``k`` and ``gamma`` carry the inputs' derivatives, ``P`` (the
    loop's problem) stop-gradient copies.
    """
    pis, phi = interior_point.split_params(x, nb)
    g_data = 2.0 * (A @ x - bvec)
    ldg = jax.grad(lambda q: jnp.sum(interior_point.logdets(q)[0]))(pis)
    gb = gamma * (k - ldg) - mu * ldg
    phi_safe = jnp.where(P.nonneg & (phi > 0), phi, 1.0)
    gphi = jnp.where(P.nonneg, -mu / phi_safe, 0.0) + 2.0 * P.wphi * (phi - P.phi0)
    g_full = g_data + jnp.concatenate([gb.reshape(-1), gphi])
    _, H = interior_point.barrier_grad_hess(x, P, mu, nb)
    s = interior_point.newton_direction(g_full, jax.lax.stop_gradient(H))
    return with_derivative(x, s)


def _fit_one_robot(
    Y,
    E,
    tau,
    w,
    prior_pi,
    gamma,
    given,
    nonneg,
    phi0,
    wphi,
    *,
    rtol,
    max_iters,
    prior_spread,
    sample_weights,
):
    """One robot: ``Y (N, nv, 10 nb)``, ``E (N, nv, ne)``, ``tau (N, nv)``, sample weights ``w``.

    ``given = [weights given, γ given]``. Derivatives: the loop sees stop-gradient
    copies; the result carries the implicit-function-theorem derivative.
    """
    sg = jax.lax.stop_gradient
    dtype = Y.dtype
    nb = Y.shape[-1] // 10
    p = Y.shape[-1] + E.shape[-1]
    has_w, has_gamma = given[0], given[1]
    A0, b0, prior_pi, finite_in, invalid, bad = _guard_inputs(
        Y, E, tau, w, prior_pi, gamma, has_gamma, sample_weights
    )
    k, logdet0, _ = interior_point.divergence_terms(prior_pi)
    rank_rtol = reduction.rank_rtol(p, dtype)

    # the default weights: 1/σ̂_j² per joint, times the sample weights
    var = _noise_variance(Y, E, tau, w, A0, b0, bad, rank_rtol)
    c = sg(jnp.where(has_w, jnp.ones_like(var), 1.0 / var))  # joint weights
    wc = w * c  # the weights used: sample weights times joint weights
    A, bvec, R, x_wls, rho2, rank, cond = _weighted_reduction(Y, E, tau, wc, bad, rank_rtol)

    gamma = jnp.where(has_gamma, gamma, jnp.asarray(2.0 / prior_spread**2, dtype))
    P = interior_point.RobotProblem(
        R, x_wls, rho2, sg(k), sg(logdet0), sg(gamma), nonneg, phi0, wphi
    )
    atol = jnp.where(bad, jnp.inf, interior_point.atol_floor(rho2, gamma, logdet0))
    out = interior_point.start_and_solve(sg(A), sg(bvec), P, sg(prior_pi), rtol, atol, max_iters)
    x = _implicit_derivative(sg(out.x), A, bvec, P, out.mu, k, gamma, nb)

    pis, phi = interior_point.split_params(x, nb)
    residual = jnp.sum(reduction.joint_residuals(Y, E, tau, wc, x))
    logdet, _ = interior_point.logdets(pis)
    reg = jnp.sum(k * pis) - jnp.sum(logdet) + jnp.sum(logdet0) - 4.0 * nb
    objective = residual + gamma * reg + jnp.sum(wphi * jnp.square(phi - phi0))
    status = status_code(
        nonfinite_input=~finite_in,
        invalid_input=invalid,
        undetermined=(gamma <= 0) & (rank < p),
        numerical_failure=~jnp.all(jnp.isfinite(x)),
        not_converged=~out.converged,
    )
    nan = jnp.asarray(jnp.nan, dtype)

    def out_(v):
        return jnp.where(bad, nan, v)

    inertia = RigidBodyInertia(out_(pis))
    return RobotFitResult(
        inertia=inertia,
        extra=out_(phi),
        joint_parameters=None,
        objective=out_(objective),
        residual=out_(residual),
        iterations=out.it,
        converged=status == FitStatus.CONVERGED,
        status=status,
        gamma=out_(gamma),
        prior=RigidBodyInertia(out_(prior_pi)),
        noise_std=out_(jnp.sqrt(var)),
        consistency=physical_consistency(inertia),
        rank=rank,
        condition_number=out_(cond),
    )


# ------------------------------------------------------------------ the batch
def _fit_batch_impl(
    Y,
    E,
    tau,
    w,
    prior_pi,
    gamma,
    given,
    nonneg,
    phi0,
    wphi,
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
        _fit_one_robot,
        rtol=rtol,
        max_iters=max_iters,
        prior_spread=prior_spread,
        sample_weights=sample_weights,
    )
    flat, in_axes = _flatten_batch((Y, E, tau, w, prior_pi, gamma), _CORES, axes, batch)
    vone = jax.vmap(one, in_axes=(*in_axes, None, None, None, None), axis_size=nbatch)
    out = vone(*flat, given, nonneg, phi0, wphi)  # pyright: ignore[reportCallIssue]
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


# ------------------------------------------------------------------ least squares
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
    Y, E, tau, w, batch, dtype, (N, nv, nb, ne) = check_torque_data(Y, tau, extra, weights)
    w = jnp.ones((N, nv), dtype) if w is None else jnp.broadcast_to(w, w.shape[:-2] + (N, nv))
    args = (Y, E, tau, w)
    axes = tuple(a.ndim > c for a, c in zip(args, _CORES, strict=False))
    x = _lstsq_batch(*args, batch=batch, axes=axes)
    return x[..., : 10 * nb], x[..., 10 * nb :]


def _lstsq_impl(Y, E, tau, w, *, batch, axes):
    p = Y.shape[-1] + E.shape[-1]
    rtol = reduction.rank_rtol(p, Y.dtype)

    def one(Y, E, tau, w):
        # scaled to unit largest entries first: the normal equations square the data,
        # which overflows (or underflows) long before the solution does
        def unit(x):
            m = jnp.max(jnp.abs(x), initial=0.0)
            return jnp.where((m > 0) & jnp.isfinite(m), m, 1.0)

        sx = jnp.maximum(unit(Y), unit(E)) if E.shape[-1] else unit(Y)
        st, sw = unit(tau), unit(w)
        A, b = reduction.gram(Y / sx, E / sx, tau / st, w / sw)
        return reduction.min_norm_solve(reduction.factor(A, rtol), b) * (st / sx)

    flat, in_axes = _flatten_batch((Y, E, tau, w), _CORES[:4], axes, batch)
    nbatch = int(np.prod(batch, dtype=np.int64))
    out = jax.vmap(one, in_axes=tuple(in_axes), axis_size=nbatch)(*flat)
    return out.reshape(tuple(batch) + (p,))


_lstsq_batch = cpu_program(
    _lstsq_impl, static_argnames=("batch", "axes"), compiler_options=COMPILER_OPTIONS
)


# ------------------------------------------------------------------ public API
def _interior_point_solver(solver) -> InteriorPoint:
    """``solver``, or ``InteriorPoint()`` for ``None``; a ``TypeError`` for anything else."""
    if solver is None:
        return InteriorPoint()
    if not isinstance(solver, InteriorPoint):
        raise TypeError(
            "solver: expected InteriorPoint(...) (spatialjax.identification) or None, got "
            f"{type(solver).__name__}"
        )
    return solver


def _fit_torques(
    Y,
    tau,
    *,
    prior: RigidBodyInertia,
    solver: InteriorPoint,
    extra=None,
    extra_nonnegative=None,
    weights=None,
    gamma=None,
    prior_spread: float = PRIOR_SPREAD,
    extra_prior=None,
    extra_prior_weight=None,
    multiplicity=None,
    body_names: tuple | None = None,
) -> RobotFitResult:
    """``fit_torques`` with its solver object resolved; ``body_names`` name the prior's bodies
    in its errors (``fit_robot`` passes the model's)."""
    Y, E, tau, w, batch, dtype, (N, nv, nb, ne) = check_torque_data(Y, tau, extra, weights)
    if multiplicity is not None:
        m = check_weights(multiplicity, N, nv, dtype, data="tau", name="multiplicity")
        batch = broadcast_batch("Y and tau", batch, "multiplicity", m.shape[:-2])
        w = m if w is None else w * m
    p = 10 * nb + ne
    pi0 = check_prior_bodies(prior, nb, dtype, body_names)
    batch = broadcast_batch("Y and tau", batch, "prior", pi0.shape[:-2])
    nonneg = check_extra_nonnegative(extra_nonnegative, ne, extra is not None)
    phi0, wphi = check_extra_prior(extra_prior, extra_prior_weight, ne, extra is not None)
    if weights is None and N * nv <= p:
        raise ValueError(
            f"tau: {N * nv} torque samples (N={N} samples × nv={nv} joints) but the problem has "
            f"p={p} parameters (10 per body × {nb} bodies + {ne} extra columns): at least "
            f"{p + 1} are needed to estimate the noise level (the default weights); record a "
            "longer log, or pass weights"
        )
    if gamma is not None:
        gamma, batch = check_gamma(gamma, Y, batch, "Y and tau")
    prior_spread = check_prior_spread(prior_spread)
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
        jnp.asarray(phi0, dtype),
        jnp.asarray(wphi, dtype),
        batch=tuple(batch),
        rtol=solver.rtol_for(dtype),
        max_iters=int(solver.max_iters),
        prior_spread=prior_spread,
        axes=axes,
        sample_weights=w is not None,
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
    solver: InteriorPoint | None = None,
    extra_prior=None,
    extra_prior_weight=None,
    multiplicity=None,
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
    columns (plus ``Σ_j w_j (φ_j − φ0_j)²`` with ``extra_prior_weight``). ``D``
    is the log-det (Bregman) divergence: twice the Kullback–Leibler divergence
    between the zero-mean Gaussians of covariances ``J`` and ``J0``; for
    ``J = J0^{½}(1 + Δ)J0^{½}`` it is ``½‖Δ‖_F² + O(Δ³)``. Every returned body has ``J ≻ 0`` (fully
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
      extra: optional ``(..., N, nv, ne)`` extra regressor columns (the joint model's,
        [`JointModel.regressor`][spatialjax.multibody.JointModel.regressor]).
      extra_nonnegative: optional ``(ne,)`` booleans: which extra coefficients
        are constrained ``≥ 0`` (armature, viscous and Coulomb friction), kept
        so by the interior point's barrier ``−μ log φ_j`` (``μ → 0``).
        Default: none.
      weights: optional ``w ≥ 0`` broadcastable to ``(..., N, nv)``, inverse
        noise variances ``1/σ²`` (or bootstrap counts times those). Default:
        the per-joint rule above.
      gamma: ``γ ≥ 0``, scalar or ``(...)``. Default ``2 / prior_spread²``.
        ``γ = 0`` is the consistent (constrained) least-squares fit; it is
        ``UNDETERMINED`` where the regressor is rank-deficient.
      prior_spread: ``s > 0`` of the default ``γ`` rule.
      solver: [InteriorPoint][spatialjax.identification.InteriorPoint]
        (default ``InteriorPoint()``), holding the relative tolerance
        ``rtol`` (``1e-12`` float64, ``1e-6`` float32) and the cap
        ``max_iters`` on Newton iterations.
      extra_prior: optional ``(ne,)`` prior values ``φ0`` of the extra
        coefficients (default 0), used where ``extra_prior_weight`` is positive.
      extra_prior_weight: optional ``(ne,)`` weights ``w_j ≥ 0`` of a Gaussian
        prior on the extra coefficients: ``Σ_j w_j (φ_j − φ0_j)²`` is added
        to ``F`` (in the data term's units: ``w_j = 1/σ_j²`` for a prior
        ``φ_j ~ N(φ0_j, σ_j²)`` when the weights are ``1/σ²``). Default: none
        (0: the coefficient is decided by the data alone).
        [joint_prior][spatialjax.identification.joint_prior] gives the rule for
        armature columns, which share a base parameter with a body (the first
        joint's armature and its link's moment about the axis).
      multiplicity: optional factors ``m ≥ 0`` broadcastable to ``(..., N,
        nv)``: the number of independent equations each row stands for. They
        multiply the weights (default or given), and the default rule then
        estimates ``σ̂_j²`` as the ``m``-weighted mean residual energy of
        row ``j``, so the data term counts ``Σ m`` equations. Rows projected
        onto an ``r``-dimensional subspace of ``R`` stand for ``r / R`` each
        (the ``multiplicity`` of [FloatingBaseRows][spatialjax.identification.FloatingBaseRows]);
        0 drops a row. Default: 1.

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
        not a ``RigidBodyInertia``, a ``solver`` that is not an
        ``InteriorPoint``.

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
    solver = _interior_point_solver(solver)
    return _fit_torques(
        Y,
        tau,
        prior=prior,
        solver=solver,
        extra=extra,
        extra_nonnegative=extra_nonnegative,
        weights=weights,
        gamma=gamma,
        prior_spread=prior_spread,
        extra_prior=extra_prior,
        extra_prior_weight=extra_prior_weight,
        multiplicity=multiplicity,
    )


def fit_robot(
    model,
    q,
    v,
    a,
    tau,
    *,
    joint_model=("viscous", "coulomb", "offset"),
    weights=None,
    gamma=None,
    prior: RigidBodyInertia | None = None,
    gravity=(0.0, 0.0, -9.81),
    prior_spread: float = PRIOR_SPREAD,
    solver: InteriorPoint | None = None,
) -> RobotFitResult:
    r"""Identify every body of ``model`` (and its joint model) from a torque log.

    Builds ``Y = joint_torque_regressor(model, q, v, a, gravity)`` and the
    columns of ``joint_model`` ([JointModel][spatialjax.multibody.JointModel]: per
    one-DoF joint ``τ_J = I_a a + F_v v + F_c sign(v) + o``; ``I_a, F_v, F_c ≥ 0``, offset
    free; ``Y`` has no armature: the model's ``armature`` is not used), then
    calls [`fit_torques`][spatialjax.identification.fit_torques] with the model's inertias as the
    default prior. See [`fit_torques`][spatialjax.identification.fit_torques] for the objective, the
    default weights (``1/σ̂_j²`` from least-squares residuals) and ``γ`` (``2/s²``, ``s =
    0.5``).

    Args:
      model: [`Model`][spatialjax.multibody.Model] (its ``inertia`` is the
        default prior; joints locked in the model stay locked).
      q: ``(..., N, nq)`` positions; ``v``, ``a``, ``tau``: ``(..., N, nv)``
        velocities, accelerations and measured torques (model conventions).
      joint_model: a [`JointModel`][spatialjax.multibody.JointModel], its kinds (any
        subset of ``("armature", "viscous", "coulomb", "offset")``) or a comma-separated
        text (``"none"``); default the three friction kinds, ``()`` fits no joint model.
      weights, gamma, prior_spread: as in [`fit_torques`][spatialjax.identification.fit_torques].
      prior: ``RigidBodyInertia`` of batch ``(..., nb)``; default
        ``model.inertia`` (each body must be fully consistent: a massless or
        inconsistent URDF link raises, naming the link).
      gravity: gravitational acceleration in the world frame (m/s²).
      solver: [InteriorPoint][spatialjax.identification.InteriorPoint], as in
        [fit_torques][spatialjax.identification.fit_torques].

    Returns:
      [`RobotFitResult`][spatialjax.identification.RobotFitResult] with ``joint_parameters``
      ``(..., n1, 4)`` ``[armature, viscous, coulomb, offset]`` per one-DoF joint in body
      order (NaN for kinds not fitted).

    Raises:
      ValueError: a ``joint_model`` that is not one (naming it), and as
        [fit_torques][spatialjax.identification.fit_torques].
      TypeError: ``model`` not a Model, and as ``fit_torques``.

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, IEEE T-RO 36(2), 2020.
    """
    from ...multibody import JOINT_KINDS, Model, joint_torque_regressor

    if not isinstance(model, Model):
        raise TypeError(f"model: expected a spatialjax.multibody.Model, got {type(model).__name__}")
    solver = _interior_point_solver(solver)
    fm = as_joint_model(joint_model)
    tau = as_float_array(tau, "tau")
    require_finite(tau, "tau", "sample/joint")
    # the caller's arrays are checked here: a NaN in q would otherwise surface as a
    # non-finite entry of Y, an array the caller never passed
    for name, x in (("q", q), ("v", v), ("a", a)):
        require_finite(as_float_array(x, name), name, "sample/column")
    Y = joint_torque_regressor(model, q, v, a, gravity)
    extra = nonneg = None
    n1 = fm.n_joints(model)
    cols = np.array([4 * j + JOINT_KINDS.index(k) for j in range(n1) for k in fm.kinds], int)
    if fm.kinds:
        extra = fm.regressor(model, v, a)
        nonneg = fm.nonnegative(model)
    res = _fit_torques(
        Y,
        tau,
        prior=model.inertia if prior is None else prior,
        solver=solver,
        extra=extra,
        extra_nonnegative=nonneg,
        weights=weights,
        gamma=gamma,
        prior_spread=prior_spread,
        body_names=model.body_names,
    )
    fr = jnp.full(res.extra.shape[:-1] + (4 * n1,), jnp.nan, res.extra.dtype)
    if fm.kinds:
        fr = fr.at[..., cols].set(res.extra)
    fields = {n: getattr(res, n) for n in res._data_fields}
    fields["joint_parameters"] = fr.reshape(fr.shape[:-1] + (n1, 4))
    return RobotFitResult._from_fields(**fields)
