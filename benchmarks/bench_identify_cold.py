"""``spatialjax identify`` in a fresh process, cold and warm, against the plain pipeline.

A simulated log of a robot from example-robot-data (``--robot``: UR5, six joints, or ANYmal C
with its trunk fixed, twelve; ``--samples``
at ``--rate``, default 37,500 samples at 5 kHz) is identified in FRESH
subprocesses, alternating, ``--repeats`` rounds of:

- **cold**: ``python -m spatialjax identify URDF LOG --holdout 0.3 --no-cache``;
- **warm**: the same with ``--cache-dir DIR`` (a persistent compilation cache filled by
  one run before the rounds);
- **plain**: the plain way of doing the same job in a fresh process: load the log,
  zero-phase Butterworth low-pass (``scipy.signal.sosfiltfilt``, the cut-off and
  decimation ``identify`` chose), central differences, decimation, Pinocchio's
  ``computeJointTorqueRegressor`` per sample plus per-joint viscous, Coulomb and offset
  columns, NumPy least squares, the held-out part predicted.

Every process is timed from its start to its exit (interpreter start and imports
included), with Python's bytecode cache written and read as on a user's machine (this
project's machines set ``PYTHONDONTWRITEBYTECODE``, which the timed processes drop).
With ``--baseline TREE`` another source tree (the code before a change) is timed in the
same rounds, cold and warm. Reported: medians, the ratio to plain of each alternating
round (what counts on a loaded machine) and their medians, the load average before and
after, and the stage times ``identify`` wrote into its report.

Usage::

    python benchmarks/bench_identify_cold.py --out benchmarks/results --name identify_cold_cpu
    python benchmarks/bench_identify_cold.py --samples 5000,50000 --repeats 3
    python benchmarks/bench_identify_cold.py --tree . --baseline /path/to/main/checkout
    python benchmarks/bench_identify_cold.py --sequence --samples 37500,50000,100000

``--sequence``: one log of each length, identified one after the other with one
compilation cache that starts empty (what a user trying the tool on a few logs
meets), the tree and the baseline alternating, ``--repeats`` rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# URDF, torque noise N·m. ANYmal C with its trunk fixed: 12 joints, a quadruped on a stand
ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", 1.0),
    "anymal": ("anymal_c_simple_description/urdf/anymal.urdf", 0.5),
}
FRICTION = (0.2, 0.5, 0.1)  # viscous, Coulomb, offset per joint


def robots_dir() -> Path:
    import importlib.metadata

    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            return Path(dist.locate_file(f)).parent / "robots"
    raise SystemExit("example-robot-data not found (pip install example-robot-data)")


def make_log(urdf: Path, path: Path, samples: int, rate: float, noise: float) -> None:
    """A simulated log of ``samples`` at ``rate`` Hz (perturbed bodies, friction, noise)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import numpy as np

    import spatialjax.identification as sid
    import spatialjax.multibody as mb

    model = mb.Model.from_urdf(urdf, dtype="float64")
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    t, q, dq, ddq = sid.excitation_trajectory(
        model.nv, duration=samples / rate, rate=rate, key=k1, base_frequency=0.2
    )
    true = sid.perturb_inertia(model.inertia, 0.1, k2)
    fr = np.tile(np.asarray(FRICTION), (model.nv, 1))
    log = sid.simulate_log(model, t, q, dq, ddq, key=k3, inertia=true, friction=fr,
                           torque_noise=noise, encoder_resolution=2 * np.pi / 2**18)  # fmt: skip
    log.save(path, overwrite=True)


