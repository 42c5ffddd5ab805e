"""MJCF (MuJoCo) kinematic-tree reader for :meth:`spatialjax.multibody.Model.from_mjcf`.

Reads the bodies nested in ``<worldbody>`` with the project's XML parser
(``spatialjax.io``: standard library ``expat``, line numbers kept) and their
``<inertial>`` with the reader of :mod:`spatialjax.io` (``pos``, ``quat`` in
``w x y z``, ``euler`` per the compiler's ``angle`` and ``eulerseq``,
``diaginertia``/``fullinertia``). MJCF elements used
(https://mujoco.readthedocs.io/en/stable/XMLreference.html)::

    <body name="B" pos="x y z" quat="w x y z">   <!-- or euler/axisangle/xyaxes/zaxis -->
      <joint name="j" type="hinge|slide|free|ball" pos="x y z" axis="0 0 1"/>
      <inertial pos="..." mass="..." diaginertia="..."/>
      <body ...> ... </body>
    </body>

* A body's ``pos`` and orientation place its frame ``B`` in its parent's
  frame. ``hinge`` (revolute) is a rotation about ``axis`` (body axes) through
  the point ``pos`` of ``B``; ``slide`` (prismatic) a translation along
  ``axis``; ``free`` (or ``<freejoint/>``) a free flyer, allowed only on a
  child of ``<worldbody>``. Joint dynamics: ``armature``, ``damping`` and
  ``frictionloss`` (Coulomb) become the :class:`~spatialjax.multibody.Model`
  fields of the same meaning (``friction`` for ``frictionloss``); ``range``
  gives ``lower``/``upper`` when the joint is limited (``limited="true"``, or
  ``"auto"`` with ``<compiler autolimits="true">``, MuJoCo's default), in
  degrees for hinges unless ``<compiler angle="radian">``. MJCF has no
  velocity or effort limit on a joint (inf; actuator ``forcerange`` is not
  read). A free joint's dynamics are not read (0). Joint attributes missing
  on the element are taken from the default classes
  (``<default class=...><joint .../>``, the joint's ``class``, else the
  nearest enclosing body's ``childclass``, else the main default), then from
  MuJoCo's defaults (``type="hinge"``, ``pos="0 0 0"``, ``axis="0 0 1"``).
* **Body frame.** The spatialjax body frame of a body with a hinge or slide
  joint is ``B`` translated to the joint's ``pos`` (same axes as ``B``), so
  that the joint axis passes through the frame origin as
  :class:`~spatialjax.multibody.Model` requires; with ``pos="0 0 0"`` (the
  MuJoCo default) it is ``B`` itself. The inertia and the child bodies'
  placements are moved to that frame; ``frame_placements`` holds ``B`` in it.
  This is the joint frame Pinocchio's ``buildModelFromMJCF`` uses.
* A body without a joint is welded (merged) into its parent body (composite
  inertia, RBDA §6.2); children of ``<worldbody>`` without a joint are world
  frames and carry no dynamics. A free joint's body frame is ``B``; its
  ``pos``/``quat`` in the file are MuJoCo's ``qpos0`` (the initial pose), not
  a placement, so the free flyer's placement is the identity.
* A body without ``<inertial>`` is treated as **massless** here (MuJoCo would
  infer its inertia from its geoms at compile time, which this reader does
  not do; ``<compiler inertiafromgeom="true">`` is not applied either).
  ``<include>``, ``<attach>``, ``<replicate>`` and ``<frame>`` are not
  expanded: they raise :class:`~spatialjax.io.ModelFileError`.
* Bodies are numbered depth first in document order (MuJoCo's body order, and
  Pinocchio's). Unsupported: ``ball`` joints and bodies with several joints
  (both raise :class:`~spatialjax.io.ModelFileError` naming file, line and
  joint).
"""

from __future__ import annotations

import math

import numpy as np

from ..io import ModelFileError
from ..io._common import Ctx, parse_numbers, read_bytes
from ..io._mjcf import _compiler, _orientation, _read_inertial
from ..io._xml import parse_xml
from ._model import JOINT_DYNAMICS_DEFAULTS, build_model
from ._urdf import axis_rotation, link_params

_JOINT_ATTRS = ("type", "pos", "axis", "armature", "damping", "frictionloss", "range", "limited")


def _autolimits(root) -> bool:
    """``<compiler autolimits>`` (MuJoCo's default ``true``: a ``range`` implies ``limited``)."""
    value = True
    for comp in root.iter("compiler"):
        if "autolimits" in comp.attrib:
            value = comp.attrib["autolimits"].strip() == "true"
    return value


