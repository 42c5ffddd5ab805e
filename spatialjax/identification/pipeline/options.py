"""The options of ``identify_robot``: ``IdentifyOptions``, checked once, and ``Options``.

``IdentifyOptions`` holds what the user chose (a frozen dataclass, each field
checked when it is built, naming the field in an ``IdentifyError``).
``resolve`` checks it against the model and the log (joint and link names,
fixed or floating base) and returns ``Options``: the same fields plus what
the model fixes, which is what the stages read. The command line builds the
same ``IdentifyOptions`` from its arguments (each field is the ``dest`` of
one ``argparse`` option), and the report's ``settings`` section is
``IdentifyOptions.to_dict()``.

Adding an option: one field of ``IdentifyOptions`` with its default and
docstring entry, its check in ``_checked`` (or, when it names the model's
joints or links, in ``resolve``), and, for the command line, one
``parser.add_argument`` whose ``dest`` is the field's name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import IdentifyError as IdentifyError
from ..errors import IdentifyTypeError
from ..fitting.floating_rows import CONTACT_SPEED, CONTACT_TYPES
from ..fitting.robot_fit import PRIOR_SPREAD
from ..priors.prior_repair import REPAIR_FLOOR

if TYPE_CHECKING:
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
#: Contact methods of a floating-base log (``"auto"``: wrenches when the log has them).
CONTACT_METHODS = ("auto", "wrenches", "projection")


@dataclasses.dataclass(frozen=True)
class IdentifyOptions:
    """The options of [identify_robot][spatialjax.identification.identify_robot], checked.

    Every field is checked when the object is built (``IdentifyOptions(...)``,
    ``dataclasses.replace``, or ``identify_robot``'s keywords); a bad value
    raises an ``IdentifyError`` whose ``argument`` is the field's name. Values
    are stored in one form: numbers as float, sequences as tuples,
    ``joint_model`` as a ``JointModel`` (None: the default, all four
    kinds). The names of joints and links are checked against the model by
    ``identify_robot``.

    Attributes:
      lowpass: ``"auto"`` (default: the cut-off chosen from the training
        part's spectrum by
        [choose_filter][spatialjax.identification.choose_filter]), a
        Butterworth cut-off in Hz, or None (no filter: ``q`` differentiated raw).
      decimate: keep every ``decimate``-th sample after filtering; ``"auto"``
        (default): the largest factor whose Nyquist frequency stays at least
        ``NYQUIST_MARGIN`` times the cut-off (1 without a low-pass).
      joint_model: the joint parameters fitted with the links: a
        [JointModel][spatialjax.multibody.JointModel], its kinds as a tuple or
        a string (``"armature,viscous,coulomb,offset"``, ``"none"``). Default:
        all four. The armature gets a weak prior around the model file's value.
        With a ``transmission`` ([Transmission][spatialjax.multibody.Transmission]:
        ``JointModel(kinds, transmission=Transmission.from_csv("T.csv"))``) the kinds are
        fitted and reported per motor, in the motor's units (fixed base only).
      gamma: the prior's weight ``γ ≥ 0`` (default None: ``2 / prior_spread²``).
      prior_spread: ``s > 0`` of the default ``γ``.
      holdout: the last fraction ``[0, 1)`` of the log held out for validation.
      sample_weighting: ``"autocorrelation"`` (default), ``"bandwidth"`` or
        ``"independent"`` (the identification guide).
      repair_prior_bodies: repair prior bodies that are not strictly consistent
        (True) or refuse them (False).
      repair_floor: relative floor of repaired bodies, in ``(0, 1)``.
      exclude_torque: joints whose torque channel leaves the data term.
      torque_scale: ``{joint: k}``: the channel is multiplied by ``k ≠ 0``
        first (``k < 0`` flips its sign).
      free: links (moving bodies) to identify; the others are held at the
        model's values. Default None: all.
      rate: resampling rate in Hz (default None: the median interval's).
      max_gap: the longest interval accepted in ``t``, s (default None: the
        [resample_log][spatialjax.identification.resample_log] rule).
      gravity: gravitational acceleration ``(3,)`` in m/s², in the world frame: for a
        fixed base, the model's root frame (``(0, 0, -9.81)``: standing upright with the
        root ``z`` up; ``(0, -9.81, 0)``: on a wall whose root ``y`` points up). A zero
        vector is refused; a norm more than 5 % off 9.81 is warned about, not refused.
      ignore_limits: go on, with a warning, when a log's positions leave the
        model's joint limits by more than the margin (default: refuse).
      contact_method: floating base: ``"wrenches"``, ``"projection"`` or
        ``"auto"`` (default: wrenches when the log has them); a fixed base
        takes ``"auto"`` only.
      contact_type: floating base: ``"point"`` (default) or ``"surface"``.
      contact_speed: floating base without a logged ``contact`` schedule: a
        contact counts as closed while its frame moves slower than this, m/s.

    Examples:
      >>> from spatialjax.identification import IdentifyError, IdentifyOptions
      >>> o = IdentifyOptions(lowpass=20, joint_model="armature,coulomb")
      >>> o.lowpass, o.joint_model.kinds, o.holdout
      (20.0, ('armature', 'coulomb'), 0.2)
      >>> try:
      ...     IdentifyOptions(holdout=1.5)
      ... except IdentifyError as e:
      ...     print(e.argument, "|", e.detail)
      holdout | expected a fraction in [0, 1), got 1.5
    """

    lowpass: float | str | None = "auto"
    decimate: int | str = "auto"
    joint_model: Any = None
    gamma: float | None = None
    prior_spread: float = PRIOR_SPREAD
    holdout: float = DEFAULT_HOLDOUT
    sample_weighting: str = "autocorrelation"
    repair_prior_bodies: bool = True
    repair_floor: float = REPAIR_FLOOR
    exclude_torque: Sequence[str] = ()
    torque_scale: Mapping[str, float] = dataclasses.field(default_factory=dict)
    free: Sequence[str] | None = None
    rate: float | None = None
    max_gap: float | None = None
    gravity: Sequence[float] = (0.0, 0.0, -9.81)
    ignore_limits: bool = False
    contact_method: str = "auto"
    contact_type: str = "point"
    contact_speed: float = CONTACT_SPEED

    def __post_init__(self):
        for name, value in _checked(self).items():
            object.__setattr__(self, name, value)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The options' names (the fields of this class), in order."""
        return tuple(f.name for f in dataclasses.fields(IdentifyOptions))

    def to_dict(self) -> dict:
        """The options as plain Python, sequences as lists (the report's ``settings``;
        ``joint_model``: its kinds)."""
        out: dict[str, Any] = {}
        for name in IdentifyOptions.names():
            v = getattr(self, name)
            if name == "joint_model":
                v = resolve_joint_model(v).kinds
            elif isinstance(v, Mapping):
                v = dict(v)
            out[name] = list(v) if isinstance(v, tuple) else v
        return out


def options_with(options: IdentifyOptions | None, changes: Mapping[str, Any]) -> IdentifyOptions:
    """``options`` (default ``IdentifyOptions()``) with ``changes``, each naming a field.

    Raises:
      IdentifyTypeError: a name that is no option, listing them.
      IdentifyError: a value that the option refuses.
    """
    if options is not None and not isinstance(options, IdentifyOptions):
        raise IdentifyTypeError(
            "options", f"expected an IdentifyOptions, got {type(options).__name__}"
        )
    base = IdentifyOptions() if options is None else options
    for name in changes:
        if name not in IdentifyOptions.names():
            raise IdentifyTypeError(
                name, f"is no option of identify_robot (options: {', '.join(base.names())})"
            )
    return dataclasses.replace(base, **changes) if changes else base


def _is_number(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating))


