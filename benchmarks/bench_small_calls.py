"""Small calls: the per-call cost of spatialjax's operations on 1 and 16 items.

Simulator code calls these operations on a handful of items per step, where
the cost is Python and dispatch overhead, not memory traffic. For each
operation, dtype and batch this times, ``timeit``-style (``--repeat`` rounds
of ``number`` calls, ``number`` chosen so that a round lasts about
``--min-time``; every call waited for with ``jax.block_until_ready``):

* ``jit(arrays)``: a ``jax.jit`` function of plain arrays that builds the
  objects inside (``lambda E, r, m: Plx(E, r).apply_motion(m)``);
* ``jit(objects)``: a ``jax.jit`` function taking the spatialjax objects
  (``lambda X, m: X.apply_motion(m)``), so their pytree flattening is timed;
* ``eager``: the method called on the objects without ``jit``
  (``X.apply_motion(m)``), checks included.

The baselines are timed in the same run, interleaved with the operations:
a jitted ``x + 1`` on a ``(batch, 6)`` array of the same dtype (the cost of
one jitted dispatch) and an eager ``x + 1`` (one eager ``jnp`` operation).
Reported per call, in microseconds: the minimum and the median over the
rounds, and the ratio of the minimum to the baseline's minimum.

Batch ``1`` means unbatched objects (batch shape ``()``), as a simulator
holding one body passes them; ``16`` means batch shape ``(16,)``.

Asynchronous dispatch on CPU: XLA's CPU client runs a computation on the
calling thread only when its cost estimate is under 1000 flops
(``HloCostAnalysis``); a larger one is handed to a worker thread, and the
caller waits for that thread to wake up (about 5 µs on an idle machine, tens
to hundreds of µs on a loaded one). A 3×3 compose of 16 items is 1008 flops,
just over. ``--sync-dispatch`` sets ``jax_cpu_enable_async_dispatch=False``
(every computation runs on the calling thread), the setting for a simulator
loop that blocks on each result anyway.

Example::

    PYTHONPATH=. python benchmarks/bench_small_calls.py
    PYTHONPATH=. python benchmarks/bench_small_calls.py --dtypes float32 --batches 1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness.ops import random_inertia_params, random_rotations  # noqa: E402

import spatialjax  # noqa: E402
from spatialjax import Plx, Plxb, RigidBodyInertia, physical_consistency  # noqa: E402
from spatialjax._inertia import pseudo_inertia_sandwich  # noqa: E402


def _time(fn: Callable[[], object], min_time: float, repeat: int) -> tuple[float, float]:
    """(min, median) seconds per call of ``fn`` over ``repeat`` rounds of ``number`` calls."""

    def call():
        jax.block_until_ready(fn())

    call()  # warm-up (compiles once for jit)
    timer = timeit.Timer(call)
    number, elapsed = 1, 0.0
    while True:  # timeit's autorange, to ``min_time`` per round
        elapsed = timer.timeit(number)
        if elapsed >= min_time or number >= 100_000:
            break
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9)))
    runs = [t / number for t in timer.repeat(repeat=repeat, number=number)]
    return min(runs), statistics.median(runs)


def _inputs(batch: tuple[int, ...], dtype, seed: int = 0) -> dict[str, jax.Array]:
    rng = np.random.default_rng(seed)
    n = int(np.prod(batch))

    def cast(a, core):
        return jnp.asarray(np.asarray(a, dtype=dtype).reshape(batch + core))

    E1, E2 = random_rotations(rng, n), random_rotations(rng, n)
    r1, r2 = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    p = random_inertia_params(rng, n)
    T = np.zeros((n, 4, 4))
    T[:, :3, :3] = E1
    T[:, :3, 3] = -np.einsum("nij,nj->ni", E1, r1)
    T[:, 3, 3] = 1.0
    J = np.asarray(RigidBodyInertia(jnp.asarray(p)).pseudo_inertia())
    return {
        "E1": cast(E1, (3, 3)),
        "r1": cast(r1, (3,)),
        "E2": cast(E2, (3, 3)),
        "r2": cast(r2, (3,)),
        "m": cast(rng.standard_normal((n, 6)), (6,)),
        "p": cast(p, (10,)),
        "T": cast(T, (4, 4)),
        "J": cast(J, (4, 4)),
        "x": cast(np.ones((n, 6)), (6,)),
    }


def _cases(a: dict[str, jax.Array]) -> dict[str, dict[str, Callable[[], object]]]:
    """Operation -> {mode -> zero-argument call}; the jitted functions are built here."""
    X1, X2 = Plx(a["E1"], a["r1"]), Plx(a["E2"], a["r2"])
    Y1, Y2 = Plxb(a["E1"], a["r1"]), Plxb(a["E2"], a["r2"])
    body = RigidBodyInertia(a["p"])
    E1, r1, E2, r2, m, p, T, J = (a[k] for k in ("E1", "r1", "E2", "r2", "m", "p", "T", "J"))

    def modes(jit_arrays, args_arrays, jit_objects, args_objects, eager):
        fa, fo = jax.jit(jit_arrays), jax.jit(jit_objects)
        return {
            "jit(arrays)": lambda: fa(*args_arrays),
            "jit(objects)": lambda: fo(*args_objects),
            "eager": eager,
        }

    return {
        "Plx @ Plx": modes(
            lambda E1, r1, E2, r2: Plx(E1, r1) @ Plx(E2, r2),
            (E1, r1, E2, r2),
            lambda X, Y: X @ Y,
            (X1, X2),
            lambda: X1 @ X2,
        ),
        "Plxb @ Plxb": modes(
            lambda E1, r1, E2, r2: Plxb(E1, r1) @ Plxb(E2, r2),
            (E1, r1, E2, r2),
            lambda X, Y: X @ Y,
            (Y1, Y2),
            lambda: Y1 @ Y2,
        ),
        "Plx.apply_motion": modes(
            lambda E, r, m: Plx(E, r).apply_motion(m),
            (E1, r1, m),
            lambda X, m: X.apply_motion(m),
            (X1, m),
            lambda: X1.apply_motion(m),
        ),
        "Plx.apply_force": modes(
            lambda E, r, f: Plx(E, r).apply_force(f),
            (E1, r1, m),
            lambda X, f: X.apply_force(f),
            (X1, m),
            lambda: X1.apply_force(m),
        ),
        "RigidBodyInertia.transform": modes(
            lambda E, r, p: RigidBodyInertia(p).transform(Plx(E, r)),
            (E1, r1, p),
            lambda b, X: b.transform(X),
            (body, X1),
            lambda: body.transform(X1),
        ),
        "pseudo_inertia_sandwich": modes(
            pseudo_inertia_sandwich,
            (T, J),
            pseudo_inertia_sandwich,
            (T, J),
            lambda: pseudo_inertia_sandwich(T, J),
        ),
        "physical_consistency": modes(
            lambda p: physical_consistency(RigidBodyInertia(p)),
            (p,),
            physical_consistency,
            (body,),
            lambda: physical_consistency(body),
        ),
    }


def run(batches, dtypes, min_time, repeat, ops=None) -> list[dict]:
    rows = []
    for dtype in dtypes:
        for b in batches:
            batch = () if b == 1 else (b,)
            a = _inputs(batch, dtype)
            x = a["x"]
            inc = jax.jit(lambda x: x + 1)
            base = {
                "jit": lambda inc=inc, x=x: inc(x),
                "eager": lambda x=x: x + 1,
            }
            cases = _cases(a)
            if ops:
                cases = {k: v for k, v in cases.items() if k in ops}
            # interleave: baseline, then every mode of every operation, per round of ``repeat``
            times: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(2):
                times.setdefault(("x + 1", "jit"), []).append(_time(base["jit"], min_time, repeat))
                times.setdefault(("x + 1", "eager"), []).append(
                    _time(base["eager"], min_time, repeat)
                )
                for name, modes in cases.items():
                    for mode, fn in modes.items():
                        t = min_time / 4 if mode == "eager" else min_time
                        times.setdefault((name, mode), []).append(_time(fn, t, repeat))
            best = {
                k: (min(t[0] for t in v), statistics.median(t[1] for t in v))
                for k, v in times.items()
            }
            jit_min, eager_min = best[("x + 1", "jit")][0], best[("x + 1", "eager")][0]
            for (name, mode), (tmin, tmed) in best.items():
                ref = eager_min if mode == "eager" else jit_min
                rows.append(
                    {
                        "op": name,
                        "mode": mode,
                        "dtype": np.dtype(dtype).name,
                        "batch": b,
                        "min_us": tmin * 1e6,
                        "median_us": tmed * 1e6,
                        "vs_x_plus_1": tmin / ref,
                    }
                )
    return rows


def _table(rows: list[dict]) -> str:
    lines = [
        "| operation | mode | dtype | batch | min µs | median µs | min / x+1 (same mode) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['op']} | {r['mode']} | {r['dtype']} | {r['batch']} | {r['min_us']:.1f} | "
            f"{r['median_us']:.1f} | {r['vs_x_plus_1']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--batches", default="1,16", help="comma list; 1 = unbatched (shape ())")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per round (jit)")
    ap.add_argument("--repeat", type=int, default=5, help="rounds per measurement")
    ap.add_argument("--ops", default="", help="comma list of operation names (default all)")
    ap.add_argument(
        "--sync-dispatch",
        action="store_true",
        help="jax_cpu_enable_async_dispatch=False: run every CPU computation on the calling "
        "thread (see the note at the top)",
    )
    ap.add_argument("--json", type=Path, help="write the rows here as JSON")
    args = ap.parse_args(argv)
    if args.sync_dispatch:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    batches = [int(b) for b in args.batches.split(",")]
    dtypes = [np.dtype(d) for d in args.dtypes.split(",")]
    ops = [o.strip() for o in args.ops.split(",") if o.strip()] or None
    print(
        f"spatialjax {spatialjax.__version__} from {Path(spatialjax.__file__).parent}; "
        f"jax {jax.__version__}; {jax.devices()[0]}; {platform.processor() or platform.machine()}; "
        f"async CPU dispatch {'off' if args.sync_dispatch else 'on (default)'}"
    )
    rows = run(batches, dtypes, args.min_time, args.repeat, ops)
    print(_table(rows))
    if args.json:
        meta = {"jax": jax.__version__, "sync_dispatch": args.sync_dispatch}
        args.json.write_text(json.dumps({**meta, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
