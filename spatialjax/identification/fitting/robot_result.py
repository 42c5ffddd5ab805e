"""Result types of whole-robot identification: ``RobotFitResult`` and ``Identifiability``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._consistency import ConsistencyReport
from ..._inertia import RigidBodyInertia
from ..._pytree import Pytree, pytree_dataclass
from .body_result import check_fields


@pytree_dataclass
class RobotFitResult(Pytree):
    """What ``fit_torques`` and ``fit_robot`` return, for a batch ``(...)`` of fits.

    A frozen pytree dataclass (``spatialjax._pytree``): ``res[i]`` is fit
    ``i`` of the batch, ``==`` compares values, ``jax.tree.map`` sees every
    array. ``batch_shape`` is the shape of ``objective``; the body axis
    ``nb`` of ``inertia``/``prior``/``consistency`` and the joint axis of
    ``noise_std`` are core axes.

    Attributes:
      inertia: ``RigidBodyInertia`` of batch ``(..., nb)``: the identified
        bodies, each about its body frame's origin in its axes (the
        regressor's convention;
        [`joint_torque_regressor`][spatialjax.multibody.joint_torque_regressor]). Every body has
        ``J ≻ 0`` (fully physically consistent) unless the status is an input error (then NaN).
      extra: ``(..., ne)`` identified coefficients of the extra columns
        (the joint model's for [`fit_robot`][spatialjax.identification.fit_robot], in
        [`JointModel.regressor`][spatialjax.multibody.JointModel.regressor] order).
      joint_parameters: ``(..., n1, 4)`` per one-DoF joint ``[armature, viscous, coulomb,
        offset]`` with NaN for the kinds not fitted
        ([`fit_robot`][spatialjax.identification.fit_robot]); ``None`` from
        [`fit_torques`][spatialjax.identification.fit_torques].
      objective: ``(...)`` ``F = Σ w r² + γ Σ_i D(J_i ‖ J0_i)`` at the result.
      residual: ``(...)`` its data part ``Σ w r²`` (a χ² with the default weights).
      iterations: ``(...)`` int32 Newton iterations of the interior-point loop.
      converged: ``(...)`` bool, ``status == FitStatus.CONVERGED``.
      status: ``(...)`` int32 [`FitStatus`][spatialjax.identification.FitStatus] code.
      gamma: ``(...)`` the prior weight ``γ`` used.
      prior: ``RigidBodyInertia`` ``(..., nb)``: the prior ``J0`` used.
      noise_std: ``(..., nv)`` per-joint noise standard deviation ``σ̂_j``
        estimated from the ordinary-least-squares residuals (the default
        weights are ``1/σ̂_j²``; reported also when ``weights`` were given).
      consistency: ``physical_consistency`` of ``inertia`` (batch ``(..., nb)``).
      rank: ``(...)`` int32 numerical rank of the column-scaled stacked
        (weighted) regressor ``[Y | extra]``.
      condition_number: ``(...)`` ``σ_max/σ_min`` of the column-scaled
        (weighted) *base* regressor: the ``rank`` independent columns of
        ``[Y | extra]`` chosen by QR with column pivoting, as
        ``Identifiability.condition_number``. Finite for any excited log
        (the condition number of all the columns is infinite for a robot: the
        prior decides the unexcited directions, counted by ``rank``).
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
    consistency: ConsistencyReport
    rank: jax.Array
    condition_number: jax.Array
    _core_ndims = {"extra": 1, "joint_parameters": 2, "noise_std": 1}

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The fits' batch shape ``(...)`` (that of ``objective``)."""
        return tuple(np.shape(self.objective))

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
        kinds = {
            "inertia": RigidBodyInertia,
            "prior": RigidBodyInertia,
            "consistency": ConsistencyReport,
        }
        check_fields(self, kinds, optional=("joint_parameters", "consistency"))


