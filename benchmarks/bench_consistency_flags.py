"""Consistency flags without eigenvalues vs the eigenvalue path vs a plain copy of the same bytes.

Times, at ``--size`` bodies (default 1e6) in float32 and float64, medians of ``--repeats`` runs
after one warm-up (compile time reported apart):

* ``copy``: the fastest plain pass over the input's bytes we can write: ``np.copyto`` into a
  preallocated buffer, and a jitted ``x + 1`` on a donated buffer; the faster is the limit;
* ``is_physically_consistent``: the eigenvalue-free flags (pivoted LDLᵀ of two 3×3 matrices);
* ``physical_consistency(...).fully_consistent``: the same verdict through the eigenvalues of
  ``I_c`` (XLA drops the unused 4×4 eigenvalues of ``J``);
* ``physical_consistency``: the full report, margins included (both eigenvalue problems).

Example: ``PYTHONPATH=. python benchmarks/bench_consistency_flags.py --size 1e6``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from spatialjax import RigidBodyInertia, is_physically_consistent, physical_consistency  # noqa: E402


def _time(fn, repeats):
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        runs.append(time.perf_counter() - t0)
    return first, statistics.median(runs)


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


def _run(dtype, n, repeats):
    p_np = _bodies(n, dtype)
    p = jnp.asarray(p_np)
    mb = p_np.nbytes / 1e6
    buf = np.empty_like(p_np)
    _, t_np = _time(lambda: np.copyto(buf, p_np), repeats)
    add1 = jax.jit(lambda x: x + 1, donate_argnums=0)
    state = {"x": jnp.array(p_np)}

    def donated():
        state["x"] = add1(state["x"])
        return state["x"]

    _, t_jax = _time(donated, repeats)
    t_copy = min(t_np, t_jax)
    print(
        f"\n{np.dtype(dtype).name}: {mb:.0f} MB in; copy limit {t_copy * 1e3:.2f} ms "
        f"(np.copyto {t_np * 1e3:.2f} ms, jitted donated x + 1 {t_jax * 1e3:.2f} ms)"
    )
    body = RigidBodyInertia(p)
    cases = {
        "is_physically_consistent (no eigenvalues)": jax.jit(is_physically_consistent),
        "physical_consistency(...).fully_consistent": jax.jit(
            lambda b: physical_consistency(b).fully_consistent
        ),
        "physical_consistency (full report)": jax.jit(physical_consistency),
    }
    verdicts = []
    for name, fn in cases.items():
        first, t = _time(lambda fn=fn: fn(body), repeats)
        out = fn(body)
        verdicts.append(np.asarray(out if hasattr(out, "shape") else out.fully_consistent))
        print(
            f"  {name:45s} {t * 1e3:9.2f} ms  {t / t_copy:6.2f}x copy  "
            f"(first call incl. compile {first:.2f} s)"
        )
    same = all(np.array_equal(verdicts[0], v) for v in verdicts[1:])
    print(f"  verdicts identical: {same}; consistent fraction {verdicts[0].mean():.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=float, default=1e6)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    n = int(args.size)
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), bodies: {n:,}")
    for dtype in (np.float32, np.float64):
        _run(dtype, n, args.repeats)


if __name__ == "__main__":
    main()
