"""Coupled transmissions: the joint model per motor through ``T`` (issue 40, item 2).

References are MuJoCo's: its ``mj_inverse`` on fixed tendons with ``armature``, ``damping``
and ``frictionloss`` (the same semantics as ``τ_J = Tᵀ(I_a ∘ T q̈ + b ∘ T q̇ + F_c ∘ sign(T q̇)
+ o)``), and a MuJoCo simulation of an arm with a coupled wrist.
"""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from helpers import raises_argument

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._util import x64
from spatialjax.identification import IdentifyError
from spatialjax.multibody import TransmissionError

mujoco = pytest.importorskip("mujoco")

# An arm: shoulder yaw (z), shoulder pitch (y), elbow (y), and a wrist whose second motor
# turns both wrist joints (the tendon "wrist": L = w1 + w2); w1 also has its own motor.
ARM = """<mujoco model="coupled_wrist">
  <compiler angle="radian"/>
  <option timestep="0.001" gravity="0 0 -9.81" integrator="RK4"/>
  <worldbody>
    <body name="base_link" pos="0 0 0.1">
      <joint name="yaw" axis="0 0 1" range="-3.2 3.2" {yaw}/>
      <inertial pos="0 0 0.05" mass="{m1}" diaginertia="0.02 0.02 0.01"/>
      <body name="upper" pos="0 0 0.1">
        <joint name="pitch" axis="0 1 0" range="-3.2 3.2" {pitch}/>
        <inertial pos="0.15 0 0" mass="{m2}" diaginertia="0.004 0.03 0.03"/>
        <body name="fore" pos="0.3 0 0">
          <joint name="elbow" axis="0 1 0" range="-3.2 3.2" {elbow}/>
          <inertial pos="0.12 0.01 0" mass="{m3}" diaginertia="0.002 0.015 0.015"/>
          <body name="wrist1" pos="0.25 0 0">
            <joint name="w1" axis="0 1 0" range="-3.2 3.2" {w1}/>
            <inertial pos="0.04 0 0.01" mass="{m4}" diaginertia="0.002 0.003 0.002"/>
            <body name="hand" pos="0.08 0 0">
              <joint name="w2" axis="1 0 0" range="-3.2 3.2"/>
              <inertial pos="0.05 0.03 0.02" mass="{m5}" diaginertia="0.002 0.002 0.003"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="wrist" {tendon}>
      <joint joint="w1" coef="1"/>
      <joint joint="w2" coef="1"/>
    </fixed>
  </tendon>
  <actuator>
    <motor joint="yaw"/><motor joint="pitch"/><motor joint="elbow"/><motor joint="w1"/>
    <motor joint="w2"/>
  </actuator>
</mujoco>
"""
MASSES = {"m1": 2.0, "m2": 1.5, "m3": 1.0, "m4": 0.5, "m5": 0.4}
#: the truth: per joint's own motor and for the tendon: armature, damping, frictionloss
TRUTH = {
    "yaw": (0.15, 1.2, 1.5),
    "pitch": (0.2, 2.0, 2.0),
    "elbow": (0.1, 1.0, 1.0),
    "w1": (0.03, 0.3, 0.4),
    "wrist": (0.05, 0.5, 0.6),
}
#: bench_joint_params.py's acceptance (identified / true)
ACCEPT = {"armature": (0.75, 1.33), "viscous": (0.8, 1.25), "coulomb": (0.8, 1.25)}


def _attrs(values) -> str:
    a, b, f = values
    return f'armature="{a}" damping="{b}" frictionloss="{f}"'


def arm_xml(truth: bool, masses=MASSES) -> str:
    """The arm with the true joint parameters, or the prior file (nominal values: half the
    truth, rounded; they say which joints have a motor of their own)."""
    kw = {k: _attrs(v if truth else tuple(round(x / 2, 2) for x in v)) for k, v in TRUTH.items()}
    return ARM.format(yaw=kw["yaw"], pitch=kw["pitch"], elbow=kw["elbow"], w1=kw["w1"],
                      tendon=kw["wrist"], **masses)  # fmt: skip


