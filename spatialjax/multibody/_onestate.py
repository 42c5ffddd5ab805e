"""One state of a small tree: world-frame dynamics with few, small operations.

Every quantity in world axes about a common origin (the world's, or a free-flyer
root's). Derivation: docs page ``dynamics.md#one-state``.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from .. import _smallmat as smallmat
from . import _sweep as sweep
from ._model import Model


# ----------------------------------------------------------------- structure
@functools.lru_cache(maxsize=256)
def _layout(parents: tuple, joint_types: tuple):
    """Static ``(dof_body, anc, sub, upper)`` index arrays of a tree (NumPy, cached)."""
    nb = len(parents)
    sub = np.eye(nb)
    for k in range(nb - 1, -1, -1):
        if parents[k] >= 0:
            sub[parents[k]] += sub[k]
    db = []
    for i, t in enumerate(joint_types):
        db += [i] * (6 if t == "free_flyer" else 1)
    db = np.asarray(db, int)
    anc = sub.T[:, db]  # anc[i, d] = sub[body(d), i]
    upper = sub[db][:, db] > 0  # body(e) ⪯ body(d)
    return db, anc, sub, upper


def _cross_rows(a, b):
    """``a × b`` of vectors stored as rows, ``(..., 3)`` (written out, ``jnp.stack``)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


# ------------------------------------------------------------------ kinematics
def poses(model: Model, q):
    """World poses of one state: ``q (nq,)`` -> ``R (nb, 3, 3)``, ``p (nb, 3)``."""
    R, p = sweep.poses_one(model, q[:, None])
    return R[..., 0], p[..., 0]


def _crm_rows(v, m):
    """Motion cross products ``v × m`` of ``(n, 6)`` rows ``[ω; v]`` (RBDA eq. 2.31)."""
    w, vl, mw, mv = v[:, :3], v[:, 3:], m[:, :3], m[:, 3:]
    return jnp.concatenate([_cross_rows(w, mw), _cross_rows(w, mv) + _cross_rows(vl, mw)], axis=-1)


def _crf_rows(v, f):
    """Force cross products ``v ×* f`` of ``(n, 6)`` rows (RBDA eq. 2.32), as ``_crm_rows``."""
    w, vl, n, fl = v[:, :3], v[:, 3:], f[:, :3], f[:, 3:]
    return jnp.concatenate([_cross_rows(w, n) + _cross_rows(vl, fl), _cross_rows(w, fl)], axis=-1)


def _times(m, h, I, x):
    """Spatial inertias times motions ``(n, 6)``: ``[I ω + h × v; m v − h × ω]`` (RBDA eq. 2.63)."""
    w, v = x[:, :3], x[:, 3:]
    return jnp.concatenate(
        [smallmat.mv(I, w) + _cross_rows(h, v), m[:, None] * v - _cross_rows(h, w)], axis=-1
    )


def subspaces(model: Model, R, p):
    """World motion subspaces ``S (nv, 6)`` about the common origin, and ``p`` relative to it."""
    ff = model.floating_base
    if ff:
        p = p - p[0]
    types = model.joint_types
    body = np.array([i for i, t in enumerate(types) if t != "free_flyer"], int)
    cols = []
    if ff:
        zero = jnp.zeros((3, 3), R.dtype)
        Rt = R[0].T  # rows R e_k: ω columns [R e_k; 0], v columns [0; R e_k]
        cols.append(
            jnp.concatenate([jnp.concatenate([Rt, zero], 1), jnp.concatenate([zero, Rt], 1)])
        )
    if body.size:
        rot = np.array([types[i] in ("revolute", "continuous") for i in body])[:, None]
        z = smallmat.mv(R[body] if ff else R, model.axes[body] if ff else model.axes)  # world axes
        pb = p[body] if ff else p
        cols.append(
            jnp.concatenate([jnp.where(rot, z, 0.0), jnp.where(rot, _cross_rows(pb, z), z)], 1)
        )
    return (jnp.concatenate(cols) if len(cols) > 1 else cols[0]), p


def _c(x, like):
    return jnp.asarray(x, like.dtype)


def _sigma_matrix() -> np.ndarray:
    """``(10, 9)``: the 10-vector ``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` -> ``Σ = ½ tr(I) 1 − I``
    (row-major 3x3), ``Σ`` the second moment of the mass about the frame origin."""
    C = np.zeros((10, 3, 3))
    ij = {4: (0, 0), 5: (0, 1), 6: (1, 1), 7: (0, 2), 8: (1, 2), 9: (2, 2)}
    for k, (i, j) in ij.items():
        C[k, i, j] -= 1.0
        if i != j:
            C[k, j, i] -= 1.0
        else:
            C[k] += 0.5 * np.eye(3)
    return C.reshape(10, 9)


_SIGMA = _sigma_matrix()


def world_inertias(params, R, p):
    """Body inertias about the common origin, world axes: ``m (nb,)``, ``h``, ``I (nb, 3, 3)``."""
    m, h = params[:, 0], params[:, 1:4]
    # Σ is linear in the 10-vector: one product with a constant matrix (one kernel)
    Sb = (params @ _c(_SIGMA, params)).reshape(params.shape[0], 3, 3)
    u = smallmat.mv(R, h)
    up = u[:, :, None] * p[:, None, :]
    Sw = smallmat.mm(smallmat.mm(R, Sb), jnp.swapaxes(R, -1, -2))
    Sw = Sw + up + jnp.swapaxes(up, -1, -2) + m[:, None, None] * p[:, :, None] * p[:, None, :]
    tr = Sw[:, 0, 0] + Sw[:, 1, 1] + Sw[:, 2, 2]
    eye = jnp.eye(3, dtype=params.dtype)
    return m, u + m[:, None] * p, tr[:, None, None] * eye - Sw


