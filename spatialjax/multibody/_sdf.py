"""SDFormat kinematic-tree reader for :meth:`spatialjax.multibody.Model.from_sdf`.

Reads one ``<model>``'s ``<link>``, ``<joint>`` and ``<frame>`` elements with
the project's XML parser (``spatialjax.io``: standard library ``expat``, line
numbers kept) and the links' ``<inertial>`` with the reader of
:mod:`spatialjax.io` (SDFormat specification, http://sdformat.org/spec)::

    <joint name="j" type="revolute|continuous|prismatic|fixed">
      <parent>P</parent>  <child>C</child>          <!-- P may be "world" -->
      <pose relative_to="F">x y z r p y</pose>       <!-- default: relative to C -->
      <axis><xyz expressed_in="F">0 0 1</xyz></axis> <!-- default: in the joint frame -->
    </joint>

* Poses follow SDFormat 1.7+ frame semantics
  (http://sdformat.org/tutorials?tut=pose_frame_semantics): a ``<link>``'s and
  a ``<frame>``'s ``<pose>`` is relative to the model frame (a frame's to its
  ``attached_to`` frame) unless ``relative_to`` names another frame (a link,
  joint, frame or ``__model__``); a ``<joint>``'s ``<pose>`` is relative to its
  child link. The rotation is roll-pitch-yaw about fixed axes,
  ``R = Rz(y) Ry(p) Rx(r)`` (radians unless ``degrees="true"``), or
  ``rotation_format="quat_xyzw"``. The legacy ``frame`` attribute is read as
  ``relative_to``. The model's own ``<pose>`` is ignored (it places the model
  in a world, not its links in each other).
* The axis ``<xyz>`` is in the joint frame, or in the frame named by
  ``expressed_in`` (``__model__``: the model frame); SDF < 1.7's
  ``<use_parent_model_frame>true`` means the model frame.
* **Body frame.** The spatialjax body frame of a link moved by a joint is the
  *joint frame* (the joint's ``<pose>``), so that the axis passes through the
  frame origin as :class:`~spatialjax.multibody.Model` requires; with the
  default joint pose it is the child link frame. The link's inertia is moved to
  that frame; ``frame_placements`` holds the link frame in it.
* Joint dynamics and limits: ``<axis><dynamics><damping>``/``<friction>`` and
  ``<axis><limit><lower>``/``<upper>``/``<velocity>``/``<effort>`` become the
  :class:`~spatialjax.multibody.Model` fields ``damping``, ``friction``,
  ``lower``, ``upper``, ``velocity_limit``, ``effort_limit`` (a negative
  velocity or effort, SDFormat's ``-1`` default, means none: inf; continuous
  joints have no position limits). SDFormat has no armature (0).
* ``fixed`` joints and the joints named in ``locked_joints`` are merged into the
  parent body (composite inertia, RBDA §6.2). Other joint types (``ball``,
  ``universal``, ``screw``, ``revolute2``, ``gearbox``) raise
  :class:`~spatialjax.io.ModelFileError` naming file, line and joint.
* The tree has one root: the single link that is no joint's child (then the
  world is that link's frame, as in ``Model.from_urdf``, or a free flyer with
  ``floating_base=True``), or ``world`` when joints have ``<parent>world``
  (then the world is the model frame and every link must descend from it).
* A link without ``<inertial>`` has SDFormat's default inertial (mass 1, unit
  inertia at the link origin), as libsdformat and Gazebo simulate. Nested
  ``<model>`` and ``<include>`` are not supported. Bodies are numbered depth
  first from the root, the children of a link in the byte order of their joint
  names (as ``Model.from_urdf``).
"""

from __future__ import annotations

import math

import numpy as np

from ..io import ModelFileError
from ..io._common import Ctx, parse_numbers, quat_wxyz_to_matrix, read_bytes, rpy_to_matrix
from ..io._sdf import _bool, _models, _read_inertial
from ..io._xml import parse_xml
from ._mjcf import check_locked
from ._model import JOINT_DYNAMICS_DEFAULTS, build_model
from ._urdf import axis_rotation, link_params

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")
_KNOWN_UNSUPPORTED = ("ball", "universal", "screw", "revolute2", "gearbox", "prismatic2")


