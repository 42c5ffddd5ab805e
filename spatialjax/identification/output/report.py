"""What ``identify_robot`` returns: ``RobotIdentification``, the typed ``IdentificationReport``.

``to_dict()`` gives the JSON form (field names as keys), ``to_json()`` the text with NaN and
infinities as ``null``. Each section's docstring starts with its path in the report
(``schema()``); its keys are documented there, docs page ``identification-report.md``.
``summary_table`` and the ``*_text`` helpers format what the command line prints.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import IdentifyError

#: A link whose fitted mass differs from the prior's by more than this factor is flagged.
MASS_FLAG_RATIO = 2.0


# ------------------------------------------------------------------------------ formatting
def finite_or_none(x) -> float | None:
    """``float(x)``, or None when it is NaN or infinite."""
    x = float(x)
    return x if math.isfinite(x) else None


def jsonable(x):
    """NumPy / JAX values (and report sections) to plain JSON (NaN and infinities to ``None``)."""
    if hasattr(x, "to_dict") and not isinstance(x, type):
        return jsonable(x.to_dict())
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return finite_or_none(x)
    if hasattr(x, "shape"):
        return jsonable(np.asarray(x).tolist())
    return x


def number_text(x, fmt: str = ".4g") -> str:
    """``format(x, fmt)``, or ``"—"`` for None (a NaN written to JSON)."""
    return "—" if x is None else format(x, fmt)


def vector_text(v) -> str:
    """``[a, b, c]`` with four significant digits."""
    return "[" + ", ".join(f"{x:.4g}" for x in v) + "]"


def range_text(x, fmt: str = ".3g") -> str:
    """``lo–hi`` of the values of ``x``, or one number when both print the same."""
    x = np.asarray(x)
    lo, hi = float(x.min()), float(x.max())
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{lo:{fmt}}–{hi:{fmt}}"


# ------------------------------------------------------------------------------ sections
def _plain(x):
    """A section's field as its dict form (sections and dataclasses recursively)."""
    if hasattr(x, "to_dict"):
        return x.to_dict()
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


class Section:
    """Base of the report's sections: ``to_dict()`` maps each field to its dict form."""

    def to_dict(self) -> dict:
        """The section as plain Python (keys: the field names; NaN kept as NaN)."""
        assert dataclasses.is_dataclass(self)
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclasses.dataclass(frozen=True)
class Samples(Section):
    """``samples``: sample counts."""

    raw: int
    raw_holdout: int
    after_decimation: int
    train: int
    holdout: int


@dataclasses.dataclass(frozen=True)
class ErrorFigures(Section):
    """``errors.<set>.<part>``: relative torque errors ``‖τ̂ − τ‖ / ‖τ‖`` (``rest_left_out``:
    the share of each joint's samples left out because it rests, as in the fit)."""

    overall: float | None
    per_joint: Mapping[str, float | None]
    base: float | None = None
    joint: float | None = None
    rest_left_out: Mapping[str, float] | None = None

    @classmethod
    def of(
        cls, tau_hat: np.ndarray, tau: np.ndarray, joints, used, groups=None, rows=None
    ) -> ErrorFigures | None:
        """The errors of ``tau_hat (N, n)`` against ``tau``; None without samples.

        ``groups``: ``n`` labels ``"base"``/``"joint"`` (a floating base's equations), or None.
        ``rows``: ``(N, n)`` booleans, the samples of each channel that count, or None (all).
        """
        if tau.shape[0] == 0:
            return None
        e = tau_hat - tau
        extra: dict = {}
        if rows is not None:
            e, tau = np.where(rows, e, 0.0), np.where(rows, tau, 0.0)
            left = 1.0 - np.asarray(rows, np.float64).mean(axis=0)
            extra["rest_left_out"] = {j: float(x) for j, x in zip(joints, left, strict=True)}
        if groups is not None:
            for name in ("base", "joint"):
                m = np.asarray(used, bool) & (np.asarray(groups) == name)
                extra[name] = _relative(e[:, m], tau[:, m])
        return cls(
            overall=_relative(e[:, used], tau[:, used]),
            per_joint={j: _relative(e[:, k], tau[:, k]) for k, j in enumerate(joints)},
            **extra,
        )


def _relative(err: np.ndarray, ref: np.ndarray) -> float | None:
    d = float(np.linalg.norm(ref))
    return float(np.linalg.norm(err)) / d if d > 0 else None


