"""Armature, damping and friction loss identified with the links, against MuJoCo itself (issue 34).

Everything about the truth comes from MuJoCo; spatialjax only sees a log and a prior file.

* **Robot**: the UR5 of example-robot-data (``ur_description/urdf/ur5_robot.urdf``), meshes
  stripped, compiled by MuJoCo's URDF importer and saved with ``mj_saveLastXML``: the
  **prior file** (the URDF's links as MJCF, no ``armature``/``damping``/``frictionloss``;
  MuJoCo writes ``<frame>`` elements for the fused static bodies).
* **Truth** (per seed, ``MjSpec`` edits of the prior file): every link's mass and principal
  moments scaled by ``U[0.75, 1.25]`` (moments redrawn until the triangle inequality
  holds), its CoM moved by ``U[-0.25, 0.25] · max(|ipos|, 5 cm)`` per axis; per joint
  ``armature ~ U[0.04, 0.3]`` kg·m², ``damping ~ U[0.4, 4]`` N·m·s/rad, ``frictionloss ~
  U[0.9, 7]`` N·m; one ``<motor>`` (gear 1) per joint; timestep 1 ms, RK4.
* **Log**: a 20 s excitation (:func:`spatialjax.identification.excitation_trajectory`, 5
  harmonics of 0.1 Hz, ±π, 3.15 rad/s, 20 rad/s²) tracked by MuJoCo (``mj_step``) under
  PD + feed-forward (``mj_inverse`` of the prior file along the desired trajectory; PD at
  5 Hz bandwidth on a guessed inertia): 1 kHz samples of ``q`` read by a 20-bit encoder and
  of the actuator torque (``qfrc_actuator``, what a joint-torque sensor reads) plus
  Gaussian noise of 0.2 N·m. MuJoCo applies the damping through ``qfrc_passive`` and the
  friction loss through its constraint solver; both are in the logged torque implicitly.
* **Estimate** (spatialjax's pieces, in the order ``identify_robot`` runs its stages):
  ``prepare_log`` (4th-order zero-phase Butterworth at 20 Hz, central differences), the
  joint-torque regressor and :class:`~spatialjax.multibody.JointModel`'s columns
  (armature, viscous, Coulomb, offset), both filtered like the torques and decimated to
  100 Hz (``parallel_filter``, Gautier 1997), :func:`~spatialjax.identification.moving_samples`
  (a joint's row is left out of the fit where it rests: static friction), noise weights
  ``1/(σ̂² τ_c)`` from the least-squares residuals (as ``identify_robot``), and
  ``fit_torques`` with the prior file's links as log-det prior, armature/viscous/Coulomb
  ``≥ 0``, and :func:`~spatialjax.identification.joint_prior`'s armature prior. The result
  is written with :func:`~spatialjax.identification.write_identified_mjcf`.
* **Scores**: identified / true armature, damping and friction loss per joint; MuJoCo's
  ``mj_inverse`` on the **written file** predicting the actuator torques of a **separate
  run** (another 10 s excitation tracked the same way; MuJoCo's exact ``qpos, qvel, qacc``
  of that run), ``‖τ̂ − τ‖ / ‖τ‖``, against the prior file and the prior file's links with
  the true joint parameters; the first joint's base parameter (data share, partners) from
  :meth:`~spatialjax.identification.Identifiability.confounded`.
* ``--pipeline``: the same log through ``identify_robot`` (its defaults: the four joint-model
  kinds, held-out 20 %, autocorrelation weighting; ``--lowpass``, ``--decimate`` as given) and
  ``RobotIdentification.write``, what ``spatialjax identify prior.xml log.npz --out
  fitted.xml`` runs.
* **MuJoCo's system-identification toolbox** (``mujoco.sysid``, MuJoCo 4.0, ``pip install
  "mujoco[sysid]"`` in its own venv, ``--sysid-python``): on the same log, the same 78
  parameters (each body's pseudo-inertia, ``InertiaType.Pseudo``, and the 18 joint
  parameters), open-loop rollouts of the measured torques over windows of ``--sysid-window``
  seconds started at the logged ``q`` (and velocities of the same filtered differentiation),
  fitted to the logged ``q`` by its Gauss–Newton with finite differences; scored the same way.

Usage::

    python benchmarks/bench_joint_params.py --seeds 10 --out benchmarks/results
    python benchmarks/bench_joint_params.py --seeds 1 --sysid-python VENV/bin/python
    python benchmarks/bench_joint_params.py --seeds 5 --pipeline --decimate 1 \
        --out benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
JOINT_RANGES = {"armature": (0.04, 0.3), "damping": (0.4, 4.0), "frictionloss": (0.9, 7.0)}
ACCEPT = {"armature": (0.75, 1.33), "damping": (0.8, 1.25), "frictionloss": (0.8, 1.25)}
LARGE_JOINTS = 3  # the armature acceptance: the three large joints


def _robots():
    import importlib.util

    spec = importlib.util.find_spec("example_robot_data")
    roots = []
    if spec is not None and spec.origin:
        roots.append(Path(spec.origin).parent)
    roots += [Path(p) for p in sys.path if p.endswith("site-packages")]
    for r in roots:
        for cand in (r / "cmeel.prefix/share/example-robot-data/robots", r / "robots"):
            if (cand / "ur_description").is_dir():
                return cand
    raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")


def nominal_mjcf(out: Path, robot: str = "ur5") -> Path:
    """The URDF's links as MJCF: MuJoCo's own URDF import, saved by ``mj_saveLastXML``."""
    import mujoco

    text = (_robots() / f"ur_description/urdf/{robot}_robot.urdf").read_text()
    text = re.sub(r"<(visual|collision)>.*?</\1>", "", text, flags=re.S)
    mujoco.mj_saveLastXML(str(out), mujoco.MjModel.from_xml_string(text))
    return out


def truth_spec(nominal: Path, rng, links: str = "independent"):
    """The true robot: links ±25 % off, joint parameters drawn, motors; 1 ms RK4.

    ``links="independent"``: mass, each principal moment (redrawn until the triangle
    inequality holds) and each CoM coordinate off independently; ``"scaled"``: one factor
    per link for its mass and moments (a denser or lighter link of the same shape), CoM kept.
    """
    import mujoco

    spec = mujoco.MjSpec.from_file(str(nominal))
    spec.option.timestep = 1e-3
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    for b in spec.bodies[1:]:
        if links == "scaled":
            f = rng.uniform(0.75, 1.25)
            b.mass, b.inertia = b.mass * f, np.asarray(b.inertia) * f
            continue
        b.mass *= rng.uniform(0.75, 1.25)
        while True:
            inertia = np.asarray(b.inertia) * rng.uniform(0.75, 1.25, 3)
            a, c, d = inertia
            if a + c >= d and c + d >= a and a + d >= c:
                break
        b.inertia = inertia
        b.ipos = np.asarray(b.ipos) + rng.uniform(-0.25, 0.25, 3) * max(np.abs(b.ipos).max(), 0.05)
    for j in spec.joints:
        j.armature = rng.uniform(*JOINT_RANGES["armature"])
        j.damping = [rng.uniform(*JOINT_RANGES["damping"]), 0.0, 0.0]
        j.frictionloss = rng.uniform(*JOINT_RANGES["frictionloss"])
    _add_motors(spec)
    return spec


def _add_motors(spec):
    import mujoco

    for j in spec.joints:
        a = spec.add_actuator()
        a.name, a.target, a.trntype = j.name + "_motor", j.name, mujoco.mjtTrn.mjTRN_JOINT
        a.gainprm[0] = 1.0
        a.ctrllimited = False


def excitation(key: int, duration: float):
    import jax

    from spatialjax.identification import excitation_trajectory

    lim = np.stack([-np.pi * np.ones(6), np.pi * np.ones(6)], 1)
    out = excitation_trajectory(
        6, duration=duration, key=jax.random.key(key), rate=1000.0, q_limits=lim,
        dq_limits=np.full(6, 3.15), ddq_limits=np.full(6, 20.0), amplitude=1.0, dtype="float64",
    )  # fmt: skip
    return tuple(np.asarray(x) for x in out)


def track(true, nominal, t, qd, dqd, ddqd):
    """MuJoCo tracks the trajectory: PD (5 Hz) + the prior's ``mj_inverse`` feed-forward.

    Returns ``(q, v, qacc, tau)`` at each step before it is taken: ``qacc`` from ``mj_forward``
    (the exact acceleration) and ``tau = qfrc_actuator`` (the torque the motors applied)."""
    import mujoco

    d, dn = mujoco.MjData(true), mujoco.MjData(nominal)
    inertia = np.array([0.5, 0.5, 0.3, 0.1, 0.1, 0.05]) + 0.2  # a guess, not the truth
    w = 2 * np.pi * 5.0
    kp, kd = inertia * w * w, 2 * inertia * w
    d.qpos[:], d.qvel[:] = qd[0], dqd[0]
    out = np.zeros((4, len(t), true.nv))
    for k in range(len(t)):
        dn.qpos[:], dn.qvel[:], dn.qacc[:] = qd[k], dqd[k], ddqd[k]
        mujoco.mj_inverse(nominal, dn)
        d.ctrl[:] = dn.qfrc_inverse + kp * (qd[k] - d.qpos) + kd * (dqd[k] - d.qvel)
        mujoco.mj_forward(true, d)
        out[:, k] = d.qpos, d.qvel, d.qacc, d.qfrc_actuator
        mujoco.mj_step(true, d)
    return out


def measured(q, tau, rng, bits=20, noise=0.2):
    """An encoder of ``bits`` bits per turn and Gaussian torque noise."""
    res = 2 * np.pi / 2**bits
    return np.round(q / res) * res, tau + noise * rng.standard_normal(tau.shape)


def identify(model, log, *, lowpass=20.0, decimate=10, rest_fraction=None):
    """spatialjax's pieces, as ``identify_robot``'s stages will run them (module docstring)."""
    import jax
    import jax.numpy as jnp

    import spatialjax.multibody as mb
    from spatialjax.identification import (
        correlation_time,
        fit_torques,
        identifiability,
        joint_prior,
        least_squares_torques,
        moving_samples,
        parallel_filter,
        parameter_names,
        prepare_log,
    )

    t0 = time.perf_counter()
    jm = mb.JointModel()
    p = prepare_log(log, lowpass=lowpass, decimate=1)
    args = [jnp.asarray(x) for x in (p.q, p.dq, p.ddq)]
    Y = np.asarray(mb.joint_torque_regressor(model, *args))
    E = np.asarray(jm.regressor(model, args[1], args[2]))
    p, Y, E = parallel_filter(p, Y, E, decimate=decimate)
    kw = {} if rest_fraction is None else {"fraction": rest_fraction}
    moving = moving_samples(p.dq, **kw)
    X = np.concatenate([Y, E], -1)
    pi_ls, phi_ls = least_squares_torques(
        jnp.asarray(Y), jnp.asarray(p.tau), extra=jnp.asarray(E), weights=jnp.asarray(moving * 1.0)
    )
    resid = np.where(moving, p.tau - X @ np.concatenate([pi_ls, phi_ls]), 0.0)
    sigma2 = np.sum(resid**2, axis=0) / np.sum(moving, axis=0)
    weights = moving / (sigma2 * correlation_time(resid))
    jp = joint_prior(model, p.q, jm)
    t_prep = time.perf_counter() - t0
    res = jax.block_until_ready(
        fit_torques(
            jnp.asarray(Y), jnp.asarray(p.tau), prior=model.inertia, extra=jnp.asarray(E),
            extra_nonnegative=jm.nonnegative(model), weights=jnp.asarray(weights),
            extra_prior=jp.values, extra_prior_weight=jp.weights,
        )
    )  # fmt: skip
    t_fit = time.perf_counter() - t0 - t_prep
    names = parameter_names(model, ()) + jm.names(model)
    idf = identifiability(
        jnp.asarray(Y), extra=jnp.asarray(E), weights=jnp.asarray(weights), prior=model.inertia,
        names=names, extra_prior_weight=jp.weights,
    )  # fmt: skip
    share = dict(zip(names, np.asarray(idf.data_share).tolist(), strict=True))
    conf = idf.confounded([n for n in jm.names(model) if n[1] == "armature"])
    return {
        "inertia": np.asarray(res.inertia.params),
        "coefficients": np.asarray(res.extra),
        "table": jm.as_table(model, np.asarray(res.extra)),
        "joint_params": jm.joint_parameters(model, np.asarray(res.extra)),
        "status": int(res.status),
        "iterations": int(res.iterations),
        "rest_dropped": (1.0 - moving.mean(axis=0)).tolist(),
        "confounded": {f"{j}/{k}": [f"{b}/{n}" for b, n in v] for (j, k), v in conf.items()},
        "armature_data_share": [share[(j, "armature")] for j in model.joint_names],
        "seconds": {"prepare": t_prep, "fit": t_fit},
    }


def _auto_or(kind):
    """argparse type: ``"auto"`` or a ``kind`` number."""
    return lambda text: text if text == "auto" else kind(text)


def identify_pipeline(model, log, *, lowpass=20.0, decimate=1):
    """``identify_robot`` with its defaults (what ``spatialjax identify`` runs)."""
    import spatialjax.identification as sid

    t0 = time.perf_counter()
    res = sid.identify_robot(model, log, lowpass=lowpass, decimate=decimate)
    t = time.perf_counter() - t0
    rep = res.report.to_dict()
    conf = {f"{d['joint']}/{k}": [f"{b}/{n}" for b, n in v]
            for d in rep["joint_parameters"] for k, v in d["confounded"].items()}  # fmt: skip
    return {
        "result": res,
        "status": rep["fit_status"]["status"],
        "iterations": rep["fit_status"]["iterations"],
        "rest_dropped": [d["rest_fraction"] for d in rep["joint_parameters"]],
        "confounded": conf,
        "armature_data_share": [d["data_share"]["armature"] for d in rep["joint_parameters"]],
        "seconds": {
            "identify_robot": t,
            "fit": rep["times"]["solve_s"],
            "compile": rep["times"]["compile_s"],
        },  # fmt: skip
        "warnings": list(res.warnings),
    }


def inverse_error(model, run) -> float:
    """``‖τ̂ − τ‖ / ‖τ‖`` of MuJoCo's ``mj_inverse`` on ``run = (q, v, qacc, tau)``."""
    import mujoco

    q, v, a, tau = run
    d = mujoco.MjData(model)
    out = np.zeros_like(tau)
    for k in range(len(q)):
        d.qpos[:], d.qvel[:], d.qacc[:] = q[k], v[k], a[k]
        mujoco.mj_inverse(model, d)
        out[k] = d.qfrc_inverse
    return float(np.linalg.norm(out - tau) / np.linalg.norm(tau))


