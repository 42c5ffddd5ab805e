"""Whole-robot identification from a joint log, every stage: ``identify_robot``.

Stages prior, sampling, filter, regressor, torques, least squares, fit, validate,
each reported through ``progress``; computed in float64 (NumPy) with the model's
dtype for the regressor. Derivation: docs page ``identification-methods.md#pipeline``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ..fitting.program import cancel_prepared
from ..logs.robot_log import RobotLog
from ..output.report import (
    FitSummary,
    FloatingBase,
    IdentificationReport,
    JointParameters,
    RobotIdentification,
    Samples,
    Times,
)
from .ahead import prepare_ahead
from .channels import Channels, channel_stage
from .checks import gravity_warnings
from .consistent_fit import Fitted, fit_stage, prepare_fit
from .filtering import Filtered, filter_stage
from .least_squares import LeastSquares, rest_rule, training_data
from .offsets import least_squares_with_offsets
from .options import IdentifyOptions, Options, options_with, resolve
from .prior import Prior, prior_stage
from .regression import Regressors, regressor_stage
from .sampling import Sampled, sampling_stage
from .validation import Validated, prepare_identifiability_stage, validate_stage


class _Clock:
    """Times each stage and reports it through ``progress(stage, text, lines)``."""

    def __init__(self, progress):
        self.progress = progress
        self.times: dict[str, float] = {}
        self.t0 = time.perf_counter()

    def run(self, stage: str, fn, *args, **kwargs):
        state = fn(*args, **kwargs)
        self.times[stage] = time.perf_counter() - self.t0
        self.t0 = time.perf_counter()
        if self.progress is not None:
            text, lines = state.describe()
            self.progress(stage, text, tuple(lines))
        return state


def _raw_training_torques(sampled: Sampled, filtered: Filtered, opts: Options) -> np.ndarray:
    """The training part's torques as recorded (before resampling blurs their quantisation)."""
    raw = sampled.raw[0]
    return raw.tau[raw.t <= filtered.parts[0][1].t[-1]] * opts.scale[None, :]


def _fixed_base_stages(model, clock: _Clock, prior: Prior, sampled: Sampled,
                       filtered: Filtered, opts: Options) -> tuple:  # fmt: skip
    """The regressor and torque stages of a fixed base, and the training data.

    The channels are the joints' torques; a joint's row leaves the samples
    where it rests (``rest_rule``).
    """
    regs = clock.run("regressor", regressor_stage, model, filtered, opts)
    raw_train = _raw_training_torques(sampled, filtered, opts)
    tau_prior = regs.Y[0] @ prior.prior.reshape(-1)
    channels = clock.run("torques", channel_stage, model, raw_train, regs.tau[0], tau_prior,
                         regs.dq[0], opts, ddq=regs.ddq[0])  # fmt: skip
    moving = rest_rule(regs.dq[0], opts.joint_model, model)
    data = training_data(regs.Y[0], regs.F[0], regs.tau[0], regs.held_torque(0, prior), prior,
                         channels, q=regs.q[0], moving=moving, rows=None)  # fmt: skip
    return regs, channels, data


def _floating_base_stages(model, clock: _Clock, prior: Prior, sampled: Sampled,
                          filtered: Filtered, opts: Options) -> tuple:  # fmt: skip
    """The regressor and torque stages of a floating base, and the training data.

    The channels are the ``6 + n`` equations of each sample (``floating_base_rows``).
    """
    from ..logs.channel_checks import excluded_channels
    from . import floating_base as floating

    raw_train = _raw_training_torques(sampled, filtered, opts)
    unknown = excluded_channels(opts.joints, raw_train, opts.exclude_torque)
    regs = clock.run("regressor", regressor_stage, model, filtered, opts, unknown)
    rows = regs.rows[0]
    tau, tau_prior = floating.channel_torques(rows, prior.prior)
    base = floating.base_check(rows, prior.prior)
    channels = clock.run("torques", channel_stage, model, raw_train, tau, tau_prior, regs.dq[0],
                         opts, ddq=regs.ddq[0], base=base)  # fmt: skip
    data = training_data(regs.Y[0], regs.F[0], regs.tau[0], regs.held_torque(0, prior), prior,
                         channels, q=regs.q[0], moving=floating.row_moving(rows),
                         rows=rows)  # fmt: skip
    return regs, channels, data


