"""jaxsim (``pip install jaxsim``) in its venv; run by ``bench_dynamics.py`` (see ``_common``).

The URDF is written as an SDF in URDF frame convention (:func:`urdf_to_sdf`: rod
converts URDF with Gazebo's ``gz``, not installable from PyPI). Conventions
converted: the data use ``VelRepr.Body`` (base velocity ``[v; ω]`` in
the base frame, as Pinocchio's free flyer), ``q = [p, wxyz, joints]``, joints
permuted from jaxsim's order to Pinocchio's by name. A fixed-base robot (Panda)
gets a fixed joint to ``world``, and its base rows/columns are dropped.
``fk``: ``model.forward_kinematics`` (every link); ``rnea``: ``model.inverse_dynamics``;
``mass``: ``model.free_floating_mass_matrix``; ``fd``:
``model.forward_dynamics_aba`` (a free flyer's base force enters as the base
link's external force in body representation); ``jac``: ``frame.jacobian`` (or
``link.jacobian`` for a link) with ``output_vel_repr=VelRepr.Mixed`` (world axes at
the frame origin, rows ``[v; ω]``).
"""

from __future__ import annotations

import sys
import tempfile
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jaxsim.api as js  # noqa: E402
import numpy as np  # noqa: E402
from jaxsim import VelRepr  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402


