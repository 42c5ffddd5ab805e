"""Torque channels of a log checked against the prior: signal, scale, sign and swaps.

Each joint's measured torque (N·m or N, the log's joint order) is compared with
the prior's prediction on the same filtered samples, after the joint's own
friction and armature columns. Derivation: docs page
``identification-methods.md#channel-checks``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .correlation import correlation_time

#: A channel varying by fewer than this many steps of its resolution carries no signal.
MIN_STEPS = 10.0
#: Scale (measured / predicted) beyond which a channel is flagged, either way.
SCALE_LIMIT = 3.0
#: Standard errors on each side of a slope (a two-sided 99.7 % interval for a normal estimate).
Z_SCORE = 3.0
#: Share of the prediction's energy above a quarter of the sampling rate that marks it as noise.
NOISE_SHARE = 0.25
#: Factor by which a swap must cut the unexplained variance (geometric mean over the pair).
SWAP_FACTOR = 2.0

#: The verdicts of the scale and sign check.
VERDICTS = ("agrees", "scale", "sign", "not judged")

_INF = float("inf")


@dataclasses.dataclass(frozen=True)
class ChannelCheck:
    """What the checks found on one torque channel.

    Attributes:
      joint: the joint's name.
      std: standard deviation of the raw measured torque.
      resolution: the smallest difference between two distinct raw values
        (``0.0`` for an unquantised channel).
      signal: False when the channel is constant or varies by fewer than
        ``MIN_STEPS`` resolution steps.
      scale: ``k``, the forward slope of the measured on the predicted torque
        after the joint's friction; NaN when the prior predicts no torque.
      rms_ratio: ``rms(τ_j) / rms(τ̂_j)`` (NaN when the prediction is zero).
      excluded: whether the channel is left out of the data term.
      reason: why it is excluded, or None.
      explained: ``R²``, the fraction of the channel's variance after friction
        that the prediction explains (NaN for a constant channel).
      scale_interval: ``(low, high)``, the interval ``K`` of scales the data
        allow (``±inf`` where unbounded).
      scale_reverse: ``k_r``, the reverse slope (NaN where undefined).
      effective_samples: ``N / τ`` behind the forward slope's standard error.
      noise_share: share of the prediction's energy above a quarter of the
        sampling rate (after friction).
      verdict: ``"agrees"``, ``"scale"`` (more than ``SCALE_LIMIT`` off),
        ``"sign"`` or ``"not judged"``.
      swapped_with: the joint whose channel this one looks swapped with, or None.
      swap_explained: the fraction of this channel's variance that the
        partner's prediction explains (NaN without a partner).
    """

    joint: str
    std: float
    resolution: float
    signal: bool
    scale: float
    rms_ratio: float
    excluded: bool
    reason: str | None
    explained: float = float("nan")
    scale_interval: tuple[float, float] = (-_INF, _INF)
    scale_reverse: float = float("nan")
    effective_samples: float = float("nan")
    noise_share: float = float("nan")
    verdict: str = "not judged"
    swapped_with: str | None = None
    swap_explained: float = float("nan")

    @property
    def judged(self) -> bool:
        """The data decide the scale and sign (``verdict`` is not ``"not judged"``)."""
        return self.verdict != "not judged"

    @property
    def scale_flagged(self) -> bool:
        """The sign is wrong or the scale more than ``SCALE_LIMIT`` off (``verdict``)."""
        return self.verdict in ("scale", "sign")

    def to_dict(self) -> dict:
        """JSON-able fields (an unbounded end of ``scale_interval`` is infinite: null in JSON)."""
        return {
            "joint": self.joint,
            "std": self.std,
            "resolution": self.resolution,
            "signal": self.signal,
            "scale": self.scale,
            "rms_ratio": self.rms_ratio,
            "scale_flagged": self.scale_flagged,
            "excluded": self.excluded,
            "reason": self.reason,
            "explained": self.explained,
            "scale_interval": list(self.scale_interval),
            "scale_reverse": self.scale_reverse,
            "effective_samples": self.effective_samples,
            "noise_share": self.noise_share,
            "verdict": self.verdict,
            "judged": self.judged,
            "swapped_with": self.swapped_with,
            "swap_explained": self.swap_explained,
        }


def resolution(x: np.ndarray) -> float:
    """Smallest gap between distinct values of ``x`` (``0.0`` when unquantised or constant)."""
    u = np.unique(np.asarray(x, np.float64))
    if u.size < 2 or u.size > x.size // 2:
        return 0.0
    gaps = np.diff(u)
    gaps = gaps[gaps > 1e-9 * float(np.max(np.abs(u)))]  # decimal values rounded to binary
    return float(np.min(gaps)) if gaps.size else 0.0


def _clear(cols: np.ndarray | None, *xs: np.ndarray) -> list[np.ndarray]:
    """Residuals of each ``x`` after its least-squares fit on ``cols`` (``x`` itself if None)."""
    if cols is None:
        return [np.asarray(x, np.float64) for x in xs]
    d = np.linalg.norm(cols, axis=0)
    keep = d > 0
    if not keep.any():
        return [np.asarray(x, np.float64) for x in xs]
    A = cols[:, keep] / d[keep]
    X = np.column_stack(xs)
    R = X - A @ np.linalg.lstsq(A, X, rcond=None)[0]
    return [R[:, i] for i in range(len(xs))]


def _friction_columns(v: np.ndarray | None, a: np.ndarray | None = None) -> np.ndarray | None:
    """The joint's own columns: ``q̇, sign(q̇)`` and, with ``a``, the armature's ``q̈``."""
    if v is None:
        return None
    return np.column_stack([v, np.sign(v)] + ([] if a is None else [a]))


def _explained(p: np.ndarray, m: np.ndarray) -> float:
    """``(m·p)² / (m·m p·p)``: 0 when either is zero."""
    spp, smm = float(p @ p), float(m @ m)
    if not (spp > 0 and smm > 0):
        return 0.0
    return min(1.0, float(p @ m) ** 2 / (spp * smm))


def _slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """``(b, t, n_eff)`` of ``y ≈ b x``: slope, t-statistic (HAC standard error), ``N / τ``."""
    sxx = float(x @ x)
    b = float(x @ y) / sxx
    score = x * (y - b * x)
    tau = float(correlation_time(score)) if score.size >= 2 else 1.0
    se = math.sqrt(tau * float(score @ score)) / sxx
    t = abs(b) / se if se > 0 else _INF
    return b, t, score.size / tau


def _noise_share(p: np.ndarray) -> float:
    """Share of ``p``'s energy above a quarter of the sampling rate."""
    P = np.abs(np.fft.rfft(p)) ** 2
    total = float(P.sum())
    return float(P[P.size // 2 :].sum()) / total if total > 0 else 0.0


def _scale_check(p: np.ndarray, m: np.ndarray) -> dict:
    """Scale ``k``, ``k_r``, ``R²``, the interval ``K`` and the verdict (``#channel-checks``)."""
    nan = float("nan")
    spp, smm = float(p @ p), float(m @ m)
    out = {"scale": nan, "scale_reverse": nan, "explained": nan, "scale_interval": (-_INF, _INF),
           "effective_samples": nan, "noise_share": nan, "verdict": "not judged"}  # fmt: skip
    if not spp > 0:
        return out
    out["noise_share"] = _noise_share(p)
    k, t, n_eff = _slope(p, m)
    out["scale"], out["effective_samples"] = k, n_eff
    if not smm > 0:
        return out
    r2 = _explained(p, m)
    out["explained"] = r2
    if float(p @ m) == 0.0:
        return out
    b, t_r, _ = _slope(m, p)
    out["scale_reverse"] = 1.0 / b
    rho = math.sqrt(max(1.0 / r2 - 1.0, 0.0))
    w = max(rho, Z_SCORE / t)
    w_r = max(rho, Z_SCORE / t_r)
    ends = [k * (1 - w), k * (1 + w)]
    if w_r < 1:  # the reverse interval b (1 ± w_r) excludes 0: its reciprocals bound the scale
        ends += [1 / (b * (1 + w_r)), 1 / (b * (1 - w_r))]
        lo, hi = min(ends), max(ends)
    else:
        lo, hi = -_INF, _INF
    out["scale_interval"] = (lo, hi)
    limit = SCALE_LIMIT
    if hi < 0:
        out["verdict"] = "sign"
    elif lo > limit or (-1 / limit < lo and hi < 1 / limit):
        out["verdict"] = "scale"
    elif 1 / limit <= lo and hi <= limit:
        out["verdict"] = "agrees"
    return out


def _swaps(
    joints,
    tau: np.ndarray,
    tau_prior: np.ndarray,
    dq: np.ndarray | None,
    live: list[int],
    ddq: np.ndarray | None = None,
) -> dict[int, tuple[int, float]]:
    """``{i: (j, R²_ij)}`` for the channels that look swapped (``#channel-checks``)."""
    n = len(live)
    R = np.zeros((n, n))
    for b, j in enumerate(live):
        v = None if dq is None else np.asarray(dq[:, j], np.float64)
        cols = _friction_columns(v, None if ddq is None else np.asarray(ddq[:, j], np.float64))
        cleared = _clear(cols, tau_prior[:, j], *(tau[:, i] for i in live))
        for a in range(n):
            R[a, b] = _explained(cleared[0], cleared[1 + a])
    U = 1.0 - R  # unexplained fractions
    pairs = []
    for a in range(n):
        for b in range(a + 1, n):
            swapped, kept = U[a, b] * U[b, a], U[a, a] * U[b, b]
            if R[a, b] > R[a, a] and R[b, a] > R[b, b] and swapped * SWAP_FACTOR**2 <= kept:
                pairs.append((swapped / kept, a, b))
    out: dict[int, tuple[int, float]] = {}
    for _, a, b in sorted(pairs):
        i, j = live[a], live[b]
        if i not in out and j not in out:
            out[i], out[j] = (j, float(R[a, b])), (i, float(R[b, a]))
    return out


def _signal(name: str, raw, exclude) -> tuple[float, float, bool, str | None]:
    """``(std, resolution, signal, reason)`` of a raw channel; ``reason`` why it is left out."""
    raw = np.asarray(raw, np.float64)
    std = float(np.std(raw))
    res = resolution(raw)
    signal = std > 0 and std >= MIN_STEPS * res
    reason = None
    if name in exclude:
        reason = "excluded by the user"
    elif not signal:
        reason = (
            "constant: no torque signal"
            if std == 0
            else f"no torque signal: standard deviation {std:.3g} is under "
            f"{MIN_STEPS:g} steps of its resolution {res:.3g}"
        )
    return std, res, bool(signal), reason


def excluded_channels(joints, tau_raw: np.ndarray, exclude=()) -> tuple[str, ...]:
    """The joints ``check_channels`` leaves out of the data term: named in ``exclude``, or
    without signal in ``tau_raw (N0, n)``; the rule reads the raw torques alone."""
    return tuple(
        name
        for j, name in enumerate(joints)
        if _signal(name, tau_raw[:, j], exclude)[3] is not None
    )


def base_row_check(measured: np.ndarray, predicted: np.ndarray) -> dict:
    """The scale and sign check on a floating base's six rows, stacked into one series.

    ``measured (N, 6)``: the base rows' measured side ``Σ_c J_cᵀ w_c``;
    ``predicted (N, 6)``: the prior's ``Y π₀`` there. Returns the fields of
    ``_scale_check`` and ``rms_ratio``.
    """
    m = np.asarray(measured, np.float64).reshape(-1)
    p = np.asarray(predicted, np.float64).reshape(-1)
    out = _scale_check(p, m)
    rms_p = float(np.sqrt(np.mean(p * p)))
    out["rms_ratio"] = float(np.sqrt(np.mean(m * m))) / rms_p if rms_p > 0 else float("nan")
    return out


def check_channels(
    joints,
    tau_raw: np.ndarray,
    tau: np.ndarray,
    tau_prior: np.ndarray,
    exclude=(),
    dq: np.ndarray | None = None,
    ddq: np.ndarray | None = None,
) -> tuple[ChannelCheck, ...]:
    """The signal, scale, sign and swap checks, one ``ChannelCheck`` per joint in order.

    Args:
      joints: ``n`` joint names.
      tau_raw: ``(N0, n)`` raw measured torques (for the signal check).
      tau: ``(N, n)`` filtered measured torques on the fitted samples.
      tau_prior: ``(N, n)`` torques the prior predicts on the same samples.
      exclude: joint names the user excludes.
      dq: ``(N, n)`` joint velocities (the friction columns; None: none).
      ddq: ``(N, n)`` joint accelerations (the armature column; None: none).
    """
    tau = np.asarray(tau, np.float64)
    tau_prior = np.asarray(tau_prior, np.float64)
    dq = None if dq is None else np.asarray(dq, np.float64)
    ddq = None if ddq is None or dq is None else np.asarray(ddq, np.float64)
    base = []
    for j, name in enumerate(joints):
        std, res, signal, reason = _signal(name, tau_raw[:, j], exclude)
        pred, meas = tau_prior[:, j], tau[:, j]
        cols = _friction_columns(None if dq is None else dq[:, j],
                                 None if ddq is None else ddq[:, j])  # fmt: skip
        p, m = _clear(cols, pred, meas)
        fields = _scale_check(p, m)
        rms_p = float(np.sqrt(np.mean(pred * pred)))
        rms_ratio = float(np.sqrt(np.mean(meas * meas))) / rms_p if rms_p > 0 else float("nan")
        base.append(
            ChannelCheck(
                joint=name,
                std=std,
                resolution=res,
                signal=bool(signal),
                rms_ratio=rms_ratio,
                excluded=reason is not None,
                reason=reason,
                **fields,
            )
        )
    live = [j for j, c in enumerate(base) if not c.excluded]
    swaps = _swaps(joints, tau, tau_prior, dq, live, ddq)
    return tuple(
        dataclasses.replace(c, swapped_with=joints[swaps[j][0]], swap_explained=swaps[j][1])
        if j in swaps
        else c
        for j, c in enumerate(base)
    )


def _pct(x: float) -> str:
    """A fraction as a percentage with three significant digits (``0.413 %``, ``56.2 %``)."""
    return f"{100 * x:.3g} %"


def channel_messages(checks, torque_scale=None) -> tuple[list[str], list[str]]:
    """Plain-words ``(warnings, notes)`` from ``check_channels``, each a list in joint order.

    Warnings: scale or sign off (with the matching ``torque_scale``), swapped
    pairs, predictions dominated by differentiation noise. Notes: channels left
    out, not judged, or rescaled by ``torque_scale`` (``(n,)`` factors, None: 1).
    """
    checks = tuple(checks)
    scale = np.ones(len(checks)) if torque_scale is None else np.asarray(torque_scale, float)
    warnings: list[str] = []
    notes: list[str] = []
    noisy = []
    reported_swaps: set[str] = set()
    by_name = {c.joint: c for c in checks}
    for c, k in zip(checks, scale, strict=True):
        if c.excluded:
            notes.append(
                f"{c.joint}: {c.reason}; left out of the fit (the joint still moves the others)"
            )
        elif c.swapped_with is not None:
            if c.joint in reported_swaps:
                continue
            o = by_name[c.swapped_with]
            reported_swaps.update((c.joint, o.joint))
            warnings.append(
                f"torque columns of {c.joint} and {o.joint} look swapped: {c.joint}'s channel "
                f"follows the torque predicted for {o.joint} (which explains "
                f"{_pct(c.swap_explained)} of its variance after friction, its own prediction "
                f"{_pct(c.explained)}) and {o.joint}'s channel follows {c.joint}'s "
                f"({_pct(o.swap_explained)}, its own {_pct(o.explained)}); swap the two columns "
                "or their names in the log"
            )
        elif c.scale_flagged:
            kind = (
                "the opposite sign of"
                if c.verdict == "sign"
                else f"{c.scale:.3g}× (more than {SCALE_LIMIT:g}× off)"
            )
            warnings.append(
                f"{c.joint}: measured torques are {kind} the torques the prior predicts "
                f"(rms ratio {c.rms_ratio:.3g}): units, gear ratio or sign convention? "
                f"(torque_scale {c.joint}={k / c.scale:.3g} would match the prior)"
            )
        elif not c.judged:
            if not np.isfinite(c.scale):
                notes.append(
                    f"{c.joint}: the prior predicts no torque on this joint: scale and sign "
                    "not judged"
                )
            elif c.noise_share > NOISE_SHARE:
                noisy.append(c)
            elif c.explained <= 0.5 and c.rms_ratio > SCALE_LIMIT:
                notes.append(
                    f"{c.joint}: the model predicts almost no torque on this joint (rms ratio "
                    f"{c.rms_ratio:.3g}; its prediction explains {_pct(c.explained)} of the "
                    "measured torque's variance after friction): scale and sign not judged"
                )
            elif c.explained <= 0.5:
                notes.append(
                    f"{c.joint}: the prior's prediction explains only {_pct(c.explained)} of the "
                    f"measured torque's variance after friction (rms ratio {c.rms_ratio:.3g}): "
                    "scale and sign not judged"
                )
            else:
                lo, hi = c.scale_interval
                notes.append(
                    f"{c.joint}: the prior's prediction explains {_pct(c.explained)} of the "
                    f"measured torque's variance after friction, too little to tell its scale "
                    f"({c.scale:.3g}; between {lo:.3g} and {hi:.3g}) from {SCALE_LIMIT:g}× "
                    "off: scale not judged"
                )
    if noisy:
        names = ", ".join(c.joint for c in noisy)
        shares = ", ".join(_pct(c.noise_share) for c in noisy)
        warnings.append(
            f"the torques predicted on {names} are dominated by noise from differentiating q "
            f"twice ({shares} of their energy above a quarter of the sampling rate, where the "
            "trajectory has none; their prediction explains "
            + ", ".join(_pct(c.explained) for c in noisy)
            + " of the measured torque): scale and sign not judged, and the fit is biased; "
            "low-pass the log (lowpass, --lowpass HZ)"
        )
    for c, k in zip(checks, scale, strict=True):
        if k != 1.0:
            notes.append(f"{c.joint}: torques multiplied by {k:g} (torque_scale)")
    return warnings, notes


def channel_summary(checks) -> str:
    """One line on the scale and sign checks, for the stage's progress line."""
    live = [c for c in checks if not c.excluded]
    swapped = sum(c.swapped_with is not None for c in live) // 2
    flagged = sum(c.scale_flagged and c.swapped_with is None for c in live)
    unjudged = sum(not c.judged and c.swapped_with is None for c in live)
    parts = []
    if swapped:
        parts.append(f"{swapped} swapped pair(s)")
    if flagged:
        parts.append(f"{flagged} scale/sign warning(s)")
    if not parts:
        parts.append(
            "scales and signs agree"
            + (f" where judged ({unjudged} not judged)" if unjudged else "")
        )
    return "; ".join(parts)
