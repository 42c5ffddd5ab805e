"""Shared test helpers: batch shapes and independent NumPy references (no spatialjax code)."""

import numpy as np

#: Batch shapes every batched property runs over (jaxlie's habit: none, one, and a
#: mixed shape with unit axes that must broadcast).
BATCH_SHAPES = [(), (1,), (3, 1, 2, 1)]


def np_skew(v):
    """``np_skew(v) @ u == np.cross(v, u)`` for ``(..., 3)`` vectors."""
    v = np.asarray(v)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = np.zeros_like(x)
    return np.stack(
        [np.stack([o, -z, y], -1), np.stack([z, o, -x], -1), np.stack([-y, x, o], -1)], -2
    )


def random_rotations(rng, shape):
    """Active rotations from normalised normal quaternions (uniform on SO(3))."""
    q = rng.normal(size=tuple(shape) + (4,))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = (q[..., i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