def _optional_positive(x, name: str) -> float | None:
    from ..errors import positive

    return None if x is None else positive(x, name)


def _names(value, name: str, what: str) -> tuple[str, ...]:
    """A sequence of names as a tuple (a lone string is refused: it is not a sequence of names)."""
    if isinstance(value, str):
        raise IdentifyTypeError(
            name, f"expected a sequence of {what} names, got the string {value!r}"
        )
    try:
        names = tuple(value)
    except TypeError:
        raise IdentifyTypeError(
            name, f"expected a sequence of {what} names, got {value!r}"
        ) from None
    if any(not isinstance(n, str) for n in names):
        raise IdentifyTypeError(name, f"expected {what} names (strings), got {names!r}")
    if len(set(names)) != len(names):
        raise IdentifyError(name, f"a name is given twice in {list(names)}")
    return names


def _checked(o: IdentifyOptions) -> dict[str, Any]:
    """Every field of ``o`` checked, in its one stored form (raises naming the field)."""
    from ..logs.filter_choice import check_decimate, check_lowpass

    if o.sample_weighting not in SAMPLE_WEIGHTINGS:
        raise IdentifyError(
            "sample_weighting", f"expected one of {SAMPLE_WEIGHTINGS}, got {o.sample_weighting!r}"
        )
    h = o.holdout
    if not (_is_number(h) and 0 <= h < 1):
        raise IdentifyError("holdout", f"expected a fraction in [0, 1), got {h!r}")
    for name in ("repair_prior_bodies", "ignore_limits"):
        if not isinstance(getattr(o, name), (bool, np.bool_)):
            raise IdentifyError(name, f"expected True or False, got {getattr(o, name)!r}")
    out = {
        "lowpass": check_lowpass(o.lowpass),
        "decimate": check_decimate(o.decimate),
        "holdout": float(h),
        "rate": _optional_positive(o.rate, "rate"),
        "max_gap": _optional_positive(o.max_gap, "max_gap"),
        "gravity": _check_gravity(o.gravity),
        "exclude_torque": _names(o.exclude_torque, "exclude_torque", "joint"),
        "free": None if o.free is None else _names(o.free, "free", "link"),
        "torque_scale": _check_scale(o.torque_scale),
        "repair_prior_bodies": bool(o.repair_prior_bodies),
        "ignore_limits": bool(o.ignore_limits),
    }
    if out["free"] == ():
        raise IdentifyError("free", "expected at least one link name, got none")
    out |= _check_prior(o.gamma, o.prior_spread, o.repair_floor)
    out |= _check_contacts(o.contact_method, o.contact_type, o.contact_speed)
    jm = resolve_joint_model(o.joint_model)
    out["joint_model"] = None if o.joint_model is None else jm  # None: the default
    return out


