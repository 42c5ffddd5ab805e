"""The joint-torque and joint-model regressors of a log, evaluated with NumPy on the host.

``identify`` evaluates the regressor once per log, on every full-rate sample (the
columns are then parallel-filtered). That is O(N) arithmetic on a few hundred
``(3, n)`` arrays per body: NumPy does it in about the time an XLA program takes
to run, where compiling that program costs several times more in a new process.
The formulas are those of [joint_torque_regressor][spatialjax.multibody.joint_torque_regressor]
(the reference the tests compare with, with Pinocchio's):

- the forward recursion of the RNEA in body coordinates (Featherstone 2008,
  Table 5.1), gravity entering as the root's acceleration ``[0; −g]``;
- body ``i``'s 10 columns of joint ``d``'s row, for ``i`` in the subtree of ``d``'s
  body: ``sᵀ Φ(v_i, a_i)``, with ``Φ`` the body regressor of Atkeson, An &
  Hollerbach (1986) in Pinocchio's parameter order ``[m, m c, I_xx, I_xy, I_yy,
  I_xz, I_yz, I_zz]`` (inertia about the body origin) and ``s`` the motion
  subspace of ``d`` in body ``i``'s coordinates;
- the joint-model columns of [JointModel.regressor][spatialjax.multibody.JointModel.regressor].

Arrays are batch-last inside (``(..., 3, n)``: each component a contiguous row), and the
spatial algebra is the JAX sweeps' own (``multibody._batchlast`` and the regressor's
columns), run on NumPy arrays.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...multibody import _batchlast as bl

#: body-samples evaluated at a time (``block_samples``): the per-body rows of a block stay
#: in cache (UR5, 6 bodies: 5,461 samples; ANYmal, 12: 2,730, 0.13 -> 0.087 s for 26,250)
BODY_SAMPLES = 32768


def block_samples(nbodies: int) -> int:
    """Samples per block of a model of ``nbodies`` bodies."""
    return max(256, BODY_SAMPLES // max(nbodies, 1))


@dataclasses.dataclass(frozen=True, eq=False)
class LiveColumns:
    """The entries of ``[Y | F]`` (``(nv, 10 nb + ne)`` per sample) that the model's structure
    does not make zero, samples last: each row of ``values`` one entry over the samples.

    A joint's row of ``Y`` is zero on the bodies outside its subtree and a joint-model
    column on the joints its motor does not drive; the rest is ``live``. Samples last,
    each entry is a contiguous row: what the zero-phase filter reads (``parallel_filter_last``).

    Attributes:
      values: ``(n_live, M)`` float64.
      rows: ``(n_live,)`` the joint (row of ``Y`` and ``F``) of each entry.
      cols: ``(n_live,)`` its column of ``[Y | F]``.
      ny: ``10 nb``, the columns of ``Y``.
      ne: the columns of ``F``.
      nv: the joints.
    """

    values: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    ny: int
    ne: int
    nv: int

    def dense(self, values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(Y (M', nv, 10 nb), F (M', nv, ne))`` holding ``values (n_live, M')`` (default:
        ``self.values``; a filtered and decimated copy), zero elsewhere."""
        values = self.values if values is None else values
        M = values.shape[1]
        in_y = self.cols < self.ny
        Y, F = np.zeros((M, self.nv, self.ny)), np.zeros((M, self.nv, self.ne))
        Y[:, self.rows[in_y], self.cols[in_y]] = values[in_y].T
        F[:, self.rows[~in_y], self.cols[~in_y] - self.ny] = values[~in_y].T
        return Y, F


def host_regressors(model, q, v, a, gravity, joint_model) -> tuple[np.ndarray, np.ndarray]:
    """``(Y (M, nv, 10 nb), F (M, nv, ne))`` at ``q (M, nq)``, ``v, a (M, nv)``, float64.

    ``Y`` as ``joint_torque_regressor(model, q, v, a, gravity)``, ``F`` as
    ``joint_model.regressor(model, v, a)`` (zero on a free flyer's rows); motion
    ``[ω; v]``, a free flyer's ``q = [p, wxyz]`` and body-frame ``v``, ``a``
    (docs page ``dynamics.md#joints``). ``gravity`` is ``(3,)``, world frame.
    """
    return live_columns(model, q, v, a, gravity, joint_model).dense()


