"""spatialjax.multibody against its peers, side by side in one run: FK, RNEA, CRBA, FD, a Jacobian.

Operations (float64, CPU, one state = one call at batch 1, ``jax.vmap`` at larger batches):

* ``fk``: the world pose of every body (each library's own forward kinematics);
* ``rnea``: inverse dynamics ``τ = M(q) a + h(q, v)`` with gravity ``-9.81 z``;
* ``mass``: the joint-space inertia matrix (CRBA);
* ``fd``: forward dynamics ``a = M⁻¹(τ − h)`` (each library's own function; spatialjax's
  ``multibody.forward_dynamics`` (ABA) where the checkout has it, else composed from
  ``mass_matrix`` and ``rnea``); ``fd_crba``: spatialjax's
  ``forward_dynamics(method="crba")`` (Cholesky of the mass matrix), spatialjax only;
* ``jac``: the end-effector frame's Jacobian, world-aligned axes at the frame origin
  (Pinocchio's ``LOCAL_WORLD_ALIGNED``, rows ``[v; ω]``).

Robots (example-robot-data): the Panda with its two finger joints fixed (nv = 7; end
effector ``panda_hand``), and Talos (``talos_reduced``, free flyer, nv = 38; end
effector ``arm_left_7_link``). The URDFs are rewritten without ``<visual>``
and ``<collision>`` (MuJoCo would need the meshes) into ``--work-dir``; every peer
loads those same files.

Peers, each in its own virtual environment (they pin different jax versions; how
to create them: ``benchmarks/README.md``), each a subprocess running
``benchmarks/_peers/<peer>.py`` that prints progress and writes JSON:
spatialjax (``method="auto"``, the default, and ``"levels"``), frax (with the XLA
flags its README recommends for CPU), jaxsim, adam (JAX backend), MJX and Pinocchio
(a Python loop over the states, and its per-call time). Before any timing, each peer
computes every operation on 4 random states; the results are converted to
Pinocchio's conventions (free-flyer order and velocity frame, joint order) and
compared with Pinocchio's: the relative error is reported per peer and operation,
and a peer whose operation disagrees is flagged in the table. A peer that cannot be
installed or cannot load a model is reported with the reason.

Compile time (trace + lower + compile) is measured apart from run time; run times
are medians of calls interleaved across the five operations of one batch size
(``_harness.core.time_interleaved``). A call whose first run exceeds
``--time-cap`` seconds is not repeated ("skipped (time cap)").

Example: ``PYTHONPATH=. python benchmarks/bench_dynamics.py --quick`` (smoke test),
``PYTHONPATH=. python benchmarks/bench_dynamics.py --overwrite`` (the committed
results: ``benchmarks/results/dynamics_peers_cpu.{json,txt,png}``).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OPS = ("fk", "rnea", "mass", "fd", "fd_crba", "jac")  # fd_crba: spatialjax only
PEERS = ("spatialjax", "frax", "jaxsim", "adam", "mjx", "pinocchio")  # also: spatialjax-levels
# frax's README (scripts/setup_cpu_env.sh) for CPU: one thread, no multithreaded Eigen
FRAX_XLA_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
ROBOTS = {
    "panda": dict(
        file="panda_description/urdf/panda.urdf",
        floating=False,
        ee_frame="panda_hand",
        fixed=("panda_finger_joint1", "panda_finger_joint2"),
    ),
    "talos": dict(
        file="talos_data/robots/talos_reduced.urdf",
        floating=True,
        ee_frame="arm_left_7_link",
        fixed=(),
    ),
}
TOL = 1e-8


def robots_dir() -> Path:
    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            return Path(dist.locate_file(f)).parent / "robots"
    raise SystemExit("example-robot-data has no robots folder")


def strip_urdf(src: Path, dst: Path, fixed=()) -> Path:
    """``src`` without visuals, collisions and transmissions, ``fixed`` joints made fixed.

    Every ``<inertial>`` gets an explicit ``<origin>`` (identity where it had none, as
    the URDF spec reads it): adam's parser fails on an inertial without one.
    """
    tree = ET.parse(src)
    root = tree.getroot()
    for link in root.iter("link"):
        inertial = link.find("inertial")
        if inertial is not None and inertial.find("origin") is None:
            ET.SubElement(inertial, "origin", xyz="0 0 0", rpy="0 0 0")
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    for tag in ("transmission", "gazebo"):
        for el in root.findall(tag):
            root.remove(el)
    for joint in root.iter("joint"):
        if joint.get("name") in fixed:
            joint.set("type", "fixed")
            for tag in ("limit", "axis", "dynamics", "safety_controller", "mimic"):
                for el in joint.findall(tag):
                    joint.remove(el)
    tree.write(dst)
    return dst


def pin_model(spec):
    import pinocchio as pin

    if spec["floating"]:
        return pin.buildModelFromUrdf(spec["urdf"], pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(spec["urdf"])


def pin_reference(spec, Q, V, A, T) -> dict:
    """Pinocchio's outputs on the check states, in the form ``to_pin`` returns."""
    import pinocchio as pin

    pm = pin_model(spec)
    pd = pm.createData()
    fid = pm.getFrameId(spec["ee_frame"])
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    ref = {k: [] for k in OPS}
    for q, v, a, t in zip(Q, V, A, T, strict=True):
        pin.framesForwardKinematics(pm, pd, q)
        ref["fk"].append(pd.oMf[fid].homogeneous.copy())
        ref["rnea"].append(pin.rnea(pm, pd, q, v, a).copy())
        M = pin.crba(pm, pd, q).copy()
        ref["mass"].append(np.triu(M) + np.triu(M, 1).T)
        ref["fd"].append(pin.aba(pm, pd, q, v, t).copy())
        ref["fd_crba"].append(ref["fd"][-1])
        ref["jac"].append(pin.computeFrameJacobian(pm, pd, q, fid, lwa).copy())
    return {k: np.stack(v) for k, v in ref.items()}


