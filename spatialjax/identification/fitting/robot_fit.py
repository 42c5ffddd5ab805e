"""Whole-robot inertial identification from joint torques: ``fit_torques``, ``fit_robot``.

One convex problem per robot over ``x = [π_1, …, π_nb, φ]`` (body 10-vectors, then extra
coefficients such as friction), reduced to normal equations (``reduction``) and solved by the
interior-point Newton method (``interior_point``). Derivation: docs page
``identification-methods.md#interior-point``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import as_float_array, broadcast_batch, require_finite, to_device
from ..._inertia import RigidBodyInertia
from ..errors import IdentifyError, IdentifyTypeError
from . import interior_point, reduction, solvers
from .implicit import with_derivative
from .inputs import (
    as_joint_model,
    broadcast_rows,
    check_extra_nonnegative,
    check_extra_prior,
    check_gamma,
    check_prior_bodies,
    check_prior_spread,
    check_torque_data,
    check_weights,
    pad_samples,
)
from .program import SOLVER_OPTIONS, cpu_program
from .robot_result import RobotFitResult
from .solvers import InteriorPoint
from .status import FitStatus, status_code

#: Default relative spread ``s`` of the prior: ``γ = 2 / s²`` (see :func:`fit_torques`).
PRIOR_SPREAD = 0.5

# m = 1, h = 0, I = 1: the stand-in prior body of a fit whose inputs are invalid
_UNIT_BODY = (1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0)


# ------------------------------------------------------------------ one robot, in steps
def _guard_inputs(Y, E, tau, w, prior_pi, gamma, has_gamma, sample_weights):
    """Value checks under ``jit``; bad inputs swapped for a trivial problem that returns NaN."""
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


def _noise_variance(Y, E, tau, w, A0, b0, bad, rank_rtol, rows):
    """Per-joint noise variance ``σ̂_j² (nv,)`` of the default weights (1 where ``bad``).

    ``rows``: the data's ``N nv`` equations (padding rows excluded).
    """
    sg = jax.lax.stop_gradient
    dtype = Y.dtype
    eps = jnp.finfo(dtype).eps
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
    """The weighted normal equations: ``(A, bvec, R, x_wls, rho2, rank, cond)``."""
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


def _newton_step(x, A, bvec, P, mu, k, gamma, *, nb):
    """``s = −H⁻¹ ∇F(x)``, the barrier problem's Newton step at ``x`` with ``H`` held
    constant: the implicit-function-theorem derivative of the optimum is its derivative."""
    pis, phi = interior_point.split_params(x, nb)
    g_data = 2.0 * (A @ x - bvec)
    ldg = jax.grad(lambda q: jnp.sum(interior_point.logdets(q)[0]))(pis)
    gb = gamma * (k - ldg) - mu * ldg
    phi_safe = jnp.where(P.nonneg & (phi > 0), phi, 1.0)
    gphi = jnp.where(P.nonneg, -mu / phi_safe, 0.0) + 2.0 * P.wphi * (phi - P.phi0)
    g_full = g_data + jnp.concatenate([gb.reshape(-1), gphi])
    _, H = interior_point.barrier_grad_hess(x, P, mu, nb)
    return interior_point.newton_direction(g_full, jax.lax.stop_gradient(H))


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
    n_rows,
    *,
    rtol,
    max_iters,
    prior_spread,
    sample_weights,
):
    """One robot: ``Y (N, nv, 10 nb)``, ``E (N, nv, ne)``, ``tau (N, nv)``, weights ``w``;
    ``n_rows``: the equations before padding (zero-weight rows past them)."""
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
    var = _noise_variance(Y, E, tau, w, A0, b0, bad, rank_rtol, n_rows)
    c = sg(jnp.where(has_w, jnp.ones_like(var), 1.0 / var))  # joint weights
    wc = w * c  # the weights used: sample weights times joint weights
    A, bvec, R, x_wls, rho2, rank, cond = _weighted_reduction(Y, E, tau, wc, bad, rank_rtol)

    gamma = jnp.where(has_gamma, gamma, jnp.asarray(2.0 / prior_spread**2, dtype))
    P = interior_point.RobotProblem(
        R, x_wls, rho2, sg(k), sg(logdet0), sg(gamma), nonneg, phi0, wphi
    )
    atol = jnp.where(bad, jnp.inf, interior_point.atol_floor(rho2, gamma, logdet0))
    out = interior_point.start_and_solve(sg(A), sg(bvec), P, sg(prior_pi), rtol, atol, max_iters)
    x = sg(out.x)
    x = with_derivative(x, functools.partial(_newton_step, nb=nb), x, A, bvec, P, out.mu, k, gamma)

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
    n_rows,
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
    out = _over_batch(one, flat, in_axes, nbatch, given, nonneg, phi0, wphi, n_rows)
    return jax.tree.map(lambda v: v.reshape(tuple(batch) + v.shape[1:]), out)


_FIT_STATIC = ("batch", "rtol", "max_iters", "prior_spread", "axes", "sample_weights")
_fit_batch = cpu_program(
    _fit_batch_impl, static_argnames=_FIT_STATIC, compiler_options=SOLVER_OPTIONS
)


#: core ranks of ``(Y, E, tau, w, prior_pi, gamma)``
_CORES = (3, 3, 2, 2, 2, 0)


def _over_batch(one, flat, in_axes, nbatch: int, *shared):
    """``one`` mapped over the flattened batch (``jax.vmap``, ``shared`` unbatched), outputs
    with a leading batch axis. A batch of one calls ``one`` itself: a vmapped while loop
    carries a select per value and per iteration, and compiles slower for nothing."""
    if nbatch == 1:
        core = [a[0] if ax == 0 else a for a, ax in zip(flat, in_axes, strict=True)]
        return jax.tree.map(lambda v: v[None], one(*core, *shared))
    vone = jax.vmap(one, in_axes=(*in_axes, *(None,) * len(shared)), axis_size=nbatch)
    return vone(*flat, *shared)


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
    """Ordinary (weighted, minimum-norm) least squares on the joint-torque regressor.

    Solves ``min_x Σ_{k,j} w_kj ((Y_k π + E_k φ) − τ_k)_j²`` with ``x = [π; φ]`` by the normal
    equations. Where the regressor is rank-deficient (always for a real robot) the solution of
    minimum norm of the column-scaled coefficients is returned, and parameters that never enter
    the dynamics get 0. No physical consistency is imposed: this is the baseline of
    [`fit_torques`][spatialjax.identification.fit_torques]. Rank rule: docs page
    ``identification-methods.md#normal-equations``.

    Args:
      Y: ``(..., N, nv, 10 nb)`` joint-torque regressor
        ([`joint_torque_regressor`][spatialjax.multibody.joint_torque_regressor]).
      tau: ``(..., N, nv)`` measured joint torques.
      extra: optional ``(..., N, nv, ne)`` extra columns (friction).
      weights: optional weights broadcastable to ``(..., N, nv)`` (default 1).

    Returns:
      ``(pi (..., 10 nb), extra (..., ne))``; ``pi.reshape(..., nb, 10)`` gives the bodies'
      10-vectors.
    """
    args, static = _lstsq_call(Y, tau, extra, weights)
    return _lstsq_batch(*args, **static)


def prepare_least_squares_torques(Y, tau, *, extra=None, weights=None) -> None:
    """Start compiling the program of ``least_squares_torques(Y, tau, extra=extra,
    weights=weights)`` in a background thread (``cpu_program.prepare``), as
    ``prepare_fit_torques``."""
    args, static = _lstsq_call(Y, tau, extra, weights)
    _lstsq_batch.prepare(*args, **static)


def _lstsq_call(Y, tau, extra, weights) -> tuple[tuple, dict]:
    """The arguments of ``_lstsq_batch`` for ``least_squares_torques`` (checked, samples
    padded): ``(dynamic, static)``."""
    Y, E, tau, w, batch, dtype, (N, nv, nb, ne) = check_torque_data(Y, tau, extra, weights)
    w = to_device(np.ones((N, nv), dtype)) if w is None else broadcast_rows(w, N, nv)
    args = pad_samples((Y, E, tau, w), (-3, -3, -2, -2))
    axes = tuple(a.ndim > c for a, c in zip(args, _CORES, strict=False))
    return args, dict(batch=batch, axes=axes)


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
    x = _over_batch(one, flat, in_axes, nbatch).reshape(tuple(batch) + (p,))
    nb10 = Y.shape[-1]
    return x[..., :nb10], x[..., nb10:]  # in the program: no slice compiled outside it


_lstsq_batch = cpu_program(
    _lstsq_impl, static_argnames=("batch", "axes"), compiler_options=SOLVER_OPTIONS
)


# ------------------------------------------------------------------ public API


def _fit_torques(Y, tau, **kwargs) -> RobotFitResult:
    """``fit_torques``: ``_fit_call``'s checked arguments, run by the compiled program."""
    args, static = _fit_call(Y, tau, **kwargs)
    return _fit_batch(*args, **static)


