"""Physically consistent identification: ``spatialjax.identification.fit`` vs cvxpy + Clarabel.

Reference problem: random bodies of 10 point masses each (total mass U[0.5, 5] kg split
by uniform random weights, points uniform in the 1 m cube [-0.5, 0.5]³ about the body frame
origin). Body twist ``v_i(t) = sin(t + iπ/3)`` and acceleration ``cos(t + iπ/3)`` on the 6 axes
of ``[ω; v]``, ``t = 0, 0.1, ..., < 2π`` (63 samples); the EVEN-indexed samples (every other one,
32) are the training set. Wrench noise σ = (0.02, 0.02, 0.03) N·m on the moments and
(1.2, 1.2, 0.5) N on the forces, weights ``1/σ²``, ``γ = 0.01``. Prior: a solid box of the
points' bounding box (``spatialjax.box``) centred at the bounding-box centre (moved there with a
``Plx`` translation) with the weighted least-squares mass.

Both solvers minimise, per body, the same convex problem

    F(π) = Σ w (Yπ − f)² + γ (tr(J0⁻¹ J) − log det J + log det J0 − 4),   J(π) ≻ 0,

and both solutions are scored with the same float64 NumPy evaluation of ``F``.

Clarabel (through cvxpy) gets a whitened problem: ``π = π0 + L⁻ᵀ x`` (π0: the prior) with
``L Lᵀ = 2RᵀR + γ ∇²(−log det J)|_{J0}`` (per-body Hessian at the prior),
``J`` congruence-scaled by the prior's Cholesky factor (``J' = L0⁻¹ J L0⁻ᵀ``, so ``J' = 1`` at
the prior), and the objective divided by ``F`` at the projected least-squares point. The
problem is parameterised (DPP) and built once; only ``problem.solve()`` is timed,
per body, summed over bodies.

``fit`` runs all bodies in one batched call, float64; compile time is measured
with ``jax.jit(...).lower(...).compile()`` and the run time is the median of 3 calls after it
(each waited for with ``block_until_ready``). Before that, "one-shot" times the first direct
``fit(...)`` call of the process (trace, compile and run: a user who calls ``fit`` once), to
compare with Clarabel's summed solve times.

Usage::

    python benchmarks/bench_identification.py                 # 100 bodies, CPU, ~1-3 min
    python benchmarks/bench_identification.py --bodies 10000  # GPU target (Clarabel on 200)
    python benchmarks/bench_identification.py --sample-sweep 32,320,3200,32000  # fit vs samples
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness.core import compile_jitted  # noqa: E402
from _harness.report import write_json_and_text  # noqa: E402

import spatialjax as sj  # noqa: E402
from spatialjax import _params  # noqa: E402
from spatialjax.identification import body_regressor, fit  # noqa: E402

SIGMA = np.array([0.02, 0.02, 0.03, 1.2, 1.2, 0.5])  # [n; f] noise std
GAMMA = 0.01
METHODS = ("interior_point",)  # fit's one solver (InteriorPoint()); a label in the tables


# ------------------------------------------------------------------ pseudo-inertia helpers (NumPy)
E_BASIS = _params.PSEUDO_INERTIA_BASIS  # (10, 4, 4): E_i = ∂J/∂π_i, the layout written once


def pseudo(pi: np.ndarray) -> np.ndarray:
    return np.einsum("...i,ijk->...jk", pi, E_BASIS)


def objective_np(pi, Y, f, w, J0, gamma):
    """``F(π)`` in float64 NumPy, evaluated directly on the samples; ``inf`` where J ⊁ 0."""
    r = np.einsum("nij,j->ni", Y, pi) - f
    data = float(np.sum(w * r * r))
    J = pseudo(pi)
    sign, logdet = np.linalg.slogdet(J)
    if sign <= 0 or np.linalg.eigvalsh(J)[0] <= 0:
        return np.inf
    _, logdet0 = np.linalg.slogdet(J0)
    reg = np.trace(np.linalg.solve(J0, J)) - logdet + logdet0 - 4.0
    return data + gamma * reg


# ------------------------------------------------------------------ problem generation
def geodesic_errors(pi: np.ndarray, J_true, idx=None) -> np.ndarray:
    """Geodesic distance of each estimate ``pi (k, 10)`` to the true pseudo-inertias.

    ``idx`` (``(k,)``) selects the bodies ``pi`` belongs to when it covers only
    some of them (Clarabel runs on at most ``--clarabel-max`` bodies); default:
    all, in order.
    """
    J = jnp.asarray(J_true) if idx is None else jnp.asarray(J_true)[np.asarray(idx)]
    if J.shape[0] != len(pi):
        raise ValueError(
            f"geodesic_errors: {len(pi)} estimates for {J.shape[0]} true bodies; pass idx"
        )
    return np.asarray(sj.geodesic_distance(jnp.asarray(pseudo(pi)), J))


def make_problem(n_bodies: int, seed: int, n_train: int | None = None):
    """The reference problem; ``n_train`` samples per body (default 32: ``t`` step 0.1).

    With ``n_train``, ``t`` samples the same period ``[0, 2π)`` with ``2 n_train``
    points (denser sampling of the same motion), every other one for training.
    """
    rng = np.random.default_rng(seed)
    total = rng.uniform(0.5, 5.0, n_bodies)
    wts = rng.uniform(0.0, 1.0, (n_bodies, 10))
    masses = total[:, None] * wts / wts.sum(-1, keepdims=True)
    pts = rng.uniform(-0.5, 0.5, (n_bodies, 10, 3))
    truth = sj.RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pts))
    pi_true = np.asarray(truth.params)

    if n_train is None:
        t = np.arange(0.0, 2.0 * np.pi, 0.1)  # 63 samples
    else:
        t = np.arange(2 * n_train) * (2.0 * np.pi / (2 * n_train))
    phase = t[:, None] + np.arange(6) * np.pi / 3.0
    v, a = np.sin(phase), np.cos(phase)
    Y_all = np.asarray(body_regressor(jnp.asarray(v), jnp.asarray(a)))  # (63, 6, 10)
    train = np.arange(0, t.size, 2)  # every other sample
    Y = Y_all[train]
    f_clean = np.einsum("nij,bj->bni", Y, pi_true)
    f = f_clean + rng.standard_normal(f_clean.shape) * SIGMA
    w = np.broadcast_to(1.0 / SIGMA**2, f.shape[1:]).copy()  # (N, 6)

    # weighted least squares (unconstrained)
    sw = np.sqrt(w)
    A = (Y * sw[..., None]).reshape(-1, 10)
    B = (f * sw).reshape(n_bodies, -1)
    pi_ls = np.linalg.lstsq(A, B.T, rcond=None)[0].T  # (B, 10)

    # prior: box of the bounding box, centred at its centre, least-squares mass
    lo, hi = pts.min(1), pts.max(1)
    centre, size = 0.5 * (lo + hi), hi - lo
    m_prior = np.maximum(pi_ls[:, 0], 1e-3)
    box_c = sj.box(jnp.asarray(m_prior), jnp.asarray(size))  # about the box centre
    X = sj.Plx(jnp.broadcast_to(jnp.eye(3), (n_bodies, 3, 3)), jnp.asarray(-centre))  # centre->body
    prior = box_c.transform(X)
    return dict(
        pi_true=pi_true, Y=Y, f=f, w=w, pi_ls=pi_ls, prior=prior, n_train=int(train.size),
        n_samples=int(t.size), m_clamped=int(np.sum(pi_ls[:, 0] < 1e-3)),
    )  # fmt: skip


# ------------------------------------------------------------------ fit
def time_fit(P, method: str, repeats: int = 3):
    Y = jnp.asarray(P["Y"])[None]
    f, w = jnp.asarray(P["f"]), jnp.asarray(P["w"])
    gamma = jnp.asarray(GAMMA)

    def run(Y, f, w, prior, gamma):
        return fit(Y, f, weights=w, prior=prior, gamma=gamma)

    # one-shot: a user's first direct call (trace, compile and run; no caller's jit)
    t0 = time.perf_counter()
    jax.block_until_ready(run(Y, f, w, P["prior"], gamma))
    t_once = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled = jax.jit(run).lower(Y, f, w, P["prior"], gamma).compile()
    t_compile = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = jax.block_until_ready(compiled(Y, f, w, P["prior"], gamma))
        times.append(time.perf_counter() - t0)
    return res, t_once, t_compile, statistics.median(times), times


def sample_sweep(nb: int, sizes, seed: int, repeats: int, say) -> list[dict]:
    """Compile and run time of ``fit`` against training samples per body.

    Weights are passed as ``1/σ²`` of shape ``(6,)``, broadcast against every
    sample (no tiled ``(N, 6)`` copy). The data enter once, through a QR
    reduction per body (``O(N)``); an iteration does not depend on ``N``.
    """
    w = jnp.asarray(1.0 / SIGMA**2)
    gamma = jnp.asarray(GAMMA)
    rows = []
    say(f"{'samples':>8}{'method':>14}{'compile s':>11}{'run ms':>9}{'µs/sample':>11}{'iters':>7}")
    for n in sizes:
        P = make_problem(nb, seed, n_train=n)
        Y, f = jnp.asarray(P["Y"]), jnp.asarray(P["f"])
        for method in METHODS:

            def run(Y, f, prior, method=method):
                return fit(Y, f, weights=w, prior=prior, gamma=gamma)

            c, tc = compile_jitted(run, (Y, f, P["prior"]))
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                res = jax.block_until_ready(c(Y, f, P["prior"]))
                times.append(time.perf_counter() - t0)
            tr = statistics.median(times)
            it = float(np.median(np.asarray(res.iterations)))
            conv = float(np.mean(np.asarray(res.converged)))
            rows.append(dict(samples=n, method=method, compile_s=tc, run_s=tr, run_times_s=times,
                             median_iterations=it, converged_fraction=conv))  # fmt: skip
            say(f"{n:>8}{method:>14}{tc:>11.2f}{1e3 * tr:>9.2f}{1e6 * tr / (n * nb):>11.4f}"
                f"{it:>7.0f}")  # fmt: skip
    return rows


# ------------------------------------------------------------------ cvxpy + Clarabel
def clarabel_solve(P, idx, pi_start):
    """Solve bodies ``idx`` one by one with one parameterised cvxpy problem; time ``solve()``."""
    import cvxpy as cp

    x = cp.Variable(10)
    tau = cp.Variable()
    A = cp.Parameter((10, 10))
    b = cp.Parameter(10)
    q = cp.Parameter(10)
    G = cp.Parameter((16, 10))
    c_reg = cp.Parameter(nonneg=True)
    Jp = cp.reshape(G @ x, (4, 4), order="C") + np.eye(4)
    Jp = 0.5 * (Jp + Jp.T)  # J' = L0⁻¹ J L0⁻ᵀ (symmetric by construction)
    obj = cp.sum_squares(A @ x - b) + q @ x - c_reg * tau
    prob = cp.Problem(cp.Minimize(obj), [tau <= cp.log_det(Jp), Jp >> 0])
    assert prob.is_dcp(dpp=True)

    Y, f, w = P["Y"], P["f"], P["w"]
    sw = np.sqrt(w)
    Aw = (Y * sw[..., None]).reshape(-1, 10)
    J0_all = np.asarray(P["prior"].pseudo_inertia())
    out = np.zeros((len(idx), 10))
    status, solve_times, iters = [], [], []
    for j, i in enumerate(idx):
        J0 = J0_all[i]
        L0 = np.linalg.cholesky(J0)
        L0i = np.linalg.inv(L0)
        J0i = np.linalg.inv(J0)
        k = np.einsum("jk,ikj->i", J0i, E_BASIS)  # tr(J0⁻¹ E_i)
        Hreg = np.einsum("ab,ibc,cd,jda->ij", J0i, E_BASIS, J0i, E_BASIS)
        H = 2.0 * Aw.T @ Aw + GAMMA * Hreg
        M = np.linalg.inv(np.linalg.cholesky(H)).T  # π = π0 + M x, Mᵀ H M = 1
        pi0 = np.asarray(P["prior"].params[i])  # centre: the prior (J' = 1 at x = 0)
        scale = objective_np(pi_start[i], Y, f[i], w, J0, GAMMA)  # F at projected LS
        bw = (f[i] * sw).reshape(-1)
        Ra = np.linalg.qr(np.concatenate([Aw, bw[:, None]], axis=1), mode="r")
        R, z = Ra[:10, :10], Ra[:10, 10]  # Σ w (Yπ − f)² = ‖Rπ − z‖² + const
        # data ‖Aw(π0 + M x) − bw‖², trace γ kᵀ(π0 + M x), J' = L0⁻¹ J(π) L0⁻ᵀ = 1 + Σ G_i x_i
        A.value = R @ M / np.sqrt(scale)
        b.value = (z - R @ pi0) / np.sqrt(scale)
        q.value = GAMMA * (k @ M) / scale
        Gfull = np.einsum("ab,ibc,dc->iad", L0i, E_BASIS, L0i)  # (10, 4, 4)
        G.value = np.einsum("iad,ij->adj", Gfull, M).reshape(16, 10)
        c_reg.value = GAMMA / scale
        t0 = time.perf_counter()
        prob.solve(solver=cp.CLARABEL, ignore_dpp=False)
        solve_times.append(time.perf_counter() - t0)
        status.append(prob.status)
        iters.append(prob.solver_stats.num_iters)
        out[j] = pi0 + M @ x.value
    return out, status, solve_times, iters


# ------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, default=100)
    ap.add_argument("--clarabel-max", type=int, default=200, help="Clarabel on at most this many")
    ap.add_argument("--clarabel-all", action="store_true", help="Clarabel on every body")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--name", default=None, help="file stem (default identification_<platform>)")
    ap.add_argument(
        "--sample-sweep",
        default=None,
        help="comma-separated training samples per body (e.g. 32,320,3200,32000): time fit "
        "against the number of samples instead (identification_samples_<platform>)",
    )
    args = ap.parse_args(argv)

    dev = jax.devices()[0]
    lines: list[str] = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    say(f"device: {dev} ({dev.platform}, {dev.device_kind}); jax {jax.__version__}; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")  # fmt: skip
    if args.sample_sweep:
        sizes = [int(x) for x in args.sample_sweep.split(",")]
        say(f"bodies: {args.bodies}, γ = {GAMMA}, weights 1/σ² of shape (6,) broadcast, float64; "
            f"compile = jit(...).lower().compile(), run = median of {args.repeats}")  # fmt: skip
        rows = sample_sweep(args.bodies, sizes, args.seed, args.repeats, say)
        name = args.name or f"identification_samples_{dev.platform}"
        write_json_and_text(args.out, name, {"bodies": args.bodies, "rows": rows}, lines, indent=2)
        return 0
    P = make_problem(args.bodies, args.seed)
    nb = args.bodies
    say(f"bodies: {nb}, samples: {P['n_samples']} (t in [0, 2π) step 0.1), training: every "
        f"other sample ({P['n_train']}), γ = {GAMMA}, weights 1/σ², float64")  # fmt: skip

    Y, f, w = P["Y"], P["f"], P["w"]
    J_true = sj.RigidBodyInertia(jnp.asarray(P["pi_true"])).pseudo_inertia()
    J0 = np.asarray(P["prior"].pseudo_inertia())

    def geo(pi, idx=None):
        return geodesic_errors(pi, J_true, idx)

    # least squares, projected where not PD
    ls_pd = np.linalg.eigvalsh(pseudo(P["pi_ls"]))[:, 0] > 0
    pi_ls_proj = np.asarray(
        sj.nearest_consistent(sj.RigidBodyInertia(jnp.asarray(P["pi_ls"]))).params
    )
    results: dict = {
        "device": str(dev), "platform": dev.platform, "bodies": nb, "gamma": GAMMA,
        "n_train": P["n_train"], "training": "every other sample (even indices)",
        "least_squares": {
            "pd_fraction": float(ls_pd.mean()),
            "median_geodesic_error": float(np.median(geo(pi_ls_proj))),
            "note": "nearest_consistent applied to the bodies whose LS J is not PD",
        },
    }  # fmt: skip

    fits = {}
    for method in METHODS:
        res, t1, tc, tr, all_t = time_fit(P, method, args.repeats)
        pi = np.asarray(res.inertia.params)
        F = np.array([objective_np(pi[i], Y, f[i], w, J0[i], GAMMA) for i in range(nb)])
        lam = np.linalg.eigvalsh(pseudo(pi))[:, 0]
        fits[method] = dict(pi=pi, F=F)
        results[method] = {
            "one_shot_s": t1, "compile_s": tc, "run_s": tr, "run_times_s": all_t,
            "converged_fraction": float(np.mean(np.asarray(res.converged))),
            "pd_fraction": float(np.mean(lam > 0)),
            "median_iterations": float(np.median(np.asarray(res.iterations))),
            "median_geodesic_error": float(np.median(geo(pi))),
            "median_condition_number": float(np.median(np.asarray(res.condition_number))),
        }  # fmt: skip

    # Clarabel
    n_cl = nb if args.clarabel_all else min(nb, args.clarabel_max)
    idx = np.arange(n_cl)
    cl = None
    if n_cl > 0:
        pi_c, status, st, iters = clarabel_solve(P, idx, pi_ls_proj)
        Fc = np.array([objective_np(pi_c[j], Y, f[i], w, J0[i], GAMMA) for j, i in enumerate(idx)])
        lam_c = np.linalg.eigvalsh(pseudo(pi_c))[:, 0]
        cl = dict(F=Fc)
        results["clarabel"] = {
            "bodies": int(n_cl), "total_solve_s": float(np.sum(st)),
            "median_solve_s": float(np.median(st)),
            "optimal_fraction": float(np.mean([s == "optimal" for s in status])),
            "statuses": sorted(set(status)), "median_iterations": float(np.median(iters)),
            "pd_fraction": float(np.mean(lam_c > 0)),
            "median_geodesic_error": float(np.median(geo(pi_c, idx))),
            "timed": "problem.solve() only (DPP problem built once, parameters set per body)",
        }  # fmt: skip
        for method in METHODS:
            gap = (fits[method]["F"][idx] - Fc) / np.abs(Fc)
            r = results[method]
            r["rel_gap_max"] = float(np.max(gap))
            r["rel_gap_min"] = float(np.min(gap))
            r["rel_gap_median"] = float(np.median(gap))
            r["gap_le_1e-6"] = int(np.sum(gap <= 1e-6))
            r["gap_bodies"] = int(n_cl)
            # Clarabel time scaled to all bodies (per-body sum) vs one batched fit call
            cl_all = results["clarabel"]["total_solve_s"] * nb / n_cl
            r["speedup_vs_clarabel"] = cl_all / r["run_s"]

    # ---- table
    say()
    hdr = f"{'solver':<22}{'one-shot s':>11}{'compile s':>10}{'run s':>10}{'ms/body':>9}{'PD %':>7}"
    hdr += f"{'conv %':>8}{'med geo err':>12}{'max gap':>11}{'gap≤1e-6':>10}{'clar/fit':>9}"
    say(hdr)
    say("-" * len(hdr))
    for method in METHODS:
        r = results[method]
        gap = f"{r['rel_gap_max']:.2e}" if cl else "-"
        cnt = f"{r['gap_le_1e-6']}/{r['gap_bodies']}" if cl else "-"
        sp = f"{r['speedup_vs_clarabel']:.1f}x" if cl else "-"
        say(f"{'fit ' + method:<22}{r['one_shot_s']:>11.2f}{r['compile_s']:>10.2f}"
            f"{r['run_s']:>10.4f}"
            f"{1e3 * r['run_s'] / nb:>9.3f}{100 * r['pd_fraction']:>7.1f}"
            f"{100 * r['converged_fraction']:>8.1f}{r['median_geodesic_error']:>12.4e}"
            f"{gap:>11}{cnt:>10}{sp:>9}")  # fmt: skip
    if cl:
        c = results["clarabel"]
        say(f"{'cvxpy+Clarabel':<22}{c['total_solve_s']:>11.2f}{'-':>10}{c['total_solve_s']:>10.4f}"
            f"{1e3 * c['total_solve_s'] / c['bodies']:>9.3f}{100 * c['pd_fraction']:>7.1f}"
            f"{100 * c['optimal_fraction']:>8.1f}{c['median_geodesic_error']:>12.4e}"
            f"{'ref':>11}{'-':>10}{'1.0x':>9}")  # fmt: skip
    ls = results["least_squares"]
    say(f"{'weighted LS (proj.)':<22}{'-':>11}{'-':>10}{'-':>10}{'-':>9}"
        f"{100 * ls['pd_fraction']:>7.1f}"
        f"{'-':>8}{ls['median_geodesic_error']:>12.4e}{'-':>11}{'-':>10}{'-':>9}")  # fmt: skip
    say()
    say(
        "gap = (F_fit − F_clarabel)/|F_clarabel|, both scored by the same float64 NumPy F "
        "(negative: fit is better)."
    )
    if cl:
        for method in METHODS:
            r = results[method]
            say(f"  {method}: gap min {r['rel_gap_min']:.2e}, median {r['rel_gap_median']:.2e}, "
                f"max {r['rel_gap_max']:.2e}")  # fmt: skip
        c = results["clarabel"]
        say(f"Clarabel: {c['bodies']} bodies solved one by one, statuses {c['statuses']}, "
            f"median {c['median_iterations']:.0f} IPM iterations, {c['timed']}.")  # fmt: skip
        if c["bodies"] < nb:
            say(f"  (clar/fit extrapolates Clarabel's per-body time to all {nb} bodies)")
    say("fit: one batched call for all bodies. one-shot = the first direct fit(...) call of the "
        "process (trace + compile + run, as a user calling it once; Clarabel: its summed "
        "solve() times); compile = jax.jit(fit wrapper).lower().compile() (fit under a caller's "
        f"jit); run = median of {args.repeats} compiled calls with block_until_ready. "
        "PD % = λ_min(J) > 0.")  # fmt: skip
    say(f"LS PD: {100 * ls['pd_fraction']:.1f} %; the others projected with nearest_consistent "
        "before the geodesic error.")  # fmt: skip
    say(f"median condition number of the whitened regressor: "
        f"{results[METHODS[0]]['median_condition_number']:.3e}")  # fmt: skip
    if P["m_clamped"]:
        say(f"note: {P['m_clamped']} bodies had LS mass < 1e-3 kg; prior mass clamped to 1e-3.")

    write_json_and_text(
        args.out, args.name or f"identification_{dev.platform}", results, lines, indent=2
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
