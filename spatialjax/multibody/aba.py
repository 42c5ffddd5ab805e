r"""Forward dynamics: the articulated-body algorithm (ABA) and ``M⁻¹ (τ − h)`` by Cholesky.

Conventions: ``q``/``v``/``a``/``τ`` as in :class:`~spatialjax.multibody.Model`
(free flyer ``v = [ω; v]`` and ``a = [ω̇; v̇]`` in the body frame, ``τ[:6]``
the body-frame wrench ``[n; f]``); external wrenches ``[n; f]`` act on each
body, in its frame, about its origin (Pinocchio's ``fext`` in the LOCAL
convention); gravity in world coordinates.

What the acceleration includes:
``(M(q) + diag(armature)) a = τ − damping ⊙ v − h(q, v) + Σ_i J_iᵀ f_ext,i``,
with ``M`` the joint-space inertia matrix of the bodies, ``h`` the bias forces
(:func:`~spatialjax.multibody.nonlinear_effects`) and ``armature``,
``damping`` the :class:`~spatialjax.multibody.Model` fields (MuJoCo's
``qacc`` of ``mj_forward`` with joint armature and damping, without
constraints; Pinocchio's ``aba`` with ``model.armature`` and ``τ − damping ⊙ v``).
Nothing else: no Coulomb friction (``Model.friction``, MuJoCo's
``frictionloss``, a constraint there), no joint limits, no contacts.

Singular mass matrix (a subtree with no inertia along its joint, e.g. a
massless leaf link or a zero-mass chain): both methods detect it per state
(ABA: an articulated inertia ``D_i = S_iᵀ I^A_i S_i`` not above
``ε · tr(I^A_i)``, or a free-flyer ``I^A_0`` whose Cholesky factor fails; CRBA:
the Cholesky factor of ``M`` fails). Those states' accelerations are NaN
(every entry), the other states are exact and their gradients finite; when
the inputs are concrete (an eager call, not under ``jit``/``vmap``/``grad``)
a :class:`ValueError` is raised instead. Pinocchio's ``aba`` divides by the
zero ``D_i`` without a check and returns inf/NaN.

References:
  R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008 (RBDA):
  Table 7.1 (articulated-body algorithm), §7.3 (free-floating base),
  §6.1-6.2 (``H q̈ = τ − C``, CRBA).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import is_concrete
from ._batchlast import (
    _crf,
    _crm,
    _dot,
    _inertia_matrix,
    _inertia_times,
    _join,
    _m6v,
    _motion_to_child,
    _n,
    _rows_force_to_parent,
    _rows_to_child,
    _sum,
)
from ._model import Model
from ._sweep import (
    _as_fext,
    _as_input,
    _batch,
    _batch_with_fext,
    _chunked,
    _dyn,
    _flat,
    _flat_fext,
    _gravity,
    _put,
    _scan_forward,
    _scan_xs,
    _split_dofs,
    _step_frame,
    _subspaces,
    _unflat_bf,
)

_FD_METHODS = ("aba", "crba")
#: Batches are swept in chunks of this many states: a chunk's per-body 6x6 articulated
#: inertias (the scan carry) then stay in cache (``benchmarks/README.md``, "Forward
#: dynamics"; chunks of 2048 states, the other algorithms' size, ran superlinearly).
_ABA_CHUNK = 256


def forward_dynamics(
    model: Model,
    q,
    v,
    tau,
    gravity=None,
    *,
    f_ext=None,
    method: str = "aba",
) -> jax.Array:
    r"""Joint accelerations: ``M(q) a + h(q, v) = τ − damping ⊙ v + Σ_i J_iᵀ f_ext,i``.

    ``method="aba"``: Featherstone's articulated-body algorithm (RBDA Table
    7.1, §7.3 for a free-flyer root): body velocities and bias accelerations
    ``c_i = v_i × S_i q̇_i`` root to leaves; articulated inertias
    ``I^A_i = I_i + Σ_children X_jᵀ (I^A_j − U_j D_j⁻¹ U_jᵀ) X_j`` and bias
    forces ``p^A_i`` leaves to root (``U_i = I^A_i S_i``, ``D_i = S_iᵀ U_i``,
    ``u_i = τ_i − S_iᵀ p^A_i``, ``D_i`` plus the joint's armature); then
    ``q̈_i = D_i⁻¹ (u_i − U_iᵀ (X_i a_λ + c_i))`` root to leaves, with gravity
    as the base acceleration ``[0; −g]``. O(n).
    ``method="crba"``: ``M a = τ − h`` solved by Cholesky, ``M`` from
    :func:`~spatialjax.multibody.mass_matrix` and ``h`` from
    :func:`~spatialjax.multibody.rnea` with ``a = 0`` (and ``f_ext``). Both
    give Pinocchio's ``aba(model, data, q, v, tau, fext)`` (free-flyer entries
    reordered ``[ω; v]``); the module docstring states what is included and
    what a singular mass matrix gives.

    Args:
      model: the tree.
      q: ``(..., nq)`` configuration.
      v: ``(..., nv)`` velocity.
      tau: ``(..., nv)`` generalised force (N m, N; a free flyer's six entries
        are a body-frame wrench ``[n; f]`` on the root, usually zero).
      gravity: ``(..., 3)`` gravitational acceleration in world coordinates;
        ``None`` (default) is ``(0, 0, -9.81)`` m/s².
      f_ext: ``(..., nbodies, 6)`` external wrench ``[n; f]`` acting on each
        body, in the body's frame, about its origin; ``None`` for none.
      method: ``"aba"`` (default) or ``"crba"``.

    Returns:
      ``(..., nv)`` accelerations in ``v``'s order (a free flyer's: the body
      spatial acceleration ``[ω̇; v̇]``, gravity not included); the batch
      axes are those of ``q``, ``v``, ``tau``, ``gravity`` and ``f_ext``
      broadcast. NaN in every entry of a state whose mass matrix is singular
      (under ``jit``/``vmap``/``grad``).

    Raises:
      ValueError: ``q``/``v``/``tau``/``gravity``/``f_ext`` of the wrong
        length or shape, batch shapes that do not broadcast, an unknown
        ``method``, or (concrete inputs only) a singular mass matrix.
      TypeError: a non-float input or a dtype other than the model's.

    Example:
      >>> import jax.numpy as jnp
      >>> from spatialjax.multibody import chain_model, forward_dynamics
      >>> m = chain_model(1, length=1.0, mass=2.0)   # a rod about a vertical axis, I = 2/3
      >>> forward_dynamics(m, jnp.zeros(1), jnp.zeros(1), jnp.ones(1)).round(3).tolist()
      [1.5]

    References:
      R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, Table 7.1
      and §7.3 (ABA), §6.1-6.2 (``H q̈ = τ − C``).
    """
    if method not in _FD_METHODS:
        raise ValueError(f"method: expected one of {_FD_METHODS}, got {method!r}")
    q = _as_input(q, "q", model.nq, model)
    v = _as_input(v, "v", model.nv, model)
    tau = _as_input(tau, "tau", model.nv, model)
    g = _gravity(gravity, model)
    f_ext = _as_fext(f_ext, model)
    batch = _batch_with_fext(_batch(q=q, v=v, tau=tau, gravity=g), f_ext)
    if method == "aba":
        a, singular = _aba_kernel(model, q, v, tau, g, f_ext, batch=batch)
    else:
        a, singular = _crba_fd_kernel(model, q, v, tau, g, f_ext, batch=batch)
    if is_concrete((model, q, v, tau, g, f_ext)):
        bad = np.asarray(singular)
        if bad.any():
            raise ValueError(
                f"forward_dynamics: the mass matrix of model {model.name!r} is singular in "
                f"{int(bad.sum())} of {bad.size} states (a body whose subtree has no "
                "inertia along its joint: massless leaf links or a zero-mass chain); give "
                "the bodies mass and inertia, or joint armature"
            )
    return a


@functools.partial(jax.jit, static_argnames=("batch",))
def _aba_kernel(model: Model, q, v, tau, g, f_ext, *, batch):
    """:func:`forward_dynamics` by ABA on checked inputs: ``(a, singular)``."""
    xs = [_flat(q, batch), _flat(v, batch), _flat(tau, batch)]
    xs.append(g[:, None] if g.ndim == 1 else _flat(g, batch))
    if f_ext is not None:
        xs.append(_flat_fext(f_ext, batch))
    a, bad = _chunked(functools.partial(_aba_core, model), *xs, chunk=_ABA_CHUNK)
    return _unflat_bf(a, batch), _unflat_bf(bad, batch)


def _aba_core(model: Model, q, v, tau, g, fext=None):
    """ABA (RBDA Table 7.1) on ``(k, N)`` inputs: ``(nv, N)`` accelerations, ``(N,)`` flags."""
    nb, N, dt = model.nbodies, q.shape[-1], q.dtype
    ff = model.floating_base
    s0 = 1 if ff else 0
    eps = jnp.finfo(dt).eps
    tau = tau - _n(model.damping) * v  # passive joint damping (MuJoCo's qfrc_passive)
    # per scanned body: its joint's frame terms (E, r by _step_frame), parent row, subspace
    xs, _, root = _scan_xs(model, q)
    V = _scan_forward(model, q, v, pose=False)["V"][:nb]  # body velocities
    S = _n(_subspaces(model))  # (nb, 6, 1), zero for a free flyer
    _, qd = _split_dofs(model, v)
    c = _crm(V, S * qd[:, None, :])  # c_i = v_i × S_i q̇_i (zero for a free flyer)
    prm = _n(model.inertia.params)
    pA = _crf(V, _inertia_times(prm, V))  # p_i = v_i ×* I_i v_i − f_ext,i
    if fext is not None:
        pA = pA - fext
    IA = jnp.broadcast_to(_inertia_matrix(prm), (nb, 6, 6, N))
    IA = jnp.concatenate([IA, jnp.zeros((1, 6, 6, N), dt)], axis=0)  # row nb: the world
    pA = jnp.concatenate([pA, jnp.zeros((1, 6, N), dt)], axis=0)
    _, taub = _split_dofs(model, tau)
    _, armb = _split_dofs(model, _n(model.armature))  # (nb, 1): rotor inertias
    a_g = jnp.broadcast_to(_join(jnp.zeros_like(g), -g), (6, N))  # base acceleration
    bx = dict(
        xs,
        S=S[s0:],
        c=c[s0:],
        tau=taub[s0:],
        arm=armb[s0:],
    )

    def back_body(IAi, pAi, x):
        """One body of the backward pass: its contributions to the parent and ``U, D⁻¹, u``."""
        Si = x["S"]
        # XLA:CPU has no multi-output loop fusion: every output row would recompute what
        # it depends on, so the step's intermediates are materialised (optimization_barrier)
        U = _m6v(IAi, Si)  # (6, N)
        D = _dot(Si, U, 6) + x["arm"]
        tr = _sum(IAi[k, k] for k in range(6))
        ok = D > eps * tr
        Dinv = jnp.where(ok, 1.0 / jnp.where(ok, D, 1.0), 0.0)
        u = x["tau"] - _dot(Si, pAi, 6)
        U, Dinv, u, ok = jax.lax.optimization_barrier((U, Dinv, u, ok))
        Ia = jax.lax.optimization_barrier(IAi - U[:, None, :] * U[None, :, :] * Dinv)
        pa = pAi + _m6v(Ia, x["c"]) + U * (u * Dinv)
        # to the parent: Xᵀ Ia X as Xᵀ applied to the columns of Ia, then to the rows of
        # the result (Ia symmetric), each a force moved child -> parent (RBDA §2.9)
        E, r = _step_frame(x)
        M = [_rows_force_to_parent(E, r, [Ia[k, j] for k in range(6)]) for j in range(6)]
        M = jax.lax.optimization_barrier(M)  # M[j][k] = (Xᵀ Ia)[k, j]
        P = [_rows_force_to_parent(E, r, [M[k][j] for k in range(6)]) for j in range(6)]
        P = jnp.stack([jnp.stack(col, 0) for col in P], axis=1)  # P[k, j]
        up = jnp.stack(_rows_force_to_parent(E, r, list(pa)))
        return P, up, (U, Dinv, u, ok)

    def back_step(carry, x):
        IA, pA = carry
        P, up, out = back_body(_dyn(IA, x["i"]), _dyn(pA, x["i"]), x)
        IA = _put(IA, _dyn(IA, x["p"]) + P, x["p"])
        pA = _put(pA, _dyn(pA, x["p"]) + up, x["p"])
        return (IA, pA), out

    # leaves to root (reverse scan): I^A_λ += Xᵀ Ia X, p^A_λ += Xᵀ pa
    (IA, pA), (U, Dinv, u, ok) = jax.lax.scan(back_step, (IA, pA), bx, reverse=True)
    bad = jnp.any(~ok, axis=0) if nb > s0 else jnp.zeros((N,), bool)
    A = jnp.zeros((nb + 1, 6, N), dt).at[nb].set(a_g)
    a_root = None
    if ff and root is not None:
        # free flyer (RBDA §7.3): I^A_0 a_0 + p^A_0 = τ_0, a_0 = X_0 a_g + q̈_0
        IA0 = jnp.moveaxis(IA[0], -1, 0) + jnp.diag(model.armature[:6])  # (N, 6, 6)
        rhs = jnp.moveaxis(tau[:6] - pA[0], -1, 0)[..., None]
        L = jnp.linalg.cholesky(IA0)
        ok0 = jnp.all(jnp.isfinite(L), axis=(-2, -1))
        ok0 = ok0 & jnp.all(jnp.diagonal(L, axis1=-2, axis2=-1) > 0, axis=-1)
        L = jnp.linalg.cholesky(jnp.where(ok0[:, None, None], IA0, jnp.eye(6, dtype=dt)))
        a0 = jax.scipy.linalg.cho_solve((L, True), rhs)[..., 0].T  # (6, N)
        A = A.at[0].set(a0)
        E0, r0 = root  # the root's pose in the world (a free flyer's q)
        a_root = a0 - _motion_to_child(E0, r0, a_g)
        bad = bad | ~ok0
    fx = dict(bx, U=U, Dinv=Dinv, u=u)

    def fwd_step(A, x):
        E, r = _step_frame(x)
        ap = jnp.stack(_rows_to_child(E, r, list(_dyn(A, x["p"])))) + x["c"]
        qdd = (x["u"] - _dot(x["U"], ap, 6)) * x["Dinv"]
        return _put(A, ap + x["S"] * qdd, x["i"]), qdd

    _, qdd = jax.lax.scan(fwd_step, A, fx)
    out = qdd if a_root is None else jnp.concatenate([a_root, qdd], axis=0)
    return jnp.where(bad, jnp.nan, out), bad


@functools.partial(jax.jit, static_argnames=("batch",))
def _crba_fd_kernel(model: Model, q, v, tau, g, f_ext, *, batch):
    """:func:`forward_dynamics` as ``M⁻¹ (τ − h)`` by Cholesky: ``(a, singular)``."""
    from .crba import _mass_matrix_kernel
    from .rnea import _rnea_kernel

    H = _mass_matrix_kernel(model, q, batch=batch, method="scan")
    h = _rnea_kernel(
        model, q, v, jnp.zeros((model.nv,), q.dtype), g, f_ext, batch=batch, method="scan"
    )
    rhs = jnp.broadcast_to(tau - model.damping * v, batch + tau.shape[-1:]) - h
    L = jnp.linalg.cholesky(H)
    ok = jnp.all(jnp.isfinite(L), axis=(-2, -1))
    ok = ok & jnp.all(jnp.diagonal(L, axis1=-2, axis2=-1) > 0, axis=-1)
    eye = jnp.eye(model.nv, dtype=q.dtype)
    L = jnp.linalg.cholesky(jnp.where(ok[..., None, None], H, eye))
    a = jax.scipy.linalg.cho_solve((L, True), rhs[..., None])[..., 0]
    return jnp.where(ok[..., None], a, jnp.nan), ~ok
