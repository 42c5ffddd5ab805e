r"""``identifiability``: which inertial parameters a torque log determines, which the prior does.

For the stacked joint-torque regressor ``X = [Y | E]`` (``N·nv`` rows, ``p =
10 nb + ne`` columns) with weights ``W``, the normal matrix ``A = XᵀWX`` is
column-scaled, ``A_s = D⁻¹ A D⁻¹`` with ``D = diag(√A_ii)`` (every column of
``√W X`` scaled to unit 2-norm, so that kilograms and kg·m² compare; a
column below ``√eps`` times the largest, zero up to rounding because its
parameter never enters the dynamics, is dropped instead of blown up), and
eigen-decomposed: ``A_s = V Λ Vᵀ``. ``√Λ`` are the singular values of the
column-scaled regressor; those above ``√rtol`` times the largest count
towards the rank. Base columns come from column pivoting (the pivot rule
of QR with column pivoting, run as a pivoted Cholesky factorisation of
``A_s``: the pivot order depends only on the Gram matrix) with a tie rule
that makes them reproducible: a column whose residual norm² is within
``√eps`` of the largest (the columns have unit norm, so this is relative)
is tied with it, and the lowest column index among the tied is taken.
Without it the base columns, and the condition number below, would depend
on round-off (at the first step every scaled column has norm 1). The reported
condition number is that of the column-scaled *base* regressor, the first
``rank`` pivoted columns (``σ_max / σ_min`` of ``√W X_b D_b⁻¹``): finite,
and the figure used to judge and design exciting trajectories (Gautier &
Khalil 1992; Swevers et al. 1997). The condition number of all ``p``
columns is infinite for every robot (some parameters never enter the
torques) and is not reported; ``rank < p`` says the same.

With a prior (``J0_i``, weight ``γ``) the fit's objective ``Σ w r² + γ Σ_i
D(J_i ‖ J0_i)`` (Lee, Wensing & Park 2020) is, to second order at the
prior, the negative log-posterior (times 2) of a Gaussian model with data
precision ``2A`` and prior precision ``γ H_0``,

$$
H_0 = \mathrm{blockdiag}_i\ ∇^2_π(−\log\det J)\big|_{J_{0,i}},\qquad
    P = (γ H_0)^{-1},\qquad C = (2A + γ H_0)^{-1} \preceq P,
$$

so ``P`` is the prior and ``C`` the posterior covariance. The *data share*
of parameter ``k`` is the fraction of its prior variance that the data
remove (Bayesian variance reduction of the linear-Gaussian problem; A.
Tarantola, *Inverse Problem Theory*, SIAM 2005, ch. 3, for ``P`` and ``C``),

$$
s_k = 1 − C_{kk} / P_{kk} \in [0, 1],
$$

``1`` where the data decide the parameter, ``0`` where the prior does; it
does not depend on the column scaling. It is computed as a weighted mean of
``g_j/(1+g_j) ∈ [0, 1)`` (``g_j`` the eigenvalues of ``L⁻¹ 2A L⁻ᵀ`` with
``LLᵀ = γH_0``), so it stays in ``[0, 1]`` up to round-off (clipped). A
parameter that the prior correlates with one the data decide gains a share too
(the prior ties a body's mass, first and second moments together). The
extra (friction) columns have no prior term (``H_0`` is zero there:
infinite prior variance), and the body parameters are taken after
marginalising them (``A`` replaced by its Schur complement on the body
columns); their share is ``1`` when the data determine them (finite
posterior variance: ``e_k`` orthogonal, to ``√eps``, to the null space of
the column-scaled friction columns at the rank threshold) and ``0``
otherwise, the limit of ``1 − C_kk / P_kk`` for a prior variance going to
infinity. With ``γ = 0`` every parameter is in that case: share ``1`` for
those orthogonal to the regressor's null space, ``0`` for the others.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, is_concrete, same_dtype
from .._inertia import RigidBodyInertia
from ._program import cpu_program
from ._robot_fit import (
    _E,
    COMPILER_OPTIONS,
    FRICTION_KINDS,
    PRIOR_SPREAD,
    _as_friction_model,
    _base_condition,
    _check_prior,
    _factor,
    _gram,
    _prepare,
    _rank_rtol,
)
from ._robot_result import Identifiability

#: Names of the ten entries of a body's parameter vector (``_params`` order).
PARAMETER_NAMES = ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def parameter_names(model, friction=FRICTION_KINDS) -> tuple:
    """``(body, parameter)`` names of the columns of ``[Y | friction]`` built by ``fit_robot``.

    Args:
      model: [`Model`][spatialjax.multibody.Model].
      friction: the friction fitted: a [`FrictionModel`][spatialjax.multibody.FrictionModel]
        or a subset of ``("viscous", "coulomb", "offset")``.

    Returns:
      ``10 nb + ne`` pairs such as ``("panda_link3", "Ixy")`` or
      ``("panda_joint2", "coulomb")``.
    """
    fm = _as_friction_model(friction)
    names = [(b, n) for b in model.body_names for n in PARAMETER_NAMES]
    return tuple(names) + fm.names(model)


def _prior_hessian(pi0):
    """``(nb, 10, 10)`` ``∇²_π(−log det J)`` at each prior body."""
    J0 = jnp.einsum("ni,iab->nab", pi0, jnp.asarray(_E, pi0.dtype))
    K = jnp.linalg.inv(J0)
    K = 0.5 * (K + jnp.swapaxes(K, -1, -2))
    M = jnp.einsum("nab,ibc->niac", K, jnp.asarray(_E, pi0.dtype))
    return jnp.einsum("niac,njca->nij", M, M)


def _data_share(Rs, Hs, gamma, p_y, rtol, V, keep_all, sv_max):
    """Fraction of each parameter's prior variance removed by the data (module docstring).

    ``Rs (p, p)`` with ``RsᵀRs = A_s`` (column-scaled normal matrix), ``Hs (p_y, p_y)``
    the column-scaled prior Hessian of the body parameters (positive definite).
    """
    dtype = Rs.dtype
    p = Rs.shape[-1]
    tiny = jnp.finfo(dtype).tiny
    # friction columns: determined iff e_k ⊥ null(R_e) (the prior does not constrain them)
    Rb, Re = Rs[:, :p_y], Rs[:, p_y:]
    if p > p_y:
        U, s, Vh = jnp.linalg.svd(Re, full_matrices=False)
        keep = s > jnp.sqrt(rtol) * sv_max  # the rank's threshold
        Q = U * keep[None, :]
        Rb = Rb - Q @ (Q.T @ Rb)  # data on the bodies once friction is fitted (Schur complement)
        null_e = jnp.sum(jnp.where(keep[:, None], 0.0, Vh * Vh), axis=0)  # ‖P_null e_k‖²
        share_e = jnp.where(null_e <= jnp.sqrt(jnp.finfo(dtype).eps), 1.0, 0.0).astype(dtype)
    else:
        share_e = jnp.zeros((0,), dtype)
    # bodies: P = (γH)⁻¹, C = (γH + 2 RbᵀRb)⁻¹; with γH = LLᵀ and G = L⁻¹ 2RbᵀRb L⁻ᵀ = U g Uᵀ,
    # P − C = B diag(g/(1+g)) Bᵀ and P = B Bᵀ for B = L⁻ᵀU: a weighted mean of g/(1+g) ∈ [0, 1)
    g_safe = jnp.where(gamma > 0, gamma, 1.0)
    L = jnp.linalg.cholesky(0.5 * (Hs + Hs.T) * g_safe)
    W = jax.scipy.linalg.solve_triangular(L, 2.0**0.5 * Rb.T, lower=True)  # L⁻¹ √2 Rbᵀ
    g, U = jnp.linalg.eigh(W @ W.T)
    g = jnp.maximum(g, 0.0)
    B = jax.scipy.linalg.solve_triangular(L.T, U, lower=False)
    B2 = B * B
    share_b = (B2 @ (g / (1.0 + g))) / jnp.maximum(jnp.sum(B2, axis=-1), tiny)
    share_b = jnp.clip(share_b, 0.0, 1.0)  # round-off only: a weighted mean of values in [0, 1)
    share = jnp.concatenate([share_b, share_e])
    # γ = 0: every prior variance is infinite; a parameter is determined iff e_k ⊥ null(A_s)
    null_all = jnp.sum(jnp.where(keep_all[None, :], 0.0, V * V), axis=-1)
    share_flat = jnp.where(null_all <= jnp.sqrt(jnp.finfo(dtype).eps), 1.0, 0.0).astype(dtype)
    return jnp.where(gamma > 0, share, share_flat)


def _ident_one(Y, E, w, pi0, gamma, has_prior, *, rtol):
    dtype = Y.dtype
    p_y = Y.shape[-1]
    nb = p_y // 10
    A, _ = _gram(Y, E, jnp.zeros(Y.shape[:-1], dtype), w)
    F = _factor(A, rtol)
    Rs = F.sv[:, None] * F.V.T  # R_sᵀ R_s = A_s (column-scaled)
    cond, piv = _base_condition(F)
    null = F.V / F.d[:, None]
    null = null / jnp.linalg.norm(null, axis=0, keepdims=True)
    # variance reduction, in the column-scaled variables (the ratio C_kk / P_kk is scale-free)
    H0 = _prior_hessian(pi0)
    blk = jnp.einsum("nij,nm->nimj", H0, jnp.eye(nb, dtype=dtype)).reshape(p_y, p_y)
    dy = F.d[:p_y]
    Hs = blk / dy[:, None] / dy[None, :]
    share = _data_share(Rs, Hs, gamma, p_y, rtol, F.V, F.keep, F.sv[0])
    share = jnp.where(has_prior, share, jnp.nan)
    return F.rank, cond, F.sv, F.d, piv.astype(jnp.int32), null, share


def _ident_impl(Y, E, w, pi0, gamma, *, rtol, has_prior):
    return _ident_one(Y, E, w, pi0, gamma, has_prior, rtol=rtol)


_ident = cpu_program(
    _ident_impl, static_argnames=("rtol", "has_prior"), compiler_options=COMPILER_OPTIONS
)


def identifiability(
    Y,
    *,
    extra=None,
    weights=None,
    prior: RigidBodyInertia | None = None,
    gamma=None,
    names: tuple | None = None,
    rtol: float | None = None,
) -> Identifiability:
    r"""Rank, conditioning, base columns, unidentifiable directions and data shares of a log.

    See the module docstring for the definitions (column scaling to unit
    norm, pivoted QR, condition number of the base regressor, data share =
    fraction of prior variance removed). Unbatched: one stacked regressor
    (call it per robot).

    Args:
      Y: ``(N, nv, 10 nb)`` joint-torque regressor.
      extra: optional ``(N, nv, ne)`` extra columns (friction).
      weights: optional weights broadcastable to ``(N, nv)``, inverse noise
        variances: pass ``1 / res.noise_std**2`` of a
          [`RobotFitResult`][spatialjax.identification.RobotFitResult]
        to analyse the fit's own weighting. Default 1 (the rank and base
        columns do not depend on positive weights; the data shares do).
      prior: ``RigidBodyInertia`` ``(nb,)`` (each ``J0 ≻ 0``); needed for
        ``data_share`` (NaN without it).
      gamma: prior weight ``γ`` (default ``2 / 0.5² = 8``, the
        [`fit_torques`][spatialjax.identification.fit_torques] rule; meaningful with weights
        ``1/σ²``).
      names: optional ``p`` names of the columns
        ([`parameter_names`][spatialjax.identification.parameter_names]).
      rtol: eigenvalue threshold of the rank, relative to the largest
        eigenvalue of the column-scaled normal matrix (singular values
        relative to ``√rtol``). Default ``10 p eps`` (float64: singular
        values below ``5e-7 σ_max`` for ``p = 91``).

    Returns:
      [`Identifiability`][spatialjax.identification.Identifiability].

    Raises:
      ValueError: bad shapes (named), a batched ``Y``, ``names`` of the wrong
        length, a prior body that is not fully consistent.

    References:
      W. Khalil, E. Dombre, *Modeling, Identification and Control of Robots*,
      2002, §12.4 (base parameters by QR with column pivoting).
      M. Gautier, W. Khalil, "Exciting trajectories for the identification
      of base inertial parameters of robots", IEEE CDC 1991 / IJRR 11(4),
      1992 (condition number of the base regressor).
      J. Swevers, C. Ganseman, D. B. Tükel, J. De Schutter, H. Van Brussel,
      "Optimal robot excitation and identification", IEEE T-RA 13(5), 1997.
      A. Tarantola, *Inverse Problem Theory and Methods for Model Parameter
      Estimation*, SIAM, 2005, ch. 3 (Gaussian prior and posterior covariances).
      T. Lee, P. M. Wensing, F. C. Park, "Geometric robot dynamic
      identification: a convex programming approach", IEEE T-RO 36(2), 2020.
    """
    Y = as_float_array(Y, "Y")
    if Y.ndim != 3:
        raise ValueError(
            f"Y: expected one stacked regressor of shape (N, nv, 10*nb), got shape "
            f"{tuple(Y.shape)} (call identifiability per robot)"
        )
    N, nv, P = Y.shape
    tau = jnp.zeros((N, nv), Y.dtype)
    Y, E, _, w, _, dtype, (N, nv, nb, ne) = _prepare(Y, tau, extra, weights, "ident")
    if E.ndim != 3:
        raise ValueError(f"extra: expected shape (N, nv, ne), got shape {tuple(E.shape)}")
    p = 10 * nb + ne
    w = jnp.ones((N, nv), dtype) if w is None else jnp.broadcast_to(w, (N, nv))
    if prior is not None:
        pi0 = _check_prior(prior, nb, dtype)
        if pi0.ndim != 2:
            raise ValueError(f"prior: expected batch shape ({nb},), got {tuple(pi0.shape[:-1])}")
    else:
        pi0 = jnp.tile(jnp.asarray([1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0], dtype), (nb, 1))
    if gamma is None:
        g = jnp.asarray(2.0 / PRIOR_SPREAD**2, dtype)
    else:
        g = as_float_array(gamma, "gamma")
        same_dtype(Y=Y, gamma=g)
        if g.ndim:
            raise ValueError(f"gamma: expected a scalar, got shape {tuple(g.shape)}")
        if is_concrete(g) and not (np.isfinite(float(g)) and float(g) >= 0):
            raise ValueError(f"gamma: expected a finite γ ≥ 0, got {float(g)}")
    if names is not None:
        names = tuple(names)
        if len(names) != p:
            raise ValueError(f"names: expected {p} names (one per column), got {len(names)}")
    rtol = _rank_rtol(p, dtype) if rtol is None else float(rtol)
    rank, cond, sv, d, piv, null, share = _ident(
        Y, E, w, pi0.astype(dtype), g.astype(dtype), rtol=rtol, has_prior=prior is not None
    )
    return Identifiability(
        rank=rank,
        condition_number=cond,
        singular_values=sv,
        column_scale=d,
        base_columns=piv,
        null_space=null,
        data_share=share,
        names=names or (),
    )
