"""``spatialjax identify MODEL LOG``: whole-robot inertial identification from a joint log.

Parsing and printing around
[`identify_robot`][spatialjax.identification.identify_robot]; exit status 0, or 2 (nothing
written). Usage: docs page ``identification.md#run-spatialjax-identify``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from .. import _util
from ..identification.fitting.floating_rows import CONTACT_SPEED, CONTACT_TYPES
from ..identification.output.report import (
    finite_or_none,
    jsonable,
    number_text,
    output_format_problem,
)
from ..identification.pipeline import DEFAULT_HOLDOUT, SAMPLE_WEIGHTINGS
from ..identification.pipeline import STAGES as _STAGES
from ..identification.pipeline.options import CONTACT_METHODS, IdentifyOptions
from ..multibody.joint_model import JOINT_KINDS, JointModel
from . import _args
from ._args import InputError, UsageError


def preload(args: argparse.Namespace) -> tuple[str, ...]:
    """Modules ``main`` loads before the run: the filter stage's (``scipy.linalg``, for its
    banded solves), unless ``--lowpass none`` leaves the log unfiltered."""
    return () if args.lowpass is None else ("scipy.linalg",)


# ------------------------------------------------------------------------- option types
def _holdout(text: str) -> float:
    x = _args.number(text, "--holdout")
    if not 0 <= x < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1), got {text!r}")
    return x


def _joint_model(text: str) -> tuple[str, ...]:
    try:
        return JointModel.parse(text).kinds
    except (TypeError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _torque_scale(text: str) -> tuple[str, float]:
    name, k = _args.name_number(text, "K")
    if k == 0:
        raise argparse.ArgumentTypeError(f"expected a finite, non-zero K, got {text!r}")
    return name, k


def _gravity(text: str) -> tuple[float, float, float]:
    """``--gravity GX,GY,GZ``: three finite numbers in m/s², not all zero."""
    parts = [p.strip() for p in text.split(",")]
    try:
        g = tuple(float(p) for p in parts)
    except ValueError:
        g = ()
    if len(g) != 3:
        raise argparse.ArgumentTypeError(
            f"expected GX,GY,GZ: three comma-separated numbers in m/s² (the model's root frame), "
            f"got {text!r}"
        )
    if not all(math.isfinite(x) for x in g):
        raise argparse.ArgumentTypeError(f"expected three finite numbers, got {text!r}")
    if not any(g):
        raise argparse.ArgumentTypeError(
            f"expected the gravitational acceleration, a non-zero vector such as 0,0,-9.81 (an "
            f"upright robot) or 0,-9.81,0 (on a wall, its root y axis up), got {text!r}"
        )
    return (g[0], g[1], g[2])


_holdout.__name__ = "--holdout"
_gravity.__name__ = "--gravity"
_joint_model.__name__ = "--joint-model"
_torque_scale.__name__ = "--torque-scale"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``spatialjax identify``; each ``dest`` is an ``IdentifyOptions`` field."""
    parser.epilog = (
        "exit status: 0 success, 2 for a usage error, a model or log that cannot be used, a fit "
        "that failed, or an output that cannot be written (nothing is written then)"
    )
    parser.add_argument("model", metavar="MODEL", help="the robot: URDF (or MJCF, SDFormat)")
    parser.add_argument(
        "log",
        metavar="LOG",
        help="a ROS bag (ROS 2: a folder with metadata.yaml, or its .mcap or .db3 file; ROS 1: "
        "a .bag; sensor_msgs/JointState, see --topic) or an .npz with t (N,), q (N, n), tau (N, "
        "n), optional dq, ddq, joint_names (n,); or a .csv with a header (t, q_<joint>, "
        "tau_<joint>, optional dq_<joint>, ddq_<joint>); a floating-base robot's also "
        "base_position (N, 3), base_quaternion (N, 4, w x y z), contact_frames (k,) and "
        "contact_wrenches (N, k, 6) and/or contact (N, k)",
    )
    parser.add_argument(
        "--lock",
        metavar="NAME=VALUE",
        action="append",
        type=_args.lock,
        default=[],
        help="lock joint NAME at VALUE (rad or m) and merge it into its parent body; model "
        "joints missing from the log are locked at 0 unless given here (repeatable)",
    )
    parser.add_argument(
        "--lowpass",
        metavar="auto|none|HZ",
        type=_args.or_words(_args.positive("--lowpass"), auto="auto", none=None),
        default="auto",
        help="zero-phase Butterworth low-pass cut-off applied to q, dq and tau before "
        "differentiating: auto (default) chooses it from the training part's spectrum (the "
        "band where q carries the trajectory against its noise floor) and says why; none "
        "differentiates the raw q",
    )
    parser.add_argument(
        "--decimate",
        metavar="auto|K",
        type=_args.or_words(_args.count("--decimate", 1), auto="auto"),
        default="auto",
        help="keep every K-th sample after filtering; auto (default): the largest K whose "
        "Nyquist frequency stays at least five times the cut-off, ten samples per period "
        "(1 without a low-pass)",
    )
    _add_fit_options(parser)
    _add_log_options(parser)
    _add_bag_options(parser)
    _add_floating_options(parser)
    _add_output_options(parser)
    defaults = {a.dest: a.default for a in parser._actions}
    parser.set_defaults(_flags=_args.flag_names(parser), _defaults=defaults)


