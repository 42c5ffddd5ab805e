"""Floating-base identification of a simulated quadruped (Solo12), with and without wrenches.

The study of issue 35. Everything about the robot's motion and forces is computed with
**Pinocchio** (``pin.rnea``, frame Jacobians and classical accelerations), not with
spatialjax's own dynamics; the trajectory's derivatives are exact (forward-mode derivatives of
the designed base and foot paths, then the contact constraints solved for the joint rates).

* **Robot**: Solo12 from example-robot-data (``solo_description/robots/solo12.urdf``) on a
  free flyer: base 1.16 kg, four legs of shoulder, upper and lower leg (0.149, 0.149,
  0.038 kg), 2.50 kg in all. **Truth** (``--truth``): every link 20–30 % off the URDF: mass
  and rotational inertia about the centre of mass times ``1 ± U[0.2, 0.3]`` (random sign;
  ``"scale"``); ``"scale+com"`` also moves the centre of mass by 25 % of its distance from
  the link origin (at least 5 mm) in a random direction and turns the inertia by 0.3 rad
  about a random axis (consistent by construction).
* **Motion** (``simulate``): the feet stand on four ground points (Solo12's standing pose
  ``HFE = ±0.8``, ``KFE = ∓1.6``); the base sways (sums of sines: ±1–2 cm sideways,
  ±1.5–2 cm up and down, ±0.08–0.12 rad at 0.3–1.3 Hz) and, before each swing, shifts over
  the centroid of the three stance feet; the legs swing in turn (FL, FR, HL, HR, repeated),
  each swing a smooth loop of the foot (``C²`` at lift-off and touch-down: up 4–7 cm,
  ±3–6 cm along x and y, 0.45 s); four feet on the ground between swings, three during one.
  Stance legs follow the base by inverse kinematics (Newton on the foot positions), joint
  rates and accelerations from the contact constraints (``J_c v = ṗ_c``,
  ``J_c v̇ + J̇_c v = p̈_c``).
* **Forces**: ``τ_gen = pin.rnea(truth, q, v, v̇)``; the stance feet's forces are the
  weighted minimum-norm solution of the six base rows ``Σ_c J_{c,base}ᵀ f_c = τ_gen,base``
  (a foot's weight ramped to zero while the base shifts away from it, 0.4 s before it lifts,
  and back after it lands, so its force fades to zero; point contacts: zero moment at the
  foot frame);
  ``τ = (τ_gen − Σ_c J_cᵀ f_c)_joints``. The distribution is not constrained to friction
  cones (the identification does not use them); the script reports the smallest normal
  force.
* **Log** (1 kHz, 20 s, the ``.npz`` form of issue 35): joint positions read by 16-bit
  encoders (2π/65536 rad), torques with Gaussian noise 0.02 N·m, foot wrenches with
  0.2 N (force) and 0.005 N·m (moment) noise in the foot frame's axes, the base pose as
  simulated (``--pose-noise S`` adds S m and S rad of white noise: the sensitivity run), the
  contact schedule (True unless a foot is in the air).
* **Identification** (the library pieces the pipeline wires together): ``prepare_log``
  (zero-phase 4th-order Butterworth at ``LOWPASS`` Hz on joints, torques, wrenches and the
  base pose on SE(3)), the regressor and the friction columns (viscous, Coulomb, offset:
  the pipeline's default) at the full rate, ``floating_base_rows`` (filtered like
  ``parallel_filter``, decimated by ``DECIMATE``) with the wrenches (all 18 equations) or
  without them (``method="projection"``: the contact null space with the logged schedule),
  then
  ``fit_torques`` with the URDF as log-det prior and ``multiplicity`` (default weights
  otherwise). ``write_identified_urdf`` writes the fitted URDF.
* **Scores** on a **separate trajectory** (another seed: other sway, other swings): the fitted
  URDF loaded by Pinocchio with a free flyer, ``pin.rnea`` against the truth's,
  ``‖τ̂ − τ‖ / ‖τ‖`` over the base rows and over the joint rows; the total mass; per link the
  mass ratio fitted / true and the data share of its mass (``identifiability`` with the fit's
  weights; a mass's share is what the data alone determine: 0 for every leg link, whose
  mass regroups into its parent's, and the total mass's). Acceptance (issue 35): base rows
  within 2 %, joint rows within 5 %, total mass within 3 %, every link with mass data share
  ≥ 0.5 within 0.8–1.25× its true mass.

Run: ``python benchmarks/bench_floating_base.py [--seeds 0 1 2] [--out results.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
Q_STAND = np.array([0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6])
RATE = 1000.0
DURATION = 20.0
LOWPASS = 20.0
DECIMATE = 10
SWING = 0.45  # s in the air
RAMP = 0.1  # s of unloading before a swing and of reloading after it
SHIFT = 0.3  # s of base shift towards the stance feet before (and back after) a swing
TAU_NOISE = 0.02  # N·m
FORCE_NOISE = 0.2  # N
MOMENT_NOISE = 0.005  # N·m
ENCODER_BITS = 16
POS_NOISE = 0.0  # m (--pose-noise: the sensitivity run)
ROT_NOISE = 0.0  # rad
ACCEPT = {"base": 0.02, "joint": 0.05, "mass": 0.03, "ratio": (0.8, 1.25), "share": 0.5}


def robots_dir() -> Path:
    import importlib.metadata

    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            return Path(dist.locate_file(f)).parent / "robots"
    raise SystemExit("example-robot-data's robots folder not found")


def urdf_path() -> str:
    return str(robots_dir() / "solo_description/robots/solo12.urdf")


# ------------------------------------------------------------------------------ the truth
#: Truth variants: (CoM moved by this fraction of its distance from the link origin, at least
#: 5 mm when non-zero; rotational inertia turned by this angle, rad).
TRUTHS = {"scale": (0.0, 0.0), "scale+com": (0.25, 0.3)}


def true_inertias(pm, rng, truth: str = "scale"):
    """Every link 20–30 % off: ``pin.Inertia`` list for joints 1.. (consistent by construction).

    Mass and rotational inertia about the centre of mass times ``1 ± U[0.2, 0.3]`` (random
    sign); ``"scale+com"`` also moves the centre of mass by 25 % of its distance from the link
    origin (at least 5 mm) in a random direction and turns the inertia by 0.3 rad about a
    random axis.
    """
    import pinocchio as pin

    shift, angle = TRUTHS[truth]
    out = []
    for i in range(1, pm.njoints):
        I0 = pm.inertias[i]
        s = 1.0 + rng.choice([-1.0, 1.0]) * rng.uniform(0.2, 0.3)
        c0 = np.asarray(I0.lever)
        u = rng.normal(size=3)
        c = c0 + shift * max(np.linalg.norm(c0), 0.02) * u / np.linalg.norm(u)
        axis = rng.normal(size=3)
        Rz = pin.exp3(angle * axis / np.linalg.norm(axis))
        Ic = s * Rz @ np.asarray(I0.inertia) @ Rz.T
        out.append(pin.Inertia(s * I0.mass, c, Ic))
    return out


def pin_model(inertias=None):
    import pinocchio as pin

    pm = pin.buildModelFromUrdf(urdf_path(), pin.JointModelFreeFlyer())
    if inertias is not None:
        for i, I in enumerate(inertias, start=1):
            pm.inertias[i] = I
    return pm


# ------------------------------------------------------------------------------ the motion
def _schedule(seed: int):
    """Swing events: ``(leg, t_lift, Dx, Dy, H)``; the base-shift centres."""
    rng = np.random.default_rng(1000 + seed)
    period = 2 * SHIFT + 2 * RAMP + SWING + 0.05
    events = []
    t = 0.4
    k = 0
    while t + period < DURATION - 0.4:
        leg = k % 4
        t_lift = t + SHIFT + RAMP
        events.append(
            (leg, t_lift, rng.uniform(0.03, 0.06) * rng.choice([-1, 1]),
             rng.uniform(0.03, 0.06) * rng.choice([-1, 1]), rng.uniform(0.04, 0.07))
        )  # fmt: skip
        t += period
        k += 1
    sway = {
        "amp": rng.uniform(
            [0.01, 0.01, 0.015, 0.08, 0.08, 0.1], [0.02, 0.02, 0.02, 0.1, 0.1, 0.12]
        ),
        "freq": rng.uniform(0.3, 1.3, size=(6, 2)),
        "phase": rng.uniform(0, 2 * np.pi, size=(6, 2)),
    }
    return events, sway


def _designed(seed: int, feet0: np.ndarray, base0: np.ndarray):
    """JAX functions of ``t``: base position, rotation matrix, foot targets (world), weights."""
    import jax.numpy as jnp

    events, sway = _schedule(seed)
    centroid = feet0[:, :2].mean(axis=0)

    def smooth(x):  # C² step 0 → 1 on [0, 1]
        x = jnp.clip(x, 0.0, 1.0)
        return x**3 * (10 - 15 * x + 6 * x * x)

    def bump(x):  # C² bump on [0, 1], zero value, slope and curvature at both ends, peak 1
        x = jnp.clip(x, 0.0, 1.0)
        return 64 * x**3 * (1 - x) ** 3

    def sway6(t):
        a, f, ph = (jnp.asarray(sway[k]) for k in ("amp", "freq", "phase"))
        return a * 0.5 * jnp.sum(jnp.sin(2 * jnp.pi * f * t + ph), axis=1)

    def base_position(t):
        p = jnp.asarray(base0) + sway6(t)[:3]
        for leg, tl, *_ in events:
            w = smooth((t - (tl - RAMP - SHIFT)) / SHIFT) * (
                1 - smooth((t - (tl + SWING + RAMP)) / SHIFT)
            )
            others = np.delete(np.arange(4), leg)
            target = feet0[others, :2].mean(axis=0) - centroid
            p = p + w * jnp.concatenate([jnp.asarray(target), jnp.zeros(1)])
        return p

    def rotation(t):
        r, p_, y = sway6(t)[3:]
        cr, sr, cp, sp, cy, sy = (jnp.cos(r), jnp.sin(r), jnp.cos(p_), jnp.sin(p_),
                                  jnp.cos(y), jnp.sin(y))  # fmt: skip
        Rz = jnp.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1.0]])
        Ry = jnp.array([[cp, 0, sp], [0, 1.0, 0], [-sp, 0, cp]])
        Rx = jnp.array([[1.0, 0, 0], [0, cr, -sr], [0, sr, cr]])
        return Rz @ Ry @ Rx

    def feet(t):
        out = jnp.asarray(feet0)
        for leg, tl, dx, dy, h in events:
            x = (t - tl) / SWING
            b = bump(x)
            off = jnp.stack([dx * b * jnp.sin(2 * jnp.pi * x), dy * b * jnp.sin(jnp.pi * x), h * b])
            out = out.at[leg].add(off)
        return out

    def weights(t):
        w = jnp.ones(4)
        for leg, tl, *_ in events:
            down = 1 - smooth((t - (tl - RAMP - SHIFT)) / (RAMP + SHIFT))
            up = smooth((t - (tl + SWING)) / (RAMP + SHIFT))
            w = w.at[leg].set(w[leg] * jnp.where(t < tl + 0.5 * SWING, down, up))
        return w

    def in_air(t):
        a = np.zeros(4, bool)
        for leg, tl, *_ in events:
            a[leg] |= tl <= t <= tl + SWING
        return a

    return base_position, rotation, feet, weights, in_air


def simulate(seed: int, truth, duration: float = DURATION, rate: float = RATE):
    """Exact states and forces of the designed motion: dict of arrays (Pinocchio for dynamics)."""
    import jax
    import jax.numpy as jnp
    import pinocchio as pin

    jax.config.update("jax_enable_x64", True)
    pm = pin_model(truth)
    pd = pm.createData()
    fid = [pm.getFrameId(f) for f in FEET]
    # standing pose: base at the origin, level; feet at z = 0
    q0 = np.concatenate([np.zeros(3), [0, 0, 0, 1.0], Q_STAND])
    pin.framesForwardKinematics(pm, pd, q0)
    feet_b = np.array([pd.oMf[i].translation for i in fid])
    base0 = np.array([0.0, 0.0, -feet_b[:, 2].min()])
    feet0 = feet_b + base0
    feet0[:, 2] = 0.0
    base_position, rotation, feet, weights, in_air = _designed(seed, feet0, base0)

    def d012(f):
        d1 = jax.jacfwd(f)
        return jax.jit(jax.vmap(lambda t: (f(t), d1(t), jax.jacfwd(d1)(t))))

    t = np.arange(int(round(duration * rate))) / rate
    p, dp, ddp = (np.asarray(x) for x in d012(base_position)(jnp.asarray(t)))
    R, dR, ddR = (np.asarray(x) for x in d012(rotation)(jnp.asarray(t)))
    pf, dpf, ddpf = (np.asarray(x) for x in d012(feet)(jnp.asarray(t)))
    wts = np.asarray(jax.jit(jax.vmap(weights))(jnp.asarray(t)))
    air = np.array([in_air(tk) for tk in t])
    Rt = np.swapaxes(R, 1, 2)
    skew_w = Rt @ dR  # ω_b^
    dskew_w = np.swapaxes(dR, 1, 2) @ dR + Rt @ ddR
    omega = np.stack([skew_w[:, 2, 1], skew_w[:, 0, 2], skew_w[:, 1, 0]], 1)
    domega = np.stack([dskew_w[:, 2, 1], dskew_w[:, 0, 2], dskew_w[:, 1, 0]], 1)
    vlin = np.einsum("nij,nj->ni", Rt, dp)
    dvlin = np.einsum("nji,nj->ni", dR, dp) + np.einsum("nij,nj->ni", Rt, ddp)

    M = len(t)
    qj = Q_STAND.copy()
    Q = np.zeros((M, 19))
    V = np.zeros((M, 18))
    A = np.zeros((M, 18))
    TAU = np.zeros((M, 12))
    F = np.zeros((M, 4, 3))  # world-axis foot forces
    W = np.zeros((M, 4, 6))  # wrenches [n; f] in the foot frames' axes
    base_res = 0.0
    for k in range(M):
        quat = pin.Quaternion(R[k]).coeffs()  # x y z w
        # inverse kinematics of the four legs (Newton on the foot positions)
        for _ in range(8):
            q = np.concatenate([p[k], quat, qj])
            pin.framesForwardKinematics(pm, pd, q)
            err = np.concatenate([pf[k, c] - pd.oMf[i].translation for c, i in enumerate(fid)])
            if np.max(np.abs(err)) < 1e-13:
                break
            pin.computeJointJacobians(pm, pd, q)
            J = np.concatenate(
                [pin.getFrameJacobian(pm, pd, i, pin.LOCAL_WORLD_ALIGNED)[:3, 6:] for i in fid]
            )
            qj = qj + np.linalg.solve(J, err)
        q = np.concatenate([p[k], quat, qj])
        pin.computeJointJacobians(pm, pd, q)
        pin.framesForwardKinematics(pm, pd, q)
        Jf = np.concatenate(
            [pin.getFrameJacobian(pm, pd, i, pin.LOCAL_WORLD_ALIGNED)[:3] for i in fid]
        )  # (12, 18), Pinocchio v = [v_lin; ω; q̇]
        vb = np.concatenate([vlin[k], omega[k]])
        ab = np.concatenate([dvlin[k], domega[k]])
        dq = np.linalg.solve(Jf[:, 6:], dpf[k].reshape(-1) - Jf[:, :6] @ vb)
        v = np.concatenate([vb, dq])
        pin.forwardKinematics(pm, pd, q, v, np.concatenate([ab, np.zeros(12)]))
        acc0 = np.concatenate(
            [pin.getFrameClassicalAcceleration(pm, pd, i, pin.LOCAL_WORLD_ALIGNED).linear
             for i in fid]
        )  # fmt: skip
        ddq = np.linalg.solve(Jf[:, 6:], ddpf[k].reshape(-1) - acc0)
        a = np.concatenate([ab, ddq])
        tau_gen = pin.rnea(pm, pd, q, v, a)
        B = Jf[:, :6].T  # (6, 12): base rows of Σ Jᵀ f
        S = np.repeat(wts[k], 3)
        f = S * (B.T @ np.linalg.solve((B * S) @ B.T, tau_gen[:6]))
        base_res = max(base_res, float(np.max(np.abs(B @ f - tau_gen[:6]))))
        TAU[k] = tau_gen[6:] - Jf[:, 6:].T @ f
        F[k] = f.reshape(4, 3)
        for c, i in enumerate(fid):
            W[k, c, 3:] = pd.oMf[i].rotation.T @ F[k, c]
        Q[k] = q
        V[k] = v
        A[k] = a
    return {
        "t": t, "q_pin": Q, "v_pin": V, "a_pin": A, "tau": TAU, "forces": F, "wrenches": W,
        "in_air": air, "weights": wts, "base_residual": base_res, "pm": pm,
    }  # fmt: skip


def measured_log(sim, seed: int, with_wrenches: bool = True):
    """The ``RobotLog`` a robot would record: quantised encoders, noisy torques and wrenches."""
    from spatialjax.identification import RobotLog

    rng = np.random.default_rng(2000 + seed)
    Q = sim["q_pin"]
    M = len(sim["t"])
    step = 2 * np.pi / 2**ENCODER_BITS
    qj = np.round(Q[:, 7:] / step) * step
    tau = sim["tau"] + TAU_NOISE * rng.normal(size=sim["tau"].shape)
    pos = Q[:, :3] + POS_NOISE * rng.normal(size=(M, 3))
    quat = np.concatenate([Q[:, 6:7], Q[:, 3:6]], axis=1)  # x y z w -> w x y z
    dq = 0.5 * ROT_NOISE * rng.normal(size=(M, 3))  # small rotation noise, body frame
    quat = _quat_mul(quat, np.concatenate([np.ones((M, 1)), dq], axis=1))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    wr = sim["wrenches"].copy()
    wr[:, :, :3] += MOMENT_NOISE * rng.normal(size=(M, 4, 3))
    wr[:, :, 3:] += FORCE_NOISE * rng.normal(size=(M, 4, 3))
    pm = sim["pm"]
    return RobotLog(
        t=sim["t"],
        q=qj,
        tau=tau,
        joint_names=tuple(pm.names[i] for i in range(2, pm.njoints)),
        base_position=pos,
        base_quaternion=quat,
        contact_frames=FEET,
        contact_wrenches=wr if with_wrenches else None,
        contact=~sim["in_air"],
    )


def _quat_mul(a, b):
    wa, va, wb, vb = a[:, :1], a[:, 1:], b[:, :1], b[:, 1:]
    return np.concatenate(
        [wa * wb - np.sum(va * vb, 1, keepdims=True), wa * vb + wb * va + np.cross(va, vb)], 1
    )


# ------------------------------------------------------------------------------ identification
def identify(log, model, method: str, *, lowpass=LOWPASS, decimate=DECIMATE):
    """The library pieces in the pipeline's order; returns ``(result, rows, timings)``."""
    import jax
    import jax.numpy as jnp

    import spatialjax.multibody as mb
    from spatialjax.identification import fit_torques, floating_base_rows, prepare_log

    times = {}
    t0 = time.perf_counter()
    p = prepare_log(log, lowpass=lowpass)
    q, v, a = (jnp.asarray(x) for x in p.state())
    fm = mb.JointModel(("viscous", "coulomb", "offset"))
    reg = jax.jit(mb.joint_torque_regressor)
    chunk = 2048  # bounded memory: the regressor of a long log is large (samples × 18 × 130)
    Y = np.concatenate(
        [np.asarray(reg(model, q[i : i + chunk], v[i : i + chunk], a[i : i + chunk]))
         for i in range(0, len(q), chunk)]
    )  # fmt: skip
    E = np.asarray(fm.regressor(model, v, a))
    rows = floating_base_rows(model, p, Y, E, decimate=decimate, method=method)
    del Y, E
    times["rows_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = fit_torques(
        jnp.asarray(rows.Y),
        jnp.asarray(rows.measured),
        prior=model.inertia,
        extra=jnp.asarray(rows.extra),
        extra_nonnegative=fm.nonnegative(model),
        multiplicity=jnp.asarray(rows.multiplicity),
    )
    jax.block_until_ready(res.inertia.params)
    times["fit_s"] = time.perf_counter() - t0
    return res, rows, times


