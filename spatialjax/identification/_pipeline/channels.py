"""Stage 5, **torques**: each channel's signal, scale and sign against the prior's prediction."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._channels import SCALE_LIMIT, ChannelCheck, check_channels
from .options import IdentifyError, Options


@dataclasses.dataclass(frozen=True, eq=False)
class Channels:
    """Which torque channels the fit uses, and what the checks found.

    Attributes:
      checks: one ``ChannelCheck`` per joint.
      used: ``(nv,)`` the channels in the data term.
      friction_kept: ``(ne,)`` the friction columns fitted (those of a channel
        left out act on its row only: undetermined, not fitted).
      warnings: the channels' warnings (scale, sign).
      notes: the channels' notes (left out, multiplied).
      lines: the stage's detail lines.
    """

    checks: tuple[ChannelCheck, ...]
    used: np.ndarray
    friction_kept: np.ndarray
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    lines: tuple[str, ...]

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        n_warn = len(self.warnings)
        text = f"{int(self.used.sum())} of {self.used.size} channels fitted" + (
            f"; {n_warn} scale/sign warning(s)" if n_warn else "; scales and signs agree"
        )
        return text, self.lines


def channel_messages(checks, scale: np.ndarray) -> tuple[list[str], list[str], list[str]]:
    """``(warnings, notes, lines)``: the checks in words, in joint order.

    ``lines`` are the stage's detail lines (``"warning: ..."``, ``"note: ..."``);
    the notes on ``torque_scale`` go to ``notes`` only.
    """
    warnings, notes, lines = [], [], []
    for c, k in zip(checks, scale, strict=True):
        if c.excluded:
            msg = f"{c.joint}: {c.reason}; left out of the fit (the joint still moves the others)"
            notes.append(msg)
            lines.append("note: " + msg)
        elif c.scale_flagged:
            kind = (
                "the opposite sign of"
                if c.scale <= 0
                else f"{c.scale:.3g}× (more than {SCALE_LIMIT:g}× off)"
            )
            msg = (
                f"{c.joint}: measured torques are {kind} the torques the prior predicts "
                f"(rms ratio {c.rms_ratio:.3g}): units, gear ratio or sign convention? "
                f"(torque_scale {c.joint}={k / c.scale:.3g} would match the prior)"
            )
            warnings.append(msg)
            lines.append("warning: " + msg)
    for c, k in zip(checks, scale, strict=True):
        if k != 1.0:
            notes.append(f"{c.joint}: torques multiplied by {k:g} (torque_scale)")
    return warnings, notes, lines


def channel_stage(
    model,
    raw_tau: np.ndarray,
    tau: np.ndarray,
    tau_prior: np.ndarray,
    dq: np.ndarray,
    opts: Options,
) -> Channels:
    """Check every channel (``check_channels``); refuse a log with none left to fit.

    Args:
      model: the model (its friction columns' joints).
      raw_tau: ``(N0, nv)`` the training part's torques as recorded (before
        resampling blurs their quantisation), times ``torque_scale``.
      tau: ``(N, nv)`` the filtered training torques the fit uses.
      tau_prior: ``(N, nv)`` the torques the prior predicts on the same samples.
      dq: ``(N, nv)`` the joint velocities on the same samples.
      opts: the options (``exclude_torque``, ``torque_scale``, friction).

    Raises:
      IdentifyError: ``"log"``, when no channel is left to fit.
    """
    joints = opts.joints
    checks = check_channels(joints, raw_tau, tau, tau_prior, opts.exclude_torque, dq=dq)
    used = np.array([not c.excluded for c in checks])
    if not used.any():
        raise IdentifyError(
            "log",
            "no torque channel is left to fit: "
            + "; ".join(f"{c.joint}: {c.reason}" for c in checks),
        )
    fm = opts.friction
    fjoint = np.array([joints.index(j) for j, _ in fm.names(model)], int)
    kept = used[fjoint] if fjoint.size else np.zeros(0, bool)
    warnings, notes, lines = channel_messages(checks, opts.torque_scale)
    return Channels(checks, used, kept, tuple(warnings), tuple(notes), tuple(lines))
