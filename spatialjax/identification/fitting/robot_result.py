"""Result types of whole-robot identification: ``RobotFitResult`` and ``Identifiability``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._consistency import ConsistencyReport, physical_consistency
from ..._inertia import RigidBodyInertia
from ..._pytree import Pytree, pytree_dataclass
from ..errors import IdentifyError
from .body_result import check_fields


@pytree_dataclass
class RobotFitResult(Pytree):
    """What ``fit_torques`` and ``fit_robot`` return, for a batch ``(...)`` of fits.

    A frozen pytree dataclass: ``res[i]`` is fit ``i`` of the batch; the body axis ``nb`` and the
    joint axis of ``noise_std`` are core axes.

    Attributes:
      inertia: ``RigidBodyInertia`` of batch ``(..., nb)``: the identified bodies, each about its
        body frame's origin in its axes, ``J ≻ 0`` unless the status is an input error (NaN).
      extra: ``(..., ne)`` identified coefficients of the extra columns (for ``fit_robot``, in
        [`JointModel.regressor`][spatialjax.multibody.JointModel.regressor] order).
      joint_parameters: ``(..., n1, 4)`` per one-DoF joint ``[armature, viscous, coulomb,
        offset]``, NaN for the kinds not fitted (``fit_robot``); ``None`` from ``fit_torques``.
      objective: ``(...)`` ``F = Σ w r² + γ Σ_i D(J_i ‖ J0_i)`` at the result.
      residual: ``(...)`` its data part ``Σ w r²``.
      iterations: ``(...)`` int32 Newton iterations.
      converged: ``(...)`` bool, ``status == FitStatus.CONVERGED``.
      status: ``(...)`` int32 [`FitStatus`][spatialjax.identification.FitStatus] code.
      gamma: ``(...)`` the prior weight ``γ`` used.
      prior: ``RigidBodyInertia`` ``(..., nb)``: the prior ``J0`` used.
      noise_std: ``(..., nv)`` per-joint noise standard deviation ``σ̂_j`` (least squares).
      rank: ``(...)`` int32 numerical rank of the column-scaled weighted ``[Y | extra]``.
      condition_number: ``(...)`` ``σ_max/σ_min`` of the column-scaled weighted *base* regressor.
    """

    inertia: RigidBodyInertia
    extra: jax.Array
    joint_parameters: jax.Array | None
    objective: jax.Array
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array
    status: jax.Array
    gamma: jax.Array
    prior: RigidBodyInertia
    noise_std: jax.Array
    rank: jax.Array
    condition_number: jax.Array
    _core_ndims = {"extra": 1, "joint_parameters": 2, "noise_std": 1}

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The fits' batch shape ``(...)`` (that of ``objective``)."""
        return tuple(np.shape(self.objective))

    @property
    def consistency(self) -> ConsistencyReport:
        """``physical_consistency`` of ``inertia`` (batch ``(..., nb)``), computed when read:
        a fit's own program does not carry the check (a third of its compile time)."""
        return physical_consistency(self.inertia)

    def __getitem__(self, idx):
        """Index the fits' batch axes (``res[i]``); core axes (bodies, joints) are kept."""
        if self.joint_parameters is not None:
            return super().__getitem__(idx)
        fields = {n: getattr(self, n) for n in self._data_fields}
        fields["joint_parameters"] = jnp.zeros(self.batch_shape + (0, 4), self.objective.dtype)
        out = Pytree.__getitem__(RobotFitResult._from_fields(**fields), idx)
        object.__setattr__(out, "joint_parameters", None)
        return out

    def __post_init__(self):
        if self._is_axis_spec():
            return
        kinds = {"inertia": RigidBodyInertia, "prior": RigidBodyInertia}
        check_fields(self, kinds, optional=("joint_parameters",))