def evaluate(fitted_urdf: str, truth, sim_test) -> dict:
    """Pinocchio with a free flyer on the separate trajectory: base and joint rows, masses."""
    import pinocchio as pin

    pm_fit = pin.buildModelFromUrdf(fitted_urdf, pin.JointModelFreeFlyer())
    pm_nom = pin_model()
    pm_true = pin_model(truth)
    out = {}
    Q, V, A = sim_test["q_pin"], sim_test["v_pin"], sim_test["a_pin"]
    taus = {}
    for name, pm in (("true", pm_true), ("fit", pm_fit), ("urdf", pm_nom)):
        pd = pm.createData()
        taus[name] = np.array([pin.rnea(pm, pd, q, v, a) for q, v, a in zip(Q, V, A, strict=True)])
    ref = taus["true"]
    for name in ("fit", "urdf"):
        e = taus[name] - ref
        out[name] = {
            "base": float(np.linalg.norm(e[:, :6]) / np.linalg.norm(ref[:, :6])),
            "joint": float(np.linalg.norm(e[:, 6:]) / np.linalg.norm(ref[:, 6:])),
        }
    masses = {n: np.array([I.mass for I in pm.inertias[1:]]) for n, pm in
              (("true", pm_true), ("fit", pm_fit), ("urdf", pm_nom))}  # fmt: skip
    out["total_mass"] = {k: float(m.sum()) for k, m in masses.items()}
    out["mass_ratio"] = (masses["fit"] / masses["true"]).tolist()
    out["mass_ratio_urdf"] = (masses["urdf"] / masses["true"]).tolist()
    return out