@dataclasses.dataclass(frozen=True)
class PartErrors(Section):
    """``errors.<set>``: one parameter set's errors on the training and held-out part."""

    train: ErrorFigures | None
    holdout: ErrorFigures | None


@dataclasses.dataclass(frozen=True)
class Errors(Section):
    """``errors``: errors of the fit, of least squares and of the prior."""

    fit: PartErrors
    least_squares: PartErrors
    prior: PartErrors


@dataclasses.dataclass(frozen=True)
class ValidationErrors(Section):
    """``validation[].errors``: errors on one validation log."""

    fit: ErrorFigures | None
    least_squares: ErrorFigures | None
    prior: ErrorFigures | None


@dataclasses.dataclass(frozen=True)
class Validation(Section):
    """``validation[]``: one ``validate`` log, evaluated (not fitted)."""

    samples: int
    sampling: Any
    errors: ValidationErrors


@dataclasses.dataclass(frozen=True)
class Margins(Section):
    """``links[].fit.margins``: consistency margins of a body."""

    min_eig_inertia_com: float
    triangle_margin: float
    min_eig_pseudo_inertia: float


@dataclasses.dataclass(frozen=True)
class Body(Section):
    """``links[].prior``: a body's parameters and consistency.

    ``params``: ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the body frame's origin,
    in its axes; mass kg, CoM m, moments kg m².
    """

    params: tuple[float, ...]
    mass: float
    com: tuple[float, ...] | None
    principal_moments: tuple[float, ...]
    consistent: bool
    margins: Margins

    @classmethod
    def of(cls, p: np.ndarray, metrics: Mapping, k: int, **extra) -> Any:
        """Body ``p`` with the entry ``k`` of ``body_metrics``' ``metrics``."""
        m = float(p[0])
        return cls(
            params=tuple(p.tolist()),
            mass=m,
            com=tuple((np.asarray(p[1:4]) / m).tolist()) if m != 0 else None,
            principal_moments=tuple(metrics["principal_moments"][k].tolist()),
            consistent=bool(metrics["consistent"][k]),
            margins=Margins(
                min_eig_inertia_com=float(metrics["min_eig_inertia_com"][k]),
                triangle_margin=float(metrics["triangle_margin"][k]),
                min_eig_pseudo_inertia=float(metrics["min_eig_pseudo_inertia"][k]),
            ),
            **extra,
        )


@dataclasses.dataclass(frozen=True)
class FittedBody(Body):
    """``links[].fit``: a ``Body`` and its ``geodesic_to_prior``."""

    geodesic_to_prior: float | None = None


@dataclasses.dataclass(frozen=True)
class Plausibility(Section):
    """``links[].plausibility``: a fitted body against its prior."""

    mass_ratio: float
    com_shift: float
    data_share_mass: float
    flagged: bool

    @classmethod
    def of(cls, p: np.ndarray, p0: np.ndarray, share: Sequence[float]) -> Plausibility:
        """Fitted body ``p`` against prior ``p0``, with its 10 data shares."""
        m, m0 = float(p[0]), float(p0[0])
        ratio = m / m0
        c = p[1:4] / m if m > 0 else np.full(3, np.nan)
        shift = float(np.linalg.norm(c - p0[1:4] / m0))
        flagged = not (1 / MASS_FLAG_RATIO <= ratio <= MASS_FLAG_RATIO)
        return cls(ratio, shift, float(share[0]), bool(flagged))


@dataclasses.dataclass(frozen=True)
class Link(Section):
    """``links[]``: one moving body (its joint's child link and what is rigidly attached)."""

    link: str
    joint: str
    free: bool
    fit: FittedBody
    least_squares: FittedBody
    prior: Body
    data_share: tuple[float, ...]
    plausibility: Plausibility


@dataclasses.dataclass(frozen=True)
class JointParameters(Section):
    """``joint_parameters[]``: one joint's (or motor's) coefficients, each ``{kind: value}``.

    Kinds ``armature``, ``viscous``, ``coulomb``, ``offset`` (units and file attributes: schema).
    """

    joint: str
    fit: Mapping[str, float | None]
    least_squares: Mapping[str, float | None]
    file: Mapping[str, float | None]
    armature_prior_std: float | None
    data_share: Mapping[str, float | None]
    confounded: Mapping[str, tuple[tuple[str, str], ...]]
    rest_fraction: float
    transmission: Mapping[str, float] | None = None


