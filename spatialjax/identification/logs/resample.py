"""``resample_log``: a log with irregular timestamps onto a uniform time grid.

Linear interpolation in ``t`` (s), before
[`prepare_log`][spatialjax.identification.prepare_log], whose filter assumes uniform samples.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import IdentifyTypeError, positive
from .robot_log import LogError, RobotLog, continuous_quaternions

__all__ = ["SamplingReport", "resample_log"]

#: Intervals within this relative distance of the median count as uniform (no resampling).
UNIFORM_RTOL = 1e-6
#: An interval this far (relative) from the median counts as jitter in ``off_share``.
OFF_REL = 0.1
#: Default ``max_gap``, in median intervals.
MAX_GAP_INTERVALS = 10.0


@dataclasses.dataclass(frozen=True)
class SamplingReport:
    """The sampling of a log before ``resample_log``, and what it did.

    Attributes:
      n_samples: samples of the input log.
      min_interval: shortest interval ``t[k+1] − t[k]``, s.
      median_interval: median interval, s.
      max_interval: longest interval, s.
      off_share: fraction of the intervals more than 10 % off the median.
      resampled: whether the log was interpolated (False: returned unchanged).
      rate: the sample rate of the returned log, Hz.
      n_out: samples of the returned log.
    """

    n_samples: int
    min_interval: float
    median_interval: float
    max_interval: float
    off_share: float
    resampled: bool
    rate: float
    n_out: int

    def __str__(self) -> str:
        what = f"resampled to {self.rate:g} Hz" if self.resampled else "uniform, kept"
        return (
            f"{self.n_samples} samples, intervals {self.min_interval * 1e3:.4g} / "
            f"{self.median_interval * 1e3:.4g} / {self.max_interval * 1e3:.4g} ms "
            f"(min / median / max), {100 * self.off_share:.3g} % more than 10 % off the "
            f"median: {what} ({self.n_out} samples)"
        )


def resample_log(
    log: RobotLog, rate: float | None = None, *, max_gap: float | None = None
) -> tuple[RobotLog, SamplingReport]:
    """Interpolate a log linearly in ``t`` onto a uniform grid.

    The grid is ``t_k = t[0] + k / rate`` up to ``t[-1]``; ``q``, ``tau``, ``dq``,
    ``ddq``, the base position and velocity and the contact wrenches are
    interpolated per column, base quaternions by normalised linear interpolation on
    one hemisphere; a contact is on when it is on at either neighbouring sample.
    A log uniform to ``1e-6`` (relative) is returned unchanged (the same object)
    when ``rate`` is None or ``1 / median``.

    Args:
      log: the [`RobotLog`][spatialjax.identification.RobotLog].
      rate: the output rate in Hz (default: ``1 / median interval``).
      max_gap: the longest interval accepted, s (default: 10 median intervals).

    Returns:
      ``(resampled log, SamplingReport)``; the log keeps the joint names.

    Raises:
      IdentifyTypeError: ``log`` not a RobotLog; ``rate`` or ``max_gap`` not a
        number (a ``TypeError`` too).
      IdentifyError: ``rate`` or ``max_gap`` not finite and positive, naming it.
      LogError: an interval longer than ``max_gap``, naming its index and
        time.

    Examples:
      >>> import numpy as np
      >>> from spatialjax.identification import RobotLog, resample_log
      >>> t = np.array([0.0, 0.011, 0.019, 0.031, 0.040])  # 100 Hz with jitter
      >>> log = RobotLog(t=t, q=2.0 * t[:, None], tau=np.ones((5, 1)))
      >>> out, rep = resample_log(log)
      >>> out.t.round(6).tolist(), out.q[:, 0].round(6).tolist()
      ([0.0, 0.01, 0.02, 0.03, 0.04], [0.0, 0.02, 0.04, 0.06, 0.08])
      >>> rep.resampled, round(rep.rate, 6), rep.off_share
      (True, 100.0, 0.5)
    """
    if not isinstance(log, RobotLog):
        raise IdentifyTypeError(
            "log", f"expected a RobotLog (load_log, simulate_log), got {type(log).__name__}"
        )
    out_rate = None if rate is None else positive(rate, "rate")
    user_gap = None if max_gap is None else positive(max_gap, "max_gap")
    t = log.t
    dt = np.diff(t)
    h = float(np.median(dt))
    gap = MAX_GAP_INTERVALS * h if user_gap is None else user_gap
    bad = np.flatnonzero(dt > gap)
    if bad.size:
        k = int(bad[0])
        how = f"{MAX_GAP_INTERVALS:g} median intervals" if max_gap is None else "`max_gap`"
        raise LogError(
            "RobotLog",
            "t",
            f"a gap of {dt[k]:.6g} s between sample {k} (t = {float(t[k])!r}) and sample "
            f"{k + 1} (t = {float(t[k + 1])!r}), longer than {gap:.6g} s ({how}); cut the log "
            "there or pass a larger `max_gap`",
            k + 1,
        )
    out_rate = 1.0 / h if out_rate is None else out_rate
    uniform = bool(np.all(np.abs(dt - h) <= UNIFORM_RTOL * h))

    def report(resampled: bool, rate: float, n_out: int) -> SamplingReport:
        return SamplingReport(
            n_samples=log.n_samples,
            min_interval=float(dt.min()),
            median_interval=h,
            max_interval=float(dt.max()),
            off_share=float(np.mean(np.abs(dt - h) > OFF_REL * h)),
            resampled=resampled,
            rate=rate,
            n_out=n_out,
        )

    if uniform and abs(out_rate * h - 1.0) <= UNIFORM_RTOL:
        return log, report(False, 1.0 / h, log.n_samples)
    n = int(math.floor((t[-1] - t[0]) * out_rate * (1.0 + 1e-12))) + 1
    grid = t[0] + np.arange(n) / out_rate
    grid[-1] = min(grid[-1], t[-1])  # round-off must not step past the last sample

    def interp(x):
        if x is None:
            return None
        flat = x.reshape(x.shape[0], -1)
        out = np.stack([np.interp(grid, t, flat[:, j]) for j in range(flat.shape[1])], axis=1)
        return out.reshape((n,) + x.shape[1:])

    floating = {}
    if log.floating_base:
        quat = np.asarray(interp(continuous_quaternions(np.asarray(log.base_quaternion))))
        floating = {
            "base_position": interp(log.base_position),
            "base_quaternion": quat / np.linalg.norm(quat, axis=1, keepdims=True),
            "base_velocity": interp(log.base_velocity),
            "contact_wrenches": interp(log.contact_wrenches),
        }
        if log.contact is not None:
            # in contact where either neighbouring sample is: a contact is never dropped
            right = np.clip(np.searchsorted(t, grid, side="left"), 0, len(t) - 1)
            left = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(t) - 1)
            floating["contact"] = log.contact[left] | log.contact[right]
    new = dataclasses.replace(
        log,
        t=grid,
        q=interp(log.q),
        tau=interp(log.tau),
        dq=interp(log.dq),
        ddq=interp(log.ddq),
        **floating,
    )
    return new, report(True, out_rate, n)
