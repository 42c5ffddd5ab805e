"""Rotation helpers: skew, rotx/roty/rotz, quaternions, so3_exp / so3_log.

References are textbook closed forms written here in NumPy (Rodrigues'
formula, the quaternion rotation matrix, RBDA table 2.2 for rotx/roty/rotz).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, np_quat_to_matrix, np_skew, raises_argument
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

from spatialjax import (
    ArgumentError,
    matrix_to_quat,
    quat_to_matrix,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_wxyz,
    rotx,
    roty,
    rotz,
    skew,
    so3_exp,
    so3_log,
)

DTYPES = [np.float32, np.float64]


def np_rodrigues(w):
    """exp([w]×) via the axis-angle form R = cos θ 1 + sin θ [k]× + (1 − cos θ) k kᵀ."""
    w = np.asarray(w, np.float64)
    th = np.linalg.norm(w, axis=-1)
    k = w / np.where(th > 0, th, 1.0)[..., None]
    K = np.zeros(w.shape[:-1] + (3, 3))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -k[..., 2], k[..., 1], -k[..., 0]
    K[..., 1, 0], K[..., 2, 0], K[..., 2, 1] = k[..., 2], -k[..., 1], k[..., 0]
    c, s = np.cos(th)[..., None, None], np.sin(th)[..., None, None]
    return c * np.eye(3) + s * K + (1 - c) * k[..., :, None] * k[..., None, :]


def tol(dtype):
    return (
        {"rtol": 1e-5, "atol": 3e-6}
        if np.dtype(dtype) == np.float32
        else {"rtol": 1e-12, "atol": 1e-13}
    )


def close(a, b, dtype=np.float64):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), **tol(dtype))


@st.composite
def quaternions(draw, shape=None):
    """Quaternions from standard-normal samples, with a batch shape and a sample kind."""
    shape = draw(st.sampled_from(BATCH_SHAPES)) if shape is None else shape
    kind = draw(st.sampled_from(["uniform", "near_identity", "near_pi"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q = rng.normal(size=tuple(shape) + (4,))
    if kind == "near_identity":
        q[..., 0] = 1.0
        q[..., 1:] *= 1e-5
    elif kind == "near_pi":
        q[..., 0] = 1e-5 * q[..., 0]
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


# Module-level jitted wrappers for the property sweeps and the finite-difference checks: one
# compilation per (batch shape, dtype) instead of one per primitive per shape eagerly. The eager
# path is the one test_rotations_jit_and_vmap_equal_eager compares against jit and vmap (for
# every function here) and the one the closed-form and singular-point tests below call.
_quat_to_matrix = jax.jit(quat_to_matrix)
_matrix_to_quat = jax.jit(matrix_to_quat)
_so3_exp = jax.jit(so3_exp)
_so3_log = jax.jit(so3_log)


def canonical(q):
    """Unit quaternion with w >= 0 (the sign matrix_to_quat returns)."""
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


# ---------------------------------------------------------------------------
# skew and the Featherstone coordinate rotations
# ---------------------------------------------------------------------------


def test_skew_is_cross_product(rng):
    a, b = rng.normal(size=(2, 10, 3))
    S = skew(jnp.asarray(a))
    close((np.asarray(S) @ b[..., None])[..., 0], np.cross(a, b))
    close(S, -np.swapaxes(np.asarray(S), -1, -2))
    close(skew(jnp.array([1.0, 2.0, 3.0])), [[0, -3, 2], [3, 0, -1], [-2, 1, 0]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_rot_xyz_closed_forms(dtype):
    th = np.array([-2.5, -0.3, 0.0, 0.7, np.pi]).astype(dtype)
    c, s, o, i = np.cos(th), np.sin(th), np.zeros(5), np.ones(5)
    expected = {
        rotx: [[i, o, o], [o, c, s], [o, -s, c]],
        roty: [[c, o, -s], [o, i, o], [s, o, c]],
        rotz: [[c, s, o], [-s, c, o], [o, o, i]],
    }
    for fn, rows in expected.items():
        E = fn(jnp.asarray(th))
        assert E.shape == (5, 3, 3) and E.dtype == dtype
        close(E, np.moveaxis(np.array(rows), (0, 1), (-2, -1)), dtype)


def test_rot_xyz_are_transposed_active_rotations(rng):
    """rotx(θ) = R_AB.T where B is A rotated by θ about x; same for y, z."""
    th = rng.uniform(-np.pi, np.pi, size=7)
    for fn, axis in ((rotx, 0), (roty, 1), (rotz, 2)):
        w = np.zeros((7, 3))
        w[:, axis] = th
        R = np_rodrigues(w)
        close(fn(jnp.asarray(th)), np.swapaxes(R, -1, -2))
        # a vector fixed in A, seen from B: e.g. B's own axis of rotation is unchanged
        e = np.zeros(3)
        e[axis] = 1.0
        close(np.asarray(fn(jnp.asarray(th))) @ e, np.broadcast_to(e, (7, 3)))
    # python scalars are accepted
    close(rotz(0.5), np.swapaxes(np_rodrigues(np.array([0.0, 0.0, 0.5])), -1, -2))


# ---------------------------------------------------------------------------
# Quaternions
# ---------------------------------------------------------------------------


@settings(max_examples=20)
@given(q=quaternions(), dtype=st.sampled_from(DTYPES))
def test_quat_to_matrix_closed_form(q, dtype):
    R = _quat_to_matrix(jnp.asarray(q, dtype))
    assert R.dtype == dtype and R.shape == q.shape[:-1] + (3, 3)
    close(R, np_quat_to_matrix(q.astype(dtype)), dtype)
    # q and -q, and any positive scaling, give the same rotation
    close(_quat_to_matrix(jnp.asarray(-3.0 * q, dtype)), R, dtype)


@settings(max_examples=20)
@given(q=quaternions(), dtype=st.sampled_from(DTYPES))
def test_matrix_to_quat_round_trip(q, dtype):
    R = np_quat_to_matrix(q).astype(dtype)
    qq = _matrix_to_quat(jnp.asarray(R))
    assert qq.dtype == dtype and qq.shape == q.shape
    assert np.all(np.asarray(qq)[..., 0] >= 0)
    close(np.linalg.norm(np.asarray(qq, np.float64), axis=-1), np.ones(q.shape[:-1]), dtype)
    close(_quat_to_matrix(qq), R, dtype)
    # the quaternion itself (up to the sign convention) unless w ~ 0, where ±q are both valid
    qc = canonical(q)
    if np.all(np.abs(qc[..., 0]) > 1e-3):
        close(qq, qc, dtype)


@pytest.mark.parametrize(
    "axis", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, -2, 3], [0, -1, 1]]
)
def test_matrix_to_quat_at_pi(axis):
    """Rotations by exactly π (w = 0): the trace pivot vanishes, Shepperd's other pivots work."""
    k = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    R = 2 * np.outer(k, k) - np.eye(3)
    q = np.asarray(matrix_to_quat(jnp.asarray(R)))
    close(abs(q[0]), 0.0)
    close(abs(np.dot(q[1:], k)), 1.0)
    close(quat_to_matrix(jnp.asarray(q)), R)


