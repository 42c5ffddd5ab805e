r"""Rotation helpers: skew, Featherstone coordinate rotations, quaternions, SO(3) exp/log.

``skew(v) @ u == cross(v, u)``; active rotations ``R_AB`` (B's axes in A);
``rotx``/``roty``/``rotz`` return Featherstone's coordinate rotation ``E = R_AB.T``
(RBDA table 2.2); quaternions ``wxyz``. Docs page ``conventions.md``.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from . import _smallmat as la
from ._checks import as_float_array
from ._errors import ArgumentError


def skew(v):
    """Cross-product matrix: ``skew(v) @ u == cross(v, u)``.

    Args:
      v: ``(..., 3)`` vector.

    Returns:
      ``(..., 3, 3)`` skew-symmetric matrix.
    """
    return _skew(as_float_array(v, "v", (3,)))


_skew = jax.jit(la.hat)


def _axis_rotation(theta, name, i, j):
    return _axis_kernel(as_float_array(theta, name), i=i, j=j)


@functools.partial(jax.jit, static_argnames=("i", "j"))
def _axis_kernel(theta, *, i, j):
    c, s = jnp.cos(theta), jnp.sin(theta)
    one, zero = jnp.ones_like(c), jnp.zeros_like(c)
    rows: list[list[jnp.ndarray]] = [[zero] * 3 for _ in range(3)]
    k = 3 - i - j
    rows[k][k] = one
    rows[k][i] = rows[k][j] = rows[i][k] = rows[j][k] = zero
    rows[i][i], rows[i][j] = c, s
    rows[j][i], rows[j][j] = -s, c
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def rotx(theta):
    """Featherstone coordinate rotation about x: ``[[1,0,0],[0,c,s],[0,-s,c]]``.

    For a frame B rotated by ``theta`` about A's x axis, maps A- to B-coordinates
    (``E = R_AB.T``; RBDA eq. 2.21).

    Args:
      theta: ``(...)`` angle in radians.

    Returns:
      ``(..., 3, 3)``.
    """
    return _axis_rotation(theta, "theta", 1, 2)


def roty(theta):
    """Featherstone coordinate rotation about y: ``[[c,0,-s],[0,1,0],[s,0,c]]`` (``E = R_AB.T``)."""
    return _axis_rotation(theta, "theta", 2, 0)


def rotz(theta):
    """Featherstone coordinate rotation about z: ``[[c,s,0],[-s,c,0],[0,0,1]]`` (``E = R_AB.T``)."""
    return _axis_rotation(theta, "theta", 0, 1)


def quat_to_matrix(q):
    """Active rotation matrix ``R_AB`` of a ``wxyz`` quaternion.

    ``R = 1 + 2 w [v]× + 2 [v]×²`` of ``q / ‖q‖`` (any non-zero scale); under ``jit`` a
    zero quaternion gives an all-NaN matrix.

    Args:
      q: ``(..., 4)`` scalar-first quaternion ``[w, x, y, z]``.

    Returns:
      ``(..., 3, 3)`` active rotation (B-coordinates to A-coordinates).

    Raises:
      ValueError: a zero quaternion, when ``q`` is concrete.
    """
    q = as_float_array(q, "q", (4,))
    if not isinstance(q, Tracer) and bool(np.any(zero := np.all(np.asarray(q) == 0, axis=-1))):
        idx = [tuple(int(i) for i in ix) for ix in np.argwhere(zero)]
        names = ", ".join("q" if i == () else f"q[{', '.join(map(str, i))}]" for i in idx[:10])
        more = f" and {len(idx) - 10} more" if len(idx) > 10 else ""
        raise ArgumentError(
            "q",
            f"{names}{more} is the zero quaternion, which has no rotation; "
            "expected a non-zero (..., 4) quaternion [w, x, y, z]",
        )
    return _quat_to_matrix(q)


@jax.jit
def _quat_to_matrix(q):
    amax = jnp.max(jnp.abs(q), axis=-1, keepdims=True)
    zero = amax[..., 0] == 0
    # scale by the largest component: ‖q'‖² ∈ [1, 4]. R(k q) = R(q) for every k > 0, so the
    # derivative through k is exactly zero: stop_gradient drops it (differentiating q / amax
    # would form q / amax², which overflows for ‖q‖ = 1e-300 and gives NaN gradients)
    inv = jax.lax.stop_gradient(1.0 / jnp.where(amax == 0, jnp.ones_like(amax), amax))
    qs = q * inv
    n2 = jnp.sum(qs * qs, axis=-1)
    s = jnp.where(zero, jnp.nan, 2.0 / jnp.where(zero, jnp.ones_like(n2), n2))
    w, v = qs[..., 0], qs[..., 1:]
    K = la.hat(v)
    return la.eye3(q.shape[:-1], q.dtype) + s[..., None, None] * (
        w[..., None, None] * K + la.mm(K, K)
    )


def matrix_to_quat(R):
    """Unit ``wxyz`` quaternion, ``w >= 0``, of an active rotation (Shepperd's method).

    Args:
      R: ``(..., 3, 3)`` rotation matrix ``R_AB``.

    Returns:
      ``(..., 4)`` quaternion ``[w, x, y, z]``.
    """
    return _matrix_to_quat(as_float_array(R, "R", (3, 3)))


@jax.jit
def _matrix_to_quat(R):
    r00, r11, r22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    r01, r02, r10 = R[..., 0, 1], R[..., 0, 2], R[..., 1, 0]
    r12, r20, r21 = R[..., 1, 2], R[..., 2, 0], R[..., 2, 1]
    # pivots: 4 w^2, 4 x^2, 4 y^2, 4 z^2 (they sum to 4, so the largest is >= 1)
    t = jnp.stack(
        [1 + r00 + r11 + r22, 1 + r00 - r11 - r22, 1 - r00 + r11 - r22, 1 - r00 - r11 + r22],
        axis=-1,
    )
    cand = jnp.stack(
        [
            jnp.stack([t[..., 0], r21 - r12, r02 - r20, r10 - r01], axis=-1),
            jnp.stack([r21 - r12, t[..., 1], r01 + r10, r02 + r20], axis=-1),
            jnp.stack([r02 - r20, r01 + r10, t[..., 2], r12 + r21], axis=-1),
            jnp.stack([r10 - r01, r02 + r20, r12 + r21, t[..., 3]], axis=-1),
        ],
        axis=-2,
    )
    k = jnp.argmax(t, axis=-1)
    tk = jnp.take_along_axis(t, k[..., None], axis=-1)
    qk = jnp.take_along_axis(cand, k[..., None, None], axis=-2)[..., 0, :]
    q = qk * (0.5 / jnp.sqrt(tk))
    return jnp.where(q[..., :1] < 0, -q, q)


def _sinc_terms(theta_sq):
    """``(sin θ/θ, (1-cos θ)/θ²)`` from ``θ²``, finite gradients at 0."""
    small = theta_sq < 1e-6
    safe_sq = jnp.where(small, jnp.ones_like(theta_sq), theta_sq)
    th = jnp.sqrt(safe_sq)
    a = jnp.where(small, 1 - theta_sq / 6 + theta_sq**2 / 120, jnp.sin(th) / th)
    b = jnp.where(small, 0.5 - theta_sq / 24 + theta_sq**2 / 720, (1 - jnp.cos(th)) / safe_sq)
    return a, b


def so3_exp(omega):
    """Active rotation ``R = exp([ω]×)`` (Rodrigues); finite value and gradients at ``ω = 0``.

    Args:
      omega: ``(..., 3)`` rotation vector (axis times angle, radians).

    Returns:
      ``(..., 3, 3)`` active rotation matrix.
    """
    return _so3_exp(as_float_array(omega, "omega", (3,)))


@jax.jit
def _so3_exp(omega):
    a, b = _sinc_terms(jnp.sum(omega * omega, axis=-1))
    K = la.hat(omega)
    return (
        la.eye3(omega.shape[:-1], omega.dtype)
        + a[..., None, None] * K
        + b[..., None, None] * la.mm(K, K)
    )


def so3_log(R):
    """Rotation vector ``ω`` with ``so3_exp(ω) == R`` and ``‖ω‖ ∈ [0, π]``.

    Through [`matrix_to_quat`][spatialjax.matrix_to_quat]: finite gradients; at exactly π
    the sign is unspecified.

    Args:
      R: ``(..., 3, 3)`` active rotation matrix.

    Returns:
      ``(..., 3)`` rotation vector.
    """
    return _so3_log(as_float_array(R, "R", (3, 3)))


@jax.jit
def _so3_log(R):
    q = _matrix_to_quat(R)
    w, v = q[..., 0], q[..., 1:]
    n_sq = jnp.sum(v * v, axis=-1)
    small = n_sq < 1e-12
    # double where: each branch sees safe arguments where it is not selected, so its unused
    # derivative cannot turn the selected one into NaN (jacrev multiplies it by zero)
    n = jnp.sqrt(jnp.where(small, jnp.ones_like(n_sq), n_sq))  # atan2 branch: ‖v‖ > 0
    w_safe = jnp.where(small, w, jnp.ones_like(w))  # Taylor branch: w ≈ 1; else 1 (w = 0 at π)
    # scale = θ / ‖v‖ with θ = 2 atan2(‖v‖, w); Taylor for ‖v‖ -> 0 (w -> 1)
    scale = jnp.where(
        small,
        2.0 / w_safe - 2.0 * n_sq / (3.0 * w_safe**3),
        2.0 * jnp.arctan2(n, w) / n,
    )
    return scale[..., None] * v


def quat_wxyz_to_xyzw(q):
    """Reorder a scalar-first quaternion to scalar-last (Pinocchio/Eigen/ROS storage)."""
    q = as_float_array(q, "q", (4,))
    return jnp.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def quat_xyzw_to_wxyz(q):
    """Reorder a scalar-last quaternion to scalar-first (spatialjax, brax, MJX, jaxlie)."""
    q = as_float_array(q, "q", (4,))
    return jnp.concatenate([q[..., 3:], q[..., :3]], axis=-1)


# ----------------------------------------------------------------- NumPy, float64, eager
# The only NumPy rotation helpers of the package. The functions above are jitted: each new
# shape compiles and every call dispatches, which a model file's reader would pay per
# <origin>/<pose>/quat (hundreds of 3×3 values, read once, eagerly, from exact decimal text)
# and the Model builder per joint. The readers (spatialjax.io), the Model builder and the
# interop converters use these float64 NumPy twins instead; they follow the same conventions
# (active rotations R_AB, scalar-first quaternions).


def axis_rotation(axis, angle) -> np.ndarray:
    """Active rotation by ``angle`` (rad) about the unit 3-vector ``axis`` (Rodrigues), float64.

    Examples:
      >>> axis_rotation((0.0, 0.0, 1.0), np.pi / 2).round(12) @ np.array([1.0, 0.0, 0.0])
      array([0., 1., 0.])
    """
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def rot_axis(axis: int, angle: float) -> np.ndarray:
    """Active rotation by ``angle`` (rad) about coordinate axis 0, 1 or 2 (x, y, z), float64.

    Examples:
      >>> rot_axis(2, np.pi / 2).round(12) @ np.array([1.0, 0.0, 0.0])
      array([0., 1., 0.])
    """
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i] = R[j, j] = c
    R[i, j], R[j, i] = -s, s
    return R


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF/SDF roll-pitch-yaw: active ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes), float64.

    Examples:
      >>> rpy_to_matrix((0.0, 0.0, np.pi / 2)).round(12)[:, 0]  # x axis turned to y
      array([0., 1., 0.])
    """
    r, p, y = (float(v) for v in rpy)
    return rot_axis(2, y) @ rot_axis(1, p) @ rot_axis(0, r)


def quat_wxyz_to_matrix(q) -> np.ndarray:
    """Active rotations of scalar-first quaternions ``(..., 4)`` (normalised here): ``(..., 3, 3)``.

    Examples:
      >>> quat_wxyz_to_matrix([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]).round(12)[:, 0]
      array([0., 1., 0.])
    """
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def matrix_to_quat_wxyz(R) -> np.ndarray:
    """Unit scalar-first quaternion (``w >= 0``) of an active rotation ``(3, 3)`` (Shepperd).

    Examples:
      >>> matrix_to_quat_wxyz(np.diag([1.0, -1.0, -1.0]))  # half a turn about x
      array([0., 1., 0., 0.])
    """
    R = np.asarray(R, dtype=np.float64)
    t = np.array(
        [
            1 + R[0, 0] + R[1, 1] + R[2, 2],
            1 + R[0, 0] - R[1, 1] - R[2, 2],
            1 - R[0, 0] + R[1, 1] - R[2, 2],
            1 - R[0, 0] - R[1, 1] + R[2, 2],
        ]
    )
    k = int(np.argmax(t))
    if k == 0:
        q = [t[0], R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]
    elif k == 1:
        q = [R[2, 1] - R[1, 2], t[1], R[0, 1] + R[1, 0], R[0, 2] + R[2, 0]]
    elif k == 2:
        q = [R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], t[2], R[1, 2] + R[2, 1]]
    else:
        q = [R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1], t[3]]
    q = np.array(q) * (0.5 / np.sqrt(t[k]))
    return -q if q[0] < 0 else q
