"""jaxlie converters: ``jaxlie.SE3`` poses (same pose as ``Plxb``) and ``(v, ω)`` tangents.

jit-able and differentiable; jaxlie is imported when a converter is called.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._checks import as_float_array
from .._rotations import matrix_to_quat, quat_to_matrix
from .._transforms import Plxb
from ._common import as_plxb, import_optional, swap_halves

__all__ = ["from_jaxlie_se3", "from_jaxlie_tangent", "to_jaxlie_se3", "to_jaxlie_tangent"]


def to_jaxlie_se3(X):
    """``Plxb`` (or ``Plx``) -> ``jaxlie.SE3`` ``T_AB`` (maps B points to A), batched."""
    jaxlie = import_optional("jaxlie", "interop")
    Y = as_plxb(X)
    shape = Y.batch_shape
    E = jnp.broadcast_to(Y.E, shape + (3, 3))
    r = jnp.broadcast_to(Y.r, shape + (3,))
    return jaxlie.SE3.from_rotation_and_translation(jaxlie.SO3(matrix_to_quat(E)), r)


def from_jaxlie_se3(T) -> Plxb:
    """``jaxlie.SE3`` ``T_AB`` -> ``Plxb(E=R_AB, r=t)`` (same pose, same batch)."""
    params = T.wxyz_xyz
    return Plxb(quat_to_matrix(params[..., :4]), params[..., 4:])


def to_jaxlie_tangent(v):
    """Our motion ``[ω; v]`` -> jaxlie's tangent ``(v, ω)`` (``SE3.exp`` / ``log`` order)."""
    return swap_halves(as_float_array(v, "v", (6,)))


def from_jaxlie_tangent(xi):
    """jaxlie's tangent ``(v, ω)`` -> our motion ``[ω; v]``."""
    return swap_halves(as_float_array(xi, "xi", (6,)))
