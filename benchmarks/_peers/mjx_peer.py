"""MJX (``pip install mujoco-mjx``, JAX implementation) in its venv; run by ``bench_dynamics.py``.

The model is MuJoCo's own URDF import (``MjSpec.from_file``; fixed-joint links fused,
as MuJoCo does by default), plus a free joint on the root body for a floating base
and a site at the end-effector frame (its placement in its parent joint's frame).
Constraints, dampers and springs are disabled (``opt.disableflags``): the URDFs' joint
limits, friction and damping would otherwise enter forward dynamics, which the
other libraries leave out. Conventions converted: MuJoCo's free joint
(``qpos = [p, wxyz]``, ``qvel = [v_world; ω_body]``, ``_common.mujoco_free_*``) and
its joint order (by name, ``jnt_qposadr``/``jnt_dofadr``). Operations:

* ``fk``: ``mjx.kinematics`` (every body's pose and the sites);
* ``rnea``: ``mjx.inverse`` with ``qacc = a`` (``qfrc_inverse``; runs the position
  and velocity stages, as ``mj_inverse``);
* ``mass``: ``kinematics`` + ``com_pos`` + ``crb`` then ``full_m`` (dense ``qM``);
* ``fd``: ``mjx.forward`` with ``qfrc_applied = τ`` (``qacc``);
* ``jac``: ``kinematics`` + ``com_pos`` then ``mjx.jac`` at the site (world axes at
  the point, rows ``[v; ω]`` after transposing).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from mujoco import mjx  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402


def _matrix_quat_wxyz(R):
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R).reshape(9))
    return q


class Peer:
    def __init__(self, spec):
        self.floating = fb = spec["floating"]
        ms = mujoco.MjSpec.from_file(spec["urdf"])
        root = ET.parse(spec["urdf"]).getroot()
        child_of = {j.get("name"): j.find("child").get("link") for j in root.iter("joint")}
        if fb:
            ms.worldbody.first_body().add_freejoint()
        body = ms.body(child_of[spec["ee_parent_joint"]])
        H = np.asarray(spec["ee_placement"])
        body.add_site(name="ee", pos=H[:3, 3], quat=_matrix_quat_wxyz(H[:3, :3]))
        m = ms.compile()
        bits = mujoco.mjtDisableBit
        for bit in ("mjDSBL_CONSTRAINT", "mjDSBL_DAMPER", "mjDSBL_SPRING"):
            m.opt.disableflags |= int(getattr(bits, bit))
        if m.nv != spec["nv"]:
            raise ValueError(f"MuJoCo nv {m.nv} != Pinocchio's {spec['nv']}")
        self.nq, self.nv, k = m.nq, m.nv, 6 * fb
        self.qadr = np.array([m.joint(n).qposadr[0] for n in spec["joint_names"]])
        self.vadr = np.array([m.joint(n).dofadr[0] for n in spec["joint_names"]])
        self.vmap = np.concatenate([np.arange(k), self.vadr])  # mj index of pin entry
        self.versions = {"mujoco": mujoco.__version__, "mujoco-mjx": version("mujoco-mjx")}
        self.notes = ["constraints, dampers, springs disabled; fk: mjx.kinematics"]
        mx = mjx.put_model(m, impl="jax")
        d0 = mjx.make_data(mx, impl="jax")
        sid, bid = m.site("ee").id, m.site("ee").bodyid[0]

        def data(q, v, **kw):
            return d0.replace(qpos=q, qvel=v, **kw)

        def fk(q, v, a, tau):
            d = mjx.kinematics(mx, data(q, v))
            return d.xpos, d.xquat, d.site_xpos, d.site_xmat

        def fk_ee(q, v, a, tau):
            d = mjx.kinematics(mx, data(q, v))
            out = jnp.eye(4, dtype=q.dtype).at[:3, :3].set(d.site_xmat[sid].reshape(3, 3))
            return out.at[:3, 3].set(d.site_xpos[sid])

        def rnea(q, v, a, tau):
            return mjx.inverse(mx, data(q, v, qacc=a)).qfrc_inverse

        def mass(q, v, a, tau):
            d = mjx.kinematics(mx, data(q, v))
            d = mjx.crb(mx, mjx.com_pos(mx, d))
            return mjx.full_m(mx, d)

        def fd(q, v, a, tau):
            return mjx.forward(mx, data(q, v, qfrc_applied=tau)).qacc

        def jac(q, v, a, tau):
            d = mjx.com_pos(mx, mjx.kinematics(mx, data(q, v)))
            jp, jr = mjx.jac(mx, d, d.site_xpos[sid], bid)
            return jnp.concatenate([jp.T, jr.T], axis=0)

        self.ops = dict(fk=fk, rnea=rnea, mass=mass, fd=fd, jac=jac)
        self.check_ops = dict(fk=fk_ee)

    def inputs(self, Q, V, A, T):
        if self.floating:
            Q, V, A, T = _common.mujoco_free_inputs(Q, V, A, T)
        n, k = len(Q), 7 * self.floating
        q = np.zeros((n, self.nq))
        q[:, :k] = Q[:, :k]
        q[:, self.qadr] = Q[:, k:]
        out = [q]
        for X in (V, A, T):
            x = np.zeros((n, self.nv))
            x[:, self.vmap] = X
            out.append(x)
        return tuple(out)

    def to_pin(self, name, out, Q, V):
        if name == "fk":
            return out
        p = self.vmap
        if name in ("rnea", "fd"):
            out = out[:, p]
        elif name == "mass":
            out = out[:, p][:, :, p]
        elif name == "jac":
            out = out[:, :, p]
        return _common.mujoco_free_to_pin(name, out, Q, V) if self.floating else out


if __name__ == "__main__":
    sys.exit(_common.main(Peer))
