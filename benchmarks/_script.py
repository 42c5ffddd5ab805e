"""Shared entry point of the scripts in this folder: ``spatialjax bench`` with preset ``--ops``."""

from __future__ import annotations

import argparse
import sys


def main(description: str, ops: str, argv: list[str] | None = None) -> int:
    from spatialjax.bench import add_arguments, run

    parser = argparse.ArgumentParser(description=description)
    add_arguments(parser)
    parser.set_defaults(ops=ops)
    return run(parser.parse_args(sys.argv[1:] if argv is None else argv))
