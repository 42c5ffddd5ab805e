"""Robot logs: irregular timestamps (``resample_log``), damaged files, names and bounds.

Issue 23: a log recorded over ROS has jittered intervals and must be accepted at
load time and resampled by ``t``; damaged ``.npz`` files, a byte-order mark, a
string of joint names, absurd joint values and write errors must each give a
named error instead of a traceback or a silent wrong answer.
"""

from __future__ import annotations

import re
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import FIXTURES

from spatialjax import identification as sid
from spatialjax import multibody as mb
from spatialjax.identification import LogError, RobotLog, SamplingReport, resample_log

FIX = FIXTURES


def raises(exc, *fragments):
    """pytest.raises matching every fragment (literal text) in order."""
    return pytest.raises(exc, match=".*".join(re.escape(f) for f in fragments))


def _jittered(n=400, h=1e-3, jitter=0.3, seed=0):
    """Times with intervals h·(1 ± jitter) (uniform), starting at 0.25 s."""
    rng = np.random.default_rng(seed)
    dt = h * (1.0 + jitter * rng.uniform(-1.0, 1.0, n - 1))
    return 0.25 + np.concatenate([[0.0], np.cumsum(dt)])


# ------------------------------------------------------------------ resample_log
def test_resample_is_exact_for_linear_signals_and_reports_the_jitter():
    t = _jittered()
    a = np.array([0.5, -2.0])
    b = np.array([0.1, 3.0])
    q = a + np.outer(t, b)  # linear in t: linear interpolation is exact
    log = RobotLog(t=t, q=q, tau=2.0 * q, dq=np.tile(b, (t.size, 1)), joint_names=("j1", "j2"))
    out, rep = resample_log(log)
    dt = np.diff(t)
    h = np.median(dt)
    assert isinstance(rep, SamplingReport) and rep.resampled
    assert rep.n_samples == t.size
    np.testing.assert_allclose(
        [rep.min_interval, rep.median_interval, rep.max_interval], [dt.min(), h, dt.max()]
    )
    assert rep.off_share == pytest.approx(np.mean(np.abs(dt - h) > 0.1 * h))
    assert 0.5 < rep.off_share < 0.8  # ±30 % uniform jitter: about 2/3 beyond 10 %
    assert rep.rate == pytest.approx(1.0 / h, rel=1e-12)
    # uniform grid from t[0] at the median interval, up to t[-1]
    np.testing.assert_allclose(np.diff(out.t), h, rtol=1e-9)
    assert out.t[0] == t[0] and out.t[-1] <= t[-1] and t[-1] - out.t[-1] < h
    assert out.n_samples == rep.n_out
    np.testing.assert_allclose(out.q, a + np.outer(out.t, b), rtol=0, atol=1e-13)
    np.testing.assert_allclose(out.tau, 2.0 * out.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(out.dq, np.tile(b, (out.n_samples, 1)), rtol=0, atol=1e-13)
    assert out.ddq is None and out.joint_names == ("j1", "j2")
    assert "resampled" in str(rep) and "ms" in str(rep)


def test_resample_quadratic_error_within_the_interpolation_bound_and_given_rate():
    t = _jittered(n=300, h=0.01, jitter=0.2, seed=1)
    c = 3.0
    log = RobotLog(t=t, q=c * t[:, None] ** 2, tau=np.ones((t.size, 1)))
    out, rep = resample_log(log, rate=250.0)
    assert rep.rate == 250.0
    np.testing.assert_allclose(np.diff(out.t), 1 / 250.0, rtol=1e-9)
    # linear interpolation of c t²: error ≤ c h² / 4 for an interval h (max c h²/4 at the middle)
    hmax = np.diff(t).max()
    err = np.abs(out.q[:, 0] - c * out.t**2)
    assert err.max() <= c * hmax**2 / 4 * (1 + 1e-9)
    assert err.max() > 0  # and it did interpolate
    # ddq is interpolated too when present
    log2 = RobotLog(t=t, q=log.q, tau=log.tau, ddq=np.tile([[2 * c]], (t.size, 1)))
    np.testing.assert_allclose(resample_log(log2)[0].ddq, 2 * c, rtol=1e-14)


def test_uniform_log_is_returned_unchanged():
    t = 0.1 + np.arange(500) / 1000.0  # round-off-level differences in the intervals only
    log = RobotLog(t=t, q=np.sin(t)[:, None], tau=np.cos(t)[:, None])
    out, rep = resample_log(log)
    assert out is log and not rep.resampled and rep.off_share == 0.0
    assert rep.n_out == rep.n_samples == 500
    assert rep.rate == pytest.approx(1000.0)
    # the same rate asked for explicitly: still unchanged; another rate resamples
    assert resample_log(log, rate=1000.0)[0] is log
    out, rep = resample_log(log, rate=500.0)
    assert rep.resampled and out.n_samples == 250


def test_resample_refuses_gaps_and_bad_arguments():
    t = _jittered(n=200, h=1e-3, jitter=0.1)
    t[120:] += 0.05  # a 50 ms gap after sample 119 (about 50 median intervals)
    log = RobotLog(t=t, q=np.zeros((t.size, 1)), tau=np.zeros((t.size, 1)))
    with raises(LogError, "'t'", "between sample 119", f"t = {float(t[119])!r}", "sample 120"):
        resample_log(log)
    with pytest.raises(LogError) as info:
        resample_log(log)
    assert info.value.sample == 120 and info.value.column == "t"
    out, _ = resample_log(log, max_gap=0.1)  # the user says the gap is acceptable
    assert out.t[-1] <= t[-1]
    with raises(LogError, "longer than 0.01 s (max_gap)"):
        resample_log(log, max_gap=0.01)
    assert info.value.argument == "log"  # a LogError is an IdentifyError about the log
    with raises(TypeError, "rate: expected a number, got bool"):
        resample_log(log, rate=True)
    for kw, argument in (({"rate": -5.0}, "rate"), ({"max_gap": float("nan")}, "max_gap")):
        with pytest.raises(sid.IdentifyError) as e:
            resample_log(log, **kw)
        assert e.value.argument == argument
    with pytest.raises(TypeError) as e:
        resample_log(log.q)
    assert e.value.argument == "log"


def test_time_axis_refusals_name_index_and_time(tmp_path):
    q = np.zeros((5, 1))
    with raises(LogError, "RobotLog: column 't': non-finite time nan at sample 2"):
        RobotLog(t=np.array([0.0, 0.1, np.nan, 0.3, 0.4]), q=q, tau=q)
    with raises(LogError, "not strictly increasing: t[3] = 0.2 after t[2] = 0.2 (sample 3)"):
        RobotLog(t=np.array([0.0, 0.1, 0.2, 0.2, 0.4]), q=q, tau=q)


def test_irregular_log_loads_and_prepare_log_points_to_resample(tmp_path):
    t = _jittered(n=600, h=1e-3, jitter=0.4)
    q = np.column_stack([np.sin(3 * t), np.cos(2 * t)])
    log = RobotLog(t=t, q=q, tau=q, joint_names=("a", "b"))
    for suffix in (".npz", ".csv"):
        back = sid.load_log(log.save(tmp_path / f"ros{suffix}"))
        np.testing.assert_array_equal(back.t, t)
    with raises(
        sid.IdentifyError, "not uniformly sampled", "resample it with", "resample_log first"
    ):
        sid.prepare_log(log, lowpass=20.0)
    out, _ = resample_log(log)
    prep = sid.prepare_log(out, lowpass=20.0)
    # derivative of the resampled, low-passed q against the closed form
    np.testing.assert_allclose(prep.dq[:, 0], 3 * np.cos(3 * prep.t), atol=2e-3)


# ------------------------------------------------------------------ damaged files
def _good_npz(tmp_path):
    t = np.arange(50) / 100.0
    return RobotLog(t=t, q=np.sin(t)[:, None], tau=np.cos(t)[:, None]).save(tmp_path / "ok.npz")


def test_damaged_npz_files_raise_log_errors_naming_the_path(tmp_path):
    good = _good_npz(tmp_path)
    data = good.read_bytes()
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    trunc = tmp_path / "trunc.npz"
    trunc.write_bytes(data[: len(data) // 2])
    # flip bytes inside the first member's data (its CRC-32 no longer matches)
    with zipfile.ZipFile(good) as z:
        info = z.infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 140
    bad = bytearray(data)
    bad[start : start + 8] = bytes(b ^ 0xFF for b in bad[start : start + 8])
    crc = tmp_path / "crc.npz"
    crc.write_bytes(bytes(bad))
    plain = tmp_path / "plain.npz"
    with open(plain, "wb") as fh:
        np.save(fh, np.zeros((3, 2)))
    other = tmp_path / "log.txt"
    other.write_text("t,q_a,tau_a\n0,0,0\n")
    cases = {
        empty: "empty",
        trunc: "not a readable .npz file",
        crc: "damaged .npz file (BadZipFile: Bad CRC-32",
        plain: "holds a single array (shape (3, 2)",
        other: "expected a .npz or .csv file",
    }
    for path, what in cases.items():
        with pytest.raises(LogError) as info:
            sid.load_log(path)
        assert str(info.value).startswith(str(path) + ": "), str(info.value)
        assert what in str(info.value), str(info.value)


def test_csv_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufefft,q_j1,tau_j1\n0.0,1.0,2.0\n0.5,1.5,2.5\n".encode())
    log = sid.load_log(path)
    np.testing.assert_array_equal(log.t, [0.0, 0.5])
    assert log.joint_names == ("j1",)


def test_joint_names_must_be_a_sequence_of_stripped_strings(tmp_path):
    t = np.arange(3.0)
    q = np.zeros((3, 2))
    with raises(LogError, "joint_names", "expected a sequence of names", "'ab'"):
        RobotLog(t=t, q=q, tau=q, joint_names="ab")
    # a trailing space would not survive a CSV header: refused at construction
    with raises(LogError, "joint_names", "'b ' begins or ends with white space"):
        RobotLog(t=t, q=q, tau=q, joint_names=("a", "b "))
    log = RobotLog(t=t, q=q, tau=q, joint_names=("a", "b c"))  # inner spaces are kept
    assert sid.load_log(log.save(tmp_path / "x.csv")).joint_names == ("a", "b c")


def test_joint_values_beyond_the_bound_are_refused(tmp_path):
    t = np.arange(4.0)
    q = np.zeros((4, 2))
    q[2, 1] = 1e30
    with raises(LogError, "column 'q_b': 1e+30 at sample 2 (t = 2.0)", "±1e+06"):
        RobotLog(t=t, q=q, tau=np.zeros((4, 2)), joint_names=("a", "b"))
    q[2, 1] = -1e6  # the bound itself is accepted
    RobotLog(t=t, q=q, tau=np.zeros((4, 2)))
    # the same check when loading a file
    path = tmp_path / "big.csv"
    path.write_text("t,q_a,tau_a\n0,0,0\n1,-2e7,0\n")
    with raises(LogError, str(path), "column 'q_a': -20000000.0 at sample 1"):
        sid.load_log(path)


def test_save_errors_name_the_given_path(tmp_path, monkeypatch):
    t = np.arange(3.0)
    log = RobotLog(t=t, q=np.zeros((3, 1)), tau=np.zeros((3, 1)), joint_names=("a",))
    monkeypatch.chdir(tmp_path)
    for name in ("no_dir/x.npz", "no_dir/x.csv"):
        with pytest.raises(FileNotFoundError) as info:
            log.save(name)
        assert repr(name) in str(info.value) and ".tmp-" not in str(info.value)
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------ arguments
def test_prepare_log_lowpass_bool_is_a_type_error():
    t = np.arange(2000) / 1000.0
    log = RobotLog(t=t, q=np.sin(t)[:, None], tau=np.cos(t)[:, None])
    with raises(TypeError, "lowpass: expected a cut-off frequency in Hz (a number), got bool"):
        sid.prepare_log(log, lowpass=True)


def test_simulate_log_refuses_integer_inputs():
    model = mb.chain_model(2)
    t = np.arange(10) / 100.0
    z = np.zeros((10, 2))
    key = jax.random.key(0)
    with raises(TypeError, "t: expected floating-point values, got dtype int64"):
        sid.simulate_log(model, np.arange(10), z, z, z, key=key)
    with raises(TypeError, "q: expected floating-point values, got dtype int32"):
        sid.simulate_log(model, t, jnp.zeros((10, 2), jnp.int32), z, z, key=key)
    with raises(TypeError, "ddq: expected floating-point values"):
        sid.simulate_log(model, t, z, z, np.zeros((10, 2), int), key=key)
