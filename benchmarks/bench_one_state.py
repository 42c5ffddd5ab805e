"""spatialjax against frax in ONE process: one state, the model as an argument, scan steps, batches.

A measurement for issue 36 (CPU, float64, the Panda of ``bench_dynamics.py``:
fingers locked, end effector ``panda_hand``). frax is imported from its own
virtual environment (``--frax-site``; it pins the same jax) into this process,
and the process runs with frax's recommended CPU settings (its
``check_env_vars``: ``XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1
--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"``,
``OPENBLAS_NUM_THREADS=1``, x64), set before jax starts, for both libraries
(``--no-frax-flags`` leaves XLA's defaults). Every function is jitted and
compiled before timing (compile time is reported apart); the calls are
interleaved round by round in rotating order, each round timing a chunk of
calls (each waited for with ``block_until_ready``) and keeping its median; the
figure is the median over rounds ("best" in the JSON: the smallest round).
The load average is printed at the start and the end: on a shared machine
only ratios within one run mean anything.

Rows, each frax's and ours computing the same thing (checked equal first):

* ``fk``: every body's world pose (ours the two arrays of a ``Plxb``, frax one
  ``(nb, 4, 4)``; the check compares the blocks); ``fk4x4``: the same as frax's one
  ``(nb, 4, 4)`` array (ours ``poses.inverse().as_homogeneous()``, in the program);
  ``jac``: the end effector's Jacobian,
  world-aligned axes at the frame origin; ``rnea``; ``mass``: the mass matrix;
  ``fd``: forward dynamics (ours: ``method="auto"``, frax: its
  ``forward_dynamics``); ``ctrl``: a controller step in one call, the end
  effector's pose and Jacobian, ``M`` and ``h = C v + g`` (frax from one
  ``joint_to_world_transforms``, as its ``torque_control_matrices`` does).

Columns:

* ``one``: one state, ``jax.jit(lambda q, ...: f(model, q, ...))`` (the model
  closed over: a constant of the program);
* ``arg``: one state, ``jax.jit(f)(model, q, ...)`` (the model an argument, as
  any gradient with respect to its inertias or geometry needs; frax's
  ``Robot`` is not a pytree, so frax has only the ``one`` form);
* ``scan``: the time per step of a ``lax.scan`` of ``--scan-steps`` steps at
  one state (``fd``: semi-implicit Euler ``v += dt a``, ``q += dt v``;
  ``rnea``: the torques summed along a trajectory), compiled as one program;
* ``1000``, ``100000``: batches (ours natively batched, frax ``jax.vmap``).

``--sync-dispatch`` sets ``jax_cpu_enable_async_dispatch`` to False: XLA's CPU
client then runs every program in the calling thread, where by default a
program of 1,000 flops or more is handed to a worker thread that the caller
waits for (``benchmarks/README.md``, "One state").

Run: ``PYTHONPATH=. python benchmarks/bench_one_state.py --out benchmarks/results
--name one_state_cpu`` (``--quick``: a smoke run).
"""

from __future__ import annotations

import argparse
import os
import sys

FRAX_FLAGS = (
    "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1 "
    "--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"
)
FRAX_SITE = "/work/venv-peers/frax/lib/python3.11/site-packages"


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--frax-site", default=FRAX_SITE, help="frax's site-packages ('' : none)")
    p.add_argument("--no-frax-flags", action="store_true", help="XLA's default CPU flags")
    p.add_argument(
        "--sync-dispatch",
        action="store_true",
        help="jax_cpu_enable_async_dispatch=False: every program runs in the calling thread",
    )
    p.add_argument("--ops", default="fk,fk4x4,jac,rnea,mass,fd,ctrl")
    p.add_argument("--columns", default="one,arg,scan,1000,100000")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--chunk", type=int, default=25, help="calls per round at one state")
    p.add_argument("--scan-steps", type=int, default=1000)
    p.add_argument("--quick", action="store_true", help="few rounds, batches 10 and 100")
    p.add_argument("--out", default="", help="folder for NAME.json/.txt/.png")
    p.add_argument("--name", default="one_state_cpu")
    p.add_argument("--replot", default="", help="only redraw NAME.png from this results JSON")
    return p.parse_args(argv)


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and not ARGS.no_frax_flags:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + FRAX_FLAGS).strip()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import dataclasses  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
if ARGS is not None and ARGS.sync_dispatch:  # before the CPU client exists
    jax.config.update("jax_cpu_enable_async_dispatch", False)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_dynamics as bd  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402

