"""SDFormat reader (SDF 1.4 to 1.11): the links' inertials and one model's tree, in one parse.

Inertials about the CoM frame's origin in its axes, placed by ``<pose>`` (with
``relative_to`` frames resolved); one ``<model>``'s links and joints.
Conventions: docs page ``model-files.md#sdformat``.
"""

from __future__ import annotations

import numpy as np

from .._errors import ArgumentError
from .._rotations import quat_wxyz_to_matrix, rpy_to_matrix
from ._common import (
    JOINT_DYNAMICS_FIELDS,
    Ctx,
    ModelFileError,
    ModelInertials,
    check_unique_names,
    format_number,
    joint_axis,
    joint_value,
    make_link,
    new_values_in_frame,
    parse_numbers,
    reflected_inertia,
    sym3,
    updated_vector_text,
)
from ._description import (
    FrameDescription,
    JointDescription,
    LinkDescription,
    ModelDescription,
    check_connected,
    parent_joints,
)
from ._xml import XNode, insert_child_edit, text_edit

_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_ADDED = ("xx xy xz xp xq xr yy yz yp yq yr zz zp zq zr pp pq pr qq qr rr").split()
_AXES = "xyzpqr"


def _models(root: XNode):
    """``(scoped prefix, <model>)`` for every model, nested ones included."""
    out = []

    def visit(node, prefix):
        for child in node.children:
            if child.tag == "model":
                name = child.attrib.get("name", "")
                scoped = f"{prefix}{name}::"
                out.append((scoped, child))
                visit(child, scoped)
            elif child.tag == "world":
                visit(child, prefix)

    visit(root, "")
    return out


def read_sdf(
    root: XNode, path, data: bytes, *, tree: bool = False, model_name: str | None = None
) -> ModelDescription:
    """Read an ``<sdf>``: every link's inertial, or with ``tree`` one model's tree (module doc).

    ``model_name`` picks the ``<model>`` of the tree (required when the file has several).
    """
    models = _models(root)
    if tree:
        return _read_sdf_tree(root, path, data, models, model_name)
    plain = len(models) == 1
    links, notes = [], []
    rule = "{what} names must be unique within a <model> (SDFormat specification)"
    for prefix, model in models:
        check_unique_names(path, model.findall("joint"), "joint", rule)
        check_unique_names(path, model.findall("link"), "link", rule)
        for link in model.findall("link"):
            lname = link.attrib.get("name")
            if lname is None:
                raise Ctx(path, link.line, None, "link/name").error("<link> without a name")
            name = lname if plain else prefix + lname
            inertial = link.find("inertial")
            if inertial is None:
                links.append(
                    make_link(
                        name, "sdf-default", 1.0, np.zeros(3), np.eye(3), np.eye(3), link.line
                    )
                )
                continue
            if inertial.attrib.get("auto", "false").strip().lower() in ("true", "1"):
                notes.append(
                    f"link '{name}': <inertial auto=\"true\"> is computed by libsdformat from "
                    "collision geometry; not checked"
                )
                continue
            links.append(_read_sdf_inertial(path, data, name, lname, inertial, notes))
    for inc in root.iter("include"):
        notes.append(f"line {inc.line}: <include> not followed; its links are not checked")
    if not models:
        notes.append("no <model> element found")
    inertials = ModelInertials(str(path), "sdf", tuple(links), tuple(notes), data)
    return ModelDescription(str(path), "sdf", inertials=inertials)


def _bool(text: str, ctx: Ctx) -> bool:
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise ctx.error(f"expected true/false, got {text!r}")


def _pose_value(pose: XNode, pc: Ctx, text: str | None):
    """``(R, p)`` of a ``<pose>`` (``rotation_format``, ``degrees``); errors name ``pc``."""
    fmt = pose.attrib.get("rotation_format", "euler_rpy").strip()
    degrees = _bool(pose.attrib.get("degrees", "false"), pc.at(field=f"{pc.field}/degrees"))
    if fmt == "euler_rpy":
        v = parse_numbers(text, pc, 6)
        rpy = np.deg2rad(v[3:]) if degrees else v[3:]
        return rpy_to_matrix(rpy), v[:3]
    if fmt == "quat_xyzw":
        v = parse_numbers(pose.text, pc, 7)
        q = np.array([v[6], v[3], v[4], v[5]])
        if not np.any(q):
            raise pc.error("zero quaternion")
        return quat_wxyz_to_matrix(q), v[:3]
    raise pc.at(field=f"{pc.field}/rotation_format").error(
        f"unknown rotation_format {fmt!r} (expected 'euler_rpy' or 'quat_xyzw')"
    )


