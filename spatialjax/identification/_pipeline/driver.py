r"""Whole-robot identification from a joint log, every stage: ``identify_robot``.

The stages (each a function of this package over the state the previous ones
returned, and each reported through ``progress``):

1. **prior** (``prior.py``): the model's bodies as the log-det prior; bodies
   that are not strictly inside the consistent set are repaired
   ([repair_prior][spatialjax.identification.repair_prior]) or, with
   ``repair_prior_bodies=False``, refused, naming the link.
2. **sampling** (``sampling.py``): each log's joints matched to the model's;
   its positions checked against the joint limits (a log in degrees is
   refused, naming the joint), their encoder steps and peak velocities
   reported; a log whose time steps are irregular resampled onto a uniform
   grid by ``t`` (linear interpolation of ``q``, ``q̇``, ``τ``), at ``rate`` or
   at the median interval.
3. **filter** (``filtering.py``): the last ``holdout`` fraction of the log is
   held out; both parts are filtered, differentiated and decimated separately
   ([prepare_log][spatialjax.identification.prepare_log]), so nothing of the
   held-out samples reaches the fit.
4. **regressor** (``regressor.py``): ``τ = Y(q, q̇, q̈) π + Y_J(q̇, q̈) φ`` (RNEA
   regressor, Atkeson, An & Hollerbach 1986; the joint model's armature,
   viscous, Coulomb and offset columns:
   [JointModel][spatialjax.multibody.JointModel]); with a low-pass, its
   columns go through the torques' filter before decimation (parallel
   filtering, Gautier 1997:
   [parallel_filter][spatialjax.identification.parallel_filter]). With
   ``free``, the bodies not listed are held at the model's values: their
   torques are subtracted and their columns dropped. A floating base's rows
   are [floating_base_rows][spatialjax.identification.floating_base_rows]'
   (the branch is ``floating.py``).
5. **torques** (``channels.py``): each channel's signal, scale and sign
   against the prior's prediction; channels without signal, and those in
   ``exclude_torque``, leave the data term (weight 0); ``torque_scale``
   multiplies a channel before everything.
6. **least squares** (``least_squares.py``): ordinary least squares on the
   same columns and samples, and the weights of the data term. With Coulomb
   friction modelled, the samples where a joint rests leave that joint's row
   ([moving_samples][spatialjax.identification.moving_samples]:
   ``|q̇_j| ≤ max(3 σ̂_v, 0.05 rms q̇_j)``): static friction, and MuJoCo's
   ``frictionloss`` constraint, is not ``F_c sign(q̇)`` there. A floating
   base's joint equation is dropped at those samples before the contacts are
   projected out (``floating_base_rows``' ``unknown``), in the regressor stage.
   A floating base's joint offsets are kept only where the Bayesian
   information criterion asks for them (``offsets.py``).
7. **fit** (``fit.py``): [fit_torques][spatialjax.identification.fit_torques]
   with the (repaired) prior, the joint-model signs (armature, viscous and
   Coulomb ``≥ 0``), the armature's weak Gaussian prior around the file's
   value ([joint_prior][spatialjax.identification.joint_prior]), and the data
   weights below.
8. **validate** (``validate.py``): torque errors ``‖τ̂ − τ‖ / ‖τ‖`` of the
   fit, least squares and the prior (the file's bodies and joint parameters)
   on the training part, the held-out part and every ``validate`` log
   (filtered on its own), identifiability (which joint-model columns share a
   base parameter with the links: a fixed base's first armature always), and
   per-link plausibility.

The arguments are checked once, before any stage (``options.py``).

**Weights of the data term** (``sample_weighting``). ``fit_torques``'
default weights ``1/σ̂_j²`` make the data term a χ² that counts every sample
as independent. Filtered residuals are not: a zero-phase low-pass at
``f_c`` leaves about ``N · 2 f_c / f_s`` independent samples, and model error
on real robots (friction shape, cables, an unmodelled payload, sensor drift)
is coloured, so the data would outweigh the prior by the residuals'
correlation time, and the excess goes into the directions the torques barely
see. ``"autocorrelation"`` (default) weighs joint ``j`` by ``1 / (σ̂_j² τ_j)``
with ``τ_j`` the integrated autocorrelation time of its least-squares
residuals ([correlation_time][spatialjax.identification.correlation_time]):
the data term counts ``N / τ_j`` effective samples per joint, the likelihood
of residuals correlated over ``τ_j`` samples. ``"bandwidth"`` takes only the
filter into account: ``τ = f_s / (2 f_c)`` at the rate ``f_s`` after
decimation (a signal band-limited to ``f_c`` carries ``2 f_c`` independent
values per second; ``τ = 1`` without a low-pass). ``"independent"`` is
``τ_j = 1`` (the weights of ``fit_torques``). ``σ̂_j²`` is the least-squares
residual energy of joint ``j`` over ``N − r/n_used`` (``r`` the rank),
floored at ``eps · mean(τ_j²)``. ``γ`` keeps ``fit_torques``' rule,
``2 / s²``.

References:
  C. G. Atkeson, C. H. An, J. M. Hollerbach, "Estimation of inertial
  parameters of manipulator loads and links", IJRR 5(3), 1986.
  M. Gautier, "Dynamic identification of robots with power model", ICRA 1997.
  P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
  T. Lee, P. M. Wensing, F. C. Park, "Geometric robot dynamic
  identification: a convex programming approach", IEEE T-RO 36(2), 2020.
  A. D. Sokal, "Monte Carlo methods in statistical mechanics", 1997, §3.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .._floating import CONTACT_SPEED
from .._log import RobotLog
from .._prior import REPAIR_FLOOR
from .._report import (
    FitSummary,
    FloatingBase,
    IdentificationReport,
    JointParameters,
    RobotIdentification,
    Samples,
    Settings,
    Times,
)
from .._robot_fit import PRIOR_SPREAD
from .channels import Channels, channel_stage
from .filtering import Filtered, filter_stage
from .fit import Fitted, fit_stage
from .least_squares import LeastSquares, rest_rule, training_data
from .offsets import least_squares_with_offsets
from .options import DEFAULT_HOLDOUT, Options, check_options, resolve_joint_model
from .prior import Prior, prior_stage
from .regressor import Regressors, regressor_stage
from .sampling import Sampled, sampling_stage
from .validate import Validated, validate_stage


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
    return raw.tau[raw.t <= filtered.parts[0][1].t[-1]] * opts.torque_scale[None, :]


def _unknown_torques(sampled: Sampled, filtered: Filtered, opts: Options) -> tuple[str, ...]:
    """A floating base's joints whose torque is unknown: the channels the torque stage will
    leave out (named by the user, or without signal), known before the rows are formed."""
    from .._channels import excluded_channels

    if not opts.floating_base:
        return ()
    raw = _raw_training_torques(sampled, filtered, opts)
    return excluded_channels(opts.joints, raw, opts.exclude_torque)


def _torques(model, sampled: Sampled, filtered: Filtered, regs: Regressors, prior: Prior,
             opts: Options) -> Channels:  # fmt: skip
    """The torque stage on the training part."""
    raw_train = _raw_training_torques(sampled, filtered, opts)
    if regs.rows:  # floating base: the joints' torques and their prediction from the equations
        from . import floating

        tau, tau_prior = floating.channel_torques(regs.rows[0], prior.prior)
        base = floating.base_check(regs.rows[0], prior.prior)
        return channel_stage(model, raw_train, tau, tau_prior, regs.dq[0], opts,
                             ddq=regs.ddq[0], base=base)  # fmt: skip
    tau_prior = regs.Y[0] @ prior.prior.reshape(-1)
    return channel_stage(model, raw_train, regs.tau[0], tau_prior, regs.dq[0], opts,
                         ddq=regs.ddq[0])  # fmt: skip


def _moving(regs: Regressors, opts: Options) -> np.ndarray | None:
    """The training samples in each channel's row (``rest_rule``; a floating base's rows:
    ``floating.row_moving``), or None (every sample)."""
    if regs.rows:
        from . import floating

        return floating.row_moving(regs.rows[0])
    return rest_rule(regs.dq[0], opts.joint_model)


def _settings(opts: Options, filtered: Filtered) -> Settings:
    scale = {j: float(k) for j, k in zip(opts.joints, opts.torque_scale, strict=True) if k != 1}
    return Settings(
        lowpass=filtered.lowpass, decimate=filtered.decimate, friction=opts.friction.kinds,
        gamma=opts.gamma, prior_spread=opts.prior_spread, holdout=opts.holdout,
        sample_weighting=opts.sample_weighting, repair_prior=opts.repair_prior,
        repair_floor=opts.repair_floor, exclude_torque=opts.exclude_torque, torque_scale=scale,
        free=opts.free, rate=opts.rate, max_gap=opts.max_gap, ignore_limits=opts.ignore_limits,
        joint_model=opts.joint_model.kinds,
    )  # fmt: skip


def _friction_part(model, opts: Options, coefficients) -> np.ndarray:
    """The friction kinds' coefficients (``opts.friction``'s layout) of joint-model ones."""
    from ...multibody.joint_model import JOINT_KINDS

    table = opts.joint_model.as_table(model, coefficients)
    return table[:, [JOINT_KINDS.index(k) for k in opts.friction.kinds]].reshape(-1)


def _joint_parameters(model, opts: Options, ls: LeastSquares, fitted: Fitted,
                      validated: Validated) -> tuple:  # fmt: skip
    """One ``JointParameters`` per joint."""
    import spatialjax.multibody as mb

    from ...multibody.joint_model import JOINT_KINDS

    jm = opts.joint_model
    fit, lsq = jm.as_table(model, fitted.friction), jm.as_table(model, ls.friction)
    share = (jm.as_table(model, validated.joint_share) if validated.joint_share is not None
             else np.full_like(fit, np.nan))  # fmt: skip
    file = mb.JointModel().as_table(model, mb.JointModel().file_values(model))
    jp = fitted.joint_prior
    std = np.full(len(opts.joints), np.nan)
    if jp is not None and "armature" in jm.kinds:
        w = np.asarray(jp.weights).reshape(len(opts.joints), -1)[:, jm.kinds.index("armature")]
        std = np.where(w > 0, 1.0 / np.sqrt(np.where(w > 0, w, 1.0)), np.nan)
    conf: dict = {}
    for (j, kind), partners in validated.identifiability.confounded:
        conf.setdefault(j, {})[kind] = tuple(tuple(p) for p in partners)
    rest = ls.rest_fraction if ls.rest_fraction is not None else np.zeros(len(opts.joints))
    if opts.floating_base and ls.rest_fraction is not None:  # per row: base rows first
        rest = rest[6 : 6 + len(opts.joints)]

    def row(x) -> dict:
        return {k: (None if np.isnan(v) else float(v)) for k, v in zip(JOINT_KINDS, x, strict=True)}

    out = []
    for i, j in enumerate(opts.joints):
        f = row(file[i])
        f["offset"] = None
        out.append(JointParameters(
            joint=j, fit=row(fit[i]), least_squares=row(lsq[i]), file=f,
            armature_prior_std=None if np.isnan(std[i]) else float(std[i]),
            data_share=row(share[i]), confounded=conf.get(j, {}), rest_fraction=float(rest[i]),
        ))  # fmt: skip
    return tuple(out)


def _floating_report(opts: Options, filtered: Filtered, regs: Regressors,
                     channels: Channels) -> FloatingBase | None:  # fmt: skip
    if not regs.rows:
        return None
    from . import floating

    rows, p0 = regs.rows[0], filtered.prepared[0]
    schedule = floating.schedule(p0)
    return FloatingBase(
        method=rows.method, contact_frames=rows.contact_frames, contact_type=opts.contact_type,
        schedule=schedule, contact_speed=opts.contact_speed if schedule == "detected" else None,
        rows_per_sample=floating.rows_per_sample(rows), equations=rows.n_equations,
        rows=rows.row_names, closed=floating.contact_share(rows), unknown_torques=regs.unknown,
        wrench_check=channels.base,
    )  # fmt: skip


def _report(model, opts: Options, prior: Prior, sampled: Sampled, filtered: Filtered,
            regs: Regressors, channels: Channels, ls: LeastSquares, fitted: Fitted,
            validated: Validated, times: dict,
            offset_notes: tuple[str, ...] = ()) -> IdentificationReport:  # fmt: skip
    """Every stage's findings as the typed report."""
    fm = opts.friction
    n_used = ls.samples_used
    # the data term's channels: the joints, or a floating base's rows
    channel_names = regs.rows[0].row_names if regs.rows else opts.joints

    def per_joint(x) -> dict:
        return dict(zip(channel_names, np.asarray(x).tolist(), strict=True))

    n_train, n_hold = regs.n_train, regs.n_hold
    return IdentificationReport(
        joints=opts.joints, links_identified=prior.free_names, gravity=opts.gravity,
        settings=_settings(opts, filtered), sampling=sampled.sampling[0],
        positions=sampled.positions, filter=filtered.choice,
        samples=Samples(raw=filtered.n_raw, raw_holdout=filtered.n_raw_hold,
                        after_decimation=n_train + n_hold, train=n_train, holdout=n_hold),
        prior_repairs=prior.repairs, channels=channels.checks, gamma=fitted.gamma,
        noise_std=per_joint(np.sqrt(ls.noise_var)),
        correlation_time=per_joint(ls.correlation_time),
        effective_samples=per_joint(n_used / ls.correlation_time),
        noise_weights=per_joint(ls.weights), links=validated.links,
        total_mass=validated.total_mass,
        friction=fm.to_dict(model, _friction_part(model, opts, fitted.friction)),
        friction_least_squares=fm.to_dict(model, _friction_part(model, opts, ls.friction)),
        joint_parameters=_joint_parameters(model, opts, ls, fitted, validated),
        errors=validated.errors,
        validation=validated.validation, identifiability=validated.identifiability,
        fit_status=FitSummary(status=fitted.status.name, converged=fitted.converged,
                              iterations=fitted.iterations, objective=fitted.objective),
        times=Times(compile_s=fitted.compile_s, solve_s=fitted.solve_s, stages_s=times),
        warnings=sampled.warnings + channels.warnings + fitted.warnings + validated.warnings,
        notes=channels.notes + offset_notes + validated.notes,
        floating_base=_floating_report(opts, filtered, regs, channels),
    )  # fmt: skip


