"""``fit``'s damped Newton restart with and without optax's machinery, in one process.

With L-BFGS and ``restart_every=1`` (both methods' default), each restart of
``fit``'s loop is one step: optax's first L-BFGS iteration from the identity,
the method's step cut and optax's back-tracking line search.
``_optim.newton_step`` takes that step without optax; this script compiles
``fit`` both ways (the optax way by calling ``_optim.minimize`` with
options whose ``newton`` is false) and times the two programs interleaved, on the problem of
``bench_identification.py`` (float64, ``--seed`` 1 by default), for both
methods. Iteration counts and objectives are printed: they must agree.

Example: ``python benchmarks/bench_fit_newton_step.py --bodies 100,1000``.
"""

from __future__ import annotations

import argparse

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _harness.core import compile_jitted, time_interleaved  # noqa: E402
from bench_identification import GAMMA, make_problem  # noqa: E402

from spatialjax.identification import Barrier, LogCholesky, fit  # noqa: E402
from spatialjax.identification.fitting import barrier as _barrier  # noqa: E402
from spatialjax.identification.fitting import log_cholesky_method as _log_cholesky_method  # noqa: E402
from spatialjax.identification.fitting import optim as _optim  # noqa: E402


def _compile(solver, args, *, newton: bool):
    """``fit`` compiled with the solver's own ``minimize`` (newton) or forced through optax."""
    original = _optim.minimize

    def through_optax(value_fn, x0, make_opt, opts, **kw):
        # restart_every=1 through optax's chain: the same settings, newton off
        class Optax(type(opts)):
            newton = False

        return original(value_fn, x0, make_opt, Optax(*opts), **kw)

    chosen = original if newton else through_optax
    _barrier.minimize = _log_cholesky_method.minimize = chosen
    try:
        jax.clear_caches()  # fit's inner jit would reuse the other program otherwise

        def run(Y, f, w, prior, gamma):
            return fit(Y, f, weights=w, prior=prior, gamma=gamma, solver=solver)

        return compile_jitted(run, args)
    finally:
        _barrier.minimize = _log_cholesky_method.minimize = original


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", default="100,1000")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=2.0, help="seconds per timed program")
    a = ap.parse_args(argv)
    print(f"jax {jax.__version__}; {jax.devices()[0]}; float64")
    for n in (int(x) for x in a.bodies.split(",")):
        P = make_problem(n, a.seed)
        args = (jnp.asarray(P["Y"])[None], jnp.asarray(P["f"]), jnp.asarray(P["w"]))
        args += (P["prior"], jnp.asarray(GAMMA))
        for solver in (Barrier(), LogCholesky()):
            progs = {k: _compile(solver, args, newton=k == "newton") for k in ("newton", "optax")}
            calls = [(c, args) for c, _ in progs.values()]
            t = time_interleaved(calls, min_time=a.min_time, warmup_time=0.2)
            res = {k: c(*args) for k, (c, _) in progs.items()}
            it = {k: np.asarray(r.iterations) for k, r in res.items()}
            obj = {k: np.asarray(r.objective) for k, r in res.items()}
            gap = np.max(np.abs(obj["newton"] - obj["optax"]) / np.abs(obj["optax"]))
            (_, c_new), (_, c_opt) = progs["newton"], progs["optax"]
            print(
                f"{n:5d} bodies {type(solver).__name__:11s} run {t[0].median_s * 1e3:7.2f} ms "
                f"(optax {t[1].median_s * 1e3:7.2f} ms, {t[1].median_s / t[0].median_s:.2f}x) "
                f"compile {c_new:4.1f} s (optax {c_opt:4.1f} s); iterations equal: "
                f"{bool(np.array_equal(it['newton'], it['optax']))} (median "
                f"{np.median(it['newton']):.0f}); largest relative objective difference {gap:.1e}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
