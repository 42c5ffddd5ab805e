"""``spatialjax excite MODEL``: design an excitation trajectory and write it as CSV.

[`design_excitation`][spatialjax.identification.design_excitation] on the model's movable
joints, URDF ``<limit>`` as limits; exit status 0 or 2. Usage: docs page
``identification.md#record-an-exciting-trajectory``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from .. import _util
from ..identification.output.report import jsonable
from . import _args
from ._args import InputError, UsageError

__all__ = ["add_arguments", "run"]


def _margin(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}") from None
    if not 0 < x <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}")
    return x


_margin.__name__ = "--margin"


def _duration(text: str) -> float:
    """A finite number (its sign is checked by ``design_excitation``, naming ``--duration``)."""
    return _args.number(text, "--duration")


_duration.__name__ = "--duration"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``spatialjax excite``."""
    parser.epilog = (
        "exit status: 0 success, 2 for a usage error, a model without joint limits, or an output "
        "that cannot be written (nothing is written then)"
    )
    parser.add_argument("model", metavar="MODEL", help="the robot (URDF with <limit> elements)")
    parser.add_argument("--duration", metavar="S", type=_duration, required=True,
                        help="length of the trajectory in s (> 0)")  # fmt: skip
    parser.add_argument("--harmonics", metavar="H", type=_args.count("--harmonics", 1), default=5,
                        help="harmonics of the Fourier series (default %(default)s)")  # fmt: skip
    parser.add_argument("--base-frequency", metavar="HZ", type=_args.positive("--base-frequency"),
                        default=0.1, help="base frequency in Hz (default %(default)s)")  # fmt: skip
    parser.add_argument(
        "--criterion",
        choices=("condition_snr", "condition", "logdet", "aoptimal"),
        default="condition_snr",
        help="the condition number over the weakest column's amplitude, the condition number "
        "alone, D-optimal -log det or A-optimal log trace of the inverse information (default "
        "%(default)s)",
    )
    parser.add_argument("--starts", metavar="N", type=_args.count("--starts", 1), default=64,
                        help="random starts optimised at once (default %(default)s)")  # fmt: skip
    parser.add_argument("--steps", metavar="K", type=_args.count("--steps", 0), default=400,
                        help="optimiser steps (default %(default)s)")  # fmt: skip
    parser.add_argument("--no-halving", action="store_true",
                        help="every start takes every step (default: successive halving, the "
                        "best quarter of the starts go on after steps/8, a sixteenth after "
                        "steps/2)")  # fmt: skip
    parser.add_argument("--rate", metavar="HZ", type=_args.positive("--rate"), default=1000.0,
                        help="sampling rate of the CSV (default %(default)s)")  # fmt: skip
    parser.add_argument("--grid-rate", metavar="HZ", type=_args.positive("--grid-rate"),
                        default=10.0, help="sampling rate of the criterion while optimising "
                        "(default %(default)s)")  # fmt: skip
    parser.add_argument(
        "--margin",
        metavar="F",
        type=_margin,
        default=0.9,
        help="fraction of every limit that may be used (default %(default)s)",
    )
    parser.add_argument("--acceleration-limit", metavar="RAD_S2", type=_args.positive(
        "--acceleration-limit"), help="one acceleration limit for every joint (default: none "
        "beyond the one the velocity limit implies)")  # fmt: skip
    parser.add_argument("--torque-limits", action="store_true",
                        help="also keep |tau| (RNEA, model inertias) within margin * the URDF "
                        "effort limits")  # fmt: skip
    parser.add_argument("--lock", metavar="NAME=VALUE", action="append", type=_args.lock,
                        default=[], help="lock joint NAME at VALUE (rad or m) and merge it "
                        "into its parent body (repeatable); <mimic> joints and their leaders are "
                        "locked at 0 unless given here")  # fmt: skip
    parser.add_argument("--seed", metavar="K", type=_args.count("--seed", 0), default=0,
                        help="random seed of the starts (default %(default)s)")  # fmt: skip
    parser.add_argument("--out", metavar="TRAJ.csv", required=True, help="the trajectory (CSV)")
    parser.add_argument("--report", metavar="REPORT.json", help="write the report as JSON")
    parser.add_argument("--force", action="store_true", help="replace --out/--report files")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not use the persistent JAX compilation cache (default folder "
                        "~/.cache/spatialjax/jax; also: environment "
                        "SPATIALJAX_NO_COMPILATION_CACHE=1); with the cache, a second run on "
                        "a model of the same structure skips most of the compile")  # fmt: skip
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="folder of the persistent compilation cache")  # fmt: skip


