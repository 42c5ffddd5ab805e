"""Stage 5, **torques**: each channel's signal, scale and sign against the prior's prediction."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..logs.channel_checks import ChannelCheck, channel_messages, channel_summary, check_channels
from .options import IdentifyError, Options


@dataclasses.dataclass(frozen=True, eq=False)
class Channels:
    """Which torque channels the fit uses, and what the checks found.

    Attributes:
      checks: one ``ChannelCheck`` per joint.
      used: ``(nv,)`` the channels in the data term.
      friction_kept: ``(ne,)`` the joint-model columns fitted (those of a
        channel left out act on its row only: undetermined, not fitted).
      warnings: the channels' warnings (scale, sign, swapped columns, noisy predictions).
      notes: the channels' notes (left out, not judged, multiplied).
      lines: the stage's detail lines.
      base: for a floating base with measured contact wrenches, the base rows'
        scale and sign check (``base_row_check``'s fields), else None.
    """

    checks: tuple[ChannelCheck, ...]
    used: np.ndarray
    friction_kept: np.ndarray
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    lines: tuple[str, ...]
    base: dict | None = None

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        text = f"{int(self.used.sum())} of {self.used.size} channels fitted; "
        text += channel_summary(self.checks)
        if self.base is not None:
            b = self.base
            text += (
                f"; base rows (contact wrenches): scale {b['scale']:.3g} against the prior"
                if b["verdict"] == "agrees"
                else f"; base rows (contact wrenches): {b['verdict']}"
            )
        return text, self.lines


def channel_stage(
    model,
    raw_tau: np.ndarray,
    tau: np.ndarray,
    tau_prior: np.ndarray,
    dq: np.ndarray,
    opts: Options,
    ddq: np.ndarray | None = None,
    base: dict | None = None,
) -> Channels:
    """Check every channel (``check_channels``); refuse a log with none left to fit.

    Args:
      model: the model (its joint-model columns' joints).
      raw_tau: ``(N0, nv)`` the training part's torques as recorded (before
        resampling blurs their quantisation), times ``torque_scale``.
      tau: ``(N, nv)`` the filtered training torques the fit uses.
      tau_prior: ``(N, nv)`` the torques the prior predicts on the same samples.
      dq: ``(N, nv)`` the joint velocities on the same samples.
      opts: the options (``exclude_torque``, ``torque_scale``, the joint model).
      ddq: ``(N, nv)`` the joint accelerations on the same samples: with the
        armature modelled, its column is cleared with the friction's before the
        scale check.
      base: a floating base's base-row check (``floating.base_check``), or None:
        its warning joins the channels'.

    Raises:
      IdentifyError: ``"log"``, when no channel is left to fit.
    """
    joints = opts.joints
    jm = opts.joint_model
    acc = ddq if "armature" in jm.kinds else None
    checks = check_channels(joints, raw_tau, tau, tau_prior, opts.exclude_torque, dq=dq, ddq=acc)
    used = np.array([not c.excluded for c in checks])
    if not used.any():
        raise IdentifyError(
            "log",
            "no torque channel is left to fit: "
            + "; ".join(f"{c.joint}: {c.reason}" for c in checks),
        )
    # a column stays where one of the rows it acts on is fitted
    kept = np.asarray((jm.column_rows(model) & used[None, :]).any(axis=1), bool)
    warnings, notes = channel_messages(checks, opts.scale)
    if base is not None:
        from .floating_base import base_warnings

        warnings = [*warnings, *base_warnings(base)]
    lines = [*("warning: " + w for w in warnings), *("note: " + n for n in notes)]
    return Channels(checks, used, kept, tuple(warnings), tuple(notes), tuple(lines), base)
