"""The ``spatialjax`` command line: ``check``, ``demo``, ``excite``, ``identify``, ``info``.

Each sub-command module exposes ``add_arguments(parser)`` and ``run(args) -> int`` and is
imported only when used. Exit status: 0 success, 1 problems found (``check``), 2 usage
errors and unreadable inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from .._util import collector_paused

__all__ = ["SUBCOMMANDS", "build_parser", "command", "main"]

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "info": (
        "spatialjax._cli.info",
        "print the version, the JAX devices and the conventions; with LOG, what a log holds "
        "(a ROS bag's topics, counts, rates and gaps; its joints against --model's)",
    ),
    "demo": (
        "spatialjax._cli.demo",
        "identify a Panda's links and joint friction from a simulated torque log: URDF prior "
        "vs least squares vs consistent fit (--payload: a wrist payload from wrench readings)",
    ),
    "check": (
        "spatialjax._cli.check",
        "check the inertials of URDF/SDF/MJCF files for physical consistency",
    ),
    "identify": (
        "spatialjax._cli.identify",
        "identify a robot's link inertias and joint friction from a joint torque log",
    ),
    "excite": (
        "spatialjax._cli.excite",
        "design an exciting trajectory for identification inside the joint limits (CSV)",
    ),
    "bench": (
        "spatialjax._cli.bench",
        "source checkout only: run benchmarks/ (copy roofline, NumPy, Pinocchio, jaxlie)",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per entry of ``SUBCOMMANDS``."""
    parser = argparse.ArgumentParser(
        prog="spatialjax",
        description="Featherstone spatial algebra and inertial identification in JAX.",
        epilog="'spatialjax COMMAND --help' describes each command; "
        "'python -m spatialjax' is the same command line",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in SUBCOMMANDS.items():
        # bench forwards its arguments to the harness's own parser (see main)
        p = sub.add_parser(name, help=help_, description=help_, add_help=name != "bench")
        p.set_defaults(_module=module)
        if name != "bench":
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    A sub-command module may name, in ``preload(args)``, modules its run will import: they
    load with the others, before the run.

    The modules load with the garbage collector paused (``_util.collector_paused``);
    ``own_process``: the command is the process (the ``spatialjax`` script, ``python -m
    spatialjax``), so what they made is then kept out of the collections that follow; a
    process that goes on to other work (a test calling ``main``) keeps its collector as it
    was.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "bench":
        from . import bench

        return bench.main(argv[1:])
    with collector_paused(freeze=own_process):
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        module = importlib.import_module(args._module)
        for name in module.preload(args) if hasattr(module, "preload") else ():
            importlib.import_module(name)
    with one_blas_thread():
        return int(module.run(args) or 0)


@contextlib.contextmanager
def one_blas_thread():
    """NumPy's and SciPy's BLAS on one thread inside the block (``threadpoolctl``), restored
    after.

    The commands' NumPy and SciPy linear algebra works on small blocks (the zero-phase
    filter's chunks of blocks, a few thousand regressor rows), which a second BLAS thread
    does not speed up, while its threads, spinning between calls, hold the core that XLA's
    programs and the compile threads need (``benchmarks/README.md``, "identify in a fresh
    process").
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        yield


def command() -> int:
    """The ``spatialjax`` script: ``main`` on ``sys.argv``, the command owning the process."""
    return main(own_process=True)
