"""The arguments of ``identify_robot``, checked once: ``Options`` and ``check_options``.

Every argument error of the pipeline that does not depend on the log's
content is raised here, before any stage runs, as an ``IdentifyError``
naming the argument (a ``TypeError`` for a model or log of the wrong type).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ...multibody.friction import FrictionModel
    from ...multibody.joint_model import JointModel

#: Stage names, in order, as passed to ``progress``.
STAGES = (
    "prior",
    "sampling",
    "filter",
    "regressor",
    "torques",
    "least squares",
    "fit",
    "validate",
)
#: Default held-out fraction of the log.
DEFAULT_HOLDOUT = 0.2
SAMPLE_WEIGHTINGS = ("autocorrelation", "bandwidth", "independent")


class IdentifyError(ValueError):
    """An input of [identify_robot][spatialjax.identification.identify_robot] that cannot be used.

    Attributes:
      argument: the keyword (``"lowpass"``, ``"holdout"``, ``"log"``,
        ``"validate[1]"``, ``"prior"``, ...).
      detail: the message without the argument's name.
    """

    def __init__(self, argument: str, detail: str):
        self.argument = argument
        self.detail = detail
        super().__init__(f"{argument}: {detail}")


@dataclasses.dataclass(frozen=True, eq=False)
class Options:
    """``identify_robot``'s arguments, checked and resolved (the stages read only these).

    Attributes:
      joints: the model's joints (the identified ones), model order.
      body_names: the model's moving bodies, model order.
      lowpass: Butterworth cut-off in Hz, None (no low-pass) or ``"auto"``
        (chosen from the log by the filter stage).
      decimate: decimation factor (≥ 1) or ``"auto"``.
      friction: the ``FrictionModel`` of ``joint_model``'s friction kinds.
      gamma: ``γ`` as given, or None.
      prior_spread: ``s`` of the default ``γ``.
      holdout: held-out fraction in ``[0, 1)``.
      sample_weighting: one of ``SAMPLE_WEIGHTINGS``.
      repair_prior: repair inconsistent prior bodies (True) or refuse them.
      repair_floor: relative floor of repaired bodies, in ``(0, 1)``.
      exclude_torque: joints whose channel leaves the data term.
      torque_scale: ``(n_joints,)`` factor per channel (1 where not given).
      free: the links to identify as given, or None (all).
      free_mask: ``(nbodies,)`` the bodies identified.
      rate: resampling rate in Hz, or None.
      max_gap: longest interval accepted, s, or None.
      gravity: world-frame gravity ``(3,)``, m/s² (the model's root frame for a
        fixed base), never zero.
      ignore_limits: positions outside the joint limits warn instead of refusing.
      joint_model: the ``JointModel``: the joint-model columns (armature,
        viscous, Coulomb, offset) fitted with the links.
      floating_base: the model has a free flyer (the log a base pose).
      body_joints: each moving body's joint, model order (the free flyer's
        first for a floating base; ``joints`` otherwise).
      contact_method: ``"auto"``, ``"wrenches"`` or ``"projection"``
        ([floating_base_rows][spatialjax.identification.floating_base_rows]).
      contact_type: ``"point"`` or ``"surface"``.
      contact_speed: speed below which an unscheduled contact counts as closed, m/s.
    """

    joints: tuple[str, ...]
    body_names: tuple[str, ...]
    lowpass: float | str | None
    decimate: int | str
    friction: FrictionModel
    gamma: float | None
    prior_spread: float
    holdout: float
    sample_weighting: str
    repair_prior: bool
    repair_floor: float
    exclude_torque: tuple[str, ...]
    torque_scale: np.ndarray
    free: tuple[str, ...] | None
    free_mask: np.ndarray
    rate: float | None
    max_gap: float | None
    gravity: tuple[float, float, float]
    ignore_limits: bool
    joint_model: JointModel
    floating_base: bool = False
    body_joints: tuple[str, ...] = ()
    contact_method: str = "auto"
    contact_type: str = "point"
    contact_speed: float = 0.05


def _friction_model(friction):
    """A FrictionModel from the deprecated ``friction``: None (the default terms) or as
    ``_parsed`` takes it."""
    from ...multibody import FrictionModel

    return FrictionModel() if friction is None else _parsed(FrictionModel, friction, "friction")


def _as_joint_model(joint_model):
    """A JointModel from ``identify_robot``'s ``joint_model``: one, a text such as
    ``"armature,coulomb"`` or a sequence of kinds; ``IdentifyError`` naming it otherwise."""
    from ...multibody import JointModel

    return _parsed(JointModel, joint_model, "joint_model")


def _parsed(kind, value, name: str):
    """``value`` as a ``kind`` (``FrictionModel`` or ``JointModel``): one already, a
    comma-separated text (``kind.parse``) or a sequence of kinds; ``IdentifyError`` naming
    ``name`` otherwise."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        try:
            return kind.parse(value)
        except ValueError as e:
            raise IdentifyError(name, str(e)) from None
    try:
        return kind(tuple(value))
    except (TypeError, ValueError) as e:
        raise IdentifyError(name, str(e).partition(": ")[2] or str(e)) from None


