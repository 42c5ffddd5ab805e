"""Inertial-parameter identification: body regressor and physically consistent fits.

* :func:`body_regressor` — ``Y (..., 6, 10)`` with ``Y @ π`` the Newton–Euler
  body wrench ``[n; f]`` (Pinocchio's ``bodyRegressor`` in ``[ω; v]`` order).
* :func:`fit` — weighted least squares plus the log-det Bregman regulariser,
  always returning ``J ≻ 0``, batched over bodies, on optax.
* :class:`Barrier`, :class:`LogCholesky` — the two solvers of :func:`fit`,
  with their optimiser :class:`LBFGS` or :class:`Adam` (lineax-style options).
* :class:`FitResult` — what :func:`fit` returns; :class:`FitStatus` — its
  per-body status codes.

Whole robots (joint torques):

* :func:`fit_robot` — every link (and joint friction) of a
  :class:`~spatialjax.multibody.Model` from a torque log, consistent, with the
  model's inertias as log-det prior; :func:`fit_torques` — the same from a
  joint-torque regressor; :class:`RobotFitResult` — what they return.
* :func:`least_squares_torques` — ordinary (minimum-norm) least squares, the
  baseline.
"""

from ._fit import fit as fit
from ._regressor import body_regressor as body_regressor
from ._result import FitResult as FitResult

# whole-robot identification (robot-fit)
from ._robot_fit import fit_robot as fit_robot
from ._robot_fit import fit_torques as fit_torques
from ._robot_fit import least_squares_torques as least_squares_torques
from ._robot_result import RobotFitResult as RobotFitResult
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
    # whole-robot identification (robot-fit)
    "RobotFitResult",
    "fit_robot",
    "fit_torques",
    "least_squares_torques",
]
