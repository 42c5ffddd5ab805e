"""The low-pass cut-off and decimation of a robot log: ``choose_filter``.

The lowest Butterworth cut-off above the trajectory's band (Welch spectrum of
the positions, rad or m, each joint's over its moving span, and a floating base's
pose) whose predicted parameter bias is within 0.01 % of the least, raised for the
filter's edges; the band ends at the spectrum's knee or, for a smooth motion without
one, where all but ``BAND_TAIL`` of the acceleration power above the noise lies.
Decimation keeps the new Nyquist frequency at least ``NYQUIST_MARGIN`` (5) times the
cut-off. Derivation: docs page ``identification-methods.md#filter-choice``
(``#why-filter``, ``#filter-rule``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ..errors import IdentifyError, IdentifyTypeError
from .preprocess import edge_samples, uniform_rate
from .robot_log import RobotLog

__all__ = ["FilterChoice", "choose_filter"]

#: The trajectory's band ends at the last bin standing this factor above every bin beyond it.
KNEE = 10.0
#: Relative parameter bias accepted above the least, for a lower cut-off.
TOLERANCE = 1e-4
#: Fraction of every filtered part that must remain after the filter's edges.
MIN_KEPT = 0.25
#: Automatic decimation keeps the new Nyquist frequency at least this factor above the cut-off
#: (ten samples per period of the cut-off).
NYQUIST_MARGIN = 5.0
#: Highest candidate cut-off, as a fraction of the sample rate.
MAX_LOWPASS = 0.45
#: Highest frequency of the spectrum used, as a fraction of the sample rate.
MAX_BIN = 0.4
#: The trajectory's band holds all but this fraction of its acceleration power above the noise
#: floor (the criterion for a smooth trajectory, whose spectrum has no knee).
BAND_TAIL = 1e-3
#: Bins above this fraction of the sample rate give the noise floor of the band criterion.
FLOOR_FROM = 0.2
#: Names of a floating base's pose channels in the analysis (position, then the quaternion).
BASE_CHANNELS = ("base x", "base y", "base z", "base qw", "base qx", "base qy", "base qz")
#: Number of log-spaced candidate cut-offs.
N_CANDIDATES = 96
#: Fewest samples for a spectrum (Welch segments of a quarter of them at most).
MIN_SAMPLES = 64
#: Length of the windows that find each joint's moving span, s.
REST_WINDOW = 0.25
#: A window whose position variance is below this fraction of the joint's largest is rest.
REST_POWER = 1e-3


@dataclasses.dataclass(frozen=True)
class FilterChoice:
    """The low-pass cut-off and decimation for a log.

    What [choose_filter][spatialjax.identification.choose_filter] returns.

    Attributes:
      lowpass: Butterworth cut-off in Hz, or None for no low-pass.
      decimate: keep every ``decimate``-th sample after filtering (1 without
        a low-pass).
      automatic: True when the cut-off was chosen from the data, False when
        it was given.
      reason: one line saying what was chosen and why, for the stage output.
      details: JSON-able measurements behind the choice: the rate, the
        signal analysed (``"q"`` or ``"dq"``), per joint the band edge, whether
        it moves, its moving span ``[t_first, t_last]`` in s (its spectrum's
        samples), noise floor, resolution and predicted parameter bias, the
        least bias and
        where it lies, the lowest cut-off the parts' lengths allow, the bias
        curve ``[[f_c, b], ...]`` and the rule's constants.
    """

    lowpass: float | None
    decimate: int
    automatic: bool
    reason: str
    details: dict

    def to_dict(self) -> dict:
        """JSON-able fields."""
        return {
            "lowpass": self.lowpass,
            "decimate": self.decimate,
            "automatic": self.automatic,
            "reason": self.reason,
            "details": self.details,
        }


# ------------------------------------------------------------------------------ arguments
def check_lowpass(lowpass):
    if lowpass is None or (isinstance(lowpass, str) and lowpass == "auto"):
        return lowpass
    if isinstance(lowpass, str):
        raise IdentifyError(
            "lowpass", f"expected 'auto', None or a cut-off frequency in Hz, got {lowpass!r}"
        )
    if isinstance(lowpass, bool) or not isinstance(lowpass, (int, float, np.integer, np.floating)):
        raise IdentifyTypeError(
            "lowpass",
            f"expected 'auto', None or a cut-off frequency in Hz (a number), got "
            f"{type(lowpass).__name__} {lowpass!r}",
        )
    if not (math.isfinite(lowpass) and lowpass > 0):
        raise IdentifyError("lowpass", f"expected a cut-off frequency > 0 in Hz, got {lowpass!r}")
    return float(lowpass)


def check_decimate(decimate):
    if isinstance(decimate, str) and decimate == "auto":
        return decimate
    if isinstance(decimate, bool) or not isinstance(decimate, (int, np.integer)):
        raise (IdentifyError if isinstance(decimate, str) else IdentifyTypeError)(
            "decimate",
            f"expected 'auto' or an integer >= 1, got {type(decimate).__name__} {decimate!r}",
        )
    if decimate < 1:
        raise IdentifyError("decimate", f"expected 'auto' or an integer >= 1, got {decimate!r}")
    return int(decimate)


def _check_parts(parts) -> list[int]:
    if isinstance(parts, (str, bytes)) or not isinstance(parts, Sequence):
        raise IdentifyTypeError("parts", f"expected a sequence of sample counts, got {parts!r}")
    out = []
    for k, n in enumerate(parts):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise IdentifyError(f"parts[{k}]", f"expected a sample count >= 2, got {n!r}")
        out.append(int(n))
    return out


def _auto_decimate(rate: float, lowpass: float | None) -> int:
    if lowpass is None:
        return 1
    return max(1, int(math.floor(rate / (2.0 * NYQUIST_MARGIN * lowpass) + 1e-9)))


# ------------------------------------------------------------------------------ spectrum
def grid_step(x: np.ndarray) -> float | None:
    """The step of the grid the values of ``x`` lie on, or None when they lie on none.

    The smallest gap between distinct values, accepted when 99 % of the values are
    multiples of it (within 1 % of a step) and it is at most ``1e-2`` of their range.
    """
    u = np.unique(np.asarray(x, np.float64))
    if u.size < 3:
        return None
    span = float(u[-1] - u[0])
    gaps = np.diff(u)
    gaps = gaps[gaps > 1e-9 * float(np.max(np.abs(u)))]
    if gaps.size == 0:
        return None
    step = float(gaps.min())
    if not step <= 1e-2 * span:
        return None
    r = (u - u[0]) / step
    if np.mean(np.abs(r - np.round(r)) < 1e-2) < 0.99:
        return None
    return step


def _welch(a: np.ndarray, rate: float):
    from .spectra import welch

    N = a.shape[0]
    nper = int(2 ** math.floor(math.log2(N / 4)))
    # no detrending: the mean of a segment of a blue (differenced) signal is its edges' noise
    f, P = welch(a, rate, nper)
    return f, P, nper


def _band_edge(R: np.ndarray, f: np.ndarray) -> float:
    """Highest ``f`` where ``R`` stands `KNEE` above every bin beyond it (0: none)."""
    beyond = np.maximum.accumulate(R[::-1])[::-1]  # beyond[k] = max R[k:]
    ceiling = np.append(beyond[1:], 0.0)  # max R[k+1:]
    k = np.flatnonzero((R >= KNEE * ceiling) & (f <= 0.5 * f[-1]))  # an octave beyond, at least
    return float(f[k[-1]]) if k.size else 0.0


def _gain(order: int, fc: float, rate: float, f: np.ndarray) -> np.ndarray:
    """``G = |H(f)|²`` of the digital Butterworth at ``fc``: ``sosfiltfilt``'s amplitude gain."""
    from .butterworth import butterworth, power_gain

    return power_gain(butterworth(order, fc, rate), f, rate)


