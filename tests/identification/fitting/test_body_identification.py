"""Identification: regressor vs Newton–Euler and Pinocchio; fit accuracy, consistency, cvxpy."""

import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest
from _fit_cases import N_BODIES, N_SAMPLES, box_prior, problem, regressor_of
from helpers import raises_argument

import spatialjax as sj
from spatialjax import ArgumentError
from spatialjax.identification import (
    FitStatus,
    IdentifyError,
    IdentifyTypeError,
    body_regressor,
    fit,
)

PERM = [3, 4, 5, 0, 1, 2]  # [v; ω] <-> [ω; v]


def _random_body(rng, n_points=10):
    masses = rng.uniform(0.05, 0.5, size=n_points)
    pos = rng.uniform(-0.5, 0.5, size=(n_points, 3))
    return sj.RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))


def test_regressor_matches_newton_euler_6x6(rng):
    body = _random_body(rng)
    v = jnp.asarray(rng.normal(size=(50, 6)))
    a = jnp.asarray(rng.normal(size=(50, 6)))
    M = np.asarray(body.as_matrix())
    expected = np.einsum("ij,nj->ni", M, a) + np.einsum(
        "nij,nj->ni", np.asarray(sj.force_cross(v)), np.einsum("ij,nj->ni", M, v)
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
    # one batched call (eager per-sample calls cost more than the comparison itself)
    v = rng.normal(size=(200, 6))
    a = rng.normal(size=(200, 6))
    Y = np.asarray(body_regressor(jnp.asarray(v), jnp.asarray(a)))
    for k in range(len(v)):
        Y_pin = pin.bodyRegressor(pin.Motion(v[k, 3:], v[k, :3]), pin.Motion(a[k, 3:], a[k, :3]))
        np.testing.assert_allclose(Y[k], Y_pin[PERM], atol=1e-12)


# Every fit below uses the shapes of _fit_cases (3 bodies, 24 samples) and the same call
# structure as test_fit.py, so the compiled programs are shared with it.
@pytest.mark.slow
def test_fit_recovers_truth_from_noiseless_data(rng):
    # γ = 0: no pull towards the (inflated) default prior, so the optimum is the truth
    truth, Y, f, w = problem(rng, noise=0.0)
    res = fit(Y, f, weights=w, gamma=0.0)
    assert bool(jnp.all(res.consistency.fully_consistent))
    d = sj.geodesic_distance(truth, res.inertia)
    assert float(jnp.max(d)) <= 1e-6, d


def test_every_noisy_fit_is_consistent(rng):
    for _ in range(3):
        truth, Y, f, w = problem(rng, noise=1.0)
        res = fit(Y, f, weights=w, gamma=0.01)
        assert bool(jnp.all(res.consistency.fully_consistent))
        assert bool(jnp.all(res.consistency.min_eig_pseudo_inertia > 0))
        assert bool(jnp.all(jnp.isfinite(res.objective)))
        assert bool(jnp.all(res.status == FitStatus.CONVERGED))


def _pseudo_np(pi):
    """``J = [[½ tr(I) 1 − I, h], [hᵀ, m]]`` from ``π = [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = pi
    half = 0.5 * (ixx + iyy + izz)
    return [
        [half - ixx, -ixy, -ixz, hx],
        [-ixy, half - iyy, -iyz, hy],
        [-ixz, -iyz, half - izz, hz],
        [hx, hy, hz, m],
    ]


def test_fit_reaches_the_conic_optimum_of_cvxpy_and_clarabel(rng):
    """The same convex problem solved by cvxpy + Clarabel, written from its definition:
    ``Σ w (Yπ − f)² + γ (tr(J0⁻¹ J) − log det J + log det J0 − 4)`` over ``J(π) ⪰ 0``."""
    cp = pytest.importorskip("cvxpy")
    truth, Y, f, w = problem(rng, noise=1.0)
    prior = box_prior(truth.mass * 1.2)
    gamma = 0.01
    res = fit(Y, f, weights=w, prior=prior, gamma=gamma)
    assert bool(jnp.all(res.converged))
    Yn, fn, wn = np.asarray(Y), np.asarray(f), np.broadcast_to(np.asarray(w), f.shape)
    for i in range(N_BODIES):
        J0 = np.asarray(_pseudo_np(np.asarray(prior.params[i])))
        x = cp.Variable(10)
        J = cp.bmat(_pseudo_np([x[j] for j in range(10)]))
        sw = np.sqrt(wn[i])
        data = cp.sum_squares((Yn[i] * sw[..., None]).reshape(-1, 10) @ x - (fn[i] * sw).ravel())
        reg = cp.trace(np.linalg.inv(J0) @ J) - cp.log_det(J) + np.linalg.slogdet(J0)[1] - 4.0
        prob = cp.Problem(cp.Minimize(data + gamma * reg), [J >> 0])
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        assert prob.status == "optimal"
        # fit's own objective (on the samples) is at Clarabel's optimum or below it
        gap = (float(res.objective[i]) - prob.value) / abs(prob.value)
        assert gap <= 1e-8, gap
        np.testing.assert_allclose(res.inertia.params[i], x.value, rtol=1e-5, atol=1e-6)


def test_rank_deficient_excitation_still_consistent(rng):
    # rotation about z only: the data cannot see most inertia components; γ > 0 decides them
    truth, _, _, w = problem(rng, noise=0.0)
    t = np.arange(N_SAMPLES) * 0.1
    v = np.zeros((N_SAMPLES, 6))
    a = np.zeros((N_SAMPLES, 6))
    v[:, 2], a[:, 2] = np.sin(t), np.cos(t)
    Y = regressor_of(jnp.asarray(v), jnp.asarray(a))
    f = jnp.einsum("nsij,nj->nsi", Y, truth.params)
    res = fit(Y, f, weights=w, gamma=0.01)
    assert bool(jnp.all(res.consistency.fully_consistent))
    assert bool(jnp.all(res.condition_number == jnp.inf))
    assert bool(jnp.all(res.status == FitStatus.CONVERGED))


def test_bad_input_shapes():
    Y = jnp.zeros((5, 6, 10))
    with raises_argument(IdentifyError, "f"):
        fit(Y, jnp.zeros((4, 6)))
    with pytest.raises(ValueError):
        fit(jnp.zeros((5, 6, 9)), jnp.zeros((5, 6)))
    with raises_argument(IdentifyError, "weights"):
        fit(Y, jnp.zeros((5, 6)), weights=jnp.ones((3,)))
    with raises_argument(IdentifyTypeError, "solver"):
        fit(Y, jnp.zeros((5, 6)), solver="newton")
    with pytest.raises(TypeError):
        body_regressor(jnp.zeros(6, jnp.int32), jnp.zeros(6))
    with raises_argument(ArgumentError, "v"):
        body_regressor(jnp.zeros(5), jnp.zeros(6))


def test_demo_excitation_is_a_rigid_motion_in_gravity(rng):
    # the demo's a is dv/dt and its ω is the body angular velocity of the pose that rotates
    # gravity: in B coordinates a constant world vector obeys dg/dt = g × ω
    from spatialjax._cli import demo_payload as _demo

    v, a, g = (np.asarray(x) for x in _demo.excitation(rng, 2, 4000, jnp.float64))
    dt = _demo.DURATION / 4000
    fd = (v[:, 2:] - v[:, :-2]) / (2 * dt)
    np.testing.assert_allclose(a[:, 1:-1], fd, atol=1e-4 * np.abs(a).max())
    np.testing.assert_allclose(np.linalg.norm(g, axis=-1), _demo.G, rtol=1e-12)
    dg = (g[:, 2:] - g[:, :-2]) / (2 * dt)
    np.testing.assert_allclose(dg, np.cross(g, v[..., :3])[:, 1:-1], atol=1e-4 * _demo.G)


def test_demo_runs_and_explains_its_metrics(capsys):
    # 3 payloads x 24 readings: the shapes of _fit_cases, so the compiled fit is shared
    import argparse

    from spatialjax._cli import demo_payload as _demo

    parser = argparse.ArgumentParser()
    _demo.add_arguments(parser)
    args = parser.parse_args(["--payload", "--bodies", "3", "--samples", "24"])
    assert _demo.run(args) == 0
    out = capsys.readouterr().out
    assert "in gravity" in out and "ATI Mini45 class" in out
    assert "0 is perfect" in out and "fit converged on 100% of payloads" in out
    assert _demo.run(parser.parse_args(["--noise", "-1"])) == 2
