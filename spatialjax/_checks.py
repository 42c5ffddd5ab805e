"""Input checks of arrays and numbers, shared by every package of spatialjax.

Trace-time shape and dtype checks raise ``ArgumentError``/``ArgumentTypeError``
naming the argument; value checks run eagerly on concrete input only. Docs page
``spatial.md#input-checks``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ._errors import ArgumentError, ArgumentTypeError

#: Floating dtypes JAX arrays can have (``jnp.issubdtype(d, jnp.floating)``), as a set so
#: the check on every call is one hash lookup instead of an ``issubdtype`` call.
FLOATING_DTYPES = frozenset(
    np.dtype(t) for t in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64)
)


def _shape_error(name: str, trailing: tuple, shape: tuple) -> ArgumentError:
    want = "(..., " + ", ".join(str(t) for t in trailing) + ")" if trailing else "(...)"
    return ArgumentError(name, f"expected shape {want}, got shape {shape}")


def to_device(x, dtype=None) -> jax.Array:
    """``x`` as a JAX array (in ``dtype`` if given) without compiling a program.

    ``jnp.asarray`` of a NumPy array or a Python scalar, and any operation on a
    concrete JAX array outside ``jit``, compile one small program per shape and
    dtype (milliseconds each, again in every new process). A NumPy array or scalar,
    or a concrete JAX array whose dtype changes, is converted in NumPy and copied
    with ``jax.device_put``; a JAX array already in ``dtype`` (strongly typed) is returned
    as it is, a traced one is converted in the trace. Dtypes are canonicalised as JAX does
    (float64 is float32 without ``jax_enable_x64``); a Python float stays weakly typed
    unless ``dtype`` is given (as ``astype``).
    """
    if isinstance(x, jax.Array):
        if dtype is None or (x.dtype == np.dtype(dtype) and not x.weak_type):
            return x
        if isinstance(x, jax.core.Tracer):  # pyright: ignore[reportAttributeAccessIssue]
            return x.astype(dtype)
        x = np.asarray(x)
    if dtype is None and isinstance(x, (int, float)) and not isinstance(x, bool):
        return jax.device_put(x)  # weakly typed, as jnp.asarray(x)
    return jax.device_put(np.asarray(x, dtype))


def as_float_array(x, name: str, trailing: Sequence[int] = ()) -> jnp.ndarray:
    """``x`` as a floating JAX array whose trailing axes equal ``trailing`` (leading axes free).

    Python scalars are weakly typed floats; integer, boolean or complex arrays are refused
    (``TypeError``); a wrong trailing shape raises ``ValueError``; both name ``name``.
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
        x = to_device(float(x))
    elif not hasattr(x, "dtype"):
        x = np.asarray(x)
        if x.dtype.kind in "iu" or x.dtype == object:
            raise ArgumentTypeError(
                name,
                f"expected a floating-point array, got a sequence converting to "
                f"dtype {x.dtype}; write the numbers as floats or pass a float array",
            )
    dtype = np.dtype(x.dtype)  # pyright: ignore[reportAttributeAccessIssue]  (x is an array here)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise ArgumentTypeError(
            name, f"expected a floating-point array (float32 or float64), got dtype {dtype}"
        )
    x = to_device(x)
    trailing = tuple(trailing)
    k = len(trailing)
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != trailing:
        raise _shape_error(name, trailing, tuple(x.shape))
    return x


def same_dtype(**arrays) -> np.dtype:
    """The one floating dtype of all ``arrays``; mixing float32 and float64 raises ``TypeError``."""
    # Python scalars are weakly typed: they adopt the other operands' dtype under
    # JAX promotion (like ``2.0 * x``), so only strongly typed arrays must agree.
    items = [(n, a) for n, a in arrays.items() if not getattr(a, "weak_type", False)]
    if not items:
        return next(iter(arrays.values())).dtype
    name0, a0 = items[0]
    for name, a in items[1:]:
        if a.dtype != a0.dtype:
            raise ArgumentTypeError(
                name,
                f"dtype {a.dtype} differs from {name0}'s dtype {a0.dtype}; "
                "convert one explicitly (spatialjax never upcasts or downcasts silently)",
            )
    return a0.dtype