def identify_robot(
    model,
    log: RobotLog,
    *,
    lowpass: float | str | None = "auto",
    decimate: int | str = "auto",
    joint_model=None,
    friction=None,
    gamma: float | None = None,
    prior_spread: float = PRIOR_SPREAD,
    holdout: float = DEFAULT_HOLDOUT,
    sample_weighting: str = "autocorrelation",
    repair_prior_bodies: bool = True,
    repair_floor: float = REPAIR_FLOOR,
    exclude_torque: Sequence[str] = (),
    torque_scale: Mapping[str, float] | None = None,
    free: Sequence[str] | None = None,
    validate: Sequence[RobotLog] = (),
    rate: float | None = None,
    max_gap: float | None = None,
    gravity=(0.0, 0.0, -9.81),
    ignore_limits: bool = False,
    contact_method: str = "auto",
    contact_type: str = "point",
    contact_speed: float = CONTACT_SPEED,
    progress: Callable[[str, str, Sequence[str]], None] | None = None,
) -> RobotIdentification:
    r"""Identify a robot's links and joint parameters from a joint-torque log.

    The stages and the weights of the data term are described in the
    identification guide (and this module's docstring). Computed in float64
    with NumPy and the model's dtype for the regressor (load the model with
    ``dtype="float64"`` under ``jax.enable_x64``).

    A floating-base robot (a model with a free flyer, loaded with
    ``floating_base=True``; a log with a base pose and contacts) is identified
    from the ``6 + n`` equations of each sample
    ([floating_base_rows][spatialjax.identification.floating_base_rows]): with
    the log's contact wrenches, or projected onto the closed contacts' null
    space. Every row is then a channel of the data term (its own noise level,
    correlation time and weight, times its ``multiplicity``); the errors are
    reported over each sample's equations, the base rows and the joint rows
    apart, and the report gains a ``floating_base`` section.

    Args:
      model: a [Model][spatialjax.multibody.Model] whose movable joints are
        the log's (lock the others when loading it:
        [match_joints][spatialjax.identification.match_joints] says which);
        its bodies are the prior, its joint limits bound the log's positions.
        Floating-base (a free flyer) exactly when the log has a base pose.
      log: the [RobotLog][spatialjax.identification.RobotLog];
        ``joint_names`` None means the model's joints in order, else they are
        matched by name (reordered). A floating-base log needs
        ``contact_frames`` (``()`` for a robot without contacts).
      lowpass: ``"auto"`` (default: the cut-off chosen from the training
        part's spectrum by
        [choose_filter][spatialjax.identification.choose_filter]; the report's
        ``filter`` says what and why), a Butterworth cut-off in Hz, or None
        (no filter: ``q`` differentiated raw).
      decimate: keep every ``decimate``-th sample after filtering; ``"auto"``
        (default): the largest factor whose Nyquist frequency stays at least
        twice the cut-off (1 without a low-pass).
      joint_model: the joint parameters fitted with the links: a
        [JointModel][spatialjax.multibody.JointModel], a tuple of its kinds or
        a string (``"armature,viscous,coulomb,offset"``, ``"none"``). Default:
        all four (armature, viscous = damping, Coulomb = friction loss,
        offset). The armature gets a weak prior around the model file's value
        ([joint_prior][spatialjax.identification.joint_prior]); where it shares a
        base parameter with the links (a fixed base's first joint's always),
        the priors decide the split and the report says so. A floating base's
        joint model is fitted alike (its columns are zero on the base rows); its
        offsets enter by the Bayesian information criterion: where they lower
        the weighted least-squares χ² by less than ``k ln n`` (the legs'
        gravity terms nearly constant in stance) they are held at 0 and a note
        says so (``_pipeline/offsets.py``).
      friction: deprecated: a [FrictionModel][spatialjax.multibody.FrictionModel]
        or a tuple of friction kinds, fitted with the armature
        (``joint_model=JointModel.from_friction(friction)``); a
        ``DeprecationWarning`` says so. Not with ``joint_model``.
      gamma: the prior's weight ``γ`` (default ``2 / prior_spread²``).
      prior_spread: ``s > 0`` of the default ``γ``.
      holdout: the last fraction ``[0, 1)`` of the log held out for validation.
      sample_weighting: ``"autocorrelation"``, ``"bandwidth"`` or
        ``"independent"`` (module docstring).
      repair_prior_bodies: repair prior bodies that are not strictly consistent
        (True) or refuse them (False).
      repair_floor: relative floor of repaired bodies, in ``(0, 1)``
        ([repair_prior][spatialjax.identification.repair_prior]).
      exclude_torque: joints whose torque channel leaves the data term.
      torque_scale: ``{joint: k}``: the channel is multiplied by ``k`` first
        (``k < 0`` flips its sign).
      free: links (moving bodies) to identify; the others are held at the
        model's values. Default: all.
      validate: other logs of the same robot, evaluated (not fitted), each
        checked, resampled and filtered on its own.
      rate: resampling rate in Hz (default: the median interval's).
      max_gap: the longest interval accepted in ``t``, s (default: the
        [resample_log][spatialjax.identification.resample_log] rule).
      gravity: world-frame gravitational acceleration ``(3,)`` (m/s²).
      ignore_limits: go on, with a warning, when a log's positions leave the
        model's joint limits by more than the margin (1 % of the range or 3
        encoder steps); by default that is an error (a log in degrees, of
        another robot, or a model with other joint zeros).
      contact_method: floating base: ``"wrenches"`` (all equations, with the
        log's contact wrenches), ``"projection"`` (onto the null space of the
        closed contacts), or ``"auto"`` (default: wrenches when the log has
        them); a fixed base takes ``"auto"`` only.
      contact_type: floating base: ``"point"`` (default: a contact keeps its
        frame's origin) or ``"surface"`` (its whole pose).
      contact_speed: floating base without a logged ``contact`` schedule: a
        contact counts as closed while its frame moves slower than this, m/s.
      progress: optional ``progress(stage, text, lines)`` called after each
        stage (``STAGES``: prior, sampling, filter, regressor, torques, least
        squares, fit, validate) with a one-line summary and detail lines.

    Returns:
      The [RobotIdentification][spatialjax.identification.RobotIdentification].

    Raises:
      IdentifyError: an argument or a log that cannot be used, naming the
        argument (``"log"``, ``"validate[k]"`` for a log, e.g. one whose
        positions leave the joint limits, naming the joint, or a floating-base
        log without base pose or with contact frames the model lacks, naming
        them; ``"model"`` for a fixed-base model with a floating-base log;
        ``"prior"`` for a model body, naming the link; ``"contact_method"``
        for ``"wrenches"`` without wrenches).
      TypeError: ``model`` not a Model or ``log`` not a RobotLog.

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, IEEE T-RO 36(2), 2020.
      K. Ayusawa, G. Venture, Y. Nakamura, IJRR 33(3), 2014 (floating base).
    """
    if friction is not None and joint_model is None:
        jm, _ = resolve_joint_model(None, friction)
        warnings.warn(
            f"identify_robot: friction= is deprecated; it now fits joint_model={jm.kinds} (the "
            "armature is fitted by default); pass joint_model= (a JointModel or its kinds, e.g. "
            f"{tuple(k for k in jm.kinds if k != 'armature')} without the armature)",
            DeprecationWarning,
            stacklevel=2,
        )
    opts = check_options(
        model, log, lowpass=lowpass, decimate=decimate, friction=friction,
        joint_model=joint_model, gamma=gamma,
        prior_spread=prior_spread, holdout=holdout, sample_weighting=sample_weighting,
        repair_prior_bodies=repair_prior_bodies, repair_floor=repair_floor,
        exclude_torque=exclude_torque, torque_scale=torque_scale, free=free, rate=rate,
        max_gap=max_gap, gravity=gravity, ignore_limits=ignore_limits,
        contact_method=contact_method, contact_type=contact_type, contact_speed=contact_speed,
    )  # fmt: skip
    clock = _Clock(progress)
    prior = clock.run("prior", prior_stage, model, opts)
    sampled = clock.run("sampling", sampling_stage, model, log, validate, opts)
    filtered = clock.run("filter", filter_stage, sampled.logs, lowpass=opts.lowpass,
                         decimate=opts.decimate, holdout=opts.holdout)  # fmt: skip
    regs = clock.run("regressor", regressor_stage, model, filtered, opts,
                     _unknown_torques(sampled, filtered, opts))  # fmt: skip
    channels = clock.run("torques", _torques, model, sampled, filtered, regs, prior, opts)
    data = training_data(regs.Y[0], regs.F[0], regs.tau[0], regs.held_torque(0, prior), prior,
                         channels, q=regs.q[0], moving=_moving(regs, opts),
                         rows=regs.rows[0] if regs.rows else None)  # fmt: skip
    choice = clock.run("least squares", least_squares_with_offsets, model, data, prior, opts,
                       sample_weighting=opts.sample_weighting, lowpass=filtered.lowpass,
                       rate=filtered.prepared[0].rate / filtered.decimate)  # fmt: skip
    ls, data = choice.ls, choice.data
    fitted = clock.run("fit", fit_stage, model, data, ls, prior, opts)
    validated = clock.run("validate", validate_stage, model, regs, data, ls, fitted, prior,
                          sampled.sampling, opts)  # fmt: skip
    typed = _report(model, opts, prior, sampled, filtered, regs, channels, ls, fitted, validated,
                    clock.times, choice.notes)  # fmt: skip
    jm = opts.joint_model
    return RobotIdentification(
        joints=opts.joints,
        body_names=opts.body_names,
        params={"fit": fitted.params, "least_squares": ls.params, "prior": prior.prior,
                "model": prior.model},
        friction={"fit": jm.as_table(model, fitted.friction)[:, 1:],
                  "least_squares": jm.as_table(model, ls.friction)[:, 1:]},
        report=typed.to_dict(),
        warnings=typed.warnings,
        notes=typed.notes,
        typed_report=typed,
        model=model,
        joint_parameters={"fit": jm.as_table(model, fitted.friction),
                          "least_squares": jm.as_table(model, ls.friction)},
    )  # fmt: skip
