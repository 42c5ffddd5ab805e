r"""Batched rigid-body algorithms on a kinematic tree: FK, RNEA, CRBA, regressors.

Conventions (see :mod:`spatialjax.multibody._model` for ``q``/``v``): motion
vectors ``[ω; v]``, forces ``[n; f]``, body quantities in the body's frame
(Featherstone's body coordinates), world poses as :class:`~spatialjax.Plxb`
(``E = R_world_body``, ``r`` = body origin in the world). Every function
takes ``q``, ``v``, ``a`` with any leading batch axes (they broadcast) and
returns results with those axes first; it is ``jit``-, ``vmap``- and
``grad``-able, in float32 or float64 (the model's dtype; cast a model with
``Model.astype``). A free flyer's quaternion ``q[..., 3:7]`` is normalised;
a zero one has no rotation: on concrete input every function taking ``q``
raises ``ValueError`` naming the sample, under ``jit``/``vmap`` (no values to
read) that sample's results are NaN and the others are unaffected.

Tree sweeps. ``method="scan"`` (the default) runs the per-body recursion as
``lax.scan`` over the bodies in topological order: the step is compiled once
(compile time does not grow with the number of bodies), per-body buffers live
in the scan carry (a step reads its parent's row and writes its own in
place; the RNEA backward pass is a reverse scan). The steps are kept small on
purpose: XLA:CPU has no multi-output loop fusion, so every output row of a
step is a loop of its own that recomputes everything it depends on. The
velocities, the accelerations and the leaves-to-root force sums are three
scans, and what needs no recursion (velocity-product terms, body forces,
``τ_i = S_iᵀ f_i``) is formed for all bodies at once between them.
``method="levels"`` processes all bodies of one depth together: the forward
pass gathers the parents' values from the previous level, the backward pass
scatter-adds the children's forces into their parents' level (one step per
tree *level*: 7 for a Panda, 11 for Talos). ``method="loop"`` is the plain
per-body recursion unrolled in Python (one traced step per body). All three
give the same results (tests compare them with Pinocchio). Measured on an
idle 2-core CPU in float64 at 1e5 states (``benchmarks/results/multibody_cpu.json``),
``"scan"`` ran the RNEA 2.5x (arms) to 1.0x (Talos) faster than
``"levels"``, forward kinematics 1.2-1.9x and the regressor 1.0-1.7x faster,
and compiled the RNEA 2-4x faster. The mass matrix and the regressor compute
only the (joint, body) pairs of the tree and write them in place, chunk by
chunk of about 1 MB of result (:func:`_chunk_for`), into the batch-first
output (:func:`_chunked_blocks`).
On a GPU one would expect the level form to gain, since a level's bodies
fill more lanes per step; a scan step there is latency-bound.

References:
  R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008 (RBDA):
  §2.9-2.10 and eqs. 2.24/2.63 (spatial transforms and inertia), Table 5.1
  (recursive Newton-Euler), Table 6.2 (composite-rigid-body algorithm).
  C. G. Atkeson, C. H. An, J. M. Hollerbach, "Estimation of inertial
  parameters of manipulator loads and links", IJRR 5(3), 1986 (the
  regressor's linearity in the 10 inertial parameters).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import is_concrete
from .._transforms import Plxb
from ._model import Model

_METHODS = ("levels", "loop", "scan")


# ----------------------------------------------------------------- layout
# Inside this module every array is laid out ``(bodies, components..., N)``: the
# flattened batch N is the LAST (contiguous) axis and the small 3/6/10 component
# axes come before it, so every formula below is an elementwise loop over N that
# XLA fuses and vectorises (with the batch first and components last, XLA:CPU
# ran 10-20x slower on these 3- and 6-long minor axes). Model leaves get a
# trailing axis of 1 to broadcast against N.


def _mv(R, x):
    """``R x``: ``R (..., 3, 3, N)``, ``x (..., 3, N)`` (written out: no reduce op)."""
    return (
        R[..., :, 0, :] * x[..., 0:1, :]
        + R[..., :, 1, :] * x[..., 1:2, :]
        + R[..., :, 2, :] * x[..., 2:3, :]
    )


def _mtv(R, x):
    """``Rᵀ x``."""
    return (
        R[..., 0, :, :] * x[..., 0:1, :]
        + R[..., 1, :, :] * x[..., 1:2, :]
        + R[..., 2, :, :] * x[..., 2:3, :]
    )


def _mm(A, B):
    """``A B`` for ``(..., 3, 3, N)`` operands."""
    return (
        A[..., :, 0:1, :] * B[..., 0:1, :, :]
        + A[..., :, 1:2, :] * B[..., 1:2, :, :]
        + A[..., :, 2:3, :] * B[..., 2:3, :, :]
    )


def _cross(a, b):
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    b0, b1, b2 = b[..., 0, :], b[..., 1, :], b[..., 2, :]
    return jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-2)


def _skew(a):
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    z = jnp.zeros_like(a0)
    return jnp.stack(
        [jnp.stack([z, -a2, a1], -2), jnp.stack([a2, z, -a0], -2), jnp.stack([-a1, a0, z], -2)],
        axis=-3,
    )


def _split(x):
    return x[..., :3, :], x[..., 3:, :]


def _join(a, b):
    return jnp.concatenate([a, b], axis=-2)


def _quat_matrix(qw, qx, qy, qz):
    """Active rotation of a ``wxyz`` quaternion (normalised here), ``(3, 3, N)``."""
    s = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
    rows = [
        [1 - s * (qy * qy + qz * qz), s * (qx * qy - qw * qz), s * (qx * qz + qw * qy)],
        [s * (qx * qy + qw * qz), 1 - s * (qx * qx + qz * qz), s * (qy * qz - qw * qx)],
        [s * (qx * qz - qw * qy), s * (qy * qz + qw * qx), 1 - s * (qx * qx + qy * qy)],
    ]
    return jnp.stack([jnp.stack(r, 0) for r in rows], 0)


# ------------------------------------------------------------ spatial operations
def _motion_to_child(E, r, m):
    """Parent -> child coordinates, child pose ``(E, r)`` in parent: ``[Eᵀω; Eᵀ(v − r×ω)]``."""
    w, v = _split(m)
    return _join(_mtv(E, w), _mtv(E, v - _cross(r, w)))


def _force_to_parent(E, r, f):
    """Child -> parent coordinates of a force: ``[E n + r × E f; E f]`` (``Xᵀ f``)."""
    n, fl = _split(f)
    fp = _mv(E, fl)
    return _join(_mv(E, n) + _cross(r, fp), fp)


def _motion_to_parent(E, r, m):
    """Child -> parent coordinates of a motion: ``[E ω; E v + r × E ω]`` (``X⁻¹ m``)."""
    w, v = _split(m)
    wp = _mv(E, w)
    return _join(wp, _mv(E, v) + _cross(r, wp))


def _crm(v, m):
    """Motion cross product ``v × m = [ω×m_ω; ω×m_v + v×m_ω]`` (RBDA eq. 2.31)."""
    w, vl = _split(v)
    mw, mv = _split(m)
    return _join(_cross(w, mw), _cross(w, mv) + _cross(vl, mw))


def _crf(v, f):
    """Force cross product ``v ×* f = [ω×n + v×f; ω×f]`` (RBDA eq. 2.32)."""
    w, vl = _split(v)
    n, fl = _split(f)
    return _join(_cross(w, n) + _cross(vl, fl), _cross(w, fl))


def _inertia_times(p, m):
    """Spatial inertia (10-vector ``p``) times motion: ``[I_o ω + h×v; m v − h×ω]`` (eq. 2.63)."""
    w, vl = _split(m)
    mass, h = p[..., 0:1, :], p[..., 1:4, :]
    xx, xy, yy, xz, yz, zz = (p[..., k, :] for k in range(4, 10))
    w0, w1, w2 = w[..., 0, :], w[..., 1, :], w[..., 2, :]
    Iw = jnp.stack(
        [xx * w0 + xy * w1 + xz * w2, xy * w0 + yy * w1 + yz * w2, xz * w0 + yz * w1 + zz * w2],
        axis=-2,
    )
    return _join(Iw + _cross(h, vl), mass * vl - _cross(h, w))


def _inertia_to_parent(p, R, t):
    """10-vector of a body given in a child frame, in the parent frame (child pose ``(R, t)``).

    Pseudo-inertia sandwich ``J' = T J Tᵀ`` (see ``RigidBodyInertia.transform``):
    ``S' = R S Rᵀ + u tᵀ + t uᵀ + m t tᵀ`` with ``u = R h``, ``h' = u + m t``,
    ``I' = tr(S') 1 − S'``.
    """
    m, h = p[..., 0:1, :], p[..., 1:4, :]
    xx, xy, yy, xz, yz, zz = (p[..., k, :] for k in range(4, 10))
    half = 0.5 * (xx + yy + zz)
    S = jnp.stack(
        [
            jnp.stack([half - xx, -xy, -xz], -2),
            jnp.stack([-xy, half - yy, -yz], -2),
            jnp.stack([-xz, -yz, half - zz], -2),
        ],
        -3,
    )
    u = _mv(R, h)
    RSRt = _mm(_mm(R, S), jnp.swapaxes(R, -2, -3))
    ut = u[..., :, None, :] * t[..., None, :, :]
    Sb = (
        RSRt
        + ut
        + jnp.swapaxes(ut, -2, -3)
        + m[..., None, :] * t[..., :, None, :] * t[..., None, :, :]
    )
    s00, s11, s22 = Sb[..., 0, 0, :], Sb[..., 1, 1, :], Sb[..., 2, 2, :]
    hb = u + m * t
    return jnp.concatenate(
        [
            jnp.broadcast_to(m, hb[..., :1, :].shape),
            hb,
            jnp.stack(
                [s11 + s22, -Sb[..., 0, 1, :], s00 + s22, -Sb[..., 0, 2, :], -Sb[..., 1, 2, :],
                 s00 + s11],
                -2,
            ),
        ],
        axis=-2,
    )  # fmt: skip


# --------------------------------------------------------------- input checking
def _as_input(x, name, n, model: Model):
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
        if x.dtype.kind in "iub" or x.dtype == object:
            raise TypeError(f"{name}: expected a floating-point array, got dtype {x.dtype}")
        x = np.asarray(x, model.dtype)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"{name}: expected a floating-point array, got dtype {x.dtype}")
    x = jnp.asarray(x)
    if x.ndim < 1 or x.shape[-1] != n:
        raise ValueError(
            f"{name}: expected shape (..., {n}) for model {model.name!r} "
            f"({'nq' if name.startswith('q') else 'nv'} = {n}), got shape {tuple(x.shape)}"
        )
    if x.dtype != model.dtype:
        raise TypeError(
            f"{name}: dtype {x.dtype} differs from the model's {model.dtype}; cast one of "
            "them (model.astype(dtype) or x.astype(model.dtype))"
        )
    if name == "q" and model.floating_base and is_concrete(x):
        # the free flyer's wxyz quaternion (q[..., 3:7]; the root is the only free flyer):
        # a zero one has no rotation and gave NaN poses. Checked on concrete values only
        # (one NumPy pass); under jit/vmap the poses of such a sample are NaN.
        zero = np.all(np.asarray(x[..., 3:7]) == 0, axis=-1)
        if np.any(zero):
            idx = tuple(int(i) for i in np.argwhere(zero)[0])
            where = f"q[{', '.join(map(str, idx + (slice(3, 7),)))}]".replace(
                "slice(3, 7, None)", "3:7"
            )
            raise ValueError(
                f"q: the free flyer's quaternion {where} is zero, which has no rotation; "
                "expected a non-zero [qw, qx, qy, qz] (it is normalised)"
            )
    return x


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method: expected one of {_METHODS}, got {method!r}")


def _batch(**named):
    shapes = {k: tuple(v.shape[:-1]) for k, v in named.items() if v is not None}
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        desc = ", ".join(f"{k} {s}" for k, s in shapes.items())
        raise ValueError(f"batch shapes do not broadcast: {desc}") from None


def _gravity(gravity, model: Model):
    g = gravity
    if not hasattr(g, "dtype"):
        g = np.asarray(g, dtype=np.float64)
        g = jnp.asarray(g, model.dtype)
    elif g.dtype != model.dtype:
        raise TypeError(f"gravity: dtype {g.dtype} differs from the model's {model.dtype}")
    if g.ndim < 1 or g.shape[-1] != 3:
        raise ValueError(f"gravity: expected shape (..., 3), got {tuple(g.shape)}")
    return g


# ------------------------------------------------------------------ tree sweeps
@functools.lru_cache(maxsize=256)
def _groups(parents: tuple, levels: tuple, method: str):
    """Groups of bodies swept together: ``(idx, parent_group, positions_in_parent_group)``."""
    groups = levels if method == "levels" else tuple((i,) for i in range(len(parents)))
    where = {}
    out = []
    for g, idx in enumerate(groups):
        for k, i in enumerate(idx):
            where[i] = (g, k)
        par = [parents[i] for i in idx]
        if all(p < 0 for p in par):
            out.append((np.asarray(idx), -1, None))
            continue
        gps = {where[p][0] for p in par}
        if len(gps) != 1 or any(p < 0 for p in par):  # pragma: no cover - by construction
            raise AssertionError("a group's parents must lie in one earlier group")
        out.append((np.asarray(idx), gps.pop(), np.asarray([where[p][1] for p in par])))
    order = np.concatenate([np.asarray(g) for g in groups]) if groups else np.zeros(0, int)
    return tuple(out), np.argsort(order)


def _take(x, idx):
    """``x[idx]`` on the leading axis; a slice when ``idx`` is a contiguous range."""
    idx = np.asarray(idx)
    if idx.size and np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size)):
        return x[int(idx[0]) : int(idx[0]) + idx.size]
    return x[idx]


def _rows(x, idx):
    """``x[idx]`` on the leading axis with a static index list, as slices of its runs.

    XLA:CPU ran a gather with an index array 10-40x slower than the same rows taken
    as static slices and concatenated (the Talos regressor and mass matrix).
    """
    runs = [x[lo:hi] for lo, hi in _runs(idx)]
    return runs[0] if len(runs) == 1 else jnp.concatenate(runs, axis=0)


def _dot6(a, b):
    """``Σ_k a[..., k, :] b[..., k, :]`` over a 6-long component axis (written out)."""
    return sum(a[..., k, :] * b[..., k, :] for k in range(6))


def _assemble(parts, inv_order):
    """Concatenate per-group arrays (body axis first) and restore body order."""
    x = jnp.concatenate(parts, axis=0)
    if np.array_equal(inv_order, np.arange(inv_order.size)):
        return x
    return x[inv_order]


def _flat(x, batch):
    """``(..., k)`` user array -> ``(k, N)`` with ``N = prod(batch)`` (batch-last layout)."""
    x = jnp.broadcast_to(x, batch + x.shape[-1:])
    n = int(np.prod(batch, dtype=int))
    return x.reshape((n, x.shape[-1])).T


def _unflat(y, batch):
    """``(k..., N)`` -> ``(*batch, k...)``."""
    y = jnp.moveaxis(y, -1, 0)
    return y.reshape(batch + y.shape[1:])


# Batches longer than this are swept in chunks of this many states (``lax.map``):
# the per-level intermediates of a chunk stay in cache, 1.6x faster for a Panda
# RNEA at 1e5 float64 states on a 2-core CPU (chunks of 500-5000 all within 20 %).
_CHUNK = 2048
_CHUNK_BYTES = 2**20  # target bytes of result per chunk (_chunk_for)


def _chunk_for(out_bytes_per_state: int) -> int:
    """Chunk length for a result of this many bytes per state: about 1 MB per chunk.

    A power of two in ``[64, _CHUNK]``: the Talos joint-torque regressor
    (100 kB per state in float64) is swept 64 states at a time, a Panda mass
    matrix 2048 at a time, so each chunk's intermediates stay near the cache.
    """
    n = _CHUNK_BYTES // max(int(out_bytes_per_state), 1)
    return int(np.clip(2 ** int(np.floor(np.log2(max(n, 1)))), 64, _CHUNK))


def _chunked(core, *xs, chunk: int = _CHUNK):
    """``core(*xs)`` on ``(k, N)`` inputs (last axis the batch), in chunks of ``chunk``.

    Every output leaf comes back with the batch FIRST, ``(N, k...)``: each chunk's
    result is transposed while it is in cache (forward kinematics and RNEA, a few
    hundred bytes per state; the regressor and the mass matrix write their larger
    results in place by blocks, :func:`_chunked_blocks`). Inputs of batch 1 broadcast.
    """

    def batch_first(out):
        return jax.tree.map(lambda y: jnp.moveaxis(y, -1, 0), out)

    n = max(x.shape[-1] for x in xs)
    if n <= 2 * chunk:
        return batch_first(core(*xs))
    nc = -(-n // chunk)
    pad = nc * chunk - n

    def split(x):
        x = jnp.broadcast_to(x, x.shape[:-1] + (n,))
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)], mode="edge")
        return jnp.moveaxis(x.reshape(x.shape[:-1] + (nc, chunk)), -2, 0)

    out = jax.lax.map(lambda c: batch_first(core(*c)), tuple(split(x) for x in xs))
    return jax.tree.map(lambda y: y.reshape((nc * chunk,) + y.shape[2:])[:n], out)


def _unflat_bf(y, batch):
    """``(N, k...)`` -> ``(*batch, k...)``."""
    return y.reshape(batch + y.shape[1:])


def _n(x):
    """Model leaf ``(nb, k...)`` -> ``(nb, k..., 1)`` (broadcasts against ``N``)."""
    return x[..., None]


def _joint_frames(model: Model, q):
    """Each body's pose in its parent: ``E (nb, 3, 3, N) = R_λi``, ``r (nb, 3, N)``."""
    ff = model.floating_base
    N = q.shape[-1]
    qb = q[7 if ff else 0 :]
    if ff:
        qb = jnp.concatenate([jnp.zeros((1, N), q.dtype), qb], axis=0)
    rot = np.array([t in ("revolute", "continuous") for t in model.joint_types], float)
    pri = np.array([t == "prismatic" for t in model.joint_types], float)
    rot = jnp.asarray(rot[:, None], q.dtype)
    pri = jnp.asarray(pri[:, None], q.dtype)
    PR, Pp, ax = _n(model.placements.E), _n(model.placements.r), _n(model.axes)
    theta = qb * rot  # (nb, N)
    K = _skew(ax)  # (nb, 3, 3, 1)
    s, c = jnp.sin(theta)[:, None, None, :], jnp.cos(theta)[:, None, None, :]
    Rj = jnp.eye(3, dtype=q.dtype)[:, :, None] + s * K + (1.0 - c) * _mm(K, K)
    E = _mm(PR, Rj)
    r = Pp + _mv(PR, ax * (qb * pri)[:, None, :])
    if ff:
        Rq = _quat_matrix(q[3], q[4], q[5], q[6])
        E0 = _mm(PR[0], Rq)
        r0 = Pp[0] + _mv(PR[0], q[0:3])
        E = jnp.concatenate([E0[None], E[1:]], axis=0)
        r = jnp.concatenate([r0[None], r[1:]], axis=0)
    return E, r


