"""``spatialjax excite`` end to end, before and after, and the design against random ones.

For each robot (example-robot-data URDFs: the Panda, whose ``<mimic>`` fingers the command
locks at 0, and the UR5) the command runs with its defaults (64 starts, 5 harmonics of 0.1 Hz,
400 Adam steps, criterion ``condition_snr``, output at 1 kHz) on a 20 s trajectory as a fresh
process, ``python -m spatialjax excite URDF --duration 20 --out F.csv --report F.json``, timed
from the process's start to its exit (wall clock, and its CPU time), with the load average
before and after. ``--before DIR`` runs the same command on another source tree as well (the
code before a change, e.g. ``git archive <commit> | tar -x -C DIR``), alternating with this one
``--repeat`` times, so that both see the same load.

From each run's report: its compile and optimisation times, the criterion and the condition
number. The designed trajectory is then scored as ``bench_excitation.py`` scores it:
Pinocchio's ``computeJointTorqueRegressor`` plus the friction columns, at 100 Hz, column-scaled,
on Gautier's base columns (QR without pivoting of 4 random trajectories), against
``--random`` random trajectories of the same settings (key 1, at rest at both ends, scaled into
the limits; the same set for every run): the median's ratio to the design.

Usage: ``python benchmarks/bench_excitation_speed.py [--before DIR] [--repeat K] [--json F]
[--txt F]``; ``--quick`` (tiny sizes) checks that the script runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import bench_excitation as B  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402
from spatialjax.identification.design import excitation as _design  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def excite(tree: Path, urdf: Path, extra: list[str], folder: Path) -> dict:
    """One ``spatialjax excite`` process on source tree ``tree``: times, load, its report."""
    out, rep = folder / "t.csv", folder / "r.json"
    argv = [sys.executable, "-m", "spatialjax", "excite", str(urdf), "--duration", "20",
            "--out", str(out), "--report", str(rep), "--force", *extra]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree), "SPATIALJAX_NO_COMPILATION_CACHE": "1"}
    load0 = os.getloadavg()[0]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=folder)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"excite failed on {tree}:\n{proc.stderr[-3000:]}")
    report = json.loads(rep.read_text())
    return {
        "wall_s": wall,
        "cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
        "load_before": load0,
        "load_after": os.getloadavg()[0],
        "compile_s": report["times"]["compile_s"],
        "optimise_s": report["times"]["optimise_s"],
        "design_s": report["times"]["total_s"],
        "criterion": report["criterion"],
        "condition_number": report["condition_number"],
        "coefficients": report["coefficients"],
        "progress": proc.stdout.splitlines(),
    }


def random_reference(name: str, n_random: int):
    """Gautier's base columns and the condition numbers of ``n_random`` random trajectories."""
    rel, locked, _ = B.ROBOTS[name]
    path = B.robots_dir() / rel
    model = mb.Model.from_urdf(path, locked_joints=locked or None, dtype="float64")
    pm = B.pin_model(path, locked)
    P = _design._problem(model, key=jax.random.key(1), harmonics=5, base_frequency=0.1,
                         duration=20.0, criterion="condition_snr", starts=n_random, limits=None,
                         acceleration_limit=None, torque_limit=None, margin=0.9, rate=100.0,
                         grid_rate=10.0, steps=0, learning_rate=0.05,
                         gravity=(0.0, 0.0, -9.81))  # fmt: skip
    trajs = [_design._output(model, P, P.z[i], P.u[i])[5:] for i in range(n_random)]
    gb = B.gautier_base(np.concatenate([B.pin_stacked(pm, model, *tr) for tr in trajs[:4]]))
    conds = [B.fixed_condition(B.pin_stacked(pm, model, *tr), gb) for tr in trajs]
    return model, pm, gb, np.asarray(conds)


def designed_condition(model, pm, gb, coefficients) -> float:
    """The designed trajectory at 100 Hz, Pinocchio's regressor, Gautier's base columns."""
    a, b, q0 = (np.asarray(coefficients[k]) for k in ("a", "b", "q0"))
    t = np.linspace(0.0, 20.0, 2001)
    return B.fixed_condition(
        B.pin_stacked(pm, model, *_design._samples(a, b, q0, coefficients["base_frequency"], t)),
        gb,
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--robots", default="panda,ur5")
    p.add_argument("--before", type=Path, help="a source tree to time as well (before)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--random", type=int, default=100)
    p.add_argument("--extra", default="", help="more options for the command (quick runs)")
    p.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    p.add_argument("--json")
    p.add_argument("--txt")
    args = p.parse_args(argv)
    extra = args.extra.split()
    if args.quick:
        extra += ["--starts", "2", "--steps", "3", "--rate", "20"]
        args.random, args.repeat = 4, 1
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    say(f"# bench_excitation_speed: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, jax {jax.__version__}; a CPU shared with other jobs: load "
        f"average {os.getloadavg()[0]:.1f} at the start")  # fmt: skip
    out = {"options": {k: str(v) for k, v in vars(args).items()}, "robots": {}}
    for name in args.robots.split(","):
        urdf = B.robots_dir() / B.ROBOTS[name][0]
        say(f"\n## {name}: spatialjax excite {urdf.name} --duration 20 {' '.join(extra)}")
        runs = {k: [] for k in trees}
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(args.repeat):
                for label, tree in trees.items():
                    r = excite(tree, urdf, extra, Path(tmp))
                    runs[label].append(r)
                    say(f"  {label} #{rep}: {r['wall_s']:.1f} s end to end ({r['cpu_s']:.1f} s "
                        f"CPU), compile {r['compile_s']:.1f} s, optimise {r['optimise_s']:.1f} "
                        f"s; criterion {r['criterion']['value']:.4f}, condition number "
                        f"{r['condition_number']['designed']:.3f}; load average "
                        f"{r['load_before']:.1f} -> {r['load_after']:.1f}")  # fmt: skip
                    for line in r["progress"][1:4]:
                        say(f"      {line}")
        model, pm, gb, conds = random_reference(name, args.random)
        med = float(np.median(conds))
        say(f"  {args.random} random trajectories (key 1), Pinocchio, Gautier's base columns "
            f"({gb.size}): median condition number {med:.3g}, best {conds.min():.3g}")  # fmt: skip
        rows = {}
        for label, rs in runs.items():
            c = designed_condition(model, pm, gb, rs[-1]["coefficients"])
            rows[label] = {
                "runs": [{k: v for k, v in r.items() if k not in ("coefficients",)} for r in rs],
                "wall_s_median": float(np.median([r["wall_s"] for r in rs])),
                "condition_pinocchio": c,
                "ratio_to_random_median": med / c,
                "coefficients": rs[-1]["coefficients"],
            }
            say(f"  {label}: median {rows[label]['wall_s_median']:.1f} s end to end; designed "
                f"condition number (Pinocchio, 100 Hz) {c:.3f}: {med / c:.2f}x better than the "
                "random median")  # fmt: skip
        out["robots"][name] = {"random_median": med, "random_best": float(conds.min()),
                               "gautier_base": gb.tolist(), **rows}  # fmt: skip
    say(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    if args.txt:
        Path(args.txt).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
