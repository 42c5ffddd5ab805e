"""spatialjax.multibody in the project's own venv (run by ``bench_dynamics.py``; see ``_common``).

The URDFs' joint damping (and armature), which the checkout's ``Model`` reads, is
zeroed: Pinocchio's ``aba`` and the peers leave it out. Forward dynamics is
``multibody.forward_dynamics`` (ABA; ``fd_crba``: its
``method="crba"``) where the checkout has it, else
``M⁻¹(τ − h)`` composed from ``mass_matrix`` and ``rnea`` (Cholesky). The frame
Jacobian is ``multibody.frame_jacobian(..., reference="local_world_aligned")``
where the checkout has it, else ``jax.jacfwd`` of ``forward_kinematics`` +
``frame_poses`` along ``q ⊕ ε`` (free flyer: ``p + R ε_v``, ``quat ⊗ [1, ε_ω/2]``;
other joints ``q + ε``), the world-aligned ``[v; ω]`` of the frame.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

import spatialjax  # noqa: E402
import spatialjax.multibody as mb  # noqa: E402


class Peer:
    def __init__(self, spec):
        self.method = spec.get("method", "auto")
        self.model = model = mb.Model.from_urdf(
            spec["urdf"], floating_base=spec["floating"], dtype="float64"
        )
        if hasattr(model, "damping"):  # the URDFs' joint damping: Pinocchio's aba has none
            model = self.model = dataclasses.replace(
                model,
                damping=jnp.zeros_like(model.damping),
                armature=jnp.zeros_like(model.armature),
            )
        if model.nv != spec["nv"]:
            raise ValueError(f"nv {model.nv} != Pinocchio's {spec['nv']}")
        self.versions = dict(spatialjax=spatialjax.__version__, method=self.method)
        self.notes = []
        self.frame = model.frame_names.index(spec["ee_frame"])
        self.perm = model.v_permutation()
        method = self.method
        frame = self.frame

        def fk(q, v, a, tau):
            p = mb.forward_kinematics(model, q, method=method).poses
            return p.E, p.r

        def rnea(q, v, a, tau):
            return mb.rnea(model, q, v, a, method=method)

        def mass(q, v, a, tau):
            return mb.mass_matrix(model, q, method=method)

        if hasattr(mb, "forward_dynamics"):

            def fd(q, v, a, tau):
                return mb.forward_dynamics(model, q, v, tau)

            def fd_crba(q, v, a, tau):
                return mb.forward_dynamics(model, q, v, tau, method="crba")

            self.notes.append("fd: multibody.forward_dynamics (ABA); fd_crba: method='crba'")
        else:

            def fd(q, v, a, tau):
                M = mb.mass_matrix(model, q, method=method)
                h = mb.rnea(model, q, v, jnp.zeros_like(v), method=method)
                c = jax.scipy.linalg.cho_factor(M)
                return jax.scipy.linalg.cho_solve(c, tau - h)

            self.notes.append("fd: composed, cho_solve(mass_matrix, tau - rnea(q, v, 0))")

        if hasattr(mb, "frame_jacobian"):
            name = spec["ee_frame"]

            def jac(q, v, a, tau):  # spatialjax rows [ω; v] to the comparison's [v; ω]
                J = mb.frame_jacobian(model, q, name, reference="local_world_aligned")
                return jnp.concatenate([J[..., 3:, :], J[..., :3, :]], axis=-2)

            self.notes.append("jac: multibody.frame_jacobian (rows swapped to [v; ω])")
        else:
            jac = _world_aligned_jacobian(model, frame, method)
            self.notes.append(
                "jac: from forward_kinematics poses and the joint axes (checkout without "
                "frame_jacobian)"
            )
        self.ops = dict(fk=fk, rnea=rnea, mass=mass, fd=fd, jac=jac)
        if hasattr(mb, "forward_dynamics"):
            self.ops["fd_crba"] = fd_crba
        # spatialjax is batched natively (leading batch axes): no vmap at batch > 1
        solve = jax.vmap(lambda M, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(M), b))

        def fd_batched(q, v, a, tau):
            if hasattr(mb, "forward_dynamics"):
                return fd(q, v, a, tau)
            M = mb.mass_matrix(model, q, method=method)
            h = mb.rnea(model, q, v, jnp.zeros_like(v), method=method)
            return solve(M, tau - h)

        self.batched_ops = dict(fk=fk, rnea=rnea, mass=mass, fd=fd_batched, jac=jac)
        if hasattr(mb, "forward_dynamics"):
            self.batched_ops["fd_crba"] = fd_crba

    def inputs(self, Q, V, A, T):
        m = self.model
        q = np.asarray(m.q_from_pinocchio(jnp.asarray(Q)))
        return q, V[:, self.perm], A[:, self.perm], T[:, self.perm]

    def to_pin(self, name, out, Q, V):
        p = self.perm
        if name == "fk":
            E, r = out
            H = np.zeros(E.shape[:1] + (4, 4))
            fp = mb.frame_poses(self.model, spatialjax.Plxb(jnp.asarray(E), jnp.asarray(r)))
            H[:, :3, :3] = np.asarray(fp.E[:, self.frame])
            H[:, :3, 3] = np.asarray(fp.r[:, self.frame])
            H[:, 3, 3] = 1.0
            return H
        if name in ("rnea", "fd", "fd_crba"):
            return out[:, p]
        if name == "mass":
            return out[:, p][:, :, p]
        if name == "jac":
            return out[:, :, p]
        raise KeyError(name)


def _world_aligned_jacobian(model, frame, method):
    """``f(q, v, a, tau)`` -> ``(6, nv)`` Jacobian of ``frame``: world axes, at its origin.

    Rows ``[v; ω]``.

    From the body poses of ``forward_kinematics``: column of an ancestor revolute joint
    ``[ω_j × (p_f − p_j); ω_j]`` with ``ω_j = E_j axis_j``; prismatic ``[E_j axis_j; 0]``;
    a free flyer's ``[ω; v]`` (body frame) columns ``[−[p_f − p_b]× E_b; E_b]`` and ``[E_b; 0]``.
    Columns in spatialjax's ``v`` order.
    """
    body = model.frame_bodies[frame]
    anc = []
    while body >= 0:
        anc.append(body)
        body = model.parents[body]
    anc = anc[::-1]
    off, k = [], 0
    for t in model.joint_types:
        off.append(k)
        k += 6 if t == "free_flyer" else 1
    nv = model.nv
    one = [j for j in anc if model.joint_types[j] != "free_flyer"]
    rev = np.array([model.joint_types[j] in ("revolute", "continuous") for j in one])
    one_cols = np.array([off[j] for j in one], dtype=int)
    free = [j for j in anc if model.joint_types[j] == "free_flyer"]
    axes = np.asarray(model.axes)[one]

    def jac(q, v, a, tau):  # any leading batch shape
        poses = mb.forward_kinematics(model, q, method=method).poses
        pf = mb.frame_poses(model, poses).r[..., frame, :]
        E, r = poses.E, poses.r
        J = jnp.zeros(q.shape[:-1] + (6, nv), q.dtype)
        if one:
            idx = np.array(one)
            w = jnp.einsum("...jab,jb->...ja", E[..., idx, :, :], axes)
            lin = jnp.where(rev[:, None], jnp.cross(w, pf[..., None, :] - r[..., idx, :]), w)
            ang = jnp.where(rev[:, None], w, 0.0)
            J = J.at[..., one_cols].set(jnp.swapaxes(jnp.concatenate([lin, ang], -1), -1, -2))
        for j in free:
            Eb, d = E[..., j, :, :], pf - r[..., j, :]
            z = jnp.zeros_like(d[..., 0])
            dx = jnp.stack(
                [
                    jnp.stack([z, -d[..., 2], d[..., 1]], -1),
                    jnp.stack([d[..., 2], z, -d[..., 0]], -1),
                    jnp.stack([-d[..., 1], d[..., 0], z], -1),
                ],
                -2,
            )
            o = off[j]
            J = J.at[..., :3, o : o + 3].set(-dx @ Eb).at[..., 3:, o : o + 3].set(Eb)
            J = J.at[..., :3, o + 3 : o + 6].set(Eb)
        return J

    return jac


if __name__ == "__main__":
    sys.exit(_common.main(Peer))
