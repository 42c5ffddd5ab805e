"""Stage 7, **fit**: the physically consistent fit with the log-det prior (``fit_torques``).

The joint-model columns are kept ``≥ 0`` (armature, viscous, Coulomb) by the
fit's barrier; the armature gets
[joint_prior][spatialjax.identification.joint_prior]'s weakly informative
Gaussian prior around the model file's value (``σ_a = s · max(I_a0, M̄)``), the
friction kinds none.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from ..._checks import to_device
from .least_squares import LeastSquares, TrainingData
from .options import IdentifyError, Options
from .prior import Prior


@dataclasses.dataclass(frozen=True, eq=False)
class Fitted:
    """The fit.

    Attributes:
      params: ``(nb, 10)`` bodies (the held ones at the model's values).
      friction: ``(ne,)`` joint-model coefficients, armature and friction
        (NaN where not fitted).
      gamma: the log-det weight used.
      converged: whether the fit converged.
      iterations: its iterations.
      status: its ``FitStatus``.
      objective: the objective at the result.
      compile_s: JAX's compile time during the call, s.
      solve_s: the rest of the call, s.
      prior: the free bodies' prior as a ``RigidBodyInertia``.
      warnings: ``the fit did not converge: ...`` when it did not.
      joint_prior: the [JointPrior][spatialjax.identification.JointPrior] of
        all ``ne`` joint-model columns (the kept ones had it), or None.
    """

    params: np.ndarray
    friction: np.ndarray
    gamma: float
    converged: bool
    iterations: int
    status: Any
    objective: float
    compile_s: float
    solve_s: float
    prior: Any
    warnings: tuple[str, ...]
    joint_prior: Any = None

    @property
    def extra_prior_weight(self) -> np.ndarray | None:
        """``(ne,)`` the joint-model columns' prior weights (0: none), or None."""
        return None if self.joint_prior is None else np.asarray(self.joint_prior.weights)

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        return (
            f"{'converged' if self.converged else 'NOT converged'} in {self.iterations} "
            f"iterations, gamma {self.gamma:.3g}; compile {self.compile_s:.2f} s, solve "
            f"{self.solve_s:.3f} s"
        ), ()


def _fit_arguments(model, data: TrainingData, weights, prior: Prior, opts: Options) -> dict:
    """``fit_torques``'s keyword arguments for the training data (the joint prior apart)."""

    from ..._inertia import RigidBodyInertia

    nf = data.F.shape[-1]
    nonneg = opts.joint_model.nonnegative(model)
    kw: dict[str, Any] = {
        "prior": RigidBodyInertia(to_device(np.asarray(prior.free_prior, model.dtype))),
        "extra": to_device(data.F) if nf else None,
        "extra_nonnegative": nonneg[data.friction_kept] if nf else None,
        "weights": to_device(weights),
        "gamma": opts.gamma,
        "prior_spread": opts.prior_spread,
    }
    if data.multiplicity is not None:  # floating base: the equations each row stands for
        kw["multiplicity"] = to_device(data.multiplicity)
    return kw


def prepare_fit(model, data: TrainingData, prior: Prior, opts: Options) -> None:
    """Start compiling ``fit_stage``'s program for ``data`` in a background thread (while
    the least-squares stage runs): its shapes and options are known, the weights are not
    yet (ones stand for them; the joint prior's arrays are passed either way)."""

    from ..fitting.robot_fit import prepare_fit_torques

    weights = data.sample_weights(np.ones(data.tau.shape[-1]))
    kw = _fit_arguments(model, data, weights, prior, opts)
    prepare_fit_torques(to_device(data.Y), to_device(data.tau), **kw)


def fit_stage(model, data: TrainingData, ls: LeastSquares, prior: Prior, opts: Options) -> Fitted:
    """``fit_torques`` on the training data with the priors, the signs and the weights.

    Raises:
      IdentifyError: ``"log"``, when the fit fails (not merely unconverged).
    """
    import jax

    from ..fitting.program import compile_seconds
    from ..fitting.robot_fit import fit_torques
    from ..fitting.status import FitStatus

    jp = training_joint_prior(model, data, opts)
    kw = _fit_arguments(model, data, data.sample_weights(ls.weights), prior, opts)
    kept = data.friction_kept
    if data.F.shape[-1] and jp is not None and np.any(jp.weights[kept] > 0):
        kw["extra_prior"] = to_device(jp.values[kept])
        kw["extra_prior_weight"] = to_device(jp.weights[kept])
    J0 = kw["prior"]
    try:
        t0 = time.perf_counter()
        with compile_seconds() as compiled:
            res = jax.block_until_ready(fit_torques(to_device(data.Y), to_device(data.tau), **kw))
        t_fit = time.perf_counter() - t0
    except ValueError as e:
        raise IdentifyError("log", f"the fit failed: {e}") from None
    status = FitStatus(int(np.max(np.asarray(res.status))))
    if status not in (FitStatus.CONVERGED, FitStatus.NOT_CONVERGED):
        raise IdentifyError("log", f"the fit failed: {FitStatus.describe(status)}")
    converged = bool(np.all(np.asarray(res.converged)))
    pi = prior.model.copy()
    pi[prior.free_mask] = np.asarray(res.inertia.params, np.float64).reshape(-1, 10)
    t_compile = compiled.value
    return Fitted(
        params=pi,
        friction=data.full_friction(np.asarray(res.extra, np.float64).reshape(-1)),
        gamma=float(np.asarray(res.gamma)),
        converged=converged,
        iterations=int(np.max(np.asarray(res.iterations))),
        status=status,
        objective=float(np.asarray(res.objective)),
        compile_s=t_compile,
        solve_s=max(0.0, t_fit - t_compile),
        prior=J0,
        warnings=() if converged else (f"the fit did not converge: {FitStatus.describe(status)}",),
        joint_prior=jp,
    )


def training_joint_prior(model, data: TrainingData, opts: Options):
    """``joint_prior`` of the joint-model columns on the training positions (None: no columns).

    The spread is the links' (``prior_spread``, or ``√(2/γ)`` with ``gamma``);
    ``γ = 0`` (no prior) leaves the armature without one too.

    Raises:
      IdentifyError: ``"prior"``, a joint that moves no inertia.
    """
    import math

    from ..priors.joint_prior import JointPrior, joint_prior

    jm = opts.joint_model
    if not jm.kinds or data.q is None:
        return None
    if opts.gamma == 0:
        vals = jm.file_values(model)
        return JointPrior(vals, np.zeros_like(vals), np.full(jm.n_motors(model), np.nan), math.inf)
    spread = opts.prior_spread if opts.gamma is None else math.sqrt(2.0 / opts.gamma)
    try:
        return joint_prior(model, data.q, jm, spread=spread)
    except ValueError as e:
        raise IdentifyError("prior", str(e).removeprefix("model: ")) from None


def training_prior_pattern(model, data: TrainingData, opts: Options) -> np.ndarray | None:
    """Ones where ``training_joint_prior``'s weights are not zero (``weighted_columns``),
    zeros elsewhere; None where it gives no prior. What selects identifiability's
    program, known without computing the prior (which evaluates the mass diagonal on the log)."""
    from ..priors.joint_prior import weighted_columns

    jm = opts.joint_model
    if not jm.kinds or data.q is None:
        return None
    if opts.gamma == 0:
        return np.zeros(jm.n_columns(model))
    return weighted_columns(model, jm).astype(float)
