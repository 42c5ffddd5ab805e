"""Inertial-parameter identification: body regressor and physically consistent fits.

* :func:`body_regressor` — ``Y (..., 6, 10)`` with ``Y @ π`` the Newton–Euler
  body wrench ``[n; f]`` (Pinocchio's ``bodyRegressor`` in ``[ω; v]`` order).
* :func:`fit` — weighted least squares plus the log-det Bregman regulariser,
  always returning ``J ≻ 0``, batched over bodies, on optax.
* :class:`Barrier`, :class:`LogCholesky` — the two solvers of :func:`fit`,
  with their optimiser :class:`LBFGS` or :class:`Adam` (lineax-style options).
* :class:`FitResult` — what :func:`fit` returns; :class:`FitStatus` — its
  per-body status codes.
"""

from ._fit import fit as fit
from ._regressor import body_regressor as body_regressor
from ._result import FitResult as FitResult
from ._solvers import LBFGS as LBFGS
from ._solvers import Adam as Adam
from ._solvers import Barrier as Barrier
from ._solvers import LogCholesky as LogCholesky
from ._status import FitStatus as FitStatus

__all__ = [
    "LBFGS",
    "Adam",
    "Barrier",
    "FitResult",
    "FitStatus",
    "LogCholesky",
    "body_regressor",
    "fit",
]
