"""The result pytree returned by ``fit``."""

from __future__ import annotations

import dataclasses

import jax

from .._consistency import ConsistencyReport
from .._inertia import RigidBodyInertia


@dataclasses.dataclass(frozen=True)
class FitResult:
    """What ``fit`` returns; every field has the batch shape ``(...)`` of the bodies.

    Attributes:
      inertia: the fitted ``RigidBodyInertia`` (about the origin of the
        regressor's frame, in its coordinates). Differentiable with respect
        to ``Y``, ``f``, ``weights``, ``prior`` and ``gamma`` (implicit
        function theorem at the optimum; see ``fit``).
      objective: ``(...)`` final objective ``Σ w r² + γ D(J ‖ J0)``.
      residual: ``(...)`` its data-fit part ``Σ w r²``, ``r = Y π − f``.
      iterations: ``(...)`` int32: optax iterations plus Newton steps.
      converged: ``(...)`` bool: certified to ``rtol`` — by half the Newton
        decrement where Newton steps ran (``γ > 0``), else by the optax
        phase's test (a restart's first step changed the objective by
        ``≤ rtol`` relative, at the last barrier stage).
      consistency: ``physical_consistency`` of ``inertia`` (flags and margins).
      condition_number: ``(...)`` ``σ_max / σ_min`` of the whitened regressor
        stacked over samples (huge or ``inf`` where the excitation is
        rank-deficient: the regulariser then decides the unexcited
        directions).
      prior: the prior actually used (the given one, or the default built
        from least squares).
      gamma: ``(...)`` the regularisation weight actually used.
      status: ``(...)`` int32 :class:`FitStatus` code: why a body did or did
        not converge (``converged == (status == FitStatus.CONVERGED)``).
    """

    inertia: RigidBodyInertia
    objective: jax.Array
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array
    consistency: ConsistencyReport
    condition_number: jax.Array
    prior: RigidBodyInertia
    gamma: jax.Array
    status: jax.Array


jax.tree_util.register_dataclass(
    FitResult,
    data_fields=[f.name for f in dataclasses.fields(FitResult)],
    meta_fields=[],
)
