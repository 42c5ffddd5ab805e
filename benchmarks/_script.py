"""Shared entry point of the scripts here: the harness's command line with a preset ``--ops``."""

from __future__ import annotations

import sys

from _harness import main as harness_main


def main(description: str, ops: str, argv: list[str] | None = None) -> int:
    prog = "python " + sys.argv[0] if argv is None else None
    return harness_main(
        sys.argv[1:] if argv is None else argv, prog=prog, description=description, ops=ops
    )
