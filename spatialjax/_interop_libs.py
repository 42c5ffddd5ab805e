r"""Converters to and from Pinocchio, jaxlie and brax.

None of these libraries is a dependency: each converter imports its library
when it is called (Pinocchio is in the ``test`` extra; jaxlie and brax in the
``interop`` extra). Conventions on each side:

========== ===================== ============================ ==========================
library    pose of B in A         spatial vectors              inertia
========== ===================== ============================ ==========================
spatialjax ``Plxb(E=R_AB, r)``    ``[ω; v]``, ``[n; f]``       10-vector about the origin
Pinocchio  ``pin.SE3(R_AB, p)``   ``Motion``/``Force``         ``pin.Inertia(m, c, I_c)``
           (``aMb``)              stored ``[v; ω]``, ``[f; n]``  (``toDynamicParameters``
                                                               is our 10-vector)
jaxlie     ``SE3`` ``T_AB``       tangent ``(v, ω)``           --
           (``wxyz_xyz``)
brax       ``Transform(pos, rot)`` ``Motion(ang, vel)``,        ``Inertia(transform, i,
           (``rot`` wxyz)         ``Force(ang, vel)``          mass)``: CoM frame, inertia
                                                               about the CoM in that frame
========== ===================== ============================ ==========================

Directions: ``Plxb(R_AB, r).apply_motion`` maps A- to B-coordinates. It equals
Pinocchio's ``M.actInv`` (``M.act`` maps B to A), the inverse of jaxlie's
``T.adjoint()`` (which maps B to A in ``(v, ω)`` order) and brax's
``Transform.do(Motion)``; brax's ``Transform.do(Force)`` goes the other way,
B to A, like ``Plxb.inverse_apply_force``.

Batches: jaxlie and brax objects are batched arrays and convert as such.
Pinocchio objects are single; a batched spatialjax value becomes nested lists
of them (matching the batch shape), and ``from_pin_*`` accepts a single object
or (nested) sequences of them.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from . import _smallmat as la
from ._checks import as_float_array
from ._inertia import RigidBodyInertia
from ._rotations import matrix_to_quat, quat_to_matrix
from ._transforms import Plx, Plxb

__all__ = [
    "from_brax_force",
    "from_brax_inertia",
    "from_brax_motion",
    "from_brax_transform",
    "from_jaxlie_se3",
    "from_jaxlie_tangent",
    "from_pin_force",
    "from_pin_inertia",
    "from_pin_motion",
    "from_pin_se3",
    "to_brax_force",
    "to_brax_inertia",
    "to_brax_motion",
    "to_brax_transform",
    "to_jaxlie_se3",
    "to_jaxlie_tangent",
    "to_pin_force",
    "to_pin_inertia",
    "to_pin_motion",
    "to_pin_se3",
]


def _import(name: str, extra: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(
            f"{name} is needed for this converter but is not installed "
            f"(pip install 'spatialjax[{extra}]')"
        ) from e


def _default_dtype(dtype):
    return jnp.zeros(()).dtype if dtype is None else dtype


def _as_plxb(X) -> Plxb:
    if isinstance(X, Plxb):
        return X
    if isinstance(X, Plx):
        return X.to_plxb()
    raise TypeError(f"X: expected a Plx or Plxb, got {type(X).__name__}")


def _swap(x):
    """``[a; b] -> [b; a]`` on the last axis (length 6)."""
    return jnp.concatenate([x[..., 3:], x[..., :3]], axis=-1)


# --------------------------------------------------------------------------- Pinocchio


def _nest(fn, *arrays):
    """Apply ``fn`` to each batch element of NumPy arrays, as nested lists."""
    if arrays[0].ndim == 0 or arrays[0].shape == ():
        return fn(*arrays)
    return [_nest(fn, *(a[i] for a in arrays)) for i in range(arrays[0].shape[0])]


def _unnest(objs, get, what):
    """Stack ``get(obj)`` over a single object or nested sequences of them."""
    if isinstance(objs, (list, tuple)):
        if not objs:
            raise ValueError(f"{what}: empty sequence")
        return np.stack([_unnest(o, get, what) for o in objs])
    try:
        return np.asarray(get(objs), dtype=np.float64)
    except AttributeError:
        raise TypeError(f"{what}: got {type(objs).__name__}") from None


def to_pin_se3(X):
    """``Plxb`` (or ``Plx``) -> ``pin.SE3`` placement ``aMb`` with ``rotation = R_AB``.

    Args:
      X: the pose of B in A (a ``Plx`` is converted with ``to_plxb``).

    Returns:
      ``pin.SE3(R_AB, r)`` for an unbatched ``X``; nested lists for a batch.
    """
    pin = _import("pinocchio", "test")
    Y = _as_plxb(X)
    E, r = np.asarray(Y.E, np.float64), np.asarray(Y.r, np.float64)
    shape = np.broadcast_shapes(E.shape[:-2], r.shape[:-1])
    E = np.broadcast_to(E, shape + (3, 3))
    r = np.broadcast_to(r, shape + (3,))
    idx = np.empty(shape, dtype=object)
    for i in np.ndindex(shape):
        idx[i] = pin.SE3(np.array(E[i]), np.array(r[i]))
    return idx.tolist() if shape else idx[()]


def from_pin_se3(M, *, dtype=None) -> Plxb:
    """``pin.SE3`` (or nested sequences of them) -> ``Plxb(E=M.rotation, r=M.translation)``."""
    dtype = _default_dtype(dtype)
    R = _unnest(M, lambda m: m.rotation, "M")
    p = _unnest(M, lambda m: m.translation, "M")
    return Plxb(jnp.asarray(R, dtype), jnp.asarray(p, dtype))


def to_pin_inertia(inertia: RigidBodyInertia):
    """``RigidBodyInertia`` -> ``pin.Inertia`` (``FromDynamicParameters``: same 10-vector)."""
    pin = _import("pinocchio", "test")
    if not isinstance(inertia, RigidBodyInertia):
        raise TypeError(f"inertia: expected a RigidBodyInertia, got {type(inertia).__name__}")
    p = np.asarray(inertia.params, np.float64)
    shape = p.shape[:-1]
    out = np.empty(shape, dtype=object)
    for i in np.ndindex(shape):
        out[i] = pin.Inertia.FromDynamicParameters(np.array(p[i]))
    return out.tolist() if shape else out[()]


def from_pin_inertia(I, *, dtype=None) -> RigidBodyInertia:
    """``pin.Inertia`` (or nested sequences) -> ``RigidBodyInertia`` (``toDynamicParameters``)."""
    dtype = _default_dtype(dtype)
    return RigidBodyInertia(jnp.asarray(_unnest(I, lambda o: o.toDynamicParameters(), "I"), dtype))


def to_pin_motion(v):
    """``[ω; v]`` (..., 6) -> ``pin.Motion`` (Pinocchio stores ``[v; ω]``)."""
    pin = _import("pinocchio", "test")
    v = np.asarray(as_float_array(v, "v", (6,)), np.float64)
    vv = np.concatenate([v[..., 3:], v[..., :3]], axis=-1)
    out = np.empty(vv.shape[:-1], dtype=object)
    for i in np.ndindex(out.shape):
        out[i] = pin.Motion(np.array(vv[i]))
    return out.tolist() if out.shape else out[()]


def from_pin_motion(m, *, dtype=None):
    """``pin.Motion`` (or nested sequences) -> ``[ω; v]`` array."""
    dtype = _default_dtype(dtype)
    w = _unnest(m, lambda o: o.angular, "m")
    v = _unnest(m, lambda o: o.linear, "m")
    return jnp.asarray(np.concatenate([w, v], axis=-1), dtype)


def to_pin_force(f):
    """``[n; f]`` (..., 6) -> ``pin.Force`` (Pinocchio stores ``[f; n]``)."""
    pin = _import("pinocchio", "test")
    f = np.asarray(as_float_array(f, "f", (6,)), np.float64)
    ff = np.concatenate([f[..., 3:], f[..., :3]], axis=-1)
    out = np.empty(ff.shape[:-1], dtype=object)
    for i in np.ndindex(out.shape):
        out[i] = pin.Force(np.array(ff[i]))
    return out.tolist() if out.shape else out[()]


def from_pin_force(f, *, dtype=None):
    """``pin.Force`` (or nested sequences) -> ``[n; f]`` array."""
    dtype = _default_dtype(dtype)
    n = _unnest(f, lambda o: o.angular, "f")
    lin = _unnest(f, lambda o: o.linear, "f")
    return jnp.asarray(np.concatenate([n, lin], axis=-1), dtype)


# ------------------------------------------------------------------------------ jaxlie


def to_jaxlie_se3(X):
    """``Plxb`` (or ``Plx``) -> ``jaxlie.SE3`` ``T_AB`` (maps B points to A), batched.

    ``jaxlie.SE3.from_rotation_and_translation(SO3(wxyz of R_AB), r)``.
    Differentiable and jit-able (both sides are JAX arrays).
    """
    jaxlie = _import("jaxlie", "interop")
    Y = _as_plxb(X)
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
    return _swap(as_float_array(v, "v", (6,)))


def from_jaxlie_tangent(xi):
    """jaxlie's tangent ``(v, ω)`` -> our motion ``[ω; v]``."""
    return _swap(as_float_array(xi, "xi", (6,)))


