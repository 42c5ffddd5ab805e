"""``benchmarks/gpu.py --smoke``: the GPU run's code, on the CPU with tiny sizes, writes its JSON.

The GPU run itself needs a GPU; this runs every section of the same script (primitives
against the copy roofline, dynamics of the Panda and Talos, the Pinocchio loop, the
batched identification fit, float32 against float64) on a few items, so that the script
is known to work the day a GPU is at hand. No timing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT


@pytest.mark.slow  # compile time; CI's second step
def test_gpu_script_smoke_run_writes_every_section(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu.py"), "--smoke", "--out", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (path,) = tmp_path.glob("gpu_*_smoke.json")
    doc = json.loads(path.read_text())
    meta = doc["meta"]
    assert meta["smoke"] and meta["platform"] == "cpu" and meta["jax"] and meta["date"]
    assert doc["primitives"] and all("status" in r for r in doc["primitives"])
    assert any(r["status"] == "ok" and r["copy_ratio"] > 0 for r in doc["primitives"])
    # every dynamics row ran or says why not; example-robot-data is a test dependency
    assert doc["dynamics"] and all("status" in r for r in doc["dynamics"])
    assert {r["robot"] for r in doc["dynamics"] if r["status"] == "ok"} == {"panda", "talos"}
    assert all(r["per_state_s"] > 0 for r in doc["dynamics"] if r["status"] == "ok")
    assert doc["pinocchio"] and all(r["speedup"] for r in doc["pinocchio"])
    assert doc["identification"] and doc["identification"][0]["status"] == "ok"
    # float32 against float64 on the CPU: float32 rounding, far below TensorFloat-32's 1e-3
    assert {r["op"] for r in doc["agreement"]} == {"fd_aba", "fd_crba", "mass", "rnea"}
    assert all(r["status"] == "ok" and r["nonfinite"] == 0 for r in doc["agreement"])
    assert max(r["median_rel"] for r in doc["agreement"]) < 1e-4
    assert (tmp_path / path.name.replace(".json", ".png")).exists()
