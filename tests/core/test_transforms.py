"""Plücker transforms ``Plx`` / ``Plxb``: transform identities (RBDA §2.8) and property tests.

Reference values are built here in NumPy from the closed forms of Featherstone RBDA
eq. 2.24 and its right-associative twin
(with its X⁻ᵀ / Y⁻ᵀ typos corrected, see the test names) and RBDA chapter 2;
nothing is compared against a value produced by the code under test unless the
test is about an identity between two public operations (group laws,
round trips, jit/vmap == eager).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, np_quat_to_matrix, np_skew
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialjax import Plx, Plxb, force_cross, motion_cross, skew

KINDS = ["near_identity", "uniform", "large"]
TRANSLATION_SCALE = {"near_identity": 1e-4, "uniform": 1.0, "large": 1e3}
CLASSES = [Plx, Plxb]

# ---------------------------------------------------------------------------
# NumPy references (closed forms, independent of spatialjax)
# ---------------------------------------------------------------------------


def random_rotations(rng, shape, kind="uniform"):
    """Rotations from quaternions of normal samples (uniform on SO(3)) or near identity."""
    shape = tuple(shape)
    if kind == "near_identity":
        q = np.concatenate([np.ones(shape + (1,)), 1e-4 * rng.normal(size=shape + (3,))], -1)
    else:
        q = rng.normal(size=shape + (4,))
    return np_quat_to_matrix(q)


def np_plx_matrix(E, r):
    """``[[E, 0], [-E r×, E]]`` (RBDA eq. 2.24, plx)."""
    E, r = np.broadcast_arrays(np.asarray(E), np.asarray(r)[..., None, :])
    r = r[..., 0, :]
    M = np.zeros(E.shape[:-2] + (6, 6))
    M[..., :3, :3] = E
    M[..., 3:, 3:] = E
    M[..., 3:, :3] = -E @ np_skew(r)
    return M


def np_plxb_matrix(E, r):
    """``[[Eᵀ, 0], [-Eᵀ r×, Eᵀ]]`` (plxb, the transpose-rotation form)."""
    return np_plx_matrix(np.swapaxes(E, -1, -2), r)


def np_matrix(cls, E, r):
    return np_plx_matrix(E, r) if cls is Plx else np_plxb_matrix(E, r)


def coord_rotation(cls, E):
    """Rotation that maps A-coordinates to B-coordinates for either class."""
    return np.asarray(E) if cls is Plx else np.swapaxes(np.asarray(E), -1, -2)


def mv6(M, x):
    return (np.asarray(M) @ np.asarray(x)[..., None])[..., 0]


def tol(dtype, scale=1.0):
    if np.dtype(dtype) == np.float32:
        return {"rtol": 2e-5, "atol": 2e-5 * scale}
    return {"rtol": 1e-11, "atol": 1e-12 * scale}


def close(actual, expected, dtype=np.float64, scale=1.0):
    np.testing.assert_allclose(
        np.asarray(actual, np.float64), np.asarray(expected, np.float64), **tol(dtype, scale)
    )


class Case:
    """One random draw: transforms (numpy float64 and spatialjax), vectors, scale."""

    def __init__(self, seed, shape, kind, dtype=np.float64, n=3):
        rng = np.random.default_rng(seed)
        self.shape, self.kind, self.dtype = tuple(shape), kind, np.dtype(dtype)
        s = TRANSLATION_SCALE[kind]
        self.E = [random_rotations(rng, shape, kind) for _ in range(n)]
        self.r = [s * rng.normal(size=self.shape + (3,)) for _ in range(n)]
        # round the references to the working dtype so both sides see the same inputs
        self.E = [e.astype(dtype).astype(np.float64) for e in self.E]
        self.r = [x.astype(dtype).astype(np.float64) for x in self.r]
        self.m = rng.normal(size=self.shape + (6,)).astype(dtype).astype(np.float64)
        self.f = rng.normal(size=self.shape + (6,)).astype(dtype).astype(np.float64)
        self.scale = 1.0 + s

    def X(self, cls, i=0):
        return cls(jnp.asarray(self.E[i], self.dtype), jnp.asarray(self.r[i], self.dtype))

    def vec(self, name):
        return jnp.asarray(getattr(self, name), self.dtype)


@st.composite
def quaternions(draw, shape=()):
    """Unnormalised quaternions from standard-normal samples (uniform rotations once normalised)."""
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).normal(size=tuple(shape) + (4,))


@st.composite
def rotations(draw, shape=()):
    """Random active rotation matrices via quaternions from normal samples."""
    return np_quat_to_matrix(draw(quaternions(shape)))


cases = st.builds(
    Case,
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from(BATCH_SHAPES),
    kind=st.sampled_from(KINDS),
    dtype=st.sampled_from([np.float32, np.float64]),
)
cases64 = st.builds(
    Case,
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from(BATCH_SHAPES),
    kind=st.sampled_from(KINDS),
)


@pytest.fixture
def batch(rng):
    """A batch of 32 random transforms and vectors (float64, uniform rotations, unit r)."""
    return Case(int(rng.integers(2**31)), (32,), "uniform")


# ---------------------------------------------------------------------------
# Transform identities, one named test each
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["uniform", "large"])
def test_seed_plx_composition_identity(kind):
    """plx(E1, r1) plx(E2, r2) = plx(E1 E2, E2ᵀ r1 + r2)."""
    c = Case(1, (32,), kind)
    E1, E2, r1, r2 = c.E[0], c.E[1], c.r[0], c.r[1]
    expected = np_plx_matrix(E1 @ E2, mv6(np.swapaxes(E2, -1, -2), r1) + r2)
    X1, X2 = c.X(Plx, 0), c.X(Plx, 1)
    # via 6x6 products
    close(X1.as_matrix() @ X2.as_matrix(), expected, scale=c.scale)
    close(np_plx_matrix(E1, r1) @ np_plx_matrix(E2, r2), expected, scale=c.scale)
    # via compose / @ on the (E, r) form
    X12 = X1.compose(X2)
    close(X12.E, E1 @ E2)
    close(X12.r, mv6(np.swapaxes(E2, -1, -2), r1) + r2, scale=c.scale)
    close((X1 @ X2).as_matrix(), expected, scale=c.scale)


@pytest.mark.parametrize("kind", ["uniform", "large"])
def test_seed_plxb_composition_identity(kind):
    """plxb(E1, r1) ∘ plxb(E2, r2) = plxb(E1 E2, r1 + E1 r2); matrix Y2 Y1."""
    c = Case(2, (32,), kind)
    E1, E2, r1, r2 = c.E[0], c.E[1], c.r[0], c.r[1]
    Y1, Y2 = c.X(Plxb, 0), c.X(Plxb, 1)
    Y12 = Y1 @ Y2
    close(Y12.E, E1 @ E2)
    close(Y12.r, r1 + mv6(E1, r2), scale=c.scale)
    expected = np_plxb_matrix(E1 @ E2, r1 + mv6(E1, r2))
    close(Y12.as_matrix(), expected, scale=c.scale)
    close(Y2.as_matrix() @ Y1.as_matrix(), expected, scale=c.scale)
    close(np_plxb_matrix(E2, r2) @ np_plxb_matrix(E1, r1), expected, scale=c.scale)
    close(Y1.compose(Y2).as_matrix(), (Y2.as_matrix() @ Y1.as_matrix()), scale=c.scale)


def test_seed_plx_apply_motion_formula(batch):
    """X m = [E ω; E (v − r × ω)]."""
    E, r, m = batch.E[0], batch.r[0], batch.m
    w, v = m[..., :3], m[..., 3:]
    expected = np.concatenate([mv6(E, w), mv6(E, v - np.cross(r, w))], -1)
    X = batch.X(Plx)
    close(X.apply_motion(batch.vec("m")), expected)
    close(mv6(np_plx_matrix(E, r), m), expected)
    close(mv6(X.as_matrix(), m), expected)


def test_seed_plxb_apply_motion_formula(batch):
    """Y m = [Eᵀ ω; Eᵀ (v − r × ω)]."""
    E, r, m = batch.E[0], batch.r[0], batch.m
    Et = np.swapaxes(E, -1, -2)
    w, v = m[..., :3], m[..., 3:]
    expected = np.concatenate([mv6(Et, w), mv6(Et, v - np.cross(r, w))], -1)
    Y = batch.X(Plxb)
    close(Y.apply_motion(batch.vec("m")), expected)
    close(mv6(np_plxb_matrix(E, r), m), expected)
    close(mv6(Y.as_matrix(), m), expected)


def test_seed_plx_inverse_matrix(batch):
    """X⁻¹ = [[Eᵀ, 0], [r× Eᵀ, Eᵀ]]."""
    E, r = batch.E[0], batch.r[0]
    Et = np.swapaxes(E, -1, -2)
    expected = np.zeros((32, 6, 6))
    expected[..., :3, :3] = Et
    expected[..., 3:, 3:] = Et
    expected[..., 3:, :3] = np_skew(r) @ Et
    close(np.linalg.inv(np_plx_matrix(E, r)), expected)
    Xi = batch.X(Plx).inverse()
    assert isinstance(Xi, Plx)
    close(Xi.as_matrix(), expected)


def test_seed_plxb_inverse_matrix(batch):
    """Y⁻¹ = [[E, 0], [r× E, E]]."""
    E, r = batch.E[0], batch.r[0]
    expected = np.zeros((32, 6, 6))
    expected[..., :3, :3] = E
    expected[..., 3:, 3:] = E
    expected[..., 3:, :3] = np_skew(r) @ E
    close(np.linalg.inv(np_plxb_matrix(E, r)), expected)
    Yi = batch.X(Plxb).inverse()
    assert isinstance(Yi, Plxb)
    close(Yi.as_matrix(), expected)


@pytest.mark.parametrize("cls", CLASSES)
def test_seed_force_transform_is_inverse_transpose(cls, batch):
    """X* = X⁻ᵀ; corrected closed forms plx [[E, −E r×], [0, E]], plxb [[Eᵀ, −Eᵀ r×], [0, Eᵀ]]."""
    E, r = batch.E[0], batch.r[0]
    X = batch.X(cls)
    M = np.asarray(X.as_matrix())
    close(X.as_force_matrix(), np.swapaxes(np.linalg.inv(M), -1, -2))
    Ec = coord_rotation(cls, E)
    expected = np.zeros((32, 6, 6))
    expected[..., :3, :3] = Ec
    expected[..., 3:, 3:] = Ec
    expected[..., :3, 3:] = -Ec @ np_skew(r)
    close(X.as_force_matrix(), expected)
    close(X.apply_force(batch.vec("f")), mv6(expected, batch.f))


def test_seed_rotated_skew_identity(batch):
    """(E a)× = E a× Eᵀ, and the plx lower-left block it simplifies: −E1 r1× E2 − E1 E2 r2×."""
    E, a = batch.E[0], batch.r[1]
    Et = np.swapaxes(E, -1, -2)
    close(skew(jnp.asarray(mv6(E, a))), E @ np_skew(a) @ Et)
    close(E @ np.asarray(skew(jnp.asarray(a))) @ Et, np_skew(mv6(E, a)))
    # the algebra step: −E1 r1× E2 − E1 E2 r2× = −E1 E2 (E2ᵀ r1 + r2)×
    E1, E2, r1, r2 = batch.E[0], batch.E[1], batch.r[0], batch.r[1]
    lhs = -E1 @ np_skew(r1) @ E2 - E1 @ E2 @ np.asarray(skew(jnp.asarray(r2)))
    rhs = -E1 @ E2 @ np.asarray(skew(jnp.asarray(mv6(np.swapaxes(E2, -1, -2), r1) + r2)))
    close(lhs, rhs)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("kind", KINDS)
def test_seed_power_invariance(cls, kind):
    """(X m) · (X* f) = m · f (the dual transform preserves power)."""
    c = Case(3, (64,), kind)
    X = c.X(cls)
    p_b = np.sum(np.asarray(X.apply_motion(c.vec("m"))) * np.asarray(X.apply_force(c.vec("f"))), -1)
    close(p_b, np.sum(c.m * c.f, -1), scale=c.scale)


@pytest.mark.parametrize("cls", CLASSES)
def test_seed_inverse_apply_matches_inverse_matrices(cls, batch):
    """inverse_apply_motion = X⁻¹ m, inverse_apply_force = X*⁻¹ f = Xᵀ f."""
    M = np_matrix(cls, batch.E[0], batch.r[0])
    X = batch.X(cls)
    close(X.inverse_apply_motion(batch.vec("m")), mv6(np.linalg.inv(M), batch.m))
    close(X.inverse_apply_force(batch.vec("f")), mv6(np.swapaxes(M, -1, -2), batch.f))
    close(X.inverse_apply_motion(X.apply_motion(batch.vec("m"))), batch.m)
    close(X.inverse_apply_force(X.apply_force(batch.vec("f"))), batch.f)
    close(X.inverse().apply_motion(batch.vec("m")), mv6(np.linalg.inv(M), batch.m))


@pytest.mark.parametrize("cls", CLASSES)
def test_seed_homogeneous_maps_points_like_apply_motion(cls, batch):
    """as_homogeneous maps points A -> B: p_B = E_c (p_A − r), consistent with apply_motion.

    For a rigid motion m_A = [ω; v] (v: velocity of the body point at A's
    origin), the body point at p_A moves with v + ω × p_A. In B the same point
    sits at p_B and its velocity is v_B + ω_B × p_B with m_B = X m_A; it must
    equal E_c (v + ω × p_A), E_c the coordinate rotation A -> B.
    """
    E, r = batch.E[0], batch.r[0]
    Ec = coord_rotation(cls, E)
    X = batch.X(cls)
    T = np.asarray(X.as_homogeneous())
    assert T.shape == (32, 4, 4)
    p_a = batch.r[2]
    p_b_expected = mv6(Ec, p_a - r)
    p_h = mv6(T, np.concatenate([p_a, np.ones((32, 1))], -1))
    close(p_h[..., :3], p_b_expected)
    close(p_h[..., 3], np.ones(32))
    close(T[..., 3, :], np.broadcast_to([0.0, 0.0, 0.0, 1.0], (32, 4)))
    # velocity of a body-fixed point, both frames
    w, v = batch.m[..., :3], batch.m[..., 3:]
    m_b = np.asarray(X.apply_motion(batch.vec("m")))
    vel_b = m_b[..., 3:] + np.cross(m_b[..., :3], p_h[..., :3])
    close(vel_b, mv6(Ec, v + np.cross(w, p_a)))
    # the inverse transform's homogeneous matrix is the inverse 4x4 (pose of B in A)
    close(X.inverse().as_homogeneous(), np.linalg.inv(T))


# ---------------------------------------------------------------------------
# Property tests (hypothesis over batch shapes, samples, dtypes)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@settings(max_examples=15)
@given(c=cases)
def test_group_associativity(cls, c):
    X1, X2, X3 = c.X(cls, 0), c.X(cls, 1), c.X(cls, 2)
    a, b = (X1 @ X2) @ X3, X1 @ (X2 @ X3)
    close(a.E, b.E, c.dtype)
    close(a.r, b.r, c.dtype, c.scale)
    assert a.batch_shape == c.shape


@pytest.mark.parametrize("cls", CLASSES)
@settings(max_examples=15)
@given(c=cases)
def test_group_identity_and_inverse(cls, c):
    X = c.X(cls)
    Id = cls.identity(c.shape, c.dtype)
    assert Id.dtype == c.dtype and Id.batch_shape == c.shape
    for Y in (Id @ X, X @ Id):
        close(Y.E, c.E[0], c.dtype)
        close(Y.r, c.r[0], c.dtype, c.scale)
    eye = np.broadcast_to(np.eye(3), c.shape + (3, 3))
    for Y in (X @ X.inverse(), X.inverse() @ X):
        close(Y.E, eye, c.dtype)
        close(Y.r, np.zeros(c.shape + (3,)), c.dtype, c.scale)
    close(X.inverse().inverse().r, c.r[0], c.dtype, c.scale)
    # (X1 X2)⁻¹ = X2⁻¹ X1⁻¹
    X2 = c.X(cls, 1)
    lhs, rhs = (X @ X2).inverse(), X2.inverse() @ X.inverse()
    close(lhs.E, rhs.E, c.dtype)
    close(lhs.r, rhs.r, c.dtype, c.scale)


@settings(max_examples=15)
@given(c=cases64)
def test_to_plx_to_plxb_round_trip_and_same_matrix(c):
    X = c.X(Plx)
    Y = X.to_plxb()
    assert isinstance(Y, Plxb)
    close(Y.as_matrix(), X.as_matrix(), c.dtype, c.scale)
    close(Y.as_force_matrix(), X.as_force_matrix(), c.dtype, c.scale)
    close(Y.as_homogeneous(), X.as_homogeneous(), c.dtype, c.scale)
    close(Y.apply_motion(c.vec("m")), X.apply_motion(c.vec("m")), c.dtype, c.scale)
    X_back = Y.to_plx()
    assert isinstance(X_back, Plx)
    np.testing.assert_array_equal(np.asarray(X_back.E), np.asarray(X.E))
    np.testing.assert_array_equal(np.asarray(X_back.r), np.asarray(X.r))
    Y0 = c.X(Plxb)
    close(Y0.to_plx().as_matrix(), np_plxb_matrix(c.E[0], c.r[0]), c.dtype, c.scale)
    # composition commutes with conversion (Plxb composes in the reverse order)
    Y1 = c.X(Plxb, 1)
    close((Y0 @ Y1).to_plx().as_matrix(), (Y1.to_plx() @ Y0.to_plx()).as_matrix(), c.dtype, c.scale)


@pytest.mark.parametrize("cls", CLASSES)
@settings(max_examples=15)
@given(c=cases)
def test_from_matrix_round_trip(cls, c):
    X = c.X(cls)
    Z = cls.from_matrix(np_matrix(cls, c.E[0], c.r[0]).astype(c.dtype))
    assert isinstance(Z, cls) and Z.dtype == c.dtype
    close(Z.E, c.E[0], c.dtype)
    close(Z.r, c.r[0], c.dtype, c.scale)
    close(cls.from_matrix(X.as_matrix()).r, c.r[0], c.dtype, c.scale)


@settings(max_examples=15)
@given(c=cases)
def test_force_cross_matrix_is_minus_motion_cross_matrix_transpose(c):
    v = c.vec("m")
    close(force_cross(v), -np.swapaxes(np.asarray(motion_cross(v)), -1, -2), c.dtype)
    w, vo = c.m[..., :3], c.m[..., 3:]
    expected = np.zeros(c.shape + (6, 6))
    expected[..., :3, :3] = expected[..., 3:, 3:] = np_skew(w)
    expected[..., 3:, :3] = np_skew(vo)
    close(motion_cross(v), expected, c.dtype)
    close(motion_cross(v, c.vec("f")), mv6(expected, c.f), c.dtype)
    close(force_cross(v, c.vec("f")), -mv6(np.swapaxes(expected, -1, -2), c.f), c.dtype)


@pytest.mark.parametrize("cls", CLASSES)
@settings(max_examples=15)
@given(c=cases)
def test_cross_product_covariance(cls, c):
    """X motion_cross(v) X⁻¹ = motion_cross(X v) and X* force_cross(v) X*⁻¹ = force_cross(X v)."""
    X, v = c.X(cls), c.vec("m")
    M = np_matrix(cls, c.E[0], c.r[0])
    Minv = np.linalg.inv(M)
    Xv = X.apply_motion(v)
    close(M @ np.asarray(motion_cross(v), np.float64) @ Minv, motion_cross(Xv), c.dtype, c.scale**2)
    Mf = np.swapaxes(Minv, -1, -2)
    close(
        Mf @ np.asarray(force_cross(v), np.float64) @ np.swapaxes(M, -1, -2),
        force_cross(Xv),
        c.dtype,
        c.scale**2,
    )


@pytest.mark.parametrize("cls", CLASSES)
@settings(max_examples=10)
@given(c=cases64)
def test_broadcasting_one_transform_many_vectors_and_reverse(cls, c):
    rng = np.random.default_rng(0)
    X = c.X(cls)
    M = np_matrix(cls, c.E[0], c.r[0])
    Mf = np.swapaxes(np.linalg.inv(M), -1, -2)
    # a batch of vectors with extra leading axes, broadcast against the transform batch
    extra = (4,) + (1,) * len(c.shape)
    ms = rng.normal(size=extra + c.shape + (6,)).astype(c.dtype)
    out = X.apply_motion(jnp.asarray(ms))
    assert out.shape == extra + c.shape + (6,)
    close(out, mv6(M, ms.astype(np.float64)), c.dtype, c.scale)
    close(X.apply_force(jnp.asarray(ms)), mv6(Mf, ms.astype(np.float64)), c.dtype, c.scale)
    # one vector, a batch of transforms
    m1 = c.m.reshape((-1, 6))[0]
    out = X.apply_motion(jnp.asarray(m1, c.dtype))
    assert out.shape == c.shape + (6,)
    close(out, mv6(M, m1), c.dtype, c.scale)
    close(
        X.inverse_apply_force(jnp.asarray(m1, c.dtype)),
        mv6(np.swapaxes(M, -1, -2), m1),
        c.dtype,
        c.scale,
    )
    # an unbatched transform composed with a batch, and a batch with a (5,) batch
    X0 = cls(
        jnp.asarray(c.E[1].reshape((-1, 3, 3))[0], c.dtype),
        jnp.asarray(c.r[1].reshape((-1, 3))[0], c.dtype),
    )
    assert (X0 @ X).batch_shape == c.shape
    Xb = cls(jnp.asarray(random_rotations(rng, (5,)), c.dtype), jnp.zeros((5, 3), c.dtype))
    XXb = X @ Xb
    assert XXb.batch_shape == np.broadcast_shapes(c.shape, (5,))


@pytest.mark.parametrize("cls", CLASSES)
@settings(max_examples=10)
@given(c=cases)
def test_dtype_preserved(cls, c):
    X = c.X(cls)
    m, f = c.vec("m"), c.vec("f")
    arrays = [
        X.apply_motion(m),
        X.apply_force(f),
        X.inverse_apply_motion(m),
        X.inverse_apply_force(f),
        X.as_matrix(),
        X.as_force_matrix(),
        X.as_homogeneous(),
        X.inverse().E,
        X.inverse().r,
        (X @ c.X(cls, 1)).E,
        (X @ c.X(cls, 1)).r,
        cls.from_matrix(X.as_matrix()).r,
        cls.identity(c.shape, c.dtype).E,
        motion_cross(m),
        force_cross(m),
        motion_cross(m, f),
        force_cross(m, f),
    ]
    conv = X.to_plxb() if cls is Plx else X.to_plx()
    arrays += [conv.E, conv.r]
    for a in arrays:
        assert a.dtype == c.dtype, a.dtype
    assert X.dtype == c.dtype


def _all_outputs(X, X2, m, f):
    return (
        X.apply_motion(m),
        X.apply_force(f),
        X.inverse_apply_motion(m),
        X.inverse_apply_force(f),
        X.as_matrix(),
        X.as_force_matrix(),
        X.as_homogeneous(),
        X.inverse(),
        X @ X2,
    )


def _both_ways(groups):
    """Per group of same-class problems: each one's outputs, and vmap over all of them stacked."""
    out = []
    for problems in groups:
        stacked = jax.tree.map(lambda *a: jnp.stack(a), *problems)
        out.append(([_all_outputs(*p) for p in problems], jax.vmap(_all_outputs)(*stacked)))
    return out


