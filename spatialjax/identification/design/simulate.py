"""Simulated robot logs for testing identification: perturbed "true" bodies and measured torques.

``perturb_inertia`` draws consistent bodies at a given geodesic distance
(Wensing, Kim & Slotine 2017; Lee, Wensing & Park 2020); ``simulate_log`` turns a
trajectory into torques and encoder readings with friction and noise.
Derivation: docs page ``identification-methods.md#simulated-logs``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _params
from ..._inertia import RigidBodyInertia
from ..._smallmat import FULL
from ..errors import IdentifyError, IdentifyTypeError
from ..logs.robot_log import RobotLog

__all__ = ["perturb_inertia", "simulate_log"]


def _as_key(key):
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if not jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.wrap_key_data(key)
    if key.shape != ():
        raise IdentifyError("key", f"expected one PRNG key, got a batch of shape {key.shape}")
    return key


def _sym_fn(M, fn):
    """``V fn(λ) Vᵀ`` for symmetric ``(..., 4, 4)`` ``M = V diag(λ) Vᵀ``."""
    lam, V = jnp.linalg.eigh(M)
    return jnp.einsum("...ij,...j,...kj->...ik", V, fn(lam), V, precision=FULL)


def perturb_inertia(inertia: RigidBodyInertia, relative, key) -> RigidBodyInertia:
    """Random fully consistent bodies at geodesic distance ``relative`` from ``inertia``.

    ``J = J0^{1/2} expm(relative · G) J0^{1/2}`` per body (``J`` the pseudo-inertia,
    ``G`` a random symmetric 4×4 matrix with ``‖G‖_F = √2``), so that
    ``spatialjax.geodesic_distance(J, J0) == relative`` and ``J ⪰ 0`` when ``J0 ⪰ 0``.

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of batch ``(...)``, each
        fully consistent (not checked: see
        [`spatialjax.physical_consistency`][spatialjax.physical_consistency]).
      relative: geodesic size of the perturbation, ``≥ 0``; a number or an
        array broadcasting with the batch.
      key: one JAX PRNG key.

    Returns:
      [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of the same batch shape and dtype.

    Raises:
      TypeError: ``inertia`` is not a RigidBodyInertia.
      ValueError: a negative or non-finite ``relative`` (Python number), or a
        batch of keys.
    """
    if not isinstance(inertia, RigidBodyInertia):
        raise IdentifyTypeError(
            "inertia", f"expected a RigidBodyInertia, got {type(inertia).__name__}"
        )
    if isinstance(relative, (int, float)) and not (math.isfinite(relative) and relative >= 0):
        raise IdentifyError("relative", f"expected a finite number >= 0, got {relative!r}")
    key = _as_key(key)
    rel = jnp.asarray(relative, inertia.dtype)
    return RigidBodyInertia(_perturb(inertia.params, rel, key))


@jax.jit
def _perturb(params, rel, key):
    dtype = params.dtype
    batch = params.shape[:-1]
    A = jax.random.normal(key, batch + (4, 4), dtype)
    G = 0.5 * (A + jnp.swapaxes(A, -1, -2))
    G = G * jnp.sqrt(2.0 / jnp.sum(G * G, axis=(-2, -1), keepdims=True))
    J0 = _params.pseudo_inertia(params)
    J0 = 0.5 * (J0 + jnp.swapaxes(J0, -1, -2))
    R = _sym_fn(J0, lambda lam: jnp.sqrt(jnp.maximum(lam, 0.0)))
    E = _sym_fn(rel[..., None, None] * G, jnp.exp)
    J = jnp.einsum("...ij,...jk,...lk->...il", R, E, R, precision=FULL)
    J = 0.5 * (J + jnp.swapaxes(J, -1, -2))
    return _params.from_pseudo_inertia(J)


@jax.jit
def _jit_rnea_scan(model, q, dq, ddq, g):
    from ... import multibody

    return multibody.rnea(model, q, dq, ddq, g, method="scan")


def _scalar_or_per_joint(x, name, n, nonneg=True):
    """``(n,)`` float64 from one number or one per joint; finite, ``>= 0`` if ``nonneg``."""
    arr = np.asarray(x, np.float64)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise IdentifyError(name, f"expected one number or shape ({n},), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or (nonneg and np.any(arr < 0)):
        raise IdentifyError(name, f"expected finite values >= 0, got {arr.tolist()}")
    return arr


def simulate_log(
    model,
    t,
    q,
    dq,
    ddq,
    *,
    key,
    inertia: RigidBodyInertia | None = None,
    friction=None,
    torque_noise=0.0,
    encoder_resolution=0.0,
    position_noise=0.0,
    gravity=(0.0, 0.0, -9.81),
    include_derivatives: bool = False,
) -> RobotLog:
    """What a robot controller would log along a trajectory, with known "true" dynamics.

    Per sample and joint (columns ``model.joint_names``):
    ``τ = rnea(q, dq, ddq) + F_v dq + F_c sign(dq) + o + σ_τ ε`` (Featherstone 2008)
    and ``q_meas = r · round((q + σ_q ε') / r)``. ``dq`` and ``ddq`` are not
    logged unless ``include_derivatives``.

    Args:
      model: a fixed-base [`Model`][spatialjax.multibody.Model] (its
        ``inertia`` is the nominal value).
      t: ``(N,)`` sample times in s.
      q, dq, ddq: ``(N, n)`` true positions, velocities, accelerations.
      key: one JAX PRNG key (the noise).
      inertia: the true bodies, [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of batch
        ``(model.nbodies,)``; default ``model.inertia``.
      friction: the true friction, ``(n, 3)`` per joint ``[viscous F_v (N·m·s/rad),
        Coulomb F_c (N·m), offset o (N·m)]`` (the last three columns of
        [`JointModel.as_table`][spatialjax.multibody.JointModel.as_table]; the true armature
        is the model's ``armature``), or None for none.
      torque_noise: σ_τ in N·m, one number or ``(n,)``.
      encoder_resolution: rad (m) per count, one number or ``(n,)``; 0 = exact.
      position_noise: σ_q in rad (m), one number or ``(n,)``.
      gravity: ``(3,)`` gravitational acceleration in world coordinates (m/s²).
      include_derivatives: also log the true ``dq`` and ``ddq``.

    Returns:
      [`RobotLog`][spatialjax.identification.RobotLog] (float64) with
      ``joint_names = model.joint_names``.

    Raises:
      ValueError: a floating-base model; shapes that do not match ``(N, n)``
        with ``n = model.nv``; ``inertia`` of the wrong batch; ``friction`` not
        ``(n, 3)``; negative noise levels or resolutions.
      TypeError: ``t``, ``q``, ``dq`` or ``ddq`` not floating point.
    """
    if model.floating_base:
        raise IdentifyError("model", "simulate_log needs a fixed-base model (joint logs only)")
    n = model.nv
    dtype = model.dtype
    for name, x in (("t", t), ("q", q), ("dq", dq), ("ddq", ddq)):
        kind = np.asarray(x).dtype.kind if not hasattr(x, "dtype") else np.dtype(x.dtype).kind
        if kind != "f":
            raise IdentifyTypeError(
                name,
                f"expected floating-point values, got dtype "
                f"{getattr(x, 'dtype', np.asarray(x).dtype)} (convert explicitly; integer "
                "data are not converted silently)",
            )
    t = np.asarray(t, np.float64)
    if t.ndim != 1:
        raise IdentifyError("t", f"expected shape (N,), got shape {t.shape}")
    N = t.shape[0]
    arrays = {}
    for name, x in (("q", q), ("dq", dq), ("ddq", ddq)):
        x = jnp.asarray(x)
        if x.shape != (N, n):
            raise IdentifyError(
                name,
                f"expected shape ({N}, {n}) (N = len(t), n = model.nv), got shape {tuple(x.shape)}",
            )
        arrays[name] = x.astype(dtype)
    if inertia is None:
        inertia = model.inertia
    if not isinstance(inertia, RigidBodyInertia) or inertia.batch_shape != (model.nbodies,):
        got = (
            inertia.batch_shape if isinstance(inertia, RigidBodyInertia) else type(inertia).__name__
        )
        raise IdentifyError(
            "inertia", f"expected a RigidBodyInertia of batch ({model.nbodies},), got {got}"
        )
    sigma_tau = _scalar_or_per_joint(torque_noise, "torque_noise", n)
    res = _scalar_or_per_joint(encoder_resolution, "encoder_resolution", n)
    sigma_q = _scalar_or_per_joint(position_noise, "position_noise", n)
    if friction is not None:
        fr = np.asarray(friction, np.float64)
        if fr.shape != (n, 3) or not np.all(np.isfinite(fr)):
            raise IdentifyError(
                "friction",
                f"expected finite shape ({n}, 3) [viscous, coulomb, offset] per joint, "
                f"got shape {fr.shape}",
            )
    else:
        fr = None
    key = _as_key(key)
    true_model = dataclasses.replace(model, inertia=RigidBodyInertia(inertia.params.astype(dtype)))
    g = jnp.asarray(gravity, dtype)
    tau = np.asarray(
        # "scan": the same numbers as the default "levels", and it compiles faster
        _jit_rnea_scan(true_model, arrays["q"], arrays["dq"], arrays["ddq"], g),
        np.float64,
    )
    dq_np = np.asarray(arrays["dq"], np.float64)
    if fr is not None:
        from ...multibody import JointModel

        phi = fr.reshape(-1).astype(dtype)
        jm = JointModel(("viscous", "coulomb", "offset"))
        tau = tau + np.asarray(jm.torque(model, arrays["dq"], arrays["ddq"], phi), np.float64)
    k_tau, k_q = jax.random.split(key)
    tau = tau + sigma_tau * np.asarray(jax.random.normal(k_tau, (N, n), jnp.float32), np.float64)
    q_meas = np.asarray(arrays["q"], np.float64)
    if np.any(sigma_q > 0):
        q_meas = q_meas + sigma_q * np.asarray(
            jax.random.normal(k_q, (N, n), jnp.float32), np.float64
        )
    q_meas = np.where(res > 0, np.round(q_meas / np.where(res > 0, res, 1.0)) * res, q_meas)
    return RobotLog(
        t=t,
        q=q_meas,
        tau=tau,
        dq=dq_np if include_derivatives else None,
        ddq=np.asarray(arrays["ddq"], np.float64) if include_derivatives else None,
        joint_names=tuple(model.joint_names),
    )
