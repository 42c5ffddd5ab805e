r"""``spatialjax identify MODEL LOG``: whole-robot inertial identification from a joint log.

Stages (one progress line each): read the model (URDF; MJCF and SDFormat
through the kinematic-tree loaders), read the log (``.npz`` or ``.csv``, see
:func:`spatialjax.identification.load_log`) and match its joints to the
model's (joints missing from the log are locked at 0 or at ``--lock
NAME=VALUE`` and merged into their parent body), filter
(:func:`spatialjax.identification.prepare_log`: zero-phase Butterworth
low-pass of ``q``, ``q̇``, ``τ``, differentiation where ``dq``/``ddq`` are
missing), build the joint-torque regressor ``τ = Y(q, q̇, q̈) π + Y_f(q̇) φ``
(RNEA regressor, Atkeson, An & Hollerbach 1986; friction columns viscous
``q̇``, Coulomb ``sign q̇``, offset ``1``) and, with a low-pass, filter its
columns like the torques before decimating (parallel filtering, Gautier 1997:
:func:`spatialjax.identification.parallel_filter`), ordinary least squares
for comparison, the physically consistent fit with the log-det divergence to
the model's bodies as prior (:func:`spatialjax.identification.fit_torques` on
that regressor, the objective of ``fit_robot``; Wensing, Kim & Slotine, RA-L
2017; Lee, Wensing & Park, T-RO 2020), validation on the held-out end of the
log, and the outputs (``--out`` URDF, ``--report`` JSON).

The last ``holdout`` fraction of the raw log is held out: the two parts are
filtered, differentiated and decimated separately, so that nothing of the
held-out samples reaches the fit; the fit uses the first part only.

Errors ``‖τ̂ − τ‖ / ‖τ‖`` (Frobenius over samples and joints, or over the
samples of one joint) are given for the fit, for ordinary least squares on
the same columns, and for the prior (the model file's bodies, no friction),
on the training part and on the held-out part.

All numbers are computed in float64 (``jax.enable_x64`` inside the command).
Every option is checked, and ``--out``/``--report`` refuse to replace an
existing file without ``--force``, before any file is read; nothing is
written when any stage fails.

The report (``--report``, JSON; NaN and infinities are written as ``null``):

* ``model``, ``model_format``, ``log``, ``options`` (every option as given),
  ``joints`` (the identified joints, model order), ``locked_joints``
  (``{joint: value}``), ``gravity``, ``samples`` (``raw``, ``raw_holdout``,
  and after filtering and decimation ``after_decimation``, ``train``,
  ``holdout``), ``gamma`` (the log-det
  weight used), ``noise_std`` and ``noise_weights`` (per joint ``σ̂_j`` and
  the weight ``1/σ̂_j²`` of its residuals).
* ``links``: per moving body (``link`` = its joint's child link, ``joint``),
  for ``fit``, ``least_squares`` and ``prior``: ``params`` (the 10-vector
  ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the link frame's
  origin in its axes, composite of the rigidly attached links), ``mass``,
  ``com`` (m, link frame), ``principal_moments`` (of ``I_c``, ascending),
  ``consistent`` (fully physically consistent), ``margins``
  (``min_eig_inertia_com``, ``triangle_margin``, ``min_eig_pseudo_inertia``:
  :func:`spatialjax.physical_consistency`), ``geodesic_to_prior``
  (:func:`spatialjax.geodesic_distance`, ``null`` when not positive
  definite); and ``data_share`` (10 numbers in [0, 1]: the fraction of each
  parameter's prior variance removed by the data, ``1 − C_kk / P_kk`` with
  ``P`` the prior and ``C`` the posterior covariance of the linearised fit;
  1 where the data decide the parameter, 0 where the prior does).
* ``friction`` (the fit) and ``friction_least_squares``: ``{joint:
  {"viscous": F_v, "coulomb": F_c, "offset": o}}`` (N·m·s/rad, N·m, N·m;
  ``null`` for terms not fitted).
* ``errors``: ``{fit | least_squares | prior: {train | holdout: {"overall":
  e, "per_joint": {joint: e}}}}`` with ``e = ‖τ̂ − τ‖ / ‖τ‖`` (``holdout`` is
  ``null`` with ``--holdout 0``).
* ``identifiability``: ``rank``, ``n_columns`` (10 per body + friction),
  ``condition_number`` (of the column-scaled, noise-weighted *base*
  regressor: its ``rank`` independent columns ``base_columns``; finite, the
  figure used to judge an excitation; ``null`` only when nothing is
  excited), ``base_columns``
  and ``base_parameters`` (a set of independent columns, pivoted QR: indices
  and ``[link or joint, parameter]`` names), ``n_unidentifiable``,
  ``prior_decided`` (``[link, parameter]`` pairs with data share < 0.5).
* ``fit_status`` (``status``, ``converged``, ``iterations``, ``objective``),
  ``times`` of the fit: ``solve_s`` (a second call, the program cached) and
  ``compile_s`` (the first call's extra time).
* ``output`` (with ``--out``): how each body was written
  (:func:`spatialjax.identification.write_identified_urdf`'s report:
  ``mode`` ``single`` / ``remainder`` / ``composite``, ``links_kept``,
  ``links_cleared``, ``untouched``, ``max_reload_error``).

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
from typing import Any

import numpy as np

FRICTION_KINDS = ("viscous", "coulomb", "offset")
DEFAULT_HOLDOUT = 0.2


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
    parts = [p.strip().lower() for p in text.split(",")]
    if parts == ["none"]:
        return ()
    bad = [p for p in parts if p not in FRICTION_KINDS]
    if bad or not parts:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated subset of {','.join(FRICTION_KINDS)}, or 'none'; got "
            f"{text!r}"
        )
    if len(set(parts)) != len(parts):
        raise argparse.ArgumentTypeError(f"a friction term is repeated in {text!r}")
    return tuple(k for k in FRICTION_KINDS if k in parts)  # canonical order


def _lock(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (rad or m), got {text!r}")
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME=VALUE with a number VALUE, got {text!r}"
        ) from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite VALUE, got {text!r}")
    return name.strip(), x


_lock.__name__ = "--lock"
_holdout.__name__ = "--holdout"
_decimate.__name__ = "--decimate"
_friction.__name__ = "--friction"


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
        "rule, 2/s^2 = 8 for a prior spread s = 0.5, with each joint's residuals weighted by "
        "1/sigma_j^2 estimated from least squares; the value used is printed and reported)",
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
    """One line per stage: ``[k/8] stage: what (seconds)``."""

    STAGES = (
        "read model",
        "read log",
        "filter",
        "regressor",
        "least squares",
        "fit",
        "validate",
        "write",
    )

    def __init__(self, out):
        self.out = out
        self.t0 = time.perf_counter()
        self.times: dict[str, float] = {}

    def start(self) -> None:
        self.t0 = time.perf_counter()

    def done(self, stage: str, text: str) -> None:
        dt = time.perf_counter() - self.t0
        self.times[stage] = dt
        k = self.STAGES.index(stage) + 1
        print(f"[{k}/{len(self.STAGES)}] {stage}: {text} ({dt:.2f} s)", file=self.out, flush=True)
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


def _slice_log(log, start: int, stop: int):
    """Samples ``start:stop`` of a :class:`~spatialjax.identification.RobotLog`."""
    import dataclasses

    def cut(x):
        return None if x is None else x[start:stop]

    return dataclasses.replace(
        log, t=log.t[start:stop], q=log.q[start:stop], tau=log.tau[start:stop], dq=cut(log.dq),
        ddq=cut(log.ddq),
    )  # fmt: skip


def _check_enough(args, n_train: int, n_hold: int, nv: int, n_params: int) -> None:
    """Refuse a log with fewer joint-torque equations than parameters to identify."""
    if n_train * nv < n_params:
        raise InputError(
            f"{args.log}: column 't': {n_train} training samples (after filtering and "
            f"decimation by {args.decimate}; {n_hold} held out) give {n_train * nv} "
            f"joint-torque equations, fewer than the {n_params} parameters to identify (10 per "
            f"moving body + joint friction); record a longer log or decimate less"
        )


def _option_error(e: ValueError, args, part: str, n: int) -> Exception:
    """A ``ValueError`` of ``prepare_log``/``parallel_filter`` as an error naming the option."""
    head, _, rest = str(e).partition(":")
    opt = {"lowpass": "--lowpass", "decimate": "--decimate"}.get(head.strip())
    if opt is None:
        if part == "hold":
            return UsageError(
                f"--holdout {args.holdout}: the held-out part of {args.log} ({n} samples) "
                f"cannot be filtered: {e}"
            )
        return InputError(f"{args.log}: {e}")
    value = args.lowpass if opt == "--lowpass" else args.decimate
    for name in ("lowpass", "decimate"):
        rest = rest.replace(f" {name} ", f" --{name} ")
        rest = rest.replace(f"pass {name}", f"pass --{name}")
    return UsageError(f"{opt} {value}: {rest.strip()} (log {args.log})")


def _prepare(ident, log, args, part: str, *, decimate: int):
    """``prepare_log`` of one part of the log; its errors name the option or the file."""
    try:
        return ident.prepare_log(log, lowpass=args.lowpass, decimate=decimate)
    except ident.LogError as e:
        if part == "hold":
            raise UsageError(
                f"--holdout {args.holdout}: the held-out part of {args.log} ({log.n_samples} "
                f"samples) cannot be filtered: {e}"
            ) from None
        raise InputError(str(e)) from None
    except ValueError as e:  # an option that does not suit this log (rate, length)
        raise _option_error(e, args, part, log.n_samples) from None


def _rel(err: np.ndarray, ref: np.ndarray) -> float | None:
    """``‖err‖ / ‖ref‖`` (None where ``ref`` is zero)."""
    d = float(np.linalg.norm(ref))
    return float(np.linalg.norm(err)) / d if d > 0 else None


def _errors(tau_hat, tau, n_train, joints) -> dict:
    parts = {"train": slice(0, n_train), "holdout": slice(n_train, tau.shape[0])}
    out: dict[str, Any] = {}
    for part, sl in parts.items():
        e, r = tau_hat[sl] - tau[sl], tau[sl]
        if r.shape[0] == 0:
            out[part] = None
            continue
        out[part] = {
            "overall": _rel(e, r),
            "per_joint": {j: _rel(e[:, k], r[:, k]) for k, j in enumerate(joints)},
        }
    return out


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def _jsonable(x):
    """NumPy / JAX values to plain JSON (NaN and infinities to ``null``)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return _finite_or_none(x)
    if hasattr(x, "shape"):
        return _jsonable(np.asarray(x).tolist())
    return x