# ------------------------------------------------------------------------- the regressor
def test_regressor_through_T_is_mujoco_inverse_dynamics(tmp_path):
    """``Tᵀ(I_a ∘ T q̈ + b ∘ T q̇ + F_c ∘ sign(T q̇))`` plus the rigid body is MuJoCo's
    ``mj_inverse`` of an arm with a fixed tendon (sliding: every velocity non-zero)."""
    path = tmp_path / "arm.xml"
    path.write_text(arm_xml(truth=True))
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    with x64():
        model = mb.Model.from_mjcf(path, dtype="float64")
        tr = mb.Transmission.from_mjcf(path, model)
        # the tendon, and w1's own motor (the file gives it values); the others are completed
        assert tr.motors == ("wrist", "w1") and tr.matrix[0] == (0.0, 0.0, 0.0, 1.0, 1.0)
        jm = mb.JointModel(("armature", "viscous", "coulomb", "offset"), transmission=tr)
        assert jm.motors(model) == ("wrist", "w1", "yaw", "pitch", "elbow")
        phi = jm.file_values(model)
        table = jm.as_table(model, phi)
        np.testing.assert_array_equal(table[0, :3], TRUTH["wrist"])
        np.testing.assert_array_equal(table[2, :3], TRUTH["yaw"])
        rng = np.random.default_rng(1)
        for _ in range(3):
            q, v, a = rng.uniform(-1, 1, (3, 5))
            v = np.where(np.abs(v) < 0.1, 0.3, v)
            v[4] = -v[3] + 0.5  # the tendon slides too
            d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
            mujoco.mj_inverse(m, d)
            bare = np.asarray(mb.rnea(model, q, v, a)) - np.asarray(model.armature) * a
            got = bare + np.asarray(jm.torque(model, v, a, phi))
            np.testing.assert_allclose(got, d.qfrc_inverse, rtol=1e-9, atol=1e-9)
        # the same columns by finite differences of T: column (wrist, viscous) is Tᵀ (T v)
        Y = np.asarray(jm.regressor(model, v, a))
        T = jm.matrix(model)
        np.testing.assert_allclose(Y[:, 1], T[0] * (T[0] @ v), rtol=1e-14)
        np.testing.assert_allclose(Y[:, 3], T[0], rtol=0)  # the offset column
        # without a transmission: the per-joint model, its columns unchanged
        assert mb.JointModel().names(model)[0] == ("yaw", "armature")


def test_complete_and_joint_parameters_with_ratios():
    tr = mb.Transmission(("m5", "m6"), ("j5", "j6"), [[50.0, 0.0], [30.0, 30.0]])
    full = tr.complete(("j4", "j5", "j6"))
    assert full.motors == ("m5", "m6", "j4") and full.joints == ("j4", "j5", "j6")
    np.testing.assert_array_equal(full.array(), [[0, 50, 0], [0, 30, 30], [1, 0, 0]])
    with raises_argument(TransmissionError, "transmission") as e:
        tr.complete(("j4", "j5"))
    assert e.value.column == "j6"
    with raises_argument(TransmissionError, "transmission"):
        mb.Transmission(("j4",), ("j5",), [[1.0]]).complete(("j4", "j5"))


# ------------------------------------------------------------------------------ the CSV
@pytest.mark.parametrize(
    ("text", "row", "column", "match"),
    [
        ("joint,j1\nm,1\n", 1, None, "header 'motor"),
        ("motor,j1,j1\nm,1,0\n", 1, "j1", "joint repeated"),
        ("motor,j1,j2\nm,1,0\nm,0,1\n", 3, "motor", "motor 'm' repeated"),
        ("motor,j1,j2\nm,0,\n", 2, None, "drives no joint"),
        ("motor,j1,j2\nm,1,nan\n", 2, "j2", "finite number"),
        ("motor,j1,j2\nm,1,x\n", 2, "j2", "finite number"),
        ("motor,j1\n", 1, None, "no motor row"),
    ],
)
def test_csv_errors_name_the_file_row_and_column(tmp_path, text, row, column, match):
    p = tmp_path / "T.csv"
    p.write_text(text)
    with pytest.raises(mb.TransmissionError, match=match) as e:
        mb.Transmission.from_csv(p)
    assert e.value.argument == str(p) and e.value.row == row and e.value.column == column
    assert str(p) in str(e.value)


