"""Smoke test of ``benchmarks/bench_small_calls.py``: every case runs and the table is complete.

No timing is asserted (speed claims come from running the script); this checks
that each timed call computes what it names (the same values in every mode) and
that the command line writes the JSON it promises.
"""

from __future__ import annotations

import json
import sys

import jax
import numpy as np
import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))  # the harness is tooling of the checkout

import bench_small_calls as bsc  # noqa: E402


@pytest.mark.slow  # compile time; CI's second step
def test_every_mode_of_every_case_computes_the_same_values():
    for batch in [(), (16,)]:
        cases = bsc._cases(bsc._inputs(batch, np.float64))
        for name, modes in cases.items():
            outs = {mode: jax.tree_util.tree_leaves(fn()) for mode, fn in modes.items()}
            ref = outs["eager"]
            for mode, leaves in outs.items():
                assert len(leaves) == len(ref), (name, mode)
                for a, b in zip(leaves, ref, strict=True):
                    assert np.shape(a) == np.shape(b), (name, mode)
                    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-9)


def test_command_line_writes_a_complete_table(tmp_path):
    out = tmp_path / "small.json"
    argv = ["--batches", "1", "--dtypes", "float32", "--min-time", "0.001", "--repeat", "1"]
    argv += ["--ops", "Plx @ Plx,RigidBodyInertia.transform", "--json", str(out)]
    assert bsc.main(argv) == 0
    rows = json.loads(out.read_text())["rows"]
    got = {(r["op"], r["mode"]) for r in rows}
    want = {("x + 1", "jit"), ("x + 1", "eager")}
    for op in ("Plx @ Plx", "RigidBodyInertia.transform"):
        want |= {(op, "jit(arrays)"), (op, "jit(objects)"), (op, "eager")}
    assert got == want
    assert all(r["min_us"] > 0 and r["median_us"] >= r["min_us"] for r in rows)
