"""Tables on stdout and the issue's targets, evaluated (reported, never asserted)."""

from __future__ import annotations

import json
import os

from .suite import fmt_time

#: Performance targets, checked on whatever the run measured.
CPU_SIZE, GPU_SIZE, FK_MIN_LENGTH = 10**6, 10**7, 256


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}x"


def op_table(records: list[dict]) -> str:
    """One row per (op, dtype, n): time, throughput, compile, copy ratio, speed-ups."""
    cols = (
        f"{'op':<24} {'dtype':<8} {'n':>9} {'time':>9} {'Mitem/s':>9} {'compile':>8} "
        f"{'copy':>9} {'by':>3} {'op/copy':>7} {'numpy':>9} {'vs np':>7} {'pin loop':>10} "
        f"{'vs pin':>8} {'jaxlie':>9} {'vs jl':>6}"
    )
    lines = [cols, "-" * len(cols)]
    for r in records:
        if r.get("status") != "ok":
            lines.append(f"{r['op']:<24} {r['dtype']:<8} {r['n']:>9} {r.get('status')}")
            continue
        pin = fmt_time(r.get("pin_time_s")) + ("*" if r.get("pin_extrapolated") else " ")
        lines.append(
            f"{r['op']:<24} {r['dtype']:<8} {r['n']:>9} {fmt_time(r['time_s']):>9} "
            f"{r['items_per_s'] / 1e6:>9.3g} {r['compile_s']:>7.2f}s "
            f"{fmt_time(r['copy_time_s']):>9} {_KIND.get(r.get('copy_kind'), '?'):>3} "
            f"{r['copy_ratio']:>7.2f} "
            f"{fmt_time(r.get('numpy_time_s')):>9} {_x(r.get('vs_numpy')):>7} {pin:>10} "
            f"{_x(r.get('vs_pin')):>8} {fmt_time(r.get('jaxlie_time_s')):>9} "
            f"{_x(r.get('vs_jaxlie')):>6}"
        )
    lines.append(
        "* Pinocchio loop measured on a subsample and extrapolated linearly "
        "(pin is float64 only; the same loop time is shown for both dtypes)."
    )
    lines.append(ROOFLINE_NOTE)
    return "\n".join(lines)


#: short names of the roofline candidates in the tables
_KIND = {"jax_donated": "jd", "numpy_copyto": "np"}
ROOFLINE_NOTE = (
    "copy: the fastest plain copy with the operation's memory traffic (reads and writes "
    "(bytes_in + bytes_out)/2 each);\n"
    "  by jd = jitted in-place x*1 with buffer donation, np = np.copyto into a preallocated "
    "buffer (CPU only)."
)


def fk_table(records: list[dict]) -> str:
    cols = (
        f"{'dtype':<8} {'batch':>6} {'length':>6} {'scan':>9} {'compile':>8} {'assoc':>9} "
        f"{'compile':>8} {'seq/assoc':>9} {'copy':>9} {'numpy':>9} {'pin loop':>10}"
    )
    lines = [cols, "-" * len(cols)]
    for r in records:
        if r.get("status") != "ok":
            lines.append(f"{r['dtype']:<8} {r['batch']:>6} {r['length']:>6} {r.get('status')}")
            continue
        pin = fmt_time(r.get("pin_time_s")) + ("*" if r.get("pin_extrapolated") else " ")
        lines.append(
            f"{r['dtype']:<8} {r['batch']:>6} {r['length']:>6} {fmt_time(r['seq_time_s']):>9} "
            f"{r['seq_compile_s']:>7.2f}s {fmt_time(r['assoc_time_s']):>9} "
            f"{r['assoc_compile_s']:>7.2f}s {r['assoc_speedup']:>8.2f}x "
            f"{fmt_time(r['copy_time_s']):>9} {fmt_time(r.get('numpy_time_s')):>9} {pin:>10}"
        )
    return "\n".join(lines)