def _check(args) -> str:
    from ..io import ModelFileError
    from ..io._load import detect_format

    if not Path(args.model).is_file():
        raise UsageError(f"MODEL {args.model}: no such file")
    if not args.duration > 0:
        raise UsageError(f"--duration {args.duration:g}: expected a length in s > 0")
    _args.no_repeats(args.lock, "--lock")
    outputs = {"--out": args.out, "--report": args.report}
    _args.check_outputs(outputs, {"MODEL": args.model}, args.force)
    try:
        fmt = detect_format(args.model)
    except ModelFileError as e:
        raise InputError(str(e)) from None
    if fmt != "urdf":
        raise UsageError(f"MODEL {args.model}: {fmt.upper()}; joint limits are read from URDF only")
    return fmt


def _mimic_locks(path) -> dict[str, float]:
    """``{joint: 0}`` for every ``<mimic>`` joint and the joint it follows."""
    from ..io._common import read_bytes
    from ..io._xml import parse_xml

    out = {}
    for el in parse_xml(read_bytes(path), path).findall("joint"):
        mimic = el.find("mimic")
        if mimic is not None and el.attrib.get("name"):
            out[el.attrib["name"]] = 0.0
            if mimic.attrib.get("joint"):
                out[mimic.attrib["joint"]] = 0.0
    return out


def _cache_after_checks(args, say):
    """``say`` that enables the compilation cache at the first progress line (arguments checked)."""
    pending = [not args.no_cache]

    def progress(line: str) -> None:
        if pending[0]:
            pending[0] = False
            try:
                _util.enable_compilation_cache(args.cache_dir)
            except OSError as e:
                raise UsageError(f"--cache-dir: {e}") from None
        say(line)

    return progress


def _design(args, say):
    import jax

    import spatialjax.multibody as mb
    from spatialjax.identification import design_excitation

    from ..io import ModelFileError

    t0 = time.perf_counter()
    try:
        full = mb.Model.from_urdf(args.model, dtype="float64")
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    lock = dict(args.lock)
    unknown = [n for n in lock if n not in full.joint_names]
    if unknown:
        raise UsageError(f"--lock: {unknown[0]!r} is no movable joint of {args.model} "
                         f"({', '.join(full.joint_names)})")  # fmt: skip
    auto = {k: v for k, v in _mimic_locks(args.model).items()
            if k in full.joint_names and k not in lock}  # fmt: skip
    if auto:
        lo, hi = np.asarray(full.lower), np.asarray(full.upper)
        for name in auto:
            k = full.joint_names.index(name)
            auto[name] = float(np.clip(0.0, lo[k], hi[k]))
    locked = {**auto, **lock}
    try:
        model = mb.Model.from_urdf(args.model, locked_joints=locked or None, dtype="float64")
    except (ModelFileError, ValueError) as e:
        raise InputError(str(e)) from None
    note = f"; {', '.join(auto)} locked at 0 (<mimic>; --lock to choose)" if auto else ""
    say(f"read model: {args.model}: {model.nv} joints to excite ({', '.join(model.joint_names)})"
        f"{note} ({time.perf_counter() - t0:.2f} s)")  # fmt: skip
    try:
        return (
            model,
            locked,
            design_excitation(
                model,
                duration=args.duration,
                key=jax.random.key(args.seed),
                harmonics=args.harmonics,
                base_frequency=args.base_frequency,
                criterion=args.criterion,
                starts=args.starts,
                steps=args.steps,
                halving=not args.no_halving,
                limits=None,  # the URDF's <limit>, read into the model
                acceleration_limit=args.acceleration_limit,
                torque_limit="effort" if args.torque_limits else None,
                margin=args.margin,
                rate=args.rate,
                grid_rate=args.grid_rate,
                progress=_cache_after_checks(args, say),
            ),
        )
    except ValueError as e:
        msg = str(e)
        for name, opt in (("harmonics", "--harmonics"), ("grid_rate", "--grid-rate"),
                          ("rate", "--rate"), ("torque_limit", "--torque-limits"),
                          ("acceleration_limit", "--acceleration-limit")):  # fmt: skip
            if msg.startswith(name + ":"):
                raise UsageError(opt + msg[len(name) :]) from None
        if msg.startswith("limits: the model has no joint limits"):
            raise InputError(
                f"{args.model}: has no joint limits (no <limit> lower/upper/velocity): the "
                "excitation must stay inside position and velocity limits; add them to the file"
            ) from None
        if msg.startswith("limits:"):
            raise InputError(f"{args.model}: {msg[len('limits:') :].strip()}") from None
        raise InputError(msg) from None