@dataclasses.dataclass(frozen=True)
class TotalMass(Section):
    """``total_mass``: sum of the moving bodies' masses, kg."""

    fit: float
    least_squares: float
    prior: float
    data_share: float | None = None


@dataclasses.dataclass(frozen=True)
class IdentifiabilitySummary(Section):
    """``identifiability``: what the weighted data determine."""

    rank: int
    n_columns: int
    condition_number: float
    base_columns: tuple[int, ...]
    base_parameters: tuple[tuple[str, str], ...]
    n_unidentifiable: int
    prior_decided: tuple[tuple[str, str], ...]
    confounded: tuple[tuple[tuple[str, str], tuple[tuple[str, str], ...]], ...] = ()


@dataclasses.dataclass(frozen=True)
class FloatingBase(Section):
    """``floating_base``: how a floating-base log was used."""

    method: str
    contact_frames: tuple[str, ...]
    contact_type: str
    schedule: str
    contact_speed: float | None
    rows_per_sample: Mapping[str, float]
    equations: int
    rows: tuple[str, ...]
    closed: Mapping[str, float]
    unknown_torques: tuple[str, ...]
    wrench_check: Mapping[str, Any] | None


@dataclasses.dataclass(frozen=True)
class FitSummary(Section):
    """``fit_status``: how the fit ended."""

    status: str
    converged: bool
    iterations: int
    objective: float


@dataclasses.dataclass(frozen=True)
class Times(Section):
    """``times``: wall-clock times, s."""

    compile_s: float
    solve_s: float
    stages_s: Mapping[str, float]


@dataclasses.dataclass(frozen=True)
class IdentificationReport(Section):
    """The report of [identify_robot][spatialjax.identification.identify_robot], typed.

    ``RobotIdentification.report`` is one; ``to_dict()`` and ``to_json()`` give its JSON form.
    Each field is a key of the JSON report; the schema, with units: docs page
    ``identification-report.md``.

    Attributes:
      joints: the identified joints, model order.
      links_identified: the links identified (``free``, or all).
      gravity: the world-frame gravity, m/s².
      settings: the options given ([IdentifyOptions][spatialjax.identification.IdentifyOptions]).
      sampling: the main log's [SamplingReport][spatialjax.identification.SamplingReport].
      positions: one ``PositionCheck`` per joint.
      filter: the cut-off and decimation used
        ([FilterChoice][spatialjax.identification.FilterChoice]).
      samples: sample counts.
      prior_repairs: one [PriorRepair][spatialjax.identification.PriorRepair] per repaired body.
      channels: one ``ChannelCheck`` per torque channel.
      gamma: the log-det weight used.
      noise_std: ``{joint: σ̂_j}`` (floating base: per row, ``floating_base.rows``).
      correlation_time: ``{joint: τ_j}`` in samples.
      effective_samples: ``{joint: N / τ_j}``.
      noise_weights: ``{joint: 1 / (σ̂_j² τ_j)}`` (0 for a channel left out).
      links: one entry per moving body.
      total_mass: the summed masses.
      joint_parameters: one entry per joint (per motor with a transmission).
      errors: torque errors of fit, least squares and prior.
      validation: one entry per ``validate`` log.
      identifiability: rank, conditioning, base and prior-decided parameters.
      fit_status: how the fit ended.
      times: wall-clock times.
      warnings: the plain-words warnings.
      notes: the plain-words notes.
      floating_base: how a floating-base log was used (None for a fixed base).
    """

    joints: tuple[str, ...]
    links_identified: tuple[str, ...]
    gravity: tuple[float, ...]
    settings: Any  # IdentifyOptions (pipeline.options)
    sampling: Any
    positions: tuple[Any, ...]
    filter: Any
    samples: Samples
    prior_repairs: tuple[Any, ...]
    channels: tuple[Any, ...]
    gamma: float
    noise_std: Mapping[str, float]
    correlation_time: Mapping[str, float]
    effective_samples: Mapping[str, float]
    noise_weights: Mapping[str, float]
    links: tuple[Link, ...]
    total_mass: TotalMass
    joint_parameters: tuple[JointParameters, ...]
    errors: Errors
    validation: tuple[Validation, ...]
    identifiability: IdentifiabilitySummary
    fit_status: FitSummary
    times: Times
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    floating_base: FloatingBase | None = None

    def to_json(self, *, indent: int | None = 1) -> str:
        """The report as JSON (NaN and infinities written as ``null``)."""
        return json.dumps(jsonable(self.to_dict()), indent=indent, allow_nan=False)


