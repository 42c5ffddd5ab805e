"""The digital Butterworth low-pass of the log stages: design, zero-phase filtering, gain.

What ``scipy.signal.butter(order, cutoff, fs=rate, output="sos")``, ``sosfilt``,
``sosfiltfilt`` and ``sosfreqz`` compute for this filter, without importing
``scipy.signal`` (0.4-0.5 s of imports, a third of a warm ``spatialjax identify``).
The tests compare every function with SciPy's.

Design: the analog prototype's poles ``-exp(iπ m / 2n)``, ``m = 1 − n, 3 − n, …, n − 1``,
scaled to the pre-warped cut-off ``ω = 4 tan(π f_c / f_s)`` and mapped by the bilinear
transform ``z = (4 + s) / (4 − s)`` (sample time 1/2), every zero at ``z = −1``
(Oppenheim & Schafer, *Discrete-Time Signal Processing*, 3rd ed., §7.2). Second-order
sections as SciPy's ``zpk2sos`` pairs them: poles closest to the unit circle last, each with
the two remaining zeros nearest it (an odd order adds a pole and a zero at 0), the gain in
the first section.

Filtering: each section is the recursion ``y_k + a₁ y_{k−1} + a₂ y_{k−2} = b₀ x_k + b₁
x_{k−1} + b₂ x_{k−2}`` (direct form I), solved for all columns at once as a banded
lower-triangular system (LAPACK ``dtbtrs``, or with many columns BLAS ``dtrsm`` on blocks
of samples: ``_recursion``). ``sosfiltfilt`` runs it forward and
backward over the signal extended by odd reflection, from the steady state of its first
sample, as SciPy's (Gustafsson's initial conditions; ``padlen = 3 (2 n_sections + 1)``
less the sections of first order). Round-off differs from SciPy's direct form II
transposed: relative differences of 1e-13 (cut-off 1/350 of the rate) to 1e-11 (1/2500).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["butterworth", "sosfilt", "sosfiltfilt", "power_gain"]


def butterworth(order: int, cutoff: float, rate: float) -> np.ndarray:
    """``(ceil(order / 2), 6)`` second-order sections ``[b₀, b₁, b₂, 1, a₁, a₂]`` of the
    digital Butterworth low-pass of ``order`` with its −3 dB point at ``cutoff`` Hz, sampled
    at ``rate`` Hz (module docstring).

    Raises:
      ValueError: ``order`` not a positive integer, ``cutoff`` not in ``(0, rate / 2)``.
    """
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"order: expected a positive integer, got {order!r}")
    if not (0 < cutoff < rate / 2):
        raise ValueError(f"cutoff: expected 0 < cutoff < rate / 2 = {rate / 2:g} Hz, got {cutoff}")
    n = int(order)
    warped = 4.0 * math.tan(math.pi * cutoff / rate)
    s = -np.exp(1j * np.pi * np.arange(1 - n, n, 2) / (2 * n)) * warped  # analog poles
    gain = warped**n * np.real(1.0 / np.prod(4.0 - s))
    z = (4.0 + s) / (4.0 - s)  # digital poles
    poles = list(z[z.imag > 0])  # one of each conjugate pair
    if n % 2:
        poles.append(complex(z[np.argmin(np.abs(z.imag))].real))  # the real pole, with 0
    zeros = [-1.0] * n + [0.0] * (n % 2)
    rows = []
    for p in sorted(poles, key=abs, reverse=True):  # closest to the unit circle first
        pair = []
        for _ in range(2):  # the two zeros nearest the pole
            pair.append(zeros.pop(int(np.argmin([abs(p - q) for q in zeros]))))
        a = [1.0, -2.0 * p.real, abs(p) ** 2] if p.imag else [1.0, -p.real, 0.0]
        rows.append([1.0, -(pair[0] + pair[1]), pair[0] * pair[1]] + a)
    sos = np.array(rows[::-1])  # closest to the unit circle last
    sos[0, :3] *= gain
    return sos


def _initial_states(sos: np.ndarray) -> np.ndarray:
    """``(n_sections, 2)`` direct-form-II-transposed states of each section at rest under a
    unit step: ``(I − Aᵀ) z = b[1:] − a[1:] b₀`` with the section's input the previous
    sections' DC gain (``scipy.signal.sosfilt_zi``)."""
    zi = np.empty((sos.shape[0], 2))
    scale = 1.0
    for k, (b0, b1, b2, _, a1, a2) in enumerate(sos):
        M = np.array([[1.0 + a1, -1.0], [a2, 1.0]])
        zi[k] = scale * np.linalg.solve(M, np.array([b1 - a1 * b0, b2 - a2 * b0]))
        scale *= (b0 + b1 + b2) / (1.0 + a1 + a2)
    return zi