def plain(urdf: str, log_path: str, holdout: float, lowpass: float, decimate: int) -> None:
    """The plain pipeline (Pinocchio regressor + NumPy least squares); prints its error."""
    import numpy as np
    import pinocchio as pin
    from scipy import signal

    d = np.load(log_path)
    t, q_raw, tau_raw = d["t"], d["q"], d["tau"]
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    n = model.nv
    rate = 1.0 / float(np.median(np.diff(t)))
    sos = signal.butter(4, lowpass, fs=rate, output="sos")
    edge = int(np.ceil(rate / lowpass))  # one period of the cut-off: the filter's edge effects
    n_hold = int(round(len(t) * holdout))

    def part(sl):
        tt = t[sl]
        q = signal.sosfiltfilt(sos, q_raw[sl], axis=0)
        tau = signal.sosfiltfilt(sos, tau_raw[sl], axis=0)
        dq = np.gradient(q, tt, axis=0)
        ddq = np.gradient(dq, tt, axis=0)
        keep = slice(edge, len(tt) - edge, decimate)
        q, dq, ddq, tau = q[keep], dq[keep], ddq[keep], tau[keep]
        rows = []
        for k in range(len(q)):
            Y = pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
            F = np.hstack([np.diag(dq[k]), np.diag(np.sign(dq[k])), np.eye(n)])
            rows.append(np.hstack([Y, F]))
        return np.concatenate(rows), tau.reshape(-1)

    A, b = part(slice(0, len(t) - n_hold))
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    Ah, bh = part(slice(len(t) - n_hold, len(t)))
    err = np.linalg.norm(Ah @ x - bh) / np.linalg.norm(bh)
    print(f"plain: {A.shape[0] // n} training samples, held-out relative error {err:.4f}")


