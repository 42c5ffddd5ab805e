"""Build a [`Model`][spatialjax.multibody.Model] from a Pinocchio or a MuJoCo model.

Each converter imports its library when called (``pip install spatialjax[interop]``).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .._errors import ArgumentError, ArgumentTypeError
from .._rotations import axis_rotation, quat_wxyz_to_matrix
from ._build import link_params
from ._model import JOINT_DYNAMICS_DEFAULTS, Model, build_model

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
    raise ArgumentError(
        "pin_model",
        f"joint {name!r} is a {short}, which spatialjax.multibody does not "
        "support (supported: revolute, continuous and prismatic joints, a free-flyer root)",
    )


def from_pinocchio(pin_model, *, dtype=None) -> Model:
    """Convert a ``pinocchio.Model`` (joints, placements, inertias, body frames).

    Pinocchio joint ``i ≥ 1`` becomes body ``i - 1``; bodies on the universe are dropped;
    ``BODY`` frames become the model's frames; Pinocchio's ``±max`` limits become ±inf.

    Args:
      pin_model: a ``pinocchio.Model``.
      dtype: the model's float dtype (default: JAX's default float).

    Returns:
      The [`Model`][spatialjax.multibody.Model].

    Raises:
      ValueError: a joint type other than revolute, prismatic, or a root free flyer.
      ImportError: Pinocchio is not installed.
    """
    import pinocchio as pin

    nj = pin_model.njoints
    parents, types, axes, jn, PR, Pp, params = [], [], [], [], [], [], []
    dyn = []
    for i in range(1, nj):
        name = pin_model.names[i]
        t, axis = _joint(pin_model.joints[i], name)
        dyn.append({} if t == "free_flyer" else _pin_joint_dynamics(pin_model, i))
        if t == "free_flyer" and (i != 1 or pin_model.parents[i] != 0):
            raise ArgumentError("pin_model", f"free flyer {name!r} is not the root joint")
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
    return build_model(
        name=pin_model.name,
        parents=parents,
        joint_types=types,
        joint_names=jn,
        body_names=bnames,
        placement_R=PR,
        placement_p=Pp,
        axes=axes,
        params=params,
        frame_names=fnames,
        frame_bodies=fbodies,
        frame_R=FR,
        frame_p=Fp,
        joint_dynamics={f: [d.get(f) for d in dyn] for f in JOINT_DYNAMICS_DEFAULTS},
        dtype=dtype,
    )


def _unbounded(x, sign):
    """Pinocchio's "no limit" (``±numeric_limits::max``) as ``±inf``."""
    x = float(x)
    return sign * math.inf if abs(x) >= 1e300 else x


def _pin_joint_dynamics(pm, i):
    """A one-dof Pinocchio joint's armature, damping, friction and limits."""
    iv, iq = int(pm.idx_vs[i]), int(pm.idx_qs[i])
    return {
        "armature": float(pm.armature[iv]),
        "damping": float(pm.damping[iv]),
        "friction": float(pm.friction[iv]),
        "lower": _unbounded(pm.lowerPositionLimit[iq], -1.0),
        "upper": _unbounded(pm.upperPositionLimit[iq], 1.0),
        "velocity_limit": _unbounded(pm.velocityLimit[iv], 1.0),
        "effort_limit": _unbounded(pm.effortLimit[iv], 1.0),
    }


# MuJoCo's mjtJoint values (mjJNT_FREE, mjJNT_BALL, mjJNT_SLIDE, mjJNT_HINGE)
_MJ_FREE, _MJ_BALL, _MJ_SLIDE, _MJ_HINGE = 0, 1, 2, 3


def _mj_name(mj_model, kind, i):
    name = (mj_model.body(i) if kind == "body" else mj_model.joint(i)).name
    return name or f"<{kind} {i}>"


