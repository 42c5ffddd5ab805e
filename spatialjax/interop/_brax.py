"""brax converters: ``brax.base.Transform``, ``Motion``, ``Force`` and ``Inertia``.

brax is imported when a ``to_brax_*`` converter is called; conventions: docs page
``conventions.md#other-libraries``.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._checks import as_float_array
from .._errors import ArgumentTypeError
from .._inertia import RigidBodyInertia
from .._rotations import matrix_to_quat, quat_to_matrix
from .._smallmat import matmul
from .._transforms import Plxb
from ._common import as_plxb, import_optional

__all__ = [
    "from_brax_force",
    "from_brax_inertia",
    "from_brax_motion",
    "from_brax_transform",
    "to_brax_force",
    "to_brax_inertia",
    "to_brax_motion",
    "to_brax_transform",
]


def to_brax_transform(X):
    """``Plxb`` (or ``Plx``) -> ``brax.base.Transform(pos=r, rot=wxyz of R_AB)`` (same pose).

    ``do(Motion)`` maps parent- to child-coordinates (``apply_motion``), ``do(Force)``
    child- to parent-coordinates (``inverse_apply_force``).
    """
    base = import_optional("brax.base", "interop")
    Y = as_plxb(X)
    shape = Y.batch_shape
    E = jnp.broadcast_to(Y.E, shape + (3, 3))
    r = jnp.broadcast_to(Y.r, shape + (3,))
    return base.Transform(pos=r, rot=matrix_to_quat(E))


def from_brax_transform(t) -> Plxb:
    """``brax.base.Transform`` (anything with ``pos`` and wxyz ``rot``) -> ``Plxb``."""
    return Plxb(quat_to_matrix(jnp.asarray(t.rot)), jnp.asarray(t.pos))


def to_brax_motion(v):
    """``[ω; v]`` -> ``brax.base.Motion(ang=ω, vel=v)``."""
    base = import_optional("brax.base", "interop")
    v = as_float_array(v, "v", (6,))
    return base.Motion(ang=v[..., :3], vel=v[..., 3:])


def from_brax_motion(m):
    """``brax.base.Motion`` -> ``[ang; vel]`` = ``[ω; v]``."""
    return jnp.concatenate([jnp.asarray(m.ang), jnp.asarray(m.vel)], axis=-1)


def to_brax_force(f):
    """``[n; f]`` -> ``brax.base.Force(ang=n, vel=f)`` (brax names the force ``vel``)."""
    base = import_optional("brax.base", "interop")
    f = as_float_array(f, "f", (6,))
    return base.Force(ang=f[..., :3], vel=f[..., 3:])


def from_brax_force(f):
    """``brax.base.Force`` -> ``[ang; vel]`` = ``[n; f]``."""
    return jnp.concatenate([jnp.asarray(f.ang), jnp.asarray(f.vel)], axis=-1)


def to_brax_inertia(inertia: RigidBodyInertia, *, principal: bool = False):
    """``RigidBodyInertia`` -> ``brax.base.Inertia`` in brax's link convention.

    brax's ``System.link.inertia`` holds ``transform`` (pose of the CoM frame in the link
    frame), ``i`` (3×3 inertia about the CoM in that frame's axes) and ``mass``; not the
    world-frame form of ``Transform.do(Inertia)``.

    Args:
      inertia: about the link origin, in link axes.
      principal: ``False`` (default): ``rot`` is the identity and ``i`` the
        full inertia about the CoM in link axes. ``True``: ``rot`` is the
        principal frame and ``i`` diagonal (as brax's MJCF loader makes it);
        not differentiable at repeated moments.
    """
    base = import_optional("brax.base", "interop")
    if not isinstance(inertia, RigidBodyInertia):
        raise ArgumentTypeError(
            "inertia", f"expected a RigidBodyInertia, got {type(inertia).__name__}"
        )
    m, c, I_c = inertia.mass, inertia.com, inertia.inertia_com()
    shape = inertia.batch_shape
    if principal:
        d, Q = jnp.linalg.eigh(I_c)
        Q = Q * jnp.where(jnp.linalg.det(Q) < 0, -1.0, 1.0).astype(Q.dtype)[..., None, None]
        rot = matrix_to_quat(Q)
        i = d[..., :, None] * jnp.eye(3, dtype=I_c.dtype)
    else:
        rot = jnp.broadcast_to(jnp.asarray([1.0, 0.0, 0.0, 0.0], I_c.dtype), shape + (4,))
        i = I_c
    return base.Inertia(transform=base.Transform(pos=c, rot=rot), i=i, mass=m)


def from_brax_inertia(it) -> RigidBodyInertia:
    """brax ``Inertia`` (link convention, see ``to_brax_inertia``) -> ``RigidBodyInertia``."""
    R = quat_to_matrix(jnp.asarray(it.transform.rot))
    i = jnp.asarray(it.i)
    I_c = matmul(matmul(R, i), jnp.swapaxes(R, -1, -2))
    return RigidBodyInertia.from_mass_com_inertia(
        jnp.asarray(it.mass), jnp.asarray(it.transform.pos), I_c
    )