def resolve_joint_model(joint_model, friction):
    """``(JointModel, deprecated)`` from ``identify_robot``'s ``joint_model`` and ``friction``.

    ``joint_model`` None and ``friction`` None: all four kinds. ``friction``
    (deprecated) alone: its friction kinds with the armature
    (``JointModel.from_friction``); ``deprecated`` is then True.

    Raises:
      IdentifyError: ``"joint_model"`` or ``"friction"`` that cannot be read, or both given.
    """
    from ...multibody import JointModel

    if friction is None:
        return (JointModel() if joint_model is None else _as_joint_model(joint_model)), False
    if joint_model is not None:
        raise IdentifyError(
            "friction",
            "pass joint_model only (friction is deprecated: joint_model's kinds are armature, "
            "viscous, coulomb and offset)",
        )
    return JointModel.from_friction(_friction_model(friction)), True


def _check_free(free, body_names) -> np.ndarray:
    """Boolean mask of the bodies to identify."""
    nb = len(body_names)
    if free is None:
        return np.ones(nb, bool)
    if isinstance(free, str):
        raise IdentifyError("free", f"expected a sequence of link names, got the string {free!r}")
    names = list(free)
    if not names:
        raise IdentifyError("free", "expected at least one link name, got none")
    for n in names:
        if n not in body_names:
            raise IdentifyError(
                "free",
                f"{n!r} is no moving body of the model (moving bodies, each a joint's child link: "
                f"{', '.join(body_names)})",
            )
    if len(set(names)) != len(names):
        raise IdentifyError("free", f"a link is named twice in {names}")
    return np.array([b in names for b in body_names])


def _per_joint(mapping, joints, what: str, *, default: float) -> np.ndarray:
    """A ``{joint: value}`` option as a per-joint array."""
    out = np.full(len(joints), default, np.float64)
    for name, value in dict(mapping or {}).items():
        if name not in joints:
            raise IdentifyError(
                what, f"{name!r} is no identified joint (joints: {', '.join(joints)})"
            )
        v = float(value)
        if not math.isfinite(v) or v == 0:
            raise IdentifyError(what, f"{name!r}: expected a finite non-zero factor, got {value!r}")
        out[joints.index(name)] = v
    return out


def _is_number(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating))


def _check_filter(lowpass, decimate) -> tuple:
    """``(lowpass, decimate)`` checked by the filter choice's own rules (``"auto"`` allowed)."""
    from .._filter_choice import check_decimate, check_lowpass

    try:
        return check_lowpass(lowpass), check_decimate(decimate)
    except (TypeError, ValueError) as e:
        arg, _, detail = str(e).partition(": ")
        raise IdentifyError(arg, detail) from None


def _check_prior(gamma, prior_spread, repair_floor) -> None:
    if gamma is not None and not (math.isfinite(gamma) and gamma >= 0):
        raise IdentifyError("gamma", f"expected a finite number >= 0, got {gamma!r}")
    if not (_is_number(prior_spread) and math.isfinite(prior_spread) and prior_spread > 0):
        raise IdentifyError("prior_spread", f"expected a number > 0, got {prior_spread!r}")
    if not (_is_number(repair_floor) and 0 < repair_floor < 1):
        raise IdentifyError("repair_floor", f"expected a number in (0, 1), got {repair_floor!r}")


def _check_gravity(gravity) -> tuple[float, float, float]:
    try:
        g = np.asarray(gravity, np.float64)
    except (TypeError, ValueError):
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise IdentifyError(
            "gravity", f"expected 3 finite numbers (m/s², world frame), got {gravity!r}"
        )
    if not np.any(g):
        raise IdentifyError(
            "gravity",
            "expected the gravitational acceleration (m/s², in the world frame: the model's root "
            f"frame for a fixed base), a non-zero vector such as (0, 0, -9.81) for a robot "
            f"standing upright or (0, -9.81, 0) for one on a wall whose root y axis points up; "
            f"got {gravity!r}",
        )
    return (float(g[0]), float(g[1]), float(g[2]))


def _check_torques(exclude_torque, torque_scale, joints) -> np.ndarray:
    if isinstance(exclude_torque, str):
        raise IdentifyError(
            "exclude_torque",
            f"expected a sequence of joint names, got the string {exclude_torque!r}",
        )
    for name in exclude_torque:
        if name not in joints:
            raise IdentifyError(
                "exclude_torque", f"{name!r} is no identified joint (joints: {', '.join(joints)})"
            )
    return _per_joint(torque_scale, joints, "torque_scale", default=1.0)


#: Contact methods of a floating-base log (``"auto"``: wrenches when the log has them).
CONTACT_METHODS = ("auto", "wrenches", "projection")


