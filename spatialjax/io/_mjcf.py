"""MJCF (MuJoCo) reader: the bodies' inertials and the kinematic tree, in one parse.

``<inertial>`` ``pos`` and orientation in the body frame (angles in the compiler's
unit, degrees by default), ``diaginertia`` about the CoM in the inertial frame,
joint attributes from the default classes; ``<include>``, ``<attach>`` and
``<replicate>`` are not expanded. Conventions: docs page ``model-files.md#mjcf``.
"""

from __future__ import annotations

import math

import numpy as np

from .._rotations import axis_rotation, matrix_to_quat_wxyz, quat_wxyz_to_matrix, rot_axis
from ._common import (
    Ctx,
    ModelFileError,
    ModelInertials,
    format_number,
    joint_axis,
    joint_value,
    make_link,
    new_values_in_frame,
    parse_numbers,
    principal_axes,
    sym3,
    updated_vector_text,
)
from ._description import FrameDescription, JointDescription, LinkDescription, ModelDescription
from ._xml import XNode, attr_insert_edit, attr_rename_edit, attr_value_edit

_ORIENT = ("quat", "axisangle", "xyaxes", "zaxis", "euler")
_JOINT_ATTRS = ("type", "pos", "axis", "armature", "damping", "frictionloss", "range", "limited")


def _compiler(root: XNode, path):
    degree, eulerseq, notes = True, "xyz", []
    for comp in root.iter("compiler"):
        ctx = Ctx(path, comp.line)
        if "angle" in comp.attrib:
            a = comp.attrib["angle"].strip()
            if a not in ("degree", "radian"):
                raise ctx.at(field="compiler/angle").error(
                    f"unknown angle unit {a!r} (expected 'degree' or 'radian')"
                )
            degree = a == "degree"
        if "eulerseq" in comp.attrib:
            s = comp.attrib["eulerseq"].strip()
            if len(s) != 3 or any(ch not in "xyzXYZ" for ch in s):
                raise ctx.at(field="compiler/eulerseq").error(
                    f"expected 3 characters from xyzXYZ, got {s!r}"
                )
            eulerseq = s
        ifg = comp.attrib.get("inertiafromgeom", "").strip()
        if ifg == "true":
            notes.append(
                f'line {comp.line}: <compiler inertiafromgeom="true">: MuJoCo ignores the '
                "<inertial> elements checked here and recomputes inertias from geoms"
            )
        if comp.attrib.get("balanceinertia", "").strip() == "true":
            notes.append(
                f'line {comp.line}: <compiler balanceinertia="true">: MuJoCo silently '
                "changes inertias that violate the triangle inequality"
            )
        for attr in ("boundmass", "boundinertia"):
            if attr in comp.attrib:
                notes.append(
                    f'line {comp.line}: <compiler {attr}="{comp.attrib[attr]}">: MuJoCo '
                    "raises smaller masses/inertias to this bound"
                )
    return degree, eulerseq, notes


def euler_to_matrix(angles, seq: str) -> np.ndarray:
    """MuJoCo's Euler convention (angles in radians); docs page ``model-files.md#mjcf``."""
    R = np.eye(3)
    for ang, ch in zip(angles, seq, strict=True):
        Ri = rot_axis("xyz".index(ch.lower()), float(ang))
        R = R @ Ri if ch.islower() else Ri @ R
    return R


def _axis_angle(axis, angle) -> np.ndarray:
    """Rotation by ``angle`` about ``axis`` of any length (normalised here)."""
    axis = np.asarray(axis, dtype=np.float64)
    return axis_rotation(axis / np.linalg.norm(axis), angle)


