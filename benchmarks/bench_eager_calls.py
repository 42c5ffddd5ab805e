"""Eager calls: first-call and per-call cost of public functions called without ``jit``.

A user who calls ``spatialjax.so3_log(R)`` or ``multibody.rnea(model, q, v, a)``
outside any ``jax.jit`` pays, per distinct shape and dtype, the compile of
what runs, and on every call the dispatch of what runs. A function whose
arithmetic is one jitted kernel behind its Python checks compiles one program
and dispatches one; written as plain ``jnp`` code it compiles and dispatches one
program per operation, and a ``lax.scan``/``fori_loop`` called eagerly is
re-traced and re-compiled on *every* call.

For each function this reports, on fixed inputs (8 items, or 100 states of a
3-link chain for the tree algorithms), in one process:

* ``first_ms``: the first call (tracing and compiling included);
* ``per_call_ms``: the median of ``--calls`` further calls;
* ``compiles``: XLA programs compiled by the second call (0 when nothing is
  re-compiled).

The persistent compilation cache is off, so ``first_ms`` is what a fresh
process pays. Example::

    PYTHONPATH=. python benchmarks/bench_eager_calls.py \
        --json benchmarks/results/eager_calls_cpu.json
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import statistics
import time
from collections.abc import Callable

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_enable_compilation_cache", False)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import spatialjax as sj  # noqa: E402
from spatialjax import identification as idn  # noqa: E402
from spatialjax import multibody as mb  # noqa: E402


class _Compiles(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record):
        if record.getMessage().startswith("Compiling "):
            self.count += 1


def _cases() -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(0)
    n = 8
    R = sj.rotz(jnp.asarray(rng.normal(size=n)))
    X = sj.Plx(R, jnp.asarray(rng.normal(size=(n, 3))))
    M = X.as_matrix()
    B = sj.box(jnp.asarray(rng.uniform(1, 2, n)), jnp.asarray(rng.uniform(0.1, 0.5, (n, 3))))
    bad = sj.RigidBodyInertia(B.params.at[:, 4].set(-1.0))
    v6 = jnp.asarray(rng.normal(size=(n, 6)))
    q4 = jnp.asarray(rng.normal(size=(n, 4)))
    chain = mb.chain_model(3, length=0.5)
    q, v, a = (jnp.asarray(rng.normal(size=(100, 3))) for _ in range(3))
    t = jnp.linspace(0.0, 2.0, 400)
    ab = jnp.asarray(rng.normal(size=(3, 4))) * 0.1
    return {
        "so3_log": lambda: sj.so3_log(R),
        "so3_exp": lambda: sj.so3_exp(v6[:, :3]),
        "quat_to_matrix": lambda: sj.quat_to_matrix(q4),
        "matrix_to_quat": lambda: sj.matrix_to_quat(R),
        "Plx.as_matrix": lambda: X.as_matrix(),
        "Plx.from_matrix": lambda: sj.Plx.from_matrix(M).E,
        "motion_cross": lambda: sj.motion_cross(v6, v6),
        "motion_cross (matrix)": lambda: sj.motion_cross(v6),
        "RigidBodyInertia.from_mass_com_inertia": lambda: (
            sj.RigidBodyInertia.from_mass_com_inertia(B.mass, B.com, B.inertia_com()).params
        ),
        "RigidBodyInertia.pseudo_inertia": lambda: B.pseudo_inertia(),
        "RigidBodyInertia.transform": lambda: B.transform(X).params,
        "parallel_axis": lambda: sj.parallel_axis(B.inertia_com(), B.mass, v6[:, :3]),
        "physical_consistency": lambda: sj.physical_consistency(B),
        "is_physically_consistent": lambda: sj.is_physically_consistent(B),
        "nearest_consistent": lambda: sj.nearest_consistent(bad).params,
        "geodesic_distance": lambda: sj.geodesic_distance(B, B),
        "vector_to_log_cholesky": lambda: sj.vector_to_log_cholesky(B.params),
        "log_cholesky_to_vector": lambda: sj.log_cholesky_to_vector(0.1 * v6.repeat(2, -1)[:, :10]),
        "ellipsoid_shell": lambda: sj.ellipsoid_shell(jnp.ones(n), jnp.ones((n, 3))).params,
        "multibody.forward_kinematics": lambda: mb.forward_kinematics(chain, q, v, a).poses.r,
        "multibody.rnea": lambda: mb.rnea(chain, q, v, a),
        "multibody.mass_matrix": lambda: mb.mass_matrix(chain, q),
        "multibody.joint_torque_regressor": lambda: mb.joint_torque_regressor(chain, q, v, a),
        "identification.fourier_trajectory": lambda: idn.fourier_trajectory(
            ab, ab, jnp.zeros(3), 0.5, t
        ),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=30, help="timed calls after the first")
    parser.add_argument("--json", help="write the rows to this file (refuses to overwrite)")
    parser.add_argument("--force", action="store_true", help="overwrite --json")
    args = parser.parse_args(argv)
    if args.json and not args.force:
        from pathlib import Path

        if Path(args.json).exists():
            parser.error(f"--json: {args.json} exists (use --force to replace it)")
    counter = _Compiles()
    logger = logging.getLogger("jax")
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    rows = []
    print(f"{'function':42s} {'first ms':>10s} {'per call ms':>12s} {'compiles':>9s}")
    with jax.log_compiles(True):
        for name, call in _cases().items():
            t0 = time.perf_counter()
            jax.block_until_ready(call())
            first = time.perf_counter() - t0
            counter.count = 0
            jax.block_until_ready(call())
            compiles = counter.count
            times = []
            for _ in range(args.calls):
                t0 = time.perf_counter()
                jax.block_until_ready(call())
                times.append(time.perf_counter() - t0)
            row = dict(
                function=name,
                first_ms=first * 1e3,
                per_call_ms=statistics.median(times) * 1e3,
                compiles_second_call=compiles,
            )
            rows.append(row)
            print(f"{name:42s} {row['first_ms']:10.1f} {row['per_call_ms']:12.3f} {compiles:9d}")
    if args.json:
        meta = dict(jax=jax.__version__, machine=platform.machine(), calls=args.calls)
        with open(args.json, "w") as fh:
            json.dump(dict(meta=meta, rows=rows), fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
