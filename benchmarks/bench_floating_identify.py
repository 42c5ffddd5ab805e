"""Floating-base ``identify`` against least squares on a quadruped log (issue 41).

The log is made to issue 41's recipe with the simulator of ``bench_floating_base.py``
(Solo12 from example-robot-data on a free flyer, every link 20–30 % off its URDF; Pinocchio
for every force): base sway on four planted feet, each leg swung in turn, ``--duration``
seconds (default 25) at 1 kHz; Gaussian noise of ``--tau-noise`` N·m (0.02) on the joint
torques, ``--force-noise`` N (0.2) on the contact forces, 0.005 N·m on the contact moments,
0.1 mm on the base position, 2e-5 on each quaternion component (then normalised); joint
positions read by 20-bit encoders. It is scored on a **separate trajectory** (8 s, another
seed: other sway, other swings) by the generalized forces ``pin.rnea`` of the fitted
parameters against the truth's, ``‖τ̂ − τ‖ / ‖τ‖`` over the base rows and over the joint
rows.

Fits compared, with the log's contact wrenches (``wrenches``) and without them, only the
planted feet (``projection``: the contacts' null space):

* ``identify``: ``identify_robot(model, log)`` with its defaults (what ``spatialjax
  identify URDF LOG`` runs), scored through the URDF it writes.
* ``ols``: ordinary least squares on the equations of every sample (the ``6 + n``
  equations with the wrenches, the projected ones without), formed as the pipeline forms
  them (``floating_base_rows``: the regressor at the full rate, every column through the
  same zero-phase low-pass, ``--ref-lowpass`` Hz, then decimated by ``--ref-decimate``,
  which keeps the Nyquist frequency at least 2.5 times the cut-off: no information in the
  band is lost), the links' columns only: the simulation has no joint friction, so these
  references know the model's true structure (with the joint model's four kinds, offsets
  included, least squares is 2.3–5.1 % on the joint rows with the wrenches).
* ``wls``: the same, each equation weighted by its own noise level ``1 / σ̂_r²``
  (``σ̂_r²``: the mean squared residual of the ordinary fit on equation ``r``; Gautier's
  weighted least squares).
* ``ols10``: ordinary least squares on every tenth raw sample (no filter on the measured
  side; the states filtered as above), as a coarse reference.

Simulations are cached under ``--cache`` (they take minutes). Run:
``python benchmarks/bench_floating_identify.py [--seeds 0] [--out results.json]``; the sweep
(``--sweep``) varies the force and torque noise and the log length around the recipe.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_floating_base as fb  # noqa: E402

#: Issue 41's recipe.
RECIPE = {
    "duration": 25.0,
    "test_duration": 8.0,
    "tau_noise": 0.02,
    "force_noise": 0.2,
    "moment_noise": 0.005,
    "pos_noise": 1e-4,
    "quat_noise": 2e-5,
    "encoder_bits": 20,
}
REF_LOWPASS = 20.0
REF_DECIMATE = 10
TRUTH = "scale+com"
CACHE = Path(os.environ.get("SPATIALJAX_BENCH_CACHE", Path(tempfile.gettempdir()) / "sjx-floating"))
_SIM_KEYS = ("t", "q_pin", "v_pin", "a_pin", "tau", "forces", "wrenches", "in_air", "weights")


def truth_of(seed: int, kind: str = TRUTH):
    rng = np.random.default_rng(seed)
    return fb.true_inertias(fb.pin_model(), rng, kind)


def simulated(seed: int, truth, duration: float, *, cache: Path = CACHE, tag: str = TRUTH):
    """``fb.simulate`` of ``duration`` seconds, cached as ``.npz`` under ``cache``."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"sim_{tag}_{seed}_{duration:g}.npz"
    if path.exists():
        with np.load(path) as z:
            sim = {k: z[k] for k in _SIM_KEYS}
            sim["base_residual"] = float(z["base_residual"])
    else:
        old = fb.DURATION
        fb.DURATION = max(duration, 1.0)  # the swing schedule spans the whole log
        try:
            sim = fb.simulate(seed, truth, duration=duration)
        finally:
            fb.DURATION = old
        np.savez(path, base_residual=sim["base_residual"], **{k: sim[k] for k in _SIM_KEYS})
    sim["pm"] = fb.pin_model(truth)
    return sim


