"""MuJoCo's system-identification toolbox (``mujoco.sysid``) on bench_joint_params.py's log.

Run by ``bench_joint_params.py`` as ``<venv>/bin/python mujoco_sysid_joint_params.py SPEC.json``
in a venv with ``pip install "mujoco[sysid]"`` (MuJoCo 4.0). SPEC holds the prior MJCF, the
log (``t, q, tau, dq``: 20-bit positions, noisy torques, velocities of a filtered
differentiation), the window length and count, and the iteration cap.

The problem given to the toolbox is the one spatialjax solves, in the toolbox's own terms:

* the prior file with one ``<motor>`` (gear 1) per joint and a ``jointpos`` sensor per
  joint, 1 ms RK4 (the simulator of the truth);
* parameters: each body's inertia in the toolbox's pseudo-inertia Cholesky
  parameterisation ``θ`` (``InertiaType.Pseudo``: ``model_modifier.pi_from_theta`` and
  ``theta_from_pseudoinertia``, with ``body_inertia_param``'s default bounds), started at
  the file's ``<inertial>`` (the toolbox's own ``Pseudo`` modifier re-infers each body's
  inertia from its geoms with ``inertiafromgeom="true"`` before applying ``θ``, which fails
  on these geom-less bodies: "mass and inertia of moving bodies must be larger than
  mjMINVAL"; the modifier here is the same arithmetic on the explicit inertial, written
  as principal moments and ``iquat``), and per
  joint ``armature``
  in ``[0, 1]``, ``damping`` in ``[0, 10]``, ``frictionloss`` in ``[0, 20]`` (started at
  0.01, 0.1, 0.1: the file says 0, the lower bound, which the toolbox warns against);
* data: ``n_windows`` windows of ``window_s`` spread evenly over the log, each an
  open-loop rollout of the measured torques from the logged ``q`` and velocity at its
  start, compared with the logged ``q`` (the whole log in windows costs ~80 rollouts per
  residual and 79 residuals per finite-difference Jacobian);
* ``sysid.optimize(..., optimizer="mujoco")``: MuJoCo's Gauss–Newton with a
  finite-difference Jacobian, at most ``max_iters`` iterations.

Prints one JSON line: ``wall_s``, ``iterations``, ``n_parameters``, ``n_windows``,
``objective`` (per iteration), and the fitted ``bodies`` and ``joints`` (full precision).
"""

from __future__ import annotations

import json
import sys
import time

import mujoco
import numpy as np
from mujoco import sysid


def _pseudo_param(body) -> sysid.Parameter:
    """``body_inertia_param(..., InertiaType.Pseudo)`` on the body's explicit inertial."""
    mm = sysid.model_modifier
    full = mm.inertia_to_fullinertia(np.asarray(body.iquat), np.asarray(body.inertia))
    m, c = float(body.mass), np.asarray(body.ipos, float)
    pi = np.concatenate([[m], m * c, (full - m * mm.skew(c) @ mm.skew(c)).reshape(-1)])
    theta = mm.theta_from_pseudoinertia(mm.pseudoinertia_from_pi(pi))
    lo, hi = theta.copy(), theta.copy()
    lo[0], hi[0] = theta[0] + 0.5 * np.log(0.1), theta[0] + 0.5 * np.log(10.0)  # mass x[0.1, 10]
    lo[1:4], hi[1:4] = theta[1:4] + 0.5 * np.log(0.5), theta[1:4] + 0.5 * np.log(2.0)  # stretch
    lo[4:], hi[4:] = theta[4:] - 0.5, theta[4:] + 0.5  # shear, CoM

    def modifier(spec, p, name=body.name):
        b = spec.body(name)
        q = mm.pi_from_theta(np.asarray(p.value))
        b.mass, b.ipos = q[0], q[1:4] / q[0]
        sk = mm.skew(np.asarray(b.ipos))
        full = q[4:].reshape(3, 3) + q[0] * sk @ sk  # about the CoM, body axes
        lam, R = np.linalg.eigh(0.5 * (full + full.T))
        if np.linalg.det(R) < 0:
            R[:, 0] = -R[:, 0]
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, R.reshape(-1))
        b.inertia, b.iquat = lam, quat  # (MuJoCo 4 refuses fullinertia with iquat NaN here)

    return sysid.Parameter(f"{body.name}_inertia", theta, lo, hi, modifier=modifier)


