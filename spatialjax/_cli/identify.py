r"""``spatialjax identify MODEL LOG``: whole-robot inertial identification from a joint log.

Parsing and printing around
[`spatialjax.identification.identify_robot`][spatialjax.identification.identify_robot], which holds
the pipeline and its defaults. Stages (one progress line each, then indented ``note:``/``warning:``
lines): read the model (URDF; MJCF and SDFormat through the kinematic-tree loaders), read the log
(``.npz`` or ``.csv``, see
[`spatialjax.identification.load_log`][spatialjax.identification.load_log]) and match its joints to
the model's (joints missing from the log are locked at 0 or at ``--lock NAME=VALUE`` and merged into
their parent body), then the library's stages: **prior** (bodies that are not strictly physically
consistent are repaired, keeping mass and CoM, and named; ``--strict-prior`` refuses them),
**sampling** (positions checked against the model's joint limits, a log in
degrees named as such, ``--ignore-limits`` to go on; irregular time stamps
resampled onto a uniform grid by ``t``, with the jitter stated), **filter**
(zero-phase Butterworth low-pass, differentiation), **regressor** (RNEA
regressor, Atkeson, An & Hollerbach 1986, plus the joint model's columns,
``--joint-model``: armature, viscous, Coulomb and offset per joint,
[JointModel][spatialjax.multibody.JointModel], filtered like the torques:
parallel filtering, Gautier 1997), **torques** (channels without signal are
left out; scale and sign against the prior's prediction are checked),
**least squares** (samples where a joint rests leave its row: static
friction), **fit** (the log-det divergence to the model's bodies as prior;
Wensing, Kim & Slotine, RA-L 2017; Lee, Wensing & Park, T-RO 2020; the
armature's weak prior around the file's value; each joint's data weighted by
its residuals' correlation time, ``--weighting``), **validate** (held-out
part, ``--validate`` logs, per-link plausibility, the joint parameters whose
split with the links the priors decide), and the outputs (``--out`` in the
model's own format, URDF or MJCF; ``--report`` JSON).

A log with a base pose (``base_position``, ``base_quaternion``; or
``--floating-base``) is a floating-base robot's: the model is read with a free
flyer, and the library identifies it from the ``6 + n`` equations of each
sample, with the log's contact wrenches or projected onto the contacts' null
space (``--contact-method``, ``--contact-type``, ``--contact-speed``); the
stage lines say which, and how many equations each sample gives.

The last ``holdout`` fraction of the raw log is held out: the two parts are
filtered, differentiated and decimated separately, so that nothing of the
held-out samples reaches the fit; the fit uses the first part only.

Errors ``‖τ̂ − τ‖ / ‖τ‖`` (Frobenius over samples and joints, or over the
samples of one joint) are given for the fit, for ordinary least squares on
the same columns, and for the prior (the model file's bodies, no friction),
on the training part, the held-out part and each ``--validate`` log; the
overall figure counts the channels that were fitted, and every part's errors
leave out the rows the fit left out (a joint at rest, with Coulomb friction).
Warnings name a held-out part mostly at rest, a joint the fit predicts worse
than zero, and a fit far worse than the prior on a part.

All numbers are computed in float64 (``jax.enable_x64`` inside the command).
Every option is checked, and ``--out``/``--report`` refuse to replace an
existing file without ``--force``, before any file is read; nothing is
written when any stage fails, and the compilation cache folder is created
only once the log has passed the filter stage.

The report (``--report``, JSON; NaN and infinities are written as ``null``) is
``RobotIdentification.report`` (typed: ``IdentificationReport``) with the
command's own keys added: ``model``, ``model_format``, ``log``,
``validation_logs``, ``locked_joints``, ``options`` (every option as given)
and ``output`` (how ``--out`` wrote each body). Its schema is in
``docs/identification.md`` ("The report's schema").

Per-joint drive gains are not fitted: a torque channel in other units
(``τ_meas,j = k_j τ_j``) makes the model bilinear in ``k`` and the inertias,
so the problem is no longer convex and its global optimum no longer
guaranteed, and the common scale of ``k`` would rest on the prior's masses
alone. The **torques** stage instead reports each channel's scale against the
prior's prediction and the ``--torque-scale`` that would match it.

Exit status: 0 success, 2 a usage error, an unreadable model or log, a fit
that failed, or an output that cannot be written (argparse's convention, as
``spatialjax check``); nothing is written then.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from .. import _util
from ..identification._floating import CONTACT_SPEED, CONTACT_TYPES
from ..identification._pipeline import DEFAULT_HOLDOUT, SAMPLE_WEIGHTINGS
from ..identification._pipeline import STAGES as _STAGES
from ..identification._pipeline.options import CONTACT_METHODS
from ..identification._report import jsonable, number_text, output_format_problem
from ..multibody.friction import FrictionModel
from ..multibody.joint_model import JOINT_KINDS, JointModel
from . import _args
from ._args import InputError, UsageError


# ------------------------------------------------------------------------- option types
def _holdout(text: str) -> float:
    x = _args.number(text, "--holdout")
    if not 0 <= x < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1), got {text!r}")
    return x


def _friction(text: str) -> tuple[str, ...]:
    try:
        return FrictionModel.parse(text).kinds
    except (TypeError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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
_friction.__name__ = "--friction"
_joint_model.__name__ = "--joint-model"
_torque_scale.__name__ = "--torque-scale"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``spatialjax identify``."""
    parser.epilog = (
        "exit status: 0 success, 2 for a usage error, a model or log that cannot be used, a fit "
        "that failed, or an output that cannot be written (nothing is written then)"
    )
    parser.add_argument("model", metavar="MODEL", help="the robot: URDF (or MJCF, SDFormat)")
    parser.add_argument(
        "log",
        metavar="LOG",
        help=".npz with t (N,), q (N, n), tau (N, n), optional dq, ddq, joint_names (n,); or a "
        ".csv with a header (t, q_<joint>, tau_<joint>, optional dq_<joint>, ddq_<joint>); a "
        "floating-base robot's also base_position (N, 3), base_quaternion (N, 4, w x y z), "
        "contact_frames (k,) and contact_wrenches (N, k, 6) and/or contact (N, k)",
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
    _add_floating_options(parser)
    _add_output_options(parser)


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
        "--friction",
        metavar="TERMS",
        type=_friction,
        default=None,
        help="deprecated: --friction TERMS is --joint-model armature,TERMS (a subset of "
        "viscous,coulomb,offset, or none: the armature alone)",
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
        choices=SAMPLE_WEIGHTINGS,
        default="autocorrelation",
        help="how the data term counts samples: 'autocorrelation' (default) weighs each joint's "
        "residuals by 1/(sigma_j^2 tau_j), tau_j their correlation time in samples (the log's "
        "effective number of independent samples); 'independent' counts every sample",
    )
    parser.add_argument(
        "--strict-prior",
        action="store_true",
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
        action="append",
        type=_torque_scale,
        default=[],
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
        "by more than 1 %% of the range (default: refuse; a log in degrees is named as such)",
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
        "with the cache, a second run on a log of the same size skips most of the compile",
    )
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="folder of the persistent compilation cache"
    )