def test_quat_reordering(rng):
    q = rng.normal(size=(4, 4))
    xyzw = np.asarray(quat_wxyz_to_xyzw(jnp.asarray(q)))
    close(xyzw, np.concatenate([q[:, 1:], q[:, :1]], -1))
    close(quat_xyzw_to_wxyz(jnp.asarray(xyzw)), q)


# ---------------------------------------------------------------------------
# so3_exp / so3_log
# ---------------------------------------------------------------------------


@settings(max_examples=20)
@given(q=quaternions(), dtype=st.sampled_from(DTYPES))
def test_so3_exp_rodrigues(q, dtype):
    # axis-angle vector with angle in [0, π] from the quaternion
    qc = canonical(q)
    n = np.linalg.norm(qc[..., 1:], axis=-1, keepdims=True)
    th = 2 * np.arctan2(n, qc[..., :1])
    w = (qc[..., 1:] * np.where(n > 0, th / np.where(n > 0, n, 1), 2.0)).astype(dtype)
    R = _so3_exp(jnp.asarray(w))
    assert R.dtype == dtype and R.shape == w.shape[:-1] + (3, 3)
    close(R, np_rodrigues(w), dtype)
    close(R, np_quat_to_matrix(q), dtype)


@settings(max_examples=20)
@given(q=quaternions(), dtype=st.sampled_from(DTYPES))
def test_so3_log_inverts_exp(q, dtype):
    R = np_quat_to_matrix(q).astype(dtype)
    w = _so3_log(jnp.asarray(R))
    assert w.dtype == dtype and w.shape == q.shape[:-1] + (3,)
    theta = np.linalg.norm(np.asarray(w, np.float64), axis=-1)
    assert np.all(theta <= np.pi + 1e-6)
    close(np_rodrigues(np.asarray(w, np.float64)), R, dtype)
    close(_so3_exp(w), R, dtype)


