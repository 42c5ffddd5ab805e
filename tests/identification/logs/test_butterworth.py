"""The log stages' Butterworth low-pass against SciPy's (``scipy.signal``, the oracle)."""

import numpy as np
import pytest
from scipy import signal

from spatialjax.identification.logs import butterworth as bw


@pytest.mark.parametrize("rate", [100.0, 1000.0, 5000.0, 44100.0])
def test_sections_are_scipys(rate):
    """Every order 1-10 and cut-offs from 1e-4 of the rate to just below Nyquist: the same
    sections, paired and ordered as ``zpk2sos`` pairs them, the gain in the first."""
    for order in range(1, 11):
        for share in (1e-4, 4e-4, 1.2e-3, 2.8e-3, 0.01, 0.05, 0.2, 0.249, 0.251, 0.4, 0.499):
            ref = signal.butter(order, share * rate, fs=rate, output="sos")
            got = bw.butterworth(order, share * rate, rate)
            assert got.shape == ref.shape
            np.testing.assert_array_equal(got == 0, ref == 0)
            np.testing.assert_allclose(got, ref, rtol=1e-12, err_msg=f"{order} {share}")


def test_power_gain_is_sosfreqz_squared():
    f = np.linspace(0.0, 2500.0, 1001)
    for order, fc in [(1, 10.0), (4, 14.1), (5, 300.0), (8, 2000.0)]:
        sos = bw.butterworth(order, fc, 5000.0)
        _, h = signal.sosfreqz(sos, worN=f, fs=5000.0)
        np.testing.assert_allclose(bw.power_gain(sos, f, 5000.0), np.abs(h) ** 2, atol=1e-14)
        # the -3 dB point, and unit gain at 0 Hz
        np.testing.assert_allclose(bw.power_gain(sos, np.array([0.0, fc]), 5000.0), [1.0, 0.5])


def test_sosfilt_is_scipys_from_rest_and_from_the_first_samples_steady_state():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3000, 4)).cumsum(axis=0) + 30.0
    for order, fc in [(1, 10.0), (2, 100.0), (4, 14.1), (7, 60.0), (4, 2000.0)]:
        sos = bw.butterworth(order, fc, 5000.0)
        ref = signal.sosfilt(sos, x, axis=0)
        np.testing.assert_allclose(bw.sosfilt(sos, x), ref, rtol=0, atol=1e-11 * abs(ref).max())
        zi = signal.sosfilt_zi(sos)[:, :, None] * x[0]
        ref, _ = signal.sosfilt(sos, x, axis=0, zi=zi)
        got = bw.sosfilt(sos, x, steady=True)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * abs(ref).max())


@pytest.mark.parametrize("shape", [(4000,), (4000, 3), (4000, 2, 5)])
def test_sosfiltfilt_is_scipys_for_every_column(shape):
    """Any trailing shape; within 1e-9 of the largest value down to a cut-off of 1/10000 of the
    rate (where SciPy's own error is 1e-10: ``test_sosfiltfilt_is_exact_to_round_off``)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).cumsum(axis=0)
    for order, fc in [(1, 10.0), (3, 50.0), (4, 0.5), (4, 14.1), (5, 6.06), (8, 300.0)]:
        sos = bw.butterworth(order, fc, 5000.0)
        ref = signal.sosfiltfilt(sos, x, axis=0)
        got = bw.sosfiltfilt(sos, x)
        assert got.shape == shape
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * abs(ref).max())
        last = bw.sosfiltfilt(sos, np.moveaxis(x, 0, -1), axis=-1)
        np.testing.assert_array_equal(np.moveaxis(last, -1, 0), got)
        single = sos.astype(np.float32)  # the sections' values, whatever their dtype
        np.testing.assert_array_equal(bw.sosfiltfilt(single, x), bw.sosfiltfilt(
            single.astype(np.float64), x))  # fmt: skip


def _exact_filtfilt(sos, x):
    """Zero-phase filtering of ``x (N,)`` in 50-digit decimal arithmetic: odd extension by
    ``3 (2 n_sections + 1)`` samples, each section's direct form I forward then backward,
    each pass from the steady state of its first sample (the exact DC gains)."""
    import decimal

    ctx = decimal.Context(prec=50)
    D = ctx.create_decimal_from_float
    S = [[D(float(c)) for c in row] for row in sos]
    first_order = min(sum(r[2] == 0 for r in S), sum(r[5] == 0 for r in S))
    pad = 3 * (2 * len(S) + 1 - first_order)
    v = [D(float(e)) for e in x]
    two = D(2.0)
    v = [two * v[0] - v[i] for i in range(pad, 0, -1)] + v
    v = v + [two * v[-1] - v[-1 - i] for i in range(1, pad + 1)]

    def one_pass(u):
        for b0, b1, b2, _, a1, a2 in S:
            y_ss = u[0] * (b0 + b1 + b2) / (1 + a1 + a2)
            ym1 = ym2 = y_ss
            um1 = um2 = u[0]
            y = []
            for un in u:
                yn = b0 * un + b1 * um1 + b2 * um2 - a1 * ym1 - a2 * ym2
                y.append(yn)
                um2, um1, ym2, ym1 = um1, un, ym1, yn
            u = y
        return u

    with decimal.localcontext(ctx):
        y = one_pass(one_pass(v)[::-1])[::-1]
    return np.array([float(e) for e in y[pad:-pad]])


@pytest.mark.parametrize("n", [40, 97, 333])
def test_sosfiltfilt_is_exact_to_round_off(n):
    """Within 1e-14 of the largest value of a 50-digit decimal filtering, for cut-offs from
    1e-4 of the rate (poles within 1e-4 of 1, by blocks) to a quarter of it, orders 1-8,
    lengths that end blocks anywhere, every ``keep``; SciPy's ``sosfiltfilt`` is up to 1e-10
    off at the low end (its initial states, ``sosfilt_zi``, lose the digits that ``1 + a₁ +
    a₂`` cancels). Above a quarter of the rate up to 1e-5 below Nyquist (poles near −1, the
    per-column recursion): within 10 times SciPy's own distance to the exact result."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, n)).cumsum(axis=1) + 50.0
    for order, fc in [(1, 10.0), (2, 0.5), (4, 0.5), (4, 14.1), (5, 6.06), (8, 1200.0),
                      (8, 2200.0), (2, 2499.5), (4, 2499.95)]:  # fmt: skip
        sos = bw.butterworth(order, fc, 5000.0)
        ref = np.stack([_exact_filtfilt(sos, row) for row in x])
        tol = 1e-14 * abs(ref).max()
        if fc > 1250.0:  # poles left of the imaginary axis: the recursion, SciPy's accuracy
            tol = max(tol, 10 * abs(signal.sosfiltfilt(sos, x, axis=1) - ref).max())
        for keep in (slice(None), slice(3, n - 2, 7), slice(1, None, 35), slice(0, n, 97)):
            got = bw.sosfiltfilt(sos, x, axis=-1, keep=keep)
            np.testing.assert_allclose(got, ref[:, keep], rtol=0, atol=tol,
                                       err_msg=f"{order} {fc} {keep}")  # fmt: skip


