"""Eager checks of the identification's own inputs (concrete arrays only); under ``jit`` the
problems are reported in ``status`` ([`FitStatus`][spatialjax.identification.FitStatus]).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ... import _params
from ..._checks import (
    as_float_array,
    broadcast_batch,
    first_bad,
    is_concrete,
    require_finite,
    require_nonnegative,
    same_dtype,
    to_device,
)
from ..._inertia import RigidBodyInertia
from ...multibody.joint_model import JOINT_KINDS
from ..errors import IdentifyError, IdentifyTypeError


def check_gamma(gamma, Y, batch, batch_name: str):
    """``γ`` in ``Y``'s dtype and the broadcast batch; ``ValueError`` unless finite and ``≥ 0``."""
    if isinstance(gamma, (int, float)) and not isinstance(gamma, bool):
        gamma = np.asarray(float(gamma), Y.dtype)
    gamma = as_float_array(gamma, "gamma")
    same_dtype(Y=Y, gamma=gamma)
    gamma = to_device(gamma, Y.dtype)
    batch = broadcast_batch(batch_name, batch, "gamma", gamma.shape)
    if is_concrete(gamma):
        g = np.asarray(gamma)
        if np.any(~(np.isfinite(g) & (g >= 0))):
            raise IdentifyError("gamma", f"expected a finite γ ≥ 0, got {g}")
    return gamma, batch


def check_weights(weights, n: int, k: int, dtype, *, data: str, name: str = "weights"):
    """Weights broadcastable to ``data`` (``"f"`` or ``"tau"``), in ``dtype``; finite, ``≥ 0``."""
    w = as_float_array(weights, name)
    same_dtype(Y=np.zeros((), dtype), **{name: w})
    ws = (1,) * max(0, 2 - w.ndim) + tuple(w.shape)
    if ws[-1] not in (1, k) or ws[-2] not in (1, n):
        axis = "6" if data == "f" else "nv"
        raise IdentifyError(
            name,
            f"expected a shape broadcastable to {data}'s (..., N, {axis}) = "
            f"(..., {n}, {k}), such as (), ({k},), ({n}, 1), ({n}, {k}) or (..., {n}, {k}); "
            f"got shape {tuple(w.shape)}",
        )
    require_finite(w, name)
    require_nonnegative(w, name, "noise weights (1/σ²)" if name == "weights" else "factors")
    w = to_device(w, dtype)
    if tuple(w.shape) == ws:
        return w
    return to_device(np.asarray(w).reshape(ws)) if is_concrete(w) else w.reshape(ws)


def require_consistent_prior(pi0, *, body_axis: bool, body_names=None) -> None:
    """A ``ValueError`` naming the first prior body ``pi0 (..., 10)`` that is not consistent."""
    if not is_concrete(pi0):
        return
    p = np.asarray(pi0, np.float64)
    ok = np.asarray(np.isfinite(p).all(axis=-1))
    lam = np.full(p.shape[:-1], -np.inf)
    J = _params.pseudo_inertia(np.where(ok[..., None], p, 0.0), np)
    lam[ok] = np.linalg.eigvalsh(J[ok])[..., 0]
    bad = ~(lam > 0)
    if not np.any(bad):
        return
    idx = first_bad(bad)
    if body_axis:
        i = idx[-1]
        who = f"body {i}" + (f" ({body_names[i]!r})" if body_names else "")
    else:
        who = f"body {idx}" if idx else "it"
    where = f", index {idx}" if body_axis else ""
    raise IdentifyError(
        "prior",
        "expected a fully consistent body (pseudo-inertia J0 positive definite, as a "
        f"log-det prior needs); {who} is not (smallest eigenvalue of J0: {lam[idx]:.3g}"
        f"{where}). Replace it, e.g. with spatialjax.nearest_consistent(prior) (made "
        "strictly interior), or pass a prior of your own",
    )