def main(path: str) -> None:
    spec_in = json.loads(open(path).read())
    data = np.load(spec_in["log"])
    t, q, tau, dq = data["t"], data["q"], data["tau"], data["dq"]
    spec = mujoco.MjSpec.from_file(spec_in["prior"])
    spec.option.timestep = 1e-3
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    joints = [j.name for j in spec.joints]
    for name in joints:
        a = spec.add_actuator()
        a.name, a.target, a.trntype = name + "_motor", name, mujoco.mjtTrn.mjTRN_JOINT
        a.gainprm[0] = 1.0
        a.ctrllimited = False
        s = spec.add_sensor()
        s.name, s.type = name + "_pos", mujoco.mjtSensor.mjSENS_JOINTPOS
        s.objtype, s.objname = mujoco.mjtObj.mjOBJ_JOINT, name
    model = spec.compile()

    params = sysid.ParameterDict()
    for b in spec.bodies[1:]:
        params.add(_pseudo_param(b))
    bounds = {"armature": (0.01, 1.0), "damping": (0.1, 10.0), "frictionloss": (0.1, 20.0)}
    for name in joints:
        for attr, (start, hi) in bounds.items():

            def modifier(s, p, n=name, a=attr):
                value = float(p.value[0])
                setattr(s.joint(n), a, [value, 0.0, 0.0] if a == "damping" else value)

            params.add(sysid.Parameter(f"{name}_{attr}", nominal=start, min_value=0.0,
                                       max_value=hi, modifier=modifier))  # fmt: skip

    w = int(round(spec_in["window_s"] / (t[1] - t[0])))
    k0 = int(spec_in.get("skip", 0))
    starts = list(range(k0, len(t) - k0 - w, w))
    n_windows = spec_in.get("n_windows")
    if n_windows and n_windows < len(starts):  # evenly spread over the log
        starts = [starts[i] for i in np.linspace(0, len(starts) - 1, n_windows).round().astype(int)]
    states, controls, sensors, names = [], [], [], []
    for s0 in starts:
        sl = slice(s0, s0 + w)
        states.append(sysid.create_initial_state(model, q[s0], dq[s0], np.zeros(0)))
        tw = t[sl] - t[s0]  # each rollout starts at time 0
        controls.append(sysid.TimeSeries(tw, tau[sl]))
        sensors.append(sysid.TimeSeries.from_names(tw, q[sl], model))
        names.append(f"w{s0}")
    ms = sysid.ModelSequences("ur5", spec, names, states, controls, sensors)
    residual_fn = sysid.build_residual_fn(models_sequences=[ms])
    t0 = time.perf_counter()
    opt_params, result = sysid.optimize(
        initial_params=params, residual_fn=residual_fn, optimizer="mujoco",
        max_iters=spec_in["max_iters"], verbose=True,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    fitted = sysid.apply_param_modifiers_spec(opt_params, spec)
    # the values as numbers (to_xml's 6 significant digits can break the triangle
    # inequality of a body at the edge of the consistent set)
    bodies = {b.name: {"mass": float(b.mass), "ipos": list(map(float, b.ipos)),
                       "inertia": list(map(float, b.inertia)),
                       "iquat": list(map(float, b.iquat))} for b in fitted.bodies[1:]}  # fmt: skip
    jointvals = {
        j.name: {"armature": float(j.armature), "damping": float(j.damping[0]),
                 "frictionloss": float(j.frictionloss)}
        for j in fitted.joints
    }  # fmt: skip
    obj = result.extras.get("objective", [])
    print(json.dumps({
        "wall_s": wall,
        "iterations": len(obj),
        "n_parameters": int(params.size),
        "n_windows": len(starts),
        "objective": [float(x) for x in obj],
        "bodies": bodies,
        "joints": jointvals,
    }))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
