"""The NumPy regressor of ``identify`` (``host_regressor``): Pinocchio's regressor and the JAX
one, its structural zeros, parallel filtering samples last, the mass diagonal."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import robots_dir

import spatialjax.identification as sid
import spatialjax.multibody as mb
from spatialjax.identification.logs.preprocess import parallel_filter_last
from spatialjax.identification.pipeline.host_regressor import (
    block_samples,
    host_regressors,
    live_columns,
)
from spatialjax.identification.pipeline.regression import mass_diagonal

# revolute, revolute about a tilted frame, prismatic; a branch (c and d share b)
_URDF = """<robot name="arm">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 0.3"/><mass value="2.0"/>
    <inertia ixx="0.05" ixy="0.001" ixz="0.002" iyy="0.04" iyz="0.003" izz="0.03"/>
  </inertial></link>
  <link name="b"><inertial><origin xyz="0.2 -0.01 0.05"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0.001" iyy="0.03" iyz="0" izz="0.025"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.05 0.05 0.1"/><mass value="0.7"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0.001" izz="0.008"/></inertial></link>
  <link name="d"><inertial><origin xyz="0.0 0.1 0.0"/><mass value="0.4"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.002"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.4" rpy="1.5707963 0.3 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/>
    <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <joint name="j4" type="continuous"><parent link="b"/><child link="d"/>
    <origin xyz="0 0.2 0" rpy="0 0.5 0"/><axis xyz="0 0 1"/></joint>