def rel_error(out, ref) -> float:
    out, ref = np.asarray(out, float), np.asarray(ref, float)
    if out.shape != ref.shape:
        return float("inf")
    err = np.linalg.norm((out - ref).reshape(len(ref), -1), axis=1)
    scale = np.maximum(1.0, np.linalg.norm(ref.reshape(len(ref), -1), axis=1))
    return float(np.max(err / scale))


def peer_command(
    peer: str, venvs: Path, single_thread: bool = False
) -> tuple[list[str], dict, str | None]:
    """``(argv, extra env, reason it cannot run)`` of a peer's subprocess.

    frax runs with :data:`FRAX_XLA_FLAGS` (its README's CPU setting); with
    ``single_thread`` every JAX peer does.
    """
    env = {"JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "1"}
    if peer.startswith("spatialjax") or peer == "pinocchio":
        py = sys.executable
        script = "pinocchio_peer.py" if peer == "pinocchio" else "spatialjax_peer.py"
        env["PYTHONPATH"] = str(ROOT)
    else:
        py = str(venvs / peer / "bin" / "python")
        script = f"{peer}_peer.py"
        if not Path(py).exists():
            return [], env, f"not installed: no venv {venvs / peer} (benchmarks/README.md)"
    if peer == "frax" or (single_thread and peer != "pinocchio"):
        env["XLA_FLAGS"] = FRAX_XLA_FLAGS
    return [py, str(HERE / "_peers" / script)], env, None


def run_peer(peer, robot, base_spec, work, venvs, timeout, single_thread=False) -> dict:
    argv, extra_env, reason = peer_command(peer, venvs, single_thread)
    if reason:
        return dict(peer=peer, robot=robot, error=reason)
    spec = dict(base_spec, peer=peer)
    if peer.startswith("spatialjax-"):  # spatialjax-levels, spatialjax-loop: other sweeps
        spec["method"] = peer.split("-", 1)[1]
    if peer.startswith("spatialjax"):
        spec["budget_s"] = float("inf")
    spec["out"] = str(work / f"{robot}_{peer}.json")
    spec["check_out"] = str(work / f"{robot}_{peer}_check.npz")
    spec_path = work / f"{robot}_{peer}_spec.json"
    spec_path.write_text(json.dumps(spec))
    Path(spec["out"]).unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONPATH")}
    env.update(extra_env)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            argv + [str(spec_path)], env=env, timeout=timeout, capture_output=True, text=True
        )
    except subprocess.TimeoutExpired:
        proc = None
    wall = time.perf_counter() - t0
    out = Path(spec["out"])
    res = json.loads(out.read_text()) if out.exists() else dict(peer=peer, robot=robot)
    res["peer"] = peer
    res["process_wall_s"] = wall
    if proc is None:
        res.setdefault("error", f"process killed after {timeout} s (time cap)")
    elif proc.returncode != 0 and "rows" not in res:
        res["error"] = f"exit {proc.returncode}: " + (
            proc.stderr.strip()[-600:] or "killed, no output (see the README)"
        )
    if proc is not None:
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0 or "error" in res:
            sys.stdout.write(proc.stderr[-3000:])
    check = Path(spec["check_out"])
    if check.exists():
        res["check_file"] = str(check)
    return res