def _loaded(path: Path):
    """A written MJCF, compiled as the truth is (1 ms, RK4)."""
    import mujoco

    spec = mujoco.MjSpec.from_file(str(path))
    spec.option.timestep = 1e-3
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    return spec.compile()


def _joint_values(m):
    return {
        "armature": m.dof_armature.copy(),
        "damping": m.dof_damping.copy(),
        "frictionloss": m.dof_frictionloss.copy(),
    }


def _ratios(est, true):
    return {k: (np.asarray(est[k]) / true[k]).tolist() for k in true}


def _accepted(ratios) -> dict:
    out = {}
    for k, (lo, hi) in ACCEPT.items():
        r = np.asarray(ratios[k])[:LARGE_JOINTS] if k == "armature" else np.asarray(ratios[k])
        out[k] = bool(np.all((r >= lo) & (r <= hi)))
    return out


def run_seed(seed, work: Path, nominal: Path, model, args) -> dict:
    import mujoco

    import spatialjax.identification as sid

    rng = np.random.default_rng(seed)
    spec = truth_spec(nominal, rng, getattr(args, "links", "independent"))
    true = spec.compile()
    nom = _loaded(nominal)
    t, qd, dqd, ddqd = excitation(100 + seed, args.duration)
    q, v, a, tau = track(true, nom, t, qd, dqd, ddqd)
    qm, taum = measured(q, tau, rng)
    log = sid.RobotLog(t, qm, taum, joint_names=model.joint_names)
    t2, qd2, dqd2, ddqd2 = excitation(1000 + seed, args.validation)
    run2 = track(true, nom, t2, qd2, dqd2, ddqd2)
    out = work / f"fitted_{seed}.xml"
    if out.exists():
        out.unlink()
    if "auto" in (args.lowpass, args.decimate) and not getattr(args, "pipeline", False):
        raise SystemExit("--lowpass/--decimate auto: only with --pipeline")
    if getattr(args, "pipeline", False):
        est = identify_pipeline(model, log, lowpass=args.lowpass, decimate=args.decimate)
        t0 = time.perf_counter()
        rep = est.pop("result").write(out, source=nominal)
    else:
        est = identify(model, log, lowpass=args.lowpass, decimate=args.decimate)
        t0 = time.perf_counter()
        rep = sid.write_identified_mjcf(nominal, model, est["inertia"], out,
                                        joint_params=est["joint_params"])  # fmt: skip
    t_write = time.perf_counter() - t0
    fitted = _loaded(out)
    truth_j = _joint_values(true)
    both = mujoco.MjSpec.from_file(str(nominal))
    for j, jt in zip(both.joints, spec.joints, strict=True):
        j.armature, j.damping, j.frictionloss = jt.armature, jt.damping, jt.frictionloss
    both.option.timestep, both.option.integrator = 1e-3, mujoco.mjtIntegrator.mjINT_RK4
    row = {
        "seed": seed,
        "truth": {k: v.tolist() for k, v in truth_j.items()},
        "identified": {k: v.tolist() for k, v in _joint_values(fitted).items()},
        "ratio": _ratios(_joint_values(fitted), truth_j),
        "inverse_error": {
            "written_file": inverse_error(fitted, run2),
            "prior_file": inverse_error(nom, run2),
            "prior_links_true_joints": inverse_error(both.compile(), run2),
            "truth": inverse_error(true, run2),
        },
        "fit": {
            k: est[k]
            for k in (
                "status",
                "iterations",
                "rest_dropped",
                "confounded",
                "armature_data_share",
                "seconds",
            )
        }
        | ({"warnings": est["warnings"]} if "warnings" in est else {}),  # fmt: skip
        "write": {
            "seconds": t_write,
            "max_reload_error": rep["max_reload_error"],
            "max_joint_error": rep["max_joint_error"],
        },  # fmt: skip
    }
    row["accepted"] = _accepted(row["ratio"])
    row["accepted"]["inverse_2pct"] = row["inverse_error"]["written_file"] <= 0.02
    if args.sysid_python:
        row["sysid"] = run_sysid(args, work, nominal, log, seed, truth_j, run2)
    return row