def schema() -> dict[str, type]:
    """The report's sections (dataclasses) by their path in the report.

    Paths join keys with ``.``; ``[]`` marks each element of a list, ``<set>`` and ``<part>`` any
    key of an object; ``""`` is the top level.
    """
    from ..logs.filter_choice import FilterChoice
    from ..logs.positions import PositionCheck
    from ..logs.resample import SamplingReport
    from ..pipeline.options import IdentifyOptions

    return {
        "": IdentificationReport,
        "settings": IdentifyOptions,
        "sampling": SamplingReport,
        "positions[]": PositionCheck,
        "filter": FilterChoice,
        "samples": Samples,
        "links[]": Link,
        "joint_parameters[]": JointParameters,
        "links[].fit": FittedBody,
        "links[].prior": Body,
        "links[].fit.margins": Margins,
        "links[].plausibility": Plausibility,
        "total_mass": TotalMass,
        "errors": Errors,
        "errors.<set>": PartErrors,
        "errors.<set>.<part>": ErrorFigures,
        "validation[]": Validation,
        "validation[].errors": ValidationErrors,
        "identifiability": IdentifiabilitySummary,
        "fit_status": FitSummary,
        "times": Times,
        "floating_base": FloatingBase,
    }


# ------------------------------------------------------------------------------ the result
@dataclasses.dataclass(frozen=True)
class RobotIdentification:
    """Everything [identify_robot][spatialjax.identification.identify_robot] measured (float64).

    Attributes:
      joints: the identified joints, model order.
      body_names: the moving bodies (each joint's child link), model order.
      params: ``{"fit" | "least_squares" | "prior" | "model": (nb, 10)}`` body 10-vectors
        (``prior`` after repair).
      report: the [IdentificationReport][spatialjax.identification.IdentificationReport].
      warnings: plain-words warnings.
      notes: plain-words notes.
      model: the [Model][spatialjax.multibody.Model] identified.
      joint_parameters: ``{"fit" | "least_squares": (n_joints, 4)}``
        ``[armature, viscous, coulomb, offset]`` per joint
        ([JointModel.as_table][spatialjax.multibody.JointModel.as_table]), NaN for kinds not
        fitted and for a channel left out; per motor (its units) through a transmission.
      joint_model: the [JointModel][spatialjax.multibody.JointModel] fitted (None: one motor per
        joint).
    """

    joints: tuple[str, ...]
    body_names: tuple[str, ...]
    params: Mapping[str, np.ndarray]
    report: IdentificationReport
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    model: Any
    joint_parameters: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    joint_model: Any = None

    def to_json(self, *, indent: int | None = 1) -> str:
        """The report as JSON (NaN and infinities written as ``null``)."""
        return self.report.to_json(indent=indent)

    def summary(self) -> str:
        """The printable tables: per link (mass, plausibility, data share), per joint errors."""
        return summary_table(self.report)

    def __str__(self) -> str:
        return self.summary()

    def write(self, out_path, *, source, overwrite: bool = False) -> dict:
        """Write the fitted bodies and joint parameters into a copy of the model file ``source``.

        The format is the source's (URDF or MJCF); every byte outside the rewritten elements is
        kept; joint parameters not fitted keep the file's values
        ([write_identified_model][spatialjax.identification.write_identified_model]).

        Args:
          out_path: the file to write; a suffix of another format is refused.
          source: the model file ``model`` was read from (with the same ``locked_joints``), or its
            [`ModelDescription`][spatialjax.io.ModelDescription].
          overwrite: replace ``out_path`` if it exists (``source`` is never overwritten).

        Returns:
          The writer's JSON-able report.

        Raises:
          ValueError: ``source`` cannot be written back (SDFormat), is not the file ``model`` was
            read from, or ``out_path`` names another format.
          FileExistsError: ``out_path`` exists and ``overwrite`` is false.
        """
        from ...io import ModelDescription, read_description
        from .model_writer import WRITERS, write_identified_model

        desc = source if isinstance(source, ModelDescription) else read_description(source)
        if desc.format not in WRITERS:
            raise IdentifyError(
                "source",
                f"{desc.path} is {desc.format.upper()}; only URDF and MJCF can be written "
                f"back (formats: {', '.join(sorted(WRITERS))})",
            )
        problem = output_format_problem(out_path, desc.format, desc.path)
        if problem:
            raise IdentifyError("out_path", f"{problem}")
        tendons = self.tendon_parameters()
        if tendons and desc.format != "mjcf":
            raise IdentifyError(
                "source",
                f"{desc.path} is {desc.format.upper()}, which has no coupled transmission: "
                f"the motors {', '.join(tendons)} drive several joints; write an MJCF with fixed "
                "tendons of those names (MuJoCo's URDF import, then add the tendons)",
            )
        extra = {"tendon_params": tendons} if tendons else {}
        return write_identified_model(desc, self.model, self.params["fit"], out_path,
                                      joint_params=self.file_joint_parameters(),
                                      overwrite=overwrite, **extra)  # fmt: skip

    def tendon_parameters(self) -> dict:
        """``{motor: {kind: value}}`` of the fit for motors driving several joints, or ``{}``."""
        from ...multibody.joint_model import JOINT_KINDS

        table = self.joint_parameters.get("fit")
        jm = self.joint_model
        if table is None or jm is None or jm.transmission is None:
            return {}
        motors = jm.motors(self.model)
        return {
            motors[m]: {k: float(table[m, JOINT_KINDS.index(k)])
                        for k in ("armature", "viscous", "coulomb")
                        if not np.isnan(table[m, JOINT_KINDS.index(k)])}
            for m in jm.coupled_motors(self.model)
        }  # fmt: skip

    def file_joint_parameters(self) -> dict:
        """The fit's ``{"armature" | "damping" | "friction": (n_joints,)}``, NaN: the file's."""
        table = self.joint_parameters.get("fit")
        if table is None:
            return {}
        jm = self.joint_model
        if jm is not None and jm.transmission is not None:  # the joints' own motors
            import spatialjax.multibody as mb

            every = mb.JointModel(transmission=jm.transmission)
            table = np.asarray(table, np.float64)
            per_joint = every.joint_parameters(self.model, table.reshape(-1))
            table = np.stack([per_joint[f] for f in ("armature", "damping", "friction")], 1)
        out = {}
        for c, field in enumerate(("armature", "damping", "friction")):
            col = np.asarray(table, np.float64)[:, c]
            if not np.all(np.isnan(col)):
                out[field] = col.copy()
        return out


