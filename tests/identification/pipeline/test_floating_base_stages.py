"""Floating-base robots through ``identify_robot`` and ``spatialjax identify`` (issue 35).

Quick tests on a small walker written here as a URDF (a base and three legs of hip and
knee, a foot frame on each): its log is made with **Pinocchio** (``pin.rnea`` with a free
flyer; the base turning about a fixed axis, so its body-frame velocity and acceleration
are exact), the three feet's forces solved from the six base rows (any forces that
balance them are valid contact wrenches for the equations), and written in the ``.npz`` form of
issue 35. They check the option errors, the stage lines (method and equations per
sample), the report's keys against the guide, and the command's errors for a log without
base pose and for contact frames the model lacks.

The slow test at the end is the acceptance of issues 35 and 41: Solo12 from
example-robot-data simulated with Pinocchio to issue 41's recipe
(``benchmarks/bench_floating_identify.py``: four point feet, base sway, legs swung in turn;
25 s at 1 kHz, 20-bit encoders, torque, foot-force and base-pose noise, links 20–30 % off
the URDF), identified by the command with no option beyond the paths, the fitted URDF
loaded by Pinocchio with a free flyer and scored on a separate trajectory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, check_report_against_the_guide, raises_argument, robots_dir

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._cli import identify as cli
from spatialjax._util import x64
from spatialjax.identification import IdentifyError

pin = pytest.importorskip("pinocchio")

FEET = ("foot_l", "foot_r", "foot_b")
JOINTS = ("hip_b", "knee_b", "hip_l", "knee_l", "hip_r", "knee_r")  # model order


def _box(m, a, b, c):
    return (f'<inertial><origin xyz="0 0 {-c / 2}"/><mass value="{m}"/><inertia ixx="'
            f'{m * (b * b + c * c) / 12}" ixy="0" ixz="0" iyy="{m * (a * a + c * c) / 12}" '
            f'iyz="0" izz="{m * (a * a + b * b) / 12}"/></inertial>')  # fmt: skip


def _leg(side: str, x: float, y: float) -> str:
    return f"""
  <joint name="hip_{side}" type="revolute"><parent link="base"/><child link="thigh_{side}"/>
    <origin xyz="{x} {y} -0.05"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="20"/></joint>
  <link name="thigh_{side}">{_box(0.8, 0.05, 0.05, 0.3)}</link>
  <joint name="knee_{side}" type="revolute"><parent link="thigh_{side}"/>
    <child link="shin_{side}"/><origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="50" velocity="20"/></joint>
  <link name="shin_{side}">{_box(0.4, 0.04, 0.04, 0.3)}</link>
  <joint name="ankle_{side}" type="fixed"><parent link="shin_{side}"/>
    <child link="foot_{side}"/><origin xyz="0.02 0 -0.3"/></joint>
  <link name="foot_{side}"/>"""


WALKER = f"""<?xml version="1.0"?>
<robot name="walker">
  <link name="base">{_box(3.0, 0.3, 0.25, 0.1)}</link>{_leg("l", 0.1, 0.12)}{_leg("r", 0.1, -0.12)}
  {_leg("b", -0.15, 0.0)}