# jitted once at import: one compilation per (shape, dtype) covers jit, vmap and both classes
_jit_both_ways = jax.jit(_both_ways)


def _check_jit_and_vmap(c):
    groups = []
    for cls in CLASSES:
        X, X2, m, f = c.X(cls, 0), c.X(cls, 1), c.vec("m"), c.vec("f")
        groups.append([(X, X2, m, f), (X2, X, f, m)])
    results = _jit_both_ways(groups)
    for cls, problems, (jitted, vmapped) in zip(CLASSES, groups, results, strict=True):
        assert isinstance(vmapped[-1], cls) and isinstance(vmapped[-2], cls)
        for i, problem in enumerate(problems):
            ref = _all_outputs(*problem)
            assert jax.tree.structure(jitted[i]) == jax.tree.structure(ref)
            leaves = zip(
                jax.tree.leaves(ref),
                jax.tree.leaves(jitted[i]),
                jax.tree.leaves(vmapped),
                strict=True,
            )
            for a, b, v in leaves:
                assert a.dtype == b.dtype == v.dtype == c.dtype
                assert a.shape == b.shape and v.shape == (2,) + a.shape
                close(b, a, c.dtype, c.scale)
                close(v[i], a, c.dtype, c.scale)


@settings(max_examples=6)
@given(c=cases64)
def test_jit_and_vmap_equal_eager(c):
    _check_jit_and_vmap(c)


