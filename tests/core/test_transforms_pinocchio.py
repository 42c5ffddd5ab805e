"""Agreement with Pinocchio (``pin``), an independent C++ implementation, at float64.

Frame mapping. ``pin.SE3(R, p)`` is the pose of frame B in frame A
(``R = R_AB``, ``p`` = B's origin in A). Its ``act`` maps B-coordinates to
A-coordinates, so its action matrix is the *inverse* of our A -> B transform:

    pin.SE3(R, p).toActionMatrix()  <->  Plxb(R, p).inverse()  ==  Plx(R.T, p).inverse()

Pinocchio orders spatial vectors linear first (``[v; ω]``, ``[f; n]``); ours are
angular first. The permutation ``P = [[0, 1], [1, 0]]`` (3x3 blocks) converts
both ways and is applied explicitly below. Eigen stores quaternions ``xyzw``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax import (
    Plx,
    Plxb,
    matrix_to_quat,
    quat_to_matrix,
    quat_wxyz_to_xyzw,
    rotx,
    roty,
    rotz,
    so3_exp,
    so3_log,
)

pin = pytest.importorskip("pinocchio")

N = 1000
TOL = 1e-12

# [v; ω] <-> [ω; v]
P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])


def np_quat_to_matrix(q):
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = (q[..., i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def assert_close(actual, expected, tol=TOL):
    err = np.max(np.abs(np.asarray(actual, np.float64) - np.asarray(expected, np.float64)))
    assert err <= tol, f"max abs error {err:.3e} > {tol:.0e}"


@pytest.fixture(scope="module")
def poses():
    """N random poses of B in A: uniform rotations (quaternions of normal samples), p ~ N(0, 1)."""
    rng = np.random.default_rng(7)
    R = np_quat_to_matrix(rng.normal(size=(N, 4)))
    p = rng.normal(size=(N, 3))
    m = rng.normal(size=(N, 6))  # ours, [ω; v]
    f = rng.normal(size=(N, 6))  # ours, [n; f]
    M = [pin.SE3(R[i], p[i]) for i in range(N)]
    return {"R": R, "p": p, "m": m, "f": f, "M": M}


def _stack(fn, M):
    return np.stack([fn(Mi) for Mi in M])


def test_action_matrices_match_pinocchio(poses):
    R, p, M = poses["R"], poses["p"], poses["M"]
    A = _stack(lambda Mi: P @ Mi.toActionMatrix() @ P, M)
    D = _stack(lambda Mi: P @ Mi.toDualActionMatrix() @ P, M)
    Y = Plxb(jnp.asarray(R), jnp.asarray(p))
    X = Plx(jnp.asarray(np.swapaxes(R, -1, -2)), jnp.asarray(p))
    assert_close(Y.inverse().as_matrix(), A)
    assert_close(X.inverse().as_matrix(), A)
    assert_close(Y.inverse().as_force_matrix(), D)
    assert_close(X.inverse().as_force_matrix(), D)
    # and the forward direction A -> B is the inverse action
    assert_close(Y.as_matrix(), _stack(lambda Mi: P @ Mi.inverse().toActionMatrix() @ P, M))
    assert_close(
        X.as_force_matrix(), _stack(lambda Mi: P @ Mi.inverse().toDualActionMatrix() @ P, M)
    )


def test_act_and_act_inv_match_pinocchio(poses):
    R, p, m, f, M = poses["R"], poses["p"], poses["m"], poses["f"], poses["M"]
    act_m = _stack(lambda i: P @ M[i].act(pin.Motion(P @ m[i])).vector, range(N))
    act_f = _stack(lambda i: P @ M[i].act(pin.Force(P @ f[i])).vector, range(N))
    inv_m = _stack(lambda i: P @ M[i].actInv(pin.Motion(P @ m[i])).vector, range(N))
    inv_f = _stack(lambda i: P @ M[i].actInv(pin.Force(P @ f[i])).vector, range(N))
    for T in (
        Plxb(jnp.asarray(R), jnp.asarray(p)),
        Plx(jnp.asarray(np.swapaxes(R, -1, -2)), jnp.asarray(p)),
    ):
        mj, fj = jnp.asarray(m), jnp.asarray(f)
        # act: B -> A, our inverse direction
        assert_close(T.inverse_apply_motion(mj), act_m)
        assert_close(T.inverse_apply_force(fj), act_f)
        assert_close(T.inverse().apply_motion(mj), act_m)
        assert_close(T.inverse().apply_force(fj), act_f)
        # actInv: A -> B, our forward direction
        assert_close(T.apply_motion(mj), inv_m)
        assert_close(T.apply_force(fj), inv_f)


def test_inverse_and_points_match_pinocchio(poses):
    R, p, M = poses["R"], poses["p"], poses["M"]
    Minv = [Mi.inverse() for Mi in M]
    Y = Plxb(jnp.asarray(R), jnp.asarray(p))
    Yi = Y.inverse()
    assert_close(Yi.E, _stack(lambda Mi: Mi.rotation, Minv))
    assert_close(Yi.r, _stack(lambda Mi: Mi.translation, Minv))
    # Plx holds the coordinate rotation: the inverse pose SE3(Rᵀ, -Rᵀ p) is Plx(R, -Rᵀ p)
    Xi = Plx(jnp.asarray(np.swapaxes(R, -1, -2)), jnp.asarray(p)).inverse()
    assert_close(Xi.E, _stack(lambda Mi: Mi.rotation.T, Minv))
    assert_close(Xi.r, _stack(lambda Mi: Mi.translation, Minv))
    # homogeneous: ours maps points A -> B (actInv); the inverse maps B -> A (act, M.homogeneous)
    x = np.random.default_rng(3).normal(size=(N, 3))
    xh = np.concatenate([x, np.ones((N, 1))], -1)
    T_ba = np.asarray(Y.as_homogeneous())
    T_ab = np.asarray(Yi.as_homogeneous())
    assert_close(T_ab, _stack(lambda Mi: Mi.homogeneous, M))
    assert_close((T_ba @ xh[..., None])[:, :3, 0], _stack(lambda i: M[i].actInv(x[i]), range(N)))
    assert_close((T_ab @ xh[..., None])[:, :3, 0], _stack(lambda i: M[i].act(x[i]), range(N)))


def test_composition_matches_pinocchio(poses):
    R, p, M = poses["R"], poses["p"], poses["M"]
    R2, p2, M2 = R[::-1], p[::-1], M[::-1]
    M12 = [a * b for a, b in zip(M, M2, strict=True)]
    Y12 = Plxb(jnp.asarray(R), jnp.asarray(p)) @ Plxb(jnp.asarray(R2), jnp.asarray(p2))
    assert_close(Y12.E, _stack(lambda Mi: Mi.rotation, M12))
    assert_close(Y12.r, _stack(lambda Mi: Mi.translation, M12))
    # Plx composes right to left: A -> B1 is X1, B1 -> B2 is X2, so A -> B2 is X2 @ X1
    X1 = Plx(jnp.asarray(np.swapaxes(R, -1, -2)), jnp.asarray(p))
    X2 = Plx(jnp.asarray(np.swapaxes(R2, -1, -2)), jnp.asarray(p2))
    A12 = _stack(lambda Mi: P @ Mi.toActionMatrix() @ P, M12)
    assert_close((X2 @ X1).inverse().as_matrix(), A12)
    assert_close(Y12.inverse().as_matrix(), A12)


def test_quaternions_match_pinocchio():
    rng = np.random.default_rng(11)
    q = rng.normal(size=(N, 4))  # wxyz, not normalised
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    xyzw = np.asarray(quat_wxyz_to_xyzw(jnp.asarray(q)))
    np.testing.assert_array_equal(xyzw, np.concatenate([q[:, 1:], q[:, :1]], -1))
    # Eigen's vector constructor takes coeffs in xyzw order
    R_pin = _stack(lambda c: pin.Quaternion(c).toRotationMatrix(), xyzw)
    assert_close(quat_to_matrix(jnp.asarray(q)), R_pin)
    # the 4-scalar constructor is (w, x, y, z)
    assert_close(pin.Quaternion(*q[0]).toRotationMatrix(), R_pin[0])
    coeffs = _stack(lambda Ri: pin.Quaternion(Ri).coeffs(), R_pin)  # xyzw
    coeffs = np.where(coeffs[:, 3:] < 0, -coeffs, coeffs)
    q_ours = np.asarray(matrix_to_quat(jnp.asarray(R_pin)))
    assert_close(q_ours, np.concatenate([coeffs[:, 3:], coeffs[:, :3]], -1))


def test_so3_exp_log_match_pinocchio():
    rng = np.random.default_rng(12)
    k = rng.normal(size=(N, 3))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    theta = rng.uniform(0.0, np.pi, size=(N, 1))
    theta[:5, 0] = [0.0, 1e-9, 1e-4, np.pi - 1e-6, np.pi - 1e-3]
    w = k * theta
    R_pin = _stack(pin.exp3, w)
    assert_close(so3_exp(jnp.asarray(w)), R_pin)
    # pin.log3 goes through acos(trace) and loses precision near π (measured: 1.5e-11 at
    # θ = 3.138, 2e-13 on [2.8, 3.1)); ours goes through the quaternion and stays at
    # rounding level. Compare with Pinocchio where it is well conditioned, and with the
    # known ω everywhere.
    log_ours = np.asarray(so3_log(jnp.asarray(R_pin)))
    log_pin = _stack(pin.log3, R_pin)
    well = theta[:, 0] < 2.8
    assert_close(log_ours[well], log_pin[well])
    assert_close(log_ours, w)
    assert_close(log_ours, log_pin, tol=1e-9)


def test_rot_xyz_match_transposed_pinocchio_rotate():
    theta = np.random.default_rng(13).uniform(-np.pi, np.pi, size=N)
    for fn, axis in ((rotx, "x"), (roty, "y"), (rotz, "z")):
        expected = _stack(lambda t, a=axis: pin.utils.rotate(a, t).T, theta)
        assert_close(fn(jnp.asarray(theta)), expected)
