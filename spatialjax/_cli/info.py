"""``spatialjax info``: version, devices and the convention table."""

from __future__ import annotations

import argparse

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
    """``info`` takes no options."""
    del parser


def run(args: argparse.Namespace) -> int:
    """Print the versions, the devices and ``CONVENTIONS``."""
    del args
    import jax

    import spatialjax

    print(f"spatialjax {spatialjax.__version__}, jax {jax.__version__}")
    print(f"devices: {', '.join(str(d) for d in jax.devices())}")
    print()
    print(CONVENTIONS, end="")
    return 0
