"""``benchmarks/bench_dynamics.py``: a tiny run of the driver and the spatialjax/Pinocchio adapters.

Timings are never asserted (the machine is shared). What is checked: the
driver writes its JSON, table and plot, and spatialjax's outputs, converted to
Pinocchio's conventions by its adapter, agree with Pinocchio (the agreement
check every peer goes through before it is timed). The peers' own venvs are
not needed: a missing one is reported, which is checked too.
"""

import importlib.metadata
import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

pytest.importorskip("pinocchio")
try:  # a cmeel package: its files, not an importable module
    importlib.metadata.distribution("example-robot-data")
except importlib.metadata.PackageNotFoundError:
    pytest.skip("example-robot-data models are not installed", allow_module_level=True)
pytest.importorskip("matplotlib")


@pytest.mark.slow
def test_quick_run_agrees_with_pinocchio(tmp_path):
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "bench_dynamics.py"),
        "--quick",
        "--robots=panda",
        "--peers=spatialjax,pinocchio,frax",
        "--ops=fk,rnea,jac",
        "--batches=1,3",
        f"--venvs={tmp_path / 'no-venvs'}",
        f"--out-dir={tmp_path}",
        f"--work-dir={tmp_path / 'work'}",
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, capture_output=True, timeout=600)
    doc = json.loads((tmp_path / "dynamics_peers_cpu_quick.json").read_text())
    by = {r["peer"]: r for r in doc["results"]}
    assert set(by["spatialjax"]["rel_error"]) == {"fk", "rnea", "jac"}
    assert all(e <= 1e-10 for e in by["spatialjax"]["rel_error"].values())
    rows = by["spatialjax"]["rows"]
    assert {(r["op"], r["batch"]) for r in rows if r["status"] == "ok"} == {
        (op, n) for op in ("fk", "rnea", "jac") for n in (1, 3)
    }
    assert all(r["run_s"] > 0 for r in rows)
    assert by["pinocchio"]["per_call_s"].keys() == {"fk", "rnea", "jac"}
    assert "not installed" in by["frax"]["error"]
    table = (tmp_path / "dynamics_peers_cpu_quick.txt").read_text()
    assert "| panda | jac | 3 |" in table and "n/a" in table
    assert (tmp_path / "dynamics_peers_cpu_quick.png").stat().st_size > 0
