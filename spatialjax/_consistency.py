r"""Physical consistency of rigid-body inertial parameters (Wensing, Kim & Slotine, RA-L 2017).

A 10-vector of inertial parameters (mass ``m``, first moment ``h = m c``,
inertia ``I_o`` about the frame origin) is realisable by a non-negative mass
density iff it is *fully physically consistent*:

* ``m > 0``;
* ``I_c ⪰ 0``: the inertia about the centre of mass is positive semi-definite;
* the triangle inequality on the principal moments ``λ1 ≤ λ2 ≤ λ3`` of
  ``I_c``: ``λ1 + λ2 ≥ λ3``. Equivalently the central second moment
  ``S_c = ½ tr(I_c) 1 − I_c`` is PSD, whose eigenvalues are
  ``½ (λj + λk − λi)``; so ``triangle_margin = λ1 + λ2 − λ3 = 2 λmin(S_c)``.
  (It implies ``I_c ⪰ 0``: adding two of the inequalities gives ``2 λk ≥ 0``.)

and, for ``m > 0``, this holds iff the pseudo-inertia ``J = [[S, h], [hᵀ, m]]``
is PSD (the Schur complement of ``m``: ``J = T diag(S_c, m) Tᵀ`` with
``T = [[1, c], [0, 1]]``).

References:
  P. M. Wensing, S. Kim, J.-J. E. Slotine, "Linear matrix inequalities for
  physically consistent inertial parameter identification: a statistical
  perspective on the mass distribution", IEEE Robotics and Automation
  Letters 3(1), 2017 (pseudo-inertia ``J``, the LMI ``J ⪰ 0`` and the
  triangle inequality). R. Featherstone, Rigid Body Dynamics Algorithms,
  Springer 2008, Sec. 2.13 (``mcI`` and the parallel-axis theorem, eq. 2.63).

Three tiers, as in lineax/equinox:

* :func:`physical_consistency` / :func:`is_physically_consistent`: flags and
  margins, jit/vmap/grad-safe, never raise on values;
* :func:`validate`: eager, raises ``ValueError`` with the failing body indices,
  the failed conditions, mass, CoM, principal moments and margins;
* :func:`nearest_consistent`: a projection onto the fully consistent set.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import _linalg3 as la
from ._checks import as_float_array
from ._inertia import RigidBodyInertia

#: Default relative tolerance of the flags is ``_TOL_ULPS`` machine epsilons of the dtype.
_TOL_ULPS = 100
#: Default ``eps`` of :func:`nearest_consistent` is ``_EPS_ULPS`` machine epsilons.
_EPS_ULPS = 1000
#: Rounding allowance of the shift ``I_c = I_o + m c× c×``: ``_SHIFT_ULPS · eps · |m| |c|²``
#: (measured: at most 3.5 eps |m| |c|² on 24,000 rods, laminas and boxes, float32 and float64,
#: built by ``from_mass_com_inertia`` or ``transform`` at 1 to 100 body sizes from the origin).
_SHIFT_ULPS = 8


class ConsistencyReport(NamedTuple):
    """Flags and margins returned by :func:`physical_consistency` (a pytree; fields ``(...)``).

    Attributes:
      finite: all ten parameters are finite.
      mass_positive: ``m > 0`` (strict; no tolerance).
      inertia_psd: ``min_eig_inertia_com ≥ −(tol · inertia_scale + tol_shift · |m| |c|²)``.
      triangle_inequality: ``triangle_margin ≥ −(tol · inertia_scale + tol_shift · |m| |c|²)``.
      pseudo_inertia_psd: ``J ⪰ 0`` decided through ``J = T diag(S_c, m) Tᵀ``: ``m > 0``,
        ``inertia_psd`` and ``triangle_inequality`` (``m == 0``: ``h == 0`` instead of ``m > 0``).
      fully_consistent: ``finite & mass_positive & inertia_psd & triangle_inequality``.
      min_eig_inertia_com: smallest eigenvalue ``λ1`` of ``I_c`` (kg m²).
      triangle_margin: ``λ1 + λ2 − λ3 = min_i (λj + λk − λi) = 2 λmin(S_c)`` (kg m²).
      min_eig_pseudo_inertia: smallest eigenvalue of ``J`` about the frame origin (the LMI
        margin; its size, not its sign, depends on the frame).
      principal_moments: ``(..., 3)`` eigenvalues of ``I_c``, ascending.
      inertia_scale: ``max|λ(I_c)|``, the size of the moments about the CoM (kg m²).
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


