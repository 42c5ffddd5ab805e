"""``identifiability``: which inertial parameters a torque log determines, which the prior does.

Rank, base columns and condition number of the column-scaled stacked regressor
``X = [Y | E]`` (``N·nv`` rows, ``10 nb + ne`` columns, body order then extras),
and the data share of each parameter under the log-det prior (Lee, Wensing &
Park 2020). Derivation: docs page ``identification-methods.md#data-share``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import as_float_array, is_concrete, same_dtype, to_device
from ..._inertia import RigidBodyInertia
from ..._params import PSEUDO_INERTIA_BASIS
from ..errors import IdentifyError
from . import inputs, reduction
from .program import SOLVER_OPTIONS, cpu_program
from .robot_fit import PRIOR_SPREAD
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
    """``1 − C'_kk / P_kk`` for every ``k`` (Woodbury identity, ``identification-methods.md``)."""
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
    """Share of functionals ``C (p, m)`` (column-scaled) that the data *alone* determine."""
    dtype = V.dtype
    proj2 = (V.T @ C) ** 2  # (p, m)
    total = jnp.sum(proj2, axis=0)
    null = jnp.sum(jnp.where(keep[:, None], 0.0, proj2), axis=0)
    lam2 = jnp.where(keep, 2.0 * sv * sv, 1.0)
    v = jnp.sum(jnp.where(keep[:, None], proj2 / lam2[:, None], 0.0), axis=0)
    determined = (total > 0) & (null <= jnp.sqrt(jnp.finfo(dtype).eps) * total)
    return jnp.where(determined, prior_var / (prior_var + v), 0.0).astype(dtype), determined


def _data_share(Rs, Hs, gamma, p_y, rtol, F, he, prior_extra=()):
    """Each parameter's data share and the total mass's, from the factors of ``A_s``."""
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
    compiler_options=SOLVER_OPTIONS,
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
    """Rank, conditioning, base columns, unidentifiable directions and data shares of a log.

    Unbatched: one stacked regressor (call it per robot). Definitions: docs page
    ``identification-methods.md#data-share``.

    Args:
      Y: ``(N, nv, 10 nb)`` joint-torque regressor.
      extra: optional ``(N, nv, ne)`` extra columns (friction).
      weights: optional weights broadcastable to ``(N, nv)``, inverse noise
        variances (e.g. ``1 / res.noise_std**2`` of a
        [`RobotFitResult`][spatialjax.identification.RobotFitResult]). Default 1.
      prior: ``RigidBodyInertia`` ``(nb,)`` (each ``J0 ≻ 0``); needed for
        ``data_share`` (NaN without it).
      gamma: prior weight ``γ`` (default ``2 / 0.5² = 8``, the
        [`fit_torques`][spatialjax.identification.fit_torques] rule).
      names: optional ``p`` names of the columns
        ([`parameter_names`][spatialjax.identification.parameter_names]).
      rtol: eigenvalue threshold of the rank, relative to the largest
        eigenvalue of the column-scaled normal matrix. Default ``10 p eps``.
      extra_prior_weight: optional ``(ne,)`` weights ``w_j ≥ 0`` of the extra
        columns' Gaussian prior ``Σ w_j (φ_j − φ0_j)²``, as passed to
        [fit_torques][spatialjax.identification.fit_torques].

    Returns:
      [`Identifiability`][spatialjax.identification.Identifiability].

    Raises:
      ValueError: bad shapes (named), a batched ``Y``, ``names`` of the wrong
        length, a prior body that is not fully consistent.

    References:
      Khalil & Dombre 2002, §12.4 (base parameters); Gautier & Khalil, IJRR
      11(4), 1992 (condition number of the base regressor); Tarantola,
      *Inverse Problem Theory*, SIAM 2005, ch. 3 (posterior covariances).
    """
    args, static, names = _ident_call(
        Y,
        extra=extra,
        weights=weights,
        prior=prior,
        gamma=gamma,
        names=names,
        rtol=rtol,
        extra_prior_weight=extra_prior_weight,
    )
    rank, cond, sv, d, piv, null, share, total = _ident(*args, **static)
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


