"""Every figure a GPU user asks for, in one run of at most 8 minutes on one H100/H200.

Run on the GPU machine from a checkout (``pip install -e '.[bench]'``, jax with CUDA):

    python benchmarks/gpu.py                       # benchmarks/results/gpu_<device>.{json,png}
    python benchmarks/gpu.py --smoke --out /tmp/x  # the same code on CPU, tiny sizes, < 1 minute

Sections, each with a share of ``--budget`` seconds (default 450: the whole run
stays under 8 minutes with start-up); a measurement that would start after its
section's share is spent is skipped with a note, and the JSON is rewritten after
every row, so a run killed at any point leaves the figures measured so far:

1. ``primitives``: ``Plx @ Plx``, ``apply_motion``, ``apply_force``,
   ``RigidBodyInertia.transform`` and ``pseudo_inertia_sandwich`` at 10⁶ and 10⁷
   items (float32; 10⁶ also float64) against the device's own copy roofline
   (``benchmarks/_harness``: a donated in-place ``x * 1`` of the same bytes;
   ``op/copy`` 1.0 is the memory limit).
2. ``dynamics``: forward kinematics, RNEA, the mass matrix and forward dynamics
   of the Panda (nv = 7) and Talos (a humanoid, nv = 38) from example-robot-data
   at 1 to 10⁶ states (float32), compile time apart, medians of interleaved calls;
3. ``pinocchio``: the same four operations as a Pinocchio loop on this machine's
   CPU (per-call time on a few hundred states, times the batch): the speed-up of
   the GPU batch over the CPU loop (what BARD reports for forward kinematics);
4. ``identification``: ``identification.fit`` of 10² to 10⁴ bodies at once
   (``benchmarks/bench_identification.py``'s problem: 32 samples per body,
   float64), compile time apart;
5. ``agreement``: float32 results against float64 on the same states and model
   numbers (the float32 ones, widened), both on the device: per state
   ``‖x₃₂ − x₆₄‖ / ‖x₆₄‖`` (median and largest over 4096 states) of forward dynamics
   by each route, the mass matrix and RNEA of the Panda and Talos (a float32 product
   rounded to TensorFloat-32 shows here; ``smallmat.FULL``).

Sizes whose inputs and outputs (with headroom) do not fit in the device's free
memory are skipped with a note. A missing Pinocchio or example-robot-data skips
its rows with a note. The JSON records the device, jax's version and the date.
"""

from __future__ import annotations

import argparse
import os
import sys

_SMOKE = "--smoke" in sys.argv
if _SMOKE:
    os.environ["JAX_PLATFORMS"] = "cpu"  # the smoke run is the same code on the CPU

import dataclasses  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _harness import core  # noqa: E402
from _harness.ops import OPS  # noqa: E402
from _harness.suite import Settings, _run_op  # noqa: E402

import spatialjax  # noqa: E402
import spatialjax.multibody as mb  # noqa: E402