def _read_pose(pose: XNode, ctx: Ctx, link_name: str):
    pc = ctx.at(pose, "inertial/pose")
    for attr in ("relative_to", "frame"):
        rel = pose.attrib.get(attr, "").strip()
        if rel not in ("", link_name):
            raise pc.at(field=f"inertial/pose/{attr}").error(
                f"poses relative to another frame ({rel!r}) are not supported; "
                "express the inertial pose in the link frame"
            )
    R, p = _pose_value(pose, pc, pose.text)
    return p, R


def _read_sdf_inertial(path, data, name, link_name, inertial: XNode, notes):
    ctx = Ctx(path, inertial.line, name)
    pose = inertial.find("pose")
    if pose is not None:
        com, R = _read_pose(pose, ctx, link_name)
    else:
        com, R = np.zeros(3), np.eye(3)

    mass_el = inertial.find("mass")
    if mass_el is None:
        mass = 1.0
        notes.append(f"link '{name}': <inertial> has no <mass>; the SDF default 1 is used")
    else:
        mass = parse_numbers(mass_el.text, ctx.at(mass_el, "inertial/mass"), 1)[0]

    inertia_el = inertial.find("inertia")
    vals, els = {}, {}
    if inertia_el is None:
        notes.append(f"link '{name}': <inertial> has no <inertia>; the SDF default (unit) is used")
        vals = dict(ixx=1.0, ixy=0.0, ixz=0.0, iyy=1.0, iyz=0.0, izz=1.0)
    else:
        for a in _INERTIA:
            el = inertia_el.find(a)
            fc = ctx.at(inertia_el if el is None else el, f"inertial/inertia/{a}")
            if el is None:
                raise fc.error(f"<inertia> has no <{a}> (all six entries are required)")
            vals[a] = parse_numbers(el.text, fc, 1)[0]
            els[a] = el
    I_file = sym3(*(vals[a] for a in _INERTIA))

    added = None
    fam = inertial.find("fluid_added_mass")
    if fam is not None:
        added = np.zeros((6, 6))
        for key in _ADDED:
            el = fam.find(key)
            if el is None:
                continue
            v = parse_numbers(el.text, ctx.at(el, f"inertial/fluid_added_mass/{key}"), 1)[0]
            i, j = _AXES.index(key[0]), _AXES.index(key[1])
            added[i, j] = added[j, i] = v

    def rewrite(m_new, c_new, I_c_new):
        edits = []
        if mass_el is None:
            if updated_vector_text(None, [mass], [m_new]) is not None:
                edits.append(
                    insert_child_edit(inertial, data, f"<mass>{format_number(m_new)}</mass>")
                )
        else:
            t = updated_vector_text(mass_el.text, [mass], [m_new])
            if t is not None:
                edits.append(text_edit(mass_el, data, t))
        scale_c = max(float(np.max(np.abs(com))), float(np.max(np.abs(c_new))))
        if pose is None:
            t = updated_vector_text(None, com, c_new, scale_c)
            if t is not None:
                edits.append(insert_child_edit(inertial, data, f"<pose>{t} 0 0 0</pose>"))
        else:
            tokens = pose.text.split()
            t = updated_vector_text(" ".join(tokens[:3]), com, c_new, scale_c)
            if t is not None:
                edits.append(text_edit(pose, data, " ".join([t] + tokens[3:])))
        I_new = new_values_in_frame(R, I_c_new)
        new = dict(
            ixx=I_new[0, 0], ixy=I_new[0, 1], ixz=I_new[0, 2],
            iyy=I_new[1, 1], iyz=I_new[1, 2], izz=I_new[2, 2],
        )  # fmt: skip
        scale_i = max(float(np.max(np.abs(I_file))), float(np.max(np.abs(I_new))))
        if inertia_el is None:
            old = [vals[a] for a in _INERTIA]
            if updated_vector_text(None, old, [new[a] for a in _INERTIA], scale_i) is not None:
                body = "".join(f"<{a}>{format_number(new[a])}</{a}>" for a in _INERTIA)
                edits.append(insert_child_edit(inertial, data, f"<inertia>{body}</inertia>"))
        else:
            for a in _INERTIA:
                t = updated_vector_text(els[a].text, [vals[a]], [new[a]], scale_i)
                if t is not None:
                    edits.append(text_edit(els[a], data, t))
        return edits

    return make_link(
        name, "inertial", mass, com, R, I_file, inertial.line, added_mass=added, rewrite=rewrite
    )


_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")
_KNOWN_UNSUPPORTED = ("ball", "universal", "screw", "revolute2", "gearbox", "prismatic2")


def _pose(el, ctx):
    """``(R, p, relative_to or None)`` of an element's ``<pose>`` child (identity if absent)."""
    pose = el.find("pose")
    if pose is None:
        return np.eye(3), np.zeros(3), None
    pc = ctx.at(pose, ctx.field + "/pose")
    rel = (pose.attrib.get("relative_to") or pose.attrib.get("frame") or "").strip() or None
    R, p = _pose_value(pose, pc, (pose.text or "").strip() or "0 0 0 0 0 0")
    return R, p, rel


