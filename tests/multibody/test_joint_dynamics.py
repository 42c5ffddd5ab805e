"""Joint armature, damping, Coulomb friction and limits: reading (URDF, MJCF, SDF) and dynamics.

References: Pinocchio's ``buildModelFromUrdf`` (``damping``, ``friction``, position,
velocity and effort limits) on example-robot-data robots; MuJoCo's ``mj_forward``
``qacc`` on MJCF models with armature and damping; the files' own numbers for SDF and
the small inline files; ``M + diag(armature)`` and ``τ + armature · a`` identities.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import CASES, ROBOTS, pin_model, quat_matrix, qvel_to_v, raises_argument

import spatialjax.multibody as mb
from spatialjax import ArgumentError
from spatialjax.io import ModelFileError

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

FAST = ("panda", "solo12")
PARAMS = [pytest.param(c, id=c[0], marks=() if c[0] in FAST else pytest.mark.slow) for c in CASES]


# ----------------------------------------------------------------------- URDF
@pytest.mark.parametrize("case", PARAMS)
def test_urdf_fields_match_pinocchio(case):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    _, rel, floating, locked = case
    path = str(ROBOTS / rel)
    model = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    pm = pin_model(path, floating, locked)
    o = 6 if floating else 0
    for ours, theirs in (
        ("damping", "damping"),
        ("friction", "friction"),
        ("velocity_limit", "velocityLimit"),
        ("effort_limit", "effortLimit"),
    ):
        np.testing.assert_allclose(
            np.asarray(getattr(model, ours))[o:], np.asarray(getattr(pm, theirs))[o:], rtol=1e-15
        )
    np.testing.assert_array_equal(np.asarray(model.armature), 0.0)
    # position limits of the non-continuous joints (Pinocchio stores cos/sin bounds for those)
    k, kp = (7, 7) if floating else (0, 0)
    for t in model.joint_types[int(floating) :]:
        if t == "continuous":
            assert model.lower[k] == -np.inf and model.upper[k] == np.inf
            k, kp = k + 1, kp + 2
            continue
        assert model.lower[k] == pytest.approx(pm.lowerPositionLimit[kp], abs=1e-15)
        assert model.upper[k] == pytest.approx(pm.upperPositionLimit[kp], abs=1e-15)
        k, kp = k + 1, kp + 1
    if floating:
        assert np.all(np.isinf(np.asarray(model.lower[:7])))
        assert np.all(np.asarray(model.velocity_limit[:6]) == np.inf)


_URDF = """<?xml version="1.0"?>
<robot name="r">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <dynamics damping="0.5" friction="0.2"/>
    <limit lower="-1" upper="2" velocity="3" effort="40"/></joint>
  <joint name="j2" type="continuous"><parent link="a"/><child link="b"/>
    <origin xyz="1 0 0"/><limit lower="-1" upper="1" effort="7" velocity="5"/></joint>
  <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/>
    <origin xyz="1 0 0"/>{j3}</joint>
</robot>
"""


def test_urdf_inline_defaults_continuous_and_locked(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(_URDF.format(j3='<dynamics damping="0.1"/>'))
    m = mb.Model.from_urdf(path, dtype="float64")
    np.testing.assert_array_equal(m.damping, [0.5, 0.0, 0.1])
    np.testing.assert_array_equal(m.friction, [0.2, 0.0, 0.0])
    np.testing.assert_array_equal(m.lower, [-1.0, -np.inf, -np.inf])  # continuous: none
    np.testing.assert_array_equal(m.upper, [2.0, np.inf, np.inf])  # j3: no <limit>
    np.testing.assert_array_equal(m.velocity_limit, [3.0, 5.0, np.inf])
    np.testing.assert_array_equal(m.effort_limit, [40.0, 7.0, np.inf])
    # a locked joint drops out with its fields; a free flyer adds 0 / inf entries
    m2 = mb.Model.from_urdf(path, locked_joints={"j2": 0.3}, floating_base=True, dtype="float64")
    np.testing.assert_array_equal(m2.damping, [0.0] * 6 + [0.5, 0.1])
    np.testing.assert_array_equal(m2.lower, [-np.inf] * 7 + [-1.0, -np.inf])
    assert m2.armature.shape == (8,) and m2.upper.shape == (9,)


@pytest.mark.parametrize(
    "j3, match",
    [
        ('<dynamics damping="-1"/>', r"dynamics damping=-1.0 \(expected a finite value >= 0\)"),
        ('<limit lower="1" upper="0" effort="1" velocity="1"/>', "lower 1.0 > upper 0.0"),
        ('<limit lower="0" upper="1" effort="x" velocity="1"/>', "effort"),
    ],
)
def test_urdf_bad_dynamics(tmp_path, j3, match):
    path = tmp_path / "r.urdf"
    path.write_text(_URDF.format(j3=j3))
    with pytest.raises(ModelFileError, match=match):
        mb.Model.from_urdf(path)


# ----------------------------------------------------------------------- MJCF
_MJCF = """
<mujoco model="damped">
  <compiler angle="{angle}"/>
  <option><flag constraint="disable"/></option>
  <default>
    <joint armature="0.05" damping="0.3"/>
    <default class="light"><joint armature="0.01" damping="0.02" frictionloss="0.5"/></default>
  </default>
  <worldbody>
    <body name="base" pos="0 0 1">
      {free}
      <inertial pos="0.01 0.02 -0.03" mass="3.0" fullinertia="0.2 0.3 0.25 0.01 -0.02 0.005"/>
      <body name="a" pos="0.1 0 0" euler="0.2 0.1 0">
        <joint name="ja" type="hinge" axis="0 1 0" range="-90 45"/>
        <inertial pos="0.1 0 0" mass="1.0" diaginertia="0.01 0.02 0.02"/>
        <body name="b" pos="0.2 0 0" childclass="light">
          <joint name="jb" type="slide" axis="1 0 0" range="-0.1 0.2" limited="false"/>
          <inertial pos="0.05 0 0" mass="0.5" diaginertia="0.003 0.004 0.004"/>
          <body name="c" pos="0.1 0 0">
            <joint name="jc" type="hinge" axis="1 0 0" damping="1.5" armature="0.2"/>
            <inertial pos="0 0 -0.1" mass="0.8" diaginertia="0.006 0.006 0.002"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _mjcf(tmp_path, angle="degree", free=""):
    path = tmp_path / "m.xml"
    path.write_text(_MJCF.format(angle=angle, free=free))
    return path


