"""What ``identify_robot`` returns: ``RobotIdentification``, the typed ``IdentificationReport``.

``to_dict()`` gives the JSON form (field names as keys), ``to_json()`` the text with
NaN and infinities as ``null``; the schema is docs page ``identification-report.md``.
``summary_table`` and the ``*_text`` helpers format what the command line prints.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

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
    """Sample counts.

    Attributes:
      raw: samples of the log after resampling.
      raw_holdout: the last ``raw_holdout`` of them are held out.
      after_decimation: training + held-out samples after filtering and decimation.
      train: samples the fit uses.
      holdout: held-out samples after filtering and decimation.
    """

    raw: int
    raw_holdout: int
    after_decimation: int
    train: int
    holdout: int


@dataclasses.dataclass(frozen=True)
class ErrorFigures(Section):
    """Relative torque errors ``‖τ̂ − τ‖ / ‖τ‖`` (None where ``‖τ‖ = 0``).

    For a floating base the "torques" are each sample's equations (base rows first).

    Attributes:
      overall: over the samples and the channels (equations) fitted.
      per_joint: ``{joint: e}`` over the samples of one joint (floating base:
        of one equation).
      base: over the base rows (floating base; None for a fixed base).
      joint: over the joint rows fitted (floating base; None for a fixed base).
      rest_left_out: ``{joint: share}`` of the part's samples left out of the
        joint's error because it rests there, as the fit left them out of its
        row (Coulomb friction modelled: static friction is not ``F_c
        sign(q̇)``); None where every sample counts.
    """

    overall: float | None
    per_joint: Mapping[str, float | None]
    base: float | None = None
    joint: float | None = None
    rest_left_out: Mapping[str, float] | None = None

    @classmethod
    def of(
        cls, tau_hat: np.ndarray, tau: np.ndarray, joints, used, groups=None, rows=None
    ) -> ErrorFigures | None:
        """The errors of a prediction ``tau_hat (N, n)`` of ``tau``; None without samples.

        ``groups``: ``n`` labels ``"base"``/``"joint"`` (a floating base's
        equations), or None. ``rows``: ``(N, n)`` booleans, the samples of each
        channel that count (the others, at rest, are left out), or None (all).
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
    """One parameter set's errors on the training and the held-out part.

    Attributes:
      train: on the training part.
      holdout: on the held-out part (None without a held-out part).
    """

    train: ErrorFigures | None
    holdout: ErrorFigures | None


@dataclasses.dataclass(frozen=True)
class Errors(Section):
    """Errors of the fit, of ordinary least squares and of the prior (no friction).

    Attributes:
      fit: the physically consistent fit.
      least_squares: ordinary least squares on the same columns.
      prior: the (repaired) model bodies.
    """

    fit: PartErrors
    least_squares: PartErrors
    prior: PartErrors


@dataclasses.dataclass(frozen=True)
class ValidationErrors(Section):
    """Errors on one validation log.

    Attributes:
      fit: the fit's.
      least_squares: least squares'.
      prior: the prior's.
    """

    fit: ErrorFigures | None
    least_squares: ErrorFigures | None
    prior: ErrorFigures | None


@dataclasses.dataclass(frozen=True)
class Validation(Section):
    """One ``validate`` log, evaluated (not fitted).

    Attributes:
      samples: its samples after filtering and decimation.
      sampling: its ``SamplingReport``.
      errors: the errors on it.
    """

    samples: int
    sampling: Any
    errors: ValidationErrors


@dataclasses.dataclass(frozen=True)
class Margins(Section):
    """Consistency margins of a body (``physical_consistency``).

    Attributes:
      min_eig_inertia_com: smallest eigenvalue of the inertia about the CoM.
      triangle_margin: ``λ1 + λ2 − λ3`` of the principal moments.
      min_eig_pseudo_inertia: smallest eigenvalue of the pseudo-inertia ``J``.
    """

    min_eig_inertia_com: float
    triangle_margin: float
    min_eig_pseudo_inertia: float


