"""Projection onto the fully physically consistent set: ``nearest_consistent``.

Docs page ``spatial.md#nearest-consistent``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _smallmat as smallmat
from ._checks import is_concrete
from ._consistency import EPS_ULPS, as_inertia, body_from, physical_consistency
from ._errors import ArgumentError
from ._inertia import RigidBodyInertia
from ._validate import raise_listing


@jax.custom_jvp
def _clip_eigs(A, floor):
    """Frobenius projection of symmetric ``A`` onto ``{⪰ floor·1}``, Daleckii–Krein derivative."""
    w, V = jnp.linalg.eigh(A)
    bump = jnp.maximum(floor[..., None] - w, 0.0)
    return A + jnp.sum(V[..., :, None, :] * V[..., None, :, :] * bump[..., None, None, :], axis=-1)


@_clip_eigs.defjvp
def _clip_eigs_jvp(primals, tangents):
    A, floor = primals
    dA, dfloor = tangents
    w, V = jnp.linalg.eigh(A)
    fw = jnp.maximum(w, floor[..., None])
    out = A + jnp.sum(
        V[..., :, None, :] * V[..., None, :, :] * (fw - w)[..., None, None, :], axis=-1
    )
    above = (w > floor[..., None]).astype(A.dtype)
    dw = w[..., :, None] - w[..., None, :]
    same = dw == 0
    G = jnp.where(
        same,
        0.5 * (above[..., :, None] + above[..., None, :]),
        (fw[..., :, None] - fw[..., None, :]) / jnp.where(same, jnp.ones_like(dw), dw),
    )
    Vt = jnp.swapaxes(V, -1, -2)
    dA = 0.5 * (dA + jnp.swapaxes(dA, -1, -2))
    inner = (
        G * smallmat.matmul(smallmat.matmul(Vt, dA), V)
        + (1.0 - above)[..., None, :]
        * jnp.eye(A.shape[-1], dtype=A.dtype)
        * (dfloor[..., None, None])
    )
    return out, smallmat.matmul(smallmat.matmul(V, inner), Vt)


_PARAM_NAMES = ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def _check_finite_params(params) -> None:
    """Raise ``ValueError`` naming every body (and parameter) that is NaN or infinite."""
    x = np.asarray(params)
    bad_entry = ~np.isfinite(x)
    bad = np.any(bad_entry, axis=-1)
    if not np.any(bad):
        return

    def line(idx):
        return ", ".join(f"{_PARAM_NAMES[k]} = {x[idx][k]}" for k in np.flatnonzero(bad_entry[idx]))

    try:
        raise_listing("inertia", x.shape[:-1], bad, line, "bodies have non-finite parameters:", 5)
    except ArgumentError as err:
        raise ArgumentError(
            err.argument,
            f"{err.detail}\n(a NaN or infinite parameter has no nearest "
            "consistent body; fix or drop these bodies first)",
        ) from None


_COM_SHIFT_MAX = 100.0  # m|c|² / max|λ(J)| above which reference="com" falls back to "origin"


def nearest_consistent(inertia, eps=None, *, reference: str = "com") -> RigidBodyInertia:
    """Closest fully consistent body, by eigenvalue clipping of the pseudo-inertia.

    Consistent bodies are returned unchanged; the others get the Frobenius-norm projection
    of ``J`` onto ``{J ⪰ eps·s·1}``. ``reference="com"`` keeps the CoM and principal axes
    (``"origin"`` for ``m == 0``); ``"origin"`` may change mass and CoM. Docs page
    ``spatial.md#nearest-consistent``.

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] or ``(..., 10)`` parameters.
      eps: relative floor ``> 0``; ``None`` is ``1000 · finfo(dtype).eps`` (passes
        ``physical_consistency`` with its default ``tol``).
      reference: ``"com"`` or ``"origin"``, the frame in which ``J`` is clipped.

    Returns:
      [`RigidBodyInertia`][spatialjax.RigidBodyInertia], the input's batch shape and dtype;
      differentiable except where clipped eigenvalues are repeated.

    Raises:
      ValueError: a NaN or infinite parameter, on concrete input (naming each
        body); under ``jit`` such bodies come back all NaN.
    """
    inertia = as_inertia(inertia)
    if reference not in ("com", "origin"):
        raise ArgumentError("reference", f"expected 'com' or 'origin', got {reference!r}")
    dtype = inertia.dtype
    eps = EPS_ULPS * float(np.finfo(np.dtype(dtype)).eps) if eps is None else eps
    if isinstance(eps, (int, float)) and not eps > 0:  # also NaN
        raise ArgumentError("eps", f"expected a number > 0, got {eps}")
    if is_concrete(inertia.params):
        _check_finite_params(inertia.params)
    return RigidBodyInertia(_nearest(inertia.params, jnp.asarray(eps, dtype), reference=reference))


@functools.partial(jax.jit, static_argnames=("reference",))
def _nearest(params, eps, *, reference: str):
    """``nearest_consistent`` of checked ``(..., 10)`` parameters (one compiled program)."""
    dtype = params.dtype
    inertia = RigidBodyInertia(params)
    ok = physical_consistency(inertia, tol=0.0).fully_consistent
    finite = jnp.all(jnp.isfinite(inertia.params), axis=-1)
    # double-where: the projection branch sees a harmless body where the input is kept (or is
    # not finite), so its (unused) derivatives cannot poison the gradient with NaN.
    unit = jnp.asarray([1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0], dtype)
    p_in = jnp.where((ok | ~finite)[..., None], unit, inertia.params)
    body = RigidBodyInertia(p_in)
    m, h = body.mass, body.h
    J = body.pseudo_inertia()

    # origin: clip the 4×4 J
    mu = jnp.linalg.eigvalsh(J)
    s0 = jnp.max(jnp.abs(mu), axis=-1)
    s0 = jnp.where(s0 > 0, s0, jnp.ones_like(s0))
    Jp = _clip_eigs(J, eps * s0)
    p_origin = RigidBodyInertia.from_pseudo_inertia(Jp).params

    if reference == "origin":
        p_new = p_origin
    else:
        m_safe = jnp.where(m != 0, m, jnp.ones_like(m))
        # a CoM only where it means something: m|c|² = |h|²/|m| within _COM_SHIFT_MAX of the
        # body's own scale (always ≤ 1× for S_c ⪰ 0); else the origin projection
        shift = jnp.sum(h * h, axis=-1) / jnp.abs(m_safe)
        nz = (m != 0) & (shift <= _COM_SHIFT_MAX * s0)
        c = h / m_safe[..., None]
        S = J[..., :3, :3]
        S_c = S - m_safe[..., None, None] * c[..., :, None] * c[..., None, :]
        sig = jnp.linalg.eigvalsh(S_c)
        s1 = jnp.maximum(jnp.abs(m_safe), jnp.max(jnp.abs(sig), axis=-1))
        S_c2 = _clip_eigs(S_c, eps * s1)
        m2 = jnp.maximum(m_safe, eps * s1)
        S2 = S_c2 + m2[..., None, None] * c[..., :, None] * c[..., None, :]
        p_com = body_from(m2, m2[..., None] * c, S2).params
        p_new = jnp.where(nz[..., None], p_com, p_origin)
    p_out = jnp.where(ok[..., None], params, p_new)
    return jnp.where(finite[..., None], p_out, jnp.nan)
