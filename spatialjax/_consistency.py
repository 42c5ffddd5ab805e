"""Physical consistency of rigid-body inertial parameters (Wensing, Kim & Slotine, RA-L 2017).

Fully consistent: ``m > 0``, ``I_c ⪰ 0`` and the triangle inequality of the principal
moments, equivalently ``J ⪰ 0``. Flags (``physical_consistency``), eager checks
(``validate``) and a projection (``nearest_consistent``).
Derivation: docs page ``spatial.md#physical-consistency``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _params
from . import _smallmat as la
from ._checks import as_float_array
from ._errors import ArgumentError, ArgumentTypeError
from ._inertia import RigidBodyInertia
from ._pytree import Pytree, pytree_dataclass

#: Default relative tolerance of the flags is ``_TOL_ULPS`` machine epsilons of the dtype.
_TOL_ULPS = 100
#: Default ``eps`` of :func:`nearest_consistent` is ``EPS_ULPS`` machine epsilons.
EPS_ULPS = 1000
#: Rounding allowance of the shift ``I_c = I_o + m c× c×``: ``_SHIFT_ULPS · eps · |m| |c|²``
#: (measured: at most 3.5 eps |m| |c|² on 24,000 rods, laminas and boxes, float32 and float64,
#: built by ``from_mass_com_inertia`` or ``transform`` at 1 to 100 body sizes from the origin).
_SHIFT_ULPS = 8


@pytree_dataclass
class ConsistencyReport(Pytree):
    """Flags and margins returned by ``physical_consistency`` (a pytree; fields ``(...)``).

    Attributes:
      finite: all ten parameters are finite.
      mass_positive: ``m > 0`` (strict; no tolerance).
      inertia_psd: ``min_eig_inertia_com ≥ −(tol · inertia_scale + tol_shift · |m| |c|²)``.
      triangle_inequality: ``triangle_margin ≥ −(tol · inertia_scale + tol_shift · |m| |c|²)``.
      pseudo_inertia_psd: ``J ⪰ 0``: ``m > 0`` (``h == 0`` when ``m == 0``), ``inertia_psd``
        and ``triangle_inequality``.
      fully_consistent: ``finite & mass_positive & inertia_psd & triangle_inequality``.
      min_eig_inertia_com: smallest eigenvalue ``λ1`` of ``I_c`` (kg m²).
      triangle_margin: ``λ1 + λ2 − λ3 = 2 λmin(S_c)`` (kg m²).
      min_eig_pseudo_inertia: smallest eigenvalue of ``J`` about the frame origin (its size,
        not its sign, depends on the frame).
      principal_moments: ``(..., 3)`` eigenvalues of ``I_c``, ascending.
      inertia_scale: ``‖I_c‖_F`` (kg m²).
      pseudo_inertia_scale: ``max|λ(J)|``.
    """

    finite: jax.Array
    mass_positive: jax.Array
    inertia_psd: jax.Array
    triangle_inequality: jax.Array
    pseudo_inertia_psd: jax.Array
    fully_consistent: jax.Array
    min_eig_inertia_com: jax.Array
    triangle_margin: jax.Array
    min_eig_pseudo_inertia: jax.Array
    principal_moments: jax.Array
    inertia_scale: jax.Array
    pseudo_inertia_scale: jax.Array
    _core_ndims = {"principal_moments": 1}

    def __post_init__(self):
        if self._is_axis_spec():
            return
        for name in self._data_fields:
            value = getattr(self, name)
            if not (hasattr(value, "shape") and hasattr(value, "dtype")):
                raise ArgumentTypeError(
                    name, f"expected an array (ConsistencyReport field), got {type(value).__name__}"
                )


def as_inertia(x) -> RigidBodyInertia:
    if isinstance(x, RigidBodyInertia):
        return x
    if hasattr(x, "shape") or isinstance(x, (list, tuple)):
        return RigidBodyInertia(as_float_array(x, "inertia", (10,)))
    raise ArgumentTypeError(
        "inertia",
        f"expected a RigidBodyInertia or a (..., 10) parameter array, got {type(x).__name__}",
    )


def default_tol(dtype) -> float:
    """Default relative tolerance of the consistency flags: ``100 · finfo(dtype).eps``."""
    return float(_TOL_ULPS * np.finfo(np.dtype(dtype)).eps)


def _inertia_com_upper(p):
    """Upper triangle of ``I_c = I_o + h× h× / m`` (``I_o`` where ``m == 0``) as slices."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = _params.slices(p)
    inv = 1 / jnp.where(m != 0, m, jnp.ones_like(m))
    return (
        xx - (hy * hy + hz * hz) * inv,
        xy + hx * hy * inv,
        xz + hx * hz * inv,
        yy - (hx * hx + hz * hz) * inv,
        yz + hy * hz * inv,
        zz - (hx * hx + hy * hy) * inv,
    )