def _subspaces(model: Model):
    """``(nb, 6)`` motion subspace ``S_i`` of each 1-DoF joint in its body frame (free flyer: 0)."""
    rot = np.array([t in ("revolute", "continuous") for t in model.joint_types], float)[:, None]
    pri = np.array([t == "prismatic" for t in model.joint_types], float)[:, None]
    ax = model.axes
    return jnp.concatenate([ax * jnp.asarray(rot, ax.dtype), ax * jnp.asarray(pri, ax.dtype)], -1)


def _split_dofs(model: Model, x):
    """``(nv, N)`` -> (free-flyer part ``(6, N)`` or None, per-body ``(nb, N)``)."""
    if model.floating_base:
        xb = jnp.concatenate([jnp.zeros((1, x.shape[-1]), x.dtype), x[6:]], axis=0)
        return x[:6], xb
    return None, x


def _forward(model, E, r, method, qd=None, qdd=None, vff=None, aff=None, a0=None, pose=True):
    """Forward sweep (RBDA Table 5.1, forward loop): world poses, body ``v_i``, ``a_i``.

    ``v_i = X_i v_λ + S_i q̇_i``; ``a_i = X_i a_λ + S_i q̈_i + v_i × S_i q̇_i``;
    ``a_0`` is the world's acceleration (``[0; −g]`` for RNEA, zero for FK).
    Returns per-group lists (body axis first) and the inverse group order.
    """
    groups, inv = _groups(model.parents, model.levels, method)
    S = _n(_subspaces(model)) if qd is not None else None
    N = E.shape[-1]
    Rw, pw, V, A = [], [], [], []
    for idx, gp, pos in groups:
        Eg, rg = _take(E, idx), _take(r, idx)
        if gp < 0:
            if pose:
                Rw.append(Eg)
                pw.append(rg)
            vp = None
            ap = None if a0 is None else jnp.broadcast_to(a0, (len(idx), 6, N))
        else:
            if pose:
                Rp, pp = _take(Rw[gp], pos), _take(pw[gp], pos)
                Rw.append(_mm(Rp, Eg))
                pw.append(pp + _mv(Rp, rg))
            vp = _take(V[gp], pos) if qd is not None else None
            ap = _take(A[gp], pos) if qdd is not None else None
        if qd is None:
            continue
        Sg = _take(S, idx)
        vJ = Sg * _take(qd, idx)[:, None, :]
        vi = vJ if vp is None else _motion_to_child(Eg, rg, vp) + vJ
        if gp < 0 and vff is not None and idx[0] == 0:
            # free flyer: v_0 = v[:6] and S = 1 (RBDA §4.5), so a_0 = X_0 a_world + v̇[:6]
            vi = jnp.concatenate([vff[None], vi[1:]], axis=0)
        V.append(vi)
        if qdd is None:
            continue
        ai = Sg * _take(qdd, idx)[:, None, :] + _crm(vi, vJ)
        if ap is not None:
            ai = ai + _motion_to_child(Eg, rg, ap)
        if gp < 0 and aff is not None and idx[0] == 0:
            a_root = aff if ap is None else _motion_to_child(Eg[0], rg[0], ap[0]) + aff
            ai = jnp.concatenate([a_root[None], ai[1:]], axis=0)
        A.append(ai)
    return groups, inv, Rw, pw, V, A