def test_csv_reads_rows_and_missing_cells(tmp_path):
    p = tmp_path / "T.csv"
    p.write_text("motor,w1,w2\nwrist,1,1\nm_w1,2,\n")
    t = mb.Transmission.from_csv(p)
    assert t.motors == ("wrist", "m_w1") and t.matrix == ((1.0, 1.0), (2.0, 0.0))


def test_identify_robot_refuses_a_transmission_the_model_lacks(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(arm_xml(truth=False))
    with x64():
        model = mb.Model.from_mjcf(path, dtype="float64")
        t = np.linspace(0, 1, 200)
        log = ident.RobotLog(t=t, q=np.zeros((200, 5)), tau=np.zeros((200, 5)))
        bad = mb.Transmission(("m",), ("w9",), [[1.0]])
        with raises_argument(IdentifyError, "joint_model") as e:
            ident.identify_robot(model, log, joint_model=mb.JointModel(transmission=bad))
    assert e.value.argument == "joint_model"


# ------------------------------------------------------------- MuJoCo, end to end
def _simulate(true, prior, duration: float, key: int):
    """MuJoCo tracks an excitation (PD + the prior's feed-forward): ``(t, q, tau)`` at 1 kHz,
    ``tau`` the actuator torques (a joint-torque sensor), and MuJoCo's exact
    ``(q, v, qacc)``."""
    t, qd, dqd, ddqd = (np.asarray(x) for x in ident.excitation_trajectory(
        5, duration=duration, key=jax.random.key(key), rate=1000.0, dtype="float64",
        q_limits=np.stack([-2.5 * np.ones(5), 2.5 * np.ones(5)], 1),
        dq_limits=np.full(5, 3.0), ddq_limits=np.full(5, 20.0), amplitude=1.0,
    ))  # fmt: skip
    d, dn = mujoco.MjData(true), mujoco.MjData(prior)
    w = 2 * np.pi * 5.0
    inertia = np.array([0.5, 0.4, 0.15, 0.05, 0.05])
    kp, kd = inertia * w * w, 2 * inertia * w
    d.qpos[:], d.qvel[:] = qd[0], dqd[0]
    out = np.zeros((4, len(t), true.nv))
    for k in range(len(t)):
        dn.qpos[:], dn.qvel[:], dn.qacc[:] = qd[k], dqd[k], ddqd[k]
        mujoco.mj_inverse(prior, dn)
        d.ctrl[:] = dn.qfrc_inverse + kp * (qd[k] - d.qpos) + kd * (dqd[k] - d.qvel)
        mujoco.mj_forward(true, d)
        out[:, k] = d.qpos, d.qvel, d.qacc, d.qfrc_actuator
        mujoco.mj_step(true, d)
    return t, out


@pytest.fixture(scope="module")
def coupled(tmp_path_factory):
    """The coupled-wrist arm simulated by MuJoCo and identified from its log."""
    d = tmp_path_factory.mktemp("coupled")
    truth_path, prior_path = d / "truth.xml", d / "prior.xml"
    truth_path.write_text(arm_xml(truth=True))
    scaled = {k: v * s for (k, v), s in zip(MASSES.items(), (1.2, 0.85, 1.15, 0.8, 1.2),
                                            strict=True)}  # fmt: skip
    prior_path.write_text(arm_xml(truth=False, masses=scaled))
    true = mujoco.MjModel.from_xml_path(str(truth_path))
    prior = mujoco.MjModel.from_xml_path(str(prior_path))
    t, (q, _, _, tau) = _simulate(true, prior, 30.0, key=3)
    rng = np.random.default_rng(0)
    res_q = 2 * np.pi / 2**20
    log = ident.RobotLog(t=t, q=np.round(q / res_q) * res_q,
                         tau=tau + 0.05 * rng.standard_normal(tau.shape),
                         joint_names=("yaw", "pitch", "elbow", "w1", "w2"))  # fmt: skip
    with x64():
        model = mb.Model.from_mjcf(prior_path, dtype="float64")
        tr = mb.Transmission.from_mjcf(prior_path, model)
        jm = mb.JointModel(("armature", "viscous", "coulomb"), transmission=tr)
        res = ident.identify_robot(model, log, joint_model=jm, lowpass=20.0, decimate=10)
    _, (q2, v2, a2, tau2) = _simulate(true, prior, 8.0, key=4)
    return dict(
        dir=d,
        prior=prior_path,
        model=model,
        res=res,
        jm=jm,
        fresh=(q2, v2, a2, tau2),
        log=(log.q, log.tau),
    )


@pytest.mark.slow
def test_per_motor_values_are_recovered(coupled):
    """The tendon's and every own motor's armature, damping, friction loss within the
    joint-parameter study's acceptance (armature: the large joints' and the tendon's)."""
    res, jm, model = coupled["res"], coupled["jm"], coupled["model"]
    motors = jm.motors(model)
    fit = res.joint_parameters["fit"]
    assert fit.shape == (5, 4) and motors == ("wrist", "w1", "yaw", "pitch", "elbow")
    ratios = {}
    for i, m in enumerate(motors):
        for c, kind in enumerate(("armature", "viscous", "coulomb")):
            ratios[(m, kind)] = fit[i, c] / TRUTH[m][c]
    for (m, kind), r in ratios.items():
        if kind == "armature" and m not in ("wrist", "pitch", "elbow"):
            continue  # the yaw's shares a base parameter with the links; w1's is tiny
        lo, hi = ACCEPT[kind]
        assert lo <= r <= hi, (m, kind, r, ratios)
    # the report: per motor, with its joints
    entries = {e["joint"]: e for e in res.report.to_dict()["joint_parameters"]}
    assert entries["wrist"]["transmission"] == {"w1": 1.0, "w2": 1.0}
    assert entries["yaw"]["transmission"] == {"yaw": 1.0}
    assert not [w for w in res.warnings if "wrist" in w]


@pytest.mark.slow
def test_written_tendon_reloads_and_mujoco_reproduces_the_fit(coupled):
    """The fit written on the tendon and the joints, every other byte kept; MuJoCo loads it,
    and its ``mj_inverse`` is the fit's own prediction (spatialjax's regressor) on a fresh
    run's states, and predicts that run's torques."""
    res, model, jm = coupled["res"], coupled["model"], coupled["jm"]
    out = coupled["dir"] / "fitted.xml"
    rep = res.write(out, source=coupled["prior"])
    (tendon,) = rep["tendons"]
    assert tendon["tendon"] == "wrist" and tendon["damping"]["written"]
    src, new = coupled["prior"].read_text(), out.read_text()
    assert src.count("\n") == new.count("\n")  # edits within lines: the rest kept
    m = mujoco.MjModel.from_xml_path(str(out))
    fit = res.joint_parameters["fit"]
    np.testing.assert_allclose(m.tendon_armature[0], fit[0, 0], rtol=1e-6)
    np.testing.assert_allclose(m.tendon_damping[0], fit[0, 1], rtol=1e-6)
    np.testing.assert_allclose(m.tendon_frictionloss[0], fit[0, 2], rtol=1e-6)
    jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "w1")
    np.testing.assert_allclose(m.dof_damping[m.jnt_dofadr[jid]], fit[1, 1], rtol=1e-6)
    q, v, a, tau = (x[::50] for x in coupled["fresh"])
    d = mujoco.MjData(m)
    pred_mj = np.zeros_like(tau)
    for k in range(len(q)):
        d.qpos[:], d.qvel[:], d.qacc[:] = q[k], v[k], a[k]
        mujoco.mj_inverse(m, d)
        pred_mj[k] = d.qfrc_inverse
    with x64():
        written = mb.Model.from_mjcf(out, dtype="float64")
        rb = np.asarray(mb.rnea(written, q, v, a)) - np.asarray(written.armature) * a
        coeff = fit[:, :3].reshape(-1)
        ours = rb + np.asarray(jm.torque(model, v, a, coeff))
    sliding = np.all(np.abs(v @ jm.matrix(model).T) > 0.05, axis=1)  # MuJoCo's soft friction
    assert sliding.mean() > 0.5
    np.testing.assert_allclose(pred_mj[sliding], ours[sliding], rtol=1e-6, atol=1e-6)
    err = np.linalg.norm(pred_mj - tau) / np.linalg.norm(tau)
    assert err < 0.05, err
    json.dumps(rep)  # the writer's report is JSON-able