def _target(
    what: str, value: float | None, goal: float, unit: str = "x", bound: float | None = None
) -> dict:
    """One target; ``bound`` is the best value a memory-bound op could reach in this run."""
    met = value is not None and value >= goal
    out = {"target": what, "value": value, "goal": goal, "unit": unit, "met": met}
    if bound is not None:
        out["bound_at_copy_speed"] = bound
    return out


def _bound(r: dict, key: str) -> float | None:
    """``baseline_time / copy_time``: the speed-up an operation running at the roofline gets."""
    return r[key] / r["copy_time_s"] if r.get(key) else None


def evaluate_targets(platform: str, ops: list[dict], fk: list[dict]) -> list[dict]:
    """The issue's targets on this run's numbers (empty where the run lacks the size)."""
    out = []
    gpu = platform in ("gpu", "cuda", "rocm")
    size = GPU_SIZE if gpu else CPU_SIZE
    for r in ops:
        if r.get("status") != "ok" or r["dtype"] != "float32" or r["n"] != size:
            continue
        name = r["op"]
        frac = r["copy_time_s"] / r["time_s"]
        if gpu:
            out.append(_target(f"{name}: fraction of copy roofline (GPU, 1e7, f32)", frac, 0.8, ""))
            continue
        out.append(_target(f"{name}: fraction of copy roofline (CPU, 1e6, f32)", frac, 0.5, ""))
        out.append(
            _target(
                f"{name}: speed-up vs vectorised NumPy",
                r.get("vs_numpy"),
                5.0,
                bound=_bound(r, "numpy_time_s"),
            )
        )
        out.append(
            _target(
                f"{name}: speed-up vs Pinocchio loop",
                r.get("vs_pin"),
                100.0,
                bound=_bound(r, "pin_time_s"),
            )
        )
        if "vs_jaxlie" in r:
            out.append(
                _target(
                    f"{name}: speed-up vs jaxlie",
                    r["vs_jaxlie"],
                    1.0,
                    bound=_bound(r, "jaxlie_time_s"),
                )
            )
    for r in fk:
        if r.get("status") == "ok" and r["length"] >= FK_MIN_LENGTH and r["dtype"] == "float32":
            where = "GPU target" if gpu else "GPU target, measured on CPU for information"
            out.append(
                _target(
                    f"fk_chain batch={r['batch']} length={r['length']}: scan time / "
                    f"associative time ({where})",
                    r["assoc_speedup"],
                    1.0,
                )
            )
    return out


def targets_table(targets: list[dict]) -> str:
    """The targets, with how far each is missed and, for speed-ups, the bound at copy speed."""
    if not targets:
        return "(no target applies to the sizes measured in this run)"
    lines = []
    for t in targets:
        v = "-" if t["value"] is None else f"{t['value']:.3g}{t['unit']}"
        verdict = "met" if t["met"] else "MISSED"
        if not t["met"] and t["value"]:
            verdict += f" (by {t['goal'] / t['value']:.2f}x)"
        if t.get("bound_at_copy_speed") is not None:
            b = t["bound_at_copy_speed"]
            verdict += f"; at copy speed {b:.3g}x" + (" < goal" if b < t["goal"] else "")
        lines.append(f"{t['target']:<86} {v:>9}  goal >= {t['goal']:g}{t['unit']}  {verdict}")
    lines.append(
        "'at copy speed': the speed-up an operation running exactly at the copy roofline "
        "would have\nin this run (baseline time / copy time); below the goal, the goal is out "
        "of reach of any\nimplementation that must read and write these bytes."
    )
    return "\n".join(lines)


def write_json_and_text(out_dir, stem: str, payload, lines: list[str], indent: int = 2) -> None:
    """``out_dir/stem.json`` (``payload``) and ``out_dir/stem.txt`` (``lines``), and say so."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, stem)
    with open(base + ".json", "w") as fh:
        json.dump(payload, fh, indent=indent)
    with open(base + ".txt", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {base}.json/.txt")
