"""The Hessians that ``fit``'s Newton steps use, written out, against ``jax.hessian``.

Both methods precondition every iteration with a closed-form Hessian of their
objective (``_optim.minimize``'s ``hess_fn``): the barrier's
``2RᵀR + (γ + μ) ∇²(−log det J)`` in ``π``, and the log-Cholesky method's
chain rule through the entries of the Cholesky factor in ``θ`` (and through the
softplus floor of the ``dᵢ`` when ``γ = 0``). The reference is JAX's automatic
second derivative of the objective each method minimises, evaluated at random
feasible points of random problems.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax._params import pseudo_inertia
from spatialjax.identification.fitting.barrier import _barrier_hessian, _barrier_objective
from spatialjax.identification.fitting.body_regressor import body_regressor
from spatialjax.identification.fitting.log_cholesky_method import _Q, hessian_x, objective_x
from spatialjax.identification.fitting.objective import Problem, prior_terms


def _problem(rng, gamma: float) -> Problem:
    """A reduced problem from a random motion and a random positive definite prior."""
    Y = np.asarray(body_regressor(rng.standard_normal((20, 6)), rng.standard_normal((20, 6))))
    R = np.linalg.qr(Y.reshape(-1, 10), mode="r")
    z = R @ rng.standard_normal(10)
    A = rng.standard_normal((4, 4))
    k, logdet0 = prior_terms(jnp.asarray(A @ A.T + 4.0 * np.eye(4)))
    return Problem(jnp.asarray(R), jnp.asarray(z), jnp.asarray(0.7), k, logdet0, jnp.asarray(gamma))


def _rel_err(actual, expected) -> float:
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def _np_U(theta):
    """``U`` of the log-Cholesky convention, written out (Rucker & Wensing 2022)."""
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    U = np.array(
        [[np.exp(d1), s12, s13, t1], [0, np.exp(d2), s23, t2], [0, 0, np.exp(d3), t3], [0, 0, 0, 1]]
    )
    return np.exp(a) * U


def test_quadratic_forms_give_the_pseudo_inertia_of_U_Ut(rng):
    # π_k = ½ uᵀ Q_k u with u the upper triangle of U (row-major) gives J(π) = U Uᵀ
    for _ in range(5):
        U = _np_U(0.5 * rng.standard_normal(10))
        u = U[np.triu_indices(4)]
        pi = 0.5 * np.einsum("i,kij,j->k", u, _Q, u)
        np.testing.assert_allclose(np.asarray(pseudo_inertia(pi)), U @ U.T, rtol=0, atol=1e-13)


@pytest.mark.parametrize("floor", [False, True], ids=["theta", "softplus_floor"])
@pytest.mark.parametrize("mu", [0.0, 0.3])
@pytest.mark.slow  # compiles jax.hessian of the whole objective
def test_log_cholesky_hessian_matches_jax_hessian(rng, floor, mu):
    for _ in range(4):
        P = _problem(rng, gamma=0.0 if floor else rng.uniform(0.1, 2.0))
        x = jnp.asarray(0.5 * rng.standard_normal(10))
        d_floor = jnp.asarray(-2.0 if floor else 0.0)
        floor_ = jnp.asarray(floor)
        expected = jax.hessian(objective_x)(x, mu, P, floor_, d_floor)
        actual = hessian_x(x, mu, P, floor_, d_floor)
        assert _rel_err(actual, expected) <= 1e-12


@pytest.mark.parametrize("eps", [0.0, 1e-3])
@pytest.mark.slow  # compiles jax.hessian of the whole objective
def test_barrier_hessian_matches_jax_hessian(rng, eps):
    for _ in range(4):
        P = _problem(rng, gamma=rng.uniform(0.0, 2.0))
        A = rng.standard_normal((4, 4))
        J = A @ A.T + 0.5 * np.eye(4)  # feasible: J − εI ≻ 0
        pi = jnp.asarray(np.concatenate([[J[3, 3]], J[:3, 3], _inertia_of(J[:3, :3])]))
        np.testing.assert_allclose(np.asarray(pseudo_inertia(pi)), J, atol=1e-12)
        mu = 0.3
        expected = jax.hessian(_barrier_objective)(pi, P, mu, eps)
        assert _rel_err(_barrier_hessian(pi, P, mu, eps), expected) <= 1e-12


def _inertia_of(S):
    """Packed ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` of second moment ``S`` (``I = tr(S) 1 − S``)."""
    I = np.trace(S) * np.eye(3) - S  # noqa: E741
    return [I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
