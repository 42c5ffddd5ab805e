"""Inverse dynamics by the recursive Newton-Euler algorithm (Featherstone, RBDA 2008, Table 5.1).

Motions ``[ω; v]`` and forces ``[n; f]`` in each body's frame; gravity in world
coordinates, applied as a fictitious base acceleration ``[0; −g]`` (RBDA §5.3).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _batchlast as batchlast
from . import _onestate
from . import _sweep as sweep
from ._model import Model

# ------------------------------------------------------- RNEA as three body scans
# A single scan could compute a body's velocity, acceleration and force in ONE step, but
# XLA:CPU has no multi-output loop fusion: every output row of a step is its own loop that
# recomputes everything it depends on, so the six force rows would recompute the velocity and
# acceleration (several times the arithmetic of one pass). Here every step has small,
# independent output rows: scan 1 propagates velocities, the velocity-product terms are
# added outside any loop (all bodies at once), scan 2 propagates accelerations, the body
# forces are formed outside any loop, and scan 3 sums them leaves to root. The joint
# rotation enters each step as ``E = P + sin θ · P K + (1 − cos θ) · P K²`` (Rodrigues,
# with ``K = [axis]×`` and the per-model products precomputed), so a step reads two
# numbers per state for its joint instead of nine.


def _rnea_scan(model: Model, q, v, a, g, fext=None):
    """RNEA as three scans over bodies, ``(k, N)`` -> ``(nv, N)``; ``fext (nb, 6, N)`` or None."""
    nb, N, dt = model.nbodies, q.shape[-1], q.dtype
    ff = model.floating_base
    s0 = 1 if ff else 0
    a0 = batchlast.join(jnp.zeros_like(g), -g)  # the base accelerates at −g (RBDA §5.3)
    c = sweep.scan_forward(model, q, v, a, a0, pose=False)
    xs, (Sw, Sv), _ = sweep.scan_xs(model, q)
    # body forces of all bodies at once: f_i = I_i a_i + v_i ×* I_i v_i
    prm = batchlast.n(model.inertia.params)
    V, A = c["V"][:nb], c["A"][:nb]
    F = batchlast.inertia_times(prm, A) + batchlast.crf(V, batchlast.inertia_times(prm, V))
    if fext is not None:
        F = F - fext
    F = jnp.concatenate([F, jnp.zeros((1, 6, N), dt)], axis=0)

    def back_step(F, x):
        E, r = sweep.step_frame(x)
        up = batchlast.rows_force_to_parent(E, r, list(sweep.dyn(F, x["i"])))
        return sweep.put(F, sweep.dyn(F, x["p"]) + jnp.stack(up), x["p"]), None

    # leaves to root: f_λ += X_iᵀ f_i. τ_i = S_iᵀ f_i is read after the scan: read in
    # the step, f_i had to be kept apart from the buffer updated in place, and XLA
    # copied the whole buffer on every step.
    F, _ = jax.lax.scan(back_step, F, xs, reverse=True)
    sl = slice(s0, nb)
    tau = jnp.sum(batchlast.join(Sw[sl, :, None], Sv[sl, :, None]) * F[sl], axis=-2)
    if ff:
        return jnp.concatenate([F[0], tau], axis=0)
    return tau


def _rnea_forward(model, q, v, a, g, method, pose=False):
    E, r = sweep.joint_frames(model, q)
    vff, qd = sweep.split_dofs(model, v)
    aff, qdd = sweep.split_dofs(model, a)
    # The base accelerates at −g (RBDA §5.3: gravity as a fictitious base acceleration).
    a0 = batchlast.join(jnp.zeros_like(g), -g)
    return E, r, sweep.forward(model, E, r, method, qd, qdd, vff, aff, a0, pose=pose)


def _tau_from_forces(model, f_body):
    """``τ_i = S_iᵀ f_i`` (free flyer: ``f_0``) in ``v``'s order: ``(nv, N)``."""
    S = batchlast.n(sweep.body_subspaces(model))
    tau = jnp.sum(S * f_body, axis=-2)
    if model.floating_base:
        return jnp.concatenate([f_body[0], tau[1:]], axis=0)
    return tau