G6 = (0.0, 0.0, 9.81, 0.0, 0.0, 0.0)  # frax's gravity: a spatial acceleration, z up
DT = 1e-3


# ------------------------------------------------------------------ the functions
def _er(poses):
    return poses.E, poses.r


def ours(m, ee: str) -> dict:
    """Our functions of ``(model, *state)`` (one state or a batch)."""
    body, X = m.frame(ee)

    def ee_pose(model, q):
        P = mb.forward_kinematics(model, q).poses
        E = P.E[..., body, :, :]
        return E @ model.frame_placements.E[m.frame_index(ee)], P.r[..., body, :] + (
            E @ model.frame_placements.r[m.frame_index(ee)]
        )

    def jac(model, q):  # rows [v; ω] as frax's
        J = mb.frame_jacobian(model, q, ee, reference="local_world_aligned")
        return jnp.concatenate([J[..., 3:, :], J[..., :3, :]], axis=-2)

    return dict(
        fk=lambda model, q: _er(mb.forward_kinematics(model, q).poses),
        # frax's output: one (nb, 4, 4) array of [[E, r], [0, 1]] (the inverse of our Plxb's
        # as_homogeneous, which maps world points into the body)
        fk4x4=lambda model, q: mb.forward_kinematics(model, q).poses.inverse().as_homogeneous(),
        jac=jac,
        rnea=lambda model, q, v, a: mb.rnea(model, q, v, a),
        mass=lambda model, q: mb.mass_matrix(model, q),
        fd=lambda model, q, v, t: mb.forward_dynamics(model, q, v, t),
        ctrl=lambda model, q, v: (
            *ee_pose(model, q),
            jac(model, q),
            mb.mass_matrix(model, q),
            mb.nonlinear_effects(model, q, v),
        ),
    )


def frax_fns(fr, spec) -> dict:
    """frax's functions of the state (its model is always closed over)."""
    idx = fr.joint_name_to_index[spec["ee_parent_joint"]]
    offset = np.asarray(spec["ee_placement"])
    chain = np.flatnonzero(fr.ancestor_mask[idx])
    g6 = jnp.asarray(G6)

    def ctrl(q, v):
        jt = fr.joint_to_world_transforms(q)
        T = jt[idx] @ offset
        return (
            T[:3, :3],
            T[:3, 3],
            fr._frame_jacobian(jt, offset, chain),
            fr._mass_matrix(jt),
            fr._nonlinear_bias(v, jt),
        )

    return dict(
        fk=lambda q: fr.joint_to_world_transforms(q),
        fk4x4=lambda q: fr.joint_to_world_transforms(q),
        jac=lambda q: fr._frame_jacobian(fr.joint_to_world_transforms(q), offset, chain),
        rnea=lambda q, v, a: fr.rnea(q, v, a, g6, None),
        mass=fr.mass_matrix,
        fd=lambda q, v, t: fr.forward_dynamics(q, v, t, None),
        ctrl=ctrl,
    )


STATE_ARGS = dict(fk="q", fk4x4="q", jac="q", rnea="qva", mass="q", fd="qvt", ctrl="qv")
#: the no-op floors: a jitted sum of the same state arguments plus one, per argument count
FLOORS = {"q + 1": "q", "q + v + 1": "qv", "q + v + a + 1": "qva"}
FLOOR_OF = {
    op: next(k for k, c in FLOORS.items() if len(c) == len(a)) for op, a in STATE_ARGS.items()
}


def noop_name(op: str) -> str:
    """The row of the no-op with ``op``'s state arguments and outputs (``noop_like``)."""
    return f"{op} no-op"


