"""identification.logs.channel_checks: scale, sign and swaps of torque channels, where judged.

Reference values: closed forms on synthetic channels (a channel ``k p + noise``
of known signal-to-noise ratio explains ``SNR / (1 + SNR)`` of its variance;
AR(1) noise of coefficient ``a`` leaves ``N (1 − a) / (1 + a)`` independent
samples; white noise puts half its energy above a quarter of the sampling
rate), and for the simulated logs Pinocchio (``pin.rnea``) for the torques of
the true links and the prediction of the URDF's. The pipeline runs stop after
the torque stage (``progress`` raises), so no fit is compiled.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import pinocchio_log, robots_dir

from spatialjax import identification as ident
from spatialjax.identification.logs.channel_checks import (
    SCALE_LIMIT,
    channel_messages,
    channel_summary,
    check_channels,
)

N = 4000


def _smooth(n_joints: int, seed: int, n: int = N) -> np.ndarray:
    """``(n, n_joints)`` band-limited signals of unit rms (a few cycles each), in [0, 40] rad."""
    rng = np.random.default_rng(seed)
    s = np.linspace(0, 40, n)[:, None]
    x = sum(rng.normal(size=n_joints) * np.sin(h * s / 3 + rng.uniform(0, 6, n_joints))
            for h in range(1, 5))  # fmt: skip
    return x / np.sqrt(np.mean(x**2, axis=0))


def _ar1(a: float, n: int, rng) -> np.ndarray:
    e = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = e[0] / np.sqrt(1 - a * a)
    for i in range(1, n):
        x[i] = a * x[i - 1] + e[i]
    return x * np.sqrt(1 - a * a)  # unit variance


def _one(pred, meas, dq=None, name="j"):
    (c,) = check_channels([name], meas[:, None], meas[:, None], pred[:, None],
                          dq=None if dq is None else dq[:, None])  # fmt: skip
    return c


# ------------------------------------------------------------------ closed forms


@pytest.mark.parametrize("k", [1.3, 0.05, -1.0, 10.0])
@pytest.mark.parametrize("snr", [4.0, 16.0])
def test_a_channel_k_times_the_prediction_plus_noise(k, snr):
    """``m = k p + e``, ``var(e) = k² var(p) / SNR``: ``R² = SNR / (1 + SNR)``, ``K ∋ k``.

    With ``ρ = √(1/R² − 1) = 1/√SNR`` (the sampling term is far smaller on 4000 white
    samples) the interval is the hull of ``k (1 ± ρ)`` and ``(k / R²) / (1 ∓ ρ)``.
    """
    rng = np.random.default_rng(int(10 * snr + 3 * k))
    p = _smooth(1, 0)[:, 0]
    m = k * p + abs(k) / np.sqrt(snr) * rng.standard_normal(N)
    c = _one(p, m)
    r2, rho = snr / (1 + snr), 1 / np.sqrt(snr)
    assert c.explained == pytest.approx(r2, abs=0.03)
    assert c.scale == pytest.approx(k, rel=0.05)
    assert c.scale_reverse == pytest.approx(k / r2, rel=0.05)
    ends = [k * (1 - rho), k * (1 + rho), k / r2 / (1 + rho), k / r2 / (1 - rho)]
    want_lo, want_hi = min(ends), max(ends)
    lo, hi = c.scale_interval
    assert lo < k < hi
    assert lo == pytest.approx(want_lo, rel=0.15) and hi == pytest.approx(want_hi, rel=0.15)
    # white residuals against a smooth prediction: the score p·e is white, N / τ ≈ N
    assert 0.6 * N < c.effective_samples <= N
    L = SCALE_LIMIT
    if want_hi < 0:
        want = "sign"
    elif want_lo > L or (want_lo > -1 / L and want_hi < 1 / L):
        want = "scale"
    else:
        want = "agrees" if 1 / L <= want_lo and want_hi <= L else "not judged"
    assert c.verdict == want and c.scale_flagged == (want in ("scale", "sign"))
    # k = 1.3 at SNR 4: between 0.65 and 3.25, not decided; at SNR 16: agrees
    assert want == {(1.3, 4.0): "not judged", (1.3, 16.0): "agrees"}.get((k, snr), want)


@pytest.mark.parametrize("snr", [0.9, 0.5, 0.1])
def test_below_half_the_variance_explained_nothing_is_judged(snr):
    """``R² ≤ 1/2`` (SNR ≤ 1): the prior's error along its prediction could be anything."""
    rng = np.random.default_rng(1)
    p = _smooth(1, 1)[:, 0]
    for k in (1.0, 0.01, -1.0, 20.0):
        m = k * p + abs(k) / np.sqrt(snr) * rng.standard_normal(N)
        c = _one(p, m)
        assert c.explained < 0.5
        assert c.verdict == "not judged" and not c.scale_flagged
        assert c.scale_interval == (-np.inf, np.inf)


