"""General 6×6 spatial matrices: ``transform_spatial_matrix`` and the ``[v; ω]`` reordering.

References are explicit NumPy 6×6 matrices: the Featherstone motion transform
``X = [[E, 0], [−E r×, E]]`` assembled here, ``inv(X).T @ M @ inv(X)`` with a
NumPy inverse, and a permutation matrix for the reordering.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, np_skew, raises_argument, random_rotations
from hypothesis import given
from hypothesis import strategies as st
from jax.test_util import check_grads

from spatialjax import (
    ArgumentError,
    ArgumentTypeError,
    Plx,
    Plxb,
    RigidBodyInertia,
    force_cross,
    motion_cross,
)
from spatialjax._spatial_matrix import (
    swap_linear_angular,
    swap_linear_angular_vector,
    transform_spatial_matrix,
)


def np_motion_matrix(E, r):
    """Featherstone ``plx(E, r)``: ``[[E, 0], [−E r×, E]]``."""
    Z = np.zeros_like(E)
    top = np.concatenate([E, Z], -1)
    bottom = np.concatenate([-E @ np_skew(r), E], -1)
    return np.concatenate([top, bottom], -2)


def np_congruence(M, X6):
    Xi = np.linalg.inv(X6)
    return np.swapaxes(Xi, -1, -2) @ M @ Xi


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("kind", ["plx", "plxb"])
def test_transform_matches_numpy_congruence(batch, kind, rng):
    E = random_rotations(rng, batch)
    r = rng.normal(size=batch + (3,))
    M = rng.normal(size=batch + (6, 6))  # not symmetric: the congruence is still exact
    if kind == "plx":
        X, X6 = Plx(jnp.asarray(E), jnp.asarray(r)), np_motion_matrix(E, r)
    else:  # Plxb(R_AB, r) is plx(R_AB.T, r)
        X, X6 = Plxb(jnp.asarray(E), jnp.asarray(r)), np_motion_matrix(np.swapaxes(E, -1, -2), r)
    out = transform_spatial_matrix(jnp.asarray(M), X)
    assert out.shape == batch + (6, 6)
    np.testing.assert_allclose(out, np_congruence(M, X6), atol=1e-12, rtol=1e-12)
    back = transform_spatial_matrix(jnp.asarray(M), X, inverse=True)
    np.testing.assert_allclose(back, np.swapaxes(X6, -1, -2) @ M @ X6, atol=1e-12, rtol=1e-12)


def test_transform_broadcasts_batches(rng):
    E = random_rotations(rng, (4, 1))
    r = rng.normal(size=(4, 1, 3))
    M = rng.normal(size=(5, 6, 6))
    out = transform_spatial_matrix(jnp.asarray(M), Plx(jnp.asarray(E), jnp.asarray(r)))
    assert out.shape == (4, 5, 6, 6)
    ref = np_congruence(M[None], np_motion_matrix(E, r))
    np.testing.assert_allclose(out, ref, atol=1e-12)


def test_round_trip_and_composition(rng):
    E1, E2 = random_rotations(rng, (7,)), random_rotations(rng, (7,))
    X1 = Plx(jnp.asarray(E1), jnp.asarray(rng.normal(size=(7, 3))))
    X2 = Plx(jnp.asarray(E2), jnp.asarray(rng.normal(size=(7, 3))))
    M = jnp.asarray(rng.normal(size=(7, 6, 6)))
    there = transform_spatial_matrix(M, X1)
    np.testing.assert_allclose(transform_spatial_matrix(there, X1, inverse=True), M, atol=1e-12)
    np.testing.assert_allclose(transform_spatial_matrix(there, X1.inverse()), M, atol=1e-12)
    # A -> B -> C equals the composed transform X2 @ X1
    two_steps = transform_spatial_matrix(transform_spatial_matrix(M, X1), X2)
    np.testing.assert_allclose(transform_spatial_matrix(M, X2 @ X1), two_steps, atol=1e-12)


@pytest.mark.parametrize("kind", ["plx", "plxb"])
def test_rigid_body_matrix_equals_inertia_transform(kind, rng):
    n = 20
    m = rng.uniform(0.5, 3.0, size=n)
    c = rng.normal(size=(n, 3))
    A = rng.normal(size=(n, 3, 3))
    I_c = A @ np.swapaxes(A, -1, -2) + 0.1 * np.eye(3)
    body = RigidBodyInertia.from_mass_com_inertia(jnp.asarray(m), jnp.asarray(c), jnp.asarray(I_c))
    E = jnp.asarray(random_rotations(rng, (n,)))
    r = jnp.asarray(rng.normal(size=(n, 3)))
    X = Plx(E, r) if kind == "plx" else Plxb(E, r)
    np.testing.assert_allclose(
        transform_spatial_matrix(body.as_matrix(), X), body.transform(X).as_matrix(), atol=1e-12
    )


def test_kinetic_energy_and_power_invariant(rng):
    """``v_Aᵀ M_A v_A == v_Bᵀ M_B v_B`` for ``v_B = X v_A``; momentum maps as a force."""
    n = 50
    X = Plx(jnp.asarray(random_rotations(rng, (n,))), jnp.asarray(rng.normal(size=(n, 3))))
    A = rng.normal(size=(n, 6, 6))
    M_A = jnp.asarray(A @ np.swapaxes(A, -1, -2))
    v_A = jnp.asarray(rng.normal(size=(n, 6)))
    M_B = transform_spatial_matrix(M_A, X)
    v_B = X.apply_motion(v_A)
    ke_A = jnp.einsum("ni,nij,nj->n", v_A, M_A, v_A)
    ke_B = jnp.einsum("ni,nij,nj->n", v_B, M_B, v_B)
    np.testing.assert_allclose(ke_B, ke_A, rtol=1e-11)
    h_A = jnp.einsum("nij,nj->ni", M_A, v_A)
    h_B = jnp.einsum("nij,nj->ni", M_B, v_B)
    np.testing.assert_allclose(h_B, X.apply_force(h_A), atol=1e-10)


def test_symmetric_input_stays_symmetric(rng):
    A = rng.normal(size=(6, 6))
    M = jnp.asarray(A + A.T)
    X = Plx(jnp.asarray(random_rotations(rng, ())), jnp.asarray(rng.normal(size=3)))
    out = np.asarray(transform_spatial_matrix(M, X))
    np.testing.assert_allclose(out, out.T, atol=1e-13)


def test_swap_linear_angular_is_permutation(rng):
    P = np.zeros((6, 6))
    P[:3, 3:] = np.eye(3)
    P[3:, :3] = np.eye(3)
    M = rng.normal(size=(2, 6, 6))
    v = rng.normal(size=(2, 6))
    np.testing.assert_array_equal(swap_linear_angular(jnp.asarray(M)), P @ M @ P)
    np.testing.assert_array_equal(swap_linear_angular(swap_linear_angular(jnp.asarray(M))), M)
    np.testing.assert_array_equal(swap_linear_angular_vector(jnp.asarray(v)), v @ P.T)
    # a [v; ω] matrix applied to a [v; ω] vector equals the [ω; v] version
    Mv = swap_linear_angular(jnp.asarray(M)) @ swap_linear_angular_vector(jnp.asarray(v))[..., None]
    np.testing.assert_allclose(
        Mv[..., 0], swap_linear_angular_vector(jnp.einsum("nij,nj->ni", M, v))
    )


def test_swap_gives_pinocchio_order_of_rigid_inertia(rng):
    """Pinocchio's ``Inertia.matrix()`` is ``[v; ω]``: ``[[m 1, −m c×], [m c×, I_o]]``."""
    pin = pytest.importorskip("pinocchio")
    c = rng.normal(size=3)
    I_c = np.diag([0.1, 0.2, 0.25])
    body = RigidBodyInertia.from_mass_com_inertia(1.7, jnp.asarray(c), jnp.asarray(I_c))
    ref = pin.Inertia(1.7, c, I_c).matrix()
    np.testing.assert_allclose(swap_linear_angular(body.as_matrix()), ref, atol=1e-12)


