"""The derivatives of the fits' Newton steps, written out, against ``jax.grad``/``jax.hessian``.

The interior point (``fitting.interior_point``) of ``fit`` (one body, ``nb = 1``) and of
``fit_torques`` (a robot, with extra coefficients kept ``≥ 0``) takes Newton steps with
the closed-form gradient and Hessian of ``F_μ = ‖R(x − x_c)‖² + ρ² + γ Σ D(J_i ‖ J0_i)
+ Σ w_j (φ_j − φ0_j)² − μ (Σ log det J_i + Σ log φ_j)`` (``barrier_grad_hess``), and
``fit``'s implicit derivative uses ``∇²F = 2RᵀR + γ ∇²(−log det J)`` (``hessian_pi``).
The reference is JAX's automatic derivatives of the objective value (``_value``), at
random feasible points of random problems.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax._params import pseudo_inertia
from spatialjax.identification.fitting import interior_point as ip
from spatialjax.identification.fitting.body_regressor import body_regressor
from spatialjax.identification.fitting.objective import Problem, hessian_pi, prior_terms


def _rel_err(actual, expected) -> float:
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


def _inertia_of(S):
    """Packed ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` of second moment ``S`` (``I = tr(S) 1 − S``)."""
    I = np.trace(S) * np.eye(3) - S  # noqa: E741
    return [I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]


def _random_body(rng, margin=0.5):
    """A strictly consistent body: ``J = AAᵀ + margin·1`` packed into ``π``."""
    A = rng.standard_normal((4, 4))
    J = A @ A.T + margin * np.eye(4)
    pi = np.concatenate([[J[3, 3]], J[:3, 3], _inertia_of(J[:3, :3])])
    np.testing.assert_allclose(np.asarray(pseudo_inertia(jnp.asarray(pi))), J, atol=1e-12)
    return pi


def _robot_problem(rng, nb: int, ne: int, gamma: float):
    p = 10 * nb + ne
    R = np.linalg.qr(rng.standard_normal((3 * p, p)), mode="r")
    k, logdet0, ok = ip.divergence_terms(jnp.asarray([_random_body(rng) for _ in range(nb)]))
    assert bool(jnp.all(ok))
    nonneg = np.arange(ne) % 2 == 0
    return ip.RobotProblem(
        jnp.asarray(R), jnp.asarray(rng.standard_normal(p)), jnp.asarray(0.3), k, logdet0,
        jnp.asarray(gamma), jnp.asarray(nonneg), jnp.asarray(rng.standard_normal(ne)),
        jnp.asarray(rng.uniform(0.0, 2.0, ne)),
    )  # fmt: skip


@pytest.mark.parametrize(("nb", "ne"), [(1, 0), (2, 3)], ids=["one_body", "robot"])
@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_interior_point_gradient_and_hessian_match_jax(rng, nb, ne, mu):
    for _ in range(3):
        P = _robot_problem(rng, nb, ne, gamma=rng.uniform(0.0, 2.0))
        bodies = np.concatenate([_random_body(rng) for _ in range(nb)])
        phi = np.where(np.asarray(P.nonneg), rng.uniform(0.1, 2.0, ne), rng.standard_normal(ne))
        x = jnp.asarray(np.concatenate([bodies, phi]))

        def value(x, P=P):
            return ip._value(x, P, mu, nb)[0]

        g, H = ip.barrier_grad_hess(x, P, mu, nb)
        assert _rel_err(g, jax.grad(value)(x)) <= 1e-12
        assert _rel_err(H, jax.hessian(value)(x)) <= 1e-12


def test_fit_hessian_matches_jax_hessian(rng):
    # the Hessian of F (μ = 0) that fit's implicit derivative solves with
    for _ in range(3):
        Y = np.asarray(body_regressor(rng.standard_normal((20, 6)), rng.standard_normal((20, 6))))
        R = np.linalg.qr(Y.reshape(-1, 10), mode="r")
        xc = rng.standard_normal(10)
        A = rng.standard_normal((4, 4))
        k, logdet0 = prior_terms(jnp.asarray(A @ A.T + 4.0 * np.eye(4)))
        gamma = rng.uniform(0.1, 2.0)
        P = Problem(jnp.asarray(R), jnp.asarray(R @ xc), jnp.asarray(0.0), k, logdet0,
                    jnp.asarray(gamma))  # fmt: skip
        PR = ip.RobotProblem(
            P.R, jnp.asarray(xc), P.rho2, k[None], logdet0[None], P.gamma,
            jnp.zeros(0, bool), jnp.zeros(0), jnp.zeros(0),
        )  # fmt: skip
        pi = jnp.asarray(_random_body(rng))
        expected = jax.hessian(lambda x, PR=PR: ip._value(x, PR, 0.0, 1)[0])(pi)
        assert _rel_err(hessian_pi(pi, P), expected) <= 1e-12
