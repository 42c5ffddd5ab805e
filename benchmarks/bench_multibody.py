"""Batched kinematic-tree algorithms (FK, RNEA, joint-torque regressor) against Pinocchio.

For the Panda (fingers locked, nv = 7), the UR5 (nv = 6) and Talos (``talos_reduced``,
free flyer, nv = 38) from example-robot-data, float64, at batch sizes 1, 1e3 and 1e5,
for forward kinematics (``fk``), ``rnea``, the mass matrix (``mass``: CRBA) and the
joint-torque regressor (``regressor``), and forward dynamics (``fd``: the
articulated-body algorithm; ``fd_crba``: ``M⁻¹(τ − h)`` by Cholesky; both against
``pin.aba``, run with ``--methods scan``, the third state array used as the torque):

* spatialjax.multibody, jitted, with the level-parallel sweeps (``method="levels"``),
  the ``lax.scan`` over bodies (``method="scan"``) and the plain unrolled per-body
  recursion (``method="loop"``): compile time (lower +
  compile, once) reported apart from run time (best of ``--repeat`` runs,
  ``block_until_ready``);
* a Pinocchio Python loop over the same states (``pin.forwardKinematics``,
  ``pin.rnea``, ``pin.crba``, ``pin.computeJointTorqueRegressor``) that discards
  the results (the stricter baseline, used for the headline ratio), and the same
  loop keeping them in a preallocated ``(batch, ...)`` array, as a user collecting
  a batch must (forward kinematics: every joint's ``data.oMi[j].homogeneous``);
* Pinocchio's per-call time: ``--calls`` calls on one state, divided (the C++ time
  plus the Python binding's call overhead, well under a microsecond).

The joint-torque regressor of Talos at 1e5 states would be 1e5 x 38 x 330 float64
(10 GB); it runs at ``--max-regressor-states`` (default 1e4) and says so.

Large results cost first touching fresh memory: a Panda regressor at 1e5 states is
392 MB, Talos' at 1e4 1 GB (72 % zeros), the Panda's forward kinematics at 1e5 77 MB.
By default glibc maps each such result anew and unmaps it when freed, so every call
page-faults it again (4 kB pages, about 5 GB/s on the 2-core test machine). As
``spatialjax bench`` does, this script first lets glibc keep freed buffers
(``_harness.core.keep_host_buffers``; ``--no-keep-buffers`` leaves glibc alone), so
repeated calls reuse their memory like the Pinocchio loop that keeps its results in one
preallocated array (measured: Panda forward kinematics at 1e5 states 65 -> 44 ms).
Whether it was applied, and ``GLIBC_TUNABLES``, are recorded in the results' ``meta``.

Example: ``PYTHONPATH=. python benchmarks/bench_multibody.py --batches 1,1000,100000``.
``--chain 4096x1024``: only forward kinematics of 1,024 chains of 4,096 revolute links
(``chain_model``) against a NumPy loop over the links (float32 and float64).
Results go to ``benchmarks/results/multibody_cpu.json`` (``--out``; an existing
file is only replaced with ``--overwrite``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness.core import keep_host_buffers  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402

PANDA_LOCKED = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}


def robots_dir():
    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            return Path(dist.locate_file(f)).parent / "robots"
    raise SystemExit("example-robot-data has no robots folder")


def load(name):
    import pinocchio as pin

    root = robots_dir()
    if name == "panda":
        path = str(root / "panda_description/urdf/panda.urdf")
        model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
        pm = pin.buildModelFromUrdf(path)
        ids = [pm.getJointId(n) for n in PANDA_LOCKED]
        pm = pin.buildReducedModel(pm, ids, pin.neutral(pm))
    elif name == "ur5":
        path = str(root / "ur_description/urdf/ur5_robot.urdf")
        model = mb.Model.from_urdf(path, dtype="float64")
        pm = pin.buildModelFromUrdf(path)
    elif name == "talos":
        path = str(root / "talos_data/robots/talos_reduced.urdf")
        model = mb.Model.from_urdf(path, floating_base=True, dtype="float64")
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    else:
        raise SystemExit(f"unknown robot {name!r}")
    return model, pm


def states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (n, model.nq))
    if model.floating_base:
        q[:, :3] = rng.uniform(-1, 1, (n, 3))
        quat = rng.standard_normal((n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    v = rng.standard_normal((n, model.nv))
    a = rng.standard_normal((n, model.nv))
    return q, v, a


def jax_fn(op, method, chunk=0, n=1):
    if method == "levels_chunked":
        inner = jax_fn(op, "levels")
        if not chunk or n <= chunk or n % chunk:
            return None

        def chunked(m, q, v, a):
            # lax.map over chunks of `chunk` states: the working set stays in cache
            xs = tuple(x.reshape((n // chunk, chunk) + x.shape[1:]) for x in (q, v, a))
            out = jax.lax.map(lambda t: inner(m, *t), xs)
            return jax.tree.map(lambda y: y.reshape((n,) + y.shape[2:]), out)

        return chunked
    if op in ("fd", "fd_crba"):
        # forward dynamics (the third array is the torque); one sweep form: reported as "scan"
        if method != "scan":
            return None
        how = "aba" if op == "fd" else "crba"
        return lambda m, q, v, a: mb.forward_dynamics(m, q, v, a, method=how)
    if op == "fk":
        return lambda m, q, v, a: mb.forward_kinematics(m, q, method=method).poses
    if op == "rnea":
        return lambda m, q, v, a: mb.rnea(m, q, v, a, method=method)
    if op == "mass":
        return lambda m, q, v, a: mb.mass_matrix(m, q, method=method)
    return lambda m, q, v, a: mb.joint_torque_regressor(m, q, v, a, method=method)


def pin_fn(op, pm, pd):
    import pinocchio as pin

    if op in ("fd", "fd_crba"):
        return lambda q, v, a: pin.aba(pm, pd, q, v, a)
    if op == "fk":
        return lambda q, v, a: pin.forwardKinematics(pm, pd, q)
    if op == "rnea":
        return lambda q, v, a: pin.rnea(pm, pd, q, v, a)
    if op == "mass":
        return lambda q, v, a: pin.crba(pm, pd, q)
    return lambda q, v, a: pin.computeJointTorqueRegressor(pm, pd, q, v, a)


def pin_keep_fn(op, pm, pd):
    """Like :func:`pin_fn`, returning the result as a NumPy array the loop stores.

    What a user collecting a batch writes: forward kinematics reads every joint's
    world pose ``data.oMi[j]`` (4x4 homogeneous, j = 1..njoints-1) after
    ``forwardKinematics``; the others store the returned vector or matrix.
    """
    import pinocchio as pin

    if op == "fk":
        joints = range(1, pm.njoints)

        def fk(q, v, a):
            pin.forwardKinematics(pm, pd, q)
            return np.stack([pd.oMi[j].homogeneous for j in joints])

        return fk
    return pin_fn(op, pm, pd)


def numpy_chain_fk(P, p, q):
    """NumPy peer of ``forward_kinematics`` on a revolute-z chain: a loop over links.

    ``P (L, 3, 3)``, ``p (L, 3)`` joint placements, ``q (B, L)``; returns world
    rotations ``(B, L, 3, 3)`` and positions ``(B, L, 3)`` (vectorised over the batch).
    """
    B, L = q.shape
    R = np.empty((B, L, 3, 3), q.dtype)
    x = np.empty((B, L, 3), q.dtype)
    c, s = np.cos(q), np.sin(q)
    Rz = np.zeros((B, 3, 3), q.dtype)
    Rz[:, 2, 2] = 1.0
    Rprev = np.broadcast_to(np.eye(3, dtype=q.dtype), (B, 3, 3))
    xprev = np.zeros((B, 3), q.dtype)
    for k in range(L):
        Rz[:, 0, 0] = c[:, k]
        Rz[:, 0, 1] = -s[:, k]
        Rz[:, 1, 0] = s[:, k]
        Rz[:, 1, 1] = c[:, k]
        xk = xprev + Rprev @ p[k]
        np.matmul(Rprev @ P[k], Rz, out=R[:, k])
        x[:, k] = xk
        Rprev, xprev = R[:, k], xk
    return R, x


def chain_benchmark(links, batch, dtype, methods, repeat):
    """FK of ``batch`` chains of ``links`` revolute links: spatialjax vs a NumPy loop."""
    model = mb.chain_model(links, length=0.1, dtype=dtype)
    rng = np.random.default_rng(0)
    q = rng.uniform(-np.pi, np.pi, (batch, links)).astype(dtype)
    P, p = np.asarray(model.placements.E), np.asarray(model.placements.r)
    t_np = best_of(lambda: numpy_chain_fk(P, p, q), repeat)
    _, x_np = numpy_chain_fk(P, p, q)
    row: dict = dict(op="chain_fk", links=links, batch=batch, dtype=dtype, numpy_loop_s=t_np)
    qj = jnp.asarray(q)
    for method in methods:
        fn = jax.jit(lambda m, q, method=method: mb.forward_kinematics(m, q, method=method).poses)
        t = time.perf_counter()
        compiled = fn.lower(model, qj).compile()
        row[f"{method}_compile_s"] = time.perf_counter() - t
        out = jax.block_until_ready(compiled(model, qj))
        tol = 1e-3 if dtype == "float32" else 1e-9
        np.testing.assert_allclose(np.asarray(out.r), x_np, atol=tol * links)
        del out
        row[f"{method}_run_s"] = best_of(
            lambda c=compiled: jax.block_until_ready(c(model, qj)), repeat
        )
        del compiled
        print(
            f"  chain fk {dtype} {batch} chains x {links} links: {method} "
            f"{row[f'{method}_run_s'] * 1e3:9.1f} ms (compile {row[f'{method}_compile_s']:5.1f} s)"
            f" | NumPy loop {t_np * 1e3:9.1f} ms | x NumPy {t_np / row[f'{method}_run_s']:5.2f}",
            flush=True,
        )
    return row


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", default="panda,ur5,talos")
    p.add_argument("--ops", default="fk,rnea,mass,regressor")
    p.add_argument("--batches", default="1,1000,100000")
    p.add_argument("--methods", default="levels,scan")
    p.add_argument("--chunk", type=int, default=2000, help="states per lax.map step")
    p.add_argument("--loop-max-batch", type=int, default=1000, help="largest batch for loop")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--max-regressor-states", type=int, default=10000)
    p.add_argument("--pin-loop-max", type=int, default=100000)
    p.add_argument(
        "--keep-max-bytes",
        type=int,
        default=2**31,
        help="largest result the Pinocchio loop keeping its results may store",
    )
    p.add_argument("--out", default="benchmarks/results/multibody_cpu.json")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument(
        "--chain",
        default="",
        help="LINKSxBATCH (e.g. 4096x1024): only the chain FK benchmark against a NumPy loop",
    )
    p.add_argument("--dtypes", default="float32,float64", help="dtypes of --chain")
    p.add_argument("--no-keep-buffers", action="store_true", help="leave glibc's malloc alone")
    args = p.parse_args(argv)
    buffers_kept = not args.no_keep_buffers and keep_host_buffers()  # before backend threads
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise SystemExit(f"--out {out} exists; pass --overwrite to replace it")
    if args.chain:
        links, batch = (int(x) for x in args.chain.lower().split("x"))
        rows = [
            chain_benchmark(links, batch, dt, args.methods.split(","), args.repeat)
            for dt in args.dtypes.split(",")
        ]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(dict(meta=dict(jax=jax.__version__, args=vars(args)), rows=rows)))
        print(f"wrote {out}")
        return 0
    import pinocchio as pin

    device = str(jax.devices()[0])
    print(f"device: {device} ({jax.devices()[0].device_kind}); jax {jax.__version__}; "
          f"pinocchio {pin.__version__}; {platform.processor() or platform.machine()}; "
          f"float64; load average {os.getloadavg()[0]:.1f}; "
          f"glibc keeps freed buffers: {buffers_kept}")  # fmt: skip
    rows = []
    batches = [int(b) for b in args.batches.split(",")]
    for robot in args.robots.split(","):
        model, pm = load(robot)
        pd = pm.createData()
        print(f"\n{robot}: nbodies={model.nbodies} nv={model.nv} levels={len(model.levels)}")
        for op in args.ops.split(","):
            # Pinocchio per call: one state, many calls
            q, v, a = states(model, 1)
            qp = np.asarray(model.q_to_pinocchio(jnp.asarray(q[0])))
            vp = np.asarray(model.v_to_pinocchio(jnp.asarray(v[0])))
            ap = np.asarray(model.v_to_pinocchio(jnp.asarray(a[0])))
            f = pin_fn(op, pm, pd)

            def calls(f=f, qp=qp, vp=vp, ap=ap):
                for _ in range(args.calls):
                    f(qp, vp, ap)

            per_call = best_of(calls, args.repeat) / args.calls
            for n in batches:
                nn = n
                if op == "regressor" and robot == "talos":
                    nn = min(n, args.max_regressor_states)
                q, v, a = states(model, nn)
                row = dict(robot=robot, op=op, batch=nn, requested_batch=n)
                row["pin_per_call_s"] = per_call
                row["pin_per_call_x_batch_s"] = per_call * nn
                if nn <= args.pin_loop_max:
                    Q = np.asarray(model.q_to_pinocchio(jnp.asarray(q)))
                    V = np.asarray(model.v_to_pinocchio(jnp.asarray(v)))
                    A = np.asarray(model.v_to_pinocchio(jnp.asarray(a)))

                    def loop(f=f, Q=Q, V=V, A=A):
                        for k in range(Q.shape[0]):
                            f(Q[k], V[k], A[k])

                    row["pin_loop_s"] = best_of(loop, 1 if nn >= 10000 else args.repeat)
                    fk_ = pin_keep_fn(op, pm, pd)
                    first = fk_(Q[0], V[0], A[0])
                    if nn * first.nbytes <= args.keep_max_bytes:
                        kept = np.empty((nn,) + first.shape, first.dtype)

                        def keep_loop(f=fk_, Q=Q, V=V, A=A, kept=kept):
                            for k in range(Q.shape[0]):
                                kept[k] = f(Q[k], V[k], A[k])

                        reps = 1 if nn >= 10000 else args.repeat
                        row["pin_keep_loop_s"] = best_of(keep_loop, reps)
                qj, vj, aj = jnp.asarray(q), jnp.asarray(v), jnp.asarray(a)
                for method in args.methods.split(","):
                    if method == "loop" and nn > args.loop_max_batch:
                        continue
                    f_jax = jax_fn(op, method, args.chunk, nn)
                    if f_jax is None:
                        continue
                    fn = jax.jit(f_jax)
                    t = time.perf_counter()
                    compiled = fn.lower(model, qj, vj, aj).compile()
                    row[f"{method}_compile_s"] = time.perf_counter() - t
                    jax.block_until_ready(compiled(model, qj, vj, aj))
                    row[f"{method}_run_s"] = best_of(
                        lambda c=compiled, m=model, x=(qj, vj, aj): jax.block_until_ready(c(m, *x)),
                        args.repeat,
                    )
                    del compiled
                best = min(
                    row.get(f"{m}_run_s", np.inf) for m in ("levels", "levels_chunked", "scan")
                )
                row["best_jax_run_s"] = best
                if "pin_loop_s" in row:
                    row["speedup_vs_pin_loop"] = row["pin_loop_s"] / best
                if "pin_keep_loop_s" in row:
                    row["speedup_vs_pin_keep_loop"] = row["pin_keep_loop_s"] / best
                row["speedup_vs_pin_per_call"] = row["pin_per_call_x_batch_s"] / best
                rows.append(row)
                note = "" if nn == n else f" (capped from {n}: memory)"
                nan = float("nan")

                def ms(key, row=row, nan=nan):
                    return row.get(key, nan) * 1e3

                print(
                    f"  {op:9s} batch {nn:>6d}{note}: levels {ms('levels_run_s'):9.3f} ms "
                    f"(compile {row.get('levels_compile_s', nan):5.1f} s) | scan "
                    f"{ms('scan_run_s'):9.3f} ms (compile {row.get('scan_compile_s', nan):5.1f} s)"
                    f" | loop {ms('loop_run_s'):9.3f} ms "
                    f"(compile {row.get('loop_compile_s', nan):5.1f} s) | pin loop "
                    f"{ms('pin_loop_s'):9.3f} ms | keeping results {ms('pin_keep_loop_s'):9.3f} ms"
                    f" | pin per call {per_call * 1e6:6.2f} us | "
                    f"x pin loop {row.get('speedup_vs_pin_loop', nan):6.2f}"
                    f" | x keeping {row.get('speedup_vs_pin_keep_loop', nan):6.2f}",
                    flush=True,
                )
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(device=device, jax=jax.__version__, pinocchio=pin.__version__, dtype="float64",
                load_average=os.getloadavg()[0], args=vars(args), keep_host_buffers=buffers_kept,
                glibc_tunables=os.environ.get("GLIBC_TUNABLES", ""))  # fmt: skip
    out.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