def _check_scale(scale) -> dict[str, float]:
    if scale is None:
        return {}
    if not isinstance(scale, Mapping):
        raise IdentifyTypeError(
            "torque_scale", f"expected a mapping {{joint: factor}}, got {type(scale).__name__}"
        )
    out = {}
    for name, value in scale.items():
        if not (_is_number(value) and math.isfinite(value) and value != 0):
            raise IdentifyError(
                "torque_scale", f"{name!r}: expected a finite non-zero factor, got {value!r}"
            )
        out[str(name)] = float(value)
    return out


def _check_prior(gamma, prior_spread, repair_floor) -> dict[str, Any]:
    if gamma is not None and not (_is_number(gamma) and math.isfinite(gamma) and gamma >= 0):
        raise IdentifyError("gamma", f"expected a finite number >= 0, got {gamma!r}")
    if not (_is_number(prior_spread) and math.isfinite(prior_spread) and prior_spread > 0):
        raise IdentifyError("prior_spread", f"expected a number > 0, got {prior_spread!r}")
    if not (_is_number(repair_floor) and 0 < repair_floor < 1):
        raise IdentifyError("repair_floor", f"expected a number in (0, 1), got {repair_floor!r}")
    return {
        "gamma": None if gamma is None else float(gamma),
        "prior_spread": float(prior_spread),
        "repair_floor": float(repair_floor),
    }


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
            "frame for a fixed base), a non-zero vector such as (0, 0, -9.81) for a robot "
            "standing upright or (0, -9.81, 0) for one on a wall whose root y axis points up; "
            f"got {gravity!r}",
        )
    return (float(g[0]), float(g[1]), float(g[2]))


def _check_contacts(method, contact_type, speed) -> dict[str, Any]:
    if method not in CONTACT_METHODS:
        raise IdentifyError("contact_method", f"expected one of {CONTACT_METHODS}, got {method!r}")
    if contact_type not in CONTACT_TYPES:
        raise IdentifyError(
            "contact_type", f"expected one of {CONTACT_TYPES}, got {contact_type!r}"
        )
    if not (_is_number(speed) and math.isfinite(speed) and speed > 0):
        raise IdentifyError("contact_speed", f"expected a speed > 0 in m/s, got {speed!r}")
    return {"contact_speed": float(speed)}


