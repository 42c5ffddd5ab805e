"""``spatialjax identify MODEL LOG``: end to end on a simulated Panda log, bad logs, bad options.

One Panda log is simulated (Fourier excitation, "true" bodies perturbed from
the URDF, viscous + Coulomb + offset friction, torque noise, encoder
quantisation) and identified once per module (float64); the tests read that
run's printed output, report and fitted URDF. The fitted URDF is checked
against Pinocchio (``buildModelFromUrdf`` + ``buildReducedModel`` with the same
locked joints), the errors in the report against NumPy recomputations from
the report's own parameters, and every bad input exits with status 2 without
writing anything.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import re
import shutil

import jax
import numpy as np
import pytest
from helpers import FIXTURES, ROOT, check_report_against_the_guide
from helpers import robots_dir as _robots_dir

import spatialjax.multibody as mb
from spatialjax import _cli as cli
from spatialjax import identification as ident
from spatialjax._cli._args import InputError
from spatialjax._cli.identify import main
from spatialjax._util import x64
from spatialjax.multibody import JOINT_KINDS

FRICTION_KINDS = ("viscous", "coulomb", "offset")


def _joint_fits(rep) -> dict:
    """``{joint: {kind: fitted value or None}}`` of a report's ``joint_parameters``."""
    return {d["joint"]: d["fit"] for d in rep["joint_parameters"]}


pin = pytest.importorskip("pinocchio")

ROBOTS = _robots_dir()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
FIX = FIXTURES
ARM = ("panda_joint1", "panda_joint2", "panda_joint3", "panda_joint4", "panda_joint5",
       "panda_joint6", "panda_joint7")  # fmt: skip
