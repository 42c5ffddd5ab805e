"""``_optim.newton_step``: optax's first L-BFGS iteration, written without optax.

With ``restart_every=1`` and L-BFGS (both methods' default), every restart of
``fit``'s loop is one L-BFGS iteration from the identity: the step ``−∇F`` in
preconditioned coordinates, cut by the method's step rule, then optax's Armijo
back-tracking search. ``newton_step`` takes that step without optax (a smaller
program to compile); the reference here is optax itself (the chain of
``make_optimizer`` written with optax's default line-search constants, with
and without the barrier's fraction-to-boundary transform), on barrier objectives
where the boundary cut, the back-tracking, the Armijo coefficient, the
slack or none of them decides the step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from spatialjax._params import pseudo_inertia
from spatialjax.identification.fitting.barrier import (
    _barrier_hessian,
    _barrier_objective,
    _fraction_to_boundary,
)
from spatialjax.identification.fitting.body_regressor import body_regressor
from spatialjax.identification.fitting.objective import Problem, prior_terms
from spatialjax.identification.fitting.optim import max_feasible_step, newton_step, preconditioner


def _setup(rng, mu: float, scale: float, margin: float, at_optimum: bool = False):
    """A barrier objective, a feasible point and its preconditioner ``T``.

    ``scale`` multiplies the preconditioned step: 1 is the Newton step, larger
    values overshoot. ``margin`` is added to ``J``'s diagonal: small, the
    boundary is near and cuts the step; large, the step stays inside and an
    overshoot is back-tracked. ``at_optimum``: the data are ``π``'s own and
    ``γ = 0``, so ``π`` minimises the objective (``μ = 0``) up to rounding.
    """
    B = rng.standard_normal((4, 4))
    J = B @ B.T + margin * np.eye(4)
    S = J[:3, :3]
    inertia = np.trace(S) * np.eye(3) - S
    pi = np.r_[J[3, 3], J[:3, 3], inertia[np.triu_indices(3)][[0, 1, 3, 2, 4, 5]]]
    np.testing.assert_allclose(np.asarray(pseudo_inertia(pi)), J, atol=1e-12)
    Y = np.asarray(body_regressor(rng.standard_normal((20, 6)), rng.standard_normal((20, 6))))
    R = np.linalg.qr(Y.reshape(-1, 10), mode="r")
    # data from a body 1 % away from π: its least squares lies inside when the margin is large
    z = R @ (pi * (1.0 + (1e-14 if at_optimum else 0.01) * rng.standard_normal(10)))
    A = rng.standard_normal((4, 4))
    k, logdet0 = prior_terms(jnp.asarray(A @ A.T + 4.0 * np.eye(4)))
    gamma = jnp.asarray(0.0 if at_optimum else 0.2)
    P = Problem(jnp.asarray(R), jnp.asarray(z), jnp.asarray(0.7), k, logdet0, gamma)
    pi = jnp.asarray(pi)
    T = scale * preconditioner(_barrier_hessian(pi, P, mu, 0.0))
    return P, pi, T


SLACK = float(8 * np.finfo(np.float64).eps)


def _both_steps(P, pi, T, mu, capped=True):
    """``(y, u, g, v, fn, cap)``: newton_step's step ``y`` and optax's ``u`` from ``y = 0``."""

    def fn(y):
        return _barrier_objective(pi + T @ y, P, mu, 0.0)

    def cap(dy):
        return max_feasible_step(pi, T @ dy, 0.99, 0.0)

    y0 = jnp.zeros(10)
    extra = (_fraction_to_boundary(pi, T, 0.0),) if capped else ()
    # optax's own chain with its defaults (slope_rtol 1e-4), not make_optimizer's: the
    # constants newton_step shares with make_optimizer are checked against optax here
    opt = optax.chain(
        optax.scale_by_lbfgs(memory_size=10, scale_init_precond=False),
        optax.scale(-1.0),
        *extra,
        optax.scale_by_backtracking_linesearch(
            max_backtracking_steps=25, decrease_factor=0.5, increase_factor=1.0, rtol=SLACK
        ),
    )
    v, g = jax.value_and_grad(fn)(y0)
    u, _ = opt.update(g, opt.init(y0), y0, value=v, grad=g, value_fn=fn)
    y, j, first, dec0 = newton_step(jax.value_and_grad(fn), fn, y0, cap if capped else None, SLACK)
    assert int(j) == 1 and float(first) == np.inf
    np.testing.assert_allclose(float(dec0), 0.5 * float(g @ g), rtol=1e-14)
    return y, u, g, v, fn, cap


@pytest.mark.parametrize(
    "scale, margin, acts",
    [
        (1.0, 1e3, "nothing"),
        (30.0, 0.05, "cut"),
        (1e4, 0.05, "cut"),
        (3.0, 1e3, "back-tracking"),
        # step 1 overshoots, step ½ decreases F by about 10⁻¹ of the Armijo slope: accepted
        # only with optax's coefficient 10⁻⁴ (a coefficient of 0.3 would halve again)
        (1.9, 1e3, "back-tracking"),
    ],
)
@pytest.mark.parametrize("mu", [0.0, 1e-2])
@pytest.mark.slow  # a 14-case sweep, each case its own compiled program
def test_newton_step_is_optax_first_lbfgs_iteration(rng, mu, scale, margin, acts):
    for _ in range(3):
        P, pi, T = _setup(rng, mu, scale, margin)
        y, u, g, v, fn, cap = _both_steps(P, pi, T, mu)
        np.testing.assert_allclose(np.asarray(y), np.asarray(u), rtol=1e-13, atol=1e-15)
        assert float(fn(y)) <= float(v)  # a descent step, feasible (finite objective)
        alpha = float(cap(-g))
        if acts == "cut":
            assert alpha < 1.0
        elif acts == "back-tracking":  # no cut; the full step overshoots, a shorter one is taken
            assert alpha == 1.0 and float(jnp.linalg.norm(y)) < float(jnp.linalg.norm(g))
        else:  # the full Newton step
            assert alpha == 1.0
            np.testing.assert_allclose(np.asarray(y), -np.asarray(g), rtol=1e-15)


@pytest.mark.slow  # compile time; CI's second step
def test_newton_step_without_a_cap_is_optax_without_the_boundary_rule(rng):
    # the log-Cholesky method's step: no fraction-to-boundary transform
    for scale in (1.0, 3.0):
        P, pi, T = _setup(rng, 0.0, scale, 1e3)
        y, u, g, *_ = _both_steps(P, pi, T, 0.0, capped=False)
        np.testing.assert_allclose(np.asarray(y), np.asarray(u), rtol=1e-13, atol=1e-15)


@pytest.mark.slow  # compile time; CI's second step
def test_newton_step_at_the_optimum_takes_the_step_the_slack_allows(rng):
    # at the minimiser the gradient is rounding and F(αu) == F(0) to the last bit for every α:
    # the relative slack (8 ulps of F) accepts step 1 at once, as optax does; without it
    # the search would halve 25 times
    P, pi, T = _setup(rng, 0.0, 1.0, 1e3, at_optimum=True)
    y, u, g, v, fn, _ = _both_steps(P, pi, T, 0.0)
    assert 0 < float(g @ g) < np.finfo(np.float64).eps * float(v)  # F's change: below an ulp
    np.testing.assert_allclose(np.asarray(y), np.asarray(u), rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.asarray(y), -np.asarray(g), rtol=1e-15, atol=0)