def _sdf_joint_dynamics(ax, name, ctx):
    """``{Model field: value}`` from ``<axis><dynamics>`` and ``<axis><limit>``.

    SDFormat's ``velocity``/``effort`` of ``-1`` (its default) mean no limit (inf).
    """
    out = {}
    if ax is None:
        return out
    for tag, fields in JOINT_DYNAMICS_FIELDS.items():  # <axis>'s <dynamics>, <limit>
        sub = ax.find(tag)
        if sub is None:
            continue
        for elname, field in fields.items():
            el = sub.find(elname)
            if el is None:
                continue
            ectx = ctx.at(el, f"joint[{name}]/axis/{tag}/{elname}")
            limit = field in ("velocity_limit", "effort_limit")
            signed = limit or field in ("lower", "upper")
            x = joint_value(el.text or "", ectx, name, f"<{elname}>", signed)
            if not (limit and x < 0):  # -1: no limit
                out[field] = x
    return out


def _pick_model(root, path, models, model_name):
    top = [(p, m) for p, m in models if p.count("::") == 1]
    names = ", ".join(repr(m.attrib.get("name", "")) for _, m in top) or "none"
    if model_name is None:
        if len(top) != 1:
            raise ModelFileError(
                path,
                f"expected exactly one <model> (found {len(top)}: {names}); pass model_name=",
                line=root.line,
            )
        model = top[0][1]
    else:
        found = [m for _, m in top if m.attrib.get("name") == model_name]
        if not found:
            raise ArgumentError(
                "model_name", f"no <model> named {model_name!r} in {path} ({names})"
            )
        model = found[0]
    for tag in ("model", "include"):
        nested = model.find(tag)
        if nested is not None:
            raise ModelFileError(
                path, f"nested <{tag}> is not supported by Model.from_sdf", line=nested.line
            )
    return model


def _read_sdf_joint(el, path, frames, mname):
    """``(name, type, parent, child, axis element or None, expressed_in, dynamics)``."""
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
    ends = {}
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
        ends[role] = text
    if ends["child"] == "world":
        raise ctx.at(field=f"joint[{name}]/child").error("the child of a joint cannot be world")
    xyz, axis_in = None, None
    ax = el.find("axis")
    if ax is not None:
        xyz = ax.find("xyz")
        if xyz is not None:
            axis_in = (xyz.attrib.get("expressed_in") or "").strip() or None
        upm = ax.find("use_parent_model_frame")
        if upm is not None and _bool(upm.text or "", ctx.at(upm, f"joint[{name}]/axis")):
            axis_in = "__model__"
    dyn = _sdf_joint_dynamics(ax, name, ctx)
    ri = el.find("drake:rotor_inertia")
    if ri is not None:
        gr = el.find("drake:gear_ratio")
        field = f"joint[{name}]/drake:"
        gear = None if gr is None else (gr.text or "", ctx.at(gr, field + "gear_ratio"))
        rctx = ctx.at(ri, field + "rotor_inertia")
        dyn["armature"] = reflected_inertia((ri.text or "", rctx), gear, name)
    return name, jtype, ends["parent"], ends["child"], xyz, axis_in, dyn


def _read_sdf_tree(root, path, data, models, model_name) -> ModelDescription:
    """The tree of one ``<model>`` (module doc): links, joints, ``<frame>`` elements."""
    model = _pick_model(root, path, models, model_name)
    mname = model.attrib.get("name", "")
    frames = _model_frames(path, model)
    links = [n for n, (t, _) in frames.items() if t == "link"]
    if not links:
        raise ModelFileError(path, f"model {mname!r} has no <link>", line=model.line)
    joints = {}
    for el in model.findall("joint"):
        j = _read_sdf_joint(el, path, frames, mname)
        joints[j[0]] = j
    poses = _Poses(path, mname, frames, joints)
    tree = [_joint_description(path, j, frames, poses) for j in joints.values()]
    root_link = _root_link(path, model, links, tree, frames)
    check_connected(path, root_link, tree, {n: frames[n][1].line for n in links}, "root")
    extra = _frame_descriptions(frames, joints, poses, root_link)
    described, notes = [], []
    for name in links:
        el = frames[name][1]
        inertial = el.find("inertial")
        if inertial is None:  # SDFormat default: mass 1, unit inertia at the link origin
            z3, I3 = np.zeros(3), np.eye(3)
            link = make_link(name, "sdf-default", 1.0, z3, I3, I3, el.line)
        else:
            link = _read_sdf_inertial(path, data, name, name, inertial, notes)
        described.append(LinkDescription(name, link, el.line))
    return ModelDescription(
        str(path),
        "sdf",
        name=mname,
        line=model.line,
        links=tuple(described),
        joints=tuple(tree),
        frames=tuple(extra),
        root=root_link,
        source=data,
        element=root,
    )