def measured_log(sim, seed: int, *, with_wrenches: bool = True, **noise):
    """The ``RobotLog`` a robot records, with the recipe's noise (``noise`` overrides it)."""
    from spatialjax.identification import RobotLog

    nz = {**RECIPE, **noise}
    rng = np.random.default_rng(3000 + seed)
    Q = sim["q_pin"]
    M = Q.shape[0]
    step = 2 * np.pi / 2 ** nz["encoder_bits"]
    qj = np.round(Q[:, 7:] / step) * step
    tau = sim["tau"] + nz["tau_noise"] * rng.normal(size=sim["tau"].shape)
    pos = Q[:, :3] + nz["pos_noise"] * rng.normal(size=(M, 3))
    quat = np.concatenate([Q[:, 6:7], Q[:, 3:6]], axis=1)  # x y z w -> w x y z
    quat = quat + nz["quat_noise"] * rng.normal(size=quat.shape)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    wr = np.array(sim["wrenches"], copy=True)
    wr[:, :, :3] += nz["moment_noise"] * rng.normal(size=(M, 4, 3))
    wr[:, :, 3:] += nz["force_noise"] * rng.normal(size=(M, 4, 3))
    pm = sim["pm"]
    return RobotLog(
        t=sim["t"],
        q=qj,
        tau=tau,
        joint_names=tuple(pm.names[i] for i in range(2, pm.njoints)),
        base_position=pos,
        base_quaternion=quat,
        contact_frames=fb.FEET,
        contact_wrenches=wr if with_wrenches else None,
        contact=~np.asarray(sim["in_air"], bool),
    )


# ------------------------------------------------------------------------------ scoring
def generalized_forces(pm, sim) -> np.ndarray:
    import pinocchio as pin

    pd = pm.createData()
    return np.array(
        [pin.rnea(pm, pd, q, v, a)
         for q, v, a in zip(sim["q_pin"], sim["v_pin"], sim["a_pin"], strict=True)]
    )  # fmt: skip


def pin_with_params(params: np.ndarray):
    """The URDF's Pinocchio model with the bodies' 10-vectors ``params (nb, 10)`` (model
    order = Pinocchio's joint order here: checked by ``check_body_order``)."""
    import pinocchio as pin

    pm = fb.pin_model()
    for i, p in enumerate(np.asarray(params, np.float64), start=1):
        pm.inertias[i] = pin.Inertia.FromDynamicParameters(p)
    return pm


def scores(tau_hat: np.ndarray, ref: np.ndarray) -> dict:
    e = tau_hat - ref
    return {
        "base": float(np.linalg.norm(e[:, :6]) / np.linalg.norm(ref[:, :6])),
        "joint": float(np.linalg.norm(e[:, 6:]) / np.linalg.norm(ref[:, 6:])),
    }


# ------------------------------------------------------------------------------ references
def reference_rows(model, log, method: str, lowpass: float, decimate: int):
    """``floating_base_rows`` of the whole log, the links' columns only (no joint model)."""

    import spatialjax.multibody as mb
    from spatialjax.identification import floating_base_rows, prepare_log
    from spatialjax.identification.pipeline.host_regressor import host_regressors

    p = prepare_log(log, lowpass=lowpass)
    q, v, a = p.state()
    Y, _ = host_regressors(model, q, v, a, np.array([0.0, 0.0, -9.81]), mb.JointModel())
    return floating_base_rows(model, p, Y, decimate=decimate, method=method)


