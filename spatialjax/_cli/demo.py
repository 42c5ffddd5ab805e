"""``spatialjax demo``: the whole-robot demo (``demo_robot.py``) or, with ``--payload``, the
single-payload one (``demo_payload.py``); and the progress lines both print."""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Both demos' options (``--seed`` is shared)."""
    from .demo_payload import add_arguments as payload_arguments
    from .demo_robot import add_arguments as robot_arguments

    payload_arguments(parser)
    robot_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run the chosen demo; returns its exit status."""
    if getattr(args, "payload", False):
        from .demo_payload import run as demo_run
    else:
        from .demo_robot import run as demo_run
    return int(demo_run(args) or 0)


def stage(msg: str) -> float:
    """Print ``  ... msg`` (no newline: ``done`` ends the line); returns the start time."""
    print(f"  ... {msg}", end="", flush=True)
    return time.perf_counter()


def done(t0: float, digits: int = 2) -> float:
    """End a ``stage`` line with the seconds since ``t0`` (``digits`` decimals); returns them."""
    dt = time.perf_counter() - t0
    print(f" {dt:.{digits}f} s", flush=True)
    return dt
