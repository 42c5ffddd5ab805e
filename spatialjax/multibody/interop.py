"""Build a :class:`~spatialjax.multibody.Model` from a Pinocchio model (lazy import)."""

from __future__ import annotations

import numpy as np

from ._model import Model, build_model

_REVOLUTE = {"JointModelRX": (1, 0, 0), "JointModelRY": (0, 1, 0), "JointModelRZ": (0, 0, 1)}
_CONTINUOUS = {
    "JointModelRUBX": (1, 0, 0),
    "JointModelRUBY": (0, 1, 0),
    "JointModelRUBZ": (0, 0, 1),
}
_PRISMATIC = {"JointModelPX": (1, 0, 0), "JointModelPY": (0, 1, 0), "JointModelPZ": (0, 0, 1)}


def _joint(jm, name):
    short = jm.shortname()
    if short in _REVOLUTE:
        return "revolute", np.array(_REVOLUTE[short], float)
    if short in _CONTINUOUS:
        return "continuous", np.array(_CONTINUOUS[short], float)
    if short in _PRISMATIC:
        return "prismatic", np.array(_PRISMATIC[short], float)
    if short in ("JointModelRevoluteUnaligned", "JointModelRevoluteUnboundedUnaligned"):
        kind = "revolute" if short == "JointModelRevoluteUnaligned" else "continuous"
        return kind, np.asarray(jm.axis, float).reshape(3)
    if short == "JointModelPrismaticUnaligned":
        return "prismatic", np.asarray(jm.axis, float).reshape(3)
    if short == "JointModelFreeFlyer":
        return "free_flyer", np.zeros(3)
    raise ValueError(
        f"from_pinocchio: joint {name!r} is a {short}, which spatialjax.multibody does not "
        "support (supported: revolute, continuous and prismatic joints, a free-flyer root)"
    )


def from_pinocchio(pin_model, *, dtype=None) -> Model:
    """Convert a ``pinocchio.Model`` (joints, placements, inertias, body frames).

    Pinocchio joint ``i ≥ 1`` becomes body ``i - 1`` with the same placement
    (``jointPlacements[i]``: pose of the joint frame in the parent joint's
    frame) and inertia (``inertias[i].toDynamicParameters()``, about the joint
    frame's origin). Bodies attached to the universe (Pinocchio joint 0) carry
    no dynamics and are dropped. Frames of type ``BODY`` become the model's
    frames.

    Raises:
      ValueError: a joint type other than revolute (aligned or not, bounded or
        continuous), prismatic, or a free flyer at the root.
      ImportError: Pinocchio is not installed.
    """
    import pinocchio as pin

    nj = pin_model.njoints
    parents, types, axes, jn, PR, Pp, params = [], [], [], [], [], [], []
    for i in range(1, nj):
        name = pin_model.names[i]
        t, axis = _joint(pin_model.joints[i], name)
        if t == "free_flyer" and (i != 1 or pin_model.parents[i] != 0):
            raise ValueError(f"from_pinocchio: free flyer {name!r} is not the root joint")
        parents.append(int(pin_model.parents[i]) - 1)
        types.append(t)
        axes.append(axis)
        jn.append(name)
        M = pin_model.jointPlacements[i]
        PR.append(np.asarray(M.rotation))
        Pp.append(np.asarray(M.translation))
        params.append(np.asarray(pin_model.inertias[i].toDynamicParameters()).reshape(10))
    fnames, fbodies, FR, Fp = [], [], [], []
    for f in pin_model.frames:
        if f.type != pin.FrameType.BODY:  # pyright: ignore[reportAttributeAccessIssue]
            continue
        fnames.append(f.name)
        fbodies.append(int(f.parentJoint) - 1)
        FR.append(np.asarray(f.placement.rotation))
        Fp.append(np.asarray(f.placement.translation))
    # body names: the BODY frame placed on each joint at the identity, else the joint name
    bnames = list(jn)
    for name, b, R, p in zip(fnames, fbodies, FR, Fp, strict=True):
        if b >= 0 and bnames[b] == jn[b] and np.allclose(R, np.eye(3)) and not np.any(p):
            bnames[b] = name
    nb, nf = len(parents), len(fnames)
    return build_model(
        name=pin_model.name,
        parents=parents,
        joint_types=types,
        joint_names=jn,
        body_names=bnames,
        placement_R=np.array(PR).reshape(nb, 3, 3),
        placement_p=np.array(Pp).reshape(nb, 3),
        axes=np.array(axes).reshape(nb, 3),
        params=np.array(params).reshape(nb, 10),
        frame_names=fnames,
        frame_bodies=fbodies,
        frame_R=np.array(FR).reshape(nf, 3, 3),
        frame_p=np.array(Fp).reshape(nf, 3),
        dtype=dtype,
    )
