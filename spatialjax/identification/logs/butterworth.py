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
x_{k−1} + b₂ x_{k−2}`` (direct form I). ``sosfilt`` solves it section by section, column by
column (LAPACK ``dtbtrs``). ``sosfiltfilt`` runs the sections forward, then backward, over
the signal extended by odd reflection, each pass from the steady state of its first sample,
as SciPy's (Gustafsson's initial conditions; ``padlen = 3 (2 n_sections + 1)`` less the
sections of first order). Below a quarter of the rate it works on blocks of samples: each
block's outputs and end state are one matrix product of its inputs and the state entering it
(``_block_operator``), the states carried from block to block, and with decimation the
backward pass evaluates only the samples kept; there it stays within 1e-14 of the largest
value of an exact filtering down to a cut-off 1e-4 of the rate, where SciPy's is 1e-10 off.
Above (poles left of the imaginary axis; no decimation possible) it runs ``sosfilt``'s
recursion per column, from the same steady states.
"""

from __future__ import annotations

import functools
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


def sosfilt(sos: np.ndarray, x: np.ndarray, *, steady: bool = False) -> np.ndarray:
    """The sections ``sos`` applied in turn along the first axis of ``x (N, ...)``, from rest
    or, with ``steady``, from the steady state of a constant input equal to ``x[0]`` (each
    section's earlier inputs and outputs at their DC values, ``_dc_gains``).

    Each section is the unit lower-triangular banded system of its recursion, solved column
    by column (LAPACK ``dtbtrs``). Returns float64 of ``x``'s shape.
    """
    from scipy.linalg import get_lapack_funcs

    x = np.asarray(x, np.float64)
    shape = x.shape
    N = shape[0]
    y = np.asfortranarray(x.reshape(N, -1))
    u0 = y[0].copy()
    for (b0, b1, b2, _, a1, a2), gain in zip(sos, _dc_gains(sos), strict=True):
        rhs = b0 * y
        rhs[1:] += b1 * y[:-1]
        rhs[2:] += b2 * y[:-2]
        if steady:  # the terms of the samples before the first: inputs u0, outputs y0
            y0 = gain * u0
            rhs[0] += (b1 + b2) * u0 - (a1 + a2) * y0
            if N > 1:
                rhs[1] += b2 * u0 - a2 * y0
            u0 = y0
        band = np.empty((3, N), order="F")
        band[0], band[1], band[2] = 1.0, a1, a2
        (tbtrs,) = get_lapack_funcs(("tbtrs",), (band, rhs))
        y, info = tbtrs(band, rhs, uplo="L", diag="U", overwrite_b=1)
        if info != 0:  # pragma: no cover - a unit diagonal is never singular
            raise RuntimeError(f"dtbtrs failed (info={info})")
    return np.asarray(y).reshape(shape)


def sosfiltfilt(sos: np.ndarray, x: np.ndarray, *, axis: int = 0, keep: slice = slice(None)):
    """Zero-phase filtering of ``x`` along ``axis`` (0: samples first, -1: samples last):
    ``sos`` forward, then backward, over ``x`` extended by odd reflection (module docstring);
    only the samples ``keep`` of the result are computed and returned.

    Args:
      sos: second-order sections from ``butterworth``.
      x: the signals, ``N`` samples along ``axis``.
      axis: ``0`` or ``-1``.
      keep: the filtered samples returned, a slice with a positive step (decimation:
        the backward pass evaluates only these).

    Returns:
      float64, ``x``'s shape with ``len(range(*keep.indices(N)))`` samples along ``axis``.

    Raises:
      ValueError: ``axis`` not 0 or -1, ``keep`` not a slice with a positive step, ``N`` not
        above the extension's length.
    """
    x = np.asarray(x, np.float64)
    sos = np.asarray(sos, np.float64)
    if axis not in (0, -1) and not (x.ndim and axis == x.ndim - 1):
        raise ValueError(f"axis: expected 0 or -1, got {axis!r}")
    if not isinstance(keep, slice) or (keep.step is not None and keep.step < 1):
        raise ValueError(f"keep: expected a slice with a positive step, got {keep!r}")
    first_axis = axis == 0 or x.ndim == 1
    N = x.shape[0] if first_axis else x.shape[-1]
    pad = _padlen(sos)
    if N <= pad:
        raise ValueError(f"x: expected more than {pad} samples to filter, got {N}")
    if first_axis:
        rows = np.ascontiguousarray(x.reshape(N, -1).T)
    else:
        rows = np.ascontiguousarray(x.reshape(-1, N))
    out = _filtfilt_rows(sos, rows, keep)
    if first_axis:
        return np.ascontiguousarray(out.T).reshape((out.shape[1],) + x.shape[1:])
    return out.reshape(x.shape[:-1] + (out.shape[1],))


def _padlen(sos: np.ndarray) -> int:
    """SciPy's default ``padlen``: ``3 (2 n_sections + 1)`` less the first-order sections."""
    first_order = min(int(np.sum(sos[:, 2] == 0)), int(np.sum(sos[:, 5] == 0)))
    return 3 * (2 * sos.shape[0] + 1 - first_order)


#: samples per block of the zero-phase filter when nothing is decimated (``_block_size``)
_BLOCK = 32
#: bytes of the forward pass's output held at once: more columns are filtered in groups
_GROUP_BYTES = 128 << 20
#: bytes of one chunk of blocks' temporaries (they stay in cache and are reused)
_CHUNK_BYTES = 4 << 20


def _block_size(step: int) -> int:
    """Samples per block for keeping every ``step``-th output: a multiple of ``step`` (then
    each block holds the kept samples at the same offsets) or one of its divisors (a kept
    sample at the same offset in every ``step / B``-th block), near ``_BLOCK``."""
    if step <= _BLOCK:
        return step * -(-_BLOCK // step)
    divisors = [d for d in range(_BLOCK // 2, 2 * _BLOCK + 1) if step % d == 0]
    return min(divisors, key=lambda d: abs(d - _BLOCK)) if divisors else _BLOCK


def _filtfilt_rows(sos: np.ndarray, X: np.ndarray, keep: slice) -> np.ndarray:
    """``(k, n_keep)``: the zero-phase filtering of each row of ``X (k, N)``, at ``keep``.

    Blocks of ``B`` samples (``_block_operator``): the forward pass is one matrix product
    per chunk of blocks, then the states carried from block to block; the backward pass the
    same on the forward output, blocks in reverse, evaluating only the kept outputs. Both
    passes start from the steady state of their first sample (``_steady_state``); the
    backward one, whose first sample ends a block only by chance, sees that sample repeated
    to the block's end (the steady state is a fixed point of the filter).
    """
    k, N = X.shape
    pad, S = _padlen(sos), sos.shape[0]
    ns = 2 + 2 * S
    Ne = N + 2 * pad
    start, stop, step = keep.indices(N)
    idx = np.arange(start, stop, step) + pad  # kept samples, in the extended signal
    if k == 0 or idx.size == 0:
        return np.zeros((k, idx.size))
    if _left_poles(sos):
        # poles left of the imaginary axis (a cut-off above a quarter of the rate, so no
        # decimation): the blocks' states would drift (_block_operator); each column's
        # recursion instead, from the same steady states
        ext = np.empty((1, k, Ne))
        _extended_blocks(X, pad, 0, Ne, ext)  # the whole extended signal as one block
        y = sosfilt(sos, ext[0].T, steady=True)
        y = sosfilt(sos, y[::-1], steady=True)[::-1]
        return np.ascontiguousarray(y[idx].T)
    B = _block_size(step)
    nb = -(-Ne // B)
    Tout, Tst, H, A = _block_operator(sos.tobytes(), B)
    forward = np.concatenate([Tout, Tst]).T.copy()  # (B, B + ns): outputs, end state
    offsets, which = np.unique(idx % B, return_inverse=True)
    m = offsets.size
    rev = B - 1 - offsets  # the kept outputs' places in a block read backwards
    backward = np.concatenate([Tout[rev, ::-1], Tst[:, ::-1]]).T.copy()  # (B, m + ns)
    AT, HT, HkT = A.T.copy(), H.T.copy(), H[rev].T.copy()
    kg = min(k, max(1, _GROUP_BYTES // (8 * nb * B)))
    C = min(nb, max(1, _CHUNK_BYTES // (8 * kg * (B + ns))))
    y = np.empty((nb, kg, B))  # the forward pass's output, block-major
    xc, Z, Sg = np.empty((C, kg, B)), np.empty((C * kg, B + ns)), np.empty((C + 1, kg, ns))
    W = np.empty((nb, kg, m))
    out = np.empty((k, idx.size))
    for g0 in range(0, k, kg):
        Xg = X[g0 : g0 + kg]
        n_g = Xg.shape[0]
        # forward, chunks of C blocks: Z = the blocks' responses from rest and end states
        Sg[0, :n_g] = _steady_state(sos, 2 * Xg[:, 0] - Xg[:, pad])  # ext's first sample
        for c0 in range(0, nb, C):
            n = min(C, nb - c0)
            _extended_blocks(Xg, pad, c0 * B, B, xc[:n, :n_g])
            Zc = np.matmul(xc[:n, :n_g].reshape(n * n_g, B), forward, out=Z[: n * n_g])
            Zc = Zc.reshape(n, n_g, B + ns)
            _carry(Sg[:, :n_g], Zc[:, :, B:], AT, n)
            yc = y[c0 : c0 + n, :n_g]
            np.matmul(Sg[:n, :n_g], HT, out=yc)
            yc += Zc[:, :, :B]
            Sg[0, :n_g] = Sg[n, :n_g]
        # backward from the extended signal's last sample, repeated to the end of its block;
        # Sg in the order the blocks are processed (last first)
        last = (Ne - 1) % B
        y_end = y[nb - 1, :n_g, last].copy()
        y[nb - 1, :n_g, last + 1 :] = y_end[:, None]
        Sg[0, :n_g] = _steady_state(sos, y_end)
        for c1 in range(nb, 0, -C):
            c0 = max(0, c1 - C)
            n = c1 - c0
            Zc = np.matmul(y[c0:c1, :n_g].reshape(n * n_g, B), backward,
                           out=Z[: n * n_g, : m + ns])  # fmt: skip
            Zc = Zc.reshape(n, n_g, m + ns)
            _carry(Sg[:, :n_g], Zc[::-1, :, m:], AT, n)
            wc = W[c0:c1, :n_g]
            np.matmul(Sg[:n, :n_g][::-1], HkT, out=wc)
            wc += Zc[:, :, :m]
            Sg[0, :n_g] = Sg[n, :n_g]
        out[g0 : g0 + n_g] = W[idx // B, :n_g, which].T
    return out


def _carry(S: np.ndarray, Zst: np.ndarray, AT: np.ndarray, n: int) -> None:
    """``S[j + 1] = S[j] Aᵀ + Zst[j]`` for ``j < n``: the state entering each block of a
    chunk from the one entering its first (``S[0]``) and each block's end state from rest."""
    for j in range(n):
        nxt = np.matmul(S[j], AT, out=S[j + 1])
        nxt += Zst[j]


def _extended_blocks(X: np.ndarray, pad: int, a: int, B: int, out: np.ndarray) -> None:
    """``out (n, k, B)``: samples ``a`` to ``a + n B`` of each row of ``X`` extended by ``pad``
    samples of odd reflection at each end (``2 x₀ − x_i`` before, ``2 x_{N−1} − x_{N−1−i}``
    after), zero past the extension, block-major."""
    n, k, _ = out.shape
    N = X.shape[1]
    lo, hi = a - pad, a - pad + n * B  # in X's samples
    if lo >= 0 and hi <= N:
        out[...] = X[:, lo:hi].reshape(k, n, B).transpose(1, 0, 2)
        return
    seg = np.zeros((k, n * B))
    i = np.arange(lo, hi)
    inside = (i >= 0) & (i < N)
    seg[:, inside] = X[:, i[inside]]
    front = (i < 0) & (i >= -pad)
    seg[:, front] = 2 * X[:, :1] - X[:, -i[front]]
    back = (i >= N) & (i < N + pad)
    seg[:, back] = 2 * X[:, -1:] - X[:, 2 * N - 2 - i[back]]
    out[...] = seg.reshape(k, n, B).transpose(1, 0, 2)


def _steady_state(sos: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """``(k, ns)``: the state (``_block_operator``'s basis) of the sections at rest under the
    constant input ``x0 (k,)``: each section's output its DC gain times its input.

    Gustafsson's initial conditions, as SciPy's ``sosfiltfilt`` (which solves for them,
    ``sosfilt_zi``), from ``_dc_gains``.
    """
    state = np.zeros((x0.shape[0], 2 + 2 * sos.shape[0]))
    state[:, 0] = x0
    total = 1.0
    for s, gain in enumerate(_dc_gains(sos)):
        total *= gain
        state[:, 2 + 2 * s] = total * x0  # (level, difference 0) of a constant
    return state


def _dc_gains(sos: np.ndarray) -> list:
    """Each section's gain at 0 Hz, ``(b₀ + b₁ + b₂) / (1 + a₁ + a₂)``: both sums exact
    (``_two_sum``) before the division, where a cut-off far below the rate cancels most
    digits of the second."""
    return [_exact_sum(b0, b1, b2) / _exact_sum(1.0, a1, a2) for b0, b1, b2, _, a1, a2 in sos]


def _left_poles(sos: np.ndarray) -> bool:
    """Whether a section's poles lie left of the imaginary axis (their sum ``−a₁`` below 0:
    a Butterworth cut-off above a quarter of the rate)."""
    return bool(np.any(-sos[:, 4] < 0))


def _exact_sum(a: float, b: float, c: float) -> float:
    """``a + b + c`` rounded once."""
    s, e = _two_sum(a, b)
    s, f = _two_sum(s, c)
    return s + (e + f)


# ------------------------------------------------- the block operator, in double-double
_SPLIT = 134217729.0  # 2^27 + 1 (Dekker's splitting)


def _two_sum(a, b):
    """``(s, e)``: ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _two_prod(a, c: float):
    """``(p, e)``: ``p = fl(a c)`` and ``a c = p + e`` exactly (Dekker)."""
    p = a * c
    t = _SPLIT * a
    ah = t - (t - a)
    t = _SPLIT * c
    ch = t - (t - c)
    return p, ((ah * ch - p) + ah * (c - ch) + (a - ah) * ch) + (a - ah) * (c - ch)


def _axpy(acc, c: float, x):
    """``acc + c x`` in double-double (``(hi, lo)`` pairs)."""
    p, e = _two_prod(x[0], c)
    s, t = _two_sum(acc[0], p)
    return _two_sum(s, t + acc[1] + e + c * x[1])


@functools.lru_cache(maxsize=16)
def _block_operator(sos_bytes: bytes, B: int):
    """``(T (B, B), Tst (ns, B), H (B, ns), A (ns, ns))`` of the sections ``sos`` over a block
    of ``B`` samples: with ``x`` the block's input and ``σ`` the state entering it, the
    outputs are ``T x + H σ`` and the state leaving it ``Tst x + A σ``.

    The state holds, for the input and each section's output ``v``, the pair ``(v[−1],
    v[−1] − v[−2])`` (level and difference; ``ns = 2 + 2 n_sections``). With poles near 1
    (a cut-off far below the rate) the plain pair ``(v[−1], v[−2])`` makes every block sum
    terms a block's length larger than its result, and the filter's gain drifts from
    block to block (1e-10 of the signal at a cut-off 1e-4 of the rate); in this basis the
    zero-phase filter stays within 1e-14 of an exact one (the tests'). Poles left of the
    imaginary axis (near −1 just below Nyquist) would drift the same way in any such
    basis: ``_filtfilt_rows`` does not use blocks for them. The entries are computed in
    double-double arithmetic (Dekker 1971) from the recursion of each section, then
    rounded once.
    """
    sos = np.frombuffer(sos_bytes).reshape(-1, 6)
    S = sos.shape[0]
    ns = 2 + 2 * S
    c = 1 + ns  # columns: a unit impulse at the block's first sample, then each state unit
    zero = np.zeros(c)

    def history(pair: int):
        """``(v[−2], v[−1])`` of a pair for every column: level unit ``v[−1] = v[−2] = 1``,
        difference unit ``v[−1] = 0, v[−2] = −1``."""
        v2, v1 = zero.copy(), zero.copy()
        v1[1 + 2 * pair] = v2[1 + 2 * pair] = 1.0
        v2[2 + 2 * pair] = -1.0
        return [(v2, zero), (v1, zero)]

    impulse = zero.copy()
    impulse[0] = 1.0
    u = history(0) + [(impulse, zero)] + [(zero, zero)] * (B - 1)
    sections = []
    for s, (b0, b1, b2, _, a1, a2) in enumerate(sos):
        y = history(1 + s)
        for n in range(B):
            acc = (zero, zero)
            for coef, v in ((b0, u[n + 2]), (b1, u[n + 1]), (b2, u[n]), (-a1, y[n + 1]),
                            (-a2, y[n])):  # fmt: skip
                acc = _axpy(acc, coef, v)
            y.append(acc)
        sections.append(y)
        u = y

    def level(v):
        return v[0] + v[1]

    def difference(v, w):
        s, e = _two_sum(v[0], -w[0])
        return s + (e + (v[1] - w[1]))

    out = np.array([level(v) for v in sections[-1][2:]])  # (B, c)
    T = np.zeros((B, B))
    for j in range(B):
        T[j:, j] = out[: B - j, 0]
    Tst = np.zeros((ns, B))
    Tst[0, B - 1] = Tst[1, B - 1] = 1.0
    Tst[1, B - 2] = -1.0
    A = np.zeros((ns, ns))  # the input's pair is the block's own last samples
    for s, y in enumerate(sections):
        Tst[2 + 2 * s] = [level(v)[0] for v in y[:1:-1]]
        Tst[3 + 2 * s] = [difference(v, w)[0] for v, w in zip(y[:1:-1], y[-2:0:-1], strict=True)]
        A[2 + 2 * s] = level(y[-1])[1:]
        A[3 + 2 * s] = difference(y[-1], y[-2])[1:]
    return T, Tst, out[:, 1:], A


def power_gain(sos: np.ndarray, f: np.ndarray, rate: float) -> np.ndarray:
    """``|H(e^{2πi f / rate})|²`` of ``sos`` at frequencies ``f`` Hz: ``sosfiltfilt``'s gain."""
    zinv = np.exp(-2j * np.pi * np.asarray(f, np.float64) / rate)
    h = np.ones(zinv.shape, complex)
    for b0, b1, b2, a0, a1, a2 in sos:
        h *= (b0 + zinv * (b1 + zinv * b2)) / (a0 + zinv * (a1 + zinv * a2))
    return np.abs(h) ** 2
