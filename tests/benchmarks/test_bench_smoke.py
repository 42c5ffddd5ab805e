"""The benchmark harness (``benchmarks/_harness``): baselines, the copy roofline, the CLI.

Timings are never asserted (the machine is shared); what is checked is that
each baseline computes the quantity it is compared with, that the copy
roofline moves the bytes it claims, and that a tiny run writes a complete
JSON document and a PNG.
"""

import argparse
import json
import subprocess
import sys

import jax
import numpy as np
import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))  # the harness is tooling of the checkout

from _harness import baselines as bl  # noqa: E402
from _harness import core as _core  # noqa: E402
from _harness import report as _report  # noqa: E402
from _harness.cli import add_arguments, run  # noqa: E402
from _harness.ops import OPS, fk_associative, fk_sequential, make_chain  # noqa: E402

TOL = {np.float32: 2e-4, np.float64: 1e-10}
# each operation jitted once: one compile per dtype, shared by the baseline tests below, instead
# of eager op-by-op dispatch (physical_consistency alone compiled ~65 primitives per dtype)
OP_JIT = {name: jax.jit(op.fn) for name, op in OPS.items()}


def _close(got, ref, dtype, what):
    assert len(got) == len(ref), what
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), atol=TOL[dtype], err_msg=what)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_baseline_matches(name, dtype, rng):
    args = OPS[name].make_inputs(rng, 5, dtype)
    ref = bl.canonical(name, OP_JIT[name](*args))
    got = bl.NUMPY[name](*args)
    assert all(np.asarray(g).dtype in (np.dtype(dtype), np.dtype(bool)) for g in got)
    _close(got, ref, dtype, f"numpy {name}")


@pytest.mark.parametrize("name", sorted(OPS))
def test_pinocchio_loop_matches(name, rng):
    pytest.importorskip("pinocchio")
    args = OPS[name].make_inputs(rng, 5, np.float64)
    loop, loop_args = bl.pin_setup(name, args)
    got = bl.pin_canonical(name, loop(*loop_args))
    _close(got, bl.canonical(name, OP_JIT[name](*args)), np.float64, f"pin {name}")


@pytest.mark.parametrize("name", sorted(bl.JAXLIE_LABELS))
def test_jaxlie_baseline_matches(name, rng):
    pytest.importorskip("jaxlie")
    args = OPS[name].make_inputs(rng, 5, np.float64)
    fn, jl_args = bl.jaxlie_setup(name, args, jax.devices()[0])
    got = bl.jaxlie_canonical(name, jax.jit(fn)(*jl_args))
    _close(got, bl.canonical(name, OP_JIT[name](*args)), np.float64, f"jaxlie {name}")


def test_jaxlie_has_no_inertia_ops(rng):
    args = OPS["inertia_transform"].make_inputs(rng, 2, np.float64)
    assert bl.jaxlie_setup("inertia_transform", args, jax.devices()[0]) is None


def test_fk_sequential_associative_numpy_and_pin_agree(rng):
    E, r = make_chain(rng, 9, 3, np.float64)
    seq, assoc = jax.jit(fk_sequential)(E, r), jax.jit(fk_associative)(E, r)
    np_E, np_r = bl.numpy_fk(E, r)
    # pose of link k in the base, written out for link 2 of chain 0
    want_r = r[0, 0] + E[0, 0] @ r[1, 0] + E[0, 0] @ E[1, 0] @ r[2, 0]
    np.testing.assert_allclose(seq.r[2, 0], want_r, atol=1e-12)
    np.testing.assert_allclose(seq.E[2, 0], E[0, 0] @ E[1, 0] @ E[2, 0], atol=1e-12)
    for other_E, other_r in ((assoc.E, assoc.r), (np_E, np_r)):
        np.testing.assert_allclose(other_E, seq.E, atol=1e-12)
        np.testing.assert_allclose(other_r, seq.r, atol=1e-12)
    pytest.importorskip("pinocchio")
    loop, args = bl.pin_fk_setup(E, r)
    poses = loop(*args)
    pin_r = np.stack([[M.translation for M in chain] for chain in poses], axis=1)
    np.testing.assert_allclose(pin_r, seq.r, atol=1e-12)


