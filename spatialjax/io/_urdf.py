"""URDF reader: the links' inertials and the kinematic tree, in one parse.

``<inertial>`` about the CoM in the inertial frame's axes (``rpy`` is
``Rz(yaw) Ry(pitch) Rx(roll)``), products of inertia in the tensor convention;
joints' frames are their child links' frames. Conventions: docs page
``model-files.md#urdf``.
"""

from __future__ import annotations

import numpy as np

from .._rotations import rpy_to_matrix
from ._common import (
    JOINT_DYNAMICS_FIELDS,
    Ctx,
    ModelFileError,
    ModelInertials,
    check_unique_names,
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
    JointDescription,
    LinkDescription,
    ModelDescription,
    check_connected,
    parent_joints,
)
from ._xml import XNode, attr_insert_edit, attr_value_edit, insert_child_edit

_INERTIA_ATTRS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")
_KNOWN_UNSUPPORTED = ("floating", "planar", "spherical")


def read_urdf(root: XNode, path, data: bytes, *, tree: bool = False) -> ModelDescription:
    """Read a ``<robot>``: every link's inertial, and with ``tree`` its joints (module doc)."""
    if tree:
        return _read_urdf_tree(root, path, data)
    return ModelDescription(str(path), "urdf", inertials=_read_inertials(root, path, data))


def _read_inertials(root: XNode, path, data: bytes) -> ModelInertials:
    links = []
    rule = "URDF {what} names must be unique (urdfdom)"
    check_unique_names(path, root.findall("joint"), "joint", rule)
    check_unique_names(path, root.findall("link"), "link", rule)
    for link in root.findall("link"):
        name = link.attrib.get("name")
        if name is None:
            raise Ctx(path, link.line, None, "link/name").error("<link> without a name")
        inertial = link.find("inertial")
        if inertial is None:
            z3 = np.zeros(3)
            links.append(make_link(name, "absent", 0.0, z3, np.eye(3), np.zeros((3, 3)), link.line))
            continue
        links.append(_read_urdf_inertial(path, data, name, inertial))
    return ModelInertials(str(path), "urdf", tuple(links), (), data)


def _origin(origin: XNode | None, ctx: Ctx, field: str):
    """``(R, xyz)`` of an ``<origin xyz rpy>`` (each zero when absent); errors name ``field``."""
    xyz, rpy = np.zeros(3), np.zeros(3)
    if origin is not None and origin.attrib.get("xyz") is not None:
        xyz = parse_numbers(origin.attrib["xyz"], ctx.at(origin, f"{field}/xyz"), 3)
    if origin is not None and origin.attrib.get("rpy") is not None:
        rpy = parse_numbers(origin.attrib["rpy"], ctx.at(origin, f"{field}/rpy"), 3)
    return rpy_to_matrix(rpy), xyz


def _read_urdf_inertial(path, data, name, inertial: XNode):
    ctx = Ctx(path, inertial.line, name)
    origin = inertial.find("origin")
    xyz_text = origin.attrib.get("xyz") if origin is not None else None
    R, xyz = _origin(origin, ctx, "inertial/origin")

    mass_el = inertial.find("mass")
    if mass_el is None:
        raise ctx.at(field="inertial/mass").error("<inertial> has no <mass> element")
    mass = parse_numbers(mass_el.attrib.get("value"), ctx.at(mass_el, "inertial/mass/value"), 1)[0]

    inertia_el = inertial.find("inertia")
    if inertia_el is None:
        raise ctx.at(field="inertial/inertia").error("<inertial> has no <inertia> element")
    vals = {}
    for a in _INERTIA_ATTRS:
        text = inertia_el.attrib.get(a)
        fc = ctx.at(inertia_el, f"inertial/inertia/{a}")
        if text is None:
            raise fc.error("missing attribute (urdfdom requires all six of ixx..izz)")
        vals[a] = parse_numbers(text, fc, 1)[0]
    I_file = sym3(*(vals[a] for a in _INERTIA_ATTRS))

    def rewrite(m_new, c_new, I_c_new):
        """Edits that write (m, c, I_c in link axes) into this <inertial>, keeping rpy."""
        edits = []
        t = updated_vector_text(mass_el.attrib["value"], [mass], [m_new])
        if t is not None:
            edits.append(attr_value_edit(mass_el, "value", t))
        scale_c = max(float(np.max(np.abs(xyz))), float(np.max(np.abs(c_new))))
        text = updated_vector_text(xyz_text, xyz, c_new, scale_c)
        if text is not None:
            if origin is None:
                edits.append(
                    insert_child_edit(inertial, data, f'<origin xyz="{text}" rpy="0 0 0"/>')
                )
            elif xyz_text is None:
                edits.append(attr_insert_edit(origin, "xyz", text))
            else:
                edits.append(attr_value_edit(origin, "xyz", text))
        I_new = new_values_in_frame(R, I_c_new)
        new6 = (I_new[0, 0], I_new[0, 1], I_new[0, 2], I_new[1, 1], I_new[1, 2], I_new[2, 2])
        scale_i = max(float(np.max(np.abs(I_file))), float(np.max(np.abs(I_new))))
        for a, v in zip(_INERTIA_ATTRS, new6, strict=True):
            t = updated_vector_text(inertia_el.attrib[a], [vals[a]], [v], scale_i)
            if t is not None:
                edits.append(attr_value_edit(inertia_el, a, t))
        return edits

    return make_link(name, "inertial", mass, xyz, R, I_file, inertial.line, rewrite=rewrite)