def check_prior_bodies(prior, nb: int, dtype, body_names=None) -> jax.Array:
    """A robot's prior ``(..., nb)``, every body consistent: its ``(..., nb, 10)`` parameters."""
    if not isinstance(prior, RigidBodyInertia):
        raise IdentifyTypeError(
            "prior",
            f"expected a RigidBodyInertia of batch (..., nb={nb}), got {type(prior).__name__}",
        )
    pi0 = prior.params
    if pi0.ndim < 2 or pi0.shape[-2] != nb:
        raise IdentifyError(
            "prior",
            f"expected a RigidBodyInertia of batch shape (..., {nb}) (one body per "
            f"10 regressor columns), got batch shape {tuple(pi0.shape[:-1])}",
        )
    same_dtype(Y=np.zeros((), dtype), prior=pi0)
    require_consistent_prior(pi0, body_axis=True, body_names=body_names)
    return pi0


def check_extra_prior(extra_prior, extra_prior_weight, ne: int, has_extra: bool):
    """``(φ0 (ne,), w (ne,))`` float64 NumPy from the optional arguments (zeros: none)."""
    out = []
    for name, x in (("extra_prior", extra_prior), ("extra_prior_weight", extra_prior_weight)):
        if x is None:
            out.append(np.zeros(ne))
            continue
        if not has_extra:
            raise IdentifyError(name, "given without extra columns")
        try:
            arr = np.asarray(x, np.float64)
        except (TypeError, ValueError):
            raise IdentifyTypeError(
                name, f"expected {ne} numbers, got {type(x).__name__}"
            ) from None
        if arr.shape != (ne,):
            raise IdentifyError(
                name, f"expected shape ({ne},) (one per extra column), got shape {arr.shape}"
            )
        bad = ~np.isfinite(arr) | ((arr < 0) if name == "extra_prior_weight" else False)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            want = "a finite weight >= 0" if name == "extra_prior_weight" else "a finite value"
            raise IdentifyError(name, f"expected {want} per column, got {arr[i]} at column {i}")
        out.append(arr)
    return out[0], out[1]


def check_extra_nonnegative(extra_nonnegative, ne: int, has_extra: bool) -> np.ndarray:
    """``(ne,)`` booleans: which extra coefficients are kept ``≥ 0`` (none where not given)."""
    if extra_nonnegative is None:
        return np.zeros(ne, bool)
    if not has_extra:
        raise IdentifyError("extra_nonnegative", "given without extra columns")
    nonneg = np.asarray(extra_nonnegative)
    if nonneg.dtype != bool or nonneg.shape != (ne,):
        raise IdentifyError(
            "extra_nonnegative",
            f"expected {ne} booleans (one per extra column), got "
            f"{nonneg.dtype} array of shape {nonneg.shape}",
        )
    return nonneg


def check_prior_spread(prior_spread) -> float:
    """``s`` of the default ``γ = 2 / s²`` rule: a finite float ``> 0``."""
    if not (np.isfinite(prior_spread) and prior_spread > 0):
        raise IdentifyError("prior_spread", f"expected a finite s > 0, got {prior_spread}")
    return float(prior_spread)