def _orientation(node: XNode, ctx: Ctx, degree: bool, eulerseq: str, element: str = "inertial"):
    present = [a for a in _ORIENT if a in node.attrib]
    if len(present) > 1:
        raise ctx.at(field=f"{element}/{present[1]}").error(
            f"multiple orientation specifiers ({', '.join(present)}); MuJoCo allows one"
        )
    if not present:
        return None, np.eye(3)
    kind = present[0]
    fc = ctx.at(field=f"{element}/{kind}")
    text = node.attrib[kind]
    unit = np.pi / 180.0 if degree else 1.0
    if kind == "quat":
        q = parse_numbers(text, fc, 4)
        if not np.any(q):
            raise fc.error("zero quaternion")
        return kind, quat_wxyz_to_matrix(q)
    if kind == "axisangle":
        v = parse_numbers(text, fc, 4)
        if not np.any(v[:3]):
            raise fc.error("zero rotation axis")
        return kind, _axis_angle(v[:3], v[3] * unit)
    if kind == "euler":
        v = parse_numbers(text, fc, 3)
        return kind, euler_to_matrix(v * unit, eulerseq)
    if kind == "xyaxes":
        v = parse_numbers(text, fc, 6)
        x, y = v[:3], v[3:]
        nx = np.linalg.norm(x)
        if nx == 0:
            raise fc.error("zero x axis")
        x = x / nx
        y = y - x * np.dot(x, y)
        ny = np.linalg.norm(y)
        if ny < 1e-12:
            raise fc.error("y axis parallel to x axis")
        y = y / ny
        return kind, np.stack([x, y, np.cross(x, y)], axis=1)
    # zaxis: minimal rotation taking (0, 0, 1) to the axis
    v = parse_numbers(text, fc, 3)
    n = np.linalg.norm(v)
    if n == 0:
        raise fc.error("zero z axis")
    z = v / n
    axis = np.cross([0.0, 0.0, 1.0], z)
    s = np.linalg.norm(axis)
    if s < 1e-14:
        return kind, np.eye(3) if z[2] > 0 else rot_axis(0, np.pi)
    return kind, _axis_angle(axis, np.arctan2(s, z[2]))


def read_mjcf(root: XNode, path, data: bytes, *, tree: bool = False) -> ModelDescription:
    """Read a ``<mujoco>``: every body's explicit ``<inertial>``, or with ``tree`` the tree."""
    degree, eulerseq, notes = _compiler(root, path)
    if tree:
        return _read_mjcf_tree(root, path, data, degree, eulerseq, notes)
    for tag in ("include", "attach", "replicate"):
        for node in root.iter(tag):
            notes.append(f"line {node.line}: <{tag}> not expanded; its bodies are not checked")
    links, inferred, body_id = [], [], 0
    for world in root.findall("worldbody"):
        for body in world.iter("body"):
            if body is world:
                continue
            body_id += 1
            name = body.attrib.get("name") or f"<body {body_id}>"
            inertial = body.find("inertial")
            if inertial is None:
                inferred.append(name)
                continue
            links.append(_read_mjcf_inertial(path, data, name, inertial, degree, eulerseq, notes))
    if inferred:
        shown = ", ".join(inferred[:5]) + (", ..." if len(inferred) > 5 else "")
        noun = "body" if len(inferred) == 1 else "bodies"
        notes.append(
            f"{len(inferred)} {noun} without <inertial> (MuJoCo infers their inertia from "
            f"geoms; not checked): {shown}"
        )
    inertials = ModelInertials(str(path), "mjcf", tuple(links), tuple(notes), data)
    return ModelDescription(str(path), "mjcf", inertials=inertials)