def test_so3_exp_small_and_zero_angles():
    # 1.9e-6: just inside so3_log's Taylor branch (‖v‖² < 1e-12), where it must use the true w
    for th in [0.0, 1e-12, 1e-8, 1.9e-6, 2.1e-6, 1e-4, 9.9e-4, 1.01e-3, 1e-2]:
        w = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8]) * th
        # a few ulps: pins the Taylor coefficients (a wrong θ² term in (1 - cos θ)/θ²
        # shows up as ~4e-14 at the switch-over θ² = 1e-6)
        np.testing.assert_allclose(so3_exp(jnp.asarray(w)), np_rodrigues(w), rtol=0, atol=1e-15)
        np.testing.assert_allclose(so3_log(jnp.asarray(np_rodrigues(w))), w, rtol=1e-14, atol=0)
        R32 = so3_exp(jnp.asarray(w, jnp.float32))
        assert R32.dtype == jnp.float32
        close(R32, np_rodrigues(w), np.float32)
    close(so3_exp(jnp.zeros(3)), np.eye(3))
    np.testing.assert_array_equal(np.asarray(so3_log(jnp.eye(3))), np.zeros(3))


@pytest.mark.parametrize("delta", [0.0, 1e-12, 1e-9, 1e-6, 1e-3])
def test_so3_log_exp_round_trip_up_to_pi(delta, rng):
    k = rng.normal(size=(16, 3))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    w = k * (np.pi - delta)
    R = np_rodrigues(w)
    w_back = np.asarray(_so3_log(jnp.asarray(R)))
    close(np_rodrigues(w_back), R)
    if delta == 0.0:
        # at exactly π, ω and −ω are both valid
        sign = np.sign(np.sum(w_back * w, -1, keepdims=True))
        close(sign * w_back, w)
    else:
        # the log is ill-conditioned near π: error ~ eps / δ in the axis direction
        np.testing.assert_allclose(w_back, w, atol=1e-13 + 1e-15 / delta)


def _rotation_outputs(q):
    R = quat_to_matrix(q)
    return R, matrix_to_quat(R), so3_log(R), so3_exp(so3_log(R)), skew(q[..., 1:])


# one compilation per (shape, dtype) covers both jit and vmap
_rotation_outputs_jit_vmap = jax.jit(
    lambda q: (_rotation_outputs(q), jax.vmap(_rotation_outputs)(q))
)


@pytest.mark.parametrize(
    "shape, dtype", [((), np.float64), ((3, 1, 2, 1), np.float64), ((1,), np.float32)]
)
def test_rotations_jit_and_vmap_equal_eager(shape, dtype, rng):
    q = jnp.asarray(rng.normal(size=(2,) + shape + (4,)), dtype)
    eager = _rotation_outputs(q)
    jitted, vmapped = _rotation_outputs_jit_vmap(q)
    for out in (jitted, vmapped):
        for a, b in zip(eager, out, strict=True):
            assert a.dtype == b.dtype == dtype and a.shape == b.shape
            close(b, a, dtype)