# module level: one compilation per (batch shape, inverse) for the property sweep below (a
# fresh eager ``jax.vmap`` of a fresh lambda compiled every primitive again in every example)
_transform_jit = jax.jit(transform_spatial_matrix, static_argnames="inverse")
_transform_vmap = jax.jit(
    lambda M, X, inverse: jax.vmap(lambda m, x: transform_spatial_matrix(m, x, inverse=inverse))(
        M, X
    ),
    static_argnames="inverse",
)


@given(
    batch=st.sampled_from(BATCH_SHAPES),
    seed=st.integers(0, 2**32 - 1),
    inverse=st.booleans(),
)
def test_property_float32_jit_vmap(batch, seed, inverse):
    rng = np.random.default_rng(seed)
    E = random_rotations(rng, batch).astype(np.float32)
    r = rng.normal(size=batch + (3,)).astype(np.float32)
    M = rng.normal(size=batch + (6, 6)).astype(np.float32)
    X = Plx(jnp.asarray(E), jnp.asarray(r))
    out = _transform_jit(jnp.asarray(M), X, inverse=inverse)
    assert out.dtype == jnp.float32
    X6 = np_motion_matrix(E.astype(np.float64), r.astype(np.float64))
    ref = np.swapaxes(X6, -1, -2) @ M @ X6 if inverse else np_congruence(M.astype(np.float64), X6)
    np.testing.assert_allclose(out, ref, atol=2e-4 * max(1.0, np.abs(ref).max()))
    if batch:
        flatM = jnp.asarray(M.reshape((-1, 6, 6)))
        flatX = Plx(jnp.asarray(E.reshape((-1, 3, 3))), jnp.asarray(r.reshape((-1, 3))))
        vm = _transform_vmap(flatM, flatX, inverse=inverse)
        np.testing.assert_allclose(vm.reshape(out.shape), out, atol=1e-5 * np.abs(out).max())