def run(
    seed: int,
    *,
    truth_kind: str = "scale",
    test_seed: int | None = None,
    out_dir: str | None = None,
) -> dict:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    import spatialjax.multibody as mb
    from spatialjax.identification import identifiability, write_identified_urdf

    rng = np.random.default_rng(seed)
    pm_nom = pin_model()
    truth = true_inertias(pm_nom, rng, truth_kind)
    t0 = time.perf_counter()
    sim = simulate(seed, truth)
    sim_test = simulate(100 + seed if test_seed is None else test_seed, truth, duration=10.0)
    t_sim = time.perf_counter() - t0
    model = mb.Model.from_urdf(urdf_path(), floating_base=True, dtype="float64")
    body_names = model.body_names
    result = {
        "seed": seed,
        "truth": truth_kind,
        "pose_noise": POS_NOISE,
        "simulation_s": t_sim,
        "base_residual": sim["base_residual"],
        "min_normal_force": float(
            np.min(np.where(sim["weights"] > 0.5, sim["forces"][..., 2], np.inf))
        ),  # fmt: skip
        "samples": len(sim["t"]),
        "links": list(body_names),
        "true_masses": [float(I.mass) for I in truth],
    }
    tmp = Path(out_dir or tempfile.mkdtemp(prefix="floating-"))
    for method, with_w in (("wrenches", True), ("projection", False)):
        log = measured_log(sim, seed, with_wrenches=with_w)
        res, rows, times = identify(log, model, method)
        pi = np.asarray(res.inertia.params, np.float64).reshape(-1, 10)
        out = tmp / f"solo12_fitted_{method}_{seed}.urdf"
        write_identified_urdf(urdf_path(), model, pi, out, overwrite=True)
        ev = evaluate(str(out), truth, sim_test)
        w = np.asarray(rows.multiplicity) / np.asarray(res.noise_std) ** 2
        idf = identifiability(
            jnp.asarray(rows.Y),
            extra=jnp.asarray(rows.extra),
            weights=jnp.asarray(w),
            prior=model.inertia,
            gamma=float(res.gamma),
        )
        share = np.asarray(idf.data_share).reshape(-1)[: 10 * model.nbodies].reshape(-1, 10)[:, 0]
        ratio = np.array(ev["mass_ratio"])
        lo, hi = ACCEPT["ratio"]
        strong = share >= ACCEPT["share"]
        ev.update(
            {
                "rows_per_sample": {
                    "min": int(rows.rank.min()),
                    "max": int(rows.rank.max()),
                    "mean": float(rows.rank.mean()),
                },
                "samples_fitted": rows.n_samples,
                "status": str(res.status),
                "iterations": int(res.iterations),
                "mass_share": share.tolist(),
                "total_mass_share": float(idf.total_mass_share),
                "mass_ratio_ok": bool(np.all((ratio[strong] >= lo) & (ratio[strong] <= hi))),
                "total_mass_error": abs(ev["total_mass"]["fit"] / ev["total_mass"]["true"] - 1),
                "train_errors": rows.relative_errors(
                    pi, np.nan_to_num(np.asarray(res.extra, np.float64))
                ),
                "times": times,
            }
        )
        ev["accepted"] = bool(
            ev["fit"]["base"] <= ACCEPT["base"]
            and ev["fit"]["joint"] <= ACCEPT["joint"]
            and ev["total_mass_error"] <= ACCEPT["mass"]
            and ev["mass_ratio_ok"]
        )
        result[method] = ev
    return result