</robot>
"""


def _axis_rotation(k, th):
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th)[:, None, None] * K + (1 - np.cos(th))[:, None, None] * (K @ K)


def walker_log(urdf: Path, *, seed=0, rate=200.0, duration=3.0, scale=1.2, wrenches=True):
    """A walker log made with Pinocchio: the true links are the URDF's with masses and
    inertias times ``scale``; the base turns about a fixed axis (exact body-frame ω, ω̇)."""
    rng = np.random.default_rng(seed)
    pm = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    assert tuple(pm.names)[2:] == JOINTS  # the columns of q below
    for i in range(1, pm.njoints):
        In = pm.inertias[i]
        pm.inertias[i] = pin.Inertia(scale * In.mass, In.lever, scale * In.inertia)
    pd = pm.createData()
    t = np.arange(int(duration * rate)) / rate
    f, ph = rng.uniform(0.4, 1.6, (2, 10)), rng.uniform(0, 2 * np.pi, (2, 10))
    amp = np.array([0.05, 0.04, 0.03, 0.25, 0.5, 0.4, 0.6, 0.5, 0.3, 0.6])  # base, angle, joints

    def wave(d):  # d-th derivative of Σ amp sin(2π f t + φ)
        w = 2 * np.pi * f
        return sum(amp * w[i] ** d * np.sin(np.outer(t, w[i]) + ph[i] + d * np.pi / 2)
                   for i in range(2))  # fmt: skip

    x, dx, ddx = wave(0), wave(1), wave(2)
    k = np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8])
    R = _axis_rotation(k, x[:, 3])
    p = x[:, :3] + [0.0, 0.0, 0.7]
    vlin = np.einsum("nji,nj->ni", R, dx[:, :3])  # Rᵀ ṗ
    om, dom = dx[:, 3:4] * k, ddx[:, 3:4] * k
    dvlin = np.einsum("nji,nj->ni", R, ddx[:, :3]) - np.cross(om, vlin)
    fid = [pm.getFrameId(fr) for fr in FEET]
    out = {"q": [], "tau": [], "w": [], "quat": []}
    for n in range(t.size):
        quat = pin.Quaternion(R[n]).coeffs()  # x y z w
        q = np.concatenate([p[n], quat, x[n, 4:]])
        v = np.concatenate([vlin[n], om[n], dx[n, 4:]])
        a = np.concatenate([dvlin[n], dom[n], ddx[n, 4:]])
        gen = pin.rnea(pm, pd, q, v, a)  # [f; n] base rows, then the joints
        pin.computeJointJacobians(pm, pd, q)
        pin.updateFramePlacements(pm, pd)
        J = [pin.getFrameJacobian(pm, pd, i, pin.LOCAL)[:3] for i in fid]  # linear rows
        B = np.concatenate([Jc[:, :6] for Jc in J]).T  # (6, 9): the feet's forces → base rows
        fc = np.linalg.lstsq(B, gen[:6], rcond=None)[0].reshape(3, 3)  # exact: 3 feet
        out["tau"].append(gen[6:] - sum(Jc[:, 6:].T @ fc[c] for c, Jc in enumerate(J)))
        out["w"].append(np.concatenate([np.zeros((3, 3)), fc], axis=1))  # [n; f] in foot axes
        out["q"].append(x[n, 4:])
        out["quat"].append(np.concatenate([quat[3:], quat[:3]]))  # w x y z
    return ident.RobotLog(
        t=t, q=np.array(out["q"]), tau=np.array(out["tau"]), joint_names=JOINTS,
        base_position=p, base_quaternion=np.array(out["quat"]), contact_frames=FEET,
        contact_wrenches=np.array(out["w"]) if wrenches else None,
        contact=np.ones((t.size, 3), bool),
    )  # fmt: skip


@pytest.fixture(scope="module")
def walker(tmp_path_factory):
    d = tmp_path_factory.mktemp("walker")
    urdf = d / "walker.urdf"
    urdf.write_text(WALKER)
    log = walker_log(urdf)
    path = d / "walker_log.npz"
    log.save(path)
    with x64():
        model = mb.Model.from_urdf(urdf, floating_base=True, dtype="float64")
    return urdf, path, log, model


def test_walker_log_holds_the_equations(walker):
    """The generated log satisfies ``Y π = Sᵀτ + Σ J_cᵀ w_c`` for the true links (the rows
    of ``floating_base_rows`` at the logged state, before any filtering)."""
    _, _, log, model = walker
    with x64():
        p = ident.prepare_log(log)
        Y = np.asarray(mb.joint_torque_regressor(model, *p.state()))
        rows = ident.floating_base_rows(model, p, Y)
    true = np.asarray(model.inertia.params) * 1.2
    err = rows.relative_errors(true)
    assert err["base"] < 2e-3 and err["joint"] < 2e-3  # central differences of q at 200 Hz


# ------------------------------------------------------------------ with a joint model
#: The walker's joint model, per joint in model order: armature (kg·m²), viscous (N·m·s/rad),
#: Coulomb (N·m), offset (N·m).
JOINT_TRUTH = np.stack([np.linspace(0.01, 0.03, 6), np.linspace(0.2, 0.5, 6),
                        np.linspace(0.3, 0.8, 6), np.linspace(-0.1, 0.1, 6)], axis=1)  # fmt: skip


def with_joint_model(log):
    """The walker log with ``JOINT_TRUTH``'s torques added to the joints' (``I_a q̈ + b q̇ +
    F_c sign(q̇) + o``: what the motors supply beyond the links'), ``q̇, q̈`` by central
    differences of the logged positions (smooth sines at 200 Hz)."""
    import dataclasses

    dq = np.gradient(log.q, log.t, axis=0)
    ddq = np.gradient(dq, log.t, axis=0)
    a, b, fc, off = JOINT_TRUTH.T
    return dataclasses.replace(log, tau=log.tau + a * ddq + b * dq + fc * np.sign(dq) + off)


@pytest.mark.parametrize("method", [pytest.param("wrenches", marks=pytest.mark.slow), "projection"])
def test_a_floating_base_fits_the_joint_model_with_the_links(walker, method):
    """``identify_robot`` with its defaults (the filter chosen from the log, all four
    joint-model kinds) on a floating-base log whose joints carry armature, damping, Coulomb
    friction and an offset: each comes back within 2 % (the offset within 3 mN·m), the
    samples at rest leave their joint's equations (a few % of each joint's), and the report
    holds both the floating base's section and the joint parameters."""
    import dataclasses

    _, _, log, model = walker
    log = with_joint_model(log)
    if method == "projection":
        log = dataclasses.replace(log, contact_wrenches=None)
    with x64():
        res = ident.identify_robot(model, log)
    report = res.report.to_dict()
    check_report_against_the_guide(report)
    assert report["floating_base"]["method"] == method
    assert report["settings"]["joint_model"] == ["armature", "viscous", "coulomb", "offset"]
    assert report["filter"]["automatic"]
    assert [j["joint"] for j in report["joint_parameters"]] == list(JOINTS)
    fit = res.joint_parameters["fit"]
    assert fit.shape == (6, 4)
    np.testing.assert_allclose(fit[:, :3], JOINT_TRUTH[:, :3], rtol=0.02)
    np.testing.assert_allclose(fit[:, 3], JOINT_TRUTH[:, 3], atol=3e-3)
    rest = np.array([j["rest_fraction"] for j in report["joint_parameters"]])
    assert np.all((rest > 0) & (rest < 0.1)), rest
    e = report["errors"]["fit"]["holdout"]
    assert e["base"] < 0.005 and e["joint"] < 0.005, e
    assert abs(res.params["fit"][:, 0].sum() / (1.2 * 6.6) - 1) < 0.02  # the total mass


