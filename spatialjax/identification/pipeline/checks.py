"""Warnings about the run as a whole: the gravity assumed, and whether the held-out check means
what it seems to (``gravity_warnings``, ``holdout_warnings``).

Each returns plain-words warnings for the report (``RobotIdentification.warnings``; the
command prints them on stderr); none is raised on a log and options that are right.
"""

from __future__ import annotations

import numpy as np

#: Standard gravity, m/s².
STANDARD_GRAVITY = 9.80665
#: A gravity whose norm is off Earth's by more than this fraction is warned about (the
#: surface's 9.76–9.83 m/s² and the common rounding to 10 stay inside).
GRAVITY_TOLERANCE = 0.05


def gravity_text(gravity) -> str:
    """``(0, -9.81, 0)``: the vector as the stage line prints it."""
    return "(" + ", ".join(f"{x:.4g}" for x in np.asarray(gravity, np.float64) + 0.0) + ")"


def gravity_warnings(gravity) -> tuple[str, ...]:
    """A warning when the norm of ``gravity`` (m/s²) is more than 5 % off Earth's.

    Not an error: a robot on the Moon or in a centrifuge has another gravity;
    the usual cause is a unit (``1`` for 1 g, ``32.2`` in ft/s²), and the
    identified masses scale with ``1 / |g|``.
    """
    n = float(np.linalg.norm(np.asarray(gravity, np.float64)))
    if abs(n / STANDARD_GRAVITY - 1.0) <= GRAVITY_TOLERANCE:
        return ()
    return (
        f"gravity {gravity_text(gravity)} m/s² has norm {n:.4g}, not Earth's 9.81: the masses "
        "identified scale with 1/|g|; right for a robot on another planet or in a centrifuge, "
        "otherwise give it in m/s² (1 g = 9.81, not 1; 32.2 ft/s² = 9.81 m/s²)",
    )


#: A part in more than this share of whose samples every fitted joint rests is "mostly at rest".
MOSTLY_AT_REST = 0.5
#: The fit's error on a part is "far above" the prior's beyond this factor ...
PRIOR_FACTOR = 2.0
#: ... and this margin (relative error), so that an exact prior's noise-level error never warns.
PRIOR_MARGIN = 0.05


def error_rows(regs, data) -> list | None:
    """Per part, ``(N_k, nv)`` the samples that count in each joint's error, or None (all).

    The training part's are the fit's rows (``data.moving``); the held-out
    part's and each validation log's are judged by the training part's
    thresholds (``rest_threshold``), so that every part leaves out what the
    fit left out. None without a rest rule (no Coulomb friction) and for a
    floating base (whose rows drop the joint equations at rest before the
    contacts are projected out, on the training part only).
    """
    if regs.rows or data.moving is None:
        return None
    from ..priors.joint_prior import rest_threshold

    thr = rest_threshold(regs.dq[0])
    return [data.moving] + [np.abs(dq) > thr for dq in regs.dq[1:]]


def rest_shares(regs, used) -> list[float]:
    """Per part after the training part, the share of its samples at which every joint of
    ``used`` (``(n,)`` booleans) rests by the training part's thresholds (whatever the joint
    model): the robot stands still."""
    from ..priors.joint_prior import rest_threshold

    thr = rest_threshold(regs.dq[0])
    live = np.asarray(used, bool)
    if not live.any():
        return [0.0 for _ in regs.dq[1:]]
    return [float(np.mean(np.all(np.abs(dq[:, live]) <= thr[live], axis=1)))
            for dq in regs.dq[1:]]  # fmt: skip


def _joints_text(pairs) -> str:
    return ", ".join(f"{j} ({e:.3g})" for j, e in pairs)


def _worse_than_zero(part: str, fig, joints, used) -> list[str]:
    """The fitted joints whose torque the fit predicts worse than zero on ``part``."""
    bad = [(j, fig.per_joint[j]) for j, u in zip(joints, used, strict=True)
           if u and fig.per_joint.get(j) is not None and fig.per_joint[j] > 1.0]  # fmt: skip
    if not bad:
        return []
    return [
        f"{part}: the fit predicts the torque of {_joints_text(bad)} worse than zero would "
        "(relative error above 1): the joint's torque is not what the model predicts for it; "
        "likely a coupled transmission (a wrist whose motors each drive several joints), a "
        "channel in other units or sign (torque_scale, --torque-scale), an unmodelled load "
        "(a payload, a cable, a spring), or the wrong gravity (gravity, --gravity)"
    ]


def _far_above_prior(part: str, errors, counts: str) -> list[str]:
    fit, prior = errors["fit"], errors["prior"]
    if fit is None or prior is None or fit.overall is None or prior.overall is None:
        return []
    e, e0 = float(fit.overall), float(prior.overall)
    if not (e > PRIOR_FACTOR * e0 and e > e0 + PRIOR_MARGIN):
        return []
    return [
        f"{part}: the fit predicts the torques {e / e0:.3g}× worse than the prior (the model "
        f"file's bodies and joint parameters): {e:.3g} against {e0:.3g}; it does not carry "
        f"over from the training part ({counts}): too short or too narrow a training part "
        "(hold out less: holdout, --holdout; a longer or richer excitation), or a part the "
        "training never saw (another load, another range of motion)"
    ]


def _mostly_at_rest(part: str, share: float, holdout: bool) -> list[str]:
    if share <= MOSTLY_AT_REST:
        return []
    what = (
        "hold out a part where the robot moves: cut the rest off the log's end, give another "
        "log to validate on (validate, --validate), or hold out nothing (holdout 0)"
        if holdout
        else "validate on a log where the robot moves"
    )
    return [
        f"{part} is mostly at rest (every fitted joint rests in {100 * share:.0f} % of its "
        "samples, by the training part's speeds): its errors say little about the fit (a "
        f"robot at rest shows gravity and friction only); {what}"
    ]


def holdout_warnings(errors, validation, shares, *, joints, used, holdout: float,
                     counts: str) -> tuple[str, ...]:  # fmt: skip
    """Warnings on the held-out part and each validation log.

    Args:
      errors: the ``Errors`` (``holdout`` None without a held-out part).
      validation: the ``Validation`` entries.
      shares: ``rest_shares``: per part after the training part, the share of its samples
        at which the robot rests.
      joints: the channels' names; used: ``(nv,)`` those in the data term.
      holdout: the held-out fraction.
      counts: the training part's size in words (samples, effective samples, parameters).

    Returns:
      A warning when a part is mostly at rest (its errors measure little), one naming the
      joints whose torque the fit predicts worse than zero, and one when the fit predicts a
      part far worse than the prior (more than 2× and by more than 0.05).
    """
    parts = []
    if errors.fit.holdout is not None:
        sets = {k: getattr(errors, k).holdout for k in ("fit", "prior")}
        parts.append((f"the held-out part (the last {100 * holdout:.0f} % of the log)", sets, True))
    for k, v in enumerate(validation):
        sets = {"fit": v.errors.fit, "prior": v.errors.prior}
        parts.append((f"validation log {k}", sets, False))
    out: list[str] = []
    for (part, sets, held), share in zip(parts, shares, strict=True):
        out += _mostly_at_rest(part, share, held)
        if sets["fit"] is not None:
            out += _worse_than_zero(part, sets["fit"], joints, used)
        out += _far_above_prior(part, sets, counts)
    return tuple(out)
