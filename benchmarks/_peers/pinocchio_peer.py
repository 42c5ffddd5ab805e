"""Pinocchio, the reference: a Python loop over the states and its own per-call time.

Run by ``bench_dynamics.py`` in the project's venv (``pin``). Per operation:

* ``per_call_s``: the median over rounds of ``calls`` calls on one state, divided
  (the C++ time plus the binding's call overhead);
* ``run_s`` at batch ``n``: one Python loop over ``n`` states writing each result
  into a preallocated ``(n, ...)`` array, as a user collecting a batch must
  (``fk``: ``forwardKinematics`` only, the joint placements stay in ``data.oMi``);
  median of the rounds (one round at 1e5 states), a loop whose first pass exceeds
  the spec's ``time_cap_s`` is not repeated.

Operations: ``fk`` ``forwardKinematics``, ``rnea`` ``rnea``, ``mass`` ``crba`` (upper
triangle, as Pinocchio fills it), ``fd`` ``aba``, ``jac``
``computeFrameJacobian(..., LOCAL_WORLD_ALIGNED)`` (forward kinematics included).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402


def load(spec):
    if spec["floating"]:
        pm = pin.buildModelFromUrdf(spec["urdf"], pin.JointModelFreeFlyer())
    else:
        pm = pin.buildModelFromUrdf(spec["urdf"])
    return pm


def op_fns(pm, pd, fid):
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    return dict(
        fk=lambda q, v, a, t: pin.forwardKinematics(pm, pd, q),
        rnea=lambda q, v, a, t: pin.rnea(pm, pd, q, v, a),
        mass=lambda q, v, a, t: pin.crba(pm, pd, q),
        fd=lambda q, v, a, t: pin.aba(pm, pd, q, v, t),
        jac=lambda q, v, a, t: pin.computeFrameJacobian(pm, pd, q, fid, lwa),
    )


def main():
    spec = _common.read_spec()
    pm = load(spec)
    pd = pm.createData()
    fid = pm.getFrameId(spec["ee_frame"])
    fns = {k: f for k, f in op_fns(pm, pd, fid).items() if k in spec["ops"]}
    result = dict(
        peer="pinocchio",
        robot=spec["robot"],
        versions=dict(pinocchio=pin.__version__),
        notes=["fk: forwardKinematics (joint placements); mass: crba (upper triangle)"],
        rows=[],
    )
    calls = spec.get("pin_calls", 2000)
    q0, v0, a0, t0 = (x[0] for x in _common.random_states(spec, 1, seed=1))
    for name, f in fns.items():
        rounds = []
        for _ in range(7):
            s = time.perf_counter()
            for _ in range(calls):
                f(q0, v0, a0, t0)
            rounds.append((time.perf_counter() - s) / calls)
        result.setdefault("per_call_s", {})[name] = statistics.median(rounds)
    for n in spec["batches"]:
        Q, V, A, T = _common.random_states(spec, n, seed=1)
        for name, f in fns.items():
            first = f(Q[0], V[0], A[0], T[0])
            keep = None if first is None else np.empty((n,) + np.shape(first))

            def loop(f=f, Q=Q, V=V, A=A, T=T, keep=keep):
                s = time.perf_counter()
                if keep is None:
                    for k in range(Q.shape[0]):
                        f(Q[k], V[k], A[k], T[k])
                else:
                    for k in range(Q.shape[0]):
                        keep[k] = f(Q[k], V[k], A[k], T[k])
                return time.perf_counter() - s

            dt = loop()
            row = dict(op=name, batch=n)
            if dt > spec["time_cap_s"] * 5:
                row.update(status="skipped (time cap)", first_call_s=dt)
            else:
                times = [dt]
                while len(times) < 5 and sum(times) < max(spec["min_time"], 3 * dt):
                    times.append(loop())
                row.update(status="ok", run_s=statistics.median(times), repeats=len(times))
                print(
                    f"  pinocchio  {spec['robot']:6s} {name:5s} batch {n:>6d}: "
                    f"{row['run_s'] * 1e6:12.1f} us",
                    flush=True,
                )
            result["rows"].append(row)
    result["load_average_end"] = os.getloadavg()[0]
    Path(spec["out"]).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