FULL = dict(
    prim_ops=("plx_compose", "apply_motion", "apply_force", "inertia_transform",
              "pseudo_inertia_sandwich"),
    prim_sizes=((10**6, "float32"), (10**7, "float32"), (10**6, "float64")),
    robots=dict(panda=("fk", "rnea", "mass", "fd"), talos=("fk", "rnea", "mass", "fd")),
    batches=dict(panda=(1, 100, 4096, 10**5, 10**6), talos=(1, 100, 4096, 10**5, 10**6)),
    dyn_dtype="float32",
    pin_states=300,
    fit_bodies=(100, 1000, 10000),
    agree_states=4096,
    min_time=0.2,
)  # fmt: skip
SMOKE = dict(
    prim_ops=("inertia_transform",),
    prim_sizes=((1000, "float32"),),
    robots=dict(panda=("fk", "rnea", "mass", "fd"), talos=("fk",)),
    batches=dict(panda=(1,), talos=(4,)),
    dyn_dtype="float32",
    pin_states=20,
    fit_bodies=(2,),
    agree_states=8,
    min_time=0.01,
)
#: share of the budget per section (what is left of a section's share is not carried over)
SHARES = dict(primitives=0.18, dynamics=0.44, pinocchio=0.08, identification=0.18, agreement=0.12)
ROBOT_FILES = dict(
    panda=("panda_description/urdf/panda.urdf", False,
           {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    talos=("talos_data/robots/talos_reduced.urdf", True, None),
)  # fmt: skip


class Run:
    """The results document, rewritten to disk after every row."""

    def __init__(self, path: Path, meta: dict):
        self.path = path
        self.doc = dict(meta=meta, primitives=[], dynamics=[], pinocchio=[], identification=[],
                        agreement=[], notes=[])  # fmt: skip
        self.save()

    def add(self, section: str, row: dict) -> None:
        self.doc[section].append(row)
        self.save()

    def note(self, text: str) -> None:
        print("  note:", text, flush=True)
        self.doc["notes"].append(text)
        self.save()

    def save(self) -> None:
        self.doc["meta"]["updated"] = _now()
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, default=_json_default))
        tmp.replace(self.path)


def _json_default(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Clock:
    """Per-section deadlines from the total budget."""

    def __init__(self, budget: float):
        self.budget = budget
        self.deadline = time.perf_counter()

    def start(self, section: str) -> None:
        self.deadline = time.perf_counter() + SHARES[section] * self.budget

    def left(self) -> float:
        return self.deadline - time.perf_counter()


def _jaxlib_version() -> str:
    try:
        import jaxlib

        return jaxlib.__version__
    except (ImportError, AttributeError):
        return ""


def _slug(device) -> str:
    kind = getattr(device, "device_kind", "") or device.platform
    return re.sub(r"[^a-z0-9]+", "_", kind.lower()).strip("_") or device.platform


# ------------------------------------------------------------------ 1. primitives
def primitives(run: Run, cfg: dict, clock: Clock, device) -> None:
    clock.start("primitives")
    settings = Settings(sizes=[], dtypes=[], ops=[], fk_lengths=[], fk_batches=[],
                        baselines=set(), min_time=cfg["min_time"], max_repeats=50,
                        log=lambda s: None)  # fmt: skip
    for n, dtype in cfg["prim_sizes"]:
        for name in cfg["prim_ops"]:
            if clock.left() <= 0:
                spent = "skipped: the section's time budget was spent"
                run.add("primitives", dict(op=name, n=n, dtype=dtype, status=spent))
                continue
            try:
                rec = _run_op(OPS[name], n, np.dtype(dtype), settings, device, {})
            except Exception as e:  # noqa: BLE001 - reported, the run goes on
                rec = dict(op=name, n=n, dtype=dtype, status=f"failed: {type(e).__name__}: {e}")
                traceback.print_exc()
            run.add("primitives", rec)
            if rec.get("status") == "ok":
                print(f"  {name:24s} {dtype} n={n:>9,d}: {rec['time_s'] * 1e3:9.3f} ms, "
                      f"op/copy {rec['copy_ratio']:.2f}", flush=True)  # fmt: skip
            else:
                print(f"  {name:24s} {dtype} n={n:>9,d}: {rec['status']}", flush=True)


# ------------------------------------------------------------------ 2. dynamics
#: ``--robots``: a folder laid out as example-robot-data's ``robots/`` (for a machine without it)
ROBOTS_DIR: Path | None = None


def robots_dir() -> Path | None:
    import importlib.metadata as md

    if ROBOTS_DIR is not None:
        return ROBOTS_DIR

    try:
        dist = md.distribution("example-robot-data")
    except md.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            return Path(dist.locate_file(f)).parent / "robots"
    return None


def load_robot(name: str, dtype: str, work: Path):
    """``(model, urdf path)`` or ``None`` without example-robot-data."""
    root = robots_dir()
    if root is None:
        return None
    rel, floating, locked = ROBOT_FILES[name]
    path = root / rel
    m = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype=dtype)
    z = jnp.zeros_like(m.damping)
    return dataclasses.replace(m, damping=z, armature=z), path


