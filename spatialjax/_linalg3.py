"""Written-out 3-vector and 3x3 products over arbitrary leading batch axes.

XLA fuses these broadcast-multiply-reduce patterns into a single loop over
the batch; on CPU that runs several times faster than ``einsum`` or
``matmul`` over tiny trailing axes (see ``../shared/design/STYLE.md`` point 4
and ``benchmarks/``). All functions broadcast leading axes NumPy-style.
"""

from __future__ import annotations

import jax.numpy as jnp


def mv(A, x):
    """``A @ x`` for ``A (..., 3, 3)`` and ``x (..., 3)``."""
    return jnp.sum(A * x[..., None, :], axis=-1)


def mtv(A, x):
    """``A.T @ x`` for ``A (..., 3, 3)`` and ``x (..., 3)``."""
    return jnp.sum(A * x[..., :, None], axis=-2)


def mm(A, B):
    """``A @ B`` for ``(..., 3, 3)`` matrices."""
    return jnp.sum(A[..., :, :, None] * B[..., None, :, :], axis=-2)


def mtm(A, B):
    """``A.T @ B`` for ``(..., 3, 3)`` matrices."""
    return jnp.sum(A[..., :, :, None] * B[..., :, None, :], axis=-3)


def mmt(A, B):
    """``A @ B.T`` for ``(..., 3, 3)`` matrices."""
    return jnp.sum(A[..., :, None, :] * B[..., None, :, :], axis=-1)


def tr(A):
    """``A.T`` over the last two axes."""
    return jnp.swapaxes(A, -1, -2)


def cross(a, b):
    """``a × b`` for ``(..., 3)`` vectors (written out; broadcasts)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def skew(v):
    """``skew(v) @ u == cross(v, u)``; ``v (..., 3)`` -> ``(..., 3, 3)`` (no input checks)."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = jnp.zeros_like(x)
    return jnp.stack(
        [
            jnp.stack([o, -z, y], axis=-1),
            jnp.stack([z, o, -x], axis=-1),
            jnp.stack([-y, x, o], axis=-1),
        ],
        axis=-2,
    )


def vee(S):
    """Inverse of ``skew`` on the skew-symmetric part of ``S (..., 3, 3)``."""
    return 0.5 * jnp.stack(
        [S[..., 2, 1] - S[..., 1, 2], S[..., 0, 2] - S[..., 2, 0], S[..., 1, 0] - S[..., 0, 1]],
        axis=-1,
    )


def eye3(batch_shape=(), dtype=None):
    """Identity ``(*batch_shape, 3, 3)``."""
    return jnp.broadcast_to(jnp.eye(3, dtype=dtype), tuple(batch_shape) + (3, 3))


def block2x2(A, B, C, D):
    """Assemble ``[[A, B], [C, D]]`` from ``(..., n, n)`` blocks (batch axes broadcast)."""
    shape = jnp.broadcast_shapes(A.shape, B.shape, C.shape, D.shape)
    A, B, C, D = (jnp.broadcast_to(M, shape) for M in (A, B, C, D))
    top = jnp.concatenate([A, B], axis=-1)
    bottom = jnp.concatenate([C, D], axis=-1)
    return jnp.concatenate([top, bottom], axis=-2)
