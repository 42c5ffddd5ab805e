"""Configuration-space integration and differentiable rollouts.

A free flyer's ``q = [p, wxyz]`` lives on SE(3) and its ``v = [ω; v]`` is the body
twist; ``integrate`` is ``q ⊕ v dt``, ``difference`` its inverse, ``rollout``
semi-implicit Euler or RKMK4 (Munthe-Kaas 1999) as one ``lax.scan``.
Derivation: docs page ``dynamics.md#integration``.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import is_concrete
from .._errors import ArgumentError, ArgumentTypeError
from . import _sweep as sweep
from ._model import Model
from .aba import forward_dynamics

INTEGRATORS = ("semi_implicit_euler", "rk4")


# ------------------------------------------------------------ SO(3)/SE(3) pieces
def _small(theta_sq, dt):
    """Where the Taylor branches take over (about the fourth root of eps)."""
    return theta_sq < (1e-4 if dt == jnp.float32 else 1e-6)


def _quat_mul(a, b):
    """Hamilton product of ``wxyz`` quaternions."""
    wa, va, wb, vb = a[..., :1], a[..., 1:], b[..., :1], b[..., 1:]
    return jnp.concatenate(
        [wa * wb - jnp.sum(va * vb, -1, keepdims=True), wa * vb + wb * va + jnp.cross(va, vb)], -1
    )


def _rotate(quat, x):
    """``R(quat) x`` for a unit ``wxyz`` quaternion."""
    w, u = quat[..., :1], quat[..., 1:]
    t = 2.0 * jnp.cross(u, x)
    return x + w * t + jnp.cross(u, t)


def _rotate_inv(quat, x):
    return _rotate(quat * jnp.asarray([1.0, -1.0, -1.0, -1.0], quat.dtype), x)


def _exp_coeffs(theta_sq):
    """``(cos(θ/2), sin(θ/2)/θ, (1-cos θ)/θ², (θ-sin θ)/θ³)``, NaN-free at θ = 0."""
    small = _small(theta_sq, theta_sq.dtype)
    s = jnp.where(small, jnp.ones_like(theta_sq), theta_sq)
    th = jnp.sqrt(s)
    t2, t4 = theta_sq, theta_sq * theta_sq
    ch = jnp.where(small, 1 - t2 / 8 + t4 / 384, jnp.cos(th / 2))
    sh = jnp.where(small, 0.5 - t2 / 48 + t4 / 3840, jnp.sin(th / 2) / th)
    b = jnp.where(small, 0.5 - t2 / 24 + t4 / 720, (1 - jnp.cos(th)) / s)
    c = jnp.where(small, 1.0 / 6 - t2 / 120 + t4 / 5040, (th - jnp.sin(th)) / (s * th))
    return ch, sh, b, c


def _se3_exp_apply(quat, p, xi):
    """``(quat', p')`` of ``T · exp(ξ)`` for the body twist ``ξ = [ω; u]`` (..., 6)."""
    w, u = xi[..., :3], xi[..., 3:]
    ch, sh, b, c = _exp_coeffs(jnp.sum(w * w, -1))
    dq = jnp.concatenate([ch[..., None], sh[..., None] * w], -1)
    wu = jnp.cross(w, u)
    Vu = u + b[..., None] * wu + c[..., None] * jnp.cross(w, wu)  # V(ω) u
    quat = quat / jnp.linalg.norm(quat, axis=-1, keepdims=True)
    new = _quat_mul(quat, dq)
    return new / jnp.linalg.norm(new, axis=-1, keepdims=True), p + _rotate(quat, Vu)


def _se3_log_between(quat0, p0, quat1, p1):
    """Body twist ``ξ = log(T0⁻¹ T1)`` ``[ω; u]`` (..., 6), rotation angle in ``[0, π]``."""
    quat0 = quat0 / jnp.linalg.norm(quat0, axis=-1, keepdims=True)
    quat1 = quat1 / jnp.linalg.norm(quat1, axis=-1, keepdims=True)
    conj = jnp.asarray([1.0, -1.0, -1.0, -1.0], quat0.dtype)
    dq = _quat_mul(quat0 * conj, quat1)
    dq = jnp.where(dq[..., :1] < 0, -dq, dq)  # w >= 0: the angle in [0, π]
    wq, vq = dq[..., 0], dq[..., 1:]
    n_sq = jnp.sum(vq * vq, -1)
    small = _small(n_sq, n_sq.dtype)
    n = jnp.sqrt(jnp.where(small, jnp.ones_like(n_sq), n_sq))
    w_safe = jnp.where(small, wq, jnp.ones_like(wq))
    # θ/‖v‖ with θ = 2 atan2(‖v‖, w); Taylor for ‖v‖ -> 0 (w -> 1)
    scale = jnp.where(
        small, 2.0 / w_safe - 2.0 * n_sq / (3.0 * w_safe**3), 2 * jnp.arctan2(n, wq) / n
    )
    w = scale[..., None] * vq
    d = _rotate_inv(quat0, p1 - p0)
    th_sq = jnp.sum(w * w, -1)
    small = _small(th_sq, th_sq.dtype)
    s = jnp.where(small, jnp.ones_like(th_sq), th_sq)
    th = jnp.sqrt(s)
    # V(ω)⁻¹ = 1 − ½ K + e K², e = (1 − θ sin θ / (2 (1 − cos θ))) / θ²
    e = jnp.where(
        small,
        1.0 / 12 + th_sq / 720 + th_sq * th_sq / 30240,
        (1 - th * jnp.sin(th) / (2 * (1 - jnp.cos(th)))) / s,
    )
    wd = jnp.cross(w, d)
    u = d - 0.5 * wd + e[..., None] * jnp.cross(w, wd)
    return jnp.concatenate([w, u], -1)


def _ad(a, x):
    """``ad_a x`` of se(3) twists ``[ω; u]``: ``[ω_a × ω_x; ω_a × u_x + u_a × ω_x]``."""
    return jnp.concatenate(
        [
            jnp.cross(a[..., :3], x[..., :3]),
            jnp.cross(a[..., :3], x[..., 3:]) + jnp.cross(a[..., 3:], x[..., :3]),
        ],
        -1,
    )


def _dexp_inv(model: Model, theta, xi):
    """Free-flyer block: ``dexp⁻¹_{−Θ}(ξ) ≈ ξ + ½[Θ, ξ] + 1/12[Θ, [Θ, ξ]]``; identity elsewhere."""
    if not model.floating_base:
        return xi
    t, x = theta[..., :6], xi[..., :6]
    adx = _ad(t, x)
    return jnp.concatenate([x + 0.5 * adx + _ad(t, adx) / 12.0, xi[..., 6:]], -1)


def _integrate_core(model: Model, q, v, dt):
    """``q ⊕ v dt`` on checked inputs (``dt`` broadcast against the batch axes)."""
    dt = dt[..., None]
    if not model.floating_base:
        return q + v * dt
    quat, p = _se3_exp_apply(q[..., 3:7], q[..., :3], v[..., :6] * dt)
    rest = q[..., 7:] + v[..., 6:] * dt
    shape = jnp.broadcast_shapes(quat.shape[:-1], rest.shape[:-1])
    return jnp.concatenate(
        [jnp.broadcast_to(p, shape + (3,)), jnp.broadcast_to(quat, shape + (4,)),
         jnp.broadcast_to(rest, shape + rest.shape[-1:])],
        -1,
    )  # fmt: skip


def _continuous_mask(model: Model):
    """Static ``(nv,)`` mask of continuous joints' dofs."""
    mask = []
    for t in model.joint_types:
        mask += [False] * 6 if t == "free_flyer" else [t == "continuous"]
    return np.asarray(mask)


