r"""Torque channels of a log checked against the prior: signal, scale and sign.

Logs recorded on real robots mix joint torques in N·m with motor currents,
motor-side torques before the gear ratio, and joints whose "effort" is a
commanded value or a constant because nothing measures it. Two checks catch
this before a fit silently returns links many times too light or too heavy:

* **Signal.** A channel that is constant, or that varies by fewer than
  ``MIN_STEPS`` steps of its own resolution (the smallest difference
  between two distinct values it takes), carries no torque signal: its
  standard deviation is then within a few quantisation steps, a
  signal-to-quantisation ratio below about 30 dB (uniform quantisation noise
  has a standard deviation of ``step / √12``). Such channels are excluded
  from the data term; their joints still move in the regressor.
* **Scale and sign.** The coefficient ``k_j`` of the torque the prior
  predicts, ``τ̂_j`` (rigid bodies only), in a least-squares fit of the
  measured torque ``τ_j ≈ k_j τ̂_j + F_v q̇_j + F_c sign(q̇_j)`` on the same
  filtered samples (the viscous and Coulomb columns take the joint's
  friction, which the prior does not predict and which dominates a distal
  joint; no offset column, so that a constant gravity load stays in
  ``τ̂_j``), is ``1`` for a channel in the model's units and sign convention
  whatever the prior's error of a few tens of percent. It is flagged when
  negative or off by more than ``SCALE_LIMIT`` (3×) either way: units, a
  gear ratio or a sign convention. ``1 / k_j`` is the ``torque_scale`` that
  would bring the channel to the prior's units.
"""

from __future__ import annotations

import dataclasses

import numpy as np

#: A channel varying by fewer than this many steps of its resolution carries no signal.
MIN_STEPS = 10.0
#: Scale (measured / predicted) beyond which a channel is flagged, either way.
SCALE_LIMIT = 3.0


@dataclasses.dataclass(frozen=True)
class ChannelCheck:
    """What the checks found on one torque channel.

    Attributes:
      joint: the joint's name.
      std: standard deviation of the raw measured torque.
      resolution: the smallest difference between two distinct raw values
        (differences below ``1e-9`` of the largest value are rounding of decimal
        values to binary and ignored; ``0.0`` for an unquantised channel: more
        distinct values than half the samples).
      signal: False when the channel is constant or varies by fewer than
        ``MIN_STEPS`` resolution steps.
      scale: ``k_j`` (module docstring), NaN when the prior predicts no
        torque on this joint.
      rms_ratio: ``rms(τ_j) / rms(τ̂_j)`` (NaN when the prediction is zero).
      excluded: whether the channel is left out of the data term
        (no signal, or named by the user).
      reason: why it is excluded or flagged, or None.
    """

    joint: str
    std: float
    resolution: float
    signal: bool
    scale: float
    rms_ratio: float
    excluded: bool
    reason: str | None

    @property
    def scale_flagged(self) -> bool:
        """The scale is negative or more than ``SCALE_LIMIT`` away from 1, either way."""
        k = self.scale
        return bool(np.isfinite(k) and (k <= 0 or k > SCALE_LIMIT or k < 1 / SCALE_LIMIT))

    def to_dict(self) -> dict:
        """JSON-able fields."""
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
        }


def resolution(x: np.ndarray) -> float:
    """Smallest gap between distinct values of ``x`` (``0.0`` when unquantised or constant)."""
    u = np.unique(np.asarray(x, np.float64))
    if u.size < 2 or u.size > x.size // 2:
        return 0.0
    gaps = np.diff(u)
    gaps = gaps[gaps > 1e-9 * float(np.max(np.abs(u)))]  # decimal values rounded to binary
    return float(np.min(gaps)) if gaps.size else 0.0


def _scale(pred: np.ndarray, meas: np.ndarray, v: np.ndarray | None) -> float:
    """``k`` of ``meas ≈ k pred + F_v v + F_c sign(v)`` by least squares (NaN if ``pred == 0``)."""
    if not float(pred @ pred) > 0:
        return float("nan")
    cols = [pred] if v is None else [pred, v, np.sign(v)]
    X = np.column_stack(cols)
    d = np.linalg.norm(X, axis=0)
    d = np.where(d > 0, d, 1.0)
    coef = np.linalg.lstsq(X / d, meas, rcond=None)[0]
    return float(coef[0] / d[0])


def check_channels(
    joints,
    tau_raw: np.ndarray,
    tau: np.ndarray,
    tau_prior: np.ndarray,
    exclude=(),
    dq: np.ndarray | None = None,
) -> tuple[ChannelCheck, ...]:
    """The checks of the module docstring, one per joint.

    Args:
      joints: ``n`` joint names.
      tau_raw: ``(N0, n)`` raw measured torques (for the signal check).
      tau: ``(N, n)`` filtered measured torques on the fitted samples.
      tau_prior: ``(N, n)`` torques the prior predicts on the same samples.
      exclude: joint names the user excludes.
      dq: ``(N, n)`` joint velocities on the same samples: the friction columns
        of the scale fit (None: the slope through the origin alone).

    Returns:
      One ``ChannelCheck`` per joint, in order.
    """
    out = []
    for j, name in enumerate(joints):
        raw = np.asarray(tau_raw[:, j], np.float64)
        std = float(np.std(raw))
        res = resolution(raw)
        signal = std > 0 and std >= MIN_STEPS * res
        pred, meas = np.asarray(tau_prior[:, j]), np.asarray(tau[:, j])
        scale = _scale(pred, meas, None if dq is None else np.asarray(dq[:, j]))
        rms_p = float(np.sqrt(np.mean(pred * pred)))
        rms_ratio = float(np.sqrt(np.mean(meas * meas))) / rms_p if rms_p > 0 else float("nan")
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
        out.append(
            ChannelCheck(
                joint=name,
                std=std,
                resolution=res,
                signal=bool(signal),
                scale=scale,
                rms_ratio=rms_ratio,
                excluded=reason is not None,
                reason=reason,
            )
        )
    return tuple(out)
