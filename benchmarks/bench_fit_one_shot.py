"""One ``fit`` call in a fresh process: cold, then with a warm persistent compilation cache.

A user who calls ``fit`` once pays tracing, lowering and XLA compilation before
the solve. Each measurement here is a new Python process (``subprocess``) that
builds the reference problem of ``bench_identification.py`` (100 bodies,
float64) and times its first ``fit`` call (default solver), then a second
call (the compiled run):

* ``cold``: no persistent cache (``jax_enable_compilation_cache`` off);
* ``warm cache``: ``jax_compilation_cache_dir`` set to a directory that an
  earlier process filled (what the command-line tools and the demo do); the
  first call still traces and lowers, then loads the executables from disk.

Clarabel's summed solve times on the same bodies are printed by
``bench_identification.py`` (0.19-0.21 s on the development machine).

Example: ``python benchmarks/bench_fit_one_shot.py --runs 3``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import sys, time
cache = sys.argv[1]
import jax
jax.config.update("jax_enable_x64", True)
if cache:
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
else:
    jax.config.update("jax_enable_compilation_cache", False)
import jax.numpy as jnp
from bench_identification import GAMMA, make_problem
from spatialjax.identification import fit
P = make_problem(100, 0)
args = (jnp.asarray(P["Y"])[None], jnp.asarray(P["f"]))
kw = dict(weights=jnp.asarray(P["w"]), prior=P["prior"], gamma=jnp.asarray(GAMMA))
t0 = time.perf_counter(); jax.block_until_ready(fit(*args, **kw)); t1 = time.perf_counter()
jax.block_until_ready(fit(*args, **kw)); t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.5f}")
"""


def _child(cache: str) -> tuple[float, float]:
    here = Path(__file__).resolve().parent
    out = subprocess.run(
        [sys.executable, "-c", CHILD, cache], cwd=here, capture_output=True, text=True, check=True
    )
    first, second = (float(x) for x in out.stdout.split()[-2:])
    return first, second


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="processes per mode")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        _child(cache)  # fills the cache
        for mode, where in (("cold", ""), ("warm cache", cache)):
            for _ in range(a.runs):
                first, second = _child(where)
                print(f"{mode:10s} first fit call {first:6.2f} s, second {second * 1e3:6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
