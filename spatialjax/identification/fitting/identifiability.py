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
with the prior's correlations between ``k`` and the other parameters
removed:

$$
s_k = 1 − C'^{(k)}_{kk} / P_{kk} \in [0, 1],\qquad
    C'^{(k)} = (2A + P'^{(k)-1})^{-1},
$$

``P'^{(k)}`` being ``P`` with row and column ``k`` zeroed except ``P_kk``:
parameter ``k`` keeps its prior variance, the others their joint prior,
and nothing in the prior ties them. ``1`` where the data decide the
parameter, ``0`` where the prior does; it does not depend on the column
scaling. The log-det prior ties a body's mass to its first and second
moments (a Wishart-like covariance, ``cov(m, h) ∝ 2 m h``): with ``1 −
C_kk / P_kk`` itself, a mass the data never see (a link's point mass at its
joint's origin, which regroups into the parent body) would gain a share from
the moments the data do decide, through the prior alone. A parameter the data
tie to *another* body's parameters (regrouped base parameters) still gains
from that body's prior: ``confounded`` names them. The **masses** are held to
a stricter rule, because a link's mass is where that happens always: a link
carried by a revolute joint has its mass regrouped into the parent body's
mass and first moment (Khalil & Dombre 2002, §12.4.2), so any share above 0
would come from the neighbours' priors. A mass's share is what the data
*alone* determine, every other parameter free: ``P_mm / (P_mm + v)`` with
``v = e_mᵀ (2A)⁺ e_m`` when ``e_m`` is orthogonal to the null space of ``A``
(at the rank's threshold), ``0`` otherwise, the ``γ = 0`` rule below graded
by the prior variance. The same rule gives the share of the total mass
``Σ m_i`` (``total_mass_share``), which a floating base's six rows or a
vertical prismatic first joint do determine. ``P'^{(k)}`` differs from
``P`` by a rank-two change of the precision, so every ``s_k`` follows from
``C`` by the Woodbury identity (``_decoupled_share``), written with weighted
means of ``g_j/(1+g_j) ∈ [0, 1)`` (``g_j`` the eigenvalues of ``L⁻¹ 2A L⁻ᵀ``
with ``LLᵀ = γH_0``) and clipped to ``[0, 1]`` against round-off. The
extra (friction) columns have no prior term (``H_0`` is zero there:
infinite prior variance), and the body parameters are taken after
marginalising them (``A`` replaced by its Schur complement on the body
columns); their share is ``1`` when the data determine them (finite
posterior variance: ``e_k`` orthogonal, to ``√eps``, to the null space of
the column-scaled friction columns at the rank threshold) and ``0``
otherwise, the limit of ``1 − C_kk / P_kk`` for a prior variance going to
infinity. Extra columns given a Gaussian prior of their own
(``extra_prior_weight``, prior Hessian ``2 w_j``: the armature columns of
[joint_prior][spatialjax.identification.joint_prior]) join the bodies in ``H_0``
and get ``1 − C_kk / P_kk`` too. With ``γ = 0`` every parameter is in the
no-prior case: share ``1`` for those orthogonal to the regressor's null
space, ``0`` for the others.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import as_float_array, is_concrete, same_dtype
from ..._inertia import RigidBodyInertia
from ..._params import PSEUDO_INERTIA_BASIS
from . import inputs, reduction
from .program import cpu_program
from .robot_fit import COMPILER_OPTIONS, PRIOR_SPREAD
from .robot_result import Identifiability

#: Names of the ten entries of a body's parameter vector (``_params`` order).
PARAMETER_NAMES = ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def parameter_names(model, joint_model=("viscous", "coulomb", "offset")) -> tuple:
    """``(body, parameter)`` names of the columns of ``[Y | Y_J]`` built by ``fit_robot``.

    Args:
      model: [`Model`][spatialjax.multibody.Model].
      joint_model: the joint model fitted: a [`JointModel`][spatialjax.multibody.JointModel],
        its kinds (a subset of ``("armature", "viscous", "coulomb", "offset")``) or a
        comma-separated text; ``fit_robot``'s default.

    Returns:
      ``10 nb + ne`` pairs such as ``("panda_link3", "Ixy")`` or
      ``("panda_joint2", "coulomb")``.
    """
    fm = inputs.as_joint_model(joint_model)
    names = [(b, n) for b in model.body_names for n in PARAMETER_NAMES]
    return tuple(names) + fm.names(model)


def _prior_hessian(pi0):
    """``(nb, 10, 10)`` ``∇²_π(−log det J)`` at each prior body."""
    J0 = jnp.einsum("ni,iab->nab", pi0, jnp.asarray(PSEUDO_INERTIA_BASIS, pi0.dtype))
    K = jnp.linalg.inv(J0)
    K = 0.5 * (K + jnp.swapaxes(K, -1, -2))
    M = jnp.einsum("nab,ibc->niac", K, jnp.asarray(PSEUDO_INERTIA_BASIS, pi0.dtype))
    return jnp.einsum("niac,njca->nij", M, M)


def _decoupled_share(B, F, g, tiny):
    """``1 − C'_kk / P_kk`` for every ``k``: the prior's correlations of ``k`` removed.

    ``P = B Bᵀ`` is the prior covariance, ``Λ = P⁻¹ = F Fᵀ`` (``F = L U``, ``B = L⁻ᵀ U``,
    ``Fᵀ B = I``) and ``C = B diag(1/(1+g)) Bᵀ`` the posterior covariance. ``C'`` is the
    posterior under the prior ``Λ'_k = Λ − u uᵀ/Λ_kk + e_k e_kᵀ/P_kk`` (``u = Λ e_k``):
    parameter ``k`` keeps its marginal prior variance ``P_kk``, the others their joint
    prior, and the two are independent. ``Λ'_k − Λ`` has rank two, so ``C'_kk`` follows
    from ``C`` by the Woodbury identity; with ``c = C_kk/P_kk``, ``f = (ΛCΛ)_kk/Λ_kk``
    and ``α = (ΛC)_kk / √(Λ_kk P_kk)`` (weighted means of ``1/(1+g)``):

        C'_kk / P_kk = c − (α²(1 − c) + (f − 1) c²) / ((f − 1)(1 + c) − α²)

    (the denominator is negative: ``f ≤ 1``, ``α > 0``). Without correlations
    (``Λ`` diagonal) ``f = α = c`` and the share is ``1 − c``, the Bayes update.
    """
    w = 1.0 / (1.0 + g)
    B2, F2 = B * B, F * F
    Pkk = jnp.maximum(jnp.sum(B2, axis=-1), tiny)
    Lkk = jnp.maximum(jnp.sum(F2, axis=-1), tiny)
    # 1 − c and 1 − f as weighted means of g/(1+g) ∈ [0, 1): no cancellation near c, f = 1
    one_c = (B2 @ (g * w)) / Pkk
    one_f = (F2 @ (g * w)) / Lkk
    c = 1.0 - one_c
    alpha = ((F * B) @ w) / jnp.sqrt(Pkk * Lkk)
    den = -one_f * (1.0 + c) - alpha * alpha
    den = jnp.where(den < 0, den, -tiny)
    ratio = c - (alpha * alpha * one_c - one_f * c * c) / den
    # round-off only: C' ≤ P' keeps the ratio in [0, 1]
    return jnp.clip(1.0 - ratio, 0.0, 1.0)


def _alone_share(V, sv, keep, C, prior_var):
    """Share of functionals ``C (p, m)`` (column-scaled) that the data *alone* determine.

    With every other parameter free the data leave the variance ``v = cᵀ (2A_s)⁺ c``
    on ``cᵀx`` when ``c`` is orthogonal to the null space of ``A_s = V diag(sv²) Vᵀ``
    (to ``√eps`` relative, at the rank's threshold ``keep``), none otherwise; the
    share is ``P / (P + v)`` for a prior variance ``P = prior_var``, ``0`` for ``c``
    not determined (the γ = 0 rule, graded by the prior variance).
    """
    dtype = V.dtype
    proj2 = (V.T @ C) ** 2  # (p, m)
    total = jnp.sum(proj2, axis=0)
    null = jnp.sum(jnp.where(keep[:, None], 0.0, proj2), axis=0)
    lam2 = jnp.where(keep, 2.0 * sv * sv, 1.0)
    v = jnp.sum(jnp.where(keep[:, None], proj2 / lam2[:, None], 0.0), axis=0)
    determined = (total > 0) & (null <= jnp.sqrt(jnp.finfo(dtype).eps) * total)
    return jnp.where(determined, prior_var / (prior_var + v), 0.0).astype(dtype), determined


def _data_share(Rs, Hs, gamma, p_y, rtol, F, he, prior_extra=()):
    """Fraction of each parameter's prior variance removed by the data (module docstring),
    and the share of the total mass.

    ``Rs (p, p)`` with ``RsᵀRs = A_s`` (column-scaled normal matrix), ``Hs (p_y, p_y)``
    the column-scaled prior Hessian of the body parameters (positive definite),
    ``he`` the column-scaled prior Hessians of the extra columns listed in the static
    ``prior_extra`` (indices among the extras; those with a prior of their own),
    ``F`` the factor of ``A_s``.
    """
    V, keep_all, sv_max = F.V, F.keep, F.sv[0]
    dtype = Rs.dtype
    p = Rs.shape[-1]
    tiny = jnp.finfo(dtype).tiny
    bayes = list(range(p_y)) + [p_y + i for i in prior_extra]
    free = [c for c in range(p_y, p) if c - p_y not in prior_extra]
    p_b = len(bayes)
    # friction columns: determined iff e_k ⊥ null(R_e) (the prior does not constrain them)
    Rb, Re = Rs[:, bayes], Rs[:, free]
    if free:
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
    Hb = 0.5 * (Hs + Hs.T) * g_safe
    if prior_extra:  # extra columns with a prior of their own join the Gaussian block
        Hb = jnp.zeros((p_b, p_b), dtype).at[:p_y, :p_y].set(Hb)
        Hb = Hb.at[p_y:, p_y:].set(jnp.diag(he))
    L = jnp.linalg.cholesky(Hb)
    W = jax.scipy.linalg.solve_triangular(L, 2.0**0.5 * Rb.T, lower=True)  # L⁻¹ √2 Rbᵀ
    g, U = jnp.linalg.eigh(W @ W.T)
    g = jnp.maximum(g, 0.0)
    B = jax.scipy.linalg.solve_triangular(L.T, U, lower=False)
    share_b = _decoupled_share(B, L @ U, g, tiny)
    share = jnp.zeros(p, dtype).at[jnp.asarray(bayes, int)].set(share_b)
    if free:
        share = share.at[jnp.asarray(free, int)].set(share_e)
    # the masses, and their sum: what the data alone determine (every other parameter free)
    masses = jnp.arange(0, p_y, 10)
    C = jnp.zeros((p, masses.size + 1), dtype)
    C = C.at[masses, jnp.arange(masses.size)].set(1.0)
    C = C.at[masses, -1].set(1.0 / F.d[masses])  # Σ m_i = Σ x_i / d_i, column-scaled
    prior_var = jnp.sum((B.T @ C[jnp.asarray(bayes, int)]) ** 2, axis=0)
    alone, determined = _alone_share(V, F.sv, keep_all, C, prior_var)
    share = share.at[masses].set(alone[:-1])
    # γ = 0: every prior variance is infinite; a parameter is determined iff e_k ⊥ null(A_s)
    null_all = jnp.sum(jnp.where(keep_all[None, :], 0.0, V * V), axis=-1)
    share_flat = jnp.where(null_all <= jnp.sqrt(jnp.finfo(dtype).eps), 1.0, 0.0).astype(dtype)
    total = jnp.where(gamma > 0, alone[-1], determined[-1].astype(dtype))
    return jnp.where(gamma > 0, share, share_flat), total


def _ident_one(Y, E, w, pi0, gamma, he, has_prior, *, rtol, prior_extra=()):
    dtype = Y.dtype
    p_y = Y.shape[-1]
    nb = p_y // 10
    A, _ = reduction.gram(Y, E, jnp.zeros(Y.shape[:-1], dtype), w)
    F = reduction.factor(A, rtol)
    Rs = F.sv[:, None] * F.V.T  # R_sᵀ R_s = A_s (column-scaled)
    cond, piv = reduction.base_condition(F)
    null = F.V / F.d[:, None]
    null = null / jnp.linalg.norm(null, axis=0, keepdims=True)
    # variance reduction, in the column-scaled variables (the ratio C_kk / P_kk is scale-free)
    H0 = _prior_hessian(pi0)
    blk = jnp.einsum("nij,nm->nimj", H0, jnp.eye(nb, dtype=dtype)).reshape(p_y, p_y)
    dy = F.d[:p_y]
    Hs = blk / dy[:, None] / dy[None, :]
    de = F.d[jnp.asarray([p_y + i for i in prior_extra], int)]
    hes = he[jnp.asarray(prior_extra, int)] / de**2  # the extras' prior Hessians, scaled
    share, total = _data_share(Rs, Hs, gamma, p_y, rtol, F, hes, prior_extra)
    share = jnp.where(has_prior, share, jnp.nan)
    total = jnp.where(has_prior, total, jnp.nan)
    return F.rank, cond, F.sv, F.d, piv.astype(jnp.int32), null, share, total


def _ident_impl(Y, E, w, pi0, gamma, he, *, rtol, has_prior, prior_extra):
    return _ident_one(Y, E, w, pi0, gamma, he, has_prior, rtol=rtol, prior_extra=prior_extra)


_ident = cpu_program(
    _ident_impl,
    static_argnames=("rtol", "has_prior", "prior_extra"),
    compiler_options=COMPILER_OPTIONS,
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
    extra_prior_weight=None,
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
      extra_prior_weight: optional ``(ne,)`` weights ``w_j ≥ 0`` of the extra
        columns' Gaussian prior ``Σ w_j (φ_j − φ0_j)²``, as passed to
        [fit_torques][spatialjax.identification.fit_torques]: a column with ``w_j > 0`` has the
        prior Hessian ``2 w_j`` and its data share is computed with the bodies' (``1 − C_kk /
        P_kk``); the others keep the no-prior rule.

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
    Y, E, _, w, _, dtype, (N, nv, nb, ne) = inputs.check_torque_data(Y, tau, extra, weights)
    if E.ndim != 3:
        raise ValueError(f"extra: expected shape (N, nv, ne), got shape {tuple(E.shape)}")
    p = 10 * nb + ne
    w = jnp.ones((N, nv), dtype) if w is None else jnp.broadcast_to(w, (N, nv))
    if prior is not None:
        pi0 = inputs.check_prior_bodies(prior, nb, dtype)
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
    rtol = reduction.rank_rtol(p, dtype) if rtol is None else float(rtol)
    he = np.zeros(ne)
    if extra_prior_weight is not None:
        he = np.asarray(extra_prior_weight, np.float64)
        if he.shape != (ne,) or not np.all(np.isfinite(he) & (he >= 0)):
            raise ValueError(
                f"extra_prior_weight: expected {ne} finite weights >= 0 (one per extra column), "
                f"got {he.tolist() if he.ndim == 1 else he}"
            )
    prior_extra = tuple(int(i) for i in np.flatnonzero(he > 0)) if prior is not None else ()
    rank, cond, sv, d, piv, null, share, total = _ident(
        Y,
        E,
        w,
        pi0.astype(dtype),
        g.astype(dtype),
        jnp.asarray(2.0 * he, dtype),
        rtol=rtol,
        has_prior=prior is not None,
        prior_extra=prior_extra,
    )
    return Identifiability(
        rank=rank,
        condition_number=cond,
        singular_values=sv,
        column_scale=d,
        base_columns=piv,
        null_space=null,
        data_share=share,
        total_mass_share=total,
        names=names or (),
    )