def test_offsets_the_data_do_not_see_are_held_at_zero(walker):
    """A floating base's offsets enter by the Bayesian information criterion: on the walker
    log whose joints carry no offset (the links' torques, 0.05 N·m of white noise: the
    simulation's own residuals are the differences' error, not noise) they lower the weighted χ²
    by about their number, far below ``k ln n``, and are held at 0 (None in the report, a
    note saying why); with ``JOINT_TRUTH``'s offsets (``test_a_floating_base_fits_...``)
    they are kept and fitted."""
    import dataclasses

    _, _, log, model = walker
    noisy = log.tau + 0.05 * np.random.default_rng(5).standard_normal(log.tau.shape)
    with x64():
        res = ident.identify_robot(model, dataclasses.replace(log, tau=noisy,
                                                              contact_wrenches=None))  # fmt: skip
    report = res.report.to_dict()
    assert all(j["fit"]["offset"] is None for j in report["joint_parameters"])
    assert all(j["fit"]["viscous"] is not None for j in report["joint_parameters"])
    assert any(n.startswith("joint offsets held at 0") for n in report["notes"])
    assert np.all(np.isnan(res.joint_parameters["fit"][:, 3]))
    assert not any("offset" in w for w in report["warnings"])


# ------------------------------------------------------------------ option and log checks
def _ident(model, log, **kw):
    with x64():
        return ident.identify_robot(model, log, joint_model=(), **kw)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"contact_method": "forces"}, r"contact_method: expected one of \('auto', 'wrenches', "),
        ({"contact_type": "flat"}, r"contact_type: expected one of \('point', 'surface'\)"),
        ({"contact_speed": 0.0}, r"contact_speed: expected a speed > 0 in m/s, got 0.0"),
    ],
)
def test_contact_options_are_checked_before_any_stage(walker, kw, match):
    _, _, log, model = walker
    with pytest.raises(ident.IdentifyError, match=match):
        _ident(model, log, **kw)