</robot>
"""
GRAVITY = np.array([0.4, -1.1, -9.7])  # not along an axis: every term of a_0 = [0; -g]


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    path = tmp_path_factory.mktemp("arm") / "arm.urdf"
    path.write_text(_URDF)
    return path


def _states(model, M, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.5, 1.5, (M, model.nq))
    if model.floating_base:
        q[:, 3:7] = rng.normal(size=(M, 4))  # an unnormalised quaternion: normalised alike
    return q, rng.normal(size=(M, model.nv)), rng.normal(size=(M, model.nv))


@pytest.mark.parametrize("floating", [False, True])
def test_equals_the_jax_regressor_over_blocks(arm, floating):
    """Over more than one block of samples, a fixed and a floating base, joint models with
    and without a transmission (one motor driving j3 and j4 together)."""
    model = mb.Model.from_urdf(arm, dtype="float64", floating_base=floating)
    q, v, a = _states(model, block_samples(model.nbodies) + 5)
    ref_Y = np.asarray(mb.joint_torque_regressor(model, q, v, a, jnp.asarray(GRAVITY)))
    tr = mb.Transmission(("m1", "m2"), ("j3", "j4"), [[2.0, 0.0], [-1.5, 3.0]])
    for jm in (mb.JointModel(), mb.JointModel(("viscous", "offset"), transmission=tr)):
        Y, F = host_regressors(model, q, v, a, GRAVITY, jm)
        assert Y.shape == ref_Y.shape and Y.dtype == np.float64
        np.testing.assert_allclose(Y, ref_Y, rtol=0, atol=1e-12 * np.abs(ref_Y).max())
        np.testing.assert_array_equal(F, np.asarray(jm.regressor(model, v, a)))


def test_matches_pinocchio_on_a_real_arm():
    pin = pytest.importorskip("pinocchio")
    robots = robots_dir()
    if robots is None:
        pytest.skip("needs example-robot-data (the test extra)")
    path = robots / "ur_description/urdf/ur5_robot.urdf"
    model = mb.Model.from_urdf(path, dtype="float64")
    pm = pin.buildModelFromUrdf(str(path))
    pm.gravity.linear = GRAVITY
    data = pm.createData()
    q, v, a = _states(model, 9, seed=3)
    Y, _ = host_regressors(model, q, v, a, GRAVITY, mb.JointModel(()))
    for k in range(len(q)):
        ref = pin.computeJointTorqueRegressor(pm, data, q[k], v[k], a[k])
        np.testing.assert_allclose(Y[k], ref, rtol=0, atol=1e-11 * np.abs(ref).max())


def test_evaluated_in_numpy_with_nothing_compiled(arm, compiles):
    """The shared batch-last kernels (``multibody._batchlast``) run on NumPy arrays in NumPy:
    a floating base (quaternions, every kernel) and a transmission compile no program."""
    model = mb.Model.from_urdf(arm, dtype="float64", floating_base=True)
    q, v, a = _states(model, 20, seed=4)
    tr = mb.Transmission(("m1", "m2"), ("j3", "j4"), [[2.0, 0.0], [-1.5, 3.0]])
    live = live_columns(model, q, v, a, GRAVITY, mb.JointModel(transmission=tr))
    assert type(live.values) is np.ndarray and not compiles


def test_live_entries_hold_every_nonzero_and_dense_puts_them_back(arm):
    """What ``live_columns`` leaves out is zero in the JAX regressor whatever the state (the
    bodies outside a joint's subtree, the joints a motor does not drive)."""
    model = mb.Model.from_urdf(arm, dtype="float64")
    q, v, a = _states(model, 50, seed=1)
    jm = mb.JointModel(("armature", "coulomb"))
    live = live_columns(model, q, v, a, GRAVITY, jm)
    X = np.concatenate(
        [np.asarray(mb.joint_torque_regressor(model, q, v, a, jnp.asarray(GRAVITY))),
         np.asarray(jm.regressor(model, v, a))], axis=-1,
    )  # fmt: skip
    dead = np.ones(X.shape[1:], bool)
    dead[live.rows, live.cols] = False
    assert not np.any(X[:, dead])
    # j1 moves every body (4 x 10 entries), j2 three, j3 and j4 their own; F is diagonal
    assert live.values.shape == (10 * (4 + 3 + 1 + 1) + 2 * 4, 50)
    tol = 1e-12 * np.abs(X).max()
    np.testing.assert_allclose(live.values, X[:, live.rows, live.cols].T, rtol=0, atol=tol)
    Y, F = live.dense(live.values[:, ::7])
    np.testing.assert_allclose(np.concatenate([Y, F], -1), X[::7], rtol=0, atol=tol)
    assert not np.any(np.concatenate([Y, F], -1)[:, dead])


def _prepared(n: int, rng):
    """A two-joint log of ``n`` samples at 1 kHz, low-passed at 20 Hz (full rate)."""
    t = np.arange(n) / 1000.0
    q = np.column_stack([np.sin(2 * np.pi * t), np.cos(3 * t)])
    log = sid.RobotLog(t=t, q=q, tau=q + 0.01 * rng.normal(size=q.shape))
    return sid.prepare_log(log, lowpass=20.0)


def test_parallel_filter_last_is_parallel_filter_of_the_columns():
    rng = np.random.default_rng(2)
    p = _prepared(3000, rng)
    cols = rng.normal(size=(p.n_samples, 5))
    cols[:, 3] = np.sign(np.sin(7 * p.t))
    ref_log, ref = sid.parallel_filter(p, cols, decimate=4)
    out_log, out = parallel_filter_last(p, np.ascontiguousarray(cols.T), decimate=4)
    np.testing.assert_array_equal(out_log.t, ref_log.t)
    np.testing.assert_allclose(out.T, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    with pytest.raises(sid.IdentifyError, match=r"values.*expected shape \(k, 2"):
        parallel_filter_last(p, cols, decimate=4)


def test_mass_diagonal_matches_pinocchio(arm):
    pin = pytest.importorskip("pinocchio")
    model = mb.Model.from_urdf(arm, dtype="float64")
    pm = pin.buildModelFromUrdf(str(arm))
    data = pm.createData()
    q = np.random.default_rng(1).uniform(-1, 1, size=(7, model.nq))
    d = mass_diagonal(model, q, mb.JointModel())
    # Pinocchio's continuous joint (j4) takes [cos q, sin q]
    qp = np.concatenate([q[:, :3], np.cos(q[:, 3:]), np.sin(q[:, 3:])], axis=1)
    assert pm.nq == qp.shape[1]
    ref = np.stack([np.diag(pin.crba(pm, data, qk)) for qk in qp])
    np.testing.assert_allclose(d, ref, rtol=1e-10, atol=1e-12)


def test_parallel_filter_skips_zero_columns_exactly():
    """Zero columns stay exactly zero; the others are SciPy's ``sosfiltfilt`` to round-off."""
    from scipy import signal

    rng = np.random.default_rng(2)
    p = _prepared(2000, rng)
    cols = np.zeros((p.n_samples, 2, 3))
    cols[:, 0, 1] = rng.normal(size=p.n_samples)
    cols[:, 1, 2] = np.sign(np.sin(7 * p.t))
    out, filtered = sid.parallel_filter(p, cols, decimate=4)
    sos = signal.butter(p.order, p.lowpass, fs=p.rate, output="sos")
    ref = signal.sosfiltfilt(sos, cols, axis=0)[p.edge : p.n_samples - p.edge : 4]
    np.testing.assert_allclose(filtered, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert filtered.shape[0] == out.n_samples and not np.any(filtered[:, 0, 0])