def _rpy_matrix(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _matrix_rpy(R):
    roll, yaw = np.arctan2(R[2, 1], R[2, 2]), np.arctan2(R[1, 0], R[0, 0])
    return np.array([roll, -np.arcsin(np.clip(R[2, 0], -1, 1)), yaw])


def _origin(el):
    o = el.find("origin")
    o = {} if o is None else o.attrib
    xyz = np.array([float(x) for x in o.get("xyz", "0 0 0").split()])
    rpy = np.array([float(x) for x in o.get("rpy", "0 0 0").split()])
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = _rpy_matrix(rpy), xyz
    return H


def _pose_text(H):
    return " ".join(f"{x:.17g}" for x in (*H[:3, 3], *_matrix_rpy(H[:3, :3])))


def urdf_to_sdf(urdf: str, fixed_base: bool) -> str:
    """The URDF as an SDF 1.7 in URDF frame convention (no Gazebo needed).

    rod converts URDF through Gazebo's ``gz sdf -p``, absent here; the same tree is
    written directly (the root link first): each joint's pose ``relative_to`` its
    parent link (the URDF ``<origin>``), each child link's pose ``relative_to`` its
    joint (identity), axes in the joint frame, inertials unchanged. A massless link
    on a fixed joint becomes a ``<frame>`` of its nearest massive ancestor (as
    ``gz sdf`` lumps it; jaxsim drops massless links) and its children's joints move
    to that ancestor. A fixed base is a fixed joint to ``world``.
    """
    root = ET.parse(urdf).getroot()
    sdf = ET.Element("sdf", version="1.7")
    model = ET.SubElement(sdf, "model", name=root.get("name", "robot"))
    joints = list(root.iter("joint"))
    parent_joint = {j.find("child").get("link"): j for j in joints}

    def mass(link):
        i = link.find("inertial")
        return 0.0 if i is None else float(i.find("mass").get("value"))

    link_el = {link.get("name"): link for link in root.iter("link")}
    lumped = {}  # massless fixed link -> (ancestor link, pose in it)

    def anchor(name):
        """``(link that stays, pose of ``name`` in it)``."""
        if name in lumped:
            return lumped[name]
        return name, np.eye(4)

    ordered = []  # joints, parents before children
    seen = {n for n in link_el if n not in parent_joint}
    while len(ordered) < len(joints):
        for j in joints:
            if j not in ordered and j.find("parent").get("link") in seen:
                ordered.append(j)
                seen.add(j.find("child").get("link"))
    for j in ordered:
        child = j.find("child").get("link")
        if j.get("type") == "fixed" and mass(link_el[child]) == 0.0:
            a, H = anchor(j.find("parent").get("link"))
            lumped[child] = (a, H @ _origin(j))

    def pose(el, text, rel=None):
        ET.SubElement(el, "pose", **({"relative_to": rel} if rel else {})).text = text

    links = [link for link in root.iter("link") if link.get("name") not in lumped]
    links.sort(key=lambda link: link.get("name") in parent_joint)  # the root link first
    base = links[0].get("name")
    for link in links:
        name = link.get("name")
        sl = ET.SubElement(model, "link", name=name)
        if name in parent_joint:
            pose(sl, "0 0 0 0 0 0", rel=parent_joint[name].get("name"))
        inertial = link.find("inertial")
        if inertial is not None:
            si = ET.SubElement(sl, "inertial")
            pose(si, _pose_text(_origin(inertial)))
            ET.SubElement(si, "mass").text = inertial.find("mass").get("value")
            ii = ET.SubElement(si, "inertia")
            for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
                ET.SubElement(ii, k).text = inertial.find("inertia").get(k, "0")
    for name, (a, H) in lumped.items():
        fr = ET.SubElement(model, "frame", name=name, attached_to=a)
        pose(fr, _pose_text(H), rel=a)
    for joint in ordered:
        child = joint.find("child").get("link")
        if child in lumped:
            continue
        parent, H = anchor(joint.find("parent").get("link"))
        sj = ET.SubElement(model, "joint", name=joint.get("name"), type=joint.get("type"))
        ET.SubElement(sj, "parent").text = parent
        ET.SubElement(sj, "child").text = child
        pose(sj, _pose_text(H @ _origin(joint)), rel=parent)
        ax = joint.find("axis")  # jaxsim hashes every joint's axis, fixed ones too
        sa = ET.SubElement(sj, "axis")
        ET.SubElement(sa, "xyz").text = ax.get("xyz") if ax is not None else "1 0 0"
        if joint.get("type") != "fixed":
            lim = ET.SubElement(sa, "limit")
            ET.SubElement(lim, "lower").text = "-1e16"
            ET.SubElement(lim, "upper").text = "1e16"
    if fixed_base:
        sj = ET.SubElement(model, "joint", name="world_fixed", type="fixed")
        ET.SubElement(sj, "parent").text = "world"
        ET.SubElement(sj, "child").text = base
    out = Path(tempfile.mkdtemp()) / "model.sdf"
    ET.ElementTree(sdf).write(out)
    return str(out)


class Peer:
    def __init__(self, spec):
        self.floating = fb = spec["floating"]
        sdf = urdf_to_sdf(spec["urdf"], fixed_base=not fb)
        model = js.model.JaxSimModel.build_from_model_description(
            model_description=Path(sdf), is_urdf=False, considered_joints=spec["joint_names"]
        )
        names = list(model.joint_names())
        if sorted(names) != sorted(spec["joint_names"]):
            raise ValueError(f"jaxsim joints {names} differ from Pinocchio's")
        self.perm = np.array([names.index(n) for n in spec["joint_names"]])  # pin k <- js perm[k]
        self.inv = np.argsort(self.perm)  # js i <- pin inv[i]
        self.versions = dict(jaxsim=version("jaxsim"))
        self.notes = ["VelRepr.Body data; jac output VelRepr.Mixed"]
        ee = spec["ee_frame"]
        link_names = list(model.link_names())
        if ee in link_names:
            li = js.link.name_to_idx(model, link_name=ee)

            def ee_jac(data):
                return js.link.jacobian(model, data, link_index=li, output_vel_repr=VelRepr.Mixed)

            def ee_pose(data):
                return js.link.transform(model, data, link_index=li)
        else:
            fi = js.frame.name_to_idx(model, frame_name=ee)

            def ee_jac(data):
                return js.frame.jacobian(model, data, frame_index=fi, output_vel_repr=VelRepr.Mixed)

            def ee_pose(data):
                return js.frame.transform(model, data, frame_index=fi)

        nl = model.number_of_links()

        def data_of(q, v):
            return js.data.JaxSimModelData.build(
                model=model,
                base_position=q[:3],
                base_quaternion=q[3:7],
                joint_positions=q[7:],
                base_linear_velocity=v[:3],
                base_angular_velocity=v[3:6],
                joint_velocities=v[6:],
                velocity_representation=VelRepr.Body,
            )

        def fk(q, v, a, tau):
            return js.model.forward_kinematics(model, data_of(q, v))

        def rnea(q, v, a, tau):
            f, t = js.model.inverse_dynamics(
                model, data_of(q, v), joint_accelerations=a[6:], base_acceleration=a[:6]
            )
            return jnp.concatenate([f, t])

        def mass(q, v, a, tau):
            return js.model.free_floating_mass_matrix(model, data_of(q, v))

        def fd(q, v, a, tau):
            lf = jnp.zeros((nl, 6), q.dtype).at[0].set(tau[:6])
            b, s = js.model.forward_dynamics_aba(
                model, data_of(q, v), joint_forces=tau[6:], link_forces=lf
            )
            return jnp.concatenate([b, s])

        def jac(q, v, a, tau):
            return ee_jac(data_of(q, v))

        self.ops = dict(fk=fk, rnea=rnea, mass=mass, fd=fd, jac=jac)
        self.check_ops = dict(fk=lambda q, v, a, tau: ee_pose(data_of(q, v)))

    def inputs(self, Q, V, A, T):
        n = len(Q)
        if self.floating:
            q = np.concatenate([Q[:, :3], Q[:, [6, 3, 4, 5]], Q[:, 7:][:, self.inv]], axis=1)
            v, a, t = (np.concatenate([X[:, :6], X[:, 6:][:, self.inv]], axis=1) for X in (V, A, T))
            return q, v, a, t
        base_q = np.tile([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], (n, 1))
        q = np.concatenate([base_q, Q[:, self.inv]], axis=1)
        v, a, t = (np.concatenate([np.zeros((n, 6)), X[:, self.inv]], axis=1) for X in (V, A, T))
        return q, v, a, t

    def to_pin(self, name, out, Q, V):
        idx = np.concatenate([np.arange(6), 6 + self.perm]) if self.floating else 6 + self.perm
        if name == "fk":
            return out
        if name in ("rnea", "fd"):
            return out[:, idx]
        if name == "mass":
            return out[:, idx][:, :, idx]
        if name == "jac":
            return out[:, :, idx]
        raise KeyError(name)


if __name__ == "__main__":
    sys.exit(_common.main(Peer))