def prepare_fit_torques(Y, tau, **kwargs) -> None:
    """Start compiling the program of ``fit_torques(Y, tau, **kwargs)`` in a background thread
    (``cpu_program.prepare``): a later call with arrays of the same shapes and types, and the
    same options, runs it without compiling. The values do not matter (weights of ones do)."""
    args, static = _fit_call(Y, tau, **kwargs)
    _fit_batch.prepare(*args, **static)


def _fit_call(
    Y,
    tau,
    *,
    prior: RigidBodyInertia,
    solver: InteriorPoint | None = None,
    extra=None,
    extra_nonnegative=None,
    weights=None,
    gamma=None,
    prior_spread: float = PRIOR_SPREAD,
    extra_prior=None,
    extra_prior_weight=None,
    multiplicity=None,
    body_names: tuple | None = None,
) -> tuple[tuple, dict]:
    """The arguments of ``_fit_batch`` for ``fit_torques`` (checked, samples padded):
    ``(dynamic, static)``; ``body_names`` name the prior's bodies in errors."""
    solver = solvers.as_solver(solver)
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
        raise IdentifyError(
            "tau",
            f"{N * nv} torque samples (N={N} samples × nv={nv} joints) but the problem has "
            f"p={p} parameters (10 per body × {nb} bodies + {ne} extra columns): at least "
            f"{p + 1} are needed to estimate the noise level (the default weights); record a "
            "longer log, or pass weights",
        )
    if gamma is not None:
        gamma, batch = check_gamma(gamma, Y, batch, "Y and tau")
    prior_spread = check_prior_spread(prior_spread)
    given = to_device(np.asarray([weights is not None, gamma is not None]))
    w_arr = to_device(np.ones((N, nv), dtype)) if w is None else broadcast_rows(w, N, nv)
    g_arr = to_device(np.zeros((), dtype)) if gamma is None else gamma
    Y, E, tau, w_arr = pad_samples((Y, E, tau, w_arr), (-3, -3, -2, -2))
    args = (Y, E, tau, w_arr, to_device(pi0, dtype), g_arr)
    axes = tuple(a.ndim > c for a, c in zip(args, _CORES, strict=True))
    dynamic = (
        *args,
        given,
        to_device(nonneg),
        to_device(phi0, dtype),
        to_device(wphi, dtype),
        to_device(np.asarray(N * nv, dtype)),
    )
    static = dict(
        batch=tuple(batch),
        rtol=solver.rtol_for(dtype),
        max_iters=int(solver.max_iters),
        prior_spread=prior_spread,
        axes=axes,
        sample_weights=w is not None,
    )
    return dynamic, static


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

    with ``J_i`` the 4×4 pseudo-inertia of body ``i``, ``k`` the samples, ``j`` the joints and
    ``E`` the ``extra`` columns (plus ``Σ_j w_j (φ_j − φ0_j)²`` with ``extra_prior_weight``).
    Every returned body has ``J ≻ 0``, whatever the data. Default weights ``1/σ̂_j²`` (least-squares
    residuals per joint) and ``γ = 2 / prior_spread²``; the rules, the solver and its convergence
    test: docs page ``identification-methods.md#fit-torques-defaults``.

    Args:
      Y: ``(..., N, nv, 10 nb)`` joint-torque regressor
        ([`joint_torque_regressor`][spatialjax.multibody.joint_torque_regressor]).
      tau: ``(..., N, nv)`` measured joint torques.
      prior: ``RigidBodyInertia`` of batch ``(..., nb)``: the prior bodies ``J0_i`` (each fully
        consistent, ``J0 ≻ 0``).
      extra: optional ``(..., N, nv, ne)`` extra regressor columns
        ([`JointModel.regressor`][spatialjax.multibody.JointModel.regressor]).
      extra_nonnegative: optional ``(ne,)`` booleans: the extra coefficients constrained ``≥ 0``
        (armature, viscous and Coulomb friction). Default: none.
      weights: optional ``w ≥ 0`` broadcastable to ``(..., N, nv)``, inverse noise variances
        ``1/σ²``. Default: ``1/σ̂_j²`` per joint.
      gamma: ``γ ≥ 0``, scalar or ``(...)``. Default ``2 / prior_spread²``. ``γ = 0`` is the
        consistent least-squares fit, ``UNDETERMINED`` where the regressor is rank-deficient.
      prior_spread: ``s > 0`` of the default ``γ`` rule.
      solver: [InteriorPoint][spatialjax.identification.InteriorPoint] (default
        ``InteriorPoint()``).
      extra_prior: optional ``(ne,)`` prior values ``φ0`` of the extra coefficients (default 0).
      extra_prior_weight: optional ``(ne,)`` weights ``w_j ≥ 0`` of the Gaussian prior
        ``Σ_j w_j (φ_j − φ0_j)²`` on the extra coefficients, in the data term's units
        (``1/σ_j²`` for ``φ_j ~ N(φ0_j, σ_j²)``); default none
        ([joint_prior][spatialjax.identification.joint_prior] gives the armature's).
      multiplicity: optional factors ``m ≥ 0`` broadcastable to ``(..., N, nv)``: the number of
        independent equations each row stands for (the ``multiplicity`` of
        [FloatingBaseRows][spatialjax.identification.FloatingBaseRows]); they multiply the
        weights, 0 drops a row. Default: 1.

    Returns:
      [`RobotFitResult`][spatialjax.identification.RobotFitResult] of batch shape ``(...)``,
      differentiable with respect to ``Y``, ``tau``, ``extra``, ``weights``, ``prior`` and
      ``gamma`` (implicit function theorem; the default weights are constants).

    Raises:
      ValueError: shapes that do not fit together; (eagerly) NaN/inf in ``tau``/``Y``/``extra``
        naming the sample and joint; a prior body that is not fully consistent; negative
        weights or ``γ``; with default weights, ``N · nv ≤ p`` torque samples.
      TypeError: non-float inputs, mixed float32/float64, a ``prior`` that is not a
        ``RigidBodyInertia``, a ``solver`` that is not an ``InteriorPoint``.

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, IEEE T-RO 36(2), 2020.
    """
    solver = solvers.as_solver(solver)
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
    """Identify every body of ``model`` (and its joint model) from a torque log.

    Builds ``Y = joint_torque_regressor(model, q, v, a, gravity)`` and the columns of
    ``joint_model`` ([JointModel][spatialjax.multibody.JointModel]: per one-DoF joint
    ``τ_J = I_a a + F_v v + F_c sign(v) + o``; the model's own ``armature`` is not used), then
    calls [`fit_torques`][spatialjax.identification.fit_torques] with the model's inertias as the
    default prior.

    Args:
      model: [`Model`][spatialjax.multibody.Model] (joints locked in it stay locked).
      q: ``(..., N, nq)`` positions; ``v``, ``a``, ``tau``: ``(..., N, nv)`` velocities,
        accelerations and measured torques (model conventions).
      joint_model: a [`JointModel`][spatialjax.multibody.JointModel], its kinds (any subset of
        ``("armature", "viscous", "coulomb", "offset")``) or a comma-separated text
        (``"none"``); ``()`` fits no joint model.
      weights, gamma, prior_spread, solver: as in
        [`fit_torques`][spatialjax.identification.fit_torques].
      prior: ``RigidBodyInertia`` of batch ``(..., nb)``; default ``model.inertia`` (each body
        fully consistent: a massless URDF link raises, naming it).
      gravity: gravitational acceleration in the world frame (m/s²).

    Returns:
      [`RobotFitResult`][spatialjax.identification.RobotFitResult] with ``joint_parameters``
      ``(..., n1, 4)`` ``[armature, viscous, coulomb, offset]`` per one-DoF joint in body order
      (NaN for kinds not fitted).

    Raises:
      ValueError: a ``joint_model`` that is not one (naming it), and as ``fit_torques``.
      TypeError: ``model`` not a Model, and as ``fit_torques``.
    """
    from ...multibody import JOINT_KINDS, Model, joint_torque_regressor

    if not isinstance(model, Model):
        raise IdentifyTypeError(
            "model", f"expected a spatialjax.multibody.Model, got {type(model).__name__}"
        )
    solver = solvers.as_solver(solver)
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