def _joint_parameters(model, opts: Options, ls: LeastSquares, fitted: Fitted,
                      validated: Validated) -> tuple:  # fmt: skip
    """One ``JointParameters`` per motor (per joint without a transmission)."""
    import spatialjax.multibody as mb

    from ...multibody.joint_model import JOINT_KINDS

    jm = opts.joint_model
    motors, T = jm.motors(model), jm.matrix(model)
    fit, lsq = jm.as_table(model, fitted.friction), jm.as_table(model, ls.friction)
    share = (jm.as_table(model, validated.joint_share) if validated.joint_share is not None
             else np.full_like(fit, np.nan))  # fmt: skip
    every = mb.JointModel(transmission=jm.transmission)
    file = every.as_table(model, every.file_values(model))
    jp = fitted.joint_prior
    std = np.full(len(motors), np.nan)
    if jp is not None and "armature" in jm.kinds:
        w = np.asarray(jp.weights).reshape(len(motors), -1)[:, jm.kinds.index("armature")]
        std = np.where(w > 0, 1.0 / np.sqrt(np.where(w > 0, w, 1.0)), np.nan)
    conf: dict = {}
    for (j, kind), partners in validated.identifiability.confounded:
        conf.setdefault(j, {})[kind] = tuple(tuple(p) for p in partners)
    rest = ls.rest_fraction if ls.rest_fraction is not None else np.zeros(len(opts.joints))
    if opts.floating_base and ls.rest_fraction is not None:  # per row: base rows first
        rest = rest[6 : 6 + len(opts.joints)]
    rest = np.max(np.where(T != 0, np.asarray(rest)[None, :], 0.0), axis=1)  # per motor

    def row(x) -> dict:
        return {k: (None if np.isnan(v) else float(v)) for k, v in zip(JOINT_KINDS, x, strict=True)}

    out = []
    for i, j in enumerate(motors):
        f = row(file[i])
        f["offset"] = None
        drives = None
        if jm.transmission is not None:
            drives = {opts.joints[c]: float(T[i, c]) for c in np.flatnonzero(T[i])}
        out.append(JointParameters(
            joint=j, fit=row(fit[i]), least_squares=row(lsq[i]), file=f,
            armature_prior_std=None if np.isnan(std[i]) else float(std[i]),
            data_share=row(share[i]), confounded=conf.get(j, {}), rest_fraction=float(rest[i]),
            transmission=drives,
        ))  # fmt: skip
    return tuple(out)


def _floating_report(opts: Options, filtered: Filtered, regs: Regressors,
                     channels: Channels) -> FloatingBase | None:  # fmt: skip
    if not opts.floating_base:
        return None
    from . import floating_base as floating

    rows, p0 = regs.rows[0], filtered.prepared[0]
    schedule = floating.schedule(p0)
    return FloatingBase(
        method=rows.method, contact_frames=rows.contact_frames, contact_type=opts.contact_type,
        schedule=schedule, contact_speed=opts.contact_speed if schedule == "detected" else None,
        rows_per_sample=floating.rows_per_sample(rows), equations=rows.n_equations,
        rows=rows.row_names, closed=floating.contact_share(rows), unknown_torques=regs.unknown,
        wrench_check=channels.base,
    )  # fmt: skip


def _report(model, given: IdentifyOptions, opts: Options, prior: Prior, sampled: Sampled,
            filtered: Filtered, regs: Regressors, channels: Channels, ls: LeastSquares,
            fitted: Fitted, validated: Validated, times: dict,
            offset_notes: tuple[str, ...] = ()) -> IdentificationReport:  # fmt: skip
    """Every stage's findings as the typed report (``settings``: the options as given)."""
    n_used = ls.samples_used
    # the data term's channels: the joints, or a floating base's rows
    channel_names = regs.rows[0].row_names if opts.floating_base else opts.joints

    def per_joint(x) -> dict:
        return dict(zip(channel_names, np.asarray(x).tolist(), strict=True))

    n_train, n_hold = regs.n_train, regs.n_hold
    return IdentificationReport(
        joints=opts.joints, links_identified=prior.free_names, gravity=tuple(opts.gravity),
        settings=given, sampling=sampled.sampling[0],
        positions=sampled.positions, filter=filtered.choice,
        samples=Samples(raw=filtered.n_raw, raw_holdout=filtered.n_raw_hold,
                        after_decimation=n_train + n_hold, train=n_train, holdout=n_hold),
        prior_repairs=prior.repairs, channels=channels.checks, gamma=fitted.gamma,
        noise_std=per_joint(np.sqrt(ls.noise_var)),
        correlation_time=per_joint(ls.correlation_time),
        effective_samples=per_joint(n_used / ls.correlation_time),
        noise_weights=per_joint(ls.weights), links=validated.links,
        total_mass=validated.total_mass,
        joint_parameters=_joint_parameters(model, opts, ls, fitted, validated),
        errors=validated.errors,
        validation=validated.validation, identifiability=validated.identifiability,
        fit_status=FitSummary(status=fitted.status.name, converged=fitted.converged,
                              iterations=fitted.iterations, objective=fitted.objective),
        times=Times(compile_s=fitted.compile_s, solve_s=fitted.solve_s, stages_s=times),
        warnings=gravity_warnings(opts.gravity) + sampled.warnings + channels.warnings
        + fitted.warnings + validated.warnings,
        notes=channels.notes + offset_notes + validated.notes,
        floating_base=_floating_report(opts, filtered, regs, channels),
    )  # fmt: skip