def _lowest_for_parts(rate: float, order: int, shortest: int, f_hi: float) -> float | None:
    """Lowest cut-off whose 4 edges leave `MIN_KEPT` of ``shortest`` samples (None: none)."""
    allowed = (1.0 - MIN_KEPT) * shortest / 4.0

    def fits(fc: float) -> bool:
        return edge_samples(rate, fc, order) <= allowed

    if not fits(f_hi):
        return None
    # the edge (less the 2 gradient samples) scales as 1 / lowpass: bracket, then bisect
    ref = f_hi / 8.0
    guess = ref * max(edge_samples(rate, ref, order) - 2, 1) / max(allowed - 2, 1e-3)
    lo, hi = guess / 2.0, min(2.0 * guess, f_hi)
    while not fits(hi):
        lo, hi = hi, min(2.0 * hi, f_hi)
    while fits(lo) and lo > 1e-6 * rate:
        lo, hi = lo / 2.0, lo
    for _ in range(40):
        if hi / lo < 1.001:
            break
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def base_pose_channels(log: RobotLog) -> np.ndarray | None:
    """``(N, 7)`` a floating-base log's pose as the pipeline differentiates it twice: the
    position and the quaternion (signs made continuous), or None (a fixed base, or a log with
    velocities: then only the joints' are analysed)."""
    if log.base_position is None or log.base_quaternion is None or log.dq is not None:
        return None
    quat = np.array(log.base_quaternion, np.float64)
    flip = np.cumsum(np.sum(quat[1:] * quat[:-1], axis=1) < 0) % 2 == 1
    quat[1:][flip] *= -1.0
    return np.concatenate([np.asarray(log.base_position, np.float64), quat], axis=1)


