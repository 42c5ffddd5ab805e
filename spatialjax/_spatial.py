r"""Spatial cross products (RBDA section 2.9, eqs. 2.31-2.33).

For a motion ``v = [ω; v_o]`` (angular first):

.. math::
   v\times = \begin{bmatrix} ω_\times & 0 \\ v_{o\times} & ω_\times \end{bmatrix},
   \qquad v\times^* = -(v\times)^T
   = \begin{bmatrix} ω_\times & v_{o\times} \\ 0 & ω_\times \end{bmatrix}.

``crm(v) @ m`` is the derivative of a motion ``m`` moving with velocity ``v``;
``crf(v) @ f`` the same for a force.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _smallmat as la
from ._checks import as_float_array, broadcast_batch, same_dtype


def crm(v):
    """6×6 motion cross-product matrix ``v×`` for a motion ``v = [ω; v_o]`` ``(..., 6)``."""
    return _crm(as_float_array(v, "v", (6,)))


def crf(v):
    """6×6 force cross-product matrix ``v×* = -crm(v)ᵀ`` for a motion ``v`` ``(..., 6)``."""
    return _crf(as_float_array(v, "v", (6,)))


def motion_cross(v, m):
    """``v × m = [ω × m_ω; ω × m_v + v_o × m_ω]`` without building a 6×6 matrix."""
    v = as_float_array(v, "v", (6,))
    m = as_float_array(m, "m", (6,))
    same_dtype(v=v, m=m)
    broadcast_batch("v", v.shape[:-1], "m", m.shape[:-1])
    return _motion_cross(v, m)


def force_cross(v, f):
    """``v ×* f = [ω × n + v_o × f; ω × f]`` without building a 6×6 matrix."""
    v = as_float_array(v, "v", (6,))
    f = as_float_array(f, "f", (6,))
    same_dtype(v=v, f=f)
    broadcast_batch("v", v.shape[:-1], "f", f.shape[:-1])
    return _force_cross(v, f)


# kernels: one jitted program each (an eager call is one dispatch); inputs checked above
@jax.jit
def _crm(v):
    W, V = la.skew(v[..., :3]), la.skew(v[..., 3:])
    return la.block2x2(W, jnp.zeros_like(W), V, W)


@jax.jit
def _crf(v):
    W, V = la.skew(v[..., :3]), la.skew(v[..., 3:])
    return la.block2x2(W, V, jnp.zeros_like(W), W)


@jax.jit
def _motion_cross(v, m):
    w, vo = v[..., :3], v[..., 3:]
    mw, mv = m[..., :3], m[..., 3:]
    return jnp.concatenate([la.cross(w, mw), la.cross(w, mv) + la.cross(vo, mw)], axis=-1)


@jax.jit
def _force_cross(v, f):
    w, vo = v[..., :3], v[..., 3:]
    n, fl = f[..., :3], f[..., 3:]
    return jnp.concatenate([la.cross(w, n) + la.cross(vo, fl), la.cross(w, fl)], axis=-1)
