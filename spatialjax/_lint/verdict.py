r"""Verdicts for the inertials of a real model: massless frames, point masses, errors.

[`spatialjax.physical_consistency`][spatialjax.physical_consistency] answers "is this a rigid
body?"; a model file needs a few more notions, defined here on top of its margins
(``min_eig_inertia_com``, ``triangle_margin``, ``min_eig_pseudo_inertia``):

========================= ======= ============================================================
verdict                   valid   condition (checked in this order)
========================= ======= ============================================================
massless frame            yes     ``m == 0`` and ``h == 0`` and ``I == 0`` exactly (sensor and
                                  reference links; a URDF link without ``<inertial>``)
non-positive mass         no      ``m ≤ 0`` (with any non-zero first moment or inertia)
not PSD                   no      ``λ1 < −τ`` (smallest principal moment about the CoM)
triangle inequality       no      ``λ1 + λ2 − λ3 < −τ``
violated
point mass (degenerate)   yes     ``max|λi| ≤ τ``: consistent, but ``I_c`` is singular
pseudo-inertia not PD     yes     ``λ1 + λ2 − λ3 ≤ τ``: consistent, but a rod or lamina whose
(degenerate)                      pseudo-inertia ``J`` is singular (``J ≻ 0`` iff the margin > 0)
consistent                yes     otherwise: ``m > 0`` and ``J ≻ 0`` with room to spare
========================= ======= ============================================================

Degenerate bodies are physically realisable (``J ⪰ 0`` admits point masses,
rods and laminas: Wensing, Kim & Slotine, RA-L 2017) but simulators or
algorithms that need a positive definite inertia (log-det metrics,
``to_log_cholesky``, some integrators) reject them.

**Tolerance.** ``λ`` are the principal moments about the CoM and the
tolerance scales with the body:

$$
τ = \mathrm{tol}\,\bigl(\tfrac12 \textstyle\sum_i |λ_i| + |m|\,ℓ_0^2\bigr)
    + 100\,ε_{64}\,|m|\,|c|^2
$$

* ``½ Σ|λi|`` is the body's own inertia scale (``½ tr I_c`` for a valid body),
  so ``tol`` is relative to the moments printed in the file;
* ``|m| ℓ0²`` (``ℓ0 = 1 mm`` by default, in the file's length unit) is the
  inertia of the body's mass spread over a millimetre: it gives point masses
  a scale, so that round-off such as ``λ = −1e−20 kg m²`` on a 1 kg point mass
  is not an error, while any real inertia is far above it;
* ``100 ε |m| |c|²`` covers the float64 round-off of recovering ``I_c`` from
  the parameters about the link origin (``I_c = I_o + m c× c×``).

The default ``tol = 1e-9`` accepts values printed with nine or more
significant digits as exact and nothing coarser.
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
    """The verdict on one body (see the module docstring).

    Attributes:
      code: key of [`VERDICTS`][spatialjax.io.VERDICTS] (``"consistent"``, ``"not_psd"``, ...).
      text: human-readable verdict.
      valid: physically realisable (massless frames and degenerate bodies included).
      degenerate: valid but with a singular ``I_c`` or pseudo-inertia.
      mass: ``m``.
      com: ``(3,)`` CoM ``c = h / m`` (zeros when ``m == 0``).
      principal_moments: ``(3,)`` eigenvalues of ``I_c`` (ascending).
      min_eig_inertia_com: smallest eigenvalue ``λ1`` of ``I_c`` (kg m²); this and the next
        two are the margins of
        [`spatialjax.physical_consistency`][spatialjax.physical_consistency].
      triangle_margin: ``λ1 + λ2 − λ3`` (kg m²).
      min_eig_pseudo_inertia: smallest eigenvalue of the pseudo-inertia ``J`` (the LMI
        margin).
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
    """``τ`` of the module docstring, element-wise over a batch (NumPy float64)."""
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
    """Verdicts for a batch of bodies (eager; see the module docstring).

    The margins come from [`spatialjax.physical_consistency`][spatialjax.physical_consistency]
    (computed under ``jit`` on a batch padded to 8, 32, 128, ... bodies, so that checking
    many files compiles only a few times).

    Args:
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] with batch shape ``(n,)``
        (float64 recommended: the margins of float32 parameters are only good
        to ~1e-7 relative).
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