def _read_mjcf_inertial(path, data, name, node: XNode, degree, eulerseq, notes):
    ctx = Ctx(path, node.line, name)
    pos = parse_numbers(node.attrib.get("pos"), ctx.at(field="inertial/pos"), 3)
    mass = parse_numbers(node.attrib.get("mass"), ctx.at(field="inertial/mass"), 1)[0]
    has_diag, has_full = "diaginertia" in node.attrib, "fullinertia" in node.attrib
    if has_diag and has_full:
        raise ctx.at(field="inertial/fullinertia").error(
            "fullinertia and diaginertia cannot both be specified"
        )
    if not (has_diag or has_full):
        raise ctx.at(field="inertial/diaginertia").error(
            "one of diaginertia or fullinertia is required"
        )
    if has_full:
        kinds = [a for a in _ORIENT if a in node.attrib]
        if kinds and kinds != ["quat"]:
            raise ctx.at(field=f"inertial/{kinds[0]}").error(
                "fullinertia and inertial orientation cannot both be specified"
            )
        if kinds:
            notes.append(
                f"body '{name}': quat beside fullinertia is ignored (MuJoCo overwrites it)"
            )
        f = parse_numbers(node.attrib["fullinertia"], ctx.at(field="inertial/fullinertia"), 6)
        kind, R = None, np.eye(3)
        I_file = sym3(f[0], f[3], f[4], f[1], f[5], f[2])
    else:
        kind, R = _orientation(node, ctx, degree, eulerseq)
        d = parse_numbers(node.attrib["diaginertia"], ctx.at(field="inertial/diaginertia"), 3)
        I_file = np.diag(d)

    def rewrite(m_new, c_new, I_c_new):
        edits = []
        t = updated_vector_text(node.attrib["mass"], [mass], [m_new])
        if t is not None:
            edits.append(attr_value_edit(node, "mass", t))
        scale_c = max(float(np.max(np.abs(pos))), float(np.max(np.abs(c_new))))
        t = updated_vector_text(node.attrib["pos"], pos, c_new, scale_c)
        if t is not None:
            edits.append(attr_value_edit(node, "pos", t))
        I_c_new = 0.5 * (I_c_new + I_c_new.T)
        scale_i = max(float(np.max(np.abs(I_file))), float(np.max(np.abs(I_c_new))))
        if has_full:
            new = [I_c_new[0, 0], I_c_new[1, 1], I_c_new[2, 2]]
            new += [I_c_new[0, 1], I_c_new[0, 2], I_c_new[1, 2]]
            old = [I_file[0, 0], I_file[1, 1], I_file[2, 2]]
            old += [I_file[0, 1], I_file[0, 2], I_file[1, 2]]
            t = updated_vector_text(node.attrib["fullinertia"], old, new, scale_i)
            if t is not None:
                edits.append(attr_value_edit(node, "fullinertia", t))
            return edits
        I_in_frame = new_values_in_frame(R, I_c_new)
        off = max(abs(I_in_frame[0, 1]), abs(I_in_frame[0, 2]), abs(I_in_frame[1, 2]))
        if off <= 1e-13 * scale_i:  # still principal in the file's frame: keep the orientation
            d_new = np.diag(I_in_frame)
        else:  # new principal axes: write them as a quaternion
            d_new, Q = principal_axes(I_c_new, R)
            qtext = " ".join(format_number(v) for v in matrix_to_quat_wxyz(Q))
            if kind is None:
                edits.append(attr_insert_edit(node, "quat", qtext))
            elif kind == "quat":
                edits.append(attr_value_edit(node, "quat", qtext))
            else:
                edits.append(attr_rename_edit(node, kind, "quat", qtext))
        t = updated_vector_text(node.attrib["diaginertia"], np.diag(I_file), d_new, scale_i)
        if t is not None:
            edits.append(attr_value_edit(node, "diaginertia", t))
        return edits

    return make_link(name, "inertial", mass, pos, R, I_file, node.line, rewrite=rewrite)


def _autolimits(root) -> bool:
    """``<compiler autolimits>`` (MuJoCo's default ``true``: a ``range`` implies ``limited``)."""
    value = True
    for comp in root.iter("compiler"):
        if "autolimits" in comp.attrib:
            value = comp.attrib["autolimits"].strip() == "true"
    return value


def _mjcf_joint_dynamics(attrs, jtype, name, ctx, degree, autolimits):
    """``{Model field: value}`` from a hinge/slide joint's resolved attributes."""
    out = {}
    for attr, field in (("armature", "armature"), ("damping", "damping"),
                        ("frictionloss", "friction")):  # fmt: skip
        if attr in attrs:
            fctx = ctx.at(field=f"joint[{name}]/{attr}")
            text = attrs[attr]
            if attr == "damping":  # MuJoCo 4: "linear [poly2 poly3]"; the linear term
                parse_numbers(text, fctx, (1, 2, 3))
                text = text.split()[0]
            out[field] = joint_value(text, fctx, name, f"{attr}=", signed=False)
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


def _site_pose(el, ctx, degree, eulerseq):
    """Pose ``(R, p)`` of a ``<site>`` in its body's MJCF frame ``B``.

    ``pos`` and one orientation attribute, or ``fromto`` (MuJoCo: the midpoint,
    and the minimal rotation taking ``z`` to ``from − to``, as MuJoCo does).
    """
    if "fromto" in el.attrib:
        v = parse_numbers(el.attrib["fromto"], ctx.at(field="site/fromto"), 6)
        d = v[:3] - v[3:]  # MuJoCo: z along from − to
        text = " ".join(repr(float(x)) for x in d)
        zaxis = XNode("site", {"zaxis": text}, None, el.line, el.start)
        _, R = _orientation(zaxis, ctx, degree, eulerseq, element="site")
        return R, 0.5 * (v[:3] + v[3:])
    p = np.zeros(3)
    if "pos" in el.attrib:
        p = parse_numbers(el.attrib["pos"], ctx.at(field="site/pos"), 3)
    _, R = _orientation(el, ctx, degree, eulerseq, element="site")
    return R, p


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