def prepare_identifiability(Y, **kwargs) -> None:
    """Start compiling the program of ``identifiability(Y, **kwargs)`` in a background
    thread (``cpu_program.prepare``): a later call with arrays of the same shapes and types
    and the same static choices (which extra columns have a prior weight) runs it without
    compiling."""
    args, static, _ = _ident_call(Y, **kwargs)
    _ident.prepare(*args, **static)


def _ident_call(
    Y,
    *,
    extra=None,
    weights=None,
    prior: RigidBodyInertia | None = None,
    gamma=None,
    names: tuple | None = None,
    rtol: float | None = None,
    extra_prior_weight=None,
) -> tuple[tuple, dict, tuple | None]:
    """``identifiability``'s checks: the arguments of ``_ident`` ``(dynamic, static)`` and
    the names."""
    Y = as_float_array(Y, "Y")
    if Y.ndim != 3:
        raise IdentifyError(
            "Y",
            f"expected one stacked regressor of shape (N, nv, 10*nb), got shape "
            f"{tuple(Y.shape)} (call identifiability per robot)",
        )
    N, nv, P = Y.shape
    tau = to_device(np.zeros((N, nv), Y.dtype))
    Y, E, _, w, _, dtype, (N, nv, nb, ne) = inputs.check_torque_data(Y, tau, extra, weights)
    if E.ndim != 3:
        raise IdentifyError("extra", f"expected shape (N, nv, ne), got shape {tuple(E.shape)}")
    p = 10 * nb + ne
    w = to_device(np.ones((N, nv), dtype)) if w is None else inputs.broadcast_rows(w, N, nv)
    if prior is not None:
        pi0 = inputs.check_prior_bodies(prior, nb, dtype)
        if pi0.ndim != 2:
            raise IdentifyError(
                "prior", f"expected batch shape ({nb},), got {tuple(pi0.shape[:-1])}"
            )
    else:
        pi0 = to_device(np.tile(np.asarray([1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0], dtype), (nb, 1)))
    if gamma is None:
        g = to_device(np.asarray(2.0 / PRIOR_SPREAD**2, dtype))
    else:
        g = as_float_array(gamma, "gamma")
        same_dtype(Y=Y, gamma=g)
        if g.ndim:
            raise IdentifyError("gamma", f"expected a scalar, got shape {tuple(g.shape)}")
        if is_concrete(g) and not (np.isfinite(float(g)) and float(g) >= 0):
            raise IdentifyError("gamma", f"expected a finite γ ≥ 0, got {float(g)}")
    if names is not None:
        names = tuple(names)
        if len(names) != p:
            raise IdentifyError("names", f"expected {p} names (one per column), got {len(names)}")
    rtol = reduction.rank_rtol(p, dtype) if rtol is None else float(rtol)
    he = np.zeros(ne)
    if extra_prior_weight is not None:
        he = np.asarray(extra_prior_weight, np.float64)
        if he.shape != (ne,) or not np.all(np.isfinite(he) & (he >= 0)):
            raise IdentifyError(
                "extra_prior_weight",
                f"expected {ne} finite weights >= 0 (one per extra column), "
                f"got {he.tolist() if he.ndim == 1 else he}",
            )
    prior_extra = tuple(int(i) for i in np.flatnonzero(he > 0)) if prior is not None else ()
    # zero-weight samples: the same program for logs of similar length, the same A
    Y, E, w = inputs.pad_samples((Y, E, w), (-3, -3, -2))
    dynamic = (Y, E, w, to_device(pi0, dtype), to_device(g, dtype), to_device(2.0 * he, dtype))
    return dynamic, dict(rtol=rtol, has_prior=prior is not None, prior_extra=prior_extra), names