def _joint_dynamics(attrs, jtype, name, ctx, degree, autolimits):
    """``{Model field: value}`` from a hinge/slide joint's resolved attributes."""
    out = {}
    for attr, field in (("armature", "armature"), ("damping", "damping"),
                        ("frictionloss", "friction")):  # fmt: skip
        if attr in attrs:
            fctx = ctx.at(field=f"joint[{name}]/{attr}")
            (x,) = parse_numbers(attrs[attr], fctx, 1)
            if not math.isfinite(x) or x < 0:
                raise fctx.error(f"joint {name!r}: {attr}={x} (expected a finite value >= 0)")
            out[field] = float(x)
    limited = attrs.get("limited", "auto").strip()
    if limited not in ("true", "false", "auto"):
        raise ctx.at(field=f"joint[{name}]/limited").error(
            f"joint {name!r}: limited={limited!r} (expected true, false or auto)"
        )
    if limited == "true" or (limited == "auto" and autolimits and "range" in attrs):
        rctx = ctx.at(field=f"joint[{name}]/range")
        lo, hi = parse_numbers(attrs.get("range", "0 0"), rctx, 2)
        if jtype == "hinge" and degree:
            lo, hi = math.radians(lo), math.radians(hi)
        if not lo < hi:
            raise rctx.error(f"joint {name!r}: range lower {lo} must be below upper {hi}")
        out["lower"], out["upper"] = float(lo), float(hi)
    return out


