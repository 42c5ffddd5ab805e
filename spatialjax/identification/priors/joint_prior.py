"""Priors of the joint-model columns (``joint_prior``) and the samples of moving joints.

Armature: a Gaussian prior of spread ``s · max(I_a0, M̄)``; friction kinds: none. Derivation:
docs page ``identification-methods.md#armature-prior`` (and ``#samples-at-rest``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import IdentifyError, IdentifyTypeError
from ..fitting.robot_fit import PRIOR_SPREAD

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
      armature_scale: ``(n_motors,)`` ``max(I_a0, M̄)`` of each motor (each joint
        without a transmission; NaN where the joint model has no armature).
      spread: the ``s`` used.
    """

    values: np.ndarray
    weights: np.ndarray
    armature_scale: np.ndarray
    spread: float


def joint_prior(model, q, joint_model=None, *, spread: float = PRIOR_SPREAD) -> JointPrior:
    """The prior of a [JointModel][spatialjax.multibody.JointModel]'s columns.

    Armature: ``N(I_a0, σ_a²)`` with ``σ_a = spread · max(I_a0, M̄)``, ``M̄``
    the largest mean diagonal entry of ``M(q)`` (armature excluded) over up to
    ``PRIOR_SAMPLES`` configurations, among joints of the same kind. Viscous,
    Coulomb and offset: weight 0, values from the file. Derivation: docs page
    ``identification-methods.md#armature-prior``.

    Args:
      model: the fixed- or floating-base [Model][spatialjax.multibody.Model]
        (its ``armature``, ``damping``, ``friction`` are the file's values).
      q: ``(N, nq)`` configurations of the log (the training part).
      joint_model: a [JointModel][spatialjax.multibody.JointModel] (default: all
        four kinds).
      spread: ``s > 0``, the prior spread (as
        [fit_torques][spatialjax.identification.fit_torques]' ``prior_spread``).

    Returns:
      [JointPrior][spatialjax.identification.JointPrior]: pass ``values`` and ``weights`` as
      ``extra_prior`` and ``extra_prior_weight`` of
      [fit_torques][spatialjax.identification.fit_torques].

    Raises:
      ValueError: ``q`` not of shape ``(N, nq)`` with ``N ≥ 1`` or not finite,
        ``spread`` not a positive finite number, a joint-space inertia that is
        not positive on its diagonal (a massless chain).
      TypeError: ``model`` not a Model, ``joint_model`` not a JointModel.
    """
    import spatialjax.multibody as mb

    if not isinstance(model, mb.Model):
        raise IdentifyTypeError(
            "model", f"expected a spatialjax.multibody.Model, got {type(model).__name__}"
        )
    jm = mb.JointModel() if joint_model is None else joint_model
    if not isinstance(jm, mb.JointModel):
        raise IdentifyTypeError("joint_model", f"expected a JointModel, got {type(jm).__name__}")
    if isinstance(spread, bool) or not (
        isinstance(spread, (int, float, np.floating)) and math.isfinite(spread) and spread > 0
    ):
        raise IdentifyError("spread", f"expected a finite s > 0, got {spread!r}")
    qa = np.asarray(q, np.float64)
    if qa.ndim != 2 or qa.shape[0] < 1 or qa.shape[1] != model.nq:
        raise IdentifyError("q", f"expected shape (N, {model.nq}) with N >= 1, got {qa.shape}")
    if not np.all(np.isfinite(qa)):
        raise IdentifyError("q", "expected finite configurations")
    values = jm.file_values(model)
    n1 = jm.n_motors(model)
    off = 6 if model.floating_base else 0
    nk = len(jm.kinds)
    weights = np.zeros((n1, nk))
    scale = np.full(n1, np.nan)
    if "armature" in jm.kinds:
        take = np.unique(np.linspace(0, qa.shape[0] - 1, min(PRIOR_SAMPLES, qa.shape[0])).round())
        from ..pipeline.regression import mass_diagonal  # NumPy, nothing to compile

        mbar = np.mean(mass_diagonal(model, qa[take.astype(int)], jm), axis=0)[off:]
        if not np.all(mbar > 0):
            j = int(np.flatnonzero(~(mbar > 0))[0])
            raise IdentifyError(
                "model",
                f"joint {model.joint_names[j + (1 if off else 0)]!r} moves no inertia "
                f"(mean M_jj = {mbar[j]:.3g}); the armature prior needs a massive chain",
            )
        prismatic = np.array([t == "prismatic" for t in model.joint_types[1 if off else 0 :]])
        ref = np.where(prismatic, np.max(mbar, where=prismatic, initial=0.0),
                       np.max(mbar, where=~prismatic, initial=0.0))  # fmt: skip
        a0 = values.reshape(n1, nk)[:, jm.kinds.index("armature")]
        T = jm.matrix(model)  # a motor's reference: the largest joint's, at its largest ratio
        ref = np.max(np.where(T != 0, ref[None, :], 0.0), axis=1) / np.max(T**2, axis=1)
        scale = np.maximum(a0, ref)
        weights = np.where(weighted_columns(model, jm).reshape(n1, nk),
                           (1.0 / (spread * scale) ** 2)[:, None], 0.0)  # fmt: skip
    return JointPrior(values, weights.reshape(-1), scale, float(spread))