def from_mujoco(mj_model, *, dtype=None) -> Model:
    r"""Convert a compiled ``mujoco.MjModel`` (its kinematic tree and body inertias).

    MuJoCo's body order is kept; jointless bodies are welded into their parent. A
    hinge's or slide's ``q`` equals MuJoCo's ``qpos``; a free joint's ``v`` is
    ``[ω; Rᵀṗ]`` (body axes) where MuJoCo's ``qvel`` is ``[ṗ; ω]``. Fields read
    and frames: docs page ``model-files.md#from-mujoco``.

    Args:
      mj_model: a ``mujoco.MjModel`` (e.g. ``mujoco.MjModel.from_xml_path``).
      dtype: the model's float dtype (default: JAX's default float).

    Returns:
      The [`Model`][spatialjax.multibody.Model].

    Raises:
      ImportError: the ``mujoco`` package is not installed.
      TypeError: ``mj_model`` is not a ``mujoco.MjModel``.
      ValueError: a ``ball`` joint, a body with several joints, a free joint
        that is not the first body's, or no joint at all (each named).
    """
    m = _require_mj_model(mj_model)
    tree, attach = _mj_tree(m)
    nb = len(tree.parents)
    if nb == 0:
        raise ArgumentError(
            "mj_model", "the model has no joint (every body is welded to the world)"
        )
    params = _mj_params(m, attach, nb)
    fnames, fattach = _mj_frames(m, attach)
    names = bytes(m.names)
    return build_model(
        name=names[: names.index(b"\0")].decode() if b"\0" in names else "",
        parents=tree.parents,
        joint_types=tree.types,
        joint_names=tree.jnames,
        body_names=tree.bnames,
        placement_R=tree.PR,
        placement_p=tree.Pp,
        axes=tree.axes,
        params=params,
        frame_names=fnames,
        frame_bodies=[a[0] for a in fattach],
        frame_R=[a[1] for a in fattach],
        frame_p=[a[2] for a in fattach],
        joint_dynamics={f: [d.get(f) for d in tree.dyn] for f in JOINT_DYNAMICS_DEFAULTS},
        dtype=dtype,
    )


def _require_mj_model(mj_model):
    """``mj_model`` itself, or an ImportError (no ``mujoco``) or a TypeError (not an MjModel)."""
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "from_mujoco needs the `mujoco` package (pip install mujoco, or "
            "pip install 'spatialjax[interop]')"
        ) from e
    if not isinstance(mj_model, mujoco.MjModel):  # pyright: ignore[reportAttributeAccessIssue]
        raise ArgumentTypeError(
            "mj_model", f"expected a mujoco.MjModel, got {type(mj_model).__name__}"
        )
    return mj_model


def _mj_tree(m):
    """The bodies of a MuJoCo model: ``(tree, attach)``, per-body lists and frame placements."""
    attach = [(-1, np.eye(3), np.zeros(3))]
    tree = SimpleNamespace(parents=[], types=[], jnames=[], bnames=[], PR=[], Pp=[], axes=[],
                           dyn=[])  # fmt: skip
    for b in range(1, m.nbody):
        name = _mj_name(m, "body", b)
        k_par, R_par, p_par = attach[int(m.body_parentid[b])]
        R_B = R_par @ quat_wxyz_to_matrix(m.body_quat[b])
        p_B = p_par + R_par @ np.asarray(m.body_pos[b], float)
        nj = int(m.body_jntnum[b])
        if nj == 0:
            attach.append((k_par, R_B, p_B))
            continue
        j0 = int(m.body_jntadr[b])
        if nj > 1:
            listed = ", ".join(repr(_mj_name(m, "joint", j)) for j in range(j0, j0 + nj))
            raise ArgumentError(
                "mj_model",
                f"body {name!r} has {nj} joints ({listed}); spatialjax.multibody "
                "supports one joint per body (split them into nested bodies)",
            )
        jt, jname = int(m.jnt_type[j0]), _mj_name(m, "joint", j0)
        if jt == _MJ_FREE:
            if tree.parents or k_par != -1:
                raise ArgumentError(
                    "mj_model",
                    f"joint {jname!r} of body {name!r} is a free joint that is not "
                    "the first moving body's: a free flyer can only be the root (one free "
                    "body per model)",
                )
            tree.parents.append(-1)
            tree.types.append("free_flyer")
            tree.jnames.append(jname)
            tree.bnames.append(name)
            tree.PR.append(np.eye(3))
            tree.Pp.append(np.zeros(3))
            tree.axes.append(np.zeros(3))
            tree.dyn.append({})
            attach.append((0, np.eye(3), np.zeros(3)))
            continue
        if jt not in (_MJ_HINGE, _MJ_SLIDE):
            kind = "ball" if jt == _MJ_BALL else f"type {jt}"
            raise ArgumentError(
                "mj_model",
                f"joint {jname!r} of body {name!r} is a {kind} joint, which "
                "spatialjax.multibody does not support (supported: hinge, slide, free)",
            )
        jtype, R, p, axis, jpos = _mj_hinge_or_slide(m, j0, jt, R_B, p_B)
        tree.PR.append(R)
        tree.Pp.append(p)
        tree.types.append(jtype)
        tree.parents.append(k_par)
        tree.jnames.append(jname)
        tree.bnames.append(name)
        tree.axes.append(axis)
        tree.dyn.append(_mj_joint_dynamics(m, j0))
        attach.append((len(tree.parents) - 1, np.eye(3), -jpos))
    return tree, attach