def live_columns(model, q, v, a, gravity, joint_model) -> LiveColumns:
    """``host_regressors``'s entries that are not structurally zero (``LiveColumns``)."""
    q, v, a = (np.asarray(x, np.float64) for x in (q, v, a))
    g = np.asarray(gravity, np.float64).reshape(3)
    M, nv, nb = q.shape[0], model.nv, model.nbodies
    terms = _model_terms(model)
    places = [(d, lo, hi) for d, b in enumerate(terms["dof_body"]) for lo, hi in terms["runs"][b]]
    rows = [np.full(10 * (hi - lo), d) for d, lo, hi in places]
    cols = [np.arange(10 * lo, 10 * hi) for _, lo, hi in places]
    n_y = sum(len(r) for r in rows)
    T, off = _motors(model, joint_model), 6 if model.floating_base else 0
    f_rows, f_cols, f_scale, f_source = _joint_entries(T, off, len(joint_model.kinds))
    values = np.empty((n_y + len(f_rows), M))
    block = block_samples(nb)
    for i in range(0, M, block):
        at = slice(i, min(i + block, M))
        _write_block(values[:n_y, at], terms, places, q[at].T, v[at].T, a[at].T, g)
    if len(f_rows):
        values[n_y:] = f_scale[:, None] * _joint_bases(T, off, v, a, joint_model.kinds)[f_source]
    return LiveColumns(
        values,
        np.concatenate(rows + [f_rows]).astype(np.intp),
        np.concatenate(cols + [10 * nb + f_cols]).astype(np.intp),
        10 * nb,
        len(joint_model.kinds) * T.shape[0],
        nv,
    )


def _model_terms(model) -> dict:
    """The model's constants, float64: per body the Rodrigues terms of its joint rotation
    ``E(q) = P + sin q P K + (1 − cos q) P K²`` (``K = [axis]×``), the offset ``p`` and
    ``P axis`` (``_sweep.rodrigues_terms`` of the model's fields in NumPy); the dofs' bodies
    and the subtree runs of each body."""
    import jax

    from ...multibody import _sweep as sweep

    host = jax.tree.map(lambda x: np.asarray(x, np.float64), model)
    P, PK, PKK, Pa, p = sweep.rodrigues_terms(host)
    nb = model.nbodies
    return dict(
        types=model.joint_types,
        parents=model.parents,
        P=P.reshape(nb, 3, 3),
        PK=PK.reshape(nb, 3, 3),
        PKK=PKK.reshape(nb, 3, 3),
        p=p,
        Pa=Pa,
        axes=host.axes,
        dof_body=tuple(sweep.dof_body(model)),
        runs=sweep.subtree_runs(model.parents),
        floating=model.floating_base,
    )


def _write_block(out: np.ndarray, c: dict, places, q, v, a, g) -> None:
    """Write the live entries of ``Y`` of one block of samples (``q (nq, n)``, ``v, a (nv,
    n)``) into ``out (n_live_y, n)``, place after place (``(joint, lo, hi)``: the bodies
    ``lo:hi`` of the joint's subtree)."""
    n = q.shape[1]
    Rw, pw, V, A = _forward(c, q, v, a, g, n)
    Rw, pw, V, A = np.stack(Rw), np.stack(pw), np.stack(V), np.stack(A)
    w, vl, al, av = V[:, :3], V[:, 3:], A[:, :3], A[:, 3:]
    x = av + bl.cross(w, vl)  # the classical acceleration of each body origin, body axes
    at = 0
    for d, lo, hi in places:
        b = c["dof_body"][d]
        Sw = _world_subspace(c, d, b, Rw[b], pw[b], n)  # (6, n)
        s = bl.motion_to_child(Rw[lo:hi], pw[lo:hi], Sw)  # (m, 6, n)
        cols = bl.projected_regressor_columns(s, w[lo:hi], al[lo:hi], x[lo:hi])  # (m, 10, n)
        out[at : at + 10 * (hi - lo)] = cols.reshape(10 * (hi - lo), n)
        at += 10 * (hi - lo)