# -------------------------------------------------------------------------------- brax


def to_brax_transform(X):
    """``Plxb`` (or ``Plx``) -> ``brax.base.Transform(pos=r, rot=wxyz of R_AB)``.

    brax's ``Transform`` is the pose of a frame in its parent (``Link.transform``,
    ``State.x``): the same pose as ``Plxb``. Its ``do(Motion)`` maps parent- to
    child-coordinates (our ``apply_motion``) and its ``do(Force)`` maps child-
    to parent-coordinates (our ``inverse_apply_force``).
    """
    base = _import("brax.base", "interop")
    Y = _as_plxb(X)
    shape = Y.batch_shape
    E = jnp.broadcast_to(Y.E, shape + (3, 3))
    r = jnp.broadcast_to(Y.r, shape + (3,))
    return base.Transform(pos=r, rot=matrix_to_quat(E))


def from_brax_transform(t) -> Plxb:
    """``brax.base.Transform`` (anything with ``pos`` and wxyz ``rot``) -> ``Plxb``."""
    return Plxb(quat_to_matrix(jnp.asarray(t.rot)), jnp.asarray(t.pos))


def to_brax_motion(v):
    """``[ω; v]`` -> ``brax.base.Motion(ang=ω, vel=v)``."""
    base = _import("brax.base", "interop")
    v = as_float_array(v, "v", (6,))
    return base.Motion(ang=v[..., :3], vel=v[..., 3:])


