"""Solver objects of the fits (lineax style).

A fit is configured by one small frozen object per method, holding only the
options that method uses, with the optimiser as a nested object holding only
its own options:

    fit(Y, f, weights=w)                                        # Barrier() by default
    fit(Y, f, weights=w, solver=LogCholesky())
    fit(Y, f, weights=w, solver=Barrier(optimizer=Adam(learning_rate=0.05), rtol=1e-8))
    fit_torques(Y, tau, prior=J0, solver=InteriorPoint(rtol=1e-10))  # a whole robot

``Barrier`` and ``LogCholesky`` solve one body's problem (``fit``);
``InteriorPoint`` a whole robot's (``fit_torques``, ``fit_robot``). Every
solver's ``rtol=None`` stands for a default per dtype (``rtol_for``). The
objects are hashable, so the fits pass them to ``jit`` as static arguments:
equal objects share one compiled program.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import ClassVar

import numpy as np

INITS = ("prior", "least_squares")


def _check_int(owner: str, name: str, value, lo: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{owner}: {name}: expected an int ≥ {lo}, got {value!r}")


def _check_float(owner: str, name: str, value, *, positive: bool) -> None:
    ok = (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )
    if not ok or (value <= 0 if positive else value < 0):
        want = "a finite float > 0" if positive else "a finite float ≥ 0"
        raise ValueError(f"{owner}: {name}: expected {want}, got {value!r}")


def _check_rtol(owner: str, rtol) -> None:
    if rtol is not None:
        _check_float(owner, "rtol", rtol, positive=True)
        if rtol >= 1:
            raise ValueError(f"{owner}: rtol: expected a float in (0, 1), got {rtol!r}")


class _RelativeTolerance:
    """``rtol_for(dtype)``: the solver's ``rtol``, or its default for ``dtype`` where ``None``."""

    rtol: float | None
    #: default ``rtol`` in float64 and in float32 (the solver's own: its stopping test differs)
    _DEFAULT_RTOL: ClassVar[tuple[float, float]]

    def rtol_for(self, dtype) -> float:
        """The relative tolerance a fit in ``dtype`` runs with (a float)."""
        if self.rtol is not None:
            return float(self.rtol)
        f64, f32 = self._DEFAULT_RTOL
        return f64 if np.dtype(dtype) == np.float64 else f32


@dataclasses.dataclass(frozen=True)
class LBFGS:
    """L-BFGS (``optax.scale_by_lbfgs``) followed by an Armijo back-tracking line search.

    With ``restart_every=1`` (both methods' default) every restart takes one
    step from the identity in Hessian-preconditioned coordinates, a damped
    Newton step, run without optax's L-BFGS machinery (the same step, a
    smaller program); ``memory_size`` then plays no part.

    Attributes:
      memory_size: number of curvature pairs kept (unused with
        ``restart_every=1``, each restart being one step).
      max_iters: cap on optimiser iterations over all restarts and barrier stages.
    """

    memory_size: int = 10
    max_iters: int = 500

    def __post_init__(self):
        _check_int("LBFGS", "memory_size", self.memory_size, 1)
        _check_int("LBFGS", "max_iters", self.max_iters, 1)


@dataclasses.dataclass(frozen=True)
class Adam:
    """Adam (``optax.scale_by_adam``); slower than L-BFGS, kept for comparison.

    Attributes:
      learning_rate: step in the Hessian-preconditioned coordinates (unit-free).
      max_iters: cap on optimiser iterations over all restarts and barrier stages.
    """

    learning_rate: float = 0.1
    max_iters: int = 5000

    def __post_init__(self):
        _check_float("Adam", "learning_rate", self.learning_rate, positive=True)
        _check_int("Adam", "max_iters", self.max_iters, 1)


@dataclasses.dataclass(frozen=True)
class _Solver(_RelativeTolerance):
    optimizer: LBFGS | Adam = LBFGS()
    init: str = "prior"
    rtol: float | None = None
    newton_steps: int = 20
    restart_every: int | None = None

    #: ``restart_every`` when left at ``None``, with L-BFGS and with Adam. With L-BFGS,
    #: one iteration per Hessian (both methods write their Hessian out: cheap): a
    #: line-searched Newton step per iteration: fewer iterations than ten and less time
    #: (benchmarks/bench_identification.py; figures in benchmarks/README.md)
    _RESTART_DEFAULT: ClassVar[dict] = {LBFGS: 1, Adam: 10}
    _DEFAULT_RTOL: ClassVar[tuple[float, float]] = (1e-10, 1e-5)

    def __post_init__(self):
        owner = type(self).__name__
        if not isinstance(self.optimizer, (LBFGS, Adam)):
            raise ValueError(
                f"{owner}: optimizer: expected LBFGS(...) or Adam(...), got {self.optimizer!r}"
            )
        if self.restart_every is None:
            default = self._RESTART_DEFAULT[type(self.optimizer)]
            object.__setattr__(self, "restart_every", default)
        if self.init not in INITS:
            raise ValueError(f"{owner}: init: expected one of {INITS}, got {self.init!r}")
        _check_rtol(owner, self.rtol)
        _check_int(owner, "newton_steps", self.newton_steps, 0)
        _check_int(owner, "restart_every", self.restart_every, 1)