def _pose(el, ctx):
    """``(R, p, relative_to or None)`` of an element's ``<pose>`` child (identity if absent)."""
    pose = el.find("pose")
    if pose is None:
        return np.eye(3), np.zeros(3), None
    pc = ctx.at(pose, ctx.field + "/pose")
    rel = (pose.attrib.get("relative_to") or pose.attrib.get("frame") or "").strip() or None
    fmt = pose.attrib.get("rotation_format", "euler_rpy").strip()
    degrees = _bool(pose.attrib.get("degrees", "false"), pc.at(field=pc.field + "/degrees"))
    if fmt == "euler_rpy":
        v = parse_numbers((pose.text or "").strip() or "0 0 0 0 0 0", pc, 6)
        rpy = np.deg2rad(v[3:]) if degrees else v[3:]
        return rpy_to_matrix(rpy), v[:3], rel
    if fmt == "quat_xyzw":
        v = parse_numbers(pose.text, pc, 7)
        q = np.array([v[6], v[3], v[4], v[5]])
        if not np.any(q):
            raise pc.error("zero quaternion")
        return quat_wxyz_to_matrix(q), v[:3], rel
    raise pc.at(field=pc.field + "/rotation_format").error(
        f"unknown rotation_format {fmt!r} (expected 'euler_rpy' or 'quat_xyzw')"
    )


class _Joint:
    __slots__ = (
        "name",
        "type",
        "parent",
        "child",
        "axis",
        "axis_text",
        "axis_in",
        "el",
        "line",
        "dyn",
    )


#: SDFormat ``<axis>`` child -> ``{element: Model joint-dynamics field}``
_SDF_DYNAMICS = {
    "dynamics": {"damping": "damping", "friction": "friction"},
    "limit": {
        "lower": "lower",
        "upper": "upper",
        "velocity": "velocity_limit",
        "effort": "effort_limit",
    },
}


def _sdf_joint_dynamics(ax, name, ctx):
    """``{Model field: value}`` from ``<axis><dynamics>`` and ``<axis><limit>``.

    SDFormat's ``velocity``/``effort`` of ``-1`` (its default) mean no limit (inf).
    """
    out = {}
    if ax is None:
        return out
    for tag, fields in _SDF_DYNAMICS.items():
        sub = ax.find(tag)
        if sub is None:
            continue
        for elname, field in fields.items():
            el = sub.find(elname)
            if el is None:
                continue
            ectx = ctx.at(el, f"joint[{name}]/axis/{tag}/{elname}")
            (x,) = parse_numbers(el.text or "", ectx, 1)
            if field in ("velocity_limit", "effort_limit") and x < 0:
                continue  # -1: no limit
            signed = field in ("lower", "upper")
            if not math.isfinite(x) or (not signed and x < 0):
                want = "a finite value" if signed else "a finite value >= 0"
                raise ectx.error(f"joint {name!r}: <{elname}>{x} (expected {want})")
            out[field] = float(x)
    return out


