"""Frame Jacobians, the centre of mass and its Jacobian.

Jacobian rows are ``[ω; v]`` (angular first; Pinocchio's are ``[v; ω]``), one column
per entry of ``v``; ``reference`` is ``"world"``, ``"local"`` or
``"local_world_aligned"`` as Pinocchio's ``ReferenceFrame``. Batched over the leading
axes of ``q``. Derivation: docs page ``dynamics.md#frame-jacobians``.
"""

from __future__ import annotations

import difflib
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _smallmat as smallmat
from .._checks import is_concrete
from .._errors import ArgumentError, ArgumentTypeError
from . import _onestate
from . import _sweep as sweep
from ._model import Model
from .kinematics import forward_kinematics

REFERENCES = ("world", "local", "local_world_aligned")


# ---------------------------------------------------------------- frame lookup
def _resolve_frame(model: Model, frame) -> tuple[int, int]:
    """``(body, frame index or -1)`` of a frame name, a body name or a body index."""
    if isinstance(frame, (bool, np.bool_)):
        raise ArgumentTypeError("frame", f"expected a frame name or a body index, got {frame!r}")
    if isinstance(frame, (int, np.integer)):
        if not 0 <= int(frame) < model.nbodies:
            raise ArgumentError(
                "frame",
                f"body index {int(frame)} out of range for model {model.name!r} "
                f"(nbodies = {model.nbodies})",
            )
        return int(frame), -1
    if not isinstance(frame, str):
        raise ArgumentTypeError(
            "frame",
            f"expected a frame name (str) or a body index (int), got {type(frame).__name__}",
        )
    if frame in model.frame_names:
        i = model.frame_index(frame)
        return model.frame_bodies[i], i
    if frame in model.body_names:
        return model.body_names.index(frame), -1
    names = list(dict.fromkeys(model.frame_names + model.body_names))
    close = difflib.get_close_matches(frame, names, n=5, cutoff=0.5)
    hint = f"closest: {', '.join(map(repr, close))}" if close else "no close name"
    raise ArgumentError(
        "frame",
        f"no frame or body named {frame!r} in model {model.name!r} ({hint}; "
        "see model.frame_names and model.body_names)",
    )


def _check_reference(reference):
    if reference not in REFERENCES:
        raise ArgumentError("reference", f"expected one of {REFERENCES}, got {reference!r}")


# -------------------------------------------------------------------- helpers
def _dof_layout(model: Model):
    """Static ``(dof_body (nv,), subtree (nb, nb))``: the body of each dof, and
    ``subtree[i, k] = 1`` when body ``k`` is ``i`` or one of its descendants."""
    dof_body = []
    for i, t in enumerate(model.joint_types):
        dof_body += [i] * (6 if t == "free_flyer" else 1)
    nb = model.nbodies
    sub = np.eye(nb)
    for k in range(nb - 1, -1, -1):  # children after parents: accumulate leaves to root
        p = model.parents[k]
        if p >= 0:
            sub[p] += sub[k]
    return np.asarray(dof_body, np.int32), sub


def _ancestors(model: Model, body: int) -> np.ndarray:
    """Static ``(nbodies,)`` mask of ``body`` and its ancestors (all zero for the world)."""
    mask = np.zeros(model.nbodies)
    while body >= 0:
        mask[body] = 1.0
        body = model.parents[body]
    return mask


def _dof_subspaces(model: Model, dtype):
    """``(nv, 6)`` joint motion subspace of each dof in its body's frame, ``[ω; v]``."""
    z = jnp.zeros((3,), dtype)
    rows = []
    for i, t in enumerate(model.joint_types):
        if t == "free_flyer":
            rows += list(jnp.eye(6, dtype=dtype))
        elif t == "prismatic":
            rows.append(jnp.concatenate([z, model.axes[i]]))
        else:
            rows.append(jnp.concatenate([model.axes[i], z]))
    return jnp.stack(rows)