#: The suffixes that name a model format (an output whose suffix names another is refused).
FORMAT_SUFFIXES = {".urdf": "urdf", ".xml": "mjcf", ".mjcf": "mjcf", ".sdf": "sdf"}


def output_format_problem(out_path, fmt: str, source=None) -> str | None:
    """Why ``out_path`` cannot hold a model written in ``fmt`` (its source's format), or None.

    Refused: a suffix naming another format (``fitted.xml`` from a URDF). Accepted: no such
    suffix, one naming ``fmt`` (``robot.urdf.xml``), or ``source``'s own suffix.
    """
    from pathlib import Path

    suffixes = [x.lower() for x in Path(out_path).suffixes]
    named = {FORMAT_SUFFIXES[x] for x in suffixes if x in FORMAT_SUFFIXES}
    same = source is not None and Path(out_path).suffix.lower() == Path(source).suffix.lower()
    if not named or fmt in named or same:
        return None
    other = sorted(named)[0]
    advice = {
        "urdf": "name it FITTED.urdf",
        "mjcf": "name it FITTED.xml",
    }.get(fmt, "")
    convert = (
        "; to get an MJCF, convert the URDF first (MuJoCo's URDF import and mj_saveLastXML) "
        "and identify with that file"
        if fmt == "urdf" and other == "mjcf"
        else ""
    )
    return (
        f"{out_path} names {other.upper()}, but the model is {fmt.upper()} and is written back "
        f"in its own format: {advice}{convert}"
    )


# ------------------------------------------------------------------------------ printing
def _share_text(share) -> str:
    vals = [x for x in share if x is not None and math.isfinite(x)]
    lo, hi = (max(0.0, x) + 0.0 for x in (min(vals), max(vals))) if vals else (0.0, 0.0)
    return f"{lo:.2f}–{hi:.2f}" if vals else "—"  # display only: -1e-17 is 0.00


