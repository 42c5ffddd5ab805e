"""``fit`` (one body per problem, 100 bodies) against cvxpy + Clarabel, each in a fresh process.

The single-body problem of ``spatialjax.identification.fit``, per body ``i``,

    F(π) = Σ_k w_k (Y_k π − f_k)² + γ (tr(J0⁻¹ J(π)) − log det J(π) + log det J0 − 4),  J(π) ≻ 0,

on the reference problem of ``bench_identification.py`` (``make_problem``: 100 random
point-mass bodies, 32 noisy samples of body wrenches through ``body_regressor``, weights
``1/σ²``, a box prior, ``γ = 0.01``), float64.

Each measurement is a new Python process (``subprocess``, no persistent compilation
cache), timed after the imports and the data:

* ``fit``: the first ``fit(...)`` call of the process (trace, compile and solve: what a
  user calling it once waits for), then a second call (the compiled program);
* ``cvxpy``: one parameterised cvxpy problem built with NumPy alone (``BodyProblem``: the
  pseudo-inertia written out from its definition ``J = [[½ tr(I) 1 − I, h], [hᵀ, m]]``, the
  data term reduced by NumPy's QR, ``−log det`` as cvxpy's ``log_det`` atom), its
  parameters set per body and solved by Clarabel with tight tolerances: the wall time of
  building it and solving all bodies (``first``), and of solving them all again
  (``second``).

Accuracy: both solutions are scored by the same float64 NumPy evaluation of ``F`` on the
samples; ``gap = (F_fit − F_cvxpy) / |F_cvxpy|`` (negative: ``fit`` is lower) and the
parameter difference ``‖π_fit − π_cvxpy‖ / ‖π_cvxpy‖``. Times are medians over
``--runs`` processes. ``--label`` names the engine in the report; the figures of an engine
that is no longer in the package were measured by this script at an earlier commit
(``benchmarks/results/fit_engine_*``).

Example: ``python benchmarks/bench_fit_engine.py --runs 3 --label interior_point``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

_PRELUDE = r"""
import json, sys, time
import jax
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_enable_compilation_cache", False)
import numpy as np
from bench_identification import GAMMA, make_problem
P = make_problem(int(sys.argv[2]), 0)
out_path = sys.argv[1]
"""

CHILD_FIT = (
    _PRELUDE
    + r"""
import jax.numpy as jnp
from spatialjax.identification import fit
args = (jnp.asarray(P["Y"]), jnp.asarray(P["f"]))
kw = dict(weights=jnp.asarray(P["w"]), prior=P["prior"], gamma=jnp.asarray(GAMMA))
c0, t0 = time.process_time(), time.perf_counter()
res = jax.block_until_ready(fit(*args, **kw))
c1, t1 = time.process_time(), time.perf_counter()
jax.block_until_ready(fit(*args, **kw)); t2 = time.perf_counter()
json.dump(dict(first=t1 - t0, first_cpu=c1 - c0, second=t2 - t1,
               pi=np.asarray(res.inertia.params).tolist(),
               iterations=np.asarray(res.iterations).tolist(),
               converged=np.asarray(res.converged).tolist()), open(out_path, "w"))
"""
)

CHILD_CVXPY = (
    _PRELUDE
    + r"""
from bench_fit_engine import BodyProblem
Y, f, w = P["Y"], P["f"], P["w"]
pi0 = np.asarray(P["prior"].params)
c0, t0 = time.process_time(), time.perf_counter()
prob = BodyProblem(GAMMA)
first = [prob.solve(Y, f[i], w, pi0[i]) for i in range(len(f))]
c1, t1 = time.process_time(), time.perf_counter()
[prob.solve(Y, f[i], w, pi0[i]) for i in range(len(f))]
t2 = time.perf_counter()
json.dump(dict(first=t1 - t0, first_cpu=c1 - c0, second=t2 - t1, pi=[x.tolist() for x, _ in first],
               status=[s for _, s in first]), open(out_path, "w"))