def identify_robot(
    model,
    log: RobotLog,
    options: IdentifyOptions | None = None,
    *,
    validate: Sequence[RobotLog] = (),
    progress: Callable[[str, str, Sequence[str]], None] | None = None,
    **changes,
) -> RobotIdentification:
    """Identify a robot's links and joint parameters from a joint-torque log.

    Computed in float64 with NumPy and the model's dtype for the regressor (load
    the model with ``dtype="float64"`` under ``jax.enable_x64``). A floating-base
    robot is identified from the ``6 + n`` equations of each sample
    ([floating_base_rows][spatialjax.identification.floating_base_rows]) and the
    report gains a ``floating_base`` section. Stages and weights: docs page
    ``identification-methods.md#pipeline``.

    Args:
      model: a [Model][spatialjax.multibody.Model] whose movable joints are
        the log's ([match_joints][spatialjax.identification.match_joints] says
        which to lock); its bodies are the prior, its joint limits bound the
        log's positions. Floating-base exactly when the log has a base pose.
      log: the [RobotLog][spatialjax.identification.RobotLog];
        ``joint_names`` None means the model's joints in order, else they are
        matched by name. A floating-base log needs ``contact_frames`` (``()``
        for a robot without contacts).
      options: the [IdentifyOptions][spatialjax.identification.IdentifyOptions]
        (default: every default).
      validate: other logs of the same robot, evaluated (not fitted).
      progress: optional ``progress(stage, text, lines)`` called after each
        stage (``STAGES``) with a one-line summary and detail lines.
      **changes: options by name, applied to ``options``
        (``identify_robot(model, log, lowpass=20, holdout=0.3)``).

    Returns:
      The [RobotIdentification][spatialjax.identification.RobotIdentification].

    Raises:
      IdentifyError: an option, an argument or a log that cannot be used, naming it in
        ``.argument`` (an option's name, ``"log"``, ``"validate[k]"``, ``"model"``,
        ``"prior"``, ``"contact_method"``).
      IdentifyTypeError: ``model`` not a Model, ``log`` not a RobotLog, a
        keyword that is no option (also a ``TypeError``).

    Examples:
      >>> from spatialjax.identification import IdentifyOptions, identify_robot
      >>> opts = IdentifyOptions(lowpass=20.0, holdout=0.25)
      >>> # identify_robot(model, log, opts) is identify_robot(model, log, lowpass=20.0,
      >>> # holdout=0.25); the report's settings are opts.to_dict()
      >>> opts.to_dict()["lowpass"], opts.to_dict()["holdout"]
      (20.0, 0.25)

    References:
      Wensing, Kim & Slotine, IEEE RA-L 3(1), 2017; Lee, Wensing & Park, IEEE
      T-RO 36(2), 2020; Ayusawa, Venture & Nakamura, IJRR 33(3), 2014.
    """
    given = options_with(options, changes)
    opts = resolve(model, log, given)
    try:
        clock = _Clock(progress)
        prior = clock.run("prior", prior_stage, model, opts)
        sampled = clock.run("sampling", sampling_stage, model, log, validate, opts)
        filtered = clock.run("filter", filter_stage, sampled.logs, lowpass=opts.lowpass,
                             decimate=opts.decimate, holdout=opts.holdout)  # fmt: skip
        if not opts.floating_base:  # the solvers' programs compile during the regressor's
            prepare_ahead(model, filtered, prior, opts)
        stages = _floating_base_stages if opts.floating_base else _fixed_base_stages
        regs, channels, data = stages(model, clock, prior, sampled, filtered, opts)
        # the fit's and identifiability's programs compile on the other core during least squares
        prepare_fit(model, data, prior, opts)
        prepare_identifiability_stage(model, data, prior, opts)
        # a floating base's joint offsets enter by the Bayesian information criterion (offsets.py)
        choice = clock.run("least squares", least_squares_with_offsets, model, data, prior, opts,
                           sample_weighting=opts.sample_weighting, lowpass=filtered.lowpass,
                           rate=filtered.prepared[0].rate / filtered.decimate)  # fmt: skip
        ls, data = choice.ls, choice.data
        fitted = clock.run("fit", fit_stage, model, data, ls, prior, opts)
        validated = clock.run("validate", validate_stage, model, regs, data, ls, fitted, prior,
                              sampled.sampling, opts)  # fmt: skip
        report = _report(model, given, opts, prior, sampled, filtered, regs, channels, ls, fitted,
                         validated, clock.times, choice.notes)  # fmt: skip
    except BaseException:  # a stage refused the log: the programs prepared for later go
        cancel_prepared()
        raise
    jm = opts.joint_model
    return RobotIdentification(
        joints=opts.joints,
        body_names=opts.body_names,
        params={"fit": fitted.params, "least_squares": ls.params, "prior": prior.prior,
                "model": prior.model},
        report=report,
        warnings=report.warnings,
        notes=report.notes,
        model=model,
        joint_model=jm,
        joint_parameters={"fit": jm.as_table(model, fitted.friction),
                          "least_squares": jm.as_table(model, ls.friction)},
    )  # fmt: skip