def _body_dict(p: np.ndarray, s: dict, k: int, with_distance: bool) -> dict:
    """The report entry of body ``k`` of a ``body_metrics`` batch (parameters ``p``)."""
    m = float(p[0])
    d: dict[str, Any] = {
        "params": p.tolist(),
        "mass": m,
        "com": (np.asarray(p[1:4]) / m).tolist() if m != 0 else None,
        "principal_moments": s["principal_moments"][k].tolist(),
        "consistent": bool(s["consistent"][k]),
        "margins": {
            "min_eig_inertia_com": float(s["min_eig_inertia_com"][k]),
            "triangle_margin": float(s["triangle_margin"][k]),
            "min_eig_pseudo_inertia": float(s["min_eig_pseudo_inertia"][k]),
        },
    }
    if with_distance:
        d["geodesic_to_prior"] = _finite_or_none(s["geodesic"][k])
    return d


def _friction_rows(phi: np.ndarray, kinds: tuple, nv: int) -> list[dict]:
    """Per joint ``{viscous, coulomb, offset}`` from joint-major coefficients (None: not fitted)."""
    rows = []
    for k in range(nv):
        row: dict[str, float | None] = dict.fromkeys(FRICTION_KINDS)
        for i, kind in enumerate(kinds):
            row[kind] = float(phi[k * len(kinds) + i])
        rows.append(row)
    return rows