def _model_frames(path, model) -> dict:
    """``{name: (kind, element)}`` of every link, joint and frame: one namespace per model."""
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
    return frames


class _Poses:
    """Every frame's pose in the model frame (SDFormat 1.7+ ``relative_to`` semantics).

    All frames of the model are resolved on construction; ``resolve`` then
    answers for any name (an unknown one, or a ``relative_to`` cycle, raises).
    """

    def __init__(self, path, mname, frames, joints):
        self.path, self.mname, self.frames, self.joints = path, mname, frames, joints
        self.resolved = {"__model__": (np.eye(3), np.zeros(3))}
        self.stack = []
        for name in frames:
            self.resolve(name, Ctx(path, frames[name][1].line))
        self.resolved["world"] = self.resolved["__model__"]

    def resolve(self, name, ctx):
        """``(R, p)`` of frame ``name`` in the model frame."""
        resolved, stack, frames = self.resolved, self.stack, self.frames
        if name == "world":
            name = "__model__"
        if name in resolved:
            return resolved[name]
        if name not in frames:
            raise ctx.error(
                f"unknown frame {name!r} (not a link, joint or frame of {self.mname!r})"
            )
        if name in stack:
            cycle = " -> ".join([*stack[stack.index(name) :], name])
            raise ctx.error(f"pose relative_to graph has a cycle: {cycle}")
        stack.append(name)
        tag, el = frames[name]
        ectx = Ctx(self.path, el.line, name if tag == "link" else None, f"{tag}[{name}]")
        R, p, rel = _pose(el, ectx)
        if rel is None:
            if tag == "joint":
                rel = self.joints[name][3]
            elif tag == "frame":
                rel = (el.attrib.get("attached_to") or "").strip() or "__model__"
            else:
                rel = "__model__"
        pose_el = el.find("pose")
        pctx = ectx.at(pose_el if pose_el is not None else el, f"{tag}[{name}]/pose/relative_to")
        R0, p0 = self.resolve(rel, pctx)
        stack.pop()
        resolved[name] = (R0 @ R, p0 + R0 @ p)
        return resolved[name]

    def relative(self, a, b):
        """Pose of frame ``b`` in frame ``a`` (both resolved in the model frame)."""
        (R_a, p_a), (R_b, p_b) = self.resolved[a], self.resolved[b]
        return R_a.T @ R_b, R_a.T @ (p_b - p_a)


def _joint_description(path, joint, frames, poses: _Poses) -> JointDescription:
    """A joint read by ``_read_sdf_joint``, placed: its axis in the joint frame, its poses."""
    name, jtype, parent, child, xyz, axis_in, dyn = joint
    axis = np.array([0.0, 0.0, 1.0])
    if xyz is not None:
        field = f"joint[{name}]/axis/xyz"
        actx = Ctx(path, xyz.line, None, field)
        axis = joint_axis(xyz.text, actx, name, fixed=jtype == "fixed")
        if axis_in is not None and axis_in != name:
            R_in = poses.resolve(axis_in, actx.at(field=field + "/expressed_in"))[0]
            axis = poses.resolved[name][0].T @ (R_in @ axis)
    R_pj, p_pj = poses.relative(parent, name)
    R_jc, p_jc = poses.relative(name, child)
    line = frames[name][1].line
    return JointDescription(name, jtype, parent, child, R_pj, p_pj, axis, R_jc, p_jc,
                            dyn, line)  # fmt: skip


def _root_link(path, model, links, tree, frames) -> str:
    """The one root: the link that is no joint's child, or ``"world"``; else raise."""
    parent_joint = parent_joints(path, tree, "child")
    roots = [n for n in links if n not in parent_joint]
    if any(j.parent == "world" for j in tree):
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
    return roots[0]


def _frame_descriptions(frames, joints, poses: _Poses, root_link) -> list:
    """The ``<frame>`` elements: attached (through frames and joints) to a link, or to the
    model frame (taken as rigid with the root link); placed by their resolved pose relative
    to that link."""

    def frame_link(name, seen=()):
        tag, el = frames.get(name, ("model", None))
        if tag == "link":
            return name
        if tag == "joint":
            return joints[name][3]
        if tag == "frame" and name not in seen:
            target = (el.attrib.get("attached_to") or "").strip() or "__model__"
            return frame_link(target, (*seen, name))
        return root_link

    extra = []
    for name, (tag, _) in frames.items():
        if tag == "frame":
            link = frame_link(name)
            extra.append(FrameDescription(name, link, *poses.relative(link, name)))
    return extra
