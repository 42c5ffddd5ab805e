"""adam (``pip install "adam-robotics[jax]"``, JAX backend) in its venv; run by bench_dynamics.py.

adam is floating-base only: states are ``(H, s, base velocity, ṡ)``, with ``H`` the
base pose built from Pinocchio's ``q`` (``[p, xyzw]``) and the base velocity in
``BODY_FIXED_REPRESENTATION`` (Pinocchio's free-flyer ``[v; ω]``); joints in
Pinocchio's order (``joints_name_list``), gravity ``-9.81 z``. For a fixed-base robot
(Panda) the base is the identity with zero velocity and the base rows/columns are
dropped. Operations and their conversions:

* ``fk``: ``forward_kinematics`` of the end-effector frame (adam has no all-links call);
* ``rnea``: adam's ``rnea`` is the bias force only (no acceleration), so inverse
  dynamics is ``mass_matrix(q) a + bias_force(q, v)``;
* ``mass``: ``mass_matrix``;
* ``fd``: ``aba`` (a free flyer's base wrench passed as the base link's external
  wrench); for a fixed base, whose ``aba`` adam has not, ``M⁻¹(τ − h)`` from
  ``mass_matrix`` and ``bias_force`` (Cholesky), as spatialjax's composed row;
* ``jac``: ``jacobian`` in ``MIXED_REPRESENTATION`` (world axes at the frame origin,
  rows ``[v; ω]``), its base columns mapped to the body-fixed base velocity.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from adam import Representations  # noqa: E402
from adam.jax import KinDynComputations  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

G = jnp.array([0.0, 0.0, -9.81, 0.0, 0.0, 0.0])


def _quat_xyzw_matrix(q):
    x, y, z, w = q[0], q[1], q[2], q[3]
    return jnp.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


class Peer:
    def __init__(self, spec):
        self.floating = fb = spec["floating"]
        names = spec["joint_names"]
        body = KinDynComputations(spec["urdf"], names, gravity=G)
        body.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
        mixed = KinDynComputations(spec["urdf"], names, gravity=G)
        mixed.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
        if body.NDoF + 6 * fb != spec["nv"]:
            raise ValueError(f"adam has {body.NDoF} joints, Pinocchio nv {spec['nv']}")
        self.versions = {"adam-robotics": version("adam-robotics")}
        self.notes = [
            "fk: end-effector frame only; rnea: mass_matrix a + bias_force"
            + ("" if fb else "; fd (fixed base): cho_solve(M, tau - bias_force)")
        ]
        ee = spec["ee_frame"]
        root = ET.parse(spec["urdf"]).getroot()
        children = {j.find("child").get("link") for j in root.iter("joint")}
        base_link = next(
            link.get("name") for link in root.iter("link") if link.get("name") not in children
        )
        k = 0 if fb else 6  # rows/columns to drop

        def state(q, v):
            if fb:
                H = jnp.eye(4, dtype=q.dtype)
                H = H.at[:3, :3].set(_quat_xyzw_matrix(q[3:7])).at[:3, 3].set(q[:3])
                return H, q[7:], v[:6], v[6:]
            return jnp.eye(4, dtype=q.dtype), q, jnp.zeros(6, q.dtype), v

        def fk(q, v, a, tau):
            H, s, _, _ = state(q, v)
            return body.forward_kinematics(ee, H, s)

        def rnea(q, v, a, tau):
            H, s, vb, ds = state(q, v)
            M = body.mass_matrix(H, s)[k:, k:]
            return M @ a + body.bias_force(H, s, vb, ds)[k:]

        def mass(q, v, a, tau):
            H, s, _, _ = state(q, v)
            return body.mass_matrix(H, s)[k:, k:]

        if fb:

            def fd(q, v, a, tau):
                H, s, vb, ds = state(q, v)
                return body.aba(H, s, vb, ds, tau[6:], {base_link: tau[:6]})

        else:

            def fd(q, v, a, tau):
                H, s, vb, ds = state(q, v)
                M = body.mass_matrix(H, s)[6:, 6:]
                h = body.bias_force(H, s, vb, ds)[6:]
                return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(M), tau - h)

        def jac(q, v, a, tau):
            H, s, _, _ = state(q, v)
            J = mixed.jacobian(ee, H, s)
            if not fb:
                return J[:, 6:]
            R = H[:3, :3]  # mixed base velocity = blockdiag(R, R) · body-fixed
            return J.at[:, :3].set(J[:, :3] @ R).at[:, 3:6].set(J[:, 3:6] @ R)

        self.ops = dict(fk=fk, rnea=rnea, mass=mass, fd=fd, jac=jac)

    def inputs(self, Q, V, A, T):
        return Q, V, A, T

    def to_pin(self, name, out, Q, V):
        return out


if __name__ == "__main__":
    sys.exit(_common.main(Peer))