@dataclasses.dataclass(frozen=True)
class Body(Section):
    """One body's parameters and consistency.

    Attributes:
      params: the 10-vector ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
        about the body frame's origin in its axes.
      mass: kg.
      com: centre of mass in the body frame, m (None for a zero mass).
      principal_moments: of the inertia about the CoM, ascending, kg m².
      consistent: fully physically consistent.
      margins: the consistency margins.
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
    """A fitted body: ``Body`` and its distance to the prior.

    Attributes:
      geodesic_to_prior: ``geodesic_distance`` to the prior
        body (None where ``J`` is not positive definite).
    """

    geodesic_to_prior: float | None = None


@dataclasses.dataclass(frozen=True)
class Plausibility(Section):
    """A fitted body against its prior.

    Attributes:
      mass_ratio: fitted mass / prior mass.
      com_shift: distance between the fitted and the prior CoM, m.
      data_share_mass: the data share of the mass.
      flagged: the mass moved more than ``MASS_FLAG_RATIO`` (2×) either way.
    """

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
    """One moving body (its joint's child link with everything rigidly attached).

    Attributes:
      link: the joint's child link.
      joint: the joint.
      free: identified (True) or held at the model's values.
      fit: the fitted body.
      least_squares: the least-squares body.
      prior: the prior body.
      data_share: per parameter, the fraction of its prior variance the data remove.
      plausibility: the fit against the prior.
    """

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
    """One joint's (or motor's) joint-model coefficients (``JointModel``), each
    ``{kind: value}``.

    Kinds and the file attributes they become: ``armature`` (kg·m²; MJCF
    ``armature``), ``viscous`` (N·m·s/rad; MJCF ``damping``, URDF ``<dynamics
    damping>``), ``coulomb`` (N·m; MJCF ``frictionloss``, URDF ``<dynamics
    friction>``), ``offset`` (N·m; none). Prismatic joints: kg, N·s/m, N, N.

    Attributes:
      joint: the joint.
      fit: the fit's coefficients (None: not fitted).
      least_squares: least squares' (None: not fitted).
      file: the model file's values (offset None: no file has one).
      armature_prior_std: ``σ_a`` of the armature's Gaussian prior (None: no prior).
      data_share: per kind fitted, the fraction of its prior variance the data
        remove (1 for a kind without prior that the data determine).
      confounded: ``{kind: [[link, parameter], ...]}`` for the kinds that share a
        base parameter with link parameters (the priors decide the split).
      rest_fraction: the share of the training samples left out of this
        joint's row because it rests (static friction), 0 without the rule;
        through a transmission, the largest share among the motor's joints.
      transmission: through a transmission, the motor's joints and coefficients
        ``{joint: T_mj}`` (``θ̇_m = Σ T_mj q̇_j``; ``joint`` is then the motor's name
        and the values are in the motor's units); None without one.
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
    """Sum of the moving bodies' masses, kg.

    Attributes:
      fit: of the fit.
      least_squares: of least squares.
      prior: of the prior.
      data_share: the data share of the sum, as a link mass's (what the data
        alone determine): 1 for a floating base, whose six base rows carry it;
        0 for a fixed base of revolute joints, which never sees it (None when
        not computed).
    """

    fit: float
    least_squares: float
    prior: float
    data_share: float | None = None


@dataclasses.dataclass(frozen=True)
class IdentifiabilitySummary(Section):
    """What the weighted data determine (``identifiability``).

    Attributes:
      rank: numerical rank of the column-scaled weighted regressor.
      n_columns: 10 per identified body + friction columns.
      condition_number: of the base regressor (None: nothing excited).
      base_columns: indices of a set of independent columns.
      base_parameters: their ``[link or joint, parameter]`` names.
      n_unidentifiable: ``n_columns − rank``.
      prior_decided: ``[link, parameter]`` pairs with data share < 0.5.
      confounded: ``[[joint, kind], [[link, parameter], ...]]`` for each
        joint-model column that shares a base parameter with link parameters
        (``Identifiability.confounded``): the data fix the combination, the
        priors decide the split.
    """

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
    """How a floating-base log was used
    ([floating_base_rows][spatialjax.identification.floating_base_rows]).

    Attributes:
      method: ``"wrenches"`` or ``"projection"``.
      contact_frames: the contact frames.
      contact_type: ``"point"`` or ``"surface"``.
      schedule: ``"logged"``, ``"detected"`` (from the frames' speed) or
        ``"all closed"``.
      contact_speed: the detection's speed, m/s (None unless ``"detected"``).
      rows_per_sample: ``{min, max, mean}`` independent equations per training sample.
      equations: independent equations of the training part, in all.
      rows: the names of each sample's rows (``base_nx … base_fz``, the joints,
        and for ``"wrenches"`` the same with ``@contact``).
      closed: ``{frame: share}`` of the training samples with each contact closed.
      unknown_torques: joints whose torque the equations treat as unknown.
      wrench_check: the contact wrenches against the prior's prediction, as a
        torque channel's check (None without wrenches).
    """

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
    """How the fit ended.

    Attributes:
      status: the ``FitStatus`` name.
      converged: whether it converged.
      iterations: its iterations.
      objective: the objective at the result.
    """

    status: str
    converged: bool
    iterations: int
    objective: float


@dataclasses.dataclass(frozen=True)
class Times(Section):
    """Wall-clock times, s.

    Attributes:
      compile_s: JAX's tracing, lowering and compiling during the fit's call.
      solve_s: the rest of that call.
      stages_s: ``{stage: seconds}``.
    """

    compile_s: float
    solve_s: float
    stages_s: Mapping[str, float]


@dataclasses.dataclass(frozen=True)
class IdentificationReport(Section):
    """The report of [identify_robot][spatialjax.identification.identify_robot], typed.

    ``RobotIdentification.report`` is one; ``to_dict()`` and ``to_json()``
    give its JSON form.

    Each field is a key of the JSON report; the schema, with units, is in the
    identification guide ("The report's schema").

    Attributes:
      joints: the identified joints, model order.
      links_identified: the links identified (``free``, or all).
      gravity: the world-frame gravity, m/s².
      settings: the options as given
        ([IdentifyOptions][spatialjax.identification.IdentifyOptions]; the
        cut-off and decimation used are in ``filter``).
      sampling: the main log's
        [SamplingReport][spatialjax.identification.SamplingReport].
      positions: one ``PositionCheck`` per joint: range, limits, resolution, velocity.
      filter: the low-pass cut-off and decimation, given or chosen from the
        training part, and why
        ([FilterChoice][spatialjax.identification.FilterChoice]).
      samples: sample counts.
      prior_repairs: one [PriorRepair][spatialjax.identification.PriorRepair] per
        repaired prior body.
      channels: one ``ChannelCheck`` per torque channel.
      gamma: the log-det weight used.
      noise_std: ``{joint: σ̂_j}`` (floating base: per row, ``floating_base.rows``).
      correlation_time: ``{joint: τ_j}`` in samples.
      effective_samples: ``{joint: N / τ_j}``.
      noise_weights: ``{joint: 1 / (σ̂_j² τ_j)}`` (0 for a channel left out).
      links: one entry per moving body.
      total_mass: the summed masses.
      joint_parameters: one entry per joint: armature, viscous, Coulomb,
        offset of the fit, least squares and the file, and what decided them.
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
    """The report's sections whose keys are their dataclass fields, by their path in the report.

    A path joins keys with ``.``; ``[]`` marks each element of a list, ``<set>`` and
    ``<part>`` any key of an object (``errors.<set>.<part>`` is ``errors.fit.train`` and
    the others). ``""`` is the top level. The identification guide's schema tables
    follow these paths; a test reads the guide against them.
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
    """Everything [identify_robot][spatialjax.identification.identify_robot] measured.

    Arrays are float64.

    Attributes:
      joints: the identified joints, model order.
      body_names: the moving bodies (each joint's child link), model order.
      params: ``{"fit" | "least_squares" | "prior" | "model": (nb, 10)}``
        body 10-vectors (``prior`` after repair; ``model`` as in the model).
      report: the [IdentificationReport][spatialjax.identification.IdentificationReport]
        (schema: the identification guide): settings, sampling, positions,
        samples, repairs, channels, weights, links (with plausibility),
        joint parameters, errors, validation, identifiability, fit status, times;
        ``report.to_dict()`` and ``to_json()`` give its JSON form.
      warnings: plain-words warnings.
      notes: plain-words notes.
      model: the [Model][spatialjax.multibody.Model] identified (what
        [write][spatialjax.identification.RobotIdentification.write] writes back).
      joint_parameters: ``{"fit" | "least_squares": (n_joints, 4)}``
        ``[armature, viscous, coulomb, offset]`` per joint
        ([JointModel.as_table][spatialjax.multibody.JointModel.as_table]), NaN
        for kinds not fitted and for the joints of a channel left out; per motor
        (``joint_model.motors(model)``, its units) through a transmission.
      joint_model: the [JointModel][spatialjax.multibody.JointModel] fitted (None:
        one motor per joint).
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

        The format is the source's (URDF or MJCF); every byte outside the rewritten
        elements and attributes is kept; joint parameters not fitted keep the file's
        values. See [write_identified_model][spatialjax.identification.write_identified_model].

        Args:
          out_path: the file to write; a suffix of another format is refused.
          source: the model file ``model`` was read from (with the same
            ``locked_joints``), or its [`ModelDescription`][spatialjax.io.ModelDescription].
          overwrite: replace ``out_path`` if it exists (``source`` itself is
            never overwritten).

        Returns:
          The writer's JSON-able report.

        Raises:
          ValueError: ``source`` is in a format that cannot be written back
            (SDFormat), is not the file ``model`` was read from, or
            ``out_path`` names another format.
          FileExistsError: ``out_path`` exists and ``overwrite`` is false.
        """
        from ...io import ModelDescription, read_description
        from .model_writer import WRITERS, write_identified_model

        desc = source if isinstance(source, ModelDescription) else read_description(source)
        if desc.format not in WRITERS:
            raise ValueError(
                f"source: {desc.path} is {desc.format.upper()}; only URDF and MJCF can be written "
                f"back (formats: {', '.join(sorted(WRITERS))})"
            )
        problem = output_format_problem(out_path, desc.format, desc.path)
        if problem:
            raise ValueError(f"out_path: {problem}")
        tendons = self.tendon_parameters()
        if tendons and desc.format != "mjcf":
            raise ValueError(
                f"source: {desc.path} is {desc.format.upper()}, which has no coupled transmission: "
                f"the motors {', '.join(tendons)} drive several joints; write an MJCF with fixed "
                "tendons of those names (MuJoCo's URDF import, then add the tendons)"
            )
        extra = {"tendon_params": tendons} if tendons else {}
        return write_identified_model(desc, self.model, self.params["fit"], out_path,
                                      joint_params=self.file_joint_parameters(),
                                      overwrite=overwrite, **extra)  # fmt: skip

    def tendon_parameters(self) -> dict:
        """``{motor: {"armature" | "viscous" | "coulomb": value}}`` of the fit for the motors
        that drive several joints (MJCF fixed tendons of those names); ``{}`` without."""
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
        """``{"armature" | "damping" | "friction": (n_joints,)}`` of the fit, the writers' form.

        Only the kinds fitted (NaN where a joint's channel was left out: the
        writers keep the file's value there); ``{}`` without a joint model.
        """
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

    The output is written in the source's format. A name whose suffixes say
    another format is refused: ``fitted.xml`` from a URDF would be a URDF that
    MuJoCo reads as URDF (without armature, damping or friction loss).
    Accepted: a name without such a suffix, one that names ``fmt``
    (``robot.urdf.xml`` for a URDF), or the suffix of ``source`` itself (a
    URDF named ``robot.xml``).
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
    """The tables printed at the end: per link, per joint's joint model (when fitted), then the
    per-joint errors (and per validation log).

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
    """``x`` to four decimals, ``—`` for None or NaN (as the JSON report writes them)."""
    return number_text(None if x is None else finite_or_none(x), ".4f")
