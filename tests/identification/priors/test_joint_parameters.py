"""Joint parameters (issue 34): armature, damping and Coulomb friction read, identified, written.

References: MuJoCo (``MjModel.from_xml_path``: ``dof_armature``, ``dof_damping``,
``dof_frictionloss``, ``body_*``; ``mj_inverse``'s ``qfrc_inverse``) for MJCF semantics and
the written files; Pinocchio (``buildModelFromMJCF``/``buildModelFromUrdf``: ``armature``,
``damping``, ``friction``; ``rnea`` with ``armature``); cvxpy + Clarabel for the optimum with
the extra columns' prior; closed forms (Drake's reflected inertia ``ρ² I_r``, the prior rule,
the rest threshold).
"""

from __future__ import annotations

import dataclasses
import os

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ROOT, raises_argument, raises_error, robots_dir

import spatialjax as sj
import spatialjax.identification as sid
import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError, _params
from spatialjax.identification import (
    FitStatus,
    IdentifyError,
    IdentifyTypeError,
    fit_torques,
    identifiability,
)
from spatialjax.identification.priors import joint_prior as joint_prior_module
from spatialjax.io import ModelFileError

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

ROBOTS = robots_dir()


# ------------------------------------------------------------------------------ readers
_FRAMES = """<mujoco model="framed">
  <compiler angle="radian"/>
  <default>
    <default class="a"><joint damping="0.7"/>
      <default class="b"><joint armature="0.2" frictionloss="0.4"/></default>
    </default>
  </default>
  <worldbody>
    <frame pos="0 0 1" euler="0 0 1">
      <body name="l1" pos="1 0 0">
        <joint name="j1" axis="0 1 0" frictionloss="0.3" damping="0.5 0 0"/>
        <inertial pos="0.1 0 0" mass="1" diaginertia="0.1 0.2 0.15"/>
        <frame pos="0 0.1 0" euler="0.3 0 0">
          <body name="welded" pos="0.2 0 0">
            <inertial pos="0 0.1 0" mass="0.5" diaginertia="0.01 0.01 0.01"/>
          </body>
        </frame>
        <body name="l2" childclass="b">
          <frame pos="0 0 0.3" euler="0.5 0 0"><joint name="j2" axis="0 1 0"/></frame>
          <inertial pos="0 0 0.2" mass="1" diaginertia="0.1 0.1 0.1"/>
          <frame pos="0 0.2 0"><site name="tip" pos="0 0 1"/></frame>
          <body name="l3" pos="0 0 0.5">
            <joint name="j3" class="a" axis="1 0 0" armature="0.05"/>
            <inertial pos="0 0 0.1" mass="0.3" diaginertia="0.01 0.01 0.005"/>
          </body>
        </body>
      </body>
    </frame>
  </worldbody>
</mujoco>
"""


def _states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (3, n, model.nv))


def test_mjcf_frames_and_nested_default_classes_match_mujoco_and_pinocchio(tmp_path):
    path = tmp_path / "framed.xml"
    path.write_text(_FRAMES)
    model = mb.Model.from_mjcf(path, dtype="float64")
    mj = mujoco.MjModel.from_xml_path(str(path))
    # joint dynamics as MuJoCo resolves the classes (b inherits a; j3's class="a" beats the
    # childclass b; attributes on the element beat both)
    np.testing.assert_allclose(model.armature, mj.dof_armature, rtol=1e-15)
    np.testing.assert_allclose(model.damping, mj.dof_damping, rtol=1e-15)
    np.testing.assert_allclose(model.friction, mj.dof_frictionloss, rtol=1e-15)
    np.testing.assert_allclose(model.armature, [0.0, 0.2, 0.05])
    np.testing.assert_allclose(model.damping, [0.5, 0.7, 0.7])
    np.testing.assert_allclose(model.friction, [0.3, 0.4, 0.0])
    # the tree through the frames: the dynamics of MuJoCo's compiled model
    ref = mb.from_mujoco(mj, dtype="float64")
    q, v, a = _states(model, 4)
    np.testing.assert_allclose(mb.rnea(model, q, v, a), mb.rnea(ref, q, v, a), atol=1e-12)
    # the site inside a frame: MuJoCo's world position
    data = mujoco.MjData(mj)
    data.qpos[:] = q[0]
    mujoco.mj_kinematics(mj, data)
    fk = mb.forward_kinematics(model, q[0])
    poses = mb.frame_poses(model, fk.poses)
    k = model.frame_names.index("tip")
    np.testing.assert_allclose(poses.r[k], data.site_xpos[0], atol=1e-12)
    # Pinocchio's MJCF parser reads the same joint dynamics (it has no <frame> support:
    # compared on the same file without frames, saved by MuJoCo)
    flat = tmp_path / "flat.xml"
    nf = mujoco.MjModel.from_xml_path(str(path))
    mujoco.mj_saveLastXML(str(flat), nf)
    if "<frame" not in flat.read_text():
        pm = pin.buildModelFromMJCF(str(flat))
        np.testing.assert_allclose(pm.armature, model.armature, rtol=1e-15)
        np.testing.assert_allclose(pm.damping, model.damping, rtol=1e-15)
        np.testing.assert_allclose(pm.friction, model.friction, rtol=1e-15)