def test_a_floating_model_and_a_fixed_log_or_the_reverse_are_refused(walker):
    _, _, log, model = walker
    fixed_log = ident.RobotLog(t=log.t, q=log.q, tau=log.tau, joint_names=JOINTS)
    with raises_argument(IdentifyError, "log"):
        _ident(model, fixed_log)
    with x64():
        fixed = mb.Model.from_urdf(walker[0], dtype="float64")
    with raises_argument(IdentifyError, "model"):
        _ident(fixed, log)
    tiago = ROOT / "tests/fixtures/tiago/tiago_no_hand.urdf"
    with x64():
        arm = mb.Model.from_urdf(tiago, dtype="float64", locked_joints={"head_1_joint": 0.0})
    with raises_argument(IdentifyError, "contact_method"):
        ident.identify_robot(arm, ident.load_log(tiago.parent / "tiago_log.npz"),
                             contact_method="projection")  # fmt: skip


def test_contact_frames_the_model_lacks_are_named(walker):
    _, _, log, model = walker
    import dataclasses

    bad = dataclasses.replace(log, contact_frames=("foot_l", "fot_r", "foot_b"))
    with raises_argument(IdentifyError, "log", match=r"\(closest: 'foot_r'"):  # the suggestion
        _ident(model, bad)
    none = dataclasses.replace(log, contact_frames=None, contact_wrenches=None, contact=None)
    with raises_argument(IdentifyError, "log"):
        _ident(model, none)
    nowr = dataclasses.replace(log, contact_wrenches=None)
    with raises_argument(IdentifyError, "contact_method"):
        _ident(model, nowr, contact_method="wrenches")


