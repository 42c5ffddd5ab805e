"""Effective number of independent samples in a time series: ``correlation_time``.

Sokal's automatic window (Sokal 1997); samples are rows, in time order. Derivation: docs page
``identification-methods.md#correlation-time``.
"""

from __future__ import annotations

import numpy as np

from ..errors import IdentifyError

#: Sokal's window constant ``c``: the sum of ``ρ(k)`` stops at the first ``M ≥ c τ̂(M)``.
WINDOW_C = 5.0


def correlation_time(x, *, window_c: float = WINDOW_C) -> np.ndarray:
    """Integrated autocorrelation time ``τ ≥ 1`` of each column of ``x``, in samples.

    ``N / τ`` is the column's effective number of independent samples. The column
    mean is removed first; a constant column has ``τ = 1``; the estimate is
    floored at 1.

    Args:
      x: ``(N,)`` or ``(N, n)`` finite samples in time order (rows), at least 2.
      window_c: Sokal's window constant ``c > 0``.

    Returns:
      NumPy float64 array: ``()`` for a 1-D ``x``, else ``(n,)``.

    Raises:
      ValueError: ``x`` not 1-D or 2-D, fewer than 2 samples, non-finite
        values, or ``window_c`` not a positive number.

    Examples:
      >>> import numpy as np
      >>> rng = np.random.default_rng(0)
      >>> e = rng.standard_normal(200_000)
      >>> x = np.empty_like(e); x[0] = e[0]
      >>> for k in range(1, e.size): x[k] = 0.9 * x[k - 1] + e[k]
      >>> bool(abs(correlation_time(x) - 19.0) < 1.5)  # (1 + 0.9) / (1 - 0.9)
      True

    References:
      A. D. Sokal, "Monte Carlo methods in statistical mechanics: foundations
      and new algorithms", Springer, 1997, §3.
    """
    a = np.asarray(x)
    if a.dtype.kind not in "fiu":
        raise IdentifyError("x", f"expected real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim not in (1, 2):
        raise IdentifyError("x", f"expected shape (N,) or (N, n), got {a.shape}")
    if a.shape[0] < 2:
        raise IdentifyError("x", f"expected at least 2 samples (rows), got {a.shape[0]}")
    if not np.all(np.isfinite(a)):
        k = int(np.flatnonzero(~np.isfinite(a).reshape(a.shape[0], -1).all(axis=1))[0])
        raise IdentifyError("x", f"expected finite values, sample {k} is not")
    if not (isinstance(window_c, (int, float)) and np.isfinite(window_c) and window_c > 0):
        raise IdentifyError("window_c", f"expected a number > 0, got {window_c!r}")
    cols = a.reshape(a.shape[0], -1)
    out = np.array([_tau_one(cols[:, j], float(window_c)) for j in range(cols.shape[1])])
    return out.reshape(()) if a.ndim == 1 else out


def _tau_one(x: np.ndarray, c: float) -> float:
    """Sokal's windowed estimate for one column (see ``correlation_time``)."""
    n = x.shape[0]
    x = x - x.mean()
    var = float(x @ x)
    if not var > 0:
        return 1.0
    f = np.fft.rfft(x, 2 * n)  # zero-padded: the linear, not circular, autocorrelation
    acf = np.fft.irfft(f * np.conj(f), 2 * n)[:n] / var
    taus = 2.0 * np.cumsum(acf) - 1.0  # τ̂(M) = 1 + 2 Σ_{k=1..M} ρ(k)
    lags = np.arange(n)
    ok = lags >= c * taus
    m = int(np.argmax(ok)) if ok.any() else n - 1
    return max(1.0, float(taus[m]))