def _backward_sum(groups, parts, E, r, transform=True):
    """Backward sweep: add each group's (final) values into its parents' group.

    With ``transform`` the values are forces moved child -> parent (``Xᵀ f``,
    RBDA Table 5.1 backward loop); without, they are already in a common
    (world) frame and only add.
    """
    parts = list(parts)
    for g in range(len(groups) - 1, -1, -1):
        idx, gp, pos = groups[g]
        if gp < 0:
            continue
        x = parts[g]
        if transform:
            x = _force_to_parent(_take(E, idx), _take(r, idx), x)
        target = parts[gp]
        if pos.size == target.shape[0] and np.array_equal(pos, np.arange(pos.size)):
            parts[gp] = target + x
        else:
            parts[gp] = target.at[pos].add(x)
    return parts


# ------------------------------------------------------------- scan over bodies
# ``method="scan"``: one ``lax.scan`` step per body in topological order whose
# body is traced and compiled ONCE (compile time independent of the number of
# bodies). Per-body buffers ``(nbodies + 1, components, N)`` live in the scan
# carry (row ``nbodies`` is the world); a step reads its parent's row with
# ``dynamic_index_in_dim`` and writes its own with ``dynamic_update_index_in_dim``
# (in place). Static per-body data (parent index, joint-type flags, axis,
# placement, inertia) are the scanned-over arrays. A free-flyer root is done
# before the scan.


def _dyn(x, i):
    return jax.lax.dynamic_index_in_dim(x, i, 0, keepdims=False)


def _put(x, val, i):
    return jax.lax.dynamic_update_index_in_dim(x, val, i, 0)


