"""The side of ``bench_dynamics.py`` that runs inside each peer's own virtual environment.

Every adapter (``benchmarks/_peers/<peer>.py``) is started by the driver as
``<venv>/bin/python benchmarks/_peers/<peer>.py SPEC.json`` and calls
:func:`run` with an object that knows the peer's conventions:

* ``inputs(Q, V, A, T)``: Pinocchio-convention states (``q = [p, xyzw, joints]``,
  ``v = [v_local; ω_local, joints]`` for a free flyer, joints in Pinocchio's order)
  to the peer's own NumPy arrays ``(q, v, a, tau)``, batched over the first axis;
* ``ops``: ``name -> f(q, v, a, tau)`` on *one* state in the peer's convention
  (``fk``, ``rnea``, ``mass``, ``fd``, ``jac``); batches are ``jax.vmap`` of it, or the
  peer's ``batched_ops[name]`` (a natively batched form) where it has one; batch 1 is
  the function itself (what a controller calls);
* ``to_pin(name, out, Q, V)``: the batched outputs back to Pinocchio's convention
  for the agreement check (``fk``: the end-effector frame's 4x4 world pose; ``jac``:
  its ``LOCAL_WORLD_ALIGNED`` Jacobian, rows ``[v; ω]``); an optional ``check_ops``
  dict replaces an operation for the check only (``fk`` of the end-effector frame).

Timing reuses the harness (``_harness/core.py``, loaded by file so that this runs
without spatialjax installed): each function compiled apart
(``compile_jitted``), the five operations of one batch size timed interleaved
(``time_interleaved``, medians). A peer whose first call of an operation takes
longer than the spec's ``time_cap_s`` is not repeated: that row reads
``skipped (time cap)``. Results go to the spec's ``out`` JSON (and the
check outputs to ``check_out``, an ``.npz``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

OPS = ("fk", "rnea", "mass", "fd", "jac")
HERE = Path(__file__).resolve().parent


def _load_core():
    spec = importlib.util.spec_from_file_location(
        "_bench_core", HERE.parent / "_harness" / "core.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def read_spec() -> dict:
    return json.loads(Path(sys.argv[1]).read_text())


def random_states(spec: dict, n: int, seed: int):
    """``n`` random states in Pinocchio's convention (the same numbers in every venv)."""
    nq, nv, fb = spec["nq_pin"], spec["nv"], spec["floating"]
    rng = np.random.default_rng(seed)
    Q = rng.uniform(-np.pi, np.pi, (n, nq))
    if fb:
        Q[:, :3] = rng.uniform(-1, 1, (n, 3))
        quat = rng.standard_normal((n, 4))
        Q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)  # xyzw
    V = rng.standard_normal((n, nv))
    A = rng.standard_normal((n, nv))
    T = 10.0 * rng.standard_normal((n, nv))
    return Q, V, A, T