# ----------------------------------------------------------------------------- planning
def check_paths(args: argparse.Namespace) -> dict[str, str]:
    """Checks that need no file content: inputs exist, outputs may be written.

    Returns:
      The model format (``"urdf"``, ``"mjcf"``, ``"sdf"``) under ``"format"``.

    Raises:
      UsageError: naming the option.
    """
    from ..io import ModelFileError
    from ..io._load import detect_format

    for what, p in (("MODEL", args.model), ("LOG", args.log)):
        if not Path(p).is_file():
            raise UsageError(f"{what} {p}: no such file")
    for p in args.validate or ():
        if not Path(p).is_file():
            raise UsageError(f"--validate {p}: no such file")
    _args.no_repeats(args.lock, "--lock")
    _args.check_outputs(
        {"--out": args.out, "--report": args.report},
        {"MODEL": args.model, "LOG": args.log},
        args.force,
    )
    try:
        fmt = detect_format(args.model)
    except ModelFileError as e:
        raise InputError(str(e)) from None
    if args.out is not None and fmt not in ("urdf", "mjcf"):
        raise UsageError(
            f"--out {args.out}: only URDF and MJCF models can be written back; {args.model} is "
            f"{fmt.upper()} (identify it without --out and use --report)"
        )
    if args.out is not None:
        problem = output_format_problem(args.out, fmt, args.model)
        if problem:
            raise UsageError(f"--out {problem}")
    if args.friction is not None and args.joint_model is not None:
        raise UsageError(
            "--friction and --joint-model: give --joint-model only (--friction is deprecated)"
        )
    return {"format": fmt}


def joint_kinds(args: argparse.Namespace) -> tuple[str, ...]:
    """The joint-model kinds of ``--joint-model`` or the deprecated ``--friction``."""
    if args.joint_model is not None:
        return tuple(args.joint_model)
    if args.friction is not None:
        return JointModel.from_friction(FrictionModel(tuple(args.friction))).kinds
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


def _load_model(path, fmt, locked, floating: bool = False):
    import spatialjax.multibody as mb

    loader = {"urdf": mb.Model.from_urdf, "mjcf": mb.Model.from_mjcf, "sdf": mb.Model.from_sdf}
    kw = {"floating_base": True} if floating else {}
    return loader[fmt](path, locked_joints=locked or None, dtype="float64", **kw)