def _pose_row(R, p):
    """``(3, 3, N)``, ``(3, N)`` -> ``(12, N)`` rows ``[R (row-major); p]``."""
    return jnp.concatenate([R.reshape((9,) + R.shape[2:]), p], axis=0)


def _scan_forward(model: Model, q, v=None, a=None, a0=None, pose=True):
    """Forward sweep of RBDA Table 5.1 as scans over bodies (same formulas as ``_forward``).

    ``q (nq, N)``, ``v``/``a (nv, N)`` raw generalised coordinates; ``a0 (6, ·)``
    the world's acceleration (``None``: zero). One scan carries the world poses
    and the body velocities; the velocity-product terms ``v_i × S_i q̇_i`` are then
    formed for all bodies at once and a second scan carries the accelerations
    (see the three-scan RNEA below for why the steps are kept this small).
    Returns the final carry: a dict of ``(nb + 1, k, N)`` buffers, ``T`` world
    poses (``_pose_row``), ``V``, ``A`` (row ``nb``: the world).
    """
    ff = model.floating_base
    nb, N, dt = model.nbodies, q.shape[-1], q.dtype
    s0 = 1 if ff else 0
    xs, (Sw, Sv), root = _scan_xs(model, q)
    vb = None if v is None else v[6:] if ff else v
    ab = None if a is None else a[6:] if ff else a
    c = {}
    if pose:
        # one buffer for the pose, rows [R (9, row-major); p (3)]: with two buffers XLA
        # copied R on every step (the p update reads R while R is updated in place)
        eye = jnp.broadcast_to(jnp.eye(3, dtype=dt).reshape(9, 1), (9, N))
        c["T"] = jnp.zeros((nb + 1, 12, N), dt).at[nb, :9].set(eye)
    if v is not None:
        c["V"] = jnp.zeros((nb + 1, 6, N), dt)
    if root is not None:
        # free flyer (RBDA §4.5): S = 1, v_0 = v[:6]
        E0, r0 = root
        if pose:
            c["T"] = c["T"].at[0].set(_pose_row(E0, r0))
        if v is not None:
            c["V"] = c["V"].at[0].set(v[:6])

    def step(c, x):
        E, r = _step_frame(x)
        c = dict(c)
        if pose:
            T = _dyn(c["T"], x["p"])
            R = [T[3 * j + k] for j in range(3) for k in range(3)]
            rows = [sum(R[3 * j + m] * E[3 * m + k] for m in range(3)) for j in range(3)
                    for k in range(3)]  # fmt: skip
            rows += [T[9 + j] + sum(R[3 * j + m] * r[m] for m in range(3)) for j in range(3)]
            c["T"] = _put(c["T"], jnp.stack(rows), x["i"])
        if "V" in c:
            m = _rows_to_child(E, r, list(_dyn(c["V"], x["p"])))
            qd = x["qd"]
            row = [m[k] + x["Sw"][k] * qd for k in range(3)]
            row += [m[3 + k] + x["Sv"][k] * qd for k in range(3)]
            c["V"] = _put(c["V"], jnp.stack(row), x["i"])
        return c, None

    if vb is not None:
        xs = dict(xs, qd=vb)
    c, _ = jax.lax.scan(step, c, xs)
    if a is None or vb is None or ab is None:
        return c
    A = jnp.zeros((nb + 1, 6, N), dt)
    if a0 is not None:
        A = A.at[nb].set(jnp.broadcast_to(a0, (6, N)))
    if root is not None:
        a_root = a[:6] if a0 is None else a[:6] + _motion_to_child(root[0], root[1], a0)
        A = A.at[0].set(a_root)
    # b_i = S_i q̈_i + v_i × S_i q̇_i for all bodies at once, then a_i = X_i a_λ + b_i
    sl = slice(s0, nb)
    vJ = _join(Sw[sl, :, None] * vb[:, None, :], Sv[sl, :, None] * vb[:, None, :])
    bias = _join(Sw[sl, :, None] * ab[:, None, :], Sv[sl, :, None] * ab[:, None, :])
    bias = bias + _crm(c["V"][sl], vJ)

    def acc_step(A, x):
        E, r = _step_frame(x)
        m = _rows_to_child(E, r, list(_dyn(A, x["p"])))
        return _put(A, jnp.stack(m) + x["b"], x["i"]), None

    c["A"], _ = jax.lax.scan(acc_step, A, dict(xs, b=bias))
    return c


def _scan_poses(model: Model, q, c=None):
    """World poses ``(nb, 3, 3, N)``, ``(nb, 3, N)`` from a scan carry (run when ``c`` is None)."""
    if c is None:
        c = _scan_forward(model, q)
    T = c["T"][: model.nbodies]
    return T[:, :9].reshape((model.nbodies, 3, 3, T.shape[-1])), T[:, 9:]


# ------------------------------------------------------- RNEA as three body scans
# The scan above computes a body's velocity, acceleration and force in ONE step. XLA:CPU
# has no multi-output loop fusion: every output row of a step is its own loop that
# recomputes everything it depends on, so the six force rows recomputed the velocity and
# acceleration (about 10x the arithmetic of one pass). Here every step has small,
# independent output rows: scan 1 propagates velocities, the velocity-product terms are
# added outside any loop (all bodies at once), scan 2 propagates accelerations, the body
# forces are formed outside any loop, and scan 3 sums them leaves to root. The joint
# rotation enters each step as ``E = P + sin θ · P K + (1 − cos θ) · P K²`` (Rodrigues,
# with ``K = [axis]×`` and the per-model products precomputed), so a step reads two
# numbers per state for its joint instead of nine.


def _rodrigues_terms(model: Model):
    """Per body ``(P, P K, P K²)`` as ``(nb, 9)`` rows (row-major) and ``P a``, ``p``."""
    P = model.placements.E
    ax = model.axes
    z = jnp.zeros_like(ax[:, 0])
    K = jnp.stack(
        [
            jnp.stack([z, -ax[:, 2], ax[:, 1]], -1),
            jnp.stack([ax[:, 2], z, -ax[:, 0]], -1),
            jnp.stack([-ax[:, 1], ax[:, 0], z], -1),
        ],
        -2,
    )
    PK = P @ K
    PKK = PK @ K
    nb = P.shape[0]
    Pa = jnp.einsum("bij,bj->bi", P, ax)
    return P.reshape(nb, 9), PK.reshape(nb, 9), PKK.reshape(nb, 9), Pa, model.placements.r


def _step_frame(x):
    """``E`` (9 rows, row-major) and ``r`` (3 rows) of one body from its scanned values."""
    s, omc = x["s"], x["omc"]
    E = [x["P"][k] + s * x["PK"][k] + omc * x["PKK"][k] for k in range(9)]
    r = [x["pp"][k] + x["Pa"][k] * x["d"] for k in range(3)]
    return E, r


def _scan_xs(model: Model, q):
    """Per scanned body (all but a free-flyer root), stacked on a leading body axis.

    ``i`` body index, ``p`` parent (the world is row ``nb``), ``s = sin θ``,
    ``omc = 1 − cos θ`` and ``d`` (prismatic displacement) ``(nb', N)``, and the
    model's per-body constants with a trailing axis of 1: ``P, PK, PKK (9)``
    (:func:`_rodrigues_terms`), ``Pa``, ``pp`` (3), motion subspace ``Sw``, ``Sv``
    (3). Also returns the full ``(Sw, Sv)`` ``(nb, 3)`` and the free-flyer root's
    pose ``(E0, r0)`` in the world (or ``None``).
    """
    nb, dt = model.nbodies, q.dtype
    ff = model.floating_base
    s0 = 1 if ff else 0
    rot = np.array([t in ("revolute", "continuous") for t in model.joint_types], float)[:, None]
    pri = np.array([t == "prismatic" for t in model.joint_types], float)[:, None]
    qb = q[7:] if ff else q
    sl = slice(s0, nb)
    theta = qb * jnp.asarray(rot[sl], dt)
    P, PK, PKK, Pa, pp = _rodrigues_terms(model)
    Sw = model.axes * jnp.asarray(rot, dt)
    Sv = model.axes * jnp.asarray(pri, dt)
    par = np.array([nb if p < 0 else p for p in model.parents[s0:]], np.int32)
    xs = dict(
        i=jnp.arange(s0, nb, dtype=jnp.int32),
        p=jnp.asarray(par),
        s=jnp.sin(theta),
        omc=1.0 - jnp.cos(theta),
        d=qb * jnp.asarray(pri[sl], dt),
        P=P[sl, :, None],
        PK=PK[sl, :, None],
        PKK=PKK[sl, :, None],
        Pa=Pa[sl, :, None],
        pp=pp[sl, :, None],
        Sw=Sw[sl, :, None],
        Sv=Sv[sl, :, None],
    )
    root = None
    if ff:
        PR0 = model.placements.E[0][..., None]
        E0 = _mm(PR0, _quat_matrix(q[3], q[4], q[5], q[6]))
        root = (E0, model.placements.r[0][:, None] + _mv(PR0, q[0:3]))
    return xs, (Sw, Sv), root