def _world_columns(model: Model, q):
    """World-frame columns ``(ang, lin)`` of every dof, each ``(..., nv, 3)``, and the poses."""
    poses = forward_kinematics(model, q).poses
    dof_body, _ = _dof_layout(model)
    S = _dof_subspaces(model, q.dtype)
    R = poses.E[..., dof_body, :, :]  # (..., nv, 3, 3) R_world_body of each dof's body
    p = poses.r[..., dof_body, :]
    ang = jnp.sum(R * S[:, None, :3], axis=-1)
    lin = jnp.cross(p, ang)
    if any(t in ("prismatic", "free_flyer") for t in model.joint_types):
        # R s_v: zero unless some dof translates (left out otherwise: fewer operations)
        lin = jnp.sum(R * S[:, None, 3:], axis=-1) + lin
    return ang, lin, poses


# ------------------------------------------------------------------ public API
def frame_jacobian(model: Model, q, frame, reference: str = "world") -> jax.Array:
    """Jacobian ``J(q)`` of a frame's spatial velocity, ``[ω; v] = J(q) v``.

    Linear rows as ``reference`` asks: ``"world"`` (the body point at the world origin),
    ``"local_world_aligned"`` (the frame origin, world axes), ``"local"`` (the frame
    origin, frame axes), as Pinocchio's ``ReferenceFrame``.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      frame: a name of ``model.frame_names``, else of ``model.body_names``, or a body index.
      reference: ``"world"`` (default), ``"local"`` or ``"local_world_aligned"``.

    Returns:
      ``(..., 6, nv)``: rows ``[ω; v]``, columns in ``v``'s order (zero for a frame on
      the world).

    Raises:
      ValueError: an unknown frame name (listing the closest names), a body index out
        of range, an unknown ``reference``, or ``q`` of the wrong length.
      TypeError: ``frame`` neither a string nor an int; a non-float ``q`` or one of
        another dtype than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, frame_jacobian
      >>> m = chain_model(2, length=1.0)   # revolute-z joints at x = 0 and x = 1
      >>> J = frame_jacobian(m, jnp.zeros(2), "link1", reference="local_world_aligned")
      >>> J[:, 0].tolist()                 # joint 0 turns link1's origin (1, 0, 0) along +y
      [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    """
    _check_reference(reference)
    body, idx = _resolve_frame(model, frame)
    q = sweep.as_input(q, "q", model.nq, model)
    packed = _onestate.packed_terms("auto", model, tuple(q.shape[:-1]), q)
    return _frame_jacobian_kernel(model, q, packed, body=body, idx=idx, reference=reference)


@functools.partial(jax.jit, static_argnames=("body", "idx", "reference"))
def _frame_jacobian_kernel(model: Model, q, packed=None, *, body, idx, reference):
    batch = q.shape[:-1]
    if sweep.one_state("auto", model, batch):  # world-frame columns of the ancestors only
        names = _onestate.JACOBIAN + ((f"frame{idx}",) if idx >= 0 else ())
        K = _onestate.terms(model, names, packed)
        J = _onestate.frame_jacobian_world(model, K, q.reshape(-1), body, idx, reference)
        return J.reshape(batch + (6, model.nv))
    dt = q.dtype
    ang, lin, poses = _world_columns(model, q)
    dof_body, _ = _dof_layout(model)
    mask = jnp.asarray(_ancestors(model, body)[dof_body], dt)[:, None]
    ang, lin = ang * mask, lin * mask
    if reference != "world":
        if idx >= 0:
            Rf, pf = model.frame_placements.E[idx], model.frame_placements.r[idx]
        else:
            Rf, pf = jnp.eye(3, dtype=dt), jnp.zeros((3,), dt)
        if body >= 0:
            Rb, pb = poses.E[..., body, :, :], poses.r[..., body, :]
            R = smallmat.matmul(Rb, Rf)
            o = pb + jnp.sum(Rb * pf[..., None, :], axis=-1)
        else:
            R, o = jnp.broadcast_to(Rf, q.shape[:-1] + (3, 3)), pf
        lin = lin + jnp.cross(ang, o[..., None, :])  # v_F = v_O + ω × o_F
        if reference == "local":
            ang = jnp.sum(R[..., None, :, :] * ang[..., :, :, None], axis=-2)  # Rᵀ ω
            lin = jnp.sum(R[..., None, :, :] * lin[..., :, :, None], axis=-2)
    return jnp.swapaxes(jnp.concatenate([ang, lin], axis=-1), -1, -2)