def _default_joint_names(log, model, lock: dict, path):
    """Name an unnamed log's columns: the model's movable joints, less the ``--lock`` ones.

    A log without ``joint_names`` has the model's movable joints in model
    order; when ``--lock`` names some of them, a log with exactly the others
    (in order) is accepted too.
    """
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


def _read_log(ident, path):
    try:
        return ident.load_log(path)
    except (ident.LogError, OSError, ValueError) as e:
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


def _options(args) -> dict:
    return {
        "lock": dict(args.lock),
        "lowpass": args.lowpass,
        "decimate": args.decimate,
        "joint_model": list(joint_kinds(args)),
        "friction": None if args.friction is None else list(args.friction),
        "gamma": args.gamma,
        "holdout": args.holdout,
        "weighting": args.weighting,
        "strict_prior": args.strict_prior,
        "gravity": list(args.gravity),
        "exclude_torque": list(args.exclude_torque),
        "torque_scale": dict(args.torque_scale),
        "free": args.free,
        "validate": args.validate,
        "rate": args.rate,
        "max_gap": args.max_gap,
        "ignore_limits": args.ignore_limits,
        "floating_base": args.floating_base,
        "contact_method": args.contact_method,
        "contact_type": args.contact_type,
        "contact_speed": args.contact_speed,
        "out": args.out,
        "report": args.report,
        "force": args.force,
        "no_cache": args.no_cache,
        "cache_dir": args.cache_dir,
    }


def _argument_error(e, args) -> Exception:
    """An ``IdentifyError`` of the library as an error naming the option or the file."""
    arg = e.argument
    if arg == "log" or arg.startswith("validate["):
        detail = e.detail.replace("larger max_gap", "larger --max-gap")
        detail = detail.replace("pass ignore_limits=True", "pass --ignore-limits")
        if arg == "log":
            return InputError(f"{args.log}: {detail}")
        k = int(arg[len("validate[") : -1])
        return InputError(f"--validate {args.validate[k]}: {detail}")
    if arg == "prior":
        hint = " (--strict-prior refuses it; drop it to repair)" if args.strict_prior else ""
        return InputError(f"{args.model}: {e.detail}{hint}")
    if arg == "model":
        return InputError(f"{args.model}: {e.detail}")
    flags = {"sample_weighting": "--weighting"}
    opt = flags[arg] if arg in flags else "--" + str(arg).replace("_", "-")
    value = {
        "--lowpass": args.lowpass,
        "--decimate": args.decimate,
        "--holdout": args.holdout,
        "--rate": args.rate,
        "--max-gap": args.max_gap,
        "--gamma": args.gamma,
    }.get(opt)
    shown = f" {value:g}" if isinstance(value, (int, float)) else ""
    detail = e.detail
    for name in ("lowpass", "decimate", "holdout", "rate"):
        detail = detail.replace(f"{name}=", f"--{name} ").replace(f" {name} ", f" --{name} ")
        detail = detail.replace(f"pass {name}", f"pass --{name}")
    return UsageError(f"{opt}{shown}: {detail} (log {args.log})")


def _cache_after_filter(args, report):
    """``report`` that enables the compilation cache once the filter stage has passed.

    The cache folder is created then, not before: a run refused for its log or
    its options leaves nothing behind. The fit, which most of a run compiles,
    comes after.
    """

    def progress(stage, text, lines=()):
        report(stage, text, lines)
        if stage == "filter" and not args.no_cache:
            from .._util import enable_compilation_cache

            try:
                enable_compilation_cache(args.cache_dir)
            except OSError as e:
                raise UsageError(f"--cache-dir: {e}") from None

    return progress