def test_mjcf_fields_and_default_classes(tmp_path):
    m = mb.Model.from_mjcf(_mjcf(tmp_path), dtype="float64")
    np.testing.assert_allclose(m.armature, [0.05, 0.01, 0.2])
    np.testing.assert_allclose(m.damping, [0.3, 0.02, 1.5])
    np.testing.assert_allclose(m.friction, [0.0, 0.5, 0.5])
    np.testing.assert_allclose(m.lower, [-np.pi / 2, -np.inf, -np.inf])  # degrees, autolimits
    np.testing.assert_allclose(m.upper, [np.pi / 4, np.inf, np.inf])  # jb: limited="false"
    mr = mb.Model.from_mjcf(_mjcf(tmp_path, angle="radian"), dtype="float64")
    np.testing.assert_allclose(mr.lower[0], -90.0)
    # MuJoCo's own compiled values agree
    mj = mujoco.MjModel.from_xml_path(str(_mjcf(tmp_path)))
    np.testing.assert_allclose(m.armature, mj.dof_armature, rtol=1e-15)
    np.testing.assert_allclose(m.damping, mj.dof_damping, rtol=1e-15)
    np.testing.assert_allclose(m.friction, mj.dof_frictionloss, rtol=1e-15)
    np.testing.assert_allclose(m.lower[0], mj.jnt_range[0, 0], rtol=1e-15)
    # from_mujoco reads the same fields from the compiled model
    c = mb.from_mujoco(mj, dtype="float64")
    for f in ("armature", "damping", "friction", "lower", "upper", "velocity_limit"):
        np.testing.assert_allclose(getattr(c, f), getattr(m, f), rtol=1e-15, err_msg=f)