@pytree_dataclass
class Identifiability(Pytree):
    """What ``identifiability`` returns: which parameters the data determine.

    All arrays have a leading batch shape ``(...)``; ``p = 10 nb + ne`` columns
    (body parameters first, ``_params`` order per body, then the extra columns).
    Definitions: docs page ``identification-methods.md#data-share``.

    Attributes:
      rank: ``(...)`` int32 numerical rank of the column-scaled, whitened,
        stacked regressor (singular values above ``rtol · σ_max``).
      condition_number: ``(...)`` ``σ_max / σ_min`` of the column-scaled
        *base* regressor (``base_columns[:rank]``); finite whenever ``rank > 0``.
      singular_values: ``(..., p)`` singular values of the column-scaled
        regressor, descending.
      column_scale: ``(..., p)`` the scale applied: the 2-norm of each whitened
        column (1 where a column is zero).
      base_columns: ``(..., p)`` int32 column-pivoting order: the first
        ``rank`` entries are the base columns, the rest follow in increasing
        index order.
      null_space: ``(..., p, p)`` right singular vectors as columns, descending,
        mapped back to the unscaled parameters and normalised: columns ``rank:``
        span the unidentifiable directions ``δx`` with ``[Y | extra] δx ≈ 0``.
      data_share: ``(..., p)`` in ``[0, 1]``: the fraction of each parameter's
        prior variance removed by the data, ``1`` where the data decide it,
        ``0`` where the prior does. NaN when no prior was given.
      total_mass_share: ``(...)`` the data share of the total mass ``Σ m_i``.
        NaN without a prior.
      names: static tuple of ``p`` ``(body, parameter)`` names, e.g.
        ``("panda_link3", "Ixy")`` or ``("panda_joint1", "viscous")``.
    """

    rank: jax.Array
    condition_number: jax.Array
    singular_values: jax.Array
    column_scale: jax.Array
    base_columns: jax.Array
    null_space: jax.Array
    data_share: jax.Array
    total_mass_share: jax.Array | None = None
    names: tuple = ()
    _meta_fields = ("names",)
    _core_ndims = {
        "singular_values": 1,
        "column_scale": 1,
        "base_columns": 1,
        "null_space": 2,
        "data_share": 1,
        "total_mass_share": 0,
    }

    def __post_init__(self):
        if self._is_axis_spec():
            return
        check_fields(self, {}, optional=("total_mass_share",))

    def unidentifiable(self) -> jax.Array:
        """``(..., p, p − rank)`` the unidentifiable directions (unbatched results only)."""
        if self.batch_shape:
            raise ValueError(
                "Identifiability.unidentifiable(): the rank differs per batch element; index "
                f"one result first (batch shape {self.batch_shape})"
            )
        return self.null_space[:, int(self.rank) :]

    def confounded(self, columns=None, *, threshold: float = 0.1) -> dict:
        """The columns that share a base parameter with others, and those others.

        Column ``k`` is confounded when ``‖P_null e_k‖² > √eps`` (column-scaled,
        ``P_null`` the projector on ``null_space[:, rank:]``); its partners are the
        columns ``j`` with ``|(P_null e_k)_j| ≥ threshold · |(P_null e_k)_k|``, e.g.
        the first joint's armature and its link's ``Izz``.

        Args:
          columns: names (``(joint, "armature")``) or indices of the columns
            to examine; default all.
          threshold: relative size of a partner's component.

        Returns:
          ``{name: (partner names, ...)}`` for the confounded columns among
          ``columns`` (names as in ``names``, else the indices as text).

        Raises:
          ValueError: a batched result, or a column that is neither a name nor
            an index of this result.
        """
        if self.batch_shape:
            raise ValueError(
                "Identifiability.confounded(): index one result first (batch shape "
                f"{self.batch_shape})"
            )
        d = np.asarray(self.column_scale, np.float64)
        p = d.shape[-1]
        names = self.names or tuple(str(i) for i in range(p))
        if columns is None:
            idx = list(range(p))
        else:
            idx = []
            for c in columns:
                if isinstance(c, (int, np.integer)) and 0 <= c < p:
                    idx.append(int(c))
                elif c in names:
                    idx.append(names.index(c))
                else:
                    raise IdentifyError(
                        "columns", f"{c!r} is neither a column name nor an index < {p}"
                    )
        Ns = np.asarray(self.null_space, np.float64)[:, int(self.rank) :] * d[:, None]
        Ns = Ns / np.maximum(np.linalg.norm(Ns, axis=0, keepdims=True), np.finfo(float).tiny)
        out = {}
        for k in idx:
            c = Ns @ Ns[k]  # P_null e_k, column-scaled
            if c[k] <= np.sqrt(np.finfo(np.float64).eps):
                continue
            partners = [j for j in range(p) if j != k and abs(c[j]) >= threshold * abs(c[k])]
            out[names[k]] = tuple(names[j] for j in partners)
        return out

    def prior_decided(self, threshold: float = 0.5) -> tuple:
        """Names of the parameters whose ``data_share < threshold`` (unbatched results only)."""
        if self.batch_shape:
            raise ValueError(
                "Identifiability.prior_decided(): index one result first (batch shape "
                f"{self.batch_shape})"
            )
        share = np.asarray(self.data_share)
        names = self.names or tuple(str(i) for i in range(share.shape[-1]))
        return tuple(n for n, s in zip(names, share, strict=True) if s < threshold)
