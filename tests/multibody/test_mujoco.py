"""interop.from_mujoco against Model.from_mjcf and against MuJoCo's own dynamics.

MuJoCo (the ``mujoco`` package, an optional test dependency) compiles small MJCF models
written here and in tests/fixtures/branch.xml. The converted model must equal the one
``Model.from_mjcf`` reads from the same file, and its RNEA, mass matrix and body poses must
equal MuJoCo's ``mj_inverse`` (``qfrc_inverse``), ``mj_fullM`` and ``xpos``/``xmat`` on
random states, to 1e-10 in float64 (MuJoCo diagonalises full inertias at compile time).
Free joints: MuJoCo's ``qvel`` is ``[ṗ (world); ω (body)]``, spatialjax's ``v`` is
``[ω; Rᵀṗ]``; the test converts with the Jacobian ``T`` (``v = T qvel``), so
``qfrc = Tᵀ τ`` and ``M_mujoco = Tᵀ H T``.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from helpers import FIXTURES, quat_matrix, qvel_to_v, raises_argument

import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError

mujoco = pytest.importorskip("mujoco")

FIX = FIXTURES
TOL = 1e-10

# Hinges and slides with joint positions, a reference angle (``ref``: MuJoCo measures the
# joint from qpos0), welded bodies, two branches, full and diagonal inertias.
ARM = """
<mujoco model="arm">
  <compiler angle="radian"/>
  <worldbody>
    <body name="mount" pos="0.1 0.2 0.3" quat="0.9 0.1 0.2 0.3">
      <body name="a" pos="0 0 0.1" euler="0.2 0.1 -0.3">
        <joint name="ja" type="hinge" axis="0 0 1" pos="0.01 0.02 0.03"/>
        <inertial pos="0.05 0 0.1" mass="2.0" fullinertia="0.03 0.04 0.02 0.002 -0.001 0.003"/>
        <body name="b" pos="0.2 0 0.3" euler="-0.4 0.3 0.2">
          <joint name="jb" type="hinge" axis="0.3 1 0.2" pos="0 0.05 0" ref="0.4"/>
          <inertial pos="0.1 0.02 -0.03" mass="1.2" diaginertia="0.01 0.012 0.008"
                    euler="0.3 0.2 0.1"/>
          <body name="c" pos="0.3 0 0" euler="0 0.5 0">
            <joint name="jc" type="slide" axis="1 0.2 0" pos="0.02 0 0" ref="0.05"/>
            <inertial pos="0 0.03 0.02" mass="0.5" diaginertia="0.002 0.003 0.0025"/>
            <body name="welded" pos="0.05 0.05 0" euler="0.1 0 0">
              <inertial pos="0.01 0 0" mass="0.2" diaginertia="0.001 0.001 0.001"/>
              <body name="d" pos="0 0 0.1">
                <joint name="jd" type="hinge" axis="1 0 0"/>
                <inertial pos="0 0.02 0.04" mass="0.3" diaginertia="0.0011 0.0009 0.0012"/>
              </body>
            </body>
          </body>
        </body>
        <body name="e" pos="-0.1 0.1 0" euler="0.3 -0.2 0">
          <joint name="je" type="hinge" axis="0 1 0"/>
          <inertial pos="0 0 0.05" mass="0.7" diaginertia="0.004 0.005 0.003"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# A free-floating base with two limbs.
