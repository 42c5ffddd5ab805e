r"""Physical consistency of rigid-body inertial parameters (seed 001; Wensing, Kim & Slotine 2017).

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
is PSD (seed 001: Schur complement, ``J = T diag(S_c, m) Tᵀ``).

Three tiers, as in lineax/equinox:

* :func:`physical_consistency` / :func:`is_physically_consistent`: flags and
  margins, jit/vmap/grad-safe, never raise on values;
* :func:`validate`: eager, raises ``ValueError`` with the failing body indices,
  the failed conditions, mass, CoM, principal moments and margins;
* :func:`nearest_consistent`: a projection onto the fully consistent set.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _params
from . import _smallmat as la
from ._checks import as_float_array
from ._inertia import RigidBodyInertia
from ._pytree import Pytree, pytree_dataclass

#: Default relative tolerance of the flags is ``_TOL_ULPS`` machine epsilons of the dtype.
_TOL_ULPS = 100
#: Default ``eps`` of :func:`nearest_consistent` is ``_EPS_ULPS`` machine epsilons.
_EPS_ULPS = 1000


@pytree_dataclass
class ConsistencyReport(Pytree):
    """Flags and margins returned by :func:`physical_consistency` (a pytree; fields ``(...)``).

    A frozen pytree dataclass (:mod:`spatialjax._pytree`): fields are read by
    name (``report.fully_consistent``), ``report[i]`` indexes the batch,
    ``==`` compares values. Built by :func:`physical_consistency`; the
    constructor only checks that every field is an array.

    Attributes:
      finite: all ten parameters are finite.
      mass_positive: ``m > 0`` (strict; no tolerance).
      inertia_psd: ``min_eig_inertia_com ≥ −tol · inertia_scale``.
      triangle_inequality: ``triangle_margin ≥ −tol · inertia_scale``.
      pseudo_inertia_psd: ``min_eig_pseudo_inertia ≥ −tol · pseudo_inertia_scale``.
      fully_consistent: ``finite & mass_positive & inertia_psd & triangle_inequality``.
      min_eig_inertia_com: smallest eigenvalue ``λ1`` of ``I_c`` (kg m²).
      triangle_margin: ``λ1 + λ2 − λ3 = min_i (λj + λk − λi) = 2 λmin(S_c)`` (kg m²).
      min_eig_pseudo_inertia: smallest eigenvalue of ``J`` (about the frame origin).
      principal_moments: ``(..., 3)`` eigenvalues of ``I_c``, ascending.
      inertia_scale: ``max|λ(I_c)| + |m| |c|²``, the size of the numbers
        ``I_c`` is computed from (kg m²).
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
                raise TypeError(
                    f"ConsistencyReport.{name}: expected an array, got {type(value).__name__}"
                )


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
    laminas, seed 001's two-point-mass example) are accepted.
    """
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

    Args:
      inertia: :class:`~spatialjax.RigidBodyInertia` (or a ``(..., 10)``
        parameter array) with batch shape ``(...)``.
      tol: *relative* tolerance ``≥ 0``. ``inertia_psd`` and
        ``triangle_inequality`` accept margins down to ``−tol · inertia_scale``
        (``inertia_scale = max|λ(I_c)| + |m| |c|²`` is the magnitude of the
        origin-frame numbers ``I_c`` is computed from, so rounding in
        ``I_c = I_o + m c× c×`` is covered), ``pseudo_inertia_psd`` accepts
        ``λmin(J) ≥ −tol · max|λ(J)|``. ``m > 0`` is always strict. ``None``
        (default) is :func:`default_tol` of the dtype; ``0.0`` is the exact
        mathematical test, for which ``fully_consistent == mass_positive &
        pseudo_inertia_psd`` (the two tests use different scales when
        ``tol > 0``).

    Returns:
      :class:`ConsistencyReport` with fields of shape ``(...)``
      (``principal_moments``: ``(..., 3)``).

    Example:
      >>> import jax.numpy as jnp
      >>> from spatialjax import RigidBodyInertia
      >>> rod = RigidBodyInertia.from_mass_com_inertia(  # I = diag(1, 0, 0): seed 001
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
    mu = la.eigvalsh_upper(*_params.pseudo_inertia_upper(p))
    min_eig_I = lam[..., 0]
    tri = lam[..., 0] + lam[..., 1] - lam[..., 2]
    min_eig_J = mu[..., 0]
    mc2 = jnp.abs(m) * jnp.sum(c * c, axis=-1)
    scale_I = jnp.maximum(jnp.abs(lam[..., 0]), jnp.abs(lam[..., 2])) + mc2
    scale_J = jnp.maximum(jnp.abs(mu[..., 0]), jnp.abs(mu[..., 3]))
    mass_positive = m > 0
    inertia_psd = min_eig_I >= -tol * scale_I
    triangle = tri >= -tol * scale_I
    pseudo_psd = min_eig_J >= -tol * scale_J
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


_physical_consistency_jit = jax.jit(physical_consistency)


def is_physically_consistent(inertia, tol=None):
    """``(...)`` bool array: fully physically consistent (see :func:`physical_consistency`).

    Args:
      inertia: :class:`~spatialjax.RigidBodyInertia` or ``(..., 10)`` parameters.
      tol: relative tolerance; ``None`` is :func:`default_tol` of the dtype.
    """
    return physical_consistency(inertia, tol).fully_consistent


# ----------------------------------------------------------------------- validate


def _is_traced(x) -> bool:
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(x))


def _fmt(x) -> str:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return f"{float(x):.6g}"
    return "[" + ", ".join(f"{float(v):.6g}" for v in x.ravel()) + "]"


def _label(name, idx) -> str:
    return name if idx == () else f"{name}[{', '.join(str(i) for i in idx)}]"


def _raise_listing(name, shape, bad, lines_for, headline, max_listed):
    idxs = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)] if shape else [()]
    total = int(np.prod(shape)) if shape else 1
    lines = [f"{name}: {len(idxs)} of {total} {headline}"]
    for idx in idxs[:max_listed]:
        lines.append(f"  {_label(name, idx)}: " + lines_for(idx))
    if len(idxs) > max_listed:
        rest = ", ".join(_label(name, i) for i in idxs[max_listed : max_listed + 20])
        more = " ..." if len(idxs) > max_listed + 20 else ""
        lines.append(f"  ... and {len(idxs) - max_listed} more: {rest}{more}")
    raise ValueError("\n".join(lines))


def _check_finite(name, arr, core_ndim, max_listed):
    x = np.asarray(arr)
    shape = x.shape[: x.ndim - core_ndim]
    axes = tuple(range(x.ndim - core_ndim, x.ndim))
    bad = ~np.all(np.isfinite(x), axis=axes) if core_ndim else ~np.isfinite(x)
    if np.any(bad):
        _raise_listing(
            name,
            shape,
            np.asarray(bad),
            lambda idx: f"non-finite entries {_fmt(x[idx])}",
            "entries contain NaN or infinity:",
            max_listed,
        )


def _check_symmetric(name, A, tol, max_listed, what):
    A = np.asarray(A, dtype=np.float64)
    asym = np.max(np.abs(A - np.swapaxes(A, -1, -2)), axis=(-2, -1))
    size = np.maximum(np.max(np.abs(A), axis=(-2, -1)), np.finfo(np.float64).tiny)
    bad = asym > tol * size
    if np.any(bad):
        shape = A.shape[:-2]

        def line(idx):
            return (
                f"{what} is not symmetric: max |M - Mᵀ| = {_fmt(asym[idx])} > tol·max|M| = "
                f"{_fmt(tol * size[idx])}"
            )

        _raise_listing(
            name, shape, np.asarray(bad), line, "matrices are not symmetric:", max_listed
        )


def _check_rigid_6x6(name, M, tol, max_listed):
    """``M = [[I, skew(h)], [skew(h)ᵀ, m 1]]``: symmetric, isotropic mass block, skew coupling."""
    M = np.asarray(M, dtype=np.float64)
    _check_symmetric(name, M, tol, max_listed, "the 6×6 spatial inertia")
    size = np.maximum(np.max(np.abs(M), axis=(-2, -1)), np.finfo(np.float64).tiny)
    D = M[..., 3:, 3:]
    m = np.trace(D, axis1=-2, axis2=-1) / 3.0
    iso = np.max(np.abs(D - m[..., None, None] * np.eye(3)), axis=(-2, -1))
    B = M[..., :3, 3:]
    skew_err = np.max(np.abs(B + np.swapaxes(B, -1, -2)), axis=(-2, -1))
    bad = (iso > tol * size) | (skew_err > tol * size)
    if np.any(bad):

        def line(idx):
            parts = []
            if iso[idx] > tol * size[idx]:
                parts.append(
                    f"lower-right (linear) block is not m·1: diagonal {_fmt(np.diagonal(D[idx]))}, "
                    f"max deviation {_fmt(iso[idx])}"
                )
            if skew_err[idx] > tol * size[idx]:
                parts.append(
                    "upper-right block is not skew-symmetric "
                    f"(max |B + Bᵀ| = {_fmt(skew_err[idx])}); "
                    "a general 6×6 matrix (e.g. added mass) has no 10-parameter form, "
                    "see transform_spatial_matrix"
                )
            return "; ".join(parts)

        _raise_listing(
            name,
            M.shape[:-2],
            np.asarray(bad),
            line,
            "matrices are not rigid-body spatial inertias [[I, skew(h)], [skew(h)ᵀ, m 1]]:",
            max_listed,
        )


def _check_rotational_inertia(name, I, tol, max_listed):
    I = np.asarray(I, dtype=np.float64)
    _check_symmetric(name, I, tol, max_listed, "the 3×3 inertia")
    lam = np.linalg.eigvalsh(0.5 * (I + np.swapaxes(I, -1, -2)))
    scale = np.max(np.abs(lam), axis=-1)
    psd = lam[..., 0] >= -tol * scale
    tri_m = lam[..., 0] + lam[..., 1] - lam[..., 2]
    tri = tri_m >= -tol * scale
    bad = ~(psd & tri)
    if np.any(bad):

        def line(idx):
            parts = []
            if not psd[idx]:
                parts.append(f"not positive semi-definite (min eigenvalue {_fmt(lam[idx][0])})")
            if not tri[idx]:
                parts.append(
                    f"triangle inequality violated (λ1 + λ2 − λ3 = {_fmt(tri_m[idx])} < 0)"
                )
            return "; ".join(parts) + f"; principal moments {_fmt(lam[idx])}"

        _raise_listing(
            name,
            I.shape[:-2],
            np.asarray(bad),
            line,
            "rotational inertias are invalid:",
            max_listed,
        )


def validate(inertia, *, tol=None, name: str = "inertia", max_listed: int = 5):
    r"""Eagerly check inertial parameters and raise ``ValueError`` describing every failure.

    Accepted forms (the trailing shape decides):

    * a :class:`~spatialjax.RigidBodyInertia` or a ``(..., 10)`` parameter array;
    * ``(..., 4, 4)`` pseudo-inertia ``J`` — additionally checked symmetric;
    * ``(..., 6, 6)`` spatial inertia ``[[I, skew(h)], [skew(h)ᵀ, m 1]]``
      (``[ω; v]``) — additionally checked symmetric, with an isotropic
      ``m 1`` block and a skew-symmetric coupling block (a general added-mass
      matrix is rejected: it has no rigid-body form);
    * ``(..., 3, 3)`` rotational inertia about *any* point — checked symmetric,
      PSD and satisfying the triangle inequality (no mass to check).

    The constructors of :class:`~spatialjax.RigidBodyInertia` silently take
    the symmetric part of their inputs; use this function as the strict path.
    Non-finite entries are reported first, then structure, then the
    consistency conditions of :func:`physical_consistency` (same ``tol``
    semantics, relative; symmetry uses ``max|M − Mᵀ| ≤ tol · max|M|``).

    Args:
      inertia: the parameters, in one of the forms above; any batch shape.
      tol: relative tolerance; ``None`` is :func:`default_tol` of the dtype.
      name: how the argument is called in the message.
      max_listed: how many failing bodies are described in full.

    Returns:
      ``inertia`` unchanged when everything holds.

    Raises:
      ValueError: listing ``name[i, j]`` for every failing body (the first
        ``max_listed`` in full: failed conditions, mass, CoM, principal
        moments about the CoM, margins), or a wrong shape.
      TypeError: called on traced values (inside ``jit``/``vmap``; use
        :func:`physical_consistency` there) or with a non-float array.

    Example:
      >>> import jax.numpy as jnp
      >>> from spatialjax import RigidBodyInertia
      >>> bad = RigidBodyInertia.from_mass_com_inertia(-1.0, jnp.zeros(3), jnp.eye(3))
      >>> validate(bad)  # doctest: +ELLIPSIS
      Traceback (most recent call last):
        ...
      ValueError: inertia: 1 of 1 bodies are not fully physically consistent ...
    """
    if tol is not None and not tol >= 0:
        raise ValueError(f"validate: tol must be >= 0, got {tol}")
    if _is_traced(inertia):
        raise TypeError(
            f"validate({name}): got traced values (inside jit/vmap/grad); validate is eager. "
            "Use physical_consistency(...) or is_physically_consistent(...) inside "
            "transformed code and call validate outside it."
        )
    if isinstance(inertia, RigidBodyInertia):
        body = inertia
        _check_finite(name, body.params, 1, max_listed)
    else:
        x = as_float_array(inertia, name)
        tol_s = default_tol(x.dtype) if tol is None else tol
        if x.ndim >= 1 and x.shape[-1] == 10:
            _check_finite(name, x, 1, max_listed)
            body = RigidBodyInertia(x)
        elif x.ndim >= 2 and x.shape[-2:] == (4, 4):
            _check_finite(name, x, 2, max_listed)
            _check_symmetric(name, x, tol_s, max_listed, "the pseudo-inertia")
            body = RigidBodyInertia.from_pseudo_inertia(x)
        elif x.ndim >= 2 and x.shape[-2:] == (6, 6):
            _check_finite(name, x, 2, max_listed)
            _check_rigid_6x6(name, x, tol_s, max_listed)
            body = RigidBodyInertia.from_matrix(x)
        elif x.ndim >= 2 and x.shape[-2:] == (3, 3):
            _check_finite(name, x, 2, max_listed)
            _check_rotational_inertia(name, x, tol_s, max_listed)
            return inertia
        else:
            raise ValueError(
                f"{name}: expected a RigidBodyInertia or an array of shape (..., 10) "
                f"(parameters), (..., 4, 4) (pseudo-inertia), (..., 6, 6) (spatial inertia) "
                f"or (..., 3, 3) (rotational inertia), got shape {tuple(x.shape)}"
            )
    tol_v = default_tol(body.dtype) if tol is None else tol
    rep = jax.tree_util.tree_map(np.asarray, _physical_consistency_jit(body, tol_v))
    bad = ~rep.fully_consistent
    if not np.any(bad):
        return inertia
    mass = np.asarray(body.mass)
    com = np.asarray(body.com)
    shape = body.batch_shape

    def line(idx):
        parts = []
        if not rep.mass_positive[idx]:
            parts.append(f"mass is not positive (m = {_fmt(mass[idx])})")
        if not rep.inertia_psd[idx]:
            parts.append(
                "inertia about the CoM is not positive semi-definite (min principal moment "
                f"{_fmt(rep.min_eig_inertia_com[idx])})"
            )
        if not rep.triangle_inequality[idx]:
            lam = rep.principal_moments[idx]
            parts.append(
                f"triangle inequality violated: λ1 + λ2 − λ3 = {_fmt(lam[0])} + {_fmt(lam[1])} − "
                f"{_fmt(lam[2])} = {_fmt(rep.triangle_margin[idx])} < 0"
            )
        return (
            "; ".join(parts)
            + f". mass {_fmt(mass[idx])}, CoM {_fmt(com[idx])}, principal moments about the CoM "
            f"{_fmt(rep.principal_moments[idx])}, "
            f"triangle margin {_fmt(rep.triangle_margin[idx])}, "
            f"min eig of pseudo-inertia {_fmt(rep.min_eig_pseudo_inertia[idx])}"
        )

    _raise_listing(
        name,
        shape,
        bad,
        line,
        f"bodies are not fully physically consistent (m > 0, I_c ⪰ 0, triangle inequality; "
        f"relative tol {tol_v:.3g}):",
        max_listed,
    )
    return inertia  # pragma: no cover


# ------------------------------------------------------------ nearest_consistent


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


def _body_from(m, h, S):
    trS = S[..., 0, 0] + S[..., 1, 1] + S[..., 2, 2]
    I_o = trS[..., None, None] * la.eye3((), S.dtype) - S
    return RigidBodyInertia(_params.pack(m, h, I_o))


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
      ``m == 0`` has no CoM and uses ``reference="origin"``.
    * ``reference="origin"``: ``J`` about the frame origin, ``s = max|λ(J)|``
      (``1`` if ``J == 0``). Mass and CoM may change.

    The metric mixes units (kg m² in ``S``, kg in ``m``) as ``J`` itself does;
    "nearest" is with respect to ``‖J' − J‖_F`` in the chosen reference frame.

    Args:
      inertia: :class:`~spatialjax.RigidBodyInertia` (or ``(..., 10)``
        parameters), any batch shape.
      eps: relative floor ``> 0``; ``None`` is ``1000 · finfo(dtype).eps``
        (``2.2e-13`` float64, ``1.2e-4`` float32), large enough that the
        output passes ``physical_consistency(·, tol=0)`` after rounding.
      reference: ``"com"`` or ``"origin"``, the frame in which ``J`` is clipped.

    Returns:
      :class:`~spatialjax.RigidBodyInertia` with the input's batch shape and dtype.
      Differentiable (``jit``/``vmap``/``grad``) except where clipped
      eigenvalues are repeated.
    """
    inertia = _as_inertia(inertia, "nearest_consistent")
    if reference not in ("com", "origin"):
        raise ValueError(
            f"nearest_consistent: reference must be 'com' or 'origin', got {reference!r}"
        )
    dtype = inertia.dtype
    eps = _EPS_ULPS * float(np.finfo(np.dtype(dtype)).eps) if eps is None else eps
    if isinstance(eps, (int, float)) and eps <= 0:
        raise ValueError(f"nearest_consistent: eps must be > 0, got {eps}")
    eps = jnp.asarray(eps, dtype)
    ok = physical_consistency(inertia, tol=0.0).fully_consistent
    # double-where: the projection branch sees a harmless body where the input is kept, so
    # its (unused) derivatives cannot poison the gradient with NaN.
    unit = jnp.asarray([1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0], dtype)
    p_in = jnp.where(ok[..., None], unit, inertia.params)
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
        nz = m != 0
        m_safe = jnp.where(nz, m, jnp.ones_like(m))
        c = h / m_safe[..., None]
        S = J[..., :3, :3]
        S_c = S - m_safe[..., None, None] * c[..., :, None] * c[..., None, :]
        sig = jnp.linalg.eigvalsh(S_c)
        s1 = jnp.maximum(jnp.abs(m_safe), jnp.max(jnp.abs(sig), axis=-1))
        S_c2 = _clip_eigs(S_c, eps * s1)
        m2 = jnp.maximum(m_safe, eps * s1)
        S2 = S_c2 + m2[..., None, None] * c[..., :, None] * c[..., None, :]
        p_com = _body_from(m2, m2[..., None] * c, S2).params
        p_new = jnp.where(nz[..., None], p_com, p_origin)
    return RigidBodyInertia(jnp.where(ok[..., None], inertia.params, p_new))