def _difference_core(model: Model, q0, q1):
    k = 7 if model.floating_base else 0
    d = q1[..., k:] - q0[..., k:]
    cont = _continuous_mask(model)[6 if model.floating_base else 0 :]
    if cont.any():
        wrapped = jnp.arctan2(jnp.sin(d), jnp.cos(d))
        d = jnp.where(cont, wrapped, d)
    if not model.floating_base:
        return d
    xi = _se3_log_between(q0[..., 3:7], q0[..., :3], q1[..., 3:7], q1[..., :3])
    shape = jnp.broadcast_shapes(xi.shape[:-1], d.shape[:-1])
    return jnp.concatenate(
        [jnp.broadcast_to(xi, shape + (6,)), jnp.broadcast_to(d, shape + d.shape[-1:])], -1
    )


# ------------------------------------------------------------------ input checks
def _as_dt(dt, model: Model, name="dt"):
    """A Python number becomes a scalar of the model's dtype; an array must have that dtype."""
    if isinstance(dt, (bool, np.bool_)):
        raise ArgumentTypeError(name, f"expected a float time step, got {dt!r}")
    if isinstance(dt, (int, float)):
        dt = jnp.asarray(float(dt), model.dtype)
    if not hasattr(dt, "dtype"):
        raise ArgumentTypeError(name, f"expected a float or a float array, got {type(dt).__name__}")
    if not jnp.issubdtype(dt.dtype, jnp.floating):
        raise ArgumentTypeError(name, f"expected a floating-point time step, got dtype {dt.dtype}")
    if dt.dtype != model.dtype:
        raise ArgumentTypeError(name, f"dtype {dt.dtype} differs from the model's {model.dtype}")
    dt = jnp.asarray(dt)
    if is_concrete(dt) and not np.all(np.isfinite(np.asarray(dt))):
        raise ArgumentError(name, f"expected a finite time step, got {np.asarray(dt)}")
    return dt


