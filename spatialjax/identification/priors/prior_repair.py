"""Priors for the log-det divergence: [`repair_prior`][spatialjax.identification.repair_prior].

``D(J ‖ J0)`` needs ``J0 ≻ 0`` (Lee, Wensing & Park 2020): ``m > 0`` and positive
principal second moments ``σ_i = ∫ x_i² dm`` about the centre of mass.
A body also has a least rotational inertia for its mass: no material is denser than
osmium (22 590 kg/m³), and the solid ball of that density has the least ``tr S_c``
(``3 m r² / 5``, ``r = (3m / 4πρ)^{1/3}``); vendor files ship point masses, rods and
near-zero inertias below it, and [`repair_prior`][spatialjax.identification.repair_prior]
raises them to it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..._params import mass_com_inertia, params_from_mass_com_inertia
from ..errors import IdentifyError

#: Default floor of a repaired body's principal second moments, relative to its largest.
#: ``σ_min / σ_max = 3 r² / L²`` for a solid rod of radius ``r`` and length ``L``:
#: ``1e-3`` is a rod about 27 times as long as it is thick, thinner than any robot link.
REPAIR_FLOOR = 1e-3
#: Default highest density of a repaired body, kg/m³: osmium's, the densest element. A body
#: whose ``tr S_c`` is below that of a solid ball of this density and its mass is impossible.
MAX_DENSITY = 22590.0


def least_trace(mass: float, density: float = MAX_DENSITY) -> float:
    r"""``tr S_c`` of a solid ball of ``mass`` and ``density``: ``3 m r² / 5``, kg m².

    ``r = (3 m / (4 π ρ))^{1/3}``; no body of that mass and a density at most
    ``ρ`` has a smaller ``tr S_c = ∫|x − c|² dm`` (half the trace of its
    inertia about the centre of mass): the ball puts every bit of mass as near
    the centre as the density allows.

    Args:
      mass: kg, ``≥ 0``.
      density: kg/m³, ``> 0`` (default osmium's, the densest element).

    Returns:
      ``3 m r² / 5`` in kg m².

    Raises:
      ValueError: a negative or non-finite ``mass``, a ``density`` not ``> 0``.

    Examples:
      >>> round(least_trace(1.0, 1000.0), 6)  # a litre of water: r = 6.2 cm
      0.002309
    """
    if not (math.isfinite(mass) and mass >= 0):
        raise IdentifyError("mass", f"expected a finite mass >= 0 in kg, got {mass!r}")
    if not (math.isfinite(density) and density > 0):
        raise IdentifyError("density", f"expected a density > 0 in kg/m³, got {density!r}")
    r = (3.0 * mass / (4.0 * math.pi * density)) ** (1.0 / 3.0)
    return 0.6 * mass * r * r


class PriorError(IdentifyError):
    """A prior body that cannot be used or repaired (massless, non-finite), naming it.

    An [IdentifyError][spatialjax.identification.IdentifyError] about the argument ``"prior"``.

    Attributes:
      body: the body's index.
      name: its name (the model's ``body_names``), or None.
    """

    def __init__(self, body: int, name: str | None, message: str):
        self.body = body
        self.name = name
        who = f"link {name!r}" if name is not None else f"body {body}"
        super().__init__("prior", f"{who} {message}")


@dataclasses.dataclass(frozen=True)
class PriorRepair:
    """One repaired prior body (from [`repair_prior`][spatialjax.identification.repair_prior]).

    Attributes:
      body: index of the body.
      name: its name, or None.
      reason: why it needed repair (plain words).
      second_moments_before: ``(3,)`` principal second moments ``σ`` about the
        CoM (kg m², ascending) as given.
      second_moments_after: ``(3,)`` after the repair (same axes).
      principal_moments_before: ``(3,)`` principal moments of inertia about the
        CoM (kg m², ascending) as given.
      principal_moments_after: ``(3,)`` after the repair.
      relative_change: ``‖I_c' − I_c‖_F / ‖I_c‖_F`` (``inf`` for a point
        mass, ``I_c = 0``; None in ``to_dict``).
    """

    body: int
    name: str | None
    reason: str
    second_moments_before: np.ndarray
    second_moments_after: np.ndarray
    principal_moments_before: np.ndarray
    principal_moments_after: np.ndarray
    relative_change: float

    def to_dict(self) -> dict:
        """JSON-able fields (lists of floats)."""
        return {
            "body": self.body,
            "link": self.name,
            "reason": self.reason,
            "second_moments_before": self.second_moments_before.tolist(),
            "second_moments_after": self.second_moments_after.tolist(),
            "principal_moments_before": self.principal_moments_before.tolist(),
            "principal_moments_after": self.principal_moments_after.tolist(),
            "relative_change": (
                self.relative_change if math.isfinite(self.relative_change) else None
            ),
        }


def repair_prior(
    params, names=None, *, floor: float = REPAIR_FLOOR, density: float = MAX_DENSITY
) -> tuple[np.ndarray, tuple[PriorRepair, ...]]:
    """Bodies strictly inside the consistent set, for use as a log-det prior.

    A body with ``m > 0``, positive principal second moments about its centre of mass
    and ``tr S_c`` at least that of a solid ball of its mass and ``density`` is returned
    unchanged, bit for bit. The others are repaired in two steps, keeping the mass, the
    centre of mass and the principal axes: (1) a trace below the ball's (a point mass, a
    rod, a near-zero inertia) is raised to it by adding the same amount to every ``σ_i``
    (a point mass of 1 kg becomes a ball of 2.2 cm radius, ``I = 1.9e-4 kg m²``); (2) the
    second moments below ``floor · σ_max`` are raised to it (the clipping of
    [`spatialjax.nearest_consistent`][spatialjax.nearest_consistent], ``reference="com"``).

    Args:
      params: ``(nb, 10)`` float parameters (``[m, hx, hy, hz, Ixx, Ixy, Iyy,
        Ixz, Iyz, Izz]``, inertia about the body frame's origin).
      names: optional ``nb`` body names for messages and the report.
      floor: relative floor in ``(0, 1)`` (default: a rod 27 times as long as thick).
      density: the highest density of a body, kg/m³ (default: osmium's, so
        that only impossible bodies are raised; robot links are far lighter).

    Returns:
      ``(params', repairs)``: the ``(nb, 10)`` float64 parameters and one
      [`PriorRepair`][spatialjax.identification.PriorRepair] per repaired body (empty when none
      needed it), saying why by name.

    Raises:
      PriorError: a body with ``m ≤ 0`` (a massless link has no mass
        distribution to be near: give it an inertial, or lock its joint) or
        non-finite parameters, naming the body.
      ValueError: ``params`` not ``(nb, 10)``, ``names`` of another length,
        ``floor`` outside ``(0, 1)``, ``density`` not ``> 0``.

    Examples:
      >>> import numpy as np
      >>> bad = np.array([[1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 2.5]])  # Izz > Ixx + Iyy
      >>> fixed, reps = repair_prior(bad, ["link"])
      >>> reps[0].reason
      'triangle inequality of the principal moments violated (a negative second moment)'
      >>> bool(np.allclose(fixed[0, :4], bad[0, :4]))  # mass and CoM kept
      True
      >>> point = np.array([[2.0, 0.2, 0, 0, 0, 0, 0.02, 0, 0, 0.02]])  # 2 kg at x = 0.1 m
      >>> _, reps = repair_prior(point, ["flange"])
      >>> reps[0].name, reps[0].reason
      ('flange', 'no rotational inertia (a point mass)')
    """
    P = np.asarray(params, np.float64)
    if P.ndim != 2 or P.shape[-1] != 10:
        raise IdentifyError("params", f"expected shape (nb, 10), got {P.shape}")
    nb = P.shape[0]
    if names is not None and len(names) != nb:
        raise IdentifyError("names", f"expected {nb} names, got {len(names)}")
    if not (isinstance(floor, (int, float)) and 0 < floor < 1):
        raise IdentifyError("floor", f"expected a number in (0, 1), got {floor!r}")
    if not (isinstance(density, (int, float)) and math.isfinite(density) and density > 0):
        raise IdentifyError("density", f"expected a density > 0 in kg/m³, got {density!r}")
    out = P.copy()
    repairs = []
    for b in range(nb):
        name = None if names is None else str(names[b])
        if not np.all(np.isfinite(P[b])):
            raise PriorError(b, name, f"has non-finite parameters {P[b].tolist()}")
        m = float(P[b, 0])
        if not m > 0:
            raise PriorError(
                b,
                name,
                f"has mass {m:g} kg: a massless (or negative-mass) moving body has no mass "
                "distribution for the prior to stay near; give it an <inertial> (e.g. from CAD) "
                "or lock its joint",
            )
        _, c, I_c = mass_com_inertia(P[b])
        lam, V = np.linalg.eigh(I_c)  # principal moments, ascending
        sig = 0.5 * lam.sum() - lam  # principal second moments along the same axes
        t_min = least_trace(m, density)
        if float(sig.min()) > 0 and float(sig.sum()) >= t_min:
            continue
        sig2 = sig + max(t_min - float(sig.sum()), 0.0) / 3.0
        sig2 = np.maximum(sig2, floor * float(sig2.max()))
        lam2 = sig2.sum() - sig2
        I_c2 = (V * lam2) @ V.T
        out[b] = params_from_mass_com_inertia(m, c, 0.5 * (I_c2 + I_c2.T))
        order = np.argsort(sig)
        size = float(np.linalg.norm(I_c))
        repairs.append(
            PriorRepair(
                body=b,
                name=name,
                reason=_reason(lam, sig, t_min, density, m * float(c @ c)),
                second_moments_before=sig[order],
                second_moments_after=sig2[order],
                principal_moments_before=np.sort(lam),
                principal_moments_after=np.sort(lam2),
                relative_change=float(np.linalg.norm(I_c2 - I_c) / size) if size else math.inf,
            )
        )
    return out, tuple(repairs)


def _reason(lam: np.ndarray, sig: np.ndarray, t_min: float, density: float, shift: float) -> str:
    """Why a body needs repair, in plain words (the worst defect first; moments within the
    float64 round-off of the parallel-axis ``shift = m |c|²`` and ``t_min`` count as zero)."""
    tol = 100 * float(np.finfo(np.float64).eps) * (t_min + shift)
    if float(np.abs(lam).max()) <= tol:
        return "no rotational inertia (a point mass)"
    if float(lam.min()) < -tol:
        return "a negative principal moment of inertia"
    if float(sig.min()) < -tol:
        return "triangle inequality of the principal moments violated (a negative second moment)"
    if float(sig.sum()) < t_min:
        shape = " (a rod)" if int(np.sum(sig > tol)) == 1 else ""
        return (
            f"a rotational inertia too small for its mass{shape}: tr S_c {float(sig.sum()):.3g} "
            f"kg m², below the {t_min:.3g} of a solid ball of its mass at {density:g} kg/m³ "
            "(denser than any material)"
        )
    return "a zero second moment (a flat or line body: J0 is singular)"
