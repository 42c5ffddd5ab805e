"""Eager validation of inertial parameters: ``validate`` raises describing every failing body."""

from __future__ import annotations

import jax
import numpy as np

from ._checks import as_float_array, is_concrete
from ._consistency import default_tol, is_physically_consistent, physical_consistency
from ._errors import ArgumentError, ArgumentTypeError
from ._inertia import RigidBodyInertia


def _fmt(x) -> str:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return f"{float(x):.6g}"
    return "[" + ", ".join(f"{float(v):.6g}" for v in x.ravel()) + "]"


def _label(name, idx) -> str:
    return name if idx == () else f"{name}[{', '.join(str(i) for i in idx)}]"


def raise_listing(name, shape, bad, lines_for, headline, max_listed):
    idxs = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)] if shape else [()]
    total = int(np.prod(shape)) if shape else 1
    lines = [f"{len(idxs)} of {total} {headline}"]
    for idx in idxs[:max_listed]:
        lines.append(f"  {_label(name, idx)}: " + lines_for(idx))
    if len(idxs) > max_listed:
        rest = ", ".join(_label(name, i) for i in idxs[max_listed : max_listed + 20])
        more = " ..." if len(idxs) > max_listed + 20 else ""
        lines.append(f"  ... and {len(idxs) - max_listed} more: {rest}{more}")
    raise ArgumentError(name, "\n".join(lines))


def _check_finite(name, arr, core_ndim, max_listed):
    x = np.asarray(arr)
    shape = x.shape[: x.ndim - core_ndim]
    axes = tuple(range(x.ndim - core_ndim, x.ndim))
    bad = ~np.all(np.isfinite(x), axis=axes) if core_ndim else ~np.isfinite(x)
    if np.any(bad):
        raise_listing(
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

        raise_listing(name, shape, np.asarray(bad), line, "matrices are not symmetric:", max_listed)


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

        raise_listing(
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

        raise_listing(
            name,
            I.shape[:-2],
            np.asarray(bad),
            line,
            "rotational inertias are invalid:",
            max_listed,
        )


def validate(inertia, *, tol=None, name: str = "inertia", max_listed: int = 5):
    """Eagerly check inertial parameters and raise ``ValueError`` describing every failure.

    The strict path (constructors take the symmetric part silently). The trailing shape
    decides the form: ``(..., 10)`` parameters or a ``RigidBodyInertia``; ``(..., 4, 4)``
    pseudo-inertia (also checked symmetric); ``(..., 6, 6)`` spatial inertia (also checked
    symmetric, with an isotropic ``m 1`` block and a skew coupling block); ``(..., 3, 3)``
    rotational inertia about any point (symmetric, PSD, triangle inequality). Same ``tol``
    as [`physical_consistency`][spatialjax.physical_consistency].

    Args:
      inertia: the parameters, in one of the forms above; any batch shape.
      tol: relative tolerance; ``None`` is ``default_tol`` of the dtype.
      name: how the argument is called in the message.
      max_listed: how many failing bodies are described in full.

    Returns:
      ``inertia`` unchanged when everything holds.

    Raises:
      ValueError: listing ``name[i, j]`` for every failing body (the first ``max_listed``
        in full: failed conditions, mass, CoM, principal moments, margins), or a wrong shape.
      TypeError: called on traced values (use ``physical_consistency`` there) or with a
        non-float array.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import RigidBodyInertia
      >>> bad = RigidBodyInertia.from_mass_com_inertia(-1.0, jnp.zeros(3), jnp.eye(3))
      >>> validate(bad)  # doctest: +ELLIPSIS
      Traceback (most recent call last):
        ...
      spatialjax.ArgumentError: inertia: 1 of 1 bodies are not fully physically ...
    """
    if tol is not None and not tol >= 0:
        raise ArgumentError("tol", f"expected a tolerance >= 0, got {tol}")
    if not is_concrete(inertia):
        raise ArgumentTypeError(
            name,
            "got traced values (inside jit/vmap/grad); validate is eager. "
            "Use physical_consistency(...) or is_physically_consistent(...) inside "
            "transformed code and call validate outside it.",
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
            raise ArgumentError(
                name,
                "expected a RigidBodyInertia or an array of shape (..., 10) "
                f"(parameters), (..., 4, 4) (pseudo-inertia), (..., 6, 6) (spatial inertia) "
                f"or (..., 3, 3) (rotational inertia), got shape {tuple(x.shape)}",
            )
    tol_v = default_tol(body.dtype) if tol is None else tol
    # the eigenvalue-free verdict first (same flags); margins only when something failed
    if bool(np.all(np.asarray(is_physically_consistent(body, tol_v)))):
        return inertia
    rep = jax.tree_util.tree_map(np.asarray, physical_consistency(body, tol_v))
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

    raise_listing(
        name,
        shape,
        bad,
        line,
        f"bodies are not fully physically consistent (m > 0, I_c ⪰ 0, triangle inequality; "
        f"relative tol {tol_v:.3g}):",
        max_listed,
    )
    return inertia  # pragma: no cover