def test_gradients(rng):
    E = jnp.asarray(random_rotations(rng, (2,)))
    r = jnp.asarray(rng.normal(size=(2, 3)))
    M = jnp.asarray(rng.normal(size=(2, 6, 6)))
    f = jax.jit(lambda M, r: transform_spatial_matrix(M, Plx(E, r)))
    g = jax.jit(lambda M, r: transform_spatial_matrix(M, Plxb(E, r), inverse=True))
    check_grads(f, (M, r), order=1)
    check_grads(g, (M, r), order=1)
    check_grads(jax.jit(swap_linear_angular), (M,), order=1)


def test_bad_inputs():
    X = Plx.identity()
    with raises_argument(ArgumentError, "M"):
        transform_spatial_matrix(jnp.zeros((6, 5)), X)
    with raises_argument(ArgumentTypeError, "X"):
        transform_spatial_matrix(jnp.zeros((6, 6)), np.eye(6))
    with raises_argument(ArgumentTypeError, "X"):
        transform_spatial_matrix(jnp.zeros((6, 6), jnp.float32), Plx.identity(dtype=jnp.float64))
    with raises_argument(ArgumentError, "X"):
        transform_spatial_matrix(jnp.zeros((4, 6, 6)), Plx.identity((3,)))
    with raises_argument(ArgumentTypeError, "M"):
        swap_linear_angular(np.zeros((6, 6), dtype=np.int32))
    with raises_argument(ArgumentError, "v"):
        swap_linear_angular_vector(jnp.zeros((6, 3)))


def test_matrix_form_times_vector_is_the_product():
    """``motion_cross(v) @ m == motion_cross(v, m)``, the same for forces (RBDA eqs. 2.31-2.32)."""
    rng = np.random.default_rng(3)
    v, m = (jnp.asarray(rng.normal(size=(4, 6))) for _ in range(2))
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", motion_cross(v), m), motion_cross(v, m), atol=1e-14
    )
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", force_cross(v), m), force_cross(v, m), atol=1e-14
    )