LOCK = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.0}
#: per joint [viscous N·m·s/rad, Coulomb N·m, offset N·m], of the size Gaz et al. (2019) report
FRICTION = np.array([[0.2, 0.3, 0.05]] * 4 + [[0.1, 0.2, -0.03]] * 3)
STAGES = ("read model", "read log", "prior", "sampling", "filter", "regressor", "torques",
          "least squares", "fit", "validate",
          "write")  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _no_compilation_cache():
    """In-process runs must not point this test process's JAX at a persistent cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPATIALJAX_NO_COMPILATION_CACHE", "1")
        yield


def _panda() -> str:
    return str(ROBOTS / "panda_description/urdf/panda.urdf")


def _simulate(duration=8.0, key=0):
    """A 1 kHz Panda log (arm joints only; the fingers are locked by the command)."""
    from spatialjax import identification as ident

    with x64():
        model = mb.Model.from_urdf(_panda(), locked_joints=LOCK, dtype="float64")
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(key), 3)
        q0 = np.array([0.0, 0.0, 0.0, -1.5, 0.0, 1.8, 0.0])  # inside the Panda's limits
        t, q, dq, ddq = ident.excitation_trajectory(
            model.nv, duration=duration, rate=1000.0, key=k1, q0=q0
        )
        true = ident.perturb_inertia(model.inertia, 0.1, k2)
        log = ident.simulate_log(
            model, t, q, dq, ddq, key=k3, inertia=true, friction=FRICTION, torque_noise=0.05,
            encoder_resolution=2 * np.pi / 2**18,
        )  # fmt: skip
    return log, np.asarray(true.params)


def _run(capsys, argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def panda_log(tmp_path_factory):
    d = tmp_path_factory.mktemp("identify")
    log, true = _simulate()
    path = d / "panda.npz"
    log.save(path)
    return path, true, log


# the end-to-end runs (a Panda identified by the command, compiling its fit) are `slow`
@pytest.fixture(scope="module")
def panda_run(panda_log):
    path, true, log = panda_log
    d = path.parent
    out, report = d / "fitted.urdf", d / "report.json"
    argv = [_panda(), path, "--lowpass", "30", "--decimate", "5", "--holdout", "0.25",
            "--out", out, "--report", report, "--no-cache"]  # fmt: skip
    for name, value in LOCK.items():
        argv += ["--lock", f"{name}={value}"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main([str(a) for a in argv])
    rep = json.loads(report.read_text()) if report.exists() else None
    return {"status": status, "out": out, "report": rep, "true": true, "stdout": buf.getvalue()}


# ---------------------------------------------------------------------------- the run
@pytest.mark.slow
def test_progress_lines_and_table(panda_run):
    assert panda_run["status"] == 0
    text = panda_run["stdout"]
    lines = [ln for ln in text.splitlines() if ln.startswith("[")]
    assert [ln.split("] ", 1)[1].split(":")[0] for ln in lines] == list(STAGES)
    assert "9 movable joints" in lines[0]
    assert "locked panda_finger_joint1=0.02, panda_finger_joint2=0: 7 moving bodies" in lines[1]
    s = panda_run["report"]["samples"]
    assert "all strictly consistent" in lines[2]
    assert "uniform at 1000 Hz" in lines[3] and "no resampling" in lines[3]
    assert "low-pass 30 Hz" in lines[4] and "(the last 2000 raw samples)" in lines[4]
    assert "parallel-filtered" in lines[5]
    assert f"fit on {s['train']} samples, {s['holdout']} held out" in lines[5]
    assert "7 of 7 channels fitted" in lines[6]
    table = text.split(lines[-1], 1)[1]
    for i in range(1, 8):
        assert f"panda_link{i}" in table and f"panda_joint{i}" in table
    assert "mass prior → fit" in table and "held-out" in table


@pytest.mark.slow
def test_toy_arm_csv_log_friction_subset_no_holdout(tmp_path, capsys):
    """A 2-joint arm (two joints locked at non-zero values), CSV log, viscous friction only."""
    from spatialjax import identification as ident

    toy = FIX / "toy_attached.urdf"
    locked = {"j3": 0.3, "j4": 0.05}
    with x64():
        model = mb.Model.from_urdf(toy, locked_joints=locked, dtype="float64")
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(5), 3)
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=4.0, rate=500.0, key=k1)
        true = ident.perturb_inertia(model.inertia, 0.1, k2)
        log = ident.simulate_log(model, t, q, dq, ddq, key=k3, inertia=true,
                                 friction=np.array([[0.1, 0.0, 0.0], [0.05, 0.0, 0.0]]),
                                 torque_noise=0.01, include_derivatives=True)  # fmt: skip
    path = tmp_path / "toy.csv"
    log.save(path)
    out, report = tmp_path / "toy_fitted.urdf", tmp_path / "toy.json"
    out.write_text("an old file, replaced because of --force")
    argv = [toy, path, "--joint-model", "viscous", "--holdout", "0", "--lock", "j3=0.3", "--lock",
            "j4=0.05", "--lowpass", "40", "--decimate", "2", "--out", out, "--report", report,
            "--force", "--no-cache"]  # fmt: skip
    status, stdout, err = _run(capsys, argv)
    assert status == 0, err
    assert "training (no hold-out)" in stdout
    rep = json.loads(report.read_text())
    assert rep["joints"] == ["j1", "j2"] and rep["locked_joints"] == locked
    assert rep["options"]["joint_model"] == ["viscous"] and "friction" not in rep["options"]
    assert rep["settings"]["joint_model"] == ["viscous"]
    for j in ("j1", "j2"):
        f = _joint_fits(rep)[j]
        assert (
            f["armature"] is None
            and f["coulomb"] is None
            and f["offset"] is None
            and f["viscous"] >= 0
        )
    for who in ("fit", "least_squares", "prior"):
        assert rep["errors"][who]["holdout"] is None
        assert rep["errors"][who]["train"]["overall"] > 0
    assert rep["identifiability"]["n_columns"] == 20 + 2
    fit = np.array([d["fit"]["params"] for d in rep["links"]])
    pm = pin.buildModelFromUrdf(str(out))
    q0 = pin.neutral(pm)
    for name, value in locked.items():
        q0[pm.idx_qs[pm.getJointId(name)]] = value
    pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], q0)
    got = np.array([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    np.testing.assert_allclose(got, fit, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_report_fields(panda_run):
    assert panda_run["status"] == 0
    rep = panda_run["report"]
    check_report_against_the_guide(rep)  # every key documented, the command's own included
    assert rep["joints"] == list(ARM)
    assert rep["locked_joints"] == LOCK
    assert rep["options"]["joint_model"] is None and "friction" not in rep["options"]  # as given
    assert rep["settings"]["joint_model"] == list(JOINT_KINDS)  # the library's default
    assert rep["options"]["decimate"] == 5 and rep["options"]["lowpass"] == 30
    s = rep["samples"]
    # 8 s at 1 kHz, the last quarter held out, each part filtered and decimated by 5 on its own
    # (prepare_log may drop a few samples at the ends of each part)
    assert s["raw"] == 8000 and s["raw_holdout"] == 2000
    assert 1000 <= s["train"] <= 1200 and 200 <= s["holdout"] <= 400
    assert s["train"] + s["holdout"] == s["after_decimation"]
    assert rep["gamma"] > 0 and set(rep["noise_std"]) == set(ARM)
    assert [d["link"] for d in rep["links"]] == [f"panda_link{i}" for i in range(1, 8)]
    for d in rep["links"]:
        f = d["fit"]
        p = np.array(f["params"])
        assert p.shape == (10,) and f["mass"] == p[0]
        np.testing.assert_allclose(f["com"], p[1:4] / p[0], rtol=1e-14)
        I_o = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
        c = p[1:4] / p[0]
        I_c = I_o - p[0] * (c @ c * np.eye(3) - np.outer(c, c))
        lam = np.linalg.eigvalsh(I_c)
        np.testing.assert_allclose(f["principal_moments"], lam, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(f["margins"]["triangle_margin"], lam[0] + lam[1] - lam[2],
                                   rtol=1e-6, atol=1e-12)  # fmt: skip
        assert f["consistent"] and f["margins"]["min_eig_pseudo_inertia"] > 0
        assert f["geodesic_to_prior"] is not None and f["geodesic_to_prior"] >= 0
        assert len(d["data_share"]) == 10
        assert all(x is not None for x in d["data_share"])  # finite (NaN is written null)
        assert all(0.0 <= x <= 1.0 for x in d["data_share"])  # fractions of prior variance
    assert "friction" not in rep and set(_joint_fits(rep)) == set(ARM)
    for j in ARM:
        assert set(_joint_fits(rep)[j]) == set(JOINT_KINDS)
    for who in ("fit", "least_squares", "prior"):
        for part in ("train", "holdout"):
            e = rep["errors"][who][part]
            assert e["overall"] > 0 and set(e["per_joint"]) == set(ARM)
    idf = rep["identifiability"]
    assert 0 < idf["rank"] <= idf["n_columns"] == 70 + 28
    # the Panda's regressor is rank-deficient (joint 1 is vertical...): the condition number is
    # that of the base columns (finite; it was inf, written null); the prior-decided listed
    assert idf["rank"] < idf["n_columns"]
    assert idf["condition_number"] is not None and 1.0 <= idf["condition_number"] < 1e8
    assert len(idf["base_columns"]) == idf["rank"] == idf["n_columns"] - idf["n_unidentifiable"]
    assert len(idf["base_parameters"]) == idf["rank"]
    decided = {tuple(x) for x in idf["prior_decided"]}
    assert ("panda_link1", "m") in decided  # the first link's mass never moves a joint torque
    for d in rep["links"]:
        for name, share in zip(("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"),
                               d["data_share"], strict=True):  # fmt: skip
            assert ((d["link"], name) in decided) == (share < 0.5)
    # one fit call: its compile share (0 if this process compiled it before) and the rest
    times = rep["times"]
    assert times["compile_s"] >= 0 and times["solve_s"] > 0
    assert times["compile_s"] + times["solve_s"] <= times["stages_s"]["fit"]
    assert rep["fit_status"]["converged"]


@pytest.mark.slow
def test_friction_is_recovered(panda_run):
    rep = panda_run["report"]
    fit = np.array([[_joint_fits(rep)[j][k] for k in FRICTION_KINDS] for j in ARM])
    # viscous and Coulomb are well excited: within 30 % + 0.05 N·m(·s) of the truth
    np.testing.assert_allclose(fit[:, :2], FRICTION[:, :2], rtol=0.3, atol=0.05)


@pytest.mark.slow
def test_fit_beats_least_squares_and_prior_on_held_out_data(panda_run):
    e = panda_run["report"]["errors"]
    fit, ls, prior = (e[k]["holdout"]["overall"] for k in ("fit", "least_squares", "prior"))
    assert fit < ls
    assert fit < 0.5 * prior


@pytest.mark.slow
def test_least_squares_links_are_impossible_fit_links_are_not(panda_run):
    """Consistency per link (NumPy pseudo-inertia eigenvalues) and the geodesic distances."""
    import scipy.linalg

    rep = panda_run["report"]
    for d in rep["links"]:
        # Lee & Park 2018: d = sqrt(½ Σ log² λ(J1⁻¹ J2)), generalised eigenvalues
        lam = scipy.linalg.eigvalsh(_pseudo_inertia(d["fit"]["params"]),
                                    _pseudo_inertia(d["prior"]["params"]))  # fmt: skip
        want = np.sqrt(0.5 * np.sum(np.log(lam) ** 2))
        np.testing.assert_allclose(d["fit"]["geodesic_to_prior"], want, rtol=1e-8)
    for who in ("fit", "least_squares"):
        flags = [d[who]["consistent"] for d in rep["links"]]
        pd = [np.linalg.eigvalsh(_pseudo_inertia(d[who]["params"]))[0] > 0 for d in rep["links"]]
        assert flags == pd, who
    # least squares makes at least one link impossible; the fit never does
    assert not all(d["least_squares"]["consistent"] for d in rep["links"])
    assert all(d["fit"]["consistent"] for d in rep["links"])


def _pseudo_inertia(p):
    """NumPy ``J = [[½ tr(I) 1 − I, h], [hᵀ, m]]`` (Wensing, Kim & Slotine 2017, eq. 7)."""
    m, h = p[0], np.asarray(p[1:4])
    I_o = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


@pytest.mark.slow
def test_errors_recomputed_from_the_report(panda_run, panda_log):
    """The report's held-out error of the fit, from its own parameters and Pinocchio's RNEA.

    The prediction ``rnea(q, q̇, q̈) + friction(q̇)`` at the full rate goes through the same
    filter as the torques (``parallel_filter``: linear, so filtering the prediction equals
    filtering the regressor columns) before it is compared.
    """
    from spatialjax import identification as ident

    rep = panda_run["report"]
    _, _, log = panda_log
    # the held-out part: the last 2000 raw samples, filtered on their own
    held = ident.RobotLog(t=log.t[6000:], q=log.q[6000:], tau=log.tau[6000:],
                          joint_names=log.joint_names)  # fmt: skip
    prep = ident.prepare_log(held, lowpass=30.0)
    q, dq, ddq = (np.asarray(x) for x in (prep.q, prep.dq, prep.ddq))
    pm = pin.buildModelFromUrdf(str(panda_run["out"]))
    q0 = pin.neutral(pm)
    for name, value in LOCK.items():
        q0[pm.idx_qs[pm.getJointId(name)]] = value
    pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in LOCK], q0)
    pd = pm.createData()
    fr = np.array([[_joint_fits(rep)[j][k] for k in FRICTION_KINDS] for j in ARM])
    arm = np.array([d["fit"]["armature"] for d in rep["joint_parameters"]])
    pred = np.array([pin.rnea(pm, pd, q[k], dq[k], ddq[k]) for k in range(q.shape[0])])
    pred += arm * ddq + fr[:, 0] * dq + fr[:, 1] * np.sign(dq) + fr[:, 2]
    p2, pred = ident.parallel_filter(prep, pred, decimate=5)
    tau = np.asarray(p2.tau)
    assert tau.shape[0] == rep["samples"]["holdout"]
    # the rows the fit uses: a joint's samples at rest (Coulomb friction) leave its error, by
    # the training part's rest speed max(3 σ̂, 0.05 rms q̇), σ̂ = 1.4826 MAD(Δ² q̇) / √6
    train = ident.RobotLog(t=log.t[:6000], q=log.q[:6000], tau=log.tau[:6000],
                           joint_names=log.joint_names)  # fmt: skip
    pt = ident.prepare_log(train, lowpass=30.0)
    dq_train = np.asarray(ident.parallel_filter(pt, np.zeros(pt.q.shape), decimate=5)[0].dq)
    d2 = np.diff(dq_train, n=2, axis=0)
    sigma = 1.4826 * np.median(np.abs(d2 - np.median(d2, axis=0)), axis=0) / np.sqrt(6.0)
    thr = np.maximum(3 * sigma, 0.05 * np.sqrt(np.mean(dq_train**2, axis=0)))
    rows = np.abs(np.asarray(p2.dq)) > thr
    left = rep["errors"]["fit"]["holdout"]["rest_left_out"]
    np.testing.assert_allclose([left[j] for j in ARM], 1 - rows.mean(axis=0), atol=1e-12)
    err, tau = np.where(rows, pred - tau, 0.0), np.where(rows, tau, 0.0)
    want = np.linalg.norm(err) / np.linalg.norm(tau)
    np.testing.assert_allclose(rep["errors"]["fit"]["holdout"]["overall"], want, rtol=1e-8)


@pytest.mark.slow
def test_held_out_samples_never_reach_the_fit(panda_run, panda_log, tmp_path):
    """Corrupting the held-out part of the log changes its errors, not one fitted number.

    (The parts are filtered apart: a zero-phase filter over the whole log would carry the
    held-out torques into the last training samples.) Same shapes: the compiled programs of
    the module's run are reused.
    """
    from spatialjax import identification as ident

    path, _, log = panda_log
    tau = log.tau.copy()
    tau[6000:] += 5.0 * np.sin(np.arange(2000) / 50.0)[:, None]
    bad = tmp_path / "bad_end.npz"
    ident.RobotLog(t=log.t, q=log.q, tau=tau, joint_names=log.joint_names).save(bad)
    report = tmp_path / "r.json"
    argv = [_panda(), bad, "--lowpass", "30", "--decimate", "5", "--holdout", "0.25",
            "--report", report, "--no-cache"]  # fmt: skip
    for name, value in LOCK.items():
        argv += ["--lock", f"{name}={value}"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([str(a) for a in argv]) == 0
    rep, ref = json.loads(report.read_text()), panda_run["report"]
    for d, e in zip(rep["links"], ref["links"], strict=True):
        assert d["fit"]["params"] == e["fit"]["params"]
        assert d["least_squares"]["params"] == e["least_squares"]["params"]
    assert rep["joint_parameters"] == ref["joint_parameters"]
    assert rep["errors"]["fit"]["train"] == ref["errors"]["fit"]["train"]
    assert (
        rep["errors"]["fit"]["holdout"]["overall"] > 2 * ref["errors"]["fit"]["holdout"]["overall"]
    )


@pytest.mark.slow
def test_written_urdf_reloads_with_the_identified_bodies(panda_run):
    rep = panda_run["report"]
    fit = np.array([d["fit"]["params"] for d in rep["links"]])
    pm = pin.buildModelFromUrdf(str(panda_run["out"]))
    q0 = pin.neutral(pm)
    for name, value in LOCK.items():
        q0[pm.idx_qs[pm.getJointId(name)]] = value
    pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in LOCK], q0)
    got = np.array([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    np.testing.assert_allclose(got, fit, rtol=0, atol=1e-12)
    with x64():
        back = mb.Model.from_urdf(panda_run["out"], locked_joints=LOCK, dtype="float64")
    np.testing.assert_allclose(np.asarray(back.inertia.params), fit, rtol=0, atol=1e-12)
    assert rep["output"]["max_reload_error"] < 1e-12
    assert [b["link"] for b in rep["output"]["bodies"]] == [f"panda_link{i}" for i in range(1, 8)]


# --------------------------------------------------------------------------- bad logs
def _write_npz(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.fixture(scope="module")
def small_log(panda_log):
    _, _, log = panda_log
    return {"t": log.t[:3000], "q": log.q[:3000], "tau": log.tau[:3000],
            "joint_names": np.array(ARM)}  # fmt: skip


def _bad_log_cases(small):
    t, q, tau, names = small["t"], small["q"], small["tau"], small["joint_names"]
    q_nan = q.copy()
    q_nan[17, 2] = np.nan
    t_back = t.copy()
    t_back[40] = t_back[39]
    return {
        "nan": (dict(t=t, q=q_nan, tau=tau, joint_names=names), "q_panda_joint3"),
        "columns": (dict(t=t, q=q, tau=tau[:, :6], joint_names=names), "tau"),
        "time": (dict(t=t_back, q=q, tau=tau, joint_names=names), "'t'"),
        "unknown_joint": (
            dict(t=t, q=q, tau=tau, joint_names=np.array(list(ARM[:6]) + ["elbow"])),
            "elbow",
        ),
        "unnamed_wrong_count": (dict(t=t, q=q[:, :6], tau=tau[:, :6]), "'q'"),
        "too_few_samples": (dict(t=t[:12], q=q[:12], tau=tau[:12], joint_names=names), "'t'"),
    }


@pytest.mark.parametrize(
    "case", ["nan", "columns", "time", "unknown_joint", "unnamed_wrong_count", "too_few_samples"]
)
def test_bad_log(case, small_log, tmp_path, capsys):
    arrays, column = _bad_log_cases(small_log)[case]
    log = _write_npz(tmp_path / f"{case}.npz", **arrays)
    out, report = tmp_path / "fitted.urdf", tmp_path / "report.json"
    argv = [_panda(), log, "--out", out, "--report", report]
    if case == "too_few_samples":  # (with the default filter: too few for a spectrum, below)
        argv += ["--holdout", "0.5", "--lowpass", "none"]
    status, stdout, err = _run(capsys, argv)
    assert status == 2
    assert str(log) in err and column in err, err
    assert not out.exists() and not report.exists()


@pytest.mark.parametrize("case", ["nan", "short_line", "unknown_column"])
def test_bad_csv_log(case, small_log, tmp_path, capsys):
    header = "t," + ",".join(f"q_{j}" for j in ARM) + "," + ",".join(f"tau_{j}" for j in ARM)
    rows = np.column_stack([small_log["t"][:50], small_log["q"][:50], small_log["tau"][:50]])
    lines = [header] + [",".join(repr(float(x)) for x in r) for r in rows]
    if case == "nan":
        fields = lines[20].split(",")
        fields[3] = "nan"
        lines[20], where = ",".join(fields), "q_panda_joint3"
    elif case == "short_line":
        lines[20], where = ",".join(lines[20].split(",")[:-1]), "line 21"
    else:
        lines[0], where = header.replace("_panda_joint7", "_gripper"), "gripper"
    p = tmp_path / "log.csv"
    p.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o.json"
    status, _, err = _run(capsys, [_panda(), p, "--report", out])
    assert status == 2 and str(p) in err and where in err, err
    assert not out.exists()


# ------------------------------------------------------------------------ bad options
@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--holdout", "1", "fraction in [0, 1)"),
        ("--holdout", "-0.1", "fraction in [0, 1)"),
        ("--holdout", "nan", "finite"),
        ("--decimate", "0", "integer >= 1"),
        ("--decimate", "2.5", "integer >= 1"),
        ("--lowpass", "0", "> 0"),
        ("--lowpass", "fast", "expected 'auto' or 'none' or a number"),
        ("--decimate", "fast", "expected 'auto' or an integer >= 1"),
        ("--gamma", "-1", "> 0"),
        ("--joint-model", "viscous,viscous", "repeated"),
        ("--joint-model", "armature,stiction", "subset of armature,viscous,coulomb,offset"),
        ("--joint-model", "armature,,viscous", "an empty kind"),
        ("--lock", "panda_joint1", "NAME=VALUE"),
        ("--lock", "panda_joint1=inf", "finite"),
    ],
)
def test_bad_option_values(option, value, message, panda_log, capsys):
    with pytest.raises(SystemExit) as e:
        main([_panda(), str(panda_log[0]), option, value])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}:" in err and message in err, err


def test_joint_model_none_and_subsets_parse():
    from spatialjax._cli.identify import _joint_model

    assert _joint_model("offset,viscous") == ("viscous", "offset")
    assert _joint_model("none") == ()
    assert _joint_model("coulomb,armature") == ("armature", "coulomb")


def test_joint_kinds_default_and_no_friction_flag(capsys):
    """``--joint-model`` is the one flag (default all four kinds); ``--friction`` is gone."""
    from spatialjax._cli.identify import add_arguments, joint_kinds

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert joint_kinds(parser.parse_args(["m.urdf", "l.npz"])) == JOINT_KINDS
    assert joint_kinds(parser.parse_args(["m.urdf", "l.npz", "--joint-model", "none"])) == ()
    with pytest.raises(SystemExit):
        parser.parse_args(["m.urdf", "l.npz", "--friction", "coulomb"])
    assert "unrecognized arguments: --friction" in capsys.readouterr().err


@pytest.mark.parametrize("which", ["--out", "--report"])
def test_no_overwrite_without_force_checked_before_any_work(which, tmp_path, capsys):
    existing = tmp_path / "exists.txt"
    existing.write_text("keep")
    bad_log = tmp_path / "not_a_log.npz"
    bad_log.write_text("garbage")  # would fail at "read log": the option check comes first
    status, out, err = _run(capsys, [_panda(), bad_log, which, existing])
    assert status == 2 and f"{which} {existing}: the file exists; pass --force" in err
    assert existing.read_text() == "keep" and out == ""


def test_force_replaces_and_outputs_never_replace_inputs(panda_log, tmp_path, capsys):
    path = panda_log[0]
    model = tmp_path / "panda.urdf"
    shutil.copy(_panda(), model)
    before = model.read_bytes()
    status, _, err = _run(capsys, [model, path, "--out", model, "--force"])
    assert status == 2 and "that is the MODEL file" in err
    status, _, err = _run(capsys, [model, path, "--report", path, "--force"])
    assert status == 2 and "that is the LOG file" in err
    status, _, err = _run(capsys, [model, path, "--out", tmp_path / "x", "--report",
                                   tmp_path / "x"])  # fmt: skip
    assert status == 2 and "name the same file" in err
    assert model.read_bytes() == before


def test_unknown_lock_and_out_in_another_format(panda_log, tmp_path, capsys):
    """``--out`` writes the model's own format: SDFormat is refused, and a name that says
    another format than the model's, before anything is read."""
    path = panda_log[0]
    status, _, err = _run(capsys, [_panda(), path, "--lock", "wrist=0.1"])
    assert status == 2 and "--lock" in err and "wrist" in err
    status, _, err = _run(capsys, [FIX / "walker.xml", path, "--out", tmp_path / "o.urdf"])
    assert status == 2 and "o.urdf names URDF, but the model is MJCF" in err
    assert "name it FITTED.xml" in err
    status, out, err = _run(capsys, [_panda(), path, "--out", tmp_path / "fitted.xml"])
    assert status == 2 and "fitted.xml names MJCF, but the model is URDF" in err and out == ""
    assert "convert the URDF first" in err
    status, _, err = _run(capsys, [FIX / "branch.sdf", path, "--out", tmp_path / "o.sdf"])
    assert status == 2 and "only URDF and MJCF models can be written back" in err
    assert not any(tmp_path.iterdir())