def _add_bag_options(parser: argparse.ArgumentParser) -> None:
    """ROS bags: the topics read (``pip install "spatialjax[ros]"``)."""
    parser.add_argument(
        "--topic",
        metavar="TOPIC",
        help="ROS bag: the sensor_msgs/JointState topic (default: the only one, else "
        "/joint_states); joints are matched by name, those not in the model ignored, model "
        "joints the bag holds still (a gripper) locked at their logged value",
    )
    parser.add_argument(
        "--base-topic",
        metavar="TOPIC|auto|none",
        default="auto",
        help="ROS bag: the base pose's nav_msgs/Odometry, geometry_msgs/PoseStamped or "
        "tf2_msgs/TFMessage topic (auto, default: the only Odometry topic, if any; none: a "
        "fixed-base robot)",
    )
    parser.add_argument(
        "--base-frame",
        metavar="FRAME",
        help="ROS bag, a TFMessage --base-topic (/tf): the base's child_frame_id (default: the "
        "topic's only child frame)",
    )
    parser.add_argument(
        "--wrench-topic",
        metavar="TOPIC",
        action="append",
        help="ROS bag with a base pose: a geometry_msgs/WrenchStamped topic of a contact, its "
        "messages' frame_id naming the contact frame (repeatable; default: every WrenchStamped "
        "topic)",
    )


def _add_floating_options(parser: argparse.ArgumentParser) -> None:
    """A floating base (a legged robot, a humanoid): the free flyer and the contacts."""
    parser.add_argument(
        "--floating-base",
        action="store_true",
        help="the robot has a floating base (a free flyer at the model's root); implied when "
        "the log has a base pose (base_position, base_quaternion), which it then needs",
    )
    parser.add_argument(
        "--contact-method",
        choices=CONTACT_METHODS,
        help="floating base: 'wrenches' fits all 6+n equations with the log's measured contact "
        "wrenches, 'projection' projects them onto the null space of the closed contacts "
        "(no force sensing needed); default auto: wrenches when the log has them",
    )
    parser.add_argument(
        "--contact-type",
        choices=CONTACT_TYPES,
        help="floating base: a contact keeps its frame's origin ('point', default: a foot) or "
        "its whole pose ('surface': a flat foot)",
    )
    parser.add_argument(
        "--contact-speed",
        metavar="M/S",
        type=_args.positive("--contact-speed"),
        help="floating base without a logged contact schedule: a contact counts as closed "
        f"while its frame moves slower than this (default {CONTACT_SPEED:g} m/s)",
    )


