"""``fit``: physically consistent inertial parameters from wrenches, batched over bodies.

The interior-point Newton method of ``fit_torques`` (``interior_point``) on each body's 10
parameters, as one compiled program. Derivation: docs page
``identification-methods.md#interior-point``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import _params
from ..._checks import (
    as_float_array,
    broadcast_batch,
    first_bad,
    is_concrete,
    require_finite,
    same_dtype,
    to_device,
)
from ..._inertia import RigidBodyInertia
from ..._projection import nearest_consistent
from ..errors import IdentifyError, IdentifyTypeError
from . import interior_point, solvers
from .body_result import FitResult
from .implicit import with_derivative
from .inputs import check_gamma, check_weights, require_consistent_prior
from .objective import (
    Problem,
    hessian_pi,
    logdet_pi,
    neg_logdet_hessian,
    prior_terms,
    reduce_data,
)
from .program import SOLVER_OPTIONS, cpu_program
from .solvers import InteriorPoint
from .status import FitStatus, status_code

GAMMA_REL = 1e-4  # default γ, relative to the data's mean curvature in the prior's metric
INFLATE_REL = 1e-2  # default prior / start: S_c inflated by 1% of its mean principal value
# m = 1, h = 0, I = 1 (J = diag(½, ½, ½, 1)): the stand-in problem of skipped bodies
_UNIT_BODY = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])


# ------------------------------------------------------------------ one body
def _inflate(pi, rel=INFLATE_REL):
    """Same mass and CoM, ``S_c + rel · tr(S_c)/3 · 1``: a strictly interior body."""
    m = pi[0]
    trS = 0.5 * (pi[4] + pi[6] + pi[9])
    trSc = trS - jnp.sum(pi[1:4] ** 2) / m
    delta = rel * trSc / 3.0  # S += δ1  ⇔  I += 2δ 1
    return pi.at[jnp.array([4, 6, 9])].add(2.0 * delta)


def _default_gamma(A, pi_prior):
    """``γ = GAMMA_REL · tr(H0⁻¹ 2A) / 10``, ``H0 = ∇²(−log det J)`` at the prior."""
    H0 = neg_logdet_hessian(_params.pseudo_inertia(pi_prior))
    ratio = jnp.trace(jnp.linalg.solve(H0, 2.0 * A)) / 10.0
    return GAMMA_REL * jnp.where(jnp.isfinite(ratio) & (ratio > 0), ratio, 1.0)


def _valid_inputs(Y, f, w, prior_pi, gamma, given):
    """Value checks under jit; bad bodies swapped for a trivial problem (NaN result)."""
    unit = jnp.asarray(_UNIT_BODY, Y.dtype)
    has_prior, has_gamma = given[0], given[1]
    Y_finite = jnp.all(jnp.isfinite(Y))
    w_finite = jnp.all(jnp.isfinite(w))
    w_negative = jnp.any(w < 0)
    finite_in = Y_finite & jnp.all(jnp.isfinite(f)) & w_finite
    finite_in = finite_in & (~has_prior | jnp.all(jnp.isfinite(prior_pi)))
    finite_in = finite_in & (~has_gamma | jnp.isfinite(gamma))
    invalid = w_negative | (has_gamma & (gamma < 0))
    invalid = invalid | (has_prior & ~logdet_pi(jnp.where(finite_in, prior_pi, unit))[1])
    bad = ~finite_in | invalid
    Y = jnp.where(Y_finite, Y, jnp.zeros_like(Y))
    w = jnp.where(w_finite & ~w_negative, w, jnp.ones_like(w))
    f = jnp.where(bad, jnp.zeros_like(f), f)
    prior_pi = jnp.where(bad | ~has_prior, unit, prior_pi)
    gamma = jnp.where(bad | ~has_gamma, jnp.ones_like(gamma), gamma)
    return Y, f, w, prior_pi, gamma, finite_in, invalid


def _ls_step(A_pinv, A, pi, b):
    """``−(RᵀR)⁺ (A π − b)``, the least-squares step at ``π``: zero at the solution, whose
    derivative it carries (``with_derivative``)."""
    return -A_pinv @ (A @ pi - b)


def _newton_step(pi, P, A, b, gamma, k):
    """``−H⁻¹ ∇F(π)`` with ``H`` held constant (plus ``eps tr H`` on its diagonal): zero at
    the optimum, whose implicit-function-theorem derivative it carries."""
    eps = jnp.finfo(pi.dtype).eps
    H = jax.lax.stop_gradient(hessian_pi(pi, P))
    H = H + (eps * jnp.trace(H)) * jnp.eye(10, dtype=pi.dtype)
    grad = 2.0 * (A @ pi - b) + gamma * (k - jax.grad(lambda p: logdet_pi(p)[0])(pi))
    return -jnp.linalg.solve(H, grad)


def _fit_body(Y, f, w, prior_pi, gamma, given, *, rtol: float, max_iters: int):
    """One body; ``given = [prior given, γ given]``; derivatives by implicit differentiation."""
    sg = jax.lax.stop_gradient
    dtype = Y.dtype
    eps = jnp.finfo(dtype).eps
    unit = jnp.asarray(_UNIT_BODY, dtype)

    has_prior, has_gamma = given[0], given[1]
    Y, f, w, prior_pi, gamma, finite_in, invalid = _valid_inputs(Y, f, w, prior_pi, gamma, given)
    bad = ~finite_in | invalid

    # normal equations (differentiable) and the QR-reduced data term (for the loop)
    A = jnp.einsum("nij,ni,nik->jk", Y, w, Y)
    b = jnp.einsum("nij,ni,ni->j", Y, w, f)
    R, z, rho2 = reduce_data(sg(Y), sg(f), sg(w))

    # unconstrained (minimum-norm) least squares and the excitation's numerical rank
    U, s, Vt = jnp.linalg.svd(R)
    keep = s > s[0] * eps * max(Y.shape[0] * 6, 10)
    full_rank = jnp.all(keep)
    s_inv = jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0), 0.0)
    pi_ls = Vt.T @ (s_inv * (U.T @ z))
    A_pinv = (Vt.T * s_inv**2) @ Vt  # (RᵀR)⁺
    pi_ls = with_derivative(pi_ls, _ls_step, A_pinv, A, pi_ls, b)
    cond = jnp.where(full_rank, s[0] / jnp.where(full_rank, s[-1], 1.0), jnp.inf)
    # no information at all (zero regressor or zero weights) and no prior: nothing can
    # define the body; solved as a trivial problem and returned as NaN (UNDETERMINED)
    blank = ~keep[0] & ~has_prior & ~bad
    skip = bad | blank
    # projected least squares: unchanged where already consistent (J ≻ 0), else the
    # nearest consistent body made strictly interior (_inflate)
    ls_ok = logdet_pi(sg(pi_ls))[1]
    pi_proj = jnp.where(ls_ok, pi_ls, _inflate(nearest_consistent(RigidBodyInertia(pi_ls)).params))
    pi_proj = jnp.where(skip, unit, pi_proj)

    pi_prior = jnp.where(has_prior, prior_pi, pi_proj)
    k, logdet0 = prior_terms(_params.pseudo_inertia(pi_prior))
    gamma = jnp.where(has_gamma, gamma, _default_gamma(A, pi_prior))
    # the loop minimises F minus the residual no π can explain: ρ² and the part of z outside
    # the excited range of R (all of z for a zero regressor, where the QR's Q is arbitrary).
    # That constant does not move the optimum, but inside |F| it would loosen every relative
    # stopping test by its ratio to the rest: with a zero regressor and non-zero wrenches
    # the loop would stop far from the prior, the only information there is
    z = U @ jnp.where(keep, U.T @ z, 0.0)
    P = Problem(R, z, jnp.zeros_like(rho2), sg(k), sg(logdet0), sg(gamma))

    # absolute floor of the convergence tests: a few ulps of the terms summed in F − ρ²,
    # the projected data's energy ‖z‖² and γ (kᵀπ = 4 at J0, log det J0): reachable even
    # when F* − ρ² = 0 (noiseless data and a prior equal to the truth; no data and γ > 0);
    # infinite for skipped bodies, so that the loop stops at its first test
    scale = z @ z + P.gamma * (4.0 + jnp.abs(P.logdet0))
    atol = jnp.where(skip, jnp.inf, 16 * eps * scale)
    # the interior point of fit_torques on this one body (nb = 1, no extra coefficients),
    # from the prior; the data term ‖Rπ − z‖² = ‖R(π − π_ls)‖² (z lies in R's range)
    out = interior_point.solve_body(
        P.R, sg(pi_ls), P.k, P.logdet0, P.gamma, sg(pi_prior), rtol, atol, max_iters
    )
    pi, iters, converged = out.x, out.it, out.converged

    # implicit function theorem at the optimum: ∇F(π*; inputs) = 0, so
    # dπ* = −H⁻¹ d(∇F); the value stays exactly π*
    pi = sg(pi)
    finite_out = jnp.all(jnp.isfinite(pi))
    pi = with_derivative(pi, _newton_step, pi, P, A, b, gamma, k)

    # status, highest priority first (FitStatus); converged only where CONVERGED
    undetermined = ((P.gamma <= 0) & ~full_rank) | blank
    status = status_code(
        nonfinite_input=~finite_in,
        invalid_input=invalid,
        undetermined=undetermined,
        numerical_failure=~finite_out,
        not_converged=~converged,
    )
    return _result(Y, f, w, pi, pi_prior, k, logdet0, gamma, iters, status, skip,
                   jnp.where(bad, jnp.nan, cond))  # fmt: skip


def _result(Y, f, w, pi, pi_prior, k, logdet0, gamma, iters, status, skip, cond) -> FitResult:
    """The ``FitResult`` of one body at ``pi``; NaN where its inputs were swapped out."""
    dtype = Y.dtype
    r = jnp.einsum("nij,j->ni", Y, pi) - f
    residual = jnp.sum(w * r * r)
    reg = k @ pi - logdet_pi(pi)[0] + logdet0 - 4.0
    objective = residual + jnp.where(gamma > 0, gamma * reg, 0.0)
    nan = jnp.asarray(jnp.nan, dtype)

    def out_(x):
        return jnp.where(skip, nan, x)

    inertia = RigidBodyInertia(out_(pi))
    return FitResult(
        inertia=inertia,
        objective=out_(objective),
        residual=out_(residual),
        iterations=iters.astype(jnp.int32),
        converged=status == FitStatus.CONVERGED,
        condition_number=cond,
        prior=RigidBodyInertia(out_(pi_prior)),
        gamma=out_(jnp.asarray(gamma, dtype)),
        status=status,
    )


def _fit_batch(Y, f, w, prior_pi, gamma, given, *, batch, rtol, max_iters):
    """Flatten ``batch``, ``vmap`` one body (unbatched ``Y``, ``w`` shared), restore the shape."""
    nb = int(np.prod(batch, dtype=np.int64))
    n = Y.shape[-3]

    def flat(x, core):
        return jnp.broadcast_to(x, tuple(batch) + core).reshape((nb,) + core)

    def maybe_shared(x, core):
        return (x, None) if x.ndim == len(core) else (flat(x, core), 0)

    (Y, ay), (w, aw) = maybe_shared(Y, (n, 6, 10)), maybe_shared(w, (n, 6))
    args = (Y, flat(f, (n, 6)), w, flat(prior_pi, (10,)), flat(gamma, ()))
    one = functools.partial(_fit_body, rtol=rtol, max_iters=max_iters)
    out = jax.vmap(one, in_axes=(ay, 0, aw, 0, 0, None))(*args, given)
    return jax.tree.map(lambda x: x.reshape(tuple(batch) + x.shape[1:]), out)


_fit_program = cpu_program(
    _fit_batch, static_argnames=("batch", "rtol", "max_iters"), compiler_options=SOLVER_OPTIONS
)


# ------------------------------------------------------------------ public API
def _require_excitation(Y, w, batch) -> None:
    """Eager check without a prior: every body's regressor rows carry some information."""
    if not is_concrete(Y) or (w is not None and not is_concrete(w)):
        return
    energy = np.einsum("...ij,...ij->...i", np.asarray(Y), np.asarray(Y))  # (..., N, 6)
    if w is not None:
        energy = energy * (np.asarray(w) > 0)
    info = np.broadcast_to(np.sum(energy, axis=(-2, -1)), tuple(batch))
    if np.any(info == 0):
        where = f" for body {first_bad(info == 0)}" if info.ndim else ""
        rows = "zero or weighted 0" if w is not None else "zero"
        raise IdentifyError(
            "Y",
            f"no excitation{where}: every regressor row is {rows}, and without a prior "
            "nothing determines the body (the fit would be NaN, UNDETERMINED); pass prior=... "
            "or data that move the body",
        )