# --------------------------------------------------------------------- dynamics
def motion(anc, db, S, v, a, g):
    """Body velocities and accelerations ``(nb, 6)`` about the common origin (``a`` None: 0)."""
    Sq = S * v[:, None]
    V = _c(anc, v) @ Sq
    Vd = V if np.array_equal(db, np.arange(len(db))) else _c(anc[db], v) @ Sq
    c = _crm_rows(Vd, Sq)
    if a is not None:
        c = c + S * a[:, None]
    A = _c(anc, v) @ c
    return V, A + jnp.concatenate([jnp.zeros_like(g), -g])


def forces(m, h, I, V, A):
    """Body forces ``f_i = I_i a_i + v_i ×* I_i v_i`` ``(nb, 6)``."""
    return _times(m, h, I, A) + _crf_rows(V, _times(m, h, I, V))


def external_forces(f_ext, R, p):
    """Body-frame wrenches ``(nb, 6)`` ``[n; f]`` -> world axes about the common origin."""
    fl = smallmat.mv(R, f_ext[:, 3:])
    return jnp.concatenate([smallmat.mv(R, f_ext[:, :3]) + _cross_rows(p, fl), fl], axis=-1)


def generalised_forces(anc, S, f):
    """``τ_d = S_dᵀ Σ_{body(d) ⪯ k} f_k`` in ``v``'s order (``(nv,)``)."""
    return jnp.sum(S * (_c(anc.T, f) @ f), axis=-1)


def rnea_world(model: Model, q, v, a, g, f_ext=None):
    """RNEA of one state in the world-frame form: ``(nv,)`` generalised forces, armature
    included (``a = None``: zero); what ``rnea`` runs for one state of a small model."""
    db, anc, _, _ = _layout(model.parents, model.joint_types)
    R, p = poses(model, q)
    S, p = subspaces(model, R, p)
    V, A = motion(anc, db, S, v, a, jnp.broadcast_to(g, (3,)))
    f = forces(*world_inertias(model.inertia.params, R, p), V, A)
    if f_ext is not None:
        f = f - external_forces(f_ext, R, p)
    tau = generalised_forces(anc, S, f)
    return tau if a is None else tau + model.armature * a


def _mass(sub, db, upper, S, m, h, I):
    """``H (nv, nv)`` from the world subspaces and inertias (armature not included)."""
    C = _c(sub, m)  # C[i, k] = 1: k in the subtree of i
    Cd = C if np.array_equal(db, np.arange(len(db))) else _c(sub[db], m)
    F = _times(Cd @ m, Cd @ h, jnp.einsum("ik,kab->iab", Cd, I), S)  # I^c_{body(d)} S_d
    H = S @ F.T  # H[e, d] = S_eᵀ I^c_{body(d)} S_d
    return jnp.where(upper, H, jnp.where(upper.T, H.T, 0.0))


def mass_matrix_world(model: Model, q):
    """Joint-space inertia matrix of one state ``(nv, nv)`` in the world-frame form, armature
    on the diagonal; what ``mass_matrix`` runs for one state of a small model."""
    db, _, sub, upper = _layout(model.parents, model.joint_types)
    R, p = poses(model, q)
    S, p = subspaces(model, R, p)
    H = _mass(sub, db, upper, S, *world_inertias(model.inertia.params, R, p))
    return H + jnp.diag(model.armature)


def mass_and_bias(model: Model, q, v, g, f_ext=None):
    """``(H + diag(armature), h)``: the mass matrix and the bias forces of one state, one sweep."""
    db, anc, sub, upper = _layout(model.parents, model.joint_types)
    R, p = poses(model, q)
    S, p = subspaces(model, R, p)
    m, h, I = world_inertias(model.inertia.params, R, p)
    H = _mass(sub, db, upper, S, m, h, I) + jnp.diag(model.armature)
    V, A = motion(anc, db, S, v, None, jnp.broadcast_to(g, (3,)))
    f = forces(m, h, I, V, A)
    if f_ext is not None:
        f = f - external_forces(f_ext, R, p)
    return H, generalised_forces(anc, S, f)


def frame_jacobian_world(model: Model, q, body: int, placement, reference: str):
    """``(6, nv)`` Jacobian, rows ``[ω; v]``, of a frame on ``body`` (``placement`` or None)."""
    R, p = poses(model, q)
    dt = q.dtype
    types = model.joint_types
    if body < 0:
        return jnp.zeros((6, model.nv), dt)
    Rb, pb = R[body], p[body]
    if placement is None:
        Rf, o = Rb, pb
    else:
        Rf, o = Rb @ placement[0], pb + smallmat.mv(Rb, placement[1])
    anc = []
    j = body
    while j >= 0:
        anc.append(j)
        j = model.parents[j]
    off = np.cumsum([0] + [6 if t == "free_flyer" else 1 for t in types])
    cols = {}
    aligned = reference != "world"
    for j in anc:
        t = types[j]
        if t == "free_flyer":
            W = R[j].T  # rows R e_k
            lin = _cross_rows(jnp.broadcast_to(p[j] - o if aligned else p[j], (3, 3)), W)
            cols[off[j]] = (jnp.concatenate([W, jnp.zeros((3, 3), dt)]),
                            jnp.concatenate([lin, W]))  # fmt: skip
            continue
        z = smallmat.mv(R[j], model.axes[j])
        if t == "prismatic":
            cols[off[j]] = (jnp.zeros((1, 3), dt), z[None])
        else:
            lin = _cross_rows(z, o - p[j]) if aligned else _cross_rows(p[j], z)
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
        ang, lin = ang @ Rf, lin @ Rf  # rows Rᵀ x
    return jnp.concatenate([ang, lin], axis=1).T
