"""Forward dynamics: the ABA against the Cholesky route (``"crba"``), and what ``"auto"`` picks.

For each robot (example-robot-data, float64, CPU: the Panda with its fingers locked
(nv = 7), Solo-12 (free flyer, nv = 18), Talos (``talos_reduced``, free flyer, nv =
38)) and each batch size, ``forward_dynamics(model, q, v, tau, method=m)`` for ``m``
in ``"aba"``, ``"crba"`` and ``"auto"`` (the default) is jitted with the model closed
over, compiled (time reported apart) and timed interleaved (medians of rounds, each
call waited for). The table says which route was faster and whether ``"auto"`` took
it (``auto / best``: 1.0 when it did). The three agree to 1e-9 (checked first).

Run: ``PYTHONPATH=. python benchmarks/bench_fd_routes.py --out benchmarks/results``
(``--robots panda --batches 1,1000``: a subset; ``--robots-dir DIR``: URDFs from a folder
laid out as example-robot-data's ``robots/``). It runs on JAX's default device: on a GPU
machine it measures the GPU (``--name fd_routes_gpu``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import statistics
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

ROBOTS = dict(
    panda=bd.ROBOTS["panda"],
    solo12=dict(file="solo_description/robots/solo12.urdf", floating=True, fixed=()),
    talos=bd.ROBOTS["talos"],
)
METHODS = ("aba", "crba", "auto")


def load(name, work, root: Path):
    info = ROBOTS[name]
    urdf = bd.strip_urdf(root / info["file"], work / f"{name}.urdf", info["fixed"])
    m = mb.Model.from_urdf(str(urdf), floating_base=info["floating"], dtype="float64")
    z = jnp.zeros_like(m.damping)
    return dataclasses.replace(m, damping=z, armature=z)


def fd_of(m, method):
    """``(q, v, tau) -> forward_dynamics(m, ..., method=method)``, the model closed over."""
    return lambda q, v, t: mb.forward_dynamics(m, q, v, t, method=method)


def states(m, n, rng):
    q = rng.uniform(-1, 1, (n, m.nq))
    if m.floating_base:
        quat = rng.standard_normal((n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    v, t = rng.standard_normal((n, m.nv)), rng.standard_normal((n, m.nv))
    if n == 1:
        q, v, t = q[0], v[0], t[0]
    return tuple(jnp.asarray(x) for x in (q, v, t))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--robots", default="panda,solo12,talos")
    p.add_argument("--batches", default="1,1000,100000")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--min-time", type=float, default=0.05, help="seconds per round and call")
    p.add_argument("--out", default="")
    p.add_argument("--name", default="fd_routes_cpu")
    p.add_argument("--robots-dir", default=None,
                   help="example-robot-data's robots/ folder or one laid out as it (default: "
                        "the installed package's)")  # fmt: skip
    a = p.parse_args(argv)
    root = Path(a.robots_dir) if a.robots_dir else bd.robots_dir()
    device = jax.devices()[0]
    where = f"{device.platform}: {getattr(device, 'device_kind', '') or device.platform}"
    work = Path(tempfile.mkdtemp(prefix="bench_fd_routes_"))
    rng = np.random.default_rng(0)
    load0 = os.getloadavg()
    print(f"bench_fd_routes: {where}, jax {jax.__version__}, load average {load0[0]:.2f}",
          flush=True)  # fmt: skip
    rows = []
    for robot in a.robots.split(","):
        m = load(robot, work, root)
        for n in (int(float(b)) for b in a.batches.split(",")):
            x = states(m, n, rng)
            calls = {}
            for meth in METHODS:
                f = jax.jit(fd_of(m, meth))
                t0 = time.perf_counter()
                f.lower(*x).compile()
                c_s = time.perf_counter() - t0
                calls[meth] = (f, c_s)
            outs = {k: np.asarray(f(*x)) for k, (f, _) in calls.items()}
            err = max(float(np.max(np.abs(outs[k] - outs["aba"]))) for k in METHODS)
            scale = max(1.0, float(np.max(np.abs(outs["aba"]))))
            if not err <= 1e-9 * scale:
                raise SystemExit(f"{robot} batch {n}: the routes disagree by {err:.1e}")
            for f, _ in calls.values():  # warm-up
                jax.block_until_ready(f(*x))
            ts = {k: [] for k in METHODS}
            for r in range(a.rounds):
                order = list(METHODS[r % 3 :] + METHODS[: r % 3])
                for k in order:
                    f = calls[k][0]
                    t_end, one = time.perf_counter() + a.min_time, []
                    while True:
                        t0 = time.perf_counter()
                        jax.block_until_ready(f(*x))
                        one.append(time.perf_counter() - t0)
                        if time.perf_counter() > t_end:
                            break
                    ts[k].append(statistics.median(one))
            med = {k: statistics.median(v) for k, v in ts.items()}
            best = min(("aba", "crba"), key=lambda k: med[k])
            row = dict(robot=robot, nv=m.nv, nbodies=m.nbodies, batch=n,
                       run_s=med, compile_s={k: c for k, (_, c) in calls.items()},
                       faster=best, auto_over_best=med["auto"] / med[best],
                       crba_over_aba=med["crba"] / med["aba"])  # fmt: skip
            rows.append(row)
            print(f"  {robot:6s} nv {m.nv:2d} batch {n:>6d}: aba {bd.fmt_time(med['aba'])}, "
                  f"crba {bd.fmt_time(med['crba'])}, auto {bd.fmt_time(med['auto'])} "
                  f"(faster: {best}; auto/best {row['auto_over_best']:.2f})",
                  flush=True)  # fmt: skip
    load1 = os.getloadavg()
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    head = (f"forward_dynamics routes, float64, {where}; {date}; load average {load0[0]:.2f} "
            f"(start) {load1[0]:.2f} (end)")  # fmt: skip
    lines = [head, "", "| robot | nv | batch | aba | crba | auto | crba / aba | auto / faster |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        t = r["run_s"]
        lines.append(f"| {r['robot']} | {r['nv']} | {r['batch']:g} | {bd.fmt_time(t['aba'])} | "
                     f"{bd.fmt_time(t['crba'])} | {bd.fmt_time(t['auto'])} | "
                     f"{r['crba_over_aba']:.2f} | {r['auto_over_best']:.2f} |")  # fmt: skip
    txt = "\n".join(lines)
    print(txt)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        meta = dict(jax=jax.__version__, load_average_start=load0, load_average_end=load1,
                    rounds=a.rounds, dtype="float64", device=where)  # fmt: skip
        (out / f"{a.name}.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
        (out / f"{a.name}.txt").write_text(txt + "\n")
        print(f"wrote {out / a.name}.json/.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