def _env(tree) -> dict:
    """The environment of the timed processes: spatialjax from source tree ``tree`` (None: as
    installed), and bytecode cached as a user's Python caches it. Where
    ``PYTHONDONTWRITEBYTECODE`` is set (this project's machines) every run would compile
    spatialjax's sources again (0.1-0.15 s), which an installed package or a second run never
    does; the cache-filling run writes the bytecode of each tree."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env if tree is None else {**env, "PYTHONPATH": str(tree)}


def _timed(argv, env: dict) -> tuple[float, str]:
    # run from the system's temporary folder: `python -m` puts the working folder first
    # on sys.path, which would import a checkout there instead of PYTHONPATH's tree
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stdout}\n{r.stderr}")
    return dt, r.stdout


def _identify_argv(urdf, log, report, cache) -> list[str]:
    argv = [sys.executable, "-m", "spatialjax", "identify", str(urdf), str(log),
            "--holdout", "0.3", "--report", str(report), "--force"]  # fmt: skip
    return argv + (["--cache-dir", str(cache)] if cache else ["--no-cache"])


def _case(urdf: Path, samples: int, args, tmp: Path, say) -> dict:
    """The alternating rounds on one log length."""
    log = tmp / f"log_{samples}.npz"
    make_log(urdf, log, samples, args.rate, ROBOTS[args.robot][1])
    cache = {"": tmp / f"cache_{samples}", "_base": tmp / f"cache_base_{samples}"}
    report = tmp / "report.json"
    trees = {"": _env(args.tree)} | ({"_base": _env(args.baseline)} if args.baseline else {})
    for tag, env in trees.items():  # fills the caches
        first, _ = _timed(_identify_argv(urdf, log, report, cache[tag]), env)
    rep = json.loads(report.read_text())
    lowpass, K = rep["filter"]["lowpass"], rep["filter"]["decimate"]
    plain_argv = [sys.executable, __file__, "--plain", str(urdf), str(log), "--holdout", "0.3",
                  "--lowpass", str(lowpass), "--decimate", str(K)]  # fmt: skip
    say(f"\n## {args.robot}, {samples} samples at {args.rate:g} Hz; identify chose low-pass "
        f"{lowpass:g} Hz, decimate {K}; cache-filling run {first:.1f} s")  # fmt: skip
    kinds = [k + tag for tag in trees for k in ("cold", "warm")]
    runs: dict[str, list[float]] = {k: [] for k in kinds + ["plain"]}
    stages: dict[str, list[dict]] = {k: [] for k in kinds}
    for r in range(args.repeats):
        for kind in kinds + ["plain"]:
            if kind == "plain":
                dt, out = _timed(plain_argv, _env(None))
            else:
                tag = kind.removeprefix("cold").removeprefix("warm")
                c = cache[tag] if kind.startswith("warm") else None
                dt, _ = _timed(_identify_argv(urdf, log, report, c), trees[tag])
                stages[kind].append(json.loads(report.read_text())["times"])
            runs[kind].append(dt)
        pl = runs["plain"][-1]
        say(f"  round {r}: " + ", ".join(f"{k} {runs[k][-1]:.2f} s ({runs[k][-1] / pl:.2f}x)"
                                         for k in kinds)
            + f", plain {pl:.2f} s (load {os.getloadavg()[0]:.1f})")  # fmt: skip
    ratio = {k: [a / b for a, b in zip(runs[k], runs["plain"], strict=True)] for k in kinds}
    med = {k: statistics.median(v) for k, v in runs.items()}
    say(
        "  median: " + ", ".join(f"{k} {v:.2f} s" for k, v in med.items()) + "; median ratio to "
        "plain: " + ", ".join(f"{k} {statistics.median(ratio[k]):.2f}x" for k in kinds)
    )
    for kind in kinds:
        st = stages[kind][len(stages[kind]) // 2]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in st["stages_s"].items())
        say(f"  {kind} stages (s, the middle round): {parts}; fit compile {st['compile_s']:.2f}, "
            f"solve {st['solve_s']:.3f}")  # fmt: skip
    return {"samples": samples, "rate": args.rate, "lowpass": lowpass, "decimate": K,
            "times_s": runs, "ratio": ratio, "median_s": med,
            "median_ratio": {k: statistics.median(v) for k, v in ratio.items()},
            "stages": stages, "plain_output": out.strip()}  # fmt: skip


def _sequence(urdf: Path, args, tmp: Path, say) -> dict:
    """``--sequence``: the logs of ``--samples`` in order, one cache per run, starting empty."""
    lengths = [int(x) for x in args.samples.split(",")]
    logs = [tmp / f"log_{n}.npz" for n in lengths]
    for n, log in zip(lengths, logs, strict=True):
        make_log(urdf, log, n, args.rate, ROBOTS[args.robot][1])
    trees = {"": _env(args.tree)} | ({"_base": _env(args.baseline)} if args.baseline else {})
    say(f"\n## {args.robot}: logs of {', '.join(map(str, lengths))} samples in a row, one "
        "compilation cache starting empty")  # fmt: skip
    runs: dict[str, list[list[float]]] = {tag: [] for tag in trees}
    for r in range(args.repeats):
        for tag, env in trees.items():
            cache = tmp / f"seq_{r}{tag}"
            times = [_timed(_identify_argv(urdf, log, tmp / "report.json", cache), env)[0]
                     for log in logs]  # fmt: skip
            runs[tag].append(times)
            say(
                f"  round {r}{' base' if tag else ''}: "
                + ", ".join(f"{t:.2f} s" for t in times)
                + f" (total {sum(times):.2f} s)"
            )
    med = {tag: [statistics.median(x[i] for x in v) for i in range(len(logs))]
           for tag, v in runs.items()}  # fmt: skip
    for tag, m in med.items():
        say(f"  median{' base' if tag else ''}: " + ", ".join(f"{t:.2f} s" for t in m)
            + f" (total {sum(m):.2f} s)")  # fmt: skip
    return {"sequence": lengths, "times_s": runs, "median_s": med}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--robot", default="ur5", choices=sorted(ROBOTS))
    p.add_argument("--samples", default="37500", help="comma list of log lengths")
    p.add_argument("--rate", type=float, default=5000.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", help="folder for NAME.json and NAME.txt")
    p.add_argument("--name", default="identify_cold_cpu")
    p.add_argument("--tree", help="source tree of spatialjax to time (default: as imported)")
    p.add_argument("--baseline", help="a second source tree (e.g. a checkout of main), timed "
                   "alongside in every round as cold_base, warm_base")  # fmt: skip
    p.add_argument(
        "--sequence", action="store_true", help="one log of each --samples length in a row"
    )
    p.add_argument("--plain", nargs=2, metavar=("URDF", "LOG"), help=argparse.SUPPRESS)
    p.add_argument("--holdout", type=float, default=0.3, help=argparse.SUPPRESS)
    p.add_argument("--lowpass", type=float, help=argparse.SUPPRESS)
    p.add_argument("--decimate", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.plain:
        plain(*args.plain, args.holdout, args.lowpass, args.decimate)
        return 0
    lines: list[str] = []

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    urdf = robots_dir() / ROBOTS[args.robot][0]
    load0 = os.getloadavg()
    say(f"# identify in a fresh process: cold, warm cache, plain pipeline; {os.cpu_count()} "
        f"CPUs, load average {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench_identify_cold_") as d:
        if args.sequence:
            cases = [_sequence(urdf, args, Path(d), say)]
        else:
            cases = [_case(urdf, int(s), args, Path(d), say) for s in args.samples.split(",")]
    load1 = os.getloadavg()
    say(f"load average at the end {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")
    if args.out:
        out = Path(args.out)
        doc = {"robot": args.robot, "load_before": load0, "load_after": load1, "cases": cases}
        (out / f"{args.name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        (out / f"{args.name}.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