def test_sosfiltfilt_in_groups_and_chunks_is_the_same_filter(monkeypatch):
    """Rows filtered a few at a time and blocks a few per chunk (the memory bounds) agree
    with one pass over everything, for decimation steps that are multiples, divisors or
    neither of the block size."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 5003)).cumsum(axis=1)
    sos = bw.butterworth(4, 14.1, 5000.0)
    for step in (1, 3, 35, 64, 97, 200):
        keep = slice(100, 4900, step)
        whole = bw.sosfiltfilt(sos, x, axis=-1, keep=keep)
        np.testing.assert_allclose(whole, bw.sosfiltfilt(sos, x, axis=-1)[:, keep], rtol=0,
                                   atol=1e-14 * abs(whole).max())  # fmt: skip
        with monkeypatch.context() as m:
            m.setattr(bw, "_GROUP_BYTES", 3 * 8 * 5200)
            m.setattr(bw, "_CHUNK_BYTES", 2 * 8 * 3 * 40)
            parts = bw.sosfiltfilt(sos, x, axis=-1, keep=keep)
        np.testing.assert_allclose(parts, whole, rtol=0, atol=1e-14 * abs(whole).max())


def test_bad_designs_and_short_signals_are_refused():
    with pytest.raises(ValueError, match="order"):
        bw.butterworth(0, 10.0, 1000.0)
    with pytest.raises(ValueError, match="order"):
        bw.butterworth(2.0, 10.0, 1000.0)  # pyright: ignore[reportArgumentType]
    for fc in (0.0, 500.0, 600.0, float("nan")):
        with pytest.raises(ValueError, match="cutoff"):
            bw.butterworth(4, fc, 1000.0)
    sos = bw.butterworth(4, 10.0, 1000.0)
    with pytest.raises(ValueError, match="more than 15 samples"):
        bw.sosfiltfilt(sos, np.zeros(15))
    with pytest.raises(ValueError, match="axis: expected 0 or -1, got 1"):
        bw.sosfiltfilt(sos, np.zeros((100, 2, 3)), axis=1)
    for keep in ([1, 2], slice(None, None, -1), slice(0, 10, 0)):
        with pytest.raises(ValueError, match="keep: expected a slice with a positive step"):
            bw.sosfiltfilt(sos, np.zeros(100), keep=keep)  # pyright: ignore[reportArgumentType]


def test_edge_is_where_the_impulse_response_tail_falls_below_its_share():
    """``tail_samples`` against SciPy's impulse response over a window ten times as long as
    the slowest pole's 60 time constants: the same count for orders 1-10 and cut-offs from
    1e-4 of the rate to just below Nyquist (where the poles near ``z = −1`` ring longest)."""
    from spatialjax.identification.logs.preprocess import tail_samples

    for order in (1, 2, 4, 7, 10):
        for share in (1e-4, 3e-3, 0.05, 0.3, 0.45, 0.499):
            sos = signal.butter(order, share * 1000.0, fs=1000.0, output="sos")
            slowest = np.max(np.abs(np.concatenate([np.roots(s[3:]) for s in sos])))
            impulse = np.zeros(int(600 / -np.log(slowest)) + 1000)
            impulse[0] = 1.0
            rest = np.cumsum(np.abs(signal.sosfilt(sos, impulse))[::-1])[::-1]
            ref = int(np.flatnonzero(rest <= 1e-6 * rest[0])[0])
            assert tail_samples(1000.0, share * 1000.0, order, 1e-6) == ref, (order, share)
            assert ref > 0
