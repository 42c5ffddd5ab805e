"""Stage 2, **sampling**: the logs matched to the model, their positions checked, resampled."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..logs.positions import LIMIT_MARGIN, LIMIT_STEPS, PositionCheck, check_positions
from ..logs.resample import SamplingReport
from ..logs.robot_log import RobotLog
from ..output.report import range_text
from .options import IdentifyError, Options


@dataclasses.dataclass(frozen=True, eq=False)
class Sampled:
    """The logs on a uniform grid, ``log`` first, then the ``validate`` logs.

    Attributes:
      raw: the logs matched to the model's joints, as recorded (the torque
        checks read the main log's quantisation here).
      logs: the same resampled onto a uniform grid, torques times ``torque_scale``.
      sampling: one ``SamplingReport`` per log.
      positions: one ``PositionCheck`` per joint of the main log.
      warnings: positions outside the limits (with ``ignore_limits``), velocities
        beyond them.
    """

    raw: tuple[RobotLog, ...]
    logs: tuple[RobotLog, ...]
    sampling: tuple[SamplingReport, ...]
    positions: tuple[PositionCheck, ...]
    warnings: tuple[str, ...]

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        return _sampling_text(self.sampling[0]), (
            _positions_text(self.positions),
            *(f"warning: {w}" for w in self.warnings),
        )


def _sampling_text(info: SamplingReport) -> str:
    if not info.resampled:
        return f"uniform at {info.rate:.4g} Hz ({info.n_out} samples); no resampling"
    return (
        f"irregular intervals (min {info.min_interval * 1e3:.3g}, median "
        f"{info.median_interval * 1e3:.3g}, max {info.max_interval * 1e3:.3g} ms; "
        f"{100 * info.off_share:.0f} % more than 10 % off the median): resampled by t onto a "
        f"uniform {info.rate:.4g} Hz grid ({info.n_out} samples, linear interpolation)"
    )


def _positions_text(checks: tuple[PositionCheck, ...]) -> str:
    limited = [c for c in checks if c.lower is not None]
    outside = [c.joint for c in checks if not c.within_limits]
    steps = [c.resolution for c in checks if c.resolution > 0]
    unq = len(checks) - len(steps)
    fast = [c.joint for c in checks if c.velocity_flagged]
    return (
        "q: "
        + (f"outside the limits on {', '.join(outside)}" if outside else "within the limits")
        + f" ({len(limited)} of {len(checks)} joints limited)"
        + (f"; encoder steps {range_text(steps)} (rad or m)" if steps else "")
        + (f"; {unq} unquantised" if unq and steps else "; unquantised" if unq else "")
        + (f"; velocities beyond the limits on {', '.join(fast)}" if fast else "")
    )


class _Movable:
    """The attributes ``match_joints`` reads, for a model already locked as the log needs."""

    def __init__(self, model):
        self.floating_base = bool(model.floating_base)
        self.name = model.name
        self.joint_names = tuple(model.joint_names)
        self.joint_types = tuple(model.joint_types)


def _matched(model, arg: str, log) -> RobotLog:
    """The log's columns in the model's joint order.

    A log already matched to the model (``JointMatch.apply``'s output, as the command line
    passes it: the model's movable joints in order, and a base pose exactly when the model
    floats) is taken as it is, so that its joints are matched once; any other is matched here.
    """
    from ..logs.robot_log import match_joints

    if not isinstance(log, RobotLog):
        raise TypeError(f"{arg}: expected a RobotLog, got {type(log).__name__}")
    movable = _Movable(model)
    joints = tuple(j for j, t in zip(movable.joint_names, movable.joint_types, strict=True)
                   if t != "free_flyer")  # fmt: skip
    if log.joint_names == joints and log.floating_base == movable.floating_base:
        return log
    try:
        m = match_joints(log, movable)
    except IdentifyError as e:
        raise e.about(arg) from None
    if m.locked:
        raise IdentifyError(
            arg,
            f"lacks the model's joints {', '.join(m.locked)}: lock them when loading the model "
            "(Model.from_urdf(..., locked_joints=...))",
        )
    return m.apply(log)


def _resampled(log: RobotLog, rate, max_gap, argument: str):
    """``(log, info)``: the log on a uniform grid, and what was done."""
    from ..logs.resample import resample_log

    try:
        new, rep = resample_log(log, rate=rate, max_gap=max_gap)
    except IdentifyError as e:  # the log's problem is about this log; rate, max_gap their own
        raise (e.about(argument) if e.argument == "log" else e.about()) from None
    return new, rep


def _scaled(log: RobotLog, scale: np.ndarray) -> RobotLog:
    if np.all(scale == 1.0):
        return log
    return dataclasses.replace(log, tau=log.tau * scale[None, :])


def _positions(model, arg: str, log: RobotLog, opts: Options):
    """The log's position checks, and the warnings; refuses positions outside the limits."""
    n = len(opts.joints)  # a free flyer's coordinates come first: the joints' are the last n
    lim = (np.asarray(x, np.float64)[-n:] for x in (model.lower, model.upper,
                                                    model.velocity_limit))  # fmt: skip
    revolute = [t in ("revolute", "continuous") for t in model.joint_types[-n:]]
    checks = check_positions(opts.joints, revolute, log.t, log.q, log.dq, *lim)
    outside = [c.limit_text() for c in checks if not c.within_limits]
    if outside and not opts.ignore_limits:
        margin = f"{100 * LIMIT_MARGIN:g} % of the range, at least {LIMIT_STEPS:g} encoder steps"
        raise IdentifyError(
            arg,
            f"{'; '.join(outside)} (margin: {margin}); check the log's units and the model, "
            "or set `ignore_limits` to go on",
        )
    warnings = [f"{w}; ignored (ignore_limits)" for w in outside]
    warnings += [c.velocity_text() for c in checks if c.velocity_flagged]
    return checks, [f"{arg}: {w}" if arg != "log" else w for w in warnings]


def sampling_stage(model, log: RobotLog, validate, opts: Options) -> Sampled:
    """Match each log to the model's joints, check its positions, resample it, scale its torques.

    Raises:
      IdentifyError: ``"log"`` or ``"validate[k]"`` for a log whose joints do
        not match, whose positions leave the joint limits (unless
        ``ignore_limits``) or whose time axis cannot be resampled; ``"rate"``,
        ``"max_gap"``.
      TypeError: a ``validate`` entry that is not a RobotLog.
    """
    logs = [("log", log)] + [(f"validate[{k}]", v) for k, v in enumerate(validate)]
    raw = [_matched(model, arg, lg) for arg, lg in logs]
    if opts.floating_base:
        from .floating_base import check_contacts

        for (arg, _), lg in zip(logs, raw, strict=True):
            check_contacts(model, arg, lg, opts)
    positions, warnings = (), []
    for k, ((arg, _), lg) in enumerate(zip(logs, raw, strict=True)):
        checks, w = _positions(model, arg, lg, opts)
        positions = checks if k == 0 else positions
        warnings += w
    sampled, infos = [], []
    for (arg, _), lg in zip(logs, raw, strict=True):
        new, info = _resampled(lg, opts.rate, opts.max_gap, arg)
        sampled.append(_scaled(new, opts.scale))
        infos.append(info)
    return Sampled(tuple(raw), tuple(sampled), tuple(infos), positions, tuple(warnings))
