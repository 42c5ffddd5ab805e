"""URDF kinematic-tree reader for :meth:`spatialjax.multibody.Model.from_urdf`.

Reads ``<robot>/<link>`` and ``<robot>/<joint>`` with the project's XML
parser (``spatialjax.io``: standard library ``expat``, line numbers kept) and
the inertials with :func:`spatialjax.io.read_model`. Joint elements (URDF
specification, ROS ``urdfdom``)::

    <joint name="j" type="revolute|continuous|prismatic|fixed">
      <parent link="P"/>  <child link="C"/>
      <origin xyz="x y z" rpy="r p y"/>   <!-- pose of the joint frame (= C's frame) in P -->
      <axis xyz="1 0 0"/>                 <!-- in the joint frame; default x -->
    </joint>

The joint frame is ``T_PJ = (Rz(y) Ry(p) Rx(r), xyz)``; at joint value ``q``
the child frame is ``T_PC = T_PJ · T_J(q)`` with ``T_J`` a rotation by ``q``
about ``axis`` (revolute, continuous) or a translation ``q · axis``
(prismatic). Fixed and locked joints are merged into the parent body.

Joint dynamics and limits (the :class:`~spatialjax.multibody.Model` fields)::

    <dynamics damping="d" friction="f"/>     <!-- viscous (N m s/rad), Coulomb (N m) -->
    <limit lower="l" upper="u" velocity="v" effort="e"/>

An attribute that is absent leaves the field at its default (0 for
``damping``/``friction``, ±inf for the limits; urdfdom would read a missing
``lower``/``upper`` as 0). Continuous joints have no position limits. URDF
has no armature (0).

Bodies are numbered depth first from the root link, the children of a link
in the byte order of their joint names (the order of ``urdfdom``'s joint map,
hence the same numbering as Pinocchio's ``buildModelFromUrdf``). ``<mimic>``
is ignored (the joint stays independent, as in Pinocchio); ``<transmission>``,
``<gazebo>`` and other elements are ignored.
"""

from __future__ import annotations

import math

import numpy as np

from ..io import ModelFileError, read_model
from ..io._common import Ctx, parse_numbers, read_bytes, rpy_to_matrix
from ..io._xml import parse_xml
from ._model import JOINT_DYNAMICS_DEFAULTS, build_model

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")
_KNOWN_UNSUPPORTED = ("floating", "planar", "spherical")


def axis_rotation(axis, angle):
    """Active rotation by ``angle`` about the unit ``axis`` (Rodrigues), float64."""
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def link_params(link, R, p):
    """10-vector of a :class:`~spatialjax.io.LinkInertial` placed at pose ``(R, p)`` in a body."""
    m = link.mass
    c = R @ link.com + p
    I_c = R @ link.inertia_com @ R.T
    I_o = I_c + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


class _Joint:
    __slots__ = ("name", "type", "parent", "child", "R", "p", "axis", "line", "dyn")


#: URDF attribute -> Model joint-dynamics field (``<dynamics>``, ``<limit>``)
_DYNAMICS_ATTRS = {"damping": "damping", "friction": "friction"}
_LIMIT_ATTRS = {
    "lower": "lower",
    "upper": "upper",
    "velocity": "velocity_limit",
    "effort": "effort_limit",
}


def _read_joint_dynamics(el, name, jctx):
    """``{Model field: value}`` from a joint's ``<dynamics>`` and ``<limit>`` (given ones only)."""
    out = {}
    for tag, attrs in (("dynamics", _DYNAMICS_ATTRS), ("limit", _LIMIT_ATTRS)):
        sub = el.find(tag)
        if sub is None:
            continue
        for attr, field in attrs.items():
            if sub.attrib.get(attr) is not None:
                ctx = jctx.at(sub, f"joint[{name}]/{tag}/{attr}")
                (x,) = parse_numbers(sub.attrib[attr], ctx, 1)
                signed = attr in ("lower", "upper")
                if not math.isfinite(x) or (not signed and x < 0):
                    want = "a finite value" if signed else "a finite value >= 0"
                    raise ctx.error(f"joint {name!r}: {tag} {attr}={x} (expected {want})")
                out[field] = float(x)
    if "lower" in out and "upper" in out and out["lower"] > out["upper"]:
        raise jctx.at(el.find("limit"), f"joint[{name}]/limit").error(
            f"joint {name!r}: limit lower {out['lower']} > upper {out['upper']}"
        )
    return out


def _read_joints(root, path):
    joints = []
    for el in root.findall("joint"):
        name = el.attrib.get("name")
        ctx = Ctx(path, el.line, None, "joint/name")
        if name is None:
            raise ctx.error("<joint> without a name")
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
        j = _Joint()
        j.name, j.type, j.line = name, jtype, el.line
        for role in ("parent", "child"):
            sub = el.find(role)
            link = sub.attrib.get("link") if sub is not None else None
            if link is None:
                raise jctx.at(sub, f"joint[{name}]/{role}/link").error(
                    f"joint {name!r} has no <{role} link=...>"
                )
            setattr(j, role, link)
        origin = el.find("origin")
        xyz, rpy = np.zeros(3), np.zeros(3)
        if origin is not None:
            if origin.attrib.get("xyz") is not None:
                xyz = parse_numbers(
                    origin.attrib["xyz"], jctx.at(origin, f"joint[{name}]/origin/xyz"), 3
                )
            if origin.attrib.get("rpy") is not None:
                rpy = parse_numbers(
                    origin.attrib["rpy"], jctx.at(origin, f"joint[{name}]/origin/rpy"), 3
                )
        j.R, j.p = rpy_to_matrix(rpy), xyz
        axis = np.array([1.0, 0.0, 0.0])
        ax = el.find("axis")
        if ax is not None and ax.attrib.get("xyz") is not None:
            actx = jctx.at(ax, f"joint[{name}]/axis/xyz")
            axis = parse_numbers(ax.attrib["xyz"], actx, 3)
            norm = float(np.linalg.norm(axis))
            if jtype != "fixed" and norm == 0.0:
                raise actx.error(f"joint {name!r} has a zero axis")
            axis = axis / norm if norm > 0 else axis
        j.axis = axis
        j.dyn = _read_joint_dynamics(el, name, jctx)
        joints.append(j)
    return joints


