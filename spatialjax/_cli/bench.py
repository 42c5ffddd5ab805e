"""``spatialjax bench``: run the benchmark harness of a source checkout.

Forwards every argument to ``benchmarks/_harness`` next to the package, or says how
to get it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HOW_TO = """\
spatialjax bench: the benchmarks are not part of the installed package.
They live in the source repository's benchmarks/ folder; from a checkout:

    pip install -e '.[bench]'
    spatialjax bench --quick          # or: python benchmarks/bench_primitives.py --quick
"""


def harness_dir() -> Path | None:
    """``benchmarks/`` of the source checkout this package is imported from, or ``None``."""
    root = Path(__file__).resolve().parents[2]
    folder = root / "benchmarks"
    return folder if (folder / "_harness" / "__init__.py").is_file() else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Nothing: the arguments are the harness's own (``spatialjax bench --help``)."""
    del parser


def run(args: argparse.Namespace) -> int:  # pragma: no cover - main() is the entry
    del args
    return main([])


def main(argv: list[str]) -> int:
    """Forward ``argv`` to the harness; exit status 2 with instructions when there is none."""
    folder = harness_dir()
    if folder is None:
        print(HOW_TO, end="", file=sys.stderr)
        return 2
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    harness = importlib.import_module("_harness")
    return int(harness.main(argv, prog="spatialjax bench") or 0)
