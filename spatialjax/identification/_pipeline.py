r"""Whole-robot identification from a joint log, every stage: ``identify_robot``.

The stages (each reported through ``progress``):

1. **prior**: the model's bodies as the log-det prior; bodies that are not
   strictly inside the consistent set are repaired
   ([`repair_prior`][spatialjax.identification.repair_prior]) or, with ``repair_prior=False``,
   refused, naming the link.
2. **sampling**: a log whose time steps are irregular is resampled onto a
   uniform grid by ``t`` ([`resample_log`][spatialjax.identification.resample_log]: linear
   interpolation of ``q``, ``q̇``, ``τ``), at ``rate`` or at the median interval.
3. **filter**: the last ``holdout`` fraction of the log is held out; both
   parts are filtered, differentiated and decimated separately
   ([`prepare_log`][spatialjax.identification.prepare_log]), so nothing of the held-out samples
   reaches the fit.
4. **regressor**: ``τ = Y(q, q̇, q̈) π + Y_f(q̇) φ`` (RNEA regressor, Atkeson,
   An & Hollerbach 1986; friction: [`FrictionModel`][spatialjax.multibody.FrictionModel]);
   with a low-pass, its columns go through the torques' filter before
   decimation (parallel filtering, Gautier 1997:
   [`parallel_filter`][spatialjax.identification.parallel_filter]). With ``free``, the bodies not
   listed are held at the model's values: their torques are subtracted and their columns dropped.
5. **torques**: each channel's signal, scale and sign against the prior's
   prediction (``_channels``); channels without signal, and those in
   ``exclude_torque``, leave the data term (weight 0); ``torque_scale``
   multiplies a channel before everything.
6. **least squares**: ordinary least squares on the same columns and samples.
7. **fit**: [`fit_torques`][spatialjax.identification.fit_torques] with the (repaired) prior, the
   friction signs, and the data weights below.
8. **validate**: torque errors ``‖τ̂ − τ‖ / ‖τ‖`` of the fit, least squares
   and the prior on the training part, the held-out part and every
   ``validate`` log (filtered on its own), and per-link plausibility.

**Weights of the data term** (``sample_weighting``).
[`fit_torques`][spatialjax.identification.fit_torques]' default weights ``1/σ̂_j²`` make the data
term a χ² that counts every sample as independent. Filtered residuals are not: a zero-phase low-pass
at ``f_c`` leaves about ``N · 2 f_c / f_s`` independent samples, and model error
on real robots (friction shape, cables, an unmodelled payload, sensor drift)
is coloured, so the data would outweigh the prior by the residuals'
correlation time, and the excess goes into the directions the torques barely
see. ``"autocorrelation"`` (default) weighs joint ``j`` by ``1 / (σ̂_j² τ_j)``
with ``τ_j`` the integrated autocorrelation time of its least-squares
residuals ([`correlation_time`][spatialjax.identification.correlation_time]): the data term counts
``N / τ_j`` effective samples per joint, the likelihood of residuals correlated over
``τ_j`` samples. ``"bandwidth"`` takes only the filter into account: ``τ =
f_s / (2 f_c)`` at the rate ``f_s`` after decimation (a signal band-limited to
``f_c`` carries ``2 f_c`` independent values per second; ``τ = 1`` without a
low-pass). ``"independent"`` is ``τ_j = 1`` (the weights of
[`fit_torques`][spatialjax.identification.fit_torques]). ``σ̂_j²`` is the least-squares residual
energy of joint ``j`` over ``N − r/n_used`` (``r`` the rank), floored at
``eps · mean(τ_j²)``. ``γ`` keeps [`fit_torques`][spatialjax.identification.fit_torques]' rule,
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

import dataclasses
import functools
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import numpy as np

from ._channels import SCALE_LIMIT, check_channels
from ._correlation import correlation_time
from ._log import LogError, RobotLog
from ._prior import REPAIR_FLOOR, PriorError, repair_prior
from ._program import compile_seconds
from ._robot_fit import PRIOR_SPREAD

#: Stage names, in order, as passed to ``progress``.
STAGES = (
    "prior",
    "sampling",
    "filter",
    "regressor",
    "torques",
    "least squares",
    "fit",
    "validate",
)
#: Default held-out fraction of the log.
DEFAULT_HOLDOUT = 0.2
#: A link whose fitted mass differs from the prior's by more than this factor is flagged.
MASS_FLAG_RATIO = 2.0
SAMPLE_WEIGHTINGS = ("autocorrelation", "bandwidth", "independent")


class IdentifyError(ValueError):
    """An input of ``identify_robot`` that cannot be used, naming the argument.

    Attributes:
      argument: the keyword (``"lowpass"``, ``"holdout"``, ``"log"``,
        ``"validate[1]"``, ``"prior"``, ...).
      detail: the message without the argument's name.
    """

    def __init__(self, argument: str, detail: str):
        self.argument = argument
        self.detail = detail
        super().__init__(f"{argument}: {detail}")


@dataclasses.dataclass(frozen=True)
class RobotIdentification:
    """Everything ``identify_robot`` measured (arrays float64, ``report`` JSON-able).

    Attributes:
      joints: the identified joints, model order.
      body_names: the moving bodies (each joint's child link), model order.
      params: ``{"fit" | "least_squares" | "prior" | "model": (nb, 10)}``
        body 10-vectors (``prior`` after repair; ``model`` as in the model).
      friction: ``{"fit" | "least_squares": (n_joints, 3)}`` ``[viscous,
        coulomb, offset]`` per joint, NaN for kinds not fitted.
      report: the JSON-able report (schema: the ``spatialjax identify``
        documentation): options, samples, sampling, repairs, channels,
        weights, links (with plausibility), friction, errors, validation,
        identifiability, fit status, times.
      warnings: plain-words warnings (scale or sign of a channel, flagged links).
      notes: plain-words notes (repaired links, resampling, excluded channels).
    """

    joints: tuple[str, ...]
    body_names: tuple[str, ...]
    params: Mapping[str, np.ndarray]
    friction: Mapping[str, np.ndarray]
    report: dict
    warnings: tuple[str, ...]
    notes: tuple[str, ...]

    def to_json(self, *, indent: int | None = 1) -> str:
        """The report as JSON (NaN and infinities written as ``null``)."""
        return json.dumps(jsonable(self.report), indent=indent, allow_nan=False)

    def summary(self) -> str:
        """The printable tables: per link (mass, plausibility, data share), per joint errors."""
        return summary_table(self.report)

    def __str__(self) -> str:
        return self.summary()


# ------------------------------------------------------------------------------ helpers
def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def jsonable(x):
    """NumPy / JAX values to plain JSON (NaN and infinities to ``None``)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return _finite_or_none(x)
    if hasattr(x, "shape"):
        return jsonable(np.asarray(x).tolist())
    return x


def _rel(err: np.ndarray, ref: np.ndarray) -> float | None:
    d = float(np.linalg.norm(ref))
    return float(np.linalg.norm(err)) / d if d > 0 else None


def _errors(tau_hat: np.ndarray, tau: np.ndarray, joints, used: np.ndarray) -> dict | None:
    """``{"overall": e, "per_joint": {joint: e}}``; overall over the channels in use."""
    if tau.shape[0] == 0:
        return None
    e = tau_hat - tau
    return {
        "overall": _rel(e[:, used], tau[:, used]),
        "per_joint": {j: _rel(e[:, k], tau[:, k]) for k, j in enumerate(joints)},
    }


def _slice_log(log: RobotLog, start: int, stop: int) -> RobotLog:
    def cut(x):
        return None if x is None else x[start:stop]

    return RobotLog(
        t=log.t[start:stop], q=log.q[start:stop], tau=log.tau[start:stop], dq=cut(log.dq),
        ddq=cut(log.ddq), joint_names=log.joint_names,
    )  # fmt: skip


def _scaled_log(log: RobotLog, scale: np.ndarray) -> RobotLog:
    if np.all(scale == 1.0):
        return log
    return dataclasses.replace(log, tau=log.tau * scale[None, :])


def _option_error(e: Exception, part: str, n: int, holdout: float, lowpass) -> IdentifyError:
    """A ``prepare_log``/``parallel_filter`` error as one naming the argument at fault."""
    head, _, rest = str(e).partition(":")
    arg = head.strip()
    if arg in ("lowpass", "decimate"):
        return IdentifyError(arg, f"{rest.strip()} (the {part}: {n} samples)")
    text = str(e).removeprefix("log: ")
    if "too few" in text:
        if part == "training part" and lowpass is not None:
            return IdentifyError(
                "lowpass",
                f"{lowpass:g} Hz: its filter's edges leave nothing of the {part}: {text}; raise "
                "lowpass or record a longer log",
            )
        if part == "held-out part":
            return IdentifyError(
                "holdout", f"{holdout}: the held-out part is too short to filter: {text}"
            )
    return IdentifyError("log", f"the {part} ({n} samples): {text}")


def _check_free(free, body_names) -> np.ndarray:
    """Boolean mask of the bodies to identify."""
    nb = len(body_names)
    if free is None:
        return np.ones(nb, bool)
    if isinstance(free, str):
        raise IdentifyError("free", f"expected a sequence of link names, got the string {free!r}")
    names = list(free)
    if not names:
        raise IdentifyError("free", "expected at least one link name, got none")
    for n in names:
        if n not in body_names:
            raise IdentifyError(
                "free",
                f"{n!r} is no moving body of the model (moving bodies, each a joint's child link: "
                f"{', '.join(body_names)})",
            )
    if len(set(names)) != len(names):
        raise IdentifyError("free", f"a link is named twice in {names}")
    return np.array([b in names for b in body_names])


def _per_joint(mapping, joints, what: str, *, default: float) -> np.ndarray:
    """A ``{joint: value}`` option as a per-joint array."""
    out = np.full(len(joints), default, np.float64)
    for name, value in dict(mapping or {}).items():
        if name not in joints:
            raise IdentifyError(
                what, f"{name!r} is no identified joint (joints: {', '.join(joints)})"
            )
        v = float(value)
        if not math.isfinite(v) or v == 0:
            raise IdentifyError(what, f"{name!r}: expected a finite non-zero factor, got {value!r}")
        out[joints.index(name)] = v
    return out


def _sampling(log: RobotLog, rate, max_gap, argument: str):
    """``(log, info)``: the log on a uniform grid, and what was done."""
    from ._resample import resample_log

    try:
        new, rep = resample_log(log, rate=rate, max_gap=max_gap)
    except LogError as e:  # the log is the argument: its message without the "RobotLog" source
        raise IdentifyError(argument, str(e).removeprefix(f"{e.source}: ")) from None
    except (TypeError, ValueError) as e:
        head, _, rest = str(e).partition(":")
        if head.strip() in ("rate", "max_gap"):
            raise IdentifyError(head.strip(), rest.strip()) from None
        raise IdentifyError(argument, str(e)) from None
    return new, rep


# ------------------------------------------------------------------------------ pipeline
def identify_robot(
    model,
    log: RobotLog,
    *,
    lowpass: float | None = None,
    decimate: int = 1,
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
    progress: Callable[[str, str, Sequence[str]], None] | None = None,
) -> RobotIdentification:
    r"""Identify a fixed-base robot's links (and joint friction) from a joint-torque log.

    The stages and the weights of the data term are described in the module
    docstring. Computed in float64 with NumPy and the model's dtype for the
    regressor (load the model with ``dtype="float64"`` under
    ``jax.enable_x64``).

    Args:
      model: a fixed-base [`Model`][spatialjax.multibody.Model] whose movable
        joints are the log's (lock the others when loading it:
        [`match_joints`][spatialjax.identification.match_joints] says which); its bodies are the
        prior.
      log: the [`RobotLog`][spatialjax.identification.RobotLog]; ``joint_names`` None means the
        model's joints in order, else they are matched by name (reordered).
      lowpass: Butterworth cut-off in Hz (None: no filter).
      decimate: keep every ``decimate``-th sample after filtering.
      friction: a [`FrictionModel`][spatialjax.multibody.FrictionModel] (default: all
        three kinds), or a tuple of kinds.
      gamma: the prior's weight ``γ`` (default ``2 / prior_spread²``).
      prior_spread: ``s`` of the default ``γ``.
      holdout: the last fraction ``[0, 1)`` of the log held out for validation.
      sample_weighting: ``"autocorrelation"``, ``"bandwidth"`` or
        ``"independent"`` (module docstring).
      repair_prior_bodies: repair prior bodies that are not strictly consistent
        (True) or refuse them (False).
      repair_floor: relative floor of repaired bodies
        ([`repair_prior`][spatialjax.identification.repair_prior]).
      exclude_torque: joints whose torque channel leaves the data term.
      torque_scale: ``{joint: k}``: the channel is multiplied by ``k`` first
        (``k < 0`` flips its sign).
      free: links (moving bodies) to identify; the others are held at the
        model's values. Default: all.
      validate: other logs of the same robot, evaluated (not fitted), each
        resampled and filtered on its own.
      rate: resampling rate in Hz (default: the median interval's).
      max_gap: the longest interval accepted in ``t``, s (default: the
        [`resample_log`][spatialjax.identification.resample_log] rule).
      gravity: world-frame gravitational acceleration (m/s²).
      progress: optional ``progress(stage, text, lines)`` called after each
        stage (``STAGES``) with a one-line summary and detail lines.

    Returns:
      [`RobotIdentification`][spatialjax.identification.RobotIdentification].

    Raises:
      IdentifyError: an argument or a log that cannot be used, naming the
        argument (``"log"``, ``"validate[k]"`` for a log; ``"prior"`` for a
        model body, naming the link).
      TypeError: ``model`` not a Model or ``log`` not a RobotLog.

    References:
      P. M. Wensing, S. Kim, J.-J. E. Slotine, IEEE RA-L 3(1), 2017.
      T. Lee, P. M. Wensing, F. C. Park, IEEE T-RO 36(2), 2020.
    """
    import jax
    import jax.numpy as jnp

    import spatialjax.multibody as mb

    from ._export import body_metrics
    from ._identifiability import identifiability
    from ._log import match_joints
    from ._preprocess import parallel_filter, prepare_log
    from ._robot_fit import fit_torques, least_squares_torques
    from ._status import FitStatus

    def report_stage(stage, text, lines=()):
        if progress is not None:
            progress(stage, text, tuple(lines))

    if not isinstance(model, mb.Model):
        raise TypeError(f"model: expected a spatialjax.multibody.Model, got {type(model).__name__}")
    if not isinstance(log, RobotLog):
        raise TypeError(f"log: expected a RobotLog, got {type(log).__name__}")
    if model.floating_base or "free_flyer" in model.joint_types:
        raise IdentifyError(
            "model", "a floating-base model; identify_robot handles fixed-base robots"
        )
    fm = _friction_model(friction)
    if sample_weighting not in SAMPLE_WEIGHTINGS:
        raise IdentifyError(
            "sample_weighting", f"expected one of {SAMPLE_WEIGHTINGS}, got {sample_weighting!r}"
        )
    if isinstance(holdout, bool) or not (isinstance(holdout, (int, float)) and 0 <= holdout < 1):
        raise IdentifyError("holdout", f"expected a fraction in [0, 1), got {holdout!r}")
    if isinstance(decimate, bool) or not (
        isinstance(decimate, (int, np.integer)) and decimate >= 1
    ):
        raise IdentifyError("decimate", f"expected an integer >= 1, got {decimate!r}")
    if lowpass is not None and (
        isinstance(lowpass, bool)
        or not isinstance(lowpass, (int, float))
        or not (math.isfinite(lowpass) and lowpass > 0)
    ):
        raise IdentifyError("lowpass", f"expected a cut-off frequency > 0 in Hz, got {lowpass!r}")
    if gamma is not None and not (math.isfinite(gamma) and gamma >= 0):
        raise IdentifyError("gamma", f"expected a finite number >= 0, got {gamma!r}")
    if isinstance(exclude_torque, str):
        raise IdentifyError(
            "exclude_torque",
            f"expected a sequence of joint names, got the string {exclude_torque!r}",
        )
    joints = tuple(model.joint_names)
    nv, nb = model.nv, model.nbodies
    body_names = tuple(model.body_names)
    for name in exclude_torque:
        if name not in joints:
            raise IdentifyError(
                "exclude_torque", f"{name!r} is no identified joint (joints: {', '.join(joints)})"
            )
    scale = _per_joint(torque_scale, joints, "torque_scale", default=1.0)
    free_mask = _check_free(free, body_names)

    # 1. prior ---------------------------------------------------------------------------
    t0 = time.perf_counter()
    times: dict[str, float] = {}

    def lap(stage):
        nonlocal t0
        times[stage] = time.perf_counter() - t0
        t0 = time.perf_counter()

    pi_model = np.asarray(model.inertia.params, np.float64).reshape(nb, 10)
    pi_free_model = pi_model[free_mask]
    free_names = [b for b, f in zip(body_names, free_mask, strict=True) if f]
    try:
        pi_rep, repairs = repair_prior(pi_free_model, free_names, floor=repair_floor)
        if repairs and not repair_prior_bodies:
            r = repairs[0]
            raise PriorError(
                r.body,
                r.name,
                f"is not strictly physically consistent ({r.reason}); the log-det prior needs "
                "J0 ≻ 0 (let it be repaired, or fix the model file: spatialjax check --fix)",
            )
    except PriorError as e:
        raise IdentifyError("prior", str(e).removeprefix("prior: ")) from None
    pi_prior = pi_model.copy()
    pi_prior[free_mask] = pi_rep
    lines = [
        f"repaired {r.name}: {r.reason}; principal moments {_vec(r.principal_moments_before)} → "
        f"{_vec(r.principal_moments_after)} kg m² (relative change {r.relative_change:.2g}); "
        "mass and CoM kept"
        for r in repairs
    ]
    n_free = int(free_mask.sum())
    lap("prior")
    report_stage(
        "prior",
        f"{n_free} of {nb} bodies identified"
        + (f" ({', '.join(free_names)}; the others held)" if n_free < nb else "")
        + (f"; {len(repairs)} repaired" if repairs else "; all strictly consistent"),
        lines,
    )

    # 2. sampling ------------------------------------------------------------------------
    logs = [("log", log)] + [(f"validate[{k}]", v) for k, v in enumerate(validate)]
    matched = []
    for arg, lg in logs:
        if not isinstance(lg, RobotLog):
            raise TypeError(f"{arg}: expected a RobotLog, got {type(lg).__name__}")
        try:
            m = match_joints(lg, _Movable(model))
        except ValueError as e:
            raise IdentifyError(arg, str(e).removeprefix("log: ")) from None
        if m.locked:
            raise IdentifyError(
                arg,
                f"lacks the model's joints {', '.join(m.locked)}: lock them when loading the model "
                "(Model.from_urdf(..., locked_joints=...))",
            )
        matched.append(m.apply(lg))
    sampled, sampling_info = [], []
    for (arg, _), lg in zip(logs, matched, strict=True):
        new, info = _sampling(lg, rate, max_gap, arg)
        sampled.append(_scaled_log(new, scale))
        sampling_info.append(info)
    log = sampled[0]
    info = sampling_info[0]
    lap("sampling")
    report_stage("sampling", _sampling_text(info), ())

    # 3. filter --------------------------------------------------------------------------
    n_raw = log.n_samples
    n_raw_hold = int(round(n_raw * holdout)) if holdout else 0
    if holdout and n_raw_hold < 2:
        raise IdentifyError(
            "holdout", f"{holdout} of {n_raw} samples holds out {n_raw_hold}; at least 2 are needed"
        )
    if n_raw - n_raw_hold < 2:
        raise IdentifyError("holdout", f"{holdout} leaves {n_raw - n_raw_hold} training samples")
    parts = [("training part", _slice_log(log, 0, n_raw - n_raw_hold))]
    if n_raw_hold:
        parts.append(("held-out part", _slice_log(log, n_raw - n_raw_hold, n_raw)))
    parts += [(f"validation log {k}", lg) for k, lg in enumerate(sampled[1:])]
    K = int(decimate)
    preps = []
    for k, (part, lg) in enumerate(parts):
        try:
            preps.append(prepare_log(lg, lowpass=lowpass, decimate=1 if lowpass else K))
        except LogError as e:
            raise IdentifyError("log" if k < 2 else f"validate[{k - len(parts) + len(validate)}]",
                                str(e)) from None  # fmt: skip
        except ValueError as e:
            raise _option_error(e, part, lg.n_samples, holdout, lowpass) from None
    if lowpass and not lowpass < preps[0].rate / (2 * K):
        raise IdentifyError(
            "decimate",
            f"{K} puts the Nyquist frequency at {preps[0].rate / (2 * K):g} Hz, below the lowpass "
            f"cut-off {lowpass:g} Hz (log at {preps[0].rate:g} Hz); decimate less or lower lowpass",
        )
    filt = (
        f"zero-phase Butterworth low-pass {lowpass:g} Hz (order {preps[0].order})"
        if lowpass
        else f"no low-pass, decimated by {K}"
    )
    lap("filter")
    report_stage(
        "filter",
        f"{filt}; training part {preps[0].n_samples} samples"
        + (
            f", held-out part (the last {n_raw_hold} raw samples) {preps[1].n_samples}"
            if n_raw_hold
            else ""
        )
        + (f", {len(validate)} validation log(s)" if validate else "")
        + f" at {preps[0].rate:.4g} Hz",
    )

    # 4. regressor -----------------------------------------------------------------------
    g = jnp.asarray(gravity, model.dtype)

    def reg(q, dq, ddq):
        return _regressors(model, q, dq, ddq, g, fm.kinds)

    Ys, Fs, taus, dqs = [], [], [], []
    for (part, _), p in zip(parts, preps, strict=True):
        Yp, Fp = reg(*(jnp.asarray(getattr(p, k), model.dtype) for k in ("q", "dq", "ddq")))
        Yp, Fp = np.asarray(Yp, np.float64), np.asarray(Fp, np.float64)
        if lowpass:
            try:
                if Fp.shape[-1]:
                    p, Yp, Fp = parallel_filter(p, Yp, Fp, decimate=K)
                else:
                    p, Yp = parallel_filter(p, Yp, decimate=K)
                    Fp = np.zeros((Yp.shape[0], nv, 0))
            except ValueError as e:
                raise _option_error(e, part, p.n_samples, holdout, lowpass) from None
        Ys.append(np.asarray(Yp))
        Fs.append(np.asarray(Fp))
        taus.append(np.asarray(p.tau, np.float64))
        dqs.append(np.asarray(p.dq, np.float64))
    sizes = [y.shape[0] for y in Ys]
    n_train = sizes[0]
    n_hold = sizes[1] if n_raw_hold else 0
    cols = np.repeat(free_mask, 10)
    # bodies held at the model: their torques leave τ, their columns the regressor
    held = [Y[..., ~cols] @ pi_model[~free_mask].reshape(-1) for Y in Ys]
    Yfree = [Y[..., cols] for Y in Ys]
    ne = Fs[0].shape[-1]
    n_params = 10 * n_free + ne
    if n_train * nv <= n_params:
        raise IdentifyError(
            "log",
            f"column 't': {n_train} training samples (after filtering and decimation by {K}) give "
            f"{n_train * nv} joint-torque equations, not more than the {n_params} parameters to "
            "identify (10 per body + joint friction); record a longer log or decimate less",
        )
    lap("regressor")
    report_stage(
        "regressor",
        f"Y {nv}×{10 * nb} (10 per body"
        + (f"; {10 * n_free} columns of the {n_free} free bodies" if n_free < nb else "")
        + f") + {ne} friction columns per sample"
        + (", parallel-filtered (Gautier 1997)" if lowpass else "")
        + f", decimated by {K}: fit on {n_train} samples, {n_hold} held out",
    )

    # 5. torque channels -----------------------------------------------------------------
    Ytr, Ftr, ttr = Yfree[0], Fs[0], taus[0] - held[0]
    tau_prior_tr = Ys[0] @ pi_prior.reshape(-1)
    # the signal check reads the log as recorded (before resampling blurs its quantisation)
    raw = matched[0]
    raw_train = raw.tau[raw.t <= parts[0][1].t[-1]] * scale[None, :]
    checks = check_channels(
        joints, raw_train, taus[0], tau_prior_tr, tuple(exclude_torque), dq=dqs[0]
    )
    used = np.array([not c.excluded for c in checks])
    if not used.any():
        raise IdentifyError(
            "log",
            "no torque channel is left to fit: "
            + "; ".join(f"{c.joint}: {c.reason}" for c in checks),
        )
    # friction columns act on their own joint's row only: a channel left out leaves them
    # undetermined, so they are not fitted (reported as null, no friction predicted there)
    fjoint = np.array([joints.index(j) for j, _ in fm.names(model)], int)
    fkeep = used[fjoint] if ne else np.zeros(0, bool)
    Ftr = Ftr[..., fkeep]
    nf = int(fkeep.sum())

    def full_phi(phi):
        out = np.full(ne, np.nan)
        out[fkeep] = phi
        return out

    warnings, notes = [], []
    lines = []
    for c, k in zip(checks, scale, strict=True):
        if c.excluded:
            msg = f"{c.joint}: {c.reason}; left out of the fit (the joint still moves the others)"
            notes.append(msg)
            lines.append("note: " + msg)
        elif c.scale_flagged:
            kind = (
                "the opposite sign of"
                if c.scale <= 0
                else f"{c.scale:.3g}× (more than {SCALE_LIMIT:g}× off)"
            )
            msg = (
                f"{c.joint}: measured torques are {kind} the torques the prior predicts "
                f"(rms ratio {c.rms_ratio:.3g}): units, gear ratio or sign convention? "
                f"(torque_scale {c.joint}={k / c.scale:.3g} would match the prior)"
            )
            warnings.append(msg)
            lines.append("warning: " + msg)
    for name, k in zip(joints, scale, strict=True):
        if k != 1.0:
            notes.append(f"{name}: torques multiplied by {k:g} (torque_scale)")
    lap("torques")
    report_stage(
        "torques",
        f"{int(used.sum())} of {nv} channels fitted"
        + (f"; {len(warnings)} scale/sign warning(s)" if warnings else "; scales and signs agree"),
        lines,
    )

    # 6. least squares -------------------------------------------------------------------
    mask = used.astype(np.float64)
    pi_ls_f, phi_ls = jax.jit(least_squares_torques)(
        jnp.asarray(Ytr), jnp.asarray(ttr), extra=jnp.asarray(Ftr) if nf else None,
        weights=jnp.asarray(mask),
    )  # fmt: skip
    pi_ls_f = np.asarray(pi_ls_f, np.float64).reshape(n_free, 10)
    phi_ls = np.zeros(0) if phi_ls is None else np.asarray(phi_ls, np.float64).reshape(-1)
    pi_ls = pi_model.copy()
    pi_ls[free_mask] = pi_ls_f
    # per-joint noise level and correlation time of the least-squares residuals
    X = np.concatenate([Ytr, Ftr], -1)
    res_ls = ttr - X @ np.concatenate([pi_ls_f.reshape(-1), phi_ls])
    phi_ls = full_phi(phi_ls)
    Xu = X[:, used].reshape(-1, X.shape[-1])
    d = np.linalg.norm(Xu, axis=0)
    live = d > np.sqrt(np.finfo(np.float64).eps) * d.max()
    rank = int(np.linalg.matrix_rank(Xu[:, live] / d[live]))
    dof = n_train * (1.0 - rank / (n_train * int(used.sum())))
    sigma2 = np.sum(res_ls**2, axis=0) / max(dof, 1.0)
    floor = np.finfo(np.float64).eps * np.mean(ttr**2, axis=0)
    sigma2 = np.maximum(sigma2, np.where(floor > 0, floor, np.finfo(np.float64).tiny))
    if sample_weighting == "autocorrelation":
        tau_c = correlation_time(res_ls)
    elif sample_weighting == "bandwidth" and lowpass:
        # a signal band-limited to f_c carries 2 f_c independent values per second
        tau_c = np.full(nv, max(1.0, preps[0].rate / K / (2.0 * lowpass)))
    else:
        tau_c = np.ones(nv)
    weights = np.where(used, 1.0 / (sigma2 * tau_c), 0.0)
    lap("least squares")
    report_stage(
        "least squares",
        f"{10 * n_free + ne} parameters (minimum norm); residual correlation time "
        f"{_range(tau_c[used])} samples ({sample_weighting} weighting: "
        f"{_range(n_train / tau_c[used], '.0f')} effective samples per joint)",
    )

    # 7. fit -----------------------------------------------------------------------------
    nonneg = fm.nonnegative(model)
    from .._inertia import RigidBodyInertia

    prior = RigidBodyInertia(jnp.asarray(pi_rep, model.dtype))
    fit_kw: dict[str, Any] = {
        "prior": prior,
        "extra": jnp.asarray(Ftr) if nf else None,
        "extra_nonnegative": nonneg[fkeep] if nf else None,
        "weights": jnp.asarray(weights),
        "gamma": gamma,
        "prior_spread": prior_spread,
    }
    try:
        tf = time.perf_counter()
        with compile_seconds() as compiled:
            res = jax.block_until_ready(fit_torques(jnp.asarray(Ytr), jnp.asarray(ttr), **fit_kw))
        t_fit = time.perf_counter() - tf
    except ValueError as e:
        raise IdentifyError("log", f"the fit failed: {e}") from None
    t_compile = compiled.value
    t_solve = max(0.0, t_fit - t_compile)
    pi_fit = pi_model.copy()
    pi_fit[free_mask] = np.asarray(res.inertia.params, np.float64).reshape(n_free, 10)
    phi_fit = full_phi(np.asarray(res.extra, np.float64).reshape(-1))
    gamma_used = float(np.asarray(res.gamma))
    converged = bool(np.all(np.asarray(res.converged)))
    iters = int(np.max(np.asarray(res.iterations)))
    status = FitStatus(int(np.max(np.asarray(res.status))))
    if status not in (FitStatus.CONVERGED, FitStatus.NOT_CONVERGED):
        raise IdentifyError("log", f"the fit failed: {FitStatus.describe(status)}")
    if not converged:
        warnings.append(f"the fit did not converge: {FitStatus.describe(status)}")
    lap("fit")
    report_stage(
        "fit",
        f"{'converged' if converged else 'NOT converged'} in {iters} iterations, gamma "
        f"{gamma_used:.3g}; compile {t_compile:.2f} s, solve {t_solve:.3f} s",
    )

    # 8. validate ------------------------------------------------------------------------
    phi0 = np.zeros(ne)

    def predict(k, pi, phi):
        return Ys[k] @ pi.reshape(-1) + (Fs[k] @ np.nan_to_num(phi) if ne else 0.0)

    sets = {"fit": (pi_fit, phi_fit), "least_squares": (pi_ls, phi_ls), "prior": (pi_prior, phi0)}
    errors = {
        name: {
            "train": _errors(predict(0, *x), taus[0], joints, used),
            "holdout": _errors(predict(1, *x), taus[1], joints, used) if n_raw_hold else None,
        }
        for name, x in sets.items()
    }
    first_val = 2 if n_raw_hold else 1
    validation = []
    for k in range(len(validate)):
        i = first_val + k
        validation.append(
            {
                "samples": int(taus[i].shape[0]),
                "sampling": dataclasses.asdict(sampling_info[k + 1]),
                "errors": {n: _errors(predict(i, *x), taus[i], joints, used)
                           for n, x in sets.items()},
            }
        )  # fmt: skip
    idf = identifiability(
        jnp.asarray(Ytr),
        extra=jnp.asarray(Ftr) if nf else None,
        weights=jnp.asarray(weights),
        prior=prior,
        gamma=gamma_used,
        names=_names(free_names, fm, model, fkeep),
    )
    share_free = np.asarray(idf.data_share, np.float64).reshape(-1)
    rank_i, cond = int(np.asarray(idf.rank)), float(np.asarray(idf.condition_number))
    base = np.asarray(idf.base_columns)[:rank_i].tolist()
    names = _names(free_names, fm, model, fkeep)
    summ = body_metrics(
        np.concatenate([pi_fit, pi_ls, pi_prior]), np.concatenate([pi_prior, pi_prior, pi_prior])
    )
    links = []
    fi = 0
    for b in range(nb):
        d = {"link": body_names[b], "joint": joints[b], "free": bool(free_mask[b])}
        d["fit"] = _body_dict(pi_fit[b], summ, b, True)
        d["least_squares"] = _body_dict(pi_ls[b], summ, nb + b, True)
        d["prior"] = _body_dict(pi_prior[b], summ, 2 * nb + b, False)
        if free_mask[b]:
            d["data_share"] = share_free[10 * fi : 10 * fi + 10].tolist()
            fi += 1
        else:
            d["data_share"] = [0.0] * 10
        d["plausibility"] = _plausibility(pi_fit[b], pi_prior[b], d["data_share"])
        links.append(d)
        pl = d["plausibility"]
        if pl["flagged"]:
            warnings.append(
                f"{body_names[b]}: mass {pi_prior[b, 0]:.3g} → {pi_fit[b, 0]:.3g} kg "
                f"({pl['mass_ratio']:.2f}× the prior; data share of the mass "
                f"{pl['data_share_mass']:.2f}): check the log and the model"
            )
    m_fit, m_prior = float(pi_fit[:, 0].sum()), float(pi_prior[:, 0].sum())
    part = "holdout" if n_raw_hold else "train"
    e_fit = _overall(errors["fit"][part])
    e_ls = _overall(errors["least_squares"][part])
    what = "held-out" if n_raw_hold else "training"
    lap("validate")
    report_stage(
        "validate",
        f"{what} torque error: fit {e_fit:.4f}, least squares {e_ls:.4f}"
        + (f"; {len(validate)} validation log(s)" if validate else "")
        + f"; total mass {m_prior:.3f} → {m_fit:.3f} kg",
    )

    report = {
        "joints": list(joints),
        "links_identified": free_names,
        "gravity": [float(x) for x in np.asarray(gravity)],
        "settings": {
            "lowpass": lowpass,
            "decimate": K,
            "friction": list(fm.kinds),
            "gamma": gamma,
            "prior_spread": prior_spread,
            "holdout": holdout,
            "sample_weighting": sample_weighting,
            "repair_prior": repair_prior_bodies,
            "repair_floor": repair_floor,
            "exclude_torque": list(exclude_torque),
            "torque_scale": {j: float(k) for j, k in zip(joints, scale, strict=True) if k != 1},
            "free": None if free is None else list(free),
            "rate": rate,
            "max_gap": max_gap,
        },
        "sampling": dataclasses.asdict(info),
        "samples": {
            "raw": n_raw,
            "raw_holdout": n_raw_hold,
            "after_decimation": n_train + n_hold,
            "train": n_train,
            "holdout": n_hold,
        },
        "prior_repairs": [r.to_dict() for r in repairs],
        "channels": [c.to_dict() for c in checks],
        "gamma": gamma_used,
        "noise_std": dict(zip(joints, np.sqrt(sigma2).tolist(), strict=True)),
        "correlation_time": dict(zip(joints, tau_c.tolist(), strict=True)),
        "effective_samples": dict(zip(joints, (n_train / tau_c).tolist(), strict=True)),
        "noise_weights": dict(zip(joints, weights.tolist(), strict=True)),
        "links": links,
        "total_mass": {"fit": m_fit, "least_squares": float(pi_ls[:, 0].sum()), "prior": m_prior},
        "friction": fm.to_dict(model, phi_fit),
        "friction_least_squares": fm.to_dict(model, phi_ls),
        "errors": errors,
        "validation": validation,
        "identifiability": {
            "rank": rank_i,
            "n_columns": int(share_free.size),
            "condition_number": cond,
            "base_columns": base,
            "base_parameters": [list(names[i]) for i in base],
            "n_unidentifiable": int(share_free.size) - rank_i,
            "prior_decided": [list(x) for x in idf.prior_decided()],
        },
        "fit_status": {
            "status": status.name,
            "converged": converged,
            "iterations": iters,
            "objective": float(np.asarray(res.objective)),
        },
        "times": {"compile_s": t_compile, "solve_s": t_solve, "stages_s": times},
        "warnings": list(warnings),
        "notes": list(notes),
    }
    return RobotIdentification(
        joints=joints,
        body_names=body_names,
        params={"fit": pi_fit, "least_squares": pi_ls, "prior": pi_prior, "model": pi_model},
        friction={
            "fit": fm.as_table(model, phi_fit),
            "least_squares": fm.as_table(model, phi_ls),
        },
        report=report,
        warnings=tuple(warnings),
        notes=tuple(notes),
    )


@functools.partial(jax.jit, static_argnames=("kinds",))
def _regressors(model, q, dq, ddq, g, kinds):
    """Joint-torque and friction regressors, one compiled program per model shape and kinds."""
    import spatialjax.multibody as mb

    return mb.joint_torque_regressor(model, q, dq, ddq, g), mb.FrictionModel(kinds).regressor(
        model, dq
    )


class _Movable:
    """The attributes ``match_joints`` reads, for a model already locked as the log needs."""

    def __init__(self, model):
        self.floating_base = False
        self.name = model.name
        self.joint_names = tuple(model.joint_names)
        self.joint_types = tuple(model.joint_types)


def _friction_model(friction):
    from ..multibody import FrictionModel

    if friction is None:
        return FrictionModel()
    if isinstance(friction, FrictionModel):
        return friction
    if isinstance(friction, str):
        try:
            return FrictionModel.parse(friction)
        except ValueError as e:
            raise IdentifyError("friction", str(e)) from None
    try:
        return FrictionModel(tuple(friction))
    except (TypeError, ValueError) as e:
        raise IdentifyError("friction", str(e).partition(": ")[2] or str(e)) from None


def _names(free_names, fm, model, fkeep) -> tuple:
    from ._identifiability import PARAMETER_NAMES

    fr = tuple(n for n, k in zip(fm.names(model), fkeep, strict=True) if k)
    return tuple((b, p) for b in free_names for p in PARAMETER_NAMES) + fr


def _overall(e: dict | None) -> float:
    return float("nan") if e is None or e["overall"] is None else float(e["overall"])


def _vec(v) -> str:
    return "[" + ", ".join(f"{x:.4g}" for x in v) + "]"


def _range(x, fmt=".3g") -> str:
    x = np.asarray(x)
    lo, hi = float(x.min()), float(x.max())
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{lo:{fmt}}–{hi:{fmt}}"


def _sampling_text(info) -> str:
    d = dataclasses.asdict(info)
    if not d.get("resampled"):
        return f"uniform at {d['rate']:.4g} Hz ({d['n_out']} samples); no resampling"
    return (
        f"irregular intervals (min {d['min_interval'] * 1e3:.3g}, median "
        f"{d['median_interval'] * 1e3:.3g}, max {d['max_interval'] * 1e3:.3g} ms; "
        f"{100 * d['off_share']:.0f} % more than 10 % off the median): resampled by t onto a "
        f"uniform {d['rate']:.4g} Hz grid ({d['n_out']} samples, linear interpolation)"
    )


def _body_dict(p: np.ndarray, s: dict, k: int, with_distance: bool) -> dict:
    m = float(p[0])
    d: dict[str, Any] = {
        "params": p.tolist(),
        "mass": m,
        "com": (np.asarray(p[1:4]) / m).tolist() if m != 0 else None,
        "principal_moments": s["principal_moments"][k].tolist(),
        "consistent": bool(s["consistent"][k]),
        "margins": {
            "min_eig_inertia_com": float(s["min_eig_inertia_com"][k]),
            "triangle_margin": float(s["triangle_margin"][k]),
            "min_eig_pseudo_inertia": float(s["min_eig_pseudo_inertia"][k]),
        },
    }
    if with_distance:
        d["geodesic_to_prior"] = _finite_or_none(s["geodesic"][k])
    return d


def _plausibility(p: np.ndarray, p0: np.ndarray, share) -> dict:
    """Mass ratio and CoM shift of a fitted body against its prior; flagged beyond 2× either way."""
    m, m0 = float(p[0]), float(p0[0])
    ratio = m / m0
    c = p[1:4] / m if m > 0 else np.full(3, np.nan)
    shift = float(np.linalg.norm(c - p0[1:4] / m0))
    flagged = not (1 / MASS_FLAG_RATIO <= ratio <= MASS_FLAG_RATIO)
    return {
        "mass_ratio": ratio,
        "com_shift": shift,
        "data_share_mass": float(share[0]),
        "flagged": bool(flagged),
    }


# ------------------------------------------------------------------------------ printing
def _g(x, fmt=".4g") -> str:
    return "—" if x is None else format(x, fmt)


def _share_text(share) -> str:
    vals = [x for x in share if x is not None and math.isfinite(x)]
    lo, hi = (max(0.0, x) + 0.0 for x in (min(vals), max(vals))) if vals else (0.0, 0.0)
    return f"{lo:.2f}–{hi:.2f}" if vals else "—"  # display only: -1e-17 is 0.00


def _table(rows: list) -> list[str]:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]