def _urdf_joint_dynamics(el, name, jctx):
    """``{Model field: value}`` from a joint's ``<dynamics>`` and ``<limit>`` (given ones only)."""
    out = {}
    for tag, attrs in JOINT_DYNAMICS_FIELDS.items():  # attributes of <dynamics>, <limit>
        sub = el.find(tag)
        if sub is None:
            continue
        for attr, field in attrs.items():
            if sub.attrib.get(attr) is not None:
                ctx = jctx.at(sub, f"joint[{name}]/{tag}/{attr}")
                signed = attr in ("lower", "upper")
                out[field] = joint_value(sub.attrib[attr], ctx, name, f"{tag} {attr}=", signed)
    if "lower" in out and "upper" in out and out["lower"] > out["upper"]:
        raise jctx.at(el.find("limit"), f"joint[{name}]/limit").error(
            f"joint {name!r}: limit lower {out['lower']} > upper {out['upper']}"
        )
    return out


def _read_urdf_joint(el: XNode, path) -> JointDescription:
    name = el.attrib.get("name")
    if name is None:
        raise Ctx(path, el.line, None, "joint/name").error("<joint> without a name")
    jctx = Ctx(path, el.line, None, f"joint[{name}]")
    jtype = el.attrib.get("type")
    if jtype is None:
        raise jctx.at(field=f"joint[{name}]/type").error(f"joint {name!r} has no type")
    if jtype not in _SUPPORTED:
        what = "a known URDF joint type" if jtype in _KNOWN_UNSUPPORTED else "not a URDF type"
        raise jctx.at(field=f"joint[{name}]/type").error(
            f"joint {name!r} has type {jtype!r} ({what}), which Model.from_urdf does "
            f"not support (supported: {', '.join(_SUPPORTED)}; a floating base is "
            "requested with floating_base=True, not with a joint)"
        )
    ends = {}
    for role in ("parent", "child"):
        sub = el.find(role)
        link = sub.attrib.get("link") if sub is not None else None
        if link is None:
            raise jctx.at(sub, f"joint[{name}]/{role}/link").error(
                f"joint {name!r} has no <{role} link=...>"
            )
        ends[role] = link
    R, xyz = _origin(el.find("origin"), jctx, f"joint[{name}]/origin")
    axis = np.array([1.0, 0.0, 0.0])
    ax = el.find("axis")
    if ax is not None and ax.attrib.get("xyz") is not None:
        actx = jctx.at(ax, f"joint[{name}]/axis/xyz")
        axis = joint_axis(ax.attrib["xyz"], actx, name, fixed=jtype == "fixed")
    dyn = _urdf_joint_dynamics(el, name, jctx)
    return JointDescription(name, jtype, ends["parent"], ends["child"], R, xyz, axis,
                            np.eye(3), np.zeros(3), dyn, el.line, el)  # fmt: skip


def _drake_armature(root: XNode, path) -> dict:
    """``{joint: ρ² I_r}`` from ``<transmission>`` elements with ``drake:rotor_inertia``."""
    out = {}
    for tr in root.findall("transmission"):
        jels = tr.findall("joint")
        for act in tr.findall("actuator"):
            ri = act.find("drake:rotor_inertia")
            if ri is None or len(jels) != 1 or jels[0].attrib.get("name") is None:
                continue
            joint = jels[0].attrib["name"]
            ctx = Ctx(path, ri.line, None, f"joint[{joint}]/transmission/drake:rotor_inertia")
            gr = act.find("drake:gear_ratio")
            gear = None
            if gr is not None:
                gctx = Ctx(path, gr.line, None, f"joint[{joint}]/transmission/drake:gear_ratio")
                gear = (gr.attrib.get("value"), gctx)
            out[joint] = reflected_inertia((ri.attrib.get("value"), ctx), gear, joint)
    return out


def _read_urdf_tree(root: XNode, path, data: bytes) -> ModelDescription:
    link_line, link_el = {}, {}
    for el in root.findall("link"):
        name = el.attrib.get("name")
        if name is None:
            raise ModelFileError(path, "<link> without a name", line=el.line, field="link/name")
        if name in link_line:
            raise ModelFileError(
                path,
                f"duplicate link name {name!r} (first defined on line {link_line[name]})",
                line=el.line,
                link=name,
            )
        link_line[name] = el.line
        link_el[name] = el
    if not link_line:
        raise ModelFileError(path, "the URDF has no <link>", line=root.line)
    inertials = {lk.name: lk for lk in _read_inertials(root, path, data).links}

    joints = [_read_urdf_joint(el, path) for el in root.findall("joint")]
    armature = _drake_armature(root, path)
    for j in joints:
        if j.name in armature:
            j.dynamics["armature"] = armature[j.name]
    for j in joints:
        for role in ("parent", "child"):
            link = getattr(j, role)
            if link not in link_line:
                raise ModelFileError(
                    path,
                    f"joint {j.name!r} names {role} link {link!r}, which is not a <link> "
                    "of this file",
                    line=j.line,
                    field=f"joint[{j.name}]/{role}/link",
                )
    parent_joint = parent_joints(path, joints, "child/link")
    roots = [n for n in link_line if n not in parent_joint]
    if len(roots) != 1:
        if not roots:
            problem = "no root link: every link is the child of a joint, so the joints form a loop"
        else:
            listed = ", ".join(f"{n!r} (line {link_line[n]})" for n in roots)
            problem = (
                f"{len(roots)} root links ({listed}): a URDF tree has exactly one link "
                "that is no joint's child"
            )
        raise ModelFileError(path, problem, line=root.line)
    check_connected(path, roots[0], joints, link_line, "root link")
    return ModelDescription(
        str(path),
        "urdf",
        name=root.attrib.get("name", ""),
        line=root.line,
        links=tuple(
            LinkDescription(n, inertials[n], line, link_el[n]) for n, line in link_line.items()
        ),
        joints=tuple(joints),
        root=roots[0],
        source=data,
        element=root,
    )
