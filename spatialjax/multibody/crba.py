"""Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA 2008, Table 6.2)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _smallmat as smallmat
from . import _batchlast as batchlast
from . import _onestate
from . import _sweep as sweep
from ._model import Model


def mass_matrix(model: Model, q, *, method: str = "auto") -> jax.Array:
    """Joint-space inertia matrix ``H(q)`` by the composite-rigid-body algorithm (RBDA Table 6.2).

    Rows/columns in ``v``'s order; ``model.armature`` on the diagonal (as MuJoCo's ``qM``
    and Pinocchio's ``crba``).

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      method: ``"auto"`` (default), ``"scan"``, ``"levels"`` or ``"loop"`` (docs page
        ``dynamics.md#tree-sweeps``).

    Returns:
      ``(..., nv, nv)`` symmetric positive-definite ``H`` (for positive masses).
    """
    sweep.check_method(method)
    q = sweep.as_input(q, "q", model.nq, model)
    batch = tuple(q.shape[:-1])
    packed = _onestate.packed_terms(method, model, batch, q)
    return _mass_matrix_kernel(model, q, packed, batch=batch, method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _mass_matrix_kernel(model: Model, q, packed=None, *, batch, method) -> jax.Array:
    """``mass_matrix`` on a checked ``q``: one compiled program per structure (``packed``:
    the model's one-state terms, ``_onestate.host_terms``)."""
    if sweep.one_state(method, model, batch):
        K = _onestate.terms(model, _onestate.MASS, packed)
        H = _onestate.mass_matrix_world(model, K, q.reshape(-1))
        return H.reshape(batch + (model.nv, model.nv))
    method = sweep.resolve_method(method, model, batch)
    db = sweep.dof_body(model)
    A = sweep.ancestor_mask(model.parents, tuple(db))[:, db]  # A[e, d]: body(e) ancestor of body(d)
    below = [sweep.runs(np.flatnonzero(A[e])) for e in range(model.nv)]  # dofs d with A[e, d]
    above = [sweep.runs(np.flatnonzero(A[:, e] & ~A[e])) for e in range(model.nv)]  # strict

    def fwd(q):
        if method == "scan":
            Rw, pw = sweep.scan_poses(model, q)  # world poses by the body scan
        else:
            E, r = sweep.joint_frames(model, q)
            _, inv, Rw, pw, _, _ = sweep.forward(model, E, r, method)
            Rw, pw = sweep.assemble(Rw, inv), sweep.assemble(pw, inv)
        I0 = batchlast.inertia_to_parent(
            batchlast.n(model.inertia.params), Rw, pw
        )  # (nb, 10, N), world frame
        # composite inertias: in one (world) frame a plain sum over each subtree,
        # written as one product with the static 0/1 subtree matrix (no scatter)
        D = sweep.ancestor_mask(model.parents, tuple(range(model.nbodies))).astype(np.float64)
        Ic = jnp.einsum("kj,jcn->kcn", jnp.asarray(D, I0.dtype), I0, precision=smallmat.FULL)
        Sw = sweep.world_subspaces(model, Rw, pw)  # (nv, 6, N)
        return Sw, batchlast.inertia_times(sweep.rows(Ic, db), Sw)  # and I^c_{body(d)} S_d

    def pairs(feats):
        # row e: H_ed = S_eᵀ I^c_d S_d for body(e) an ancestor of (or equal to) body(d),
        # H_ed = H_de = S_dᵀ I^c_e S_e for body(d) a strict ancestor of body(e), else 0:
        # only those pairs are computed (static runs of dofs), zero blocks between them
        Sw, F = feats
        N = Sw.shape[-1]
        rows = []
        for e in range(model.nv):
            blocks = [(lo, hi, batchlast.dot6(Sw[lo:hi], F[e][None])) for lo, hi in above[e]]
            blocks += [(lo, hi, batchlast.dot6(Sw[e][None], F[lo:hi])) for lo, hi in below[e]]
            blocks.sort(key=lambda t: t[0])
            rows += sweep.blocks_with_zeros(blocks, model.nv, (N,), Sw.dtype)
        return jnp.concatenate(rows, axis=0).reshape((model.nv, model.nv, N))

    nbytes = model.nv * model.nv * q.dtype.itemsize
    chunk = sweep.chunk_for(nbytes)
    H = sweep.chunked_blocks(
        fwd, pairs, sweep.flat(q, batch), chunk=chunk, shape=(model.nv, model.nv), places=None
    )
    # joint armature (rotor inertia) on the diagonal, as MuJoCo and Pinocchio
    return sweep.unflat_bf(H, batch) + jnp.diag(model.armature)