def _forward(c: dict, q, v, a, g, n: int):
    """World poses ``R (3, 3, n)``, ``p (3, n)`` and body-frame velocity and acceleration
    ``(6, n)`` (gravity included in the acceleration) of every body, in body order."""
    Rw, pw, V, A = [], [], [], []
    ff = c["floating"]
    a_world = np.zeros((6, n))
    a_world[3:] = -g[:, None]
    for i, (parent, kind) in enumerate(zip(c["parents"], c["types"], strict=True)):
        P = c["P"][i]
        kq, kv = (i + 6, i + 5) if ff else (i, i)  # this joint's entries of q and of v, a
        if kind == "free_flyer":
            E = bl.mm(P[:, :, None], bl.quat_matrix(*q[3:7]))
            r = c["p"][i][:, None] + P @ q[0:3]
        elif kind == "prismatic":
            E = np.broadcast_to(P[:, :, None], (3, 3, n))
            r = c["p"][i][:, None] + c["Pa"][i][:, None] * q[kq]
        else:  # revolute, continuous
            E = (P[:, :, None] + c["PK"][i][:, :, None] * np.sin(q[kq])
                 + c["PKK"][i][:, :, None] * (1.0 - np.cos(q[kq])))  # fmt: skip
            r = np.broadcast_to(c["p"][i][:, None], (3, n))
        if parent < 0:
            Rw.append(E)
            pw.append(r)
            vp, ap = None, a_world
        else:
            Rw.append(bl.mm(Rw[parent], E))
            pw.append(pw[parent] + bl.mv(Rw[parent], r))
            vp, ap = V[parent], A[parent]
        ai = bl.motion_to_child(E, r, ap)
        if kind == "free_flyer":  # S = 1 (RBDA §4.5): v_0 = v[:6], a_0 = X_0 a_world + a[:6]
            V.append(v[:6])
            A.append(ai + a[:6])
            continue
        lin = 3 if kind == "prismatic" else 0  # S = [axis; 0] or [0; axis]
        vJ, aJ = np.zeros((6, n)), np.zeros((6, n))
        vJ[lin : lin + 3] = c["axes"][i][:, None] * v[kv]
        aJ[lin : lin + 3] = c["axes"][i][:, None] * a[kv]
        vi = vJ if vp is None else bl.motion_to_child(E, r, vp) + vJ
        V.append(vi)
        A.append(ai + aJ + bl.crm(vi, vJ))  # a_i = X a_λ + S q̈ + v_i × S q̇
    return Rw, pw, V, A


def _world_subspace(c: dict, d: int, b: int, R, p, n: int):
    """``(6, n)``: dof ``d`` (of body ``b``, posed ``R, p``) as a world-frame motion."""
    S = np.zeros((6, 1))
    kind = c["types"][b]
    if kind == "free_flyer":
        S[d, 0] = 1.0
    else:
        lin = 3 if kind == "prismatic" else 0
        S[lin : lin + 3, 0] = c["axes"][b]
    return bl.motion_to_parent(R, p, np.broadcast_to(S, (6, n)))


def _motors(model, joint_model) -> np.ndarray:
    """``(n_motors, n_joints)`` the transmission matrix (the identity without one)."""
    off = 6 if model.floating_base else 0
    if joint_model.transmission is None:
        return np.eye(model.nv - off)
    return np.asarray(joint_model.complete_transmission(model).matrix, np.float64)


def _joint_entries(T: np.ndarray, off: int, nk: int):
    """The live entries of ``F`` (``JointModel.regressor``: column ``m nk + k`` of motor
    ``m`` and kind ``k`` is ``T[m, j]`` times the motor's kind-``k`` quantity on the row of
    joint ``j``, ``off`` rows after a free flyer's): ``(rows, cols, scale, source)``,
    ``source`` the row of ``_joint_bases`` each copies."""
    rows, cols, scale, source = [], [], [], []
    for m, j in zip(*np.nonzero(T), strict=True):
        for k in range(nk):
            rows.append(off + j)
            cols.append(m * nk + k)
            scale.append(T[m, j])
            source.append(k * T.shape[0] + m)
    return (np.asarray(rows, np.intp), np.asarray(cols, np.intp), np.asarray(scale, np.float64),
            np.asarray(source, np.intp))  # fmt: skip


def _joint_bases(T: np.ndarray, off: int, v, a, kinds) -> np.ndarray:
    """``(nk n_motors, M)``: per kind (``kinds`` order) and motor of ``T``, the motor's
    acceleration (armature), velocity (viscous), its sign (Coulomb) or 1 (offset)."""
    vm, am = T @ v[:, off:].T, T @ a[:, off:].T  # (n_motors, M)
    values = {"armature": am, "viscous": vm, "coulomb": np.sign(vm), "offset": np.ones_like(vm)}
    return np.concatenate([values[k] for k in kinds], axis=0)
