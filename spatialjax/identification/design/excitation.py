"""Optimal excitation trajectories by gradient: ``design_excitation``.

Finite Fourier series per joint (Swevers et al. 1997) that start and end at rest,
keep the joint limits, and minimise a criterion of the base columns of the
stacked regressor ``[Y | Y_f]``. Joint order: the model's; units rad, rad/s, s, Hz.
Derivation: docs page ``identification-methods.md#excitation-design``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from ... import multibody as mb
from ..._smallmat import matmul
from ..errors import IdentifyError, IdentifyTypeError
from ..fitting import reduction
from .trajectory import fourier_trajectory

if TYPE_CHECKING:
    import optax

__all__ = ["ExcitationDesign", "design_excitation"]

CRITERIA = ("condition_snr", "condition", "logdet", "aoptimal")
_COND_POWER = 16.0  # p of the condition-number surrogate (methods page)
_REST = 1e-12  # |q̇| below this fraction of the joint's peak speed is rest (Coulomb sign 0)
_LSE_SHARPNESS = 50.0  # κ of the relative log-sum-exp maximum: excess ≤ rms · log(N) / κ
_FRICTION = mb.JointModel(("viscous", "coulomb", "offset"))  # the columns designed for


# ----------------------------------------------------------------------------- model data
def _friction_regressor_at_rest(model, dq):
    """Friction columns ``(..., N, nv, 3 nv)`` of ``dq``; below ``_REST`` of the peak: rest."""
    tol = _REST * jnp.max(jnp.abs(dq), axis=-2, keepdims=True)
    return _friction_columns(model, jnp.where(jnp.abs(dq) <= tol, 0.0, dq))


def _friction_columns(model, dq):
    """Viscous, Coulomb and offset columns ``(..., N, nv, 3 nv)`` of ``dq``."""
    return _FRICTION.regressor(model, dq, jnp.zeros_like(dq))


def _at_rest(dq):
    """NumPy ``dq (..., N, nv)`` with the speeds taken as rest set to 0."""
    dq = np.asarray(dq)
    tol = _REST * np.max(np.abs(dq), axis=-2, keepdims=True)
    return np.where(np.abs(dq) <= tol, 0.0, dq).astype(dq.dtype)


_ROWS = 1024  # samples per call of the compiled forward pass (one shape for every use)


@jax.jit
def _forward_rows(model, q, dq, ddq, gravity):
    """``[Y | Y_f]`` ``(C, n, p)`` and the torques ``Y π + armature ⊙ q̈`` ``(C, n)``."""
    Y = mb.joint_torque_regressor(model, q, dq, ddq, gravity)
    F = _friction_columns(model, dq)
    tau = matmul(Y, model.inertia.params.reshape(-1)) + model.armature * ddq
    return jnp.concatenate([Y, F], axis=-1), tau


def _evaluate(model, q, dq, ddq, gravity):
    """``(first sample, X, τ)`` (float64 NumPy) of samples ``(N, n)``, by padded blocks."""
    d = model.dtype
    N = q.shape[0]
    for at in range(0, N, _ROWS):
        m = min(_ROWS, N - at)
        rows = np.minimum(np.arange(at, at + _ROWS), N - 1)  # the last sample repeated
        X, tau = _forward_rows(model, *(jnp.asarray(x[rows], d) for x in (q, dq, ddq)), gravity)
        yield at, np.asarray(X, np.float64)[:m], np.asarray(tau, np.float64)[:m]


def _resolve_limits(model, limits, acceleration_limit, torque_limit):
    """Per-joint float64 limits ``(lower, upper, velocity, acceleration, effort, torque)``."""
    n = model.nv
    if limits is None:  # the model file's <limit> (Model.lower, upper, velocity_limit, ...)
        keys = ("lower", "upper", "velocity_limit", "effort_limit")
        limits = {k: np.asarray(getattr(model, k), np.float64) for k in keys}
        if not (np.isfinite(limits["lower"]).any() or np.isfinite(limits["velocity_limit"]).any()):
            raise IdentifyError(
                "limits",
                "the model has no joint limits; pass limits= (a mapping with lower, "
                "upper, velocity_limit and optionally effort_limit per joint)",
            )
    elif not isinstance(limits, Mapping):
        raise IdentifyTypeError(
            "limits", f"expected None or a mapping, got {type(limits).__name__}"
        )
    unknown = set(limits) - {"lower", "upper", "velocity_limit", "effort_limit"}
    if unknown:
        raise IdentifyError("limits", f"unknown key {sorted(unknown)[0]!r} (expected lower, upper, "
                         "velocity_limit, effort_limit)")  # fmt: skip

    def vec(x, name, default):
        if x is None:
            return np.full(n, default)
        arr = np.asarray(x, np.float64)
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise IdentifyError(name, f"expected shape ({n},) (one per joint), got {arr.shape}")
        if np.any(np.isnan(arr)):
            raise IdentifyError(name, f"expected numbers, got NaN in {arr.tolist()}")
        return arr

    lo = vec(limits.get("lower"), "limits['lower']", -np.inf)
    hi = vec(limits.get("upper"), "limits['upper']", np.inf)
    vel = vec(limits.get("velocity_limit"), "limits['velocity_limit']", np.inf)
    eff = vec(limits.get("effort_limit"), "limits['effort_limit']", np.inf)
    acc = vec(acceleration_limit, "acceleration_limit", np.inf)
    names = model.joint_names
    for i, ty in enumerate(model.joint_types):
        if ty == "free_flyer":
            raise IdentifyError("model", "a floating base cannot follow a joint trajectory")
        if ty != "continuous" and not (np.isfinite(lo[i]) and np.isfinite(hi[i])):
            raise IdentifyError(
                "limits",
                f"joint {names[i]!r} ({ty}) has no finite position limits "
                f"(lower {lo[i]}, upper {hi[i]})",
            )
        if np.isfinite(lo[i]) and not hi[i] > lo[i]:
            raise IdentifyError("limits", f"joint {names[i]!r} has lower {lo[i]} >= upper {hi[i]}")
        if not (np.isfinite(vel[i]) and vel[i] > 0):
            raise IdentifyError(
                "limits",
                f"joint {names[i]!r} has no positive finite velocity limit "
                f"(got {vel[i]}); give limits={{'velocity_limit': ...}}",
            )
        if not acc[i] > 0:
            raise IdentifyError("acceleration_limit", f"expected > 0, got {acc[i]} ({names[i]!r})")
    if torque_limit is None:
        tau = None
    elif isinstance(torque_limit, str):
        if torque_limit != "effort":
            raise IdentifyError(
                "torque_limit", f"expected None, 'effort' or numbers, got {torque_limit!r}"
            )
        if not np.all(np.isfinite(eff) & (eff > 0)):
            raise ValueError(f"torque_limit='effort': the limits' effort_limit is {eff.tolist()}")
        tau = eff
    else:
        tau = vec(torque_limit, "torque_limit", np.inf)
        if not np.all(tau > 0):
            raise IdentifyError("torque_limit", f"expected positive limits, got {tau.tolist()}")
    return lo, hi, vel, acc, eff, tau


def _grid(duration, base_frequency, grid_rate):
    """The criterion's sample times: one period if the duration is a whole number of them."""
    periods = duration * base_frequency
    if round(periods) >= 1 and abs(periods - round(periods)) <= 1e-9 * periods:
        n = int(math.ceil(grid_rate / base_frequency - 1e-9))
        return np.arange(n) / (n * base_frequency)
    return np.linspace(0.0, duration, int(math.ceil(duration * grid_rate)) + 1)