@dataclasses.dataclass(frozen=True, eq=False)
class Options(IdentifyOptions):
    """``IdentifyOptions`` resolved against the model and the log: what the stages read.

    Built by ``resolve`` from options already checked (not checked again);
    ``joint_model`` is always a ``JointModel`` here.

    Attributes:
      joints: the model's joints (the identified ones), model order.
      body_names: the model's moving bodies, model order.
      body_joints: each moving body's joint, model order (the free flyer's
        first for a floating base; ``joints`` otherwise).
      floating_base: the model has a free flyer (the log a base pose).
      free_mask: ``(nbodies,)`` the bodies identified.
      scale: ``(n_joints,)`` ``torque_scale``'s factor per channel (1 where not given).
    """

    joints: tuple[str, ...] = ()
    body_names: tuple[str, ...] = ()
    body_joints: tuple[str, ...] = ()
    floating_base: bool = False
    free_mask: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, bool))
    scale: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))

    def __post_init__(self):
        pass  # built by ``resolve`` from checked options


def _parsed(kind, value, name: str):
    """``value`` as a ``kind`` (``JointModel``): one already, a
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


def resolve_joint_model(joint_model) -> JointModel:
    """The JointModel of ``identify_robot``'s ``joint_model``: None is all four kinds.

    Raises:
      IdentifyError: a ``"joint_model"`` that cannot be read.
    """
    from ...multibody import JointModel

    return JointModel() if joint_model is None else _parsed(JointModel, joint_model, "joint_model")


def _check_transmission(model, jm, floating: bool) -> None:
    """A joint model's transmission over the model's joints (``IdentifyError`` naming
    ``joint_model``, with the file, row and column of a CSV)."""
    from ...multibody.transmission import TransmissionError

    if jm.transmission is None:
        return
    if floating:
        raise IdentifyError(
            "joint_model", "a transmission with a floating base is not supported (fixed base only)"
        )
    try:
        jm.complete_transmission(model)
    except TransmissionError as e:
        raise IdentifyError("joint_model", f"transmission: {e}") from None


def _check_free(free, body_names) -> np.ndarray:
    """Boolean mask of the bodies to identify."""
    if free is None:
        return np.ones(len(body_names), bool)
    for n in free:
        if n not in body_names:
            raise IdentifyError(
                "free",
                f"{n!r} is no moving body of the model (moving bodies, each a joint's child link: "
                f"{', '.join(body_names)})",
            )
    return np.array([b in free for b in body_names])


def _check_joint_names(options: IdentifyOptions, joints) -> np.ndarray:
    """``exclude_torque`` and ``torque_scale`` against the joints; the per-joint factors."""
    for what, names in (("exclude_torque", options.exclude_torque),
                        ("torque_scale", tuple(options.torque_scale))):  # fmt: skip
        for name in names:
            if name not in joints:
                raise IdentifyError(
                    what, f"{name!r} is no identified joint (joints: {', '.join(joints)})"
                )
    return np.array([options.torque_scale.get(j, 1.0) for j in joints], np.float64)


def _check_base(model, log, options: IdentifyOptions) -> bool:
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
    if not floating and options.contact_method != "auto":
        raise IdentifyError(
            "contact_method",
            f"{options.contact_method!r} applies to a floating-base robot; the model is fixed-base",
        )
    return floating


def resolve(model, log, options: IdentifyOptions) -> Options:
    """``options`` checked against ``model`` and ``log`` (its type and its base only).

    Raises:
      IdentifyError: naming the argument (a joint or link name the model
        lacks, a base pose the model does not expect, ...).
      TypeError: ``model`` not a Model, ``log`` not a RobotLog.
    """
    import spatialjax.multibody as mb

    from ..logs.robot_log import RobotLog

    if not isinstance(model, mb.Model):
        raise IdentifyTypeError(
            "model", f"expected a spatialjax.multibody.Model, got {type(model).__name__}"
        )
    if not isinstance(log, RobotLog):
        raise IdentifyTypeError("log", f"expected a RobotLog, got {type(log).__name__}")
    floating = _check_base(model, log, options)
    body_joints, body_names = tuple(model.joint_names), tuple(model.body_names)
    joints = tuple(j for j, ty in zip(body_joints, model.joint_types, strict=True)
                   if ty != "free_flyer")  # fmt: skip
    scale = _check_joint_names(options, joints)
    free_mask = _check_free(options.free, body_names)
    given = {name: getattr(options, name) for name in IdentifyOptions.names()}
    given["joint_model"] = resolve_joint_model(options.joint_model)
    _check_transmission(model, given["joint_model"], floating)
    return Options(**given, joints=joints, body_names=body_names, body_joints=body_joints,
                   floating_base=floating, free_mask=free_mask, scale=scale)  # fmt: skip
