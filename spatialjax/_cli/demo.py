"""``spatialjax demo``: the whole-robot demo (``spatialjax._demo_robot``) or, with
``--payload``, the single-payload one (``spatialjax._demo``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Both demos' options (``--seed`` is shared)."""
    from .._demo import add_arguments as payload_arguments
    from .._demo_robot import add_arguments as robot_arguments

    payload_arguments(parser)
    robot_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run the chosen demo; returns its exit status."""
    if getattr(args, "payload", False):
        from .._demo import run as demo_run
    else:
        from .._demo_robot import run as demo_run
    return int(demo_run(args) or 0)