def _as_inertia(x, fn: str) -> RigidBodyInertia:
    if isinstance(x, RigidBodyInertia):
        return x
    if hasattr(x, "shape") or isinstance(x, (list, tuple)):
        return RigidBodyInertia(as_float_array(x, f"{fn}: inertia", (10,)))
    raise TypeError(
        f"{fn}: expected a RigidBodyInertia or a (..., 10) parameter array, got {type(x).__name__}"
    )


def default_tol(dtype) -> float:
    """Default relative tolerance of the consistency flags: ``100 · finfo(dtype).eps``.

    ``2.2e-14`` for float64, ``1.2e-5`` for float32: a few hundred roundings of
    the parameters, so that bodies exactly on the boundary (point masses, rods,
    laminas, two point masses) are accepted.
    """
    return float(_TOL_ULPS * np.finfo(np.dtype(dtype)).eps)


def _inertia_com_upper(p):
    """Upper triangle of ``I_c = I_o + h× h× / m`` (``I_o`` where ``m == 0``) as slices."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = (p[..., k : k + 1] for k in range(10))
    inv = 1 / jnp.where(m != 0, m, jnp.ones_like(m))
    return (
        xx - (hy * hy + hz * hz) * inv,
        xy + hx * hy * inv,
        xz + hx * hz * inv,
        yy - (hx * hx + hz * hz) * inv,
        yz + hy * hz * inv,
        zz - (hx * hx + hy * hy) * inv,
    )


def _pseudo_inertia_upper(p):
    """Upper triangle of ``J = [[S, h], [hᵀ, m]]``, ``S = ½ tr(I_o) 1 − I_o``, as slices."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = (p[..., k : k + 1] for k in range(10))
    half = 0.5 * (xx + yy + zz)
    return (half - xx, -xy, -xz, hx, half - yy, -yz, hy, half - zz, hz, m)


