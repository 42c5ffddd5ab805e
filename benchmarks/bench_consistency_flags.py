"""Consistency flags without eigenvalues vs the eigenvalue path vs a plain copy of the same bytes.

Times, at ``--size`` bodies (default 1e6) in float32 and float64, medians of interleaved rounds
after warm-up (``_harness.core.time_interleaved``: the copy and the three calls take turns, so
machine noise slows them alike; compile time is reported apart):

* ``copy``: the fastest plain copy of the input's bytes (a memcpy: read and write the
  parameters' bytes once; ``_harness.core.roofline_calls``): ``np.copyto`` into a
  preallocated buffer, and a jitted in-place pass on a donated buffer; the faster is the
  yardstick. The flags themselves read those bytes and write one bool per body, half a
  memcpy's traffic; a pass with exactly that traffic (half the buffer) would fit in this
  CPU's 32 MiB cache at 10⁶ float32 bodies and time the cache, not the memory;
* ``is_physically_consistent``: the eigenvalue-free flags (pivoted LDLᵀ of two 3×3 matrices);
* ``physical_consistency(...).fully_consistent``: the same verdict through the eigenvalues of
  ``I_c`` (XLA drops the unused 4×4 eigenvalues of ``J``);
* ``physical_consistency``: the full report, margins included (both eigenvalue problems).

On Linux, glibc is told to keep freed buffers (``_harness.core.keep_host_buffers``), as
``spatialjax bench`` does; ``--no-keep-buffers`` leaves it alone.

Example: ``python benchmarks/bench_consistency_flags.py --size 1e6 --runs 4``.
"""

from __future__ import annotations

import argparse

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness import core  # noqa: E402

from spatialjax import RigidBodyInertia, is_physically_consistent, physical_consistency  # noqa: E402


def _bodies(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.1, 5.0, n)
    c = rng.normal(size=(n, 3))
    A = rng.normal(size=(n, 3, 3))
    S_c = A @ np.swapaxes(A, -1, -2) * rng.choice([1.0, -0.1], size=(n, 1, 1))  # mixed verdicts
    S = S_c + m[:, None, None] * c[:, :, None] * c[:, None, :]
    I = np.trace(S, axis1=1, axis2=2)[:, None, None] * np.eye(3) - S
    six = np.stack([I[:, 0, 0], I[:, 0, 1], I[:, 1, 1], I[:, 0, 2], I[:, 1, 2], I[:, 2, 2]], -1)
    return np.concatenate([m[:, None], m[:, None] * c, six], -1).astype(dtype)


def _run(dtype, n, min_time):
    p_np = _bodies(n, dtype)
    p = jnp.asarray(p_np)
    body = RigidBodyInertia(p)
    cases = {
        "is_physically_consistent (no eigenvalues)": is_physically_consistent,
        "physical_consistency(...).fully_consistent": (
            lambda b: physical_consistency(b).fully_consistent
        ),
        "physical_consistency (full report)": physical_consistency,
    }
    compiled = {name: core.compile_jitted(fn, (body,)) for name, fn in cases.items()}
    out_bytes = n * np.dtype(bool).itemsize
    roof = core.roofline_calls(p_np.nbytes, p_np.nbytes, dtype, jax.devices()[0])  # a memcpy
    print(f"\n{np.dtype(dtype).name}: {p_np.nbytes / 1e6:.0f} MB in, {out_bytes / 1e6:.0f} MB out")
    verdicts = []
    for name, (exe, compile_s) in compiled.items():
        # each call interleaved with the copies on its own: the round count follows its own
        # time (a 0.3 s report would cap a shared group, the flags with it, at a few rounds)
        calls = [(exe, (body,)), *roof.values()]
        t, *t_roof = core.time_interleaved(calls, min_time=min_time, warmup_time=0.2)
        kind, t_copy = core.pick_roofline(dict(zip(roof, t_roof, strict=True)))
        out = exe(body)
        verdicts.append(np.asarray(out if hasattr(out, "shape") else out.fully_consistent))
        print(
            f"  {name:45s} {t.median_s * 1e3:9.2f} ms  {t.median_s / t_copy:6.2f}x memcpy "
            f"({kind} {t_copy * 1e3:.2f} ms; {t.repeats} rounds; compile {compile_s:.2f} s)"
        )
    same = all(np.array_equal(verdicts[0], v) for v in verdicts[1:])
    print(f"  verdicts identical: {same}; consistent fraction {verdicts[0].mean():.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=float, default=1e6)
    ap.add_argument("--runs", type=int, default=1, help="independent measurements in a row")
    ap.add_argument("--min-time", type=float, default=0.5, help="seconds per timed function")
    ap.add_argument("--no-keep-buffers", action="store_true", help="leave glibc's malloc alone")
    args = ap.parse_args()
    n = int(args.size)
    kept = not args.no_keep_buffers and core.keep_host_buffers()
    print(
        f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), bodies: {n:,}; "
        f"glibc keeps freed buffers: {kept}"
    )
    for run in range(args.runs):
        if args.runs > 1:
            print(f"\n=== run {run + 1} of {args.runs}")
        for dtype in (np.float32, np.float64):
            _run(dtype, n, args.min_time)


if __name__ == "__main__":
    main()
