"""Priors for the log-det divergence: [`repair_prior`][spatialjax.identification.repair_prior].

``D(J ‖ J0)`` needs ``J0 ≻ 0`` (Lee, Wensing & Park 2020): ``m > 0`` and positive
principal second moments ``σ_i = ∫ x_i² dm`` about the centre of mass.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._params import mass_com_inertia, params_from_mass_com_inertia
from ..errors import IdentifyError

#: Default floor of a repaired body's principal second moments, relative to its largest.
#: ``σ_min / σ_max = 3 r² / L²`` for a solid rod of radius ``r`` and length ``L``:
#: ``1e-3`` is a rod about 27 times as long as it is thick, thinner than any robot link.
REPAIR_FLOOR = 1e-3


class PriorError(IdentifyError):
    """A prior body that cannot be used or repaired (massless, no extent), naming it.

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
      relative_change: ``‖I_c' − I_c‖_F / ‖I_c‖_F``.
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
            "relative_change": self.relative_change,
        }


def repair_prior(
    params, names=None, *, floor: float = REPAIR_FLOOR
) -> tuple[np.ndarray, tuple[PriorRepair, ...]]:
    """Bodies strictly inside the consistent set, for use as a log-det prior.

    A body with ``m > 0`` and positive principal second moments about its centre
    of mass is returned unchanged. In the others the second moments below
    ``floor · σ_max`` are raised to it, keeping the mass, the centre of mass and
    the principal axes (the clipping of
    [`spatialjax.nearest_consistent`][spatialjax.nearest_consistent], ``reference="com"``).

    Args:
      params: ``(nb, 10)`` float parameters (``[m, hx, hy, hz, Ixx, Ixy, Iyy,
        Ixz, Iyz, Izz]``, inertia about the body frame's origin).
      names: optional ``nb`` body names for messages and the report.
      floor: relative floor in ``(0, 1)`` (default: a rod 27 times as long as thick).

    Returns:
      ``(params', repairs)``: the ``(nb, 10)`` float64 parameters and one
      [`PriorRepair`][spatialjax.identification.PriorRepair] per repaired body.

    Raises:
      PriorError: a body with ``m ≤ 0`` or with no positive second moment (a
        point mass), naming the body; also non-finite parameters.
      ValueError: ``params`` not ``(nb, 10)``, ``names`` of another length,
        ``floor`` outside ``(0, 1)``.

    Examples:
      >>> import numpy as np
      >>> bad = np.array([[1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 2.5]])  # Izz > Ixx + Iyy
      >>> fixed, reps = repair_prior(bad, ["link"])
      >>> reps[0].reason
      'triangle inequality of the principal moments violated (a negative second moment)'
      >>> bool(np.allclose(fixed[0, :4], bad[0, :4]))  # mass and CoM kept
      True
    """
    P = np.asarray(params, np.float64)
    if P.ndim != 2 or P.shape[-1] != 10:
        raise ValueError(f"params: expected shape (nb, 10), got {P.shape}")
    nb = P.shape[0]
    if names is not None and len(names) != nb:
        raise ValueError(f"names: expected {nb} names, got {len(names)}")
    if not (isinstance(floor, (int, float)) and 0 < floor < 1):
        raise ValueError(f"floor: expected a number in (0, 1), got {floor!r}")
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
        s_max = float(sig.max())
        if not s_max > 0:
            raise PriorError(
                b,
                name,
                "has no rotational inertia (a point mass): the prior needs a body with extent; "
                "give it an inertia tensor",
            )
        if float(sig.min()) > 0:
            continue
        if float(lam.min()) < 0:
            reason = "a negative principal moment of inertia"
        elif float(sig.min()) < 0:
            reason = (
                "triangle inequality of the principal moments violated (a negative second moment)"
            )
        else:
            reason = "a zero second moment (a flat or line body: J0 is singular)"
        sig2 = np.maximum(sig, floor * s_max)
        lam2 = sig2.sum() - sig2
        I_c2 = (V * lam2) @ V.T
        out[b] = params_from_mass_com_inertia(m, c, 0.5 * (I_c2 + I_c2.T))
        order = np.argsort(sig)
        repairs.append(
            PriorRepair(
                body=b,
                name=name,
                reason=reason,
                second_moments_before=sig[order],
                second_moments_after=sig2[order],
                principal_moments_before=np.sort(lam),
                principal_moments_after=np.sort(lam2),
                relative_change=float(np.linalg.norm(I_c2 - I_c) / np.linalg.norm(I_c)),
            )
        )
    return out, tuple(repairs)
