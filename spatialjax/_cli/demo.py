"""``spatialjax demo``: the options and the run live in :mod:`spatialjax._demo`."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options (defined by :mod:`spatialjax._demo`)."""
    from .._demo import add_arguments as demo_arguments

    demo_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run the demo; returns its exit status."""
    from .._demo import run as demo_run

    return int(demo_run(args) or 0)
