"""The joint-torque regressor ``Y(q, v, a)``, linear in the bodies' inertial parameters.

RBDA 2008 Table 5.1; Atkeson, An & Hollerbach, IJRR 5(3), 1986.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from . import _batchlast as batchlast
from . import _sweep as sweep
from ._model import Model
from .rnea import _rnea_forward


def joint_torque_regressor(
    model: Model, q, v, a, gravity=None, *, method: str = "auto"
) -> jax.Array:
    """``Y(q, v, a)`` with ``Y @ π + armature ⊙ a == rnea(model, q, v, a, gravity)``.

    ``π = model.inertia.params.reshape(-1)``, body-major 10-vectors (Pinocchio's
    ``computeJointTorqueRegressor`` order); the armature is not among the parameters.

    Args:
      model, q, v, a, gravity: as in [`rnea`][spatialjax.multibody.rnea.rnea]
        (the model's inertias are not used).
      method: ``"auto"`` (default), ``"scan"``, ``"levels"`` or ``"loop"``
        (docs page ``dynamics.md#tree-sweeps``).

    Returns:
      ``(..., nv, 10 * nbodies)``.
    """
    sweep.check_method(method)
    q, v, a, g, batch = sweep.dynamics_inputs(model, q, v, a, gravity)
    return _regressor_kernel(model, q, v, a, g, batch=batch, method=method)


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _regressor_kernel(model: Model, q, v, a, g, *, batch, method) -> jax.Array:
    """``joint_torque_regressor`` on checked inputs: one compiled program per structure."""
    method = sweep.resolve_method(method, model, batch)
    q, v, a, g = sweep.flat_dynamics(q, v, a, g, batch)
    db = sweep.dof_body(model)

    def fwd(q, v, a, g):
        if method == "scan":
            a0 = batchlast.join(jnp.zeros_like(g), -g)
            c = sweep.scan_forward(model, q, v, a, a0)
            Rw, pw = sweep.scan_poses(model, q, c)
            V, A = c["V"][: model.nbodies], c["A"][: model.nbodies]
        else:
            _, _, (_, inv, Rw, pw, V, A) = _rnea_forward(model, q, v, a, g, method, pose=True)
            Rw, pw = sweep.assemble(Rw, inv), sweep.assemble(pw, inv)
            V, A = sweep.assemble(V, inv), sweep.assemble(A, inv)
        w, vl = batchlast.split(V)
        al, av = batchlast.split(A)
        x = av + batchlast.cross(w, vl)  # (nb, 3, N)
        Sw = sweep.world_subspaces(model, Rw, pw)  # (nv, 6, N) world frame
        return Rw, pw, w, al, x, Sw

    def pairs(feats):
        Rw, pw, w, al, x, Sw = feats
        out = []
        for d, lo, hi in places:
            # S_d moved into each body i's frame, s = X_{i<-world} S_d^world (motion),
            # materialised: the ten columns below read it instead of recomputing it
            s = jax.lax.optimization_barrier(
                batchlast.motion_to_child(Rw[lo:hi], pw[lo:hi], Sw[d][None])
            )
            out.append(batchlast.projected_regressor_columns(s, w[lo:hi], al[lo:hi], x[lo:hi]))
        return out

    # only the bodies i in the subtree of body(d) (static runs); the rest of row d is zero
    runs = sweep.subtree_runs(model.parents)
    places = tuple((d, lo, hi) for d in range(model.nv) for lo, hi in runs[db[d]])
    nbytes = model.nv * model.nbodies * 10 * q.dtype.itemsize
    Y = sweep.chunked_blocks(
        fwd, pairs,
        q, v, a, g,
        chunk=sweep.chunk_for(nbytes),
        shape=(model.nv, model.nbodies, 10),
        places=tuple((d, lo) for d, lo, _ in places),
    )  # fmt: skip
    Y = sweep.unflat_bf(Y, batch)
    return Y.reshape(batch + (model.nv, 10 * model.nbodies))
