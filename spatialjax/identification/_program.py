"""``cpu_program``: a jitted function that compiles with XLA:CPU options when it can.

``jax.jit(..., compiler_options=...)`` is only allowed for a top-level call: inside
a caller's ``jit``/``vmap``/``grad`` trace the program is inlined into the caller's
and compiled with the caller's options. The identification programs are large and
run for milliseconds, so their own options trade optimisation for compile time;
this wrapper picks the right one of two jitted versions per call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from .._checks import is_concrete


@functools.cache
def _supported(options: tuple[tuple[str, object], ...]) -> bool:
    """Whether this jaxlib knows ``options`` (checked once on a trivial program)."""
    try:
        jax.jit(jnp.negative, compiler_options=dict(options)).lower(1.0).compile()
    except Exception:  # an XLA without one of the options: compile with the defaults
        return False
    return True


def _on_cpu(leaves) -> bool:
    return jax.default_backend() == "cpu" and all(
        d.platform == "cpu" for x in leaves if isinstance(x, jax.Array) for d in x.devices()
    )


def cpu_program(
    fn: Callable, *, static_argnames: Sequence[str], compiler_options: Mapping[str, Any]
) -> Callable:
    """``jax.jit(fn)`` that uses ``compiler_options`` for top-level calls on CPU.

    Those are calls whose array arguments are all concrete and on CPU devices, with
    a jaxlib that knows the options; every other call (inside a trace, on an
    accelerator, with an older jaxlib) uses the plain ``jax.jit(fn)``. Both give the
    same results to rounding; only the compile time differs.
    """
    names = tuple(static_argnames)
    plain = jax.jit(fn, static_argnames=names)
    tuned = jax.jit(fn, static_argnames=names, compiler_options=dict(compiler_options))
    key = tuple(sorted(compiler_options.items()))

    @functools.wraps(fn)
    def call(*args, **kwargs):
        leaves = jax.tree_util.tree_leaves(args)
        top = is_concrete(leaves) and _on_cpu(leaves) and _supported(key)
        return (tuned if top else plain)(*args, **kwargs)

    call.plain, call.tuned = plain, tuned  # pyright: ignore[reportAttributeAccessIssue]
    return call