FLOATING = """
<mujoco model="floater">
  <worldbody>
    <body name="torso" pos="0 0 1" quat="1 0 0 0">
      <freejoint name="root"/>
      <inertial pos="0.01 0.02 -0.03" mass="5.0" fullinertia="0.2 0.3 0.25 0.01 -0.02 0.005"/>
      <body name="l1" pos="0.2 0 0" euler="0 0 0.3">
        <joint name="h1" type="hinge" axis="0 1 0" pos="0 0 0.02"/>
        <inertial pos="0.1 0 0" mass="1.0" diaginertia="0.01 0.02 0.02"/>
        <body name="l2" pos="0.2 0 0">
          <joint name="s2" type="slide" axis="1 0 0"/>
          <inertial pos="0.05 0 0" mass="0.5" diaginertia="0.003 0.004 0.004"/>
        </body>
      </body>
      <body name="r1" pos="-0.2 0 0" euler="0.2 0 0">
        <joint name="h3" type="hinge" axis="1 0 0"/>
        <inertial pos="0 0 -0.1" mass="0.8" diaginertia="0.006 0.006 0.002"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _load(text, tmp_path, name="m.xml"):
    path = tmp_path / name
    path.write_text(text)
    return path, mujoco.MjModel.from_xml_path(str(path))


def _states(model, n=5, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.5, 1.5, (n, model.nq))
    if model.floating_base:
        q[:, 3:7] = rng.normal(size=(n, 4))
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    v, a = rng.normal(size=(2, n, model.nv))
    return q, v, a


@jax.jit
def _dynamics(model, q, v, a):
    fk = mb.forward_kinematics(model, q)
    return mb.rnea(model, q, v, a), mb.mass_matrix(model, q), mb.frame_poses(model, fk.poses)


def _check_against_mujoco(model, mj):
    assert model.nv == mj.nv and model.nq == mj.nq
    data = mujoco.MjData(mj)
    q, v, a = _states(model)
    tau, H, frames = _dynamics(model, q, v, a)
    tau, H = np.asarray(tau), np.asarray(H)
    fE, fr = np.asarray(frames.E), np.asarray(frames.r)
    for k in range(q.shape[0]):
        T = qvel_to_v(model, q[k])
        qvel = np.linalg.solve(T, v[k])
        # a = d/dt(T qvel) = T qacc + Ṫ qvel; Ṫ qvel touches only the free flyer's linear part:
        # d/dt(Rᵀ ṗ) = Rᵀ p̈ − ω × (Rᵀ ṗ)
        qacc = np.linalg.solve(T, a[k])
        if model.floating_base:
            w, vb = v[k][:3], v[k][3:6]
            R = quat_matrix(q[k][3:7])
            qacc[0:3] = R @ (a[k][3:6] + np.cross(w, vb))
        data.qpos[:] = q[k]
        data.qvel[:] = qvel
        data.qacc[:] = qacc
        mujoco.mj_inverse(mj, data)
        np.testing.assert_allclose(T.T @ tau[k], data.qfrc_inverse, rtol=0, atol=TOL)
        M = np.zeros((mj.nv, mj.nv))
        try:
            mujoco.mj_fullM(mj, data, M)  # MuJoCo 4
        except TypeError:
            mujoco.mj_fullM(mj, M, data.qM)  # MuJoCo 3
        np.testing.assert_allclose(T.T @ H[k] @ T, M, rtol=0, atol=TOL)
        for i, name in enumerate(model.frame_names):
            b = mj.body(name).id
            np.testing.assert_allclose(fr[k, i], data.xpos[b], rtol=0, atol=TOL)
            np.testing.assert_allclose(
                fE[k, i], data.xmat[b].reshape(3, 3), rtol=0, atol=TOL, err_msg=name
            )


def _assert_same_model(a, b, tol=1e-12):
    assert a.parents == b.parents and a.joint_types == b.joint_types
    assert a.joint_names == b.joint_names and a.body_names == b.body_names
    assert a.frame_names == b.frame_names and a.frame_bodies == b.frame_bodies
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=0, atol=tol)


def test_branch_fixture_matches_from_mjcf_and_mujoco():
    mj = mujoco.MjModel.from_xml_path(str(FIX / "branch.xml"))
    model = mb.from_mujoco(mj, dtype="float64")
    _assert_same_model(model, mb.Model.from_mjcf(FIX / "branch.xml", dtype="float64"))
    assert model.name == "branch"
    _check_against_mujoco(model, mj)


def test_arm_matches_mujoco_and_from_mjcf(tmp_path):
    path, mj = _load(ARM, tmp_path)
    model = mb.from_mujoco(mj, dtype="float64")
    assert model.joint_types == ("revolute", "revolute", "prismatic", "revolute", "revolute")
    assert model.frame_bodies[model.frame_names.index("welded")] == 2  # welded into c
    _check_against_mujoco(model, mj)
    # Model.from_mjcf does not read ``ref``: without it the two readers agree
    path, mj0 = _load(ARM.replace(' ref="0.4"', "").replace(' ref="0.05"', ""), tmp_path, "r.xml")
    _assert_same_model(
        mb.from_mujoco(mj0, dtype="float64"), mb.Model.from_mjcf(path, dtype="float64")
    )


def test_floating_base_matches_mujoco(tmp_path):
    path, mj = _load(FLOATING, tmp_path)
    model = mb.from_mujoco(mj, dtype="float64")
    assert model.floating_base and model.joint_names[0] == "root"
    _check_against_mujoco(model, mj)
    _assert_same_model(model, mb.Model.from_mjcf(path, dtype="float64"))


def test_from_mujoco_float32(tmp_path):
    _, mj = _load(ARM, tmp_path)
    m32 = mb.from_mujoco(mj, dtype="float32")
    m64 = mb.from_mujoco(mj, dtype="float64")
    assert m32.dtype == np.float32
    q, v, a = _states(m64)
    # jitted (eagerly, rnea compiles ~60 programs per dtype); the float64 reference is the
    # program test_arm_matches_mujoco_and_from_mjcf checks against MuJoCo (same shapes)
    t32 = jax.jit(mb.rnea)(m32, q.astype(np.float32), v.astype(np.float32), a.astype(np.float32))
    assert t32.dtype == np.float32
    t64 = _dynamics(m64, q, v, a)[0]
    np.testing.assert_allclose(t32, t64, rtol=1e-4, atol=1e-4)


def test_from_mujoco_bad_input(tmp_path):
    with raises_argument(ArgumentTypeError, "mj_model"):
        mb.from_mujoco("arm.xml")
    inertial = '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
    ball = f'<mujoco><worldbody><body name="b"><joint name="jb" type="ball"/>{inertial}</body>'
    ball += "</worldbody></mujoco>"
    _, mj = _load(ball, tmp_path, "ball.xml")
    with raises_argument(ArgumentError, "mj_model"):
        mb.from_mujoco(mj)
    two = ball.replace('<joint name="jb" type="ball"/>', '<joint name="j1"/><joint name="j2"/>')
    _, mj = _load(two, tmp_path, "two.xml")
    with raises_argument(ArgumentError, "mj_model"):
        mb.from_mujoco(mj)
    welded = f'<mujoco><worldbody><body name="b">{inertial}</body></worldbody></mujoco>'
    _, mj = _load(welded, tmp_path, "welded.xml")
    with raises_argument(ArgumentError, "mj_model"):
        mb.from_mujoco(mj)


def test_second_free_body_is_rejected(tmp_path):
    text = FLOATING.replace(
        "  </worldbody>",
        '    <body name="box" pos="1 0 0"><freejoint name="box_root"/>'
        '<inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>\n  </worldbody>',
    )
    _, mj = _load(text, tmp_path, "two_free.xml")
    with raises_argument(ArgumentError, "mj_model"):
        mb.from_mujoco(mj)
