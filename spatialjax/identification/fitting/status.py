"""``FitStatus``: why a fit did or did not converge, as a jit-safe integer code per body."""

from __future__ import annotations

import enum

import jax.numpy as jnp


class FitStatus(enum.IntEnum):
    """Status codes of [`fit`][spatialjax.identification.fit] (``FitResult.status``, int32).

    Under ``jit`` value problems are reported per body in ``status`` instead of raised (eager
    calls on concrete arrays raise a ``ValueError`` for codes 3 and 4). ``converged`` is true
    exactly where ``status == CONVERGED``; ``FitStatus.describe(code)`` explains a code.

    Members (highest priority first where several apply: 3, 4, 2, 5, 1):

    * ``CONVERGED`` (0): certified to ``rtol``; ``J(π) ≻ 0``.
    * ``NOT_CONVERGED`` (1): stopped (iteration cap, or no further decrease) before the
      certificate; the body is consistent but may be short of the optimum: raise
      ``max_iters`` or loosen ``rtol``.
    * ``UNDETERMINED`` (2): nothing determines the body: ``γ = 0`` with a rank-deficient
      excitation (the returned minimiser is arbitrary), or an excitation of rank 0 without a
      ``prior`` (``inertia`` NaN). Pass ``γ > 0`` (the default) and/or a ``prior``.
    * ``NONFINITE_INPUT`` (3): NaN or ``inf`` in this body's inputs; ``inertia`` is NaN.
    * ``INVALID_INPUT`` (4): a negative weight, ``γ < 0``, or a ``prior`` whose pseudo-inertia
      is not positive definite; ``inertia`` is NaN.
    * ``NUMERICAL_FAILURE`` (5): valid input, but the solver produced a non-finite value.
    """

    CONVERGED = 0
    NOT_CONVERGED = 1
    UNDETERMINED = 2
    NONFINITE_INPUT = 3
    INVALID_INPUT = 4
    NUMERICAL_FAILURE = 5

    @classmethod
    def describe(cls, code) -> str:
        """One line explaining a scalar status ``code`` (an int or a 0-d array)."""
        return _MESSAGES[cls(int(code))]


_MESSAGES = {
    FitStatus.CONVERGED: "converged: certified to rtol, J ≻ 0",
    FitStatus.NOT_CONVERGED: (
        "not converged: the optimiser stopped before certifying rtol (iteration cap or no "
        "further decrease); the body is consistent but may be short of the optimum"
    ),
    FitStatus.UNDETERMINED: (
        "undetermined: gamma = 0 with a rank-deficient excitation, or no excitation and no "
        "prior; the data do not pin the body down (use gamma > 0 and/or a prior)"
    ),
    FitStatus.NONFINITE_INPUT: "invalid input: NaN or inf in Y, f, weights, prior or gamma",
    FitStatus.INVALID_INPUT: (
        "invalid input: a negative weight, gamma < 0, or a prior whose pseudo-inertia is not "
        "positive definite"
    ),
    FitStatus.NUMERICAL_FAILURE: "numerical failure: the solver produced a non-finite value",
}


def status_code(*, nonfinite_input, invalid_input, undetermined, numerical_failure, not_converged):
    """``int32`` ``FitStatus`` codes from the per-fit failure flags, highest priority first."""
    return jnp.select(
        [nonfinite_input, invalid_input, undetermined, numerical_failure, not_converged],
        [
            FitStatus.NONFINITE_INPUT,
            FitStatus.INVALID_INPUT,
            FitStatus.UNDETERMINED,
            FitStatus.NUMERICAL_FAILURE,
            FitStatus.NOT_CONVERGED,
        ],
        FitStatus.CONVERGED,
    ).astype(jnp.int32)