def _check_contacts(floating: bool, method, contact_type, speed) -> None:
    from .._floating import CONTACT_TYPES

    if method not in CONTACT_METHODS:
        raise IdentifyError("contact_method", f"expected one of {CONTACT_METHODS}, got {method!r}")
    if contact_type not in CONTACT_TYPES:
        raise IdentifyError(
            "contact_type", f"expected one of {CONTACT_TYPES}, got {contact_type!r}"
        )
    if not (_is_number(speed) and math.isfinite(speed) and speed > 0):
        raise IdentifyError("contact_speed", f"expected a speed > 0 in m/s, got {speed!r}")
    if not floating and method != "auto":
        raise IdentifyError(
            "contact_method",
            f"{method!r} applies to a floating-base robot; the model is fixed-base",
        )


def _check_base(model, log) -> bool:
    """Whether the run is floating-base: the model has a free flyer; the log must agree."""
    floating = bool(model.floating_base or "free_flyer" in model.joint_types)
    if floating and not log.floating_base:
        raise IdentifyError(
            "log",
            f"has no base pose (base_position, base_quaternion), but model {model.name!r} is "
            "floating-base: log the base's pose, or load the model without floating_base=True "
            "for a fixed-base robot",
        )
    if log.floating_base and not floating:
        raise IdentifyError(
            "model",
            f"{model.name!r} is fixed-base, but the log has a base pose (a floating-base log): "
            "load it with floating_base=True",
        )
    return floating


def check_options(
    model,
    log,
    *,
    lowpass: float | str | None,
    decimate: int | str,
    friction,
    gamma: float | None,
    prior_spread: float,
    holdout: float,
    sample_weighting: str,
    repair_prior_bodies: bool,
    repair_floor: float,
    exclude_torque: Sequence[str],
    torque_scale: Mapping[str, float] | None,
    free: Sequence[str] | None,
    rate: float | None,
    max_gap: float | None,
    gravity,
    ignore_limits: bool,
    joint_model=None,
    contact_method: str = "auto",
    contact_type: str = "point",
    contact_speed: float = 0.05,
) -> Options:
    """``identify_robot``'s arguments checked (its keywords; ``log`` for its type only).

    ``joint_model`` and ``friction`` as ``resolve_joint_model`` takes them.

    Raises:
      IdentifyError: naming the argument.
      TypeError: ``model`` not a Model, ``log`` not a RobotLog.
    """
    import spatialjax.multibody as mb

    from .._log import RobotLog

    if not isinstance(model, mb.Model):
        raise TypeError(f"model: expected a spatialjax.multibody.Model, got {type(model).__name__}")
    if not isinstance(log, RobotLog):
        raise TypeError(f"log: expected a RobotLog, got {type(log).__name__}")
    floating = _check_base(model, log)
    _check_contacts(floating, contact_method, contact_type, contact_speed)
    jm, _ = resolve_joint_model(joint_model, friction)
    if sample_weighting not in SAMPLE_WEIGHTINGS:
        raise IdentifyError(
            "sample_weighting", f"expected one of {SAMPLE_WEIGHTINGS}, got {sample_weighting!r}"
        )
    if isinstance(holdout, bool) or not (isinstance(holdout, (int, float)) and 0 <= holdout < 1):
        raise IdentifyError("holdout", f"expected a fraction in [0, 1), got {holdout!r}")
    lowpass, decimate = _check_filter(lowpass, decimate)
    _check_prior(gamma, prior_spread, repair_floor)
    body_joints, body_names = tuple(model.joint_names), tuple(model.body_names)
    joints = tuple(j for j, ty in zip(body_joints, model.joint_types, strict=True)
                   if ty != "free_flyer")  # fmt: skip
    scale = _check_torques(exclude_torque, torque_scale, joints)
    free_mask = _check_free(free, body_names)
    g = _check_gravity(gravity)
    if not isinstance(ignore_limits, (bool, np.bool_)):
        raise IdentifyError("ignore_limits", f"expected True or False, got {ignore_limits!r}")
    return Options(
        joints=joints,
        body_names=body_names,
        lowpass=lowpass,
        decimate=decimate,
        friction=jm.friction,
        gamma=gamma,
        prior_spread=prior_spread,
        holdout=holdout,
        sample_weighting=sample_weighting,
        repair_prior=bool(repair_prior_bodies),
        repair_floor=repair_floor,
        exclude_torque=tuple(exclude_torque),
        torque_scale=scale,
        free=None if free is None else tuple(free),
        free_mask=free_mask,
        rate=rate,
        max_gap=max_gap,
        gravity=g,
        ignore_limits=bool(ignore_limits),
        joint_model=jm,
        floating_base=floating,
        body_joints=body_joints,
        contact_method=contact_method,
        contact_type=contact_type,
        contact_speed=float(contact_speed),
    )
