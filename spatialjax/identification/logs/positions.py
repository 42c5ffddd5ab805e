"""Joint positions of a log checked against the model: limits, units, resolution, velocity.

Positions in rad (revolute) or m (prismatic), samples as rows and joints as
columns in the log's order. Derivation: docs page
``identification-methods.md#position-checks``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

#: Positions may pass a joint limit by this fraction of the joint's range ...
LIMIT_MARGIN = 0.01
#: ... or by this many encoder steps, whichever is larger.
LIMIT_STEPS = 3.0
#: Width of the window over which the velocity is averaged before it is compared, s.
VELOCITY_WINDOW = 0.02
#: A peak velocity beyond ``(1 + VELOCITY_MARGIN)`` times the limit is warned about.
VELOCITY_MARGIN = 0.10


@dataclasses.dataclass(frozen=True)
class PositionCheck:
    """What the checks found on one joint's positions (units: rad or m, rad/s or m/s).

    Attributes:
      joint: the joint's name.
      min: smallest position in the log.
      max: largest position in the log.
      lower: the model's lower limit (None: not checked).
      upper: the model's upper limit (None: not checked).
      margin: how far the positions may pass a limit (None: not checked).
      within_limits: the positions stay within the limits and the margin
        (True where not checked).
      degrees: a revolute joint outside the limits whose ``|q|`` reaches more
        than twice the largest ``|limit|`` and whose ``q · π/180`` is inside.
      resolution: the encoder step (0: unquantised).
      peak_velocity: peak of the windowed mean velocity, less its quantisation bound.
      velocity_limit: the model's velocity limit (None: none).
      velocity_flagged: ``peak_velocity`` exceeds the limit by more than
        ``VELOCITY_MARGIN``.
    """

    joint: str
    min: float
    max: float
    lower: float | None
    upper: float | None
    margin: float | None
    within_limits: bool
    degrees: bool
    resolution: float
    peak_velocity: float
    velocity_limit: float | None
    velocity_flagged: bool

    def to_dict(self) -> dict:
        """JSON-able fields."""
        return dataclasses.asdict(self)

    def limit_text(self) -> str:
        """The joint's range against its limits, in words (for a joint outside them)."""
        text = (
            f"joint {self.joint!r}: q spans [{self.min:.4g}, {self.max:.4g}], outside the "
            f"model's limits [{self.lower:.4g}, {self.upper:.4g}] by more than the margin "
            f"{self.margin:.2g}"
        )
        if self.degrees:
            k = math.pi / 180
            text += (
                f"; degrees? q × π/180 spans [{self.min * k:.4g}, {self.max * k:.4g}], inside "
                "the limits"
            )
        return text

    def velocity_text(self) -> str:
        """The joint's peak velocity against its limit, in words (for a joint with a limit)."""
        assert self.velocity_limit is not None
        return (
            f"{self.joint}: velocities reach {self.peak_velocity:.3g} (mean over "
            f"{1e3 * VELOCITY_WINDOW:g} ms), {self.peak_velocity / self.velocity_limit:.3g}× the "
            f"model's velocity limit {self.velocity_limit:.3g}: check the log's units and the "
            "model's limits"
        )


def encoder_step(x) -> float:
    """The step of quantised values ``x``: their smallest gap, if every gap is a multiple of it.

    ``0.0`` for values not on one grid (to ``1e-3`` of the step), constant or
    fewer than two; gaps below ``1e-9`` of the largest value are ignored.
    """
    u = np.unique(np.asarray(x, np.float64))
    if u.size < 2:
        return 0.0
    gaps = np.diff(u)
    gaps = gaps[gaps > 1e-9 * float(np.max(np.abs(u)))]
    if gaps.size == 0:
        return 0.0
    step = float(np.min(gaps))
    ratio = gaps / step
    return step if float(np.max(np.abs(ratio - np.round(ratio)))) < 1e-3 else 0.0


