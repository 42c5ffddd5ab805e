"""``benchmarks/bench_xla_cpu_costs.py``: each variant computes what it names; the CLI
writes its table.

No timing is asserted (speed claims come from running the script).
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import jax
import numpy as np
import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))  # the harness is tooling of the checkout

import bench_xla_cpu_costs as bx  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402


def test_every_variant_computes_what_it_names():
    model = mb.chain_model(7, length=0.3)
    fams = bx.families(model)
    q = np.linspace(0.1, 0.7, 7)
    for k, (f, x) in fams["constants"].items():  # q plus the first 7 of each constant
        want = q + sum(np.random.default_rng(i).standard_normal(64)[:7] for i in range(int(k)))
        np.testing.assert_allclose(np.asarray(jax.jit(f)(*x)), want, rtol=0, atol=1e-12)
    for k, (f, x) in fams["outputs"].items():
        out = jax.jit(f)(*x)
        assert len(out) == int(k) and all(float(o[0]) == pytest.approx(q.sum() + 1) for o in out)
    for k, (f, x) in fams["kernels"].items():  # 2 n + 1 kernels: n products and n fusions
        assert bx.kernels(jax.jit(f).lower(*x).compile()) == int(k)
    for f, x in fams["model"].values():
        np.testing.assert_allclose(np.asarray(jax.jit(f)(*x)), q + 1.0, rtol=0, atol=1e-15)
    big = {k: np.asarray(jax.jit(f)(*x)) for k, (f, x) in fams["big-constant"].items()}
    assert all(np.isfinite(v).all() for v in big.values())
    executor = fams["executor"]
    small, large, small1, large1 = (np.asarray(jax.jit(f)(*x)) for f, x in executor.values())
    np.testing.assert_array_equal(small, large)  # the argument's size, nothing else
    np.testing.assert_array_equal(small1, large1)
    for f, x in executor.values():  # two chains of 8 products or one of 16: 33 kernels each
        assert bx.kernels(jax.jit(f).lower(*x).compile()) == 33


def test_command_line_writes_its_table(tmp_path):
    try:  # the Panda of example-robot-data (a cmeel package: its files)
        importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data models are not installed")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_xla_cpu_costs.py"), "--rounds", "1",
           "--calls", "2", "--out", str(tmp_path), "--name", "costs"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
    rows = json.loads((tmp_path / "costs.json").read_text())["rows"]
    families = {"constants", "outputs", "kernels", "big-constant", "executor", "model"}
    assert {r["family"] for r in rows} == families
    assert all(r["run_s"] > 0 for r in rows)
    assert (tmp_path / "costs.txt").read_text().count("\n| ") == len(rows) + 1
