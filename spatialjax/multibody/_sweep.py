"""Tree sweeps, chunking and input checks shared by the multibody algorithms.

Arrays inside a sweep are batch-last (``_batchlast``); sweeps follow RBDA Table 5.1.
Docs page ``dynamics.md#tree-sweeps``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import FLOATING_DTYPES as _FLOATING
from .._checks import is_concrete, on_cpu
from .._errors import ArgumentError, ArgumentTypeError
from . import _batchlast as batchlast
from ._model import Model

_METHODS = ("auto", "levels", "loop", "scan")


# --------------------------------------------------------------- input checking
def as_input(x, name, n, model: Model):
    """Check a ``(..., n)`` state array; lists become NumPy arrays of the model's dtype."""
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
        if x.dtype.kind in "iub" or x.dtype == object:
            raise ArgumentTypeError(name, f"expected a floating-point array, got dtype {x.dtype}")
        x = np.asarray(x, model.dtype)
    if x.dtype not in _FLOATING and not jnp.issubdtype(x.dtype, jnp.floating):
        raise ArgumentTypeError(name, f"expected a floating-point array, got dtype {x.dtype}")
    if not isinstance(x, (jax.Array, np.ndarray)):
        x = jnp.asarray(x)
    if x.ndim < 1 or x.shape[-1] != n:
        raise ArgumentError(
            name,
            f"expected shape (..., {n}) for model {model.name!r} "
            f"({'nq' if name.startswith('q') else 'nv'} = {n}), got shape {tuple(x.shape)}",
        )
    if x.dtype != model.dtype:
        raise ArgumentTypeError(
            name,
            f"dtype {x.dtype} differs from the model's {model.dtype}; cast one of "
            "them (model.astype(dtype) or x.astype(model.dtype))",
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
            raise ArgumentError(
                "q",
                f"the free flyer's quaternion {where} is zero, which has no rotation; "
                "expected a non-zero [qw, qx, qy, qz] (it is normalised)",
            )
    return x


def check_method(method):
    if method not in _METHODS:
        raise ArgumentError("method", f"expected one of {_METHODS}, got {method!r}")


#: ``method="auto"`` picks the unrolled per-body form (``"loop"``) for models of at most
#: this many bodies swept at batches of at most :data:`_AUTO_LOOP_STATES` states, and
#: ``"scan"`` otherwise (``benchmarks/README.md``, "Where the batch-1 time goes").
_AUTO_LOOP_BODIES = 12
_AUTO_LOOP_STATES = 16
#: ``method="auto"`` computes ONE state of a model of at most this many bodies with the
#: world-frame one-state form of :mod:`._onestate` (RNEA, mass matrix, forward dynamics;
#: ``benchmarks/README.md``, "One state").
_ONE_STATE_BODIES = 12


def one_state(method: str, model: Model, batch: tuple) -> bool:
    """Whether ``method`` sweeps this call with ``_onestate``: ``"auto"``, ONE state
    (the product of ``batch`` is 1) of a model of at most ``_ONE_STATE_BODIES`` bodies."""
    return method == "auto" and math.prod(batch) == 1 and model.nbodies <= _ONE_STATE_BODIES


def resolve_method(method: str, model: Model, batch: tuple) -> str:
    """The sweep that ``method`` means for ``model`` at the batch shape ``batch`` (``"auto"``
    resolved by the number of states, the product of ``batch``)."""
    if method != "auto":
        return method
    n = math.prod(batch)
    small = model.nbodies <= _AUTO_LOOP_BODIES and n <= _AUTO_LOOP_STATES
    return "loop" if small else "scan"


def batch(**named):
    """Broadcast batch shape of the named ``(..., n)`` arrays (None skipped), else ArgumentError."""
    shapes = {k: tuple(v.shape[:-1]) for k, v in named.items() if v is not None}
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        names = list(shapes)
        bad = next(
            k for i, k in enumerate(names) if not broadcasts([shapes[n] for n in names[: i + 1]])
        )
        desc = ", ".join(f"{k} {s}" for k, s in shapes.items())
        raise ArgumentError(bad, f"batch shapes do not broadcast: {desc}") from None


def broadcasts(shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


#: Gravitational acceleration used when ``gravity=None`` (world coordinates, m/s²; the
#: default of Pinocchio's ``Model.gravity``).
STANDARD_GRAVITY = (0.0, 0.0, -9.81)


@functools.lru_cache(maxsize=8)
def _standard_gravity(dtype) -> np.ndarray:
    g = np.asarray(STANDARD_GRAVITY, dtype)
    g.flags.writeable = False
    return g


def as_gravity(gravity, model: Model):
    """``gravity`` (``None``: ``STANDARD_GRAVITY``) as an array of the model's dtype."""
    if gravity is None:
        return _standard_gravity(np.dtype(model.dtype))
    g: Any = gravity
    if not hasattr(g, "dtype"):
        g = np.asarray(g, dtype=np.float64)
        if g.dtype.kind not in "fiu":
            raise ArgumentTypeError(
                "gravity", f"expected a float array of shape (..., 3), got {gravity!r}"
            )
        g = np.asarray(g, model.dtype)
    elif g.dtype != model.dtype:
        raise ArgumentTypeError(
            "gravity", f"dtype {g.dtype} differs from the model's {model.dtype}"
        )
    if g.ndim < 1 or g.shape[-1] != 3:
        raise ArgumentError("gravity", f"expected shape (..., 3), got {tuple(g.shape)}")
    return g


def as_fext(f_ext, model: Model, name="f_ext"):
    """Check per-body wrenches ``(..., nbodies, 6)`` (``None`` passes through)."""
    if f_ext is None:
        return None
    if not hasattr(f_ext, "dtype"):
        f_ext = np.asarray(f_ext)
        if f_ext.dtype.kind not in "fiu":
            raise ArgumentTypeError(
                name, f"expected a floating-point array, got dtype {f_ext.dtype}"
            )
        f_ext = np.asarray(f_ext, model.dtype)
    if f_ext.dtype not in _FLOATING and not jnp.issubdtype(f_ext.dtype, jnp.floating):
        raise ArgumentTypeError(name, f"expected a floating-point array, got dtype {f_ext.dtype}")
    if not isinstance(f_ext, (jax.Array, np.ndarray)):
        f_ext = jnp.asarray(f_ext)
    if f_ext.ndim < 2 or f_ext.shape[-2:] != (model.nbodies, 6):
        raise ArgumentError(
            name,
            f"expected shape (..., {model.nbodies}, 6) for model {model.name!r} "
            f"(one wrench [n; f] per body, in the body's frame), got shape {tuple(f_ext.shape)}",
        )
    if f_ext.dtype != model.dtype:
        raise ArgumentTypeError(
            name,
            f"dtype {f_ext.dtype} differs from the model's {model.dtype}; cast one of "
            "them (model.astype(dtype) or f_ext.astype(model.dtype))",
        )
    return f_ext


def batch_with_fext(batch, f_ext):
    """Broadcast the states' batch with ``f_ext``'s (its leading axes before ``(nb, 6)``)."""
    if f_ext is None:
        return batch
    try:
        return tuple(np.broadcast_shapes(batch, tuple(f_ext.shape[:-2])))
    except ValueError:
        raise ArgumentError(
            "f_ext",
            f"batch shapes do not broadcast: states {batch}, f_ext {tuple(f_ext.shape[:-2])}",
        ) from None


def flat_fext(f_ext, batch):
    """``(..., nb, 6)`` -> ``(nb, 6, N)`` (batch last), inside a kernel."""
    nb = f_ext.shape[-2]
    f = jnp.broadcast_to(f_ext, batch + (nb, 6))
    n = int(np.prod(batch, dtype=int))
    return jnp.moveaxis(f.reshape((n, nb, 6)), 0, -1)


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


def take(x, idx):
    """``x[idx]`` on the leading axis; a slice when ``idx`` is a contiguous range."""
    idx = np.asarray(idx)
    if idx.size and np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size)):
        return x[int(idx[0]) : int(idx[0]) + idx.size]
    return x[idx]


