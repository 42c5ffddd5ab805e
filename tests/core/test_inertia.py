"""``RigidBodyInertia`` and the free inertia functions.

The identities of Wensing, Kim & Slotine (2017), 6×6 checks, property tests and bad input.

Reference values come from closed forms evaluated here in NumPy: sums over point
masses (the mass integrals of Wensing et al. 2017 with a discrete density), the Featherstone 6×6
formula ``X* M X⁻¹`` with a NumPy matrix inverse, and the worked examples of seed
001. Pinocchio cross-checks live in ``test_inertia_pinocchio.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, np_skew, raises_argument, random_rotations
from hypothesis import given
from hypothesis import strategies as st

from spatialjax import (
    ArgumentError,
    ArgumentTypeError,
    Plx,
    Plxb,
    RigidBodyInertia,
    inertia_to_second_moment,
    parallel_axis,
    pseudo_inertia_sandwich,
    second_moment_to_inertia,
)

N_BODIES = 1000
N_SMALL = 64  # one small batch size: eager JAX compiles each primitive per shape

# ---------------------------------------------------------------------------
# NumPy references (independent of spatialjax)
# ---------------------------------------------------------------------------


def random_points(rng, shape, k=5):
    """``k`` point masses per body: masses in [0.2, 2], a cloud around a random centre."""
    shape = tuple(shape)
    masses = rng.uniform(0.2, 2.0, size=shape + (k,))
    pos = 0.5 * rng.normal(size=shape + (k, 3)) + rng.normal(size=shape + (1, 3))
    return masses, pos


def np_second_moment(masses, pos):
    """``S = Σ mᵢ xᵢ xᵢᵀ`` (second moment, Wensing et al. 2017, with a discrete density)."""
    return np.einsum("...k,...ki,...kj->...ij", masses, pos, pos)


def np_inertia_points(masses, pos):
    """``I = Σ mᵢ (|xᵢ|² 1 − xᵢ xᵢᵀ)`` about the origin (definition of the rotational inertia)."""
    sq = np.einsum("...k,...ki,...ki->...", masses, pos, pos)
    return sq[..., None, None] * np.eye(3) - np_second_moment(masses, pos)


def np_vector(m, h, I):
    """Pinocchio-order 10-vector."""
    return np.concatenate(
        [
            np.asarray(m)[..., None],
            h,
            np.stack(
                [
                    I[..., 0, 0],
                    I[..., 0, 1],
                    I[..., 1, 1],
                    I[..., 0, 2],
                    I[..., 1, 2],
                    I[..., 2, 2],
                ],
                -1,
            ),
        ],
        -1,
    )


def np_params_points(masses, pos):
    m = masses.sum(-1)
    h = np.einsum("...k,...ki->...i", masses, pos)
    return np_vector(m, h, np_inertia_points(masses, pos))


def np_spatial_from_params(p):
    """``[[I_o, skew(h)], [skew(h)ᵀ, m 1]]`` (``[ω; v]``) from a 10-vector."""
    p = np.asarray(p, np.float64)
    m, h = p[..., 0], p[..., 1:4]
    xx, xy, yy, xz, yz, zz = (p[..., 4 + i] for i in range(6))
    I = np.stack(
        [np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2
    )
    M = np.zeros(p.shape[:-1] + (6, 6))
    M[..., :3, :3] = I
    M[..., :3, 3:] = np_skew(h)
    M[..., 3:, :3] = np.swapaxes(np_skew(h), -1, -2)
    M[..., 3:, 3:] = m[..., None, None] * np.eye(3)
    return M


def random_symmetric(rng, shape):
    A = rng.normal(size=tuple(shape) + (3, 3))
    return A + np.swapaxes(A, -1, -2)


def random_params(rng, shape):
    """Arbitrary (generally inconsistent) 10-vectors: the formulas must hold anyway."""
    return rng.normal(size=tuple(shape) + (10,))


def random_plx(rng, shape, dtype=np.float64):
    E = random_rotations(rng, shape).swapaxes(-1, -2)
    r = rng.normal(size=tuple(shape) + (3,))
    return Plx(jnp.asarray(E, dtype), jnp.asarray(r, dtype))


def assert_close(actual, expected, tol=1e-12):
    """Absolute error relative to the largest magnitude of the reference (at least 1)."""
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    err = float(np.max(np.abs(actual - expected))) if expected.size else 0.0
    assert err <= tol * scale, f"max error {err:.3e} > {tol:.1e} * {scale:.3g}"


# ---------------------------------------------------------------------------
# Inertial-parameter identities (Wensing, Kim & Slotine 2017; Featherstone RBDA §2.13)
# ---------------------------------------------------------------------------


def test_trace_identity_tr_I_equals_2_tr_S(rng):
    masses, pos = random_points(rng, (N_SMALL,))
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))
    I = np.asarray(body.inertia_origin())
    S = np.asarray(body.second_moment())
    np.testing.assert_allclose(np.trace(I, axis1=-2, axis2=-1), 2 * np.trace(S, axis1=-2, axis2=-1))
    # also for arbitrary symmetric I through the free function
    I = random_symmetric(rng, (N_SMALL,))
    S = np.asarray(inertia_to_second_moment(jnp.asarray(I)))
    np.testing.assert_allclose(
        np.trace(I, axis1=-2, axis2=-1), 2 * np.trace(S, axis1=-2, axis2=-1), atol=1e-13
    )


def test_second_moment_is_the_mass_integral(rng):
    """``S = Σ m x xᵀ`` and ``J = Σ m x̃ x̃ᵀ`` (Wensing et al. 2017)."""
    masses, pos = random_points(rng, (N_SMALL,))
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))
    assert_close(body.second_moment(), np_second_moment(masses, pos))
    assert_close(body.inertia_origin(), np_inertia_points(masses, pos))
    homog = np.concatenate([pos, np.ones(pos.shape[:-1] + (1,))], -1)
    assert_close(body.pseudo_inertia(), np_second_moment(masses, homog))


def test_second_moment_inertia_round_trip(rng):
    """``S = ½ tr(I) 1 − I`` and ``I = tr(S) 1 − S`` invert each other (any 3×3)."""
    I = rng.normal(size=(N_SMALL, 3, 3))
    S = np.asarray(inertia_to_second_moment(jnp.asarray(I)))
    np.testing.assert_allclose(
        S, 0.5 * np.trace(I, axis1=-2, axis2=-1)[:, None, None] * np.eye(3) - I, atol=1e-14
    )
    assert_close(second_moment_to_inertia(jnp.asarray(S)), I, 1e-14)
    S2 = rng.normal(size=(N_SMALL, 3, 3))
    assert_close(inertia_to_second_moment(second_moment_to_inertia(jnp.asarray(S2))), S2, 1e-14)


def test_two_point_mass_example():
    """Two point masses 0.5 at ±1 on x -> I = diag(0, 1, 1), S = diag(1, 0, 0)."""
    body = RigidBodyInertia.from_point_masses(
        jnp.array([0.5, 0.5]), jnp.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    )
    np.testing.assert_array_equal(body.inertia_origin(), np.diag([0.0, 1.0, 1.0]))
    np.testing.assert_array_equal(body.second_moment(), np.diag([1.0, 0.0, 0.0]))
    np.testing.assert_array_equal(body.pseudo_inertia(), np.diag([1.0, 0.0, 0.0, 1.0]))
    np.testing.assert_array_equal(body.mass, 1.0)
    np.testing.assert_array_equal(body.com, np.zeros(3))
    np.testing.assert_array_equal(
        inertia_to_second_moment(jnp.diag(jnp.array([0.0, 1.0, 1.0]))), np.diag([1.0, 0.0, 0.0])
    )


def test_triangle_violation_example():
    """I = diag(1, 0, 0) gives S = ½ diag(−1, 1, 1) (not PSD)."""
    S = inertia_to_second_moment(jnp.diag(jnp.array([1.0, 0.0, 0.0])))
    np.testing.assert_array_equal(S, 0.5 * np.diag([-1.0, 1.0, 1.0]))


@pytest.mark.parametrize("about_com", [True, False])
def test_parallel_axis_matches_point_masses(rng, about_com):
    """``I_p = I_c − m Δp× Δp×`` (parallel-axis theorem) against the brute-force sum about p."""
    masses, pos = random_points(rng, (N_SMALL,))
    m = masses.sum(-1)
    c = np.einsum("...k,...ki->...i", masses, pos) / m[:, None]
    q = rng.normal(size=(N_SMALL, 3)) * 2.0  # arbitrary reference point
    I_c = np_inertia_points(masses, pos - c[:, None, :])
    I_q = np_inertia_points(masses, pos - q[:, None, :])
    if about_com:
        got = parallel_axis(jnp.asarray(I_c), jnp.asarray(m), jnp.asarray(q - c))
        assert_close(got, I_q)
        # and back towards the CoM with -m (documented)
        back = parallel_axis(jnp.asarray(I_q), jnp.asarray(-m), jnp.asarray(q - c))
        assert_close(back, I_c)
    else:
        # between two arbitrary points p, q: I_p = I_q + m Δq×Δq× − m Δp×Δp×
        p = rng.normal(size=(N_SMALL, 3))
        I_p = np_inertia_points(masses, pos - p[:, None, :])
        via_c = parallel_axis(jnp.asarray(I_q), jnp.asarray(-m), jnp.asarray(q - c))
        got = parallel_axis(via_c, jnp.asarray(m), jnp.asarray(p - c))
        assert_close(got, I_p)
    # the shifted point-mass body about q equals the same thing
    body_q = RigidBodyInertia.from_point_masses(
        jnp.asarray(masses), jnp.asarray(pos - q[:, None, :])
    )
    assert_close(body_q.inertia_origin(), I_q)
    assert_close(body_q.inertia_com(), I_c)


def test_sandwich_parallel_axis_seed_example(rng):
    """Pseudo-inertia sandwich: T_pc Π_c T_pcᵀ = [[S_c + m Δp Δpᵀ, −m Δp], [−m Δpᵀ, m]]."""
    A = rng.normal(size=(3, 3))
    S_c = A @ A.T
    m = 1.7
    dp = rng.normal(size=3)
    T = np.eye(4)
    T[:3, 3] = -dp
    Pi_c = np.zeros((4, 4))
    Pi_c[:3, :3] = S_c
    Pi_c[3, 3] = m
    expected = np.zeros((4, 4))
    expected[:3, :3] = S_c + m * np.outer(dp, dp)
    expected[:3, 3] = expected[3, :3] = -m * dp
    expected[3, 3] = m
    assert_close(pseudo_inertia_sandwich(jnp.asarray(T), jnp.asarray(Pi_c)), expected, 1e-14)


@pytest.mark.parametrize("cls", [Plx, Plxb])
def test_sandwich_equals_transform(rng, cls):
    """``Π_b = T Π_a Tᵀ`` with ``T = X.as_homogeneous()`` equals ``transform(X)``."""
    n = N_SMALL
    body = RigidBodyInertia(jnp.asarray(random_params(rng, (n,))))
    X = cls(jnp.asarray(random_rotations(rng, (n,))), jnp.asarray(rng.normal(size=(n, 3))))
    T = np.asarray(X.as_homogeneous())
    J = np.asarray(body.pseudo_inertia())
    expected = T @ J @ np.swapaxes(T, -1, -2)
    assert_close(pseudo_inertia_sandwich(jnp.asarray(T), jnp.asarray(J)), expected)
    assert_close(body.transform(X).pseudo_inertia(), expected)


@pytest.mark.parametrize("cls", [Plx, Plxb])
def test_transform_moves_the_point_masses(rng, cls):
    """Physical meaning: the body re-expressed in B is the same points in B coordinates.

    ``Plx(E, r)``: ``p_B = E (p_A − r)``; ``Plxb(R, p)`` (pose of B in A): ``p_B = Rᵀ (p_A − p)``.
    """
    n = N_SMALL
    masses, pos_A = random_points(rng, (n,))
    R = random_rotations(rng, (n,))
    r = rng.normal(size=(n, 3))
    E = np.swapaxes(R, -1, -2) if cls is Plx else R
    pos_B = np.einsum("nij,nkj->nki", np.swapaxes(R, -1, -2), pos_A - r[:, None, :])
    body_A = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos_A))
    got = body_A.transform(cls(jnp.asarray(E), jnp.asarray(r)))
    assert_close(got.to_vector(), np_params_points(masses, pos_B))


@pytest.mark.parametrize("cls", [Plx, Plxb])
@pytest.mark.parametrize("kind", ["consistent", "arbitrary"])
def test_transform_matches_6x6_formula(rng, cls, kind):
    """``M_B = X* M_A X⁻¹`` with ``X* = X⁻ᵀ`` (NumPy inverse of ``X.as_matrix()``), 1000 bodies."""
    if kind == "consistent":
        params = np_params_points(*random_points(rng, (N_BODIES,)))
    else:
        params = random_params(rng, (N_BODIES,))
    X = cls(
        jnp.asarray(random_rotations(rng, (N_BODIES,))), jnp.asarray(rng.normal(size=(N_BODIES, 3)))
    )
    Xinv = np.linalg.inv(np.asarray(X.as_matrix()))
    expected = np.swapaxes(Xinv, -1, -2) @ np_spatial_from_params(params) @ Xinv
    got = RigidBodyInertia(jnp.asarray(params)).transform(X).as_matrix()
    for i in range(0, N_BODIES, 100):  # per-body scale
        assert_close(got[i : i + 100], expected[i : i + 100])
    assert_close(got, expected)


def test_transform_plx_and_plxb_agree_and_compose(rng):
    n = N_SMALL
    body = RigidBodyInertia(jnp.asarray(np_params_points(*random_points(rng, (n,)))))
    X1, X2 = random_plx(rng, (n,)), random_plx(rng, (n,))
    assert_close(body.transform(X1).params, body.transform(X1.to_plxb()).params)
    # X1 @ X2 applies X2 first
    assert_close(body.transform(X1 @ X2).params, body.transform(X2).transform(X1).params)
    assert_close(body.transform(X1).transform(X1.inverse()).params, body.params)
    # identity leaves the body alone
    assert_close(body.transform(Plx.identity((n,))).params, body.params, 1e-15)


def test_transform_keeps_mass_and_moves_com(rng):
    n = N_SMALL
    body = RigidBodyInertia(jnp.asarray(np_params_points(*random_points(rng, (n,)))))
    R = random_rotations(rng, (n,))
    p = rng.normal(size=(n, 3))
    got = body.transform(Plxb(jnp.asarray(R), jnp.asarray(p)))
    np.testing.assert_allclose(got.mass, body.mass, rtol=1e-15)
    c_B = np.einsum("nji,nj->ni", R, np.asarray(body.com) - p)
    assert_close(got.com, c_B)
    # the inertia about the CoM only rotates: I_c,B = Rᵀ I_c,A R
    assert_close(
        got.inertia_com(), np.swapaxes(R, -1, -2) @ np.asarray(body.inertia_com()) @ R, 1e-11
    )


# ---------------------------------------------------------------------------
# 6×6 matrix, momentum, kinetic energy, +
# ---------------------------------------------------------------------------


def test_as_matrix_featherstone_mcI(rng):
    """``[[I_c + m c× c×ᵀ, m c×], [m c×ᵀ, m 1]]`` (RBDA eq. 2.63) from (m, c, I_c)."""
    n = N_SMALL
    m = rng.uniform(0.1, 3.0, size=n)
    c = rng.normal(size=(n, 3))
    I_c = random_symmetric(rng, (n,))
    C = np_skew(c)
    expected = np.zeros((n, 6, 6))
    expected[:, :3, :3] = I_c + m[:, None, None] * C @ np.swapaxes(C, -1, -2)
    expected[:, :3, 3:] = m[:, None, None] * C
    expected[:, 3:, :3] = m[:, None, None] * np.swapaxes(C, -1, -2)
    expected[:, 3:, 3:] = m[:, None, None] * np.eye(3)
    body = RigidBodyInertia.from_mass_com_inertia(jnp.asarray(m), jnp.asarray(c), jnp.asarray(I_c))
    assert_close(body.as_matrix(), expected)
    assert_close(body.inertia_com(), I_c)
    np.testing.assert_allclose(body.com, c, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(body.mass, m)
    assert_close(body.h, m[:, None] * c)


def test_momentum_and_kinetic_energy_vs_6x6_and_point_masses(rng):
    n = N_SMALL
    masses, pos = random_points(rng, (n,))
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))
    v = rng.normal(size=(n, 6))
    M = np_spatial_from_params(np_params_points(masses, pos))
    h_expected = np.einsum("nij,nj->ni", M, v)
    assert_close(body.momentum(jnp.asarray(v)), h_expected)
    np.testing.assert_allclose(
        body.kinetic_energy(jnp.asarray(v)), 0.5 * np.einsum("ni,ni->n", v, h_expected), rtol=1e-13
    )
    # brute force: particle velocities v_i = v_o + ω × x_i
    w, vo = v[:, None, :3], v[:, None, 3:]
    vi = vo + np.cross(w, pos)
    lin = np.einsum("nk,nki->ni", masses, vi)
    ang = np.einsum("nk,nki->ni", masses, np.cross(pos, vi))
    assert_close(body.momentum(jnp.asarray(v)), np.concatenate([ang, lin], -1))
    np.testing.assert_allclose(
        body.kinetic_energy(jnp.asarray(v)),
        0.5 * np.einsum("nk,nki,nki->n", masses, vi, vi),
        rtol=1e-12,
    )


def test_add_equals_union_of_point_masses(rng):
    m1, p1 = random_points(rng, (N_SMALL,), k=3)
    m2, p2 = random_points(rng, (N_SMALL,), k=4)
    b1 = RigidBodyInertia.from_point_masses(jnp.asarray(m1), jnp.asarray(p1))
    b2 = RigidBodyInertia.from_point_masses(jnp.asarray(m2), jnp.asarray(p2))
    union = np_params_points(np.concatenate([m1, m2], -1), np.concatenate([p1, p2], -2))
    assert_close((b1 + b2).to_vector(), union)
    assert_close((b1 + RigidBodyInertia.zeros((N_SMALL,))).params, b1.params, 0.0)
    # rigidly joining commutes with a common frame change
    X = random_plx(rng, (N_SMALL,))
    assert_close((b1 + b2).transform(X).params, (b1.transform(X) + b2.transform(X)).params)


# ---------------------------------------------------------------------------
# Constructors, round trips, massless body
# ---------------------------------------------------------------------------


def test_constructor_round_trips(rng):
    n = N_SMALL
    params = random_params(rng, (n,))
    body = RigidBodyInertia.from_vector(jnp.asarray(params))
    np.testing.assert_array_equal(body.to_vector(), params)
    assert_close(RigidBodyInertia.from_matrix(body.as_matrix()).params, params, 1e-15)
    assert_close(RigidBodyInertia.from_pseudo_inertia(body.pseudo_inertia()).params, params, 1e-14)
    again = RigidBodyInertia.from_mass_com_inertia(body.mass, body.com, body.inertia_com())
    assert_close(again.params, params, 1e-12)
    # from_matrix / from_pseudo_inertia read closed-form matrices built in NumPy
    assert_close(
        RigidBodyInertia.from_matrix(jnp.asarray(np_spatial_from_params(params))).params,
        params,
        1e-15,
    )


def test_from_pseudo_inertia_reads_closed_form(rng):
    masses, pos = random_points(rng, (N_SMALL,))
    homog = np.concatenate([pos, np.ones(pos.shape[:-1] + (1,))], -1)
    J = np_second_moment(masses, homog)  # Σ m x̃ x̃ᵀ
    got = RigidBodyInertia.from_pseudo_inertia(jnp.asarray(J))
    assert_close(got.params, np_params_points(masses, pos))


def test_from_mass_com_inertia_uses_symmetric_part(rng):
    I_c = rng.normal(size=(3, 3))
    a = RigidBodyInertia.from_mass_com_inertia(1.0, jnp.zeros(3), jnp.asarray(I_c))
    b = RigidBodyInertia.from_mass_com_inertia(1.0, jnp.zeros(3), jnp.asarray(0.5 * (I_c + I_c.T)))
    np.testing.assert_allclose(a.params, b.params, atol=1e-15)


def test_massless_body_com_is_zero_with_finite_gradients():
    body = RigidBodyInertia.zeros((4,))
    np.testing.assert_array_equal(body.com, np.zeros((4, 3)))
    np.testing.assert_array_equal(body.params, np.zeros((4, 10)))
    # h ≠ 0 with m = 0 (not physical) still gives the documented zeros
    odd = RigidBodyInertia(jnp.array([0.0, 1.0, 2.0, 3.0, 1, 0, 1, 0, 0, 1]))
    np.testing.assert_array_equal(odd.com, np.zeros(3))
    g = jax.jit(jax.jacfwd(lambda p: RigidBodyInertia(p).com))(jnp.zeros(10))
    assert np.all(np.isfinite(g))
    g = jax.jit(jax.jacrev(lambda p: RigidBodyInertia(p).inertia_com()))(jnp.zeros(10))
    assert np.all(np.isfinite(g))


def test_getitem_indexes_batch(rng):
    params = random_params(rng, (3, 4))
    body = RigidBodyInertia(jnp.asarray(params))
    np.testing.assert_array_equal(body[1].params, params[1])
    np.testing.assert_array_equal(body[:, 2].params, params[:, 2])
    np.testing.assert_array_equal(body[1, 2].mass, params[1, 2, 0])
    with pytest.raises(IndexError, match=r"batch shape \(\)"):
        body[1, 2][0]


# ---------------------------------------------------------------------------
# Property tests: batch shapes, broadcasting, dtype, jit/vmap, pytree
# ---------------------------------------------------------------------------

_DTYPES = [np.float32, np.float64]
_TOL = {np.float32: 2e-5, np.float64: 1e-12}


def _ops(body, X, v):
    """Every public batched operation of a body, as a flat dict of arrays."""
    out = {
        "params": body.params,
        "mass": body.mass,
        "com": body.com,
        "h": body.h,
        "I_o": body.inertia_origin(),
        "I_c": body.inertia_com(),
        "S": body.second_moment(),
        "J": body.pseudo_inertia(),
        "M6": body.as_matrix(),
        "transform": body.transform(X).params,
        "transform_b": body.transform(X.to_plxb()).params,
        "momentum": body.momentum(v),
        "ke": body.kinetic_energy(v),
        "add": (body + body).params,
        "from_matrix": RigidBodyInertia.from_matrix(body.as_matrix()).params,
        "from_J": RigidBodyInertia.from_pseudo_inertia(body.pseudo_inertia()).params,
        "mcI": RigidBodyInertia.from_mass_com_inertia(
            body.mass, body.com, body.inertia_com()
        ).params,
        "sandwich": pseudo_inertia_sandwich(X.as_homogeneous(), body.pseudo_inertia()),
        "i2s": inertia_to_second_moment(body.inertia_origin()),
        "s2i": second_moment_to_inertia(body.second_moment()),
        "pa": parallel_axis(body.inertia_com(), body.mass, body.com),
    }
    return out


_ops_jit = jax.jit(_ops)
_ops_jit_vmap = jax.jit(jax.vmap(_ops))


def _make(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    masses, pos = random_points(rng, shape)
    params = np_params_points(masses, pos)
    E = np.swapaxes(random_rotations(rng, shape), -1, -2)
    r = rng.normal(size=tuple(shape) + (3,))
    v = rng.normal(size=tuple(shape) + (6,))
    body = RigidBodyInertia(jnp.asarray(params, dtype))
    X = Plx(jnp.asarray(E, dtype), jnp.asarray(r, dtype))
    return body, X, jnp.asarray(v, dtype), (params, E, r, v)


def _reference(params, E, r, v):
    """NumPy float64 reference for transform/momentum/kinetic energy, any batch shape."""
    X = np.zeros(E.shape[:-2] + (6, 6))
    X[..., :3, :3] = X[..., 3:, 3:] = E
    X[..., 3:, :3] = -E @ np_skew(r)
    Xinv = np.linalg.inv(X)
    M = np_spatial_from_params(params)
    M_B = np.swapaxes(Xinv, -1, -2) @ M @ Xinv
    mom = np.einsum("...ij,...j->...i", M, v)
    return M_B, mom, 0.5 * np.einsum("...i,...i->...", v, mom)


@given(
    seed=st.integers(0, 2**31 - 1),
    shape=st.sampled_from(BATCH_SHAPES),
    dtype=st.sampled_from(_DTYPES),
)
def test_batch_shapes_dtype_and_values(seed, shape, dtype):
    """Every operation keeps the batch shape and dtype and matches the float64 reference.

    Runs the jitted operations (one compile per shape and dtype); jit == eager is
    checked separately below.
    """
    body, X, v, raw = _make(seed, shape, dtype)
    out = _ops_jit(body, X, v)
    core = {"mass": (), "ke": (), "com": (3,), "h": (3,), "momentum": (6,)}
    for name, val in out.items():
        assert val.dtype == dtype, (name, val.dtype)
        assert val.shape[: len(shape)] == shape, (name, val.shape)
        if name in core:
            assert val.shape == shape + core[name], (name, val.shape)
    M_B, mom, ke = _reference(*raw)
    tol = _TOL[dtype]
    assert_close(np_spatial_from_params(out["transform"]), M_B, tol)
    assert_close(np_spatial_from_params(out["transform_b"]), M_B, tol)
    assert_close(out["momentum"], mom, tol)
    assert_close(out["ke"], ke, tol)
    for name in ["from_matrix", "from_J", "mcI"]:
        assert_close(out[name], raw[0], 10 * tol)
    assert_close(out["add"], 2 * raw[0], tol)
    assert_close(out["pa"], out["I_o"], 10 * tol)


@pytest.mark.parametrize("seed", [0, 1])
def test_jit_and_vmap_equal_eager(seed):
    shape = BATCH_SHAPES[-1]
    body, X, v, _ = _make(seed, shape, np.float64)
    eager = _ops(body, X, v)
    jitted = _ops_jit(body, X, v)
    vmapped = _ops_jit_vmap(body, X, v)
    for name in eager:
        np.testing.assert_allclose(jitted[name], eager[name], rtol=1e-13, atol=1e-13, err_msg=name)
        np.testing.assert_allclose(vmapped[name], eager[name], rtol=1e-13, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("body_batched", [True, False])
def test_broadcasting_body_and_transform(rng, body_batched):
    """A batch of bodies with one transform, and one body with a batch of transforms."""
    n = (4, 3)
    params = np_params_points(*random_points(rng, n if body_batched else ()))
    E = np.swapaxes(random_rotations(rng, () if body_batched else n), -1, -2)
    r = rng.normal(size=(() if body_batched else n) + (3,))
    v = rng.normal(size=(6,))
    body = RigidBodyInertia(jnp.asarray(params))
    X = Plx(jnp.asarray(E), jnp.asarray(r))
    got = body.transform(X)
    assert got.batch_shape == n
    pb, Eb = np.broadcast_to(params, n + (10,)), np.broadcast_to(E, n + (3, 3))
    rb = np.broadcast_to(r, n + (3,))
    vb = np.broadcast_to(v, n + (6,))
    M_B, mom, ke = _reference(pb, Eb, rb, vb)
    assert_close(got.as_matrix(), M_B)
    assert_close(body.transform(X.to_plxb()).as_matrix(), M_B)
    # Plx with batched E and unbatched r broadcasts too
    if not body_batched:
        X2 = Plx(jnp.asarray(E), jnp.asarray(r[0, 0]))
        M2, _, _ = _reference(pb, Eb, np.broadcast_to(r[0, 0], n + (3,)), vb)
        assert_close(body.transform(X2).as_matrix(), M2)
    # momentum: body batch vs single velocity / single body vs velocity batch
    if body_batched:
        assert_close(body.momentum(jnp.asarray(v)), mom)
        assert_close(body.kinetic_energy(jnp.asarray(v)), ke)
    else:
        assert_close(body.momentum(jnp.asarray(vb)), mom)
    # + broadcasts a single body against a batch
    other = RigidBodyInertia(jnp.asarray(random_params(rng, n)))
    assert (body + other).batch_shape == n


def test_pytree_through_jit_vmap_grad_and_tree_map(rng):
    params = np_params_points(*random_points(rng, (5,)))
    body = RigidBodyInertia(jnp.asarray(params))
    leaves, treedef = jax.tree.flatten(body)
    assert len(leaves) == 1 and leaves[0] is body.params
    assert isinstance(jax.tree.unflatten(treedef, leaves), RigidBodyInertia)
    out = jax.jit(lambda b: b + b)(body)
    assert isinstance(out, RigidBodyInertia)
    np.testing.assert_array_equal(out.params, 2 * params)
    vm = jax.jit(jax.vmap(lambda b: b.transform(Plx.identity())))(body)
    assert isinstance(vm, RigidBodyInertia) and vm.batch_shape == (5,)
    np.testing.assert_allclose(vm.params, params, atol=1e-15)
    # in_axes given as a RigidBodyInertia prefix
    np.testing.assert_array_equal(
        jax.vmap(lambda b: b.mass, in_axes=(RigidBodyInertia(0),))(body), params[:, 0]
    )
    g = jax.jit(jax.grad(lambda b: jnp.sum(b.kinetic_energy(jnp.ones(6)))))(body)
    assert isinstance(g, RigidBodyInertia) and g.params.shape == (5, 10)
    # tree maps whose leaves are not float arrays (shapes, integer counts) rebuild the type
    shapes = jax.tree.map(jnp.shape, body)
    assert isinstance(shapes, RigidBodyInertia) and shapes.params == (5, 10)
    ints = jax.tree.map(lambda x: np.zeros(x.shape, np.int32), body)
    assert ints.params.dtype == np.int32
    assert jax.eval_shape(lambda b: b, body).params.shape == (5, 10)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "argument", "detail"),
    [
        # the detail states the expected and the received shape (checked on a few rows)
        (lambda: RigidBodyInertia(jnp.zeros(9)), "params", ["(..., 10)", "(9,)"]),
        (lambda: RigidBodyInertia.from_vector(jnp.zeros((2, 6))), "pi", []),
        (lambda: RigidBodyInertia.from_mass_com_inertia(1.0, jnp.zeros(2), jnp.eye(3)), "c", []),
        (
            lambda: RigidBodyInertia.from_mass_com_inertia(1.0, jnp.zeros(3), jnp.eye(4)),
            "I_c",
            [],
        ),
        (
            lambda: RigidBodyInertia.from_mass_com_inertia(
                jnp.ones(2), jnp.zeros((3, 3)), jnp.eye(3)
            ),
            "c",
            ["m", "(2,)", "(3,)"],
        ),
        (lambda: RigidBodyInertia.from_pseudo_inertia(jnp.eye(3)), "J", []),
        (lambda: RigidBodyInertia.from_matrix(jnp.eye(4)), "M6", []),
        (lambda: RigidBodyInertia.from_log_cholesky(jnp.zeros(7)), "theta", []),
        (
            lambda: RigidBodyInertia.from_point_masses(jnp.ones(2), jnp.zeros((2, 2))),
            "positions",
            [],
        ),
        (
            lambda: RigidBodyInertia.from_point_masses(jnp.ones(3), jnp.zeros((2, 3))),
            "positions",
            ["N=2", "masses has N=3"],
        ),
        (lambda: RigidBodyInertia.from_point_masses(1.0, jnp.zeros((2, 3))), "masses", []),
        (lambda: RigidBodyInertia(jnp.ones((2, 10))).momentum(jnp.zeros(5)), "v", []),
        (lambda: RigidBodyInertia(jnp.ones((2, 10))).momentum(jnp.zeros((3, 6))), "v", []),
        (
            lambda: RigidBodyInertia(jnp.ones((2, 10))) + RigidBodyInertia(jnp.ones((3, 10))),
            "other",
            [],
        ),
        (
            lambda: RigidBodyInertia(jnp.ones((2, 10))).transform(Plx.identity((3,))),
            "X",
            [],
        ),
        (lambda: inertia_to_second_moment(jnp.eye(4)), "I", []),
        (lambda: second_moment_to_inertia(jnp.zeros(3)), "S", []),
        (lambda: parallel_axis(jnp.eye(3), 1.0, jnp.zeros(2)), "p", []),
        (lambda: pseudo_inertia_sandwich(jnp.eye(3), jnp.eye(4)), "T_ba", []),
        (lambda: pseudo_inertia_sandwich(jnp.eye(4), jnp.eye(6)), "J_a", []),
    ],
)
def test_wrong_shapes_raise_value_error_naming_argument(build, argument, detail):
    with raises_argument(ArgumentError, argument) as info:
        build()
    for fragment in detail:
        assert fragment in info.value.detail, (fragment, str(info.value))


@pytest.mark.parametrize(
    ("build", "argument"),
    [
        (lambda: RigidBodyInertia(np.arange(10)), "params"),
        (lambda: RigidBodyInertia.from_vector(jnp.arange(10)), "pi"),
        (lambda: RigidBodyInertia.from_mass_com_inertia(1.0, np.zeros(3, int), jnp.eye(3)), "c"),
        (lambda: RigidBodyInertia.from_pseudo_inertia(np.eye(4, dtype=np.int32)), "J"),
        (lambda: RigidBodyInertia.from_matrix(np.eye(6, dtype=int)), "M6"),
        (lambda: RigidBodyInertia.from_log_cholesky(np.zeros(10, int)), "theta"),
        (lambda: RigidBodyInertia.from_point_masses(np.ones(2, int), jnp.zeros((2, 3))), "masses"),
        (
            lambda: RigidBodyInertia.from_point_masses(jnp.ones(2), [[0, 0, 0], [1, 1, 1]]),
            "positions",
        ),
        (lambda: RigidBodyInertia(jnp.ones(10)).momentum(np.ones(6, int)), "v"),
        (lambda: inertia_to_second_moment(np.eye(3, dtype=int)), "I"),
        (lambda: parallel_axis(jnp.eye(3), 1.0, np.zeros(3, int)), "p"),
    ],
)
def test_integer_input_raises_type_error(build, argument):
    with raises_argument(ArgumentTypeError, argument):
        build()


@pytest.mark.parametrize(
    ("build", "argument"),
    [
        (
            lambda: RigidBodyInertia.from_mass_com_inertia(
                jnp.float32(1.0), jnp.zeros(3), jnp.eye(3, dtype=jnp.float32)
            ),
            "c",
        ),
        (
            lambda: RigidBodyInertia.from_point_masses(
                jnp.ones(2, jnp.float32), jnp.zeros((2, 3), jnp.float64)
            ),
            "positions",
        ),
        (lambda: RigidBodyInertia(jnp.ones(10, jnp.float32)).transform(Plx.identity()), "X"),
        (lambda: RigidBodyInertia(jnp.ones(10, jnp.float32)).transform(Plxb.identity()), "X"),
        (lambda: RigidBodyInertia(jnp.ones(10, jnp.float32)).momentum(jnp.ones(6)), "v"),
        (
            lambda: RigidBodyInertia(jnp.ones(10, jnp.float32)) + RigidBodyInertia(jnp.ones(10)),
            "other",
        ),
        (
            lambda: parallel_axis(jnp.eye(3, dtype=jnp.float32), jnp.float32(1.0), jnp.zeros(3)),
            "p",
        ),
        (lambda: pseudo_inertia_sandwich(jnp.eye(4, dtype=jnp.float32), jnp.eye(4)), "J_a"),
    ],
)
def test_dtype_mix_raises_type_error(build, argument):
    with raises_argument(ArgumentTypeError, argument):
        build()


@pytest.mark.parametrize("X", [np.eye(6), jnp.eye(4), "X", None])
def test_transform_of_non_transform_raises_type_error(X):
    with raises_argument(ArgumentTypeError, "X"):
        RigidBodyInertia(jnp.ones(10)).transform(X)


def test_add_non_body_raises_type_error():
    with pytest.raises(TypeError):
        RigidBodyInertia(jnp.ones(10)) + jnp.ones(10)