def least_squares_refs(rows) -> dict:
    """``{"ols": params, "wls": params}`` on the rows' equations (parts added back)."""
    R = rows.n_dof
    K = len(rows.parts) // R

    def combine(x):  # (M, K R, c) -> (M, R, c)
        return x.reshape(x.shape[0], K, R, -1).sum(axis=1)

    Y = combine(rows.Y)
    b = rows.combine(rows.measured)
    mult = rows.multiplicity.reshape(rows.n_samples, K, R).sum(axis=1)  # equations per row
    X = Y if rows.extra is None else np.concatenate([Y, combine(rows.extra)], -1)
    nb10 = Y.shape[-1]

    def solve(w):
        Xw = (X * np.sqrt(w)[..., None]).reshape(-1, X.shape[-1])
        bw = (b * np.sqrt(w)).reshape(-1)
        d = np.linalg.norm(Xw, axis=0)
        d = np.where(d > 1e-12 * d.max(), d, np.inf)
        x = np.linalg.lstsq(Xw / d, bw, rcond=1e-10)[0] / d
        return x

    x_ols = solve(mult)
    res = b - X @ x_ols
    var = np.sum(mult * res**2, axis=0) / np.maximum(np.sum(mult, axis=0), 1e-300)
    x_wls = solve(mult / np.maximum(var, 1e-300)[None, :])
    return {"ols": x_ols[:nb10].reshape(-1, 10), "wls": x_wls[:nb10].reshape(-1, 10),
            "noise_std": np.sqrt(var).tolist()}  # fmt: skip


def ols_every_tenth(model, log, method: str, lowpass: float) -> np.ndarray:
    """Ordinary least squares on every tenth sample: the states filtered at the full rate,
    the measured side (torques, wrenches) as logged."""
    import dataclasses

    import spatialjax.multibody as mb
    from spatialjax.identification import floating_base_rows, prepare_log
    from spatialjax.identification.pipeline.host_regressor import host_regressors

    p = prepare_log(log, lowpass=lowpass)
    keep = slice(p.edge, p.q.shape[0] - p.edge, 10)
    fields = {k: np.asarray(getattr(p, k))[keep] for k in p.__dataclass_fields__
              if _per_sample(p, k)}  # fmt: skip
    p10 = dataclasses.replace(p, **fields, lowpass=None, rate=p.rate / 10, edge=0)
    q, v, a = p10.state()
    Y, _ = host_regressors(model, q, v, a, np.array([0.0, 0.0, -9.81]), mb.JointModel())
    rows = floating_base_rows(model, p10, Y, method=method)
    return least_squares_refs(rows)["ols"]


def _per_sample(p, k) -> bool:
    v = getattr(p, k)
    return isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == p.q.shape[0]


# ------------------------------------------------------------------------------ one run
def run_one(seed: int, *, method: str, duration: float = RECIPE["duration"], refs: bool = True,
            identify_kw: dict | None = None, noise: dict | None = None,
            truth_kind: str = TRUTH) -> dict:  # fmt: skip
    import jax

    jax.config.update("jax_enable_x64", True)
    import spatialjax.multibody as mb
    from spatialjax.identification import identify_robot

    truth = truth_of(seed, truth_kind)
    sim = simulated(seed, truth, max(duration, RECIPE["duration"]), tag=truth_kind)
    if duration < sim["t"][-1]:  # a shorter log: the first seconds of the recipe's
        n = int(round(duration * fb.RATE))
        sim = {k: (v[:n] if isinstance(v, np.ndarray) else v) for k, v in sim.items()}
    test = simulated(100 + seed, truth, RECIPE["test_duration"], tag=truth_kind)
    log = measured_log(sim, seed, with_wrenches=method == "wrenches", **(noise or {}))
    model = mb.Model.from_urdf(fb.urdf_path(), floating_base=True, dtype="float64")
    ref = generalized_forces(fb.pin_model(truth), test)
    out = {"seed": seed, "method": method, "duration": duration, "truth": truth_kind,
           "noise": {**RECIPE, **(noise or {})}}  # fmt: skip
    out["urdf"] = scores(generalized_forces(fb.pin_model(), test), ref)
    t0 = time.perf_counter()
    res = identify_robot(model, log, contact_method=method, **(identify_kw or {}))
    out["identify_s"] = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fitted.urdf"
        res.write(path, source=fb.urdf_path(), overwrite=True)
        import pinocchio as pin

        pm_fit = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    out["identify"] = scores(generalized_forces(pm_fit, test), ref)
    fit_pm = pin_with_params(res.params["fit"])
    out["identify_params"] = scores(generalized_forces(fit_pm, test), ref)
    out["identify_ls"] = scores(
        generalized_forces(pin_with_params(res.params["least_squares"]), test), ref
    )
    rep = res.report.to_dict()
    out["filter"] = {"lowpass": rep["filter"]["lowpass"], "decimate": rep["filter"]["decimate"]}
    out["gamma"] = rep["gamma"]
    out["errors"] = rep["errors"]
    out["effective_samples"] = rep["effective_samples"]
    out["correlation_time"] = rep["correlation_time"]
    out["noise_std"] = rep["noise_std"]
    out["total_mass"] = {"fit": float(np.sum(res.params["fit"][:, 0])),
                         "true": float(sum(I.mass for I in truth))}  # fmt: skip
    if refs:
        t0 = time.perf_counter()
        rows = reference_rows(model, log, method, REF_LOWPASS, REF_DECIMATE)
        ls = least_squares_refs(rows)
        for k in ("ols", "wls"):
            out[k] = scores(generalized_forces(pin_with_params(ls[k]), test), ref)
        out["ref_noise_std"] = ls["noise_std"]
        del rows
        out["ols10"] = scores(
            generalized_forces(pin_with_params(ols_every_tenth(model, log, method, REF_LOWPASS)),
                               test), ref)  # fmt: skip
        out["refs_s"] = time.perf_counter() - t0
    return out