def _shift_size(p):
    """``|m| |c|² = |h|² / |m|`` (``0`` where ``m == 0``: no CoM, ``I_c = I_o``)."""
    m = p[..., 0]
    nz = m != 0
    inv = 1 / jnp.where(nz, m, jnp.ones_like(m))
    h2 = p[..., 1] * p[..., 1] + p[..., 2] * p[..., 2] + p[..., 3] * p[..., 3]
    return jnp.where(nz, jnp.abs(inv) * h2, jnp.zeros_like(m))


def _scale_and_threshold(Ic, mc2, tol, dtype):
    """``(‖I_c‖_F, tol ‖I_c‖_F + min(tol, 8 eps) |m| |c|²)``, shared by both flag paths."""
    xx, xy, xz, yy, yz, zz = (x[..., 0] for x in Ic)
    scale = jnp.sqrt(xx * xx + yy * yy + zz * zz + 2.0 * (xy * xy + xz * xz + yz * yz))
    tol_shift = jnp.minimum(tol, jnp.asarray(_SHIFT_ULPS * jnp.finfo(dtype).eps, dtype))
    return scale, tol * scale + tol_shift * mc2


def _psd3(a00, a01, a02, a11, a12, a22):
    """``A ⪰ 0`` for a symmetric 3×3 upper triangle by fully pivoted ``LDLᵀ`` (Higham §10.3)."""
    # first pivot: the largest diagonal entry, moved to the front (p, q, r)
    k1 = (a11 > a00) & (a11 >= a22)
    k2 = (a22 > a00) & (a22 > a11)

    def pick(v0, v1, v2):
        return jnp.where(k2, v2, jnp.where(k1, v1, v0))

    d = pick(a00, a11, a22)
    dq = pick(a01, a01, a02)  # A[p, q]
    dr = pick(a02, a12, a12)  # A[p, r]
    qq = pick(a11, a00, a00)
    qr = pick(a12, a02, a01)
    rr = pick(a22, a22, a11)
    pos = d > 0
    inv = 1.0 / jnp.where(pos, d, jnp.ones_like(d))
    c11 = qq - dq * dq * inv
    c12 = qr - dq * dr * inv
    c22 = rr - dr * dr * inv
    # 2×2 Schur complement, again pivoted on its larger diagonal entry
    e = jnp.maximum(c11, c22)
    f = jnp.minimum(c11, c22)
    epos = e > 0
    last = f - c12 * c12 / jnp.where(epos, e, jnp.ones_like(e))
    psd2 = jnp.where(epos, last >= 0, (e == 0) & (f == 0) & (c12 == 0))
    zero_rest = (a00 == 0) & (a11 == 0) & (a22 == 0) & (a01 == 0) & (a02 == 0) & (a12 == 0)
    return jnp.where(pos, psd2, (d == 0) & zero_rest)


def _flags(p, tol, dtype):
    """``(finite, mass_positive, inertia_psd, triangle, pseudo_psd, fully)`` without eigenvalues."""
    m = p[..., 0]
    finite = jnp.all(jnp.isfinite(p), axis=-1)
    Ic = _inertia_com_upper(p)
    _, t = _scale_and_threshold(Ic, _shift_size(p), tol, dtype)
    xx, xy, xz, yy, yz, zz = (x[..., 0] for x in Ic)
    inertia_psd = _psd3(xx + t, xy, xz, yy + t, yz, zz + t)
    half = 0.5 * (xx + yy + zz) + 0.5 * t
    triangle = _psd3(half - xx, -xy, -xz, half - yy, -yz, half - zz)
    mass_positive = m > 0
    h_zero = jnp.all(p[..., 1:4] == 0, axis=-1)
    pseudo_psd = jnp.where(m != 0, mass_positive, h_zero) & inertia_psd & triangle
    fully = finite & mass_positive & inertia_psd & triangle
    return finite, mass_positive, inertia_psd, triangle, pseudo_psd, fully


