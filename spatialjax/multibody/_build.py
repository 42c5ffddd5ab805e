"""From a model file's description to the arguments of a [`Model`][spatialjax.multibody.Model].

Depth-first body numbering, joint frames as body frames, fixed and locked
joints merged (RBDA §6.2): docs page ``model-files.md#building-the-model``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .._errors import ArgumentError, ArgumentTypeError
from .._rotations import axis_rotation
from ..io import ModelFileError

#: the error for a description that yields no moving body, per format (URDF: none)
_NO_MOVABLE = {
    "mjcf": "the model has no movable joint (every body is welded to the world)",
    "sdf": "model {name!r} has no movable joint (every link is fixed)",
}


def link_params(link, R, p):
    """10-vector of a ``LinkInertial`` placed at pose ``(R, p)`` in a body."""
    m = link.mass
    c = R @ link.com + p
    I_c = R @ link.inertia_com @ R.T
    I_o = I_c + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


def locked_mapping(locked_joints) -> dict:
    """``locked_joints`` as a new dict; a ``TypeError`` unless it is a mapping (or None)."""
    if locked_joints is None:
        return {}
    if not isinstance(locked_joints, Mapping):
        raise ArgumentTypeError(
            "locked_joints",
            "expected a mapping {joint name: value} (rad or m), got "
            f"{type(locked_joints).__name__} {locked_joints!r}",
        )
    return dict(locked_joints)


def check_locked(locked_joints, desc) -> dict:
    """``{joint name: float value}`` of ``locked_joints``, checked against the description.

    Raises:
      TypeError: not a mapping, or a value that is not a number.
      ValueError: a fixed joint, a name that is no movable joint, a non-finite value.
    """
    locked = locked_mapping(locked_joints)
    movable = [j.name for j in desc.joints if j.type not in ("fixed", "free_flyer")]
    fixed = {j.name for j in desc.joints if j.type == "fixed" and j.name is not None}
    for name, value in locked.items():
        if name in fixed:
            raise ArgumentError("locked_joints", f"joint {name!r} in {desc.path} is already fixed")
        if name not in movable:
            if desc.format == "urdf":
                raise ArgumentError(
                    "locked_joints",
                    f"no joint named {name!r} in {desc.path} (movable joints: "
                    f"{', '.join(movable)})",
                )
            raise ArgumentError(
                "locked_joints",
                f"no movable joint named {name!r} in {desc.path} (movable "
                f"joints: {', '.join(movable) or 'none'})",
            )
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"locked_joints[{name!r}]: expected a number, got {type(value).__name__}"
            ) from None
        if not math.isfinite(value):
            raise ValueError(f"locked_joints[{name!r}]: expected a finite value, got {value}")
        locked[name] = value
    return locked


def model_arguments(desc, *, locked_joints=None, floating_base=False) -> dict:
    """The keyword arguments of ``build_model`` (but ``dtype``) for a ``tree=True`` description.

    Raises:
      ValueError: ``floating_base`` with a tree rooted at the world, a bad
        ``locked_joints`` entry; ``ModelFileError``: no moving body (SDF, MJCF).
      TypeError: ``locked_joints`` not a mapping ``{name: value}``.
    """
    if floating_base and all(link.name != desc.root for link in desc.links):  # root: the world
        raise ArgumentError(
            "floating_base",
            f"model {desc.name!r} in {desc.path} is attached to the world by "
            "joints (<parent>world); floating_base=True needs a root link",
        )
    locked = check_locked(locked_joints, desc)
    children = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j)
    if desc.siblings_by_name:  # urdfdom's std::map order (Pinocchio's numbering)
        for lst in children.values():
            lst.sort(key=lambda j: j.name.encode("utf-8"))
    I3, z3 = np.eye(3), np.zeros(3)
    attach = {}  # link -> (body, R, p): pose of the link frame in its body's frame
    bodies = []  # (parent, joint type, joint name, body name, R, p, axis, file's dynamics)

    def add_body(*row):
        bodies.append(row)
        return len(bodies) - 1

    # the root link is the world frame (or the world is), or a free flyer moves it
    root = (
        add_body(-1, "free_flyer", "root_joint", desc.root, I3, z3, z3, {}) if floating_base else -1
    )
    attach[desc.root] = (root, I3, z3)

    def visit(link):
        b, R_bl, p_bl = attach[link]
        for j in children.get(link, ()):
            R_bj = R_bl @ j.rotation  # joint frame in the body frame
            p_bj = p_bl + R_bl @ j.translation
            if j.type not in ("fixed", "free_flyer") and j.name not in locked:
                k = add_body(b, j.type, j.name, j.child, R_bj, p_bj, j.axis, j.dynamics)
                attach[j.child] = (k, j.child_rotation, j.child_translation)
            elif j.type == "free_flyer":  # the world's child: the file's pose is qpos0
                k = add_body(-1, j.type, j.name, j.child, I3, z3, z3, {})
                attach[j.child] = (k, I3, z3)
            else:  # merged at the locked value (0 for a fixed joint)
                val = locked.get(j.name, 0.0)
                R_q, p_q = I3, z3
                if j.type == "prismatic":
                    p_q = val * j.axis
                elif j.type != "fixed":
                    R_q = axis_rotation(j.axis, val)
                R_c = R_bj @ R_q
                attach[j.child] = (
                    b,
                    R_c @ j.child_rotation,
                    p_bj + R_bj @ p_q + R_c @ j.child_translation,
                )
            visit(j.child)

    visit(desc.root)
    nb = len(bodies)
    if nb == 0 and desc.format in _NO_MOVABLE:
        line = desc.line if desc.format == "sdf" else None
        raise ModelFileError(desc.path, _NO_MOVABLE[desc.format].format(name=desc.name), line=line)
    params = np.zeros((nb, 10))
    for link in desc.links:
        b, R, p = attach[link.name]
        if b >= 0 and link.inertial is not None:
            params[b] += link_params(link.inertial, R, p)
    fnames = [link.name for link in desc.links]
    fattach = [attach[n] for n in fnames]
    for f in desc.frames:
        b, R, p = attach[f.link]
        fnames.append(f.name)
        fattach.append((b, R @ f.rotation, p + R @ f.translation))
    parents, types, jnames, bnames, PR, Pp, axes, dyn = (
        (list(c) for c in zip(*bodies, strict=True)) if bodies else [[]] * 8
    )
    return dict(
        name=desc.name,
        parents=parents,
        joint_types=types,
        joint_names=jnames,
        body_names=bnames,
        placement_R=PR,
        placement_p=Pp,
        axes=axes,
        params=params,
        frame_names=fnames,
        frame_bodies=[a[0] for a in fattach],
        frame_R=[a[1] for a in fattach],
        frame_p=[a[2] for a in fattach],
        joint_dynamics={f: [d.get(f) for d in dyn] for f in {k for d in dyn for k in d}},
    )