def rnea(
    model: Model,
    q,
    v,
    a,
    gravity=None,
    *,
    f_ext=None,
    method: str = "auto",
) -> jax.Array:
    """Inverse dynamics by the recursive Newton-Euler algorithm (RBDA Table 5.1).

    ``f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i``, ``τ_i = S_iᵀ f_i``, base acceleration
    ``[0; −g]``; a free flyer's entries are the body-frame wrench ``[n; f]``. Adds
    ``armature · a``; no damping or Coulomb friction. Pinocchio's ``rnea``.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` velocity.
      a: ``(..., nv)`` acceleration.
      gravity: ``(..., 3)`` gravitational acceleration in world coordinates;
        ``None`` (default) is ``(0, 0, -9.81)`` m/s².
      f_ext: ``(..., nbodies, 6)`` external wrench ``[n; f]`` acting ON each
        body, in the body's frame (about its origin), or ``None``.
      method: ``"auto"`` (default), ``"scan"``, ``"levels"`` or ``"loop"``
        (docs page ``dynamics.md#tree-sweeps``).

    Returns:
      ``(..., nv)`` generalised forces (N m, N), batch axes of the inputs broadcast.

    Raises:
      ValueError: an input of the wrong length or shape, batch shapes that do not
        broadcast, or an unknown method.
      TypeError: a non-float input or a dtype other than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, rnea
      >>> m = chain_model(1, length=1.0, mass=2.0)   # a rod about a vertical axis
      >>> rnea(m, jnp.zeros(1), jnp.zeros(1), jnp.ones(1)).round(3).tolist()  # m L²/3
      [0.667]
    """
    sweep.check_method(method)
    q, v, a, g, batch = sweep.dynamics_inputs(model, q, v, a, gravity)
    f_ext = sweep.as_fext(f_ext, model)
    batch = sweep.batch_with_fext(batch, f_ext)
    packed = _onestate.packed_terms(method, model, batch, q, g)
    return _rnea_kernel(model, q, v, a, g, f_ext, packed, batch=batch, method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _rnea_kernel(model: Model, q, v, a, g, f_ext=None, packed=None, *, batch, method) -> jax.Array:
    """``rnea`` on checked inputs: one compiled program per structure (``packed``: the
    model's one-state terms, ``_onestate.host_terms``)."""
    if sweep.one_state(method, model, batch):
        fe = None if f_ext is None else f_ext.reshape(model.nbodies, 6)
        q1, v1, a1, g1 = (x.reshape(-1) for x in (q, v, a, g))
        K = _onestate.terms(model, _onestate.RNEA, packed)
        tau = _onestate.rnea_world(model, K, q1, v1, a1, g1, fe)
        return tau.reshape(batch + (model.nv,))
    method = sweep.resolve_method(method, model, batch)
    q, v, a, g = sweep.flat_dynamics(q, v, a, g, batch)
    xs = (q, v, a, g) if f_ext is None else (q, v, a, g, sweep.flat_fext(f_ext, batch))

    def core(q, v, a, g, fext=None):
        if method == "scan":
            tau = _rnea_scan(model, q, v, a, g, fext)
        else:
            E, r, (groups, inv, _, _, V, A) = _rnea_forward(model, q, v, a, g, method)
            params = batchlast.n(model.inertia.params)
            F = []
            for (idx, _, _), vi, ai in zip(groups, V, A, strict=True):
                p = sweep.take(params, idx)
                f = batchlast.inertia_times(p, ai) + batchlast.crf(
                    vi, batchlast.inertia_times(p, vi)
                )
                F.append(f if fext is None else f - sweep.take(fext, idx))
            F = sweep.backward_sum(groups, F, E, r)
            tau = _tau_from_forces(model, sweep.assemble(F, inv))
        return tau + batchlast.n(model.armature) * a  # joint armature (rotor inertia)

    return sweep.unflat_bf(sweep.chunked(core, *xs), batch)


def nonlinear_effects(model: Model, q, v, gravity=None, *, method: str = "auto") -> jax.Array:
    """Bias forces ``h(q, v) = C(q, v) v + g(q)``: ``rnea`` with ``a = 0`` (``nonLinearEffects``).

    Args:
      model, q, v, gravity, method: as in [`rnea`][spatialjax.multibody.rnea.rnea].

    Returns:
      ``(..., nv)`` in ``v``'s order.

    Raises:
      ValueError, TypeError: as [`rnea`][spatialjax.multibody.rnea.rnea].

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, nonlinear_effects
      >>> m = chain_model(1, length=1.0, mass=2.0)   # vertical axis: gravity does no work
      >>> nonlinear_effects(m, jnp.zeros(1), jnp.ones(1)).tolist()
      [0.0]
    """
    sweep.check_method(method)
    q = sweep.as_input(q, "q", model.nq, model)
    v = sweep.as_input(v, "v", model.nv, model)
    g = sweep.as_gravity(gravity, model)
    batch = sweep.batch(q=q, v=v, gravity=g)
    a = np.zeros((model.nv,), model.dtype)  # NumPy: no eager program
    packed = _onestate.packed_terms(method, model, batch, q, g)
    return _rnea_kernel(model, q, v, a, g, None, packed, batch=batch, method=method)


def gravity_torques(model: Model, q, gravity=None, *, method: str = "auto") -> jax.Array:
    """Generalised gravity ``g(q)``: [`rnea`][spatialjax.multibody.rnea.rnea] with ``v = a = 0``.

    Args:
      model, q, gravity, method: as in [`rnea`][spatialjax.multibody.rnea.rnea].

    Returns:
      ``(..., nv)`` in ``v``'s order.

    Raises:
      ValueError, TypeError: as [`rnea`][spatialjax.multibody.rnea.rnea].

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, gravity_torques
      >>> m = chain_model(1, length=1.0, mass=2.0)
      >>> gravity_torques(m, jnp.zeros(1), gravity=(0.0, -9.81, 0.0)).round(3).tolist()
      [9.81]
    """
    sweep.check_method(method)
    q = sweep.as_input(q, "q", model.nq, model)
    g = sweep.as_gravity(gravity, model)
    batch = sweep.batch(q=q, gravity=g)
    z = np.zeros((model.nv,), model.dtype)
    packed = _onestate.packed_terms(method, model, batch, q, g)
    return _rnea_kernel(model, q, z, z, g, None, packed, batch=batch, method=method)
