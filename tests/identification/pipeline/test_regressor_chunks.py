"""What keeps ``identify`` from compiling per log length: the chunked regressor, the mass
diagonal from its program, parallel filtering of the live columns only."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import spatialjax.identification as sid
import spatialjax.multibody as mb
from spatialjax.identification.pipeline.regression import (
    REGRESSOR_CHUNK,
    joint_regressors,
    mass_diagonal,
    regressors_in_chunks,
)

_URDF = """<robot name="arm">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 0.3"/><mass value="2.0"/>
    <inertia ixx="0.05" ixy="0.001" ixz="0.002" iyy="0.04" iyz="0.003" izz="0.03"/>
  </inertial></link>
  <link name="b"><inertial><origin xyz="0.2 -0.01 0.05"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0.001" iyy="0.03" iyz="0" izz="0.025"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.05 0.05 0.1"/><mass value="0.7"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0.001" izz="0.008"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.4" rpy="1.5707963 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/>
    <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    path = tmp_path_factory.mktemp("arm") / "arm.urdf"
    path.write_text(_URDF)
    return path, mb.Model.from_urdf(path, dtype="float64")


def test_chunks_one_program_for_every_length(arm):
    _, model = arm
    jm = mb.JointModel(("viscous", "coulomb"))
    g = jnp.asarray([0.0, 0.0, -9.81])
    rng = np.random.default_rng(0)
    before = joint_regressors.cache_size()
    for M in (REGRESSOR_CHUNK + 3, 5):  # padded last chunks of two lengths
        q, v, a = (rng.normal(size=(M, 3)) for _ in range(3))
        Y, F = regressors_in_chunks(model, q, v, a, g, jm)
        assert Y.shape == (M, 3, 30) and F.shape == (M, 3, 6)
        # each sample's rows are its own: the same as the unchunked regressor
        np.testing.assert_allclose(Y, mb.joint_torque_regressor(model, q, v, a, g), atol=1e-12)
        np.testing.assert_allclose(F, jm.regressor(model, v, a), atol=1e-12)
    assert joint_regressors.cache_size() - before <= 1


def test_mass_diagonal_matches_pinocchio(arm):
    pin = pytest.importorskip("pinocchio")
    path, model = arm
    pm = pin.buildModelFromUrdf(str(path))
    data = pm.createData()
    q = np.random.default_rng(1).uniform(-1, 1, size=(7, 3))
    d = mass_diagonal(model, q, mb.JointModel())
    ref = np.stack([np.diag(pin.crba(pm, data, qk)) for qk in q])
    np.testing.assert_allclose(d, ref, rtol=1e-10, atol=1e-12)


def test_parallel_filter_skips_zero_columns_exactly():
    """Zero columns stay exactly zero; the others are SciPy's ``sosfiltfilt`` to round-off."""
    from scipy import signal

    t = np.arange(2000) / 1000.0
    rng = np.random.default_rng(2)
    q = np.column_stack([np.sin(2 * np.pi * t), np.cos(3 * t)])
    log = sid.RobotLog(t=t, q=q, tau=q + 0.01 * rng.normal(size=q.shape))
    p = sid.prepare_log(log, lowpass=20.0)
    cols = np.zeros((p.n_samples, 2, 3))
    cols[:, 0, 1] = rng.normal(size=p.n_samples)
    cols[:, 1, 2] = np.sign(np.sin(7 * p.t))
    out, filtered = sid.parallel_filter(p, cols, decimate=4)
    sos = signal.butter(p.order, p.lowpass, fs=p.rate, output="sos")
    ref = signal.sosfiltfilt(sos, cols, axis=0)[p.edge : p.n_samples - p.edge : 4]
    np.testing.assert_allclose(filtered, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert filtered.shape[0] == out.n_samples and not np.any(filtered[:, 0, 0])
