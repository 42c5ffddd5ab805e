"""The Newton–Euler body regressor: the body wrench is linear in the 10 inertial parameters.

``F = M A + V ×* M V = Y(V, A) π`` (Featherstone 2008, eqs. 2.63, 2.72), in body coordinates.
"""

from __future__ import annotations

import jax.numpy as jnp

from ... import _smallmat as la
from ..._checks import as_float_array, broadcast_batch, same_dtype
from ..errors import IdentifyError


def _rotational_columns(w):
    """``L(w)`` with ``I w = L(w) [Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``, as a list of 6 columns."""
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    o = jnp.zeros_like(x)
    return [
        jnp.stack(c, axis=-1)
        for c in ((x, o, o), (y, x, o), (o, y, o), (z, o, x), (o, z, y), (o, o, z))
    ]


def body_regressor(v, a, gravity=None):
    """Body regressor ``Y (..., 6, 10)`` with ``Y @ π`` the Newton–Euler body wrench.

    ``Y @ π = M (a - a_g) + v ×* (M v)``: the wrench ``[n; f]`` (moment about the
    body origin Bo, then force; B coordinates) that the environment other than
    gravity applies to the body, ``π = [m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz,
    Izz]`` (Pinocchio's order, ``h = m c``, inertia about Bo). Equals
    ``pin.bodyRegressor(Motion(v_o, ω), Motion(a_o − g, α))[[3, 4, 5, 0, 1, 2]]``.

    Args:
      v: ``(..., 6)`` body twist ``V_WB_B = [ω; v_o]`` (angular first).
      a: ``(..., 6)`` spatial body acceleration ``A_WB_B = [α; a_o] = dV_WB_B/dt``
        (not the classical acceleration of Bo, ``a_o + ω × v_o``).
      gravity: optional ``(..., 3)`` gravitational acceleration ``g`` in B
        coordinates (e.g. ``R_WB.T @ [0, 0, -9.81]``), or ``(..., 6)``
        ``a_g = [α_g; g]``. ``None`` means no gravity.

    Returns:
      ``(..., 6, 10)`` regressor; rows ``[n; f]``, columns in the order of ``π``.
      Batch axes of ``v``, ``a`` and ``gravity`` broadcast.

    Raises:
      ValueError: a trailing shape is wrong or the batch shapes do not broadcast.
      TypeError: a non-float input or mixed float32/float64.

    References:
      R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, §5.3 (gravity as a
      base acceleration). C. G. Atkeson, C. H. An, J. M. Hollerbach, IJRR 5(3), 1986.

    Examples:
      >>> import jax.numpy as jnp
      >>> Y = body_regressor(jnp.zeros(6), jnp.array([0.0, 0, 0, 1, 0, 0]))
      >>> Y[3:, 0].tolist()  # a unit linear acceleration needs a force of m along x
      [1.0, 0.0, 0.0]
    """
    v = as_float_array(v, "v", (6,))
    a = as_float_array(a, "a", (6,))
    same_dtype(v=v, a=a)
    broadcast_batch("v", v.shape[:-1], "a", a.shape[:-1])
    if gravity is not None:
        gravity = as_float_array(gravity, "gravity")
        if gravity.shape[-1:] not in ((3,), (6,)):
            raise IdentifyError(
                "gravity",
                f"expected shape (..., 3) (linear g in body coordinates) or (..., 6) "
                f"(spatial [α_g; g]), got shape {tuple(gravity.shape)}",
            )
        same_dtype(v=v, gravity=gravity)
        broadcast_batch(
            "v and a", jnp.broadcast_shapes(v.shape, a.shape)[:-1], "gravity", gravity.shape[:-1]
        )
        if gravity.shape[-1] == 3:
            gravity = jnp.concatenate([jnp.zeros_like(gravity), gravity], axis=-1)
        a = a - gravity

    w, vo = v[..., :3], v[..., 3:]
    alpha, ao = a[..., :3], a[..., 3:]
    w, vo, alpha, ao = jnp.broadcast_arrays(w, vo, alpha, ao)
    beta = ao + la.cross(w, vo)
    zero3 = jnp.zeros_like(beta)

    # mass column: n = 0, f = β
    cols = [jnp.concatenate([zero3, beta], axis=-1)]
    # first-moment columns: n = h × β = -β × h, f = α × h + ω × (ω × h)
    for e in jnp.eye(3, dtype=v.dtype):
        e = jnp.broadcast_to(e, beta.shape)
        n = la.cross(e, beta)
        f = la.cross(alpha, e) + la.cross(w, la.cross(w, e))
        cols.append(jnp.concatenate([n, f], axis=-1))
    # rotational-inertia columns: n = I α + ω × I ω, f = 0
    for la_alpha, la_w in zip(_rotational_columns(alpha), _rotational_columns(w), strict=True):
        n = la_alpha + la.cross(w, la_w)
        cols.append(jnp.concatenate([n, zero3], axis=-1))
    return jnp.stack(cols, axis=-1)
