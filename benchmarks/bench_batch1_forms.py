"""Batch-first matmul forms of FK, RNEA and the mass matrix against the library's, at batch 1.

A measurement (issue 24), not library code: for the Panda (float64, fingers
locked, as ``bench_dynamics.py`` loads it) and ONE state ``(nq,)``, each
function jitted with the model closed over, in ONE process, interleaved:

* ``fk``, ``rnea``, ``mass``: the public functions (``method="auto"``: the
  unrolled batch-last ``"loop"`` sweep at this size);
* ``fk_bf``: batch-first straight-line forward kinematics, one ``(..., 3, 3)``
  matmul per body (``R_i = R_λ E_i``, ``p_i = p_λ + R_λ r_i``): the form frax
  uses (its ``_unrolled_fk``, with 4x4 matrices);
* ``rnea_bf``: the RNEA (RBDA Table 5.1) in the same layout, body-frame
  3-vectors, ``einsum`` rotations, ``jnp.cross``;
* ``mass_dense``: a world-frame composite-inertia mass matrix (frax's form):
  world inertias ``Xᵀ I X`` of all bodies at once, subtree sums by a constant
  ancestor mask (one ``einsum``), ``M_jk = s_jᵀ I^c_j s_k`` masked to
  ancestor pairs;
* ``frax_*`` (with ``--frax-site``): frax's own functions imported in the
  same process (frax pins the same jax), so that the load of the shared
  machine hits every row alike.

Times: each function is called in ``--chunks`` chunks of 15 calls (each call
waited for); the figure is the smallest chunk median over ``--rounds`` rounds,
i.e. the time when nothing else ran. Also printed: the compiled program's
fusions and dots. Every prototype is checked against the public function
(max abs difference). Run with ``PYTHONPATH=. python benchmarks/bench_batch1_forms.py
[--frax-site /work/peer-venvs/frax/lib/python3.11/site-packages]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_dynamics as bd  # noqa: E402

import spatialjax.multibody as mb  # noqa: E402
from spatialjax.multibody import _sweep as sweep  # noqa: E402


def _frames(model, q):
    """Joint poses in the parent ``E (..., nb, 3, 3)``, ``r (..., nb, 3)`` (fixed base)."""
    P, PK, PKK, Pa, pp = sweep.rodrigues_terms(model)
    nb = model.nbodies
    rot = np.array([t in ("revolute", "continuous") for t in model.joint_types], float)
    pri = np.array([t == "prismatic" for t in model.joint_types], float)
    s, omc = jnp.sin(q * rot), 1 - jnp.cos(q * rot)
    E = (
        P.reshape(nb, 3, 3)
        + s[..., None, None] * PK.reshape(nb, 3, 3)
        + omc[..., None, None] * PKK.reshape(nb, 3, 3)
    )
    return E, pp + Pa * (q * pri)[..., None]


def _mv(R, x):
    return jnp.einsum("...ij,...j->...i", R, x)


def _mtv(R, x):
    return jnp.einsum("...ji,...j->...i", R, x)


def fk_bf(model, q):
    E, r = _frames(model, q)
    Rw, pw = [], []
    for i, p in enumerate(model.parents):
        if p < 0:
            Rw.append(E[..., i, :, :])
            pw.append(r[..., i, :])
        else:
            Rw.append(Rw[p] @ E[..., i, :, :])
            pw.append(pw[p] + _mv(Rw[p], r[..., i, :]))
    return jnp.stack(Rw, -3), jnp.stack(pw, -2)


def rnea_bf(model, q, v, a, g):
    E, r = _frames(model, q)
    S = sweep.body_subspaces(model)
    Sw, Sv = S[:, :3], S[:, 3:]
    prm = model.inertia.params
    nb = model.nbodies
    W, Vl, Aw, Al, Fn, Ff = [], [], [], [], [], []
    for i, p in enumerate(model.parents):
        Ei, ri = E[..., i, :, :], r[..., i, :]
        qd, qdd = v[..., i : i + 1], a[..., i : i + 1]
        wJ, vJ = Sw[i] * qd, Sv[i] * qd
        if p < 0:
            wp = vp = awp = jnp.zeros_like(ri)
            alp = -g + jnp.zeros_like(ri)
        else:
            wp, vp, awp, alp = W[p], Vl[p], Aw[p], Al[p]
        w = _mtv(Ei, wp) + wJ
        vl = _mtv(Ei, vp - jnp.cross(ri, wp)) + vJ
        aw = _mtv(Ei, awp) + Sw[i] * qdd + jnp.cross(w, wJ)
        al = _mtv(Ei, alp - jnp.cross(ri, awp)) + Sv[i] * qdd
        al = al + jnp.cross(w, vJ) + jnp.cross(vl, wJ)
        W.append(w)
        Vl.append(vl)
        Aw.append(aw)
        Al.append(al)
    for i in range(nb):
        mass, h = prm[i, 0], prm[i, 1:4]
        xx, xy, yy, xz, yz, zz = (prm[i, k] for k in range(4, 10))
        Io = jnp.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])

        def times(w, vl, Io=Io, h=h, mass=mass):
            return _mv(Io, w) + jnp.cross(h, vl), mass * vl - jnp.cross(h, w)

        hn, hf = times(W[i], Vl[i])
        an, af = times(Aw[i], Al[i])
        Fn.append(an + jnp.cross(W[i], hn) + jnp.cross(Vl[i], hf))
        Ff.append(af + jnp.cross(W[i], hf))
    tau = [jnp.zeros(())] * nb
    for i in range(nb - 1, -1, -1):
        tau[i] = jnp.sum(Sw[i] * Fn[i] + Sv[i] * Ff[i], -1)
        p = model.parents[i]
        if p >= 0:
            Ei, ri = E[..., i, :, :], r[..., i, :]
            fp = _mv(Ei, Ff[i])
            Fn[p] = Fn[p] + _mv(Ei, Fn[i]) + jnp.cross(ri, fp)
            Ff[p] = Ff[p] + fp
    return jnp.stack(tau, -1)


def _skew(a):
    z = jnp.zeros_like(a[..., 0])
    rows = [[z, -a[..., 2], a[..., 1]], [a[..., 2], z, -a[..., 0]], [-a[..., 1], a[..., 0], z]]
    return jnp.stack([jnp.stack(x, -1) for x in rows], -2)


def mass_dense(model, q):
    Rw, pw = fk_bf(model, q)
    nb = model.nbodies
    Et = jnp.swapaxes(Rw, -1, -2)
    X = jnp.concatenate(
        [
            jnp.concatenate([Et, jnp.zeros_like(Et)], -1),
            jnp.concatenate([-Et @ _skew(pw), Et], -1),
        ],
        -2,
    )  # world -> body motion transforms
    prm = model.inertia.params
    m, H = prm[:, 0], _skew(prm[:, 1:4])
    xx, xy, yy, xz, yz, zz = (prm[:, k] for k in range(4, 10))
    Io = jnp.stack(
        [jnp.stack([xx, xy, xz], -1), jnp.stack([xy, yy, yz], -1), jnp.stack([xz, yz, zz], -1)],
        -2,
    )
    mI = m[:, None, None] * jnp.eye(3)
    inertia = jnp.concatenate([jnp.concatenate([Io, H], -1), jnp.concatenate([-H, mI], -1)], -2)
    Iw = jnp.swapaxes(X, -1, -2) @ inertia @ X
    anc = sweep.ancestor_mask(model.parents, tuple(range(nb)))  # anc[j, i]: j is i or an ancestor
    Ic = jnp.einsum("ji,...ikl->...jkl", anc.astype(float), Iw)
    S = sweep.body_subspaces(model)
    w = jnp.einsum("...bij,bj->...bi", Rw, S[:, :3])
    s = jnp.concatenate([w, jnp.einsum("...bij,bj->...bi", Rw, S[:, 3:]) + jnp.cross(pw, w)], -1)
    P = jnp.einsum("...dk,...ek->...de", jnp.einsum("...dkl,...dl->...dk", Ic, s), s)
    eye = np.eye(nb, dtype=bool)
    L = jnp.where(anc.T & ~eye, P, 0.0)
    return L + jnp.swapaxes(L, -1, -2) + jnp.where(eye, P, 0.0)


def best_us(f, chunks, rounds_out):
    jax.block_until_ready(f())
    out = []
    for _ in range(chunks):
        ts = []
        for _ in range(15):
            t0 = time.perf_counter()
            jax.block_until_ready(f())
            ts.append(time.perf_counter() - t0)
        out.append(np.median(ts))
    rounds_out.append(min(out) * 1e6)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--chunks", type=int, default=100)
    p.add_argument("--frax-site", default="", help="frax's site-packages (same jax version)")
    a = p.parse_args()
    work = Path(tempfile.mkdtemp())
    info = bd.ROBOTS["panda"]
    urdf = bd.strip_urdf(bd.robots_dir() / info["file"], work / "panda.urdf", info["fixed"])
    m = mb.Model.from_urdf(str(urdf), dtype="float64")
    z = jnp.zeros_like(m.damping)
    m = dataclasses.replace(m, damping=z, armature=z)
    rng = np.random.default_rng(0)
    q, v, acc = (jnp.asarray(rng.uniform(-1, 1, m.nq)) for _ in range(3))
    g = jnp.asarray([0.0, 0.0, -9.81])
    fs = {
        "q + 1": (lambda q: q + 1.0, (q,)),
        "fk": (lambda q: mb.forward_kinematics(m, q).poses, (q,)),
        "fk_bf": (lambda q: fk_bf(m, q), (q,)),
        "rnea": (lambda q, v, a: mb.rnea(m, q, v, a), (q, v, acc)),
        "rnea_bf": (lambda q, v, a: rnea_bf(m, q, v, a, g), (q, v, acc)),
        "mass": (lambda q: mb.mass_matrix(m, q), (q,)),
        "mass_dense": (lambda q: mass_dense(m, q), (q,)),
    }
    if a.frax_site:
        sys.path.append(a.frax_site)
        import frax  # noqa: PLC0415 - optional, from the peer's venv

        fr = frax.Robot(str(urdf), joint_ordering=list(m.joint_names), floating_base=None)
        fg = jnp.array([0.0, 0.0, 9.81, 0.0, 0.0, 0.0])
        fs["frax_fk"] = (fr.joint_to_world_transforms, (q,))
        fs["frax_rnea"] = (lambda q, v, a: fr.rnea(q, v, a, fg, None), (q, v, acc))
        fs["frax_mass"] = (fr.mass_matrix, (q,))
    jitted = {k: (jax.jit(f), x) for k, (f, x) in fs.items()}
    fk = jitted["fk"][0](q)
    errs = {
        "fk_bf": max(
            float(jnp.abs(x - y).max())
            for x, y in zip((fk.E, fk.r), jitted["fk_bf"][0](q), strict=True)
        ),
        "rnea_bf": float(jnp.abs(jitted["rnea_bf"][0](q, v, acc) - mb.rnea(m, q, v, acc)).max()),
        "mass_dense": float(jnp.abs(jitted["mass_dense"][0](q) - mb.mass_matrix(m, q)).max()),
    }
    print(f"load average {os.getloadavg()[0]:.2f}; max abs difference from the public call: "
          + ", ".join(f"{k} {e:.1e}" for k, e in errs.items()))  # fmt: skip
    res = {k: [] for k in jitted}
    for _ in range(a.rounds):
        for k, (f, x) in jitted.items():
            best_us(lambda f=f, x=x: f(*x), a.chunks, res[k])
    for k, (f, x) in jitted.items():
        txt = f.lower(*x).compile().as_text()
        print(
            f"{k:11s} {min(res[k]):6.1f} us  (rounds: {' '.join(f'{t:.1f}' for t in res[k])})"
            f"  fusions {txt.count(' fusion(')}, dots {txt.count(' dot(')}",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