@pytree_dataclass
class Identifiability(Pytree):
    """What ``identifiability`` returns: which parameters the data determine.

    All arrays have a leading batch shape ``(...)``; ``p = 10 nb + ne`` is the
    number of columns of the stacked regressor ``[Y | extra]`` (body
    parameters first, in ``_params`` order per body, then the extra columns).

    Attributes:
      rank: ``(...)`` int32 numerical rank of the column-scaled, whitened,
        stacked regressor (singular values above ``rtol · σ_max``).
      condition_number: ``(...)`` ``σ_max / σ_min`` of the column-scaled
        *base* regressor: its first ``rank`` pivoted columns
        (``base_columns[:rank]``), each scaled to unit norm. Finite whenever
        ``rank > 0`` (the condition number over all ``p`` columns is infinite
        for a robot and is not reported). Gautier & Khalil 1992, Swevers et al.
        1997 minimise it to design exciting trajectories.
      singular_values: ``(..., p)`` singular values of the column-scaled
        regressor, descending.
      column_scale: ``(..., p)`` the scale applied: the 2-norm of each whitened
        column (1 where a column is zero).
      base_columns: ``(..., p)`` int32 column-pivoting order of the
        column-scaled regressor: the first ``rank`` entries are a set of
        independent (base) columns, ties within ``√eps`` broken by the lowest
        column index (so the set does not depend on round-off); the rest,
        (numerically) combinations of them, follow in increasing index order.
      null_space: ``(..., p, p)`` right singular vectors of the column-scaled
        regressor as columns, in descending singular-value order, mapped back
        to the unscaled parameters and normalised: columns ``rank:`` span the
        unidentifiable directions ``δx`` with ``[Y | extra] δx ≈ 0``.
      data_share: ``(..., p)`` in ``[0, 1]``: the fraction of each
        parameter's prior variance removed by the data, ``1 − C'_kk / P_kk`` with ``P = (γ
        H0)⁻¹`` the prior and ``C' = (2A + P'⁻¹)⁻¹`` the posterior covariance under the prior
        ``P'`` that keeps ``P_kk`` but not the prior's correlations of parameter ``k`` with the
        others (``A`` the whitened normal matrix, ``H0`` the prior's Hessian ``blockdiag
        ∇²(−log det J0_i)``): ``1`` where the data decide a parameter, ``0`` where the prior
        does. A body's *mass* gets what the data alone determine, every other parameter free:
        ``P_mm / (P_mm + v)`` with ``v`` the data's variance of ``m`` (0 when the data cannot
        tell ``m`` from other parameters: a link carried by a revolute joint, whose mass
        regroups into its parent). The extra (friction) columns have no prior (infinite
        prior variance): ``1`` when the data determine them, ``0`` otherwise (likewise every
        column when ``γ = 0``), unless they have a prior of their own
        (``extra_prior_weight``): then as the bodies'. NaN when no prior was given. See
        [identifiability][spatialjax.identification.identifiability]'s module for details.
      total_mass_share: ``(...)`` the data share of the total mass ``Σ m_i``, as
        the masses' (what the data alone determine, every other parameter
        free): ``1`` where the data decide it (a floating base's rows, a
        vertical prismatic first joint), ``0`` where they cannot (a fixed
        base's revolute joints never see the total). NaN without a prior.
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

        Column ``k`` is *confounded* when it has a component in the
        unidentifiable directions (``‖P_null e_k‖² > √eps`` in the
        column-scaled variables, ``P_null`` the projector on ``null_space[:,
        rank:]``): the data fix only a combination of it and other columns,
        and the priors decide the split. Its partners are the columns ``j``
        with ``|(P_null e_k)_j| ≥ threshold · |(P_null e_k)_k|``: those that
        move with it along the unidentifiable directions. Example: the first
        joint's armature and its link's ``Izz`` (one base parameter, Gautier
        1990's regrouping).

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
                    raise ValueError(f"columns: {c!r} is neither a column name nor an index < {p}")
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
