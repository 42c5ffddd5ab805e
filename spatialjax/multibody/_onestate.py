"""One state of a small tree: world-frame dynamics with few, small operations.

Every quantity in world axes about a common origin (the world's, or a free-flyer
root's). Derivation: docs page ``dynamics.md#one-state``.

The model's numbers reach these programs as *terms* (``terms``): from the model's fields
when they are traced, or, for a model whose values are known when the caller's program is
traced (closed over by ``jit``), computed here in NumPy and packed into a few constants of
at most 512 bytes behind an ``optimization_barrier`` (``host_terms``), the joint axes (and a
known gravity) as numbers written into the program while it is staged (``HostTerms``).
XLA:CPU allocates a buffer per constant at every call, and would otherwise fold the model
into one constant per field and body; the tree's structure enters as static sums over
ancestors and subtrees, not as constant 0/1 matrices.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import partial_eval as pe

from .. import _smallmat as smallmat
from . import _batchlast as batchlast
from . import _sweep as sweep
from ._model import Model, _unpack, _writable

_Tracer = jax.core.Tracer  # pyright: ignore[reportAttributeAccessIssue]
_StagingTracer = pe.DynamicJaxprTracer


# ----------------------------------------------------------------- structure
@functools.lru_cache(maxsize=256)
def _layout(parents: tuple, joint_types: tuple):
    """Static index sets of a tree: per body its ancestors (root first, itself last) and its
    subtree; per dof its body; per body the dofs of its ancestors (itself included)."""
    nb = len(parents)
    anc: list[tuple] = []
    for i, p in enumerate(parents):
        anc.append((anc[p] if p >= 0 else ()) + (i,))
    sub = tuple(tuple(k for k in range(nb) if i in anc[k]) for i in range(nb))
    db = []
    for i, t in enumerate(joint_types):
        db += [i] * (6 if t == "free_flyer" else 1)
    anc_dofs = tuple(tuple(d for d, b in enumerate(db) if b in anc[i]) for i in range(nb))
    return tuple(anc), sub, tuple(db), anc_dofs


def _sums(x, sets):
    """``stack([Σ_{j ∈ s} x[j] for s in sets])``: static sums of rows, in one fused kernel."""
    return jnp.stack([smallmat.sum_terms(x[j] for j in s) for s in sets])


# ---------------------------------------------------------------------- terms
def _sigma(params):
    """``Σ = ½ tr(I) 1 − I`` (row-major, ``(..., nb, 9)``) of the bodies' 10-vectors ``params
    (..., nb, 10)``: the second moment of the mass about the body origin (NumPy in, NumPy
    out). ``I`` row-major is the entries ``4 5 7 / 5 6 8 / 7 8 9`` of the 10-vector ``[m, h,
    Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``: five runs of it concatenated, and a diagonal mask. For a
    model passed as an argument one fused kernel and no constant (a gather reads its indices
    from a constant, a buffer at every call; a product with a constant matrix is a
    matrix-product call; a stack of the nine entries or selects on an index several
    kernels)."""
    xp = np if isinstance(params, np.ndarray) else jnp
    half = 0.5 * (params[..., 4:5] + params[..., 6:7] + params[..., 9:10])
    if xp is np:
        diag = np.arange(9) % 4 == 0
    else:  # an iota, not a constant of the program
        diag = jax.lax.broadcasted_iota(np.int32, (9,), 0) % 4 == 0
    p = params
    runs = [p[..., 4:6], p[..., 7:8], p[..., 5:7], p[..., 8:9], p[..., 7:10]]
    return xp.where(diag, half, 0.0) - xp.concatenate(runs, axis=-1)


def _term_shapes(model: Model) -> tuple:
    """``(name, shape)`` of every packed term (in the order of ``all_names``)."""
    nb, nv, nf = model.nbodies, model.nv, len(model.frame_names)
    return (
        ("P", (nb, 9)), ("p", (nb, 3)), ("m", (nb,)), ("h", (nb, 3)),
        ("armature", (nv,)), ("damping", (nv,)), ("Sigma", (nb, 9)),
    ) + tuple((f"frame{k}", (12,)) for k in range(nf))  # fmt: skip


def _term_values(model: Any) -> dict:
    """The terms of a ``Model`` (traced fields) or of its fields in NumPy (``host_terms``).

    Per body: its placement in its parent at ``q = 0``, ``P`` (row-major) and ``p``, the
    mass, the first moment ``h`` and ``Σ = ½ tr(I) 1 − I`` (row-major; the second moment of
    the mass about the body origin, body axes), its joint axis (``"axes"``: not packed); the
    armature and damping; per frame ``k`` (``"frame{k}"``) its placement ``[E (row-major),
    r]``.
    """
    params = model.inertia.params
    nb, nf = model.axes.shape[0], len(model.frame_names)
    E, r = model.frame_placements.E.reshape(nf, 9), model.frame_placements.r
    cat = np.concatenate if isinstance(E, np.ndarray) else jnp.concatenate
    return dict(
        P=model.placements.E.reshape(nb, 9), p=model.placements.r, axes=model.axes,
        m=params[:, 0], h=params[:, 1:4], Sigma=_sigma(params), armature=model.armature,
        damping=model.damping,
        **{f"frame{k}": cat([E[k], r[k]]) for k in range(nf)},  # one frame, not all frames
    )  # fmt: skip


_FIELDS = ("placements", "axes", "inertia", "armature", "damping", "frame_placements")


def _host_fields(model: Model) -> tuple[dict | None, bool]:
    """The model's fields that the terms are made of, in NumPy (None where one is traced),
    and whether terms made of them may be kept on the model: no NumPy array among them or
    the model's leaves that may still change in place.

    A model rebuilt from its two leaves (``jit``, ``tree.map``, ``astype``) reads them from
    the leaves on the host: reading its fields first inside a trace would trace them."""
    values = model.__dict__.get("_values")
    if values is not None and all(_is_concrete(v) for v in values):
        fields = _unpack(model.structure, tuple(np.asarray(v) for v in values))
        return {k: fields[k] for k in _FIELDS}, not any(map(_writable, values))
    fields = {k: getattr(model, k) for k in _FIELDS}
    arrays = jax.tree.leaves(fields)
    if not all(_is_concrete(v) for v in arrays):
        return None, False
    return jax.tree.map(np.asarray, fields), not any(map(_writable, arrays))


def _is_concrete(x) -> bool:
    return hasattr(x, "dtype") and not isinstance(x, _Tracer)


#: bytes per constant: XLA:CPU runs a program's kernels one after the other, in the calling
#: thread, when no buffer is larger (its thunk executor's ``execute_sequential_buffer_threshold``)
_CHUNK_BYTES = 512


@jax.tree_util.register_pytree_node_class
class HostTerms:
    """A closed-over model's terms for the one-state programs (``host_terms``).

    Attributes:
      chunks: NumPy arrays of at most ``_CHUNK_BYTES``, the packed terms one after the other,
        raveled, in the model's dtype (leaves: constants of the program); None for a traced
        model (only ``gravity`` is known).
      axes: the joint axes ``(nb, 3)``: tuples of Python floats (static: numbers written into
        the program, so that the joint rotations' ``P K`` and ``P K²`` cost no constant, and a
        product with a zero or unit component no operation), or a NumPy array (a leaf).
      gravity: a call's gravity ``(3,)`` as static numbers, or None (the call's array).

    Static numbers are part of the compiled kernels' cache keys: ``host_terms`` and
    ``packed_terms`` write them only while a program is being staged (``staging``), whose
    constants they replace; under an eager ``vmap`` or ``grad`` they stay leaves, and one
    compiled kernel serves every model of a structure and every gravity.
    """

    def __init__(self, chunks: tuple | None, axes, gravity: tuple | None = None):
        self.chunks = chunks
        self.axes = axes
        self.gravity = gravity

    def tree_flatten(self):
        static = isinstance(self.axes, tuple) or self.axes is None
        leaves = (self.chunks or ()) + (() if static else (self.axes,))
        return leaves, (self.axes if static else None, self.gravity, self.chunks is None, static)

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        axes, gravity, traced, static = aux
        leaves = tuple(leaves)
        if not static:
            leaves, axes = leaves[:-1], leaves[-1]
        return cls(None if traced else leaves, axes, gravity)


def staging(x) -> bool:
    """Whether ``x`` is a tracer of a program being staged (``jit``, ``lax.scan``, ...), not of
    an eager transformation (``vmap``, ``grad`` of an eager call) whose kernels are compiled
    on their own."""
    return isinstance(x, _StagingTracer)


def _static_numbers(x) -> tuple | None:
    """A NumPy array's entries as nested tuples of Python floats (in its dtype), or None if
    one is not finite (NaN is unequal to itself: a cache key that never matches)."""
    x = np.asarray(x)
    if not np.isfinite(x).all():
        return None
    return tuple(map(tuple, x.tolist())) if x.ndim == 2 else tuple(x.tolist())


def host_terms(model: Model, x) -> HostTerms | None:
    """Every packed term of the model (``all_names``) and its joint axes (``HostTerms``),
    when a program is being traced (``x`` a tracer) with this model's values known (no
    traced or batched leaf); None otherwise (an eager call passes the model's two arrays, a
    traced model its fields).

    One layout per model, whatever the program reads: two one-state calls in one program
    (a controller's mass matrix and Jacobian) then read the same constants, and XLA computes
    what they share (the poses) once. Kept on the model object after the first call, unless
    the model holds NumPy arrays that may change in place."""
    if not isinstance(x, _Tracer):
        return None  # an eager call
    packed = model.__dict__.get("_host_terms")  # only ever kept on a model that is fixed
    if packed is not None:
        return _for_trace(packed, x)
    fields, keep = _host_fields(model)
    if fields is None or fields["placements"].E.ndim != 3:
        return None  # a traced model, or a batch of models
    dtype = fields["axes"].dtype
    host = jax.tree.map(lambda v: np.asarray(v, np.float64), fields)
    values = _term_values(types.SimpleNamespace(**host, frame_names=model.frame_names))
    parts = [np.zeros(int(k[4:])) if k.startswith("pad:") else np.ravel(values[k])
             for k in _aligned(model, dtype)[1]]  # fmt: skip
    flat = np.concatenate(parts).astype(dtype)
    n = _CHUNK_BYTES // flat.itemsize
    chunks = tuple(flat[i : i + n] for i in range(0, flat.size, n))
    packed = HostTerms(chunks, np.array(fields["axes"], dtype))
    if keep:  # writable NumPy fields: made again at every trace
        object.__setattr__(model, "_host_terms", packed)
    return _for_trace(packed, x)


def _for_trace(packed: HostTerms, x) -> HostTerms:
    """``packed`` (its axes a NumPy array) with the axes as static numbers if ``x`` is being
    staged (``staging``) and they are finite."""
    axes = _static_numbers(packed.axes) if staging(x) else None
    return packed if axes is None else HostTerms(packed.chunks, axes)


def packed_terms(method: str, model: Model, batch: tuple, q, gravity=None) -> HostTerms | None:
    """``host_terms(model, q)`` for a call that ``method`` sweeps as one state
    (``sweep.one_state``), else None: what a public function passes to its kernel; while a
    program is being staged (``staging(q)``), with the call's ``gravity`` (a checked ``(3,)``
    array) as static numbers where it is known and finite (otherwise it stays the kernel's
    array argument: one compiled kernel whatever its value)."""
    if not sweep.one_state(method, model, batch):
        return None
    packed = host_terms(model, q)
    if not staging(q) or gravity is None or isinstance(gravity, _Tracer):
        return packed
    g = _static_numbers(np.asarray(gravity).reshape(3))
    if g is None:
        return packed
    if packed is None:
        return HostTerms(None, None, g)
    return HostTerms(packed.chunks, packed.axes, g)


def terms(model: Model, names: tuple, packed: HostTerms | None = None) -> dict:
    """The terms ``names`` (``_term_values``), ``"axes"`` and ``"gravity"``: sliced from
    ``packed``'s chunks (each held behind an ``optimization_barrier`` so that XLA keeps it
    as it is, one constant; only those that hold ``names`` enter the program), its axes and
    gravity static numbers, or computed from the model's fields (``"axes"`` an array,
    ``"gravity"`` None: the call's own)."""
    if packed is None or packed.chunks is None:
        values = _term_values(model)
        gravity = None if packed is None else packed.gravity
        return {k: values[k] for k in names + ("axes",)} | {"gravity": gravity}
    chunk0 = packed.chunks[0]
    n = _CHUNK_BYTES // chunk0.dtype.itemsize
    starts, _ = _aligned(model, chunk0.dtype)
    shapes = dict(_term_shapes(model))
    chunks = {}
    out = {}
    for name in names:
        start = starts[name]
        stop = start + int(np.prod(shapes[name]))
        parts = []
        for c in range(start // n, (stop - 1) // n + 1):
            if c not in chunks:
                chunks[c] = jax.lax.optimization_barrier(jnp.asarray(packed.chunks[c]))
            parts.append(chunks[c][max(start - c * n, 0) : min(stop - c * n, n)])
        flat = parts[0] if len(parts) == 1 else jnp.concatenate(parts)
        out[name] = flat.reshape(shapes[name])
    return out | {"axes": packed.axes, "gravity": packed.gravity}


def _aligned(model: Model, dtype) -> tuple:
    """``{name: start}`` of every term of ``all_names`` in the packed terms, and the names
    with ``"pad:k"`` entries (``k`` zeros) such that a term that fits in one chunk does not
    straddle two."""
    n = _CHUNK_BYTES // np.dtype(dtype).itemsize
    shapes = dict(_term_shapes(model))
    starts, padded, at = {}, [], 0
    for name in all_names(model):
        size = int(np.prod(shapes[name]))
        if size <= n and at // n != (at + size - 1) // n:
            gap = n - at % n
            padded.append(f"pad:{gap}")
            at += gap
        starts[name] = at
        padded.append(name)
        at += size
    return starts, padded


def all_names(model: Model) -> tuple:
    """Every packed term of the model, in the order they are packed (``ALL`` and a
    placement per frame)."""
    return ALL + tuple(f"frame{k}" for k in range(len(model.frame_names)))


#: the packed terms each one-state program reads (and every program the axes)
POSES = ("P", "p")
JACOBIAN = POSES
RNEA = POSES + ("m", "h", "armature", "Sigma")
MASS = RNEA
FD = POSES + ("m", "h", "armature", "damping", "Sigma")
#: every term but the frames', in the order they are packed: those of the poses first, the
#: small ones side by side (forward dynamics reads every term: a test checks)
ALL = FD


# ------------------------------------------------------------------------ axes
def _scaled_sum(terms: list, like):
    """``Σ k x`` over ``(x, k)`` pairs with Python-float ``k``: a zero ``k`` skipped, ``±1``
    a sign (zeros like ``like`` if nothing is left)."""
    scaled = [x if k == 1.0 else -x if k == -1.0 else k * x for x, k in terms if k != 0.0]
    return smallmat.sum_terms(scaled) if scaled else jnp.zeros_like(like)


def axis_cross(x, a):
    """Rows ``x × a`` (``(..., 3)``) by a joint axis: an array, or static numbers (a tuple,
    ``HostTerms.axes``) whose zero and unit components cost no operation."""
    if not isinstance(a, tuple):
        return sweep.cross3(x, a)
    x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
    return jnp.stack([_scaled_sum([(x1, a[2]), (x2, -a[1])], x0),
                      _scaled_sum([(x2, a[0]), (x0, -a[2])], x0),
                      _scaled_sum([(x0, a[1]), (x1, -a[0])], x0)], axis=-1)  # fmt: skip


def axis_times(M, a):
    """``M a`` for ``(..., 3, 3)`` matrices ``M`` and a joint axis (as ``axis_cross``)."""
    if not isinstance(a, tuple):
        return smallmat.mv(M, a)
    return _scaled_sum([(M[..., :, c], a[c]) for c in range(3)], M[..., :, 0])


def _world_axes(R, axes):
    """``R_i a_i`` of bodies' rotations ``R (n, 3, 3)`` and axes ``(n, 3)`` (as
    ``axis_cross``: static axes shared by every body in one operation)."""
    if not isinstance(axes, tuple):
        return smallmat.mv(R, axes)
    if all(a == axes[0] for a in axes):
        return axis_times(R, axes[0])
    return jnp.stack([axis_times(R[i], a) for i, a in enumerate(axes)])


# ------------------------------------------------------------------ kinematics
def _joint_frame(model: Model, K: dict, q, i: int, wait=None):
    """Body ``i``'s pose in its parent, ``E (3, 3)`` and ``r (3,)`` (``q`` of one state), from
    its own rows of the terms; ``wait`` (a scalar or None) is added as ``0 · wait`` to the
    joint coordinate, so that the kernel runs only once ``wait`` is computed.

    A revolute joint's ``E(q) = P + sin q P K + (1 − cos q) P K²`` (Rodrigues, ``K =
    [axis]×``), its rows ``P K`` and ``P K²`` formed here (``axis_cross``), fused with ``E``:
    as packed terms they were two more constants, each a buffer XLA:CPU allocates at every
    call (``benchmarks/README.md``, "One state")."""
    t = model.joint_types[i]
    P, r = K["P"][i].reshape(3, 3), K["p"][i]
    if t == "free_flyer":
        Q = batchlast.quat_matrix(q[3:4], q[4:5], q[5:6], q[6:7])[..., 0]
        return smallmat.matmul(P, Q), r + smallmat.mv(P, q[0:3])
    x = q[i + 6 if model.floating_base else i]
    if wait is not None:
        x = x + 0.0 * wait  # the same number (x + ±0 = x); NaN stays NaN
    axis = K["axes"][i]
    if t in ("revolute", "continuous"):
        s, omc = jnp.sin(x), 1.0 - jnp.cos(x)
        PK = axis_cross(P, axis)
        return P + s * PK + omc * axis_cross(PK, axis), r
    return P, r + axis_times(P, axis) * x  # prismatic


def poses(model: Model, K: dict, q):
    """World poses of one state: ``q (nq,)`` -> ``R (nb, 3, 3)``, ``p (nb, 3)``.

    ``R_i = R_λ E_i`` by one 3x3 product per body; every origin ``p_i`` as the sum over its
    ancestors of ``R_λ(k) r_k``, all in one fused kernel (the fewest operations: under
    1,000 flops, forward kinematics runs in the caller's thread, README's "One state").
    """
    R, r = [], []
    for i, parent in enumerate(model.parents):
        if parent < 0:
            Ei, ri = _joint_frame(model, K, q, i)
            R.append(Ei)
        else:
            # E_i waits for its parent's rotation: computed when the program starts, every
            # body's E_i would be ready at once, and XLA:CPU hands a fan-out of more than
            # eight ready kernels to other threads (benchmarks/README.md, "One state")
            Ei, ri = _joint_frame(model, K, q, i, wait=R[parent][0, 0])
            R.append(smallmat.matmul(R[parent], Ei))
        r.append(ri)
    R = jnp.stack(R)
    u = [r[k] if parent < 0 else smallmat.mv(R[parent], r[k])
         for k, parent in enumerate(model.parents)]  # fmt: skip
    anc, _, _, _ = _layout(model.parents, model.joint_types)
    # materialised once: fused into several consumers, XLA would recompute the sums in each
    p = jax.lax.optimization_barrier(_sums(u, anc))
    return R, p


def _crm_rows(v, m):
    """Motion cross products ``v × m`` of ``(n, 6)`` rows ``[ω; v]`` (RBDA eq. 2.31)."""
    w, vl, mw, mv = v[:, :3], v[:, 3:], m[:, :3], m[:, 3:]
    x = sweep.cross3
    return jnp.concatenate([x(w, mw), x(w, mv) + x(vl, mw)], axis=-1)


def _crf_rows(v, f):
    """Force cross products ``v ×* f`` of ``(n, 6)`` rows (RBDA eq. 2.32), as ``_crm_rows``."""
    w, vl, n, fl = v[:, :3], v[:, 3:], f[:, :3], f[:, 3:]
    x = sweep.cross3
    return jnp.concatenate([x(w, n) + x(vl, fl), x(w, fl)], axis=-1)


def _times(m, h, I, x):
    """Spatial inertias times motions ``(n, 6)``: ``[I ω + h × v; m v − h × ω]`` (RBDA eq. 2.63)."""
    w, v = x[:, :3], x[:, 3:]
    return jnp.concatenate(
        [smallmat.mv(I, w) + sweep.cross3(h, v), m[:, None] * v - sweep.cross3(h, w)], axis=-1
    )


def subspaces(model: Model, K: dict, R, p):
    """World motion subspaces ``S (nv, 6)`` about the common origin, and ``p`` relative to it."""
    types = model.joint_types
    ff = model.floating_base
    if ff:
        p = p - p[0]
    rows = []
    if ff:  # ω columns [R e_k; 0], v columns [0; R e_k]
        Rt, zero = R[0].T, jnp.zeros((3, 3), R.dtype)
        rows.append(jnp.concatenate([jnp.concatenate([Rt, zero], 1),
                                     jnp.concatenate([zero, Rt], 1)]))  # fmt: skip
    lo = 1 if ff else 0
    if lo < len(types):
        z = _world_axes(R[lo:], K["axes"][lo:])
        rev = jnp.concatenate([z, sweep.cross3(p[lo:], z)], axis=1)  # [z; p × z]
        kinds = [t in ("revolute", "continuous") for t in types[lo:]]
        if all(kinds):
            rows.append(rev)
        else:  # a prismatic joint's row is [0; z]: rows picked statically, no mask array
            pri = jnp.concatenate([jnp.zeros_like(z), z], axis=1)
            rows.append(jnp.stack([(rev if k else pri)[i] for i, k in enumerate(kinds)]))
    return (jnp.concatenate(rows) if len(rows) > 1 else rows[0]), p


def world_inertias(K: dict, R, p):
    """Body inertias about the common origin, world axes: ``m (nb,)``, ``h``, ``I (nb, 3, 3)``."""
    m = K["m"]
    Sb = K["Sigma"].reshape(-1, 3, 3)
    u = smallmat.mv(R, K["h"])
    up = u[:, :, None] * p[:, None, :]
    Sw = smallmat.mm(smallmat.mm(R, Sb), jnp.swapaxes(R, -1, -2))
    Sw = Sw + up + jnp.swapaxes(up, -1, -2) + m[:, None, None] * p[:, :, None] * p[:, None, :]
    tr = Sw[:, 0, 0] + Sw[:, 1, 1] + Sw[:, 2, 2]
    eye = jnp.eye(3, dtype=R.dtype)
    return m, u + m[:, None] * p, tr[:, None, None] * eye - Sw


# --------------------------------------------------------------------- dynamics
def _gravity_rows(g, dtype):
    """``[0; g]`` (``(6,)``) of a gravity ``(3,)``: static numbers (a tuple) as selects on an
    index, which XLA does not fold into a constant (a buffer at every call)."""
    if not isinstance(g, tuple):
        return jnp.concatenate([jnp.zeros_like(g), g])
    k = jax.lax.broadcasted_iota(np.int32, (6,), 0)
    rows = jnp.where(k == 3, g[0], jnp.where(k == 4, g[1], jnp.where(k == 5, g[2], 0.0)))
    return rows.astype(dtype)


def motion(model: Model, S, v, a, g):
    """Body velocities and accelerations ``(nb, 6)`` about the common origin (``a`` None: 0;
    ``g`` the gravity, an array ``(3,)`` or static numbers)."""
    _, _, db, anc_dofs = _layout(model.parents, model.joint_types)
    Sq = S * v[:, None]
    V = _sums(Sq, anc_dofs)  # V_i = Σ over the dofs of i's ancestors of S_d v_d
    Vd = V if db == tuple(range(len(db))) else _sums(V, [(b,) for b in db])
    c = _crm_rows(Vd, Sq)
    if a is not None:
        c = c + S * a[:, None]
    A = _sums(c, anc_dofs)
    return V, A - _gravity_rows(g, A.dtype)


def forces(m, h, I, V, A):
    """Body forces ``f_i = I_i a_i + v_i ×* I_i v_i`` ``(nb, 6)``."""
    return _times(m, h, I, A) + _crf_rows(V, _times(m, h, I, V))


def external_forces(f_ext, R, p):
    """Body-frame wrenches ``(nb, 6)`` ``[n; f]`` -> world axes about the common origin."""
    fl = smallmat.mv(R, f_ext[:, 3:])
    return jnp.concatenate([smallmat.mv(R, f_ext[:, :3]) + sweep.cross3(p, fl), fl], axis=-1)


def generalised_forces(model: Model, S, f):
    """``τ_d = S_dᵀ Σ_{body(d) ⪯ k} f_k`` in ``v``'s order (``(nv,)``)."""
    _, sub, db, _ = _layout(model.parents, model.joint_types)
    SF = S * _sums(f, [sub[b] for b in db])
    return smallmat.sum_terms(SF[:, k] for k in range(6))


def rnea_world(model: Model, K: dict, q, v, a, g, f_ext=None):
    """RNEA of one state in the world-frame form: ``(nv,)`` generalised forces, armature
    included (``a = None``: zero); what ``rnea`` runs for one state of a small model."""
    R, p = poses(model, K, q)
    S, p = subspaces(model, K, R, p)
    V, A = motion(model, S, v, a, K["gravity"] or jnp.broadcast_to(g, (3,)))
    f = forces(*world_inertias(K, R, p), V, A)
    if f_ext is not None:
        f = f - external_forces(f_ext, R, p)
    tau = generalised_forces(model, S, f)
    return tau if a is None else tau + K["armature"] * a


def _mass(model: Model, S, m, h, I, armature):
    """``H (nv, nv)`` from the world subspaces and inertias, ``armature (nv,)`` on the
    diagonal."""
    anc, sub, db, _ = _layout(model.parents, model.joint_types)
    comp = [sub[b] for b in db]  # the subtree of each dof's body
    F = _times(_sums(m, comp), _sums(h, comp), _sums(I, comp), S)  # I^c_{body(d)} S_d
    H = smallmat.matmul(S, F.T)  # H[e, d] = S_eᵀ I^c_{body(d)} S_d: right where body(e) ⪯ body(d)
    nv = len(db)
    if all(db[e] in anc[db[d]] for d in range(nv) for e in range(d)):  # a chain
        # the upper triangle mirrored and the armature added by selects on indices: no
        # constant mask, no zeros (a constant that the solve's kernels of forward dynamics,
        # each recomputing its entries of H, would read as a buffer)
        row = jax.lax.broadcasted_iota(np.int32, (nv, nv), 0)
        col = jax.lax.broadcasted_iota(np.int32, (nv, nv), 1)
        return jnp.where(row < col, H, jnp.where(row == col, H + armature, H.T))
    upper = np.array([[db[e] in anc[db[d]] for d in range(nv)] for e in range(nv)])
    return jnp.where(upper, H, jnp.where(upper.T, H.T, 0.0)) + jnp.diag(armature)


def mass_matrix_world(model: Model, K: dict, q):
    """Joint-space inertia matrix of one state ``(nv, nv)`` in the world-frame form, armature
    on the diagonal; what ``mass_matrix`` runs for one state of a small model."""
    R, p = poses(model, K, q)
    S, p = subspaces(model, K, R, p)
    return _mass(model, S, *world_inertias(K, R, p), K["armature"])


def mass_and_bias(model: Model, K: dict, q, v, g, f_ext=None):
    """``(H + diag(armature), h)``: the mass matrix and the bias forces of one state, one sweep."""
    R, p = poses(model, K, q)
    S, p = subspaces(model, K, R, p)
    m, h, I = world_inertias(K, R, p)
    H = _mass(model, S, m, h, I, K["armature"])
    V, A = motion(model, S, v, None, K["gravity"] or jnp.broadcast_to(g, (3,)))
    f = forces(m, h, I, V, A)
    if f_ext is not None:
        f = f - external_forces(f_ext, R, p)
    return H, generalised_forces(model, S, f)


def frame_jacobian_world(model: Model, K: dict, q, body: int, frame: int, reference: str):
    """``(6, nv)`` Jacobian, rows ``[ω; v]``, of frame ``frame`` (``-1``: the body's own) on
    ``body``."""
    R, p = poses(model, K, q)
    dt = q.dtype
    types = model.joint_types
    if body < 0:
        return jnp.zeros((6, model.nv), dt)
    Rb, pb = R[body], p[body]
    if frame < 0:
        Rf, o = Rb, pb
    else:
        X = K[f"frame{frame}"]
        Rf, o = smallmat.matmul(Rb, X[:9].reshape(3, 3)), pb + smallmat.mv(Rb, X[9:])
    anc = _layout(model.parents, types)[0][body]  # the body and its ancestors
    off = np.cumsum([0] + [6 if t == "free_flyer" else 1 for t in types])
    cols = {}
    aligned = reference != "world"
    for j in anc:
        t = types[j]
        if t == "free_flyer":
            W = R[j].T  # rows R e_k
            lin = sweep.cross3(jnp.broadcast_to(p[j] - o if aligned else p[j], (3, 3)), W)
            cols[off[j]] = (jnp.concatenate([W, jnp.zeros((3, 3), dt)]),
                            jnp.concatenate([lin, W]))  # fmt: skip
            continue
        z = axis_times(R[j], K["axes"][j])
        if t == "prismatic":
            cols[off[j]] = (jnp.zeros((1, 3), dt), z[None])
        else:
            lin = sweep.cross3(z, o - p[j]) if aligned else sweep.cross3(p[j], z)
            cols[off[j]] = (z[None], lin[None])
    ang, lin = [], []
    zero = jnp.zeros((1, 3), dt)
    for d in range(model.nv):
        if d in cols:
            a, v = cols[d]
            ang.append(a)
            lin.append(v)
        elif not any(k < d < k + len(cols[k][0]) for k in cols):
            ang.append(zero)
            lin.append(zero)
    ang, lin = jnp.concatenate(ang), jnp.concatenate(lin)  # (nv, 3)
    if reference == "local":
        ang, lin = smallmat.matmul(ang, Rf), smallmat.matmul(lin, Rf)  # rows Rᵀ x
    return jnp.concatenate([ang, lin], axis=1).T