def load_urdf_model(path, *, locked_joints=None, floating_base=False, dtype=None):
    """Read a URDF kinematic tree into a :class:`~spatialjax.multibody.Model` (see module doc)."""
    data = read_bytes(path)
    root = parse_xml(data, path)
    if root.tag != "robot":
        raise ModelFileError(
            path, f"expected a URDF file (root element <robot>), got <{root.tag}>", line=root.line
        )
    robot_name = root.attrib.get("name", "")
    link_els = root.findall("link")
    link_line = {}
    for el in link_els:
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
    if not link_line:
        raise ModelFileError(path, "the URDF has no <link>", line=root.line)
    inertials = {lk.name: lk for lk in read_model(path).links}

    joints = _read_joints(root, path)
    by_name, parent_joint, children = {}, {}, {n: [] for n in link_line}
    for j in joints:
        if j.name in by_name:
            raise ModelFileError(
                path,
                f"duplicate joint name {j.name!r} (first defined on line {by_name[j.name].line})",
                line=j.line,
                field=f"joint[{j.name}]",
            )
        by_name[j.name] = j
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
        if j.child in parent_joint:
            other = parent_joint[j.child]
            raise ModelFileError(
                path,
                f"link {j.child!r} is the child of two joints, {other.name!r} (line "
                f"{other.line}) and {j.name!r}: the joints form a kinematic loop, which a "
                "tree model cannot represent",
                line=j.line,
                field=f"joint[{j.name}]/child/link",
            )
        parent_joint[j.child] = j
        children[j.parent].append(j)

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

    locked = dict(locked_joints or {})
    for name, value in locked.items():
        if name not in by_name:
            movable = [j.name for j in joints if j.type != "fixed"]
            raise ValueError(
                f"locked_joints: no joint named {name!r} in {path} (movable joints: "
                f"{', '.join(movable)})"
            )
        if by_name[name].type == "fixed":
            raise ValueError(f"locked_joints: joint {name!r} in {path} is already fixed")
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"locked_joints[{name!r}]: expected a number, got {type(value).__name__}"
            ) from None
        if not math.isfinite(value):
            raise ValueError(f"locked_joints[{name!r}]: expected a finite value, got {value}")
        locked[name] = value

    # depth-first from the root; children in joint-name byte order (urdfdom's std::map)
    for lst in children.values():
        lst.sort(key=lambda j: j.name.encode("utf-8"))
    root_link = roots[0]
    attach = {}  # link -> (body, R_body_link, p_body_link)
    parents, types, jnames, bnames, PR, Pp, axes = [], [], [], [], [], [], []
    dyn = []  # per body: {Model joint-dynamics field: value} read from the file
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
    else:
        attach[root_link] = (-1, np.eye(3), np.zeros(3))

    def visit(link):
        # Pinocchio's parseRootTree order: a joint's body, then its whole subtree.
        b, R_bl, p_bl = attach[link]
        for j in children[link]:
            R_bj = R_bl @ j.R
            p_bj = p_bl + R_bl @ j.p
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
                attach[j.child] = (k, np.eye(3), np.zeros(3))
            else:
                val = locked.get(j.name, 0.0)
                if j.type == "prismatic":
                    R_c, p_c = R_bj, p_bj + R_bj @ (val * j.axis)
                elif j.type == "fixed":
                    R_c, p_c = R_bj, p_bj
                else:
                    R_c, p_c = R_bj @ axis_rotation(j.axis, val), p_bj
                attach[j.child] = (b, R_c, p_c)
            visit(j.child)

    visit(root_link)
    unreached = [n for n in link_line if n not in attach]
    if unreached:
        raise ModelFileError(
            path,
            f"links {', '.join(map(repr, unreached))} are not connected to the root link "
            f"{root_link!r}: their joints form a loop",
            line=link_line[unreached[0]],
        )
    # DFS above numbers a body before its subtree, so parents[i] < i holds.
    nb = len(parents)
    params = np.zeros((nb, 10))
    for name, (b, R, p) in attach.items():
        if b >= 0 and name in inertials:
            params[b] += link_params(inertials[name], R, p)
    fnames = list(link_line)
    return build_model(
        name=robot_name,
        parents=parents,
        joint_types=types,
        joint_names=jnames,
        body_names=bnames,
        placement_R=PR,
        placement_p=Pp,
        axes=axes,
        params=params,
        frame_names=fnames,
        frame_bodies=[attach[n][0] for n in fnames],
        frame_R=[attach[n][1] for n in fnames],
        frame_p=[attach[n][2] for n in fnames],
        joint_dynamics={f: [d.get(f) for d in dyn] for f in JOINT_DYNAMICS_DEFAULTS},
        dtype=dtype,
    )
