"""SDFormat ``<link><inertial>`` reader (SDF 1.4 to 1.11).

Per link (http://sdformat.org/spec?elem=link)::

    <inertial>
      <pose>x y z roll pitch yaw</pose>      <!-- X_BBi: CoM frame C in the link frame L -->
      <mass>m</mass>
      <inertia><ixx/><ixy/><ixz/><iyy/><iyz/><izz/></inertia>   <!-- about Co, in C's axes -->
      <fluid_added_mass><xx/>..<rr/></fluid_added_mass>          <!-- optional, SDF >= 1.10 -->
    </inertial>

* The pose rotation is roll-pitch-yaw about fixed axes,
  ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (as URDF), in radians unless
  ``degrees="true"``; with ``rotation_format="quat_xyzw"`` the pose holds 7
  numbers ``x y z qx qy qz qw``. Only poses relative to the link itself are
  supported (``relative_to``/``frame`` empty or naming the link).
* Defaults follow the specification: ``<mass>`` 1, ``<pose>`` zero,
  ``<inertia>`` the unit matrix; a link with no ``<inertial>`` at all has
  these defaults too (status ``"sdf-default"``), which is what libsdformat
  and Gazebo simulate. Each default used for a missing ``<mass>`` or
  ``<inertia>`` is listed in the notes. Inside ``<inertia>`` all six entries
  are required by the specification and a missing one is an error.
* ``<fluid_added_mass>``: 21 entries (default 0) of a symmetric 6×6 matrix in
  the ``[x, y, z, p, q, r]`` (linear, then angular) order, which SDF 1.10
  describes as "about the link's origin". It is returned as written in
  :attr:`LinkInertial.added_mass`; see :func:`spatialjax.io.load_sdf_added_mass`.
* ``<inertial auto="true">`` (SDF 1.11, computed by libsdformat from the
  collision geometry) has no values to check: the link is skipped with a note.

Links of nested models and of several models in one file are named with
SDF's scoping, ``model::link``; a file with a single model keeps plain link
names.
"""

from __future__ import annotations

import numpy as np

from ._common import (
    Ctx,
    ModelInertials,
    check_unique_names,
    format_number,
    make_link,
    new_values_in_frame,
    parse_numbers,
    quat_wxyz_to_matrix,
    rpy_to_matrix,
    sym3,
    vector_text,
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


def read_sdf(root: XNode, path, data: bytes) -> ModelInertials:
    """Read every link's inertial (see the module docstring)."""
    models = _models(root)
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
            links.append(_read_inertial(path, data, name, lname, inertial, notes))
    for inc in root.iter("include"):
        notes.append(f"line {inc.line}: <include> not followed; its links are not checked")
    if not models:
        notes.append("no <model> element found")
    return ModelInertials(str(path), "sdf", tuple(links), tuple(notes), data)


def _bool(text: str, ctx: Ctx) -> bool:
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise ctx.error(f"expected true/false, got {text!r}")


def _read_pose(pose: XNode, ctx: Ctx, link_name: str):
    pc = ctx.at(pose, "inertial/pose")
    for attr in ("relative_to", "frame"):
        rel = pose.attrib.get(attr, "").strip()
        if rel not in ("", link_name):
            raise pc.at(field=f"inertial/pose/{attr}").error(
                f"poses relative to another frame ({rel!r}) are not supported; "
                "express the inertial pose in the link frame"
            )
    fmt = pose.attrib.get("rotation_format", "euler_rpy").strip()
    degrees = _bool(pose.attrib.get("degrees", "false"), pc.at(field="inertial/pose/degrees"))
    if fmt == "euler_rpy":
        v = parse_numbers(pose.text, pc, 6)
        rpy = np.deg2rad(v[3:]) if degrees else v[3:]
        return v[:3], rpy_to_matrix(rpy)
    if fmt == "quat_xyzw":
        v = parse_numbers(pose.text, pc, 7)
        q = np.array([v[6], v[3], v[4], v[5]])
        if not np.any(q):
            raise pc.error("zero quaternion")
        return v[:3], quat_wxyz_to_matrix(q)
    raise pc.at(field="inertial/pose/rotation_format").error(
        f"unknown rotation_format {fmt!r} (expected 'euler_rpy' or 'quat_xyzw')"
    )


def _read_inertial(path, data, name, link_name, inertial: XNode, notes):
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
            if vector_text(None, [mass], [m_new]) is not None:
                edits.append(
                    insert_child_edit(inertial, data, f"<mass>{format_number(m_new)}</mass>")
                )
        else:
            t = vector_text(mass_el.text, [mass], [m_new])
            if t is not None:
                edits.append(text_edit(mass_el, data, t))
        scale_c = max(float(np.max(np.abs(com))), float(np.max(np.abs(c_new))))
        if pose is None:
            t = vector_text(None, com, c_new, scale_c)
            if t is not None:
                edits.append(insert_child_edit(inertial, data, f"<pose>{t} 0 0 0</pose>"))
        else:
            tokens = pose.text.split()
            t = vector_text(" ".join(tokens[:3]), com, c_new, scale_c)
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
            if vector_text(None, old, [new[a] for a in _INERTIA], scale_i) is not None:
                body = "".join(f"<{a}>{format_number(new[a])}</{a}>" for a in _INERTIA)
                edits.append(insert_child_edit(inertial, data, f"<inertia>{body}</inertia>"))
        else:
            for a in _INERTIA:
                t = vector_text(els[a].text, [vals[a]], [new[a]], scale_i)
                if t is not None:
                    edits.append(text_edit(els[a], data, t))
        return edits

    return make_link(
        name, "inertial", mass, com, R, I_file, inertial.line, added_mass=added, rewrite=rewrite
    )