def fmt_time(s) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def table(results, peers, robots, ops, batches) -> str:
    """Markdown: one row per (robot, op, batch), one column per peer: median time per call."""
    by = {(r["peer"], r["robot"]): r for r in results}
    head = "| robot | op | batch | " + " | ".join(peers) + " | Pinocchio per call |"
    lines = [head, "|" + "---|" * (4 + len(peers))]
    for robot in robots:
        for op in ops:
            for n in batches:
                cells = []
                for peer in peers:
                    r = by.get((peer, robot), {})
                    if "error" in r:
                        cells.append("n/a")
                        continue
                    row = next(
                        (x for x in r.get("rows", []) if x["op"] == op and x["batch"] == n), None
                    )
                    if row is None:
                        cells.append("-")
                    elif row.get("first_call_s"):
                        cells.append(f"skipped (1st call {fmt_time(row['first_call_s'])})")
                    elif row.get("status") != "ok":
                        cells.append(row["status"].split(":")[0])
                    else:
                        mark = "" if r.get("agree", {}).get(op, True) else " ✗"
                        cells.append(fmt_time(row["run_s"]) + mark)
                pc = by.get(("pinocchio", robot), {}).get("per_call_s", {}).get(op)
                pin_cell = f"{fmt_time(pc)} (×{n}: {fmt_time(pc * n)})" if pc else "-"
                cols = " | ".join(cells)
                lines.append(f"| {robot} | {op} | {n:g} | {cols} | {pin_cell} |")
    return "\n".join(lines)