def _read_mjcf_tree(root: XNode, path, data: bytes, degree, eulerseq, notes) -> ModelDescription:
    """The tree of a ``<mujoco>`` (module doc): its bodies, their joints, its named sites."""
    _reject_unexpanded(root, path)
    walk = _BodyWalk(path, degree, eulerseq, _defaults(root), _autolimits(root))
    worlds = root.findall("worldbody")
    if not worlds:
        raise ModelFileError(path, "the MJCF file has no <worldbody>", line=root.line)
    for w in worlds:
        walk.visit(w, "world", "main", np.eye(3), np.zeros(3))
    if not walk.bodies:
        raise ModelFileError(path, "<worldbody> has no <body>", line=worlds[0].line)

    links, tree = [], []
    for name, el, parent, rec, R_f, p_f in walk.bodies:
        tree.append(_body_joint(path, name, el, parent, rec, R_f, p_f, degree, eulerseq))
        inertial = el.find("inertial")
        if inertial is not None:
            inertial = _read_mjcf_inertial(path, data, name, inertial, degree, eulerseq, notes)
        links.append(LinkDescription(name, inertial, el.line, el))
    frames = []
    for name, el, body, R_f, p_f in walk.sites:
        R_s, p_s = _site_pose(el, Ctx(path, el.line, name), degree, eulerseq)
        frames.append(FrameDescription(name, body, R_f @ R_s, R_f @ p_s + p_f))
    return ModelDescription(
        str(path),
        "mjcf",
        name=root.attrib.get("model", ""),
        line=root.line,
        links=tuple(links),
        joints=tuple(tree),
        frames=tuple(frames),
        root="world",
        siblings_by_name=False,
        source=data,
        element=root,
    )


def _reject_unexpanded(root: XNode, path) -> None:
    """Raise for the first ``<include>``, ``<attach>`` or ``<replicate>`` (not expanded here)."""
    for tag in ("include", "attach", "replicate"):
        for node in root.iter(tag):
            raise ModelFileError(
                path,
                f"<{tag}> is not expanded by Model.from_mjcf (its bodies would be missing); "
                "expand it first, e.g. by saving the model from MuJoCo",
                line=node.line,
                field=tag,
            )