def noop_like(fn, model, x):
    """A jitted-to-be no-op with ``fn``'s state arguments AND its outputs: every output a
    broadcast of ``sum(state)[0] + 1`` to that output's shape (XLA:CPU pays ~0.8 µs per
    output array of a call, so a no-op returning one array understates the floor of an op
    that returns five)."""
    shapes = jax.eval_shape(closed(fn, model), *x)

    def noop(*s):
        first = (sum(s) + 1.0)[0]
        return jax.tree.map(lambda sd: jnp.broadcast_to(first, sd.shape).astype(sd.dtype), shapes)

    return noop


def closed(fn, model):
    """``fn`` with the model closed over: ``(*state) -> fn(model, *state)``."""
    return lambda *s: fn(model, *s)


def scan_of_arg(fn, op: str, T: int):
    """``(model, *state)`` -> the ``T``-step scan of ``fn(model, ...)``: the model an argument."""
    return lambda model, *s: scan_fn(closed(fn, model), op, T)(*s)


def scan_fn(step_f, op: str, T: int):
    """A ``T``-step ``lax.scan`` of ``step_f`` at one state (``fd``: Euler; ``rnea``: a sum)."""

    def run(*state):
        if op == "fd":
            q, v, t = state

            def body(c, _):
                q, v = c
                v = v + DT * step_f(q, v, t)
                return (q + DT * v, v), None

            return jax.lax.scan(body, (q, v), None, length=T)[0]
        q, v, a = state

        def body(c, _):
            q, s = c
            return (q + DT * v, s + step_f(q, v, a)), None

        return jax.lax.scan(body, (q, jnp.zeros_like(v)), None, length=T)[0]

    return run


# ------------------------------------------------------------------ timing
def stats(compiled) -> dict:
    txt = compiled.as_text()
    entry = txt[txt.find("ENTRY") :]
    ca = compiled.cost_analysis()
    ca = ca[0] if isinstance(ca, list) else ca
    return dict(
        flops=float((ca or {}).get("flops", float("nan"))),
        fusions=entry.count(" fusion("),
        dots=entry.count(" dot("),
        custom_calls=entry.count("custom-call("),
        whiles=txt.count(" while("),
    )


def time_rounds(calls: dict, rounds: int, chunk: int) -> dict:
    """``{name: [median of each round]}``: the calls interleaved, order rotating by round."""
    names = list(calls)
    for f, x in calls.values():  # warm-up
        for _ in range(3):
            jax.block_until_ready(f(*x))
    out = {k: [] for k in names}
    for r in range(rounds):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            f, x = calls[k]
            ts = []
            for _ in range(chunk):
                t0 = time.perf_counter()
                jax.block_until_ready(f(*x))
                ts.append(time.perf_counter() - t0)
            out[k].append(statistics.median(ts))
    return out


def compile_timed(f, x):
    t0 = time.perf_counter()
    jf = jax.jit(f)
    compiled = jf.lower(*x).compile()
    return jf, compiled, time.perf_counter() - t0


def check(a, b, name):
    a = [np.asarray(x) for x in jax.tree.leaves(a)]
    b = [np.asarray(x) for x in jax.tree.leaves(b)]
    err = max(
        float(np.max(np.abs(x - y)) / max(1.0, float(np.max(np.abs(y)))))
        for x, y in zip(a, b, strict=True)
    )
    if not err < 1e-9:
        raise SystemExit(f"{name}: ours and frax disagree (relative error {err:.2e})")
    return err


def fmt(s):
    return "-" if s is None else f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