def fit(
    Y,
    f,
    *,
    weights=None,
    prior: RigidBodyInertia | None = None,
    gamma=None,
    solver: InteriorPoint | None = None,
) -> FitResult:
    r"""Fit physically consistent inertial parameters to measured wrenches.

    Solves, independently for every body of the batch,

    $$
    \min_{π:\ J(π) \succ 0}\ F(π) = \sum_{k,j} w_{kj} (Y_k π − f_k)_j^2
       + γ \bigl(\mathrm{tr}(J_0^{-1} J) − \log\det J + \log\det J_0 − 4\bigr)
    $$

    (weighted least squares plus the log-det Bregman divergence to a prior pseudo-inertia
    ``J0``; Lee, Wensing & Park 2020). The problem is convex in ``π``; the result always has
    ``J(π) ≻ 0``, fully physically consistent (Wensing, Kim & Slotine 2017). All bodies run in one
    compiled program; ``fit`` also works under ``jax.vmap`` and ``jax.jit``. Solver: docs page
    ``identification-methods.md#interior-point``.

    Args:
      Y: ``(..., N, 6, 10)`` body regressors
        ([`body_regressor`][spatialjax.identification.body_regressor]), rows ``[n; f]``. A ``Y``
        without batch axes (one motion for every body), with weights also without, is factorised
        once for all bodies: pass it unbroadcast.
      f: ``(..., N, 6)`` measured body wrenches ``[n; f]``.
      weights: noise weights ``w ≥ 0`` broadcastable to ``f`` (``()``, ``(6,)``, ``(N, 1)``,
        ``(N, 6)``, ``(..., N, 6)``); ``w = 1/σ²`` for Gaussian noise. Default: all ones.
      prior: ``RigidBodyInertia`` (batch broadcastable to the bodies) giving ``J0``, fully
        consistent. Default: the weighted least-squares solution if it is consistent, else its
        ``nearest_consistent`` projection with ``S_c`` inflated by 1 % of its mean principal value.
      gamma: ``γ ≥ 0``, scalar or ``(...)``. Default: ``1e-4 · tr(H0⁻¹ 2YᵀWY)/10``, the mean
        generalised eigenvalue of the data term's Hessian against the regulariser's at ``J0``.
        ``γ = 0`` is the consistent weighted least-squares fit; it needs an excitation of full
        rank 10, else the status is ``UNDETERMINED``.
      solver: [`InteriorPoint`][spatialjax.identification.InteriorPoint] (default
        ``InteriorPoint()``).

    Returns:
      [`FitResult`][spatialjax.identification.FitResult] with batch shape ``(...)``; ``status``
      ([`FitStatus`][spatialjax.identification.FitStatus]) per body, ``inertia`` NaN only for an
      input error or ``UNDETERMINED`` without excitation. ``inertia`` is differentiable with
      respect to ``Y``, ``f``, ``weights``, ``prior`` and ``gamma`` by the implicit function
      theorem at the optimum (the default prior and ``γ`` included).

    Raises:
      ValueError: shapes of ``Y``, ``f``, ``weights``, ``prior`` or ``gamma`` that do not fit
        together; (eagerly, on concrete values) NaN or ``inf``, negative weights or ``γ``, a prior
        that is not fully consistent, or, without a prior, a body with no excitation. Under
        ``jit``/``vmap`` these are reported in ``status`` instead.
      TypeError: non-float inputs, mixed float32/float64, a ``prior`` that is not a
        ``RigidBodyInertia``, a ``solver`` that is not an ``InteriorPoint``.

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, IEEE T-RO 36(2), 2020.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.identification import FitStatus, body_regressor, fit
      >>> t = jnp.linspace(0.0, 6.0, 24)[:, None] * (1.0 + 0.37 * jnp.arange(6.0))
      >>> Y = body_regressor(jnp.sin(t), (1.0 + 0.37 * jnp.arange(6.0)) * jnp.cos(t))  # (24, 6, 10)
      >>> body = jnp.array([2.0, 0.2, 0.0, 0.0, 0.1, 0.0, 0.2, 0.0, 0.0, 0.2])
      >>> truth = body * jnp.array([[1.0], [1.5], [3.0]])  # three bodies, (3, 10)
      >>> res = fit(Y, jnp.einsum("nij,bj->bni", Y, truth))
      >>> res.consistency.fully_consistent.tolist(), res.inertia.mass.round(4).tolist()
      ([True, True, True], [2.0, 3.0, 6.0])
      >>> FitStatus.describe(res.status[0])
      'converged: certified to rtol, J ≻ 0'
    """
    solver = solvers.as_solver(solver)
    # ---- shapes and dtypes
    Y = as_float_array(Y, "Y", (6, 10))
    f = as_float_array(f, "f", (6,))
    if Y.ndim < 3:
        raise IdentifyError(
            "Y", f"expected shape (..., N, 6, 10) with a sample axis N, got shape {tuple(Y.shape)}"
        )
    if f.ndim < 2:
        raise IdentifyError(
            "f", f"expected shape (..., N, 6) with a sample axis N, got shape {tuple(f.shape)}"
        )
    same_dtype(Y=Y, f=f)
    dtype = Y.dtype
    n = Y.shape[-3]
    if f.shape[-2] != n:
        raise IdentifyError(
            "f",
            f"Y has N={n} samples (shape {tuple(Y.shape)}) but f has N={f.shape[-2]} "
            f"(shape {tuple(f.shape)})",
        )
    batch = broadcast_batch("Y", Y.shape[:-3], "f", f.shape[:-2])
    require_finite(Y, "Y")
    require_finite(f, "f")
    w = None
    if weights is not None:
        w = check_weights(weights, n, 6, dtype, data="f")
        ws = tuple(w.shape)
        batch = broadcast_batch("Y and f", batch, "weights", ws[:-2])
    prior_pi = None
    if prior is not None:
        if not isinstance(prior, RigidBodyInertia):
            raise IdentifyTypeError(
                "prior", f"expected a RigidBodyInertia or None, got {type(prior).__name__}"
            )
        prior_pi = prior.params
        same_dtype(Y=Y, prior=prior_pi)
        batch = broadcast_batch("Y and f", batch, "prior", prior_pi.shape[:-1])
        require_finite(prior_pi, "prior")
        require_consistent_prior(prior_pi, body_axis=False)
    if gamma is not None:
        gamma, batch = check_gamma(gamma, Y, batch, "Y and f")
    if prior is None:
        _require_excitation(Y, w, batch)
    # one input structure whatever the caller's broadcasting (weights given or not, shared
    # weights of any broadcastable shape, γ scalar or batched...), so that calls differing
    # only in that share one compiled program; per-body Y or weights are a second structure
    # (astype also drops weak types, which would key a separate compiled program)
    batch = tuple(batch)
    shape_f = batch + (n, 6)
    # Y and weights without batch axes (or with only length-1 ones) are passed once,
    # shared by every body (_fit_batch); otherwise broadcast to the batch
    Y = Y.astype(dtype)
    if np.prod(Y.shape[:-3], dtype=np.int64) == 1:
        Y = Y.reshape(Y.shape[-3:])
    f = jnp.broadcast_to(f.astype(dtype), shape_f)
    if w is None:
        w = jnp.ones((n, 6), dtype)
    elif np.prod(ws[:-2], dtype=np.int64) == 1:
        w = jnp.broadcast_to(w.reshape(ws[-2:]), (n, 6))
    else:
        w = jnp.broadcast_to(w, shape_f)
    # prior and γ: placeholders and a flag where not given (defaults computed inside)
    given = to_device(np.asarray([prior_pi is not None, gamma is not None]))
    prior_pi = jnp.asarray(_UNIT_BODY, dtype) if prior_pi is None else prior_pi
    prior_pi = jnp.broadcast_to(prior_pi.astype(dtype), batch + (10,))
    gamma = jnp.broadcast_to(jnp.zeros((), dtype) if gamma is None else gamma, batch)
    args = (Y, f, w, prior_pi, gamma, given)
    return _fit_program(
        *args, batch=batch, rtol=solver.rtol_for(dtype), max_iters=int(solver.max_iters)
    )
