"""XLA:CPU's fixed costs of one jitted call: per constant, per output, per kernel, per model.

The one-state programs (``multibody/_onestate.py``) are shaped by these costs; this script
measures them on tiny programs whose only difference is the one counted (float64, frax's
CPU flags as ``bench_one_state.py`` sets them, synchronous dispatch: every program runs in
the calling thread). Every program is compiled ahead (``jax.jit(f).lower(*x).compile()``)
and the variants of a family are timed round by round in turn (median over rounds of the
mean time per call of ``--calls`` calls); the load average is printed at the start and the
end: only differences within one run mean anything.

Families (rows ``family/variant``):

* ``constants/k``: one kernel reading ``k`` constants of 64 doubles, each behind an
  ``optimization_barrier`` (a buffer allocated at every call);
* ``outputs/k``: ``k`` output arrays of one number each (a buffer and an array object
  each);
* ``kernels/k``: ``k`` kernels, a chain of ``(k - 1) / 2`` 3x3 products (a dot and a fused
  kernel each, after the first kernel);
* ``big-constant/...``: the same chain of 32 products reading six constants of 64 doubles,
  or one of 64, or one of 512 doubles (over 512 bytes: the thunk executor's sequential
  rule no longer holds);
* ``executor/...``: two independent chains of 8 products (a program that is not one chain)
  reading an argument of 504 or of 1,400 bytes (the Panda model's first leaf): over 512
  bytes, XLA:CPU's thunk executor leaves its sequential mode; and one chain of 16 products
  reading the same arguments (every kernel reads its predecessor's result: in sequence
  whatever the sizes);
* ``model/...``: a no-op taking the Panda ``Model``, a plain custom pytree node of the same
  two arrays, the same two arrays as the fields of a ``register_dataclass`` node, the two
  arrays alone, and neither (the cost of flattening the model).

Run: ``PYTHONPATH=. python benchmarks/bench_xla_cpu_costs.py --out benchmarks/results
--name xla_cpu_costs``.
"""

from __future__ import annotations

import argparse
import os
import sys

FRAX_FLAGS = (
    "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1 "
    "--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"
)


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=500, help="calls per round")
    p.add_argument("--out", default="", help="folder for NAME.json/.txt")
    p.add_argument("--name", default="xla_cpu_costs")
    return p.parse_args(argv)


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + FRAX_FLAGS).strip()

import dataclasses  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
if ARGS is not None:  # before the CPU client exists
    jax.config.update("jax_cpu_enable_async_dispatch", False)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_dynamics as bd  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402


def _constants(k: int):
    cs = [np.random.default_rng(i).standard_normal(64) for i in range(k)]

    def f(q):
        acc = q * 1.0
        for c in cs:
            acc = acc + jax.lax.optimization_barrier(jnp.asarray(c))[: q.shape[0]]
        return acc

    return f


def _outputs(k: int):
    def f(q):
        s = jnp.sum(q) + 1.0
        return tuple(jnp.broadcast_to(s, (1,)) for _ in range(k))

    return f


def _chain(n: int, sizes=()):
    cs = [np.random.default_rng(i).standard_normal(size) for i, size in enumerate(sizes)]

    def f(q):
        x = q[:3, None] * q[None, 1:4]
        for c in cs:
            x = x + 0.1 * jax.lax.optimization_barrier(jnp.asarray(c))[:9].reshape(3, 3)
        for _ in range(n):  # x -> 0.1 x x + 0.5: bounded (entries tend to about 0.6)
            x = jnp.dot(x, x, precision="highest") * 0.1 + 0.5
        return x

    return f


def _two_chains(q, x):
    a, b = q[:3, None] * q[None, 1:4], q[1:4, None] * q[None, 4:7] + 0.0 * x[0, 0]
    for _ in range(8):
        a = jnp.dot(a, a, precision="highest") * 0.1 + 0.5
        b = jnp.dot(b, b, precision="highest") * 0.1 + 0.5
    return a + b


def _one_chain(q, x):
    a = q[:3, None] * q[None, 1:4] + 0.0 * x[0, 0]
    for _ in range(16):
        a = jnp.dot(a, a, precision="highest") * 0.1 + 0.5
    return a


class _Node:
    """Two arrays as a plain custom pytree node (the reference for ``Model``'s flattening)."""

    def __init__(self, leaves):
        self.leaves = leaves