def run_sysid(args, work: Path, nominal: Path, log, seed, truth_j, run2) -> dict:
    """MuJoCo's toolbox on the same log, in its own venv (``_peers/mujoco_sysid_...py``)."""
    from spatialjax.identification import prepare_log

    p = prepare_log(log, lowpass=args.lowpass)  # velocities for the windows' initial states
    k0 = p.edge
    data = work / f"log_{seed}.npz"
    np.savez(data, t=log.t, q=log.q, tau=log.tau, dq=np.pad(p.dq, ((k0, len(log.t) - k0 -
             len(p.dq)), (0, 0)), mode="edge"))  # fmt: skip
    spec_json = work / f"sysid_{seed}.json"
    spec_json.write_text(json.dumps({
        "prior": str(nominal), "log": str(data), "window_s": args.sysid_window,
        "n_windows": args.sysid_windows, "max_iters": args.sysid_iters, "skip": int(k0),
    }))  # fmt: skip
    peer = HERE / "_peers" / "mujoco_sysid_joint_params.py"
    proc = subprocess.run([args.sysid_python, str(peer), str(spec_json)], capture_output=True,
                          text=True)  # fmt: skip
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    import mujoco

    spec = mujoco.MjSpec.from_file(str(nominal))
    for b in spec.bodies[1:]:
        v = res["bodies"][b.name]
        b.mass, b.ipos, b.inertia, b.iquat = v["mass"], v["ipos"], v["inertia"], v["iquat"]
    for j in spec.joints:
        v = res["joints"][j.name]
        j.armature, j.damping, j.frictionloss = (
            v["armature"],
            [v["damping"], 0, 0],
            v["frictionloss"],
        )
    spec.option.timestep, spec.option.integrator = 1e-3, mujoco.mjtIntegrator.mjINT_RK4
    fitted = spec.compile()
    res["ratio"] = _ratios(_joint_values(fitted), truth_j)
    res["accepted"] = _accepted(res["ratio"])
    res["inverse_error_written_file"] = inverse_error(fitted, run2)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="number of truths (seeds 0 .. n-1)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--robot", choices=("ur5", "ur10"), default="ur5")
    ap.add_argument("--links", choices=("independent", "scaled"), default="independent",
                    help="how the true links are off the URDF (truth_spec)")  # fmt: skip
    ap.add_argument("--duration", type=float, default=20.0, help="identification log, s")
    ap.add_argument("--validation", type=float, default=10.0, help="separate run, s")
    ap.add_argument(
        "--lowpass",
        type=_auto_or(float),
        default=20.0,
        help="cut-off in Hz, or 'auto' (--pipeline only: identify_robot's default)",
    )
    ap.add_argument(
        "--decimate", type=_auto_or(int), default=10, help="factor, or 'auto' (--pipeline only)"
    )
    ap.add_argument("--pipeline", action="store_true",
                    help="identify with identify_robot (spatialjax identify)")  # fmt: skip
    ap.add_argument("--sysid-python", default=None,
                    help="python of a venv with mujoco[sysid] (skipped without)")  # fmt: skip
    ap.add_argument("--sysid-seeds", type=int, default=1, help="seeds also run through sysid")
    ap.add_argument("--sysid-window", type=float, default=0.25, help="rollout window, s")
    ap.add_argument("--sysid-windows", type=int, default=16, help="windows over the log")
    ap.add_argument("--sysid-iters", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None, help="folder for the JSON results")
    ap.add_argument("--name", default=None, help="file stem (default joint_params[_ur10]_cpu)")
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    import mujoco

    import spatialjax.multibody as mb

    work = Path(tempfile.mkdtemp(prefix="bench_joint_params_"))
    nominal = nominal_mjcf(work / "prior.xml", args.robot)
    model = mb.Model.from_mjcf(nominal, dtype="float64")
    rows = []
    sysid_python = args.sysid_python
    for i, seed in enumerate(range(args.first_seed, args.first_seed + args.seeds)):
        args.sysid_python = sysid_python if i < args.sysid_seeds else None
        row = run_seed(seed, work, nominal, model, args)
        rows.append(row)
        r = row["ratio"]
        print(
            f"seed {seed}: armature {np.round(r['armature'], 3).tolist()} damping "
            f"[{min(r['damping']):.3f}, {max(r['damping']):.3f}] frictionloss "
            f"[{min(r['frictionloss']):.3f}, {max(r['frictionloss']):.3f}] mj_inverse "
            f"{row['inverse_error']['written_file']:.4f} (prior file "
            f"{row['inverse_error']['prior_file']:.3f}, prior links + true joints "
            f"{row['inverse_error']['prior_links_true_joints']:.3f}); fit "
            f"{row['fit']['seconds']['fit']:.2f} s; accepted {row['accepted']}"
            + (f"; warnings {row['fit']['warnings']}" if row["fit"].get("warnings") else ""),
            flush=True,
        )
        if "sysid" in row:
            keys = ("wall_s", "iterations", "ratio", "inverse_error_written_file", "accepted")
            shown = {k: row["sysid"].get(k) for k in keys + ("error",)}
            print(f"  mujoco.sysid: {json.dumps(shown)}", flush=True)
    load = os.getloadavg()
    summary = {
        "device": platform.processor() or platform.machine(),
        "mujoco": mujoco.__version__,
        "jax": jax.__version__,
        "load_average": load,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "accepted_all": {k: sum(r["accepted"][k] for r in rows) for k in rows[0]["accepted"]},
        "n_seeds": len(rows),
        "rows": rows,
    }
    print(f"accepted (of {len(rows)} seeds): {summary['accepted_all']}; load average {load}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.name or (
            ("joint_params" if args.robot == "ur5" else f"joint_params_{args.robot}")
            + ("_pipeline" if args.pipeline else "")
            + "_cpu"
        )
        (args.out / f"{stem}.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