def random_states(m, n: int, dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, (n, m.nq))
    if m.floating_base:
        quat = rng.standard_normal((n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    v, a = rng.standard_normal((n, m.nv)), rng.standard_normal((n, m.nv))
    return tuple(np.asarray(x, dtype) for x in (q, v, a))


def dyn_fn(m, op: str):
    if op == "fk":
        return lambda q, v, a: mb.forward_kinematics(m, q).poses.r
    if op == "rnea":
        return lambda q, v, a: mb.rnea(m, q, v, a)
    if op == "mass":
        return lambda q, v, a: mb.mass_matrix(m, q)
    if op.startswith("fd"):  # "fd": method="auto"; "fd_aba", "fd_crba": that route
        method = op[3:] or "auto"
        return lambda q, v, a: mb.forward_dynamics(m, q, v, a, method=method)
    raise KeyError(op)


def _bytes_per_state(m, dtype) -> int:
    """Inputs, outputs and sweep intermediates of one state (a generous estimate)."""
    item = np.dtype(dtype).itemsize
    return item * (m.nq + 2 * m.nv + m.nv * m.nv + 40 * m.nbodies + 12 * m.nbodies)


def dynamics(run: Run, cfg: dict, clock: Clock, device, work: Path) -> dict:
    clock.start("dynamics")
    dtype = cfg["dyn_dtype"]
    times = {}
    for robot, ops in cfg["robots"].items():
        loaded = load_robot(robot, dtype, work)
        if loaded is None:
            run.note(f"dynamics {robot}: skipped (example-robot-data is not installed)")
            continue
        m, _ = loaded
        for n in cfg["batches"][robot]:
            rows = [dict(robot=robot, op=op, batch=n, dtype=dtype, nv=m.nv) for op in ops]
            need = 4 * n * _bytes_per_state(m, dtype)
            free = core.available_bytes(device)
            if need > 0.6 * free:
                for r in rows:
                    r["status"] = (f"skipped: needs ~{need / 2**30:.1f} GiB, "
                                   f"{free / 2**30:.1f} GiB free")  # fmt: skip
                    run.add("dynamics", r)
                continue
            if clock.left() <= 0:
                for r in rows:
                    r["status"] = "skipped: the section's time budget was spent"
                    run.add("dynamics", r)
                continue
            q, v, a = random_states(m, n, dtype)
            if n == 1:
                q, v, a = q[0], v[0], a[0]
            args = tuple(jax.device_put(x, device) for x in (q, v, a))
            calls, ok = [], []
            for r in rows:
                try:
                    exe, r["compile_s"] = core.compile_jitted(dyn_fn(m, r["op"]), args)
                    calls.append((exe, args))
                    ok.append(r)
                except Exception as e:  # noqa: BLE001
                    r["status"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
                    run.add("dynamics", r)
            if calls:
                ts = core.time_interleaved(calls, min_time=cfg["min_time"], max_repeats=100)
                for r, t in zip(ok, ts, strict=True):
                    r.update(status="ok", time_s=t.median_s, repeats=t.repeats,
                             per_state_s=t.median_s / n)  # fmt: skip
                    times[(robot, r["op"], n)] = t.median_s
                    run.add("dynamics", r)
                    print(f"  {robot:6s} {r['op']:5s} batch {n:>8,d}: {t.median_s * 1e3:10.4f} ms "
                          f"(compile {r['compile_s']:.1f} s)", flush=True)  # fmt: skip
    return times


# ------------------------------------------------------------------ 3. pinocchio loop
def pinocchio(run: Run, cfg: dict, clock: Clock, work: Path, times: dict) -> None:
    clock.start("pinocchio")
    try:
        import pinocchio as pin
    except ImportError:
        run.note("pinocchio: skipped (pin is not installed): no CPU speed-up figures")
        return
    cpu = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    for robot in cfg["robots"]:
        loaded = load_robot(robot, "float64", work)
        if loaded is None:
            run.note(f"pinocchio {robot}: skipped (example-robot-data is not installed)")
            continue
        if clock.left() <= 0:
            run.note(f"pinocchio {robot}: skipped (the section's time budget was spent)")
            continue
        m, path = loaded
        rel, floating, locked = ROBOT_FILES[robot]
        pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
              else pin.buildModelFromUrdf(str(path)))  # fmt: skip
        if locked:
            pm = pin.buildReducedModel(pm, [pm.getJointId(j) for j in locked], pin.neutral(pm))
        pd = pm.createData()
        q, v, a = random_states(m, cfg["pin_states"], np.float64, seed=1)
        qp = np.asarray(m.q_to_pinocchio(jnp.asarray(q)))
        vp, ap = np.asarray(m.v_to_pinocchio(jnp.asarray(v))), np.asarray(
            m.v_to_pinocchio(jnp.asarray(a)))  # fmt: skip
        calls = dict(
            fk=(pin.forwardKinematics, (qp,)),
            rnea=(pin.rnea, (qp, vp, ap)),
            mass=(pin.crba, (qp,)),
            fd=(pin.aba, (qp, vp, ap)),
        )
        for op, (f, xs) in calls.items():
            if op not in cfg["robots"][robot]:
                continue
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                for row_args in zip(*xs, strict=True):
                    f(pm, pd, *row_args)
                best = min(best, (time.perf_counter() - t0) / len(qp))
            row = dict(robot=robot, op=op, per_call_s=best, cpu=cpu, pinocchio=pin.__version__,
                       speedup={})  # fmt: skip
            for (r, o, n), t in times.items():
                if r == robot and o == op:
                    row["speedup"][str(n)] = best * n / t
            run.add("pinocchio", row)
            sp = ", ".join(f"{int(n):,d}: {x:.3g}x" for n, x in row["speedup"].items())
            print(
                f"  {robot:6s} {op:5s} Pinocchio {best * 1e6:.2f} µs/call; speed-up {sp}",
                flush=True,
            )


# ------------------------------------------------------------------ 4. identification
def identification(run: Run, cfg: dict, clock: Clock) -> None:
    clock.start("identification")
    try:
        from bench_identification import GAMMA, make_problem

        from spatialjax.identification import fit
    except ImportError as e:
        run.note(f"identification: skipped ({e})")
        return
    for nb in cfg["fit_bodies"]:
        row = dict(bodies=nb, samples_per_body=32, dtype="float64")
        if clock.left() <= 0:
            row["status"] = "skipped: the section's time budget was spent"
            run.add("identification", row)
            continue
        try:
            P = make_problem(nb, seed=0)
            Y = jnp.asarray(P["Y"])[None]
            f, w, g = jnp.asarray(P["f"]), jnp.asarray(P["w"]), jnp.asarray(GAMMA)

            def go(Y, f, w, prior, g):
                return fit(Y, f, weights=w, prior=prior, gamma=g)

            exe, row["compile_s"] = core.compile_jitted(go, (Y, f, w, P["prior"], g))
            ts = []
            for _ in range(3):
                t0 = time.perf_counter()
                res = jax.block_until_ready(exe(Y, f, w, P["prior"], g))
                ts.append(time.perf_counter() - t0)
            t = float(np.median(ts))
            row.update(status="ok", time_s=t, per_body_s=t / nb,
                       converged=float(np.mean(np.asarray(res.converged))))  # fmt: skip
            print(f"  fit {nb:>6,d} bodies: {t:.3f} s (compile {row['compile_s']:.1f} s)",
                  flush=True)  # fmt: skip
        except Exception as e:  # noqa: BLE001
            row["status"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
            traceback.print_exc()
        run.add("identification", row)


# ------------------------------------------------------------------ 5. float32 agreement
AGREE_OPS = ("fd_aba", "fd_crba", "mass", "rnea")  # dyn_fn's names


def _rows(m, op: str, states, dtype, device) -> np.ndarray:
    """``dyn_fn(m, op)`` on ``states`` as ``dtype`` on ``device``: a float64 row per state."""
    xs = tuple(jax.device_put(np.asarray(x, dtype), device) for x in states)
    out = np.asarray(jax.jit(dyn_fn(m, op))(*xs), np.float64)
    return out.reshape(len(states[0]), -1)


def agreement(run: Run, cfg: dict, clock: Clock, device, work: Path) -> None:
    clock.start("agreement")
    n = cfg["agree_states"]
    for robot in cfg["robots"]:
        if clock.left() <= 0:
            run.note(f"agreement {robot}: skipped (the section's time budget was spent)")
            continue
        loaded = load_robot(robot, "float32", work)
        if loaded is None:
            run.note(f"agreement {robot}: skipped (example-robot-data is not installed)")
            continue
        m32 = loaded[0]
        m64 = m32.astype("float64")  # the same (float32) numbers: only the arithmetic differs
        x32 = random_states(m32, n, np.float32, seed=2)
        for op in AGREE_OPS:
            row = dict(robot=robot, op=op, states=n)
            try:
                lo = _rows(m32, op, x32, np.float32, device)
                hi = _rows(m64, op, x32, np.float64, device)
                err = np.linalg.norm(lo - hi, axis=-1) / np.linalg.norm(hi, axis=-1)
                bad = int(np.sum(~np.isfinite(err)))
                ok = err[np.isfinite(err)]
                row.update(status="ok", median_rel=float(np.median(ok)), max_rel=float(ok.max()),
                           nonfinite=bad)  # fmt: skip
                print(f"  {robot:6s} {op:8s} float32/float64: median {row['median_rel']:.1e}, "
                      f"max {row['max_rel']:.1e}, non-finite {bad}", flush=True)  # fmt: skip
            except Exception as e:  # noqa: BLE001
                row["status"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
                traceback.print_exc()
            run.add("agreement", row)


# ------------------------------------------------------------------ plot
def plot(doc: dict, path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
    ax = axes[0]
    prim = [r for r in doc["primitives"] if r.get("status") == "ok"]
    labels = [f"{r['op']}\n{r['n']:.0e} {r['dtype'][5:]}" for r in prim]
    ax.bar(range(len(prim)), [r["copy_ratio"] for r in prim])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(range(len(prim)), labels, rotation=90, fontsize=6)
    ax.set_ylabel("time / copy of the same bytes")
    ax.set_title("primitives vs the copy roofline", fontsize=9)
    ax = axes[1]
    for k, robot in enumerate(sorted({r["robot"] for r in doc["dynamics"]})):
        for j, op in enumerate(("fk", "rnea", "mass", "fd")):
            rows = [
                r
                for r in doc["dynamics"]
                if (r["robot"], r["op"], r.get("status")) == (robot, op, "ok")
            ]
            if rows:
                n = np.array([r["batch"] for r in rows], float)
                t = np.array([r["per_state_s"] for r in rows])
                ax.loglog(n, t * 1e6, ["-o", "--s"][k % 2], color=f"C{j}", ms=3,
                          label=f"{robot} {op}")  # fmt: skip
    ax.set_xlabel("states per call")
    ax.set_ylabel("µs per state")
    ax.set_title("dynamics (float32)", fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6, ncol=2)
    ax = axes[2]
    for k, row in enumerate(doc["pinocchio"]):
        if row["speedup"]:
            n = np.array([float(x) for x in row["speedup"]])
            s = np.array(list(row["speedup"].values()))
            ax.loglog(n, s, ["-o", "--s"][k // 4 % 2], color=f"C{k % 4}", ms=3,
                      label=f"{row['robot']} {row['op']}")  # fmt: skip
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("states per call")
    ax.set_ylabel("Pinocchio loop time / ours")
    ax.set_title("speed-up over a Pinocchio loop on the host CPU", fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6, ncol=2)
    ax = axes[3]
    fits = [r for r in doc["identification"] if r.get("status") == "ok"]
    if fits:
        ax.loglog([r["bodies"] for r in fits], [r["time_s"] for r in fits], "-o")
    ax.set_xlabel("bodies fitted at once")
    ax.set_ylabel("s per fit")
    ax.set_title("identification.fit (float64)", fontsize=9)
    meta = doc["meta"]
    fig.suptitle(f"{meta['device']}, jax {meta['jax']}, {meta['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--smoke", action="store_true", help="CPU, tiny sizes, under a minute")
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument("--budget", type=float, default=None,
                   help="seconds for all sections (default 450; --smoke: no limit)")  # fmt: skip
    p.add_argument("--sections",
                   default="primitives,dynamics,pinocchio,identification,agreement")  # fmt: skip
    p.add_argument("--robots", default=None,
                   help="folder laid out as example-robot-data's robots/ (default: the installed "
                        "package's)")  # fmt: skip
    a = p.parse_args(argv)
    if a.robots is not None:
        global ROBOTS_DIR
        ROBOTS_DIR = Path(a.robots).resolve()
        missing = [r for r, (rel, _, _) in ROBOT_FILES.items() if not (ROBOTS_DIR / rel).is_file()]
        if missing:
            p.error(f"--robots {a.robots}: no URDF for {', '.join(missing)} "
                    f"(expected {', '.join(ROBOT_FILES[r][0] for r in missing)})")  # fmt: skip
    cfg = SMOKE if a.smoke else FULL
    budget = a.budget if a.budget is not None else (1e4 if a.smoke else 450.0)
    t_start = time.perf_counter()
    if not a.smoke:
        core.keep_host_buffers()
    device = core.bench_device()
    if not a.smoke and device.platform != "gpu":
        print(f"gpu.py: the default device is {core.describe_device(device)}, not a GPU; "
              "run with --smoke for the CPU check", flush=True)  # fmt: skip
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"gpu_{_slug(device)}" + ("_smoke" if a.smoke else "")
    meta = dict(
        device=core.describe_device(device),
        device_kind=getattr(device, "device_kind", ""),
        platform=device.platform,
        jax=jax.__version__,
        jaxlib=_jaxlib_version(),
        spatialjax=spatialjax.__version__,
        date=_now(),
        host=f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        smoke=a.smoke,
        budget_s=budget,
        config={k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()},
    )
    run = Run(out / f"{stem}.json", meta)
    print(f"gpu.py: {meta['device']}, jax {meta['jax']}; writing {run.path}", flush=True)
    clock = Clock(budget)
    work = Path(tempfile.mkdtemp(prefix="gpu_bench_"))
    sections = a.sections.split(",")
    times: dict = {}
    if "primitives" in sections:
        print("primitives", flush=True)
        primitives(run, cfg, clock, device)
    if "dynamics" in sections:
        print("dynamics", flush=True)
        times = dynamics(run, cfg, clock, device, work)
    if "pinocchio" in sections:
        print("pinocchio loop (host CPU)", flush=True)
        pinocchio(run, cfg, clock, work, times)
    if "identification" in sections:
        print("identification", flush=True)
        identification(run, cfg, clock)
    if "agreement" in sections:
        print("float32 against float64", flush=True)
        agreement(run, cfg, clock, device, work)
    run.doc["meta"]["total_s"] = time.perf_counter() - t_start
    run.save()
    png = plot(run.doc, out / f"{stem}.png")
    print(f"wrote {run.path}" + (f" and {png}" if png else " (no matplotlib: no plot)")
          + f" in {run.doc['meta']['total_s']:.0f} s", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
