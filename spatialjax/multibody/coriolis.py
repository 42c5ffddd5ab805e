"""The Coriolis matrix ``C(q, v)``: ``C v + g = h`` and ``Ṁ − 2C`` skew-symmetric.

Echeandia & Wensing, J. Comput. Nonlinear Dyn. 16(9), 2021 (Pinocchio's
``computeCoriolisMatrix``); RBDA 2008 eqs. 2.31-2.32, §6.2.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _smallmat as smallmat
from . import _batchlast as batchlast
from . import _sweep as sweep
from ._model import Model


def coriolis_matrix(model: Model, q, v) -> jax.Array:
    """Coriolis matrix ``C(q, v)`` with ``C v = h(q, v) − g(q)`` and ``Ṁ − 2C`` skew.

    Pinocchio's ``computeCoriolisMatrix`` convention, rows and columns in ``v``'s order.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` velocity.

    Returns:
      ``(..., nv, nv)``, linear in ``v``; batch axes of ``q`` and ``v`` broadcast.

    Raises:
      ValueError: ``q`` or ``v`` of the wrong length, or batch shapes that do
        not broadcast.
      TypeError: a non-float input or a dtype other than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, coriolis_matrix, nonlinear_effects
      >>> m = chain_model(2)
      >>> q, v = jnp.array([0.3, -0.5]), jnp.array([1.0, 2.0])
      >>> bool(jnp.allclose(coriolis_matrix(m, q, v) @ v,
      ...                   nonlinear_effects(m, q, v, gravity=(0.0, 0.0, 0.0)), atol=1e-5))
      True
    """
    q = sweep.as_input(q, "q", model.nq, model)
    v = sweep.as_input(v, "v", model.nv, model)
    return _coriolis_kernel(model, q, v, batch=sweep.batch(q=q, v=v))


@functools.lru_cache(maxsize=256)
def _pair_bodies(parents: tuple, dof_body: tuple):
    """``(nv, nv)``: the deeper of body(d), body(e) when one is the other's ancestor, else -1."""
    db = np.asarray(dof_body, int)
    anc = sweep.ancestor_mask(parents, tuple(range(len(parents))))  # anc[j, i]: j ancestor of i
    K = np.full((db.size, db.size), -1, int)
    for d, bd in enumerate(db):
        for e, be in enumerate(db):
            if anc[bd, be]:
                K[d, e] = be
            elif anc[be, bd]:
                K[d, e] = bd
    return K


@functools.partial(jax.jit, static_argnames=("batch",))
def _coriolis_kernel(model: Model, q, v, *, batch):
    """[`coriolis_matrix`][spatialjax.multibody.coriolis_matrix] on checked inputs."""
    nb, nv = model.nbodies, model.nv
    db = sweep.dof_body(model)
    K = _pair_bodies(model.parents, tuple(int(i) for i in db))
    subtree = sweep.ancestor_mask(model.parents, tuple(range(nb))).astype(np.float64)
    e_idx = np.broadcast_to(np.arange(nv)[None, :], (nv, nv))
    flat_idx = (e_idx * nb + np.maximum(K, 0)).reshape(-1)
    mask = (K >= 0).astype(np.float64)

    def core(q, v):
        c = sweep.scan_forward(model, q, v)
        Rw, pw = sweep.scan_poses(model, q, c)
        V0 = batchlast.motion_to_parent(Rw, pw, c["V"][:nb])  # body velocities, world frame
        I0 = batchlast.inertia_matrix(
            batchlast.inertia_to_parent(batchlast.n(model.inertia.params), Rw, pw)
        )
        Xv = batchlast.crm_matrix(V0)
        B = 0.5 * (
            -batchlast.m6tm(Xv, I0)
            - batchlast.m6m(I0, Xv)
            + batchlast.crf_bar_matrix(batchlast.m6v(I0, V0))
        )
        D = jnp.asarray(subtree, I0.dtype)  # D[k, j]: k ancestor of (or equal to) j
        Ic = jnp.einsum("kj,j...->k...", D, I0, precision=smallmat.FULL)  # subtree sums
        Bc = jnp.einsum("kj,j...->k...", D, B, precision=smallmat.FULL)
        S = sweep.world_subspaces(model, Rw, pw)  # (nv, 6, N)
        Sd = batchlast.crm(sweep.rows(V0, db), S)  # Ṡ_d = v_body(d) × S_d
        W = batchlast.m6v(Ic[None], Sd[:, None]) + batchlast.m6v(
            Bc[None], S[:, None]
        )  # (nv_e, nb_k, 6, N)
        G = W.reshape((nv * nb,) + W.shape[2:])[flat_idx].reshape((nv, nv) + W.shape[2:])
        C = batchlast.dot(S[:, None], G, 6)  # (nv, nv, N): S_dᵀ W[e, K[d, e]]
        return C * jnp.asarray(mask, C.dtype)[..., None]

    # a quarter of an accelerator's chunk: W and G hold 6 nv² numbers per state (Talos,
    # float64: 70 kB)
    xs = sweep.flat(q, batch), sweep.flat(v, batch)
    C = sweep.chunked(core, *xs, chunk=256, accel=sweep._ACCEL_CHUNK // 4)
    return sweep.unflat_bf(C, batch)