def test_effective_samples_of_autocorrelated_residuals():
    """AR(1) residuals (``a = 0.9``) against a smooth prediction: ``N / τ``, ``τ = 19``."""
    rng = np.random.default_rng(2)
    n = 40_000
    p = _smooth(1, 2, n)[:, 0]
    c = _one(p, p + 0.3 * _ar1(0.9, n, rng))
    assert c.effective_samples == pytest.approx(n * 0.1 / 1.9, rel=0.25)
    # the interval is wider than that of white residuals of the same size
    w = _one(p, p + 0.3 * rng.standard_normal(n))
    assert np.diff(c.scale_interval) >= np.diff(w.scale_interval)


def test_sampling_uncertainty_of_a_short_log():
    """Fewer than ``z² = 9`` independent samples: the sampling term ``z / t`` exceeds
    ``ρ`` (``se ≈ ρ |k| / √N``), and the interval is wider than ``k (1 ± ρ)``."""
    for n, wider in ((6, True), (4000, False)):
        for seed in range(3):
            rng = np.random.default_rng(seed)
            p = np.sin(np.linspace(0, 3, n)) + 0.5
            c = _one(p, 0.2 * p + 0.02 * rng.standard_normal(n))
            rho = np.sqrt(1 / c.explained - 1)
            lo, hi = c.scale_interval
            assert lo < 0.2 < hi and c.effective_samples == pytest.approx(n, rel=0.2)
            assert ((hi - lo) > 1.25 * 2 * rho * c.scale) == wider


def test_noise_in_the_prediction_is_not_read_as_units():
    """Errors in the regressor (q differentiated twice, unfiltered) attenuate ``k`` towards 0.

    ``p = p_t + n`` with ``var(n) = 4 var(p_t)``: the forward slope is ``1/5`` of the
    true one; the reverse slope is the true one (Frisch 1934), so the channel is not
    called 5× off. White noise puts half its energy above a quarter of the rate.
    """
    rng = np.random.default_rng(4)
    pt = _smooth(1, 4)[:, 0]
    p = pt + 2.0 * rng.standard_normal(N)
    c = _one(p, pt + 0.01 * rng.standard_normal(N))
    assert c.scale == pytest.approx(0.2, abs=0.03)
    assert c.scale_reverse == pytest.approx(1.0, abs=0.05)
    assert c.noise_share == pytest.approx(0.5 * 4 / 5, abs=0.04)
    assert c.verdict == "not judged"
    warnings, notes = channel_messages([c])
    assert len(warnings) == 1 and "dominated by noise from differentiating q" in warnings[0]
    assert "low-pass the log" in warnings[0] and "units" not in warnings[0]
    # with less noise (var(n) = var(p_t)/4) the forward slope is 0.8 and the reverse
    # one 1.0: the channel agrees; a channel in hundredths is still 100× off
    p = pt + 0.5 * rng.standard_normal(N)
    assert _one(p, pt).verdict == "agrees"
    small = _one(p, 0.01 * pt)
    assert small.verdict == "scale" and small.scale_interval[1] < 0.03


