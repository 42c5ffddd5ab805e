"""Consistency margins and geodesic distances of a few bodies, in NumPy (no compile).

The report's per-body figures are computed once per run on a handful of bodies:
compiling an XLA program for them costs seconds, the work microseconds. The
definitions are [physical_consistency][spatialjax.physical_consistency]'s and
[geodesic_distance][spatialjax.geodesic_distance]'s (the same tolerances), here
with LAPACK's eigenvalues.
"""

from __future__ import annotations

import numpy as np

from ..._consistency import default_tol
from ..._params import pseudo_inertia

#: ``physical_consistency``'s rounding allowance for the shift from the origin to the CoM,
#: in ulps: the threshold is ``tol ‖I_c‖_F + min(tol, SHIFT_ULPS eps) |m| |c|²``.
SHIFT_ULPS = 8


def _inertia_com(P: np.ndarray) -> np.ndarray:
    """``(k, 3, 3)`` ``I_c = I_o + h× h× / m`` (``1/m`` read as 1 where ``m == 0``, as
    ``physical_consistency`` does)."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = P.T
    inv = 1.0 / np.where(m != 0, m, 1.0)
    a = np.stack([xx - (hy * hy + hz * hz) * inv, xy + hx * hy * inv, xz + hx * hz * inv,
                  yy - (hx * hx + hz * hz) * inv, yz + hy * hz * inv,
                  zz - (hx * hx + hy * hy) * inv], axis=-1)  # fmt: skip
    return a[:, [0, 1, 2, 1, 3, 4, 2, 4, 5]].reshape(-1, 3, 3)


def consistency_margins(P) -> dict:
    """Full physical consistency of float64 bodies ``P (k, 10)`` and its margins.

    ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about each body's frame
    origin. Consistent: finite, ``m > 0``, the CoM inertia's smallest principal
    moment and triangle margin ``λ1 + λ2 − λ3`` at least
    ``−(tol ‖I_c‖_F + min(tol, 8 eps) |m| |c|²)``, ``tol`` the float64
    ``default_tol`` (Wensing, Kim & Slotine, IEEE RA-L 3(1), 2017).

    Args:
      P: ``(k, 10)`` body parameters.

    Returns:
      NumPy arrays ``consistent`` (k,), ``principal_moments`` (k, 3) ascending,
      ``min_eig_inertia_com``, ``triangle_margin``, ``min_eig_pseudo_inertia`` (k,);
      NaN margins for a body with a non-finite entry.

    Examples:
      >>> import numpy as np
      >>> r = consistency_margins(np.array([[1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0]]))
      >>> bool(r["consistent"][0]), r["triangle_margin"].tolist()
      (True, [1.0])
    """
    P = np.asarray(P, np.float64).reshape(-1, 10)
    finite = np.all(np.isfinite(P), axis=-1)
    safe = np.where(finite[:, None], P, 0.0)
    Ic = _inertia_com(safe)
    lam = np.linalg.eigvalsh(Ic)
    mu = np.linalg.eigvalsh(pseudo_inertia(safe, np))
    m = safe[:, 0]
    mc2 = np.where(m != 0, np.sum(safe[:, 1:4] ** 2, axis=-1) / np.abs(np.where(m != 0, m, 1.0)),
                   0.0)  # fmt: skip
    tol = default_tol(np.float64)
    eps = float(np.finfo(np.float64).eps)
    threshold = tol * np.linalg.norm(Ic, axis=(-2, -1)) + min(tol, SHIFT_ULPS * eps) * mc2
    tri = lam[:, 0] + lam[:, 1] - lam[:, 2]
    consistent = finite & (m > 0) & (lam[:, 0] >= -threshold) & (tri >= -threshold)
    nan = np.where(finite, 1.0, np.nan)
    return {
        "consistent": consistent,
        "principal_moments": lam * nan[:, None],
        "min_eig_inertia_com": lam[:, 0] * nan,
        "triangle_margin": tri * nan,
        "min_eig_pseudo_inertia": mu[:, 0] * nan,
    }


def geodesic_distances(P, P0) -> np.ndarray:
    """``(k,)`` Riemannian distance between the pseudo-inertias of ``P`` and ``P0 (k, 10)``.

    ``d = √(½ Σ log² λ_i)``, ``λ`` the eigenvalues of ``J⁻¹ J0`` (Lee & Park,
    "Geometric robot dynamic identification", 2018, eq. 14); NaN where a
    pseudo-inertia is not positive definite.

    Examples:
      >>> import numpy as np
      >>> unit = np.array([[1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0]])
      >>> geodesic_distances(unit, unit).tolist()
      [0.0]
    """
    P = np.asarray(P, np.float64).reshape(-1, 10)
    P0 = np.asarray(P0, np.float64).reshape(-1, 10)
    out = np.full(P.shape[0], np.nan)
    for k in range(P.shape[0]):
        J, J0 = pseudo_inertia(P[k], np), pseudo_inertia(P0[k], np)
        if np.array_equal(J, J0):
            out[k] = 0.0
            continue
        try:
            L = np.linalg.cholesky(J)
        except np.linalg.LinAlgError:
            continue
        A = np.linalg.solve(L, J0)
        M = np.linalg.solve(L, A.T)
        lam = np.linalg.eigvalsh(0.5 * (M + M.T))
        if np.all(lam > 0):
            out[k] = np.sqrt(0.5 * np.sum(np.log(lam) ** 2))
    return out