def test_option_values_that_do_not_suit_the_log(panda_log, tmp_path, capsys):
    """Checked once the log's rate is known; the message names the option; nothing written."""
    path, out = panda_log[0], tmp_path / "r.json"
    status, _, err = _run(capsys, [_panda(), path, "--lowpass", "none", "--decimate", "5",
                                   "--report", out])  # fmt: skip
    # the library's message, every argument it names shown as its flag
    assert status == 2 and "error: --decimate: 5 without a low-pass" in err, err
    assert "give --lowpass (below 100 Hz" in err and "or --decimate 1" in err, err
    status, _, err = _run(capsys, [_panda(), path, "--lowpass", "200", "--decimate", "5",
                                   "--report", out])  # fmt: skip
    assert status == 2 and "error: --decimate: 5 puts the Nyquist" in err, err
    assert "the --lowpass cut-off 200 Hz" in err, err
    assert not out.exists()


def test_positions_in_degrees_are_refused_naming_the_joint(panda_log, tmp_path, capsys):
    """The log × 180/π: refused at the sampling stage, naming joint, range, limits, units."""
    _, _, log = panda_log
    deg = tmp_path / "degrees.npz"
    dataclasses.replace(log, q=np.degrees(log.q)).save(deg)
    out = tmp_path / "r.json"
    status, stdout, err = _run(capsys, [_panda(), deg, "--report", out])
    assert status == 2 and str(deg) in err, err
    assert "joint 'panda_joint1': q spans" in err and "outside the model's limits" in err
    assert "degrees? q × π/180 spans" in err and "set --ignore-limits to go on" in err
    assert "[4/11] sampling" not in stdout and not out.exists()


