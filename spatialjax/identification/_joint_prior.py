r"""Priors of the joint-model columns and the samples friction describes:
[joint_prior][spatialjax.identification.joint_prior],
[moving_samples][spatialjax.identification.moving_samples].

**The armature prior.** A joint's armature ``I_a`` (rotor inertia reflected
through the gear, MuJoCo's ``armature``) multiplies ``q̈_j`` on the joint's own
row. For most joints it is identified by the data; for the first joint of a
fixed-base robot it is not: the first link turns about a fixed axis, so its
moment about that axis (with what regroups into it: the distal links' masses
times their offsets from the axis squared, their unidentifiable moments) and
the armature enter the torques only as their sum, one base parameter (Gautier
1990; Khalil & Dombre 2002 §12.4). The same holds for the second joint when its
axis is perpendicular to the first's (UR arms, the Panda): the first joint's
motion then never turns the second link about the second axis. The data fix
the sum; the priors decide the split.

The links' log-det prior (Lee, Wensing & Park 2020;
[fit_torques][spatialjax.identification.fit_torques], ``γ D(J ‖ J0)``) resists *relative* changes of
a link's inertia: moving the first link's moment from ``I0`` to ``I0 + δ`` costs about ``γ
(δ/I0)²/2`` per principal direction. The armature gets a Gaussian prior

$$
\frac{(I_a − I_{a,0})^2}{σ_a^2},\qquad
    σ_a = s \cdot \max(I_{a,0}, \bar M),
$$

with ``I_{a,0}`` the model file's value (MJCF ``armature``; 0 where the file has
none), ``s`` the prior spread ([fit_torques][spatialjax.identification.fit_torques]'
``prior_spread``, 0.5) and ``M̄`` the largest time-averaged diagonal entry of the
prior's joint-space inertia ``M(q)`` over the log (CRBA, armature excluded), among
joints of the same kind (revolute or prismatic): "an armature of up to the
inertia the robot's largest joint moves", a weakly informative prior (it
is the second-order term of the scalar log-det divergence ``a/a0 − log(a/a0) −
1`` for ``a0 > M̄``, and stays finite at ``a0 = 0``, where a log-det term would
not). Its weight ``1/σ_a²`` is in the data term's units (weights ``1/σ²``).
The armature is kept ``≥ 0`` by the fit's barrier on non-negative extra
columns (``−μ log I_a``, ``μ → 0``: no bias at the optimum).

Why this split is right: with a Gaussian prior on each side, the surplus of
the base parameter over the priors goes to each in proportion to its prior
variance, ``σ_a²`` against the link's ``≈ (s I0)²``. ``M̄`` (the whole arm about
the first axis, kg·m²) is one to three orders of magnitude above the first
link's own moment about its axis, so a file that says 0 leaves the rotor
inertia to the armature and the link at its prior (the links' error, within
the prior's spread, becomes the armature's absolute error: ``s I0`` at worst).
Where the truth has no armature, the armature takes only that link error, and
the barrier keeps it ``≥ 0``. A weak prior also keeps the armature of a joint
that the log hardly moves at the file's value instead of leaving it free.
The split is reported by [Identifiability.confounded
<spatialjax.identification.Identifiability.confounded>][spatialjax.identification.Identifiability.confounded
<spatialjax.identification.Identifiability.confounded>] and the data shares
(pass ``extra_prior_weight`` to [identifiability][spatialjax.identification.identifiability]).

The friction kinds get no prior (weight 0): their columns sit on their joint's
own row and the data determine them whenever the joint moves both ways; the
file's ``damping``/``frictionloss`` are returned as ``values`` for reports.

**Samples near rest.** The Coulomb column ``sign(q̇)`` describes sliding
friction only. Near zero velocity real joints stick (static friction, the Stribeck curve) and
MuJoCo's ``frictionloss`` is a soft constraint whose force lies anywhere in ``[−F_c, F_c]``; a
velocity within the velocity noise has no trustworthy sign either.
[moving_samples][spatialjax.identification.moving_samples] marks the samples where joint ``j``
moves: ``|q̇_j| > max(k σ̂_v,j, f · rms(q̇_j))`` with ``σ̂_v`` the velocity noise (from the
velocity's second differences) and ``f = 0.05``; a fit gives the others weight 0 on that joint's row
only (its other rows keep them). On a MuJoCo-simulated UR5 under PD tracking with ``frictionloss``
of 1–7 N·m the friction force differs from ``F_c sign(q̇)`` by more than 1 % at speeds up to
0.03–0.06 rad/s (sticking at reversals), 2–10 % of the samples; the rule drops 4–20 % of a joint's
samples (most where a wrist with a large friction loss sticks longest); without it the damping came
out up to 2.3× the truth.

References:
  M. Gautier, "Numerical calculation of the base inertial parameters of
  robots", J. Robotic Systems 8(4), 1991 (ICRA 1990).
  W. Khalil, E. Dombre, *Modeling, Identification and Control of Robots*,
  2002, §12.4 (base parameters, regrouping).
  T. Lee, P. M. Wensing, F. C. Park, "Geometric robot dynamic identification:
  a convex programming approach", IEEE T-RO 36(2), 2020.
  A. Gelman, A. Jakulin, M. G. Pittau, Y.-S. Su, "A weakly informative default
  prior distribution for logistic and other regression models", Ann. Appl.
  Stat. 2(4), 2008 (priors scaled to the problem, not to the truth).
  B. Armstrong-Hélouvry, P. Dupont, C. Canudas de Wit, "A survey of models,
  analysis tools and compensation methods for the control of machines with
  friction", Automatica 30(7), 1994 (static friction, Stribeck velocity).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ._robot_fit import PRIOR_SPREAD

#: ``f`` of [moving_samples][spatialjax.identification.moving_samples]: the fraction of a joint's
#: rms speed below which it rests.
REST_FRACTION = 0.05
#: ``k`` of [moving_samples][spatialjax.identification.moving_samples]: velocities within ``k σ̂_v``
#: have no trustworthy sign.
NOISE_SIGMAS = 3.0
#: Configurations of the log on which [joint_prior][spatialjax.identification.joint_prior] averages
#: ``M(q)``.
PRIOR_SAMPLES = 256


class JointPrior(NamedTuple):
    """What [joint_prior][spatialjax.identification.joint_prior] returns, for
    [fit_torques][spatialjax.identification.fit_torques]' ``extra_prior`` arguments.

    Attributes:
      values: ``(n_columns,)`` prior value of each joint-model column (the model
        file's armature, damping, Coulomb friction; offset 0).
      weights: ``(n_columns,)`` Gaussian prior weight ``1/σ²`` (armature
        columns; 0 for the friction kinds: no prior).
      armature_scale: ``(n_joints,)`` ``max(I_a0, M̄)`` of each joint (NaN
        where the joint model has no armature).
      spread: the ``s`` used.
    """

    values: np.ndarray
    weights: np.ndarray
    armature_scale: np.ndarray
    spread: float


def joint_prior(model, q, joint_model=None, *, spread: float = PRIOR_SPREAD) -> JointPrior:
    r"""The prior of a [JointModel][spatialjax.multibody.JointModel]'s columns (module docstring).

    Armature: ``N(I_a0, σ_a²)`` with ``σ_a = spread · max(I_a0, M̄)``, ``M̄``
    the largest mean diagonal entry of ``M(q)`` (armature excluded) over up to
    ``PRIOR_SAMPLES`` evenly spaced configurations of ``q``, among the
    joints of the same kind (revolute and continuous; prismatic). Viscous,
    Coulomb and offset: no prior (weight 0), values from the file.

    Args:
      model: the fixed- or floating-base [Model][spatialjax.multibody.Model]
        (its ``armature``, ``damping``, ``friction`` are the file's values).
      q: ``(N, nq)`` configurations of the log (the training part).
      joint_model: a [JointModel][spatialjax.multibody.JointModel] (default: all
        four kinds).
      spread: ``s > 0``, the prior spread (as
        [fit_torques][spatialjax.identification.fit_torques]' ``prior_spread``; with an
        explicit ``γ``, ``√(2/γ)``).

    Returns:
      [JointPrior][spatialjax.identification.JointPrior]: pass ``values`` and ``weights`` as
      ``extra_prior`` and ``extra_prior_weight`` of
      [fit_torques][spatialjax.identification.fit_torques] (and the weights to
      [identifiability][spatialjax.identification.identifiability]).

    Raises:
      ValueError: ``q`` not of shape ``(N, nq)`` with ``N ≥ 1`` or not finite,
        ``spread`` not a positive finite number, a joint-space inertia that is
        not positive on its diagonal (a massless chain).
      TypeError: ``model`` not a Model, ``joint_model`` not a JointModel.
    """
    import spatialjax.multibody as mb

    if not isinstance(model, mb.Model):
        raise TypeError(f"model: expected a spatialjax.multibody.Model, got {type(model).__name__}")
    jm = mb.JointModel() if joint_model is None else joint_model
    if not isinstance(jm, mb.JointModel):
        raise TypeError(f"joint_model: expected a JointModel, got {type(jm).__name__}")
    if isinstance(spread, bool) or not (
        isinstance(spread, (int, float, np.floating)) and math.isfinite(spread) and spread > 0
    ):
        raise ValueError(f"spread: expected a finite s > 0, got {spread!r}")
    qa = np.asarray(q, np.float64)
    if qa.ndim != 2 or qa.shape[0] < 1 or qa.shape[1] != model.nq:
        raise ValueError(f"q: expected shape (N, {model.nq}) with N >= 1, got {qa.shape}")
    if not np.all(np.isfinite(qa)):
        raise ValueError("q: expected finite configurations")
    values = jm.file_values(model)
    n1 = jm.n_joints(model)
    off = 6 if model.floating_base else 0
    nk = len(jm.kinds)
    weights = np.zeros((n1, nk))
    scale = np.full(n1, np.nan)
    if "armature" in jm.kinds:
        take = np.unique(np.linspace(0, qa.shape[0] - 1, min(PRIOR_SAMPLES, qa.shape[0])).round())
        bare = dataclasses.replace(model, armature=jnp.zeros_like(model.armature))
        M = np.asarray(mb.mass_matrix(bare, jnp.asarray(qa[take.astype(int)], model.dtype)))
        mbar = np.mean(np.diagonal(M, axis1=-2, axis2=-1), axis=0)[off:]
        if not np.all(mbar > 0):
            j = int(np.flatnonzero(~(mbar > 0))[0])
            raise ValueError(
                f"model: joint {model.joint_names[j + (1 if off else 0)]!r} moves no inertia "
                f"(mean M_jj = {mbar[j]:.3g}); the armature prior needs a massive chain"
            )
        prismatic = np.array([t == "prismatic" for t in model.joint_types[1 if off else 0 :]])
        ref = np.where(prismatic, np.max(mbar, where=prismatic, initial=0.0),
                       np.max(mbar, where=~prismatic, initial=0.0))  # fmt: skip
        a0 = np.asarray(model.armature, np.float64)[off:]
        scale = np.maximum(a0, ref)
        weights[:, jm.kinds.index("armature")] = 1.0 / (spread * scale) ** 2
    return JointPrior(values, weights.reshape(-1), scale, float(spread))


def velocity_noise(dq) -> np.ndarray:
    r"""``(nv,)`` robust estimate of the white noise on each velocity column.

    ``σ̂ = 1.4826 · MAD(Δ² q̇) / √6``: the second difference of a smooth signal
    is negligible at the sampling rate, that of white noise of variance
    ``σ²`` has variance ``6 σ²``; the median absolute deviation (scaled to a
    Gaussian's σ) ignores the steps of sticking.

    Args:
      dq: ``(N, nv)`` velocities, ``N ≥ 3``.
    """
    v = np.asarray(dq, np.float64)
    if v.ndim != 2 or v.shape[0] < 3:
        raise ValueError(f"dq: expected shape (N, nv) with N >= 3, got {v.shape}")
    d2 = np.diff(v, n=2, axis=0)
    mad = np.median(np.abs(d2 - np.median(d2, axis=0)), axis=0)
    return 1.4826 * mad / math.sqrt(6.0)


def moving_samples(
    dq, *, fraction: float = REST_FRACTION, noise_sigmas: float = NOISE_SIGMAS, noise=None
) -> np.ndarray:
    r"""``(N, nv)`` booleans: joint ``j`` slides at sample ``k`` (module docstring).

    ``|q̇_kj| > max(noise_sigmas · σ̂_j, fraction · rms_k(q̇_kj))``; the others
    carry static friction (stiction, MuJoCo's soft ``frictionloss``
    constraint) that ``F_c sign(q̇)`` does not describe, or a velocity whose
    sign is noise. Use it as a 0/1 factor of the fit's weights on each
    joint's row.

    Args:
      dq: ``(N, nv)`` velocities (the samples the fit uses).
      fraction: ``f ≥ 0``: the fraction of a joint's rms speed below which it
        counts as at rest (default 0.05).
      noise_sigmas: ``k ≥ 0`` (default 3).
      noise: ``(nv,)`` velocity noise σ; default ``velocity_noise`` of ``dq``.

    Returns:
      ``(N, nv)`` bool.

    Raises:
      ValueError: ``dq`` not ``(N, nv)`` with ``N ≥ 3`` or not finite, a negative
        ``fraction``/``noise_sigmas``, ``noise`` of the wrong shape or negative.
    """
    v = np.asarray(dq, np.float64)
    return np.abs(v) > rest_threshold(v, fraction=fraction, noise_sigmas=noise_sigmas, noise=noise)


def rest_threshold(
    dq, *, fraction: float = REST_FRACTION, noise_sigmas: float = NOISE_SIGMAS, noise=None
) -> np.ndarray:
    r"""``(nv,)`` the speed at or below which a joint counts as at rest:
    ``max(noise_sigmas · σ̂_j, fraction · rms_k(q̇_kj))``
    ([moving_samples][spatialjax.identification.moving_samples]' rule).

    The pipeline judges the held-out part and the validation logs by the
    training part's thresholds, so that every part's errors leave out the
    samples the fit left out.

    Args:
      dq: ``(N, nv)`` velocities (the training samples).
      fraction, noise_sigmas, noise: as ``moving_samples`` takes them.

    Returns:
      ``(nv,)`` float64 speeds (rad/s or m/s).

    Raises:
      ValueError: as ``moving_samples``.

    Examples:
      >>> import numpy as np
      >>> v = np.sin(np.linspace(0, 20, 2001))[:, None]  # noiseless: 5 % of the rms
      >>> bool(rest_threshold(v)[0] == 0.05 * np.sqrt(np.mean(v**2)))
      True
    """
    v = np.asarray(dq, np.float64)
    if v.ndim != 2 or v.shape[0] < 3:
        raise ValueError(f"dq: expected shape (N, nv) with N >= 3, got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("dq: expected finite velocities")
    for name, x in (("fraction", fraction), ("noise_sigmas", noise_sigmas)):
        if not (math.isfinite(x) and x >= 0):
            raise ValueError(f"{name}: expected a finite number >= 0, got {x!r}")
    if noise is None:
        sigma = velocity_noise(v)
    else:
        sigma = np.asarray(noise, np.float64)
        if sigma.shape != (v.shape[1],) or not np.all(np.isfinite(sigma) & (sigma >= 0)):
            raise ValueError(
                f"noise: expected {v.shape[1]} finite values >= 0 (one per joint), got "
                f"{sigma.tolist() if sigma.ndim else sigma}"
            )
    rms = np.sqrt(np.mean(v * v, axis=0))
    return np.maximum(noise_sigmas * sigma, fraction * rms)
