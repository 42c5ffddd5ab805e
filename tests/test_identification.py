"""Identification: regressor vs Newton–Euler and Pinocchio; fit accuracy, consistency, methods."""

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest

import spatialjax as sj
from spatialjax.identification import body_regressor, fit

PERM = [3, 4, 5, 0, 1, 2]  # [v; ω] <-> [ω; v]


def _random_body(rng, n_points=10):
    masses = rng.uniform(0.05, 0.5, size=n_points)
    pos = rng.uniform(-0.5, 0.5, size=(n_points, 3))
    return sj.RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))


def _trajectory(n_samples):
    """Persistently exciting: each axis at its own frequency (``a = dv/dt``)."""
    t = np.arange(n_samples) * 0.1
    k = np.arange(6)
    freq = 1.0 + 0.37 * k
    v = np.sin(freq * t[:, None] + k * np.pi / 3)
    a = freq * np.cos(freq * t[:, None] + k * np.pi / 3)
    return jnp.asarray(v), jnp.asarray(a)


def test_regressor_matches_newton_euler_6x6(rng):
    body = _random_body(rng)
    v = jnp.asarray(rng.normal(size=(50, 6)))
    a = jnp.asarray(rng.normal(size=(50, 6)))
    M = np.asarray(body.as_matrix())
    expected = np.einsum("ij,nj->ni", M, a) + np.einsum(
        "nij,nj->ni", np.asarray(sj.crf(v)), np.einsum("ij,nj->ni", M, v)
    )
    got = body_regressor(v, a) @ body.params
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_regressor_gravity_is_fictitious_base_acceleration(rng):
    body = _random_body(rng)
    v = jnp.asarray(rng.normal(size=(20, 6)))
    a = jnp.asarray(rng.normal(size=(20, 6)))
    g = jnp.asarray(rng.normal(size=(20, 3)))
    a_minus_g = a.at[:, 3:].add(-g)
    np.testing.assert_allclose(
        body_regressor(v, a, gravity=g) @ body.params,
        body_regressor(v, a_minus_g) @ body.params,
        atol=1e-12,
    )


def test_regressor_matches_pinocchio(rng):
    for _ in range(200):
        v = rng.normal(size=6)
        a = rng.normal(size=6)
        Y_pin = pin.bodyRegressor(pin.Motion(v[3:], v[:3]), pin.Motion(a[3:], a[:3]))
        Y = np.asarray(body_regressor(jnp.asarray(v), jnp.asarray(a)))
        np.testing.assert_allclose(Y, Y_pin[PERM], atol=1e-12)


# Every fit below uses the same shapes (4 bodies, 32 samples) and keyword structure, so the
# compiled program is shared between tests instead of recompiled for each.
N_BODIES, N_SAMPLES = 4, 32


def _problem(rng, noise):
    bodies = [_random_body(rng) for _ in range(N_BODIES)]
    truth = sj.RigidBodyInertia(jnp.stack([b.params for b in bodies]))
    v, a = _trajectory(N_SAMPLES)
    Y = jnp.broadcast_to(body_regressor(v, a), (N_BODIES, N_SAMPLES, 6, 10))
    f = jnp.einsum("nsij,nj->nsi", Y, truth.params)
    sigma = np.array([0.02, 0.02, 0.03, 1.2, 1.2, 0.5])
    f = f + noise * jnp.asarray(rng.normal(size=f.shape) * sigma)
    return truth, Y, f, jnp.asarray(1.0 / sigma**2)


def _fit(Y, f, w, gamma, method="log_cholesky"):
    return fit(Y, f, weights=w, gamma=jnp.full((N_BODIES,), gamma), method=method)


def test_fit_recovers_truth_from_noiseless_data(rng):
    # γ = 0: no pull towards the (inflated) default prior, so the optimum is the truth
    truth, Y, f, w = _problem(rng, noise=0.0)
    res = _fit(Y, f, w, 0.0)
    assert bool(jnp.all(res.consistency.fully_consistent))
    d = sj.geodesic_distance(truth, res.inertia)
    assert float(jnp.max(d)) <= 1e-6, d


def test_every_noisy_fit_is_consistent(rng):
    for _ in range(3):
        truth, Y, f, w = _problem(rng, noise=1.0)
        res = _fit(Y, f, w, 0.01)
        assert bool(jnp.all(res.consistency.fully_consistent))
        assert bool(jnp.all(res.consistency.min_eig_pseudo_inertia > 0))
        assert bool(jnp.all(jnp.isfinite(res.objective)))


def test_both_methods_reach_the_same_optimum(rng):
    truth, Y, f, w = _problem(rng, noise=1.0)
    a = _fit(Y, f, w, 0.01, method="log_cholesky")
    b = _fit(Y, f, w, 0.01, method="barrier")
    rel = jnp.abs(a.objective - b.objective) / jnp.abs(a.objective)
    assert float(jnp.max(rel)) <= 1e-6, rel


def test_rank_deficient_excitation_still_consistent(rng):
    # rotation about z only: the data cannot see most inertia components
    truth, _, _, w = _problem(rng, noise=0.0)
    t = np.arange(N_SAMPLES) * 0.1
    v = np.zeros((N_SAMPLES, 6))
    a = np.zeros((N_SAMPLES, 6))
    v[:, 2], a[:, 2] = np.sin(t), np.cos(t)
    Y = jnp.broadcast_to(
        body_regressor(jnp.asarray(v), jnp.asarray(a)), (N_BODIES, N_SAMPLES, 6, 10)
    )
    res = _fit(Y, jnp.einsum("nsij,nj->nsi", Y, truth.params), w, 0.01)
    assert bool(jnp.all(res.consistency.fully_consistent))
    cond = np.asarray(res.condition_number)
    assert np.all(~np.isfinite(cond) | (cond > 1e8)), cond


def test_fit_is_differentiable_in_the_data(rng):
    truth, Y, f, w = _problem(rng, noise=1.0)

    def mass(f):
        return _fit(Y, f, w, 0.01).inertia.mass.sum()

    g = jax.grad(mass)(f)
    assert bool(jnp.all(jnp.isfinite(g)))
    assert float(jnp.abs(g).max()) > 0
    # directional derivative vs central finite difference; the step is large enough that the
    # solver's own tolerance (relative objective change 1e-10) does not dominate the difference
    d = jnp.asarray(rng.normal(size=f.shape))
    eps = 1e-2
    fd = (mass(f + eps * d) - mass(f - eps * d)) / (2 * eps)
    np.testing.assert_allclose(jnp.sum(g * d), fd, rtol=2e-3, atol=1e-8)


def test_bad_input_shapes():
    Y = jnp.zeros((5, 6, 10))
    with pytest.raises(ValueError, match="f"):
        fit(Y, jnp.zeros((4, 6)))
    with pytest.raises(ValueError):
        fit(jnp.zeros((5, 6, 9)), jnp.zeros((5, 6)))
    with pytest.raises(ValueError, match="weights"):
        fit(Y, jnp.zeros((5, 6)), weights=jnp.ones((3,)))
    with pytest.raises(ValueError, match="method"):
        fit(Y, jnp.zeros((5, 6)), method="newton")
    with pytest.raises(TypeError):
        body_regressor(jnp.zeros(6, jnp.int32), jnp.zeros(6))
    with pytest.raises(ValueError, match="v"):
        body_regressor(jnp.zeros(5), jnp.zeros(6))
