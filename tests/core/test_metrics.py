"""Pseudo-inertia metrics: ``log_det_divergence`` and ``geodesic_distance``.

References are computed here with NumPy/SciPy from the definitions
``D(J‖J0) = tr(J0⁻¹ J) − log det J + log det J0 − 4`` and
``d(J1, J2) = sqrt(½ Σ log² λᵢ(J1⁻¹ J2))``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from helpers import BATCH_SHAPES, raises_argument, random_rotations
from hypothesis import given
from hypothesis import strategies as st

from spatialjax import (
    ArgumentError,
    ArgumentTypeError,
    RigidBodyInertia,
    geodesic_distance,
    log_det_divergence,
)

N = 64


def random_J(rng, shape, k=6):
    """Positive definite pseudo-inertias ``Σ mᵢ x̃ᵢ x̃ᵢᵀ`` of point-mass clouds."""
    shape = tuple(shape)
    masses = rng.uniform(0.2, 2.0, size=shape + (k,))
    pos = 0.5 * rng.normal(size=shape + (k, 3)) + rng.normal(size=shape + (1, 3))
    homog = np.concatenate([pos, np.ones(shape + (k, 1))], -1)
    return np.einsum("...k,...ki,...kj->...ij", masses, homog, homog)


def random_T(rng, shape):
    """Homogeneous rigid transforms ``[[R, p], [0, 1]]``."""
    shape = tuple(shape)
    T = np.zeros(shape + (4, 4))
    T[..., :3, :3] = random_rotations(rng, shape)
    T[..., :3, 3] = rng.normal(size=shape + (3,))
    T[..., 3, 3] = 1.0
    return T


def sandwich(T, J):
    return T @ J @ np.swapaxes(T, -1, -2)


def np_geodesic(J1, J2):
    lam = np.linalg.eigvals(np.linalg.inv(J1) @ J2).real
    return np.sqrt(0.5 * np.sum(np.log(lam) ** 2, axis=-1))


def np_geodesic_scipy(J1, J2):
    """Same via the generalised symmetric eigenproblem ``J2 v = λ J1 v``."""
    lam = scipy.linalg.eigh(J2, J1, eigvals_only=True)
    return np.sqrt(0.5 * np.sum(np.log(lam) ** 2))


def np_logdet_div(J, J0):
    return (
        np.trace(np.linalg.solve(J0, J), axis1=-2, axis2=-1)
        - np.linalg.slogdet(J)[1]
        + np.linalg.slogdet(J0)[1]
        - 4.0
    )


def np_geodesic_grad_J2(J1, J2):
    """``∂d/∂J2 = L⁻ᵀ log(M) M⁻¹ L⁻¹ / (2d)`` with ``J1 = L Lᵀ``, ``M = L⁻¹ J2 L⁻ᵀ``."""
    L = np.linalg.cholesky(J1)
    Li = np.linalg.inv(L)
    M = Li @ J2 @ Li.T
    lam, V = np.linalg.eigh(M)
    G = V @ np.diag(np.log(lam) / lam) @ V.T
    d = np.sqrt(0.5 * np.sum(np.log(lam) ** 2))
    return Li.T @ G @ Li / (2 * d)


# ---------------------------------------------------------------------------
# values against the definitions
# ---------------------------------------------------------------------------


def test_geodesic_matches_brute_force(rng):
    J1, J2 = random_J(rng, (N,)), random_J(rng, (N,))
    got = np.asarray(geodesic_distance(jnp.asarray(J1), jnp.asarray(J2)))
    np.testing.assert_allclose(got, np_geodesic(J1, J2), rtol=1e-10)
    np.testing.assert_allclose(
        got, [np_geodesic_scipy(a, b) for a, b in zip(J1, J2, strict=True)], rtol=1e-10
    )


def test_geodesic_closed_form_for_commuting_inputs():
    """Diagonal inputs: ``d = sqrt(½ Σ log²(bᵢ / aᵢ))``."""
    a = np.array([1.0, 2.0, 0.5, 3.0])
    b = np.array([2.0, 2.0, 4.0, 1.0])
    expected = np.sqrt(0.5 * np.sum(np.log(b / a) ** 2))
    got = geodesic_distance(jnp.diag(jnp.asarray(a)), jnp.diag(jnp.asarray(b)))
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    np.testing.assert_allclose(
        geodesic_distance(jnp.eye(4), 2.0 * jnp.eye(4)), np.log(2.0) * np.sqrt(2.0), rtol=1e-14
    )


def test_log_det_divergence_matches_definition(rng):
    J, J0 = random_J(rng, (N,)), random_J(rng, (N,))
    got = np.asarray(log_det_divergence(jnp.asarray(J), jnp.asarray(J0)))
    np.testing.assert_allclose(got, np_logdet_div(J, J0), rtol=1e-10)
    assert np.all(got >= 0)


def test_log_det_divergence_zero_at_prior_and_nonnegative(rng):
    J0 = random_J(rng, (N,))
    np.testing.assert_allclose(
        log_det_divergence(jnp.asarray(J0), jnp.asarray(J0)), 0.0, atol=1e-12
    )
    # nonnegative also on small perturbations, where cancellation is worst
    J = J0 + 1e-4 * np.einsum("n,ij->nij", np.trace(J0, axis1=-2, axis2=-1), np.eye(4))
    assert np.all(np.asarray(log_det_divergence(jnp.asarray(J), jnp.asarray(J0))) >= 0)
    assert np.all(np.asarray(log_det_divergence(jnp.asarray(J0), jnp.asarray(J))) >= 0)


def test_log_det_divergence_approximates_squared_geodesic_nearby(rng):
    """Both are ``½‖J0^{-½} ΔJ J0^{-½}‖²_F`` to second order."""
    J0 = random_J(rng, (N,))
    A = rng.normal(size=(N, 4, 4))
    L = np.linalg.cholesky(J0)
    dJ = 1e-4 * L @ (A + np.swapaxes(A, -1, -2)) @ np.swapaxes(L, -1, -2)
    D = np.asarray(log_det_divergence(jnp.asarray(J0 + dJ), jnp.asarray(J0)))
    d = np.asarray(geodesic_distance(jnp.asarray(J0), jnp.asarray(J0 + dJ)))
    np.testing.assert_allclose(D / d**2, 1.0, rtol=1e-2)


# ---------------------------------------------------------------------------
# invariances and metric axioms
# ---------------------------------------------------------------------------


def test_geodesic_symmetric_and_zero_on_diagonal(rng):
    J1, J2 = jnp.asarray(random_J(rng, (N,))), jnp.asarray(random_J(rng, (N,)))
    np.testing.assert_allclose(geodesic_distance(J1, J2), geodesic_distance(J2, J1), rtol=1e-10)
    np.testing.assert_array_equal(geodesic_distance(J1, J1), 0.0)
    assert np.all(np.asarray(geodesic_distance(J1, J2)) > 0)


def test_invariance_under_common_frame_change(rng):
    J1, J2, T = random_J(rng, (N,)), random_J(rng, (N,)), random_T(rng, (N,))
    a, b = jnp.asarray(J1), jnp.asarray(J2)
    ta, tb = jnp.asarray(sandwich(T, J1)), jnp.asarray(sandwich(T, J2))
    np.testing.assert_allclose(geodesic_distance(ta, tb), geodesic_distance(a, b), rtol=1e-9)
    np.testing.assert_allclose(log_det_divergence(ta, tb), log_det_divergence(a, b), rtol=1e-9)
    # the metric is affine invariant: any invertible T, not only rigid ones
    G = rng.normal(size=(N, 4, 4)) + 3 * np.eye(4)
    ga, gb = jnp.asarray(sandwich(G, J1)), jnp.asarray(sandwich(G, J2))
    np.testing.assert_allclose(geodesic_distance(ga, gb), geodesic_distance(a, b), rtol=1e-8)


def test_invariance_under_frame_change_of_bodies(rng):
    """Same through ``RigidBodyInertia.transform`` (bodies are accepted directly)."""
    from spatialjax import Plx

    b1 = RigidBodyInertia.from_pseudo_inertia(jnp.asarray(random_J(rng, (N,))))
    b2 = RigidBodyInertia.from_pseudo_inertia(jnp.asarray(random_J(rng, (N,))))
    X = Plx(jnp.asarray(random_rotations(rng, (N,))), jnp.asarray(rng.normal(size=(N, 3))))
    np.testing.assert_allclose(
        geodesic_distance(b1.transform(X), b2.transform(X)), geodesic_distance(b1, b2), rtol=1e-9
    )
    np.testing.assert_allclose(
        geodesic_distance(b1, b2), geodesic_distance(b1.pseudo_inertia(), b2.pseudo_inertia())
    )
    np.testing.assert_allclose(
        log_det_divergence(b1.transform(X), b2.transform(X)), log_det_divergence(b1, b2), rtol=1e-9
    )


def test_geodesic_invariant_under_common_scaling(rng):
    J1, J2 = random_J(rng, (N,)), random_J(rng, (N,))
    c = rng.uniform(0.01, 100.0, size=(N, 1, 1))
    np.testing.assert_allclose(
        geodesic_distance(jnp.asarray(c * J1), jnp.asarray(c * J2)),
        geodesic_distance(jnp.asarray(J1), jnp.asarray(J2)),
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        log_det_divergence(jnp.asarray(c * J1), jnp.asarray(c * J2)),
        log_det_divergence(jnp.asarray(J1), jnp.asarray(J2)),
        rtol=1e-9,
    )


def test_triangle_inequality(rng):
    A, B, C = (jnp.asarray(random_J(rng, (N,))) for _ in range(3))
    ab, bc, ac = geodesic_distance(A, B), geodesic_distance(B, C), geodesic_distance(A, C)
    assert np.all(np.asarray(ac) <= np.asarray(ab + bc) * (1 + 1e-12))
    # a point on the geodesic makes it tight: J(½) = A^{½} (A^{-½} C A^{-½})^{½} A^{½}
    A0, C0 = np.asarray(A[0]), np.asarray(C[0])
    Ah = scipy.linalg.sqrtm(A0).real
    Aih = np.linalg.inv(Ah)
    mid = Ah @ scipy.linalg.sqrtm(Aih @ C0 @ Aih).real @ Ah
    mid = jnp.asarray(0.5 * (mid + mid.T))
    np.testing.assert_allclose(
        geodesic_distance(A[0], mid), 0.5 * geodesic_distance(A[0], C[0]), rtol=1e-8
    )
    np.testing.assert_allclose(
        geodesic_distance(A[0], mid) + geodesic_distance(mid, C[0]),
        geodesic_distance(A[0], C[0]),
        rtol=1e-8,
    )


def test_not_positive_definite_gives_nan():
    bad = jnp.diag(jnp.array([1.0, -1.0, 1.0, 1.0]))
    assert np.isnan(geodesic_distance(bad, jnp.eye(4)))
    assert np.isnan(geodesic_distance(jnp.eye(4), bad))
    assert np.isnan(log_det_divergence(bad, jnp.eye(4)))
    assert np.isnan(log_det_divergence(jnp.eye(4), bad))


# ---------------------------------------------------------------------------
# gradients at the singular points
# ---------------------------------------------------------------------------

_grad_geo = jax.jit(jax.grad(geodesic_distance, argnums=(0, 1)))
_grad_div = jax.jit(jax.grad(log_det_divergence, argnums=(0, 1)))
# through the 10-vector parameters of a body; defined once so both cases share its compile
_grad_geo_params = jax.jit(
    jax.grad(lambda p, q: geodesic_distance(RigidBodyInertia(p), RigidBodyInertia(q)))
)


@pytest.mark.parametrize("where", ["random", "identity"])
def test_gradients_at_equal_inputs_are_zero(rng, where):
    J = jnp.eye(4) if where == "identity" else jnp.asarray(random_J(rng, ()))
    for g in (*_grad_geo(J, J), *_grad_div(J, J)):
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, 0.0, atol=1e-7)
    # also through the 10-vector parameters of a body
    pi = RigidBodyInertia.from_pseudo_inertia(J).params
    g = _grad_geo_params(pi, pi)
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize("eps", [1e-3, 1e-6, 1e-9])
def test_gradients_near_equal_inputs_match_closed_form(rng, eps):
    J1 = random_J(rng, ())
    A = rng.normal(size=(4, 4))
    J2 = J1 + eps * np.trace(J1) * (A + A.T)
    g1, g2 = _grad_geo(jnp.asarray(J1), jnp.asarray(J2))
    assert np.all(np.isfinite(g1)) and np.all(np.isfinite(g2))
    expected = np_geodesic_grad_J2(J1, J2)
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(g2, expected, atol=1e-5 * scale)
    # by symmetry d(J1, J2) = d(J2, J1)
    np.testing.assert_allclose(g1, np_geodesic_grad_J2(J2, J1), atol=1e-5 * scale)
    for g in _grad_div(jnp.asarray(J2), jnp.asarray(J1)):
        assert np.all(np.isfinite(g))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0]),  # J1 = 1₄, repeated eigenvalues of J1⁻¹J2
        ([2.0, 2.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]),
        ([1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 2.0]),  # three eigenvalues exactly 1
    ],
)
def test_gradients_at_repeated_eigenvalues(a, b):
    """Commuting diagonal inputs: ``∂d/∂b = log(b/a)/(2 d b)``, ``∂d/∂a = −log(b/a)/(2 d a)``.

    (elementwise on the diagonals ``a`` of ``J1`` and ``b`` of ``J2``).
    """
    a, b = np.asarray(a), np.asarray(b)
    d = np.sqrt(0.5 * np.sum(np.log(b / a) ** 2))
    g1, g2 = _grad_geo(jnp.diag(jnp.asarray(a)), jnp.diag(jnp.asarray(b)))
    np.testing.assert_allclose(g2, np.diag(0.5 * np.log(b / a) / (b * d)), atol=1e-14)
    np.testing.assert_allclose(g1, np.diag(-0.5 * np.log(b / a) / (a * d)), atol=1e-14)
    # divergence D(J‖J0): ∂/∂J = J0⁻¹ − J⁻¹, ∂/∂J0 = J0⁻¹ − J0⁻¹ J J0⁻¹ (diagonal here)
    gJ, gJ0 = _grad_div(jnp.diag(jnp.asarray(b)), jnp.diag(jnp.asarray(a)))
    np.testing.assert_allclose(gJ, np.diag(1 / a - 1 / b), atol=1e-14)
    np.testing.assert_allclose(gJ0, np.diag(1 / a - b / a**2), atol=1e-14)


# ---------------------------------------------------------------------------
# batching, dtype, jit/vmap
# ---------------------------------------------------------------------------

_geo_jit = jax.jit(geodesic_distance)
_div_jit = jax.jit(log_det_divergence)


@given(
    seed=st.integers(0, 2**31 - 1),
    shape=st.sampled_from(BATCH_SHAPES),
    dtype=st.sampled_from([np.float32, np.float64]),
    single_first=st.booleans(),
)
def test_batch_shapes_broadcasting_and_dtype(seed, shape, dtype, single_first):
    rng = np.random.default_rng(seed)
    batched, single = random_J(rng, shape), random_J(rng, ())
    J1, J2 = (single, batched) if single_first else (batched, single)
    d = _geo_jit(jnp.asarray(J1, dtype), jnp.asarray(J2, dtype))
    D = _div_jit(jnp.asarray(J1, dtype), jnp.asarray(J2, dtype))
    assert d.dtype == dtype and D.dtype == dtype
    assert d.shape == shape and D.shape == shape
    B1, B2 = np.broadcast_to(J1, shape + (4, 4)), np.broadcast_to(J2, shape + (4, 4))
    ref_d, ref_D = np_geodesic(B1, B2), np_logdet_div(B1, B2)
    if dtype == np.float32:
        # float32's error in the eigenvalues of J1⁻¹J2 grows with eps (cond(J1⁻¹J2) + cond(J));
        # measured on 3,000 random pairs: at most 1.05× that for d, 0.21× (1 + |D|) for D
        lam = np.linalg.eigvals(np.linalg.inv(B1) @ B2).real
        cond = lam.max(-1) / lam.min(-1) + np.maximum(np.linalg.cond(B1), np.linalg.cond(B2))
        scale = 16 * np.finfo(np.float32).eps * cond
        atol_d, atol_D, rtol = scale, scale * (1 + np.abs(ref_D)), 2e-3
    else:
        atol_d = atol_D = 1e-8
        rtol = 1e-9
    np.testing.assert_array_less(np.abs(d - ref_d), atol_d + rtol * np.abs(ref_d))
    np.testing.assert_array_less(np.abs(D - ref_D), atol_D + rtol * np.abs(ref_D))


def test_jit_vmap_equal_eager(rng):
    shape = (3, 1, 2, 1)
    J1, J2 = jnp.asarray(random_J(rng, shape)), jnp.asarray(random_J(rng, shape))
    for fn, jitted in ((geodesic_distance, _geo_jit), (log_det_divergence, _div_jit)):
        eager = fn(J1, J2)
        np.testing.assert_allclose(jitted(J1, J2), eager, rtol=1e-12)
        np.testing.assert_allclose(jax.jit(jax.vmap(fn))(J1, J2), eager, rtol=1e-12)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [geodesic_distance, log_det_divergence])
def test_bad_input(fn):
    first, second = ("J1", "J2") if fn is geodesic_distance else ("J", "J0")
    with raises_argument(ArgumentError, first):
        fn(jnp.eye(3), jnp.eye(4))
    with raises_argument(ArgumentError, second):
        fn(jnp.eye(4), jnp.eye(6))
    with raises_argument(ArgumentError, second):
        fn(jnp.broadcast_to(jnp.eye(4), (2, 4, 4)), jnp.broadcast_to(jnp.eye(4), (3, 4, 4)))
    with raises_argument(ArgumentTypeError, first):
        fn(np.eye(4, dtype=int), jnp.eye(4))
    with raises_argument(ArgumentTypeError, second):
        fn(jnp.eye(4, dtype=jnp.float32), jnp.eye(4))
