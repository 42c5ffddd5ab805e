"""Stage 1, **prior**: the model's bodies as the log-det prior, repaired where needed."""

from __future__ import annotations

import dataclasses
from math import isfinite

import numpy as np

from ..output.report import vector_text
from ..priors.prior_repair import PriorError, PriorRepair, repair_prior
from .options import Options


@dataclasses.dataclass(frozen=True, eq=False)
class Prior:
    """The prior bodies.

    Attributes:
      model: ``(nb, 10)`` the model's bodies (float64).
      prior: ``(nb, 10)`` the same with the free bodies repaired.
      free_mask: ``(nb,)`` the bodies identified.
      free_names: their names, model order.
      repairs: one ``PriorRepair`` per repaired body.
    """

    model: np.ndarray
    prior: np.ndarray
    free_mask: np.ndarray
    free_names: tuple[str, ...]
    repairs: tuple[PriorRepair, ...]

    @property
    def free_prior(self) -> np.ndarray:
        """``(n_free, 10)`` the prior of the free bodies (the fit's ``J0``)."""
        return self.prior[self.free_mask]

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        nb, n_free = self.model.shape[0], len(self.free_names)
        text = (
            f"{n_free} of {nb} bodies identified"
            + (f" ({', '.join(self.free_names)}; the others held)" if n_free < nb else "")
            + (f"; {len(self.repairs)} repaired" if self.repairs else "; all strictly consistent")
        )
        lines = tuple(
            f"repaired {r.name}: {r.reason}; principal moments "
            f"{vector_text(r.principal_moments_before)} → "
            f"{vector_text(r.principal_moments_after)} kg m²"
            + (f" (relative change {r.relative_change:.2g})" if isfinite(r.relative_change) else "")
            + "; mass and CoM kept"
            for r in self.repairs
        )
        return text, lines


def prior_stage(model, opts: Options) -> Prior:
    """The model's bodies, the free ones repaired (or refused, ``repair_prior_bodies=False``).

    ``repair_prior`` repairs a body that is not strictly consistent or whose
    rotational inertia is below any body's of its mass (a point mass, a rod, a
    near-zero inertia), naming it.

    Raises:
      IdentifyError: ``"prior"``, naming a massless body or, with
        ``repair_prior_bodies=False``, one that needs repair (not strictly consistent, or
        less rotational inertia than any body of its mass: a point mass, a rod).
    """
    nb = model.nbodies
    pi_model = np.asarray(model.inertia.params, np.float64).reshape(nb, 10)
    mask = opts.free_mask
    free_names = tuple(b for b, f in zip(opts.body_names, mask, strict=True) if f)
    try:
        pi_rep, repairs = repair_prior(pi_model[mask], list(free_names), floor=opts.repair_floor)
        if repairs and not opts.repair_prior_bodies:
            r = repairs[0]
            raise PriorError(
                r.body,
                r.name,
                f"cannot be the prior as given ({r.reason}); the log-det prior needs J0 ≻ 0 "
                "and a rotational inertia that a body of its mass can have (let it be repaired, "
                "or fix the model file: spatialjax check --fix)",
            )
    except PriorError as e:
        raise e.about() from None
    pi_prior = pi_model.copy()
    pi_prior[mask] = pi_rep
    return Prior(pi_model, pi_prior, mask, free_names, tuple(repairs))