def rows(x, idx):
    """``x[idx]`` on the leading axis with a static index list, as slices of its runs."""
    pieces = [x[lo:hi] for lo, hi in runs(idx)]
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=0)


def assemble(parts, inv_order):
    """Concatenate per-group arrays (body axis first) and restore body order."""
    x = jnp.concatenate(parts, axis=0)
    if np.array_equal(inv_order, np.arange(inv_order.size)):
        return x
    return x[inv_order]


def flat(x, batch):
    """``(..., k)`` user array -> ``(k, N)`` with ``N = prod(batch)`` (batch-last layout)."""
    x = jnp.broadcast_to(x, batch + x.shape[-1:])
    n = int(np.prod(batch, dtype=int))
    return x.reshape((n, x.shape[-1])).T


def _unflat(y, batch):
    """``(k..., N)`` -> ``(*batch, k...)``."""
    y = jnp.moveaxis(y, -1, 0)
    return y.reshape(batch + y.shape[1:])


# Batches longer than this are swept in chunks of this many states (``lax.map``):
# the per-level intermediates of a chunk stay in cache (``benchmarks/README.md``,
# "Multibody sweeps", for the measurement behind the size).
_CHUNK = 2048
_CHUNK_BYTES = 2**20  # target bytes of result per chunk (chunk_for)
# On an accelerator the chunks run one after another, each a sequence of kernel launches
# (an H200 took a time proportional to the number of chunks: benchmarks/README.md, "The GPU
# run"), so a chunk there is as long as memory allows: at most 2^15 states, about 1 GB of
# the ABA's intermediates for a 38-dof model in float64.
_ACCEL_CHUNK = 2**15