def weighted_columns(model, joint_model) -> np.ndarray:
    """``(n_columns,)`` booleans: the joint-model columns ``joint_prior`` gives a weight (the
    armature's; motor-major, as ``JointPrior.weights``)."""
    nk = len(joint_model.kinds)
    mask = np.zeros((joint_model.n_motors(model), nk), bool)
    if "armature" in joint_model.kinds:
        mask[:, joint_model.kinds.index("armature")] = True
    return mask.reshape(-1)


def velocity_noise(dq) -> np.ndarray:
    """``(nv,)`` robust estimate of the white noise on each velocity column.

    ``σ̂ = 1.4826 · MAD(Δ² q̇) / √6`` of ``dq (N, nv)``, ``N ≥ 3``.
    """
    v = np.asarray(dq, np.float64)
    if v.ndim != 2 or v.shape[0] < 3:
        raise IdentifyError("dq", f"expected shape (N, nv) with N >= 3, got {v.shape}")
    d2 = np.diff(v, n=2, axis=0)
    mad = np.median(np.abs(d2 - np.median(d2, axis=0)), axis=0)
    return 1.4826 * mad / math.sqrt(6.0)


def moving_samples(
    dq, *, fraction: float = REST_FRACTION, noise_sigmas: float = NOISE_SIGMAS, noise=None
) -> np.ndarray:
    """``(N, nv)`` booleans: joint ``j`` slides at sample ``k``.

    ``|q̇_kj| > max(noise_sigmas · σ̂_j, fraction · rms_k(q̇_kj))``; use it as a
    0/1 factor of the fit's weights on each joint's row. Derivation: docs page
    ``identification-methods.md#samples-at-rest``.

    Args:
      dq: ``(N, nv)`` velocities (the samples the fit uses).
      fraction: ``f ≥ 0``: the fraction of a joint's rms speed below which it
        counts as at rest.
      noise_sigmas: ``k ≥ 0``.
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

    The pipeline judges the held-out part and the validation logs by the training part's
    thresholds, so that every part's errors leave out the samples the fit left out.

    Args:
      dq: ``(N, nv)`` velocities (the training samples).
      fraction, noise_sigmas, noise: as ``moving_samples`` takes them.

    Returns:
      ``(nv,)`` float64 speeds (rad/s or m/s).

    Examples:
      >>> import numpy as np
      >>> v = np.sin(np.linspace(0, 20, 2001))[:, None]  # noiseless: 5 % of the rms
      >>> bool(rest_threshold(v)[0] == 0.05 * np.sqrt(np.mean(v**2)))
      True
    """
    v = np.asarray(dq, np.float64)
    if v.ndim != 2 or v.shape[0] < 3:
        raise IdentifyError("dq", f"expected shape (N, nv) with N >= 3, got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise IdentifyError("dq", "expected finite velocities")
    for name, x in (("fraction", fraction), ("noise_sigmas", noise_sigmas)):
        if not (math.isfinite(x) and x >= 0):
            raise IdentifyError(name, f"expected a finite number >= 0, got {x!r}")
    if noise is None:
        sigma = velocity_noise(v)
    else:
        sigma = np.asarray(noise, np.float64)
        if sigma.shape != (v.shape[1],) or not np.all(np.isfinite(sigma) & (sigma >= 0)):
            raise IdentifyError(
                "noise",
                f"expected {v.shape[1]} finite values >= 0 (one per joint), got "
                f"{sigma.tolist() if sigma.ndim else sigma}",
            )
    rms = np.sqrt(np.mean(v * v, axis=0))
    return np.maximum(noise_sigmas * sigma, fraction * rms)
