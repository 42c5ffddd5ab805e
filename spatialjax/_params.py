"""The inertial 10-vector layout, written once: ``π ↔ (m, h, I)``, ``I ↔ S``, ``J ↔ π``.

Pinocchio order about the frame origin; functions take an array module ``xp``.
Docs page ``spatial.md#inertial-parameters``.
"""

from __future__ import annotations

from types import ModuleType

import jax.numpy as jnp
import numpy as np

#: Index of the mass in ``π``.
MASS = 0
#: Slice of the first moment ``h = m c`` in ``π``.
FIRST_MOMENT = slice(1, 4)
#: Slice of the packed inertia ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` in ``π``.
INERTIA = slice(4, 10)
#: Row and column of each packed inertia entry: ``I6[k] = I[I6_ROWS[k], I6_COLS[k]]``.
I6_ROWS = (0, 0, 1, 0, 1, 2)
I6_COLS = (0, 1, 1, 2, 2, 2)
_POS = {}
for _k, (_a, _b) in enumerate(zip(I6_ROWS, I6_COLS, strict=True)):
    _POS[_a, _b] = _POS[_b, _a] = _k
#: ``I6_INDEX[a][b]``: position of ``I[a, b]`` (either triangle) in the packed 6-vector.
I6_INDEX = tuple(tuple(_POS[a, b] for b in range(3)) for a in range(3))


def trace3(A):
    """``tr(A)`` of ``(..., 3, 3)`` matrices."""
    return A[..., 0, 0] + A[..., 1, 1] + A[..., 2, 2]


def sym_from6(i6, xp: ModuleType = jnp):
    """``(..., 6)`` ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` -> symmetric ``(..., 3, 3)``."""
    return xp.stack(
        [xp.stack([i6[..., I6_INDEX[a][b]] for b in range(3)], -1) for a in range(3)], -2
    )


def sym_to6(I, xp: ModuleType = jnp):
    """Symmetric part of ``(..., 3, 3)`` -> ``(..., 6)`` ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``."""
    return xp.stack(
        [
            I[..., a, b] if a == b else 0.5 * (I[..., a, b] + I[..., b, a])
            for a, b in zip(I6_ROWS, I6_COLS, strict=True)
        ],
        -1,
    )


def _eye3(A, xp):
    return xp.eye(3, dtype=A.dtype)


def second_moment_from_inertia(I, xp: ModuleType = jnp):
    """``S = ½ tr(I) 1 − I`` (both about the same point, same axes)."""
    return 0.5 * trace3(I)[..., None, None] * _eye3(I, xp) - I


def inertia_from_second_moment(S, xp: ModuleType = jnp):
    """``I = tr(S) 1 − S`` (both about the same point, same axes)."""
    return trace3(S)[..., None, None] * _eye3(S, xp) - S


def split(pi, xp: ModuleType = jnp):
    """``(m (...), h (..., 3), I (..., 3, 3))`` of ``(..., 10)`` parameters."""
    return pi[..., MASS], pi[..., FIRST_MOMENT], sym_from6(pi[..., INERTIA], xp)


def pack(m, h, I, xp: ModuleType = jnp):
    """``(..., 10)`` from ``m (...)``, ``h (..., 3)``, ``I (..., 3, 3)`` (``I`` symmetrised)."""
    shape = np.broadcast_shapes(np.shape(m), np.shape(h)[:-1], np.shape(I)[:-2])
    return xp.concatenate(
        [
            xp.broadcast_to(m, shape)[..., None],
            xp.broadcast_to(h, shape + (3,)),
            xp.broadcast_to(sym_to6(I, xp), shape + (6,)),
        ],
        axis=-1,
    )


def pseudo_inertia(pi, xp: ModuleType = jnp):
    """``(..., 4, 4)`` pseudo-inertia ``J = [[S, h], [hᵀ, m]]`` of ``(..., 10)`` parameters."""
    m, h, I = split(pi, xp)
    S = second_moment_from_inertia(I, xp)
    top = xp.concatenate([S, h[..., :, None]], axis=-1)
    bottom = xp.concatenate([h, m[..., None]], axis=-1)[..., None, :]
    return xp.concatenate([top, bottom], axis=-2)


def from_pseudo_inertia(J, xp: ModuleType = jnp):
    """``(..., 10)`` parameters of a ``(..., 4, 4)`` pseudo-inertia (symmetric part used)."""
    S = J[..., :3, :3]
    h = 0.5 * (J[..., :3, 3] + J[..., 3, :3])
    return pack(J[..., 3, 3], h, inertia_from_second_moment(S, xp), xp)


def slices(pi):
    """The ten entries of ``π`` as ``(..., 1)`` slices, for written-out kernels."""
    return tuple(pi[..., k : k + 1] for k in range(10))


def pseudo_inertia_upper(pi):
    """Upper triangle of ``J`` row-major as ``(..., 1)`` slices (10 entries, see ``slices``)."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = slices(pi)
    half = 0.5 * (xx + yy + zz)
    return (half - xx, -xy, -xz, hx, half - yy, -yz, hy, half - zz, hz, m)


def mass_com_inertia(p) -> tuple[float, np.ndarray, np.ndarray]:
    """``(m, c, I_c)`` of one 10-vector with ``m ≠ 0`` (NumPy float64, parallel-axis rule)."""
    m = float(p[0])
    c = np.asarray(p[1:4], dtype=np.float64) / m
    xx, xy, yy, xz, yz, zz = (float(x) for x in p[4:10])
    I_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    I_c = I_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return m, c, 0.5 * (I_c + I_c.T)


def params_from_mass_com_inertia(m, c, I_c) -> np.ndarray:
    """The 10-vector about the origin of mass ``m``, centre of mass ``c`` and ``I_c`` (NumPy
    float64, one body): ``I_o = I_c + m (|c|² 1 − c cᵀ)``."""
    I_o = I_c + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


#: ``(10, 4, 4)`` float64 ``Eᵢ = ∂J/∂πᵢ``: ``J(π) = Σᵢ πᵢ Eᵢ``.
PSEUDO_INERTIA_BASIS = pseudo_inertia(np.eye(10), np)
PSEUDO_INERTIA_BASIS.setflags(write=False)