def load_sdf_model(path, *, model_name=None, locked_joints=None, floating_base=False, dtype=None):
    """Read an SDFormat kinematic tree into a :class:`~spatialjax.multibody.Model` (module doc)."""
    data = read_bytes(path)
    root = parse_xml(data, path)
    if root.tag != "sdf":
        raise ModelFileError(
            path,
            f"expected an SDFormat file (root element <sdf>), got <{root.tag}>",
            line=root.line,
        )
    models = _models(root)
    top = [(p, m) for p, m in models if p.count("::") == 1]
    if model_name is None:
        if len(top) != 1:
            names = ", ".join(repr(m.attrib.get("name", "")) for _, m in top) or "none"
            raise ModelFileError(
                path,
                f"expected exactly one <model> (found {len(top)}: {names}); pass model_name=",
                line=root.line,
            )
        model = top[0][1]
    else:
        found = [m for _, m in top if m.attrib.get("name") == model_name]
        if not found:
            names = ", ".join(repr(m.attrib.get("name", "")) for _, m in top) or "none"
            raise ValueError(f"model_name: no <model> named {model_name!r} in {path} ({names})")
        model = found[0]
    for tag in ("model", "include"):
        nested = model.find(tag)
        if nested is not None:
            raise ModelFileError(
                path, f"nested <{tag}> is not supported by Model.from_sdf", line=nested.line
            )
    mname = model.attrib.get("name", "")

    # frames of the model: name -> (kind, element)
    frames = {}
    for tag in ("link", "joint", "frame"):
        for el in model.findall(tag):
            name = el.attrib.get("name")
            if name is None:
                raise ModelFileError(path, f"<{tag}> without a name", line=el.line, field=tag)
            if name in frames:
                raise ModelFileError(
                    path,
                    f"duplicate frame name {name!r} (a link, joint or frame of line "
                    f"{frames[name][1].line}); names must be unique within a <model>",
                    line=el.line,
                    field=f"{tag}[{name}]",
                )
            frames[name] = (tag, el)
    links = [n for n, (t, _) in frames.items() if t == "link"]
    if not links:
        raise ModelFileError(path, f"model {mname!r} has no <link>", line=model.line)

    joints = []
    for el in model.findall("joint"):
        name = el.attrib["name"]
        ctx = Ctx(path, el.line, None, f"joint[{name}]")
        jtype = (el.attrib.get("type") or "").strip()
        if jtype not in _SUPPORTED:
            known = jtype in _KNOWN_UNSUPPORTED
            what = "a known SDFormat joint type" if known else "not an SDFormat joint type"
            raise ctx.at(field=f"joint[{name}]/type").error(
                f"joint {name!r} has type {jtype!r} ({what}), which Model.from_sdf does not "
                f"support (supported: {', '.join(_SUPPORTED)})"
            )
        j = _Joint()
        j.name, j.type, j.el, j.line = name, jtype, el, el.line
        for role in ("parent", "child"):
            sub = el.find(role)
            text = (sub.text or "").strip() if sub is not None else ""
            if not text:
                raise ctx.at(sub, f"joint[{name}]/{role}").error(f"joint {name!r} has no <{role}>")
            if text != "world" and frames.get(text, ("",))[0] != "link":
                raise ctx.at(sub, f"joint[{name}]/{role}").error(
                    f"joint {name!r} names {role} {text!r}, which is not a <link> of model "
                    f"{mname!r}"
                    + (" (frames as parent/child are not supported)" if text in frames else "")
                )
            setattr(j, role, text)
        if j.child == "world":
            raise ctx.at(field=f"joint[{name}]/child").error("the child of a joint cannot be world")
        j.axis_text, j.axis_in = None, None
        ax = el.find("axis")
        if ax is not None:
            xyz = ax.find("xyz")
            if xyz is not None:
                j.axis_text = (xyz, ctx.at(xyz, f"joint[{name}]/axis/xyz"))
                j.axis_in = (xyz.attrib.get("expressed_in") or "").strip() or None
            upm = ax.find("use_parent_model_frame")
            if upm is not None and _bool(upm.text or "", ctx.at(upm, f"joint[{name}]/axis")):
                j.axis_in = "__model__"
        j.dyn = _sdf_joint_dynamics(ax, name, ctx)
        joints.append(j)

    # pose resolution: every frame's pose in the model frame
    resolved, stack = {"__model__": (np.eye(3), np.zeros(3))}, []
    by_name = {j.name: j for j in joints}

    def resolve(name, ctx):
        if name == "world":
            name = "__model__"
        if name in resolved:
            return resolved[name]
        if name not in frames:
            raise ctx.error(f"unknown frame {name!r} (not a link, joint or frame of {mname!r})")
        if name in stack:
            cycle = " -> ".join([*stack[stack.index(name) :], name])
            raise ctx.error(f"pose relative_to graph has a cycle: {cycle}")
        stack.append(name)
        tag, el = frames[name]
        ectx = Ctx(path, el.line, name if tag == "link" else None, f"{tag}[{name}]")
        R, p, rel = _pose(el, ectx)
        if rel is None:
            if tag == "joint":
                rel = by_name[name].child
            elif tag == "frame":
                rel = (el.attrib.get("attached_to") or "").strip() or "__model__"
            else:
                rel = "__model__"
        pose_el = el.find("pose")
        pctx = ectx.at(pose_el if pose_el is not None else el, f"{tag}[{name}]/pose/relative_to")
        R0, p0 = resolve(rel, pctx)
        stack.pop()
        resolved[name] = (R0 @ R, p0 + R0 @ p)
        return resolved[name]

    for name in frames:
        resolve(name, Ctx(path, frames[name][1].line))

    for j in joints:
        axis = np.array([0.0, 0.0, 1.0])
        if j.axis_text is not None:
            xyz, actx = j.axis_text
            axis = parse_numbers(xyz.text, actx, 3)
            norm = float(np.linalg.norm(axis))
            if j.type != "fixed" and norm == 0.0:
                raise actx.error(f"joint {j.name!r} has a zero axis")
            axis = axis / norm if norm > 0 else axis
            if j.axis_in is not None and j.axis_in != j.name:
                R_in = resolve(j.axis_in, actx.at(field=actx.field + "/expressed_in"))[0]
                axis = resolved[j.name][0].T @ (R_in @ axis)
        j.axis = axis

    # tree
    parent_joint, children = {}, {n: [] for n in [*links, "world"]}
    for j in joints:
        if j.child in parent_joint:
            other = parent_joint[j.child]
            raise ModelFileError(
                path,
                f"link {j.child!r} is the child of two joints, {other.name!r} (line "
                f"{other.line}) and {j.name!r}: the joints form a kinematic loop, which a "
                "tree model cannot represent",
                line=j.line,
                field=f"joint[{j.name}]/child",
            )
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [n for n in links if n not in parent_joint]
    if children["world"]:
        roots = ["world", *roots]
    if len(roots) != 1:
        if not roots:
            problem = "no root link: every link is the child of a joint, so the joints form a loop"
        else:
            listed = ", ".join(
                "'world' (joints with <parent>world)"
                if n == "world"
                else f"{n!r} (line {frames[n][1].line})"
                for n in roots
            )
            problem = (
                f"{len(roots)} roots ({listed}): Model.from_sdf needs exactly one link that is "
                "no joint's child, or every link attached to world through joints"
            )
        raise ModelFileError(path, problem, line=model.line)
    root_link = roots[0]
    if root_link == "world" and floating_base:
        raise ValueError(
            f"floating_base: model {mname!r} in {path} is attached to the world by joints "
            "(<parent>world); floating_base=True needs a root link"
        )

    locked = check_locked(
        locked_joints,
        [j.name for j in joints if j.type != "fixed"],
        [j.name for j in joints if j.type == "fixed"],
        path,
    )
    for lst in children.values():
        lst.sort(key=lambda j: j.name.encode("utf-8"))

    attach = {}  # link -> (body, R, p): pose of the link frame in the body frame
    parents, types, jnames, bnames, PR, Pp, axes = [], [], [], [], [], [], []
    dyn = []  # per body: {Model joint-dynamics field: value}
    if floating_base:
        dyn.append({})
        parents.append(-1)
        types.append("free_flyer")
        jnames.append("root_joint")
        bnames.append(root_link)
        PR.append(np.eye(3))
        Pp.append(np.zeros(3))
        axes.append(np.zeros(3))
        attach[root_link] = (0, np.eye(3), np.zeros(3))
    else:  # the root link (or the model frame, for world) is the world frame
        attach[root_link] = (-1, np.eye(3), np.zeros(3))
    resolved["world"] = resolved["__model__"]

    def relative(a, b):
        """Pose of frame ``b`` in frame ``a`` (both resolved in the model frame)."""
        (R_a, p_a), (R_b, p_b) = resolved[a], resolved[b]
        return R_a.T @ R_b, R_a.T @ (p_b - p_a)

    def visit(link):
        # poses are composed link to link, so a locked joint's value moves the subtree
        b, R_bl, p_bl = attach[link]
        for j in children[link]:
            R_lj, p_lj = relative(link, j.name)
            R_bj, p_bj = R_bl @ R_lj, p_bl + R_bl @ p_lj  # joint frame in the body frame
            R_jc, p_jc = relative(j.name, j.child)  # child link in the joint frame
            if j.type != "fixed" and j.name not in locked:
                k = len(parents)
                parents.append(b)
                types.append(j.type)
                jnames.append(j.name)
                bnames.append(j.child)
                PR.append(R_bj)
                Pp.append(p_bj)
                axes.append(j.axis)
                dyn.append(j.dyn)
                attach[j.child] = (k, R_jc, p_jc)
            else:
                val = locked.get(j.name, 0.0)
                R_q, p_q = np.eye(3), np.zeros(3)
                if j.type == "prismatic":
                    p_q = val * j.axis
                elif j.type != "fixed":
                    R_q = axis_rotation(j.axis, val)
                R_c = R_bj @ R_q
                attach[j.child] = (b, R_c @ R_jc, p_bj + R_bj @ p_q + R_c @ p_jc)
            visit(j.child)

    visit(root_link)
    unreached = [n for n in links if n not in attach]
    if unreached:
        raise ModelFileError(
            path,
            f"links {', '.join(map(repr, unreached))} are not connected to the root "
            f"{root_link!r}: their joints form a loop",
            line=frames[unreached[0]][1].line,
        )
    nb = len(parents)
    if nb == 0:
        raise ModelFileError(
            path, f"model {mname!r} has no movable joint (every link is fixed)", line=model.line
        )
    params = np.zeros((nb, 10))
    notes = []
    for name in links:
        b, R, p = attach[name]
        if b < 0:
            continue
        el = frames[name][1]
        inertial = el.find("inertial")
        if inertial is None:  # SDFormat default: mass 1, unit inertia at the link origin
            params[b] += link_params(_DefaultInertial(), R, p)
        else:
            link = _read_inertial(path, data, name, name, inertial, notes)
            params[b] += link_params(link, R, p)
    return build_model(
        name=mname,
        parents=parents,
        joint_types=types,
        joint_names=jnames,
        body_names=bnames,
        placement_R=PR,
        placement_p=Pp,
        axes=axes,
        params=params,
        frame_names=links,
        frame_bodies=[attach[n][0] for n in links],
        frame_R=[attach[n][1] for n in links],
        frame_p=[attach[n][2] for n in links],
        joint_dynamics={f: [d.get(f) for d in dyn] for f in JOINT_DYNAMICS_DEFAULTS},
        dtype=dtype,
    )


class _DefaultInertial:
    mass = 1.0
    com = np.zeros(3)
    inertia_com = np.eye(3)
