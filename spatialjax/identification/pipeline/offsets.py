r"""A floating base's joint offsets: fitted only where the data tell them from the links.

A joint's offset (a constant torque: a sensor's bias) is, on a floating base,
nearly collinear with the legs' own gravity terms: a leg in stance barely
changes its configuration, so the torque its links' weight puts on its joints
is nearly constant too. Where the log does not tell the two apart, a free
offset takes up the legs' gravity terms, which then leave the links, and the
fitted URDF (which carries no offset) predicts the joints' torques worse than
least squares without offsets (issue 41's quadruped: 4.2 % against 1.1 % on
the joint rows of a separate trajectory).

So the offsets enter the model by the **Bayesian information criterion**
(Schwarz 1978): the weighted least squares of the training rows, with the
data term's weights (``1 / (σ̂² τ)`` times the rows' multiplicity: a χ²), is
solved with and without the offset columns; the ``k`` offsets are kept when
they lower the χ² by more than ``k ln n``, ``n`` the effective number of
independent equations (``Σ multiplicity / τ`` over the rows in the data
term). Otherwise they are held at zero, not fitted (NaN in the report's
coefficients, like a column left out with its channel), and a note says why.
A log whose joints carry offsets the data see (the walker of the tests: 0.1
N·m against 5 mN·m of noise) keeps them.

References:
  G. Schwarz, "Estimating the dimension of a model", Annals of Statistics
  6(2), 1978.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._checks import to_device
from .least_squares import LeastSquares, TrainingData, least_squares_stage
from .options import Options
from .prior import Prior


@dataclasses.dataclass(frozen=True, eq=False)
class OffsetChoice:
    """The least-squares stage with the offsets' choice (``least_squares_with_offsets``).

    Attributes:
      ls: the least-squares stage on ``data``.
      data: the training data the fit uses (without the offset columns when they
        were left out).
      delta_chi2: the χ² the offsets take off (None: no choice made).
      penalty: ``k ln n``, BIC's price of the ``k`` offsets (None: no choice made).
      notes: the note on offsets left out (empty when kept).
    """

    ls: LeastSquares
    data: TrainingData
    delta_chi2: float | None = None
    penalty: float | None = None
    notes: tuple[str, ...] = ()

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line (least squares') and its detail lines (the offsets' choice)."""
        text, lines = self.ls.describe()
        if self.delta_chi2 is None or self.penalty is None:
            return text, lines
        verdict = "kept" if not self.notes else "held at 0"
        return text, (
            *lines,
            f"joint offsets {verdict}: they lower the chi2 by {self.delta_chi2:.4g}, BIC's "
            f"price k ln n = {self.penalty:.4g}",
        )


def _offset_columns(model, opts: Options, data: TrainingData) -> np.ndarray:
    """``(nf,)`` booleans over the kept joint-model columns: the offsets."""
    names = opts.joint_model.names(model)
    is_offset = np.array([kind == "offset" for _, kind in names], bool)
    return is_offset[data.friction_kept]


def _chi2(data: TrainingData, w: np.ndarray, columns: np.ndarray) -> float:
    """The weighted least-squares χ² of the rows with the joint-model ``columns`` kept."""

    from ..fitting.robot_fit import least_squares_torques

    F = data.F[..., columns]
    pi, phi = least_squares_torques(
        to_device(data.Y), to_device(data.tau), extra=to_device(F) if F.shape[-1] else None,
        weights=to_device(w),
    )  # fmt: skip
    res = data.tau - data.Y @ np.asarray(pi, np.float64).reshape(-1)
    if F.shape[-1]:
        res = res - F @ np.asarray(phi, np.float64).reshape(-1)
    return float(np.sum(w * res * res))


def least_squares_with_offsets(model, data: TrainingData, prior: Prior, opts: Options,
                               **kwargs) -> OffsetChoice:  # fmt: skip
    """``least_squares_stage``, then, for a floating base with offsets modelled, BIC's choice
    of the offsets (module docstring); ``kwargs`` go to ``least_squares_stage``."""
    ls = least_squares_stage(data, prior, **kwargs)
    if not opts.floating_base or "offset" not in opts.joint_model.kinds:
        return OffsetChoice(ls, data)
    offsets = _offset_columns(model, opts, data)
    k = int(offsets.sum())
    if k == 0:
        return OffsetChoice(ls, data)
    mult = 1.0 if data.multiplicity is None else data.multiplicity
    w = np.broadcast_to(data.sample_weights(ls.weights) * mult, data.tau.shape)
    per_row = np.where(data.used, 1.0 / ls.correlation_time, 0.0)
    n = float(np.sum(data.sample_weights(per_row) * mult))
    if not n > 1.0:
        return OffsetChoice(ls, data)
    delta = _chi2(data, w, ~offsets) - _chi2(data, w, np.ones_like(offsets))
    penalty = k * float(np.log(n))
    if delta > penalty:
        return OffsetChoice(ls, data, delta, penalty)
    kept = data.friction_kept.copy()
    kept[np.flatnonzero(kept)[offsets]] = False
    reduced = dataclasses.replace(data, F=data.F[..., ~offsets], friction_kept=kept)
    note = (
        f"joint offsets held at 0, not fitted: on this log they lower the weighted "
        f"least-squares chi2 by {delta:.3g}, less than the {penalty:.3g} (k ln n, k = {k} "
        f"offsets, n = {n:.0f} effective equations) the Bayesian information criterion asks: "
        "a constant joint torque is not told apart from the legs' gravity terms"
    )
    ls = least_squares_stage(reduced, prior, **kwargs)
    return OffsetChoice(ls, reduced, delta, penalty, (note,))
