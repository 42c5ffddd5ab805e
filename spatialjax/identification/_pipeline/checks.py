"""Warnings about the run as a whole: the gravity assumed, and whether the held-out check means
what it seems to (``gravity_warnings``, ``holdout_warnings``).

Each returns plain-words warnings for the report (``RobotIdentification.warnings``; the
command prints them on stderr); none is raised on a log and options that are right.
"""

from __future__ import annotations

import numpy as np

#: Standard gravity, m/s².
STANDARD_GRAVITY = 9.80665
#: A gravity whose norm is off Earth's by more than this fraction is warned about (the
#: surface's 9.76–9.83 m/s² and the common rounding to 10 stay inside).
GRAVITY_TOLERANCE = 0.05


def gravity_text(gravity) -> str:
    """``(0, -9.81, 0)``: the vector as the stage line prints it."""
    return "(" + ", ".join(f"{x:.4g}" for x in np.asarray(gravity, np.float64) + 0.0) + ")"


def gravity_warnings(gravity) -> tuple[str, ...]:
    """A warning when the norm of ``gravity`` (m/s²) is more than 5 % off Earth's.

    Not an error: a robot on the Moon or in a centrifuge has another gravity;
    the usual cause is a unit (``1`` for 1 g, ``32.2`` in ft/s²), and the
    identified masses scale with ``1 / |g|``.
    """
    n = float(np.linalg.norm(np.asarray(gravity, np.float64)))
    if abs(n / STANDARD_GRAVITY - 1.0) <= GRAVITY_TOLERANCE:
        return ()
    return (
        f"gravity {gravity_text(gravity)} m/s² has norm {n:.4g}, not Earth's 9.81: the masses "
        "identified scale with 1/|g|; right for a robot on another planet or in a centrifuge, "
        "otherwise give it in m/s² (1 g = 9.81, not 1; 32.2 ft/s² = 9.81 m/s²)",
    )
