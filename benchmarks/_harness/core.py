"""Timing machinery shared by every benchmark: compile apart, warm up, median, copy roofline.

Rules: a function is jitted and compiled
once (``jax.jit(f).lower(*args).compile()``, timed on its own as the compile
time), run a few times to warm up, then timed ``repeats`` times with
``jax.block_until_ready`` on its outputs; the median is reported. Functions
that are compared with each other (an operation, its copy roofline, jaxlie)
are timed *interleaved*, one call of each per round, so that a noisy machine
slows them alike.

The copy roofline is the physical limit of a batched operation that is bound
by memory traffic: a jitted function that reads every byte the operation
reads and writes every byte it writes, with one add per element (a fold of
one contiguous input buffer onto one contiguous output buffer). The
operation can at best match it; ``op_time / copy_time`` is how far it is off.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import jax
import numpy as np


@dataclasses.dataclass
class Timing:
    """Median run time (seconds) of a callable, with how it was measured."""

    median_s: float
    repeats: int
    compile_s: float | None = None


def compile_jitted(fn: Callable, args: Sequence) -> tuple[Callable, float]:
    """Trace, lower and compile ``fn`` for ``args``; return the executable and seconds spent."""
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    return compiled, time.perf_counter() - t0


def _call_once(fn: Callable, args: Sequence) -> float:
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - t0


def time_interleaved(
    calls: Sequence[tuple[Callable, Sequence]],
    *,
    min_time: float = 0.2,
    min_repeats: int = 5,
    max_repeats: int = 200,
    warmup: int = 2,
) -> list[Timing]:
    """Median wall time of each ``fn(*args)``, the calls interleaved round by round.

    The order of the calls rotates from round to round. Each call's outputs
    are waited for with ``jax.block_until_ready`` (NumPy results pass through
    it unchanged), so asynchronous dispatch is not mistaken for speed. The
    number of rounds is chosen from the warm-up so that the slowest call runs
    for about ``min_time`` seconds in total, clamped to ``[min_repeats,
    max_repeats]``; calls slower than 0.5 s get one warm-up run and at least
    3 rounds.
    """
    slow = 0.5
    slowest = 0.0
    for fn, args in calls:
        dt = _call_once(fn, args)
        for _ in range(warmup - 1 if dt < slow else 0):
            dt = _call_once(fn, args)
        slowest = max(slowest, dt)
    floor = min_repeats if slowest < slow else min(min_repeats, 3)
    repeats = int(min(max_repeats, max(floor, math.ceil(min_time / max(slowest, 1e-9)))))
    times: list[list[float]] = [[] for _ in calls]
    for rnd in range(repeats):
        # rotate the order each round: no call always follows the same one
        for j in range(len(calls)):
            k = (rnd + j) % len(calls)
            times[k].append(_call_once(*calls[k]))
    return [Timing(statistics.median(t), repeats) for t in times]


def tree_nbytes(tree) -> int:
    """Bytes held by the leaves of a pytree of arrays or ``ShapeDtypeStruct``."""
    return sum(
        int(np.prod(x.shape, dtype=np.int64)) * np.dtype(x.dtype).itemsize
        for x in jax.tree_util.tree_leaves(tree)
    )


def make_copy(n_in: int, n_out: int) -> Callable:
    """A jittable ``copy(x, s)`` reading ``n_in`` elements and writing ``n_out``.

    The contiguous input ``x (n_in,)`` is folded onto ``n_out`` outputs:
    output element ``j`` is ``s * Σ x[j + k n_out]`` over the ``k`` in range
    (tiled, ``x[j mod n_in]``, when ``n_out > n_in``). ``s`` is a runtime
    scalar (pass 1) so that XLA cannot turn a one-chunk fold into "return the
    input". Every input element is read once and every output element written
    once: the traffic of the operation it stands for, with no arithmetic worth
    counting. The outputs come as a tuple of flat arrays (those that receive
    one more chunk than the rest first) so that each is one contiguous,
    vectorised loop; a ``pad`` or ``concatenate`` to make them one array runs
    several times slower on XLA:CPU and would no longer be a roofline.
    """
    if n_in <= 0 or n_out <= 0:
        raise ValueError(f"make_copy: sizes must be positive, got n_in={n_in}, n_out={n_out}")

    def fold(x, lo, hi):
        out = x[lo:hi]
        for start in range(lo + n_out, n_in - (hi - lo) + 1, n_out):
            out = out + x[start : start + hi - lo]
        return out

    def copy(x, s):
        if n_out > n_in:
            q, rem = divmod(n_out, n_in)
            return tuple(s * x for _ in range(q)) + ((s * x[:rem],) if rem else ())
        rem = n_in % n_out
        parts = [(0, rem), (rem, n_out)] if rem else [(0, n_out)]
        return tuple(s * fold(x, lo, hi) for lo, hi in parts)

    return copy


def copy_inputs(bytes_in: int, bytes_out: int, dtype, device) -> tuple[Callable, tuple]:
    """The copy roofline for an operation moving ``bytes_in`` -> ``bytes_out`` in ``dtype``."""
    item = np.dtype(dtype).itemsize
    n_in = max(1, -(-bytes_in // item))
    n_out = max(1, -(-bytes_out // item))
    x = jax.device_put(np.ones(n_in, dtype), device)
    s = jax.device_put(np.ones((), dtype), device)
    return make_copy(n_in, n_out), (x, s)


def time_host(fn: Callable, args: Sequence, *, min_time: float = 0.2, max_repeats: int = 50):
    """Median wall time of a host (NumPy / Python) callable; at least 3 runs after one warm-up."""
    return time_interleaved(
        [(fn, args)], min_time=min_time, min_repeats=3, max_repeats=max_repeats, warmup=1
    )[0]


# ----------------------------------------------------------------------------- environment
def bench_device():
    """The device every benchmark runs on: ``jax.devices()[0]`` (a GPU when JAX has one)."""
    return jax.devices()[0]


def describe_device(device) -> str:
    kind = getattr(device, "device_kind", "") or ""
    return f"{device.platform}:{device.id} ({kind})" if kind else f"{device.platform}:{device.id}"


def available_bytes(device) -> int:
    """Free memory on ``device``: from its memory stats, else the host's ``MemAvailable``."""
    try:
        stats = device.memory_stats() or {}
    except Exception:  # noqa: BLE001 - backends without memory stats
        stats = {}
    if "bytes_limit" in stats:
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    return host_available_bytes()


def host_available_bytes() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def keep_host_buffers() -> bool:
    """Let glibc reuse freed large buffers instead of unmapping them (Linux only).

    By default glibc serves every allocation above 32 MiB with a fresh
    ``mmap`` and unmaps it when freed, so each call of a jitted function with
    a large output page-faults its whole output again (the kernel zeroes
    every page): on the CPU used for ``benchmarks/results/cpu.json`` that
    cost 5-8x the memory traffic itself. Raising the mmap and trim thresholds
    (``mallopt``) makes XLA:CPU and NumPy reuse their buffers, as the GPU
    allocator always does, so times measure the computation and memory
    bandwidth. Returns whether it was applied.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    ok = libc.mallopt(m_mmap_threshold, 1 << 30) == 1
    return bool(ok and libc.mallopt(m_trim_threshold, 1 << 62) == 1)
