r"""Torque channels of a log checked against the prior: signal, scale, sign and swaps.

Logs recorded on real robots mix joint torques in N·m with motor currents,
motor-side torques before the gear ratio, joints whose "effort" is a
commanded value or a constant because nothing measures it, and columns in
another joint's place. These checks catch this before a fit silently returns
links many times too light or too heavy, and stay silent where the data
cannot tell:

* **Signal.** A channel that is constant, or that varies by fewer than
  ``MIN_STEPS`` steps of its own
  resolution (the smallest difference between two distinct values it takes),
  carries no torque signal: its standard deviation is then within a few
  quantisation steps, a signal-to-quantisation ratio below about 30 dB
  (uniform quantisation noise has a standard deviation of ``step / √12``).
  Such channels are excluded from the data term; their joints still move in
  the regressor.
* **Scale and sign.** Joint ``j``'s measured torque ``m = τ_j`` and the
  torque the prior predicts, ``p = τ̂_j`` (rigid bodies only), on the same
  filtered samples, are first cleared of the joint's viscous and Coulomb
  friction columns ``q̇_j, sign(q̇_j)`` (the prior does not predict friction,
  which dominates a distal joint; no offset column, so that a constant
  gravity load stays in ``p``), and of its armature column ``q̈_j`` when the
  accelerations are given (a geared joint's rotor inertia, which the prior
  lacks, can be many times a wrist link's own inertia about its axis):
  ``m⊥, p⊥`` are the residuals of their least-squares fits on those columns.
  Then

  - the *forward* slope ``k = m⊥·p⊥ / p⊥·p⊥`` is the coefficient of ``p`` in
    ``m ≈ k p + F_v q̇_j + F_c sign(q̇_j)`` (``1`` for a channel in the model's
    units and sign convention, whatever the prior's error of a few tens of
    percent; ``1 / k`` is the ``torque_scale`` that brings the channel to the
    prior's units); the *reverse* slope ``k_r = m⊥·m⊥ / m⊥·p⊥`` is that of
    ``p`` regressed on ``m``, inverted;
  - ``R² = k / k_r = (m⊥·p⊥)² / (m⊥·m⊥ p⊥·p⊥)``, the fraction of the
    channel's variance (after friction) that the prediction explains, and
    ``ρ = √(1/R² − 1)``, the rms of the unexplained part over that of the
    explained part;
  - each slope gets a relative half-width ``w = max(ρ, z / t)``: ``ρ`` bounds
    the prior's error *along* its own prediction by the error *across* it
    that the residual shows (a prior 30 % off moves ``k`` by 0.3, but where
    it predicts almost nothing, on a link whose centre of mass is on the
    joint axis, its error is many times the prediction and so is the
    residual); ``t = |slope| / se`` is the slope's t-statistic, its standard
    error from the residuals' autocorrelation (the variance of the score
    ``Σ p⊥ r`` counts ``N / τ`` independent samples, ``τ`` the integrated
    autocorrelation time of ``p⊥ r``,
    [correlation_time][spatialjax.identification.correlation_time]; a
    heteroscedasticity and autocorrelation consistent standard error, Newey &
    West 1987) and ``z`` = ``Z_SCORE``;
  - the scale lies in the hull ``K`` of ``k (1 ± w)`` and ``k_r / (1 ∓ w_r)``:
    when either the measured or the predicted torque carries noise or error
    uncorrelated with the other, the true slope lies between the forward and
    the reverse slope (Frisch 1934; Klepper & Leamer 1984). This is what
    keeps a prediction made from a twice-differentiated, unfiltered ``q``
    (noise in the regressor, which attenuates ``k`` towards 0) from reading
    as wrong units. ``K`` is unbounded whenever ``R² ≤ 1/2``.

  The verdict: the *sign* is wrong when ``K < 0``; the *scale* is more than
  ``SCALE_LIMIT`` (3×) off
  when ``K > 3`` or ``K ⊂ (−1/3, 1/3)``; the channel *agrees* when ``K ⊂
  [1/3, 3]``; otherwise the data cannot tell and the scale is *not judged*:
  the prediction explains too little of the channel (``R² ≤ 1/2``: the model
  predicts almost no torque there, or the prediction is noise), or too
  little to tell 1 from 3.
* **Noise in the prediction.** The share of the prediction's energy (of
  ``p⊥``) above a quarter of the sampling rate: a trajectory sampled for
  identification has none there, so that energy is noise, from
  differentiating a quantised ``q`` twice without a low-pass (white noise
  puts half its energy there, twice-differenced noise most of it). A channel not
  judged whose prediction has more than
  ``NOISE_SHARE`` of its
  energy there is reported as such, with the advice to low-pass the log.
* **Swapped channels.** ``R²_ij``: the fraction of channel ``i``'s variance
  explained by joint ``j``'s prediction, after joint ``j``'s friction columns
  (a channel that carries joint ``j``'s torque carries its friction too).
  Channels ``i`` and ``j`` look swapped when each follows the other's
  prediction better than its own (``R²_ij > R²_ii`` and ``R²_ji > R²_jj``)
  and the swap cuts the unexplained variance, the geometric mean of
  ``1 − R²`` over the two channels, by at least
  ``SWAP_FACTOR`` (2×:
  ``(1 − R²_ij)(1 − R²_ji) ≤ (1 − R²_ii)(1 − R²_jj) / 4``). Two joints whose
  torques are correlated (a shoulder and an elbow both hold the forearm up)
  are each explained best by their own prediction in a log in order; two
  joints that the prior barely predicts (both near 0) do not gain 2× by a
  swap. Pairs are taken greedily, largest cut first. A swapped channel's own
  scale and sign are reported through the swap, not separately.

References:
  R. Frisch, *Statistical confluence analysis by means of complete
  regression systems*, Oslo University Institute of Economics, 1934.
  S. Klepper, E. E. Leamer, "Consistent sets of estimates for regressions
  with errors in all variables", Econometrica 52(1), 1984.
  W. K. Newey, K. D. West, "A simple, positive semi-definite,
  heteroskedasticity and autocorrelation consistent covariance matrix",
  Econometrica 55(3), 1987.
  A. D. Sokal, "Monte Carlo methods in statistical mechanics", 1997, §3.
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
    """What the checks found on one torque channel (criteria: the module docstring).

    Attributes:
      joint: the joint's name.
      std: standard deviation of the raw measured torque.
      resolution: the smallest difference between two distinct raw values
        (differences below ``1e-9`` of the largest value are rounding of decimal
        values to binary and ignored; ``0.0`` for an unquantised channel: more
        distinct values than half the samples).
      signal: False when the channel is constant or varies by fewer than
        ``MIN_STEPS`` resolution steps.
      scale: ``k``, the forward slope of the measured on the predicted torque
        after the joint's friction; NaN when the prior predicts no torque on
        this joint.
      rms_ratio: ``rms(τ_j) / rms(τ̂_j)`` (NaN when the prediction is zero).
      excluded: whether the channel is left out of the data term
        (no signal, or named by the user).
      reason: why it is excluded, or None.
      explained: ``R²``, the fraction of the channel's variance after friction
        that the prediction explains (NaN for a constant channel).
      scale_interval: ``(low, high)``, the interval ``K`` of scales the data
        allow (``±inf`` where unbounded).
      scale_reverse: ``k_r``, the reverse slope (NaN where undefined).
      effective_samples: ``N / τ``, the independent samples behind the
        forward slope's standard error.
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
    """Scale ``k``, ``k_r``, ``R²``, the interval ``K`` and the verdict (module docstring)."""
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
    """``{i: (j, R²_ij)}`` for the channels that look swapped (module docstring)."""
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
    """The scale and sign check of the module docstring on a floating base's six rows.

    ``measured (N, 6)`` is the base rows' measured side, ``Σ_c J_cᵀ w_c`` (the
    contact wrenches seen from the base), ``predicted (N, 6)`` the prior's
    ``Y π₀`` there, stacked into one series (no friction acts on the base).

    Returns:
      The fields of ``_scale_check`` (``scale``, ``scale_interval``,
      ``scale_reverse``, ``explained``, ``effective_samples``, ``noise_share``,
      ``verdict``) and ``rms_ratio``.
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
    """The checks of the module docstring, one per joint.

    Args:
      joints: ``n`` joint names.
      tau_raw: ``(N0, n)`` raw measured torques (for the signal check).
      tau: ``(N, n)`` filtered measured torques on the fitted samples.
      tau_prior: ``(N, n)`` torques the prior predicts on the same samples
        (every joint's: the swap check compares each channel with the others'
        predictions).
      exclude: joint names the user excludes.
      dq: ``(N, n)`` joint velocities on the same samples: the friction columns
        of the scale fit (None: the slope through the origin alone).
      ddq: ``(N, n)`` joint accelerations on the same samples: the armature
        column of the scale fit, with ``dq`` (None: no armature column).

    Returns:
      One ``ChannelCheck``
      per joint, in order.
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
    """Plain-words warnings and notes from ``check_channels``.

    Warnings: a channel whose scale is more than ``SCALE_LIMIT`` off or whose
    sign is opposite (with the ``torque_scale`` that would match the prior),
    a pair of channels that look swapped (naming both joints), and the joints
    whose predicted torque is dominated by noise from differentiating ``q``
    (with the advice to low-pass the log). Notes: channels left out of the fit
    and why, channels whose scale the data cannot judge and why, and channels
    multiplied by ``torque_scale``. Excluded channels get no warning.

    Args:
      checks: the ``ChannelCheck``s,
        one per joint in order.
      torque_scale: ``(n,)`` factors the channels were multiplied by before the
        checks (None: all 1).

    Returns:
      ``(warnings, notes)``, two lists of strings, each in joint order.
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
