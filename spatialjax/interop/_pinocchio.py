"""Pinocchio converters: ``pin.SE3``, ``pin.Inertia``, ``pin.Motion``, ``pin.Force``.

Batched values become nested lists of Pinocchio objects; conventions: docs page
``conventions.md#other-libraries``. Pinocchio is imported when a converter is called.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array
from .._errors import ArgumentError, ArgumentTypeError
from .._inertia import RigidBodyInertia
from .._transforms import Plxb
from ._common import as_plxb, default_dtype, import_optional

__all__ = [
    "from_pin_force",
    "from_pin_inertia",
    "from_pin_motion",
    "from_pin_se3",
    "to_pin_force",
    "to_pin_inertia",
    "to_pin_motion",
    "to_pin_se3",
]


def _nest(fn, *arrays):
    """Apply ``fn`` to each batch element of NumPy arrays, as nested lists."""
    if arrays[0].ndim == 0 or arrays[0].shape == ():
        return fn(*arrays)
    return [_nest(fn, *(a[i] for a in arrays)) for i in range(arrays[0].shape[0])]


def _unnest(objs, get, what):
    """Stack ``get(obj)`` over a single object or nested sequences of them."""
    if isinstance(objs, (list, tuple)):
        if not objs:
            raise ArgumentError(
                what, "expected an object or a non-empty sequence, got an empty one"
            )
        return np.stack([_unnest(o, get, what) for o in objs])
    try:
        return np.asarray(get(objs), dtype=np.float64)
    except AttributeError:
        raise ArgumentTypeError(
            what,
            f"expected a Pinocchio object or (nested) sequences of them, got {type(objs).__name__}",
        ) from None


def to_pin_se3(X):
    """``Plxb`` (or ``Plx``) -> ``pin.SE3`` placement ``aMb`` with ``rotation = R_AB``.

    Args:
      X: the pose of B in A (a ``Plx`` is converted with ``to_plxb``).

    Returns:
      ``pin.SE3(R_AB, r)`` for an unbatched ``X``; nested lists for a batch.
    """
    pin = import_optional("pinocchio", "interop")
    Y = as_plxb(X)
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
    dtype = default_dtype(dtype)
    R = _unnest(M, lambda m: m.rotation, "M")
    p = _unnest(M, lambda m: m.translation, "M")
    return Plxb(jnp.asarray(R, dtype), jnp.asarray(p, dtype))


def to_pin_inertia(inertia: RigidBodyInertia):
    """``RigidBodyInertia`` -> ``pin.Inertia`` (``FromDynamicParameters``: same 10-vector)."""
    pin = import_optional("pinocchio", "interop")
    if not isinstance(inertia, RigidBodyInertia):
        raise ArgumentTypeError(
            "inertia", f"expected a RigidBodyInertia, got {type(inertia).__name__}"
        )
    p = np.asarray(inertia.params, np.float64)
    shape = p.shape[:-1]
    out = np.empty(shape, dtype=object)
    for i in np.ndindex(shape):
        out[i] = pin.Inertia.FromDynamicParameters(np.array(p[i]))
    return out.tolist() if shape else out[()]


def from_pin_inertia(I, *, dtype=None) -> RigidBodyInertia:
    """``pin.Inertia`` (or nested sequences) -> ``RigidBodyInertia`` (``toDynamicParameters``)."""
    dtype = default_dtype(dtype)
    return RigidBodyInertia(jnp.asarray(_unnest(I, lambda o: o.toDynamicParameters(), "I"), dtype))


def to_pin_motion(v):
    """``[ω; v]`` (..., 6) -> ``pin.Motion`` (Pinocchio stores ``[v; ω]``)."""
    pin = import_optional("pinocchio", "interop")
    v = np.asarray(as_float_array(v, "v", (6,)), np.float64)
    vv = np.concatenate([v[..., 3:], v[..., :3]], axis=-1)
    out = np.empty(vv.shape[:-1], dtype=object)
    for i in np.ndindex(out.shape):
        out[i] = pin.Motion(np.array(vv[i]))
    return out.tolist() if out.shape else out[()]


def from_pin_motion(m, *, dtype=None):
    """``pin.Motion`` (or nested sequences) -> ``[ω; v]`` array."""
    dtype = default_dtype(dtype)
    w = _unnest(m, lambda o: o.angular, "m")
    v = _unnest(m, lambda o: o.linear, "m")
    return jnp.asarray(np.concatenate([w, v], axis=-1), dtype)


def to_pin_force(f):
    """``[n; f]`` (..., 6) -> ``pin.Force`` (Pinocchio stores ``[f; n]``)."""
    pin = import_optional("pinocchio", "interop")
    f = np.asarray(as_float_array(f, "f", (6,)), np.float64)
    ff = np.concatenate([f[..., 3:], f[..., :3]], axis=-1)
    out = np.empty(ff.shape[:-1], dtype=object)
    for i in np.ndindex(out.shape):
        out[i] = pin.Force(np.array(ff[i]))
    return out.tolist() if out.shape else out[()]


def from_pin_force(f, *, dtype=None):
    """``pin.Force`` (or nested sequences) -> ``[n; f]`` array."""
    dtype = default_dtype(dtype)
    n = _unnest(f, lambda o: o.angular, "f")
    lin = _unnest(f, lambda o: o.linear, "f")
    return jnp.asarray(np.concatenate([n, lin], axis=-1), dtype)
