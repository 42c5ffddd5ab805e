"""Trace-time input checks shared by every public function.

Shape and dtype mistakes raise ``ValueError`` / ``TypeError`` when the
function is called (or traced under ``jit``/``vmap``), naming the argument,
what was expected and what was received. Value checks (is this mass
positive?) are never done here: they live in ``physical_consistency`` (flags,
jit-safe) and ``validate`` (eager, raising).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

#: Floating dtypes JAX arrays can have (``jnp.issubdtype(d, jnp.floating)``), as a set so
#: the check on every call is one hash lookup instead of an ``issubdtype`` call.
FLOATING_DTYPES = frozenset(
    np.dtype(t) for t in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64)
)


def _shape_error(name: str, trailing: tuple, shape: tuple) -> ValueError:
    want = "(..., " + ", ".join(str(t) for t in trailing) + ")" if trailing else "(...)"
    return ValueError(f"{name}: expected shape {want}, got shape {shape}")


def as_float_array(x, name: str, trailing: Sequence[int] = ()) -> jnp.ndarray:
    """Return ``x`` as a floating JAX array whose trailing axes equal ``trailing``.

    Python ``int``/``float`` scalars are accepted as weakly typed floats: they
    take the dtype of the arrays they are combined with (as in ``2.0 * x``).
    Integer, boolean or complex *arrays* raise ``TypeError``: a float is never
    invented from integer data silently.

    Args:
      x: array-like input.
      name: argument name used in error messages.
      trailing: required trailing shape, e.g. ``(3, 3)``; leading axes are free.

    Raises:
      TypeError: ``x`` is not a floating-point array.
      ValueError: the trailing shape does not match.
    """
    if isinstance(x, jax.Array):  # fast path (also tracers): no conversion, same checks
        dtype = x.dtype
        if dtype in FLOATING_DTYPES:
            shape = x.shape
            k = len(trailing)
            if k and (len(shape) < k or shape[len(shape) - k :] != tuple(trailing)):
                raise _shape_error(name, tuple(trailing), tuple(shape))
            return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        x = jnp.asarray(float(x))
    elif not hasattr(x, "dtype"):
        x = np.asarray(x)
        if x.dtype.kind in "iu" or x.dtype == object:
            raise TypeError(
                f"{name}: expected a floating-point array, got a sequence converting to "
                f"dtype {x.dtype}; write the numbers as floats or pass a float array"
            )
        x = jnp.asarray(x)
    dtype = np.dtype(x.dtype)  # pyright: ignore[reportAttributeAccessIssue]  (x is an array here)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(
            f"{name}: expected a floating-point array (float32 or float64), got dtype {dtype}"
        )
    x = jnp.asarray(x)
    trailing = tuple(trailing)
    k = len(trailing)
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != trailing:
        raise _shape_error(name, trailing, tuple(x.shape))
    return x


def same_dtype(**arrays) -> np.dtype:
    """Check that all arrays share one floating dtype and return it.

    Mixing float32 and float64 would silently upcast under NumPy promotion,
    so it is refused with a ``TypeError`` naming both arguments.
    """
    # Python scalars are weakly typed: they adopt the other operands' dtype under
    # JAX promotion (like ``2.0 * x``), so only strongly typed arrays must agree.
    items = [(n, a) for n, a in arrays.items() if not getattr(a, "weak_type", False)]
    if not items:
        return next(iter(arrays.values())).dtype
    name0, a0 = items[0]
    for name, a in items[1:]:
        if a.dtype != a0.dtype:
            raise TypeError(
                f"{name} has dtype {a.dtype} but {name0} has dtype {a0.dtype}; "
                "convert one explicitly (spatialjax never upcasts or downcasts silently)"
            )
    return a0.dtype


def broadcast_batch(name_a: str, shape_a, name_b: str, shape_b) -> tuple[int, ...]:
    """Broadcast two batch shapes NumPy-style or raise ``ValueError`` naming both."""
    if shape_a == shape_b:  # the common case, without np.broadcast_shapes (a few µs)
        return tuple(shape_a)
    try:
        return tuple(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except ValueError:
        raise ValueError(
            f"batch shapes do not broadcast: {name_a} has batch shape {tuple(shape_a)}, "
            f"{name_b} has batch shape {tuple(shape_b)}"
        ) from None


def resolve_float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """``dtype`` as a NumPy float dtype that JAX can hold now; ``None`` gives JAX's default float.

    Raises ``TypeError`` naming ``name`` for any dtype other than float32 and float64
    (float16 and bfloat16 cannot hold the models' inertias to useful precision), and
    ``ValueError`` for float64 while JAX is in 32-bit mode (where arrays would silently
    become float32).
    """
    if dtype is None:
        return np.dtype(jnp.zeros(()).dtype)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"{name}: expected a floating dtype (float32 or float64), got {dtype}")
    if dtype == np.float64 and not jax.config.read("jax_enable_x64"):
        raise ValueError(
            f"{name}: float64 requested but JAX is in 32-bit mode; call "
            "jax.config.update('jax_enable_x64', True) first"
        )
    return dtype


def is_concrete(tree) -> bool:
    """True when no leaf of ``tree`` is a tracer of ``jit``/``vmap``/``grad``: values can be read.

    Eager checks on values (NaN, signs, ranges) run only then; under a trace the
    functions report such problems in their results instead.
    """
    tracer = jax.core.Tracer  # pyright: ignore[reportAttributeAccessIssue]
    return not any(isinstance(leaf, tracer) for leaf in jax.tree_util.tree_leaves(tree))
