"""Forward kinematics: world poses, body velocities and accelerations, frame poses.

Motions ``[ω; v]`` in each body's frame; world poses as [`Plxb`][spatialjax.Plxb]
(``E = R_world_body``, ``r`` = body origin in the world). RBDA 2008, Table 5.1.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._errors import ArgumentError
from .._transforms import Plxb
from . import _onestate
from . import _sweep as sweep
from ._model import Model


# ------------------------------------------------------------------ public API
class Kinematics(NamedTuple):
    """Result of [`forward_kinematics`][spatialjax.multibody.forward_kinematics].

    Attributes:
      poses: [`Plxb`][spatialjax.Plxb] of batch ``(..., nbodies)``: each body's pose in
        the world (Pinocchio's ``data.oMi[i + 1]``).
      velocities: ``(..., nbodies, 6)`` body spatial velocity ``[ω; v]`` in the body
        frame, or ``None``.
      accelerations: ``(..., nbodies, 6)`` body spatial acceleration in the body frame
        (not the classical acceleration of the origin; gravity not included), or ``None``.
    """

    poses: Plxb
    velocities: jax.Array | None
    accelerations: jax.Array | None


def forward_kinematics(model: Model, q, v=None, a=None, *, method: str = "auto") -> Kinematics:
    """World pose of every body, and body velocities/accelerations when ``v``/``a`` are given.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` generalised velocity, optional.
      a: ``(..., nv)`` generalised acceleration, optional (needs ``v``).
      method: ``"auto"`` (default), ``"scan"``, ``"levels"`` or ``"loop"``
        (docs page ``dynamics.md#tree-sweeps``).

    Returns:
      A [`Kinematics`][spatialjax.multibody.Kinematics], batch axes ``broadcast(q, v, a)``.

    Raises:
      ValueError: shapes that do not fit the model; on concrete input, a zero
        free-flyer quaternion (naming the sample).
      TypeError: non-float inputs or a dtype other than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, forward_kinematics
      >>> m = chain_model(2, length=1.0)         # two revolute-z links, 1 m apart along x
      >>> fk = forward_kinematics(m, jnp.array([jnp.pi / 2, 0.0]))
      >>> fk.poses.r[1].round(6).tolist()        # the 2nd joint sits 1 m along the rotated x
      [0.0, 1.0, 0.0]
    """
    sweep.check_method(method)
    q = sweep.as_input(q, "q", model.nq, model)
    if a is not None and v is None:
        raise ArgumentError("v", "accelerations a need v as well (pass v=zeros)")
    v = None if v is None else sweep.as_input(v, "v", model.nv, model)
    a = None if a is None else sweep.as_input(a, "a", model.nv, model)
    batch = sweep.batch(q=q, v=v, a=a)
    one = v is None and sweep.resolve_method(method, model, batch) == "loop" and _one(batch)
    packed = _onestate.host_terms(model, q) if one else None
    return _fk_kernel(model, q, v, a, packed, batch=batch, method=method)


def _one(batch) -> bool:
    return math.prod(batch) == 1


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _fk_kernel(model: Model, q, v, a, packed=None, *, batch, method) -> Kinematics:
    """``forward_kinematics`` on checked inputs: one compiled program per structure
    (``packed``: the model's one-state terms, ``_onestate.host_terms``)."""
    method = sweep.resolve_method(method, model, batch)
    if method == "loop" and v is None and _one(batch):  # one state: poses only
        K = _onestate.terms(model, _onestate.POSES, packed)
        R, p = _onestate.poses(model, K, q.reshape(-1))
        return Kinematics(Plxb(R.reshape(batch + R.shape), p.reshape(batch + p.shape)), None, None)

    def core(q, v=None, a=None):
        if method == "scan":
            c = sweep.scan_forward(model, q, v, a)
            nb = model.nbodies
            vel = None if v is None else c["V"][:nb]
            acc = None if a is None else c["A"][:nb]
            return *sweep.scan_poses(model, q, c), vel, acc
        E, r = sweep.joint_frames(model, q)
        vff = qd = aff = qdd = None
        if v is not None:
            vff, qd = sweep.split_dofs(model, v)
        if a is not None:
            aff, qdd = sweep.split_dofs(model, a)
        _, inv, Rw, pw, V, A = sweep.forward(
            model, E, r, method, qd=qd, qdd=qdd, vff=vff, aff=aff, a0=None
        )
        vel = None if v is None else sweep.assemble(V, inv)
        acc = None if a is None else sweep.assemble(A, inv)
        return sweep.assemble(Rw, inv), sweep.assemble(pw, inv), vel, acc

    flat = [sweep.flat(x, batch) for x in (q, v, a) if x is not None]
    Rw, pw, vel, acc = sweep.chunked(core, *flat)
    vel = None if vel is None else sweep.unflat_bf(vel, batch)
    acc = None if acc is None else sweep.unflat_bf(acc, batch)
    return Kinematics(Plxb(sweep.unflat_bf(Rw, batch), sweep.unflat_bf(pw, batch)), vel, acc)


@jax.jit
def frame_poses(model: Model, poses: Plxb) -> Plxb:
    """World pose of every frame (``model.frame_names``) from the body poses.

    ``T_world_frame = T_world_body · T_body_frame``; frames on the world keep their placement.

    Args:
      model: the tree.
      poses: body poses of batch ``(..., nbodies)`` (``forward_kinematics(...).poses``).

    Returns:
      ``Plxb`` of batch ``(..., nframes)``.
    """
    fb = np.asarray(model.frame_bodies)
    batch = poses.E.shape[:-3]
    eye = jnp.broadcast_to(jnp.eye(3, dtype=poses.E.dtype), batch + (1, 3, 3))
    zero = jnp.zeros(batch + (1, 3), poses.E.dtype)
    Rb = jnp.concatenate([poses.E, eye], axis=-3)[..., fb, :, :]  # index -1 -> the world
    pb = jnp.concatenate([poses.r, zero], axis=-2)[..., fb, :]
    FR, Fp = model.frame_placements.E, model.frame_placements.r
    R = jnp.sum(Rb[..., :, :, None] * FR[..., None, :, :], axis=-2)
    return Plxb(R, pb + jnp.sum(Rb * Fp[..., None, :], axis=-1))
