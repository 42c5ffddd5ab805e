"""Power spectral densities of log columns by Welch's method, without ``scipy.signal``.

What ``scipy.signal.welch`` and ``scipy.signal.spectrogram`` compute with a periodic Hann
window, ``nperseg`` samples per segment, no detrending, one-sided density scaling
(``scaling="density"``, ``mode="psd"``) along the first axis (Welch, IEEE Trans. Audio
Electroacoustics 15(2), 1967): each segment's ``|FFT(w x)|² / (rate Σ w²)``, doubled but
at 0 Hz and Nyquist. The tests compare both with SciPy's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["segment_spectra", "welch"]


def segment_spectra(a: np.ndarray, rate: float, nperseg: int, noverlap: int):
    """``(f (F,), P (F, ..., K))``: the one-sided density of each of the ``K`` segments of
    ``nperseg`` samples, ``nperseg − noverlap`` apart, of ``a (N, ...)`` (``spectrogram``'s
    ``f`` and ``Sxx``)."""
    a = np.asarray(a, np.float64)
    step = nperseg - noverlap
    K = (a.shape[0] - noverlap) // step
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(nperseg) / nperseg)  # periodic Hann
    starts = np.arange(K) * step
    segments = a[starts[:, None] + np.arange(nperseg)]  # (K, nperseg, ...)
    shape = (1, nperseg) + (1,) * (a.ndim - 1)
    X = np.fft.rfft(segments * window.reshape(shape), axis=1)  # (K, F, ...)
    P = (X.real**2 + X.imag**2) / (rate * np.sum(window**2))
    if nperseg % 2:
        P[:, 1:] *= 2.0
    else:
        P[:, 1:-1] *= 2.0  # the Nyquist bin has no mirror image
    return np.fft.rfftfreq(nperseg, 1.0 / rate), np.moveaxis(P, 0, -1)


def welch(a: np.ndarray, rate: float, nperseg: int):
    """``(f (F,), P (F, ...))``: Welch's density of ``a (N, ...)``, segments overlapping by
    half (``scipy.signal.welch``'s default ``noverlap``), averaged."""
    f, P = segment_spectra(a, rate, nperseg, nperseg // 2)
    return f, P.mean(axis=-1)