# ------------------------------------------------------------------ the command
def test_the_command_refuses_floating_base_with_a_log_without_base_pose(tmp_path, capsys):
    fix = ROOT / "tests/fixtures/tiago"
    rc = cli.main([str(fix / "tiago_no_hand.urdf"), str(fix / "tiago_log.npz"),
                   "--floating-base"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "tiago_log.npz: --floating-base, but the log has no base pose" in err
    assert "base_position (N, 3) and base_quaternion (N, 4, w x y z)" in err
    rc = cli.main([str(fix / "tiago_no_hand.urdf"), str(fix / "tiago_log.npz"),
                   "--contact-type", "surface"])  # fmt: skip
    assert rc == 2
    assert "--contact-type: applies to a floating-base robot" in capsys.readouterr().err


def test_the_command_names_contact_frames_the_model_lacks(walker, tmp_path, capsys):
    urdf, _, log, _ = walker
    import dataclasses

    path = tmp_path / "typo.npz"
    dataclasses.replace(log, contact_frames=("foot_left", "foot_r", "foot_b")).save(path)
    rc = cli.main([str(urdf), str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"{path}: contact_frames: 'foot_left' is no frame of model 'walker'" in err
    assert "'foot_l'" in err


@pytest.mark.slow
def test_the_command_identifies_the_walker_with_and_without_wrenches(walker, tmp_path, capsys):
    """Both methods: the stage lines, the report against the guide, the fitted URDF back in
    Pinocchio closer to the truth than the URDF on the logged motion."""
    urdf, path, log, model = walker
    for method, lines in (
        ("wrenches", "floating base: measured contact wrenches, all 12 equations per sample"),
        ("projection", "floating base: projection onto the contacts' null space, 3 of 12 "),
    ):
        out, rep = tmp_path / f"fit_{method}.urdf", tmp_path / f"r_{method}.json"
        rc = cli.main([str(urdf), str(path), "--out", str(out), "--report", str(rep),
                       "--joint-model", "none", "--contact-method", method])  # fmt: skip
        stdout = capsys.readouterr().out
        assert rc == 0, stdout
        assert lines in stdout
        assert "3 point contact(s) foot_l, foot_r, foot_b, schedule logged" in stdout
        assert "base rows" in stdout and "joint rows" in stdout
        report = json.loads(rep.read_text())
        check_report_against_the_guide(report)
        fb = report["floating_base"]
        assert fb["method"] == method and fb["contact_frames"] == list(FEET)
        assert fb["rows_per_sample"]["min"] == (12 if method == "wrenches" else 3)
        assert report["total_mass"]["data_share"] > 0.9  # the base rows carry it
        for part in ("train", "holdout"):
            e = report["errors"]["fit"][part]
            assert e["base"] < 0.02 and e["joint"] < 0.02, (method, part, e)
        assert [lk["joint"] for lk in report["links"]][:2] == ["root_joint", "hip_b"]
        fitted = pin.buildModelFromUrdf(str(out), pin.JointModelFreeFlyer())
        mass = sum(fitted.inertias[i].mass for i in range(1, fitted.njoints))
        assert abs(mass / (1.2 * 6.6) - 1) < 0.03  # the total mass, 6.6 kg in the URDF


@pytest.mark.slow
def test_the_command_writes_a_floating_base_robots_joint_model(walker, tmp_path, capsys):
    """``spatialjax identify`` with no option beyond the paths on a floating-base log with a
    joint model: the fitted URDF, loaded by Pinocchio with a free flyer, carries the fitted
    damping and friction (``<dynamics>``) within 2 % of the truth, the armature is in the
    report (URDF has no attribute for it), and the printed joint table has every joint."""
    urdf, _, log, _ = walker
    path, out, rep = tmp_path / "log.npz", tmp_path / "fitted.urdf", tmp_path / "r.json"
    with_joint_model(log).save(path)
    rc = cli.main([str(urdf), str(path), "--out", str(out), "--report", str(rep)])
    stdout = capsys.readouterr().out
    assert rc == 0, stdout
    assert "24 joint-model columns (armature, viscous, coulomb, offset per joint)" in stdout
    assert "samples at rest left out of their joint's row" in stdout
    assert "damping, friction on 6 joints" in stdout
    fitted = pin.buildModelFromUrdf(str(out), pin.JointModelFreeFlyer())
    order = [fitted.names.tolist().index(j) - 2 for j in JOINTS]  # Pinocchio's joint order
    np.testing.assert_allclose(np.asarray(fitted.damping)[6:][order], JOINT_TRUTH[:, 1],
                               rtol=0.02)  # fmt: skip
    np.testing.assert_allclose(np.asarray(fitted.friction)[6:][order], JOINT_TRUTH[:, 2],
                               rtol=0.02)  # fmt: skip
    report = json.loads(rep.read_text())
    check_report_against_the_guide(report)
    arm = [j["fit"]["armature"] for j in report["joint_parameters"]]
    np.testing.assert_allclose(arm, JOINT_TRUTH[:, 0], rtol=0.02)
    assert all(not j["armature"]["written"] for j in report["output"]["joints"])


# ------------------------------------------------------------------ acceptance (issues 35, 41)
#: Issue 41: the fitted URDF at least as accurate as noise-weighted least squares on a separate
#: trajectory: joint rows within 1.5 %, base rows within 0.5 %; issue 35's mass limits.
ACCEPT = {"base": 0.005, "joint": 0.015, "mass": 0.03}
#: The options the acceptance command runs with: none beyond the paths (the filter is
#: chosen from the log, the joint model is the default's).
ACCEPTANCE_OPTIONS: tuple[str, ...] = ()


@pytest.mark.slow
@pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("wrenches", [True, False], ids=["wrenches", "projection"])
def test_quadruped_acceptance_by_the_command(tmp_path, wrenches):
    """Solo12 to issue 41's recipe (``benchmarks/bench_floating_identify.py``: 25 s at 1 kHz,
    base sway on four planted feet, each leg swung in turn; 0.02 N·m torque noise, 0.2 N
    foot-force noise, 0.1 mm base position and 2e-5 quaternion noise, 20-bit encoders;
    every link 20–30 % off the URDF, centres of mass moved and inertias turned):
    ``spatialjax identify MODEL LOG --out --report`` (plus ``ACCEPTANCE_OPTIONS``), with the
    wrenches and with only the planted feet (the null-space route); Pinocchio on the fitted
    URDF with a free flyer predicts a separate 8 s trajectory's generalised forces within
    0.5 % (base rows) and 1.5 % (joint rows), the total mass within 3 %, every link whose
    reported mass data share is at least 0.5 within 0.8–1.25× its true mass (the data alone
    never split a revolute link's mass from its parent's: the shares are 0 and the total
    mass's 1)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_floating_identify as study
    import jax

    jax.config.update("jax_enable_x64", True)
    truth = study.truth_of(0)
    cache = tmp_path / "sims"
    sim = study.simulated(0, truth, study.RECIPE["duration"], cache=cache)
    test = study.simulated(100, truth, study.RECIPE["test_duration"], cache=cache)
    log = study.measured_log(sim, 0, with_wrenches=wrenches)
    path = tmp_path / "log.npz"
    log.save(path)
    with np.load(path) as z:  # exactly the .npz form of issue 35
        assert set(z.files) == {"t", "q", "tau", "joint_names", "base_position",
                                "base_quaternion", "contact_frames", "contact"} | (
                                    {"contact_wrenches"} if wrenches else set())  # fmt: skip
    out, rep = tmp_path / "fitted.urdf", tmp_path / "r.json"
    cmd = [sys.executable, "-m", "spatialjax", "identify", study.fb.urdf_path(), str(path),
           "--out", str(out), "--report", str(rep), *ACCEPTANCE_OPTIONS]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert run.returncode == 0, run.stderr
    method = "measured contact wrenches" if wrenches else "projection onto the contacts'"
    assert method in run.stdout
    ev = study.fb.evaluate(str(out), truth, test)
    report = json.loads(rep.read_text())
    share = np.array([lk["data_share"][0] for lk in report["links"]])
    assert np.allclose(share, [lk["plausibility"]["data_share_mass"] for lk in report["links"]])
    ratio = np.array(ev["mass_ratio"])
    strong = share >= 0.5
    print(
        f"solo12 {'wrenches' if wrenches else 'projection'}: {report['filter']['reason']}; "
        f"base {ev['fit']['base']:.3%}, joint {ev['fit']['joint']:.3%}, total mass "
        f"{abs(ev['total_mass']['fit'] / ev['total_mass']['true'] - 1):.3%}"
    )
    assert ev["fit"]["base"] <= ACCEPT["base"] and ev["fit"]["joint"] <= ACCEPT["joint"], ev
    assert abs(ev["total_mass"]["fit"] / ev["total_mass"]["true"] - 1) <= ACCEPT["mass"]
    assert np.all((ratio[strong] >= 0.8) & (ratio[strong] <= 1.25)), (share, ratio)
    assert report["total_mass"]["data_share"] > 0.99
    assert not report["warnings"], report["warnings"]
    assert ev["fit"]["joint"] < 0.1 * ev["urdf"]["joint"]  # the URDF, for scale