# ---------------------------------------------------------------------------
# so3_log derivatives at 0, π and near π
# ---------------------------------------------------------------------------


def np_right_jacobian_inverse(w):
    """``J_r⁻¹(ω) = 1 + ½[ω]× + (1/θ² − (1 + cos θ)/(2θ sin θ)) [ω]×²``.

    Solà, Deray & Atchuthan, "A micro Lie theory for state estimation in robotics"
    (2018), eq. 144: ``Log(R Exp(tδ)) = Log(R) + t J_r⁻¹(ω) δ + O(t²)``. The coefficient
    tends to ``1/12`` at θ = 0 and to ``1/π²`` at θ = π (``(1 + cos θ)/sin θ = cot(θ/2)``).
    """
    w = np.asarray(w, np.float64)
    th = np.linalg.norm(w)
    if th < 1e-4:
        coef = 1.0 / 12.0 + th**2 / 720.0
    else:
        coef = 1.0 / th**2 - 1.0 / (2.0 * th * np.tan(th / 2.0))
    K = np_skew(w)
    return np.eye(3) + 0.5 * K + coef * K @ K


_AXIS = np.array([1.0, -2.0, 3.0]) / np.sqrt(14.0)
_LOG_POINTS = {
    "zero": np.zeros(3),
    "generic": 0.5 * _AXIS,
    "pi_x": np.array([np.pi, 0.0, 0.0]),  # exactly representable: R = diag(1, −1, −1)
    "pi": np.pi * _AXIS,
    "near_pi_1e-3": (np.pi - 1e-3) * _AXIS,
    "near_pi_1e-6": (np.pi - 1e-6) * _AXIS,
}
_jac_log_fwd = jax.jit(jax.jacfwd(so3_log))
_jac_log_rev = jax.jit(jax.jacrev(so3_log))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("point", list(_LOG_POINTS))
def test_so3_log_jacobians_at_zero_and_pi(point, dtype):
    """jacfwd and jacrev are finite, agree, and give ``J_r⁻¹(ω) δ`` along ``R [δ]×``.

    Regression: jacrev was NaN at exactly π (the Taylor branch's safe ``w`` had its
    ``jnp.where`` arguments swapped, so the unused branch divided by ``w = 0``).
    """
    w = _LOG_POINTS[point]
    if dtype == np.float32 and point == "near_pi_1e-6":
        pytest.skip("π − 1e-6 is π in float32 rounding of R (covered by 'pi')")
    R = jnp.asarray(np_rodrigues(w) if point != "pi_x" else np.diag([1.0, -1.0, -1.0]), dtype)
    Jf = np.asarray(_jac_log_fwd(R), np.float64)
    Jr = np.asarray(_jac_log_rev(R), np.float64)
    assert Jf.shape == Jr.shape == (3, 3, 3)
    assert np.all(np.isfinite(Jf)) and np.all(np.isfinite(Jr))
    t = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-12}
    np.testing.assert_allclose(Jr, Jf, **t)
    # tangent directions R [δ]× of SO(3): the manifold derivative has a closed form
    w_out = np.asarray(_so3_log(R), np.float64)  # at π: ω or −ω, the formula uses the one returned
    Rn = np.asarray(R, np.float64)
    Jinv = np_right_jacobian_inverse(w_out)
    for k in range(3):
        delta = np.eye(3)[k]
        tangent = Rn @ np_skew(delta)
        for J in (Jf, Jr):
            np.testing.assert_allclose(np.einsum("aij,ij->a", J, tangent), Jinv @ delta, **t)


