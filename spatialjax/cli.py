"""The ``spatialjax`` command line.

Each sub-command lives in its own module, which exposes
``add_arguments(parser)`` and ``run(args) -> int``; this file only wires them
up and imports a sub-command's module when it is used (so ``--help`` and
``info`` stay fast and never import optional packages).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "info": ("spatialjax._info", "print the version, the JAX devices and the conventions"),
    "demo": (
        "spatialjax._demo",
        "identify a composite body from noisy wrenches: least squares vs fit (the main job)",
    ),
    "bench": (
        "spatialjax.bench._cli",
        "time the batched primitives against a copy roofline, NumPy, Pinocchio and jaxlie",
    ),
    "check": (
        "spatialjax.io._check",
        "check the inertials of URDF/SDF/MJCF files for physical consistency",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spatialjax",
        description="Featherstone spatial algebra and inertial identification in JAX.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(_module=module)
        # argument definitions are cheap: import only the module's add_arguments
        importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return int(importlib.import_module(args._module).run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
