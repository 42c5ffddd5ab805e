"""Optimiser plumbing shared by both methods: the optax loop, the boundary rule, Newton steps.

Everything here acts on one body and is written for ``jax.lax.while_loop``
so that a whole fit is one compiled program (``fit`` maps it over bodies with
``vmap``; a batched ``while_loop`` keeps finished bodies frozen).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from ..._params import pseudo_inertia
from ..._smallmat import cho_solve, ldl_pivots4, lower_inverse, modified_cholesky
from .objective import Problem, hessian_pi, objective_pi

# the Armijo back-tracking search of both paths (optax's, and newton_step's written out)
MAX_BACKTRACKING = 25  # halvings of the step (optax's max_backtracking_steps)
SLOPE_RTOL = 1e-4  # sufficient-decrease coefficient (optax's slope_rtol)


def make_optimizer(
    optimizer: str, learning_rate, memory_size: int, extra=(), slack=0.0
) -> optax.GradientTransformationExtraArgs:
    """An optax optimiser producing *descent updates* (``x + u`` is the next iterate).

    It works in preconditioned coordinates (curvature ≈ identity at the
    restart point, see ``minimize``), so L-BFGS starts from the identity
    (``scale_init_precond=False``: its first step is the Newton step) and
    Adam's learning rate is unit-free.

    ``"lbfgs"``: ``optax.scale_by_lbfgs``, then the ``extra`` transforms
    (e.g. the fraction-to-boundary rule), then an Armijo back-tracking line
    search from step 1, which never accepts a trial point whose objective is
    ``inf``/NaN. Its relative ``slack`` (a few ulps) matters under ``vmap``:
    at an optimum, rounding makes ``F(x + αd) ≥ F(x)`` for every ``α``, and one
    body back-tracking to the cap would hold up the whole batch.
    ``"adam"``: ``optax.scale_by_adam`` with ``learning_rate``, then ``extra``.
    """
    if optimizer == "lbfgs":
        ls = optax.scale_by_backtracking_linesearch(
            max_backtracking_steps=MAX_BACKTRACKING,
            slope_rtol=SLOPE_RTOL,
            decrease_factor=0.5,
            increase_factor=1.0,
            rtol=slack,
        )
        return optax.chain(
            optax.scale_by_lbfgs(memory_size=memory_size, scale_init_precond=False),
            optax.scale(-1.0),
            *extra,
            ls,
        )
    return optax.chain(optax.scale_by_adam(), optax.scale(-learning_rate), *extra)


def preconditioner(H):
    """``T = L⁻ᵀ`` with ``L Lᵀ ≈ H`` (modified Cholesky), so ``Tᵀ H T ≈ 1``.

    Optimising over ``y`` with ``x = x0 + T y`` makes the curvature at ``x0``
    isotropic, so a unit step along ``−∇_y`` is the (modified) Newton step.
    Pivots are floored at ``ε`` times the largest diagonal entry (flat or
    non-convex directions get a bounded scale).
    """
    H = 0.5 * (H + H.T)
    return lower_inverse(modified_cholesky(H, jnp.finfo(H.dtype).eps)).T


class LoopOptions(NamedTuple):
    """The optimiser settings of one fit, from the solver objects (``_solvers``).

    Attributes:
      optimizer: ``"lbfgs"`` or ``"adam"``.
      learning_rate: Adam's step (unit-free, preconditioned coordinates).
      memory_size: L-BFGS curvature pairs.
      rtol: relative tolerance on the objective (a traced scalar).
      atol: absolute floor of every convergence test (a traced scalar).
      max_iters: cap on iterations over all restarts and stages.
      restart_every: iterations between Hessian re-preconditioning.
    """

    optimizer: str
    learning_rate: float
    memory_size: int
    rtol: jax.Array
    atol: jax.Array
    max_iters: int
    restart_every: int

    @property
    def newton(self) -> bool:
        """One L-BFGS step per Hessian: taken by ``newton_step``, without optax."""
        return self.optimizer == "lbfgs" and self.restart_every == 1

    def make_optimizer(self, extra=(), slack=0.0):
        """``make_optimizer`` with these settings."""
        return make_optimizer(self.optimizer, self.learning_rate, self.memory_size, extra, slack)


class LoopOut(NamedTuple):
    x: jax.Array
    value: jax.Array
    iterations: jax.Array
    converged: jax.Array


NU = 4.0  # barrier parameter of −log det on 4×4 matrices
MU_DECREASE = 10.0


def minimize(
    value_fn: Callable,
    x0,
    make_opt: Callable,
    opts: LoopOptions,
    *,
    hess_fn: Callable,
    mu0=None,
    step_cap: Callable | None = None,
    slack: float = 0.0,
) -> LoopOut:
    r"""Preconditioned iterations (optax or damped Newton) with restarts, as ``while_loop``s.

    Outer loop (a *restart*): compute the Hessian ``H`` of ``value_fn(·, μ)``
    at the current point ``x``, build ``T = preconditioner(H)`` and the
    optimiser ``make_opt(x, T)``, and run it on ``y ↦ value_fn(x + T y, μ)``
    from ``y = 0`` for at most ``restart_every`` iterations, until the
    relative objective change of an iteration is ``≤ tol``. A restart whose
    *first* step (a line-searched Newton step for L-BFGS) changes the
    objective by ``≤ tol`` relative ends the stage: this test on the relative
    objective change cannot be fooled by a slow crawl, as a plain
    per-iteration test can.

    Barrier stages (``mu0`` given): ``value_fn(x, μ)`` includes ``−μ log det``;
    a stage's ``tol`` is ``max(rtol, 0.1 ν μ / |F|)`` (``ν = 4``), and after each
    stage ``μ`` is divided by 10 until ``ν μ ≤ 0.1 (rtol |F| + atol)``. Without
    ``mu0`` there is one stage, ``μ = 0``. Every test on a change of ``F``
    accepts ``tol |F| + atol``: ``atol`` (a few ulps of the data's size) is
    what remains reachable when the optimum is ``F* = 0`` (noiseless data).

    ``opts.newton`` (L-BFGS with ``restart_every=1``): each restart is one
    damped Newton step, ``newton_step``, the iteration optax's L-BFGS
    takes from the identity followed by its back-tracking line search, written
    without optax (a smaller program to compile); ``make_opt`` is not used,
    ``step_cap(x, Δx)`` (default 1) is the largest step the method allows
    along ``Δx`` and ``slack`` the line search's relative slack.

    ``hess_fn(x, μ)`` gives the Hessian (both methods write theirs out). Under
    ``vmap`` a value/gradient stored by the line search would not save work
    (``lax.cond`` becomes ``select``), so each iteration evaluates both afresh.

    Returns ``LoopOut(x, F(x, μ_final), iterations, converged)``.
    """
    rtol, atol, max_iters, restart_every = opts.rtol, opts.atol, opts.max_iters, opts.restart_every
    dtype = x0.dtype
    staged = mu0 is not None
    mu0 = jnp.asarray(0.0 if mu0 is None else mu0, dtype)
    izero = jnp.asarray(0, jnp.int32)
    inf = jnp.asarray(jnp.inf, dtype)

    def outer_cond(c):
        return (~c[4]) & (c[3] < max_iters)

    def outer_body(c):
        x, v_x, mu, k, _, _ = c
        T = preconditioner(hess_fn(x, mu))
        fn = lambda y: value_fn(x + T @ y, mu)  # noqa: E731
        vg = jax.value_and_grad(fn)
        tol = jnp.maximum(rtol, 0.1 * NU * mu / jnp.abs(v_x)) if staged else rtol
        if opts.newton:
            cap = None
            if step_cap is not None:
                cap_x = step_cap
                cap = lambda dy: cap_x(x, T @ dy)  # noqa: E731
            y, j, first, dec0 = newton_step(vg, fn, jnp.zeros_like(x), cap, slack)
            return end_restart(x, T, y, j, first, dec0, v_x, mu, k, tol)
        opt = make_opt(x, T)

        def inner_cond(ic):
            _, _, _, j, _, stop, _, _ = ic
            return (~stop) & (j < restart_every) & (k + j < max_iters)

        def inner_body(ic):
            y, state, v_prev, j, first, _, y_prev, dec0 = ic
            v, g = vg(y)
            dec0 = jnp.where(j == 0, 0.5 * jnp.sum(g * g), dec0)
            # a step that did not decrease the objective (failed line search,
            # Adam overshoot) is undone and ends the inner loop: restart
            worse = ~(v <= v_prev)
            y, v = jnp.where(worse, y_prev, y), jnp.where(worse, v_prev, v)
            change = jnp.where(worse, inf, v_prev - v)
            first = jnp.where(j == 1, change, first)
            stop = (j >= 1) & ((change <= tol * jnp.abs(v) + atol) | worse)
            u, new_state = opt.update(g, state, y, value=v, grad=g, value_fn=fn)
            y_new = y + u
            y_new = jnp.where(stop | ~jnp.all(jnp.isfinite(y_new)), y, y_new)
            return y_new, new_state, v, j + 1, first, stop, y, dec0

        y0 = jnp.zeros_like(x)
        ic0 = (y0, opt.init(y0), v_x, izero, inf, jnp.asarray(False), y0, inf)
        y, _, v, j, first, _, _, dec0 = jax.lax.while_loop(inner_cond, inner_body, ic0)
        return end_restart(x, T, y, j, first, dec0, v_x, mu, k, tol)

    def end_restart(x, T, y, j, first, dec0, v_x, mu, k, tol):
        x_new = x + T @ y
        v_new = value_fn(x_new, mu)
        # A restart of ONE iteration (restart_every = 1: damped Newton; or the iteration
        # cap) took its step without evaluating it inside the loop: measure the step's
        # change here, and undo a step that did not decrease F, as the loop does.
        one = j == 1
        worse = one & ~(v_new <= v_x)
        x_new = jnp.where(worse, x, x_new)
        v_new = jnp.where(worse, v_x, v_new)
        first = jnp.where(one, jnp.where(worse, inf, v_x - v_new), first)
        # Certified: a fresh (Newton-like) first step changed F by ≤ tol, or it could
        # not decrease F at all while ½‖∇_y F‖² (≈ half the Newton decrement²) is ≤ tol.
        # Stalled: no decrease although the decrement is larger; restarting from the
        # same point would repeat the same step, so the stage ends either way.
        stalled = first == inf
        bound = tol * jnp.abs(v_new) + atol
        certified = (first <= bound) | (stalled & (dec0 <= bound))
        # a non-finite objective (not expected from valid input) ends the loop uncertified
        stage_done = certified | stalled | ~jnp.isfinite(v_new)
        certified = certified & jnp.isfinite(v_new)
        if staged:
            final = NU * mu <= 0.1 * (rtol * jnp.abs(v_new) + atol)
            done = stage_done & final
            mu = jnp.where(stage_done & ~final, mu / MU_DECREASE, mu)
            v_new = jnp.where(stage_done & ~final, value_fn(x_new, mu), v_new)
        else:
            done = stage_done
        return x_new, v_new, mu, k + j, done, certified

    false = jnp.asarray(False)
    c0 = (x0, value_fn(x0, mu0), mu0, izero, false, false)
    x, v, mu, k, done, certified = jax.lax.while_loop(outer_cond, outer_body, c0)
    return LoopOut(x, v, k, done & certified)


def newton_step(vg: Callable, fn: Callable, y0, step_cap: Callable | None, slack):
    """One damped Newton step from ``y0 = 0`` in preconditioned coordinates.

    Exactly the first iteration of ``make_optimizer``'s L-BFGS chain (its
    direction from the identity is ``−∇``, a Newton step since the curvature
    is the identity at ``y0``), the ``step_cap`` cut (fraction to the
    boundary) and optax's Armijo back-tracking search from step 1: halve up to
    ``MAX_BACKTRACKING`` times until
    ``F(αu) ≤ (1 + slack) F(0) + 10⁻⁴ α ∇F·u``; a search that never finds a
    finite value takes no step. Returns what the inner loop of
    ``minimize`` returns after one iteration: ``(y, 1, inf, ½‖∇F‖²)``.
    """
    dtype = y0.dtype
    inf = jnp.asarray(jnp.inf, dtype)
    v, g = vg(y0)
    u = -g
    if step_cap is not None:
        u = step_cap(u) * u
    slope = u @ g

    def cond(ls):
        _, err, i = ls
        return ~(err <= 0) & (i <= MAX_BACKTRACKING)

    def body(ls):
        lr, _, i = ls
        lr = jnp.where(i > 0, 0.5 * lr, lr)
        err = fn(y0 + lr * u) - (1.0 + slack) * v - lr * SLOPE_RTOL * slope
        err = jnp.where(jnp.isnan(err), inf, jnp.maximum(err, 0.0))
        return lr, err, i + 1

    one = jnp.asarray(1.0, dtype)
    lr, err, _ = jax.lax.while_loop(cond, body, (one, inf, jnp.asarray(0, jnp.int32)))
    y = y0 + jnp.where(jnp.isinf(err), 0.0, lr) * u
    y = jnp.where(jnp.all(jnp.isfinite(y)), y, y0)
    return y, jnp.asarray(1, jnp.int32), inf, 0.5 * jnp.sum(g * g)


def max_feasible_step(pi, dpi, tau, eps=0.0, bisections: int = 30):
    """Fraction-to-boundary step: ``min(1, τ α_max)``, ``α_max = sup{α: J(π + α Δπ) − εI ≻ 0}``.

    The interior-point step rule that keeps every iterate strictly feasible.
    ``α_max`` is bracketed by bisection on ``[0, 1/τ]`` with the written-out
    LDLᵀ pivot test (all pivots positive ⇔ positive definite), which fuses
    into one loop over the batch; ``30`` bisections give ``α_max`` to
    ``1e-9`` relative, ample for a step rule. The feasible ``α`` form an
    interval because the PSD cone is convex and ``α = 0`` is feasible.
    """
    J = pseudo_inertia(pi) - eps * jnp.eye(4, dtype=pi.dtype)
    dJ = pseudo_inertia(dpi)

    def feasible(a):
        return jnp.all(ldl_pivots4(J + a * dJ) > 0, axis=-1)

    def bisect(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        ok = feasible(mid)
        return jnp.where(ok, mid, lo), jnp.where(ok, hi, mid)

    hi = jnp.asarray(1.0 / tau, pi.dtype)
    lo, _ = jax.lax.fori_loop(0, bisections, bisect, (jnp.zeros((), pi.dtype), hi))
    return jnp.where(feasible(hi), 1.0, tau * lo)


def newton_polish(pi, P: Problem, steps: int, rtol, atol):
    """Damped Newton steps on ``F(π)`` keeping ``J ≻ 0``; returns ``(π, steps taken, certified)``.

    ``F`` is a quadratic plus ``γ`` times a self-concordant barrier, so damped
    Newton with an Armijo back-tracking search converges quadratically near
    the optimum. Each step is first cut to 0.99 of the distance to the PSD
    boundary (``max_feasible_step``). ``certified`` is true once half the
    Newton decrement ``½ gᵀH⁻¹g`` (an estimate of the suboptimality) is
    ``≤ rtol |F| + atol``; then no further step is taken.
    """
    value_and_grad = jax.value_and_grad(objective_pi)
    slack = 8 * jnp.finfo(pi.dtype).eps

    def cond(c):
        return (~c[2]) & (c[1] < steps)

    def body(c):
        pi, k, _ = c
        v, g = value_and_grad(pi, P)
        d = -cho_solve(modified_cholesky(hessian_pi(pi, P), jnp.finfo(pi.dtype).eps), g)
        dec = -(g @ d)
        cert = 0.5 * dec <= rtol * jnp.abs(v) + atol

        def ls_cond(ls):
            a, j = ls
            armijo = objective_pi(pi + a * d, P) <= v - 0.25 * a * dec + slack * jnp.abs(v)
            return ~armijo & ~cert & (j < 40)

        a0 = max_feasible_step(pi, d, 0.99)
        alpha, _ = jax.lax.while_loop(ls_cond, lambda ls: (0.5 * ls[0], ls[1] + 1), (a0, 0))
        new = pi + alpha * d
        keep = cert | ~(objective_pi(new, P) <= v) | ~jnp.all(jnp.isfinite(new))
        return jnp.where(keep, pi, new), k + jnp.where(cert, 0, 1), cert

    c0 = (pi, jnp.asarray(0, jnp.int32), jnp.asarray(False))
    return jax.lax.while_loop(cond, body, c0)
