"""Temporary local resampling (replaced by the log layer's resample_log at merge)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ._log import LogError, RobotLog


@dataclasses.dataclass(frozen=True)
class SamplingReport:
    resampled: bool
    rate: float
    n_samples: int
    min_interval: float
    median_interval: float
    max_interval: float
    share_off: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def resample_log(log: RobotLog, rate=None, *, max_gap=None):
    t = log.t
    dt = np.diff(t)
    h = float(np.median(dt))
    off = np.abs(dt - h) > 0.1 * h
    gap = 10 * h if max_gap is None else max_gap
    big = np.flatnonzero(dt > gap)
    if big.size:
        k = int(big[0])
        raise LogError("RobotLog", "t", f"gap of {dt[k]:g} s after t[{k}] = {t[k]:g}", k)
    uniform = not np.any(np.abs(dt - h) > 1e-6 * h)
    if uniform and rate is None:
        rep = SamplingReport(False, 1 / h, log.n_samples, dt.min(), h, dt.max(), off.mean())
        return log, rep
    r = 1 / h if rate is None else float(rate)
    n = int(np.floor((t[-1] - t[0]) * r + 1e-9)) + 1
    tn = t[0] + np.arange(n) / r

    def interp(x):
        return (
            None
            if x is None
            else np.stack([np.interp(tn, t, x[:, j]) for j in range(x.shape[1])], 1)
        )

    new = RobotLog(
        t=tn,
        q=interp(log.q),
        tau=interp(log.tau),
        dq=interp(log.dq),
        ddq=interp(log.ddq),
        joint_names=log.joint_names,
    )
    return new, SamplingReport(True, r, n, dt.min(), h, dt.max(), off.mean())