def physical_consistency(inertia, tol=None) -> ConsistencyReport:
    r"""Consistency flags and margins of a (batched) rigid-body inertia; never raises on values.

    Works under ``jit``/``vmap``/``grad`` for any batch shape; the margins are
    differentiable wherever the eigenvalues involved are distinct (at
    repeated eigenvalues the derivative of ``min`` is one-sided but finite).

    The CoM-based quantities use ``c = h / m`` whenever ``m ≠ 0`` (the identity
    ``J = T diag(S_c, m) Tᵀ`` holds for any non-zero mass, so the flags stay
    meaningful for negative masses) and ``c = 0``, ``I_c = I_o`` when ``m == 0``
    (as :attr:`RigidBodyInertia.com` and :meth:`RigidBodyInertia.inertia_com`).
    Finite inputs with ``m > 0`` never produce NaN; non-finite inputs give
    ``finite = False`` and ``fully_consistent = False``.

    The verdict does not depend on where the frame origin is: ``I_c ⪰ 0`` and
    the triangle inequality are judged on the moments about the CoM, with a
    tolerance relative to them, plus the rounding allowance of computing
    ``I_c`` from origin-frame numbers (``I_c = I_o + m c× c×`` loses about
    ``eps · |m| |c|²`` whatever the algorithm, because the inputs themselves
    carry that rounding). So a body and the same body translated by ``d``
    get the same flags as long as ``8 eps |m| d²`` stays below the margin
    being judged: for a margin of 15 % of the largest moment, up to about
    100 body sizes (rms diameters) in float32 and 10⁶ in float64.
    ``J ⪰ 0`` is decided the same way, through the factorisation
    ``J = T diag(S_c, m) Tᵀ`` with ``T = [[1, c], [0, 1]]`` (the ``LDLᵀ``
    of ``J`` with ``m`` as first pivot; Wensing, Kim & Slotine 2017):
    the smallest eigenvalue of ``J`` about the origin, reported as
    ``min_eig_pseudo_inertia``, shrinks like ``1/d²`` for a body far from
    the origin and cannot resolve the sign once ``eps · |m| d²`` exceeds it.

    Args:
      inertia: :class:`~spatialjax.RigidBodyInertia` (or a ``(..., 10)``
        parameter array) with batch shape ``(...)``.
      tol: *relative* tolerance ``≥ 0``. ``inertia_psd`` and
        ``triangle_inequality`` accept margins down to
        ``−(tol · inertia_scale + tol_shift · |m| |c|²)`` with
        ``inertia_scale = max|λ(I_c)|`` (the moments about the CoM) and
        ``tol_shift = min(tol, 8 · finfo(dtype).eps)``, the rounding of the
        shift from the frame origin to the CoM (capped, so that a generous
        ``tol`` does not grow with the distance of the CoM from the origin).
        ``m > 0`` is always strict. ``None`` (default) is
        :func:`default_tol` of the dtype; ``0.0`` is the exact test on the
        computed numbers. For every ``tol``,
        ``fully_consistent == finite & mass_positive & pseudo_inertia_psd``.

    Returns:
      :class:`ConsistencyReport` with fields of shape ``(...)``
      (``principal_moments``: ``(..., 3)``).

    Example:
      >>> import jax.numpy as jnp
      >>> from spatialjax import RigidBodyInertia
      >>> rod = RigidBodyInertia.from_mass_com_inertia(  # I = diag(1, 0, 0): PSD, not a body
      ...     1.0, jnp.zeros(3), jnp.diag(jnp.array([1.0, 0.0, 0.0])))
      >>> r = physical_consistency(rod)
      >>> bool(r.inertia_psd), bool(r.triangle_inequality), float(r.triangle_margin)
      (True, False, -1.0)
    """
    inertia = _as_inertia(inertia, "physical_consistency")
    dtype = inertia.dtype
    tol = default_tol(dtype) if tol is None else tol
    if isinstance(tol, (int, float)) and tol < 0:
        raise ValueError(f"physical_consistency: tol must be >= 0, got {tol}")
    tol = jnp.asarray(tol, dtype)
    p = inertia.params
    m = inertia.mass
    finite = jnp.all(jnp.isfinite(p), axis=-1)
    c = inertia.com
    # entries written out on (..., 1) slices and la.eigvalsh_upper, not jnp.linalg.eigvalsh on
    # assembled matrices: one LAPACK call per item was 100x slower on CPU
    lam = la.eigvalsh_upper(*_inertia_com_upper(p))
    mu = la.eigvalsh_upper(*_pseudo_inertia_upper(p))
    min_eig_I = lam[..., 0]
    tri = lam[..., 0] + lam[..., 1] - lam[..., 2]
    min_eig_J = mu[..., 0]
    mc2 = jnp.abs(m) * jnp.sum(c * c, axis=-1)
    scale_I = jnp.maximum(jnp.abs(lam[..., 0]), jnp.abs(lam[..., 2]))
    scale_J = jnp.maximum(jnp.abs(mu[..., 0]), jnp.abs(mu[..., 3]))
    # judged about the CoM: tolerance relative to the CoM moments, plus the rounding of the
    # shift from the origin (not tol · m|c|²: that let a body 100 sizes away pass in float32
    # with its triangle inequality violated by half)
    tol_shift = jnp.minimum(tol, jnp.asarray(_SHIFT_ULPS * jnp.finfo(dtype).eps, dtype))
    threshold = tol * scale_I + tol_shift * mc2
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
    """``(...)`` bool array: fully physically consistent (see :func:`physical_consistency`).

    Args:
      inertia: :class:`~spatialjax.RigidBodyInertia` or ``(..., 10)`` parameters.
      tol: relative tolerance; ``None`` is :func:`default_tol` of the dtype.
    """
    return physical_consistency(inertia, tol).fully_consistent


def _body_from(m, h, S):
    trS = S[..., 0, 0] + S[..., 1, 1] + S[..., 2, 2]
    I_o = trS[..., None, None] * la.eye3((), S.dtype) - S
    return RigidBodyInertia._pack(m, h, I_o)


def __getattr__(name: str):
    # ``validate`` and ``nearest_consistent`` moved to ``_validate`` and ``_projection``; modules
    # that still import them from here get them lazily (no import cycle at load time).
    if name == "validate":
        from ._validate import validate

        return validate
    if name == "nearest_consistent":
        from ._projection import nearest_consistent

        return nearest_consistent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