# ------------------------------------------------------------------------------ the CLI
def _cli(argv, capsys):
    from spatialjax._cli.identify import main

    status = main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_refuses_a_csv_with_an_unknown_joint(tmp_path, capsys):
    """The file, row and column named; exit status 2, nothing written."""
    path = tmp_path / "arm.xml"
    path.write_text(arm_xml(truth=False))
    t = np.linspace(0.0, 2.0, 2001)
    q = 0.3 * np.sin(np.outer(t, np.arange(1, 6)))
    names = ("yaw", "pitch", "elbow", "w1", "w2")
    ident.RobotLog(t=t, q=q, tau=np.ones_like(q), joint_names=names).save(tmp_path / "l.npz")
    csv = tmp_path / "T.csv"
    csv.write_text("motor,w1,w9\nwrist,1,1\n")
    report = tmp_path / "r.json"
    argv = [path, tmp_path / "l.npz", "--transmission", csv, "--report", report, "--no-cache"]
    status, _, err = _cli(argv, capsys)
    assert status == 2 and f"{csv}, row 1, column 'w9': no joint 'w9' in the model" in err, err
    assert not report.exists()
    status, _, err = _cli([*argv[:3], tmp_path / "none.csv"], capsys)
    assert status == 2 and "--transmission" in err and "no such file" in err


