"""Timing machinery shared by every benchmark: compile apart, warm up, median, copy roofline.

Rules: a function is jitted and compiled
once (``jax.jit(f).lower(*args).compile()``, timed on its own as the compile
time), run a few times to warm up, then timed ``repeats`` times with
``jax.block_until_ready`` on its outputs; the median is reported. Functions
that are compared with each other (an operation, its copy roofline, jaxlie)
are timed *interleaved*, one call of each per round, so that a noisy machine
slows them alike.

The copy roofline is the physical limit of a batched operation that is bound
by memory traffic: the fastest plain copy with the same total traffic (it
reads and writes half of ``bytes_in + bytes_out`` each), timed as a jitted
in-place pass with buffer donation and, on the CPU, as ``np.copyto`` into a
preallocated buffer; the faster one is the roofline and is named in the
results (``copy_kind``). An operation can at best match it (it must also
allocate its output); ``op_time / copy_time`` is how far it is off.
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
    warmup_time: float | None = None,
) -> list[Timing]:
    """Median wall time of each ``fn(*args)``, the calls interleaved round by round.

    The order of the calls rotates from round to round. Each call's outputs
    are waited for with ``jax.block_until_ready`` (NumPy results pass through
    it unchanged), so asynchronous dispatch is not mistaken for speed. The
    number of rounds is chosen from the warm-up so that the slowest call runs
    for about ``min_time`` seconds in total, clamped to ``[min_repeats,
    max_repeats]``; calls slower than 0.5 s get one warm-up run and at least
    3 rounds. Faster calls are warmed up ``warmup`` times and for at least
    ``warmup_time`` seconds (default ``2 * min_time``): with large outputs on the
    CPU, the first calls grow the heap that later calls reuse (page faults;
    measured 3-4 calls at 3-5x the steady time for 10⁶-item float32
    transforms before :func:`keep_host_buffers` set the arena limit, 1 after).
    """
    warmup_time = 2.0 * min_time if warmup_time is None else warmup_time
    slow = 0.5
    slowest = 0.0
    for fn, args in calls:
        dt = spent = _call_once(fn, args)
        count = 1
        while dt < slow and (count < warmup or spent < warmup_time):
            dt = _call_once(fn, args)
            spent, count = spent + dt, count + 1
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


class DonatedScale:
    """A jitted ``x * s`` whose input buffer is donated to its output: an in-place pass.

    Each call reads and writes the same buffer once (``s`` is a runtime 1, so
    XLA cannot elide the pass) and allocates nothing; the result is fed back
    in as the next call's input, as donation requires.
    """

    def __init__(self, n: int, dtype, device):
        self.buf = jax.device_put(np.ones(n, dtype), device)
        self.s = jax.device_put(np.ones((), dtype), device)
        t0 = time.perf_counter()
        self.fn = jax.jit(lambda x, s: x * s, donate_argnums=0).lower(self.buf, self.s).compile()
        self.compile_s = time.perf_counter() - t0

    def __call__(self):
        self.buf = self.fn(self.buf, self.s)
        return self.buf


def roofline_calls(bytes_in: int, bytes_out: int, dtype, device) -> dict[str, tuple]:
    """Plain copies with the memory traffic of an op reading ``bytes_in`` and writing ``bytes_out``.

    Every candidate reads and writes ``N = ⌈(bytes_in + bytes_out) / 2⌉`` bytes
    (whole elements of ``dtype``): the same total traffic as the operation.
    Returns ``name -> (fn, args)`` for :func:`time_interleaved`:

    * ``"jax_donated"``: :class:`DonatedScale`, an in-place jitted pass over
      ``N`` bytes on ``device`` (no allocation, no page faults);
    * ``"numpy_copyto"`` (CPU devices only): ``np.copyto(dst, src)`` of ``N``
      bytes into a preallocated ``dst``.

    The roofline is the fastest of them (see :func:`pick_roofline`). On the
    project's CPU (AMD EPYC, 32 MiB L3) the donated pass was 1.3-1.6x faster
    than ``np.copyto`` at 1e6 items. A jitted two-buffer copy (read ``x``,
    write a donated ``dst``) is not a candidate: XLA does not reuse a donated
    buffer that the computation does not read, so it allocates its output
    on every call (10x slower there), the artefact this roofline replaces.
    """
    item = np.dtype(dtype).itemsize
    n = max(1, -(-(bytes_in + bytes_out) // (2 * item)))
    calls: dict[str, tuple] = {"jax_donated": (DonatedScale(n, dtype, device), ())}
    if device.platform == "cpu":
        src = np.ones(n, dtype)
        dst = np.empty_like(src)
        calls["numpy_copyto"] = (np.copyto, (dst, src))
    return calls


def pick_roofline(timings: dict[str, Timing]) -> tuple[str, float]:
    """``(name, seconds)`` of the fastest candidate: the copy roofline of this measurement."""
    name = min(timings, key=lambda k: timings[k].median_s)
    return name, timings[name].median_s


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
    every page): a jitted ``x * s`` on 16·10⁶ float32 took 16 ms per call
    that way against 1.9 ms for the same pass in place. Three ``mallopt``
    settings (call this before JAX starts its backend):

    * ``M_MMAP_MAX = 0``: large blocks come from a heap, not from ``mmap``;
    * ``M_ARENA_MAX = 1``: every thread allocates from the main heap. XLA:CPU
      allocates outputs on its worker threads, whose own arenas are 64 MiB
      heaps that glibc unmaps as soon as they are empty: with them,
      ``RigidBodyInertia.transform`` at 10⁶ float32 items still page-faulted
      its 40 MB output (9,766 minor faults, 12-18 ms) on some calls and not
      on others (3.2 ms);
    * ``M_TRIM_THRESHOLD`` at its largest ``int`` (2 GiB; ``mallopt`` takes a
      C ``int``: a larger Python int wraps, to a threshold of 0 for ``2⁶²``).

    XLA:CPU and NumPy then reuse their buffers (0 page faults per call after
    the first), as the GPU allocator always does, and times measure the
    computation and memory bandwidth. Returns whether it was applied.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    m_trim_threshold, m_mmap_max, m_arena_max = -1, -4, -8
    settings = ((m_arena_max, 1), (m_mmap_max, 0), (m_trim_threshold, 2**31 - 1))
    return all(libc.mallopt(param, value) == 1 for param, value in settings)
