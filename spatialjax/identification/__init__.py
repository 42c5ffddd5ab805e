"""Inertial-parameter identification: body regressor and physically consistent fits.

* :func:`body_regressor` — ``Y (..., 6, 10)`` with ``Y @ π`` the Newton–Euler
  body wrench ``[n; f]`` (Pinocchio's ``bodyRegressor`` in ``[ω; v]`` order).
* :func:`fit` — weighted least squares plus the log-det Bregman regulariser,
  always returning ``J ≻ 0``, batched over bodies, on optax.
* :class:`FitResult` — what :func:`fit` returns.
"""

from ._fit import fit as fit
from ._regressor import body_regressor as body_regressor
from ._result import FitResult as FitResult

__all__ = ["FitResult", "body_regressor", "fit"]