def sosfilt(sos: np.ndarray, x: np.ndarray, zi: np.ndarray | None = None) -> np.ndarray:
    """The sections ``sos`` applied in turn along the first axis of ``x (N, ...)``.

    ``zi (n_sections, 2, ...)``: each section's direct-form-II-transposed state before the
    first sample (SciPy's ``zi``; default: at rest). Returns float64 of ``x``'s shape.
    """
    x = np.asarray(x, np.float64)
    shape = x.shape
    N = shape[0]
    y = np.asfortranarray(x.reshape(N, -1))
    for k, (b0, b1, b2, _, a1, a2) in enumerate(sos):
        rhs = b0 * y
        rhs[1:] += b1 * y[:-1]
        rhs[2:] += b2 * y[:-2]
        if zi is not None:  # y₀ = b₀x₀ + z₁, y₁ + a₁y₀ = b₀x₁ + b₁x₀ + z₂
            state = np.asarray(zi[k], np.float64).reshape(2, -1)
            rhs[0] += state[0]
            if N > 1:
                rhs[1] += state[1]
        y = _recursion(rhs, a1, a2)
    return np.asarray(y).reshape(shape)


#: columns from which ``_recursion`` solves blocks of samples with ``dtrsm`` (below: one
#: ``dtbtrs`` recursion per column)
BLOCKED_COLUMNS = 64
#: samples per block of the blocked solve
_BLOCK_SAMPLES = 64


def _recursion(rhs: np.ndarray, a1: float, a2: float) -> np.ndarray:
    """``y (N, k)`` with ``y_n + a₁ y_{n−1} + a₂ y_{n−2} = rhs_n`` from rest, ``rhs`` Fortran
    order (overwritten).

    The unit lower-triangular banded system, solved column by column (LAPACK ``dtbtrs``:
    a scalar recursion per column) or, from ``BLOCKED_COLUMNS`` columns, block of samples
    by block (BLAS ``dtrsm`` on the block's dense triangle, all columns at once: the
    faster with many columns, ``benchmarks/README.md``), each block's first two equations
    taking the previous block's last two outputs. Both are forward substitution on the
    same equations (the block's zeros add nothing).
    """
    from scipy.linalg import get_blas_funcs, get_lapack_funcs

    N, k = rhs.shape
    if k < BLOCKED_COLUMNS:
        band = np.empty((3, N), order="F")
        band[0], band[1], band[2] = 1.0, a1, a2
        (tbtrs,) = get_lapack_funcs(("tbtrs",), (band, rhs))
        y, info = tbtrs(band, rhs, uplo="L", diag="U", overwrite_b=1)
        if info != 0:  # pragma: no cover - a unit diagonal is never singular
            raise RuntimeError(f"dtbtrs failed (info={info})")
        return y
    B = _BLOCK_SAMPLES
    L = np.asfortranarray(np.eye(B) + a1 * np.eye(B, k=-1) + a2 * np.eye(B, k=-2))
    (trsm,) = get_blas_funcs(("trsm",), (L, rhs))
    for s in range(0, N, B):
        e = min(s + B, N)
        r = np.array(rhs[s:e], order="F")
        if s:
            r[0] -= a1 * rhs[s - 1] + a2 * rhs[s - 2]
            if e - s > 1:
                r[1] -= a2 * rhs[s - 1]
        rhs[s:e] = trsm(1.0, L[: e - s, : e - s], r, lower=1, diag=1, overwrite_b=1)
    return rhs


def sosfiltfilt(sos: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Zero-phase filtering of ``x (N, ...)`` along its first axis: ``sos`` forward, then
    backward, over ``x`` extended by odd reflection (module docstring).

    Raises:
      ValueError: ``N`` not above the extension's length.
    """
    x = np.asarray(x, np.float64)
    first_order = min(int(np.sum(sos[:, 2] == 0)), int(np.sum(sos[:, 5] == 0)))
    pad = 3 * (2 * sos.shape[0] + 1 - first_order)
    N = x.shape[0]
    if N <= pad:
        raise ValueError(f"x: expected more than {pad} samples to filter, got {N}")
    ext = np.concatenate([2 * x[:1] - x[pad:0:-1], x, 2 * x[-1:] - x[-2 : -pad - 2 : -1]])
    zi = _initial_states(sos).reshape((sos.shape[0], 2) + (1,) * (x.ndim - 1))
    y = sosfilt(sos, ext, zi * ext[:1])
    y = sosfilt(sos, y[::-1], zi * y[-1:])
    return y[::-1][pad:-pad]


def power_gain(sos: np.ndarray, f: np.ndarray, rate: float) -> np.ndarray:
    """``|H(e^{2πi f / rate})|²`` of ``sos`` at frequencies ``f`` Hz: ``sosfiltfilt``'s gain."""
    zinv = np.exp(-2j * np.pi * np.asarray(f, np.float64) / rate)
    h = np.ones(zinv.shape, complex)
    for b0, b1, b2, a0, a1, a2 in sos:
        h *= (b0 + zinv * (b1 + zinv * b2)) / (a0 + zinv * (a1 + zinv * a2))
    return np.abs(h) ** 2
