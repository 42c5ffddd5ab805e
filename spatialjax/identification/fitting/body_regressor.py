r"""The Newton–Euler body regressor: the body wrench is linear in the 10 inertial parameters.

For a rigid body with spatial inertia ``M`` about the origin of a body frame B
(``[ω; v]`` order, Featherstone eq. 2.63), body twist ``V_WB_B = [ω; v_o]``
and spatial (not classical) body acceleration ``A_WB_B = [α; a_o]``, both in
B coordinates, the Newton–Euler equations (RBDA eq. 2.72) give the wrench
``F_B = [n; f]`` applied to the body, about Bo, in B coordinates:

$$
F = M A + V \times^* M V = Y(V, A)\,π,
\qquad π = [m, h_x, h_y, h_z, I_{xx}, I_{xy}, I_{yy}, I_{xz}, I_{yz}, I_{zz}],
$$

with ``h = m c`` and the rotational inertia ``I`` about Bo. Written out with
``β = a_o + ω × v_o`` (the classical acceleration of Bo):

$$
n = I α + ω \times I ω - β \times h, \qquad
f = m β + (α_\times + ω_\times ω_\times) h.
$$
"""

from __future__ import annotations

import jax.numpy as jnp

from ... import _smallmat as la
from ..._checks import as_float_array, broadcast_batch, same_dtype


def _rotational_columns(w):
    """``L(w)`` with ``I w = L(w) [Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``, as a list of 6 columns."""
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    o = jnp.zeros_like(x)
    return [
        jnp.stack(c, axis=-1)
        for c in ((x, o, o), (y, x, o), (o, y, o), (z, o, x), (o, z, y), (o, o, z))
    ]


def body_regressor(v, a, gravity=None):
    r"""Body regressor ``Y (..., 6, 10)`` with ``Y @ π`` the Newton–Euler body wrench.

    ``Y @ π = M (a - a_g) + v ×* (M v)`` is the wrench ``[n; f]`` (moment about
    the body origin Bo first, then force; B coordinates) that the environment
    other than gravity, e.g. a wrist force/torque sensor at Bo, applies to the
    body. ``M`` is the spatial inertia about Bo built from
    ``π = [m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (Pinocchio's order,
    ``h = m c``, rotational inertia about Bo).

    It equals Pinocchio's ``pin.bodyRegressor(v, a)`` up to ordering:
    Pinocchio's motions are ``[v; ω]`` and its rows ``[f; n]``, so
    ``Y == pin.bodyRegressor(Motion(v_o, ω), Motion(a_o, α))[[3, 4, 5, 0, 1, 2]]``;
    the columns are the same.

    Gravity is handled the Featherstone way (RBDA section 5.3, the fictitious
    base acceleration ``a_0 = -a_g``): the body behaves as if it accelerated by
    ``a - a_g`` in a gravity-free world. Pass ``gravity`` as the gravitational
    acceleration in B coordinates, e.g. ``R_WB.T @ [0, 0, -9.81]``; then
    ``Y @ π = M a + v ×* M v - M [0; g]``, i.e. the wrench on the body minus
    its weight. Pinocchio's ``bodyRegressor`` has no gravity argument: to match
    it pass ``a - [0; g]`` there.

    Args:
      v: ``(..., 6)`` body twist ``V_WB_B = [ω; v_o]`` (angular first).
      a: ``(..., 6)`` spatial body acceleration ``A_WB_B = [α; a_o] = dV_WB_B/dt``
        (the derivative of the body-coordinate twist, not the classical
        acceleration of Bo, which is ``a_o + ω × v_o``).
      gravity: optional ``(..., 3)`` gravitational acceleration ``g`` in B
        coordinates, or ``(..., 6)`` spatial gravitational acceleration
        ``a_g = [α_g; g]``. ``None`` means no gravity.

    Returns:
      ``(..., 6, 10)`` regressor; rows ``[n; f]``, columns in the 10-vector
      order above. Batch axes of ``v``, ``a`` and ``gravity`` broadcast.

    Raises:
      ValueError: a trailing shape is wrong or the batch shapes do not broadcast.
      TypeError: a non-float input or mixed float32/float64.

    References:
      R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, eqs. 2.63, 2.72.
      C. G. Atkeson, C. H. An, J. M. Hollerbach, "Estimation of inertial
      parameters of manipulator loads and links", IJRR 5(3), 1986.

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
            raise ValueError(
                f"gravity: expected shape (..., 3) (linear g in body coordinates) or (..., 6) "
                f"(spatial [α_g; g]), got shape {tuple(gravity.shape)}"
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
