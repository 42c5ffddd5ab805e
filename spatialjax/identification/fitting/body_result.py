"""The result pytree returned by ``fit``."""

from __future__ import annotations

import jax

from ..._consistency import ConsistencyReport
from ..._inertia import RigidBodyInertia
from ..._pytree import Pytree, pytree_dataclass


def check_fields(obj, kinds: dict, optional: tuple = ()) -> None:
    """Constructor check of a result pytree: each data field is an instance of
    ``kinds[name]`` where given, else an array; ``None`` allowed for ``optional`` fields."""
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

    A frozen pytree dataclass (``spatialjax._pytree``): ``res[i]`` is the
    result of body ``i``, ``==`` compares values, ``jax.tree.map`` and
    ``jax.tree_util.tree_flatten_with_path`` see ``.inertia.params``,
    ``.objective``, ..., ``.consistency.fully_consistent``. Built by
    [`fit`][spatialjax.identification.fit]; the constructor checks the
    field types.

    Attributes:
      inertia: the fitted ``RigidBodyInertia`` (about the origin of the
        regressor's frame, in its coordinates). Differentiable with respect
        to ``Y``, ``f``, ``weights``, ``prior`` and ``gamma`` (implicit
        function theorem at the optimum; see ``fit``).
      objective: ``(...)`` final objective ``Σ w r² + γ D(J ‖ J0)``.
      residual: ``(...)`` its data-fit part ``Σ w r²``, ``r = Y π − f``.
      iterations: ``(...)`` int32: Newton iterations of the interior point.
      converged: ``(...)`` bool: certified to ``rtol``: half the Newton decrement
        (the estimated suboptimality) ``≤ rtol |F| + atol`` at the last barrier weight.
      consistency: ``physical_consistency`` of ``inertia`` (flags and margins).
      condition_number: ``(...)`` ``σ_max / σ_min`` of the whitened regressor
        stacked over samples (huge or ``inf`` where the excitation is
        rank-deficient: the regulariser then decides the unexcited
        directions).
      prior: the prior actually used (the given one, or the default built
        from least squares).
      gamma: ``(...)`` the regularisation weight actually used.
      status: ``(...)`` int32 [`FitStatus`][spatialjax.identification.FitStatus] code: why a body
        did or did not converge (``converged == (status == FitStatus.CONVERGED)``).
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

    def __post_init__(self):
        if self._is_axis_spec():
            return
        kinds = {
            "inertia": RigidBodyInertia,
            "prior": RigidBodyInertia,
            "consistency": ConsistencyReport,
        }
        check_fields(self, kinds)
