"""Forward dynamics: the articulated-body algorithm (ABA) and ``M⁻¹ (τ − h)`` by Cholesky.

Featherstone 2008, Table 7.1; derivation: docs page ``dynamics.md#forward-dynamics``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _smallmat as smallmat
from .._checks import is_concrete
from .._errors import ArgumentError
from . import _batchlast as batchlast
from . import _onestate
from . import _sweep as sweep
from ._model import Model

_FD_METHODS = ("auto", "aba", "crba")
#: Batches are swept in chunks of this many states: a chunk's per-body 6x6 articulated
#: inertias then stay in cache (``benchmarks/README.md``, "Forward dynamics": larger
#: chunks ran superlinearly).
_ABA_CHUNK = 64


def forward_dynamics(
    model: Model,
    q,
    v,
    tau,
    gravity=None,
    *,
    f_ext=None,
    method: str = "auto",
) -> jax.Array:
    """Joint accelerations: ``M(q) a + h(q, v) = τ − damping ⊙ v + Σ_i J_iᵀ f_ext,i``.

    ``method="aba"``: the articulated-body algorithm (RBDA Table 7.1), O(n); ``"crba"``:
    ``M a = τ − h`` by Cholesky; ``"auto"`` picks the faster. Pinocchio's ``aba``, armature
    included; no Coulomb friction, limits or contacts.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` velocity.
      tau: ``(..., nv)`` generalised force (N m, N; a free flyer's: a body-frame wrench ``[n; f]``).
      gravity: ``(..., 3)`` gravitational acceleration in world coordinates;
        ``None`` (default) is ``(0, 0, -9.81)`` m/s².
      f_ext: ``(..., nbodies, 6)`` external wrench ``[n; f]`` on each body, in its
        frame, about its origin; ``None`` for none.
      method: ``"auto"`` (default), ``"aba"`` or ``"crba"``.

    Returns:
      ``(..., nv)`` accelerations in ``v``'s order, batch axes of the inputs broadcast;
      NaN for a state whose mass matrix is singular (under ``jit``/``vmap``/``grad``).

    Raises:
      ValueError: an input of the wrong length or shape, batch shapes that do not
        broadcast, an unknown ``method``, or (concrete inputs) a singular mass matrix.
      TypeError: a non-float input or a dtype other than the model's.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, forward_dynamics
      >>> m = chain_model(1, length=1.0, mass=2.0)   # a rod about a vertical axis, I = 2/3
      >>> forward_dynamics(m, jnp.zeros(1), jnp.zeros(1), jnp.ones(1)).round(3).tolist()
      [1.5]
    """
    if method not in _FD_METHODS:
        raise ArgumentError("method", f"expected one of {_FD_METHODS}, got {method!r}")
    q = sweep.as_input(q, "q", model.nq, model)
    v = sweep.as_input(v, "v", model.nv, model)
    tau = sweep.as_input(tau, "tau", model.nv, model)
    g = sweep.as_gravity(gravity, model)
    f_ext = sweep.as_fext(f_ext, model)
    batch = sweep.batch_with_fext(sweep.batch(q=q, v=v, tau=tau, gravity=g), f_ext)
    route = _fd_route(method, model, batch)
    if route == "aba":
        a, singular = _aba_kernel(model, q, v, tau, g, f_ext, batch=batch)
    else:
        packed = _onestate.packed_terms("auto", model, batch, q, g)
        a, singular = _crba_fd_kernel(model, q, v, tau, g, f_ext, packed, batch=batch)
    if is_concrete((model, q, v, tau, g, f_ext)):
        bad = np.asarray(singular)
        if bad.any():
            raise ArgumentError(
                "model",
                f"the mass matrix of model {model.name!r} is singular in "
                f"{int(bad.sum())} of {bad.size} states (a body whose subtree has no "
                "inertia along its joint: massless leaf links or a zero-mass chain); give "
                "the bodies mass and inertia, or joint armature",
            )
    return a


@functools.partial(jax.jit, static_argnames=("batch", "method"))
def _aba_kernel(model: Model, q, v, tau, g, f_ext, *, batch, method="auto"):
    """``forward_dynamics`` by ABA on checked inputs: ``(a, singular)``."""
    method = sweep.resolve_method(method, model, batch)
    xs = [sweep.flat(q, batch), sweep.flat(v, batch), sweep.flat(tau, batch)]
    xs.append(g[:, None] if g.ndim == 1 else sweep.flat(g, batch))
    if f_ext is not None:
        xs.append(sweep.flat_fext(f_ext, batch))
    a, bad = sweep.chunked(
        functools.partial(_aba_core, model, method=method), *xs, chunk=_ABA_CHUNK
    )
    return sweep.unflat_bf(a, batch), sweep.unflat_bf(bad, batch)


def _aba_core(model: Model, q, v, tau, g, fext=None, *, method: str = "scan"):
    """ABA (RBDA Table 7.1) on ``(k, N)`` inputs: ``(nv, N)`` accelerations, ``(N,)`` flags."""
    nb, N, dt = model.nbodies, q.shape[-1], q.dtype
    ff = model.floating_base
    s0 = 1 if ff else 0
    eps = jnp.finfo(dt).eps
    tau = tau - batchlast.n(model.damping) * v  # passive joint damping (MuJoCo's qfrc_passive)
    if method == "scan":
        Rw, pw = sweep.scan_poses(model, q)
    else:
        E, r = sweep.joint_frames(model, q)
        _, inv, Rw, pw, _, _ = sweep.forward(model, E, r, method)
        Rw, pw = sweep.assemble(Rw, inv), sweep.assemble(pw, inv)
    if ff:  # the root's origin as the common origin: exact far from the world's origin
        pw = pw - pw[0:1]
    S = sweep.world_subspaces(model, Rw, pw)  # (nv, 6, N), a free flyer's six columns first
    db = sweep.dof_body(model)
    anc = sweep.ancestor_mask(model.parents, tuple(db)).astype(np.float64)  # (nv, nb)
    Sq = S * v[:, None, :]  # S_d q̇_d
    V = jnp.einsum("di,dcn->icn", jnp.asarray(anc, dt), Sq, precision=smallmat.FULL)  # (nb, 6, N)
    d0 = 6 if ff else 0  # dof of body i (i >= s0): d0 + i - s0
    I0 = batchlast.inertia_to_parent(batchlast.n(model.inertia.params), Rw, pw)  # (nb, 10, N)
    pA0 = batchlast.crf(V, batchlast.inertia_times(I0, V))  # p_i = v_i ×* I_i v_i − f_ext,i
    if fext is not None:
        pA0 = pA0 - batchlast.force_to_parent(Rw, pw, fext)
    IA = list(batchlast.inertia_matrix(I0))  # per body (6, 6, N)
    pA = list(pA0)
    S, V, Sq, IA, pA = jax.lax.optimization_barrier((S, V, Sq, IA, pA))
    cs = jax.lax.optimization_barrier(batchlast.crm(V[s0:], Sq[d0:]))  # c_i = v_i × S_i q̇_i
    arm = model.armature
    # the bodies of one tree depth are swept together (their recursions are independent):
    # one traced step per level, not per body (compile time on a humanoid)
    levels = [[i for i in lev if i >= s0] for lev in model.levels]
    levels = [lev for lev in levels if lev]
    per_level = []
    ok = []
    # leaves to root: I^A_λ += I^A_i − U_i D_i⁻¹ U_iᵀ, p^A_λ += p^A_i + I^a_i c_i + U_i D_i⁻¹ u_i
    for lev in reversed(levels):
        dofs = [d0 + i - s0 for i in lev]
        Sl = sweep.rows(S, dofs)  # (k, 6, N)
        cl = sweep.rows(cs, [i - s0 for i in lev])
        # XLA:CPU would fuse each use of a level's results into its consumers and
        # recompute them there (the chain compounds from leaf to root): materialised
        IAl, pAl = jax.lax.optimization_barrier(
            (jnp.stack([IA[i] for i in lev]), jnp.stack([pA[i] for i in lev]))
        )
        Ul = batchlast.m6v(IAl, Sl)  # (k, 6, N)
        D = batchlast.dot(Sl, Ul, 6) + arm[np.asarray(dofs)][:, None]
        tr = smallmat.sum_terms(IAl[:, k, k] for k in range(6))
        okl = D > eps * tr
        Dl = jnp.where(okl, 1.0 / jnp.where(okl, D, 1.0), 0.0)
        ul = sweep.rows(tau, dofs) - batchlast.dot(Sl, pAl, 6)
        Ul, Dl, ul = jax.lax.optimization_barrier((Ul, Dl, ul))
        per_level.append((lev, Sl, cl, Ul, Dl, ul))
        ok.append(okl)
        if all(model.parents[i] < 0 for i in lev):
            continue
        Ia = IAl - Ul[:, :, None, :] * (Ul * Dl[:, None, :])[:, None, :, :]
        pa = pAl + batchlast.m6v(Ia, cl) + Ul * (ul * Dl)[:, None, :]
        for k, i in enumerate(lev):
            p = model.parents[i]
            if p >= 0:
                IA[p] = IA[p] + Ia[k]
                pA[p] = pA[p] + pa[k]
    bad = ~jnp.all(jnp.concatenate(ok), axis=0) if ok else jnp.zeros((N,), bool)
    a_g = jnp.broadcast_to(batchlast.join(jnp.zeros_like(g), -g), (6, N))  # base acceleration
    A = {}
    out = []
    if ff:
        # free flyer (RBDA §7.3): D_0 q̈_0 = τ_0 − S_0ᵀ p^A_0 − U_0ᵀ a_g, U_0 = I^A_0 S_0
        U0 = [batchlast.m6v(IA[0], S[k]) for k in range(6)]
        D0 = jnp.stack(
            [jnp.stack([batchlast.dot(S[j], U0[k], 6) for k in range(6)]) for j in range(6)]
        )
        D0 = jnp.moveaxis(D0, -1, 0) + jnp.diag(arm[:6])  # (N, 6, 6)
        rhs = jnp.stack(
            [
                tau[k] - batchlast.dot(S[k], pA[0], 6) - batchlast.dot(U0[k], a_g, 6)
                for k in range(6)
            ]
        )
        L, ok0 = _guarded_cholesky(D0)
        qdd0 = jax.scipy.linalg.cho_solve((L, True), rhs.T[..., None])[..., 0].T  # (6, N)
        A[0] = a_g + smallmat.sum_terms(S[k] * qdd0[k] for k in range(6))
        out.append(qdd0)
        bad = bad | ~ok0
    # root to leaves: q̈_i = D_i⁻¹ (u_i − U_iᵀ (a_λ + c_i)), a_i = a_λ + c_i + S_i q̈_i
    qdd_of = {}
    for lev, Sl, cl, Ul, Dl, ul in reversed(per_level):
        par = [model.parents[i] for i in lev]
        ap = jnp.stack([a_g if p < 0 else A[p] for p in par]) + cl
        qdd = (ul - batchlast.dot(Ul, ap, 6)) * Dl  # (k, N)
        Al = jax.lax.optimization_barrier(ap + Sl * qdd[:, None, :])
        for k, i in enumerate(lev):
            A[i], qdd_of[i] = Al[k], qdd[k]
    out += [jnp.stack([qdd_of[i] for i in range(s0, nb)])] if nb > s0 else []
    res = jnp.concatenate(out, axis=0)
    return jnp.where(bad, jnp.nan, res), bad


#: ``forward_dynamics(method="auto")`` on batches of more than one state takes the
#: Cholesky route (``"crba"``) for models of at most this many dofs, the ABA for larger
#: ones (``benchmarks/README.md``, "Forward dynamics: which route").
_AUTO_CRBA_DOFS = 12


def _fd_route(method: str, model: Model, batch: tuple) -> str:
    """``"aba"`` or ``"crba"``: the route ``method`` takes for this model and batch shape."""
    if method != "auto":
        return method
    if sweep.one_state("auto", model, batch):
        return "crba"  # one sweep for M and h (_onestate.mass_and_bias), one Cholesky
    return "crba" if model.nv <= _AUTO_CRBA_DOFS else "aba"


@functools.partial(jax.jit, static_argnames=("batch",))
def _crba_fd_kernel(model: Model, q, v, tau, g, f_ext, packed=None, *, batch):
    """``forward_dynamics`` as ``M⁻¹ (τ − h)`` by Cholesky: ``(a, singular)`` (``packed``:
    the model's one-state terms, ``_onestate.host_terms``)."""
    from .crba import _mass_matrix_kernel
    from .rnea import _rnea_kernel

    if sweep.one_state("auto", model, batch):  # M and h from one world-frame sweep
        fe = None if f_ext is None else f_ext.reshape(model.nbodies, 6)
        q1, v1, g1 = (x.reshape(-1) for x in (q, v, g))
        K = _onestate.terms(model, _onestate.FD, packed)
        H, h = _onestate.mass_and_bias(model, K, q1, v1, g1, fe)
        rhs = (tau - K["damping"] * v).reshape(-1) - h
        if model.nv <= smallmat.SOLVE_UNROLL_MAX:  # no LAPACK call: it costs more than the work
            a, ok = smallmat.solve_spd_unrolled(H, rhs)
        else:
            L, ok = _guarded_cholesky(H)
            a = jax.scipy.linalg.cho_solve((L, True), rhs)
        a = jnp.where(ok, a, jnp.nan)
        return a.reshape(batch + (model.nv,)), (~ok).reshape(batch)
    H = _mass_matrix_kernel(model, q, batch=batch, method="auto")
    h = _rnea_kernel(
        model, q, v, jnp.zeros((model.nv,), q.dtype), g, f_ext, batch=batch, method="auto"
    )
    rhs = jnp.broadcast_to(tau - model.damping * v, batch + tau.shape[-1:]) - h
    L, ok = _guarded_cholesky(H)
    a = jax.scipy.linalg.cho_solve((L, True), rhs[..., None])[..., 0]
    return jnp.where(ok[..., None], a, jnp.nan), ~ok


def _guarded_cholesky(H):
    """Cholesky factors of ``(..., n, n)`` and flags; a matrix without one gets the identity."""
    L = jnp.linalg.cholesky(H)
    ok = jnp.all(jnp.isfinite(L), axis=(-2, -1))
    ok = ok & jnp.all(jnp.diagonal(L, axis1=-2, axis2=-1) > 0, axis=-1)
    eye = jnp.eye(H.shape[-1], dtype=H.dtype)
    return jnp.linalg.cholesky(jnp.where(ok[..., None, None], H, eye)), ok