def _rows_to_child(E, r, m):
    """``X m`` on rows: ``[Eᵀω; Eᵀ(v − r × ω)]`` (6 rows in, 6 rows out)."""
    w0, w1, w2, v0, v1, v2 = m
    u = (v0 - (r[1] * w2 - r[2] * w1), v1 - (r[2] * w0 - r[0] * w2), v2 - (r[0] * w1 - r[1] * w0))
    w = (w0, w1, w2)
    return [E[k] * w[0] + E[3 + k] * w[1] + E[6 + k] * w[2] for k in range(3)] + [
        E[k] * u[0] + E[3 + k] * u[1] + E[6 + k] * u[2] for k in range(3)
    ]


def _rows_force_to_parent(E, r, f):
    """``Xᵀ f`` on rows: ``[E n + r × E f; E f]``."""
    n, fl = f[:3], f[3:]
    fp = [E[3 * k] * fl[0] + E[3 * k + 1] * fl[1] + E[3 * k + 2] * fl[2] for k in range(3)]
    En = [E[3 * k] * n[0] + E[3 * k + 1] * n[1] + E[3 * k + 2] * n[2] for k in range(3)]
    return [
        En[0] + r[1] * fp[2] - r[2] * fp[1],
        En[1] + r[2] * fp[0] - r[0] * fp[2],
        En[2] + r[0] * fp[1] - r[1] * fp[0],
    ] + fp


def _rnea_scan(model: Model, q, v, a, g):
    """RNEA (RBDA Table 5.1) as three scans over bodies, ``(k, N)`` inputs -> ``(nv, N)``."""
    nb, N, dt = model.nbodies, q.shape[-1], q.dtype
    ff = model.floating_base
    s0 = 1 if ff else 0
    a0 = _join(jnp.zeros_like(g), -g)  # the base accelerates at −g (RBDA §5.3)
    c = _scan_forward(model, q, v, a, a0, pose=False)
    xs, (Sw, Sv), _ = _scan_xs(model, q)
    # body forces of all bodies at once: f_i = I_i a_i + v_i ×* I_i v_i
    prm = _n(model.inertia.params)
    V, A = c["V"][:nb], c["A"][:nb]
    F = _inertia_times(prm, A) + _crf(V, _inertia_times(prm, V))
    F = jnp.concatenate([F, jnp.zeros((1, 6, N), dt)], axis=0)

    def back_step(F, x):
        E, r = _step_frame(x)
        up = _rows_force_to_parent(E, r, list(_dyn(F, x["i"])))
        return _put(F, _dyn(F, x["p"]) + jnp.stack(up), x["p"]), None

    # leaves to root: f_λ += X_iᵀ f_i. τ_i = S_iᵀ f_i is read after the scan: read in
    # the step, f_i had to be kept apart from the buffer updated in place, and XLA
    # copied the whole buffer on every step.
    F, _ = jax.lax.scan(back_step, F, xs, reverse=True)
    sl = slice(s0, nb)
    tau = jnp.sum(_join(Sw[sl, :, None], Sv[sl, :, None]) * F[sl], axis=-2)
    if ff:
        return jnp.concatenate([F[0], tau], axis=0)
    return tau


# ------------------------------------------------------------------ public API
class Kinematics(NamedTuple):
    """Result of :func:`forward_kinematics`.

    Attributes:
      poses: :class:`~spatialjax.Plxb` of batch ``(..., nbodies)``: each body's
        pose in the world (``E = R_world_body``, ``r`` = body origin in world
        coordinates). ``poses.E[..., i, :, :]`` equals Pinocchio's
        ``data.oMi[i + 1].rotation``.
      velocities: ``(..., nbodies, 6)`` body spatial velocity ``[ω; v]`` in the
        body frame (``v``: velocity of the body origin), or ``None``.
      accelerations: ``(..., nbodies, 6)`` body spatial acceleration in the body
        frame (the derivative of the spatial velocity, not the classical
        acceleration of the origin; gravity not included), or ``None``.
    """

    poses: Plxb
    velocities: jax.Array | None
    accelerations: jax.Array | None


