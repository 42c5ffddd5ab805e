"""Verdicts for the inertials of a real model: massless frames, point masses, errors.

Verdicts, their order and the tolerance ``τ`` (relative to the body's own moments,
with a 1 mm length scale for point masses): docs page ``model-files.md#verdicts``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .._errors import ArgumentError
from .._util import bucket

DEFAULT_TOL = 1e-9
DEFAULT_LENGTH_SCALE = 1e-3
_ROUNDOFF = 100 * float(np.finfo(np.float64).eps)

#: code -> (text, valid, degenerate)
VERDICTS = {
    "consistent": ("consistent", True, False),
    "massless": ("massless frame", True, False),
    "point_mass": ("point mass (degenerate)", True, True),
    "pseudo_inertia_not_pd": ("pseudo-inertia not PD (degenerate)", True, True),
    "non_positive_mass": ("non-positive mass", False, False),
    "not_psd": ("not PSD", False, False),
    "triangle_violated": ("triangle inequality violated", False, False),
}


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The verdict on one body (docs page ``model-files.md#verdicts``).

    Attributes:
      code: key of [`VERDICTS`][spatialjax.io.VERDICTS] (``"consistent"``, ``"not_psd"``, ...).
      text: human-readable verdict.
      valid: physically realisable (massless frames and degenerate bodies included).
      degenerate: valid but with a singular ``I_c`` or pseudo-inertia.
      mass: ``m``.
      com: ``(3,)`` CoM ``c = h / m`` (zeros when ``m == 0``).
      principal_moments: ``(3,)`` eigenvalues of ``I_c`` (ascending).
      min_eig_inertia_com: smallest eigenvalue ``λ1`` of ``I_c`` (kg m²).
      triangle_margin: ``λ1 + λ2 − λ3`` (kg m²).
      min_eig_pseudo_inertia: smallest eigenvalue of the pseudo-inertia ``J``.
      tolerance: ``τ`` used for this body.
    """

    code: str
    text: str
    valid: bool
    degenerate: bool
    mass: float
    com: np.ndarray
    principal_moments: np.ndarray
    min_eig_inertia_com: float
    triangle_margin: float
    min_eig_pseudo_inertia: float
    tolerance: float

    def as_dict(self) -> dict:
        return {
            "verdict": self.code,
            "text": self.text,
            "valid": self.valid,
            "degenerate": self.degenerate,
            "mass": self.mass,
            "com": [float(v) for v in self.com],
            "principal_moments": [float(v) for v in self.principal_moments],
            "margins": {
                "min_eig_inertia_com": self.min_eig_inertia_com,
                "triangle_margin": self.triangle_margin,
                "min_eig_pseudo_inertia": self.min_eig_pseudo_inertia,
                "tolerance": self.tolerance,
            },
        }


def body_tolerance(
    mass, principal_moments, com, tol=DEFAULT_TOL, length_scale=DEFAULT_LENGTH_SCALE
):
    """``τ`` of docs page ``model-files.md#verdicts``, element-wise (NumPy float64)."""
    mass = np.abs(np.asarray(mass, dtype=np.float64))
    lam = np.asarray(principal_moments, dtype=np.float64)
    c2 = np.sum(np.asarray(com, dtype=np.float64) ** 2, axis=-1)
    return (
        tol * (0.5 * np.sum(np.abs(lam), axis=-1) + mass * length_scale**2) + _ROUNDOFF * mass * c2
    )


@functools.cache
def _consistency_program():
    import jax

    from .._consistency import physical_consistency
    from .._inertia import RigidBodyInertia

    def f(params):
        body = RigidBodyInertia(params)
        return physical_consistency(body, tol=0.0), body.com

    return jax.jit(f)


def classify(inertia, *, tol: float = DEFAULT_TOL, length_scale: float = DEFAULT_LENGTH_SCALE):
    """Verdicts for a batch of bodies (eager; docs page ``model-files.md#verdicts``).

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] with batch shape ``(n,)``
        (float64 recommended: float32 margins are good to ~1e-7 relative).
      tol: relative tolerance ``≥ 0``.
      length_scale: ``ℓ0``, the length below which a body counts as a point
        (file length unit; ``1e-3`` is 1 mm in SI files).

    Returns:
      A list of [`Verdict`][spatialjax.io.Verdict], one per body.
    """
    import jax

    for name, value in (("tol", tol), ("length_scale", length_scale)):
        if not value >= 0:
            raise ArgumentError(name, f"expected a number >= 0, got {value}")
    params = np.asarray(inertia.params).reshape(-1, 10)
    n = params.shape[0]
    padded = np.zeros((bucket(n), 10), dtype=params.dtype)
    padded[:n] = params
    rep, com = jax.tree_util.tree_map(
        lambda x: np.asarray(x, dtype=np.float64)[:n], _consistency_program()(padded)
    )
    params = params.astype(np.float64)
    lam = rep.principal_moments
    mass = params[:, 0]
    tau = body_tolerance(mass, lam, com, tol, length_scale)
    min_eig, tri, min_J = rep.min_eig_inertia_com, rep.triangle_margin, rep.min_eig_pseudo_inertia
    out = []
    for i in range(n):
        if not np.any(params[i]):
            code = "massless"
        elif not mass[i] > 0:
            code = "non_positive_mass"
        elif min_eig[i] < -tau[i]:
            code = "not_psd"
        elif tri[i] < -tau[i]:
            code = "triangle_violated"
        elif np.max(np.abs(lam[i])) <= tau[i]:
            code = "point_mass"
        elif tri[i] <= tau[i]:
            code = "pseudo_inertia_not_pd"
        else:
            code = "consistent"
        text, valid, degenerate = VERDICTS[code]
        out.append(
            Verdict(
                code=code,
                text=text,
                valid=valid,
                degenerate=degenerate,
                mass=float(mass[i]),
                com=com[i],
                principal_moments=lam[i],
                min_eig_inertia_com=float(min_eig[i]),
                triangle_margin=float(tri[i]),
                min_eig_pseudo_inertia=float(min_J[i]),
                tolerance=float(tau[i]),
            )
        )
    return out
