"""Welch's densities of the filter choice against SciPy's (``scipy.signal``, the oracle)."""

import numpy as np
import pytest
from scipy import signal

from spatialjax.identification.logs import spectra


@pytest.mark.parametrize(("N", "nperseg"), [(37500, 8192), (5000, 1024), (1001, 255), (4096, 4096)])
def test_welch_is_scipys(N, nperseg):
    a = np.random.default_rng(N).standard_normal((N, 3)).cumsum(axis=0)
    f_ref, P_ref = signal.welch(
        a, fs=1234.5, window="hann", nperseg=nperseg, axis=0,
        detrend=False,  # pyright: ignore[reportArgumentType]
    )  # fmt: skip
    f, P = spectra.welch(a, 1234.5, nperseg)
    np.testing.assert_array_equal(f, f_ref)
    assert P.shape == P_ref.shape
    np.testing.assert_allclose(P, P_ref, rtol=0, atol=1e-13 * P_ref.max())


@pytest.mark.parametrize("nperseg", [256, 255])
def test_segment_spectra_are_scipys_spectrogram(nperseg):
    a = np.random.default_rng(2).standard_normal((3000, 2, 2))
    f_ref, _, S_ref = signal.spectrogram(
        a, fs=500.0, window="hann", nperseg=nperseg, noverlap=nperseg // 2, axis=0,
        scaling="density", mode="psd", detrend=False,  # pyright: ignore[reportArgumentType]
    )  # fmt: skip
    f, S = spectra.segment_spectra(a, 500.0, nperseg, nperseg // 2)
    np.testing.assert_array_equal(f, f_ref)
    assert S.shape == S_ref.shape  # (frequencies, ..., segments)
    np.testing.assert_allclose(S, S_ref, rtol=0, atol=1e-13 * S_ref.max())


def test_white_noise_density_is_its_variance_over_half_the_rate():
    """Parseval: unit-variance white noise sampled at ``r`` has the one-sided density ``2 / r``."""
    a = np.random.default_rng(3).standard_normal((200000, 1))
    f, P = spectra.welch(a, 100.0, 1024)
    np.testing.assert_allclose(P[1:-1].mean(), 2.0 / 100.0, rtol=0.02)