"""
)


# ------------------------------------------------------------------ the independent reference
def pseudo_np(pi):
    """``J(π) = [[½ tr(I) 1 − I, h], [hᵀ, m]]``, ``π = [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = np.moveaxis(np.asarray(pi, float), -1, 0)
    inertia = np.stack(
        [
            np.stack([ixx, ixy, ixz], -1),
            np.stack([ixy, iyy, iyz], -1),
            np.stack([ixz, iyz, izz], -1),
        ],
        -2,
    )
    tr = ixx + iyy + izz
    sigma = 0.5 * tr[..., None, None] * np.eye(3) - inertia
    h = np.stack([hx, hy, hz], -1)
    top = np.concatenate([sigma, h[..., :, None]], -1)
    bottom = np.concatenate([h[..., None, :], m[..., None, None]], -1)
    return np.concatenate([top, bottom], -2)


def objective_np(pi, Y, f, w, pi0, gamma):
    """``F(π)`` of one body in float64 NumPy on the samples; ``inf`` where ``J(π)`` is not PD."""
    r = np.einsum("nij,j->ni", Y, pi) - f
    J, J0 = pseudo_np(pi), pseudo_np(pi0)
    if np.linalg.eigvalsh(J)[0] <= 0:
        return np.inf
    reg = np.trace(np.linalg.solve(J0, J)) - np.linalg.slogdet(J)[1] + np.linalg.slogdet(J0)[1]
    return float(np.sum(w * r * r)) + gamma * (reg - 4.0)


class BodyProblem:
    """One body's problem as a parameterised (DPP) cvxpy model, built once, solved per body.

    The data term ``‖Rπ − z‖²`` (NumPy QR of ``[√w Y | √w f]``; the constant residual is
    dropped, which does not move the optimum), the regulariser
    ``γ (tr(J0⁻¹ J) − log det J)`` with ``J`` written out from ``π`` (``pseudo_np``) and
    cvxpy's ``log_det`` atom, ``J ⪰ 0``; solved by Clarabel.
    """

    def __init__(self, gamma: float):
        import cvxpy as cp

        self.x = x = cp.Variable(10)
        self.R, self.z = cp.Parameter((10, 10)), cp.Parameter(10)
        self.K = cp.Parameter((4, 4), symmetric=True)
        m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (x[i] for i in range(10))
        half = 0.5 * (ixx + iyy + izz)
        J = cp.bmat(
            [
                [half - ixx, -ixy, -ixz, hx],
                [-ixy, half - iyy, -iyz, hy],
                [-ixz, -iyz, half - izz, hz],
                [hx, hy, hz, m],
            ]
        )
        obj = cp.sum_squares(self.R @ x - self.z) + gamma * (cp.trace(self.K @ J) - cp.log_det(J))
        self.problem = cp.Problem(cp.Minimize(obj), [J >> 0])
        assert self.problem.is_dcp(dpp=True)

    def solve(self, Y, f, w, pi0):
        """``(π, cvxpy status)`` of one body: data ``Y (N, 6, 10)``, ``f (N, 6)``, weights."""
        import cvxpy as cp

        sw = np.sqrt(np.broadcast_to(w, f.shape))
        A = (Y * sw[..., None]).reshape(-1, 10)
        b = (f * sw).reshape(-1)
        Ra = np.linalg.qr(np.concatenate([A, b[:, None]], axis=1), mode="r")
        self.R.value, self.z.value = Ra[:10, :10], Ra[:10, 10]
        K = np.linalg.inv(pseudo_np(pi0))
        self.K.value = 0.5 * (K + K.T)
        self.problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11,
                           tol_feas=1e-11)  # fmt: skip
        return np.asarray(self.x.value), self.problem.status