def from_brax_motion(m):
    """``brax.base.Motion`` -> ``[ang; vel]`` = ``[ω; v]``."""
    return jnp.concatenate([jnp.asarray(m.ang), jnp.asarray(m.vel)], axis=-1)


def to_brax_force(f):
    """``[n; f]`` -> ``brax.base.Force(ang=n, vel=f)`` (brax names the force ``vel``)."""
    base = _import("brax.base", "interop")
    f = as_float_array(f, "f", (6,))
    return base.Force(ang=f[..., :3], vel=f[..., 3:])


def from_brax_force(f):
    """``brax.base.Force`` -> ``[ang; vel]`` = ``[n; f]``."""
    return jnp.concatenate([jnp.asarray(f.ang), jnp.asarray(f.vel)], axis=-1)


def to_brax_inertia(inertia: RigidBodyInertia, *, principal: bool = False):
    """``RigidBodyInertia`` -> ``brax.base.Inertia`` in brax's link convention.

    brax's ``System.link.inertia`` (built by ``brax.io.mjcf`` from MuJoCo's
    ``body_ipos``, ``body_iquat``, ``body_inertia`` and ``body_mass``) holds
    ``transform``: the pose of the inertial (CoM) frame in the link frame;
    ``i``: the 3×3 inertia about the CoM in that frame's axes; ``mass``.

    Args:
      inertia: about the link origin, in link axes.
      principal: ``False`` (default): ``rot`` is the identity and ``i`` the
        full inertia about the CoM in link axes. ``True``: ``rot`` is the
        principal frame and ``i`` diagonal (as brax's MJCF loader makes it);
        the principal axes come from ``eigh`` and are not differentiable at
        repeated moments.

    This is not the world-frame form that brax's ``Transform.do(Inertia)``
    returns (its ``transform.pos`` holds ``m c`` there).
    """
    base = _import("brax.base", "interop")
    if not isinstance(inertia, RigidBodyInertia):
        raise TypeError(f"inertia: expected a RigidBodyInertia, got {type(inertia).__name__}")
    m, c, I_c = inertia.mass, inertia.com, inertia.inertia_com()
    shape = inertia.batch_shape
    if principal:
        d, Q = jnp.linalg.eigh(I_c)
        Q = Q * jnp.where(jnp.linalg.det(Q) < 0, -1.0, 1.0).astype(Q.dtype)[..., None, None]
        rot = matrix_to_quat(Q)
        i = d[..., :, None] * la.eye3(shape, I_c.dtype)
    else:
        rot = jnp.broadcast_to(jnp.asarray([1.0, 0.0, 0.0, 0.0], I_c.dtype), shape + (4,))
        i = I_c
    return base.Inertia(transform=base.Transform(pos=c, rot=rot), i=i, mass=m)


def from_brax_inertia(it) -> RigidBodyInertia:
    """brax ``Inertia`` (link convention, see :func:`to_brax_inertia`) -> ``RigidBodyInertia``.

    ``I_c = R i Rᵀ`` with ``R`` the rotation of ``it.transform.rot``, then the
    parallel-axis shift to the link origin (``from_mass_com_inertia``).
    """
    R = quat_to_matrix(jnp.asarray(it.transform.rot))
    i = jnp.asarray(it.i)
    I_c = la.mmt(la.mm(R, i), R)
    return RigidBodyInertia.from_mass_com_inertia(
        jnp.asarray(it.mass), jnp.asarray(it.transform.pos), I_c
    )