def test_a_prediction_near_zero_is_not_judged():
    """A link whose centre of mass the model puts on the joint axis: the prior predicts
    a torque 100× smaller than the measured one, whose error along it is as large as the
    prediction itself; the slope of that noise-sized prediction means nothing."""
    rng = np.random.default_rng(5)
    x = _smooth(3, 5)
    v = x[:, 2]  # the joint velocity
    truth = x[:, 0]  # what the links really do on this joint
    p = 0.01 * (0.3 * truth + x[:, 1])  # the prior's tiny, partly wrong prediction
    m = truth + 0.3 * v + 0.5 * np.sign(v) + 0.01 * rng.standard_normal(N)
    c = _one(p, m, dq=v)
    assert c.rms_ratio > 50 and c.explained < 0.5
    assert abs(c.scale) > SCALE_LIMIT  # what the point estimate alone would have flagged
    assert c.verdict == "not judged" and not c.scale_flagged
    warnings, notes = channel_messages([c])
    assert warnings == []
    assert notes == [
        f"j: the model predicts almost no torque on this joint (rms ratio {c.rms_ratio:.3g}; "
        f"its prediction explains {100 * c.explained:.3g} % of the measured torque's variance "
        "after friction): scale and sign not judged"
    ]


def test_friction_is_taken_apart_before_judging():
    """A distal joint whose torque is mostly friction: right units, judged after friction."""
    s = np.linspace(0, 40, N)
    v = np.cos(s)
    pred = -0.05 * v + 0.02 * np.sin(3 * s)
    meas = 1.2 * pred + 0.3 * v + 0.6 * np.sign(v)
    c = _one(pred, meas, dq=v)
    assert c.scale == pytest.approx(1.2, rel=1e-9) and c.explained == pytest.approx(1.0)
    assert c.verdict == "agrees"


def test_swapped_columns_are_named_and_correlated_joints_are_not():
    """Channels 1 and 2 swapped; joints 0 and 1 are correlated (R² 0.64) but in order."""
    rng = np.random.default_rng(6)
    x = _smooth(4, 6)
    pred = np.column_stack([x[:, 0], 0.8 * x[:, 0] + 0.6 * x[:, 1], x[:, 2], x[:, 3]])
    true = pred * 1.1 + 0.05 * rng.standard_normal(pred.shape)
    checks = check_channels(["a", "b", "c", "d"], true, true, pred)
    assert [c.swapped_with for c in checks] == [None] * 4
    assert [c.verdict for c in checks] == ["agrees"] * 4
    swapped = true[:, [0, 2, 1, 3]]
    checks = check_channels(["a", "b", "c", "d"], swapped, swapped, pred)
    assert [c.swapped_with for c in checks] == [None, "c", "b", None]
    by = {c.joint: c for c in checks}
    assert by["b"].swap_explained > 0.99 and by["b"].explained < 0.1
    warnings, notes = channel_messages(checks)
    assert len(warnings) == 1 and warnings[0].startswith(
        "torque columns of b and c look swapped: b's channel follows the torque predicted for c"
    )
    assert "measured torques are" not in warnings[0]  # no scale/sign warning for them
    assert channel_summary(checks) == "1 swapped pair(s)"
    # a swap of two channels in the wrong units and signs is still a swap
    odd = swapped * np.array([1.0, -0.01, 100.0, 1.0])
    assert [c.swapped_with for c in check_channels(list("abcd"), odd, odd, pred)] == [
        None, "c", "b", None]  # fmt: skip


