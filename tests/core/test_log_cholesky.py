"""Log-Cholesky maps: Pinocchio's ``LogCholeskyParameters``, the closed form, round trips.

``θ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3]``, ``J = U Uᵀ`` with
``U = e^α [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spatialjax import RigidBodyInertia, log_cholesky_to_vector, vector_to_log_cholesky

N = 1000


def np_U(theta):
    """The upper-triangular factor, written out from the convention table."""
    theta = np.asarray(theta, np.float64)
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = np.moveaxis(theta, -1, 0)
    z, o = np.zeros_like(a), np.ones_like(a)
    U = np.stack(
        [
            np.stack([np.exp(d1), s12, s13, t1], -1),
            np.stack([z, np.exp(d2), s23, t2], -1),
            np.stack([z, z, np.exp(d3), t3], -1),
            np.stack([z, z, z, o], -1),
        ],
        -2,
    )
    return np.exp(a)[..., None, None] * U


def np_J(theta):
    U = np_U(theta)
    return U @ np.swapaxes(U, -1, -2)


def np_params_from_J(J):
    S, h, m = J[..., :3, :3], J[..., :3, 3], J[..., 3, 3]
    I = np.trace(S, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - S
    sym = np.stack(
        [I[..., 0, 0], I[..., 0, 1], I[..., 1, 1], I[..., 0, 2], I[..., 1, 2], I[..., 2, 2]], -1
    )
    return np.concatenate([m[..., None], h, sym], -1)


def random_theta(rng, shape, scale=0.5):
    return scale * rng.normal(size=tuple(shape) + (10,))


def assert_rows_close(actual, expected, tol):
    actual = np.asarray(actual, np.float64).reshape(-1, np.shape(expected)[-1])
    expected = np.asarray(expected, np.float64).reshape(-1, np.shape(expected)[-1])
    scale = np.maximum(1.0, np.max(np.abs(expected), axis=-1))
    err = np.max(np.abs(actual - expected), axis=-1) / scale
    assert np.max(err) <= tol, f"worst relative error {np.max(err):.3e}"


def test_forward_map_matches_pinocchio():
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(11)
    theta = random_theta(rng, (N,), scale=1.0)
    expected = np.stack([pin.LogCholeskyParameters(t).toDynamicParameters() for t in theta])
    assert_rows_close(log_cholesky_to_vector(jnp.asarray(theta)), expected, 1e-12)
    body = RigidBodyInertia.from_log_cholesky(jnp.asarray(theta))
    J_pin = np.stack([pin.LogCholeskyParameters(t).toPseudoInertia().toMatrix() for t in theta])
    assert_rows_close(body.pseudo_inertia(), J_pin, 1e-12)


def test_forward_map_matches_closed_form_U_Ut(rng):
    theta = random_theta(rng, (64,), scale=1.0)
    assert_rows_close(
        log_cholesky_to_vector(jnp.asarray(theta)), np_params_from_J(np_J(theta)), 1e-12
    )


def test_mass_and_com(rng):
    """``m = e^{2α}`` and ``c = t``."""
    theta = random_theta(rng, (64,), scale=1.0)
    body = RigidBodyInertia.from_log_cholesky(jnp.asarray(theta))
    np.testing.assert_allclose(body.mass, np.exp(2 * theta[:, 0]), rtol=1e-15)
    np.testing.assert_allclose(body.com, theta[:, 7:], rtol=1e-14, atol=1e-15)


def test_theta_zero_is_unit_pseudo_inertia():
    """``θ = 0``: ``U = 1`` so ``J = 1₄``: m = 1, c = 0, S = 1₃, I = 2·1₃."""
    body = RigidBodyInertia.from_log_cholesky(jnp.zeros(10))
    np.testing.assert_array_equal(body.pseudo_inertia(), np.eye(4))
    np.testing.assert_array_equal(body.to_vector(), [1, 0, 0, 0, 2, 0, 2, 0, 0, 2])
    np.testing.assert_array_equal(body.to_log_cholesky(), np.zeros(10))


def test_round_trip_theta(rng):
    """``to_log_cholesky(from_log_cholesky(θ)) == θ`` (the parameterisation is one-to-one)."""
    theta = random_theta(rng, (N,), scale=0.5)
    back = RigidBodyInertia.from_log_cholesky(jnp.asarray(theta)).to_log_cholesky()
    np.testing.assert_allclose(back, theta, rtol=0, atol=1e-12)
    back = vector_to_log_cholesky(log_cholesky_to_vector(jnp.asarray(theta)))
    np.testing.assert_allclose(back, theta, rtol=0, atol=1e-12)


def test_round_trip_consistent_body(rng):
    """Every body with ``J ≻ 0`` has a θ: point-mass clouds (≥ 4 points in general position)."""
    k = 6
    masses = rng.uniform(0.2, 2.0, size=(64, k))
    pos = 0.5 * rng.normal(size=(64, k, 3)) + rng.normal(size=(64, 1, 3))
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))
    theta = body.to_log_cholesky()
    assert np.all(np.isfinite(theta))
    # reconstruct J from θ in NumPy: equals Σ m x̃ x̃ᵀ
    homog = np.concatenate([pos, np.ones((64, k, 1))], -1)
    J = np.einsum("nk,nki,nkj->nij", masses, homog, homog)
    assert_rows_close(np_J(np.asarray(theta)), J, 1e-12)
    assert_rows_close(RigidBodyInertia.from_log_cholesky(theta).params, body.params, 1e-12)


@pytest.mark.parametrize(
    "params",
    [
        [-1.0, 0, 0, 0, 1, 0, 1, 0, 0, 1],  # negative mass
        [1.0, 0, 0, 0, 1, 0, 0, 0, 0, 0],  # I = diag(1, 0, 0), triangle inequality fails
        [1.0, 0, 0, 0, 3, 0, 1, 0, 0, 1],  # I = diag(3, 1, 1): S_xx = −0.5 < 0
        [1.0, 0, 0, 0, 1, 0, 3, 0, 0, 1],  # violation in the y direction
        [1.0, 0, 0, 0, 1, 0, 1, 0, 0, 3],  # violation in the z direction
        [1.0, 1, 0, 0, 1, 0, 1, 0, 0, 1],  # S = ½·1, c = (1, 0, 0): S_c not PSD
    ],
)
def test_inconsistent_input_gives_nan(params):
    """Documented: outside ``J ≻ 0`` the affected entries are NaN (never a wrong finite θ)."""
    theta = vector_to_log_cholesky(jnp.asarray(params))
    assert np.any(np.isnan(theta)), theta
    # and under jit the same (no raising)
    assert np.any(np.isnan(jax.jit(vector_to_log_cholesky)(jnp.asarray(params))))


def test_finite_gradients_at_theta_zero():
    """Both maps are smooth at ``θ = 0`` (``J = 1₄``) and their Jacobians are inverse."""
    zero = jnp.zeros(10)
    fwd = jax.jit(jax.jacfwd(log_cholesky_to_vector))(zero)
    rev = jax.jit(jax.jacrev(log_cholesky_to_vector))(zero)
    np.testing.assert_allclose(fwd, rev, atol=1e-15)
    inv = jax.jit(jax.jacfwd(vector_to_log_cholesky))(jnp.array([1.0, 0, 0, 0, 2, 0, 2, 0, 0, 2]))
    assert np.all(np.isfinite(fwd)) and np.all(np.isfinite(inv))
    np.testing.assert_allclose(inv @ fwd, np.eye(10), atol=1e-13)
    # forward Jacobian at 0 from the closed form: dm/dα = 2, dh/dt = 1, ...
    np.testing.assert_allclose(fwd[0], [2, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(fwd[1:4, 7:10], np.eye(3))


@given(
    seed=st.integers(0, 2**31 - 1),
    shape=st.sampled_from([(), (1,), (3, 1, 2, 1)]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_batch_shapes_and_dtype(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    theta = random_theta(rng, shape, scale=0.3)
    pi = _fwd(jnp.asarray(theta, dtype))
    back = _inv(pi)
    assert pi.dtype == dtype and back.dtype == dtype
    assert pi.shape == shape + (10,) and back.shape == shape + (10,)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    assert_rows_close(pi, np_params_from_J(np_J(theta)), tol)
    np.testing.assert_allclose(back, theta, atol=10 * tol)


_fwd = jax.jit(log_cholesky_to_vector)
_inv = jax.jit(vector_to_log_cholesky)


def test_jit_vmap_equal_eager(rng):
    theta = jnp.asarray(random_theta(rng, (3, 1, 2, 1)))
    eager = log_cholesky_to_vector(theta)
    np.testing.assert_allclose(_fwd(theta), eager, rtol=1e-14)
    np.testing.assert_allclose(jax.jit(jax.vmap(log_cholesky_to_vector))(theta), eager, rtol=1e-14)
    eager_inv = vector_to_log_cholesky(eager)
    np.testing.assert_allclose(_inv(eager), eager_inv, rtol=1e-13, atol=1e-14)
    vm = jax.jit(jax.vmap(vector_to_log_cholesky))(eager)
    np.testing.assert_allclose(vm, eager_inv, atol=1e-14)


@pytest.mark.parametrize("fn", [log_cholesky_to_vector, vector_to_log_cholesky])
def test_bad_input(fn):
    name = "theta" if fn is log_cholesky_to_vector else "pi"
    with pytest.raises(
        ValueError, match=rf"{name}: expected shape \(\.\.\., 10\), got shape \(9,\)"
    ):
        fn(jnp.zeros(9))
    with pytest.raises(TypeError, match=f"{name}.*floating"):
        fn(np.zeros(10, dtype=np.int64))
