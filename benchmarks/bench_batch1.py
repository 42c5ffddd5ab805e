"""Where the batch-1 time of the public multibody calls goes (Panda, float64, CPU).

For forward kinematics, RNEA, the mass matrix, forward dynamics (ABA and
Cholesky) and the frame Jacobian of the Panda (fingers locked, as
``bench_dynamics.py`` loads it), one state of shape ``(nq,)``:

* ``eager np``: the public function called eagerly on NumPy inputs (input
  checks, jit dispatch of the kernel, the program, and for forward dynamics
  the eager singular-matrix check);
* ``eager jax``: the same on JAX arrays;
* ``jit``: ``jax.jit`` of the public call with the model closed over, called on
  JAX arrays (what ``bench_dynamics.py`` times: one dispatch and the program);
* ``thunks``: the compiled program's while loops and fusions (``as_text``);

with ``jax.jit(lambda q: q + 1)`` as the floor of one dispatch. Each time is the
median of calls waited for one by one (``block_until_ready``).
Run with ``PYTHONPATH=. python benchmarks/bench_batch1.py [--methods scan,loop,auto]``;
``PYTHONPATH`` may point at another checkout to measure it the same way.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_dynamics as bd  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402


def median_us(f, n):
    jax.block_until_ready(f())
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        jax.block_until_ready(f())
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e6


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--methods", default="scan,loop,auto")
    p.add_argument("--calls", type=int, default=500)
    a = p.parse_args()
    work = Path(tempfile.mkdtemp())
    info = bd.ROBOTS["panda"]
    urdf = bd.strip_urdf(bd.robots_dir() / info["file"], work / "panda.urdf", info["fixed"])
    m = mb.Model.from_urdf(str(urdf), dtype="float64")
    z = jnp.zeros_like(m.damping)
    m = dataclasses.replace(m, damping=z, armature=z)
    rng = np.random.default_rng(0)
    q, v, t = (rng.uniform(-1, 1, m.nq) for _ in range(3))
    xj = tuple(jnp.asarray(x) for x in (q, v, t))
    inc = jax.jit(lambda x: x + 1.0)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"jit(q + 1): {median_us(lambda: inc(xj[0]), 4 * a.calls):.1f} us")
    for method in a.methods.split(","):
        ops = {
            "fk": lambda q, v, t, method=method: mb.forward_kinematics(m, q, method=method).poses,
            "rnea": lambda q, v, t, method=method: mb.rnea(m, q, v, t, method=method),
            "mass": lambda q, v, t, method=method: mb.mass_matrix(m, q, method=method),
        }
        if method == a.methods.split(",")[0]:  # no method argument: once
            ops["fd"] = lambda q, v, t: mb.forward_dynamics(m, q, v, t)
            ops["fd_crba"] = lambda q, v, t: mb.forward_dynamics(m, q, v, t, method="crba")
            ops["jac"] = lambda q, v, t: mb.frame_jacobian(m, q, "panda_hand")
        for name, f in ops.items():
            try:
                eager_np = median_us(lambda f=f: f(q, v, t), a.calls)
            except Exception as e:  # noqa: BLE001 - an older checkout without a method
                print(f"{method:5s} {name:8s} failed: {type(e).__name__}: {e}")
                continue
            eager_j = median_us(lambda f=f: f(*xj), a.calls)
            c = jax.jit(f).lower(*xj).compile()
            jit_t = median_us(lambda c=c: c(*xj), a.calls)
            txt = c.as_text()
            label = method if name in ("fk", "rnea", "mass") else "-"
            print(
                f"{label:5s} {name:8s} eager np {eager_np:7.1f} us  eager jax {eager_j:7.1f} us  "
                f"jit {jit_t:7.1f} us  while loops {txt.count(' while(')}, "
                f"fusions {txt.count(' fusion(')}",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
