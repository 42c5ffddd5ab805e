r"""Projection onto the fully physically consistent set: ``nearest_consistent``.

Eigenvalue clipping of the pseudo-inertia (about the CoM or the frame origin), the Frobenius-norm
projection onto ``{J ⪰ eps·s·1}``; see ``spatialjax._consistency`` for the conditions.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import is_concrete
from ._consistency import EPS_ULPS, as_inertia, body_from, physical_consistency
from ._errors import ArgumentError
from ._inertia import RigidBodyInertia
from ._validate import raise_listing


@jax.custom_jvp
def _clip_eigs(A, floor):
    r"""Frobenius projection of symmetric ``A`` onto ``{⪰ floor·1}`` (eigenvalues clipped).

    Computed as ``A + V diag(max(w, floor) − w) Vᵀ`` so unclipped directions are
    untouched. The derivative is the Daleckii–Krein formula
    ``V (G ∘ (Vᵀ dA V)) Vᵀ`` with the divided differences
    ``G_ij = (f(wᵢ) − f(wⱼ)) / (wᵢ − wⱼ)`` (``f'(wᵢ)`` where ``wᵢ == wⱼ``),
    which stays finite at repeated eigenvalues (``eigh``'s own eigenvector
    derivative does not).
    """
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
        G * (Vt @ dA @ V)
        + (1.0 - above)[..., None, :]
        * jnp.eye(A.shape[-1], dtype=A.dtype)
        * (dfloor[..., None, None])
    )
    return out, V @ inner @ Vt


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
    r"""Closest fully consistent body, by eigenvalue clipping of the pseudo-inertia.

    Bodies that are already fully consistent (``physical_consistency(inertia,
    tol=0).fully_consistent``) are returned bit-for-bit unchanged. The others
    are replaced by the Frobenius-norm projection of their pseudo-inertia onto
    ``{J ⪰ eps·s·1}`` (exact: clip the eigenvalues at ``eps·s``), so the result
    always has ``J ≻ 0`` and ``m ≥ eps·s > 0``:

    * ``reference="com"`` (default): ``J`` about the centre of mass,
      ``J_c = diag(S_c, m)`` with ``S_c = S − m c cᵀ``. Clipping acts on
      ``S_c``'s eigenvalues and on ``m`` separately: the CoM ``c = h/m`` and
      the principal axes are kept, only the principal second moments
      ``σᵢ = ½(λj + λk − λi)`` below ``eps·s`` are raised to it (and a mass
      below ``eps·s`` is raised to it). ``s = max(|m|, max|σ|)``. A body with
      ``m == 0`` has no CoM and uses ``reference="origin"``; so does a body
      whose CoM is not physically meaningful: ``m |c|² = |h|²/|m|`` above
      ``100 · max|λ(J)|``. For any body with ``S_c ⪰ 0``, ``m |c|² ≤ λ_max(S)
      ≤ max|λ(J)|``; a first moment a hundred times too large for the mass is
      what least squares returns for links of rank-deficient data (e.g.
      ``m ≈ 1e-16`` kg with ``h ≈ 1e-4`` kg m), whose CoM ``h/m`` would lie
      ~1e12 m away and make the projection meaningless.
    * ``reference="origin"``: ``J`` about the frame origin, ``s = max|λ(J)|``
      (``1`` if ``J == 0``). Mass and CoM may change.

    The metric mixes units (kg m² in ``S``, kg in ``m``) as ``J`` itself does;
    "nearest" is with respect to ``‖J' − J‖_F`` in the chosen reference frame.

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] (or ``(..., 10)``
        parameters), any batch shape.
      eps: relative floor ``> 0``; ``None`` is ``1000 · finfo(dtype).eps``
        (``2.2e-13`` float64, ``1.2e-4`` float32), large enough that the
        output passes ``physical_consistency`` with its default ``tol`` at any
        distance of the CoM from the origin, and with ``tol=0`` when the CoM is
        within a few body sizes of it (farther, rounding the shifted parameters
        to the dtype costs about ``eps · |m| |c|²``, which the default ``tol``
        allows for).
      reference: ``"com"`` or ``"origin"``, the frame in which ``J`` is clipped.

    Returns:
      [`RigidBodyInertia`][spatialjax.RigidBodyInertia] with the input's batch shape and dtype.
      Differentiable (``jit``/``vmap``/``grad``) except where clipped
      eigenvalues are repeated.

    Raises:
      ValueError: a body has a NaN or infinite parameter, when ``inertia`` is
        concrete (the message names each body's index and the offending
        parameters). Under ``jit``/``vmap`` no check is possible: such bodies
        come back with all ten parameters NaN (``physical_consistency(out).finite``
        is ``False`` there) and the other bodies are unaffected.
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
