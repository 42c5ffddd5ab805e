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
**sampling** (irregular time stamps are resampled onto a uniform grid by
``t``, with the jitter stated), **filter** (zero-phase Butterworth low-pass,
differentiation), **regressor** (RNEA regressor, Atkeson, An & Hollerbach
1986, plus the friction columns of
[`spatialjax.multibody.FrictionModel`][spatialjax.multibody.FrictionModel], filtered like the
torques: parallel filtering, Gautier 1997), **torques** (channels without signal are
left out; scale and sign against the prior's prediction are checked),
**least squares**, **fit** (the log-det divergence to the model's bodies as
prior; Wensing, Kim & Slotine, RA-L 2017; Lee, Wensing & Park, T-RO 2020;
each joint's data weighted by its residuals' correlation time, ``--weighting``),
**validate** (held-out part, ``--validate`` logs, per-link plausibility), and
the outputs (``--out`` URDF, ``--report`` JSON).

The last ``holdout`` fraction of the raw log is held out: the two parts are
filtered, differentiated and decimated separately, so that nothing of the
held-out samples reaches the fit; the fit uses the first part only.

Errors ``‖τ̂ − τ‖ / ‖τ‖`` (Frobenius over samples and joints, or over the
samples of one joint) are given for the fit, for ordinary least squares on
the same columns, and for the prior (the model file's bodies, no friction),
on the training part, the held-out part and each ``--validate`` log; the
overall figure counts the channels that were fitted.

All numbers are computed in float64 (``jax.enable_x64`` inside the command).
Every option is checked, and ``--out``/``--report`` refuse to replace an
existing file without ``--force``, before any file is read; nothing is
written when any stage fails, and the compilation cache folder is created
only once the log has passed the filter stage.

The report (``--report``, JSON; NaN and infinities are written as ``null``):

* ``model``, ``model_format``, ``log``, ``validation_logs``, ``options``
  (every option as given), ``settings`` (the library's resolved settings),
  ``joints`` (the identified joints, model order), ``links_identified``
  (``--free``, or all), ``locked_joints`` (``{joint: value}``), ``gravity``,
  ``sampling`` (``resampled``, ``rate``, ``n_samples`` and ``n_out`` (before
  and after), ``min_interval``, ``median_interval``, ``max_interval``,
  ``off_share``: the share of intervals
  more than 10 % off the median), ``samples`` (``raw``, ``raw_holdout``, and
  after filtering and decimation ``after_decimation``, ``train``,
  ``holdout``).
* ``prior_repairs``: per repaired body ``link``, ``reason``,
  ``principal_moments_before``/``_after`` and ``second_moments_before``/``_after``
  (kg m², about the CoM), ``relative_change``.
* ``channels``: per joint ``std``, ``resolution``, ``signal``, ``scale``
  (the scale of the measured against the predicted torque), ``rms_ratio``, ``scale_flagged``,
  ``excluded``, ``reason``.
* ``gamma`` (the log-det weight used), ``noise_std`` (per joint ``σ̂_j``),
  ``correlation_time`` (``τ_j`` in samples), ``effective_samples``
  (``N/τ_j``) and ``noise_weights`` (the weight ``1/(σ̂_j² τ_j)``, 0 for a
  channel left out).
* ``links``: per moving body (``link`` = its joint's child link, ``joint``,
  ``free``), for ``fit``, ``least_squares`` and ``prior``: ``params`` (the 10-vector
  ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the link frame's
  origin in its axes, composite of the rigidly attached links), ``mass``,
  ``com`` (m, link frame), ``principal_moments`` (of ``I_c``, ascending),
  ``consistent`` (fully physically consistent), ``margins``
  (``min_eig_inertia_com``, ``triangle_margin``, ``min_eig_pseudo_inertia``:
  [`spatialjax.physical_consistency`][spatialjax.physical_consistency]), ``geodesic_to_prior``
  ([`spatialjax.geodesic_distance`][spatialjax.geodesic_distance], ``null`` when not positive
  definite); ``data_share`` (10 numbers in [0, 1]: the fraction of each
  parameter's prior variance removed by the data, ``1 − C_kk / P_kk`` with
  ``P`` the prior and ``C`` the posterior covariance of the linearised fit;
  1 where the data decide the parameter, 0 where the prior does; 0 for a
  held body); ``plausibility`` (``mass_ratio`` fit/prior, ``com_shift`` in
  m, ``data_share_mass``, ``flagged`` when the mass moved more than 2× either
  way). ``total_mass`` for fit, least squares and prior.
* ``friction`` (the fit) and ``friction_least_squares``: ``{joint:
  {"viscous": F_v, "coulomb": F_c, "offset": o}}`` (N·m·s/rad, N·m, N·m;
  ``null`` for terms not fitted).
* ``errors``: ``{fit | least_squares | prior: {train | holdout: {"overall":
  e, "per_joint": {joint: e}}}}`` with ``e = ‖τ̂ − τ‖ / ‖τ‖`` (``holdout`` is
  ``null`` with ``--holdout 0``); ``validation``: per ``--validate`` log its
  ``samples``, ``sampling`` and ``errors`` (``fit``, ``least_squares``, ``prior``).
* ``identifiability``: ``rank``, ``n_columns`` (10 per identified body +
  friction), ``condition_number`` (of the column-scaled, noise-weighted *base*
  regressor: its ``rank`` independent columns ``base_columns``; finite, the
  figure used to judge an excitation; ``null`` only when nothing is
  excited), ``base_columns``
  and ``base_parameters`` (a set of independent columns, pivoted QR: indices
  and ``[link or joint, parameter]`` names), ``n_unidentifiable``,
  ``prior_decided`` (``[link, parameter]`` pairs with data share < 0.5).
* ``fit_status`` (``status``, ``converged``, ``iterations``, ``objective``),
  ``times`` of the fit: ``compile_s`` (JAX's tracing, lowering and
  compiling during the fit's one call: 0 when this process has already
  compiled it), ``solve_s`` (the rest of that call) and ``stages_s``.
* ``warnings`` and ``notes`` (the plain-words lines printed).
* ``output`` (with ``--out``): how each body was written
  ([`write_identified_urdf`][spatialjax.identification.write_identified_urdf]'s report:
  ``mode`` ``single`` / ``remainder`` / ``composite``, ``links_kept``,
  ``links_cleared``, ``untouched``, ``max_reload_error``).

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
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from ..identification._pipeline import DEFAULT_HOLDOUT, SAMPLE_WEIGHTINGS, _g
from ..identification._pipeline import STAGES as _STAGES
from ..identification._pipeline import jsonable as _jsonable
from ..multibody.friction import FRICTION_KINDS, FrictionModel


class UsageError(Exception):
    """A bad option or option combination (exit status 2, message on stderr)."""


class InputError(Exception):
    """A model, log or output that cannot be used (exit status 2, message on stderr)."""


# ------------------------------------------------------------------------- option types
def _number(text: str, option: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return x


def _positive(option: str):
    def parse(text: str) -> float:
        x = _number(text, option)
        if not x > 0:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
        return x

    parse.__name__ = option
    return parse


def _holdout(text: str) -> float:
    x = _number(text, "--holdout")
    if not 0 <= x < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1), got {text!r}")
    return x


def _decimate(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return k


def _friction(text: str) -> tuple[str, ...]:
    try:
        return FrictionModel.parse(text).kinds
    except (TypeError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _name_number(text: str, value: str, unit: str = "") -> tuple[str, float]:
    """``NAME=<value>`` with a finite number: ``(name, number)``."""
    name, sep, number = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME={value}{unit}, got {text!r}")
    try:
        x = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME={value} with a number {value}, got {text!r}"
        ) from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite {value}, got {text!r}")
    return name.strip(), x


def _scale(text: str) -> tuple[str, float]:
    name, k = _name_number(text, "K")
    if k == 0:
        raise argparse.ArgumentTypeError(f"expected a finite, non-zero K, got {text!r}")
    return name, k


def _lock(text: str) -> tuple[str, float]:
    return _name_number(text, "VALUE", " (rad or m)")


_lock.__name__ = "--lock"
_holdout.__name__ = "--holdout"
_decimate.__name__ = "--decimate"
_friction.__name__ = "--friction"
_scale.__name__ = "--torque-scale"


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
        ".csv with a header (t, q_<joint>, tau_<joint>, optional dq_<joint>, ddq_<joint>)",
    )
    parser.add_argument(
        "--lock",
        metavar="NAME=VALUE",
        action="append",
        type=_lock,
        default=[],
        help="lock joint NAME at VALUE (rad or m) and merge it into its parent body; model "
        "joints missing from the log are locked at 0 unless given here (repeatable)",
    )
    parser.add_argument(
        "--lowpass",
        metavar="HZ",
        type=_positive("--lowpass"),
        help="zero-phase Butterworth low-pass cut-off applied to q, dq and tau before "
        "differentiating (default: no filter)",
    )
    parser.add_argument(
        "--decimate",
        metavar="K",
        type=_decimate,
        default=1,
        help="keep every K-th sample after filtering (default %(default)s)",
    )
    parser.add_argument(
        "--friction",
        metavar="TERMS",
        type=_friction,
        default=FRICTION_KINDS,
        help="joint friction terms to fit: any comma-separated subset of viscous,coulomb,offset, "
        "or none (default: all three)",
    )
    parser.add_argument(
        "--gamma",
        metavar="G",
        type=_positive("--gamma"),
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
        help="refuse a model whose moving bodies are not strictly physically consistent "
        "(default: repair them, keeping mass and CoM, and list them)",
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
        type=_scale,
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
        type=_positive("--rate"),
        help="resample the log onto a uniform grid at HZ (default: the median interval's rate, "
        "and only when the sampling is irregular)",
    )
    parser.add_argument(
        "--max-gap",
        metavar="S",
        type=_positive("--max-gap"),
        help="the longest interval between two samples accepted, in s (default: 10 median "
        "intervals)",
    )
    parser.add_argument(
        "--out",
        metavar="FITTED.urdf",
        help="write the model with the identified <inertial> elements rewritten (URDF only; "
        "every other byte kept)",
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
def _same(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def check_options(args: argparse.Namespace) -> dict[str, str]:
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
    names = [name for name, _ in args.lock]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"--lock: joint {dup[0]!r} is given twice")
    outs = [("--out", args.out), ("--report", args.report)]
    for opt, p in outs:
        if p is None:
            continue
        for what, inp in (("MODEL", args.model), ("LOG", args.log)):
            if _same(p, inp):
                raise UsageError(f"{opt} {p}: that is the {what} file; choose another path")
        if Path(p).is_dir():
            raise UsageError(f"{opt} {p}: is a folder; give a file name")
        if Path(p).exists() and not args.force:
            raise UsageError(f"{opt} {p}: the file exists; pass --force to replace it")
        parent = Path(p).parent
        if not parent.is_dir():
            raise UsageError(f"{opt} {p}: the folder {parent} does not exist")
    if args.out is not None and args.report is not None and _same(args.out, args.report):
        raise UsageError(f"--out and --report name the same file {args.out}")
    try:
        fmt = detect_format(args.model)
    except ModelFileError as e:
        raise InputError(str(e)) from None
    if args.out is not None and fmt != "urdf":
        raise UsageError(
            f"--out {args.out}: only a URDF model can be written back; {args.model} is "
            f"{fmt.upper()} (identify it without --out and use --report)"
        )
    return {"format": fmt}


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


def _load_model(path, fmt, locked):
    import spatialjax.multibody as mb

    loader = {"urdf": mb.Model.from_urdf, "mjcf": mb.Model.from_mjcf, "sdf": mb.Model.from_sdf}
    return loader[fmt](path, locked_joints=locked or None, dtype="float64")


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
        "friction": list(args.friction),
        "gamma": args.gamma,
        "holdout": args.holdout,
        "weighting": args.weighting,
        "strict_prior": args.strict_prior,
        "exclude_torque": list(args.exclude_torque),
        "torque_scale": dict(args.torque_scale),
        "free": args.free,
        "validate": args.validate,
        "rate": args.rate,
        "max_gap": args.max_gap,
        "out": args.out,
        "report": args.report,
        "force": args.force,
        "no_cache": args.no_cache,
        "cache_dir": args.cache_dir,
    }


def _argument_error(e, args) -> Exception:
    """An ``IdentifyError`` of the library as an error naming the option or the file."""
    arg = e.argument
    if arg == "log":
        return InputError(f"{args.log}: {e.detail.replace('larger max_gap', 'larger --max-gap')}")
    if arg.startswith("validate["):
        k = int(arg[len("validate[") : -1])
        return InputError(f"--validate {args.validate[k]}: {e.detail}")
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
            from .._demo_robot import enable_compilation_cache

            try:
                enable_compilation_cache(args.cache_dir)
            except OSError as e:
                raise UsageError(f"--cache-dir: {e}") from None

    return progress


def identify(args: argparse.Namespace, fmt: str, progress: _Progress):
    """Read the model and the log(s), lock what the log lacks, run
    [`identify_robot`][spatialjax.identification.identify_robot]; returns ``(result, model)``."""
    import spatialjax.multibody as mb
    from spatialjax import identification as ident

    from ..io import ModelFileError

    # 1. model (first without locks, to match the log's joints against all movable ones)
    progress.start()
    try:
        full = _load_model(args.model, fmt, None)
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    if full.floating_base or "free_flyer" in full.joint_types:
        raise InputError(
            f"{args.model}: a floating-base model; identify handles fixed-base robots (the "
            "joint torques of a free base are not measured)"
        )
    _check_lock_limits(full, dict(args.lock))
    progress.done(
        "read model",
        f"{args.model} ({fmt.upper()}): {full.nbodies} movable joints "
        f"({', '.join(full.joint_names)})",
    )

    # 2. log(s), matched to the model's joints; the joints the log lacks are locked
    log = _default_joint_names(_read_log(ident, args.log), full, dict(args.lock), args.log)
    try:
        match = ident.match_joints(log, full, lock=dict(args.lock))
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
    locked = dict(match.locked)
    try:
        model = _load_model(args.model, fmt, locked)
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
        + (f"; locked {lock_text}" if locked else "")
        + f": {model.nbodies} moving bodies"
        + (f"; {len(others)} validation log(s)" if others else ""),
    )

    # 3.-9. the library pipeline
    try:
        result = ident.identify_robot(
            model,
            log,
            lowpass=args.lowpass,
            decimate=args.decimate,
            friction=mb.FrictionModel(tuple(args.friction)),
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
            progress=_cache_after_filter(args, progress.done),
        )
    except ident.IdentifyError as e:
        raise _argument_error(e, args) from None
    report = result.report
    report.update(
        model=str(args.model),
        model_format=fmt,
        log=str(args.log),
        validation_logs=list(args.validate or ()),
        locked_joints=locked,
        options=_options(args),
        output=None,
    )
    return result, model


# ------------------------------------------------------------------------------- output
def _tmp_beside(path: Path) -> Path:
    path = Path(os.path.realpath(path))
    return path.with_name(f".{path.name}.spatialjax-identify.tmp")


def _put(tmp: Path, path: Path) -> None:
    """Rename ``tmp`` over ``path`` (its target, for a link), keeping an old file's mode."""
    path = Path(os.path.realpath(path))
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


def _write_outputs(args, result, model, progress: _Progress) -> None:
    """Write ``--out`` and ``--report``: both to temporary files first, then renamed.

    A failure while writing leaves no output (and no existing file) changed.
    """
    from ..identification._export import write_identified_urdf

    report = result.report
    tmps: list[tuple[Path, Path]] = []
    try:
        if args.out is not None:
            tmp = _tmp_beside(Path(args.out))
            tmps.append((tmp, Path(args.out)))
            rep = write_identified_urdf(
                args.model, model, result.params["fit"], tmp, overwrite=True
            )
            rep["output"] = str(args.out)
            report["output"] = rep
        if args.report is not None:
            text = json.dumps(_jsonable(report), indent=1, allow_nan=False) + "\n"
            tmp = _tmp_beside(Path(args.report))
            tmps.append((tmp, Path(args.report)))
            tmp.write_text(text, encoding="utf-8")
        for tmp, path in tmps:
            _put(tmp, path)
    finally:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
    written = [str(p) for _, p in tmps]
    progress.done("write", ", ".join(written) if written else "nothing (no --out, no --report)")
    out = report.get("output")
    if out:
        for b in out["bodies"]:
            if b["mode"] == "composite":
                print(f"  note: {b['note']}", file=progress.out)


def run(args: argparse.Namespace) -> int:
    """Identify; print progress and the table; return the exit status (module docstring)."""
    from ..io import ModelFileError
    from ..io._check import _x64

    try:
        plan = check_options(args)
    except (UsageError, InputError) as e:
        print(f"spatialjax identify: error: {e}", file=sys.stderr)
        return 2
    progress = _Progress(sys.stdout)
    try:
        with _x64():
            result, model = identify(args, plan["format"], progress)
            _write_outputs(args, result, model, progress)
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
        f"(base-regressor condition number {_g(idf['condition_number'], '.3g')}); "
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