def _add_fit_options(parser: argparse.ArgumentParser) -> None:
    """Friction, prior, hold-out, weighting, channels and the links identified."""
    parser.add_argument(
        "--joint-model",
        metavar="KINDS",
        type=_joint_model,
        default=None,
        help="joint parameters fitted with the links: any comma-separated subset of "
        "armature,viscous,coulomb,offset, or none (default: all four; viscous is MJCF/URDF "
        "damping, coulomb MJCF frictionloss and URDF friction; the armature, the rotor inertia "
        "reflected through the gear, gets a weak prior around the file's value)",
    )
    parser.add_argument(
        "--transmission",
        metavar="T.csv",
        default=None,
        help="coupled motors: a CSV with a header motor,<joint names...> and one row per motor, "
        "motor velocity = sum of coefficient x joint velocity (a gear's ratio on its joint; a "
        "missing joint column or an empty cell is 0); every joint that no row drives gets its "
        "own motor (named after the joint, ratio 1). The joint model is then identified and "
        "reported per motor, in the motor's units. Default: an MJCF model's named <tendon> "
        "<fixed> elements (a joint they couple keeps its own motor where the file gives it "
        "armature, damping or frictionloss), else one motor per joint",
    )
    parser.add_argument(
        "--gamma",
        metavar="G",
        type=_args.positive("--gamma"),
        help="weight of the log-det divergence to the model's bodies (default: fit_torques' "
        "rule, 2/s^2 = 8 for a prior spread s = 0.5, with the data weighted as --weighting "
        "says; the value used is printed and reported)",
    )
    parser.add_argument(
        "--holdout",
        metavar="FRACTION",
        type=_holdout,
        default=DEFAULT_HOLDOUT,
        help="the last FRACTION of the log, in [0, 1), is held out for validation "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--weighting",
        dest="sample_weighting",
        choices=SAMPLE_WEIGHTINGS,
        default="autocorrelation",
        help="how the data term counts samples: 'autocorrelation' (default) weighs each joint's "
        "residuals by 1/(sigma_j^2 tau_j), tau_j their correlation time in samples (the log's "
        "effective number of independent samples); 'independent' counts every sample",
    )
    parser.add_argument(
        "--strict-prior",
        dest="repair_prior_bodies",
        action="store_false",
        help="refuse a model whose moving bodies are not strictly physically consistent or "
        "have less rotational inertia than any body of their mass (a point mass, a rod; "
        "default: repair them, keeping mass and CoM, and name them)",
    )
    parser.add_argument(
        "--gravity",
        metavar="GX,GY,GZ",
        type=_gravity,
        default=(0.0, 0.0, -9.81),
        help="gravitational acceleration in m/s² in the model's root frame (default "
        "0,0,-9.81: the robot stands upright, its root z axis up; a wall-mounted arm whose "
        "root y axis points up is 0,-9.81,0, a ceiling-mounted one 0,0,9.81); a norm more "
        "than 5 %% off 9.81 is warned about",
    )
    parser.add_argument(
        "--exclude-torque",
        metavar="NAME",
        action="append",
        default=[],
        help="leave joint NAME's torque channel out of the fit (the joint still moves; "
        "repeatable); channels without signal are left out automatically",
    )
    parser.add_argument(
        "--torque-scale",
        metavar="NAME=K",
        action=_args.NamedValues,
        type=_torque_scale,
        help="multiply joint NAME's torques by K before fitting (units, gear ratio; a "
        "negative K flips the sign; repeatable)",
    )
    parser.add_argument(
        "--free",
        metavar="LINK",
        nargs="+",
        help="identify only these links (moving bodies, each a joint's child link) and the "
        "friction; the others are held at the model's values",
    )


