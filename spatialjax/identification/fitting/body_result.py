"""The result pytree returned by ``fit``."""

from __future__ import annotations

import jax

from ..._consistency import ConsistencyReport, physical_consistency
from ..._inertia import RigidBodyInertia
from ..._pytree import Pytree, pytree_dataclass


def check_fields(obj, kinds: dict, optional: tuple = ()) -> None:
    """Constructor check: each data field is ``kinds[name]`` or an array (``None`` if optional)."""
    name_cls = type(obj).__name__
    for name in obj._data_fields:
        value = getattr(obj, name)
        if value is None and name in optional:
            continue
        want = kinds.get(name)
        if want is not None:
            ok = isinstance(value, want)
            what = f"a {want.__name__}"
        else:
            ok = hasattr(value, "shape") and hasattr(value, "dtype")
            what = "an array"
        if not ok:
            raise TypeError(f"{name_cls}.{name}: expected {what}, got {type(value).__name__}")


@pytree_dataclass
class FitResult(Pytree):
    """What ``fit`` returns; every field has the batch shape ``(...)`` of the bodies.

    A frozen pytree dataclass: ``res[i]`` is the result of body ``i``.

    Attributes:
      inertia: the fitted ``RigidBodyInertia`` (about the origin of the regressor's frame, in its
        coordinates), differentiable with respect to ``Y``, ``f``, ``weights``, ``prior`` and
        ``gamma``.
      objective: ``(...)`` final objective ``Σ w r² + γ D(J ‖ J0)``.
      residual: ``(...)`` its data-fit part ``Σ w r²``, ``r = Y π − f``.
      iterations: ``(...)`` int32 Newton iterations.
      converged: ``(...)`` bool, certified to ``rtol`` (``status == FitStatus.CONVERGED``).
      condition_number: ``(...)`` ``σ_max / σ_min`` of the whitened regressor stacked over samples
        (``inf`` where the excitation is rank-deficient).
      prior: the prior used (given, or built from least squares).
      gamma: ``(...)`` the regularisation weight used.
      status: ``(...)`` int32 [`FitStatus`][spatialjax.identification.FitStatus] code.
    """

    inertia: RigidBodyInertia
    objective: jax.Array
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array
    condition_number: jax.Array
    prior: RigidBodyInertia
    gamma: jax.Array
    status: jax.Array

    def __post_init__(self):
        if self._is_axis_spec():
            return
        check_fields(self, {"inertia": RigidBodyInertia, "prior": RigidBodyInertia})

    @property
    def consistency(self) -> ConsistencyReport:
        """``physical_consistency`` of ``inertia`` (flags and margins), computed when read:
        a fit's own program does not carry the check (a third of its compile time)."""
        return physical_consistency(self.inertia)