@pytest.mark.parametrize("free", ["", "<freejoint/>"], ids=["fixed", "floating"])
def test_mjcf_forward_dynamics_matches_mujoco_qacc(tmp_path, free):
    """``forward_dynamics`` with armature and damping == MuJoCo's ``qacc`` (constraints off,
    so ``frictionloss`` does not act), on random states and torques."""
    path = _mjcf(tmp_path, free=free)
    model = mb.Model.from_mjcf(path, dtype="float64")
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(3)
    n = 4
    q = rng.uniform(-1.0, 1.0, (n, model.nq))
    if model.floating_base:
        q[:, 3:7] = rng.normal(size=(n, 4))
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    v, tau = rng.normal(size=(2, n, model.nv))
    a = np.asarray(jax.jit(mb.forward_dynamics)(model, q, v, tau))
    worst = 0.0
    for k in range(n):
        T = qvel_to_v(model, q[k])
        data.qpos[:] = q[k]
        data.qvel[:] = np.linalg.solve(T, v[k])
        data.qfrc_applied[:] = T.T @ tau[k]
        mujoco.mj_forward(mj, data)
        want = np.linalg.solve(T, a[k])
        if model.floating_base:  # p̈ = R (v̇ + ω × v): the free flyer's linear rows
            w, vb = v[k][:3], v[k][3:6]
            want[0:3] = quat_matrix(q[k][3:7]) @ (a[k][3:6] + np.cross(w, vb))
        err = np.abs(want - data.qacc).max() / max(1.0, np.abs(data.qacc).max())
        worst = max(worst, err)
        assert err <= 1e-10, err
    kind = free or "fixed"
    print(f"worst relative error forward_dynamics vs mj_forward qacc [{kind}]: {worst:.1e}")
    # and the mass matrix with armature equals MuJoCo's (fixed base: T = 1)
    if not model.floating_base:
        data.qpos[:] = q[0]
        mujoco.mj_forward(mj, data)
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, data, M)  # MuJoCo 4
        np.testing.assert_allclose(mb.mass_matrix(model, q[0]), M, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------ SDF
_SDF = """<?xml version="1.0"?>
<sdf version="1.9"><model name="m">
  <link name="base"/>
  <link name="a"><inertial><mass>1</mass></inertial></link>
  <link name="b"><inertial><mass>1</mass></inertial></link>
  <joint name="j1" type="revolute"><parent>base</parent><child>a</child>
    <axis><xyz>0 0 1</xyz><dynamics><damping>0.4</damping><friction>0.1</friction></dynamics>
      <limit><lower>-0.5</lower><upper>1.5</upper><effort>-1</effort><velocity>2</velocity>
      </limit></axis></joint>
  <joint name="j2" type="prismatic"><parent>a</parent><child>b</child>
    <axis><xyz>1 0 0</xyz><limit><lower>-0.2</lower><upper>0.3</upper><effort>9</effort>
      </limit></axis></joint>
</model></sdf>
"""


def test_sdf_fields(tmp_path):
    path = tmp_path / "m.sdf"
    path.write_text(_SDF)
    m = mb.Model.from_sdf(path, dtype="float64")
    np.testing.assert_array_equal(m.damping, [0.4, 0.0])
    np.testing.assert_array_equal(m.friction, [0.1, 0.0])
    np.testing.assert_array_equal(m.lower, [-0.5, -0.2])
    np.testing.assert_array_equal(m.upper, [1.5, 0.3])
    np.testing.assert_array_equal(m.effort_limit, [np.inf, 9.0])  # -1: no limit
    np.testing.assert_array_equal(m.velocity_limit, [2.0, np.inf])
    np.testing.assert_array_equal(m.armature, [0.0, 0.0])


# ------------------------------------------------------------ armature identities
def test_armature_enters_mass_matrix_rnea_and_both_forward_dynamics():
    base = mb.chain_model(3, floating_base=True, dtype="float64")
    arm = jnp.array([0, 0, 0, 0, 0, 0, 0.3, 0.05])
    damp = jnp.array([0, 0, 0, 0, 0, 0, 0.7, 0.2])
    m = dataclasses.replace(base, armature=arm, damping=damp)
    rng = np.random.default_rng(0)
    q = np.asarray(base.neutral_configuration()) + 0.0
    q[7:] = [0.4, -0.3]
    v, a, tau = rng.normal(size=(3, base.nv))

    @jax.jit
    def run(q, v, a, tau):
        return (
            mb.mass_matrix(m, q) - mb.mass_matrix(base, q),
            mb.rnea(m, q, v, a) - mb.rnea(base, q, v, a),
            mb.rnea(m, q, v, a, method="levels") - mb.rnea(m, q, v, a),
            mb.forward_dynamics(m, q, v, tau),
            mb.forward_dynamics(m, q, v, tau, method="crba"),
            mb.rnea(m, q, v, mb.forward_dynamics(m, q, v, tau)),
            mb.joint_torque_regressor(m, q, v, a) @ m.inertia.params.reshape(-1)
            - mb.rnea(m, q, v, a),
        )

    dM, dtau, dlev, fa, fc, back, yres = (np.asarray(x) for x in run(q, v, a, tau))
    np.testing.assert_allclose(dlev, 0.0, atol=1e-12)  # the level sweep adds armature too
    np.testing.assert_allclose(yres, -arm * a, atol=1e-12)  # the regressor excludes armature
    np.testing.assert_allclose(dM, np.diag(arm), atol=1e-14)
    np.testing.assert_allclose(dtau, arm * a, atol=1e-13)
    np.testing.assert_allclose(fa, fc, rtol=1e-11, atol=1e-12)
    # forward dynamics inverts rnea with the passive damping: rnea(fd) = τ − damping · v
    np.testing.assert_allclose(back, tau - damp * v, atol=1e-12)


def test_build_model_rejects_bad_joint_dynamics():
    from spatialjax.multibody._model import _joint_dynamics_arrays

    with pytest.raises(ValueError, match="lower 1.0 > upper 0.0"):
        _joint_dynamics_arrays(("revolute",), {"lower": [1.0], "upper": [0.0]})
    with raises_argument(ArgumentError, "joint_dynamics['damping']"):
        _joint_dynamics_arrays(("revolute",), {"damping": [1.0, 2.0]})
    with raises_argument(ArgumentError, "joint_dynamics"):
        _joint_dynamics_arrays(("revolute",), {"stiffness": [1.0]})