def _add_log_options(parser: argparse.ArgumentParser) -> None:
    """Validation logs, resampling and the joint limits."""
    parser.add_argument(
        "--validate",
        metavar="LOG",
        nargs="+",
        help="other logs of the same robot: the fit, least squares and the prior are evaluated "
        "on each (resampled and filtered on its own)",
    )
    parser.add_argument(
        "--rate",
        metavar="HZ",
        type=_args.positive("--rate"),
        help="resample the log onto a uniform grid at HZ (default: the median interval's rate, "
        "and only when the sampling is irregular)",
    )
    parser.add_argument(
        "--max-gap",
        metavar="S",
        type=_args.positive("--max-gap"),
        help="the longest interval between two samples accepted, in s (default: 10 median "
        "intervals)",
    )
    parser.add_argument(
        "--ignore-limits",
        action="store_true",
        help="go on, with a warning, when the log's positions leave the model's joint limits "
        "by more than the larger of 1 %% of the range and 3 encoder steps (default: refuse; a "
        "log in degrees is named as such)",
    )


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--out``, ``--report``, ``--force`` and the compilation cache."""
    parser.add_argument(
        "--out",
        metavar="FITTED",
        help="write the model in its own format with the identified parameters: URDF "
        "(<inertial>, <dynamics damping friction>; the armature where Drake's rotor inertia "
        "carries it, else in the report) or MJCF (<inertial>, the joints' armature, damping, "
        "frictionloss); every other byte kept",
    )
    parser.add_argument(
        "--report", metavar="REPORT.json", help="write everything measured as one JSON document"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace --out and --report files that exist"
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="do not use the persistent JAX compilation cache (default folder "
        "~/.cache/spatialjax/jax; also: environment SPATIALJAX_NO_COMPILATION_CACHE=1); "
        "with the cache, a second run on a log of the same size loads the compiled programs",
    )
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="folder of the persistent compilation cache"
    )


# ----------------------------------------------------------------------------- planning
def check_paths(args: argparse.Namespace) -> dict:
    """Checks before the log is read: inputs exist, outputs may be written, the model file.

    Returns:
      ``{"format": "urdf" | "mjcf" | "sdf", "description": ModelDescription}``.

    Raises:
      UsageError: naming the option.
      InputError: a model file that cannot be read.
    """
    from ..io import ModelFileError, read_description

    if not Path(args.model).is_file():
        raise UsageError(f"MODEL {args.model}: no such file")
    for what, p in [("LOG", args.log)] + [("--validate", p) for p in args.validate or ()]:
        if Path(p).is_dir() and not (Path(p) / "metadata.yaml").is_file():
            raise UsageError(f"{what} {p}: a folder without metadata.yaml (not a ROS 2 bag)")
        if not Path(p).exists():
            raise UsageError(f"{what} {p}: no such file")
    _check_bag_options(args)
    if args.transmission is not None and not Path(args.transmission).is_file():
        raise UsageError(f"--transmission {args.transmission}: no such file")
    _args.no_repeats(args.lock, "--lock")
    _args.check_outputs(
        {"--out": args.out, "--report": args.report},
        {"MODEL": args.model, "LOG": args.log},
        args.force,
    )
    try:
        desc = read_description(args.model)
    except ModelFileError as e:
        raise InputError(str(e)) from None
    fmt = desc.format
    if args.out is not None and fmt not in ("urdf", "mjcf"):
        raise UsageError(
            f"--out {args.out}: only URDF and MJCF models can be written back; {args.model} is "
            f"{fmt.upper()} (identify it without --out and use --report)"
        )
    if args.out is not None:
        problem = output_format_problem(args.out, fmt, args.model)
        if problem:
            raise UsageError(f"--out {problem}")
    return {"format": fmt, "description": desc}


def _check_bag_options(args: argparse.Namespace) -> None:
    """Refuse the bag options for a log that is no ROS bag."""
    from ..identification.logs.rosbag import is_bag

    given = [opt for opt, v, default in (("--topic", args.topic, None),
             ("--base-topic", args.base_topic, "auto"), ("--base-frame", args.base_frame, None),
             ("--wrench-topic", args.wrench_topic, None)) if v != default]  # fmt: skip
    if given and not is_bag(args.log):
        raise UsageError(f"{given[0]}: applies to a ROS bag, and LOG {args.log} is not one")


def _bag_options(args, joints) -> dict:
    """``load_log``'s keyword arguments for a bag: the options and the model's joints."""
    base = None if args.base_topic.lower() == "none" else args.base_topic
    wrenches = "auto" if args.wrench_topic is None else tuple(args.wrench_topic)
    return dict(topic=args.topic, joints=joints, base_topic=base, base_frame=args.base_frame,
                wrench_topics=wrenches)  # fmt: skip


def joint_kinds(args: argparse.Namespace) -> tuple[str, ...]:
    """The joint-model kinds of ``--joint-model`` (default: all four)."""
    if args.joint_model is not None:
        return tuple(args.joint_model)
    return JOINT_KINDS


# ----------------------------------------------------------------------------- pipeline
class _Progress:
    """One line per stage: ``[k/10] stage: what (seconds)``, then its detail lines."""

    STAGES = ("read model", "read log", *_STAGES, "write")

    def __init__(self, out):
        self.out = out
        self.t0 = time.perf_counter()
        self.times: dict[str, float] = {}

    def start(self) -> None:
        self.t0 = time.perf_counter()

    def done(self, stage: str, text: str, lines=()) -> None:
        dt = time.perf_counter() - self.t0
        self.times[stage] = dt
        k = self.STAGES.index(stage) + 1
        print(f"[{k}/{len(self.STAGES)}] {stage}: {text} ({dt:.2f} s)", file=self.out, flush=True)
        for line in lines:
            print(f"  {line}", file=self.out, flush=True)
        self.t0 = time.perf_counter()


def _load_model(desc, locked, floating: bool = False):
    """The model of the file's description (no second read); an MJCF's free joint is its own."""
    import spatialjax.multibody as mb

    floating = floating and desc.format != "mjcf"
    return mb.Model.from_description(
        desc, locked_joints=locked or None, floating_base=floating, dtype="float64"
    )


def _default_joint_names(log, model, lock: dict, path):
    """Name an unnamed log's columns: the model's movable joints (less the ``--lock`` ones)."""
    import dataclasses

    if log.joint_names is not None:
        return log
    movable = [j for j, ty in zip(model.joint_names, model.joint_types, strict=True)
               if ty != "free_flyer"]  # fmt: skip
    free = [j for j in movable if j not in lock]
    if log.n_joints == len(movable):
        names = movable
    elif lock and log.n_joints == len(free):
        names = free
    else:
        also = f" ({len(free)} once --lock is applied)" if lock else ""
        raise InputError(
            f"{path}: column 'q': {log.n_joints} joint columns without joint_names, but "
            f"{model.name or 'the model'} has {len(movable)} movable joints{also}: "
            f"{', '.join(movable)}; add joint_names to the log, or --lock the joints it lacks"
        )
    return dataclasses.replace(log, joint_names=tuple(names))


def _read_log(ident, path, options=None):
    """The log at ``path`` (``options``: a bag's ``load_log`` keywords, see ``_bag_options``)."""
    from ..identification.logs.rosbag import BagOptionError, is_bag

    try:
        return ident.load_log(path, **(options or {})) if is_bag(path) else ident.load_log(path)
    except BagOptionError as e:
        flag = {"topic": "--topic", "base_topic": "--base-topic", "base_frame": "--base-frame",
                "wrench_topics": "--wrench-topic", "joints": "MODEL"}[e.argument]  # fmt: skip
        raise UsageError(f"{flag}: {path}: {e.detail}") from None
    except (ident.LogError, OSError, ValueError, ImportError) as e:
        raise InputError(f"{path}: {e}" if str(path) not in str(e) else str(e)) from None


def _check_lock_limits(full, lock: dict) -> None:
    """Refuse ``--lock`` values outside a joint's position limits (where the model has them)."""
    lower = getattr(full, "lower", None)
    upper = getattr(full, "upper", None)
    if lower is None or upper is None:
        return
    lo, hi = np.asarray(lower, np.float64), np.asarray(upper, np.float64)
    for name, value in lock.items():
        if name not in full.joint_names:
            continue
        k = full.joint_names.index(name)
        if not lo[k] <= value <= hi[k]:
            raise UsageError(
                f"--lock {name}={value:g}: outside the joint's limits [{lo[k]:g}, {hi[k]:g}] in "
                f"the model file"
            )


def identify_options(args: argparse.Namespace) -> IdentifyOptions:
    """The library's options from the command line (an option at its parser default: the library's).

    Raises:
      IdentifyError: a value the library refuses (``library_error`` names the flag).
    """
    given = {name: getattr(args, name) for name in IdentifyOptions.names()
             if hasattr(args, name) and getattr(args, name) != args._defaults[name]}  # fmt: skip
    return IdentifyOptions(**given)


def _transmission(args, desc, model, progress):
    """The ``--transmission`` CSV, else an MJCF model's fixed tendons, else None; and a line."""
    import spatialjax.multibody as mb

    try:
        if args.transmission is not None:
            t = mb.Transmission.from_csv(args.transmission)
            how = f"--transmission {args.transmission}"
        elif desc.format == "mjcf":
            t = mb.Transmission.from_mjcf(desc, model)
            how = f"{args.model}: fixed tendons"
        else:
            return None
        if t is not None:
            full = mb.JointModel(transmission=t).complete_transmission(model)
    except mb.TransmissionError as e:
        raise InputError(str(e)) from None
    except OSError as e:
        raise InputError(f"--transmission {args.transmission}: {e.strerror or e}") from None
    if t is None:
        return None
    T = full.array()
    rows = [
        f"{m} = " + " + ".join(f"{T[i, c]:g} {j}" for c, j in enumerate(full.joints) if T[i, c])
        for i, m in enumerate(full.motors)
        if np.count_nonzero(T[i]) > 1 or m not in full.joints
    ]  # fmt: skip
    print(f"  transmission ({how}): {len(full.motors)} motors; " + "; ".join(rows),
          file=progress.out)  # fmt: skip
    return t


def command_options(args: argparse.Namespace) -> dict:
    """Every command-line option as given, by ``dest`` (the report's ``options``)."""
    return {k: v for k, v in vars(args).items()
            if not k.startswith("_") and k not in ("command", "model", "log")}  # fmt: skip


def library_error(e, args) -> Exception:
    """A library ``IdentifyError`` as ``InputError`` (model, logs) or ``UsageError`` (a flag)."""
    validate = list(args.validate or ())

    def name(argument: str) -> str:
        if argument == "log":
            return str(args.log)
        if argument.startswith("validate[") and argument.endswith("]"):
            return f"--validate {validate[int(argument[len('validate[') : -1])]}"
        if argument in ("model", "prior"):
            return str(args.model)
        return args._flags.get(argument, argument)

    text = e.render(name)
    if e.argument == "prior" and not args.repair_prior_bodies:
        return InputError(f"{text} (--strict-prior refuses it; drop it to repair)")
    if e.argument in ("log", "model", "prior") or e.argument.startswith("validate["):
        return InputError(text)
    return UsageError(f"{text} (log {args.log})")


@contextlib.contextmanager
def _cache_after_filter(args, report):
    """A ``report`` that enables the compilation cache once the filter stage has passed.

    The folder is created then, not before: a run refused for its log or its
    options leaves nothing behind. The executables kept there are read from the
    start (``use_executable_folder``): the solvers' programs, prepared as soon as
    the filter stage has passed, load rather than compile; a run refused before
    the filter passed leaves the process's folder as it found it.
    """
    from .. import _util

    passed = []
    before = None if args.no_cache else _util.use_executable_folder(args.cache_dir)

    def progress(stage, text, lines=()):
        report(stage, text, lines)
        if stage == "filter" and not args.no_cache:
            try:
                _util.enable_compilation_cache(args.cache_dir)
            except OSError as e:
                raise UsageError(f"--cache-dir: {e}") from None
            passed.append(stage)

    try:
        yield progress
    finally:
        if not args.no_cache and not passed:
            _util.restore_executable_folder(before)


def _floating(args, log) -> bool:
    """Whether the run is floating-base (a base pose in the log, or ``--floating-base``).

    Raises:
      InputError: ``--floating-base`` with a log without base pose.
      UsageError: a ``--contact-*`` option for a fixed-base run.
    """
    if args.floating_base and not log.floating_base:
        raise InputError(
            f"{args.log}: --floating-base, but the log has no base pose: a floating-base log "
            "needs base_position (N, 3) and base_quaternion (N, 4, w x y z) (CSV: base_x … "
            "base_qz), the base's pose in the world; drop --floating-base for a fixed-base robot"
        )
    floating = bool(args.floating_base or log.floating_base)
    for opt in ("contact_method", "contact_type", "contact_speed"):
        if not floating and getattr(args, opt) is not None:
            raise UsageError(
                f"--{opt.replace('_', '-')}: applies to a floating-base robot, but {args.log} "
                "has no base pose (base_position, base_quaternion)"
            )
    return floating


def _read_model(args, desc, progress: _Progress, floating: bool = False):
    """The model as the file (its description) gives it (no locks; a free flyer at its root
    when ``floating``), checked: ``--lock`` in limits."""
    from ..io import ModelFileError

    fmt = desc.format
    progress.start()
    try:
        full = _load_model(desc, None, floating)
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    if not floating and (full.floating_base or "free_flyer" in full.joint_types):
        raise InputError(
            f"{args.model}: a floating-base model (a free joint at its root), but {args.log} has "
            "no base pose: log base_position and base_quaternion to identify it"
        )
    _check_lock_limits(full, dict(args.lock))
    movable = [j for j, ty in zip(full.joint_names, full.joint_types, strict=True)
               if ty != "free_flyer"]  # fmt: skip
    base = "a floating base (free flyer) and " if floating else ""
    progress.done(
        "read model",
        f"{args.model} ({fmt.upper()}): {base}{len(movable)} movable joints ({', '.join(movable)})",
    )
    return full


def _match(ident, log, full, args, lock):
    """``match_joints`` of the main log, its errors as the option or the file at fault."""
    try:
        return ident.match_joints(log, full, lock=lock)
    except ident.LogError as e:
        raise InputError(str(e)) from None
    except ident.IdentifyError as e:
        if e.argument == "log":  # the log's joints: named by its column
            col = "joint_names" if log.joint_names is not None else "q"
            raise InputError(f"{args.log}: column {col!r}: {e.detail}") from None
        raise library_error(e, args) from None


def _bag_read_options(args, desc):
    """A bag's ``load_log`` options, with the model's movable joints as ``joints`` (the bag's
    other joints are ignored); None for a ``.npz``/``.csv`` log."""
    from ..identification.logs.rosbag import is_bag
    from ..io import ModelFileError

    if not is_bag(args.log):
        return None
    try:
        model = _load_model(desc, None)
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    movable = [j for j, ty in zip(model.joint_names, model.joint_types, strict=True)
               if ty != "free_flyer"]  # fmt: skip
    return _bag_options(args, movable)


def _held_still(log, args, bag) -> dict:
    """A bag's joints held still (a gripper) that ``--lock`` does not name: ``{joint: value}``."""
    from ..identification.logs.rosbag import still_joints

    if bag is None:
        return {}
    lock = dict(args.lock)
    return {k: v for k, v in still_joints(log).items() if k not in lock}


def _read_logs(args, desc, full, progress: _Progress, log=None, bag=None):
    """``(model, log, validation logs, locked)``: the logs matched to the model's joints.

    Joints the log lacks or a bag holds still are locked and the model rebuilt;
    ``bag``: a bag's ``load_log`` options (None for another log).
    """
    from spatialjax import identification as ident

    from ..io import ModelFileError

    log = _read_log(ident, args.log, bag) if log is None else log
    log = _default_joint_names(log, full, dict(args.lock), args.log)
    still = _held_still(log, args, bag)
    lock = {**dict(args.lock), **still}
    match = _match(ident, log, full, args, lock)
    locked = dict(match.locked)
    try:
        model = _load_model(desc, locked, full.floating_base)
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    log = match.apply(log)
    others = []
    for path in args.validate or ():
        other = _read_log(ident, path, bag)
        other = _default_joint_names(other, full, dict(args.lock), path)
        try:
            m2 = ident.match_joints(other, full, lock=lock)
        except ident.IdentifyError as e:
            raise InputError(f"--validate {path}: {e}") from None
        if tuple(m2.joint_names) != tuple(match.joint_names):
            raise InputError(
                f"--validate {path}: drives joints {', '.join(m2.joint_names)}, but {args.log} "
                f"drives {', '.join(match.joint_names)}; validation logs need the same joints"
            )
        others.append(m2.apply(other))
    t = log.t
    lock_text = ", ".join(f"{k}={v:g}" for k, v in locked.items())
    progress.done(
        "read log",
        f"{args.log}: {log.n_samples} samples over {t[-1] - t[0]:.4g} s, joints "
        f"{', '.join(match.joint_names)}, {'dq given' if log.dq is not None else 'no dq'}"
        + _base_text(log)
        + (f"; locked {lock_text}" if locked else "")
        + f": {model.nbodies} moving bodies"
        + (f"; {len(others)} validation log(s)" if others else ""),
        [f"note: {n}" for n in log.notes]
        + [f"note: {k} held still in the log: locked at {v:g}" for k, v in still.items()],
    )
    return model, log, others, locked


def _base_text(log) -> str:
    """What a floating-base log holds besides the joints."""
    if not log.floating_base:
        return ""
    frames = log.contact_frames
    if frames is None:
        contacts = "no contact frames"
    elif not frames:
        contacts = "contact_frames=() (no contacts)"
    else:
        held = [x for x, v in (("wrenches", log.contact_wrenches), ("schedule", log.contact))
                if v is not None]  # fmt: skip
        what = f" with {' and '.join(held)}" if held else " (no wrenches, no schedule)"
        contacts = f"{len(frames)} contact frame(s) {', '.join(frames)}{what}"
    vel = ", base velocity" if log.base_velocity is not None else ""
    return f"; base pose{vel}, {contacts}"


def identify(args: argparse.Namespace, desc, progress: _Progress):
    """Read the log(s), lock what they lack, run ``identify_robot``.

    Returns:
      ``(result, command)``: the result and the report's command keys.
    """
    import spatialjax.multibody as mb
    from spatialjax import identification as ident

    try:
        options = identify_options(args)
    except ident.IdentifyError as e:
        raise library_error(e, args) from None
    fmt = desc.format
    bag = _bag_read_options(args, desc)
    log = _read_log(ident, args.log, bag)
    full = _read_model(args, desc, progress, _floating(args, log))
    model, log, others, locked = _read_logs(args, desc, full, progress, log, bag)
    transmission = _transmission(args, desc, model, progress)
    if transmission is not None:
        jm = mb.JointModel(joint_kinds(args), transmission=transmission)
        options = dataclasses.replace(options, joint_model=jm)
    try:
        with _cache_after_filter(args, progress.done) as progress_:
            result = ident.identify_robot(model, log, options, validate=others, progress=progress_)
    except ident.IdentifyError as e:
        raise library_error(e, args) from None
    command = {
        "model": str(args.model),
        "model_format": fmt,
        "log": str(args.log),
        "validation_logs": list(args.validate or ()),
        "locked_joints": locked,
        "options": command_options(args),
    }
    return result, command


# ------------------------------------------------------------------------------- output
def _write_outputs(args, result, desc, command: dict, progress: _Progress) -> None:
    """Write ``--out`` and ``--report`` through temporary files; a failure changes no file."""
    out = None
    tmps: list[tuple[Path, Path]] = []
    try:
        if args.out is not None:
            tmp = _util.temp_beside(args.out, "identify")
            tmps.append((tmp, Path(args.out)))
            out = {**result.write(tmp, source=desc, overwrite=True), "output": str(args.out)}
        if args.report is not None:
            document = {**result.report.to_dict(), **command, "output": out}
            text = json.dumps(jsonable(document), indent=1, allow_nan=False) + "\n"
            tmp = _util.temp_beside(args.report, "identify")
            tmps.append((tmp, Path(args.report)))
            tmp.write_text(text, encoding="utf-8")
        for tmp, path in tmps:
            _util.replace_keeping_mode(tmp, path)
    finally:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
    written = [str(p) for _, p in tmps]
    text = ", ".join(written) if written else "nothing (no --out, no --report)"
    if out:
        text = text.replace(str(args.out), f"{args.out} ({_written_text(out)})", 1)
    progress.done("write", text)
    if out:
        for b in out["bodies"]:
            if b["mode"] == "composite":
                print(f"  note: {b['note']}", file=progress.out)
        for note in _joint_notes(out):
            print(f"  note: {note}", file=progress.out)


_ATTRIBUTES = {
    "mjcf": {"armature": "armature", "damping": "damping", "friction": "frictionloss"},
    "urdf": {"armature": "armature", "damping": "damping", "friction": "friction"},
}


def _written_text(out: dict) -> str:
    """``MJCF: 6 bodies; armature, damping, frictionloss on 6 joints``."""
    fmt = out.get("format", "urdf")
    text = f"{fmt.upper()}: {len(out['bodies'])} bodies"
    attrs = _ATTRIBUTES[fmt]
    done = {f: sum(1 for j in out.get("joints", ()) if j.get(f, {}).get("written"))
            for f in attrs}  # fmt: skip
    by_count: dict[int, list[str]] = {}
    for f, n in done.items():
        if n:
            by_count.setdefault(n, []).append(attrs[f])
    for n, names in by_count.items():
        text += f"; {', '.join(names)} on {n} joint{'s' if n != 1 else ''}"
    return text


def _joint_notes(out: dict) -> list[str]:
    """Where the fitted values that the file cannot carry went (URDF armature)."""
    missing = [j["joint"] for j in out.get("joints", ())
               if "armature" in j and not j["armature"]["written"]]  # fmt: skip
    if not missing:
        return []
    return [
        f"armature of {', '.join(missing)} not written: URDF has no armature attribute (it is "
        "written where the joint has Drake's <drake:rotor_inertia>); the fitted values are in "
        "the report (joint_parameters, output.joints)"
    ]


def run(args: argparse.Namespace) -> int:
    """Identify; print progress and the table; return the exit status (module docstring)."""
    from .._util import x64
    from ..io import ModelFileError

    try:
        plan = check_paths(args)
    except (UsageError, InputError) as e:
        print(f"spatialjax identify: error: {e}", file=sys.stderr)
        return 2
    progress = _Progress(sys.stdout)
    try:
        with x64():
            result, command = identify(args, plan["description"], progress)
            _write_outputs(args, result, plan["description"], command, progress)
    except (UsageError, InputError, ModelFileError) as e:
        print(f"spatialjax identify: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"spatialjax identify: error: cannot write: {e}", file=sys.stderr)
        return 2
    rep = result.report
    idf, times = rep.identifiability, rep.times
    cond = finite_or_none(idf.condition_number) if idf.condition_number is not None else None
    print()
    print(result.summary())
    print(
        f"\ngamma {rep.gamma:.3g}; rank {idf.rank} of {idf.n_columns} columns "
        f"(base-regressor condition number {number_text(cond, '.3g')}); "
        f"compile {times.compile_s:.2f} s, solve {times.solve_s:.3f} s"
    )
    for w in result.warnings:
        print(f"spatialjax identify: warning: {w}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry with ``spatialjax identify``'s options; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="spatialjax identify", description=(__doc__ or "").split("\n")[0]
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