def _print(r: dict) -> None:
    print(f"seed {r['seed']}, truth {r['truth']}, pose noise {r['pose_noise']:g}: "
          f"{r['samples']} samples, simulation {r['simulation_s']:.1f} s, "
          f"base-row residual of the force distribution {r['base_residual']:.1e}, smallest "
          f"normal force {r['min_normal_force']:.2f} N")  # fmt: skip
    for m in ("wrenches", "projection"):
        e = r[m]
        print(
            f"  {m:10s} rows/sample {e['rows_per_sample']['min']}–{e['rows_per_sample']['max']}"
            f" (mean {e['rows_per_sample']['mean']:.2f}); separate trajectory: base rows "
            f"{100 * e['fit']['base']:.2f} % (URDF {100 * e['urdf']['base']:.2f} %), joint rows "
            f"{100 * e['fit']['joint']:.2f} % (URDF {100 * e['urdf']['joint']:.2f} %); total mass "
            f"{e['total_mass']['fit']:.4f} / {e['total_mass']['true']:.4f} kg "
            f"({100 * e['total_mass_error']:.2f} %, data share {e['total_mass_share']:.2f}); "
            f"fit {e['status']} in {e['iterations']} it, "
            f"{e['times']['fit_s']:.1f} s; accepted {e['accepted']}"
        )
        for b, (s, q) in enumerate(zip(e["mass_share"], e["mass_ratio"], strict=True)):
            flag = "" if s < ACCEPT["share"] else ("  ok" if 0.8 <= q <= 1.25 else "  OUT")
            print(f"      {r['links'][b]:14s} share {s:5.2f}  mass fit/true {q:6.3f}{flag}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--truth", choices=sorted(TRUTHS), nargs="+", default=["scale"])
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    ap.add_argument(
        "--pose-noise",
        type=float,
        default=0.0,
        help="base position (m) and orientation (rad) noise of the log (default 0: exact pose)",
    )
    args = ap.parse_args(argv)
    global POS_NOISE, ROT_NOISE
    POS_NOISE = ROT_NOISE = args.pose_noise
    import jax

    jax.config.update("jax_enable_x64", True)
    results = []
    for kind in args.truth:
        for s in args.seeds:
            r = run(s, truth_kind=kind)
            _print(r)
            results.append(r)
    meta = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "load_average": os.getloadavg(),
        "jax": jax.__version__,
        "settings": {
            "rate": RATE, "duration": DURATION, "lowpass": LOWPASS, "decimate": DECIMATE,
            "tau_noise": TAU_NOISE, "force_noise": FORCE_NOISE, "moment_noise": MOMENT_NOISE,
            "encoder_bits": ENCODER_BITS, "pose_noise": POS_NOISE,
        },
        "acceptance": ACCEPT,
    }  # fmt: skip
    print(f"load average {meta['load_average']}")
    if args.out:
        args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