def accel_chunk(n: int, limit: int | None = None) -> int:
    """Length of the fewest equal chunks of at most ``limit`` (default ``_ACCEL_CHUNK``)
    states that cover ``n``."""
    limit = _ACCEL_CHUNK if limit is None else limit
    return -(-n // -(-n // limit)) if n > 0 else 0


def chunk_for(out_bytes_per_state: int) -> int:
    """Chunk length (a power of two in ``[64, _CHUNK]``) for about 1 MB of result per chunk."""
    n = _CHUNK_BYTES // max(int(out_bytes_per_state), 1)
    return int(np.clip(2 ** int(np.floor(np.log2(max(n, 1)))), 64, _CHUNK))


def chunked(core, *xs, chunk: int = _CHUNK, accel: int | None = None):
    """``core(*xs)`` on ``(k, N)`` inputs in chunks; outputs batch FIRST, ``(N, k...)``.

    Chunks of ``chunk`` states on the CPU (batches up to ``2 chunk`` in one pass), of at
    most ``accel`` (default ``_ACCEL_CHUNK``) on an accelerator (``_checks.on_cpu(xs)``
    false; ``accel_chunk``)."""

    def batch_first(out):
        return jax.tree.map(lambda y: jnp.moveaxis(y, -1, 0), out)

    n = max(x.shape[-1] for x in xs)
    if on_cpu(xs):
        whole = n <= 2 * chunk
    else:
        chunk = accel_chunk(n, accel)
        whole = n <= chunk
    if whole:
        return batch_first(core(*xs))
    nc = -(-n // chunk)
    pad = nc * chunk - n

    def split(x):
        x = jnp.broadcast_to(x, x.shape[:-1] + (n,))
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)], mode="edge")
        return jnp.moveaxis(x.reshape(x.shape[:-1] + (nc, chunk)), -2, 0)

    out = jax.lax.map(lambda c: batch_first(core(*c)), tuple(split(x) for x in xs))
    return jax.tree.map(lambda y: y.reshape((nc * chunk,) + y.shape[2:])[:n], out)


def unflat_bf(y, batch):
    """``(N, k...)`` -> ``(*batch, k...)``."""
    return y.reshape(batch + y.shape[1:])


def joint_frames(model: Model, q):
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
    PR, Pp, ax = (
        batchlast.n(model.placements.E),
        batchlast.n(model.placements.r),
        batchlast.n(model.axes),
    )
    theta = qb * rot  # (nb, N)
    K = batchlast.skew(ax)  # (nb, 3, 3, 1)
    s, c = jnp.sin(theta)[:, None, None, :], jnp.cos(theta)[:, None, None, :]
    Rj = jnp.eye(3, dtype=q.dtype)[:, :, None] + s * K + (1.0 - c) * batchlast.mm(K, K)
    E = batchlast.mm(PR, Rj)
    r = Pp + batchlast.mv(PR, ax * (qb * pri)[:, None, :])
    if ff:
        Rq = batchlast.quat_matrix(q[3], q[4], q[5], q[6])
        E0 = batchlast.mm(PR[0], Rq)
        r0 = Pp[0] + batchlast.mv(PR[0], q[0:3])
        E = jnp.concatenate([E0[None], E[1:]], axis=0)
        r = jnp.concatenate([r0[None], r[1:]], axis=0)
    return E, r