def test_messages_and_report_fields():
    rng = np.random.default_rng(7)
    pred = _smooth(4, 7)
    meas = pred * np.array([1.0, 0.1, -1.0, 1.0])
    meas[:, 3] = 0.0  # no signal
    meas = meas + 1e-3 * rng.standard_normal(meas.shape) * np.array([1, 1, 1, 0])
    checks = check_channels(list("abcd"), meas, meas, pred)
    warnings, notes = channel_messages(checks, torque_scale=[1.0, 1.0, 2.0, 1.0])
    b, c = checks[1], checks[2]
    # the texts of the scale and sign warnings are those of the earlier releases
    assert warnings == [
        f"b: measured torques are {b.scale:.3g}× (more than 3× off) the torques the prior "
        f"predicts (rms ratio {b.rms_ratio:.3g}): units, gear ratio or sign convention? "
        f"(torque_scale b={1 / b.scale:.3g} would match the prior)",
        f"c: measured torques are the opposite sign of the torques the prior predicts (rms "
        f"ratio {c.rms_ratio:.3g}): units, gear ratio or sign convention? (torque_scale "
        f"c={2 / c.scale:.3g} would match the prior)",
    ]
    assert notes == [
        "d: constant: no torque signal; left out of the fit (the joint still moves the others)",
        "c: torques multiplied by 2 (torque_scale)",
    ]
    assert channel_summary(checks) == "2 scale/sign warning(s)"
    d = checks[0].to_dict()
    old = ["joint", "std", "resolution", "signal", "scale", "rms_ratio", "scale_flagged",
           "excluded", "reason"]  # fmt: skip
    new = ["explained", "scale_interval", "scale_reverse", "effective_samples", "noise_share",
           "verdict", "judged", "swapped_with", "swap_explained"]  # fmt: skip
    assert list(d) == old + new
    assert d["verdict"] == "agrees" and d["judged"] and len(d["scale_interval"]) == 2
    assert checks[3].verdict == "not judged" and checks[3].excluded  # a constant channel


def test_summary_counts_what_was_not_judged():
    p = _smooth(2, 8)
    rng = np.random.default_rng(8)
    m = p.copy()
    m[:, 1] = rng.standard_normal(N)  # follows nothing the prior predicts
    checks = check_channels(["a", "b"], m, m, p)
    assert channel_summary(checks) == "scales and signs agree where judged (1 not judged)"
    assert channel_summary(checks[:1]) == "scales and signs agree"
    # a joint on which the prior predicts nothing at all (no moving mass beyond it)
    (c,) = check_channels(["z"], m[:, :1], m[:, :1], np.zeros((N, 1)))
    assert np.isnan(c.scale) and c.verdict == "not judged"
    assert channel_messages([c]) == (
        [],
        ["z: the prior predicts no torque on this joint: scale and sign not judged"],
    )


# ------------------------------------------------------------------ simulated robots

ROBOTS = {
    # name: (URDF under example-robot-data's robots folder, locked joints, rate in Hz)
    "panda": ("panda_description/urdf/panda.urdf",
              ("panda_finger_joint1", "panda_finger_joint2"), 1000.0),
    "ur10": ("ur_description/urdf/ur10_robot.urdf", (), 500.0),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", (), 500.0),
    "tiago": ("tiago_description/robots/tiago_no_hand.urdf",
              ("head_1_joint", "head_2_joint", "wheel_left_joint", "wheel_right_joint"), 200.0),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", (), 1000.0),
}  # fmt: skip


def _urdf(robot: str) -> str:
    d = robots_dir()
    if d is None:
        pytest.skip("example-robot-data is not installed")
    return str(d / ROBOTS[robot][0])


def test_ur10_wrists_checked_on_pinocchio_torques_quick():
    """The issue's UR10 (500 Hz, 20-bit encoders, links 20–30 % off), checked on the
    inputs the pipeline builds, with Pinocchio's inverse dynamics for the prior's
    prediction: the wrist links' centres of mass are on their joint axes in the URDF,
    so it predicts almost nothing there. Filtered (10 Hz) and raw."""
    pin = pytest.importorskip("pinocchio")
    urdf = _urdf("ur10")
    t, q, tau, names = pinocchio_log(urdf, rate=500.0, duration=12.0)
    log = ident.RobotLog(t=t, q=q, tau=tau, joint_names=names)
    prior = pin.buildModelFromUrdf(urdf)
    data = prior.createData()
    for lowpass, decimate in ((10.0, 5), (None, 1)):
        p = ident.prepare_log(log, lowpass=lowpass, decimate=decimate)
        pred = np.array([pin.rnea(prior, data, *x) for x in zip(p.q, p.dq, p.ddq, strict=True)])
        checks = check_channels(names, tau, p.tau, pred, dq=p.dq)
        by = {c.joint: c for c in checks}
        assert not any(c.scale_flagged for c in checks), [c.to_dict() for c in checks]
        assert all(by[j].verdict == "agrees" for j in names[:3])
        assert by["wrist_2_joint"].verdict == by["wrist_3_joint"].verdict == "not judged"
        warnings, notes = channel_messages(checks)
        assert warnings == []
        assert any(
            n.startswith("wrist_3_joint: the model predicts almost no torque") for n in notes
        )