@pytest.mark.parametrize("point", ["zero", "generic", "near_pi_1e-3"])
def test_so3_log_gradients_match_finite_differences(point):
    """Ambient-space derivatives (off SO(3) too) against central differences, float64."""
    R = jnp.asarray(np_rodrigues(_LOG_POINTS[point]))
    check_grads(_so3_log, (R,), order=1, modes=["fwd", "rev"], eps=1e-6)


# ---------------------------------------------------------------------------
# quat_to_matrix: any non-zero norm, zero quaternion
# ---------------------------------------------------------------------------

_Q0 = np.array([0.3, -0.5, 0.7, 0.41])
_Q_SCALES = {
    np.float64: [1e-300, 1e-200, 1e-160, 1e-20, 1.0, 1e20, 1e160, 1e200, 1e300],
    np.float32: [1e-35, 1e-25, 1e-19, 1e-10, 1.0, 1e10, 1e19, 1e25, 1e35],
}
_jac_q_fwd = jax.jit(jax.jacfwd(quat_to_matrix))
_jac_q_rev = jax.jit(jax.jacrev(quat_to_matrix))


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_to_matrix_any_nonzero_norm(dtype):
    """Regression: norms 1e-200 / 1e200 (float64) and <= 1e-19 (float32) gave NaN because
    ``q · q`` under- or overflowed; the quaternion is now scaled by its largest component."""
    scales = np.asarray(_Q_SCALES[dtype], dtype)
    q = jnp.asarray(_Q0.astype(dtype) * scales[:, None])
    R = quat_to_matrix(q)
    ref = np.broadcast_to(np_quat_to_matrix(_Q0.astype(dtype)), R.shape)
    close(R, ref, dtype)
    close(_quat_to_matrix(q), ref, dtype)
    # components of very different sizes
    big_small = np.array([1.0, 1e-30, 0.0, -1e-30]) * (1e200 if dtype == np.float64 else 1e30)
    close(quat_to_matrix(jnp.asarray(big_small, dtype)), np.eye(3), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_to_matrix_gradients_finite_at_any_norm(dtype):
    """``R(a q) = R(q)``, so ``∂R/∂q`` at ``a q`` is ``(1/a) ∂R/∂q`` at ``q``: finite for any ``a``.

    Regression: NaN for tiny and huge norms before the largest-component scaling.
    """
    q0 = jnp.asarray(_Q0 / np.linalg.norm(_Q0), dtype)
    J0 = np.asarray(_jac_q_fwd(q0), np.float64)
    t = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    for a in _Q_SCALES[dtype]:
        qa = q0 * jnp.asarray(a, dtype)
        for jac in (_jac_q_fwd, _jac_q_rev):
            Ja = np.asarray(jac(qa), np.float64)
            assert np.all(np.isfinite(Ja)), a
            np.testing.assert_allclose(Ja * float(a), J0, **t)


def test_quat_to_matrix_gradients_match_finite_differences():
    # generic, and ties in the largest magnitude (the scaling component switches there)
    for q in (_Q0, np.array([0.5, -0.5, 0.5, 0.5]), np.array([0.0, 0.0, 1.0, 1.0])):
        check_grads(_quat_to_matrix, (jnp.asarray(q),), order=1, modes=["fwd", "rev"], eps=1e-6)


def test_quat_to_matrix_zero_quaternion():
    """Zero quaternion: eager calls raise naming the index; under jit the matrix is NaN."""
    q = np.tile(_Q0, (2, 3, 1))
    q[1, 2] = 0.0
    with raises_argument(ArgumentError, "q", match=r"q\[1, 2\] is the zero quaternion"):
        quat_to_matrix(jnp.asarray(q))
    with raises_argument(ArgumentError, "q"):
        quat_to_matrix(jnp.zeros(4))
    R = np.asarray(_quat_to_matrix(jnp.asarray(q)))
    assert np.all(np.isnan(R[1, 2]))
    close(R[0, 0], np_quat_to_matrix(_Q0))
    assert np.all(np.isfinite(np.delete(R.reshape(6, 3, 3), 5, axis=0)))
