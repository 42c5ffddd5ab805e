"""URDF ``<link><inertial>`` reader.

URDF (ROS ``urdfdom``) writes, per link::

    <inertial>
      <origin xyz="x y z" rpy="roll pitch yaw"/>   <!-- optional, default 0 -->
      <mass value="m"/>                            <!-- required -->
      <inertia ixx=".." ixy=".." ixz=".." iyy=".." iyz=".." izz=".."/>  <!-- all six required -->
    </inertial>

``origin`` is the pose ``X_BBi`` of the inertial frame Bi in the link frame B:
``xyz`` is the CoM ``c_BoBcm_B`` and ``rpy`` the rotation
``R_BBi = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes x, then y, then z;
urdfdom ``Rotation::setFromRPY``). The inertia is about the CoM in Bi's axes
(``I_BBcm_Bi``), with the products of inertia in the tensor convention
(``ixy = −∫ρ x y``). Units are SI (kg, m, kg m²).

A link without ``<inertial>`` is a massless frame (urdfdom leaves the link's
inertial empty; Pinocchio and Drake give it zero mass).

Link names, and joint names, must be unique (urdfdom's ``parseURDF`` rejects
a duplicate, and so does Pinocchio): a duplicate is a :class:`ModelFileError`
naming both lines.
"""

from __future__ import annotations

import numpy as np

from ._common import (
    Ctx,
    ModelInertials,
    check_unique_names,
    make_link,
    new_values_in_frame,
    parse_numbers,
    rpy_to_matrix,
    sym3,
    vector_text,
)
from ._xml import XNode, attr_insert_edit, attr_value_edit, insert_child_edit

_INERTIA_ATTRS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def read_urdf(root: XNode, path, data: bytes) -> ModelInertials:
    """Read every ``<robot>/<link>``'s inertial (see the module docstring)."""
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
        links.append(_read_inertial(path, data, name, inertial))
    return ModelInertials(str(path), "urdf", tuple(links), (), data)


def _read_inertial(path, data, name, inertial: XNode):
    ctx = Ctx(path, inertial.line, name)
    origin = inertial.find("origin")
    if origin is not None:
        xyz_text = origin.attrib.get("xyz")
        rpy_text = origin.attrib.get("rpy")
        oc = ctx.at(origin)
        xyz = (
            parse_numbers(xyz_text, oc.at(field="inertial/origin/xyz"), 3)
            if xyz_text is not None
            else np.zeros(3)
        )
        rpy = (
            parse_numbers(rpy_text, oc.at(field="inertial/origin/rpy"), 3)
            if rpy_text is not None
            else np.zeros(3)
        )
    else:
        xyz_text, xyz, rpy = None, np.zeros(3), np.zeros(3)
    R = rpy_to_matrix(rpy)

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
        t = vector_text(mass_el.attrib["value"], [mass], [m_new])
        if t is not None:
            edits.append(attr_value_edit(mass_el, "value", t))
        scale_c = max(float(np.max(np.abs(xyz))), float(np.max(np.abs(c_new))))
        text = vector_text(xyz_text, xyz, c_new, scale_c)
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
            t = vector_text(inertia_el.attrib[a], [vals[a]], [v], scale_i)
            if t is not None:
                edits.append(attr_value_edit(inertia_el, a, t))
        return edits

    return make_link(name, "inertial", mass, xyz, R, I_file, inertial.line, rewrite=rewrite)
