"""``cpu_program``: a jitted function with XLA:CPU compile options where allowed;
``compile_seconds``: the time JAX spends compiling inside a block.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from ..._checks import is_concrete


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

    Calls inside a trace, on an accelerator or with a jaxlib that lacks the
    options use the plain ``jax.jit(fn)``; both give the same results to rounding.
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
    call.cache_size = lambda: plain._cache_size() + tuned._cache_size()  # pyright: ignore[reportAttributeAccessIssue]
    return call


#: XLA:CPU options of the one-shot programs of identification (the regressor over a log):
#: XLA:CPU's loop emitters compile their many small kernels (ops on 6-vectors, 4×4 and
#: 6×6 blocks per body) about twice as fast as its MLIR fusion emitters and run them no
#: slower (figures: ``benchmarks/bench_identify_cold.py``).
LOOP_EMITTERS = {"xla_cpu_use_fusion_emitters": False}

#: XLA:CPU options of the solvers' programs (``fit``, ``fit_torques``,
#: ``least_squares_torques``, ``identifiability``): the loop emitters, and no LLVM
#: optimisation: their run time is O(p³) linear algebra in library calls and milliseconds
#: of small kernels, so optimising buys nothing measurable while it costs most of the
#: compile time. Results equal to the last bit or two.
SOLVER_OPTIONS = {**LOOP_EMITTERS, "xla_backend_optimization_level": 0}

_COMPILE_EVENTS = "/jax/core/compile/"  # tracing to a jaxpr, lowering to MLIR, XLA compile
_OPEN: list[list[tuple[float, float]]] = []  # the spans collected by each open block


def _on_span(event, start_time, end_time, **_):
    if _OPEN and event.startswith(_COMPILE_EVENTS):
        for spans in _OPEN:
            spans.append((start_time, end_time))


def _on_duration(event, duration_secs, **_):
    if _OPEN and event == _COMPILE_EVENTS + "backend_compile_duration":
        for spans in _OPEN:
            spans.append((0.0, duration_secs))


@functools.cache
def _listening() -> bool:
    """Register one listener for the process; ``True`` where it receives time spans (jax ≥ 0.5)."""
    monitoring = jax.monitoring
    if hasattr(monitoring, "register_event_time_span_listener"):
        monitoring.register_event_time_span_listener(_on_span)
        return True
    monitoring.register_event_duration_secs_listener(_on_duration)  # pragma: no cover
    return False  # pragma: no cover


class CompileSeconds:
    """What ``compile_seconds`` measured: ``value``, set when its block exits."""

    value: float = 0.0


@contextlib.contextmanager
def compile_seconds() -> Iterator[CompileSeconds]:
    """Measure the wall time JAX spends tracing, lowering and compiling inside the block.

    The union of the time spans of JAX's ``/jax/core/compile/`` events (nested
    traces count once); before jax 0.5, the sum of the XLA compile durations.
    """
    out = CompileSeconds()
    spans: list[tuple[float, float]] = []
    with_spans = _listening()
    _OPEN.append(spans)
    try:
        yield out
    finally:
        _OPEN.remove(spans)
        if not with_spans:  # pragma: no cover - jax before 0.5: disjoint durations
            out.value = sum(end for _, end in spans)
        else:
            total, reach = 0.0, -float("inf")
            for start, end in sorted(spans):  # the union of the spans
                if end > reach:
                    total += end - max(start, reach)
                    reach = end
            out.value = total