jax.tree_util.register_pytree_node(_Node, lambda n: (n.leaves, None), lambda _, x: _Node(x))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _Fields:
    """Two arrays as the fields of a ``register_dataclass`` node (flattened by JAX in C++)."""

    first: jax.Array
    second: jax.Array


def families(model) -> dict:
    """``{family: {variant: (function, arguments)}}``."""
    q = jnp.linspace(0.1, 0.7, 7)
    leaves = tuple(jax.tree.leaves(model))
    noop = lambda *a: a[-1] + 1.0  # noqa: E731
    return {
        "constants": {str(k): (_constants(k), (q,)) for k in (0, 1, 2, 4, 8, 16)},
        "outputs": {str(k): (_outputs(k), (q,)) for k in (1, 2, 3, 5)},
        "kernels": {str(2 * n + 1): (_chain(n), (q,)) for n in (0, 4, 8, 16, 32)},
        "big-constant": {
            "6 x 64": (_chain(32, (64,) * 6), (q,)),
            "1 x 64": (_chain(32, (64,)), (q,)),
            "1 x 512": (_chain(32, (512,)), (q,)),
        },
        "executor": {
            "504-byte argument": (_two_chains, (q, jnp.ones((7, 9)))),
            "1,400-byte argument": (_two_chains, (q, jnp.ones((7, 25)))),
            "504-byte argument, one chain": (_one_chain, (q, jnp.ones((7, 9)))),
            "1,400-byte argument, one chain": (_one_chain, (q, jnp.ones((7, 25)))),
        },
        "model": {
            "q": (noop, (q,)),
            "two arrays, q": (noop, (*leaves, q)),
            "plain node, q": (noop, (_Node(leaves), q)),
            "dataclass node, q": (noop, (_Fields(*leaves), q)),
            "Model, q": (noop, (model, q)),
        },
    }


def kernels(compiled) -> int:
    entry = compiled.as_text().split("ENTRY")[1]
    skip = ("parameter(", "constant(", "get-tuple-element", "tuple(", "bitcast(")
    lines = [line for line in entry.splitlines() if " = " in line]
    return sum(1 for line in lines if not any(s in line for s in skip))


def main(a) -> int:
    info = bd.ROBOTS["panda"]
    urdf = bd.strip_urdf(
        bd.robots_dir() / info["file"], Path(tempfile.mkdtemp()) / "panda.urdf", info["fixed"]
    )
    model = mb.Model.from_urdf(urdf, dtype="float64")
    load0 = os.getloadavg()
    rows = []
    for family, variants in families(model).items():
        compiled = {k: jax.jit(f).lower(*x).compile() for k, (f, x) in variants.items()}
        times: dict = {k: [] for k in variants}
        for c, (_, x) in zip(compiled.values(), variants.values(), strict=True):
            jax.block_until_ready(c(*x))
        for _ in range(a.rounds):
            for k, (_, x) in variants.items():
                c = compiled[k]
                t0 = time.perf_counter()
                for _ in range(a.calls):
                    c(*x)
                times[k].append((time.perf_counter() - t0) / a.calls)
        for k in variants:
            rows.append(dict(family=family, variant=k, kernels=kernels(compiled[k]),
                             run_s=statistics.median(times[k]), rounds_s=times[k]))  # fmt: skip
    meta = dict(date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                jax=jax.__version__, xla_flags=os.environ.get("XLA_FLAGS", ""),
                load_average_start=load0, load_average_end=os.getloadavg(),
                rounds=a.rounds, calls=a.calls)  # fmt: skip
    lines = [
        f"XLA:CPU fixed costs per call, float64, sync dispatch; {meta['date']}; jax "
        f"{meta['jax']}; load average {load0[0]:.2f} (start) {meta['load_average_end'][0]:.2f}"
        " (end)",
        "",
        "| family | variant | kernels | µs per call | minus the family's first |",
        "|---|---|---|---|---|",
    ]
    first = {}
    for r in rows:
        base = first.setdefault(r["family"], r["run_s"])
        lines.append(f"| {r['family']} | {r['variant']} | {r['kernels']} | "
                     f"{r['run_s'] * 1e6:.2f} | {(r['run_s'] - base) * 1e6:+.2f} |")  # fmt: skip
    print("\n".join(lines))
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{a.name}.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
        (out / f"{a.name}.txt").write_text("\n".join(lines) + "\n")
        print(f"wrote {out / a.name}.json/.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