def check_torque_data(Y, tau, extra, weights):
    """Checked ``(Y, E, tau, w, batch, dtype, (N, nv, nb, ne))``; ``E``: ``(N, nv, 0)`` if none."""
    Y = as_float_array(Y, "Y")
    if Y.ndim < 3:
        raise IdentifyError(
            "Y",
            f"expected the joint-torque regressor of shape (..., N, nv, 10*nb) with a sample "
            f"axis N, got shape {tuple(Y.shape)}",
        )
    N, nv, P = Y.shape[-3:]
    if P % 10 or P == 0:
        raise IdentifyError(
            "Y",
            f"expected 10 columns per body in the last axis (..., N, nv, 10*nb), got "
            f"shape {tuple(Y.shape)} ({P} columns)",
        )
    tau = as_float_array(tau, "tau")
    if tau.ndim < 2 or tuple(tau.shape[-2:]) != (N, nv):
        raise IdentifyError(
            "tau",
            f"expected shape (..., N, nv) = (..., {N}, {nv}) to match Y of shape "
            f"{tuple(Y.shape)}, got shape {tuple(tau.shape)}",
        )
    dtype = same_dtype(Y=Y, tau=tau)
    batch = broadcast_batch("Y", Y.shape[:-3], "tau", tau.shape[:-2])
    ne = 0
    if extra is not None:
        extra = as_float_array(extra, "extra")
        if extra.ndim < 3 or tuple(extra.shape[-3:-1]) != (N, nv):
            raise IdentifyError(
                "extra",
                f"expected shape (..., N, nv, ne) = (..., {N}, {nv}, ne) to match Y of "
                f"shape {tuple(Y.shape)}, got shape {tuple(extra.shape)}",
            )
        same_dtype(Y=Y, extra=extra)
        ne = extra.shape[-1]
    require_finite(tau, "tau", "sample/joint")
    require_finite(Y, "Y", "sample/joint/column")
    if extra is not None:
        require_finite(extra, "extra", "sample/joint/column")
        batch = broadcast_batch("Y and tau", batch, "extra", extra.shape[:-3])
        E = extra
    else:
        E = to_device(np.zeros((N, nv, 0), dtype))
    w = None
    if weights is not None:
        w = check_weights(weights, N, nv, dtype, data="tau")
        batch = broadcast_batch("Y and tau", batch, "weights", w.shape[:-2])
    return Y, E, tau, w, tuple(batch), dtype, (N, nv, P // 10, ne)


def broadcast_rows(w, N: int, nv: int):
    """Weights ``(..., n, k)`` (``n`` 1 or ``N``, ``k`` 1 or ``nv``) broadcast to ``(..., N, nv)``:
    in NumPy when concrete (no program compiled per shape), in the trace when traced."""
    shape = tuple(w.shape[:-2]) + (N, nv)
    if tuple(w.shape) == shape:
        return w
    if is_concrete(w):
        return to_device(np.broadcast_to(np.asarray(w), shape))
    return jnp.broadcast_to(w, shape)


def padded_samples(n: int) -> int:
    """The sample count ``≥ n`` the one-shot programs are compiled for: four per octave.

    Rounded up to a multiple of ``2^(⌊log₂ n⌋ − 2)`` (at least 16): logs of similar
    length share one compiled fit, least squares and identifiability, for at most
    25 % (or 15) more rows.

    Examples:
      >>> [padded_samples(n) for n in (5, 501, 511, 596, 1024)]
      [16, 512, 512, 640, 1024]
    """
    step = max(16, 2 ** (max(n, 1).bit_length() - 3))
    return -(-n // step) * step


def pad_samples(arrays, sample_axes) -> tuple:
    """A top-level call's ``arrays`` zero-padded along their sample axis (counted from the
    end) to ``padded_samples`` of their sample count, in NumPy (no program compiled per
    length); traced arrays (under a caller's ``jit``, ``vmap`` or ``grad``) as they are.

    A zero-weight row adds nothing to the normal equations, the residuals or
    the weighted sample count, so a fit on the padded data is the fit on the data.
    """
    n = arrays[0].shape[sample_axes[0]]
    m = padded_samples(n)
    if m == n or not is_concrete(jax.tree.leaves(tuple(arrays))):
        return tuple(arrays)
    out = []
    for a, axis in zip(arrays, sample_axes, strict=True):
        a = np.asarray(a)
        widths = [(0, 0)] * a.ndim
        widths[a.ndim + axis] = (0, m - a.shape[axis])
        out.append(np.pad(a, widths))
    return tuple(out)


def as_joint_model(joint_model):
    """A ``JointModel`` from one, a comma-separated text or kinds (else ``ValueError``)."""
    from ...multibody import JointModel

    if isinstance(joint_model, JointModel):
        return joint_model
    try:
        if isinstance(joint_model, str):
            return JointModel.parse(joint_model)
        return JointModel(tuple(joint_model))
    except (TypeError, ValueError) as e:
        raise IdentifyError(
            "joint_model",
            f"expected a JointModel, its kinds (distinct entries of {JOINT_KINDS}) "
            f"or a comma-separated text, got {joint_model!r} ({str(e).removeprefix('kinds: ')})",
        ) from None
