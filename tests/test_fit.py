"""fit: batch axes, vmap, float32, the barrier default, Adam, defaults, gradients, bad input.

Complements test_identification.py (noiseless recovery and method agreement with
log-Cholesky, consistency on noisy data, rank deficiency, gradient in the data).
Every fit here uses 3 bodies × 24 samples so compiled programs are shared.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spatialjax as sj
from spatialjax.identification import body_regressor, fit

N_BODIES, N_SAMPLES = 3, 24
SIGMA = np.array([0.02, 0.02, 0.03, 1.2, 1.2, 0.5])


def _trajectory():
    """Persistently exciting: each axis at its own frequency (``a = dv/dt``)."""
    t = np.arange(N_SAMPLES)[:, None] * 0.12
    freq = 1.0 + 0.41 * np.arange(6)
    phase = np.arange(6) * np.pi / 3
    return jnp.asarray(np.sin(freq * t + phase)), jnp.asarray(freq * np.cos(freq * t + phase))


def _problem(rng, noise, dtype=jnp.float64):
    m = rng.uniform(0.05, 0.5, size=(N_BODIES, 10))
    p = rng.uniform(-0.5, 0.5, size=(N_BODIES, 10, 3))
    truth = sj.RigidBodyInertia.from_point_masses(jnp.asarray(m, dtype), jnp.asarray(p, dtype))
    v, a = _trajectory()
    Y = jnp.broadcast_to(body_regressor(v, a).astype(dtype), (N_BODIES, N_SAMPLES, 6, 10))
    f = jnp.einsum("nsij,nj->nsi", Y, truth.params)
    f = f + jnp.asarray(noise * rng.normal(size=f.shape) * SIGMA, dtype)
    return truth, Y, f, jnp.asarray(1.0 / SIGMA**2, dtype)


def _fit(Y, f, w, **kw):
    """All defaults but the noise weights (one compiled program shared by most tests)."""
    return fit(Y, f, weights=w, **kw)


def _box_prior(mass, dtype=jnp.float64):
    return sj.box(jnp.asarray(mass, dtype), jnp.ones((3,), dtype))


def test_defaults_recover_truth_from_noiseless_data(rng):
    # default prior = the (consistent) least-squares body = the truth, so the default γ > 0
    # does not bias the fit
    truth, Y, f, w = _problem(rng, noise=0.0)
    res = _fit(Y, f, w)  # barrier is the default method
    assert bool(jnp.all(res.converged)) and bool(jnp.all(res.gamma > 0))
    assert bool(jnp.all(res.consistency.fully_consistent))
    assert float(jnp.max(sj.geodesic_distance(truth, res.inertia))) <= 1e-6


def test_vmap_and_broadcast_leading_axes_match_the_flat_batch(rng):
    truth, Y, f, w = _problem(rng, noise=1.0)
    flat = _fit(Y, f, w)
    f2 = jnp.stack([f, f[::-1]], axis=1)  # (3, 2, N, 6): each body twice, second pair reversed

    def one(Y, f2):  # Y (N, 6, 10) is broadcast against f2's leading axis (2,)
        return _fit(Y, f2, w)

    res = jax.vmap(one)(Y, f2)
    assert res.inertia.batch_shape == (3, 2)
    assert res.objective.shape == res.converged.shape == res.condition_number.shape == (3, 2)
    np.testing.assert_allclose(res.inertia.params[:, 0], flat.inertia.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.objective[:, 0], flat.objective, rtol=1e-9)
    # body i's regressor with body (2 - i)'s wrenches: all bodies share one trajectory, so
    # this is body (2 - i)'s fit again
    np.testing.assert_allclose(
        res.inertia.params[:, 1], flat.inertia.params[::-1], rtol=1e-7, atol=1e-9
    )
    assert bool(jnp.all(res.converged))


def test_float32_in_float32_out_and_consistent(rng):
    truth, Y, f, w = _problem(rng, noise=1.0, dtype=jnp.float32)
    res = _fit(Y, f, w)
    for x in (res.inertia.params, res.objective, res.residual, res.gamma, res.condition_number):
        assert x.dtype == jnp.float32
    assert bool(jnp.all(res.consistency.fully_consistent))
    assert bool(jnp.all(res.consistency.min_eig_pseudo_inertia > 0))
    ref = _fit(Y.astype(float), f.astype(float), w.astype(float))
    np.testing.assert_allclose(res.objective, ref.objective, rtol=1e-3)


def test_adam_reaches_the_lbfgs_optimum(rng):
    truth, Y, f, w = _problem(rng, noise=1.0)
    a = _fit(Y, f, w)
    b = _fit(Y, f, w, optimizer="adam")
    assert bool(jnp.all(b.converged))
    rel = jnp.abs(b.objective - a.objective) / jnp.abs(a.objective)
    assert float(jnp.max(rel)) <= 1e-6, rel


def test_default_prior_is_least_squares_when_that_is_consistent(rng):
    truth, Y, f, w = _problem(rng, noise=0.01)
    res = _fit(Y, f, w)
    Yw = np.asarray(Y * jnp.sqrt(w)[:, None]).reshape(N_BODIES, -1, 10)
    fw = np.asarray(f * jnp.sqrt(w)).reshape(N_BODIES, -1)
    ls = np.stack([np.linalg.lstsq(Yw[i], fw[i], rcond=None)[0] for i in range(N_BODIES)])
    assert bool(
        jnp.all(sj.physical_consistency(sj.RigidBodyInertia(jnp.asarray(ls))).fully_consistent)
    )
    np.testing.assert_allclose(res.prior.params, ls, rtol=1e-8, atol=1e-10)
    # data term and regulariser are both minimal at the least-squares body
    np.testing.assert_allclose(res.inertia.params, ls, rtol=1e-6, atol=1e-8)
    assert bool(jnp.all(res.gamma > 0)) and bool(jnp.all(res.converged))


def test_gradients_in_prior_and_gamma_match_finite_differences(rng):
    truth, Y, f, w = _problem(rng, noise=1.0)
    masses = truth.mass * 1.1

    def out(masses, gamma):
        res = fit(Y, f, weights=w, prior=_box_prior(masses), gamma=gamma)
        return jnp.sum(res.inertia.params[:, 4:] ** 2)  # rotational inertia, least determined

    gamma = jnp.full((N_BODIES,), 0.5)
    gm, gg = jax.grad(out, argnums=(0, 1))(masses, gamma)
    assert bool(jnp.all(jnp.isfinite(gm))) and float(jnp.abs(gg).max()) > 0
    for x, g, argnum in ((masses, gm, 0), (gamma, gg, 1)):
        d = jnp.asarray(rng.normal(size=x.shape))
        eps = 1e-4 * float(jnp.max(jnp.abs(x)))
        args_p = [masses, gamma]
        args_m = [masses, gamma]
        args_p[argnum] = x + eps * d
        args_m[argnum] = x - eps * d
        fd = (out(*args_p) - out(*args_m)) / (2 * eps)
        np.testing.assert_allclose(jnp.sum(g * d), fd, rtol=1e-3)


def test_bad_input_is_rejected_with_clear_messages(rng):
    truth, Y, f, w = _problem(rng, noise=1.0)
    with pytest.raises(ValueError, match=r"Y: expected shape \(\.\.\., N, 6, 10\)"):
        fit(Y[0, 0], f[0, 0])
    with pytest.raises(ValueError, match="N=24 samples .* but f has N=23"):
        fit(Y, f[:, :23])
    with pytest.raises(ValueError, match="batch shapes do not broadcast"):
        fit(Y, f[:2])
    with pytest.raises(ValueError, match="weights: expected shape"):
        fit(Y, f, weights=jnp.ones((5, 6)))
    with pytest.raises(ValueError, match="non-negative"):
        fit(Y, f, weights=-w)
    with pytest.raises(TypeError, match="dtype"):
        fit(Y, f.astype(jnp.float32))
    with pytest.raises(ValueError, match="gamma"):
        fit(Y, f, gamma=-1.0)
    with pytest.raises(ValueError, match="batch shapes do not broadcast"):
        fit(Y, f, gamma=jnp.ones(4))
    with pytest.raises(TypeError, match="prior"):
        fit(Y, f, prior=truth.params)
    bad = sj.RigidBodyInertia(truth.params.at[1, 0].set(-1.0))
    with pytest.raises(ValueError, match=r"prior: .*body \(1,\) is not"):
        fit(Y, f, prior=bad)
    with pytest.raises(ValueError, match="batch shapes do not broadcast"):
        fit(Y, f, prior=_box_prior(jnp.ones(2)))
    for kw in ({"optimizer": "sgd"}, {"init": "zeros"}, {"method": "newton"}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            fit(Y, f, **kw)