@pytest.mark.slow
def test_cli_reads_the_tendons_or_a_csv_and_writes_the_tendon(coupled, capsys):
    """``spatialjax identify prior.xml log.npz``: the MJCF's fixed tendon is the transmission
    (the same fit as from Python); ``--transmission T.csv`` the CSV's; ``--out`` writes the
    tendon."""
    from helpers import check_report_against_the_guide

    d, res = coupled["dir"], coupled["res"]
    q, tau = coupled["log"]
    t = np.arange(q.shape[0]) / 1000.0
    ident.RobotLog(t=t, q=q, tau=tau, joint_names=("yaw", "pitch", "elbow", "w1", "w2")).save(
        d / "log.npz", overwrite=True
    )
    base = [coupled["prior"], d / "log.npz", "--lowpass", "20", "--decimate", "10",
            "--joint-model", "armature,viscous,coulomb", "--no-cache", "--force"]  # fmt: skip
    status, out, err = _cli([*base, "--out", d / "cli.xml", "--report", d / "r.json"], capsys)
    assert status == 0, err
    assert "transmission (" in out and "wrist = 1 w1 + 1 w2" in out
    rep = json.loads((d / "r.json").read_text())
    check_report_against_the_guide(rep)
    got = {e["joint"]: e for e in rep["joint_parameters"]}
    want = res.report.to_dict()["joint_parameters"]
    for e in want:
        for k in ("armature", "viscous", "coulomb"):
            np.testing.assert_allclose(got[e["joint"]]["fit"][k], e["fit"][k], rtol=1e-6)
    m = mujoco.MjModel.from_xml_path(str(d / "cli.xml"))
    np.testing.assert_allclose(m.tendon_damping[0], got["wrist"]["fit"]["viscous"], rtol=1e-6)
    # a CSV: the wrist motor alone (w1 then has no motor of its own)
    (d / "T.csv").write_text("motor,w1,w2\nwrist,1,1\n")
    status, out, err = _cli([*base, "--transmission", d / "T.csv", "--report", d / "r2.json"],
                            capsys)  # fmt: skip
    assert status == 0, err
    rep2 = json.loads((d / "r2.json").read_text())
    motors = [e["joint"] for e in rep2["joint_parameters"]]
    assert motors == ["wrist", "yaw", "pitch", "elbow"]
    assert rep2["joint_parameters"][0]["transmission"] == {"w1": 1.0, "w2": 1.0}