def _table(rows: list) -> list[str]:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]


_LINK_HEADER = ("link", "mass prior → fit (kg)", "ratio", "CoM shift (mm)", "OLS consistent",
                "fit consistent", "data share", "")  # fmt: skip


def _link_rows(report: IdentificationReport) -> list:
    rows: list = [_LINK_HEADER]
    for d in report.links:
        pl = d.plausibility
        rows.append(
            (
                d.link,
                f"{d.prior.mass:.3f} → {d.fit.mass:.3f}",
                f"{pl.mass_ratio:.2f}",
                f"{1e3 * pl.com_shift:.1f}",
                "yes" if d.least_squares.consistent else "NO",
                "yes" if d.fit.consistent else "NO",
                _share_text(d.data_share) if d.free else "held",
                "CHECK: mass moved > 2×" if pl.flagged else "",
            )
        )
    return rows


_JOINT_HEADER = ("joint", "armature file → fit", "viscous = damping", "Coulomb = frictionloss",
                 "offset", "at rest", "")  # fmt: skip


def _joint_rows(report: IdentificationReport) -> list:
    """Per joint: each joint-model kind ``file → fit`` (``—``: not fitted)."""
    rows: list = [_JOINT_HEADER]
    for d in report.joint_parameters:
        fit, file = d.fit, d.file

        def cell(k, fit=fit, file=file):
            if fit[k] is None:
                return "—"
            f = file.get(k)
            return (f"{number_text(f, '.3g')} → " if f is not None else "") + f"{fit[k]:.4g}"

        conf = ", ".join(d.confounded)
        rows.append((
            d.joint, cell("armature"), cell("viscous"), cell("coulomb"),
            "—" if fit["offset"] is None else f"{fit['offset']:.3g}",
            f"{100 * d.rest_fraction:.0f} %",
            f"{conf}: split by the priors" if conf else "",
        ))  # fmt: skip
    return rows


def _overall(e: ErrorFigures | None) -> str:
    return _number(None if e is None else e.overall)


def summary_table(report: IdentificationReport) -> str:
    """The printed tables: per link, per joint's joint model (when fitted), per-joint errors.

    Args:
      report: ``RobotIdentification.report``.
    """
    lines = _table(_link_rows(report))
    if any(v is not None for d in report.joint_parameters for v in d.fit.values()):
        lines += [""] + _table(_joint_rows(report))
    sets = {"fit": report.errors.fit, "least_squares": report.errors.least_squares,
            "prior": report.errors.prior}  # fmt: skip
    held = report.errors.fit.holdout is not None
    errs: dict[str, ErrorFigures] = {}
    for k, p in sets.items():
        e = p.holdout if held else p.train
        assert e is not None  # the training part always has samples
        errs[k] = e
    label = "held-out" if held else "training (no hold-out)"
    excluded = {c.joint for c in report.channels if c.excluded}
    floating = report.floating_base is not None
    # a floating base's equations: the base's six rows, then the joints'
    names = list(errs["fit"].per_joint) if floating else list(report.joints)
    head = "equation" if floating else "joint"
    rest = errs["fit"].rest_left_out
    rows: list = [(head, f"{label} ‖τ̂−τ‖/‖τ‖: fit", "least squares", "prior")
                  + (("at rest, left out",) if rest else ())]  # fmt: skip
    for j in names:
        mark = " (not fitted)" if j in excluded else ""
        rows.append((j + mark, *(_number(errs[k].per_joint[j]) for k in errs))
                    + ((f"{100 * rest[j]:.0f} %",) if rest else ()))  # fmt: skip
    if floating:
        for group in ("base", "joint"):
            rows.append((f"{group} rows", *(_number(getattr(errs[k], group)) for k in errs)))
    rows.append(("all fitted", *(_number(errs[k].overall) for k in errs))
                + (("",) if rest else ()))  # fmt: skip
    lines += [""] + _table(rows)
    for k, v in enumerate(report.validation):
        e = v.errors
        lines.append(
            f"  validation log {k}: fit {_overall(e.fit)}, least squares "
            f"{_overall(e.least_squares)}, prior {_overall(e.prior)}"
        )
    return "\n".join(lines)


def _number(x) -> str:
    """``x`` to four decimals, ``—`` for None or NaN."""
    return number_text(None if x is None else finite_or_none(x), ".4f")