def _floating(args, log) -> bool:
    """Whether the run is floating-base: the log has a base pose, or ``--floating-base``.

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


def _read_model(args, fmt: str, progress: _Progress, floating: bool = False):
    """The model as the file gives it (no locks; a free flyer at its root when
    ``floating``), checked: ``--lock`` in limits."""
    from ..io import ModelFileError

    progress.start()
    try:
        full = _load_model(args.model, fmt, None, floating)
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


def _match(ident, log, full, args):
    """``match_joints`` of the main log, its errors as the option or the file at fault."""
    try:
        return ident.match_joints(log, full, lock=dict(args.lock))
    except ident.LogError as e:
        raise InputError(str(e)) from None
    except ValueError as e:
        msg = str(e)
        if msg.startswith("lock:"):
            raise UsageError("--lock: " + msg[len("lock:") :].strip()) from None
        if "no joint left" in msg:
            raise UsageError(
                f"--lock: locks every joint that {args.log} drives; leave at least one free"
            ) from None
        col = "joint_names" if log.joint_names is not None else "q"
        raise InputError(f"{args.log}: column {col!r}: {msg.removeprefix('log: ')}") from None


def _read_logs(args, fmt: str, full, progress: _Progress, log=None):
    """``(model, log, validation logs, locked)``: the logs matched to the model's joints.

    The joints the log lacks are locked (at 0 or ``--lock``) and the model is read again
    with them locked. ``log``: the main log, already read (else it is read here).
    """
    from spatialjax import identification as ident

    from ..io import ModelFileError

    log = _read_log(ident, args.log) if log is None else log
    log = _default_joint_names(log, full, dict(args.lock), args.log)
    match = _match(ident, log, full, args)
    locked = dict(match.locked)
    try:
        model = _load_model(args.model, fmt, locked, full.floating_base)
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    log = match.apply(log)
    others = []
    for path in args.validate or ():
        other = _default_joint_names(_read_log(ident, path), full, dict(args.lock), path)
        try:
            m2 = ident.match_joints(other, full, lock=dict(args.lock))
        except ValueError as e:
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


def identify(args: argparse.Namespace, fmt: str, progress: _Progress):
    """Read the model and the log(s), lock what the log lacks, run
    [identify_robot][spatialjax.identification.identify_robot]; returns its result."""
    import spatialjax.multibody as mb
    from spatialjax import identification as ident

    log = _read_log(ident, args.log)
    full = _read_model(args, fmt, progress, _floating(args, log))
    model, log, others, locked = _read_logs(args, fmt, full, progress, log)
    contact = {k: getattr(args, k) for k in ("contact_method", "contact_type", "contact_speed")
               if getattr(args, k) is not None}  # fmt: skip
    try:
        result = ident.identify_robot(
            model,
            log,
            lowpass=args.lowpass,
            decimate=args.decimate,
            joint_model=mb.JointModel(joint_kinds(args)),
            gamma=args.gamma,
            holdout=args.holdout,
            sample_weighting=args.weighting,
            repair_prior_bodies=not args.strict_prior,
            exclude_torque=tuple(args.exclude_torque),
            torque_scale=dict(args.torque_scale),
            free=args.free,
            validate=others,
            rate=args.rate,
            max_gap=args.max_gap,
            gravity=args.gravity,
            ignore_limits=args.ignore_limits,
            progress=_cache_after_filter(args, progress.done),
            **contact,
        )
    except ident.IdentifyError as e:
        raise _argument_error(e, args) from None
    result.report.update(
        model=str(args.model),
        model_format=fmt,
        log=str(args.log),
        validation_logs=list(args.validate or ()),
        locked_joints=locked,
        options=_options(args),
        output=None,
    )
    return result


# ------------------------------------------------------------------------------- output
def _write_outputs(args, result, progress: _Progress) -> None:
    """Write ``--out`` and ``--report``: both to temporary files first, then renamed.

    A failure while writing leaves no output (and no existing file) changed.
    """
    report = result.report
    tmps: list[tuple[Path, Path]] = []
    try:
        if args.out is not None:
            tmp = _util.temp_beside(args.out, "identify")
            tmps.append((tmp, Path(args.out)))
            rep = result.write(tmp, source=args.model, overwrite=True)
            rep["output"] = str(args.out)
            report["output"] = rep
        if args.report is not None:
            text = json.dumps(jsonable(report), indent=1, allow_nan=False) + "\n"
            tmp = _util.temp_beside(args.report, "identify")
            tmps.append((tmp, Path(args.report)))
            tmp.write_text(text, encoding="utf-8")
        for tmp, path in tmps:
            _util.replace_keeping_mode(tmp, path)
    finally:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
    written = [str(p) for _, p in tmps]
    out = report.get("output")
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
    if args.friction is not None:
        print(
            f"spatialjax identify: warning: --friction is deprecated; use --joint-model "
            f"{','.join(joint_kinds(args)) or 'none'} (the same: the armature is fitted by "
            "default; leave it out of --joint-model to fit friction only)",
            file=sys.stderr,
        )
    try:
        with x64():
            result = identify(args, plan["format"], progress)
            _write_outputs(args, result, progress)
    except (UsageError, InputError, ModelFileError) as e:
        print(f"spatialjax identify: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"spatialjax identify: error: cannot write: {e}", file=sys.stderr)
        return 2
    rep = result.report
    idf, times = rep["identifiability"], rep["times"]
    print()
    print(result.summary())
    print(
        f"\ngamma {rep['gamma']:.3g}; rank {idf['rank']} of {idf['n_columns']} columns "
        f"(base-regressor condition number {number_text(idf['condition_number'], '.3g')}); "
        f"compile {times['compile_s']:.2f} s, "
        f"solve {times['solve_s']:.3f} s"
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