def quat_xyzw_matrix(qxyzw):
    x, y, z, w = (qxyzw[..., i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


# --- free flyer with MuJoCo's velocity convention (v = [v_world; ω_local]): MJX, frax
def mujoco_free_inputs(Q, V, A, T):
    """Pinocchio's free-flyer ``(q, v, a, tau)`` to MuJoCo's (``v_lin`` world, ``ω`` local).

    ``q``: ``[p, xyzw]`` -> ``[p, wxyz]``. ``v_world = R v_local``; its derivative is
    ``R (a_local + ω × v_local)`` (Pinocchio's ``a`` is the derivative of the local velocity);
    the force on the base's linear coordinates ``R f_local`` (``tau_pin = Tᵀ tau_mj``).
    """
    R = quat_xyzw_matrix(Q[:, 3:7])
    q = np.concatenate([Q[:, :3], Q[:, [6, 3, 4, 5]], Q[:, 7:]], axis=1)
    vl, w = V[:, :3], V[:, 3:6]
    v = V.copy()
    v[:, :3] = np.einsum("nij,nj->ni", R, vl)
    a = A.copy()
    a[:, :3] = np.einsum("nij,nj->ni", R, A[:, :3] + np.cross(w, vl))
    t = T.copy()
    t[:, :3] = np.einsum("nij,nj->ni", R, T[:, :3])
    return q, v, a, t


def mujoco_free_to_pin(name, out, Q, V):
    """Outputs in MuJoCo's free-flyer velocity coordinates back to Pinocchio's.

    With ``v_mj = T v_pin``, ``T = blockdiag(R, I)``: ``tau_pin = Tᵀ tau_mj``,
    ``M_pin = Tᵀ M_mj T``, ``J_pin = J_mj T``, ``a_pin = T⁻¹ a_mj − [ω × v_local; 0]``.
    """
    R = quat_xyzw_matrix(Q[:, 3:7])
    if name == "rnea":
        out = out.copy()
        out[:, :3] = np.einsum("nji,nj->ni", R, out[:, :3])
    elif name == "mass":
        out = out.copy()
        out[:, :3, :] = np.einsum("nji,njk->nik", R, out[:, :3, :])
        out[:, :, :3] = np.einsum("nkj,nji->nki", out[:, :, :3], R)
    elif name == "jac":
        out = out.copy()
        out[:, :, :3] = np.einsum("nkj,nji->nki", out[:, :, :3], R)
    elif name == "fd":
        out = out.copy()
        vl, w = V[:, :3], V[:, 3:6]
        out[:, :3] = np.einsum("nji,nj->ni", R, out[:, :3]) - np.cross(w, vl)
    return out


def run(peer, spec: dict) -> int:
    """Check, then time, ``peer``'s operations; write the spec's ``out`` JSON."""
    import jax

    core = _load_core()
    if spec.get("keep_buffers", True):
        core.keep_host_buffers()
    result = dict(
        peer=spec["peer"],
        robot=spec["robot"],
        versions=peer.versions,
        jax=jax.__version__,
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        x64=bool(jax.config.jax_enable_x64),
        notes=getattr(peer, "notes", []),
        rows=[],
    )
    out_path = Path(spec["out"])

    def save():
        out_path.write_text(json.dumps(result, indent=1))

    ops = {k: v for k, v in peer.ops.items() if k in spec["ops"]}
    # 1. agreement: the check states through each op, back in Pinocchio's convention
    Q, V, A, T = (np.asarray(x) for x in np.load(spec["check_states"]).values())
    x = peer.inputs(Q, V, A, T)
    check = {}
    check_ops = getattr(peer, "check_ops", {})  # e.g. fk: the end-effector pose only
    for name, f in ops.items():
        f = check_ops.get(name, f)
        try:
            y = jax.tree.map(np.asarray, jax.jit(jax.vmap(f))(*x))
            check[name] = peer.to_pin(name, y, Q, V)
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            result["notes"].append(f"{name}: check failed: {type(e).__name__}: {e}")
            traceback.print_exc()
    np.savez(spec["check_out"], **check)
    save()
    # 2. dispatch overhead of a jitted trivial function (this venv's jax)
    trivial, c_s = core.compile_jitted(lambda q: q + 1.0, (x[0][0],))
    t = core.time_interleaved([(trivial, (x[0][0],))], min_time=spec["min_time"])[0]
    result["trivial_jit_s"] = t.median_s
    # 3. timings, batch by batch, the ops of one batch interleaved; past the spec's
    # budget_s (compiles included) the remaining rows are not compiled
    t_start = time.perf_counter()
    for n in spec["batches"]:
        Qn, Vn, An, Tn = random_states(spec, n, seed=1)
        xb = peer.inputs(Qn, Vn, An, Tn)
        if n == 1:
            xb = tuple(a[0] for a in xb)
        calls, names = [], []
        for name, f in ops.items():
            row = dict(op=name, batch=n)
            if name not in check:
                row["status"] = "check failed"
                result["rows"].append(row)
                continue
            native = getattr(peer, "batched_ops", {}).get(name)
            fn = f if n == 1 else (native or jax.vmap(f))
            if time.perf_counter() - t_start > spec.get("budget_s", float("inf")):
                row["status"] = "skipped (time cap)"
                row["reason"] = f"the peer's {spec['budget_s']:.0f} s budget was spent"
                result["rows"].append(row)
                save()
                continue
            try:
                compiled, row["compile_s"] = core.compile_jitted(fn, xb)
                t0 = time.perf_counter()
                jax.block_until_ready(compiled(*xb))
                first = time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001
                row["status"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
                result["rows"].append(row)
                continue
            if first > spec["time_cap_s"]:
                row.update(status="skipped (time cap)", first_call_s=first)
                result["rows"].append(row)
                del compiled
                continue
            row["status"] = "ok"
            calls.append((compiled, xb))
            names.append(row)
            result["rows"].append(row)
        if calls:
            timings = core.time_interleaved(
                calls, min_time=spec["min_time"], max_repeats=spec["max_repeats"]
            )
            for row, tm in zip(names, timings, strict=True):
                row["run_s"], row["repeats"] = tm.median_s, tm.repeats
                print(
                    f"  {spec['peer']:10s} {spec['robot']:6s} {row['op']:5s} batch {n:>6d}: "
                    f"{tm.median_s * 1e6:12.1f} us (compile {row['compile_s']:.2f} s)",
                    flush=True,
                )
        del calls
        save()
    result["load_average_end"] = os.getloadavg()[0]
    save()
    return 0


def main(make_peer) -> int:
    spec = read_spec()
    try:
        peer = make_peer(spec)
    except Exception as e:  # noqa: BLE001 - a peer that cannot load the model is reported
        traceback.print_exc()
        Path(spec["out"]).write_text(
            json.dumps(
                dict(
                    peer=spec["peer"],
                    robot=spec["robot"],
                    error=f"cannot load the model: {type(e).__name__}: {str(e)[:500]}",
                )
            )
        )
        return 0
    return run(peer, spec)