def test_jit_and_vmap_equal_eager_float32():
    _check_jit_and_vmap(Case(7, (3, 1, 2, 1), "uniform", np.float32))


@given(R=rotations((5,)))
@settings(max_examples=10)
def test_rotations_strategy_gives_rotations(R):
    np.testing.assert_allclose(
        R @ np.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), (5, 3, 3)), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(R), np.ones(5), atol=1e-12)


# ---------------------------------------------------------------------------
# Pytree behaviour: jit / vmap / grad over transforms passed as arguments
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_vmap_and_jit_over_transform_argument(cls, rng):
    E = random_rotations(rng, (5,))
    r = rng.normal(size=(5, 3))
    m = rng.normal(size=(5, 6))
    X = cls(jnp.asarray(E), jnp.asarray(r))
    expected = mv6(np_matrix(cls, E, r), m)
    out = jax.vmap(lambda X, m: X.apply_motion(m))(X, jnp.asarray(m))
    close(out, expected)
    out = jax.jit(jax.vmap(lambda X, m: X.apply_motion(m)))(X, jnp.asarray(m))
    close(out, expected)
    # transforms as outputs of jit/vmap stay transforms of the right class
    Xi = jax.jit(lambda X: X.inverse())(X)
    assert isinstance(Xi, cls)
    close(Xi.as_matrix(), np.linalg.inv(np_matrix(cls, E, r)))
    Xv = jax.vmap(lambda X: X.inverse())(X)
    assert isinstance(Xv, cls) and Xv.batch_shape == (5,)
    # one transform shared across the batch: in_axes given as a transform of axis specs
    X0 = cls(jnp.asarray(E[0]), jnp.asarray(r[0]))
    out = jax.vmap(lambda X, m: X.apply_motion(m), in_axes=(None, 0))(X0, jnp.asarray(m))
    close(out, mv6(np_matrix(cls, E[0], r[0]), m))
    # fields are broadcast to one batch shape, so an axis spec maps both
    Xr = cls(jnp.asarray(E), jnp.asarray(r[0]))
    assert Xr.r.shape == (5, 3)
    out = jax.vmap(lambda X, m: X.apply_motion(m), in_axes=(cls(0, 0), 0))(Xr, jnp.asarray(m))
    close(out, mv6(np_matrix(cls, E, r[0]), m))