def test_mjcf_defaults_match_pinocchio(tmp_path):
    text = """<mujoco><default><joint damping="0.3"/>
      <default class="x"><joint armature="0.2" frictionloss="0.6"/></default></default>
      <worldbody><body name="a"><joint name="ja" axis="0 1 0"/>
        <inertial pos="0.1 0 0" mass="1" diaginertia="0.1 0.2 0.15"/>
        <body name="b" childclass="x" pos="0 0 0.4"><joint name="jb" axis="1 0 0" damping="0.1"/>
          <inertial pos="0 0 0.1" mass="1" diaginertia="0.1 0.1 0.1"/></body></body>
      </worldbody></mujoco>"""
    path = tmp_path / "d.xml"
    path.write_text(text)
    model = mb.Model.from_mjcf(path, dtype="float64")
    pm = pin.buildModelFromMJCF(str(path))
    for field in ("armature", "damping", "friction"):
        np.testing.assert_allclose(getattr(model, field), getattr(pm, field), rtol=1e-15)
    np.testing.assert_allclose(model.armature, [0.0, 0.2])


def test_mjcf_damping_polynomial_reads_the_linear_term(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(
        '<mujoco><worldbody><body><joint name="j" damping="0.5 0.2 0.1"/>'
        '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>'
    )
    mj = mujoco.MjModel.from_xml_path(str(path))
    assert mb.Model.from_mjcf(path).damping[0] == pytest.approx(float(mj.dof_damping[0]))
    path.write_text(path.read_text().replace("0.5 0.2 0.1", "0.5 0.2 0.1 0.3"))
    with raises_error(ModelFileError, field="joint[j]/damping"):
        mb.Model.from_mjcf(path)


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_mjcf_saved_by_mujoco_from_a_urdf_reads_like_mujoco(tmp_path):
    """MuJoCo's URDF import + ``mj_saveLastXML`` writes ``<frame>`` elements for the fused
    static bodies: the file a MuJoCo user starts from."""
    import re

    text = (ROBOTS / "ur_description/urdf/ur5_robot.urdf").read_text()
    text = re.sub(r"<(visual|collision)>.*?</\1>", "", text, flags=re.S)
    src = mujoco.MjModel.from_xml_string(text)
    path = tmp_path / "ur5.xml"
    mujoco.mj_saveLastXML(str(path), src)
    assert "<frame" in path.read_text()
    model = mb.Model.from_mjcf(path, dtype="float64")
    ref = mb.from_mujoco(mujoco.MjModel.from_xml_path(str(path)), dtype="float64")
    q, v, a = _states(model, 3)
    np.testing.assert_allclose(mb.rnea(model, q, v, a), mb.rnea(ref, q, v, a), atol=1e-11)
    urdf = mb.Model.from_urdf(ROBOTS / "ur_description/urdf/ur5_robot.urdf", dtype="float64")
    np.testing.assert_allclose(mb.rnea(model, q, v, a), mb.rnea(urdf, q, v, a), atol=1e-5)


_URDF = """<?xml version="1.0"?>
<robot name="r" xmlns:drake="http://drake.mit.edu">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="1"/><inertia ixx="0.1"
    iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <dynamics damping="0.5" friction="0.2"/>
    <limit lower="-1" upper="2" velocity="3" effort="40"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="2" velocity="3" effort="40"/></joint>
  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
    <joint name="j1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="m1"><drake:rotor_inertia value="2e-5"/><drake:gear_ratio value="100"/>
    </actuator></transmission>
</robot>
"""


def test_urdf_drake_rotor_inertia_is_the_armature_and_pinocchio_agrees_on_the_rest(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(_URDF)
    model = mb.Model.from_urdf(path, dtype="float64")
    np.testing.assert_allclose(model.armature, [100.0**2 * 2e-5, 0.0], rtol=1e-15)  # ρ² I_r
    pm = pin.buildModelFromUrdf(str(path))
    np.testing.assert_array_equal(model.damping, pm.damping)
    np.testing.assert_array_equal(model.friction, pm.friction)
    np.testing.assert_array_equal(pm.armature, 0.0)  # urdfdom/Pinocchio ignore the extension
    bad = _URDF.replace('value="2e-5"', 'value="-1"')
    path.write_text(bad)
    with raises_error(ModelFileError, field="joint[j1]/transmission/drake:rotor_inertia"):
        mb.Model.from_urdf(path)


def test_sdf_drake_rotor_inertia(tmp_path):
    text = """<?xml version="1.0"?><sdf version="1.9"><model name="m">
      <link name="base"/><link name="a"><inertial><mass>1</mass></inertial></link>
      <joint name="j" type="revolute"><parent>base</parent><child>a</child>
        <axis><xyz>0 0 1</xyz><dynamics><damping>0.4</damping><friction>0.1</friction>
        </dynamics></axis>
        <drake:rotor_inertia>1.5e-4</drake:rotor_inertia><drake:gear_ratio>50</drake:gear_ratio>
      </joint></model></sdf>"""
    path = tmp_path / "m.sdf"
    path.write_text(text)
    m = mb.Model.from_sdf(path, dtype="float64")
    np.testing.assert_allclose([m.armature[0], m.damping[0], m.friction[0]], [0.375, 0.4, 0.1])


# --------------------------------------------------------------------------- joint model
_ARM = """<mujoco model="arm">
  <option><flag constraint="disable"/></option>
  <worldbody>
    <body name="link1" pos="0 0 0.1">
      <joint name="j1" axis="0 0 1" armature="0.12" damping="1.5" frictionloss="0.8"/>
      <inertial pos="0.02 0.01 0.1" mass="2.0" fullinertia="0.02 0.025 0.01 0.001 0.002 -0.001"/>
      <body name="link2" pos="0 0.05 0.2">
        <joint name="j2" axis="0 1 0" pos="0 0 0.02" armature="0.08" damping="0.9"
               frictionloss="0.5"/>
        <inertial pos="0.2 0 0.01" mass="1.2" diaginertia="0.004 0.02 0.021"/>
        <body name="link3" pos="0.35 0 0">
          <joint name="j3" axis="0 1 0" armature="0.05" damping="0.4" frictionloss="0.3"/>
          <inertial pos="0.15 0.01 0" quat="0.9 0.1 0.2 0" mass="0.8"
                    diaginertia="0.002 0.01 0.011"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def arm_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("arm") / "arm.xml"
    path.write_text(_ARM)
    return path


@pytest.fixture(scope="module")
def arm(arm_file):
    return mb.Model.from_mjcf(arm_file, dtype="float64")


def test_joint_columns_match_mj_inverse_and_pinocchio_rnea(arm, arm_file):
    jm = mb.JointModel(("armature", "viscous"))
    bare = dataclasses.replace(arm, armature=jnp.zeros(3))
    q, v, a = _states(arm, 5, seed=2)
    ours = np.asarray(
        mb.rnea(bare, q, v, a) + jm.torque(arm, v, a, jnp.asarray(jm.file_values(arm)))
    )
    # MuJoCo (constraints off, so frictionloss does not act): M a + c + armature a + b v
    mj = mujoco.MjModel.from_xml_path(str(arm_file))
    data = mujoco.MjData(mj)
    for k in range(5):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[k], v[k], a[k]
        mujoco.mj_inverse(mj, data)
        np.testing.assert_allclose(ours[k], data.qfrc_inverse, rtol=1e-12, atol=1e-12)
    # Pinocchio's rnea with model.armature (no damping there): the armature column alone
    pm = pin.buildModelFromMJCF(str(arm_file))
    pm.armature[:] = np.asarray(arm.armature)
    pd = pm.createData()
    ja = mb.JointModel(("armature",))
    got = np.asarray(mb.rnea(bare, q, v, a) + ja.torque(arm, v, a, jnp.asarray(arm.armature)))
    for k in range(5):
        np.testing.assert_allclose(got[k], pin.rnea(pm, pd, q[k], v[k], a[k]), atol=1e-12)
    # the Coulomb and offset columns: closed form
    jc = mb.JointModel(("coulomb", "offset"))
    tc = np.asarray(jc.torque(arm, v, a, jnp.asarray([0.8, 0.1, 0.5, -0.2, 0.3, 0.0])))
    np.testing.assert_allclose(tc, [0.8, 0.5, 0.3] * np.sign(v) + [0.1, -0.2, 0.0])


def test_joint_model_layout_names_and_conversions():
    model = mb.chain_model(3, floating_base=True, dtype="float64")  # a free flyer + 2 joints
    jm = mb.JointModel()
    assert jm.kinds == mb.JOINT_KINDS == ("armature", "viscous", "coulomb", "offset")
    assert mb.JointModel.parse("offset, armature").kinds == ("armature", "offset")
    assert mb.JointModel.parse("none").kinds == ()
    assert jm.n_columns(model) == 8 and jm.names(model)[4] == (model.joint_names[2], "armature")
    np.testing.assert_array_equal(jm.nonnegative(model), [True, True, True, False] * 2)
    np.testing.assert_array_equal(jm.joints(model), [0, 0, 0, 0, 1, 1, 1, 1])
    v = np.arange(1.0, 9.0)
    a = 10.0 + np.arange(8.0)
    Y = np.asarray(jm.regressor(model, v, a))
    assert Y.shape == (8, 8)
    np.testing.assert_array_equal(Y[:6], 0.0)  # the free flyer's rows
    np.testing.assert_array_equal(Y[6, :4], [16.0, 7.0, 1.0, 1.0])
    np.testing.assert_array_equal(Y[7, 4:], [17.0, 8.0, 1.0, 1.0])
    np.testing.assert_array_equal(Y[6, 4:], 0.0)
    # batch shapes broadcast; a subset of kinds is the same columns
    Yb = np.asarray(jm.regressor(model, np.tile(v, (2, 3, 1)), a))
    assert Yb.shape == (2, 3, 8, 8)
    F = np.asarray(mb.JointModel(("viscous", "coulomb", "offset")).regressor(model, v, a))
    np.testing.assert_array_equal(Y[:, [1, 2, 3, 5, 6, 7]], F)
    phi = np.arange(8.0)
    table = jm.as_table(model, phi)
    np.testing.assert_array_equal(table, phi.reshape(2, 4))
    jp = mb.JointModel(("armature", "coulomb")).joint_parameters(model, [0.1, 2.0, 0.3, 4.0])
    assert set(jp) == {"armature", "friction"}
    np.testing.assert_array_equal(jp["armature"], [0.1, 0.3])
    d = mb.JointModel(("viscous",)).to_dict(model, [1.0, 2.0])
    assert d[model.joint_names[1]] == {
        "armature": None,
        "viscous": 1.0,
        "coulomb": None,
        "offset": None,
    }


def test_joint_model_bad_inputs():
    model = mb.chain_model(2, dtype="float64")
    with raises_argument(ArgumentError, "kinds"):
        mb.JointModel(("inertia",))
    with raises_argument(ArgumentError, "kinds"):
        mb.JointModel(("armature", "armature"))
    with raises_argument(ArgumentTypeError, "kinds"):
        mb.JointModel("armature")
    with pytest.raises(ValueError, match="comma-separated subset"):
        mb.JointModel.parse("armature,,offset")
    with raises_argument(ArgumentError, "coefficients"):
        mb.JointModel().torque(model, np.zeros(2), np.zeros(2), np.zeros(3))
    with raises_argument(ArgumentError, "a"):
        mb.JointModel().regressor(model, np.zeros(2), np.zeros(3))


# ------------------------------------------------------------------ fit: the extra prior
def _arm_data(model, n=300, seed=0, armature=None, noise=0.0):
    """Torques of ``model`` (its armature, or ``armature``) along a random multi-sine."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 8, n)[:, None]
    w = rng.uniform(0.5, 2.0, (3, model.nv))
    A = rng.uniform(0.3, 1.0, (3, model.nv))
    q = sum(A[i] * np.sin(w[i] * t + i) for i in range(3))
    v = sum(A[i] * w[i] * np.cos(w[i] * t + i) for i in range(3))
    a = sum(-A[i] * w[i] ** 2 * np.sin(w[i] * t + i) for i in range(3))
    arm_true = np.asarray(model.armature) if armature is None else np.asarray(armature)
    jm = mb.JointModel(("armature", "viscous", "coulomb"))
    Y = np.asarray(mb.joint_torque_regressor(model, q, v, a))
    E = np.asarray(jm.regressor(model, v, a))
    phi = np.stack([arm_true, np.asarray(model.damping), np.asarray(model.friction)], 1)
    tau = Y @ np.asarray(model.inertia.params).reshape(-1) + E @ phi.reshape(-1)
    tau = tau + noise * rng.standard_normal(tau.shape)
    return q, Y, E, tau, jm


def test_extra_prior_optimum_matches_cvxpy_clarabel(arm):
    cp = pytest.importorskip("cvxpy")
    _, Y, E, tau, jm = _arm_data(arm, n=120, noise=0.02)
    nonneg = jm.nonnegative(arm)
    phi0 = np.full(9, 0.05)
    wphi = np.where(np.arange(9) % 3 == 0, 30.0, 0.0)  # a prior on the armature columns
    w, gamma = np.array([2500.0, 2500.0, 2500.0]), 8.0
    prior = np.asarray(arm.inertia.params) * 1.1
    res = fit_torques(
        Y,
        tau,
        prior=sj.RigidBodyInertia(jnp.asarray(prior)),
        extra=E,
        extra_nonnegative=nonneg,
        weights=w,
        gamma=gamma,
        extra_prior=phi0,
        extra_prior_weight=wphi,
    )
    assert int(res.status) == FitStatus.CONVERGED
    X = np.concatenate([Y, E], -1)
    p = X.shape[-1]
    Xw = (X * np.sqrt(w)[None, :, None]).reshape(-1, p)
    x = cp.Variable(p)
    obj = cp.sum_squares(Xw @ x - (tau * np.sqrt(w)).reshape(-1))
    for i in range(3):
        J = sum(x[10 * i + k] * _params.PSEUDO_INERTIA_BASIS[k] for k in range(10))
        J0 = _params.pseudo_inertia(prior[i], np)
        obj += gamma * (cp.trace(np.linalg.inv(J0) @ J) - cp.log_det(J) + np.linalg.slogdet(J0)[1])
        obj -= gamma * 4.0
    obj += cp.sum(cp.multiply(wphi, cp.square(x[30:] - phi0)))
    prob = cp.Problem(cp.Minimize(obj), [x[30:][nonneg] >= 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == "optimal"
    assert abs(float(res.objective) - prob.value) <= 1e-9 * abs(prob.value)
    np.testing.assert_allclose(np.asarray(res.extra), x.value[30:], rtol=1e-5, atol=1e-7)


def test_extra_prior_weight_zero_is_no_prior_and_large_pins_the_value(arm):
    _, Y, E, tau, jm = _arm_data(arm, n=120, noise=0.02)
    kw = dict(prior=arm.inertia, extra=E, extra_nonnegative=jm.nonnegative(arm), weights=400.0)
    base = fit_torques(Y, tau, **kw)
    zero = fit_torques(Y, tau, **kw, extra_prior=np.ones(9), extra_prior_weight=np.zeros(9))
    np.testing.assert_allclose(zero.extra, base.extra, rtol=1e-12, atol=1e-14)
    big = np.where(np.arange(9) % 3 == 0, 1e12, 0.0)
    pinned = fit_torques(Y, tau, **kw, extra_prior=np.full(9, 0.3), extra_prior_weight=big)
    np.testing.assert_allclose(np.asarray(pinned.extra)[::3], 0.3, rtol=1e-6)


@pytest.mark.slow  # compile time; CI's second step
def test_armature_split_with_the_first_link_is_decided_by_the_priors(arm):
    """The first joint's armature and its link's moment about the axis are one base
    parameter: with the links at the prior, the weak armature prior takes the whole rotor
    inertia (the design case: the file says 0, the truth has armature); the report names the
    confounded columns and gives the armature a data share (the link's moment: the prior's)."""
    truth = np.array([0.15, 0.06, 0.04])
    q, Y, E, tau, jm = _arm_data(arm, armature=truth, noise=1e-3)
    model0 = dataclasses.replace(arm, armature=jnp.zeros(3))  # the file says 0
    jp = sid.joint_prior(model0, q, jm)
    res = fit_torques(
        Y,
        tau,
        prior=arm.inertia,
        extra=E,
        extra_nonnegative=jm.nonnegative(arm),
        weights=1e6,
        extra_prior=jp.values,
        extra_prior_weight=jp.weights,
    )
    assert int(res.status) == FitStatus.CONVERGED
    np.testing.assert_allclose(np.asarray(res.extra)[::3], truth, rtol=5e-3)
    names = sid.parameter_names(arm, ()) + jm.names(arm)
    idf = identifiability(
        Y,
        extra=E,
        weights=1e6,
        prior=arm.inertia,
        names=names,
        extra_prior_weight=jp.weights,
    )
    conf = idf.confounded([n for n in jm.names(arm) if n[1] == "armature"])
    assert ("link1", "Izz") in conf[("j1", "armature")]
    assert ("j3", "armature") not in conf  # data-determined
    share = dict(zip(names, np.asarray(idf.data_share), strict=True))
    assert share[("j1", "armature")] > 0.99 and share[("link1", "Izz")] < 0.01
    # truth without armature, link 1 heavier than the prior: the armature stays >= 0
    heavy = np.asarray(arm.inertia.params).copy()
    heavy[0, 9] *= 1.3
    phi2 = np.stack([np.zeros(3), arm.damping, arm.friction], 1).reshape(-1)
    tau2 = Y @ heavy.reshape(-1) + E @ phi2
    res2 = fit_torques(
        Y,
        tau2,
        prior=arm.inertia,
        extra=E,
        extra_nonnegative=jm.nonnegative(arm),
        weights=1e6,
        extra_prior=jp.values,
        extra_prior_weight=jp.weights,
    )
    arm2 = np.asarray(res2.extra)[::3]
    assert np.all(arm2 >= 0)
    assert arm2[0] == pytest.approx(0.3 * float(arm.inertia.params[0, 9]), rel=0.05)
    np.testing.assert_allclose(arm2[1:], 0.0, atol=1e-5)


def test_joint_prior_rule_against_pinocchio_crba(arm, arm_file):
    q = _states(arm, 7, seed=4)[0]
    jm = mb.JointModel()
    jp = sid.joint_prior(arm, q, jm, spread=0.5)
    pm = pin.buildModelFromMJCF(str(arm_file))
    pm.armature[:] = 0.0
    pd = pm.createData()
    mbar = np.mean([np.diag(pin.crba(pm, pd, qq)) for qq in q], axis=0)
    scale = np.maximum(np.asarray(arm.armature), mbar.max())
    np.testing.assert_allclose(jp.armature_scale, scale, rtol=1e-12)
    np.testing.assert_allclose(jp.weights[::4], 1.0 / (0.5 * scale) ** 2, rtol=1e-12)
    np.testing.assert_array_equal(jp.weights.reshape(3, 4)[:, 1:], 0.0)
    # the zero pattern identify's programs are prepared for ahead (pipeline/ahead.py)
    np.testing.assert_array_equal(jp.weights > 0, joint_prior_module.weighted_columns(arm, jm))
    friction = mb.JointModel(("viscous", "coulomb"))
    assert not sid.joint_prior(arm, q, friction).weights.any()
    assert not joint_prior_module.weighted_columns(arm, friction).any()
    values = np.stack([arm.armature, arm.damping, arm.friction, np.zeros(3)], 1).reshape(-1)
    np.testing.assert_array_equal(jp.values, values)
    with raises_argument(IdentifyError, "q"):
        sid.joint_prior(arm, q[:, :2])
    with raises_argument(IdentifyError, "spread"):
        sid.joint_prior(arm, q, spread=0.0)
    with raises_argument(IdentifyTypeError, "joint_model"):
        sid.joint_prior(arm, q, ("armature",))


def test_moving_samples_threshold_and_noise_estimate():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 10, 10001)[:, None]
    v = np.sin(2 * np.pi * 0.3 * t) * np.array([1.0, 0.01])  # joint 2 barely moves
    noisy = v + 0.002 * rng.standard_normal(v.shape)
    sigma = joint_prior_module.velocity_noise(noisy)
    np.testing.assert_allclose(sigma, 0.002, rtol=0.05)
    mask = sid.moving_samples(noisy)
    rms = np.sqrt(np.mean(noisy**2, axis=0))
    thr = np.maximum(3 * sigma, 0.05 * rms)
    np.testing.assert_array_equal(mask, np.abs(noisy) > thr)
    assert 0.02 < 1 - mask[:, 0].mean() < 0.06  # ~ 2·0.05/π of a sine's samples
    m0 = sid.moving_samples(v, fraction=0.0, noise_sigmas=0.0, noise=np.zeros(2))
    np.testing.assert_array_equal(m0, v != 0)
    with raises_argument(IdentifyError, "fraction"):
        sid.moving_samples(v, fraction=-1.0)
    with raises_argument(IdentifyError, "noise"):
        sid.moving_samples(v, noise=[0.1])
    with raises_argument(IdentifyError, "dq"):
        sid.moving_samples(v[:, 0])


def test_fit_torques_extra_prior_bad_inputs(arm):
    _, Y, E, tau, jm = _arm_data(arm, n=60)
    kw = dict(prior=arm.inertia, extra=E, weights=1.0)
    with raises_argument(IdentifyError, "extra_prior"):
        fit_torques(Y, tau, **kw, extra_prior=np.zeros(3))
    with raises_argument(IdentifyError, "extra_prior_weight"):
        fit_torques(Y, tau, **kw, extra_prior_weight=-np.ones(9))
    with raises_argument(IdentifyError, "extra_prior_weight"):
        fit_torques(Y, tau, prior=arm.inertia, weights=1.0, extra_prior_weight=np.ones(9))
    with raises_argument(IdentifyError, "extra_prior_weight"):
        identifiability(Y, extra=E, prior=arm.inertia, extra_prior_weight=np.ones(2))


# ------------------------------------------------------------------------------ writers
_WRITE = """<mujoco model="w">
  <compiler angle="radian" inertiafromgeom="{ifg}"/>
  <option><flag constraint="disable"/></option>
  <default><default class="stiff"><joint armature="0.01" damping="0.2"/></default></default>
  <worldbody>
    <body name="base" pos="0 0 0.1">
      <joint name="j1" axis="0 0 1" class="stiff"/>
      <geom type="box" size="0.05 0.05 0.1" mass="1.5"/>
      <body name="upper" pos="0 0.05 0.2" euler="0.2 0 0">
        <joint name="j2" axis="0 1 0" pos="0 0 0.03" damping="0.9 0.1 0" frictionloss="0.4"/>
        <inertial pos="0.2 0 0.01" quat="0.9 0.1 0.2 0" mass="1.2" diaginertia="0.004 0.02 0.021"/>
        <body name="plate" pos="0.1 0 0"><geom type="sphere" size="0.04" mass="0.3"/></body>
        <frame pos="0.35 0 0" euler="0 0 0.3">
          <body name="fore">
            <joint name="j3" axis="0 1 0"/>
            <inertial pos="0.15 0.01 0" mass="0.8" fullinertia="0.002 0.01 0.011 0 0.0005 0"/>
            <body name="tool" pos="0.3 0 0">
              <inertial pos="0.02 0 0" mass="0.2" diaginertia="1e-4 1e-4 1e-4"/>
            </body>
          </body>
        </frame>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _identified(model, seed=3):
    """Consistent bodies near the model's (a convex mix with random consistent bodies)."""
    from helpers import random_inertia_params

    rng = np.random.default_rng(seed)
    p0 = np.asarray(model.inertia.params)
    rand = random_inertia_params(rng, p0.shape[0])
    mix = 0.7 * p0 + 0.3 * rand * (p0[:, :1] / rand[:, :1])
    return np.where(p0[:, :1] > 0, mix, rand)  # a massless body (no <inertial>): a random one


def _mj_body(mj, name):
    b = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, mj.body_iquat[b])
    R = R.reshape(3, 3)
    return mj.body_mass[b], mj.body_ipos[b], R @ np.diag(mj.body_inertia[b]) @ R.T


@pytest.mark.parametrize("ifg", ["auto", "true"])
def test_write_identified_mjcf_round_trip_in_mujoco(tmp_path, ifg):
    src = tmp_path / "w.xml"
    src.write_text(_WRITE.format(ifg=ifg))
    model = mb.Model.from_mjcf(src, dtype="float64")
    P = _identified(model)
    jp = {
        "armature": np.array([0.15, 0.07, 0.05]),
        "damping": np.array([1.1, 0.5, 0.3]),
        "friction": np.array([2.0, np.nan, 0.6]),  # NaN: keep the file's (j2: 0.4)
    }
    out = tmp_path / "fitted.xml"
    rep = sid.write_identified_model(src, model, P, out, joint_params=jp)
    assert rep["format"] == "mjcf" and rep["max_reload_error"] < 1e-14
    assert rep["max_joint_error"] == 0.0
    assert (ifg == "true") == bool(rep["notes"])
    by = {b["link"]: b for b in rep["bodies"]}
    assert by["base"]["inserted"] and by["upper"]["links_massless"] == ["plate"]
    assert by["fore"]["mode"] == "remainder" and by["fore"]["links_kept"] == ["tool"]
    mj = mujoco.MjModel.from_xml_path(str(out))
    np.testing.assert_allclose(mj.dof_armature, jp["armature"], rtol=1e-15)
    np.testing.assert_allclose(mj.dof_damping, jp["damping"], rtol=1e-15)
    np.testing.assert_allclose(mj.dof_frictionloss, [2.0, 0.4, 0.6], rtol=1e-15)
    assert mj.dof_dampingpoly[1, 0] == pytest.approx(0.1)  # MuJoCo 4's higher terms kept
    # MuJoCo's compiled bodies are the identified ones: each model body is the MJCF body with
    # its joint (in its frame: the body frame moved to the joint's pos) plus its welded bodies
    back = mb.from_mujoco(mj, dtype="float64")
    np.testing.assert_allclose(np.asarray(back.inertia.params), P, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(_mj_body(mj, "plate")[0], 0.0)
    m, c, I_c = _mj_body(mj, "tool")  # kept as in the file
    assert m == pytest.approx(0.2) and np.allclose(c, [0.02, 0, 0])
    # bytes outside the edited elements are the file's
    import difflib

    old = src.read_text().splitlines()
    new = out.read_text().splitlines()
    gone = [ln for ln in difflib.ndiff(old, new) if ln.startswith("- ")]
    added = [ln for ln in difflib.ndiff(old, new) if ln.startswith("+ ")]
    edited = ("<inertial", "<joint", "<compiler", '<body name="plate"')
    assert all(any(t in ln for t in edited) for ln in gone), gone
    assert all(any(t in ln for t in edited) for ln in added), added
    assert len(added) == len(gone) + 1  # the inertial inserted into base, on its own line
    # the identified robot's dynamics in MuJoCo: mj_inverse = rnea + armature a − passive
    # (damping: its linear term checked above, MuJoCo 4's polynomial kept on j2)
    data = mujoco.MjData(mj)
    q, v, a = _states(model, 3, seed=5)
    fitted = dataclasses.replace(
        model, inertia=sj.RigidBodyInertia(jnp.asarray(P)), armature=jnp.asarray(jp["armature"])
    )
    want = np.asarray(mb.rnea(fitted, q, v, a))
    for k in range(3):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[k], v[k], a[k]
        mujoco.mj_inverse(mj, data)
        np.testing.assert_allclose(
            data.qfrc_inverse, want[k] - data.qfrc_passive, rtol=1e-9, atol=1e-10
        )
        np.testing.assert_allclose(data.qfrc_passive[[0, 2]], -(jp["damping"] * v[k])[[0, 2]])


def test_write_identified_urdf_dynamics_and_drake_armature(tmp_path):
    src = tmp_path / "r.urdf"
    src.write_text(_URDF)
    model = mb.Model.from_urdf(src, dtype="float64")
    P = _identified(model)
    jp = {"armature": np.array([0.5, 0.1]), "damping": np.array([0.7, 0.3]),
          "friction": np.array([0.25, 0.15])}  # fmt: skip
    out = tmp_path / "o.urdf"
    rep = sid.write_identified_urdf(src, model, P, out, joint_params=jp)
    assert rep["joints"][0]["armature"]["written"] and not rep["joints"][1]["armature"]["written"]
    assert "drake:rotor_inertia" in rep["joints"][1]["note"]
    pm = pin.buildModelFromUrdf(str(out))
    np.testing.assert_allclose(pm.damping, jp["damping"], rtol=1e-15)
    np.testing.assert_allclose(pm.friction, jp["friction"], rtol=1e-15)
    back = mb.Model.from_urdf(out, dtype="float64")
    np.testing.assert_allclose(back.armature, [0.5, 0.0], rtol=1e-15)  # ρ² (0.5/ρ²)
    np.testing.assert_allclose(back.inertia.params, P, rtol=1e-12, atol=1e-14)
    assert rep["max_joint_error"] < 1e-15


def test_writers_bad_inputs(tmp_path, arm, arm_file):
    out = tmp_path / "o.xml"
    out.write_text("x")
    P = np.asarray(arm.inertia.params)
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        sid.write_identified_mjcf(arm_file, arm, P, out)
    assert out.read_text() == "x"
    with raises_argument(IdentifyError, "out_path"):
        sid.write_identified_mjcf(arm_file, arm, P, arm_file, overwrite=True)
    new = tmp_path / "n.xml"
    with raises_argument(IdentifyError, "inertia"):
        sid.write_identified_mjcf(arm_file, arm, P[:2], new)
    with raises_argument(IdentifyError, "joint_params"):
        sid.write_identified_mjcf(arm_file, arm, P, new, joint_params={"frictionloss": [1, 1, 1]})
    with raises_argument(IdentifyError, "joint_params['armature']"):
        sid.write_identified_mjcf(arm_file, arm, P, new, joint_params={"armature": [1.0]})
    with raises_argument(IdentifyError, "joint_params['damping']", match="for joint 'j2'"):
        sid.write_identified_mjcf(arm_file, arm, P, new, joint_params={"damping": [1, -1, 1]})
    with raises_argument(IdentifyTypeError, "joint_params"):
        sid.write_identified_mjcf(arm_file, arm, P, new, joint_params=[1, 2, 3])
    other = tmp_path / "other.xml"
    other.write_text(_ARM.replace('name="j2"', 'name="k2"'))
    with raises_argument(IdentifyError, "model"):
        sid.write_identified_mjcf(other, arm, P, new)
    spring = tmp_path / "spring.xml"
    spring.write_text(_ARM.replace('name="j3" axis', 'name="j3" springdamper="0.1 1" axis'))
    with pytest.raises(ValueError, match="springdamper"):
        sid.write_identified_mjcf(spring, mb.Model.from_mjcf(spring), P, new,
                                  joint_params={"damping": [1.0, 1.0, 1.0]})  # fmt: skip
    act = tmp_path / "act.xml"
    act.write_text(
        _ARM.replace(
            "</mujoco>", '<actuator><motor joint="j1" armature="0.3"/></actuator></mujoco>'
        )  # fmt: skip
    )
    with pytest.raises(ValueError, match="adds an actuator's armature"):
        sid.write_identified_mjcf(act, mb.Model.from_mjcf(act), P, new,
                                  joint_params={"armature": [1.0, 1.0, 1.0]})  # fmt: skip
    assert not new.exists()
    sdf = tmp_path / "m.sdf"
    sdf.write_text('<?xml version="1.0"?><sdf version="1.9"><model name="m"><link name="a"/>'
                   "</model></sdf>")  # fmt: skip
    with raises_argument(IdentifyError, "source"):
        sid.write_identified_model(sdf, arm, P, new)
    with raises_argument(IdentifyError, "source"):
        sid.write_identified_mjcf(sdf, arm, P, new)
    assert not os.path.exists(new)


# ------------------------------------------------------------- MuJoCo simulation (slow)
@pytest.mark.slow
@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_mujoco_simulated_ur5_joint_parameters_and_written_file(tmp_path):
    """benchmarks/bench_joint_params.py on one truth, shorter logs: a UR5 tracked by MuJoCo
    (``mj_step``) with armature, damping and friction loss; the fit's values against MuJoCo's,
    and ``mj_inverse`` on the written MJCF against a separate run's actuator torques."""
    import argparse
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_joint_params as bench

    nominal = bench.nominal_mjcf(tmp_path / "prior.xml")
    model = mb.Model.from_mjcf(nominal, dtype="float64")
    args = argparse.Namespace(duration=12.0, validation=5.0, lowpass=20.0, decimate=10,
                              sysid_python=None)  # fmt: skip
    row = bench.run_seed(0, tmp_path, nominal, model, args)
    r = {k: np.asarray(v) for k, v in row["ratio"].items()}
    # damping and friction loss: decided by the data on every joint
    assert np.all((r["damping"] > 0.9) & (r["damping"] < 1.1)), r["damping"]
    assert np.all((r["frictionloss"] > 0.9) & (r["frictionloss"] < 1.1)), r["frictionloss"]
    # armature: data-decided from the elbow on; the first two joints share a base parameter
    # with their links' moments about the axis (the priors decide the split, reported)
    assert np.all((r["armature"][2:] > 0.85) & (r["armature"][2:] < 1.18)), r["armature"]
    assert np.all((r["armature"][:2] > 0.75) & (r["armature"][:2] < 1.33)), r["armature"]
    conf = row["fit"]["confounded"]
    assert "shoulder_link/Izz" in conf["shoulder_pan_joint/armature"]
    assert "elbow_joint/armature" not in conf
    err = row["inverse_error"]
    assert err["written_file"] < 0.02 < err["prior_links_true_joints"] < err["prior_file"]
    assert err["truth"] < 1e-12 and row["write"]["max_reload_error"] < 1e-12


def test_write_identified_mjcf_composite_zeroes_the_welded_inertial(tmp_path):
    """A welded body heavier than the identified composite: the remainder is not a body, so
    the joint's body gets the whole composite and the welded body mass 0 (not removed:
    MuJoCo would infer it from its geoms)."""
    src = tmp_path / "c.xml"
    src.write_text(
        _WRITE.format(ifg="auto").replace(
            'mass="0.2" diaginertia="1e-4', 'mass="5" diaginertia="1e-4'
        )
    )
    model = mb.Model.from_mjcf(src, dtype="float64")
    P = _identified(model)
    P[2] = np.asarray(model.inertia.params)[2] * 0.1  # fore + tool identified far lighter
    out = tmp_path / "o.xml"
    rep = sid.write_identified_mjcf(src, model, P, out)
    fore = [b for b in rep["bodies"] if b["link"] == "fore"][0]
    assert fore["mode"] == "composite" and fore["links_cleared"] == ["tool"]
    mj = mujoco.MjModel.from_xml_path(str(out))
    assert _mj_body(mj, "tool")[0] == 0.0
    back = mb.from_mujoco(mj, dtype="float64")
    np.testing.assert_allclose(np.asarray(back.inertia.params), P, rtol=1e-10, atol=1e-13)
    assert (
        rep["max_reload_error"] < 1e-14 and "joints" in rep and rep["joints"][0] == {"joint": "j1"}
    )
