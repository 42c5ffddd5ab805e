"""frax (``pip install frax``) in its venv; run by ``bench_dynamics.py`` (see ``_common``).

Conventions converted: a free-floating base is ``floating_base="quaternion"``
(MuJoCo's ``q = [p, wxyz, joints]``, ``v = [v_world; ω_body, joints]``); joints
are ordered as Pinocchio's (``joint_ordering``). Gravity is passed as frax's own
``forward_dynamics`` does (spatial ``[0, 0, 9.81, 0, 0, 0]``). The Jacobian is
frax's frame Jacobian (``Robot._frame_jacobian``, what ``Manipulator.ee_jacobian``
and ``Humanoid.left_hand_jacobian`` call) of the end-effector frame, given as its
parent joint and placement; rows ``[v; ω]``, world axes.
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import frax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402


class Peer:
    def __init__(self, spec):
        self.floating = spec["floating"]
        robot = frax.Robot(
            spec["urdf"],
            joint_ordering=spec["joint_names"],
            floating_base="quaternion" if self.floating else None,
        )
        if robot.nv != spec["nv"]:
            raise ValueError(f"nv {robot.nv} != Pinocchio's {spec['nv']}")
        self.versions = dict(frax=version("frax"))
        self.notes = ["jac: Robot._frame_jacobian (frax's frame Jacobian)"]
        self.idx = idx = robot.joint_name_to_index[spec["ee_parent_joint"]]
        self.offset = offset = np.asarray(spec["ee_placement"])
        chain = np.flatnonzero(robot.ancestor_mask[idx])
        g = jnp.array([0.0, 0.0, 9.81, 0.0, 0.0, 0.0])

        def fk(q, v, a, tau):
            return robot.joint_to_world_transforms(q)

        def rnea(q, v, a, tau):
            return robot.rnea(q, v, a, g, None)

        def mass(q, v, a, tau):
            return robot.mass_matrix(q)

        def fd(q, v, a, tau):
            return robot.forward_dynamics(q, v, tau, None)

        def jac(q, v, a, tau):
            return robot._frame_jacobian(robot.joint_to_world_transforms(q), offset, chain)

        self.ops = dict(fk=fk, rnea=rnea, mass=mass, fd=fd, jac=jac)

    def inputs(self, Q, V, A, T):
        if not self.floating:
            return Q, V, A, T
        return _common.mujoco_free_inputs(Q, V, A, T)

    def to_pin(self, name, out, Q, V):
        if name == "fk":
            return out[:, self.idx] @ self.offset
        if name == "fd" and not self.floating:
            return out
        return _common.mujoco_free_to_pin(name, out, Q, V) if self.floating else out


if __name__ == "__main__":
    sys.exit(_common.main(Peer))
