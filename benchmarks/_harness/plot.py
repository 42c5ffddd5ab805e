"""Throughput vs batch size (log-log) with the copy roofline, one panel per operation.

matplotlib is imported lazily (with the non-interactive Agg backend): it is
a benchmark extra, not a dependency of spatialjax.
"""

from __future__ import annotations

import math
from pathlib import Path

_STYLE = {"float32": "-", "float64": "--"}


def plot(data: dict, path: str | Path) -> Path:
    """Write the PNG for a benchmark result ``data`` (the JSON document) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = [op for op in dict.fromkeys(r["op"] for r in data["ops"])]
    panels = len(ops) + (1 if data.get("fk") else 0)
    cols = min(4, max(1, panels))
    rows = max(1, math.ceil(panels / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, name in zip(flat, ops, strict=False):
        _op_panel(ax, [r for r in data["ops"] if r["op"] == name and r.get("status") == "ok"])
        ax.set_title(name, fontsize=10)
    if data.get("fk"):
        _fk_panel(flat[len(ops)], [r for r in data["fk"] if r.get("status") == "ok"])
    for ax in flat[panels:]:
        ax.axis("off")
    handles, labels = {}, []
    for ax in flat[:panels]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=False):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    fig.legend([handles[k] for k in labels], labels, loc="lower center", ncol=4, fontsize=8)
    meta = data["meta"]
    fig.suptitle(
        f"spatialjax {meta['spatialjax']} on {meta['device']} (jax {meta['jax']}): "
        "throughput vs batch size",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.04 + 0.03 * math.ceil(len(labels) / 4), 1, 0.96))
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _series(ax, recs, key, label, **kw):
    pts = sorted((r["n"], r["n"] / r[key]) for r in recs if r.get(key))
    if pts:
        ax.plot(*zip(*pts, strict=False), label=label, **kw)


def _op_panel(ax, recs):
    for dtype, ls in _STYLE.items():
        sub = [r for r in recs if r["dtype"] == dtype]
        if not sub:
            continue
        _series(ax, sub, "time_s", f"spatialjax {dtype}", color="C0", ls=ls, marker="o", ms=3)
        _series(ax, sub, "copy_time_s", f"copy roofline {dtype}", color="0.35", ls=ls, lw=2.5)
        _series(ax, sub, "jaxlie_time_s", f"jaxlie {dtype}", color="C2", ls=ls, marker="^", ms=3)
        _series(ax, sub, "numpy_time_s", f"NumPy {dtype}", color="C1", ls=ls, marker="s", ms=3)
    pin = sorted({r["n"]: r for r in recs if r.get("pin_time_s")}.values(), key=lambda r: r["n"])
    exact = [(r["n"], r["n"] / r["pin_time_s"]) for r in pin if not r["pin_extrapolated"]]
    extra = [(r["n"], r["n"] / r["pin_time_s"]) for r in pin if r["pin_extrapolated"]]
    if exact:
        ax.plot(
            *zip(*exact, strict=False), color="C3", ls=":", marker="x", ms=4, label="Pinocchio loop"
        )
    if extra:
        ax.plot(
            *zip(*(exact[-1:] + extra), strict=False),
            color="C3",
            ls=":",
            marker="x",
            mfc="none",
            alpha=0.5,
            label="Pinocchio loop (extrapolated)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("batch size", fontsize=8)
    ax.set_ylabel("items / s", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, which="major", alpha=0.3)


def _fk_panel(ax, recs):
    batches = sorted({r["batch"] for r in recs})
    for i, batch in enumerate(batches):
        for dtype, ls in _STYLE.items():
            sub = sorted(
                (r for r in recs if r["batch"] == batch and r["dtype"] == dtype),
                key=lambda r: r["length"],
            )
            if not sub:
                continue
            x = [r["length"] for r in sub]
            ax.plot(
                x,
                [r["seq_time_s"] for r in sub],
                color=f"C{4 + 2 * i}",
                ls=ls,
                marker="o",
                ms=3,
                label=f"FK lax.scan batch={batch} {dtype}",
            )
            ax.plot(
                x,
                [r["assoc_time_s"] for r in sub],
                color=f"C{5 + 2 * i}",
                ls=ls,
                marker="D",
                ms=3,
                label=f"FK associative_scan batch={batch} {dtype}",
            )
            ax.plot(
                x,
                [r["copy_time_s"] for r in sub],
                color="0.35",
                ls=ls,
                lw=1,
                label=f"copy roofline {dtype}",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("forward kinematics chain (time)", fontsize=10)
    ax.set_xlabel("chain length", fontsize=8)
    ax.set_ylabel("seconds", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, which="major", alpha=0.3)