def check_locked(locked_joints, movable, fixed, path):
    """Validate ``locked_joints`` against the movable joint names of a file (shared by loaders)."""
    locked = dict(locked_joints or {})
    for name, value in locked.items():
        if name in fixed:
            raise ValueError(f"locked_joints: joint {name!r} in {path} is already fixed")
        if name not in movable:
            raise ValueError(
                f"locked_joints: no movable joint named {name!r} in {path} (movable joints: "
                f"{', '.join(movable) or 'none'})"
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


def _defaults(root):
    """``{class name: {joint attribute: text}}`` with class inheritance resolved."""
    classes = {}

    def visit(node, inherited):
        name = node.attrib.get("class", "main")
        own = dict(inherited)
        for j in node.findall("joint"):
            own.update({k: v for k, v in j.attrib.items() if k in _JOINT_ATTRS})
        classes[name] = own
        for child in node.findall("default"):
            visit(child, own)

    for d in root.findall("default"):
        visit(d, {})
    return classes


def load_mjcf_model(path, *, locked_joints=None, dtype=None):
    """Read an MJCF kinematic tree into a :class:`~spatialjax.multibody.Model` (module doc)."""
    data = read_bytes(path)
    root = parse_xml(data, path)
    if root.tag != "mujoco":
        raise ModelFileError(
            path, f"expected an MJCF file (root element <mujoco>), got <{root.tag}>", line=root.line
        )
    degree, eulerseq, notes = _compiler(root, path)
    for tag in ("include", "attach", "replicate"):
        for node in root.iter(tag):
            raise ModelFileError(
                path,
                f"<{tag}> is not expanded by Model.from_mjcf (its bodies would be missing); "
                "expand it first, e.g. by saving the model from MuJoCo",
                line=node.line,
                field=tag,
            )
    classes = _defaults(root)
    autolim = _autolimits(root)
    model_name = root.attrib.get("model", "")

    # pass 1: bodies and joints, in document order
    bodies = []  # (name, node, parent index or -1, joint record or None, childclass)
    joints = {}
    counter = {"body": 0, "joint": 0}

    def read_joint(jel, body_name, childclass):
        counter["joint"] += 1
        name = jel.attrib.get("name") or f"<joint {counter['joint'] - 1}>"
        ctx = Ctx(path, jel.line, body_name, f"joint[{name}]")
        if name in joints:
            raise ctx.error(f"duplicate joint name {name!r} (first on line {joints[name][5]})")
        if jel.tag == "freejoint":
            attrs = {"type": "free"}
        else:
            cls = jel.attrib.get("class", childclass)
            if cls not in classes and cls != "main":
                raise ctx.at(field=f"joint[{name}]/class").error(f"unknown default class {cls!r}")
            attrs = dict(classes.get(cls, {}))
            attrs.update({k: v for k, v in jel.attrib.items() if k in _JOINT_ATTRS})
        jtype = attrs.get("type", "hinge").strip()
        if jtype not in ("hinge", "slide", "free"):
            what = "a MuJoCo joint type" if jtype == "ball" else "not a MuJoCo joint type"
            raise ctx.at(field=f"joint[{name}]/type").error(
                f"joint {name!r} has type {jtype!r} ({what}), which Model.from_mjcf does not "
                "support (supported: hinge, slide, free)"
            )
        pos = np.zeros(3)
        axis = np.array([0.0, 0.0, 1.0])
        if jtype != "free":
            if "pos" in attrs:
                pos = parse_numbers(attrs["pos"], ctx.at(field=f"joint[{name}]/pos"), 3)
            if "axis" in attrs:
                actx = ctx.at(field=f"joint[{name}]/axis")
                axis = parse_numbers(attrs["axis"], actx, 3)
                norm = float(np.linalg.norm(axis))
                if norm == 0.0:
                    raise actx.error(f"joint {name!r} has a zero axis")
                axis = axis / norm
        dyn = {} if jtype == "free" else _joint_dynamics(attrs, jtype, name, ctx, degree, autolim)
        rec = (name, jtype, pos, axis, jel, jel.line, dyn)
        joints[name] = rec
        return rec

    def visit(node, parent, childclass):
        for el in node.children:
            if el.tag == "frame":
                raise ModelFileError(
                    path, "<frame> elements are not supported by Model.from_mjcf", line=el.line
                )
            if el.tag != "body":
                continue
            counter["body"] += 1
            name = el.attrib.get("name") or f"<body {counter['body']}>"
            cc = el.attrib.get("childclass", childclass)
            jels = [c for c in el.children if c.tag in ("joint", "freejoint")]
            recs = [read_joint(j, name, cc) for j in jels]
            if len(recs) > 1:
                listed = ", ".join(f"{r[0]!r} (line {r[5]})" for r in recs)
                raise ModelFileError(
                    path,
                    f"body {name!r} has {len(recs)} joints ({listed}); Model.from_mjcf "
                    "supports one joint per body (split them into nested bodies)",
                    line=recs[1][5],
                    link=name,
                    field=f"joint[{recs[1][0]}]",
                )
            rec = recs[0] if recs else None
            if rec is not None and rec[1] == "free" and parent != -1:
                raise ModelFileError(
                    path,
                    f"joint {rec[0]!r} is a free joint of body {name!r}, which is not a child "
                    "of <worldbody>: a free flyer can only be the root joint",
                    line=rec[5],
                    link=name,
                    field=f"joint[{rec[0]}]/type",
                )
            k = len(bodies)
            bodies.append((name, el, parent, rec, cc))
            visit(el, k, cc)

    worlds = root.findall("worldbody")
    if not worlds:
        raise ModelFileError(path, "the MJCF file has no <worldbody>", line=root.line)
    for w in worlds:
        visit(w, -1, "main")
    if not bodies:
        raise ModelFileError(path, "<worldbody> has no <body>", line=worlds[0].line)

    movable = [r[0] for r in joints.values() if r[1] != "free"]
    locked = check_locked(locked_joints, movable, (), path)
    for name in locked_joints or {}:
        if joints.get(name, (None, ""))[1] == "free":
            raise ValueError(f"locked_joints: joint {name!r} in {path} is a free joint")

    # pass 2: spatialjax bodies (attach[i] = (body, R, p): MJCF body frame in that body's frame)
    attach = []
    parents, types, jnames, bnames, PR, Pp, axes = [], [], [], [], [], [], []
    dyn = []  # per body: {Model joint-dynamics field: value}
    for name, el, parent, rec, _ in bodies:
        ctx = Ctx(path, el.line, name)
        p_b = np.zeros(3)
        if "pos" in el.attrib:
            p_b = parse_numbers(el.attrib["pos"], ctx.at(field="body/pos"), 3)
        _, R_b = _orientation(el, ctx, degree, eulerseq, element="body")
        if parent >= 0:
            pb, R_pb, p_pb = attach[parent]
        else:
            pb, R_pb, p_pb = -1, np.eye(3), np.zeros(3)
        if rec is not None and rec[1] == "free":
            k = len(parents)
            parents.append(-1)
            types.append("free_flyer")
            jnames.append(rec[0])
            bnames.append(name)
            PR.append(np.eye(3))
            Pp.append(np.zeros(3))
            axes.append(np.zeros(3))
            dyn.append({})
            attach.append((k, np.eye(3), np.zeros(3)))
            continue
        R_B = R_pb @ R_b
        p_B = p_pb + R_pb @ p_b
        if rec is None:
            attach.append((pb, R_B, p_B))
            continue
        jname, jtype, jpos, axis = rec[:4]
        p_J = p_B + R_B @ jpos
        if jname in locked:
            val = locked[jname]
            if jtype == "slide":
                attach.append((pb, R_B, p_J + R_B @ (val * axis - jpos)))
            else:
                Rq = R_B @ axis_rotation(axis, val)
                attach.append((pb, Rq, p_J - Rq @ jpos))
            continue
        k = len(parents)
        parents.append(pb)
        types.append("revolute" if jtype == "hinge" else "prismatic")
        jnames.append(jname)
        bnames.append(name)
        PR.append(R_B)
        Pp.append(p_J)
        axes.append(axis)
        dyn.append(rec[6])
        attach.append((k, np.eye(3), -jpos))

    nb = len(parents)
    if nb == 0:
        raise ModelFileError(
            path, "the model has no movable joint (every body is welded to the world)", line=None
        )
    params = np.zeros((nb, 10))
    for (name, el, _, _, _), (b, R, p) in zip(bodies, attach, strict=True):
        inertial = el.find("inertial")
        if b >= 0 and inertial is not None:
            link = _read_inertial(path, data, name, inertial, degree, eulerseq, notes)
            params[b] += link_params(link, R, p)
    return build_model(
        name=model_name,
        parents=parents,
        joint_types=types,
        joint_names=jnames,
        body_names=bnames,
        placement_R=PR,
        placement_p=Pp,
        axes=axes,
        params=params,
        frame_names=[b[0] for b in bodies],
        frame_bodies=[a[0] for a in attach],
        frame_R=[a[1] for a in attach],
        frame_p=[a[2] for a in attach],
        joint_dynamics={f: [d.get(f) for d in dyn] for f in JOINT_DYNAMICS_DEFAULTS},
        dtype=dtype,
    )
