"""The sweeps: every operation over batch sizes and dtypes, and the forward-kinematics chain.

Each measurement is a flat ``dict`` (one JSON record). Times are medians in
seconds; ``*_compile_s`` is the one-off ``lower().compile()`` time, never
included in a run time. Ratios are written so that bigger means "spatialjax is
better": ``vs_numpy = numpy_time / time`` and so on, except ``copy_ratio =
time / copy_time`` (1.0 is the physical limit; ``copy_kind`` names the plain
copy that set it, see :func:`core.roofline_calls`). Each
ratio comes from the operation and the baseline timed interleaved with each
other (:func:`core.time_interleaved`), so both saw the same machine load;
``time_s`` is the operation's median in its pairing with the copy. The
Pinocchio loop runs on a fixed subsample and cannot be paired.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import numpy as np

from . import baselines as bl
from . import core
from .ops import OPS, fk_associative, fk_sequential, make_chain

#: Operations slower than this (seconds per call) are not re-timed beside each baseline.
SLOW_S = 0.25


@dataclasses.dataclass
class Settings:
    """What to run and how long to spend on each measurement."""

    sizes: list[int]
    dtypes: list[str]
    ops: list[str]
    fk_lengths: list[int]
    fk_batches: list[int]
    baselines: set[str]
    pin_items: int = 2000
    numpy_max_size: int = 10**7
    min_time: float = 0.1
    max_repeats: int = 200
    seed: int = 0
    log: Callable[[str], None] = print


def _memory_check(need: int, available: int, what: str) -> str | None:
    if need > 0.7 * available:
        return f"skipped: needs ~{need / 2**30:.1f} GiB of {what}, {available / 2**30:.1f} GiB free"
    return None


def run_ops(settings: Settings, device) -> list[dict]:
    """Benchmark every selected operation at every size and dtype (see module docstring)."""
    records = []
    pin_cache: dict[tuple[str, int], tuple[float, int]] = {}
    for name in settings.ops:
        op = OPS[name]
        for dtype_name in settings.dtypes:
            dtype = np.dtype(dtype_name)
            for n in settings.sizes:
                rec = _run_op(op, n, dtype, settings, device, pin_cache)
                records.append(rec)
                settings.log(_one_line(rec))
    return records


def _per_item_bytes(op, dtype) -> tuple[int, int]:
    args = op.make_inputs(np.random.default_rng(0), 2, dtype)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    out = jax.eval_shape(op.fn, *shapes)
    return core.tree_nbytes(shapes) // 2, core.tree_nbytes(out) // 2


def _run_op(op, n, dtype, settings, device, pin_cache) -> dict:
    rec: dict = {"op": op.name, "dtype": dtype.name, "n": n}
    b_in, b_out = _per_item_bytes(op, dtype)
    rec["bytes_in"], rec["bytes_out"] = b_in * n, b_out * n
    skip = _memory_check(
        5 * (b_in + b_out) * n, core.available_bytes(device), "device memory"
    ) or _memory_check(8 * b_in * n * 8 // dtype.itemsize, core.host_available_bytes(), "RAM")
    if skip:
        rec["status"] = skip
        return rec
    rng = np.random.default_rng(settings.seed)
    host = op.make_inputs(rng, n, dtype)
    args = tuple(jax.device_put(a, device) for a in host)

    op_exe, rec["compile_s"] = core.compile_jitted(op.fn, args)
    op_call = (op_exe, args)
    roof = core.roofline_calls(rec["bytes_in"], rec["bytes_out"], dtype, device)
    rec["copy_compile_s"] = roof["jax_donated"][0].compile_s

    def pair(other):
        """Time the op interleaved with ``other``: their ratio shares the machine's noise.

        An operation slower than ``SLOW_S`` averages the noise within each call;
        then only ``other`` is timed and the op's first median reused.
        """
        if t_op is not None and t_op.median_s > SLOW_S:
            return t_op, core.time_host(*other, min_time=settings.min_time)
        return core.time_interleaved(
            [op_call, other], min_time=settings.min_time, max_repeats=settings.max_repeats
        )

    t_op, *t_roof = core.time_interleaved(
        [op_call, *roof.values()], min_time=settings.min_time, max_repeats=settings.max_repeats
    )
    candidates = dict(zip(roof, t_roof, strict=True))
    rec["copy_kind"], rec["copy_time_s"] = core.pick_roofline(candidates)
    rec["copy_candidates_s"] = {k: v.median_s for k, v in candidates.items()}
    t = rec["time_s"] = t_op.median_s
    rec["repeats"] = t_op.repeats
    rec["items_per_s"] = n / t
    rec["copy_ratio"] = t / rec["copy_time_s"]
    setup = bl.jaxlie_setup(op.name, host, device) if "jaxlie" in settings.baselines else None
    if setup is not None:
        fn, jl_args = setup
        jl_exe, rec["jaxlie_compile_s"] = core.compile_jitted(fn, jl_args)
        t_op2, t_jl = pair((jl_exe, jl_args))
        rec["jaxlie_label"] = bl.JAXLIE_LABELS[op.name]
        rec["jaxlie_time_s"] = t_jl.median_s
        rec["vs_jaxlie"] = t_jl.median_s / t_op2.median_s
    if "numpy" in settings.baselines and n <= settings.numpy_max_size:
        t_op3, t_np = pair((bl.NUMPY[op.name], host))
        rec["numpy_time_s"] = t_np.median_s
        rec["vs_numpy"] = t_np.median_s / t_op3.median_s
    if "pin" in settings.baselines:
        pin = _pin_time(op, n, settings, pin_cache)
        if pin is not None:
            t_pin, measured = pin
            rec["pin_time_s"] = t_pin
            rec["pin_items_measured"] = measured
            rec["pin_extrapolated"] = measured < n
            rec["pin_label"] = bl.PIN_LABELS[op.name]
            rec["vs_pin"] = t_pin / t
    rec["status"] = "ok"
    return rec


def _pin_time(op, n, settings, cache) -> tuple[float, int] | None:
    """Pinocchio loop time at ``n`` items: measured up to ``pin_items``, linear beyond."""
    m = min(n, settings.pin_items)
    if (op.name, m) not in cache:
        try:
            host = op.make_inputs(np.random.default_rng(settings.seed), m, np.float64)
            loop, args = bl.pin_setup(op.name, host)
        except ImportError:
            return None
        cache[(op.name, m)] = (core.time_host(loop, args, min_time=settings.min_time).median_s, m)
    t, m = cache[(op.name, m)]
    return t * n / m, m


def run_fk(settings: Settings, device) -> list[dict]:
    """Forward kinematics: sequential ``lax.scan`` vs ``lax.associative_scan`` per chain length."""
    records = []
    for dtype_name in settings.dtypes:
        dtype = np.dtype(dtype_name)
        for batch in settings.fk_batches:
            for length in settings.fk_lengths:
                rec = _run_fk(length, batch, dtype, settings, device)
                records.append(rec)
                settings.log(_fk_line(rec))
    return records


def _run_fk(length, batch, dtype, settings, device) -> dict:
    rec: dict = {"op": "fk_chain", "dtype": dtype.name, "length": length, "batch": batch}
    nbytes = 12 * dtype.itemsize * length * batch
    rec["bytes_in"] = rec["bytes_out"] = nbytes
    skip = _memory_check(8 * nbytes, core.available_bytes(device), "device memory")
    if skip:
        rec["status"] = skip
        return rec
    host = make_chain(np.random.default_rng(settings.seed), length, batch, dtype)
    args = tuple(jax.device_put(a, device) for a in host)
    seq, rec["seq_compile_s"] = core.compile_jitted(fk_sequential, args)
    assoc, rec["assoc_compile_s"] = core.compile_jitted(fk_associative, args)
    roof = core.roofline_calls(nbytes, nbytes, dtype, device)
    rec["copy_compile_s"] = roof["jax_donated"][0].compile_s
    t_seq, t_assoc, *t_roof = core.time_interleaved(
        [(seq, args), (assoc, args), *roof.values()],
        min_time=settings.min_time,
        max_repeats=settings.max_repeats,
    )
    candidates = dict(zip(roof, t_roof, strict=True))
    rec["copy_kind"], copy_time = core.pick_roofline(candidates)
    rec["copy_candidates_s"] = {k: v.median_s for k, v in candidates.items()}
    rec.update(
        seq_time_s=t_seq.median_s,
        assoc_time_s=t_assoc.median_s,
        copy_time_s=copy_time,
        repeats=t_seq.repeats,
        assoc_speedup=t_seq.median_s / t_assoc.median_s,
    )
    best = min(t_seq.median_s, t_assoc.median_s)
    if "numpy" in settings.baselines:
        rec["numpy_time_s"] = core.time_host(bl.numpy_fk, host, min_time=settings.min_time).median_s
        rec["vs_numpy"] = rec["numpy_time_s"] / best
    if "pin" in settings.baselines:
        chains = max(1, min(batch, settings.pin_items // length))
        try:
            loop, pin_args = bl.pin_fk_setup(host[0][:, :chains], host[1][:, :chains])
        except ImportError:
            pin_args = None
        if pin_args is not None:
            t = core.time_host(loop, pin_args, min_time=settings.min_time).median_s
            rec["pin_time_s"] = t * batch / chains
            rec["pin_extrapolated"] = chains < batch
            rec["vs_pin"] = rec["pin_time_s"] / best
    rec["status"] = "ok"
    return rec


# ----------------------------------------------------------------------------- progress
def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def _one_line(rec: dict) -> str:
    head = f"  {rec['op']:<24} {rec['dtype']:<8} n={rec['n']:<9}"
    if rec.get("status") != "ok":
        return f"{head} {rec.get('status')}"
    return f"{head} {fmt_time(rec['time_s']):>9}  op/copy {rec['copy_ratio']:.2f}"


def _fk_line(rec: dict) -> str:
    head = f"  fk_chain {rec['dtype']:<8} batch={rec['batch']:<6} length={rec['length']:<5}"
    if rec.get("status") != "ok":
        return f"{head} {rec.get('status')}"
    return (
        f"{head} scan {fmt_time(rec['seq_time_s']):>9}  "
        f"associative {fmt_time(rec['assoc_time_s']):>9}"
    )
