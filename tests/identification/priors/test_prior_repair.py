"""Priors that vendor files ship: point masses, rods, near-zero inertias, repaired by default.

Reference values: closed forms. No body of mass ``m`` and density at most
``ρ`` has ``tr S_c = ∫|x − c|² dm`` below a solid ball's, ``3 m r² / 5`` with
``r = (3 m / 4πρ)^{1/3}`` (a ball's second moments are ``m r² / 5`` about
each axis, its moments of inertia ``2 m r² / 5``); the repair raises the trace
to it by adding the same amount to each principal second moment.
"""

from __future__ import annotations

import dataclasses
import json
import math

import jax
import numpy as np
import pytest
from helpers import FIXTURES, raises_argument

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._util import x64
from spatialjax.identification import IdentifyError

OSMIUM = 22590.0  # kg/m³, the densest element


def _params(m, c, I_c):
    """10-vector about the origin from mass, CoM and inertia about the CoM (parallel axis)."""
    c = np.asarray(c, float)
    I_o = np.asarray(I_c, float) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


def _inertia_about_com(p):
    m, c = p[0], p[1:4] / p[0]
    I_o = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    return I_o - m * (c @ c * np.eye(3) - np.outer(c, c))


def _ball_radius(m, rho=OSMIUM):
    return (3.0 * m / (4.0 * math.pi * rho)) ** (1.0 / 3.0)


def test_a_point_mass_becomes_the_least_ball_of_its_mass():
    m, c = 2.0, [0.1, 0.0, 0.05]
    out, (rep,) = ident.repair_prior(_params(m, c, np.zeros((3, 3)))[None], ["flange"])
    r = _ball_radius(m)
    np.testing.assert_allclose(out[0, :4], [m, *(m * np.asarray(c))], rtol=1e-15)
    # a solid ball: I = 2/5 m r² about every axis through the CoM
    np.testing.assert_allclose(_inertia_about_com(out[0]), 0.4 * m * r * r * np.eye(3),
                               rtol=1e-9, atol=1e-15)  # fmt: skip
    np.testing.assert_allclose(rep.second_moments_after, [m * r * r / 5] * 3, rtol=1e-12)
    assert rep.name == "flange" and rep.reason == "no rotational inertia (a point mass)"
    assert rep.relative_change == math.inf and rep.to_dict()["relative_change"] is None
    json.dumps(rep.to_dict(), allow_nan=False)


def test_a_short_rod_and_a_near_zero_inertia_are_raised_to_the_ball():
    m = 1.0
    t_min = 0.6 * m * _ball_radius(m) ** 2
    # a 2 cm rod along x: σ = [m L²/12, 0, 0], its trace below the ball's
    L = 0.02
    rod = _params(m, [0.0, 0.0, 0.1], np.diag([0.0, m * L * L / 12, m * L * L / 12]))
    # a near-zero inertia, as some files print for a kilogram
    tiny = _params(m, [0.05, 0.0, 0.0], 1e-9 * np.diag([1.0, 2.0, 2.5]))
    out, reps = ident.repair_prior(np.stack([rod, tiny]), ["rod", "tiny"])
    assert [r.name for r in reps] == ["rod", "tiny"]
    assert "(a rod)" in reps[0].reason and "too small for its mass" in reps[1].reason
    sig_tiny = 0.5 * 1e-9 * 5.5 - 1e-9 * np.array([1.0, 2.0, 2.5])
    for p, p2, sig in ((rod, out[0], [m * L * L / 12, 0, 0]), (tiny, out[1], sig_tiny)):
        sig = np.asarray(sig)
        want = np.sort(sig + (t_min - sig.sum()) / 3)
        I2 = _inertia_about_com(p2)
        lam2 = np.linalg.eigvalsh(I2)
        np.testing.assert_allclose(np.sort(0.5 * lam2.sum() - lam2), want, rtol=1e-8)
        np.testing.assert_allclose(p2[:4], p[:4], rtol=1e-15)  # mass and CoM kept
        # principal axes kept: the repaired inertia commutes with the given one
        I1 = _inertia_about_com(p)
        np.testing.assert_allclose(I1 @ I2, I2 @ I1, atol=1e-18)


