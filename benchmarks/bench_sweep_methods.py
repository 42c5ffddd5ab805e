"""Sweep forms against batch size: the measurement behind ``method="auto"``.

For the Panda (fingers locked, nv = 7) and Talos (``talos_reduced``, free flyer,
nv = 38) from example-robot-data (the URDFs as ``bench_dynamics.py`` strips them),
float64, every ``method`` of the tree sweeps (``scan``, ``levels``, ``loop``,
``auto``) for forward kinematics (``fk``), ``rnea``, the mass matrix (``mass``) and
forward dynamics (``fd``: ABA; ``fd_crba``: Cholesky of the mass matrix; these
take no sweep method and are run once, as "auto"), at the batches given. As in
``bench_dynamics.py``, each operation is ``jax.jit`` of the
public call with the model closed over (its arrays are compile-time constants) and
a batch-1 state is ``(nq,)``; time is the median of calls each waited for with
``block_until_ready``, compile time is lower + compile once.

Example: ``PYTHONPATH=. python benchmarks/bench_sweep_methods.py --robots panda
--batches 1,10,100,1000 --out benchmarks/results/sweep_methods_cpu.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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


def load(robot: str, work: Path):
    info = bd.ROBOTS[robot]
    urdf = bd.strip_urdf(bd.robots_dir() / info["file"], work / f"{robot}.urdf", info["fixed"])
    m = mb.Model.from_urdf(str(urdf), floating_base=info["floating"], dtype="float64")
    z = jnp.zeros_like(m.damping)
    return dataclasses.replace(m, damping=z, armature=z)


def op_fn(model, op, method):
    if op == "fk":
        return lambda q, v, t: mb.forward_kinematics(model, q, method=method).poses
    if op == "rnea":
        return lambda q, v, t: mb.rnea(model, q, v, t, method=method)
    if op == "mass":
        return lambda q, v, t: mb.mass_matrix(model, q, method=method)
    if op == "fd":
        return lambda q, v, t: mb.forward_dynamics(model, q, v, t, method="aba")
    if op == "fd_crba":
        return lambda q, v, t: mb.forward_dynamics(model, q, v, t, method="crba")
    raise KeyError(op)


def states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, (n, model.nq))
    if model.floating_base:
        quat = rng.standard_normal((n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
    v = rng.standard_normal((n, model.nv))
    t = rng.standard_normal((n, model.nv))
    if n == 1:
        return q[0], v[0], t[0]
    return q, v, t


def median_time(fn, args, min_time):
    jax.block_until_ready(fn(*args))
    times, spent = [], 0.0
    while spent < min_time or len(times) < 5:
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
        if len(times) >= 2000:
            break
    return float(np.median(times)), len(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--robots", default="panda,talos")
    p.add_argument("--ops", default="fk,rnea,mass,fd,fd_crba")
    p.add_argument("--methods", default="scan,levels,loop,auto")
    p.add_argument("--batches", default="1,10,100,1000")
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--out", default="")
    a = p.parse_args()
    work = Path(tempfile.mkdtemp())
    rows = []
    meta = dict(load_average_start=os.getloadavg()[0], jax=jax.__version__, device="cpu")
    for robot in a.robots.split(","):
        model = load(robot, work)
        for n in (int(b) for b in a.batches.split(",")):
            x = tuple(jnp.asarray(y) for y in states(model, n))
            for op in a.ops.split(","):
                line = f"{robot:6s} {op:8s} batch {n:>6d}:"
                # forward dynamics takes no sweep method (its sweeps are "auto"): once
                methods = ["auto"] if op.startswith("fd") else a.methods.split(",")
                for method in methods:
                    t0 = time.perf_counter()
                    fn = jax.jit(op_fn(model, op, method)).lower(*x).compile()
                    c = time.perf_counter() - t0
                    run, reps = median_time(fn, x, a.min_time)
                    rows.append(
                        dict(robot=robot, op=op, batch=n, method=method, run_s=run, compile_s=c,
                             repeats=reps)
                    )  # fmt: skip
                    line += f"  {method} {run * 1e6:9.1f} us ({c:4.1f} s)"
                print(line, flush=True)
    meta["load_average_end"] = os.getloadavg()[0]
    if a.out:
        Path(a.out).write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    print(f"load average {meta['load_average_start']:.2f} -> {meta['load_average_end']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