def _json_report(args, model, locked, d) -> dict:
    names = list(d.joint_names)
    per = lambda x: dict(zip(names, np.asarray(x, np.float64).tolist(), strict=True))  # noqa: E731
    return {
        "model": str(args.model),
        "options": {k: v for k, v in vars(args).items() if not k.startswith("_")},
        "joints": names,
        "locked_joints": locked,
        "limits": {k: per(v) for k, v in d.limits.items()},
        "margin": d.margin,
        "implied_acceleration_limit": per(d.implied_acceleration_limit),
        "criterion": {
            "name": d.criterion,
            "value": d.value,
            "start_value": d.start_value,
            "start_median": float(np.median(d.start_values)),
        },
        "condition_number": {"designed": d.condition_number, "start": d.start_condition_number},
        "rank": d.rank,
        "limit_distance": {k: per(v) for k, v in d.limit_distance.items()},
        "scale_down": per(d.scale_down),
        "samples": int(d.t.shape[0]),
        "coefficients": {
            "a": d.a.tolist(),
            "b": d.b.tolist(),
            "q0": d.q0.tolist(),
            "base_frequency": d.base_frequency,
        },  # fmt: skip
        "times": {"compile_s": d.compile_s, "optimise_s": d.optimise_s, "total_s": d.time_s},
    }


def _write(args, d, report) -> None:
    names = list(d.joint_names)
    header = ",".join(["t"] + [f"{p}_{j}" for p in ("q", "dq", "ddq") for j in names])
    data = np.column_stack([d.t, d.q, d.dq, d.ddq])
    tmps = []
    try:
        tmp = _util.temp_beside(args.out, "identify")
        tmps.append((tmp, Path(args.out)))
        np.savetxt(tmp, data, delimiter=",", header=header, comments="", fmt="%.17g")
        if args.report is not None:
            tmp = _util.temp_beside(args.report, "identify")
            tmps.append((tmp, Path(args.report)))
            tmp.write_text(json.dumps(jsonable(report), indent=1, allow_nan=False) + "\n",
                           encoding="utf-8")  # fmt: skip
        for tmp, path in tmps:
            _util.replace_keeping_mode(tmp, path)
    finally:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)


def run(args: argparse.Namespace) -> int:
    """Design, write, print the summary; returns the exit status (module docstring)."""
    from .._util import x64

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        _check(args)
        with x64():
            model, locked, d = _design(args, say)
            report = _json_report(args, model, locked, d)
            _write(args, d, report)
    except (UsageError, InputError) as e:
        print(f"spatialjax excite: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"spatialjax excite: error: cannot write: {e}", file=sys.stderr)
        return 2
    say(f"write: {args.out}" + (f", {args.report}" if args.report else ""))
    dist = d.limit_distance
    vel = d.limits["velocity_limit"]
    print()
    print(f"criterion {d.criterion}: {d.start_value:.4g} (start) -> {d.value:.4g}; random starts "
          f"median {np.median(d.start_values):.4g}")  # fmt: skip
    print(f"condition number (column-scaled base regressor with friction): "
          f"{d.start_condition_number:.4g} (start) -> {d.condition_number:.4g}")  # fmt: skip
    print(f"limits: URDF <limit> of {args.model}, margin {d.margin:g}; smallest distance to a "
          f"position limit {min(dist['lower'].min(), dist['upper'].min()):.4g} rad, peak speed "
          f"{np.max(1 - dist['velocity'] / vel):.3f} of the velocity limit; "
          f"{d.t.shape[0]} samples at {args.rate:g} Hz, at rest at both ends")  # fmt: skip
    print(f"time: {d.time_s:.1f} s (compile {d.compile_s:.1f} s, optimise {d.optimise_s:.1f} s)")
    return 0