def physical_consistency(inertia, tol=None) -> ConsistencyReport:
    """Consistency flags and margins of a (batched) rigid-body inertia; never raises on values.

    Works under ``jit``/``vmap``/``grad``. ``c = 0`` where ``m == 0``; non-finite inputs
    give ``finite = False``; the verdict does not depend on the frame origin (docs page
    ``spatial.md#physical-consistency``).

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] or ``(..., 10)`` parameters.
      tol: relative tolerance ``≥ 0``: ``inertia_psd`` and ``triangle_inequality``
        accept margins down to ``−(tol · ‖I_c‖_F + min(tol, 8 eps) · |m| |c|²)``;
        ``m > 0`` is always strict. ``None`` (default): ``default_tol`` of the dtype.

    Returns:
      [`ConsistencyReport`][spatialjax.ConsistencyReport] with fields of shape ``(...)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import RigidBodyInertia
      >>> rod = RigidBodyInertia.from_mass_com_inertia(  # I = diag(1, 0, 0): PSD, not a body
      ...     1.0, jnp.zeros(3), jnp.diag(jnp.array([1.0, 0.0, 0.0])))
      >>> r = physical_consistency(rod)
      >>> bool(r.inertia_psd), bool(r.triangle_inequality), float(r.triangle_margin)
      (True, False, -1.0)
    """
    inertia = as_inertia(inertia)
    dtype = inertia.dtype
    tol = default_tol(dtype) if tol is None else tol
    if isinstance(tol, (int, float)) and tol < 0:
        raise ArgumentError("tol", f"expected a tolerance >= 0, got {tol}")
    return _consistency_report(inertia.params, jnp.asarray(tol, dtype))


@jax.jit
def _consistency_report(p, tol) -> ConsistencyReport:
    """``physical_consistency`` of checked ``(..., 10)`` parameters (one compiled program)."""
    dtype = p.dtype
    m = p[..., 0]
    finite = jnp.all(jnp.isfinite(p), axis=-1)
    # entries written out on (..., 1) slices and la.eigvalsh_upper, not jnp.linalg.eigvalsh on
    # assembled matrices: one LAPACK call per item is far slower on CPU (benchmarks/README.md)
    Ic = _inertia_com_upper(p)
    lam = la.eigvalsh_upper(*Ic)
    mu = la.eigvalsh_upper(*_params.pseudo_inertia_upper(p))
    min_eig_I = lam[..., 0]
    tri = lam[..., 0] + lam[..., 1] - lam[..., 2]
    min_eig_J = mu[..., 0]
    mc2 = _shift_size(p)
    scale_J = jnp.maximum(jnp.abs(mu[..., 0]), jnp.abs(mu[..., 3]))
    scale_I, threshold = _scale_and_threshold(Ic, mc2, tol, dtype)
    mass_positive = m > 0
    inertia_psd = min_eig_I >= -threshold
    triangle = tri >= -threshold
    # J = T diag(S_c, m) Tᵀ: J ⪰ 0 iff m > 0 and S_c ⪰ 0 (2 λmin(S_c) = triangle margin) for
    # m ≠ 0; for m == 0, J = [[S, h], [hᵀ, 0]] ⪰ 0 iff h == 0 and S ⪰ 0 (I_c = I_o there)
    h_zero = jnp.all(p[..., 1:4] == 0, axis=-1)
    pseudo_psd = jnp.where(m != 0, mass_positive, h_zero) & inertia_psd & triangle
    fully = finite & mass_positive & inertia_psd & triangle
    return ConsistencyReport(
        finite=finite,
        mass_positive=mass_positive,
        inertia_psd=inertia_psd,
        triangle_inequality=triangle,
        pseudo_inertia_psd=pseudo_psd,
        fully_consistent=fully,
        min_eig_inertia_com=min_eig_I,
        triangle_margin=tri,
        min_eig_pseudo_inertia=min_eig_J,
        principal_moments=lam,
        inertia_scale=scale_I,
        pseudo_inertia_scale=scale_J,
    )


def is_physically_consistent(inertia, tol=None):
    """``(...)`` bool array: fully physically consistent, without eigenvalues.

    Same verdict as ``physical_consistency(inertia, tol).fully_consistent`` up to rounding.

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] or ``(..., 10)`` parameters.
      tol: relative tolerance; ``None`` is ``default_tol`` of the dtype.
    """
    inertia = as_inertia(inertia)
    dtype = inertia.dtype
    tol = default_tol(dtype) if tol is None else tol
    if isinstance(tol, (int, float)) and tol < 0:
        raise ArgumentError("tol", f"expected a tolerance >= 0, got {tol}")
    return _fully_consistent(inertia.params, jnp.asarray(tol, dtype))


@jax.jit
def _fully_consistent(p, tol):
    """``is_physically_consistent`` of checked parameters (one compiled program)."""
    return _flags(p, tol, p.dtype)[-1]


def body_from(m, h, S):
    trS = S[..., 0, 0] + S[..., 1, 1] + S[..., 2, 2]
    I_o = trS[..., None, None] * la.eye3((), S.dtype) - S
    return RigidBodyInertia(_params.pack(m, h, I_o))