def _peak_velocity(t: np.ndarray, q: np.ndarray, dq: np.ndarray | None, steps) -> np.ndarray:
    """Per joint: peak ``|mean velocity|`` over the window, less its quantisation bound."""
    n = t.shape[0]
    h = float(np.median(np.diff(t))) if n > 1 else 0.0
    w = max(1, int(round(0.5 * VELOCITY_WINDOW / h))) if h > 0 else 1
    if n <= 2 * w:
        return np.zeros(q.shape[1])
    span = (t[2 * w :] - t[: -2 * w])[:, None]
    if dq is None:
        v = (q[2 * w :] - q[: -2 * w]) / span
        bound = np.asarray(steps)[None, :] / span
    else:
        c = np.cumsum(np.vstack([np.zeros((1, dq.shape[1])), dq]), axis=0)
        v = (c[2 * w + 1 :] - c[: -2 * w - 1]) / (2 * w + 1)
        bound = np.array([0.5 * encoder_step(dq[:, j]) for j in range(dq.shape[1])])[None, :]
    return np.max(np.maximum(np.abs(v) - bound, 0.0), axis=0)


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _one(name, revolute, lo, hi, vmax, qj, step, peak) -> PositionCheck:
    qmin, qmax = float(np.min(qj)), float(np.max(qj))
    limited = math.isfinite(lo) and math.isfinite(hi) and hi > lo
    margin = max(LIMIT_MARGIN * (hi - lo), LIMIT_STEPS * step) if limited else None
    within, degrees = True, False
    if limited:
        assert margin is not None

        def inside(a, b):
            return lo - margin <= a and b <= hi + margin

        within = inside(qmin, qmax)
        k = math.pi / 180
        far = max(abs(qmin), abs(qmax)) > 2 * max(abs(lo), abs(hi))
        degrees = revolute and not within and far and inside(qmin * k, qmax * k)
    has_vlimit = math.isfinite(vmax) and vmax > 0
    return PositionCheck(
        joint=name,
        min=qmin,
        max=qmax,
        lower=float(lo) if limited else None,
        upper=float(hi) if limited else None,
        margin=margin,
        within_limits=bool(within),
        degrees=bool(degrees),
        resolution=step,
        peak_velocity=float(peak),
        velocity_limit=float(vmax) if has_vlimit else None,
        velocity_flagged=bool(has_vlimit and peak > (1 + VELOCITY_MARGIN) * vmax),
    )


def check_positions(
    joints, revolute, t, q, dq, lower, upper, velocity_limit
) -> tuple[PositionCheck, ...]:
    """The limit, unit, resolution and velocity checks, one per joint.

    Args:
      joints: ``n`` joint names.
      revolute: ``n`` booleans: the joint is revolute (rad), not prismatic (m).
      t: ``(N,)`` sample times, s (increasing; not necessarily uniform).
      q: ``(N, n)`` positions as logged.
      dq: ``(N, n)`` logged velocities, or None (then differences of ``q``).
      lower: ``(n,)`` lower position limits (``-inf``: none).
      upper: ``(n,)`` upper position limits (``inf``: none).
      velocity_limit: ``(n,)`` velocity limits (``inf`` or ``≤ 0``: none).

    Returns:
      One ``PositionCheck`` per joint, in order.
    """
    t = np.asarray(t, np.float64)
    q = np.asarray(q, np.float64)
    dq = None if dq is None else np.asarray(dq, np.float64)
    steps = [encoder_step(q[:, j]) for j in range(q.shape[1])]
    peaks = _peak_velocity(t, q, dq, steps)
    lo, hi, vl = (np.asarray(a, np.float64) for a in (lower, upper, velocity_limit))
    return tuple(
        _one(
            name,
            bool(revolute[j]),
            float(lo[j]),
            float(hi[j]),
            float(vl[j]),
            q[:, j],
            steps[j],
            peaks[j],
        )
        for j, name in enumerate(joints)
    )
