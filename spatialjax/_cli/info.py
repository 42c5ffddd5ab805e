"""``spatialjax info [LOG] [--model MODEL]``: versions, devices and conventions, or a log.

With LOG: [describe_log][spatialjax.identification.describe_log]'s inventory, and with
``--model`` its joints against the model's. Exit status 2 for an unreadable log or model.
"""

from __future__ import annotations

import argparse
import sys

CONVENTIONS = """\
motion vector      [w; v]  angular first            (..., 6)
force vector       [n; f]  moment first             (..., 6)
quaternion         [w, x, y, z] scalar first        (..., 4)
rotation R_AB      columns are B's axes in A (B -> A coordinates)
Featherstone E     E = R_AB.T (A -> B coordinates); rotx/roty/rotz return E
Plx(E, r)          X_BA = [[E, 0], [-E skew(r), E]];  X1 @ X2 = Plx(E1 E2, E2^T r1 + r2)
Plxb(E, r)         pose of B in A (E = R_AB); Y1 @ Y2 = Plxb(E1 E2, r1 + E1 r2)
inertia 10-vector  [m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] about the frame origin
pseudo-inertia     J = [[S, h], [h^T, m]],  S = tr(I)/2 1 - I
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``info [LOG] [--model MODEL] [--topic TOPIC]``."""
    parser.add_argument(
        "log",
        metavar="LOG",
        nargs="?",
        help="a ROS bag (a folder with metadata.yaml, .mcap, .db3, .bag), .npz or .csv log: list "
        "its topics, message counts, rates and gaps, and its joints",
    )
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="with LOG: a URDF (or MJCF, SDFormat) whose movable joints the log's are matched to",
    )
    parser.add_argument(
        "--topic", metavar="TOPIC", help="with a bag: the JointState topic (default: as identify)"
    )


def _describe(args: argparse.Namespace) -> int:
    """Print the inventory of ``args.log`` (and its joints against ``--model``)."""
    from ..identification import LogError, describe_log

    try:
        inventory = describe_log(args.log, topic=args.topic)
    except (LogError, OSError, ImportError, ValueError) as e:
        print(f"spatialjax info: error: {args.log}: {e}", file=sys.stderr)
        return 2
    movable = None
    if args.model is not None:
        from .._util import x64
        from ..io import ModelFileError, read_description
        from .identify import _load_model

        try:
            with x64():
                model = _load_model(read_description(args.model), None)
        except (ModelFileError, OSError, ValueError) as e:
            print(f"spatialjax info: error: --model {args.model}: {e}", file=sys.stderr)
            return 2
        movable = [j for j, ty in zip(model.joint_names, model.joint_types, strict=True)
                   if ty != "free_flyer"]  # fmt: skip
    print("\n".join(inventory.lines(movable)))
    return 0


def run(args: argparse.Namespace) -> int:
    """Print the versions, the devices and ``CONVENTIONS``, or describe ``LOG``."""
    if args.log is not None:
        return _describe(args)
    if args.model is not None or args.topic is not None:
        print(
            "spatialjax info: error: --model and --topic describe a LOG; give one", file=sys.stderr
        )
        return 2
    import jax

    import spatialjax

    print(f"spatialjax {spatialjax.__version__}, jax {jax.__version__}")
    print(f"devices: {', '.join(str(d) for d in jax.devices())}")
    print()
    print(CONVENTIONS, end="")
    return 0