def _batch_of(*shapes, names):
    """The broadcast of ``shapes``, or ``ArgumentError`` about the first that does not fit."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        k = next(i for i in range(len(shapes)) if not sweep.broadcasts(shapes[: i + 1]))
        desc = ", ".join(f"{n} {tuple(s)}" for n, s in zip(names, shapes, strict=True))
        raise ArgumentError(names[k], f"batch shapes do not broadcast: {desc}") from None


# ------------------------------------------------------------------ public API
def integrate(model: Model, q, v, dt) -> jax.Array:
    """Configuration reached from ``q`` moving with constant velocity ``v`` for ``dt``.

    ``q + v dt`` for one-dof joints; for a free flyer ``T' = T · exp(v dt)``
    (quaternion normalised); Pinocchio's ``integrate(model, q, v * dt)``.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` velocity (a free flyer's: the body twist ``[ω; v]``).
      dt: time step (s): a Python float or an array of the model's dtype
        broadcasting against the batch axes.

    Returns:
      ``(..., nq)`` with the batch axes of ``q``, ``v`` and ``dt`` broadcast.

    Raises:
      ValueError: ``q``/``v`` of the wrong length, batch shapes that do not
        broadcast, a non-finite concrete ``dt``.
      TypeError: non-float inputs or a dtype other than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, integrate
      >>> m = chain_model(2)
      >>> integrate(m, jnp.array([0.0, 1.0]), jnp.array([1.0, -1.0]), 0.5).tolist()
      [0.5, 0.5]
    """
    q = sweep.as_input(q, "q", model.nq, model)
    v = sweep.as_input(v, "v", model.nv, model)
    dt = _as_dt(dt, model)
    _batch_of(q.shape[:-1], v.shape[:-1], dt.shape, names=("q", "v", "dt"))
    return _integrate_kernel(model, q, v, dt)


@jax.jit
def _integrate_kernel(model, q, v, dt):
    return _integrate_core(model, q, v, dt)


def difference(model: Model, q0, q1) -> jax.Array:
    """Velocity ``v`` that goes from ``q0`` to ``q1`` in unit time: ``integrate(q0, v, 1) = q1``.

    ``q1 − q0`` (wrapped to ``(−π, π]`` for continuous joints); a free flyer's
    ``log(T0⁻¹ T1)``, rows ``[ω; v]`` (Pinocchio's ``difference``).

    Args:
      model: the tree.
      q0, q1: ``(..., nq)`` configurations (batch axes broadcast).

    Returns:
      ``(..., nv)``.

    Raises:
      ValueError: wrong lengths or batch shapes that do not broadcast.
      TypeError: non-float inputs or a dtype other than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, difference
      >>> m = chain_model(2)
      >>> difference(m, jnp.array([0.0, 1.0]), jnp.array([0.5, 0.0])).tolist()
      [0.5, -1.0]
    """
    q0 = sweep.as_input(q0, "q0", model.nq, model)
    q1 = sweep.as_input(q1, "q1", model.nq, model)
    _batch_of(q0.shape[:-1], q1.shape[:-1], names=("q0", "q1"))
    return _difference_kernel(model, q0, q1)


@jax.jit
def _difference_kernel(model, q0, q1):
    return _difference_core(model, q0, q1)


class Rollout(NamedTuple):
    """Result of [`rollout`][spatialjax.multibody.rollout.rollout].

    Attributes:
      q: ``(..., T + 1, nq)`` configurations at ``t = 0, dt, ..., T dt``.
      v: ``(..., T + 1, nv)`` velocities at the same times.
      tau: ``(..., T, nv)`` the torques applied over each step.
    """

    q: jax.Array
    v: jax.Array
    tau: jax.Array


def rollout(
    model: Model,
    q0,
    v0,
    tau,
    dt,
    *,
    integrator: str = "semi_implicit_euler",
    gravity=None,
    T: int | None = None,
    params: Any = None,
    method: str = "auto",
) -> Rollout:
    """Simulate ``T`` steps of the forward dynamics from ``(q0, v0)``, as one ``lax.scan``.

    Each step holds ``τ_k`` constant and advances ``(q, v)`` by ``dt`` with
    ``integrator``, ``a`` from [`forward_dynamics`][spatialjax.multibody.forward_dynamics]
    (armature and damping included; no friction, limits or contacts). Differentiable
    and ``vmap``-able.

    Args:
      model: the tree.
      q0: ``(..., nq)`` initial configuration.
      v0: ``(..., nv)`` initial velocity.
      tau: ``(..., T, nv)`` torques, one row per step; or a control function
        ``u(t, q, v, params) -> (..., nv)`` called at ``t = k dt`` (then ``T`` is required).
      dt: time step (s), a float or a scalar array of the model's dtype.
      integrator: ``"semi_implicit_euler"`` (default) or ``"rk4"`` (RKMK4).
      gravity: ``(3,)`` world-frame gravity (``None``: ``(0, 0, −9.81)``).
      T: the number of steps with a control function (with an array, its ``T`` axis).
      params: a pytree passed to the control function unchanged.
      method: ``forward_dynamics``'s ``method`` (``"auto"``, ``"aba"``, ``"crba"``).

    Returns:
      A [`Rollout`][spatialjax.multibody.Rollout] ``(q, v, tau)``, batch axes of ``q0``,
      ``v0`` and ``tau`` broadcast. States with a singular mass matrix turn NaN.

    Raises:
      ValueError: wrong ``q0``/``v0``/``tau`` lengths, batch shapes that do not
        broadcast, an unknown ``integrator``, a bad control function output, ``T``
        not a positive int (or not ``tau``'s), ``dt`` not a positive finite scalar.
      TypeError: non-float inputs, a dtype other than the model's, or ``tau``
        neither an array nor a callable.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, rollout
      >>> m = chain_model(1, mass=1.0)          # rod about a vertical axis, I = 1/3 kg m²
      >>> r = rollout(m, jnp.zeros(1), jnp.zeros(1), jnp.ones((10, 1)), 0.1, integrator="rk4")
      >>> r.q.shape, float(r.v[-1, 0]).__round__(6)  # ω = τ t / I = 3 rad/s after 1 s
      ((11, 1), 3.0)
    """
    if integrator not in INTEGRATORS:
        raise ArgumentError("integrator", f"expected one of {INTEGRATORS}, got {integrator!r}")
    q0 = sweep.as_input(q0, "q0", model.nq, model)
    v0 = sweep.as_input(v0, "v0", model.nv, model)
    dt = _as_dt(dt, model)
    if dt.ndim != 0:
        raise ArgumentError("dt", f"expected a scalar time step, got shape {tuple(dt.shape)}")
    if is_concrete(dt) and not float(dt) > 0:
        raise ArgumentError("dt", f"expected a positive time step, got {float(dt)}")
    g = sweep.as_gravity(gravity, model)
    if g.shape != (3,):
        raise ArgumentError("gravity", f"expected shape (3,), got {tuple(g.shape)}")
    if T is not None and (isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1):
        raise ArgumentError("T", f"expected a positive int (number of steps), got {T!r}")
    if callable(tau):
        if T is None:
            raise ArgumentError("T", "a control function needs the number of steps T")
        batch = _batch_of(q0.shape[:-1], v0.shape[:-1], names=("q0", "v0"))
        q0 = jnp.broadcast_to(q0, batch + q0.shape[-1:])
        v0 = jnp.broadcast_to(v0, batch + v0.shape[-1:])
        out = jax.eval_shape(tau, jnp.zeros((), model.dtype), q0, v0, params)
        if not hasattr(out, "shape") or out.shape[-1:] != (model.nv,):
            raise ArgumentError(
                "tau",
                f"the control function returned {getattr(out, 'shape', type(out))}; "
                f"expected an array of shape (..., {model.nv})",
            )
        if out.dtype != model.dtype:
            raise ArgumentTypeError(
                "tau",
                f"the control function returned dtype {out.dtype}, expected the model's "
                f"{model.dtype}",
            )
        _batch_of(batch, out.shape[:-1], names=("q0 and v0", "tau"))
        if tuple(np.broadcast_shapes(batch, out.shape[:-1])) != batch:
            raise ArgumentError(
                "tau",
                f"the control function returned batch shape {out.shape[:-1]}, larger "
                f"than the state's {batch}",
            )
        return _rollout_kernel(
            model, q0, v0, None, dt, g, params, T=int(T), u=tau, integrator=integrator,
            method=method,
        )  # fmt: skip
    if not hasattr(tau, "dtype") and not isinstance(tau, (list, tuple, np.ndarray)):
        raise ArgumentTypeError(
            "tau",
            f"expected a (..., T, {model.nv}) array or a control function, "
            f"got {type(tau).__name__}",
        )
    tau = sweep.as_input(tau, "tau", model.nv, model)
    if tau.ndim < 2:
        raise ArgumentError(
            "tau", f"expected shape (..., T, {model.nv}) (one row per step), got {tuple(tau.shape)}"
        )
    if T is not None and T != tau.shape[-2]:
        raise ArgumentError("T", f"{T} differs from tau's number of steps {tau.shape[-2]}")
    batch = _batch_of(q0.shape[:-1], v0.shape[:-1], tau.shape[:-2], names=("q0", "v0", "tau"))
    q0 = jnp.broadcast_to(q0, batch + q0.shape[-1:])
    v0 = jnp.broadcast_to(v0, batch + v0.shape[-1:])
    return _rollout_kernel(
        model, q0, v0, tau, dt, g, params, T=tau.shape[-2], u=None, integrator=integrator,
        method=method,
    )  # fmt: skip


@functools.partial(jax.jit, static_argnames=("T", "u", "integrator", "method"))
def _rollout_kernel(model, q0, v0, tau, dt, g, params, *, T, u, integrator, method):
    batch = q0.shape[:-1]

    def accel(q, v, f):
        return forward_dynamics(model, q, v, f, g, method=method)

    def step(q, v, f):
        if integrator == "semi_implicit_euler":
            v1 = v + dt * accel(q, v, f)
            return _integrate_core(model, q, v1, dt), v1
        h = 0.5 * dt
        k1v, k1a = v, accel(q, v, f)
        v2 = v + h * k1a
        k2v = _dexp_inv(model, h * k1v, v2)
        k2a = accel(_integrate_core(model, q, k1v, h), v2, f)
        v3 = v + h * k2a
        k3v = _dexp_inv(model, h * k2v, v3)
        k3a = accel(_integrate_core(model, q, k2v, h), v3, f)
        v4 = v + dt * k3a
        k4v = _dexp_inv(model, dt * k3v, v4)
        k4a = accel(_integrate_core(model, q, k3v, dt), v4, f)
        dq = (k1v + 2 * k2v + 2 * k3v + k4v) / 6
        return _integrate_core(model, q, dq, dt), v + dt * (k1a + 2 * k2a + 2 * k3a + k4a) / 6

    def body(carry, x):
        q, v = carry
        k, f = x
        if u is not None:
            f = jnp.broadcast_to(u(k * dt, q, v, params), batch + (model.nv,))
        else:
            f = jnp.broadcast_to(f, batch + (model.nv,))
        q1, v1 = step(q, v, f)
        return (q1, v1), (q1, v1, f)

    ks = jnp.arange(T, dtype=q0.dtype)
    fs = None if tau is None else jnp.moveaxis(tau, -2, 0)
    _, (qs, vs, fs) = jax.lax.scan(body, (q0, v0), (ks, fs), length=T)
    qs = jnp.concatenate([q0[None], qs], 0)
    vs = jnp.concatenate([v0[None], vs], 0)
    return Rollout(jnp.moveaxis(qs, 0, -2), jnp.moveaxis(vs, 0, -2), jnp.moveaxis(fs, 0, -2))