def forward_kinematics(model: Model, q, v=None, a=None, *, method: str = "scan") -> Kinematics:
    """World pose of every body, and body velocities/accelerations when ``v``/``a`` are given.

    Forward loop of RBDA Table 5.1: ``X_world_i = X_world_λ X_λi(q_i)``,
    ``v_i = X_i v_λ + S_i q̇_i``, ``a_i = X_i a_λ + S_i q̈_i + v_i × S_i q̇_i``
    (RBDA eqs. 5.7-5.8 style, body coordinates), with ``v_world = a_world = 0``.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration (module docstring of ``_model`` for the order).
      v: ``(..., nv)`` generalised velocity, optional.
      a: ``(..., nv)`` generalised acceleration, optional (needs ``v``).
      method: ``"scan"`` (default: a ``lax.scan`` over bodies), ``"levels"`` (one
        vectorised step per tree depth) or ``"loop"`` (one unrolled step per body).

    Returns:
      A :class:`Kinematics` with batch axes ``broadcast(q, v, a)`` first.

    Raises:
      ValueError: shapes that do not fit the model; on concrete input, a zero
        free-flyer quaternion (naming the sample).
      TypeError: non-float inputs or a dtype other than the model's.

    Example:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, forward_kinematics
      >>> m = chain_model(2, length=1.0)         # two revolute-z links, 1 m apart along x
      >>> fk = forward_kinematics(m, jnp.array([jnp.pi / 2, 0.0]))
      >>> fk.poses.r[1].round(6).tolist()        # the 2nd joint sits 1 m along the rotated x
      [0.0, 1.0, 0.0]
    """
    _check_method(method)
    q = _as_input(q, "q", model.nq, model)
    if a is not None and v is None:
        raise ValueError("forward_kinematics: accelerations need v as well (pass v=zeros)")
    v = None if v is None else _as_input(v, "v", model.nv, model)
    a = None if a is None else _as_input(a, "a", model.nv, model)
    return _fk_kernel(model, q, v, a, batch=_batch(q=q, v=v, a=a), method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _fk_kernel(model: Model, q, v, a, *, batch, method) -> Kinematics:
    """:func:`forward_kinematics` on checked inputs: one compiled program per structure."""

    def core(q, v=None, a=None):
        if method == "scan":
            c = _scan_forward(model, q, v, a)
            nb = model.nbodies
            vel = None if v is None else c["V"][:nb]
            acc = None if a is None else c["A"][:nb]
            return *_scan_poses(model, q, c), vel, acc
        E, r = _joint_frames(model, q)
        vff = qd = aff = qdd = None
        if v is not None:
            vff, qd = _split_dofs(model, v)
        if a is not None:
            aff, qdd = _split_dofs(model, a)
        _, inv, Rw, pw, V, A = _forward(
            model, E, r, method, qd=qd, qdd=qdd, vff=vff, aff=aff, a0=None
        )
        vel = None if v is None else _assemble(V, inv)
        acc = None if a is None else _assemble(A, inv)
        return _assemble(Rw, inv), _assemble(pw, inv), vel, acc

    flat = [_flat(x, batch) for x in (q, v, a) if x is not None]
    Rw, pw, vel, acc = _chunked(core, *flat)
    vel = None if vel is None else _unflat_bf(vel, batch)
    acc = None if acc is None else _unflat_bf(acc, batch)
    return Kinematics(Plxb(_unflat_bf(Rw, batch), _unflat_bf(pw, batch)), vel, acc)


@jax.jit
def frame_poses(model: Model, poses: Plxb) -> Plxb:
    """World pose of every frame (``model.frame_names``) from the body poses.

    ``T_world_frame = T_world_body · T_body_frame`` (``Plxb`` composition);
    frames on the world (``frame_bodies == -1``) keep their placement.

    Args:
      model: the tree.
      poses: body poses of batch ``(..., nbodies)`` (``forward_kinematics(...).poses``).

    Returns:
      ``Plxb`` of batch ``(..., nframes)``.
    """
    fb = np.asarray(model.frame_bodies)
    batch = poses.E.shape[:-3]
    eye = jnp.broadcast_to(jnp.eye(3, dtype=poses.E.dtype), batch + (1, 3, 3))
    zero = jnp.zeros(batch + (1, 3), poses.E.dtype)
    Rb = jnp.concatenate([poses.E, eye], axis=-3)[..., fb, :, :]  # index -1 -> the world
    pb = jnp.concatenate([poses.r, zero], axis=-2)[..., fb, :]
    FR, Fp = model.frame_placements.E, model.frame_placements.r
    R = jnp.sum(Rb[..., :, :, None] * FR[..., None, :, :], axis=-2)
    return Plxb(R, pb + jnp.sum(Rb * Fp[..., None, :], axis=-1))


def _dynamics_inputs(model, q, v, a, gravity):
    q = _as_input(q, "q", model.nq, model)
    v = _as_input(v, "v", model.nv, model)
    a = _as_input(a, "a", model.nv, model)
    g = _gravity(gravity, model)
    return q, v, a, g, _batch(q=q, v=v, a=a, gravity=g)


def _flat_dynamics(q, v, a, g, batch):
    """Checked ``q, v, a, g`` as ``(k, N)`` with the flattened batch last (inside a kernel)."""
    g = g[:, None] if g.ndim == 1 else _flat(g, batch)
    return _flat(q, batch), _flat(v, batch), _flat(a, batch), g


def _rnea_forward(model, q, v, a, g, method, pose=False):
    E, r = _joint_frames(model, q)
    vff, qd = _split_dofs(model, v)
    aff, qdd = _split_dofs(model, a)
    # The base accelerates at −g (RBDA §5.3: gravity as a fictitious base acceleration).
    a0 = _join(jnp.zeros_like(g), -g)
    return E, r, _forward(model, E, r, method, qd, qdd, vff, aff, a0, pose=pose)


def _tau_from_forces(model, f_body):
    """``τ_i = S_iᵀ f_i`` (free flyer: ``f_0``) in ``v``'s order: ``(nv, N)``."""
    S = _n(_subspaces(model))
    tau = jnp.sum(S * f_body, axis=-2)
    if model.floating_base:
        return jnp.concatenate([f_body[0], tau[1:]], axis=0)
    return tau


def rnea(model: Model, q, v, a, gravity=(0.0, 0.0, -9.81), *, method: str = "scan") -> jax.Array:
    """Inverse dynamics by the recursive Newton-Euler algorithm (RBDA Table 5.1).

    Forward loop as in :func:`forward_kinematics` with the base accelerating
    at ``a_0 = [0; −g]`` (world coordinates), then
    ``f_i = I_i a_i + v_i ×* I_i v_i`` and, leaves to root,
    ``τ_i = S_iᵀ f_i``, ``f_λ += X_iᵀ f_i``. For a floating base the first six
    entries are the free flyer's generalised force, the body-frame wrench
    ``[n; f]`` that the base would need (Pinocchio's ``tau[:6]`` reordered
    ``[f; n]`` -> ``[n; f]``: :meth:`Model.v_from_pinocchio`).

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` velocity.
      a: ``(..., nv)`` acceleration.
      gravity: ``(..., 3)`` gravitational acceleration in world coordinates
        (default ``(0, 0, -9.81)`` m/s², Pinocchio's ``model.gravity``).
      method: ``"scan"`` (default), ``"levels"`` or ``"loop"`` (module docstring).

    Returns:
      ``(..., nv)`` generalised forces (N m for revolute joints, N for
      prismatic ones).
    """
    _check_method(method)
    q, v, a, g, batch = _dynamics_inputs(model, q, v, a, gravity)
    return _rnea_kernel(model, q, v, a, g, batch=batch, method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _rnea_kernel(model: Model, q, v, a, g, *, batch, method) -> jax.Array:
    """:func:`rnea` on checked inputs: one compiled program per structure."""
    q, v, a, g = _flat_dynamics(q, v, a, g, batch)

    def core(q, v, a, g):
        if method == "scan":
            return _rnea_scan(model, q, v, a, g)
        E, r, (groups, inv, _, _, V, A) = _rnea_forward(model, q, v, a, g, method)
        params = _n(model.inertia.params)
        F = []
        for (idx, _, _), vi, ai in zip(groups, V, A, strict=True):
            p = _take(params, idx)
            F.append(_inertia_times(p, ai) + _crf(vi, _inertia_times(p, vi)))
        F = _backward_sum(groups, F, E, r)
        return _tau_from_forces(model, _assemble(F, inv))

    return _unflat_bf(_chunked(core, q, v, a, g), batch)


def _dof_body(model: Model):
    out = []
    for i, t in enumerate(model.joint_types):
        out += [i] * (6 if t == "free_flyer" else 1)
    return np.asarray(out)


@functools.lru_cache(maxsize=256)
def _ancestor_mask(parents: tuple, dof_body: tuple):
    """``A[d, i]``: the body of dof ``d`` is body ``i`` or one of its ancestors."""
    nb = len(parents)
    anc = np.zeros((nb, nb), bool)  # anc[j, i]: j is i or an ancestor of i
    for i in range(nb):
        j = i
        while j >= 0:
            anc[j, i] = True
            j = parents[j]
    return anc[np.asarray(dof_body, int)]


def _world_subspaces(model, Rw, pw):
    """``(nv, 6, N)``: every dof's motion subspace column in world coordinates."""
    db = _dof_body(model)
    S = _subspaces(model)
    Sd = []
    for i, t in enumerate(model.joint_types):
        if t == "free_flyer":
            Sd.append(jnp.eye(6, dtype=S.dtype))
        else:
            Sd.append(S[i][None])
    Sd = _n(jnp.concatenate(Sd, axis=0))
    return _motion_to_parent(_rows(Rw, db), _rows(pw, db), Sd)


def mass_matrix(model: Model, q, *, method: str = "scan") -> jax.Array:
    """Joint-space inertia matrix ``H(q)`` by the composite-rigid-body algorithm (RBDA Table 6.2).

    Written in world coordinates: body inertias ``I_i⁰ = X_i⁰* I_i X_0i``
    (``RigidBodyInertia.transform``), composite inertias ``I_i^c = Σ_{k ∈
    subtree(i)} I_k⁰`` (in one frame a plain sum: one product with the static
    0/1 subtree matrix), then ``H_ij = S_iᵀ I_j^c S_j`` for
    body(i) an ancestor of (or equal to) body(j), ``H_ji = H_ij``, and zero
    between unrelated branches (RBDA §6.2). Rows/columns in ``v``'s order (free
    flyer ``[ω; v]``, body frame).

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      method: ``"scan"`` (default), ``"levels"`` or ``"loop"``: how the world
        poses are computed (module docstring).

    Returns:
      ``(..., nv, nv)`` symmetric positive-definite ``H`` (for positive masses).
    """
    _check_method(method)
    q = _as_input(q, "q", model.nq, model)
    return _mass_matrix_kernel(model, q, batch=tuple(q.shape[:-1]), method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _mass_matrix_kernel(model: Model, q, *, batch, method) -> jax.Array:
    """:func:`mass_matrix` on a checked ``q``: one compiled program per structure."""
    db = _dof_body(model)
    A = _ancestor_mask(model.parents, tuple(db))[:, db]  # A[e, d]: body(e) ancestor of body(d)
    below = [_runs(np.flatnonzero(A[e])) for e in range(model.nv)]  # dofs d with A[e, d]
    above = [_runs(np.flatnonzero(A[:, e] & ~A[e])) for e in range(model.nv)]  # strict

    def fwd(q):
        if method == "scan":
            Rw, pw = _scan_poses(model, q)  # world poses by the body scan
        else:
            E, r = _joint_frames(model, q)
            _, inv, Rw, pw, _, _ = _forward(model, E, r, method)
            Rw, pw = _assemble(Rw, inv), _assemble(pw, inv)
        I0 = _inertia_to_parent(_n(model.inertia.params), Rw, pw)  # (nb, 10, N), world frame
        # composite inertias: in one (world) frame a plain sum over each subtree,
        # written as one product with the static 0/1 subtree matrix (no scatter)
        D = _ancestor_mask(model.parents, tuple(range(model.nbodies))).astype(np.float64)
        Ic = jnp.einsum("kj,jcn->kcn", jnp.asarray(D, I0.dtype), I0)
        Sw = _world_subspaces(model, Rw, pw)  # (nv, 6, N)
        return Sw, _inertia_times(_rows(Ic, db), Sw)  # and I^c_{body(d)} S_d

    def pairs(feats):
        # row e: H_ed = S_eᵀ I^c_d S_d for body(e) an ancestor of (or equal to) body(d),
        # H_ed = H_de = S_dᵀ I^c_e S_e for body(d) a strict ancestor of body(e), else 0:
        # only those pairs are computed (static runs of dofs), zero blocks between them
        Sw, F = feats
        N = Sw.shape[-1]
        rows = []
        for e in range(model.nv):
            blocks = [(lo, hi, _dot6(Sw[lo:hi], F[e][None])) for lo, hi in above[e]]
            blocks += [(lo, hi, _dot6(Sw[e][None], F[lo:hi])) for lo, hi in below[e]]
            blocks.sort(key=lambda t: t[0])
            rows += _blocks_with_zeros(blocks, model.nv, (N,), Sw.dtype)
        return jnp.concatenate(rows, axis=0).reshape((model.nv, model.nv, N))

    nbytes = model.nv * model.nv * q.dtype.itemsize
    chunk = _chunk_for(nbytes)
    H = _chunked_blocks(
        fwd, pairs, _flat(q, batch), chunk=chunk, shape=(model.nv, model.nv), places=None
    )
    return _unflat_bf(H, batch)


def _projected_regressor_columns(s, w, al, x):
    r"""``sᵀ Φ(v, a)``: the 10 columns of the body regressor ``Φ`` against a motion ``s``.

    ``Φ(v, a) π = I a + v ×* I v`` is :func:`spatialjax.identification.body_regressor`
    (its reference in the tests).

    ``s (..., 6, N)`` is a motion in the body frame (a joint's subspace moved
    there), ``w = ω``, ``al = α``, ``x = a_v + ω × v_v`` ``(..., 3, N)`` of the
    body. Written out per column, skipping ``Φ``'s structural zeros (``sᵀ(u × y)
    = y · (s × u)``): mass ``s_v · x``; first moments ``x × s_ω + s_v × α +
    (s_v × ω) × ω``; rotational inertia ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
    columns ``s_ωᵀ L(α) + tᵀ L(ω)`` with ``t = s_ω × ω``. Returns ``(..., 10, N)``.
    """
    sw, sv = _split(s)
    h = _cross(x, sw) + _cross(sv, al) + _cross(_cross(sv, w), w)
    t = _cross(sw, w)
    s0, s1, s2 = sw[..., 0, :], sw[..., 1, :], sw[..., 2, :]
    t0, t1, t2 = t[..., 0, :], t[..., 1, :], t[..., 2, :]
    a0, a1, a2 = al[..., 0, :], al[..., 1, :], al[..., 2, :]
    w0, w1, w2 = w[..., 0, :], w[..., 1, :], w[..., 2, :]
    cols = [
        sv[..., 0, :] * x[..., 0, :] + sv[..., 1, :] * x[..., 1, :] + sv[..., 2, :] * x[..., 2, :],
        h[..., 0, :],
        h[..., 1, :],
        h[..., 2, :],
        s0 * a0 + t0 * w0,
        s0 * a1 + s1 * a0 + t0 * w1 + t1 * w0,
        s1 * a1 + t1 * w1,
        s0 * a2 + s2 * a0 + t0 * w2 + t2 * w0,
        s1 * a2 + s2 * a1 + t1 * w2 + t2 * w1,
        s2 * a2 + t2 * w2,
    ]
    return jnp.stack(cols, axis=-2)


@functools.lru_cache(maxsize=256)
def _subtree_runs(parents: tuple):
    """Per body ``j``: its subtree (``j`` and its descendants) as sorted ``(lo, hi)`` index runs.

    One run for a depth-first body order (the example-robot-data robots);
    several otherwise.
    """
    anc = _ancestor_mask(parents, tuple(range(len(parents))))  # anc[j, i]: j ancestor of i
    return tuple(_runs(np.flatnonzero(row)) for row in anc)


def _runs(idx):
    """Indices -> ``(lo, hi)`` runs of consecutive ones, in their order."""
    idx = [int(i) for i in idx]
    runs, lo = [], 0
    for k in range(1, len(idx) + 1):
        if k == len(idx) or idx[k] != idx[k - 1] + 1:
            runs.append((idx[lo], idx[k - 1] + 1))
            lo = k
    return tuple(runs)


# A chunk's pair results are transposed as ONE (rows, chunk) array in cache and then
# copied out by contiguous runs when they have at most this many rows (Panda, UR5
# regressors: 280, 210 rows; 1.3x faster), else each block is written transposed on its
# own (Talos regressor: 3540 rows; 1.2x faster so). Measured on the 2-core CPU.
_TRANSPOSE_ROWS = 1024


def _chunked_blocks(fwd, pairs, *xs, chunk: int, shape: tuple, places: tuple | None):
    """``pairs(fwd(*xs))`` in chunks, written in place into a zero-initialised output.

    ``fwd`` maps ``(k, N)`` inputs to per-state features (a pytree of
    ``(..., N)`` arrays: poses, velocities...). With ``places=None``, ``pairs``
    maps those to the whole result ``(*shape, N)``; else to a list of blocks
    ``(m_b, c..., N)``, block ``b`` going to
    ``out[:, row_b, lo_b : lo_b + m_b, ...]`` with ``places[b] = (row_b, lo_b)``:
    everything else stays zero, written once (the allocation's fill), not once
    per chunk. Returns ``(N, *shape)``, the batch FIRST.

    Two levels of chunks: ``fwd`` (the tree sweeps, one scan step per body,
    whose per-step cost does not shrink with the chunk) runs on ``_CHUNK``
    states at a time and its features are kept; ``pairs`` runs on ``chunk``
    states of those (``_chunk_for``: its results stay in cache). Each inner
    chunk's result is materialised (``lax.optimization_barrier``; fused into
    the transposed writes, XLA evaluated the arithmetic in the transposed
    order, about 10x slower), transposed and written with
    ``dynamic_update_slice``, in place: no padded stack of chunks and no
    final copy (for results of kilobytes per state those passes cost as much
    as the arithmetic). At both levels the last chunk starts at ``N - chunk``
    and recomputes part of the one before (identical values). Inputs of batch
    1 broadcast.
    """
    (n,) = np.broadcast_shapes(*(x.shape[-1:] for x in xs))
    if n == 0:  # an empty batch: nothing to sweep
        return jnp.zeros((0,) + tuple(shape), xs[0].dtype)
    outer = min(max(_CHUNK, chunk), n)
    chunk = min(chunk, outer)
    dyn = jax.lax.dynamic_slice_in_dim

    def sl(y, at, size):
        return y if y.shape[-1] == 1 else dyn(y, at, size, y.ndim - 1)

    def write(out, blocks, at):
        if places is None:
            upd = jnp.moveaxis(jax.lax.optimization_barrier(blocks), -1, 0)
            return jax.lax.dynamic_update_slice(out, upd, (at,) + (0,) * len(shape))
        rows = sum(int(np.prod(b.shape[:-1])) for b in blocks)
        if rows <= _TRANSPOSE_ROWS:
            flat = jnp.concatenate([b.reshape((-1, b.shape[-1])) for b in blocks], axis=0)
            tr = jax.lax.optimization_barrier(flat.T)  # (chunk, rows), in cache
            ups, off = [], 0
            for b in blocks:
                m = int(np.prod(b.shape[:-1]))
                ups.append(tr[:, off : off + m].reshape((tr.shape[0], 1) + b.shape[:-1]))
                off += m
        else:
            blocks = jax.lax.optimization_barrier(blocks)
            ups = [jnp.moveaxis(b, -1, 0)[:, None] for b in blocks]
        for u, (row, lo) in zip(ups, places, strict=True):
            out = jax.lax.dynamic_update_slice(out, u, (at, row, lo) + (0,) * (u.ndim - 3))
        return out

    def outer_body(k, out):
        start = jnp.minimum(k * outer, n - outer)
        feats = jax.lax.optimization_barrier(fwd(*(sl(x, start, outer) for x in xs)))

        def inner_body(j, out):
            at = jnp.minimum(j * chunk, outer - chunk)
            return write(out, pairs(jax.tree.map(lambda y: sl(y, at, chunk), feats)), start + at)

        return jax.lax.fori_loop(0, -(-outer // chunk), inner_body, out)

    out = jnp.zeros((n,) + tuple(shape), xs[0].dtype)
    return jax.lax.fori_loop(0, -(-n // outer), outer_body, out)


def _blocks_with_zeros(blocks, n, zero_shape, dtype):
    """Concatenate ``(lo, hi, block)`` pieces along axis 0 into ``n`` rows, zeros between."""
    pieces, at = [], 0
    for lo, hi, b in blocks:
        if lo > at:
            pieces.append(jnp.zeros((lo - at,) + zero_shape, dtype))
        pieces.append(b)
        at = hi
    if at < n:
        pieces.append(jnp.zeros((n - at,) + zero_shape, dtype))
    return pieces


def joint_torque_regressor(
    model: Model, q, v, a, gravity=(0.0, 0.0, -9.81), *, method: str = "scan"
) -> jax.Array:
    r"""``Y(q, v, a)`` with ``Y @ π == rnea(model, q, v, a, gravity)`` (linear in inertias).

    ``π = model.inertia.params.reshape(-1)``: the bodies' 10-vectors
    ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (about each body frame's
    origin, in its axes; Pinocchio's ``computeJointTorqueRegressor`` order).
    Built as ``Y[d, 10 i : 10 i + 10] = S_dᵀ X_{body(d)←i}* Φ_i(v_i, a_i)`` for
    body(d) an ancestor of (or equal to) body ``i``, zero otherwise, with
    ``Φ_i`` the body regressor of ``f_i = I_i a_i + v_i ×* I_i v_i`` (RBDA
    Table 5.1; Atkeson, An & Hollerbach 1986). Evaluated in body ``i``'s frame
    as ``(X_{i←body(d)} S_d)ᵀ Φ_i`` (``X_{d←i}* = X_{i←d}ᵀ``, RBDA §2.9):
    the dof's motion subspace moved from the world into body ``i``'s frame
    (``X_{i←world} S_d^world``, one motion transform per pair) against the
    body-frame columns of ``Φ_i``, written out without their structural zeros;
    only the non-zero (dof, body) pairs are computed.

    Args:
      model, q, v, a, gravity: as in :func:`rnea` (the model's inertias
        are not used).
      method: ``"scan"`` (default), ``"levels"`` or ``"loop"``: how the body
        velocities, accelerations and poses are computed (module docstring).

    Returns:
      ``(..., nv, 10 * nbodies)``.
    """
    _check_method(method)
    q, v, a, g, batch = _dynamics_inputs(model, q, v, a, gravity)
    return _regressor_kernel(model, q, v, a, g, batch=batch, method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _regressor_kernel(model: Model, q, v, a, g, *, batch, method) -> jax.Array:
    """:func:`joint_torque_regressor` on checked inputs: one compiled program per structure."""
    q, v, a, g = _flat_dynamics(q, v, a, g, batch)
    db = _dof_body(model)

    def fwd(q, v, a, g):
        if method == "scan":
            a0 = _join(jnp.zeros_like(g), -g)
            c = _scan_forward(model, q, v, a, a0)
            Rw, pw = _scan_poses(model, q, c)
            V, A = c["V"][: model.nbodies], c["A"][: model.nbodies]
        else:
            _, _, (_, inv, Rw, pw, V, A) = _rnea_forward(model, q, v, a, g, method, pose=True)
            Rw, pw = _assemble(Rw, inv), _assemble(pw, inv)
            V, A = _assemble(V, inv), _assemble(A, inv)
        w, vl = _split(V)
        al, av = _split(A)
        x = av + _cross(w, vl)  # (nb, 3, N)
        Sw = _world_subspaces(model, Rw, pw)  # (nv, 6, N) world frame
        return Rw, pw, w, al, x, Sw

    def pairs(feats):
        Rw, pw, w, al, x, Sw = feats
        out = []
        for d, lo, hi in places:
            # S_d moved into each body i's frame, s = X_{i<-world} S_d^world (motion),
            # materialised: the ten columns below read it instead of recomputing it
            s = jax.lax.optimization_barrier(_motion_to_child(Rw[lo:hi], pw[lo:hi], Sw[d][None]))
            out.append(_projected_regressor_columns(s, w[lo:hi], al[lo:hi], x[lo:hi]))
        return out

    # only the bodies i in the subtree of body(d) (static runs); the rest of row d is zero
    runs = _subtree_runs(model.parents)
    places = tuple((d, lo, hi) for d in range(model.nv) for lo, hi in runs[db[d]])
    nbytes = model.nv * model.nbodies * 10 * q.dtype.itemsize
    Y = _chunked_blocks(
        fwd, pairs,
        q, v, a, g,
        chunk=_chunk_for(nbytes),
        shape=(model.nv, model.nbodies, 10),
        places=tuple((d, lo) for d, lo, _ in places),
    )  # fmt: skip
    Y = _unflat_bf(Y, batch)
    return Y.reshape(batch + (model.nv, 10 * model.nbodies))


def friction_regressor(model: Model, v) -> jax.Array:
    r"""Joint friction regressor: ``τ_friction = Y_f(v) @ φ``.

    Three columns per one-degree-of-freedom joint ``j`` (in body order):
    viscous ``v_j``, Coulomb ``sign(v_j)`` and a constant offset ``1``, so
    ``φ = [F_v1, F_c1, o_1, F_v2, ...]`` and ``τ_j = F_vj v_j + F_cj sign(v_j) + o_j``.
    ``sign(0) = 0`` (``jnp.sign``): at rest the Coulomb column is zero, and
    its derivative is zero everywhere (no subgradient). A free flyer's six
    rows are zero (no joint friction on a floating base).

    Args:
      model: the tree.
      v: ``(..., nv)`` velocity.

    Returns:
      ``(..., nv, 3 * n1)`` with ``n1`` the number of one-DoF joints.
    """
    return _friction_kernel(model, _as_input(v, "v", model.nv, model))


@jax.jit
def _friction_kernel(model: Model, v) -> jax.Array:
    """:func:`friction_regressor` on a checked ``v``."""
    off = 6 if model.floating_base else 0
    n1 = model.nv - off
    vj = v[..., off:]
    cols = jnp.stack([vj, jnp.sign(vj), jnp.ones_like(vj)], axis=-1)  # (..., n1, 3)
    eye = jnp.eye(n1, dtype=v.dtype)
    block = eye[:, :, None] * cols[..., None, :, :]  # (..., n1, n1, 3): row d, joint j, col
    block = block.reshape(v.shape[:-1] + (n1, 3 * n1))
    if off:
        block = jnp.concatenate([jnp.zeros(v.shape[:-1] + (off, 3 * n1), v.dtype), block], -2)
    return block
