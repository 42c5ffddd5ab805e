"""``spatialjax identify`` on a real log (TIAGo, FIGAROH data) and the options made for real logs.

The TIAGo fixture (tests/fixtures/tiago, Apache-2.0, see its NOTICE.md) is a
100 Hz log recorded over ROS with irregular time stamps, an URDF with
inconsistent inertials, three wrist channels without torque sensing and
channels in motor-side units or the opposite sign convention. The expected
findings are read off the data themselves: the URDF's arm_1_link breaks the
triangle inequality (``spatialjax check`` says so), the wrist efforts take a
handful of 0.001 steps, and the torso's efforts are two orders of magnitude
below the gravity load the URDF's masses imply.
"""

from __future__ import annotations

import dataclasses
import json
import re

import jax
import numpy as np
import pytest
from helpers import FIXTURES

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._cli.identify import main
from spatialjax._util import x64

FIX = FIXTURES
TIAGO = FIX / "tiago"
TOY = FIX / "toy_attached.urdf"


def _run(capsys, argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow
def test_tiago_log_end_to_end_with_default_options(tmp_path, capsys):
    report = tmp_path / "r.json"
    status, out, err = _run(
        capsys,
        [TIAGO / "tiago_no_hand.urdf", TIAGO / "tiago_log.npz", "--lowpass", "5", "--report",
         report, "--no-cache"],
    )  # fmt: skip
    assert status == 0, err
    rep = json.loads(report.read_text())
    # the URDF's inconsistent arm_1_link is repaired at stage 3 and named
    assert [r["link"] for r in rep["prior_repairs"]] == ["arm_1_link"]
    assert re.search(r"\[3/11\] prior: .*1 repaired", out) and "repaired arm_1_link" in out
    # the recorded time stamps are irregular: resampled, with the jitter stated
    assert rep["sampling"]["resampled"] and 0.05 < rep["sampling"]["off_share"] < 0.2
    assert "resampled by t onto a uniform 100 Hz grid" in out
    # the wrist channels carry no signal; excluded and named
    ch = {c["joint"]: c for c in rep["channels"]}
    assert [j for j, c in ch.items() if not c["signal"]] == ["arm_5_joint", "arm_6_joint",
                                                             "arm_7_joint"]  # fmt: skip
    for j in ("arm_5_joint", "arm_6_joint", "arm_7_joint"):
        assert f"{j}: no torque signal" in out
    # scale and sign: the torso is ~100x below the URDF's gravity load, arm_3/arm_4 flipped
    assert ch["torso_lift_joint"]["scale_flagged"] and 0 < ch["torso_lift_joint"]["scale"] < 0.05
    assert ch["arm_3_joint"]["scale"] < 0 and ch["arm_4_joint"]["scale"] < 0
    assert "torso_lift_joint: measured torques are" in err and "units, gear ratio or sign" in err
    assert "arm_3_joint: measured torques are the opposite sign" in err
    # exactly the four channels the released check warned about, judged with room to spare
    flagged = re.findall(r"warning: (\w+): measured torques are", err)
    assert flagged == ["torso_lift_joint", "arm_2_joint", "arm_3_joint", "arm_4_joint"]
    verdicts = {j: c["verdict"] for j, c in ch.items() if not c["excluded"]}
    assert verdicts == {
        "torso_lift_joint": "scale",
        "arm_1_joint": "not judged",
        "arm_2_joint": "scale",
        "arm_3_joint": "sign",
        "arm_4_joint": "sign",
    }
    assert ch["torso_lift_joint"]["scale_interval"][1] < 0.1  # well below 1/3
    assert "[7/11] torques: 5 of 8 channels fitted; 4 scale/sign warning(s)" in out
    assert "arm_1_joint: the prior's prediction explains only" in out  # not judged, said so
    assert "swapped" not in out
    # every fitted body is consistent; the links whose mass moved > 2x are flagged
    assert all(d["fit"]["consistent"] for d in rep["links"])
    flagged = [d["link"] for d in rep["links"] if d["plausibility"]["flagged"]]
    assert "torso_lift_link" in flagged and "CHECK: mass moved > 2×" in out
    # the robot stands still from 68.5 s of the 80.2 s log: the held-out part (the last 16 s,
    # less the filter's edges) is mostly at rest, which is said; its errors leave those rows out
    assert "the held-out part (the last 20 % of the log) is mostly at rest" in err
    assert rep["errors"]["fit"]["holdout"]["rest_left_out"]["arm_1_joint"] > 0.7
    assert not any(w in err for w in ("worse than zero", "worse than the prior", "has norm"))


def test_strict_prior_refuses_at_stage_3_naming_the_link(tmp_path, capsys):
    status, out, err = _run(
        capsys,
        [TIAGO / "tiago_no_hand.urdf", TIAGO / "tiago_log.npz", "--strict-prior", "--no-cache"],
    )
    assert status == 2
    assert "arm_1_link" in err and "--strict-prior" in err and "cannot be the prior as given" in err
    assert "[3/11]" not in out and "filter" not in out  # refused before any filtering


@pytest.fixture(scope="module")
def toy_csv(tmp_path_factory):
    """A 2-joint arm log (j3, j4 of the URDF locked by the command), 1 kHz, and a second log."""
    d = tmp_path_factory.mktemp("toy")
    with x64():
        model = mb.Model.from_urdf(TOY, locked_joints={"j3": 0.0, "j4": 0.0}, dtype="float64")
        keys = jax.random.split(jax.random.PRNGKey(21), 6)
        true = ident.perturb_inertia(model.inertia, 0.2, keys[0])
        paths = []
        for k, dur in ((1, 8.0), (3, 4.0)):
            t, q, dq, ddq = ident.excitation_trajectory(2, duration=dur, rate=1000.0, key=keys[k])
            fr = np.array([[0.1, 0.05, 0.0], [0.05, 0.02, 0.0]])
            log = ident.simulate_log(model, t, q, dq, ddq, key=keys[k + 1], inertia=true,
                                     torque_noise=0.01, friction=fr)  # fmt: skip
            log = dataclasses.replace(log, joint_names=("j1", "j2"))
            paths.append(d / f"toy{k}.npz")
            log.save(paths[-1])
    return paths


@pytest.mark.slow  # compile time; CI's second step
def test_free_validate_exclude_and_scale_options(toy_csv, tmp_path, capsys):
    train, other = toy_csv
    report = tmp_path / "r.json"
    status, out, err = _run(
        capsys,
        [TOY, train, "--lowpass", "20", "--free", "b", "--validate", other, "--exclude-torque",
         "j1", "--torque-scale", "j2=1", "--report", report, "--no-cache"],
    )  # fmt: skip
    assert status == 0, err
    rep = json.loads(report.read_text())
    assert rep["links_identified"] == ["b"] and [d["free"] for d in rep["links"]] == [False, True]
    assert rep["validation_logs"] == [str(other)] and len(rep["validation"]) == 1
    assert [c["excluded"] for c in rep["channels"]] == [True, False]
    assert "validation log 0: fit" in out and "(not fitted)" in out
    assert rep["options"]["free"] == ["b"] and rep["options"]["exclude_torque"] == ["j1"]


def test_all_zero_torque_channel_is_left_out_not_fitted(toy_csv, tmp_path, capsys):
    log = ident.load_log(toy_csv[0])
    zero = dataclasses.replace(log, tau=log.tau * np.array([1.0, 0.0]))
    path = tmp_path / "zero.npz"
    zero.save(path)
    status, out, err = _run(capsys, [TOY, path, "--lowpass", "20", "--no-cache"])
    assert status == 0, err
    assert "j2: constant: no torque signal; left out of the fit" in out
    assert "1 of 2 channels fitted" in out


def test_massless_moving_link_is_named_at_stage_3(toy_csv, tmp_path, capsys):
    text = TOY.read_text()
    # body a is link a and the tool fixed to it: both massless
    massless = re.sub(r'(<link name="(a|tool)">\s*<inertial>.*?<mass value=")[^"]*"', r'\g<1>0"',
                      text, flags=re.S)  # fmt: skip
    assert massless != text
    urdf = tmp_path / "massless.urdf"
    urdf.write_text(massless)
    status, out, err = _run(capsys, [urdf, toy_csv[0], "--lowpass", "20", "--no-cache"])
    assert status == 2
    assert "link 'a' has mass 0 kg" in err and str(urdf) in err
    assert "filter" not in out


def test_lock_every_joint_blames_lock(toy_csv, capsys):
    status, out, err = _run(
        capsys, [TOY, toy_csv[0], "--lock", "j1=0", "--lock", "j2=0", "--no-cache"]
    )
    assert status == 2 and "error: --lock: leaves no joint of the log to identify" in err


def test_lowpass_too_low_names_lowpass(toy_csv, capsys):
    status, out, err = _run(capsys, [TOY, toy_csv[0], "--lowpass", "0.05", "--no-cache"])
    assert status == 2 and "error: --lowpass: 0.05 Hz" in err and "raise --lowpass" in err


def test_refused_run_creates_no_cache_folder(toy_csv, tmp_path, capsys):
    from spatialjax import _util

    before = _util.executable_folder()
    cache = tmp_path / "cache"
    status, _, err = _run(capsys, [TOY, toy_csv[0], "--lowpass", "0.05", "--cache-dir", cache])
    assert status == 2 and not cache.exists()
    # the kept executables' folder, read from the start of the run, is the process's again
    assert _util.executable_folder() == before
    # also when the folder cannot be made, once the filter stage has passed
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    status, _, err = _run(capsys, [TOY, toy_csv[0], "--cache-dir", blocked / "cache"])
    assert status == 2 and "--cache-dir" in err
    assert _util.executable_folder() == before


def test_irregular_log_through_the_command(toy_csv, tmp_path, capsys):
    log = ident.load_log(toy_csv[0])
    rng = np.random.default_rng(0)
    t = log.t + rng.uniform(-3e-4, 3e-4, log.n_samples) * (np.arange(log.n_samples) > 0)
    jittered = dataclasses.replace(log, t=t)
    path = tmp_path / "jitter.npz"
    jittered.save(path)
    status, out, err = _run(capsys, [TOY, path, "--lowpass", "20", "--no-cache"])
    assert status == 0, err
    assert "irregular intervals" in out
    assert re.search(r"resampled by t onto a uniform 1\d\d\d Hz grid", out)


def test_lock_beyond_the_joints_limits_is_refused(toy_csv, capsys):
    """The Panda's finger joints move within [0, 0.04] m (its URDF's <limit>)."""
    from helpers import robots_dir

    panda = robots_dir() / "panda_description/urdf/panda.urdf"
    status, out, err = _run(
        capsys, [panda, toy_csv[0], "--lock", "panda_finger_joint1=1e6", "--no-cache"]
    )
    assert status == 2
    assert "--lock panda_finger_joint1=1e+06: outside the joint's limits [0, 0.04]" in err


def test_gap_in_the_held_out_part_is_named_at_the_logs_index(toy_csv, tmp_path, capsys):
    """Regression: a gap was blamed on --holdout, at its index inside the held-out part."""
    log = ident.load_log(toy_csv[0])
    k = int(0.9 * log.n_samples)  # inside the last 20 %
    t = log.t.copy()
    t[k:] += 0.5  # half a second missing
    path = tmp_path / "gap.npz"
    dataclasses.replace(log, t=t).save(path)
    status, out, err = _run(capsys, [TOY, path, "--lowpass", "20", "--no-cache"])
    assert status == 2 and str(path) in err and "--holdout" not in err
    assert f"sample {k} (t = " in err and "column 't'" in err and "--max-gap" in err


def test_holdout_leaving_one_training_sample(toy_csv, capsys):
    status, out, err = _run(capsys, [TOY, toy_csv[0], "--holdout", "0.9999", "--no-cache"])
    assert status == 2 and "error: --holdout: 0.9999 leaves 1 training samples" in err