def _rest_basis(H, omega, duration):
    """Orthonormal ``(2H, r)`` basis of ``[a; b]`` with ``q̇ = q̈ = 0`` at ``t = 0`` and ``T``."""
    lw = omega * np.arange(1, H + 1)
    c, s = np.cos(lw * duration), np.sin(lw * duration)
    C = np.stack([
        np.concatenate([np.ones(H), np.zeros(H)]),  # q̇(0) = Σ a
        np.concatenate([np.zeros(H), lw]),  # q̈(0) = Σ ωl b
        np.concatenate([c, s]),  # q̇(T)
        np.concatenate([-lw * s, lw * c]),  # q̈(T)
    ])  # fmt: skip
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    _, sv, Vt = np.linalg.svd(C)
    rank = int(np.sum(sv > 1e-9 * sv[0]))
    return Vt[rank:].T


# ------------------------------------------------------------------------ the trajectory
def _smax(x, axis):
    """Smooth upper bound of ``max(x)`` on ``axis``: ``(r/κ) log Σ exp(κ x / r)``, r the RMS."""
    r = jnp.sqrt(jnp.mean(x * x, axis=axis, keepdims=True) + jnp.finfo(x.dtype).tiny)
    k = _LSE_SHARPNESS
    return jnp.squeeze(r / k * jax.nn.logsumexp(k * x / r, axis=axis, keepdims=True), axis)


def _stacked(model, q, dq, ddq, gravity):
    """``X = [Y | Y_f]`` ``(S, N n, p)`` of samples ``(S, N, n)`` (rows per start), and ``Y``."""
    Y = jax.vmap(lambda q, dq, ddq: mb.joint_torque_regressor(model, q, dq, ddq, gravity))(
        q, dq, ddq
    )
    F = _friction_regressor_at_rest(model, dq)
    X = jnp.concatenate([Y, F], axis=-1)
    return X.reshape(X.shape[:-3] + (-1, X.shape[-1])), Y


def _criterion_value(Xb, kind, scale):
    """The criterion of base columns ``Xb (rows, p_b)``."""
    if kind in ("logdet", "aoptimal"):
        Xs = Xb / scale
        A = matmul(Xs.T, Xs) / Xb.shape[0]
        if kind == "logdet":
            return -jnp.linalg.slogdet(A)[1]
        return jnp.log(jnp.trace(jnp.linalg.inv(0.5 * (A + A.T))))
    A = matmul(Xb.T, Xb)
    d = jnp.sqrt(jnp.maximum(jnp.diagonal(A), jnp.finfo(A.dtype).tiny))
    As = A / d[:, None] / d[None, :]
    lam = jnp.linalg.eigvalsh(0.5 * (As + As.T))
    loglam = jnp.log(jnp.maximum(lam, jnp.finfo(A.dtype).tiny))
    p = _COND_POWER
    c = (jax.nn.logsumexp(p * loglam) + jax.nn.logsumexp(-p * loglam)) / (2 * p)
    if kind == "condition_snr":  # plus a smooth upper bound of -log min_i g_i, g = rms / D
        log_g = jnp.log(d / (math.sqrt(Xb.shape[0]) * scale))
        c = c + jax.nn.logsumexp(-2 * p * log_g) / (2 * p)
    return c


def _safe_ratio(limit, den):
    """``limit / den`` where ``limit`` is finite, a huge number elsewhere (NaN-free gradients)."""
    ok = jnp.isfinite(limit)
    big = jnp.asarray(jnp.finfo(den.dtype).max, den.dtype)
    return jnp.where(ok, jnp.where(ok, limit, 1.0) / den, big)