@dataclasses.dataclass(frozen=True)
class Barrier(_Solver):
    """Interior-point method directly over ``π`` (the default solver of ``fit``).

    Minimises ``F(π) − μ log det(J(π) − εI)`` for ``μ`` divided by 10 per stage;
    every update is cut to 0.99 of the distance to the boundary
    (fraction-to-boundary rule; Nocedal & Wright 2006, ch. 19), so iterates
    stay strictly feasible.

    Attributes:
      optimizer: ``LBFGS()`` (default) or ``Adam()``.
      init: ``"prior"`` (start at the prior; the projected least squares when
        no prior is given) or ``"least_squares"`` (projected least squares).
      rtol: relative tolerance on the objective; ``None``: ``1e-10`` (float64)
        or ``1e-5`` (float32).
      newton_steps: cap on the damped Newton steps in ``π`` that finish a
        ``γ > 0`` fit (0: the main iterations only).
      restart_every: optimiser iterations between Hessian re-preconditioning.
        ``None`` (default): 1 with L-BFGS, so that every iteration is a damped
        Newton step with the barrier objective's exact Hessian (its first
        L-BFGS step from the identity, line-searched), the classical
        interior-point iteration; 10 with Adam, whose re-initialised first
        step is a sign step.
      eps: ``ε ≥ 0``: the fit keeps ``J ⪰ εI`` (default 0).
    """

    eps: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        _check_float("Barrier", "eps", self.eps, positive=False)


@dataclasses.dataclass(frozen=True)
class LogCholesky(_Solver):
    """Unconstrained optimisation over the log-Cholesky vector ``θ`` (Rucker & Wensing 2022).

    Every ``θ`` is a fully consistent body, so no constraint is needed; with
    ``γ = 0`` a soft floor on the ``dᵢ`` keeps ``J`` numerically definite when
    the optimum lies on the boundary.

    Attributes:
      optimizer: ``LBFGS()`` (default) or ``Adam()``.
      init: ``"prior"`` or ``"least_squares"`` (see [`Barrier`][spatialjax.identification.Barrier]).
      rtol: relative tolerance on the objective (see
        [`Barrier`][spatialjax.identification.Barrier]).
      newton_steps: cap on the final damped Newton steps in ``π`` (0: the
        iterations in ``θ`` only).
      restart_every: optimiser iterations between Hessian re-preconditioning;
        ``None`` (default): 1 with L-BFGS (a line-searched Newton step in ``θ``
        per iteration, the Hessian written out through the entries of the
        Cholesky factor), 10 with Adam.
    """


@dataclasses.dataclass(frozen=True)
class InteriorPoint(_RelativeTolerance):
    """Primal interior-point Newton method on a whole robot's parameters (``fit_torques``).

    The solver of [fit_torques][spatialjax.identification.fit_torques] and
    [fit_robot][spatialjax.identification.fit_robot]: damped Newton steps on
    all ``10 nb + ne`` parameters at once with the exact Hessian of
    ``F − μ(Σ_i log det J_i + Σ_j log φ_j)``, a fraction-to-boundary rule
    and an Armijo line search, ``μ`` divided by 10 along the central path
    (Nocedal & Wright 2006, ch. 19; Boyd & Vandenberghe 2004, §11.3);
    ``fit_torques`` documents the stopping tests.

    Attributes:
      rtol: relative tolerance on the objective, in ``(0, 1)``; ``None``:
        ``1e-12`` (float64) or ``1e-6`` (float32).
      max_iters: cap on Newton iterations (``≥ 1``); a fit stopped by it has
        status ``NOT_CONVERGED``.
    """

    rtol: float | None = None
    max_iters: int = 300

    _DEFAULT_RTOL: ClassVar[tuple[float, float]] = (1e-12, 1e-6)

    def __post_init__(self):
        _check_rtol("InteriorPoint", self.rtol)
        _check_int("InteriorPoint", "max_iters", self.max_iters, 1)


SOLVERS = {"barrier": Barrier, "log_cholesky": LogCholesky}
