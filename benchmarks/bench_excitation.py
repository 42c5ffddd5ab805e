"""Designed excitation trajectories against random ones and against SLSQP: Panda and UR5.

For each robot (example-robot-data URDFs, limits from their ``<limit>`` elements; the
Panda's fingers locked at 0):

1. ``identification.design_excitation`` (its default criterion unless ``--criterion``,
   ``--starts`` random starts, ``--steps`` Adam steps), timed (compile and optimisation
   apart).
2. ``--random`` random trajectories of the same settings (the design's own random starts:
   same duration, harmonics, base frequency, limits, margin, at rest at both ends, scaled
   into the limits at the output samples), and the designed one, scored with Pinocchio's
   ``computeJointTorqueRegressor`` plus the friction columns (viscous, Coulomb, offset):
   condition number of the column-scaled base regressor (unit-norm columns) on Gautier's
   base columns (QR without pivoting, SciPy, of 4 random trajectories: the columns that are
   not combinations of the columns before them, the same set for every trajectory; checked
   equal to the design's), and for comparison on base columns pivoted per trajectory (SciPy's
   pivoted QR, a set per trajectory) and on every nonzero column (no base choice); ``−log
   det`` of the base information matrix ``D⁻¹XᵀXD⁻¹/rows`` with the design's base columns and
   scale ``D``; median and best of the random ones.
3. ``scipy.optimize.minimize(method="SLSQP")`` on the design's criterion and parameterisation
   (limits by construction), gradients by finite differences (SciPy's default), from one
   random start (the design's start 0), ``--slsqp-iters`` iterations at most: time, result.
4. Simulated identification, ``--seeds`` seeds: per seed, true links perturbed from the URDF
   by a geodesic distance 0.3, random joint friction, torque noise; torques logged along the
   designed trajectory and along random trajectory number ``seed`` of step 2 (a fresh draw
   per seed, not picked by its condition number; same duration, harmonics, limits, margin
   and output rate, so the same number of samples and the same noise level), fitted with
   ``fit_torques`` (URDF as log-det prior, friction columns); scored by the geodesic distance
   of each link to the truth and the torque error on a held-out random trajectory drawn from
   another key (noise-free true torques). ``fit_torques`` is the estimator at the core of
   ``identify_robot``; ``bench_excitation_identify.py`` reruns step 4 from this script's
   ``--json`` through ``identify_robot``.

Usage: ``python benchmarks/bench_excitation.py [--quick] [--json F] [--txt F]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.optimize  # noqa: E402

import spatialjax as sj  # noqa: E402
import spatialjax.identification as sid  # noqa: E402
import spatialjax.multibody as mb  # noqa: E402
from spatialjax.identification.design import excitation as _design  # noqa: E402

ROBOTS = {
    "panda": (
        "panda_description/urdf/panda.urdf",
        {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0},
        0.5,
    ),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", {}, 1.0),
}  # fmt: skip  (URDF, locked joints, torque noise N·m)
FRICTION = {"viscous": (0.05, 0.3), "coulomb": (0.1, 0.8), "offset": (-0.3, 0.3)}


def robots_dir():
    import importlib.metadata
    from pathlib import Path

    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            return Path(dist.locate_file(f)).parent / "robots"
    raise SystemExit("example-robot-data not found")


def pin_model(path, locked):
    pm = pin.buildModelFromUrdf(str(path))
    if locked:
        q0 = pin.neutral(pm)
        for name, value in locked.items():
            q0[pm.idx_qs[pm.getJointId(name)]] = value
        pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], q0)
    return pm


def pin_stacked(pm, model, q, dq, ddq):
    """``[Y | Y_f]`` ``(N n, 10 nb + 3 n)`` from Pinocchio (revolute joints: q = angle)."""
    data = pm.createData()
    rows = []
    qp = np.asarray(model.q_to_pinocchio(jnp.asarray(q)))  # one batched call
    for k in range(q.shape[0]):
        Y = pin.computeJointTorqueRegressor(pm, data, qp[k], dq[k], ddq[k]).copy()
        rows.append(Y)
    Y = np.stack(rows)
    F = np.asarray(_design._friction_regressor_at_rest(model, jnp.asarray(dq)))  # sign 0 at rest
    return np.concatenate([Y, F], axis=-1).reshape(-1, Y.shape[-1] + F.shape[-1])


def base_condition(X):
    """Condition number of the column-scaled base regressor (pivoted QR, SciPy)."""
    d = np.linalg.norm(X, axis=0)
    keep = d > np.sqrt(np.finfo(float).eps) * d.max()
    Xs = X[:, keep] / d[keep]
    _, R, piv = scipy.linalg.qr(Xs, mode="economic", pivoting=True)
    sv = np.linalg.svd(Xs, compute_uv=False)
    rank = int(np.sum(sv > np.sqrt(10 * Xs.shape[1] * np.finfo(float).eps) * sv[0]))
    sb = np.linalg.svd(Xs[:, piv[:rank]], compute_uv=False)
    return float(sb[0] / sb[-1])


def gautier_base(X):
    """Base columns by QR without pivoting of the column-scaled regressor of random
    trajectories (Gautier 1990): columns independent of the columns before them."""
    d = np.linalg.norm(X, axis=0)
    live = d > np.sqrt(np.finfo(float).eps) * d.max()  # others: rounding noise, not a parameter
    Xs = np.where(live, X / np.where(live, d, 1.0), 0.0)
    r = np.abs(np.diag(scipy.linalg.qr(Xs, mode="r")[0]))
    return np.flatnonzero(live & (r > np.sqrt(10 * X.shape[1] * np.finfo(float).eps)))


def fixed_condition(X, base):
    """Condition number of the column-scaled regressor on the given base columns."""
    Xb = X[:, base] / np.linalg.norm(X[:, base], axis=0)
    sv = np.linalg.svd(Xb, compute_uv=False)
    return float(sv[0] / sv[-1])


def full_condition(X):
    """Ratio of the largest to the smallest nonzero singular value of the column-scaled
    regressor with every nonzero column: the same for every choice of base columns."""
    d = np.linalg.norm(X, axis=0)
    keep = d > np.sqrt(np.finfo(float).eps) * d.max()
    sv = np.linalg.svd(X[:, keep] / d[keep], compute_uv=False)
    rank = int(np.sum(sv > np.sqrt(10 * int(keep.sum()) * np.finfo(float).eps) * sv[0]))
    return float(sv[0] / sv[rank - 1])


def conditions(X, base):
    """The three condition numbers: on ``base`` (Gautier's base columns, the same for every
    trajectory), on a per-trajectory pivoted base, on every nonzero column."""
    return {"gautier_base": fixed_condition(X, base), "pivoted": base_condition(X),
            "all_columns": full_condition(X)}  # fmt: skip


def logdet(X, base, scale):
    Xb = X[:, base] / scale
    return float(-np.linalg.slogdet(Xb.T @ Xb / Xb.shape[0])[1])


def run_robot(name, args, say):
    rel, locked, noise = ROBOTS[name]
    path = robots_dir() / rel
    model = mb.Model.from_urdf(path, locked_joints=locked or None, dtype="float64")
    pm = pin_model(path, locked)
    n = model.nv
    say(f"\n## {name}: {n} joints; {args.duration:g} s, {args.harmonics} harmonics of "
        f"{args.base_frequency:g} Hz, output {args.rate:g} Hz, "
        f"grid {args.grid_rate:g} Hz")  # fmt: skip
    kw = dict(duration=args.duration, harmonics=args.harmonics, base_frequency=args.base_frequency,
              rate=args.rate, grid_rate=args.grid_rate, limits=None)  # fmt: skip
    if args.criterion:
        kw["criterion"] = args.criterion
    d = sid.design_excitation(model, key=jax.random.key(0), starts=args.starts, steps=args.steps,
                              progress=lambda s: say("  " + s), **kw)  # fmt: skip
    say(f"  load average after the design: {os.getloadavg()[0]:.1f}")
    design = {"criterion": d.criterion, "starts": args.starts, "steps": args.steps,
              "time_s": d.time_s, "a": d.a.tolist(), "b": d.b.tolist(), "q0": d.q0.tolist(),
              "compile_s": d.compile_s, "optimise_s": d.optimise_s, "value": d.value,
              "start_value": d.start_value,
              "condition_number_spatialjax": d.condition_number}  # fmt: skip
    base, scale = np.asarray(d.base_columns), np.asarray(d.column_scale)

    # random trajectories of the same settings: the design's own random starts, unoptimised
    P = _design._problem(model, key=jax.random.key(1), harmonics=args.harmonics,
                         base_frequency=args.base_frequency, duration=args.duration,
                         criterion="logdet", starts=args.random, limits=None,
                         acceleration_limit=None, torque_limit=None, margin=0.9, rate=args.rate,
                         grid_rate=args.grid_rate, steps=0, learning_rate=0.05,
                         gravity=(0.0, 0.0, -9.81))  # fmt: skip
    trajs = [_design._output(model, P, P.z[i], P.u[i])[4:] for i in range(args.random)]
    # Gautier's base columns, here from Pinocchio's regressor of the first 4 random trajectories
    gb = gautier_base(np.concatenate([pin_stacked(pm, model, *tr[1:]) for tr in trajs[:4]]))
    say(f"  base columns (QR without pivoting of 4 random trajectories, Pinocchio): {gb.size}; "
        f"the same as the design's: {np.array_equal(gb, base)}")  # fmt: skip
    X_d = pin_stacked(pm, model, d.q, d.dq, d.ddq)
    designed = {"condition": fixed_condition(X_d, gb), "logdet": logdet(X_d, base, scale),
                "conditions": conditions(X_d, gb), "gautier_base": gb.tolist(),
                "same_base_as_design": bool(np.array_equal(gb, base))}  # fmt: skip
    conds, lds, allc = [], [], []
    for tr in trajs:
        X = pin_stacked(pm, model, *tr[1:])
        allc.append(conditions(X, gb))
        conds.append(allc[-1]["gautier_base"])
        lds.append(logdet(X, base, scale))
    random = {"condition": {"median": float(np.median(conds)), "best": float(np.min(conds))},
              "logdet": {"median": float(np.median(lds)), "best": float(np.min(lds))},
              "conditions": conds, "logdets": lds,
              "condition_kinds": {k: [c[k] for c in allc] for k in allc[0]}}  # fmt: skip
    say(f"  condition number (Pinocchio, column-scaled, Gautier base columns): designed "
        f"{designed['condition']:.3g}; {args.random} random: median "
        f"{random['condition']['median']:.3g}, best {random['condition']['best']:.3g} -> "
        f"{random['condition']['median'] / designed['condition']:.2f}x "
        "better than the median")  # fmt: skip
    for k, label in (
        ("pivoted", "base columns pivoted per trajectory (SciPy's pivoted QR)"),
        ("all_columns", "every nonzero column (no base choice)"),
    ):
        med = float(np.median(random["condition_kinds"][k]))
        say(f"  condition number on {label}: designed {designed['conditions'][k]:.3g}; random "
            f"median {med:.3g} -> {med / designed['conditions'][k]:.2f}x")  # fmt: skip
    # a per-trajectory pivoted choice moves with the sampling rate of the same trajectory
    rates = {}
    for r in (10.0, 20.0, 100.0, 1000.0):
        tr = np.linspace(0.0, d.duration, int(round(d.duration * r)) + 1)
        Xr = pin_stacked(pm, model, *_design._samples(d.a, d.b, d.q0, d.base_frequency, tr))
        rates[r] = conditions(Xr, gb)
    designed["by_rate"] = {str(r): v for r, v in rates.items()}
    say("  designed, sampled at 10/20/100/1000 Hz: Gautier base " + " / ".join(
        f"{v['gautier_base']:.3g}" for v in rates.values()) + "; pivoted " + " / ".join(
        f"{v['pivoted']:.3g}" for v in rates.values()) + "; every column " + " / ".join(
        f"{v['all_columns']:.3g}" for v in rates.values()))  # fmt: skip
    say(
        f"  -log det (design's base columns and scale): designed {designed['logdet']:.4g}; "
        f"random median {random['logdet']['median']:.4g}, best {random['logdet']['best']:.4g}"
    )

    # SLSQP with finite differences from one start, same criterion and parameterisation
    Pd = _design._problem(model, key=jax.random.key(0), harmonics=args.harmonics,
                          base_frequency=args.base_frequency, duration=args.duration,
                          criterion="logdet", starts=1, limits=None, acceleration_limit=None,
                          torque_limit=None, margin=0.9, rate=args.rate, grid_rate=args.grid_rate,
                          steps=0, learning_rate=0.05, gravity=(0.0, 0.0, -9.81))  # fmt: skip
    zs, r = Pd.z[0].shape, Pd.z.shape[-1]

    @jax.jit
    def crit(x):
        z = x[: n * r].reshape(zs)
        u = x[n * r :]
        # the design's base columns and scale, so that the values compare
        return _design._loss(z, u, model, Pd.basis, Pd.box, Pd.t_grid, Pd.f, jnp.asarray(base),
                             jnp.asarray(scale), d.criterion, None, Pd.g)[0]  # fmt: skip

    x0 = np.concatenate([np.asarray(Pd.z[0]).ravel(), np.asarray(Pd.u[0])])
    crit(jnp.asarray(x0)).block_until_ready()
    nfev = [0]

    def fun(x):
        nfev[0] += 1
        return float(crit(jnp.asarray(x)))

    t0 = time.perf_counter()
    res = scipy.optimize.minimize(fun, x0, method="SLSQP",
                                  options={"maxiter": args.slsqp_iters})  # fmt: skip
    t_slsqp = time.perf_counter() - t0
    *_, t, q, dq, ddq = _design._output(model, Pd, res.x[: n * r].reshape(zs), res.x[n * r :])
    X_s = pin_stacked(pm, model, q, dq, ddq)
    slsqp = {"time_s": t_slsqp, "iterations": int(res.nit), "evaluations": nfev[0],
             "start_value": fun(x0), "value": float(res.fun), "condition": fixed_condition(X_s, gb),
             "logdet": logdet(X_s, base, scale), "message": str(res.message)}  # fmt: skip
    say(f"  SLSQP (finite differences, one start, {slsqp['iterations']} iterations, "
        f"{nfev[0]} evaluations): {t_slsqp:.1f} s, {d.criterion} {slsqp['start_value']:.4g} -> "
        f"{slsqp['value']:.4g} (grid), condition number {slsqp['condition']:.3g}, -log det "
        f"{slsqp['logdet']:.4g}; design ({args.starts} starts, exact gradients): "
        f"{d.optimise_s:.1f} s + compile {d.compile_s:.1f} s, {d.criterion} "
        f"{d.value:.4g}")  # fmt: skip

    # simulated identification: designed vs random draw `seed`; held-out from another key
    Ph = _design._problem(model, key=jax.random.key(2), harmonics=args.harmonics,
                          base_frequency=args.base_frequency, duration=args.duration,
                          criterion="logdet", starts=max(args.seeds, 1), limits=None,
                          acceleration_limit=None, torque_limit=None, margin=0.9, rate=args.rate,
                          grid_rate=args.grid_rate, steps=0, learning_rate=0.05,
                          gravity=(0.0, 0.0, -9.81))  # fmt: skip
    ident = []
    for seed in range(args.seeds):
        t_test = _design._output(model, Ph, Ph.z[seed], Ph.u[seed])[4:]
        key = jax.random.key(100 + seed)
        kb, kd, kr, kt = jax.random.split(key, 4)
        rng = np.random.default_rng(seed)
        fr = np.column_stack([rng.uniform(*FRICTION[k], size=n) for k in FRICTION])
        truth = sid.perturb_inertia(model.inertia, 0.3, kb)
        true_x = np.concatenate([np.asarray(truth.params).ravel(), fr.ravel()])
        Xt = pin_stacked(pm, model, *t_test[1:])
        tau_test = Xt @ true_x
        row = {}
        for label, traj, k in (("designed", (d.t, d.q, d.dq, d.ddq), kd),
                               ("random", trajs[seed % len(trajs)], kr)):  # fmt: skip
            t, q, dq, ddq = traj
            log = sid.simulate_log(model, t, q, dq, ddq, key=k, inertia=truth, friction=fr,
                                   torque_noise=noise, include_derivatives=True)  # fmt: skip
            Y = mb.joint_torque_regressor(model, jnp.asarray(q), jnp.asarray(dq),
                                          jnp.asarray(ddq))  # fmt: skip
            E = mb.JointModel(("viscous", "coulomb", "offset")).regressor(
                model, jnp.asarray(dq), jnp.asarray(ddq)
            )
            res = sid.fit_torques(Y, jnp.asarray(log.tau), prior=model.inertia, extra=E,
                                  extra_nonnegative=np.tile([True, True, False], n))  # fmt: skip
            est = sj.RigidBodyInertia(jnp.asarray(res.inertia.params).reshape(-1, 10))
            geo = np.asarray(sj.geodesic_distance(truth, est))
            x = np.concatenate([np.asarray(res.inertia.params).ravel(),
                                np.asarray(res.extra).ravel()])  # fmt: skip
            err = float(np.linalg.norm(Xt @ x - tau_test) / np.linalg.norm(tau_test))
            row[label] = {"geodesic_per_link": geo.tolist(), "geodesic_mean": float(geo.mean()),
                          "heldout_torque_error": err, "samples": int(q.shape[0]),
                          "condition": conds[seed % len(trajs)] if label == "random"
                          else designed["condition"]}  # fmt: skip
        ident.append(row)
        say(f"  seed {seed}: mean geodesic to truth designed {row['designed']['geodesic_mean']:.4f}"
            f" vs random {row['random']['geodesic_mean']:.4f}; held-out torque error "
            f"{row['designed']['heldout_torque_error']:.4f} vs "
            f"{row['random']['heldout_torque_error']:.4f} (random condition number "
            f"{row['random']['condition']:.3g})")  # fmt: skip
        for label in ("designed", "random"):
            say(
                f"    geodesic per link, {label}: "
                + " ".join(f"{g:.3f}" for g in row[label]["geodesic_per_link"])
            )
    return {"joints": n, "design": design, "designed": designed, "random": random,
            "slsqp": slsqp, "identification": ident}  # fmt: skip


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--robots", default="panda,ur5")
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--harmonics", type=int, default=5)
    p.add_argument("--base-frequency", type=float, default=0.1)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--grid-rate", type=float, default=10.0)
    p.add_argument("--starts", type=int, default=64)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--criterion", default=None, help="default: design_excitation's")
    p.add_argument("--random", type=int, default=100)
    p.add_argument("--slsqp-iters", type=int, default=30)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    p.add_argument("--json")
    p.add_argument("--txt")
    args = p.parse_args(argv)
    if args.quick:
        args.duration, args.starts, args.steps, args.random = 10.0, 2, 2, 3
        args.slsqp_iters, args.seeds, args.rate = 1, 1, 20.0
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    say(f"# bench_excitation: {platform.processor() or platform.machine()}, "
        f"{jax.devices()[0].device_kind}, jax {jax.__version__}, pinocchio {pin.__version__}; "
        "a 2-core CPU shared with other jobs: times are upper bounds; load average "
        f"{os.getloadavg()[0]:.1f} at the start")  # fmt: skip
    out = {"options": vars(args), "robots": {}}
    for name in args.robots.split(","):
        out["robots"][name] = run_robot(name, args, say)
    say(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if args.txt:
        with open(args.txt, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