def _shape(z, u, basis, box, t, f):
    """``_shape_trajectory`` with infinite limits handled without NaN gradients."""
    centre, half, bounded, vel, acc = box
    H = basis.shape[0] // 2
    ab = matmul(z, basis.T)  # (n, 2H)
    a, b = ab[..., :H], ab[..., H:]
    q0 = centre + jnp.where(bounded, half * jnp.tanh(u), u)
    dev, dq, ddq = fourier_trajectory(a, b, jnp.zeros_like(q0), f, t)  # (N, n)
    tiny = jnp.finfo(t.dtype).tiny
    up = jnp.where(bounded, centre + half - q0, jnp.inf)
    dn = jnp.where(bounded, q0 - (centre - half), jnp.inf)
    ratios = jnp.stack([
        _safe_ratio(up, jnp.maximum(_smax(dev, 0), tiny)),
        _safe_ratio(dn, jnp.maximum(_smax(-dev, 0), tiny)),
        _safe_ratio(vel, jnp.maximum(_smax(jnp.abs(dq), 0), tiny)),
        _safe_ratio(acc, jnp.maximum(_smax(jnp.abs(ddq), 0), tiny)),
    ])  # fmt: skip
    s = jnp.min(ratios, axis=0)
    return (s[:, None] * a, s[:, None] * b, q0), (q0 + s * dev, s * dq, s * ddq)


_PENALTY = 1e3  # weight of the torque-limit penalty (mean squared relative excess)


def _losses(z, u, model, basis, box, t, f, base, scale, kind, tau_lim, gravity):
    """``(criterion + torque penalty, criterion)``, each ``(starts,)``, on the grid ``t``."""
    q, dq, ddq = jax.vmap(lambda z, u: _shape(z, u, basis, box, t, f)[1])(z, u)
    X, Y = _stacked(model, q, dq, ddq, gravity)  # (S, Ng n, p), (S, Ng, n, 10 nb)
    crit = jax.vmap(lambda X: _criterion_value(X[:, base], kind, scale))(X)
    if tau_lim is None:
        return crit, crit
    tau = matmul(Y, model.inertia.params.reshape(-1))  # = rnea(model, q, dq, ddq, gravity)
    excess = jnp.maximum(jnp.abs(tau) / tau_lim - 1.0, 0.0)
    return crit + _PENALTY * jnp.mean(excess**2, axis=(-2, -1)), crit


def _loss(z, u, model, basis, box, t, f, base, scale, kind, tau_lim, gravity):
    """``_losses`` of one start ``z (n, r)``, ``u (n,)``: two scalars."""
    loss, crit = _losses(z[None], u[None], model, basis, box, t, f, base, scale, kind, tau_lim,
                         gravity)  # fmt: skip
    return loss[0], crit[0]


_BLOCK_STEPS = 50  # the most Adam steps one call of the compiled block runs


class _Starts(NamedTuple):
    """The optimisation state of a block of starts (the leading axis of every leaf)."""

    z: jax.Array  # (B, n, r) coefficients
    u: jax.Array  # (B, n) offsets
    opt: optax.OptState  # Adam's moments and step count, per start
    best_loss: jax.Array  # (B,) the lowest loss so far (inf before the first evaluation)
    best_crit: jax.Array  # (B,) the criterion there
    best_z: jax.Array
    best_u: jax.Array


def _adam(steps, lr):
    """Adam (Kingma & Ba 2015) with a cosine-decayed step over ``steps`` steps, to 5 %."""
    import optax  # here: 40 ms that importing spatialjax.identification does not need

    return optax.adam(optax.cosine_decay_schedule(lr, max(steps, 1), alpha=0.05))


def _init_starts(z, u, steps, lr) -> _Starts:
    """The state of starts ``z (S, n, r)``, ``u (S, n)`` before their first evaluation."""
    opt = jax.vmap(_adam(steps, lr).init)((z, u))
    inf = jnp.full(u.shape[:1], jnp.inf, u.dtype)
    return _Starts(z, u, opt, inf, inf, z, u)


def _advance(state: _Starts, n, model, basis, box, t, f, base, scale, tau_lim, gravity, *,
             kind, steps, lr):  # fmt: skip
    """``n`` evaluations and Adam steps of a block of starts; each keeps its best iterate."""
    import optax

    opt = _adam(steps, lr)

    def total(z, u):
        loss, crit = _losses(z, u, model, basis, box, t, f, base, scale, kind, tau_lim, gravity)
        return jnp.sum(loss), (loss, crit)  # the starts are independent: per-start gradients

    vg = jax.value_and_grad(total, argnums=(0, 1), has_aux=True)

    def step(i, carry):
        st, crits = carry
        (_, (loss, crit)), grads = vg(st.z, st.u)
        better = loss < st.best_loss  # False where the loss is NaN

        def sel(new, old):
            return jnp.where(better.reshape(better.shape + (1,) * (new.ndim - 1)), new, old)

        updates, o = jax.vmap(opt.update)(grads, st.opt, (st.z, st.u))
        z, u = cast(tuple, optax.apply_updates((st.z, st.u), updates))
        st = _Starts(z, u, o, sel(loss, st.best_loss), sel(crit, st.best_crit),
                     sel(st.z, st.best_z), sel(st.u, st.best_u))  # fmt: skip
        return st, crits.at[i].set(crit)

    crits = jnp.full((_BLOCK_STEPS,) + state.u.shape[:1], jnp.nan, state.u.dtype)
    return jax.lax.fori_loop(0, n, step, (state, crits))


_advance_jit = jax.jit(_advance, static_argnames=("kind", "steps", "lr"))