def test_real_links_are_kept_bit_for_bit():
    # an aluminium box 10 x 5 x 5 cm (1.35 kg), a solid steel ball, TIAGo's arm_7_link (0.359 kg,
    # tr S_c 8.65e-5 kg m², denser than steel but not than osmium)
    m_box = 2700 * 0.1 * 0.05 * 0.05
    box = _params(m_box, [0.05, 0, 0], m_box / 12 * np.diag([0.005, 0.0125, 0.0125]))
    m_ball = 1.0
    r = _ball_radius(m_ball, 7850.0)
    ball = _params(m_ball, [0, 0, 0.1], 0.4 * m_ball * r * r * np.eye(3))
    s = 8.65e-5 / 3
    tiago = _params(0.359, [0, 0, -0.02], np.diag([2 * s, 2 * s, 2 * s]))
    P = np.stack([box, ball, tiago])
    out, reps = ident.repair_prior(P)
    assert reps == () and np.array_equal(out, P)
    # a lower density: the same steel ball is below a ball of water's trace and is raised to it
    out, (rep,) = ident.repair_prior(ball[None], density=1000.0)
    rw = _ball_radius(m_ball, 1000.0)
    np.testing.assert_allclose(_inertia_about_com(out[0]), 0.4 * m_ball * rw * rw * np.eye(3),
                               rtol=1e-9)  # fmt: skip
    for bad in (0.0, -1.0, math.inf, math.nan):
        with raises_argument(IdentifyError, "density"):
            ident.repair_prior(ball[None], density=bad)


# ------------------------------------------------------------------ identify_robot, the command

FIX = FIXTURES
TOY_LOCK = {"j3": 0.3, "j4": 0.05}


def _point_mass(model, body: int):
    """``model`` with ``body`` a point mass at its CoM (the mass and first moment kept)."""
    P = np.asarray(model.inertia.params, np.float64).copy()
    P[body] = _params(P[body, 0], P[body, 1:4] / P[body, 0], np.zeros((3, 3)))
    return dataclasses.replace(model, inertia=type(model.inertia)(jax.numpy.asarray(P)))


@pytest.fixture(scope="module")
def toy():
    with x64():
        model = mb.Model.from_urdf(FIX / "toy_attached.urdf", locked_joints=TOY_LOCK,
                                   dtype="float64")  # fmt: skip
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(3), 3)
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=10.0, rate=500.0, key=k1)
        true = ident.perturb_inertia(model.inertia, 0.2, k2)
        log = ident.simulate_log(model, t, q, dq, ddq, key=k3, inertia=true, torque_noise=0.01)
    return model, dataclasses.replace(log, joint_names=("j1", "j2"))


@pytest.mark.slow  # compiles a fit
def test_identify_robot_repairs_a_point_mass_by_default_and_refuses_it_strict(toy):
    model, log = toy
    bad = _point_mass(model, 1)
    lines = []
    with x64():
        res = ident.identify_robot(bad, log, lowpass=20.0, joint_model="none",
                                   progress=lambda s, text, ln: lines.extend(ln))  # fmt: skip
    (r,) = res.report.to_dict()["prior_repairs"]
    assert r["link"] == "b" and r["reason"] == "no rotational inertia (a point mass)"
    assert any(ln.startswith("repaired b: no rotational inertia (a point mass)") for ln in lines)
    assert res.report.links[1].fit.consistent
    json.loads(res.to_json())
    with x64(), pytest.raises(ident.IdentifyError, match=r"link 'b' cannot be the prior") as e:
        ident.identify_robot(bad, log, lowpass=20.0, repair_prior_bodies=False)
    assert e.value.argument == "prior" and "a point mass" in str(e.value)


_POINT_MASS_URDF = """<?xml version="1.0"?>
<robot name="flange_arm">
  <link name="base"/>
  <joint name="joint_1" type="revolute">
    <parent link="base"/><child link="link_1"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="3"/>
  </joint>
  <link name="link_1">
    <inertial><origin xyz="0.15 0 0"/><mass value="2.0"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
  </link>
  <joint name="joint_2" type="revolute">
    <parent link="link_1"/><child link="link_2"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="3"/>
  </joint>
  <link name="link_2">
    <inertial><origin xyz="0.1 0 0.02"/><mass value="1.0"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
  </link>
</robot>
"""


@pytest.mark.slow  # the command compiles a fit
def test_the_command_repairs_a_point_mass_flange_and_names_it(tmp_path, capsys):
    from spatialjax._cli.identify import main

    urdf = tmp_path / "flange_arm.urdf"
    urdf.write_text(_POINT_MASS_URDF)
    with x64():
        model = mb.Model.from_urdf(urdf, dtype="float64")
        k1, k2 = jax.random.split(jax.random.PRNGKey(1))
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=10.0, rate=500.0, key=k1)
        true = np.asarray(model.inertia.params).copy()
        true[1] = _params(1.0, [0.1, 0, 0.02], np.diag([1e-3, 2e-3, 2e-3]))  # the real flange
        log = ident.simulate_log(model, t, q, dq, ddq, key=k2, torque_noise=0.01,
                                 inertia=type(model.inertia)(jax.numpy.asarray(true)))  # fmt: skip
    path = tmp_path / "log.npz"
    log.save(path)
    argv = [str(urdf), str(path), "--lowpass", "20", "--joint-model", "none", "--no-cache"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "repaired link_2: no rotational inertia (a point mass)" in out
    assert main([*argv, "--strict-prior"]) == 2
    err = capsys.readouterr().err
    assert (
        "link 'link_2' cannot be the prior as given (no rotational inertia (a point mass))" in err
    )