def _check_mass(model: Model, name):
    if is_concrete(model.inertia.params):
        total = float(np.sum(np.asarray(model.inertia.params)[..., 0]))
        if not total > 0:
            raise ArgumentError(
                "model",
                f"{model.name!r} has total mass {total} (the bodies' masses, "
                f"world-attached links excluded); {name} needs a positive mass",
            )


def center_of_mass(model: Model, q) -> jax.Array:
    """Centre of mass of the moving bodies in world coordinates.

    ``c = Σ_i (m_i o_i + R_i h_i) / Σ_i m_i`` (Pinocchio's ``centerOfMass``; links welded
    to the world do not count).

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.

    Returns:
      ``(..., 3)`` (m); NaN under a trace when the total mass is not positive.

    Raises:
      ValueError: ``q`` of the wrong length, or (concrete model) a total mass
        that is not positive.
      TypeError: a non-float ``q`` or one of another dtype than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, center_of_mass
      >>> m = chain_model(2, length=1.0)   # two 1 m rods along x: c = (0.5 + 1.5) / 2
      >>> center_of_mass(m, jnp.zeros(2)).tolist()
      [1.0, 0.0, 0.0]
    """
    _check_mass(model, "center_of_mass")
    q = sweep.as_input(q, "q", model.nq, model)
    return _com_kernel(model, q)


def _first_moments(model: Model, poses):
    """``(m (nb,), s (..., nb, 3))``: body masses and world first moments ``m o + R h``."""
    prm = model.inertia.params
    m, h = prm[..., 0], prm[..., 1:4]
    s = m[:, None] * poses.r + jnp.sum(poses.E * h[:, None, :], axis=-1)
    return m, s


def _safe_div(x, total):
    ok = total > 0
    return jnp.where(ok, x / jnp.where(ok, total, 1.0), jnp.nan)


@jax.jit
def _com_kernel(model: Model, q):
    poses = forward_kinematics(model, q).poses
    m, s = _first_moments(model, poses)
    return _safe_div(jnp.sum(s, axis=-2), jnp.sum(m))


def center_of_mass_jacobian(model: Model, q) -> jax.Array:
    """Jacobian of the centre of mass, ``ċ = J_c(q) v`` in world coordinates.

    Pinocchio's ``jacobianCenterOfMass``.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.

    Returns:
      ``(..., 3, nv)``, columns in ``v``'s order.

    Raises:
      ValueError: ``q`` of the wrong length, or (concrete model) a total mass
        that is not positive (NaN under a trace).
      TypeError: a non-float ``q`` or one of another dtype than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, center_of_mass_jacobian
      >>> m = chain_model(2, length=1.0)   # turning joint 0 moves the CoM (1, 0, 0) along +y
      >>> center_of_mass_jacobian(m, jnp.zeros(2))[:, 0].tolist()
      [0.0, 1.0, 0.0]
    """
    _check_mass(model, "center_of_mass_jacobian")
    q = sweep.as_input(q, "q", model.nq, model)
    return _com_jacobian_kernel(model, q)


@jax.jit
def _com_jacobian_kernel(model: Model, q):
    ang, lin, poses = _world_columns(model, q)
    dof_body, sub = _dof_layout(model)
    m, s = _first_moments(model, poses)
    sub = jnp.asarray(sub, q.dtype)
    M_sub = smallmat.matmul(sub, m)[dof_body]  # (nv,) mass each dof moves
    s_sub = jnp.einsum("ik,...kj->...ij", sub, s, precision=smallmat.FULL)
    s_sub = s_sub[..., dof_body, :]  # (..., nv, 3)
    cols = M_sub[:, None] * lin + jnp.cross(ang, s_sub)
    return _safe_div(jnp.swapaxes(cols, -1, -2), jnp.sum(m))