# ------------------------------------------------------------------ parent
def _child(code: str, bodies: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
        subprocess.run(
            [sys.executable, "-c", code, out, str(bodies)], cwd=HERE, env=env, check=True
        )
        with open(out) as fh:
            return json.load(fh)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per solver")
    ap.add_argument("--bodies", type=int, default=100)
    ap.add_argument("--label", default="fit", help="name of fit's engine in the report")
    ap.add_argument("--no-cvxpy", action="store_true", help="time fit only (accuracy skipped)")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--name", default=None, help="file stem (default fit_engine_<label>_cpu)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench_identification import GAMMA, make_problem

    lines: list[str] = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    load_before = os.getloadavg()[0]
    fits = [_child(CHILD_FIT, a.bodies) for _ in range(a.runs)]
    cvx = [] if a.no_cvxpy else [_child(CHILD_CVXPY, a.bodies) for _ in range(a.runs)]
    say(f"# python benchmarks/bench_fit_engine.py {' '.join(argv or sys.argv[1:])}")
    say(f"{a.bodies} bodies, float64, γ = {GAMMA}; {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {load_before:.2f} -> {os.getloadavg()[0]:.2f}; median of {a.runs} fresh "
        "processes; CPU s: the process's CPU time (less sensitive to other load)")  # fmt: skip
    rows = {"fit " + a.label: fits, **({"cvxpy + Clarabel": cvx} if cvx else {})}
    summary: dict = {"bodies": a.bodies, "gamma": GAMMA, "label": a.label}
    say(f"{'solver':<24}{'first call s':>13}{'(CPU s)':>9}{'second call s':>15}   "
        "(all runs: first, wall)")  # fmt: skip
    for name, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("first", "first_cpu", "second")}
        summary[name] = {k + "_s": [r[k] for r in runs] for k in ("first", "first_cpu", "second")}
        say(f"{name:<24}{med['first']:>13.3f}{med['first_cpu']:>9.2f}{med['second']:>15.4f}   "
            + ", ".join(f"{r['first']:.2f}" for r in runs))  # fmt: skip
    last = fits[-1]
    say(f"fit: iterations median {np.median(last['iterations']):.0f}, max "
        f"{np.max(last['iterations'])}; converged {np.mean(last['converged']):.0%}")  # fmt: skip
    if cvx:
        P = make_problem(a.bodies, 0)
        pi0 = np.asarray(P["prior"].params)
        pf, pc = np.asarray(last["pi"]), np.asarray(cvx[-1]["pi"])

        def F(pi, i):
            return objective_np(pi, P["Y"], P["f"][i], P["w"], pi0[i], GAMMA)

        Ff = np.array([F(pf[i], i) for i in range(a.bodies)])
        Fc = np.array([F(pc[i], i) for i in range(a.bodies)])
        gap = (Ff - Fc) / np.abs(Fc)
        dpi = np.linalg.norm(pf - pc, axis=-1) / np.linalg.norm(pc, axis=-1)
        fit_s, cvx_s = summary["fit " + a.label], summary["cvxpy + Clarabel"]
        summary["accuracy"] = {
            "gap_min": float(gap.min()), "gap_median": float(np.median(gap)),
            "gap_max": float(gap.max()), "dpi_median": float(np.median(dpi)),
            "dpi_max": float(dpi.max()), "cvxpy_status": sorted(set(cvx[-1]["status"])),
        }  # fmt: skip
        say(f"gap (F_fit − F_cvxpy)/|F_cvxpy|: min {gap.min():.2e}, median {np.median(gap):.2e}, "
            f"max {gap.max():.2e}; ‖Δπ‖/‖π‖: median {np.median(dpi):.2e}, max {dpi.max():.2e}; "
            f"cvxpy status {sorted(set(cvx[-1]['status']))}")  # fmt: skip

        def ratio(key):
            return statistics.median(fit_s[key]) / statistics.median(cvx_s[key])

        summary["first_call_ratio"] = {"wall": ratio("first_s"), "cpu": ratio("first_cpu_s")}
        say(f"first call, fit / cvxpy: {ratio('first_s'):.2f}x wall, "
            f"{ratio('first_cpu_s'):.2f}x CPU time")  # fmt: skip
    name = a.name or f"fit_engine_{a.label}_cpu"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, name + ".json"), "w") as fh:
        json.dump(summary, fh, indent=2)
    with open(os.path.join(a.out, name + ".txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