def body_subspaces(model: Model):
    """``(nb, 6)`` motion subspace ``S_i`` of each 1-DoF joint in its body frame (free flyer: 0)."""
    rot = np.array([t in ("revolute", "continuous") for t in model.joint_types], float)[:, None]
    pri = np.array([t == "prismatic" for t in model.joint_types], float)[:, None]
    ax = model.axes
    return jnp.concatenate([ax * jnp.asarray(rot, ax.dtype), ax * jnp.asarray(pri, ax.dtype)], -1)


def split_dofs(model: Model, x):
    """``(nv, N)`` -> (free-flyer part ``(6, N)`` or None, per-body ``(nb, N)``)."""
    if model.floating_base:
        xb = jnp.concatenate([jnp.zeros((1, x.shape[-1]), x.dtype), x[6:]], axis=0)
        return x[:6], xb
    return None, x


def forward(model, E, r, method, qd=None, qdd=None, vff=None, aff=None, a0=None, pose=True):
    """Forward sweep (RBDA Table 5.1): world poses, body ``v_i``, ``a_i``; per-group lists."""
    groups, inv = _groups(model.parents, model.levels, method)
    S = batchlast.n(body_subspaces(model)) if qd is not None else None
    N = E.shape[-1]
    Rw, pw, V, A = [], [], [], []
    for idx, gp, pos in groups:
        Eg, rg = take(E, idx), take(r, idx)
        if gp < 0:
            if pose:
                Rw.append(Eg)
                pw.append(rg)
            vp = None
            ap = None if a0 is None else jnp.broadcast_to(a0, (len(idx), 6, N))
        else:
            if pose:
                Rp, pp = take(Rw[gp], pos), take(pw[gp], pos)
                Rw.append(batchlast.mm(Rp, Eg))
                pw.append(pp + batchlast.mv(Rp, rg))
            vp = take(V[gp], pos) if qd is not None else None
            ap = take(A[gp], pos) if qdd is not None else None
        if qd is None:
            continue
        Sg = take(S, idx)
        vJ = Sg * take(qd, idx)[:, None, :]
        vi = vJ if vp is None else batchlast.motion_to_child(Eg, rg, vp) + vJ
        if gp < 0 and vff is not None and idx[0] == 0:
            # free flyer: v_0 = v[:6] and S = 1 (RBDA §4.5), so a_0 = X_0 a_world + v̇[:6]
            vi = jnp.concatenate([vff[None], vi[1:]], axis=0)
        V.append(vi)
        if qdd is None:
            continue
        ai = Sg * take(qdd, idx)[:, None, :] + batchlast.crm(vi, vJ)
        if ap is not None:
            ai = ai + batchlast.motion_to_child(Eg, rg, ap)
        if gp < 0 and aff is not None and idx[0] == 0:
            a_root = aff if ap is None else batchlast.motion_to_child(Eg[0], rg[0], ap[0]) + aff
            ai = jnp.concatenate([a_root[None], ai[1:]], axis=0)
        A.append(ai)
    return groups, inv, Rw, pw, V, A


def backward_sum(groups, parts, E, r, transform=True):
    """Backward sweep: add each group's values into its parents' (``transform``: ``Xᵀ f``)."""
    parts = list(parts)
    for g in range(len(groups) - 1, -1, -1):
        idx, gp, pos = groups[g]
        if gp < 0:
            continue
        x = parts[g]
        if transform:
            x = batchlast.force_to_parent(take(E, idx), take(r, idx), x)
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


def dyn(x, i):
    return jax.lax.dynamic_index_in_dim(x, i, 0, keepdims=False)


def put(x, val, i):
    return jax.lax.dynamic_update_index_in_dim(x, val, i, 0)


def _pose_row(R, p):
    """``(3, 3, N)``, ``(3, N)`` -> ``(12, N)`` rows ``[R (row-major); p]``."""
    return jnp.concatenate([R.reshape((9,) + R.shape[2:]), p], axis=0)


