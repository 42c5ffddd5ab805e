r"""MJCF (MuJoCo) ``<body><inertial>`` reader.

Per body (https://mujoco.readthedocs.io/en/stable/XMLreference.html#body-inertial)::

    <inertial pos="x y z" mass="m" diaginertia="a b c"/>          <!-- principal form -->
    <inertial pos="x y z" quat="w x y z" mass="m" diaginertia="a b c"/>
    <inertial pos="x y z" mass="m" fullinertia="Ixx Iyy Izz Ixy Ixz Iyz"/>

* ``pos`` (required) is the CoM ``c_BoBcm_B`` in the body frame.
* The inertial frame's orientation ``R_BBi`` is given by at most one of
  ``quat`` (``w x y z``, normalised), ``axisangle`` (``x y z angle``),
  ``euler`` (three angles applied in the order of the compiler's
  ``eulerseq``; a lower-case axis rotates about the *moving* frame, so it
  post-multiplies, an upper-case axis about the *fixed* parent frame, so it
  pre-multiplies: the default ``"xyz"`` is ``R = Rx(a) Ry(b) Rz(c)``),
  ``xyaxes`` (x axis, then y orthogonalised; ``z = x × y``) or ``zaxis`` (the
  minimal rotation taking ẑ to the given axis). ``euler`` and ``axisangle``
  angles are in the compiler's ``angle`` unit, which defaults to **degrees**
  in MJCF; ``<compiler angle="radian">`` switches to radians. When several
  ``<compiler>`` elements set an attribute, the last one wins (as in MuJoCo).
* ``diaginertia`` is the inertia about the CoM in the inertial frame's axes;
  ``fullinertia`` is the full matrix about the CoM in the *body* frame, in the
  order ``M11 M22 M33 M12 M13 M23`` (MuJoCo forbids an orientation beside it
  other than a ``quat``, which it overwrites: it is ignored here too).

Bodies without an ``<inertial>`` get their inertia from their geoms at
compile time; they are not read (the notes count them). Compiler options
that change inertias (``inertiafromgeom="true"``, ``balanceinertia``,
``boundmass``, ``boundinertia``) are reported in the notes, as are
``<include>``, ``<attach>`` and ``<replicate>`` meta-elements, which are not
expanded. Unnamed bodies are called ``"<body N>"`` with N their MuJoCo body
id (depth-first order, world = 0).
"""

from __future__ import annotations

import numpy as np

from ._common import (
    Ctx,
    ModelInertials,
    format_number,
    make_link,
    matrix_to_quat_wxyz,
    new_values_in_frame,
    parse_numbers,
    principal_axes,
    quat_wxyz_to_matrix,
    rot_axis,
    sym3,
    vector_text,
)
from ._xml import XNode, attr_insert_edit, attr_rename_edit, attr_value_edit

_ORIENT = ("quat", "axisangle", "xyaxes", "zaxis", "euler")


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
    """MuJoCo's Euler convention (angles in radians): see the module docstring."""
    R = np.eye(3)
    for ang, ch in zip(angles, seq, strict=True):
        Ri = rot_axis("xyz".index(ch.lower()), float(ang))
        R = R @ Ri if ch.islower() else Ri @ R
    return R


def _axis_angle(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


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


def read_mjcf(root: XNode, path, data: bytes) -> ModelInertials:
    """Read every ``<body>``'s explicit ``<inertial>`` (see the module docstring)."""
    degree, eulerseq, notes = _compiler(root, path)
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
            links.append(_read_inertial(path, data, name, inertial, degree, eulerseq, notes))
    if inferred:
        shown = ", ".join(inferred[:5]) + (", ..." if len(inferred) > 5 else "")
        noun = "body" if len(inferred) == 1 else "bodies"
        notes.append(
            f"{len(inferred)} {noun} without <inertial> (MuJoCo infers their inertia from "
            f"geoms; not checked): {shown}"
        )
    return ModelInertials(str(path), "mjcf", tuple(links), tuple(notes), data)


def _read_inertial(path, data, name, node: XNode, degree, eulerseq, notes):
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
        t = vector_text(node.attrib["mass"], [mass], [m_new])
        if t is not None:
            edits.append(attr_value_edit(node, "mass", t))
        scale_c = max(float(np.max(np.abs(pos))), float(np.max(np.abs(c_new))))
        t = vector_text(node.attrib["pos"], pos, c_new, scale_c)
        if t is not None:
            edits.append(attr_value_edit(node, "pos", t))
        I_c_new = 0.5 * (I_c_new + I_c_new.T)
        scale_i = max(float(np.max(np.abs(I_file))), float(np.max(np.abs(I_c_new))))
        if has_full:
            new = [I_c_new[0, 0], I_c_new[1, 1], I_c_new[2, 2]]
            new += [I_c_new[0, 1], I_c_new[0, 2], I_c_new[1, 2]]
            old = [I_file[0, 0], I_file[1, 1], I_file[2, 2]]
            old += [I_file[0, 1], I_file[0, 2], I_file[1, 2]]
            t = vector_text(node.attrib["fullinertia"], old, new, scale_i)
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
        t = vector_text(node.attrib["diaginertia"], np.diag(I_file), d_new, scale_i)
        if t is not None:
            edits.append(attr_value_edit(node, "diaginertia", t))
        return edits

    return make_link(name, "inertial", mass, pos, R, I_file, node.line, rewrite=rewrite)
