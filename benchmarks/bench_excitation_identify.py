"""The simulated identification of ``bench_excitation.py`` with ``identify_robot``.

Reads a ``bench_excitation.py --json`` file (the designed trajectory's Fourier
coefficients), rebuilds the designed trajectory and the same random draws (key 1, ``--random``
of them; draw number ``seed``) and held-out trajectories (key 2) at the bench's output rate,
and per seed the same truth, friction and torque noise; fits each log with
``identification.identify_robot`` (defaults, except ``holdout=0``: the whole log trains,
the held-out trajectory is an independent one) instead of ``fit_torques``; scores as the bench
(mean geodesic distance of the links to the truth, relative held-out torque error).

Usage: ``python benchmarks/bench_excitation_identify.py BENCH.json [--txt F]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import bench_excitation as B  # noqa: E402

import spatialjax as sj  # noqa: E402
import spatialjax.identification as sid  # noqa: E402
import spatialjax.multibody as mb  # noqa: E402
from spatialjax.identification.design import excitation as _design  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("json")
    p.add_argument("--txt")
    args = p.parse_args(argv)
    bench = json.loads(Path(args.json).read_text())
    o = bench["options"]
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    for name, r in bench["robots"].items():
        rel, locked, noise = B.ROBOTS[name]
        path = B.robots_dir() / rel
        model = mb.Model.from_urdf(path, locked_joints=locked or None, dtype="float64")
        pm = B.pin_model(path, locked)
        n = model.nv
        kw = dict(harmonics=o["harmonics"], base_frequency=o["base_frequency"],
                  duration=o["duration"], criterion="logdet", limits=None,
                  acceleration_limit=None, torque_limit=None, margin=0.9, rate=o["rate"],
                  grid_rate=o["grid_rate"], steps=0, learning_rate=0.05,
                  gravity=(0.0, 0.0, -9.81))  # fmt: skip
        P = _design._problem(model, key=jax.random.key(1), starts=o["random"], **kw)
        Ph = _design._problem(model, key=jax.random.key(2), starts=max(o["seeds"], 1), **kw)
        dz = r["design"]
        t = np.linspace(0.0, o["duration"], int(round(o["duration"] * o["rate"])) + 1)
        a, b, q0 = (np.asarray(dz[k]) for k in ("a", "b", "q0"))
        designed = (t, *_design._samples(a, b, q0, o["base_frequency"], t))
        say(f"## {name} ({dz['criterion']} design of {args.json}): identify_robot, holdout=0")
        wins_e = wins_g = 0
        for seed in range(o["seeds"]):
            t_test = _design._output(model, Ph, Ph.z[seed], Ph.u[seed])[4:]
            kb, kd, kr, _ = jax.random.split(jax.random.key(100 + seed), 4)
            rng = np.random.default_rng(seed)
            fr = np.column_stack([rng.uniform(*B.FRICTION[k], size=n) for k in B.FRICTION])
            truth = sid.perturb_inertia(model.inertia, 0.3, kb)
            true_x = np.concatenate([np.asarray(truth.params).ravel(), fr.ravel()])
            Xt = B.pin_stacked(pm, model, *t_test[1:])
            tau_test = Xt @ true_x
            random = _design._output(model, P, P.z[seed], P.u[seed])[4:]
            row = {}
            for label, traj, k in (("designed", designed, kd), ("random", random, kr)):
                log = sid.simulate_log(model, *traj, key=k, inertia=truth, friction=fr,
                                       torque_noise=noise, include_derivatives=True)  # fmt: skip
                res = sid.identify_robot(model, log, holdout=0.0)
                est = sj.RigidBodyInertia(jnp.asarray(res.params["fit"]))
                geo = float(np.mean(np.asarray(sj.geodesic_distance(truth, est))))
                x = np.concatenate(
                    [res.params["fit"].ravel(), res.joint_parameters["fit"][:, 1:].ravel()]
                )
                row[label] = (
                    geo,
                    float(np.linalg.norm(Xt @ x - tau_test) / np.linalg.norm(tau_test)),
                )
            wins_g += row["designed"][0] < row["random"][0]
            wins_e += row["designed"][1] < row["random"][1]
            say(f"  seed {seed}: mean geodesic designed {row['designed'][0]:.4f} vs random "
                f"{row['random'][0]:.4f}; held-out torque error {row['designed'][1]:.4f} vs "
                f"{row['random'][1]:.4f}")  # fmt: skip
        say(f"  {name}: held-out error lower with the design in {wins_e} of {o['seeds']} seeds, "
            f"mean geodesic in {wins_g} of {o['seeds']}")  # fmt: skip
    if args.txt:
        Path(args.txt).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
