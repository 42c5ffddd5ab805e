"""Written-out small-matrix products, cross products and joins over leading batch axes.

Hot paths are written for XLA:CPU's loop emitter (measured with jax 0.10 on
10^6 float32 items; see ``benchmarks/README.md``):

* products are sums of broadcast multiplies of slices
  (``A[..., :, k, None] * B[..., None, k, :]``), never a ``jnp.sum`` over a
  tiny axis: such a reduction is emitted as a separate kernel that ran 6-50x
  slower (3x3 product: 160-230 ms against 23-27 ms, a copy of the bytes);
* results are assembled with ``jnp.where`` on a constant mask
  (:func:`stack_last`, :func:`join_last`), never with ``jnp.stack`` /
  ``jnp.concatenate``: a concatenate inside a fused loop is emitted as a
  branch per element and kept ``Plx.apply_motion`` at 4x its copy time (and
  split it into two kernels); with selects it runs at the copy time.

All functions broadcast leading axes NumPy-style.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def _sum(terms):
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def mv(A, x):
    """``A @ x`` for ``A (..., n, k)`` and ``x (..., k)`` (``k`` small: 3 or 4)."""
    return _sum([A[..., :, k] * x[..., k : k + 1] for k in range(A.shape[-1])])


def mtv(A, x):
    """``A.T @ x`` for ``A (..., k, n)`` and ``x (..., k)``."""
    return _sum([A[..., k, :] * x[..., k : k + 1] for k in range(A.shape[-2])])


def mm(A, B):
    """``A @ B`` for ``(..., n, k)`` and ``(..., k, m)`` matrices (``k`` small: 3 or 4)."""
    return _sum([A[..., :, k, None] * B[..., None, k, :] for k in range(A.shape[-1])])


def mtm(A, B):
    """``A.T @ B`` for ``(..., k, n)`` and ``(..., k, m)`` matrices."""
    return _sum([A[..., k, :, None] * B[..., k, None, :] for k in range(A.shape[-2])])


def mmt(A, B):
    """``A @ B.T`` for ``(..., n, k)`` and ``(..., m, k)`` matrices."""
    return _sum([A[..., :, k, None] * B[..., None, :, k] for k in range(A.shape[-1])])


def tr(A):
    """``A.T`` over the last two axes."""
    return jnp.swapaxes(A, -1, -2)


def cross(a, b):
    """``a × b`` for ``(..., 3)`` vectors (written out; broadcasts)."""
    a0, a1, a2 = a[..., 0:1], a[..., 1:2], a[..., 2:3]
    b0, b1, b2 = b[..., 0:1], b[..., 1:2], b[..., 2:3]
    return stack_last(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


def stack_last(*parts):
    """``jnp.concatenate(parts, -1)`` for ``(..., 1)`` parts, assembled with selects.

    The parts broadcast against each other; the result has ``len(parts)``
    entries on its last axis. Equivalent to ``jnp.concatenate`` (values and
    derivatives) but fuses into the surrounding loop on XLA:CPU.
    """
    k = len(parts)
    idx = np.arange(k)
    out = parts[-1]
    for i in range(k - 2, -1, -1):
        out = jnp.where(idx == i, parts[i], out)
    shape = jnp.broadcast_shapes(*(p.shape[:-1] for p in parts)) + (k,)
    return jnp.broadcast_to(out, shape)


def join_last(a, b):
    """``jnp.concatenate([a, b], -1)`` for two ``(..., k)`` arrays of equal ``k``, with a select.

    Batch axes broadcast. Used for ``[ω; v]`` / ``[n; f]`` spatial vectors.
    """
    first = np.array([[True], [False]])
    y = jnp.where(first, a[..., None, :], b[..., None, :])
    return y.reshape(y.shape[:-2] + (2 * a.shape[-1],))


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