def plot(results, peers, robots, ops, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(robots), len(ops), figsize=(3.4 * len(ops), 3.0 * len(robots)), squeeze=False
    )
    by = {(r["peer"], r["robot"]): r for r in results}
    for i, robot in enumerate(robots):
        for j, op in enumerate(ops):
            ax = axes[i][j]
            for peer in peers:
                rows = [
                    x
                    for x in by.get((peer, robot), {}).get("rows", [])
                    if x["op"] == op and x.get("status") == "ok"
                ]
                if rows:
                    n = np.array([x["batch"] for x in rows], float)
                    t = np.array([x["run_s"] for x in rows]) / n
                    style = "-o" if peer.startswith("spatialjax") else "--."
                    color = f"C{peers.index(peer)}"  # the same colour in every panel
                    ax.loglog(n, t * 1e6, style, label=peer, ms=4, color=color)
                pc = by.get((peer, robot), {}).get("per_call_s", {}).get(op)
                if pc:
                    ax.axhline(pc * 1e6, color="grey", lw=0.8, ls=":", label="Pinocchio per call")
            ax.set_title(f"{robot}: {op}", fontsize=9)
            ax.set_xlabel("states per call", fontsize=8)
            if j == 0:
                ax.set_ylabel("µs per state", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, which="both", lw=0.3)
    handles, labels = {}, []
    for row in axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=False):
                if lab not in handles:
                    handles[lab] = h
                    labels.append(lab)
    if labels:
        fig.legend([handles[k] for k in labels], labels, loc="lower center", ncol=len(labels),
                   fontsize=8)  # fmt: skip
    fig.suptitle("time per state vs batch (CPU, float64, medians; lower is better)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", default="panda,talos")
    p.add_argument("--peers", default=",".join(PEERS))
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--batches", default=None, help="default 1,1000,100000 (--quick: 1,10,100)")
    p.add_argument("--quick", action="store_true", help="batches 1,10,100; short timings")
    p.add_argument("--venvs", default="/work/peer-venvs", help="folder of the peers' venvs")
    p.add_argument("--time-cap", type=float, default=3.0, help="seconds of one call, at most")
    p.add_argument(
        "--budget",
        type=float,
        default=100.0,
        help="seconds per peer and robot (compiles included); later rows are skipped "
        "(not applied to spatialjax, the subject, nor to Pinocchio, which compiles nothing)",
    )
    p.add_argument("--process-timeout", type=float, default=480.0)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--max-repeats", type=int, default=200)
    p.add_argument("--out-dir", default="benchmarks/results")
    p.add_argument("--name", default="dynamics_peers_cpu")
    p.add_argument("--work-dir", default="", help="where the URDFs and spec files go")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument(
        "--single-thread",
        action="store_true",
        help="run every JAX peer with frax's XLA_FLAGS (FRAX_XLA_FLAGS), not frax alone",
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="re-run only --peers and replace their entries in the existing results",
    )
    p.add_argument(
        "--from-json",
        default="",
        help="with --update: take the new entries from this results file instead of running",
    )
    args = p.parse_args(argv)
    if args.quick:
        args.min_time, args.max_repeats = 0.02, 20
    default = "1,10,100" if args.quick else "1,1000,100000"
    batches = [int(float(b)) for b in (args.batches or default).split(",")]
    robots, peers, ops = args.robots.split(","), args.peers.split(","), args.ops.split(",")
    out_dir = Path(args.out_dir)
    stem = out_dir / (args.name + ("_quick" if args.quick else ""))
    previous = None
    if args.update:
        previous = json.loads(stem.with_suffix(".json").read_text())
    elif stem.with_suffix(".json").exists() and not args.overwrite:
        raise SystemExit(f"{stem}.json exists; pass --overwrite to replace it")
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="bench_dynamics_"))
    work.mkdir(parents=True, exist_ok=True)
    venvs = Path(args.venvs)
    import pinocchio as pin

    print(
        f"bench_dynamics: float64, CPU ({platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, shared), load average {os.getloadavg()[0]:.1f}; "
        f"batches {batches}; work dir {work}",
        flush=True,
    )
    results, t_start = [], time.perf_counter()
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())["results"]
        robots = []  # nothing to run
    for k, robot in enumerate(robots):
        info = ROBOTS[robot]
        urdf = strip_urdf(robots_dir() / info["file"], work / f"{robot}.urdf", info["fixed"])
        pm = pin_model(dict(urdf=str(urdf), floating=info["floating"]))
        joints = [pm.names[j] for j in range(1 + info["floating"], pm.njoints)]
        base_spec = dict(
            robot=robot,
            urdf=str(urdf),
            floating=info["floating"],
            ee_frame=info["ee_frame"],
            joint_names=joints,
            ee_parent_joint=pm.names[pm.frames[pm.getFrameId(info["ee_frame"])].parentJoint],
            ee_placement=pm.frames[pm.getFrameId(info["ee_frame"])].placement.homogeneous.tolist(),
            nq_pin=pm.nq,
            nv=pm.nv,
            ops=ops,
            batches=batches,
            time_cap_s=args.time_cap,
            budget_s=args.budget,
            min_time=args.min_time,
            max_repeats=args.max_repeats,
        )
        import _peers._common as common  # the same random states as the peers

        Q, V, A, T = common.random_states(base_spec, 4, seed=0)
        check_path = work / f"{robot}_check_states.npz"
        np.savez(check_path, Q=Q, V=V, A=A, T=T)
        base_spec["check_states"] = str(check_path)
        ref = pin_reference(base_spec, Q, V, A, T)
        print(f"\n{robot}: nq={pm.nq} nv={pm.nv} (Pinocchio), end effector {info['ee_frame']}")
        # alternate the order from robot to robot: no peer always runs first
        order = peers if k % 2 == 0 else peers[::-1]
        for peer in order:
            res = run_peer(
                peer, robot, base_spec, work, venvs, args.process_timeout, args.single_thread
            )
            if "check_file" in res:
                got = np.load(res["check_file"])
                res["rel_error"] = {op: rel_error(got[op], ref[op]) for op in ops if op in got}
                res["agree"] = {op: e <= TOL for op, e in res["rel_error"].items()}
                errs = ", ".join(f"{o} {e:.1e}" for o, e in res["rel_error"].items())
                print(f"  {peer}: relative error vs Pinocchio: {errs}", flush=True)
            if "error" in res:
                print(f"  {peer}: {res['error']}", flush=True)
            results.append(res)
    total = time.perf_counter() - t_start
    if previous is not None:  # keep the other peers' entries, in their order
        fresh = {(r["peer"], r["robot"]): r for r in results}
        kept = [r for r in previous["results"] if (r["peer"], r["robot"]) not in fresh]
        results = kept + results
        peers = list(dict.fromkeys([r["peer"] for r in previous["results"]] + peers))
        peers = [p for p in PEERS if p in peers] + [p for p in peers if p not in PEERS]
        robots = list(dict.fromkeys([r["robot"] for r in previous["results"]] + robots))
        robots += [r["robot"] for r in results if r["robot"] not in robots]
        batches = sorted(set(previous["meta"]["batches"]) | set(batches))
        updates = previous["meta"].get("updates", []) + [
            dict(
                peers=args.peers,
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                total_s=total,
            )
        ]
        total += previous["meta"]["total_s"]
    meta = dict(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        "shared with other jobs",
        load_average_end=os.getloadavg()[0],
        dtype="float64",
        device="cpu",
        pinocchio=pin.__version__,
        batches=batches,
        tolerance=TOL,
        time_cap_s=args.time_cap,
        total_s=total,
        args=vars(args),
    )
    if previous is not None:
        meta["updates"] = updates
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = dict(meta=meta, results=results)
    stem.with_suffix(".json").write_text(json.dumps(doc, indent=1))
    txt = table(results, peers, robots, ops, batches)
    notes = []
    for r in results:
        v = r.get("versions", {})
        line = f"- {r['peer']} ({r['robot']}): " + ", ".join(f"{k} {x}" for k, x in v.items())
        if r.get("jax"):
            line += f", jax {r['jax']}"
        if r.get("xla_flags"):
            line += f", XLA_FLAGS={r['xla_flags']!r}"
        if r.get("trivial_jit_s"):
            line += f"; jitted q + 1: {fmt_time(r['trivial_jit_s'])}"
        if r.get("rel_error"):
            line += "; rel. error vs Pinocchio " + ", ".join(
                f"{o} {e:.0e}" for o, e in r["rel_error"].items()
            )
        if r.get("error"):
            line += f"; ERROR: {r['error']}"
        for n in r.get("notes", []):
            line += f"; {n}"
        notes.append(line)
    header = (
        f"CPU, float64, medians, compile time apart; {meta['machine']}; {meta['date']}; "
        f"total {total:.0f} s\n\n"
    )
    stem.with_suffix(".txt").write_text(header + txt + "\n\n" + "\n".join(notes) + "\n")
    plot(results, peers, robots, ops, stem.with_suffix(".png"))
    print("\n" + txt + "\n\n" + "\n".join(notes))
    print(f"\nwrote {stem}.json/.txt/.png ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
