r"""The ``barrier`` method: interior-point optimisation directly over ``π``.

Minimises, for a decreasing sequence of barrier weights ``μ``,

$$
F_μ(π) = F(π) − μ \log\det(J(π) − εI),
$$

warm-starting each stage from the previous one. ``−log det`` of a 4×4 matrix
is a self-concordant barrier with parameter ``ν = 4``, so the exact minimiser
of ``F_μ`` is within ``νμ`` of the constrained optimum; the last stage has
``νμ ≤ 0.1 rtol |F|``. Each optax update is first cut by the fraction-to-
boundary rule (0.99 of the largest step keeping ``J − εI ≻ 0``); with L-BFGS
an Armijo back-tracking line search follows, which never accepts an
infeasible trial point (its objective is ``+inf``). The iterate therefore
stays strictly feasible throughout; the start must be strictly feasible
(``J(π0) − εI ≻ 0``, true for the default ``ε = 0``). Iterations are
preconditioned with the Hessian of ``F_μ`` at each restart
(``_optim.minimize``), computed in closed form.
"""

from __future__ import annotations

import jax.numpy as jnp
import optax

from ..._params import pseudo_inertia
from ..._smallmat import ldl_pivots4
from .objective import Problem, data_term, neg_logdet_hessian
from .optim import NU, LoopOptions, LoopOut, max_feasible_step, minimize


def _shifted_logdet(pi, eps):
    d = ldl_pivots4(pseudo_inertia(pi) - eps * jnp.eye(4, dtype=pi.dtype))
    feasible = jnp.all(d > 0)
    return jnp.sum(jnp.log(jnp.where(feasible, d, jnp.ones_like(d)))), feasible


def _barrier_objective(pi, P: Problem, mu, eps: float):
    """``F_μ(π)``; ``+inf`` outside ``J(π) − εI ≻ 0`` (``eps`` is a static float)."""
    logdet, feasible = _shifted_logdet(pi, 0.0)
    value = data_term(pi, P) + P.gamma * (P.k @ pi - logdet + P.logdet0 - 4.0)
    if eps:
        logdet, feasible_eps = _shifted_logdet(pi, eps)
        feasible = feasible & feasible_eps
    value = value - mu * logdet
    return jnp.where(feasible & jnp.isfinite(value), value, jnp.inf)


def _barrier_hessian(pi, P: Problem, mu, eps):
    J = pseudo_inertia(pi)
    H = 2.0 * P.R.T @ P.R + P.gamma * neg_logdet_hessian(J)
    return H + mu * neg_logdet_hessian(J - eps * jnp.eye(4, dtype=J.dtype))


def _fraction_to_boundary(pi0, T, eps):
    """optax transform cutting an update of ``y`` (``π = π0 + T y``) to stay strictly feasible."""

    def init(params):
        del params
        return optax.EmptyState()

    def update(updates, state, params=None, **extra):
        del extra
        alpha = max_feasible_step(pi0 + T @ params, T @ updates, 0.99, eps)
        return alpha * updates, state

    return optax.GradientTransformationExtraArgs(init, update)


def solve_barrier(P: Problem, pi0, opts: LoopOptions, *, eps) -> LoopOut:
    """Interior-point loop for one body from a strictly feasible ``pi0``; returns ``π``."""
    mu0 = 0.1 * jnp.abs(_barrier_objective(pi0, P, 0.0, eps)) / NU
    slack = float(8 * jnp.finfo(pi0.dtype).eps)

    def make_opt(pi, T):
        return opts.make_optimizer((_fraction_to_boundary(pi, T, eps),), slack)

    out = minimize(
        lambda pi, mu: _barrier_objective(pi, P, mu, eps),
        pi0,
        make_opt,
        opts,
        mu0=mu0,
        hess_fn=lambda pi, mu: _barrier_hessian(pi, P, mu, eps),
        step_cap=lambda pi, dpi: max_feasible_step(pi, dpi, 0.99, eps),
        slack=slack,
    )
    return out._replace(value=_barrier_objective(out.x, P, 0.0, eps))
