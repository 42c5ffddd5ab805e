r"""Spatial cross products (RBDA section 2.9, eqs. 2.31-2.33).

``motion_cross(v, m)`` is ``v × m`` for motions ``[ω; v_o]``, ``force_cross(v, f)``
is ``v ×* f = −(v×)ᵀ f`` for forces ``[n; f]``; without their second argument they
return the 6×6 matrices ``v×`` and ``v×*`` (Featherstone's ``crm`` and ``crf``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _smallmat as la
from ._checks import as_float_array, broadcast_batch, same_dtype


def motion_cross(v, m=None):
    """Spatial motion cross product ``v × m``, or the 6×6 matrix ``v×`` without ``m``.

    ``v × m = [ω × m_ω; ω × m_v + v_o × m_ω]`` for ``v = [ω; v_o]`` (RBDA eq. 2.31).

    Args:
      v: motion ``(..., 6)``, ``[ω; v_o]``.
      m: motion ``(..., 6)``, batch broadcast against ``v``; None for the matrix.

    Returns:
      ``v × m`` ``(..., 6)``, or ``v×`` ``(..., 6, 6)`` when ``m`` is None.

    Raises:
      ValueError: a last axis is not 6 or the batch shapes do not broadcast.
      TypeError: non-float input, or ``v`` and ``m`` of different dtypes.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import motion_cross
      >>> v = jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])  # spin about z
      >>> m = jnp.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])  # unit velocity along x
      >>> motion_cross(v, m).tolist()
      [0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    """
    v = as_float_array(v, "v", (6,))
    if m is None:
        return _motion_cross_matrix(v)
    m = as_float_array(m, "m", (6,))
    same_dtype(v=v, m=m)
    broadcast_batch("v", v.shape[:-1], "m", m.shape[:-1])
    return _motion_cross(v, m)


def force_cross(v, f=None):
    """Spatial force cross product ``v ×* f``, or the 6×6 matrix ``v×* = -(v×)ᵀ`` without ``f``.

    ``v ×* f = [ω × n + v_o × f_l; ω × f_l]`` for ``v = [ω; v_o]``, ``f = [n; f_l]``
    (RBDA eq. 2.32).

    Args:
      v: motion ``(..., 6)``, ``[ω; v_o]``.
      f: force ``(..., 6)``, batch broadcast against ``v``; None for the matrix.

    Returns:
      ``v ×* f`` ``(..., 6)``, or ``v×*`` ``(..., 6, 6)`` when ``f`` is None.

    Raises:
      ValueError: a last axis is not 6 or the batch shapes do not broadcast.
      TypeError: non-float input, or ``v`` and ``f`` of different dtypes.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import force_cross, motion_cross
      >>> v = jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
      >>> bool(jnp.allclose(force_cross(v), -motion_cross(v).T))
      True
    """
    v = as_float_array(v, "v", (6,))
    if f is None:
        return _force_cross_matrix(v)
    f = as_float_array(f, "f", (6,))
    same_dtype(v=v, f=f)
    broadcast_batch("v", v.shape[:-1], "f", f.shape[:-1])
    return _force_cross(v, f)


# kernels: one jitted program each (an eager call is one dispatch); inputs checked above
@jax.jit
def _motion_cross_matrix(v):
    W, V = la.hat(v[..., :3]), la.hat(v[..., 3:])
    return la.block2x2(W, jnp.zeros_like(W), V, W)


@jax.jit
def _force_cross_matrix(v):
    W, V = la.hat(v[..., :3]), la.hat(v[..., 3:])
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
