"""The harness's command line (``benchmarks/bench_*.py``; ``spatialjax bench`` in a checkout).

Runs on ``jax.devices()[0]`` (a GPU when JAX sees one; the NumPy and
Pinocchio baselines always run on the host). Prints the device, a table per
benchmark and the performance targets; with ``--out DIR`` also writes
``DIR/NAME.json`` and ``DIR/NAME.png`` (``NAME`` defaults to the platform,
e.g. ``cpu`` or ``gpu``).

Examples::

    spatialjax bench --quick                      # smoke run, seconds
    spatialjax bench --out benchmarks/results     # default sweep: 1 .. 1e6 items
    spatialjax bench --max-size 1e7 --dtype float32 --ops plx_compose,fk_chain
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

FK = "fk_chain"
BASELINES = ("numpy", "pin", "jaxlie")
DEFAULTS = {
    "fk_lengths": [1, 16, 256, 4096],
    "fk_batches": [1],
    "pin_items": 2000,
    "min_time": 0.1,
    "max_repeats": 200,
}
QUICK = {
    "sizes": [1, 100, 10_000],
    "fk_lengths": [1, 16, 256],
    "fk_batches": [1],
    "pin_items": 200,
    "min_time": 0.02,
    "max_repeats": 20,
}


def _int_list(text: str) -> list[int]:
    try:
        values = [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _size(text: str) -> int:
    return _int_list(text)[0]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .ops import OPS

    names = ", ".join([*OPS, FK])
    parser.add_argument(
        "--ops", default="all", help=f"comma-separated benchmarks (default all): {names}"
    )
    parser.add_argument(
        "--dtype",
        default="both",
        choices=("float32", "float64", "both"),
        help="dtype(s) to run (default both; float64 turns on jax_enable_x64)",
    )
    parser.add_argument(
        "--sizes", type=_int_list, help="explicit batch sizes, e.g. 1,1000,1e6 (overrides range)"
    )
    parser.add_argument("--min-size", type=_size, default=1, help="smallest batch (default 1)")
    parser.add_argument(
        "--max-size",
        type=_size,
        default=10**6,
        help="largest batch, powers of ten up to it (default 1e6; 1e7 if memory permits)",
    )
    parser.add_argument(
        "--fk-lengths",
        type=_int_list,
        help="forward-kinematics chain lengths (default 1,16,256,4096; --quick: 1,16,256)",
    )
    parser.add_argument(
        "--fk-batch",
        type=_int_list,
        help="number of independent chains evaluated together (default 1; e.g. 1,1024)",
    )
    parser.add_argument(
        "--baselines",
        default=",".join(BASELINES),
        help="comma-separated baselines among numpy,pin,jaxlie; 'none' for none",
    )
    parser.add_argument(
        "--pin-items",
        type=_size,
        help="Pinocchio loop subsample; larger batches are extrapolated linearly "
        "(default 2000; --quick: 200)",
    )
    parser.add_argument(
        "--numpy-max-size", type=_size, default=10**7, help="largest batch for NumPy"
    )
    parser.add_argument(
        "--min-time",
        type=float,
        help="seconds spent per timed function and size (repeats = min-time / call, 5..200; "
        "default 0.1, --quick: 0.02)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: sizes 1,100,1e4, short chains, few repeats (explicit options win)",
    )
    parser.add_argument("--out", type=Path, help="directory for NAME.json and NAME.png")
    parser.add_argument("--name", help="file stem for --out (default: the device platform)")
    parser.add_argument(
        "--no-plot",
        action="store_true",
        help="with --out, skip the PNG (skipped with a note when matplotlib is not installed)",
    )
    parser.add_argument(
        "--no-keep-buffers",
        action="store_true",
        help="CPU: leave glibc's malloc thresholds alone (outputs then page-fault on every call)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def _settings(args):
    from .ops import OPS
    from .suite import Settings

    known = [*OPS, FK]
    wanted = known if args.ops == "all" else [s.strip() for s in args.ops.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise SystemExit(f"spatialjax bench: unknown --ops {unknown}; choose from {known}")
    baselines = set() if args.baselines == "none" else set(args.baselines.split(","))
    if baselines - set(BASELINES):
        raise SystemExit(f"spatialjax bench: unknown --baselines {sorted(baselines)}")
    if args.sizes:
        sizes = sorted(set(args.sizes))
    else:
        sizes, s = [], 1
        while s <= args.max_size:
            if s >= args.min_size:
                sizes.append(s)
            s *= 10
    quick = args.quick
    preset = QUICK if quick else DEFAULTS

    def pick(value, key):
        return preset[key] if value is None else value

    return Settings(
        sizes=preset["sizes"] if quick and not args.sizes else sizes,
        dtypes=["float32", "float64"] if args.dtype == "both" else [args.dtype],
        ops=[w for w in wanted if w != FK],
        fk_lengths=pick(args.fk_lengths, "fk_lengths"),
        fk_batches=pick(args.fk_batch, "fk_batches"),
        baselines=baselines,
        pin_items=pick(args.pin_items, "pin_items"),
        numpy_max_size=args.numpy_max_size,
        min_time=pick(args.min_time, "min_time"),
        max_repeats=preset["max_repeats"],
        seed=args.seed,
    ), FK in wanted


def _drop_missing(settings) -> None:
    """Remove operations and baselines that cannot run here, saying why."""
    from .ops import available_ops

    for name, why in available_ops().items():
        if name in settings.ops:
            settings.ops.remove(name)
            print(f"note: skipping {name} ({why})")
    for lib, module in (("pin", "pinocchio"), ("jaxlie", "jaxlie")):
        if lib in settings.baselines:
            try:
                __import__(module)
            except ImportError:
                settings.baselines.discard(lib)
                print(f"note: baseline {lib} skipped ({module} is not installed)")


def _versions() -> dict:
    import jax
    import numpy as np

    import spatialjax

    out = {"spatialjax": spatialjax.__version__, "jax": jax.__version__, "numpy": np.__version__}
    for key, module in (("pin", "pinocchio"), ("jaxlie", "jaxlie")):
        try:
            mod = __import__(module)
            out[key] = getattr(mod, "__version__", "?")
        except ImportError:
            out[key] = None
    return out


def run(args) -> int:
    settings, with_fk = _settings(args)
    import jax

    if "float64" in settings.dtypes:
        jax.config.update("jax_enable_x64", True)
    from . import core, report, suite

    # before the backend starts its threads: glibc's arena limit binds threads not yet
    # attached to an arena (host memory only; harmless with an accelerator)
    kept = not args.no_keep_buffers and core.keep_host_buffers()
    device = core.bench_device()
    _drop_missing(settings)
    meta = {
        **_versions(),
        "device": core.describe_device(device),
        "platform": device.platform,
        "device_count": jax.device_count(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "keep_host_buffers": kept,
        "settings": {
            k: (sorted(v) if isinstance(v, set) else v)
            for k, v in vars(settings).items()
            if k != "log"
        },
        "pin_note": "Pinocchio runs in float64; times past pin_items are extrapolated linearly",
    }
    print(
        f"spatialjax bench on {meta['device']} (jax {meta['jax']}, {jax.device_count()} device(s))"
    )
    if kept:
        print("host buffers: glibc malloc keeps freed buffers (see --no-keep-buffers)")
    t0 = time.perf_counter()
    ops = suite.run_ops(settings, device) if settings.ops else []
    fk = suite.run_fk(settings, device) if with_fk else []
    targets = report.evaluate_targets(device.platform, ops, fk)
    print(f"\ndevice: {meta['device']}   total {time.perf_counter() - t0:.0f} s")
    if ops:
        print("\n" + report.op_table(ops))
    if fk:
        print("\nforward kinematics (all link poses of a chain; Plxb pose composition)")
        print(report.fk_table(fk))
    print("\ntargets (reported, not asserted)")
    print(report.targets_table(targets))
    data = {"meta": meta, "ops": ops, "fk": fk, "targets": targets}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.name or device.platform
        json_path = args.out / f"{stem}.json"
        json_path.write_text(json.dumps(data, indent=1, default=_json_default) + "\n")
        print(f"\nwrote {json_path}")
        if not args.no_plot:
            png = _plot_or_note(data, args.out / f"{stem}.png")
            if png is not None:
                print(f"wrote {png}")
    return 0


def _plot_or_note(data: dict, path: Path) -> Path | None:
    """Write the PNG, or say why not (matplotlib missing) and return ``None``."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(
            f"note: {path.name} not written: matplotlib is not installed "
            "(pip install matplotlib, or pip install 'spatialjax[bench]'); "
            "the JSON holds every number; --no-plot silences this note"
        )
        return None
    from .plot import plot

    return plot(data, path)


def build_parser(
    prog: str | None = None, description: str | None = None, ops: str | None = None
) -> argparse.ArgumentParser:
    """The harness's argument parser; ``ops`` presets ``--ops`` (the scripts' selection)."""
    parser = argparse.ArgumentParser(prog=prog, description=description or __doc__.split("\n")[0])
    add_arguments(parser)
    if ops is not None:
        parser.set_defaults(ops=ops)
    return parser


def main(
    argv: list[str] | None = None,
    *,
    prog: str | None = None,
    description: str | None = None,
    ops: str | None = None,
) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run; returns the exit status."""
    args = build_parser(prog, description, ops).parse_args(argv)
    return run(args)


def _json_default(x):
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