@pytest.mark.parametrize("cls", CLASSES)
def test_pytree_structure_and_tree_map(cls, rng):
    X = cls(jnp.asarray(random_rotations(rng, (4,))), jnp.asarray(rng.normal(size=(4, 3))))
    leaves, treedef = jax.tree.flatten(X)
    assert [leaf.shape for leaf in leaves] == [(4, 3, 3), (4, 3)]
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(X)[0]]
    assert paths == [".E", ".r"]
    # tree.map with non-array results must not trip the constructor's validation
    shapes = jax.tree.map(jnp.shape, X)
    assert shapes.E == (4, 3, 3) and shapes.r == (4, 3)
    assert jax.eval_shape(lambda X: X.inverse(), X).E.shape == (4, 3, 3)
    # grad with respect to the transform returns a transform-shaped cotangent
    g = jax.grad(lambda X: jnp.sum(X.apply_motion(jnp.ones(6))))(X)
    assert isinstance(g, cls) and g.E.shape == (4, 3, 3) and g.r.shape == (4, 3)


@pytest.mark.parametrize("cls", CLASSES)
def test_batch_indexing(cls, rng):
    E = random_rotations(rng, (3, 4))
    r = rng.normal(size=(3, 4, 3))
    X = cls(jnp.asarray(E), jnp.asarray(r))
    assert X.batch_shape == (3, 4)
    close(X[1].E, E[1])
    close(X[:, 2].r, r[:, 2])
    close(X[..., 3].r, r[..., 3, :])
    assert X[1, 2].batch_shape == ()
    # broadcast fields (E batched, r shared) index like their broadcast
    Xs = cls(jnp.asarray(E), jnp.asarray(r[0, 0]))
    close(Xs[2, 1].r, r[0, 0])
    with pytest.raises(IndexError, match="batch shape"):
        X[1, 2][0]


@pytest.mark.parametrize("cls", CLASSES)
def test_identity_defaults(cls):
    Id = cls.identity()
    assert Id.batch_shape == () and Id.dtype == jnp.zeros(()).dtype
    close(Id.as_matrix(), np.eye(6))
    Id32 = cls.identity((2, 3), jnp.float32)
    assert Id32.dtype == jnp.float32 and Id32.batch_shape == (2, 3)
    m = jnp.ones((2, 3, 6), jnp.float32)
    assert Id32.apply_motion(m).dtype == jnp.float32
    close(Id32.apply_force(m), np.ones((2, 3, 6)))
