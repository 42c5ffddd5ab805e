r"""Joint friction: the friction regressor (viscous, Coulomb, offset columns)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._model import Model
from ._sweep import _as_input


def friction_regressor(model: Model, v) -> jax.Array:
    r"""Joint friction regressor: ``τ_friction = Y_f(v) @ φ``.

    Three columns per one-degree-of-freedom joint ``j`` (in body order):
    viscous ``v_j``, Coulomb ``sign(v_j)`` and a constant offset ``1``, so
    ``φ = [F_v1, F_c1, o_1, F_v2, ...]`` and ``τ_j = F_vj v_j + F_cj sign(v_j) + o_j``.
    ``sign(0) = 0`` (``jnp.sign``): at rest the Coulomb column is zero, and
    its derivative is zero everywhere (no subgradient). A free flyer's six
    rows are zero (no joint friction on a floating base).

    Args:
      model: the tree.
      v: ``(..., nv)`` velocity.

    Returns:
      ``(..., nv, 3 * n1)`` with ``n1`` the number of one-DoF joints.
    """
    return _friction_kernel(model, _as_input(v, "v", model.nv, model))


@jax.jit
def _friction_kernel(model: Model, v) -> jax.Array:
    """:func:`friction_regressor` on a checked ``v``."""
    off = 6 if model.floating_base else 0
    n1 = model.nv - off
    vj = v[..., off:]
    cols = jnp.stack([vj, jnp.sign(vj), jnp.ones_like(vj)], axis=-1)  # (..., n1, 3)
    eye = jnp.eye(n1, dtype=v.dtype)
    block = eye[:, :, None] * cols[..., None, :, :]  # (..., n1, n1, 3): row d, joint j, col
    block = block.reshape(v.shape[:-1] + (n1, 3 * n1))
    if off:
        block = jnp.concatenate([jnp.zeros(v.shape[:-1] + (off, 3 * n1), v.dtype), block], -2)
    return block
