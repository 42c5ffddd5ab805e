"""Robots not mounted upright: ``identify_robot(gravity=)`` and ``spatialjax identify --gravity``.

Reference values: the log's own construction. A two-link arm on a wall (its
joint axes horizontal, gravity ``(0, -9.81, 0)`` in its root frame) is
simulated with "true" links 20 % from the file's; identified with that
gravity the fit recovers the true masses and predicts the held-out torques to
the noise, identified as if upright it predicts them no better than zero.
"""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from helpers import raises_argument

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._cli.identify import main
from spatialjax._util import x64
from spatialjax.identification import IdentifyError
from spatialjax.identification.pipeline.checks import gravity_warnings

WALL_ARM = """<?xml version="1.0"?>
<robot name="wall_arm">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>
  <link name="l2"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
</robot>
"""
WALL_GRAVITY = (0.0, -9.81, 0.0)


@pytest.fixture(scope="module")
def wall(tmp_path_factory):
    """The arm's URDF, a 500 Hz log simulated with the wall's gravity, and the true masses."""
    d = tmp_path_factory.mktemp("wall")
    urdf = d / "wall_arm.urdf"
    urdf.write_text(WALL_ARM)
    with x64():
        model = mb.Model.from_urdf(urdf, dtype="float64")
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(4), 3)
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=10.0, rate=500.0, key=k1,
                                                    q_limits=[[-2.0, 2.0]] * 2,
                                                    dq_limits=2.0)  # fmt: skip
        true = ident.perturb_inertia(model.inertia, 0.2, k2)
        log = ident.simulate_log(model, t, q, dq, ddq, key=k3, inertia=true, torque_noise=0.01,
                                 gravity=WALL_GRAVITY)  # fmt: skip
    path = d / "wall.npz"
    log.save(path)
    return urdf, path, np.asarray(true.params)[:, 0], model, log


def test_gravity_norm_warnings():
    for g in [(0, 0, -9.81), (0, -9.81, 0), (0, 0, 10.0), (6.94, 0, -6.94), (0, 0, -9.78)]:
        assert gravity_warnings(g) == ()
    for g, norm in [((0, 0, -1.0), "1"), ((0, 0, -32.2), "32.2"), ((0, -1.62, 0), "1.62")]:
        (w,) = gravity_warnings(g)
        assert f"has norm {norm}, not Earth's 9.81" in w and "m/s²" in w


def test_zero_or_malformed_gravity_is_refused(wall):
    _, _, _, model, log = wall
    for g in [(0.0, 0.0, 0.0), (0.0, -9.81), (0.0, np.inf, 0.0)]:
        with raises_argument(IdentifyError, "gravity"):
            ident.identify_robot(model, log, gravity=g)


@pytest.mark.parametrize(
    "text, message",
    [
        ("0,-9.81", "expected GX,GY,GZ: three comma-separated numbers in m/s²"),
        ("0;0;-9.81", "expected GX,GY,GZ"),
        ("a,b,c", "expected GX,GY,GZ"),
        ("0,nan,0", "expected three finite numbers"),
        ("0,0,0", "expected the gravitational acceleration, a non-zero vector"),
    ],
)
def test_bad_gravity_option_exits_2_naming_it(wall, text, message, capsys, tmp_path):
    urdf, path, *_ = wall
    report = tmp_path / "r.json"
    assert pytest.raises(SystemExit, main, [str(urdf), str(path), f"--gravity={text}",
                                            "--report", str(report)]).value.code == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "argument --gravity" in err and message in err
    assert not report.exists()


@pytest.mark.slow  # the command compiles a fit
def test_wall_mounted_arm_needs_its_gravity(wall, tmp_path, capsys):
    urdf, path, true_mass, _, _ = wall
    right, wrong = tmp_path / "right.json", tmp_path / "wrong.json"
    argv = [str(urdf), str(path), "--joint-model", "none", "--no-cache", "--report"]
    assert main([*argv, str(right), "--gravity", "0,-9.81,0"]) == 0
    out = capsys.readouterr().out
    assert "gravity (0, -9.81, 0) m/s² in the world frame" in out
    assert main([*argv, str(wrong)]) == 0  # the default: upright
    out = capsys.readouterr().out
    assert "gravity (0, 0, -9.81) m/s² in the world frame" in out
    r, w = (json.loads(p.read_text()) for p in (right, wrong))
    assert r["gravity"] == list(WALL_GRAVITY) and r["options"]["gravity"] == list(WALL_GRAVITY)
    assert w["gravity"] == [0.0, 0.0, -9.81]
    fit_mass = np.array([d["fit"]["mass"] for d in r["links"]])
    np.testing.assert_allclose(fit_mass, true_mass, rtol=0.05)
    e_right = r["errors"]["fit"]["holdout"]["overall"]
    e_wrong = w["errors"]["fit"]["holdout"]["overall"]
    assert e_right < 0.01 and e_wrong > 0.5  # 0.0003 and 1.02 (seed 4)
    assert r["warnings"] == []
    assert any("worse than zero" in x and "--gravity" in x for x in w["warnings"])