class _BodyWalk:
    """One depth-first walk of ``<worldbody>``: the bodies, their joints and the named sites.

    Attributes:
      bodies: ``(name, element, parent name, joint record or None, R_f, p_f)`` per body in
        document order; ``(R_f, p_f)`` is the pose of the ``<frame>`` elements around it (in
        its parent body's frame; the identity when none).
      sites: ``(name, element, enclosing body name or "world", R_f, p_f)`` per named site.
      joints: ``{joint name: record}``, a record being ``(name, MJCF type, pos, axis,
        element, line, dynamics)`` with ``pos`` and ``axis`` in the body frame.
    """

    def __init__(self, path, degree, eulerseq, classes, autolimits):
        self.path, self.degree, self.eulerseq = path, degree, eulerseq
        self.classes, self.autolimits = classes, autolimits
        self.bodies, self.sites = [], []
        self.joints, self.body_line = {}, {}
        self.counter = {"body": 0, "joint": 0}

    def read_joint(self, jel, body_name, childclass, R_f, p_f):
        path, classes = self.path, self.classes
        self.counter["joint"] += 1
        name = jel.attrib.get("name") or f"<joint {self.counter['joint'] - 1}>"
        ctx = Ctx(path, jel.line, body_name, f"joint[{name}]")
        if name in self.joints:
            raise ctx.error(f"duplicate joint name {name!r} (first on line {self.joints[name][5]})")
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
                axis = joint_axis(attrs["axis"], ctx.at(field=f"joint[{name}]/axis"), name)
            # a joint inside <frame> elements: its pos and axis are in the frame's coordinates
            pos, axis = R_f @ pos + p_f, R_f @ axis
        dyn = (
            {}
            if jtype == "free"
            else _mjcf_joint_dynamics(attrs, jtype, name, ctx, self.degree, self.autolimits)
        )
        rec = (name, jtype, pos, axis, jel, jel.line, dyn)
        self.joints[name] = rec
        return rec

    def frame_pose(self, el, R_f, p_f):
        """A ``<frame>``'s pose in the enclosing body: its own composed with ``(R_f, p_f)``."""
        ctx = Ctx(self.path, el.line, el.attrib.get("name"))
        p = np.zeros(3)
        if "pos" in el.attrib:
            p = parse_numbers(el.attrib["pos"], ctx.at(field="frame/pos"), 3)
        _, R = _orientation(el, ctx, self.degree, self.eulerseq, element="frame")
        return R_f @ R, R_f @ p + p_f

    def body_joints(self, el, R_f, p_f, childclass):
        """A body's joint elements, those inside its ``<frame>`` elements included, with the
        pose of their coordinates in the body frame and their default class."""
        out = []
        for c in el.children:
            if c.tag in ("joint", "freejoint"):
                out.append((c, R_f, p_f, childclass))
            elif c.tag == "frame":
                R2, p2 = self.frame_pose(c, R_f, p_f)
                out += self.body_joints(c, R2, p2, c.attrib.get("childclass", childclass))
        return out

    def visit(self, node, parent, childclass, R_f, p_f):
        for el in node.children:
            if el.tag == "frame":  # a coordinate frame: its children are placed in it
                R2, p2 = self.frame_pose(el, R_f, p_f)
                self.visit(el, parent, el.attrib.get("childclass", childclass), R2, p2)
                continue
            if el.tag == "site" and el.attrib.get("name"):
                self.sites.append((el.attrib["name"], el, parent, R_f, p_f))
            if el.tag != "body":
                continue
            self.counter["body"] += 1
            name = el.attrib.get("name") or f"<body {self.counter['body']}>"
            cc = el.attrib.get("childclass", childclass)
            I3, z3 = np.eye(3), np.zeros(3)
            joints = self.body_joints(el, I3, z3, cc)
            recs = [self.read_joint(j, name, c, R, p) for j, R, p, c in joints]
            rec = self.the_joint(name, recs, parent)
            if name in self.body_line:
                raise ModelFileError(
                    self.path,
                    f"duplicate body name {name!r} (first on line {self.body_line[name]}); "
                    "MuJoCo requires unique body names",
                    line=el.line,
                    link=name,
                )
            self.body_line[name] = el.line
            self.bodies.append((name, el, parent, rec, R_f, p_f))
            self.visit(el, name, cc, I3, z3)

    def the_joint(self, name, recs, parent):
        """A body's one joint record (``None``: welded); raise for several or a nested free one."""
        if len(recs) > 1:
            listed = ", ".join(f"{r[0]!r} (line {r[5]})" for r in recs)
            raise ModelFileError(
                self.path,
                f"body {name!r} has {len(recs)} joints ({listed}); Model.from_mjcf "
                "supports one joint per body (split them into nested bodies)",
                line=recs[1][5],
                link=name,
                field=f"joint[{recs[1][0]}]",
            )
        rec = recs[0] if recs else None
        if rec is not None and rec[1] == "free" and parent != "world":
            raise ModelFileError(
                self.path,
                f"joint {rec[0]!r} is a free joint of body {name!r}, which is not a child "
                "of <worldbody>: a free flyer can only be the root joint",
                line=rec[5],
                link=name,
                field=f"joint[{rec[0]}]/type",
            )
        return rec


def _body_joint(path, name, el, parent, rec, R_f, p_f, degree, eulerseq) -> JointDescription:
    """The joint that attaches body ``name`` to ``parent``: its own, or a weld (module doc)."""
    I3, z3 = np.eye(3), np.zeros(3)
    ctx = Ctx(path, el.line, name)
    p_b = np.zeros(3)
    if "pos" in el.attrib:
        p_b = parse_numbers(el.attrib["pos"], ctx.at(field="body/pos"), 3)
    _, R_b = _orientation(el, ctx, degree, eulerseq, element="body")
    R_b, p_b = R_f @ R_b, R_f @ p_b + p_f  # a body inside <frame> elements
    if rec is None:  # welded to the parent
        return JointDescription(None, "fixed", parent, name, R_b, p_b, z3, I3, z3, {}, el.line)
    if rec[1] == "free":  # the file's pose is qpos0, not a placement
        return JointDescription(rec[0], "free_flyer", parent, name, I3, z3, z3, I3, z3, {},
                                rec[5])  # fmt: skip
    jname, jtype, jpos, axis, _, line, dyn = rec
    jtype = "revolute" if jtype == "hinge" else "prismatic"
    return JointDescription(jname, jtype, parent, name, R_b, p_b + R_b @ jpos, axis,
                            I3, -jpos, dyn, line, rec[4])  # fmt: skip