def scan_forward(model: Model, q, v=None, a=None, a0=None, pose=True):
    """Forward sweep as scans over bodies: ``(nb + 1, k, N)`` buffers ``T``, ``V``, ``A``."""
    ff = model.floating_base
    nb, N, dt = model.nbodies, q.shape[-1], q.dtype
    s0 = 1 if ff else 0
    xs, (Sw, Sv), root = scan_xs(model, q)
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
        E, r = step_frame(x)
        c = dict(c)
        if pose:
            T = dyn(c["T"], x["p"])
            R = [T[3 * j + k] for j in range(3) for k in range(3)]
            rows = [sum(R[3 * j + m] * E[3 * m + k] for m in range(3)) for j in range(3)
                    for k in range(3)]  # fmt: skip
            rows += [T[9 + j] + sum(R[3 * j + m] * r[m] for m in range(3)) for j in range(3)]
            c["T"] = put(c["T"], jnp.stack(rows), x["i"])
        if "V" in c:
            m = batchlast.rows_to_child(E, r, list(dyn(c["V"], x["p"])))
            qd = x["qd"]
            row = [m[k] + x["Sw"][k] * qd for k in range(3)]
            row += [m[3 + k] + x["Sv"][k] * qd for k in range(3)]
            c["V"] = put(c["V"], jnp.stack(row), x["i"])
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
        a_root = a[:6] if a0 is None else a[:6] + batchlast.motion_to_child(root[0], root[1], a0)
        A = A.at[0].set(a_root)
    # b_i = S_i q̈_i + v_i × S_i q̇_i for all bodies at once, then a_i = X_i a_λ + b_i
    sl = slice(s0, nb)
    vJ = batchlast.join(Sw[sl, :, None] * vb[:, None, :], Sv[sl, :, None] * vb[:, None, :])
    bias = batchlast.join(Sw[sl, :, None] * ab[:, None, :], Sv[sl, :, None] * ab[:, None, :])
    bias = bias + batchlast.crm(c["V"][sl], vJ)

    def acc_step(A, x):
        E, r = step_frame(x)
        m = batchlast.rows_to_child(E, r, list(dyn(A, x["p"])))
        return put(A, jnp.stack(m) + x["b"], x["i"]), None

    c["A"], _ = jax.lax.scan(acc_step, A, dict(xs, b=bias))
    return c


def scan_poses(model: Model, q, c=None):
    """World poses ``(nb, 3, 3, N)``, ``(nb, 3, N)`` from a scan carry (run when ``c`` is None)."""
    if c is None:
        c = scan_forward(model, q)
    T = c["T"][: model.nbodies]
    return T[:, :9].reshape((model.nbodies, 3, 3, T.shape[-1])), T[:, 9:]


def rodrigues_terms(model: Model):
    """Per body ``(P, P K, P K²)`` as ``(nb, 9)`` rows (row-major) and ``P a``, ``p``
    (NumPy for a model of NumPy fields)."""
    P = model.placements.E
    a = model.axes[:, None, :]
    # row r of P K is P_r × a (K = [a]×), of P K² is (P K)_r × a: written out, so that a
    # model passed as an argument adds a few fused kernels, not matrix products
    PK = cross3(P, a)
    PKK = cross3(PK, a)
    nb = P.shape[0]
    Pa = P[:, :, 0] * a[:, :, 0] + P[:, :, 1] * a[:, :, 1] + P[:, :, 2] * a[:, :, 2]
    return P.reshape(nb, 9), PK.reshape(nb, 9), PKK.reshape(nb, 9), Pa, model.placements.r


def cross3(x, a):
    """``x × a`` on the last axis (written out; NumPy in, NumPy out: ``batchlast.stack``)."""
    x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    return batchlast.stack([x1 * a2 - x2 * a1, x2 * a0 - x0 * a2, x0 * a1 - x1 * a0], axis=-1)


def step_frame(x):
    """``E`` (9 rows, row-major) and ``r`` (3 rows) of one body from its scanned values."""
    s, omc = x["s"], x["omc"]
    E = [x["P"][k] + s * x["PK"][k] + omc * x["PKK"][k] for k in range(9)]
    r = [x["pp"][k] + x["Pa"][k] * x["d"] for k in range(3)]
    return E, r