def _stop_at_torques(model, log, **kw):
    """``(summary, lines)`` of the torque stage of ``identify_robot`` (nothing fitted)."""
    from spatialjax._util import x64 as _x64

    class _Stop(Exception):
        pass

    got = {}

    def progress(stage, text, lines):
        if stage == "torques":
            got["text"], got["lines"] = text, lines
            raise _Stop

    with _x64(), pytest.raises(_Stop):
        ident.identify_robot(model, log, progress=progress, **kw)
    return got["text"], got["lines"]


def _sim(robot: str, seed: int = 0, **kw):
    import spatialjax.multibody as mb
    from spatialjax._util import x64 as _x64

    urdf, (_, locked, rate) = _urdf(robot), ROBOTS[robot]
    t, q, tau, names = pinocchio_log(urdf, locked, seed=seed, rate=rate, **kw)
    with _x64():
        model = mb.Model.from_urdf(urdf, locked_joints=dict.fromkeys(locked, 0.0) or None,
                                   dtype="float64")  # fmt: skip
    return model, ident.RobotLog(t=t, q=q, tau=tau, joint_names=names), rate


@pytest.mark.slow
@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_no_scale_or_sign_warning_on_correct_simulated_logs(robot):
    """Correct logs of five robots, filtered (10 Hz) and raw (q differentiated twice):
    no scale or sign warning, no swap; the raw ones may advise a low-pass, nothing about
    units."""
    model, log, rate = _sim(robot)
    for kw in ({"lowpass": 10.0, "decimate": max(1, int(rate // 100))}, {"lowpass": None}):
        text, lines = _stop_at_torques(model, log, **kw)
        assert "scale/sign warning" not in text and "swapped" not in text, (kw, text, lines)
        assert not any("measured torques are" in ln or "units" in ln for ln in lines), lines
        assert all(ln.startswith("note: ") or "low-pass the log" in ln for ln in lines), lines


@pytest.mark.slow
def test_swapped_columns_and_wrong_units_in_simulated_logs():
    """UR10: elbow and wrist_1 columns swapped (wrist_1's prediction is weak, its link's
    centre of mass on the axis) is named; shoulder_lift in hundredths and elbow flipped
    are warned about; filtered and raw."""
    model, log, _ = _sim("ur10", seed=2)
    names = log.joint_names
    e, w, s = (names.index(j) for j in ("elbow_joint", "wrist_1_joint", "shoulder_lift_joint"))
    tau = log.tau.copy()
    tau[:, [e, w]] = tau[:, [w, e]]
    swapped = dataclasses.replace(log, tau=tau)
    units = dataclasses.replace(log, tau=log.tau * np.where(np.arange(6) == s, 0.01, 1.0)
                                * np.where(np.arange(6) == e, -1.0, 1.0))  # fmt: skip
    for kw in ({"lowpass": 10.0, "decimate": 5}, {"lowpass": None}):
        text, lines = _stop_at_torques(model, swapped, **kw)
        assert "1 swapped pair(s)" in text
        warn = [ln for ln in lines if ln.startswith("warning: ")]
        assert len(warn) == 1
        assert "torque columns of elbow_joint and wrist_1_joint look swapped" in warn[0]
        text, lines = _stop_at_torques(model, units, **kw)
        warn = [ln for ln in lines if ln.startswith("warning: ")]
        assert len(warn) == 2 and "2 scale/sign warning(s)" in text
        assert warn[0].startswith("warning: shoulder_lift_joint: measured torques are 0.00")
        assert "(torque_scale shoulder_lift_joint=1" in warn[0]  # ≈ 100-115
        assert warn[1].startswith("warning: elbow_joint: measured torques are the opposite sign")
