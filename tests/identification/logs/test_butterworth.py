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


def test_sosfilt_is_scipys_from_rest_and_from_a_state():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3000, 4)).cumsum(axis=0)
    for order, fc in [(1, 10.0), (2, 100.0), (4, 14.1), (7, 60.0)]:
        sos = bw.butterworth(order, fc, 5000.0)
        ref = signal.sosfilt(sos, x, axis=0)
        np.testing.assert_allclose(bw.sosfilt(sos, x), ref, rtol=0, atol=1e-11 * abs(ref).max())
        zi = rng.standard_normal((sos.shape[0], 2, 4))
        ref, _ = signal.sosfilt(sos, x, axis=0, zi=zi)
        np.testing.assert_allclose(bw.sosfilt(sos, x, zi), ref, rtol=0, atol=1e-11 * abs(ref).max())
        np.testing.assert_allclose(bw._initial_states(sos), signal.sosfilt_zi(sos), rtol=1e-13)


@pytest.mark.parametrize("shape", [(4000,), (4000, 3), (4000, 2, 5)])
def test_sosfiltfilt_is_scipys_for_every_column(shape):
    """Any trailing shape; within 1e-10 of the largest value down to a cut-off of 1/10000 of the
    rate (direct form I here, direct form II transposed in SciPy: round-off apart)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).cumsum(axis=0)
    for order, fc in [(1, 10.0), (3, 50.0), (4, 0.5), (4, 14.1), (5, 6.06), (8, 300.0)]:
        sos = bw.butterworth(order, fc, 5000.0)
        ref = signal.sosfiltfilt(sos, x, axis=0)
        got = bw.sosfiltfilt(sos, x)
        assert got.shape == shape
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10 * abs(ref).max())


@pytest.mark.parametrize("n", [3, 64, 65, 129, 1000, 4001])
def test_the_blocked_recursion_is_the_column_recursion(n):
    """From ``BLOCKED_COLUMNS`` columns the sections are solved by blocks of samples (BLAS
    ``dtrsm``): the same filter as SciPy's and as the per-column recursion, for lengths
    that leave a last block of 1, 64 or some samples, from rest and from a state."""
    rng = np.random.default_rng(2)
    k = bw.BLOCKED_COLUMNS + 3
    x = rng.standard_normal((n, k)).cumsum(axis=0)
    for order, fc in [(1, 10.0), (4, 14.1), (5, 2.0)]:
        sos = bw.butterworth(order, fc, 5000.0)
        zi = rng.standard_normal((sos.shape[0], 2, k))
        for state in (None, zi):
            ref = signal.sosfilt(sos, x, axis=0, **({} if state is None else {"zi": state}))
            ref = ref if state is None else ref[0]
            got = bw.sosfilt(sos, x, state)
            # the first columns alone take the per-column recursion (below BLOCKED_COLUMNS)
            alone = bw.sosfilt(sos, x[:, :4], None if state is None else state[..., :4])
            tol = 1e-11 * abs(ref).max()
            np.testing.assert_allclose(got, ref, rtol=0, atol=tol)
            np.testing.assert_allclose(got[:, :4], alone, rtol=0, atol=tol)
        if n > 33:  # sosfiltfilt's extension needs more than 3 (2 n_sections + 1) samples
            ref = signal.sosfiltfilt(sos, x, axis=0)
            np.testing.assert_allclose(bw.sosfiltfilt(sos, x), ref, rtol=0,
                                       atol=1e-10 * abs(ref).max())  # fmt: skip


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
