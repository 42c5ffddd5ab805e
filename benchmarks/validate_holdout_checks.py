"""The held-out check on logs whose end is at rest, flipped, or too short to train on (issue 40).

A two-link arm (the identification guide's: a vertical first axis, a horizontal second) is
simulated at 1 kHz for 20 s: a 5-harmonic 0.1 Hz Fourier excitation (``excitation_trajectory``)
whose amplitude ramps smoothly to zero over ``--ramp`` s and then rests at its centre for the
last ``--rest`` s (exact derivatives of the product), links 20 % off the URDF, viscous and
Coulomb friction, torque noise 0.01 N·m, 18-bit encoders read with 1e-5 rad of noise (so that
the velocity at rest is noise, as on hardware). ``identify_robot`` runs with its defaults
(``holdout=0.2``: the last 4 s, all at rest) and prints the held-out errors of the fit and the
prior, the samples left out of each joint's error and the warnings. Then three variants: the
same trajectory without the rest (a correct log: no warning expected), the correct log with one
joint's torque flipped in the held-out part only, and ``holdout=0.99`` on the correct log.

Usage::

    python benchmarks/validate_holdout_checks.py             # ~2 min on 2 busy cores
    PYTHONPATH=/work/main python benchmarks/validate_holdout_checks.py   # another checkout
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import jax
import numpy as np

import spatialjax.multibody as mb
from spatialjax import identification as ident

ARM = """<robot name="arm">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>
  <link name="l2"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
</robot>"""
FRICTION = np.array([[0.1, 0.5, 0.0], [0.05, 0.3, 0.0]])  # viscous, Coulomb, offset


def ramp_to_rest(t, q, dq, ddq, t_stop: float, ramp: float):
    """``c + s(t) (q − c)`` with ``s`` a raised cosine from 1 to 0 over ``[t_stop − ramp,
    t_stop]`` (0 after), ``c`` the trajectory's centre; exact first and second derivatives."""
    c = 0.0
    u = np.clip((t - (t_stop - ramp)) / ramp, 0.0, 1.0)[:, None]
    on = ((t > t_stop - ramp) & (t < t_stop))[:, None]
    s = 0.5 * (1 + np.cos(np.pi * u))
    ds = np.where(on, -0.5 * np.pi / ramp * np.sin(np.pi * u), 0.0)
    dds = np.where(on, -0.5 * (np.pi / ramp) ** 2 * np.cos(np.pi * u), 0.0)
    x = q - c
    return c + s * x, ds * x + s * dq, dds * x + 2 * ds * dq + s * ddq


def simulate(model, rest: float, ramp: float, seed: int):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    traj = ident.excitation_trajectory(2, duration=20.0, rate=1000.0, key=k1,
                                       q_limits=[[-2.0, 2.0]] * 2, dq_limits=2.0)  # fmt: skip
    t, q, dq, ddq = (np.asarray(x) for x in traj)
    if rest > 0:
        q, dq, ddq = ramp_to_rest(t, q, dq, ddq, 20.0 - rest, ramp)
    true = ident.perturb_inertia(model.inertia, 0.2, k2)
    return ident.simulate_log(model, t, q, dq, ddq, key=k3, inertia=true, friction=FRICTION,
                              torque_noise=0.01, encoder_resolution=2 * np.pi / 2**18,
                              position_noise=1e-5)  # fmt: skip


def show(name: str, res) -> None:
    r = res.report.to_dict()
    e = r["errors"]
    part = "holdout" if e["fit"]["holdout"] is not None else "train"
    fit, prior = e["fit"][part], e["prior"][part]
    left = fit.get("rest_left_out")

    def num(x) -> str:
        return "— (no sample counts)" if x is None else f"{x:.4g}"

    per_joint = {j: num(x) for j, x in fit["per_joint"].items()}
    print(
        f"\n== {name}: {r['samples']['train']} training samples; {part} error fit "
        f"{num(fit['overall'])}, prior {num(prior['overall'])}; per joint fit {per_joint}"
    )
    if left is not None:
        print(f"   samples at rest left out of each joint's error: "
              f"{ {j: f'{100 * x:.0f} %' for j, x in left.items()} }")  # fmt: skip
    for w in res.warnings:
        print(f"   warning: {w}")
    if not res.warnings:
        print("   (no warning)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rest", type=float, default=4.0, help="seconds at rest at the end")
    ap.add_argument("--ramp", type=float, default=1.0, help="seconds of the ramp to rest")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    jax.config.update("jax_enable_x64", True)
    from pathlib import Path
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as d:
        (Path(d) / "arm.urdf").write_text(ARM)
        model = mb.Model.from_urdf(Path(d) / "arm.urdf", dtype="float64")
    t0 = time.perf_counter()
    at_rest = simulate(model, a.rest, a.ramp, a.seed)
    moving = simulate(model, 0.0, a.ramp, a.seed)
    show(f"last {a.rest:g} s at rest, holdout 0.2", ident.identify_robot(model, at_rest))
    show("the same trajectory moving to the end, holdout 0.2", ident.identify_robot(model, moving))
    n_hold = int(round(0.2 * moving.n_samples))
    tau = moving.tau.copy()
    tau[-n_hold:, 1] *= -1.0
    flipped = dataclasses.replace(moving, tau=tau)
    show("moving, j2's torque flipped in the held-out part", ident.identify_robot(model, flipped))
    show("moving, holdout 0.99", ident.identify_robot(model, moving, holdout=0.99))
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