def check_body_order() -> None:
    """The model's bodies are Pinocchio's joints 1.. in order (``pin_with_params``)."""
    import spatialjax.multibody as mb

    model = mb.Model.from_urdf(fb.urdf_path(), floating_base=True, dtype="float64")
    pm = fb.pin_model()
    prior = np.asarray(model.inertia.params, np.float64).reshape(-1, 10)
    ref = np.array([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    np.testing.assert_allclose(prior, ref, rtol=1e-9, atol=1e-12)


def _line(r: dict) -> str:
    def f(k):
        return f"{100 * r[k]['base']:.3f} / {100 * r[k]['joint']:.2f} %" if k in r else "-"

    return (
        f"seed {r['seed']} {r['method']:10s} {r['duration']:g} s tau {r['noise']['tau_noise']:g} "
        f"force {r['noise']['force_noise']:g}: filter {r['filter']['lowpass']:.3g} Hz / "
        f"{r['filter']['decimate']}; base / joint rows: URDF {f('urdf')}; identify "
        f"{f('identify')}; OLS/10 {f('ols10')}; OLS {f('ols')}; WLS {f('wls')}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--methods", nargs="+", default=["wrenches", "projection"])
    ap.add_argument("--sweep", action="store_true", help="vary force/torque noise and length")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-refs", action="store_true")
    args = ap.parse_args(argv)
    import jax

    jax.config.update("jax_enable_x64", True)
    check_body_order()
    cases: list[dict] = [{}]
    if args.sweep:  # the recipe first, then one setting varied at a time
        cases += [{"noise": {"tau_noise": t}} for t in (0.005, 0.05)]
        cases += [{"noise": {"force_noise": f}} for f in (0.05, 1.0)]
        cases += [{"duration": 10.0}]
    results = []
    for case in cases:
        for s in args.seeds:
            for m in args.methods:
                if m == "projection" and case.get("noise", {}).get("force_noise", 0.2) != 0.2:
                    continue  # no wrenches: their noise does not enter
                r = run_one(s, method=m, refs=not args.no_refs, **case)
                print(_line(r), flush=True)
                results.append(r)
                meta = {"python": sys.version.split()[0], "machine": platform.machine(),
                        "load_average": os.getloadavg(), "recipe": RECIPE, "truth": TRUTH,
                        "ref_lowpass": REF_LOWPASS, "ref_decimate": REF_DECIMATE}  # fmt: skip
                if args.out:  # after every run: a partial sweep is kept
                    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