def broadcast_batch(name_a: str, shape_a, name_b: str, shape_b) -> tuple[int, ...]:
    """Broadcast two batch shapes NumPy-style or raise ``ValueError`` naming both."""
    if shape_a == shape_b:  # the common case, without np.broadcast_shapes (a few µs)
        return tuple(shape_a)
    try:
        return tuple(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    except ValueError:
        raise ArgumentError(
            name_b,
            f"batch shapes do not broadcast: {name_a} has batch shape {tuple(shape_a)}, "
            f"{name_b} has batch shape {tuple(shape_b)}",
        ) from None


def resolve_float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """``dtype`` as a NumPy float dtype JAX can hold now; ``None`` gives JAX's default float.

    ``TypeError`` for anything but float32/float64; ``ValueError`` for float64 while JAX is
    in 32-bit mode.
    """
    if dtype is None:
        return np.dtype(jnp.zeros(()).dtype)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ArgumentTypeError(
            name, f"expected a floating dtype (float32 or float64), got {dtype}"
        )
    if dtype == np.float64 and not jax.config.read("jax_enable_x64"):
        raise ArgumentError(
            name,
            "float64 requested but JAX is in 32-bit mode; call "
            "jax.config.update('jax_enable_x64', True) first",
        )
    return dtype


def is_concrete(tree) -> bool:
    """True when no leaf of ``tree`` is a tracer: values can be read (eager checks run)."""
    tracer = jax.core.Tracer  # pyright: ignore[reportAttributeAccessIssue]
    return not any(isinstance(leaf, tracer) for leaf in jax.tree_util.tree_leaves(tree))


def on_cpu(tree) -> bool:
    """Whether a computation on ``tree`` runs on the CPU: the devices of its concrete JAX
    arrays where it has any (all on the CPU), else the device of ``jax.default_device``
    where one is set, else JAX's default backend (NumPy inputs and tracers go there)."""
    tracer = jax.core.Tracer  # pyright: ignore[reportAttributeAccessIssue]
    leaves = jax.tree_util.tree_leaves(tree)
    placed = [x for x in leaves if isinstance(x, jax.Array) and not isinstance(x, tracer)]
    if placed:
        return all(d.platform == "cpu" for x in placed for d in x.devices())
    device = jax.config.jax_default_device  # pyright: ignore[reportAttributeAccessIssue]
    if device is not None:
        return (device if isinstance(device, str) else device.platform) == "cpu"
    return jax.default_backend() == "cpu"


# ------------------------------------------------------------------ eager value checks
def first_bad(mask) -> tuple[int, ...]:
    """Index of the first true entry of a boolean mask with at least one (``()`` for 0-d)."""
    return tuple(int(i) for i in np.argwhere(np.atleast_1d(mask))[0])[: np.ndim(mask)]


def require_finite(x, name: str, axes: str | None = None) -> None:
    """A ``ValueError`` naming the first NaN or infinite entry of ``x`` (concrete ``x`` only).

    ``axes`` names the trailing axes, ``"/"``-separated (``"sample/joint"``), to place the
    entry in words.
    """
    if not is_concrete(x):
        return
    a = np.asarray(x)
    bad = ~np.isfinite(a)
    if not np.any(bad):
        return
    idx = first_bad(bad)
    if axes is None:
        where = f" at index {idx}" if idx else ""
        raise ArgumentError(name, f"expected finite values, got {a[idx]}{where}")
    words = axes.split("/")
    parts = ", ".join(f"{w} {i}" for w, i in zip(words, idx[-len(words) :], strict=True))
    raise ArgumentError(
        name,
        f"expected finite values, got {a[idx]} at {parts} (index {idx}); remove or "
        "repair those samples",
    )


def require_nonnegative(x, name: str, what: str = "values") -> None:
    """A ``ValueError`` naming the first negative entry of ``x`` (concrete ``x`` only)."""
    if not is_concrete(x):
        return
    neg = np.asarray(x) < 0
    if np.any(neg):
        idx = first_bad(neg)
        where = f" at index {idx}" if idx else ""
        raise ArgumentError(name, f"expected non-negative {what}, got a negative value{where}")


def positive_number(x, name: str) -> float:
    """``x`` as a float: a real number (not a bool), finite and ``> 0``.

    Raises:
      TypeError: ``x`` is not a number.
      ValueError: ``x`` is not finite or not positive.
    """
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(name, f"expected a number, got {type(x).__name__} {x!r}")
    if not (math.isfinite(x) and x > 0):
        raise ArgumentError(name, f"expected a finite number > 0, got {x!r}")
    return float(x)
