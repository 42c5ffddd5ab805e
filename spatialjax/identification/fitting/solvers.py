"""``InteriorPoint``: the solver object of the inertial fits (lineax style).

A frozen, hashable object of options (``rtol``, ``max_iters``); the fits pass its values to
``jit`` as static arguments, so equal objects share one compiled program.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import ClassVar

import numpy as np


def _check_int(owner: str, name: str, value, lo: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{owner}: {name}: expected an int ≥ {lo}, got {value!r}")


def _check_rtol(owner: str, rtol) -> None:
    if rtol is None:
        return
    ok = isinstance(rtol, numbers.Real) and not isinstance(rtol, bool)
    if not ok or not (math.isfinite(float(rtol)) and 0.0 < float(rtol) < 1.0):
        raise ValueError(f"{owner}: rtol: expected a float in (0, 1), got {rtol!r}")


@dataclasses.dataclass(frozen=True)
class InteriorPoint:
    """Primal interior-point Newton method, the solver of every inertial fit.

    The solver of [fit][spatialjax.identification.fit],
    [fit_torques][spatialjax.identification.fit_torques] and
    [fit_robot][spatialjax.identification.fit_robot]: damped Newton steps with the exact Hessian
    on ``F − μ(Σ_i log det J_i + Σ_j log φ_j)``, ``μ`` divided by 10 along the central path
    (Nocedal & Wright 2006, ch. 19). Stopping tests: docs page
    ``identification-methods.md#fit-torques-defaults``.

    Attributes:
      rtol: relative tolerance on the objective, in ``(0, 1)``; ``None``: ``1e-12`` (float64)
        or ``1e-6`` (float32).
      max_iters: cap on Newton iterations (``≥ 1``); a fit stopped by it has status
        ``NOT_CONVERGED``.

    Raises:
      ValueError: ``rtol`` outside ``(0, 1)`` or ``max_iters`` not an int ``≥ 1``.

    Examples:
      >>> from spatialjax.identification import InteriorPoint
      >>> InteriorPoint(rtol=1e-8).rtol_for("float64"), InteriorPoint().rtol_for("float32")
      (1e-08, 1e-06)
    """

    rtol: float | None = None
    max_iters: int = 300

    #: default ``rtol`` in float64 and in float32
    _DEFAULT_RTOL: ClassVar[tuple[float, float]] = (1e-12, 1e-6)

    def __post_init__(self):
        _check_rtol("InteriorPoint", self.rtol)
        _check_int("InteriorPoint", "max_iters", self.max_iters, 1)

    def rtol_for(self, dtype) -> float:
        """The relative tolerance a fit in ``dtype`` runs with (a float)."""
        if self.rtol is not None:
            return float(self.rtol)
        f64, f32 = self._DEFAULT_RTOL
        return f64 if np.dtype(dtype) == np.float64 else f32


def as_solver(solver) -> InteriorPoint:
    """``solver``, or ``InteriorPoint()`` for ``None``; ``IdentifyTypeError`` naming ``solver``
    for anything else (the one check of ``fit``, ``fit_torques`` and ``fit_robot``)."""
    from ..errors import IdentifyTypeError

    if solver is None:
        return InteriorPoint()
    if not isinstance(solver, InteriorPoint):
        raise IdentifyTypeError(
            "solver",
            "expected InteriorPoint(...) (spatialjax.identification) or None, got "
            f"{type(solver).__name__}",
        )
    return solver