def _mj_hinge_or_slide(m, j0, jt, R_B, p_B):
    """``(type, R, p, axis, jpos)`` of hinge or slide ``j0``, shifted by ``−qpos0``."""
    axis = np.asarray(m.jnt_axis[j0], float)
    axis = axis / np.linalg.norm(axis)
    jpos = np.asarray(m.jnt_pos[j0], float)
    q0 = float(m.qpos0[int(m.jnt_qposadr[j0])])
    p_J = p_B + R_B @ jpos
    if jt == _MJ_HINGE:
        return "revolute", R_B @ axis_rotation(axis, -q0), p_J, axis, jpos
    return "prismatic", R_B, p_J - q0 * (R_B @ axis), axis, jpos


def _mj_joint_dynamics(m, j0):
    """A hinge's or slide's armature, damping, friction and (when limited) range."""
    iv = int(m.jnt_dofadr[j0])
    d = {
        "armature": float(m.dof_armature[iv]),
        "damping": float(m.dof_damping[iv]),
        "friction": float(m.dof_frictionloss[iv]),
    }
    if bool(m.jnt_limited[j0]):
        d["lower"], d["upper"] = (float(x) for x in m.jnt_range[j0])
    return d


def _mj_params(m, attach, nb):
    """``(nb, 10)`` inertial parameters: every body's inertia, welded ones into their body's."""
    params = np.zeros((nb, 10))
    for b in range(1, m.nbody):
        k, R, p = attach[b]
        mass = float(m.body_mass[b])
        if k < 0 or mass == 0.0:
            continue
        Rb = quat_wxyz_to_matrix(m.body_iquat[b])  # principal axes in the MJCF body frame
        link = SimpleNamespace(
            mass=mass,
            com=np.asarray(m.body_ipos[b], float),
            inertia_com=Rb @ np.diag(np.asarray(m.body_inertia[b], float)) @ Rb.T,
        )
        params[k] += link_params(link, R, p)
    return params


def _mj_frames(m, attach):
    """Frame names and ``(body, R, p)``: every MuJoCo body frame B, then every named site
    (``site_pos``/``site_quat``: in B)."""
    fnames = [_mj_name(m, "body", b) for b in range(1, m.nbody)]
    fattach = list(attach[1:])
    for s in range(m.nsite):
        sname = m.site(s).name
        if not sname:
            continue
        k, R, p = attach[int(m.site_bodyid[s])]
        fnames.append(sname)
        fattach.append(
            (k, R @ quat_wxyz_to_matrix(m.site_quat[s]), p + R @ np.asarray(m.site_pos[s], float))
        )
    return fnames, fattach
