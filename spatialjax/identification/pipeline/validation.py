"""Stage 8, **validate**: torque errors on every part, identifiability, per-link plausibility."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._checks import to_device
from ..output.report import (
    Body,
    ErrorFigures,
    Errors,
    FittedBody,
    IdentifiabilitySummary,
    Link,
    PartErrors,
    Plausibility,
    TotalMass,
    Validation,
    ValidationErrors,
    finite_or_none,
    range_text,
)
from .checks import error_rows, holdout_warnings, rest_shares
from .consistent_fit import Fitted, training_prior_pattern
from .least_squares import LeastSquares, TrainingData
from .options import Options
from .prior import Prior
from .regression import Regressors

_SETS = ("fit", "least_squares", "prior")


@dataclasses.dataclass(frozen=True, eq=False)
class Validated:
    """What the validation found.

    Attributes:
      errors: the torque errors on the training and held-out parts.
      validation: one entry per validation log.
      identifiability: what the weighted data determine.
      links: one entry per moving body.
      total_mass: the summed masses.
      warnings: the links whose mass moved more than 2×; the held-out part or a
        validation log mostly at rest, predicted worse than zero on a joint, or
        far worse than by the prior (``checks.holdout_warnings``).
      n_validate: the validation logs.
      joint_share: ``(ne,)`` the data share of each joint-model column (NaN
        where not fitted).
      notes: one per joint-model column that shares a base parameter with
        link parameters (the priors decide the split).
    """

    errors: Errors
    validation: tuple[Validation, ...]
    identifiability: IdentifiabilitySummary
    links: tuple[Link, ...]
    total_mass: TotalMass
    warnings: tuple[str, ...]
    n_validate: int
    joint_share: np.ndarray | None = None
    notes: tuple[str, ...] = ()

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        held = self.errors.fit.holdout is not None
        part = "holdout" if held else "train"

        def overall(name) -> float:
            e = getattr(getattr(self.errors, name), part)
            return float("nan") if e is None or e.overall is None else float(e.overall)

        m = self.total_mass
        fit = getattr(self.errors.fit, part)
        groups = (
            f" (base rows {_num(fit.base)}, joint rows {_num(fit.joint)})"
            if fit is not None and fit.base is not None
            else ""
        )
        rest = ""
        if fit is not None and fit.rest_left_out:
            share = range_text(100 * np.array(list(fit.rest_left_out.values())), ".0f")
            rest = f" (samples at rest left out of each joint's error, as in the fit: {share} %)"
        return (
            f"{'held-out' if held else 'training'} torque error: fit {overall('fit'):.4f}"
            f"{groups}, least squares {overall('least_squares'):.4f}{rest}"
            + (f"; {self.n_validate} validation log(s)" if self.n_validate else "")
            + f"; total mass {m.prior:.3f} → {m.fit:.3f} kg"
            + (f" (data share {m.data_share:.2f})" if groups and m.data_share is not None else "")
        ), tuple("note: " + n for n in self.notes)


def _num(x) -> str:
    return "—" if x is None else f"{x:.4f}"


def _errors(regs: Regressors, sets: dict, sampling, used, joints, masks=None) -> tuple:
    """``(Errors, validations)``: the errors of each parameter set on every part.

    For a floating base, of each sample's equations (the parts added back).
    ``masks``: per part, the samples of each joint that count
    (``checks.error_rows``), or None.
    """
    ne = regs.ne
    groups = None
    if regs.rows:
        r0 = regs.rows[0]
        joints, groups, used = r0.row_names[: r0.n_dof], r0.groups[: r0.n_dof], used[: r0.n_dof]

    def figures(k, pi, phi):
        pred = regs.Y[k] @ pi.reshape(-1) + (regs.F[k] @ np.nan_to_num(phi) if ne else 0.0)
        if regs.rows:
            rows = regs.rows[k]
            return ErrorFigures.of(rows.combine(pred), rows.combine(regs.tau[k]), joints, used,
                                   groups)  # fmt: skip
        rows = None if masks is None else masks[k]
        return ErrorFigures.of(pred, regs.tau[k], joints, used, rows=rows)

    held = len(regs.Y) - (len(sampling) - 1) == 2  # training, held-out, validation logs
    errors = Errors(**{
        name: PartErrors(train=figures(0, *x), holdout=figures(1, *x) if held else None)
        for name, x in sets.items()
    })  # fmt: skip
    first = 2 if held else 1
    validation = tuple(
        Validation(
            samples=int(regs.tau[first + k].shape[0]),
            sampling=sampling[k + 1],
            errors=ValidationErrors(**{n: figures(first + k, *x) for n, x in sets.items()}),
        )
        for k in range(len(sampling) - 1)
    )
    return errors, validation


def _identifiability_arguments(data: TrainingData, weights, prior, gamma, joint_weights) -> dict:
    """``identifiability``'s arguments for the training data but ``Y`` and the names: the
    per-joint ``weights`` ``(nv,)`` made per row (times a floating base's multiplicity),
    ``prior`` the free bodies, ``joint_weights`` the joint prior's weights (or None)."""

    nf, kept = data.F.shape[-1], data.friction_kept
    w = data.sample_weights(weights)
    if data.multiplicity is not None:  # floating base: the equations each row stands for
        w = w * data.multiplicity
    return dict(
        extra=to_device(data.F) if nf else None, weights=to_device(w), prior=prior,
        gamma=gamma,
        extra_prior_weight=to_device(joint_weights[kept]) if nf and joint_weights is not None
        else None,
    )  # fmt: skip


def prepare_identifiability_stage(model, data: TrainingData, prior: Prior, opts: Options) -> None:
    """Start compiling ``_identifiability``'s program for ``data`` in a background thread
    (after the fit's): the shapes, and the joint-model columns with a prior weight
    (``training_prior_pattern``), are known from the training data; ones stand for the
    weights, the default for γ."""
    from ..._inertia import RigidBodyInertia
    from ..fitting.identifiability import prepare_identifiability

    bodies = RigidBodyInertia(to_device(np.asarray(prior.free_prior, model.dtype)))
    gamma = 2.0 / opts.prior_spread**2 if opts.gamma is None else opts.gamma
    ones = np.ones(data.tau.shape[-1])
    pattern = training_prior_pattern(model, data, opts)
    kw = _identifiability_arguments(data, ones, bodies, gamma, pattern)
    prepare_identifiability(to_device(data.Y), **kw)


def _identifiability(model, data: TrainingData, ls, fitted: Fitted, prior: Prior, opts: Options):
    """``(summary, data share (10 n_free + nf,), total mass share, notes)`` of
    ``identifiability``."""

    from ..fitting.identifiability import PARAMETER_NAMES, identifiability

    kept = data.friction_kept
    fr = tuple(n for n, k in zip(opts.joint_model.names(model), kept, strict=True) if k)
    names = tuple((b, p) for b in prior.free_names for p in PARAMETER_NAMES) + fr
    nf = data.F.shape[-1]
    wj = fitted.extra_prior_weight
    kw = _identifiability_arguments(data, ls.weights, fitted.prior, fitted.gamma, wj)
    idf = identifiability(to_device(data.Y), names=names, **kw)
    share = np.asarray(idf.data_share, np.float64).reshape(-1)
    rank = int(np.asarray(idf.rank))
    base = tuple(np.asarray(idf.base_columns)[:rank].tolist())
    confounded = idf.confounded(list(fr)) if fr else {}
    links = set(prior.free_names)
    confounded = {c: tuple(p for p in v if p[0] in links) for c, v in confounded.items()}
    confounded = {c: v for c, v in confounded.items() if v}
    summary = IdentifiabilitySummary(
        rank=rank,
        n_columns=int(share.size),
        condition_number=float(np.asarray(idf.condition_number)),
        base_columns=base,
        base_parameters=tuple(tuple(names[i]) for i in base),
        n_unidentifiable=int(share.size) - rank,
        prior_decided=tuple(tuple(x) for x in idf.prior_decided()),
        confounded=tuple((tuple(c), tuple(tuple(p) for p in v)) for c, v in confounded.items()),
    )
    weight = dict(zip(fr, wj[kept] if nf and wj is not None else np.zeros(len(fr)), strict=True))
    notes = tuple(
        f"{j}: its {kind} shares a base parameter with "
        + _names_text(v)
        + (
            f": the data fix their sum, the priors decide the split (a wide prior on the "
            f"{kind}, the log-det prior on the links)"
            if weight[(j, kind)] > 0
            else f": the data fix their sum, the links' prior decides the split (the {kind} "
            "has none)"
        )
        for (j, kind), v in confounded.items()
    )
    return summary, share, finite_or_none(np.asarray(idf.total_mass_share)), notes


def _names_text(pairs, most: int = 4) -> str:
    """``link Izz, link m, ... (and k more)``."""
    shown = ", ".join(f"{a} {b}" for a, b in pairs[:most])
    return shown + (f" and {len(pairs) - most} more" if len(pairs) > most else "")


def _links(opts: Options, prior: Prior, ls: LeastSquares, fitted: Fitted, share) -> tuple:
    """``(links, warnings)``: each moving body's fit, least squares and prior, and its flags."""
    from ..output.model_writer import body_metrics

    nb = prior.model.shape[0]
    pi_fit, pi_ls, pi_prior = fitted.params, ls.params, prior.prior
    s = body_metrics(np.concatenate([pi_fit, pi_ls, pi_prior]), np.tile(pi_prior, (3, 1)))
    links, warnings, fi = [], [], 0
    for b in range(nb):
        if prior.free_mask[b]:
            ds, fi = tuple(share[10 * fi : 10 * fi + 10].tolist()), fi + 1
        else:
            ds = (0.0,) * 10
        pl = Plausibility.of(pi_fit[b], pi_prior[b], ds)
        links.append(Link(
            link=opts.body_names[b], joint=opts.body_joints[b], free=bool(prior.free_mask[b]),
            fit=FittedBody.of(pi_fit[b], s, b, geodesic_to_prior=finite_or_none(s["geodesic"][b])),
            least_squares=FittedBody.of(
                pi_ls[b], s, nb + b, geodesic_to_prior=finite_or_none(s["geodesic"][nb + b])),
            prior=Body.of(pi_prior[b], s, 2 * nb + b), data_share=ds, plausibility=pl,
        ))  # fmt: skip
        if pl.flagged:
            warnings.append(
                f"{opts.body_names[b]}: mass {pi_prior[b, 0]:.3g} → {pi_fit[b, 0]:.3g} kg "
                f"({pl.mass_ratio:.2f}× the prior; data share of the mass "
                f"{pl.data_share_mass:.2f}): check the log and the model"
            )
    return tuple(links), tuple(warnings)


def _part_warnings(regs: Regressors, data: TrainingData, ls: LeastSquares, errors, validation,
                   opts: Options) -> tuple[str, ...]:  # fmt: skip
    """``checks.holdout_warnings`` on the held-out part and the validation logs."""
    used = np.asarray(data.used[6 : regs.rows[0].n_dof] if regs.rows else data.used)
    live = ls.weights > 0
    effective = float(np.sum(ls.samples_used[live] / ls.correlation_time[live]))
    counts = (
        f"{regs.n_train} samples after filtering and decimation, about {effective:.0f} "
        f"effective over the fitted channels, for {ls.n_parameters} parameters"
    )
    return holdout_warnings(errors, validation, rest_shares(regs, used), joints=opts.joints,
                            used=used, holdout=opts.holdout, counts=counts)  # fmt: skip


def validate_stage(
    model,
    regs: Regressors,
    data: TrainingData,
    ls: LeastSquares,
    fitted: Fitted,
    prior: Prior,
    sampling: tuple,
    opts: Options,
) -> Validated:
    """Errors of the fit, least squares and the prior on every part; identifiability; links.

    Args:
      model: the model.
      regs: the regressors of every part.
      data: the training data the fit saw.
      ls: least squares.
      fitted: the fit.
      prior: the prior.
      sampling: the ``SamplingReport`` of every log (main log first).
      opts: the options.
    """
    sets = {
        "fit": (fitted.params, fitted.friction),
        "least_squares": (ls.params, ls.friction),
        "prior": (prior.prior, opts.joint_model.file_values(model)),
    }
    errors, validation = _errors(regs, sets, sampling, data.used, opts.joints,
                                 error_rows(regs, data))  # fmt: skip
    summary, share, total_share, notes = _identifiability(model, data, ls, fitted, prior, opts)
    links, warnings = _links(opts, prior, ls, fitted, share)
    warnings += _part_warnings(regs, data, ls, errors, validation, opts)
    n_link = 10 * len(prior.free_names)
    joint_share = data.full_friction(share[n_link:])
    total = TotalMass(
        fit=float(fitted.params[:, 0].sum()),
        least_squares=float(ls.params[:, 0].sum()),
        prior=float(prior.prior[:, 0].sum()),
        # the share of the sum of the identified bodies' masses (the held ones are known)
        data_share=total_share,
    )
    return Validated(errors, validation, summary, links, total, warnings, len(sampling) - 1,
                     joint_share, notes)  # fmt: skip