def summary_table(report: dict) -> str:
    """The tables printed at the end: per link, then per joint (and per validation log)."""
    rows = [
        (
            "link",
            "mass prior → fit (kg)",
            "ratio",
            "CoM shift (mm)",
            "OLS consistent",
            "fit consistent",
            "data share",
            "",
        )
    ]
    for d in report["links"]:
        pl = d["plausibility"]
        rows.append(
            (
                d["link"],
                f"{d['prior']['mass']:.3f} → {d['fit']['mass']:.3f}",
                f"{pl['mass_ratio']:.2f}",
                f"{1e3 * pl['com_shift']:.1f}",
                "yes" if d["least_squares"]["consistent"] else "NO",
                "yes" if d["fit"]["consistent"] else "NO",
                _share_text(d["data_share"]) if d["free"] else "held",
                "CHECK: mass moved > 2×" if pl["flagged"] else "",
            )
        )
    lines = _table(rows)
    part = "holdout" if report["errors"]["fit"]["holdout"] is not None else "train"
    label = "held-out" if part == "holdout" else "training (no hold-out)"
    excluded = {c["joint"] for c in report.get("channels", []) if c["excluded"]}
    rows: list = [("joint", f"{label} ‖τ̂−τ‖/‖τ‖: fit", "least squares", "prior")]
    errs = {k: report["errors"][k][part] for k in ("fit", "least_squares", "prior")}
    for j in report["joints"]:
        mark = " (not fitted)" if j in excluded else ""
        rows.append((j + mark, *(_g(errs[k]["per_joint"][j], ".4f") for k in errs)))
    rows.append(("all fitted", *(_g(errs[k]["overall"], ".4f") for k in errs)))
    lines += [""] + _table(rows)
    for k, v in enumerate(report.get("validation", [])):
        e = v["errors"]
        lines.append(
            f"  validation log {k}: fit {_g(e['fit']['overall'], '.4f')}, least squares "
            f"{_g(e['least_squares']['overall'], '.4f')}, prior {_g(e['prior']['overall'], '.4f')}"
        )
    return "\n".join(lines)