@pytest.mark.parametrize(("bytes_in", "bytes_out"), [(96, 48), (40, 40), (100, 36), (4, 28)])
def test_roofline_candidates_move_the_operations_traffic(bytes_in, bytes_out):
    """Each candidate reads and writes half of bytes_in + bytes_out (whole float32 elements)."""
    calls = _core.roofline_calls(bytes_in, bytes_out, np.float32, jax.devices()[0])
    n = -(-(bytes_in + bytes_out) // 8)
    assert set(calls) == {"jax_donated", "numpy_copyto"}  # CPU: both
    donated = calls["jax_donated"][0]
    before = donated.buf
    out = donated()
    assert before.is_deleted()  # the input buffer was donated: an in-place pass
    assert out.shape == (n,) and out.dtype == np.float32 and np.all(np.asarray(out) == 1.0)
    copyto, (dst, src) = calls["numpy_copyto"]
    src[:] = np.arange(n)
    copyto(dst, src)
    np.testing.assert_array_equal(dst, np.arange(n, dtype=np.float32))
    assert dst.nbytes == src.nbytes == 4 * n


def test_roofline_is_the_fastest_candidate():
    t = {"jax_donated": _core.Timing(2.0, 5), "numpy_copyto": _core.Timing(1.5, 5)}
    assert _core.pick_roofline(t) == ("numpy_copyto", 1.5)


def test_time_interleaved_reports_medians_and_compile_time():
    f, compile_s = _core.compile_jitted(lambda a: a * 2.0, (np.ones(10),))
    assert compile_s > 0
    (t,) = _core.time_interleaved([(f, (np.ones(10),))], min_time=0.0, min_repeats=4)
    assert t.repeats == 4 and t.median_s > 0


def _args(argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.slow  # the whole quick benchmark run, end to end
def test_cli_quick_run_writes_json_and_png(tmp_path, capsys):
    argv = ["--quick", "--sizes", "1,16", "--fk-lengths", "1,8", "--pin-items", "8"]
    argv += ["--dtype", "float32"]  # float64 paths: the baseline tests above
    # glibc's malloc settings are process-wide: leave this test worker's alone
    argv += ["--no-keep-buffers"]
    assert run(_args([*argv, "--out", str(tmp_path), "--name", "smoke"])) == 0
    text = capsys.readouterr().out
    device = str(jax.devices()[0].platform)
    assert f"spatialjax bench on {device}" in text and "targets" in text
    data = json.loads((tmp_path / "smoke.json").read_text())
    assert data["meta"]["platform"] == device and data["meta"]["keep_host_buffers"] is False
    ran = {(r["op"], r["dtype"], r["n"]) for r in data["ops"]}
    assert ran == {(op, "float32", n) for op in OPS for n in (1, 16)}
    for r in data["ops"]:
        assert r["status"] == "ok", r
        assert r["time_s"] > 0 and r["copy_time_s"] > 0 and r["compile_s"] > 0
        assert r["copy_ratio"] == pytest.approx(r["time_s"] / r["copy_time_s"])
        assert r["copy_time_s"] == min(r["copy_candidates_s"].values())
        assert r["copy_candidates_s"][r["copy_kind"]] == r["copy_time_s"]
        assert r["numpy_time_s"] > 0
        assert r["pin_extrapolated"] == (r["n"] > 8)
        assert r["bytes_in"] > 0 and r["bytes_out"] > 0
    compose = next(r for r in data["ops"] if r["op"] == "plx_compose" and r["dtype"] == "float32")
    assert (
        compose["bytes_in"] == 24 * 4 * compose["n"]
        and compose["bytes_out"] == 12 * 4 * compose["n"]
    )
    assert [(r["length"], r["batch"]) for r in data["fk"]] == [(1, 1), (8, 1)]
    assert all(r["seq_time_s"] > 0 and r["assoc_time_s"] > 0 for r in data["fk"])
    png = (tmp_path / "smoke.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_cli_rejects_unknown_op():
    with pytest.raises(SystemExit, match="unknown --ops"):
        run(_args(["--ops", "compose_everything"]))


@pytest.mark.slow  # a subprocess that imports and compiles afresh
def test_script_runs_standalone(tmp_path):
    """``benchmarks/bench_fk_chain.py`` is a thin wrapper over the same CLI."""
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "bench_fk_chain.py"),
        *("--quick", "--dtype", "float32", "--fk-lengths", "1,4", "--baselines", "none"),
        *("--out", str(tmp_path)),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "associative" in done.stdout
    data = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert [r["length"] for r in data["fk"]] == [1, 4] and data["ops"] == []


def _rec(op, n, time_s, copy, **kw):
    return {"op": op, "dtype": "float32", "n": n, "status": "ok", "time_s": time_s,
            "copy_time_s": copy, **kw}  # fmt: skip


def test_targets_are_evaluated_not_asserted():
    ops = [
        _rec("plx_compose", 10**6, 1.0, 0.6, vs_numpy=6.0, vs_pin=150.0, vs_jaxlie=0.5),
        _rec("plx_compose", 10**5, 1.0, 0.1),  # not the target size: ignored
    ]
    fk = [{"status": "ok", "dtype": "float32", "length": 256, "batch": 1, "assoc_speedup": 2.0}]
    cpu = _report.evaluate_targets("cpu", ops, fk)
    met = {t["target"].split(" (")[0]: t["met"] for t in cpu}
    assert met == {
        "plx_compose: fraction of copy roofline": True,  # 0.6 >= 0.5
        "plx_compose: speed-up vs vectorised NumPy": True,
        "plx_compose: speed-up vs Pinocchio loop": True,
        "plx_compose: speed-up vs jaxlie": False,
        "fk_chain batch=1 length=256: scan time / associative time": True,
    }
    assert "MISSED (by 2.00x)" in _report.targets_table(cpu)
    gpu = _report.evaluate_targets("gpu", [_rec("apply_force", 10**7, 1.0, 0.7)], [])
    assert [(t["goal"], t["met"]) for t in gpu] == [(0.8, False)]


def test_out_without_matplotlib_writes_json_and_says_what_to_install(tmp_path, capsys, monkeypatch):
    """Regression: ``--out DIR`` crashed with ModuleNotFoundError when matplotlib was missing."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    argv = ["--ops", "plx_compose", "--sizes", "1", "--dtype", "float32", "--baselines", "none"]
    argv += ["--min-time", "0", "--out", str(tmp_path), "--name", "nomatplotlib"]
    assert run(_args(argv)) == 0
    text = capsys.readouterr().out
    assert "matplotlib is not installed" in text and "spatialjax[bench]" in text
    assert (tmp_path / "nomatplotlib.json").exists()
    assert not (tmp_path / "nomatplotlib.png").exists()


def test_spatialjax_bench_forwards_to_the_harness_or_explains(monkeypatch, capsys):
    from spatialjax._cli import bench, main

    assert bench.harness_dir() == ROOT / "benchmarks"
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--help"])
    assert exc.value.code == 0
    assert "usage: spatialjax bench" in capsys.readouterr().out
    # an installed package (no benchmarks/ beside it) says what to do instead of crashing
    monkeypatch.setattr(bench, "harness_dir", lambda: None)
    assert main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "not part of the installed package" in err and "benchmarks/bench_primitives.py" in err


def test_identification_geodesic_errors_on_a_subset_of_bodies(rng):
    """Regression: ``bench_identification.py --bodies 1000`` crashed when Clarabel ran on fewer
    bodies (``--clarabel-max``): (200,) estimates were compared with (1000,) true bodies."""
    import bench_identification as bi
    from _harness.ops import pseudo_inertia_np, random_inertia_params

    pi = random_inertia_params(rng, 5)
    J = pseudo_inertia_np(pi)
    idx = np.array([1, 3])
    np.testing.assert_allclose(bi.geodesic_errors(pi[idx], J, idx), 0.0, atol=1e-6)
    far = bi.geodesic_errors(pi[[0, 2]], J, idx)  # other bodies than the true ones
    assert far.shape == (2,) and np.all(far > 1e-3)
    with pytest.raises(ValueError, match="2 estimates for 5 true bodies; pass idx"):
        bi.geodesic_errors(pi[idx], J)