def _band_by_power(R: np.ndarray, P: np.ndarray, Dp: np.ndarray, f: np.ndarray,
                   rate: float, quantum: float = 0.0) -> float:  # fmt: skip
    """Lowest ``f`` beyond which the trajectory holds at most `BAND_TAIL` of its acceleration
    power (0: none). The trajectory: the bins from the lowest up to the first where ``R``
    no longer stands `KNEE` above the noise floor (the median of the bins beyond
    ``FLOOR_FROM f_s``, or the quantisation floor ``quantum`` when higher), less that floor;
    isolated lines above it (a quantised slow motion's harmonics, vibration) do not count."""
    top = f > FLOOR_FROM * rate
    if not top.any():
        return 0.0
    floor = max(float(np.median(R[top])), quantum)
    above = (R >= KNEE * floor) & ~top
    stop = int(np.argmin(above)) if not above.all() else above.size
    sig = np.where(np.arange(R.size) < stop, P - floor * Dp, 0.0)
    total = float(sig.sum())
    if not total > 0:
        return 0.0
    tail = np.cumsum(sig[::-1])[::-1]  # tail[k] = power at f[k] and beyond
    beyond = np.append(tail[1:], 0.0)
    return float(f[np.flatnonzero(beyond <= BAND_TAIL * total)[0]])


def _analyse_spectra(log: RobotLog, rate: float):
    """Per-channel spectra, band edges, noise and signal (``#filter-rule``): the joints,
    then a floating base's pose (``base_pose_channels``)."""
    h = 1.0 / rate
    base = base_pose_channels(log)
    if log.dq is None:
        x, p, source = log.q, 2, "q"
        if base is not None:
            x = np.concatenate([np.asarray(x, np.float64), base], axis=1)
        a = np.gradient(np.gradient(x, log.t, axis=0), log.t, axis=0)
    else:
        x, p, source = log.dq, 1, "dq"
        a = np.gradient(log.dq, log.t, axis=0)
    # without the one-sided differences at the ends; each channel over its moving span
    spans = moving_spans(x if log.dq is None else log.q, rate)
    f, P, nper = _span_spectra(a[2:-2], rate, np.clip(spans - 2, 0, a.shape[0] - 4))
    keep = (f > 0) & (f <= MAX_BIN * rate)
    f, P = f[keep], P[keep]
    Dp = ((np.sin(2 * np.pi * f * h) / h) ** 2) ** p
    R = P / Dp[:, None]
    n = x.shape[1]
    fb = np.zeros(n)
    floor = np.zeros(n)
    res: list[float | None] = []
    for j in range(n):
        step = grid_step(x[:, j]) if j < log.q.shape[1] else None
        quantum = 0.0 if step is None else step**2 / 6.0 / rate
        fb[j] = max(_band_edge(R[:, j], f), _band_by_power(R[:, j], P[:, j], Dp, f, rate, quantum))
        beyond = f > fb[j]
        floor[j] = float(np.median(R[beyond, j])) if beyond.any() else 0.0
        res.append(step)
        if step is not None:  # quantisation noise: variance Δ²/12, white to f_s/2
            floor[j] = max(floor[j], step**2 / 6.0 / rate)
    below = f[:, None] <= fb[None, :]
    N = np.where(below, floor[None, :] * Dp[:, None], P)
    S = np.where(below, np.maximum(P - N, 0.0), 0.0)
    return {
        "source": source,
        "p": p,
        "f": f,
        "S": S,
        "N": N,
        "band_edge": fb,
        "floor": floor,
        "resolution": res,
        "nperseg": nper,
        "spans": spans,
    }