def _select_friction(F, kinds, n1):
    """Columns of ``friction_regressor`` for the chosen kinds (joint-major, kind order kept)."""
    cols = [3 * j + FRICTION_KINDS.index(k) for j in range(n1) for k in kinds]
    return F[..., cols], cols


def identify(args: argparse.Namespace, fmt: str, progress: _Progress) -> dict:
    """Run every stage but the writing; returns the report (JSON-able) plus private fields."""
    import jax
    import jax.numpy as jnp

    import spatialjax.multibody as mb
    from spatialjax import identification as ident
    from spatialjax.identification._export import body_metrics

    from ..io import ModelFileError

    opts = {
        "lock": dict(args.lock),
        "lowpass": args.lowpass,
        "decimate": args.decimate,
        "friction": list(args.friction),
        "gamma": args.gamma,
        "holdout": args.holdout,
        "out": args.out,
        "report": args.report,
        "force": args.force,
        "no_cache": args.no_cache,
        "cache_dir": getattr(args, "cache", None),
    }
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
    progress.done(
        "read model",
        f"{args.model} ({fmt.upper()}): {full.nbodies} movable joints "
        f"({', '.join(full.joint_names)})",
    )

    # 2. log, matched to the model's joints; the joints it lacks are locked
    try:
        log = ident.load_log(args.log)
    except ident.LogError as e:
        raise InputError(str(e)) from None
    log = _default_joint_names(log, full, dict(args.lock), args.log)
    try:
        match = ident.match_joints(log, full, lock=dict(args.lock))
    except ident.LogError as e:
        raise InputError(str(e)) from None
    except ValueError as e:
        msg = str(e)
        if msg.startswith("lock:"):
            raise UsageError("--lock: " + msg[len("lock:") :].strip()) from None
        col = "joint_names" if log.joint_names is not None else "q"
        raise InputError(f"{args.log}: column {col!r}: {msg.removeprefix('log: ')}") from None
    locked = dict(match.locked)
    try:
        model = _load_model(args.model, fmt, locked)
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    log = match.apply(log)
    joints = tuple(model.joint_names)
    if joints != tuple(match.joint_names):  # pragma: no cover - both are the model order
        raise InputError(f"internal: joint order {joints} != {match.joint_names}")
    locked_txt = ", ".join(f"{k}={v:g}" for k, v in locked.items()) or "none"
    n_raw = log.n_samples
    span = float(log.t[-1] - log.t[0])
    progress.done(
        "read log",
        f"{args.log}: {n_raw} samples over {span:.3g} s ({(n_raw - 1) / span:.4g} Hz), "
        f"joints {', '.join(joints)}"
        + (f" (dropped {', '.join(match.dropped)})" if match.dropped else "")
        + ("" if log.dq is None else ", dq given")
        + ("" if log.ddq is None else ", ddq given")
        + f"; locked {locked_txt}: {model.nbodies} moving bodies",
    )

    # 3. filter: the training and held-out parts separately (nothing leaks from one into
    # the other through the zero-phase filter or the differences); at the full rate when
    # low-passed (decimation comes after the parallel filtering of the regressor)
    n_raw_hold = int(math.floor(args.holdout * n_raw))
    if args.holdout > 0 and n_raw_hold == 0:
        raise UsageError(
            f"--holdout {args.holdout}: holds out no sample of the {n_raw} in {args.log}; use a "
            "larger fraction or 0"
        )
    K = args.decimate
    nv = model.nv
    n_fric = len(args.friction) * nv
    n_params = 10 * model.nbodies + n_fric
    _check_enough(args, -(-(n_raw - n_raw_hold) // K), n_raw_hold // K, nv, n_params)
    bounds = [(0, n_raw - n_raw_hold)] + ([(n_raw - n_raw_hold, n_raw)] if n_raw_hold else [])
    preps = [
        _prepare(ident, _slice_log(log, a, b), args, "training part" if k == 0 else "hold",
                 decimate=1 if args.lowpass else K)
        for k, (a, b) in enumerate(bounds)
    ]  # fmt: skip
    sizes = [int(np.asarray(p.t).shape[0]) for p in preps]
    if args.lowpass and not args.lowpass < preps[0].rate / (2 * K):
        raise UsageError(
            f"--decimate {K}: puts the Nyquist frequency at {preps[0].rate / (2 * K):g} Hz, "
            f"below the --lowpass cut-off {args.lowpass:g} Hz (log {args.log} at "
            f"{preps[0].rate:g} Hz); decimate less or lower --lowpass"
        )
    filt = (
        f"zero-phase Butterworth low-pass {args.lowpass:g} Hz (order {preps[0].order})"
        if args.lowpass
        else f"no low-pass, decimated by {K}"
    )
    progress.done(
        "filter",
        f"{filt}; training part {sizes[0]} samples"
        + (f", held-out part (the last {n_raw_hold} raw samples) {sizes[1]}" if n_raw_hold else "")
        + f" at {preps[0].rate:.4g} Hz",
    )

    # 4. regressor on the filtered samples; with a low-pass its columns go through the
    # torques' filter too (parallel filtering, Gautier 1997), then everything is decimated
    cat = {k: jnp.asarray(np.concatenate([np.asarray(getattr(p, k)) for p in preps]))
           for k in ("q", "dq", "ddq")}  # fmt: skip
    Y_all = np.asarray(jax.jit(mb.joint_torque_regressor)(model, cat["q"], cat["dq"], cat["ddq"]))
    F_all = np.asarray(jax.jit(mb.friction_regressor)(model, cat["dq"]))
    F_all, _ = _select_friction(F_all, args.friction, nv)
    Ys, Fs, taus = [], [], []
    for p, a, b in zip(preps, np.cumsum([0] + sizes[:-1]), np.cumsum(sizes), strict=True):
        Yp, Fp = Y_all[a:b], F_all[a:b]
        if args.lowpass:
            try:
                if n_fric:
                    p, Yp, Fp = ident.parallel_filter(p, Yp, Fp, decimate=K)
                else:
                    p, Yp = ident.parallel_filter(p, Yp, decimate=K)
                    Fp = np.zeros((Yp.shape[0], nv, 0))
            except ValueError as e:
                raise _option_error(e, args, "hold" if Ys else "training part", b - a) from None
        Ys.append(np.asarray(Yp))
        Fs.append(np.asarray(Fp))
        taus.append(np.asarray(p.tau, np.float64))
    Y, F, tau = np.concatenate(Ys), np.concatenate(Fs), np.concatenate(taus)
    N, n_train = Y.shape[0], Ys[0].shape[0]
    n_hold = N - n_train
    _check_enough(args, n_train, n_hold, nv, n_params)
    how = "parallel-filtered (Gautier 1997) and " if args.lowpass else ""
    progress.done(
        "regressor",
        f"Y {Y.shape[1]}×{Y.shape[2]} (10 per body) + {F.shape[2]} friction columns per "
        f"sample, {how}decimated by {K}: fit on {n_train} samples, {n_hold} held out",
    )
    tr = slice(0, n_train)

    # 5. ordinary least squares (same columns, same samples)
    pi_ls, phi_ls = jax.jit(ident.least_squares_torques)(
        jnp.asarray(Y[tr]), jnp.asarray(tau[tr]), extra=jnp.asarray(F[tr]) if n_fric else None
    )
    pi_ls = np.asarray(pi_ls).reshape(model.nbodies, 10)
    phi_ls = np.zeros(0) if phi_ls is None else np.asarray(phi_ls).reshape(-1)
    progress.done("least squares", f"{pi_ls.size + phi_ls.size} parameters (minimum norm)")

    # 6. the consistent fit (fit_torques on the same columns: what fit_robot does, but on the
    # parallel-filtered regressor). The first call compiles and solves, the second (cached
    # program) only solves: compile time = first − second.
    nonneg = np.array([k != "offset" for _ in range(nv) for k in args.friction], bool)
    Ytr, ttr = jnp.asarray(Y[tr]), jnp.asarray(tau[tr])
    fit_kw: dict[str, Any] = {
        "prior": model.inertia,
        "extra": jnp.asarray(F[tr]) if n_fric else None,
        "extra_nonnegative": nonneg if n_fric else None,
        "gamma": args.gamma,
    }
    try:
        t0 = time.perf_counter()
        jax.block_until_ready(ident.fit_torques(Ytr, ttr, **fit_kw))
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = jax.block_until_ready(ident.fit_torques(Ytr, ttr, **fit_kw))
        t_solve = time.perf_counter() - t0
    except ValueError as e:
        raise InputError(f"the fit of {args.log} failed: {e}") from None
    t_compile = max(0.0, t_first - t_solve)
    pi_fit = np.asarray(res.inertia.params, np.float64).reshape(model.nbodies, 10)
    phi_fit = np.asarray(res.extra, np.float64).reshape(-1)
    gamma = float(np.asarray(res.gamma))
    noise = np.asarray(res.noise_std, np.float64).reshape(-1)
    converged = bool(np.all(np.asarray(res.converged)))
    iters = int(np.max(np.asarray(res.iterations)))
    status = ident.FitStatus(int(np.max(np.asarray(res.status))))
    if status not in (ident.FitStatus.CONVERGED, ident.FitStatus.NOT_CONVERGED):
        raise InputError(f"the fit failed on {args.log}: {ident.FitStatus.describe(status)}")
    progress.done(
        "fit",
        f"{'converged' if converged else 'NOT converged'} in {iters} "
        f"iterations, gamma {gamma:.3g}; compile {t_compile:.2f} s, solve {t_solve:.3f} s",
    )
    if not converged:
        print(
            f"spatialjax identify: warning: {ident.FitStatus.describe(status)} (see "
            "fit_status in the report)",
            file=sys.stderr,
        )

    # 7. validation (all N samples; the first n_train were fitted)
    pi0 = np.asarray(model.inertia.params, np.float64)
    Yf = Y.reshape(N * nv, -1)

    def predict(pi, phi):
        out = Yf @ pi.reshape(-1)
        if phi.size:
            out = out + F.reshape(N * nv, -1) @ phi
        return out.reshape(N, nv)

    errors = {
        "fit": _errors(predict(pi_fit, phi_fit), tau, n_train, joints),
        "least_squares": _errors(predict(pi_ls, phi_ls), tau, n_train, joints),
        "prior": _errors(predict(pi0, np.zeros(0)), tau, n_train, joints),
    }
    # identifiability of the fitted problem: same samples, columns, weights 1/σ̂² and γ
    n_cols = Y.shape[2] + F.shape[2]
    names = ident.parameter_names(model, tuple(args.friction))
    idf = ident.identifiability(
        jnp.asarray(Y[tr]),
        extra=jnp.asarray(F[tr]) if n_fric else None,
        weights=jnp.asarray(1.0 / noise**2),
        prior=model.inertia,
        gamma=gamma,
        names=names,
    )
    share = np.asarray(idf.data_share, np.float64).reshape(-1)
    rank, cond = int(np.asarray(idf.rank)), float(np.asarray(idf.condition_number))
    base = np.asarray(idf.base_columns)[:rank].tolist()
    decided = [list(x) for x in idf.prior_decided()]
    nb = model.nbodies
    summ = body_metrics(np.concatenate([pi_fit, pi_ls, pi0]), np.concatenate([pi0, pi0, pi0]))
    links = []
    for b in range(nb):
        d = {"link": model.body_names[b], "joint": model.joint_names[b]}
        d["fit"] = _body_dict(pi_fit[b], summ, b, True)
        d["least_squares"] = _body_dict(pi_ls[b], summ, nb + b, True)
        d["prior"] = _body_dict(pi0[b], summ, 2 * nb + b, False)
        d["data_share"] = share[10 * b : 10 * b + 10].tolist()
        links.append(d)
    kinds = tuple(args.friction)
    friction = dict(zip(joints, _friction_rows(phi_fit, kinds, nv), strict=True))
    friction_ls = dict(zip(joints, _friction_rows(phi_ls, kinds, nv), strict=True))
    identifiability = {
        "rank": rank,
        "n_columns": n_cols,
        "condition_number": cond,
        "base_columns": base,
        "base_parameters": [list(names[i]) for i in base],
        "n_unidentifiable": n_cols - rank,
        "prior_decided": decided,
    }
    e_fit, e_ls = errors["fit"]["holdout"], errors["least_squares"]["holdout"]
    what = "held-out" if e_fit is not None else "training"
    ef = (e_fit or errors["fit"]["train"])["overall"]
    el = (e_ls or errors["least_squares"]["train"])["overall"]
    progress.done("validate", f"{what} torque error: fit {ef:.4f}, least squares {el:.4f}")

    report = {
        "model": str(args.model),
        "model_format": fmt,
        "log": str(args.log),
        "options": opts,
        "joints": list(joints),
        "locked_joints": locked,
        "gravity": [0.0, 0.0, -9.81],
        "samples": {
            "raw": n_raw,
            "raw_holdout": n_raw_hold,
            "after_decimation": N,
            "train": n_train,
            "holdout": n_hold,
        },
        "gamma": gamma,
        "noise_std": dict(zip(joints, noise.tolist(), strict=True)),
        "noise_weights": dict(zip(joints, (1.0 / noise**2).tolist(), strict=True)),
        "links": links,
        "friction": friction,
        "friction_least_squares": friction_ls,
        "errors": errors,
        "identifiability": identifiability,
        "fit_status": {
            "status": status.name,
            "converged": converged,
            "iterations": iters,
            "objective": float(np.asarray(res.objective)),
        },
        "times": {"compile_s": t_compile, "solve_s": t_solve},
        "output": None,
    }
    return {"report": report, "_model": model, "_pi_fit": pi_fit}


# ------------------------------------------------------------------------------- output
def _g(x, fmt=".4g") -> str:
    return "—" if x is None else format(x, fmt)


def _share_text(share: list) -> str:
    """``min–max`` of a link's data shares (``—`` when unknown)."""
    vals = [x for x in share if x is not None and math.isfinite(x)]
    lo, hi = (max(0.0, x) + 0.0 for x in (min(vals), max(vals))) if vals else (0.0, 0.0)
    return f"{lo:.2f}–{hi:.2f}" if vals else "—"  # display only: -1e-17 is 0.00


def summary_table(report: dict) -> str:
    """The table printed at the end: per link, then per joint."""
    lines = []
    rows = [("link", "mass prior → fit (kg)", "OLS consistent", "fit consistent", "data share")]
    for d in report["links"]:
        share = d["data_share"]
        rows.append(
            (
                d["link"],
                f"{d['prior']['mass']:.3f} → {d['fit']['mass']:.3f}",
                "yes" if d["least_squares"]["consistent"] else "NO",
                "yes" if d["fit"]["consistent"] else "NO",
                _share_text(share),
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    part = "holdout" if report["errors"]["fit"]["holdout"] is not None else "train"
    label = "held-out" if part == "holdout" else "training (no hold-out)"
    lines.append("")
    rows: list[tuple[str, ...]] = [("joint", f"{label} ‖τ̂−τ‖/‖τ‖: fit", "least squares", "prior")]
    errs = {k: report["errors"][k][part] for k in ("fit", "least_squares", "prior")}
    for j in report["joints"]:
        rows.append((j, *(_g(errs[k]["per_joint"][j], ".4f") for k in errs)))
    rows.append(("all", *(_g(errs[k]["overall"], ".4f") for k in errs)))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(lines)


def _tmp_beside(path: Path) -> Path:
    path = Path(os.path.realpath(path))
    return path.with_name(f".{path.name}.spatialjax-identify.tmp")


def _put(tmp: Path, path: Path) -> None:
    """Rename ``tmp`` over ``path`` (its target, for a link), keeping an old file's mode."""
    path = Path(os.path.realpath(path))
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


def _write_outputs(args, result: dict, progress: _Progress) -> None:
    """Write ``--out`` and ``--report``: both to temporary files first, then renamed.

    A failure while writing leaves no output (and no existing file) changed.
    """
    from ..identification._export import write_identified_urdf

    report = result["report"]
    tmps: list[tuple[Path, Path]] = []
    try:
        if args.out is not None:
            tmp = _tmp_beside(Path(args.out))
            tmps.append((tmp, Path(args.out)))
            rep = write_identified_urdf(
                args.model, result["_model"], result["_pi_fit"], tmp, overwrite=True
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
    if not args.no_cache:
        from .._demo_robot import enable_compilation_cache

        try:
            args.cache = enable_compilation_cache(args.cache_dir)
        except OSError as e:
            print(f"spatialjax identify: error: --cache-dir: {e}", file=sys.stderr)
            return 2
    else:
        args.cache = None
    try:
        with _x64():
            result = identify(args, plan["format"], progress)
            _write_outputs(args, result, progress)
    except (UsageError, InputError, ModelFileError) as e:
        print(f"spatialjax identify: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"spatialjax identify: error: cannot write: {e}", file=sys.stderr)
        return 2
    rep = result["report"]
    idf, times = rep["identifiability"], rep["times"]
    print()
    print(summary_table(rep))
    print(
        f"\ngamma {rep['gamma']:.3g}; rank {idf['rank']} of {idf['n_columns']} columns "
        f"(base-regressor condition number {_g(idf['condition_number'], '.3g')}); "
        f"compile {times['compile_s']:.2f} s, "
        f"solve {times['solve_s']:.3f} s"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry with ``spatialjax identify``'s options; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="spatialjax identify", description=(__doc__ or "").split("\n")[0]
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
