"""identification.choose_filter: the cut-off and decimation chosen from a log's positions.

Reference values come from the logs' construction: sums of sinusoids of known frequencies and
amplitudes plus white noise of known variance (or quantisation of known step), for which the
acceleration's mean square, the noise's spectrum (``σ²/(f_s/2)`` one-sided, white) and hence the
minimiser of the predicted acceleration error have closed forms; the filter's edges are checked
with ``prepare_log`` and ``parallel_filter`` themselves. The end-to-end test simulates a
quantised log with Pinocchio (``pin.rnea``) and identifies it with ``identify_robot``.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from helpers import raises_argument, robots_dir

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax.identification import IdentifyError, IdentifyTypeError

F_TOP = 2.0  # Hz: the highest sinusoid of the test logs
FREQS = (F_TOP / 4, F_TOP / 2, F_TOP)


def _sines(rate=1000.0, duration=40.0, n_joints=2, seed=0, acc=2.0):
    """Three sinusoids per joint, each of acceleration amplitude ``acc`` (equal shares)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(duration * rate))) / rate
    q = np.zeros((t.size, n_joints))
    dq = np.zeros_like(q)
    for j in range(n_joints):
        for f in FREQS:
            w, ph = 2 * np.pi * f, rng.uniform(0, 2 * np.pi)
            A = acc / w**2
            q[:, j] += A * np.sin(w * t + ph)
            dq[:, j] += A * w * np.cos(w * t + ph)
    return t, q, dq


def _log(t, q, dq=None):
    return ident.RobotLog(t=t, q=q, tau=np.zeros_like(q), dq=dq)


def _expected(nu, p, rate, acc=2.0):
    """The rule applied to the two-term model of the predicted bias, from the construction.

    Distortion of the top sinusoid, a third of the acceleration's mean square, to first order
    in its amplitude: ``(1 − G) / 3 ≈ (f_top/f_c)^8 / 3`` for the order-4 forward-backward
    Butterworth; white noise of one-sided density ``ν`` differentiated ``p`` times and cut at
    ``f_c``, by its power: ``(2π)^{2p} ν f_c^{2p+1} / (2p+1)`` over the mean square
    ``3 acc² / 2``. Returns the lowest ``f_c`` within ``10⁻⁴`` of the least.
    """
    fc = np.geomspace(F_TOP, 0.45 * rate, 20000)
    noise = (2 * np.pi) ** (2 * p) * nu * fc ** (2 * p + 1) / (2 * p + 1) / (1.5 * acc**2)
    b = (F_TOP / fc) ** 8 / 3 + noise
    return float(fc[np.argmax(b <= b.min() + 1e-4)])