def scan_xs(model: Model, q):
    """Per scanned body (all but a free-flyer root): indices, joint terms and constants."""
    nb, dt = model.nbodies, q.dtype
    ff = model.floating_base
    s0 = 1 if ff else 0
    rot = np.array([t in ("revolute", "continuous") for t in model.joint_types], float)[:, None]
    pri = np.array([t == "prismatic" for t in model.joint_types], float)[:, None]
    qb = q[7:] if ff else q
    sl = slice(s0, nb)
    theta = qb * jnp.asarray(rot[sl], dt)
    P, PK, PKK, Pa, pp = rodrigues_terms(model)
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
        E0 = batchlast.mm(PR0, batchlast.quat_matrix(q[3], q[4], q[5], q[6]))
        root = (E0, model.placements.r[0][:, None] + batchlast.mv(PR0, q[0:3]))
    return xs, (Sw, Sv), root


def dynamics_inputs(model, q, v, a, gravity):
    q = as_input(q, "q", model.nq, model)
    v = as_input(v, "v", model.nv, model)
    a = as_input(a, "a", model.nv, model)
    g = as_gravity(gravity, model)
    return q, v, a, g, batch(q=q, v=v, a=a, gravity=g)


def flat_dynamics(q, v, a, g, batch):
    """Checked ``q, v, a, g`` as ``(k, N)`` with the flattened batch last (inside a kernel)."""
    g = g[:, None] if g.ndim == 1 else flat(g, batch)
    return flat(q, batch), flat(v, batch), flat(a, batch), g


def dof_body(model: Model):
    out = []
    for i, t in enumerate(model.joint_types):
        out += [i] * (6 if t == "free_flyer" else 1)
    return np.asarray(out)


@functools.lru_cache(maxsize=256)
def ancestor_mask(parents: tuple, dof_body: tuple):
    """``A[d, i]``: the body of dof ``d`` is body ``i`` or one of its ancestors."""
    nb = len(parents)
    anc = np.zeros((nb, nb), bool)  # anc[j, i]: j is i or an ancestor of i
    for i in range(nb):
        j = i
        while j >= 0:
            anc[j, i] = True
            j = parents[j]
    return anc[np.asarray(dof_body, int)]


def world_subspaces(model, Rw, pw):
    """``(nv, 6, N)``: every dof's motion subspace column in world coordinates."""
    db = dof_body(model)
    S = body_subspaces(model)
    Sd = []
    for i, t in enumerate(model.joint_types):
        if t == "free_flyer":
            Sd.append(jnp.eye(6, dtype=S.dtype))
        else:
            Sd.append(S[i][None])
    Sd = batchlast.n(jnp.concatenate(Sd, axis=0))
    return batchlast.motion_to_parent(rows(Rw, db), rows(pw, db), Sd)


@functools.lru_cache(maxsize=256)
def subtree_runs(parents: tuple):
    """Per body ``j``: its subtree (``j`` and its descendants) as sorted ``(lo, hi)`` index runs."""
    anc = ancestor_mask(parents, tuple(range(len(parents))))  # anc[j, i]: j ancestor of i
    return tuple(runs(np.flatnonzero(row)) for row in anc)


def runs(idx):
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
# regressors: 280, 210 rows), else each block is written transposed on its own (Talos
# regressor: 3540 rows); each the faster form there (``benchmarks/README.md``).
_TRANSPOSE_ROWS = 1024


def chunked_blocks(fwd, pairs, *xs, chunk: int, shape: tuple, places: tuple | None):
    """``pairs(fwd(*xs))`` in chunks, written in place into a zero output ``(N, *shape)``.

    ``places[b] = (row_b, lo_b)``: block ``b`` goes to ``out[:, row_b, lo_b : lo_b + m_b]``;
    ``None``: ``pairs`` returns the whole result.
    """
    (n,) = np.broadcast_shapes(*(x.shape[-1:] for x in xs))
    if n == 0:  # an empty batch: nothing to sweep
        return jnp.zeros((0,) + tuple(shape), xs[0].dtype)
    if on_cpu(xs):
        outer = min(max(_CHUNK, chunk), n)
        chunk = min(chunk, outer)
    else:  # one pass per chunk: no inner chunks kept in a cache
        outer = chunk = accel_chunk(n)
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


def blocks_with_zeros(blocks, n, zero_shape, dtype):
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
