"""Batch-last kernels: spatial algebra on ``(bodies, components..., N)`` arrays.

Model leaves get a trailing axis of 1; a child's pose in its parent is ``(E, r)``,
``E = R_parent_child``; inertias are 10-vectors about the frame origin.

``mv``, ``mm``, ``cross``, ``split``, ``join``, ``quat_matrix``, ``motion_to_child``,
``motion_to_parent``, ``crm`` and ``projected_regressor_columns`` also run on NumPy arrays,
in NumPy (``stack``): ``identification``'s host regressor evaluates them over a log with
nothing compiled.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._smallmat import sum_terms as _sum


def mv(R, x):
    """``R x``: ``R (..., 3, 3, N)``, ``x (..., 3, N)`` (written out: no reduce op)."""
    return (
        R[..., :, 0, :] * x[..., 0:1, :]
        + R[..., :, 1, :] * x[..., 1:2, :]
        + R[..., :, 2, :] * x[..., 2:3, :]
    )


def _mtv(R, x):
    """``Rᵀ x``."""
    return (
        R[..., 0, :, :] * x[..., 0:1, :]
        + R[..., 1, :, :] * x[..., 1:2, :]
        + R[..., 2, :, :] * x[..., 2:3, :]
    )


def mm(A, B):
    """``A B`` for ``(..., 3, 3, N)`` operands."""
    return (
        A[..., :, 0:1, :] * B[..., 0:1, :, :]
        + A[..., :, 1:2, :] * B[..., 1:2, :, :]
        + A[..., :, 2:3, :] * B[..., 2:3, :, :]
    )


def stack(arrays, axis: int):
    """``jnp.stack``, or ``np.stack`` where every array is a NumPy array (module docstring)."""
    if all(isinstance(a, np.ndarray) for a in arrays):
        return np.stack(arrays, axis=axis)
    return jnp.stack(arrays, axis=axis)


def cross(a, b):
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    b0, b1, b2 = b[..., 0, :], b[..., 1, :], b[..., 2, :]
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-2)


def skew(a):
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    z = jnp.zeros_like(a0)
    return jnp.stack(
        [jnp.stack([z, -a2, a1], -2), jnp.stack([a2, z, -a0], -2), jnp.stack([-a1, a0, z], -2)],
        axis=-3,
    )


def split(x):
    return x[..., :3, :], x[..., 3:, :]


def join(a, b):
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.concatenate([a, b], axis=-2)
    return jnp.concatenate([a, b], axis=-2)


def quat_matrix(qw, qx, qy, qz):
    """Active rotation of a ``wxyz`` quaternion (normalised here), ``(3, 3, N)``."""
    s = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
    rows = [
        [1 - s * (qy * qy + qz * qz), s * (qx * qy - qw * qz), s * (qx * qz + qw * qy)],
        [s * (qx * qy + qw * qz), 1 - s * (qx * qx + qz * qz), s * (qy * qz - qw * qx)],
        [s * (qx * qz - qw * qy), s * (qy * qz + qw * qx), 1 - s * (qx * qx + qy * qy)],
    ]
    return stack([stack(r, 0) for r in rows], 0)


# ------------------------------------------------------------ spatial operations
def motion_to_child(E, r, m):
    """Parent -> child coordinates, child pose ``(E, r)`` in parent: ``[Eᵀω; Eᵀ(v − r×ω)]``."""
    w, v = split(m)
    return join(_mtv(E, w), _mtv(E, v - cross(r, w)))


def force_to_parent(E, r, f):
    """Child -> parent coordinates of a force: ``[E n + r × E f; E f]`` (``Xᵀ f``)."""
    n, fl = split(f)
    fp = mv(E, fl)
    return join(mv(E, n) + cross(r, fp), fp)


def motion_to_parent(E, r, m):
    """Child -> parent coordinates of a motion: ``[E ω; E v + r × E ω]`` (``X⁻¹ m``)."""
    w, v = split(m)
    wp = mv(E, w)
    return join(wp, mv(E, v) + cross(r, wp))


def crm(v, m):
    """Motion cross product ``v × m = [ω×m_ω; ω×m_v + v×m_ω]`` (RBDA eq. 2.31)."""
    w, vl = split(v)
    mw, mv = split(m)
    return join(cross(w, mw), cross(w, mv) + cross(vl, mw))


def projected_regressor_columns(s, w, al, x):
    """``sᵀ Φ(v, a)``: the 10 body-regressor columns against a motion ``s``, ``(..., 10, N)``
    (``w`` angular velocity, ``al`` angular acceleration, ``x`` the body origin's
    acceleration, body frame; NumPy arrays in, NumPy out: ``batchlast``'s docstring)."""
    sw, sv = split(s)
    h = cross(x, sw) + cross(sv, al) + cross(cross(sv, w), w)
    t = cross(sw, w)
    s0, s1, s2 = sw[..., 0, :], sw[..., 1, :], sw[..., 2, :]
    t0, t1, t2 = t[..., 0, :], t[..., 1, :], t[..., 2, :]
    a0, a1, a2 = al[..., 0, :], al[..., 1, :], al[..., 2, :]
    w0, w1, w2 = w[..., 0, :], w[..., 1, :], w[..., 2, :]
    cols = [
        sv[..., 0, :] * x[..., 0, :] + sv[..., 1, :] * x[..., 1, :] + sv[..., 2, :] * x[..., 2, :],
        h[..., 0, :],
        h[..., 1, :],
        h[..., 2, :],
        s0 * a0 + t0 * w0,
        s0 * a1 + s1 * a0 + t0 * w1 + t1 * w0,
        s1 * a1 + t1 * w1,
        s0 * a2 + s2 * a0 + t0 * w2 + t2 * w0,
        s1 * a2 + s2 * a1 + t1 * w2 + t2 * w1,
        s2 * a2 + t2 * w2,
    ]
    return stack(cols, axis=-2)


def crf(v, f):
    """Force cross product ``v ×* f = [ω×n + v×f; ω×f]`` (RBDA eq. 2.32)."""
    w, vl = split(v)
    n, fl = split(f)
    return join(cross(w, n) + cross(vl, fl), cross(w, fl))


def inertia_times(p, m):
    """Spatial inertia (10-vector ``p``) times motion: ``[I_o ω + h×v; m v − h×ω]`` (eq. 2.63)."""
    w, vl = split(m)
    mass, h = p[..., 0:1, :], p[..., 1:4, :]
    xx, xy, yy, xz, yz, zz = (p[..., k, :] for k in range(4, 10))
    w0, w1, w2 = w[..., 0, :], w[..., 1, :], w[..., 2, :]
    Iw = jnp.stack(
        [xx * w0 + xy * w1 + xz * w2, xy * w0 + yy * w1 + yz * w2, xz * w0 + yz * w1 + zz * w2],
        axis=-2,
    )
    return join(Iw + cross(h, vl), mass * vl - cross(h, w))


def inertia_to_parent(p, R, t):
    """10-vector in the parent frame of a body given in a child frame at ``(R, t)`` (``T J Tᵀ``)."""
    m, h = p[..., 0:1, :], p[..., 1:4, :]
    xx, xy, yy, xz, yz, zz = (p[..., k, :] for k in range(4, 10))
    half = 0.5 * (xx + yy + zz)
    S = jnp.stack(
        [
            jnp.stack([half - xx, -xy, -xz], -2),
            jnp.stack([-xy, half - yy, -yz], -2),
            jnp.stack([-xz, -yz, half - zz], -2),
        ],
        -3,
    )
    u = mv(R, h)
    RSRt = mm(mm(R, S), jnp.swapaxes(R, -2, -3))
    ut = u[..., :, None, :] * t[..., None, :, :]
    Sb = (
        RSRt
        + ut
        + jnp.swapaxes(ut, -2, -3)
        + m[..., None, :] * t[..., :, None, :] * t[..., None, :, :]
    )
    s00, s11, s22 = Sb[..., 0, 0, :], Sb[..., 1, 1, :], Sb[..., 2, 2, :]
    hb = u + m * t
    return jnp.concatenate(
        [
            jnp.broadcast_to(m, hb[..., :1, :].shape),
            hb,
            jnp.stack(
                [s11 + s22, -Sb[..., 0, 1, :], s00 + s22, -Sb[..., 0, 2, :], -Sb[..., 1, 2, :],
                 s00 + s11],
                -2,
            ),
        ],
        axis=-2,
    )  # fmt: skip


def dot6(a, b):
    """``Σ_k a[..., k, :] b[..., k, :]`` over a 6-long component axis (written out)."""
    return sum(a[..., k, :] * b[..., k, :] for k in range(6))


def n(x):
    """Model leaf ``(nb, k...)`` -> ``(nb, k..., 1)`` (broadcasts against ``N``)."""
    return x[..., None]


def rows_to_child(E, r, m):
    """``X m`` on rows: ``[Eᵀω; Eᵀ(v − r × ω)]`` (6 rows in, 6 rows out)."""
    w0, w1, w2, v0, v1, v2 = m
    u = (v0 - (r[1] * w2 - r[2] * w1), v1 - (r[2] * w0 - r[0] * w2), v2 - (r[0] * w1 - r[1] * w0))
    w = (w0, w1, w2)
    return [E[k] * w[0] + E[3 + k] * w[1] + E[6 + k] * w[2] for k in range(3)] + [
        E[k] * u[0] + E[3 + k] * u[1] + E[6 + k] * u[2] for k in range(3)
    ]


def rows_force_to_parent(E, r, f):
    """``Xᵀ f`` on rows: ``[E n + r × E f; E f]``."""
    n, fl = f[:3], f[3:]
    fp = [E[3 * k] * fl[0] + E[3 * k + 1] * fl[1] + E[3 * k + 2] * fl[2] for k in range(3)]
    En = [E[3 * k] * n[0] + E[3 * k + 1] * n[1] + E[3 * k + 2] * n[2] for k in range(3)]
    return [
        En[0] + r[1] * fp[2] - r[2] * fp[1],
        En[1] + r[2] * fp[0] - r[0] * fp[2],
        En[2] + r[0] * fp[1] - r[1] * fp[0],
    ] + fp


# ------------------------------------------------------------- 6x6 matrices
def dot(a, b, n):
    """``Σ_k a[..., k, :] b[..., k, :]`` over an ``n``-long component axis (written out)."""
    return _sum(a[..., k, :] * b[..., k, :] for k in range(n))


def m6v(M, x):
    """``M x``: ``M (..., 6, 6, N)``, ``x (..., 6, N)``."""
    return _sum(M[..., :, k, :] * x[..., k : k + 1, :] for k in range(6))


def m6m(A, B):
    """``A B`` for ``(..., 6, 6, N)`` operands."""
    return _sum(A[..., :, k : k + 1, :] * B[..., k : k + 1, :, :] for k in range(6))


def m6tm(A, B):
    """``Aᵀ B`` for ``(..., 6, 6, N)`` operands."""
    return _sum(A[..., k, :, None, :] * B[..., k : k + 1, :, :] for k in range(6))


def _blocks(A, B, C, D):
    """``[[A, B], [C, D]]`` from four ``(..., 3, 3, N)`` blocks -> ``(..., 6, 6, N)``."""
    return jnp.concatenate(
        [jnp.concatenate([A, B], axis=-2), jnp.concatenate([C, D], axis=-2)], axis=-3
    )


def inertia_matrix(p):
    """Spatial inertia 6x6 ``[[I_o, [h]×], [[h]×ᵀ, m 1]]`` of a 10-vector (RBDA eq. 2.63)."""
    m, h = p[..., 0, :], p[..., 1:4, :]
    xx, xy, yy, xz, yz, zz = (p[..., k, :] for k in range(4, 10))
    Io = jnp.stack(
        [jnp.stack([xx, xy, xz], -2), jnp.stack([xy, yy, yz], -2), jnp.stack([xz, yz, zz], -2)],
        axis=-3,
    )
    H = skew(h)
    z = jnp.zeros_like(m)
    mI = jnp.stack(
        [jnp.stack([m, z, z], -2), jnp.stack([z, m, z], -2), jnp.stack([z, z, m], -2)], axis=-3
    )
    return _blocks(Io, H, -H, mI)


def crm_matrix(v):
    """``(v×)`` as a 6x6 matrix: ``[[ω×, 0], [v×, ω×]]`` (RBDA eq. 2.31)."""
    W, Vl = skew(v[..., :3, :]), skew(v[..., 3:, :])
    return _blocks(W, jnp.zeros_like(W), Vl, W)


def crf_bar_matrix(f):
    """The 6x6 matrix of ``m ↦ m ×* f``: ``−[[n×, f×], [f×, 0]]`` (``f = [n; f]``)."""
    Nn, Fl = skew(f[..., :3, :]), skew(f[..., 3:, :])
    return -_blocks(Nn, Fl, Fl, jnp.zeros_like(Fl))