def _rungs(starts: int, steps: int, halving: bool) -> tuple:
    """Successive halving (Jamieson & Talwalkar 2016): ``((evaluations, survivors), ...)``."""
    if not halving or starts < 4 or steps < 8:
        return ((steps + 1, starts),)
    quarter, sixteenth = -(-starts // 4), -(-starts // 16)
    return ((steps // 8 + 1, quarter), (steps // 2 + 1, sixteenth), (steps + 1, sixteenth))


class _Optimised(NamedTuple):
    """What ``_optimise`` returns: per start (leading axis), its best evaluated iterate."""

    loss: np.ndarray  # (S,) criterion + torque penalty
    crit: np.ndarray  # (S,) the criterion there
    z: np.ndarray  # (S, n, r)
    u: np.ndarray  # (S, n)
    history: np.ndarray  # (S, steps + 1) the criterion at each evaluation (NaN: dropped)
    rungs: tuple  # the rungs used
    compile_s: float


def _optimise(model, P, *, halving=True, rungs=None, block=None) -> _Optimised:
    """Adam on the starts of ``P`` by blocks, dropping the worst at each rung; an ``_Optimised``."""
    S, T = P.starts, P.steps
    rungs = _rungs(S, T, halving) if rungs is None else rungs
    B = min(S, block or rungs[-1][1])
    static = dict(kind=P.criterion, steps=T, lr=P.learning_rate)
    const = (model, P.basis, P.box, P.t_grid, P.f, P.base, P.scale, P.tau, P.g)
    state = jax.tree.map(np.array, _init_starts(P.z, P.u, T, P.learning_rate))  # writable
    take = lambda tree, i: jax.tree.map(lambda x: x[i], tree)  # noqa: E731
    t0 = time.perf_counter()
    run = _compiled((take(state, np.arange(B)), np.int32(1), *const), static)
    compile_s = time.perf_counter() - t0
    history = np.full((S, T + 1), np.nan)
    alive, done = np.arange(S), 0
    for until, keep in rungs:
        # every block's calls are dispatched before any result is read: the blocks are
        # independent, and the runtime may run them side by side
        blocks = []
        for lo in range(0, alive.size, B):
            idx = alive[lo : lo + B]
            idx_b = np.concatenate([idx, np.full(B - idx.size, idx[-1])])  # a short last block
            st, crits = take(state, idx_b), []
            for k in range(done, until, _BLOCK_STEPS):
                n = min(_BLOCK_STEPS, until - k)
                st, c = run(st, np.int32(n), *const)
                crits.append((k, n, c))
            blocks.append((idx, st, crits))
        for idx, st, crits in blocks:
            for k, n, c in crits:
                history[idx, k : k + n] = np.asarray(c, np.float64)[:n, : idx.size].T
            for leaf, new in zip(jax.tree.leaves(state), jax.tree.leaves(st), strict=True):
                leaf[idx] = np.asarray(new)[: idx.size]
        done = until
        rank = np.argsort(np.where(np.isfinite(state.best_loss[alive]), state.best_loss[alive],
                                   np.inf), kind="stable")  # fmt: skip
        alive = np.sort(alive[rank[:keep]])
    return _Optimised(state.best_loss, state.best_crit, state.best_z, state.best_u, history,
                      rungs, compile_s)  # fmt: skip


# ---------------------------------------------------------------------------------- result
@dataclasses.dataclass(frozen=True)
class ExcitationDesign:
    """What ``design_excitation`` returns: the trajectory and its report (NumPy, float64).

    Attributes:
      joint_names: the ``n`` joints, model order (the columns below).
      a: ``(n, H)`` Fourier velocity amplitudes (rad/s or m/s), sine terms:
        ``fourier_trajectory(a, b, q0, base_frequency, t)`` reproduces ``q, dq, ddq``.
      b: ``(n, H)`` the cosine terms, as ``a``.
      q0: ``(n,)`` the offset.
      base_frequency: Hz.
      duration: s.
      t: ``(N,)`` sample times from 0 to ``duration`` inclusive, ``N = round(duration · rate) + 1``.
      q: ``(N, n)`` positions (replay these).
      dq: ``(N, n)`` velocities, the exact derivative.
      ddq: ``(N, n)`` accelerations.
      criterion: ``"condition_snr"``, ``"condition"``, ``"logdet"`` or ``"aoptimal"``.
      value: the criterion's value for the result on the optimisation grid.
      start_value: its value for the random start the result came from (``best_start``).
      start_values: ``(starts,)`` every start's value before optimising.
      final_values: ``(starts,)`` every start's value after optimising.
      steps_taken: ``(starts,)`` the Adam steps each start took (fewer for those halving dropped).
      best_start: the index of the start the result came from.
      condition_number: of the column-scaled base regressor with friction columns on the output
        samples (``inf`` where a base column is not excited).
      start_condition_number: the same for the start it came from.
      rank: the number of base columns.
      base_columns: the base columns used by the criterion (indices into ``[Y | Y_f]``).
      column_scale: their fixed scale ``D``.
      limits: ``lower, upper, velocity_limit, acceleration_limit, effort_limit, torque_limit``
        ``(n,)`` used (``inf``: none).
      margin: the fraction of each limit used.
      implied_acceleration_limit: ``(n,)`` ``2π f_f H · margin · q̇_max`` (Bernstein).
      limit_distance: ``(n,)`` per key ``lower, upper, velocity, acceleration, torque``: the
        smallest distance over the output samples to that hard limit (``inf``: no limit; never
        negative).
      scale_down: ``(n,)`` factors (≤ 1) applied after the optimisation to keep the margin.
      grid_rate: the optimisation's grid (Hz).
      steps: Adam steps.
      starts: number of random starts.
      compile_s: time to compile the optimisation (s).
      optimise_s: time to run it (s).
      time_s: the whole call (s).
    """

    joint_names: tuple
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    base_frequency: float
    duration: float
    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    criterion: str
    value: float
    start_value: float
    start_values: np.ndarray
    final_values: np.ndarray
    steps_taken: np.ndarray
    best_start: int
    condition_number: float
    start_condition_number: float
    rank: int
    base_columns: np.ndarray
    column_scale: np.ndarray
    limits: dict
    margin: float
    implied_acceleration_limit: np.ndarray
    limit_distance: dict
    scale_down: np.ndarray
    grid_rate: float
    steps: int
    starts: int
    compile_s: float
    optimise_s: float
    time_s: float


# --------------------------------------------------------------------------- public entry
def _positive(name, x):
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise IdentifyTypeError(name, f"expected a number, got {type(x).__name__}")
    if not (math.isfinite(float(x)) and float(x) > 0):
        raise IdentifyError(name, f"expected a positive finite number, got {x!r}")
    return float(x)


def _count(name, x, low):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise IdentifyTypeError(name, f"expected an integer, got {type(x).__name__}")
    if x < low:
        raise IdentifyError(name, f"expected an integer >= {low}, got {x}")
    return int(x)


def _condition(model, q, dq, ddq, gravity, base):
    """Condition number of the column-scaled regressor with friction on columns ``base``."""
    blocks = lambda: (X.reshape(-1, X.shape[-1])[:, base] for _, X, _ in _evaluate(  # noqa: E731
        model, np.asarray(q), _at_rest(dq), np.asarray(ddq), gravity))  # fmt: skip
    G = sum(Xb.T @ Xb for Xb in blocks())
    norms = np.sqrt(np.diagonal(G))
    if not np.all(norms > 0):  # a base column this trajectory does not excite
        return math.inf
    lam = np.linalg.eigvalsh(G / norms[:, None] / norms[None, :])
    if lam[0] > 1e-10 * lam[-1]:
        return float(np.sqrt(lam[-1] / lam[0]))
    sv = np.linalg.svd(np.concatenate(list(blocks())) / norms, compute_uv=False)
    return float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf


def design_excitation(
    model,
    *,
    duration: float,
    key,
    harmonics: int = 5,
    base_frequency: float = 0.1,
    criterion: str = "condition_snr",
    starts: int = 64,
    limits=None,
    acceleration_limit=None,
    torque_limit=None,
    margin: float = 0.9,
    rate: float = 1000.0,
    grid_rate: float = 10.0,
    steps: int = 400,
    halving: bool = True,
    learning_rate: float = 0.05,
    gravity=(0.0, 0.0, -9.81),
    progress=None,
) -> ExcitationDesign:
    """An excitation trajectory optimised for identification, inside the joint limits.

    ``starts`` random finite-Fourier-series trajectories (Swevers et al. 1997),
    at rest at both ends and inside the limits by construction, are optimised
    with exact gradients of ``criterion`` on ``grid_rate`` samples; the best is
    sampled at ``rate`` and checked against every limit. Derivation: docs page
    ``identification-methods.md#excitation-design``.

    Args:
      model: a fixed-base [`Model`][spatialjax.multibody.Model] (its dtype is
        used throughout; its inertias only for torque limits and the report).
      duration: length in s (> 0); a whole number of periods
        ``1 / base_frequency`` keeps the trajectory periodic.
      key: a JAX PRNG key (the random starts).
      harmonics: ``H``; at least 2 (whole periods) or 3 (other durations).
      base_frequency: ``f_f`` in Hz; the band ``H f_f`` must stay below
        ``grid_rate / 2`` and ``rate / 2``.
      criterion: ``"condition_snr"`` (the default: the condition number over
        the weakest column's amplitude), ``"condition"``, ``"logdet"``
        (D-optimal) or ``"aoptimal"`` (A-optimal).
      starts: number of random starts optimised at once.
      limits: ``None`` (the model's ``lower``, ``upper``, ``velocity_limit``,
        ``effort_limit``), or a mapping with those keys and ``(n,)`` (or scalar)
        values. Every joint needs a finite velocity limit, every non-continuous
        joint finite position limits.
      acceleration_limit: ``None`` (only the bound the velocity limit implies)
        or a positive number or ``(n,)`` in rad/s² (m/s²).
      torque_limit: ``None``, ``"effort"`` (the limits' effort) or ``(n,)``
        N·m (N): ``|τ| ≤ margin · τ_max`` on the model's inertias, no friction.
      margin: the fraction of each limit used, in ``(0, 1]``.
      rate: output sampling rate in Hz.
      grid_rate: sampling rate of the criterion during the optimisation (Hz).
      steps: Adam steps (0: keep the random starts).
      halving: successive halving of the starts; ``False``: every start takes
        every step.
      learning_rate: Adam's initial step (cosine-decayed to 5 %).
      gravity: ``(3,)`` in the world frame.
      progress: optional callable receiving one line per stage.

    Returns:
      [`ExcitationDesign`][spatialjax.identification.ExcitationDesign].

    Raises:
      ValueError: ``duration``, ``rate``, ``grid_rate``, ``base_frequency``
        not positive; ``harmonics < 1`` or too few to start and end at rest;
        the band above a Nyquist frequency; ``margin`` outside ``(0, 1]``; an
        unknown ``criterion``; missing or bad limits (naming the joint); a
        floating base; torque limits that the offset alone breaks.
      TypeError: a non-integer ``harmonics``, ``starts`` or ``steps``.

    Examples:
      >>> import jax, spatialjax.multibody as mb
      >>> from spatialjax.identification import design_excitation
      >>> model = mb.chain_model(1)
      >>> lim = {"lower": -2.0, "upper": 2.0, "velocity_limit": 1.5}
      >>> d = design_excitation(model, duration=10.0, key=jax.random.key(0), harmonics=3,
      ...                       starts=2, steps=5, rate=20.0, limits=lim)
      >>> d.q.shape, bool(abs(d.dq[[0, -1]]).max() < 1e-9), bool(abs(d.q).max() <= 0.9 * 2.0)
      ((201, 1), True, True)
    """
    t_start = time.perf_counter()
    say = progress or (lambda line: None)
    if not isinstance(halving, (bool, np.bool_)):
        raise IdentifyTypeError("halving", f"expected True or False, got {type(halving).__name__}")
    P = _problem(model, duration=duration, key=key, harmonics=harmonics,
                 base_frequency=base_frequency, criterion=criterion, starts=starts,
                 limits=limits, acceleration_limit=acceleration_limit,
                 torque_limit=torque_limit, margin=margin, rate=rate, grid_rate=grid_rate,
                 steps=steps, learning_rate=learning_rate, gravity=gravity)  # fmt: skip
    n_cols = 10 * model.nbodies + 3 * model.nv
    say(
        f"random starts: {P.starts} trajectories of {model.nv} joints, {P.harmonics} harmonics "
        f"of {P.base_frequency:g} Hz over {P.duration:g} s; regressor rank {P.rank} of {n_cols} "
        f"columns on a {P.grid_rate:g} Hz grid ({P.t_grid.shape[0]} samples)"
    )

    # the optimisation: one program per problem structure, compiled once, run by blocks
    t0 = time.perf_counter()
    opt = _optimise(model, P, halving=halving)
    optimise_s = time.perf_counter() - t0 - opt.compile_s
    crit0 = np.asarray(opt.history[:, 0], np.float64)
    taken = np.sum(np.isfinite(opt.history), axis=1) - 1
    if not np.any(np.isfinite(opt.loss)):
        raise ValueError("the criterion is not finite for any start (a degenerate model?)")
    i = int(np.argmin(np.where(np.isfinite(opt.loss), opt.loss, np.inf)))
    plan = ", ".join(f"the best {keep} to step {until - 1}" for (until, _), (_, keep)
                     in zip(opt.rungs[1:], opt.rungs[:-1], strict=True))  # fmt: skip
    say(
        f"optimise: {P.starts} starts x {P.steps} Adam steps ({P.criterion})"
        + (f", successive halving: all to step {opt.rungs[0][0] - 1}, {plan}" if plan else "")
        + f"; best start {i}, {crit0[i]:.4g} -> {float(opt.crit[i]):.4g}; compile "
        f"{opt.compile_s:.2f} s, run {optimise_s:.2f} s"
    )

    # the output: coefficients of the best start, checked at every output sample
    a, b, q0, sd, t, qf, dqf, ddqf = _output(model, P, opt.z[i], opt.u[i])
    lo, hi, vel, acc, eff = P.limits
    dist = _distances(model, qf, dqf, ddqf, lo, hi, vel, acc, eff, P.g)
    if any(np.min(d) < 0 for d in dist.values()):  # pragma: no cover - scaled above
        raise RuntimeError(f"internal: the output breaks a limit: {dist}")

    # the report: condition numbers on the output samples (the result, and its start)
    as_dtype = lambda x: jnp.asarray(x, model.dtype)  # noqa: E731
    base = np.asarray(P.base)
    cond = _condition(model, as_dtype(qf), as_dtype(dqf), as_dtype(ddqf), P.g, base)
    s_q, s_dq, s_ddq = _output(model, P, P.z[i], P.u[i], limit_torque=False)[5:]
    cond0 = _condition(model, as_dtype(s_q), as_dtype(s_dq), as_dtype(s_ddq), P.g, base)
    say(f"verify: {t.shape[0]} samples at {P.rate:g} Hz inside every limit; condition number "
        f"{cond0:.4g} (start) -> {cond:.4g}")  # fmt: skip
    n = model.nv
    return ExcitationDesign(
        joint_names=tuple(model.joint_names),
        a=a, b=b, q0=q0,
        base_frequency=P.base_frequency, duration=P.duration,
        t=t, q=qf, dq=dqf, ddq=ddqf,
        criterion=P.criterion,
        value=float(opt.crit[i]), start_value=float(crit0[i]),
        start_values=crit0, final_values=np.asarray(opt.crit, np.float64), steps_taken=taken,
        best_start=i,
        condition_number=cond, start_condition_number=cond0,
        rank=P.rank, base_columns=np.asarray(P.base), column_scale=np.asarray(P.scale, np.float64),
        limits={"lower": lo, "upper": hi, "velocity_limit": vel, "acceleration_limit": acc,
                "effort_limit": eff,
                "torque_limit": np.full(n, np.inf) if P.tau_lim is None else P.tau_lim},
        margin=P.margin,
        implied_acceleration_limit=P.omega * P.harmonics * P.margin * vel,
        limit_distance=dist,
        scale_down=sd,
        grid_rate=P.grid_rate, steps=P.steps, starts=P.starts,
        compile_s=opt.compile_s, optimise_s=optimise_s,
        time_s=time.perf_counter() - t_start,
    )  # fmt: skip


_CACHE: dict = {}


def _compiled(args, static):
    """The compiled block ``_advance`` for this problem structure (lowered once)."""
    leaves, tree = jax.tree.flatten(args)
    sig = (tree, tuple((x.shape, str(x.dtype)) for x in leaves), tuple(sorted(static.items())))
    if sig not in _CACHE:
        if len(_CACHE) >= 8:
            _CACHE.clear()
        _CACHE[sig] = _advance_jit.lower(*args, **static).compile()
    return _CACHE[sig]


class _DesignProblem(NamedTuple):
    """Everything ``design_excitation`` derives from its arguments (checked)."""

    duration: float
    harmonics: int
    base_frequency: float
    omega: float
    criterion: str
    starts: int
    steps: int
    learning_rate: float
    margin: float
    rate: float
    grid_rate: float
    limits: tuple  # float64 (lower, upper, velocity, acceleration, effort)
    tau_lim: np.ndarray | None  # float64 torque limits (None: not constrained)
    box_np: tuple  # float64 (centre, half, bounded, velocity, acceleration) with the margin
    box: tuple  # the same in the model's dtype
    basis: jax.Array  # (2H, r) rest-constraint null space
    basis64: np.ndarray  # the same, float64
    f: jax.Array
    g: jax.Array
    t_grid: jax.Array
    tau: jax.Array | None  # margin · torque limits in the model's dtype
    z: jax.Array  # (starts, n, r) random starts
    u: jax.Array  # (starts, n)
    rank: int
    base: jax.Array  # (p_b,) base columns of [Y | Y_f]
    scale: jax.Array  # (p_b,) their fixed scale D


def _problem(model, *, duration, key, harmonics, base_frequency, criterion, starts, limits,
             acceleration_limit, torque_limit, margin, rate, grid_rate, steps, learning_rate,
             gravity) -> _DesignProblem:  # fmt: skip
    """Check the arguments; draw the random starts; find the base columns and their scale."""
    duration = _positive("duration", duration)
    harmonics = _count("harmonics", harmonics, 1)
    base_frequency = _positive("base_frequency", base_frequency)
    rate = _positive("rate", rate)
    grid_rate = _positive("grid_rate", grid_rate)
    learning_rate = _positive("learning_rate", learning_rate)
    starts = _count("starts", starts, 1)
    steps = _count("steps", steps, 0)
    if criterion not in CRITERIA:
        raise IdentifyError("criterion", f"expected one of {CRITERIA}, got {criterion!r}")
    margin = _positive("margin", margin)
    if not margin <= 1:
        raise IdentifyError("margin", f"expected a fraction in (0, 1], got {margin!r}")
    band = harmonics * base_frequency
    for name, r in (("grid_rate", grid_rate), ("rate", rate)):
        if not band < r / 2:
            raise IdentifyError(
                name,
                f"expected above twice the band harmonics * base_frequency = {band:g} "
                f"Hz, got {r:g} Hz",
            )
    if model.floating_base:
        raise IdentifyError("model", "a floating base cannot follow a joint trajectory")
    lo, hi, vel, acc, eff, tau_lim = _resolve_limits(model, limits, acceleration_limit,
                                                     torque_limit)  # fmt: skip
    omega = 2.0 * math.pi * base_frequency
    basis = _rest_basis(harmonics, omega, duration)
    if basis.shape[1] == 0:
        raise IdentifyError(
            "harmonics",
            f"{harmonics} harmonics leave no freedom once the trajectory starts and "
            f"ends at rest (duration {duration:g} s); use more harmonics",
        )
    dtype = model.dtype
    n = model.nv
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo0, hi0 = np.where(bounded, lo, -1.0), np.where(bounded, hi, 1.0)
    centre = np.where(bounded, 0.5 * (lo0 + hi0), 0.0)
    half = 0.5 * margin * (hi0 - lo0)
    box_np = (centre, half, bounded, margin * vel, margin * acc)
    box = tuple(jnp.asarray(x) if x.dtype == bool else jnp.asarray(x, dtype) for x in box_np)
    f = jnp.asarray(base_frequency, dtype)
    g = jnp.asarray(np.asarray(gravity, np.float64), dtype)
    if g.shape != (3,):
        raise IdentifyError("gravity", f"expected shape (3,), got {tuple(g.shape)}")
    t_grid = jnp.asarray(_grid(duration, base_frequency, grid_rate), dtype)
    n_grid = t_grid.shape[0]
    basis_j = jnp.asarray(basis, dtype)
    tau_j = None if tau_lim is None else jnp.asarray(margin * tau_lim, dtype)

    # random starts, base columns and the fixed column scale from them
    z, u, (q, dq, ddq) = _draw_starts(key, basis_j, box, t_grid, f, n=n, starts=starts)
    q, dq, ddq = np.asarray(q), np.asarray(dq), np.asarray(ddq)
    k, p = min(starts, 4), 10 * model.nbodies + 3 * n
    X4, sumsq = [], np.zeros(p)
    for at, X, _ in _evaluate(model, q.reshape(-1, n), _at_rest(dq).reshape(-1, n),
                              ddq.reshape(-1, n), g):  # fmt: skip
        if at < k * n_grid:
            X4.append(X[: k * n_grid - at])
        sumsq += np.sum(X**2, axis=(0, 1))
    base = _base_columns(np.concatenate(X4).reshape(-1, p), dtype)
    rank = int(base.shape[0])
    scale = np.sqrt(sumsq[base] / (starts * n_grid * n))
    return _DesignProblem(
        duration, harmonics, base_frequency, omega, criterion, starts, steps, learning_rate,
        margin, rate, grid_rate, (lo, hi, vel, acc, eff), tau_lim, box_np, box, basis_j, basis,
        f, g, t_grid, tau_j, z, u, rank, jnp.asarray(base), jnp.asarray(scale, dtype),
    )  # fmt: skip


def _base_columns(X, dtype=np.float64) -> np.ndarray:
    """Base columns of ``X (rows, p)`` of random data: unpivoted QR of the column-scaled ``X``."""
    eps = float(np.finfo(dtype).eps)
    norms = np.linalg.norm(X, axis=0)
    # a column below √eps of the largest is rounding noise (a parameter that does not enter
    # the torques, computed as ~eps), as in identifiability: never a base column
    live = norms > math.sqrt(eps) * norms.max()
    Xs = np.where(live, X / np.where(live, norms, 1.0), 0.0)
    r_diag = np.abs(np.diag(np.linalg.qr(Xs, mode="r")))
    return np.flatnonzero(live & (r_diag > math.sqrt(reduction.rank_rtol(X.shape[1], dtype))))


@jax.jit
def _coefficients(z, u, basis, box, t, f):
    """``(a, b, q0)`` of one start ``z (n, r)``, ``u (n,)``, scaled into the limits on the grid."""
    return _shape(z, u, basis, box, t, f)[0]


@functools.partial(jax.jit, static_argnames=("n", "starts"))
def _draw_starts(key, basis, box, t, f, *, n, starts):
    """Random starts ``z``, ``u`` and their samples ``(starts, N, n)`` on the grid."""
    kz, ku = jax.random.split(key)
    z = jax.random.normal(kz, (starts, n, basis.shape[1]), basis.dtype)
    u = jax.random.uniform(ku, (starts, n), basis.dtype, -0.5, 0.5)
    return z, u, jax.vmap(lambda z, u: _shape(z, u, basis, box, t, f)[1])(z, u)


def _output(model, P: _DesignProblem, z, u, *, limit_torque=True):
    """``(a, b, q0, scale_down, t, q, dq, ddq)`` of one start at the output rate, in the limits."""
    a, b, q0 = _coefficients(jnp.asarray(z), jnp.asarray(u), P.basis, P.box, P.t_grid, P.f)
    a, b, q0 = (np.asarray(x, np.float64) for x in (a, b, q0))
    # rest at both ends to float64 rounding whatever the model's dtype: project again
    ab = np.concatenate([a, b], axis=1) @ P.basis64 @ P.basis64.T
    a, b = ab[:, : a.shape[1]], ab[:, a.shape[1] :]
    t = np.linspace(0.0, P.duration, int(round(P.duration * P.rate)) + 1)
    a, b, sd = _fit_into_limits(a, b, q0, P.base_frequency, t, P.box_np)
    if limit_torque and P.tau_lim is not None:
        a, b, sd = _fit_torque(model, a, b, q0, P.base_frequency, t, P.margin * P.tau_lim, P.g,
                               sd)  # fmt: skip
    return (a, b, q0, sd, t, *_samples(a, b, q0, P.base_frequency, t))


def _samples(a, b, q0, f, t):
    """Float64 NumPy samples of the series (Swevers et al. 1997, eq. 9)."""
    H = a.shape[1]
    w = 2.0 * math.pi * f * np.arange(1, H + 1)
    ph = t[:, None, None] * w  # (N, 1, H)
    s, c = np.sin(ph), np.cos(ph)
    q = q0 + np.sum((a * s - b * c) / w, axis=-1)
    dq = np.sum(a * c + b * s, axis=-1)
    ddq = np.sum(w * (b * c - a * s), axis=-1)
    return q, dq, ddq


def _fit_into_limits(a, b, q0, f, t, box):
    """Scale each joint's coefficients so that every sample keeps the margin (exact, one pass)."""
    centre, half, bounded, vel, acc = box
    q, dq, ddq = _samples(a, b, q0, f, t)
    dev = q - q0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.stack([
            np.where(bounded, (centre + half - q0) / np.max(dev, 0), np.inf),
            np.where(bounded, (q0 - centre + half) / np.max(-dev, 0), np.inf),
            vel / np.max(np.abs(dq), 0),
            acc / np.max(np.abs(ddq), 0),
        ])  # fmt: skip
    r = np.where(np.isnan(r) | (r <= 0), np.inf, r)
    s = np.minimum(1.0, np.min(r, axis=0) * (1 - 1e-12))
    return a * s[:, None], b * s[:, None], s


def _fit_torque(model, a, b, q0, f, t, tau_max, g, sd):
    """Shrink every joint's amplitude together (bisection) until ``|τ| ≤ tau_max`` everywhere."""

    def worst(k):
        q, dq, ddq = _samples(k * a, k * b, q0, f, t)
        d = model.dtype
        tau = np.asarray(mb.rnea(model, jnp.asarray(q, d), jnp.asarray(dq, d),
                                 jnp.asarray(ddq, d), g), np.float64)  # fmt: skip
        return float(np.max(np.abs(tau) / tau_max))

    if worst(1.0) <= 1.0:
        return a, b, sd
    if worst(0.0) > 1.0:
        raise IdentifyError(
            "torque_limit",
            "the trajectory's offset alone (at rest) needs more than margin * the "
            "torque limit; raise the limits or the margin",
        )
    lo_k, hi_k = 0.0, 1.0
    for _ in range(30):
        mid = 0.5 * (lo_k + hi_k)
        lo_k, hi_k = (mid, hi_k) if worst(mid) <= 1.0 else (lo_k, mid)
    return a * lo_k, b * lo_k, sd * lo_k


def _distances(model, q, dq, ddq, lo, hi, vel, acc, eff, g):
    """Smallest distance of the samples to every hard limit, per joint."""
    tau = np.concatenate([t for _, _, t in _evaluate(model, q, dq, ddq, g)])
    with np.errstate(invalid="ignore"):
        return {
            "lower": np.min(q - lo, axis=0),
            "upper": np.min(hi - q, axis=0),
            "velocity": np.min(vel - np.abs(dq), axis=0),
            "acceleration": np.min(acc - np.abs(ddq), axis=0),
            "torque": np.min(eff - np.abs(tau), axis=0),
        }