def test_a_log_without_noise_gets_a_filter_just_above_its_band():
    """No noise: the lowest cut-off biasing the fit by at most 0.01 % (the documented rule).

    The top sinusoid holds a third of the acceleration's mean square; its distortion
    ``(f_top/f_c)^8 / 3 ≤ 10⁻⁴`` needs ``f_c ≥ 2.76 f_top``; the candidates are 6 % apart.
    """
    t, q, _ = _sines()
    c = ident.choose_filter(_log(t, q))
    assert c.automatic
    assert 2.6 * F_TOP <= c.lowpass <= 3.1 * F_TOP, c.reason
    assert c.decimate == int(1000.0 // (10 * c.lowpass))
    assert c.details["signal"] == "q"
    # the Hann window's main lobe: 2 bins either side of a frequency between two bins
    assert F_TOP <= c.details["band_edge"] <= F_TOP + 3 * c.details["frequency_resolution"]


@pytest.mark.parametrize("sigma", [3e-3, 1e-2])
def test_white_noise_on_q_the_cut_off_is_the_least_error_one(sigma):
    """``q`` plus white noise of known σ: ``f_c`` within 20 % of the rule on the closed form.

    Also inside the interval where it is defensible at all: above the band, below the cut-off
    that would pass a 10 % rms noise into q̈ (the noise's power reaching 10⁻² of the signal's).
    """
    rate = 1000.0
    t, q, _ = _sines(rate=rate)
    q = q + sigma * np.random.default_rng(3).standard_normal(q.shape)
    nu = sigma**2 / (rate / 2)
    f_star = _expected(nu, 2, rate)
    c = ident.choose_filter(_log(t, q))
    assert 0.8 * f_star <= c.lowpass <= 1.2 * f_star, (f_star, c.reason)
    f_noise = (1e-2 * 1.5 * 2.0**2 * 5 / ((2 * np.pi) ** 4 * nu)) ** (1 / 5)
    assert F_TOP < c.lowpass < f_noise
    # the noise floor it reports is the one put in
    for j in c.details["joints"].values():
        assert 0.7 * sigma < j["noise_std"] < 1.4 * sigma


def test_more_noise_never_raises_the_cut_off():
    t, q, _ = _sines()
    rng = np.random.default_rng(4)
    noise = rng.standard_normal(q.shape)
    cuts = [ident.choose_filter(_log(t, q + s * noise)).lowpass for s in (0.0, 1e-3, 1e-2, 3e-2)]
    assert all(a >= b for a, b in zip(cuts, cuts[1:], strict=False)), cuts


def test_quantised_positions_stay_in_the_defensible_interval():
    """An encoder of step Δ: white noise of variance Δ²/12 (Widrow et al.) bounds the cut-off."""
    rate = 1000.0
    t, q, _ = _sines(rate=rate, acc=20.0)
    step = 2 * np.pi / 2**12
    c = ident.choose_filter(_log(t, np.round(q / step) * step))
    nu = step**2 / 12 / (rate / 2)
    f_noise = (1e-2 * 1.5 * 20.0**2 * 5 / ((2 * np.pi) ** 4 * nu)) ** (1 / 5)
    assert F_TOP < c.lowpass < f_noise, c.reason
    j = c.details["joints"]["joint 0"]
    assert j["resolution"] == pytest.approx(step, rel=1e-6)
    assert "2π/2^12" in c.reason


def test_a_velocity_column_is_what_gets_analysed():
    """With ``dq`` logged, q̈ comes from one derivative of it: noise gain (2πf)², not (2πf)⁴."""
    rate = 1000.0
    t, q, dq = _sines(rate=rate)
    sigma = 0.05
    dq = dq + sigma * np.random.default_rng(5).standard_normal(dq.shape)
    c = ident.choose_filter(_log(t, q, dq))
    assert c.details["signal"] == "dq" and c.details["derivatives"] == 1
    f_star = _expected(sigma**2 / (rate / 2), 1, rate)
    assert 0.8 * f_star <= c.lowpass <= 1.2 * f_star, (f_star, c.reason)


def test_short_parts_raise_the_cut_off_to_the_lowest_their_edges_allow():
    """``parts``: each part keeps a quarter of its samples after the 4 filter edges."""
    rate = 200.0
    t, q, _ = _sines(rate=rate, duration=60.0)
    free = ident.choose_filter(_log(t, q))
    n = 1000
    c = ident.choose_filter(_log(t, q), parts=[n])
    assert c.lowpass > free.lowpass
    assert "raised" in c.reason and f"({n} samples)" in c.reason

    def kept(lowpass):
        part = _log(t[:n], q[:n])
        try:
            p = ident.prepare_log(part, lowpass=lowpass)
            p, _ = ident.parallel_filter(p, p.q)
        except ValueError:
            return 0
        return p.n_samples

    assert kept(c.lowpass) >= n / 4
    assert kept(0.97 * c.lowpass) < n / 4


def test_automatic_decimation_keeps_ten_samples_per_period_of_the_cut_off():
    t, q, _ = _sines()
    for c in (ident.choose_filter(_log(t, q)), ident.choose_filter(_log(t, q), lowpass=10.0)):
        k, fc = c.decimate, c.lowpass
        assert 1000.0 / (2 * k) >= 5 * fc
        assert 1000.0 / (2 * (k + 1)) < 5 * fc


def test_given_values_are_honoured():
    t, q, _ = _sines(duration=10.0)
    log = _log(t, q)
    c = ident.choose_filter(log, lowpass=7.5, decimate=4)
    assert (c.lowpass, c.decimate, c.automatic) == (7.5, 4, False)
    assert "given" in c.reason
    c = ident.choose_filter(log, lowpass=10)
    assert (c.lowpass, c.decimate, c.automatic) == (10.0, 10, False)
    c = ident.choose_filter(log, lowpass=None)
    assert (c.lowpass, c.decimate, c.automatic) == (None, 1, False)
    c = ident.choose_filter(log, lowpass=None, decimate=1)
    assert (c.lowpass, c.decimate) == (None, 1)
    c = ident.choose_filter(log, decimate=20)  # automatic cut-off under the given decimation
    assert c.automatic and c.decimate == 20 and c.lowpass <= 1000.0 / (10 * 20)


@pytest.mark.parametrize(
    ("kwargs", "exc", "words"),
    [
        ({"lowpass": -1}, ValueError, ["lowpass", "> 0", "-1"]),
        ({"lowpass": 0.0}, ValueError, ["lowpass", "> 0"]),
        ({"lowpass": float("nan")}, ValueError, ["lowpass"]),
        ({"lowpass": float("inf")}, ValueError, ["lowpass"]),
        ({"lowpass": "fast"}, ValueError, ["lowpass", "'auto'", "'fast'"]),
        ({"lowpass": True}, TypeError, ["lowpass", "bool"]),
        ({"lowpass": [10.0]}, TypeError, ["lowpass", "list"]),
        ({"lowpass": 500.0}, ValueError, ["lowpass", "500", "Nyquist"]),
        ({"lowpass": 600.0}, ValueError, ["lowpass", "Nyquist"]),
        ({"lowpass": 100.0, "decimate": 10}, ValueError, ["decimate", "10", "Nyquist", "50"]),
        ({"decimate": 0}, ValueError, ["decimate", ">= 1", "0"]),
        ({"decimate": -2}, ValueError, ["decimate", "-2"]),
        ({"decimate": 2.5}, TypeError, ["decimate", "float"]),
        ({"decimate": True}, TypeError, ["decimate", "bool"]),
        ({"decimate": "fast"}, ValueError, ["decimate", "'auto'"]),
        ({"lowpass": None, "decimate": 2}, ValueError, ["decimate", "alias", "lowpass"]),
        ({"order": 0}, ValueError, ["order"]),
        ({"parts": [1]}, ValueError, ["parts[0]", ">= 2"]),
        ({"parts": 100}, TypeError, ["parts"]),
    ],
)
def test_bad_arguments_are_named(kwargs, exc, words):
    """An ``IdentifyError`` (``IdentifyTypeError`` for a wrong type) whose ``argument`` is the
    keyword at fault (the first word); the message says what was expected and given."""
    t, q, _ = _sines(duration=2.0)
    with pytest.raises(exc) as e:
        ident.choose_filter(_log(t, q), **kwargs)
    assert isinstance(e.value, ident.IdentifyError) and e.value.argument == words[0]
    for w in words[1:]:
        assert w in e.value.detail, (w, str(e.value))


def test_bad_logs_are_named():
    t, q, _ = _sines(duration=2.0)
    with raises_argument(IdentifyTypeError, "log"):
        ident.choose_filter({"t": t, "q": q})
    jittered = t.copy()
    jittered[100:] += 0.5e-3  # one interval 50 % longer than the others
    with raises_argument(IdentifyError, "log") as e:
        ident.choose_filter(_log(jittered, q))
    assert e.value.argument == "log" and "resample_log" in e.value.detail
    with pytest.raises(ident.IdentifyError) as e:
        ident.choose_filter(_log(t[:40], q[:40]))
    assert e.value.argument == "log" and e.value.detail.startswith("40 samples are too few")
    # a short log with the cut-off given needs no spectrum
    assert ident.choose_filter(_log(t[:40], q[:40]), lowpass=50.0).lowpass == 50.0


def test_the_reason_is_one_line_and_the_details_are_json():
    t, q, _ = _sines()
    q = q + 1e-3 * np.random.default_rng(6).standard_normal(q.shape)
    for kw in ({}, {"lowpass": 10.0}, {"lowpass": None}, {"parts": [3000]}):
        c = ident.choose_filter(_log(t, q), **kw)
        assert "\n" not in c.reason and c.reason
        json.dumps(c.to_dict(), allow_nan=False)
    c = ident.choose_filter(_log(t, q))
    assert c.reason.startswith(f"low-pass {c.lowpass:.3g} Hz, decimate {c.decimate}: q's")
    assert "% bias predicted" in c.reason


def test_a_joint_that_does_not_move_takes_no_part():
    """A constant joint (with noise) is not moving; the choice is the moving joints' alone."""
    t, q, _ = _sines(n_joints=1)
    rng = np.random.default_rng(7)
    still = 0.3 + 1e-3 * rng.standard_normal((t.size, 1))
    moving = q + 1e-3 * rng.standard_normal(q.shape)
    both = ident.choose_filter(_log(t, np.hstack([moving, still])))
    alone = ident.choose_filter(_log(t, moving))
    assert both.details["joints"]["joint 1"]["moving"] is False
    assert both.details["joints"]["joint 0"]["moving"] is True
    assert both.lowpass == pytest.approx(alone.lowpass, rel=0.1)


def test_nothing_moving_means_no_filter():
    t = np.arange(4000) / 1000.0
    q = 1e-3 * np.random.default_rng(8).standard_normal((t.size, 2))
    c = ident.choose_filter(_log(t, q))
    assert (c.lowpass, c.decimate, c.automatic) == (None, 1, True)
    assert "no trajectory" in c.reason


def test_the_choice_reads_only_the_log_it_is_given():
    """The pipeline passes the training part: the result depends on nothing else."""
    t, q, _ = _sines()
    log = _log(t, q)
    a = ident.choose_filter(log)
    b = ident.choose_filter(dataclasses.replace(log, tau=np.ones_like(q)))
    assert (a.lowpass, a.decimate) == (b.lowpass, b.decimate)


def _bump_train(rate=1000.0, duration=20.0, width=0.45, period=1.3, amp=0.3):
    """Smooth swings, as a walking robot's legs: C² bumps ``64 x³ (1 − x)³`` of ``width`` s
    every ``period`` s (no knee in the spectrum: it decays algebraically). Returns ``t, q``
    and the exact acceleration (the bump's polynomial differentiated twice)."""
    from numpy.polynomial import Polynomial

    bump = 64 * Polynomial([0, 0, 0, 1]) * Polynomial([1, -1]) ** 3
    d2 = bump.deriv(2)
    t = np.arange(int(round(duration * rate))) / rate
    q = np.zeros((t.size, 2))
    acc = np.zeros_like(q)
    for j, shift in enumerate((0.1, 0.7)):
        x = ((t - shift) % period) / width
        on = x < 1
        q[on, j] = amp * bump(x[on])
        acc[on, j] = amp * d2(x[on]) / width**2
    return t, q, acc


def test_a_smooth_trajectory_keeps_its_acceleration_band():
    """Smooth swings (no knee) with a 20-bit encoder: the band is where 99.9 % of the
    acceleration power lies (from the exact acceleration's spectrum), so the cut-off keeps it
    (the knee alone found the first bins), and a floating base's pose takes part."""
    rate = 1000.0
    t, q, acc = _bump_train(rate=rate)
    step = 2 * np.pi / 2**20
    log = _log(t, np.round(q / step) * step)
    c = ident.choose_filter(log)
    spec = np.abs(np.fft.rfft(acc - acc.mean(axis=0), axis=0)) ** 2
    f = np.fft.rfftfreq(t.size, 1 / rate)
    cum = np.cumsum(spec, axis=0) / spec.sum(axis=0)
    f_band = max(float(f[np.argmax(cum[:, j] >= 1 - 1e-3)]) for j in range(2))
    # the band's last 0.1 % lies partly under the encoder's noise floor, where no rule sees it
    assert 0.7 * f_band <= c.lowpass <= 3 * f_band, (f_band, c.reason)
    edges = [c.details["joints"][f"joint {j}"]["band_edge"] for j in range(2)]
    assert min(edges) >= 0.6 * f_band
    # a floating base standing still (pose noise only) is reported and does not move the band
    rng = np.random.default_rng(3)
    quat = np.tile([1.0, 0, 0, 0], (t.size, 1)) + 2e-5 * rng.standard_normal((t.size, 4))
    fl = dataclasses.replace(
        log, base_position=1e-4 * rng.standard_normal((t.size, 3)),
        base_quaternion=quat / np.linalg.norm(quat, axis=1, keepdims=True),
        contact_frames=(),
    )  # fmt: skip
    cf = ident.choose_filter(fl)
    assert "base x" in cf.details["joints"] and not cf.details["joints"]["base x"]["moving"]
    assert cf.lowpass == pytest.approx(c.lowpass, rel=0.1)


# ------------------------------------------------------------------ end to end, Pinocchio
@pytest.mark.slow
def test_identify_robot_with_the_choice_gets_the_masses_no_filter_does_not():
    """A UR5 log simulated with Pinocchio: 16-bit positions, no velocities, friction, noise.

    The truth is every link's mass and rotational inertia 10–20 % off the URDF (so that links
    the trajectory barely excites, pulled toward the URDF by the prior, stay within the
    bounds); the torques are ``pin.rnea`` of the truth at the exact trajectory plus friction
    plus 1 % noise; the log holds the quantised positions only. With ``choose_filter``'s
    choice every link mass is within 0.8–1.25× the truth and the held-out torques are
    predicted better than by the URDF; with no filter (q differentiated raw) a mass is not.
    """
    pin = pytest.importorskip("pinocchio")

    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    path = str(root / "ur_description/urdf/ur5_robot.urdf")
    pm = pin.buildModelFromUrdf(path)
    model = mb.Model.from_urdf(path, dtype="float64")
    rng = np.random.default_rng(0)
    true = pm.copy()
    for i in range(1, pm.njoints):
        I = pm.inertias[i]
        s = 1 + rng.choice([-1.0, 1.0]) * rng.uniform(0.1, 0.2)
        true.inertias[i] = pin.Inertia(I.mass * s, np.array(I.lever), np.array(I.inertia) * s)
    rate, n = 250.0, pm.nv
    t = np.arange(int(60 * rate)) / rate
    ll = np.arange(1, 6)
    w = 2 * np.pi * 0.1 * ll
    a, b = rng.standard_normal((n, 5)) / ll, rng.standard_normal((n, 5)) / ll
    s_, c_ = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    dev, dq = s_ @ (a / w).T - c_ @ (b / w).T, c_ @ a.T + s_ @ b.T
    ddq = c_ @ (b * w).T - s_ @ (a * w).T
    k = 0.6 * np.min([1.5 / np.abs(dev).max(0), pm.velocityLimit / np.abs(dq).max(0)], axis=0)
    q, dq, ddq = k * dev, k * dq, k * ddq
    data = true.createData()
    tau = np.array([pin.rnea(true, data, q[i], dq[i], ddq[i]) for i in range(t.size)])
    tau += 0.1 * dq + 0.5 * np.sign(dq)
    tau += 0.01 * np.sqrt(np.mean(tau**2, 0)) * rng.standard_normal(tau.shape)
    step = 2 * np.pi / 2**16
    log = ident.RobotLog(t=t, q=np.round(q / step) * step, tau=tau)
    masses = np.array([true.inertias[i].mass for i in range(1, pm.njoints)])

    n_hold = int(round(0.2 * t.size))
    train = dataclasses.replace(log, t=t[:-n_hold], q=log.q[:-n_hold], tau=tau[:-n_hold])
    choice = ident.choose_filter(train, parts=[n_hold])
    assert choice.automatic and choice.lowpass is not None
    auto = ident.identify_robot(model, log, lowpass=choice.lowpass, decimate=choice.decimate)
    raw = ident.identify_robot(model, log, lowpass=None)
    r_auto = auto.params["fit"][:, 0] / masses
    r_raw = raw.params["fit"][:, 0] / masses
    assert np.all((0.8 <= r_auto) & (r_auto <= 1.25)), (choice.reason, r_auto)
    assert not np.all((0.8 <= r_raw) & (r_raw <= 1.25)), r_raw
    e_auto = auto.report.to_dict()["errors"]["fit"]["holdout"]["overall"]
    e_raw = raw.report.to_dict()["errors"]["fit"]["holdout"]["overall"]
    assert e_auto < e_raw / 5 and math.isfinite(e_auto)
    assert e_auto < auto.report.to_dict()["errors"]["prior"]["holdout"]["overall"]


def test_a_joint_that_moves_then_rests_is_judged_on_its_moving_part():
    """Joint b moves for the first 9 s of 60 (its sinusoids up to 2 Hz, an amplitude ramping
    to zero over the last second), then stands still under encoder noise; joint a moves
    throughout. Averaged over the whole log, b's trajectory drowned in the noise of 51 s of
    rest (band edge 0, ``moving: false``); over its moving span its band is its sinusoids'."""
    rate, step = 1000.0, 2 * np.pi / 2**16
    t, q, _ = _sines(rate=rate, duration=60.0)
    stop = 9.0
    u = np.clip((t - (stop - 1.0)) / 1.0, 0.0, 1.0)
    q[:, 1] *= 0.5 * (1 + np.cos(np.pi * u))  # 1 until 8 s, 0 from 9 s
    q = q + np.random.default_rng(1).normal(0.0, 2e-5, q.shape)
    q = np.round(q / step) * step
    c = ident.choose_filter(_log(t, q))
    a, b = c.details["joints"]["joint 0"], c.details["joints"]["joint 1"]
    assert a["moving"] and b["moving"]
    assert a["moving_span"] == [t[0], t[-1]]
    assert b["moving_span"][0] == t[0] and stop - 0.5 <= b["moving_span"][1] <= stop + 0.5
    for d in (a, b):  # the band ends at the top sinusoid, within the spectrum's resolution
        assert F_TOP <= d["band_edge"] <= F_TOP + 3 * c.details["frequency_resolution"]
    # the same log resting from the start of the recording: the span starts late
    rest_first = _log(t, q[::-1].copy())
    b = ident.choose_filter(rest_first).details["joints"]["joint 1"]
    assert b["moving"] and t[-1] - stop - 0.5 <= b["moving_span"][0] <= t[-1] - stop + 0.5