def _synopsis(command: str) -> set[str]:
    text = (ROOT / "docs" / "identification.md").read_text()
    start = text.index(f"```\nspatialjax {command} ")
    block = text[start + 3 : text.index("```", start + 3)]
    return set(re.findall(r"--[a-z][a-z-]*", block))


@pytest.mark.parametrize("command", ["identify", "excite"])
def test_the_guide_lists_every_option(command):
    """The synopsis in docs/identification.md against the command's parser."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {s for a in sub.choices[command]._actions for s in a.option_strings
               if s.startswith("--") and s != "--help"}  # fmt: skip
    assert _synopsis(command) == options


def test_floating_base_model_is_refused(panda_log, capsys):
    status, _, err = _run(capsys, [FIX / "walker.xml", panda_log[0]])
    assert status == 2 and "walker.xml" in err and "floating-base" in err


def test_missing_inputs(tmp_path, capsys):
    status, _, err = _run(capsys, [tmp_path / "nope.urdf", tmp_path / "log.npz"])
    assert status == 2 and "MODEL" in err and "no such file" in err


def test_registered_like_check():
    assert "identify" in cli.SUBCOMMANDS
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    p = sub.choices["identify"]
    args = p.parse_args(["m.urdf", "l.npz", "--lock", "a=1", "--lock", "b=-2",
                         "--torque-scale", "j1=-2", "--weighting", "bandwidth"])  # fmt: skip
    assert args.lock == [("a", 1.0), ("b", -2.0)]
    # the library's options: each flag's dest is an IdentifyOptions field
    from spatialjax._cli.identify import identify_options

    opts = identify_options(args)
    assert opts.torque_scale == {"j1": -2.0} and opts.sample_weighting == "bandwidth"
    assert opts.holdout == 0.2 and opts.lowpass == "auto" and opts.joint_model is None
    assert args._flags["sample_weighting"] == "--weighting"
    assert args._flags["repair_prior_bodies"] == "--strict-prior"
    assert args.joint_model is None and not hasattr(args, "friction")  # the default: all
    assert args.holdout == 0.2 and args.decimate == "auto"


def test_library_errors_are_named_by_the_parsers_flags():
    """The library's ``IdentifyError.argument`` is an option's ``dest``: the command names it by
    the flag the parser has for it (``--weighting`` for ``sample_weighting``), the log by its
    file, and never edits the library's text."""
    from spatialjax._cli._args import UsageError
    from spatialjax._cli.identify import library_error

    parser = argparse.ArgumentParser()
    from spatialjax._cli.identify import add_arguments

    add_arguments(parser)
    args = parser.parse_args(["m.urdf", "l.npz", "--validate", "v0.npz", "v1.npz"])
    e = library_error(ident.IdentifyError("sample_weighting", "see `max_gap`"), args)
    assert isinstance(e, UsageError) and str(e) == "--weighting: see --max-gap (log l.npz)"
    e = library_error(ident.IdentifyError("validate[1]", "too short"), args)
    assert isinstance(e, InputError) and str(e) == "--validate v1.npz: too short"
    e = library_error(ident.IdentifyError("log", "set `ignore_limits` to go on"), args)
    assert isinstance(e, InputError) and str(e) == "l.npz: set --ignore-limits to go on"