def moving_spans(q: np.ndarray, rate: float) -> np.ndarray:
    """``(n, 2)`` each joint's moving span ``[start, stop)`` in samples (module docstring).

    From the first to the last window of `REST_WINDOW` seconds in which the
    variance of ``q_j`` is at least `REST_POWER` of its largest window's;
    the whole log for a joint that never rests at an end, or when the log has
    fewer than four windows.
    """
    N, n = q.shape
    W = max(8, int(round(REST_WINDOW * rate)))
    spans = np.tile([0, N], (n, 1))
    nw = N // W
    if nw < 4:
        return spans
    var = q[: nw * W].reshape(nw, W, n).var(axis=1)  # (windows, joints)
    for j in range(n):
        live = var[:, j] >= REST_POWER * var[:, j].max()
        k0, k1 = int(np.argmax(live)), nw - int(np.argmax(live[::-1]))
        spans[j] = [k0 * W, N if k1 == nw else k1 * W]
    return spans


def _span_spectra(a: np.ndarray, rate: float, spans: np.ndarray):
    """``(f, P, nperseg)``: each joint's Welch spectrum over the segments inside its span;
    Welch's own over the whole of ``a`` when every span is the whole."""
    from .spectra import segment_spectra

    N, n = a.shape
    if np.all(spans[:, 0] == 0) and np.all(spans[:, 1] == N):
        return _welch(a, rate)
    shortest = max(int(np.min(spans[:, 1] - spans[:, 0])), N // 8, MIN_SAMPLES)
    nper = int(2 ** math.floor(math.log2(shortest / 4)))
    f, S = segment_spectra(a, rate, nper, nper // 2)
    start = np.arange(S.shape[-1]) * (nper - nper // 2)  # (segments,)
    P = np.empty(S.shape[:2])
    for j, (lo, hi) in enumerate(spans):
        overlap = np.minimum(start + nper, hi) - np.maximum(start, lo)
        inside = overlap >= nper
        if not inside.any():  # a span shorter than a segment: the segments most inside it
            inside = overlap >= overlap.max()
        P[:, j] = S[:, j, inside].mean(axis=-1)
    return f, P, nper


def _predicted_bias(an, order: int, rate: float, fc: float | None) -> np.ndarray:
    """Per-joint predicted relative parameter bias ``b_j`` at ``fc`` (``#filter-rule``)."""
    S, N = an["S"], an["N"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if fc is None:
            total = S.sum(axis=0)
            return np.where(total > 0, N.sum(axis=0) / total, np.inf)
        G = _gain(order, fc, rate, an["f"])[:, None]
        kept = (G**4 * S).sum(axis=0)
        b = (G**3 * (1 - G) * S + G**4 * N).sum(axis=0)
        return np.where(kept > 0, b / kept, np.inf)


# ------------------------------------------------------------------------------ the choice
def choose_filter(
    log: RobotLog,
    *,
    lowpass="auto",
    decimate="auto",
    order: int = 4,
    parts: Sequence[int] = (),
) -> FilterChoice:
    """The low-pass cut-off and decimation for identifying a robot from ``log``.

    A given value is checked and kept. ``"auto"`` reads them off the spectrum of
    the log's positions (velocities when it has ``dq``), each joint's over its moving
    span (its first to its last motion), and a floating base's pose: the lowest cut-off
    above the trajectory's band (its knee, or where all but 0.1 % of a smooth motion's
    acceleration power lies) whose predicted parameter bias is within 0.01 % of the
    least, raised until the filter's edges leave a quarter of the log and of each of
    ``parts``; the decimation keeps ``f_s / (2k) ≥ NYQUIST_MARGIN · f_c`` (5 f_c). Only
    ``log`` is read (pass the training part). Derivation: docs page
    ``identification-methods.md#filter-rule``.

    Args:
      log: a uniformly sampled [RobotLog][spatialjax.identification.RobotLog]
        ([resample_log][spatialjax.identification.resample_log] makes it so).
      lowpass: ``"auto"``, None (no low-pass: the raw derivatives), or a
        Butterworth cut-off in Hz, ``0 < lowpass < rate / (2·decimate)``.
      decimate: ``"auto"`` or an integer ``≥ 1`` (``> 1`` needs a low-pass).
      order: the Butterworth order the filter will use
        ([prepare_log][spatialjax.identification.prepare_log]'s `order`).
      parts: lengths in samples of the other parts the same filter will be
        applied to on their own (the held-out part, validation logs).

    Returns:
      [FilterChoice][spatialjax.identification.FilterChoice]: ``lowpass``,
      ``decimate``, whether the cut-off was chosen from the data, a one-line
      reason and the measured details.

    Raises:
      IdentifyTypeError: ``log`` is not a RobotLog; ``lowpass`` or ``decimate``
        of the wrong type (a bool is neither a frequency nor a factor); a
        ``TypeError`` too.
      IdentifyError: naming the argument (``.argument``): ``lowpass`` not
        ``"auto"``, None or a positive finite
        number, or at or above the Nyquist frequency (of the decimated rate);
        ``decimate`` below 1, or above 1 without a low-pass; ``order`` not a
        positive integer; a ``parts`` entry below 2; a log that is not
        uniformly sampled, or too short for a spectrum (fewer than 64
        samples) when the cut-off is chosen from it.

    Examples:
      >>> import numpy as np
      >>> from spatialjax.identification import RobotLog, choose_filter
      >>> t = np.arange(20000) / 1000.0  # 20 s at 1 kHz, a 0.5 Hz motion, 20-bit encoder
      >>> step = 2 * np.pi / 2**20
      >>> q = np.round(0.5 * np.sin(2 * np.pi * 0.5 * t)[:, None] / step) * step
      >>> c = choose_filter(RobotLog(t=t, q=q, tau=np.zeros_like(q)))
      >>> c.automatic, 0.5 < c.lowpass < 20, c.decimate == int(1000 // (10 * c.lowpass))
      (True, True, True)

    References:
      P. D. Welch, IEEE Trans. Audio Electroacoustics 15(2), 1967.
      M. Gautier, "Dynamic identification of robots with power model", ICRA 1997.
    """
    if not isinstance(log, RobotLog):
        raise IdentifyTypeError(
            "log", f"expected a RobotLog (load_log, simulate_log), got {type(log).__name__}"
        )
    lowpass = check_lowpass(lowpass)
    decimate = check_decimate(decimate)
    if isinstance(order, bool) or not (isinstance(order, (int, np.integer)) and order >= 1):
        raise IdentifyError("order", f"expected a positive integer, got {order!r}")
    part_sizes = _check_parts(parts)
    rate = uniform_rate(log.t)
    if lowpass is None:
        return _no_lowpass_given(decimate, rate)
    if lowpass != "auto":
        assert isinstance(lowpass, float)
        return _lowpass_given(lowpass, decimate, rate)
    return _automatic_choice(log, decimate, order, part_sizes, rate)


def _no_lowpass_given(decimate, rate: float) -> FilterChoice:
    """``lowpass=None``: no filter, no decimation (a decimation given above 1 raises)."""
    if decimate not in ("auto", 1):
        raise IdentifyError(
            "decimate",
            f"{decimate} without a low-pass would alias noise; give `lowpass` (below "
            f"{rate / 2.0 / decimate:g} Hz, the new Nyquist frequency) or `decimate` 1",
        )
    return FilterChoice(
        None,
        1,
        False,
        "no low-pass (given): q differentiated raw, no decimation",
        {"rate": rate, "given": {"lowpass": None, "decimate": decimate}},
    )


def _lowpass_given(lowpass: float, decimate, rate: float) -> FilterChoice:
    """A given cut-off, checked against the Nyquist frequency; the decimation given or derived."""
    nyquist = rate / 2.0
    k = _auto_decimate(rate, lowpass) if decimate == "auto" else int(decimate)
    if not lowpass < nyquist:
        raise IdentifyError(
            "lowpass",
            f"expected below {nyquist:g} Hz (the Nyquist frequency of a {rate:g} Hz log), got "
            f"{lowpass!r}",
        )
    if not lowpass < rate / (2 * k):
        raise IdentifyError(
            "decimate",
            f"{k} puts the Nyquist frequency at {rate / (2 * k):g} Hz, at or below the "
            f"`lowpass` cut-off {lowpass:g} Hz (log at {rate:g} Hz); decimate less",
        )
    how = (
        f"decimate {k} (the new Nyquist frequency {rate / (2 * k):.4g} Hz is at least "
        f"{NYQUIST_MARGIN:g}× the cut-off)"
        if decimate == "auto"
        else f"decimate {k} (given)"
    )
    return FilterChoice(
        lowpass,
        k,
        False,
        f"low-pass {lowpass:.4g} Hz (given), {how}",
        {"rate": rate, "given": {"lowpass": lowpass, "decimate": decimate}},
    )


def _measured_details(log: RobotLog, an, rate: float, order: int, names, moving) -> dict:
    """The JSON-able measurements every automatic choice reports, per joint and overall."""
    details: dict = {
        "rate": rate,
        "samples": log.n_samples,
        "signal": an["source"],
        "derivatives": an["p"],
        "welch_segment": an["nperseg"],
        "frequency_resolution": float(an["f"][0]),
        "joints": {},
        "rule": {
            "knee": KNEE,
            "tolerance": TOLERANCE,
            "min_kept": MIN_KEPT,
            "nyquist_margin": NYQUIST_MARGIN,
            "order": order,
        },
    }
    unit_std = math.sqrt(rate / 2.0)
    for j, name in enumerate(names):
        details["joints"][name] = {
            "band_edge": float(an["band_edge"][j]),
            "moving": bool(moving[j]),
            "moving_span": [
                float(log.t[an["spans"][j, 0]]),
                float(log.t[an["spans"][j, 1] - 1]),
            ],  # fmt: skip
            "noise_psd": float(an["floor"][j]),
            "noise_std": float(math.sqrt(an["floor"][j]) * unit_std),
            "resolution": an["resolution"][j],
        }
    return details


def _automatic_choice(log: RobotLog, decimate, order: int, part_sizes, rate: float):
    """``lowpass="auto"``: the cut-off of least predicted bias (``#filter-rule``, steps 1-4)."""
    if log.n_samples < MIN_SAMPLES:
        raise IdentifyError(
            "log",
            f"{log.n_samples} samples are too few to estimate its spectrum (at least "
            f"{MIN_SAMPLES}); give `lowpass` explicitly",
        )
    f_hi = MAX_LOWPASS * rate
    if decimate != "auto" and decimate > 1:
        f_hi = min(f_hi, rate / (2.0 * NYQUIST_MARGIN * decimate))
    an = _analyse_spectra(log, rate)
    fb = an["band_edge"]
    names = log.joint_names or tuple(f"joint {j}" for j in range(log.q.shape[1]))
    names = tuple(names) + BASE_CHANNELS[: fb.size - len(names)]
    shortest = min([log.n_samples, *part_sizes])
    f_parts = _lowest_for_parts(rate, order, shortest, f_hi)

    cands = np.geomspace(max(float(fb.max()), float(an["f"][0])), f_hi, N_CANDIDATES)
    if cands[0] >= f_hi:
        cands = np.array([f_hi])
    EJ = np.array([_predicted_bias(an, order, rate, float(c)) for c in cands])  # (C, n)
    e_none_j = _predicted_bias(an, order, rate, None)
    moving = (fb > 0) & np.isfinite(EJ).all(axis=0) & (EJ.min(axis=0) < 1.0)
    details = _measured_details(log, an, rate, order, names, moving)
    if not moving.any():
        details["lowest_for_parts"] = f_parts
        return FilterChoice(
            None,
            1,
            True,
            f"no low-pass: {an['source']} shows no trajectory above its noise on any joint "
            "(nothing to keep or remove)",
            details,
        )
    e = EJ[:, moving].mean(axis=1)
    e_none = float(e_none_j[moving].mean())
    i_min = int(np.argmin(e))
    # no filter is a candidate unless a decimation is given (it needs the anti-aliasing filter)
    e_min = float(e[i_min]) if decimate not in ("auto", 1) else min(float(e[i_min]), e_none)
    ok = np.flatnonzero(e <= e_min + TOLERANCE)
    fc_rule = float(cands[ok[0]]) if ok.size else None
    details.update(
        {
            "band_edge": float(fb[moving].max()),
            "least_bias": _finite_or_none(e_min),
            "least_bias_at": float(cands[i_min]) if float(e[i_min]) <= e_none else None,
            "bias_no_filter": _finite_or_none(e_none),
            "rule_cutoff": fc_rule,
            "lowest_for_parts": f_parts,
            "shortest_part": shortest,
            "bias_curve": [
                [float(c), _finite_or_none(x)] for c, x in zip(cands[::6], e[::6], strict=True)
            ],
        }
    )
    summary = (
        f"{an['source']}'s trajectory band ends near {details['band_edge']:.3g} Hz, "
        f"{_noise_text(an, moving, rate, an['source'])}"
    )
    if fc_rule is None or f_parts is None:
        why = (
            f"no cut-off below {f_hi:.4g} Hz keeps its band"
            if fc_rule is None
            else "the filter's edges would take more than three quarters of the shortest part "
            f"({shortest} samples) at any cut-off below {f_hi:.4g} Hz"
        )
        _per_joint_error(details, names, e_none_j)
        details["predicted_bias"] = _finite_or_none(e_none)
        return FilterChoice(None, 1, True, f"no low-pass: {summary}; {why}", details)
    return _cutoff_chosen(an, order, rate, decimate, fc_rule, f_parts, f_hi, names, moving,
                          details, summary)  # fmt: skip


def _cutoff_chosen(an, order, rate, decimate, fc_rule, f_parts, f_hi, names, moving, details,
                   summary) -> FilterChoice:  # fmt: skip
    """The rule's cut-off, raised where the parts need it (step 4), and the decimation (5)."""
    raised = f_parts > fc_rule
    fc = _round_up(max(fc_rule, f_parts))
    ej = _predicted_bias(an, order, rate, fc)
    _per_joint_error(details, names, ej)
    chosen_e = float(ej[moving].mean())
    details["predicted_bias"] = _finite_or_none(chosen_e)
    k = _auto_decimate(rate, fc) if decimate == "auto" else int(decimate)
    tail = (
        f"; raised from {fc_rule:.3g} Hz so the filter's edges leave a quarter of the shortest "
        f"part ({details['shortest_part']} samples)"
        if raised
        else ""
    )
    if decimate != "auto" and decimate > 1:
        tail += f"; at most {f_hi:.3g} Hz for decimate {decimate} (given)"
    reason = (
        f"low-pass {fc:.3g} Hz, decimate {k}: {summary}; {100 * chosen_e:.2g} % bias predicted "
        f"in what the accelerations carry{tail}"
    )
    return FilterChoice(fc, k, True, reason, details)


def _finite_or_none(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _per_joint_error(details: dict, names, ej) -> None:
    for j, name in enumerate(names):
        details["joints"][name]["predicted_bias"] = _finite_or_none(ej[j])


def _round_up(x: float) -> float:
    """``x`` rounded up to 3 significant digits."""
    d = 10.0 ** (math.floor(math.log10(x)) - 2)
    return float(f"{math.ceil(x / d - 1e-9) * d:.3g}")


def _noise_text(an, moving, rate: float, src: str) -> str:
    """``"its noise floor σ 2.7e-05 (steps of 9.6e-05 = 2π/2^16)"``: a summary over the joints."""
    sig = np.sqrt(an["floor"][moving] * rate / 2.0)
    lo, hi = float(sig.min()), float(sig.max())
    s = f"{lo:.2g}" if f"{lo:.2g}" == f"{hi:.2g}" else f"{lo:.2g}–{hi:.2g}"
    steps = [r for r, m in zip(an["resolution"], moving, strict=True) if m and r is not None]
    extra = ""
    if steps and len(steps) == int(moving.sum()):
        step = float(np.median(steps))
        bits = math.log2(2 * math.pi / step)
        extra = (
            f"; steps of {step:.2g}"
            + (f" = 2π/2^{round(bits)}" if abs(bits - round(bits)) < 0.05 else "")
            if src == "q"
            else f"; steps of {step:.2g}"
        )
    return f"its noise floor σ {s}{extra}"