# ------------------------------------------------------------------ main
def main(a) -> int:
    if a.replot:
        results = json.loads(Path(a.replot).read_text())
        ops = list(dict.fromkeys(r["op"] for r in results["rows"] if r["library"] != "jax"))
        columns = list(
            dict.fromkeys(r["column"] for r in results["rows"] if r["column"] != "scan_arg")
        )
        plot(results, ops, columns, Path(a.replot).with_suffix(".png"))
        return 0
    warnings.filterwarnings("ignore", message=".*frax.*")  # frax's CPU-settings notice
    work = Path(tempfile.mkdtemp(prefix="bench_one_state_"))
    info = bd.ROBOTS["panda"]
    urdf = bd.strip_urdf(bd.robots_dir() / info["file"], work / "panda.urdf", info["fixed"])
    m = mb.Model.from_urdf(str(urdf), dtype="float64")
    z = jnp.zeros_like(m.damping)
    m = dataclasses.replace(m, damping=z, armature=z)  # as Pinocchio's and frax's
    ops = a.ops.split(",")
    columns = a.columns.split(",")
    if a.quick:
        a.rounds, a.chunk, a.scan_steps = 3, 5, 50
        columns = [c if c not in ("1000", "100000") else {"1000": "10", "100000": "100"}[c]
                   for c in columns]  # fmt: skip
    load0 = os.getloadavg()
    print(f"bench_one_state: jax {jax.__version__}, XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}, "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}", flush=True)  # fmt: skip
    fr = None
    if a.frax_site:
        if not Path(a.frax_site).is_dir():
            raise SystemExit(f"--frax-site {a.frax_site}: no such folder (benchmarks/README.md)")
        sys.path.append(a.frax_site)
        import frax  # noqa: PLC0415 - from the peer's venv

        fr = frax.Robot(str(urdf), joint_ordering=list(m.joint_names), floating_base=None)
        import importlib.metadata as md  # noqa: PLC0415

        frax_version = md.version("frax")
    pm = bd.pin_model(dict(urdf=str(urdf), floating=False))
    fid = pm.getFrameId(info["ee_frame"])
    spec = dict(
        ee_parent_joint=pm.names[pm.frames[fid].parentJoint],
        ee_placement=pm.frames[fid].placement.homogeneous.tolist(),
    )
    rng = np.random.default_rng(0)
    state = {k: jnp.asarray(rng.uniform(-1, 1, m.nq if k == "q" else m.nv)) for k in "qvat"}
    our = ours(m, info["ee_frame"])
    theirs = frax_fns(fr, spec) if fr is not None else {}
    results = dict(
        meta=dict(
            date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            jax=jax.__version__,
            xla_flags=os.environ.get("XLA_FLAGS", ""),
            async_dispatch=bool(jax.config.values["jax_cpu_enable_async_dispatch"]),
            frax=frax_version if fr is not None else None,
            load_average_start=load0,
            rounds=a.rounds,
            chunk=a.chunk,
            scan_steps=a.scan_steps,
            robot="panda (fingers locked), float64",
        ),
        rows=[],
    )
    # agreement, one state
    for op in ops:
        x = tuple(state[c] for c in STATE_ARGS[op])
        y = jax.jit(closed(our[op], m))(*x)
        if op == "fk" and fr is not None:  # frax: a 4x4 per joint frame
            T = jax.jit(lambda *s, op=op: theirs[op](*s))(*x)
            check((T[:, :3, :3], T[:, :3, 3]), y, op)
        elif fr is not None:
            check(jax.jit(lambda *s, op=op: theirs[op](*s))(*x), y, op)
    print("agreement with frax at one state: every op within 1e-9 (relative)", flush=True)

    def row(op, column, who, f, x, n):
        jf, compiled, c_s = compile_timed(f, x)
        r = dict(op=op, column=column, library=who, batch=n, compile_s=c_s, **stats(compiled))
        results["rows"].append(r)
        return jf, r

    # one state, and the model as an argument
    for column in [c for c in columns if c in ("one", "arg")]:
        calls, rows = {}, {}
        for op in ops:
            x = tuple(state[c] for c in STATE_ARGS[op])
            if column == "one":
                jf, r = row(op, column, "spatialjax", closed(our[op], m), x, 1)
                calls[(op, "spatialjax")], rows[(op, "spatialjax")] = (jf, x), r
                if fr is not None:
                    jf, r = row(op, column, "frax", theirs[op], x, 1)
                    calls[(op, "frax")], rows[(op, "frax")] = (jf, x), r
            else:
                jf, r = row(op, column, "spatialjax", our[op], (m, *x), 1)
                calls[(op, "spatialjax")], rows[(op, "spatialjax")] = (jf, (m, *x)), r
        for name, cs in FLOORS.items():  # no-ops with the same state arguments as the ops
            x0 = tuple(state[c] for c in cs)
            f = (lambda *s: sum(s) + 1.0) if column == "one" else (lambda model, *s: sum(s) + 1.0)
            x = x0 if column == "one" else (m, *x0)
            jf, r = row(name, column, "jax", f, x, 1)
            calls[(name, "jax")], rows[(name, "jax")] = (jf, x), r
        for op in ops:  # no-ops with the same state arguments and the same outputs
            x0 = tuple(state[c] for c in STATE_ARGS[op])
            f = noop_like(our[op], m, x0)
            if column == "arg":
                f = (lambda g: lambda model, *s: g(*s))(f)
            x = x0 if column == "one" else (m, *x0)
            jf, r = row(noop_name(op), column, "jax", f, x, 1)
            calls[(noop_name(op), "jax")], rows[(noop_name(op), "jax")] = (jf, x), r
        print(f"timing column {column!r}: {len(calls)} calls interleaved", flush=True)
        t = time_rounds(calls, a.rounds, a.chunk)
        for k, ts in t.items():
            rows[k].update(run_s=statistics.median(ts), best_s=min(ts), rounds_s=ts)
    # per step of a lax.scan at one state
    if "scan" in columns:
        calls, rows = {}, {}
        T = a.scan_steps
        for op in [o for o in ops if o in ("fd", "rnea")]:
            x = tuple(state[c] for c in STATE_ARGS[op])
            jf, r = row(op, "scan", "spatialjax", scan_fn(closed(our[op], m), op, T), x, 1)
            calls[(op, "spatialjax")], rows[(op, "spatialjax")] = (jf, x), r
            jf, r = row(op, "scan_arg", "spatialjax", scan_of_arg(our[op], op, T), (m, *x), 1)
            calls[(op, "spatialjax-arg")], rows[(op, "spatialjax-arg")] = (jf, (m, *x)), r
            if fr is not None:
                jf, r = row(op, "scan", "frax", scan_fn(theirs[op], op, T), x, 1)
                calls[(op, "frax")], rows[(op, "frax")] = (jf, x), r
        print(f"timing column 'scan' ({T} steps): {len(calls)} calls interleaved", flush=True)
        t = time_rounds(calls, a.rounds, max(1, a.chunk // 5))
        for k, ts in t.items():
            rows[k].update(run_s=statistics.median(ts) / T, best_s=min(ts) / T,
                           rounds_s=[x / T for x in ts], per_step=True)  # fmt: skip
    # batches
    for column in [c for c in columns if c.isdigit()]:
        n = int(column)
        calls, rows = {}, {}
        batch = {k: jnp.asarray(rng.uniform(-1, 1, (n,) + v.shape)) for k, v in state.items()}
        for op in ops:
            x = tuple(batch[c] for c in STATE_ARGS[op])
            jf, r = row(op, column, "spatialjax", closed(our[op], m), x, n)
            calls[(op, "spatialjax")], rows[(op, "spatialjax")] = (jf, x), r
            if fr is not None:
                jf, r = row(op, column, "frax", jax.vmap(theirs[op]), x, n)
                calls[(op, "frax")], rows[(op, "frax")] = (jf, x), r
        print(f"timing batch {n}: {len(calls)} calls interleaved", flush=True)
        slow = n >= 10**5
        t = time_rounds(calls, max(3, a.rounds // 3) if slow else a.rounds,
                        1 if slow else max(1, a.chunk // 5))  # fmt: skip
        for k, ts in t.items():
            rows[k].update(run_s=statistics.median(ts), best_s=min(ts), rounds_s=ts)
    load1 = os.getloadavg()
    results["meta"]["load_average_end"] = load1
    txt = report(results, ops, columns)
    print(txt)
    print(f"load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{a.name}.json").write_text(json.dumps(results, indent=1))
        (out / f"{a.name}.txt").write_text(txt + "\n")
        plot(results, ops, columns, out / f"{a.name}.png")
        print(f"wrote {out / a.name}.json/.txt/.png")
    return 0


def _cell(results, op, column, who):
    for r in results["rows"]:
        if r["op"] == op and r["column"] == column and r["library"] == who and "run_s" in r:
            return r
    return None


def report(results, ops, columns) -> str:
    meta = results["meta"]
    lines = [
        f"spatialjax vs frax, Panda float64, one process; {meta['date']}; jax {meta['jax']}; "
        f"XLA_FLAGS={meta['xla_flags']!r}; async dispatch {meta.get('async_dispatch', True)}; "
        f"load average {meta['load_average_start'][0]:.2f} "
        f"(start) {meta['load_average_end'][0]:.2f} (end)",
        "",
        "median over rounds (smallest round); ratio = frax / spatialjax (> 1: spatialjax faster)",
        "",
    ]
    cols = [c for c in columns if c != "arg"]
    head = "| op | " + " | ".join(
        f"{c}: spatialjax | frax | ratio"
        + (
            " | / no-op, same arguments | / no-op, same arguments and outputs"
            " | arg: spatialjax | ratio"
            if c == "one"
            else ""
        )
        for c in cols
    ) + " |"  # fmt: skip
    lines += [head, "|" + "---|" * (1 + sum(7 if c == "one" else 3 for c in cols))]
    floors = list(FLOORS) + [noop_name(op) for op in ops]
    for op in ops + floors:
        cells = []
        for c in cols:
            who = "jax" if op in floors else "spatialjax"
            o = _cell(results, op, c, who)
            f = _cell(results, op, c, "frax")
            ratio = f"{f['run_s'] / o['run_s']:.2f}" if o and f else "-"
            best = f" ({fmt(o['best_s'])})" if o else ""
            cells += [fmt(o and o["run_s"]) + best, fmt(f and f["run_s"]), ratio]
            if c == "one":
                base = op.removesuffix(" no-op")
                for name in (FLOOR_OF.get(base, op), op if op in floors else noop_name(op)):
                    fl = _cell(results, name, c, "jax")
                    cells += [f"{o['run_s'] / fl['run_s']:.2f}" if o and fl else "-"]
                ao = _cell(results, op, "arg", who)
                ratio = f"{f['run_s'] / ao['run_s']:.2f}" if ao and f else "-"
                cells += [fmt(ao and ao["run_s"]), ratio]
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    sa = [r for r in results["rows"] if r["column"] == "scan_arg" and "run_s" in r]
    if sa:
        lines += ["", "scan with the model as an argument (per step): " + ", ".join(
            f"{r['op']} {fmt(r['run_s'])}" for r in sa)]  # fmt: skip
    lines += ["", "compiled one-state programs (flops, fusions + dots + custom calls):"]
    for r in results["rows"]:
        if r["column"] in ("one", "arg") and r["library"] != "jax":
            lines.append(
                f"  {r['op']:6s} {r['column']:4s} {r['library']:10s} {r['flops']:8.0f} flops, "
                f"{r['fusions']} + {r['dots']} + {r['custom_calls']} kernels, "
                f"compile {r['compile_s']:.2f} s"
            )
    return "\n".join(lines)


def plot(results, ops, columns, path):
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print("matplotlib missing: no plot")
        return
    cols = ["one", "arg"] + [c for c in columns if c not in ("one", "arg")]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    w = 0.8 / len(cols)
    for j, c in enumerate(cols):
        vals = []
        for op in ops:
            o = _cell(results, op, c, "spatialjax")
            f = _cell(results, op, "one" if c == "arg" else c, "frax")
            vals.append(f["run_s"] / o["run_s"] if o and f else np.nan)
        names = {"one": "1 state", "arg": "1 state, model as argument", "scan": "per scan step"}
        label = names[c] if c in names else f"{int(c):,} states"
        ax.bar(np.arange(len(ops)) + (j - (len(cols) - 1) / 2) * w, vals, w, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(np.arange(len(ops)), ops)
    ax.set_yscale("log")
    ax.set_ylabel("frax time / spatialjax time")
    load = results["meta"]["load_average_start"][0]
    ax.set_title(f"Panda, float64, CPU, one process (load average {load:.1f}); > 1: spatialjax "
                 "faster", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main(ARGS))
