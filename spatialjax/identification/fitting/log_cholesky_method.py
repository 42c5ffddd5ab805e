r"""The ``log_cholesky`` method: unconstrained optimisation over log-Cholesky ``θ``.

Every ``θ ∈ R¹⁰`` is a fully consistent body (Rucker & Wensing 2022), so no
constraint is needed. Its Newton steps use the Hessian of the objective in
``θ`` written out through the entries ``u`` of the Cholesky factor ``U``
(``J = U Uᵀ``):

$$
θ \xrightarrow{\ u = e^{Eθ} ⊙ (Sθ + δ)\ } u \xrightarrow{\ π_k = ½ uᵀ Q_k u\ } π
\xrightarrow{\ F\ } \mathbb{R},
$$

each entry of ``U`` being ``e^{α (+ d_i)}`` times ``1`` or one ``s``/``t``
parameter, and ``π`` a constant quadratic form of ``u``. The chain rule then
needs a handful of ``10 × 10`` products (``theta_derivatives``), a fraction of
the work of differentiating the objective twice with ``jax.hessian``.

References:
  C. Rucker, P. M. Wensing, "Smooth parameterization of rigid-body inertia",
  IEEE RA-L 7(2), 2022.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._log_cholesky import log_cholesky_to_vector, vector_to_log_cholesky
from ..._params import PSEUDO_INERTIA_BASIS
from .objective import Problem, data_term, theta_logdet
from .optim import NU, LoopOptions, LoopOut, minimize

# ------------------------------------------------------------------ θ -> u -> π, constants
# u: the entries of U, row-major upper triangle (0,0) (0,1) (0,2) (0,3) (1,1) ... (3,3).
# θ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3] (Pinocchio's order, _log_cholesky).
_U_ROWS, _U_COLS = np.triu_indices(4)
_EXP = np.zeros((10, 10))  # u_i = exp(_EXP[i] @ θ) * (_LIN[i] @ θ + _DIAG[i])
_LIN = np.zeros((10, 10))
_DIAG = np.zeros(10)
_OFF_DIAGONAL = {(0, 1): 4, (1, 2): 5, (0, 2): 6, (0, 3): 7, (1, 3): 8, (2, 3): 9}
for _i, (_r, _c) in enumerate(zip(_U_ROWS, _U_COLS, strict=True)):
    _EXP[_i, 0] = 1.0  # every entry carries e^α
    if _r == _c:
        _DIAG[_i] = 1.0
        if _r < 3:
            _EXP[_i, 1 + _r] = 1.0  # e^{d_{r+1}}
    else:
        _LIN[_i, _OFF_DIAGONAL[(int(_r), int(_c))]] = 1.0


def _quadratic_forms() -> np.ndarray:
    """``Q (10, 10, 10)`` with ``π_k = ½ uᵀ Q_k u`` for ``J = U Uᵀ``."""
    E = PSEUDO_INERTIA_BASIS.reshape(10, 16)
    G = np.linalg.solve(E @ E.T, E).reshape(10, 4, 4)  # dual basis: ⟨G_k, J(π)⟩ = π_k
    Pm = np.zeros((4, 4, 10))  # U[a, c] = Σ_i Pm[a, c, i] u_i
    Pm[_U_ROWS, _U_COLS, np.arange(10)] = 1.0
    M = np.einsum("kab,aci,bcj->kij", G, Pm, Pm)
    return np.round(2.0 * (M + M.transpose(0, 2, 1))) / 2.0  # exact halves and integers


_Q = _quadratic_forms()
for _a in (_EXP, _LIN, _DIAG, _Q):
    _a.setflags(write=False)
del _i, _r, _c, _a


def theta_derivatives(theta, P: Problem):
    """Gradient ``(10,)`` and Hessian ``(10, 10)`` in ``θ`` of ``‖R π(θ) − z‖² + γ kᵀπ(θ)``.

    The remaining terms of the objective (``log det J = 8α + 2Σdᵢ`` times ``γ``
    or ``μ``, constants) are linear in ``θ`` and add nothing. With ``c = ∇_π``
    of the bracket, ``J_u = ∂π/∂u`` and ``D = ∂u/∂θ``:
    ``Dᵀ (J_uᵀ 2RᵀR J_u + Σ_k c_k Q_k) D + Σ_i (J_uᵀ c)_i ∇²_θ u_i``.
    """
    dtype = theta.dtype
    EXP, LIN, Q = (jnp.asarray(a, dtype) for a in (_EXP, _LIN, _Q))
    e = jnp.exp(EXP @ theta)
    u = e * (LIN @ theta + jnp.asarray(_DIAG, dtype))
    Ju = jnp.einsum("kij,j->ki", Q, u)  # ∂π/∂u
    pi = 0.5 * (Ju @ u)
    RJ = P.R @ Ju
    c = 2.0 * (P.R.T @ (P.R @ pi - P.z)) + P.gamma * P.k
    gu = Ju.T @ c  # ∇_u
    Hu = 2.0 * RJ.T @ RJ + jnp.einsum("k,kij->ij", c, Q)
    D = u[:, None] * EXP + e[:, None] * LIN  # ∂u/∂θ
    # Σ_i gu_i ∇²u_i, with ∇²u_i = u_i Eᵢᵀ Eᵢ + e_i (Eᵢᵀ Lᵢ + Lᵢᵀ Eᵢ) (Eᵢ, Lᵢ: rows i)
    cross = EXP.T @ ((gu * e)[:, None] * LIN)
    curv = EXP.T @ ((gu * u)[:, None] * EXP) + cross + cross.T
    return D.T @ gu, D.T @ Hu @ D + curv


#: ``∂ log det J / ∂θ`` (constant: ``log det J = 8α + 2(d1 + d2 + d3)``)
_LOGDET_GRAD = np.array([8.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])


def to_theta(x, floor, d_floor):
    """``θ`` of the optimisation variable ``x``: ``dᵢ = d_floor + softplus(xᵢ)`` where ``floor``."""
    d = jnp.where(floor, d_floor + jax.nn.softplus(x[1:4]), x[1:4])
    return x.at[1:4].set(d)


def objective_x(x, mu, P: Problem, floor, d_floor):
    """``F(π(θ(x))) − μ log det J(θ(x))``; ``+inf`` where not finite."""
    theta = to_theta(x, floor, d_floor)
    pi = log_cholesky_to_vector(theta)
    logdet = theta_logdet(theta)
    reg = P.k @ pi - logdet + P.logdet0 - 4.0
    v = data_term(pi, P) + P.gamma * reg - mu * logdet
    return jnp.where(jnp.isfinite(v), v, jnp.inf)


def hessian_x(x, mu, P: Problem, floor, d_floor):
    """``∇²_x`` of ``objective_x``: ``theta_derivatives`` through ``x -> θ``.

    ``dθ/dx = s`` and ``d²θ/dx² = s'`` are diagonal (``σ(xᵢ)`` and ``σ'(xᵢ)`` on
    the floored ``dᵢ``, 1 and 0 elsewhere), so ``∇²_x = s ∇²_θ s + diag(∇_θ ⊙ s')``.
    """
    theta = to_theta(x, floor, d_floor)
    sig = jax.nn.sigmoid(x[1:4])
    s = jnp.ones_like(x).at[1:4].set(jnp.where(floor, sig, 1.0))
    s2 = jnp.zeros_like(x).at[1:4].set(jnp.where(floor, sig * (1.0 - sig), 0.0))
    g, H = theta_derivatives(theta, P)
    g = g - (P.gamma + mu) * jnp.asarray(_LOGDET_GRAD, x.dtype)  # the log det terms
    return s[:, None] * H * s[None, :] + jnp.diag(g * s2)


def solve_log_cholesky(P: Problem, pi0, opts: LoopOptions) -> LoopOut:
    r"""Unconstrained optimisation over log-Cholesky parameters for one body.

    For ``γ > 0`` the objective grows like ``−2γ dᵢ`` as any ``dᵢ → −∞``, so
    the optimum is interior and ``θ`` is used as is. For ``γ = 0`` the optimum
    may lie on the boundary ``det J = 0`` and a ``dᵢ`` may run to ``−∞``,
    which would lose definiteness in floating point; there
    ``dᵢ = d_floor + softplus(xᵢ)`` with ``e^{d_floor} = ε^{1/4} r`` (``r``:
    radius of gyration of the initial body), so ``λ_min(J)`` stays a safe
    ``√ε`` fraction above round-off while every body with larger ``dᵢ``
    remains reachable exactly.

    Plain descent in ``θ`` tends to plunge towards the boundary (``dᵢ → −∞``,
    where ``J`` is singular to working precision) while the data pull
    dominates, and then to crawl back along directions only ``γ`` decides.
    So the iterations follow a central path, as the barrier method does: the
    smooth term ``−μ log det J = −μ (8α + 2Σdᵢ)`` is added, with ``μ`` divided
    by 10 per stage down to ``4μ ≤ 0.1 rtol |F|``. Iterations are
    preconditioned with the Hessian at each restart (``_optim.minimize``),
    written out by ``hessian_x``.
    """
    dtype = pi0.dtype
    eps = jnp.finfo(dtype).eps
    floor = P.gamma <= 0
    m0 = pi0[0]
    trS = 0.5 * (pi0[4] + pi0[6] + pi0[9])
    r2 = jnp.maximum(trS / m0 - jnp.sum((pi0[1:4] / m0) ** 2), eps)
    d_floor = jnp.where(floor, 0.5 * jnp.log(r2) + 0.25 * jnp.log(eps), 0.0)

    theta0 = vector_to_log_cholesky(pi0)
    y = jnp.maximum(theta0[1:4] - d_floor, eps)
    u0 = jnp.where(y > 20.0, y, jnp.log(jnp.expm1(jnp.minimum(y, 20.0))))  # softplus⁻¹
    x0 = theta0.at[1:4].set(jnp.where(floor, u0, theta0[1:4]))

    def value(x, mu):
        return objective_x(x, mu, P, floor, d_floor)

    slack = float(8 * jnp.finfo(dtype).eps)
    opt = opts.make_optimizer(slack=slack)
    out = minimize(
        value,
        x0,
        lambda x, T: opt,
        opts,
        mu0=0.1 * jnp.abs(value(x0, 0.0)) / NU,
        hess_fn=lambda x, mu: hessian_x(x, mu, P, floor, d_floor),
        slack=slack,
    )
    pi = log_cholesky_to_vector(to_theta(out.x, floor, d_floor))
    return out._replace(x=pi, value=value(out.x, 0.0))
