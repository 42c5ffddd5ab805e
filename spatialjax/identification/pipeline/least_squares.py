"""Stage 6, **least squares**: the baseline, and the per-joint weights of the data term.

Samples where a joint rests leave that joint's row (weight 0) whenever the
joint model has Coulomb friction: ``|q̇_j| ≤ max(3 σ̂_v,j, 0.05 rms(q̇_j))``
([moving_samples][spatialjax.identification.moving_samples]); static friction
there, and MuJoCo's ``frictionloss`` constraint, is not ``F_c sign(q̇)``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._checks import to_device
from ..logs.correlation import correlation_time
from ..output.report import range_text
from .channels import Channels
from .prior import Prior


@dataclasses.dataclass(frozen=True, eq=False)
class TrainingData:
    """What the fit sees: the training part, held bodies subtracted, channels and columns kept.

    Attributes:
      Y: ``(N, nv, 10 n_free)`` the free bodies' columns.
      F: ``(N, nv, nf)`` the joint-model columns kept.
      tau: ``(N, nv)`` the measured torques less the held bodies'.
      used: ``(nv,)`` the channels in the data term.
      friction_kept: ``(ne,)`` the joint-model columns kept.
      moving: ``(N, nv)`` the samples in each joint's row (False: the joint
        rests, ``moving_samples``), or None (every sample).
      q: ``(N, nq)`` the positions of the same samples, or None.
      multiplicity: for a floating base, ``(N, K R)`` the independent equations
        each row stands for (``FloatingBaseRows.multiplicity``; ``nv`` is then
        ``K R`` rows and ``used`` their mask), else None.
    """

    Y: np.ndarray
    F: np.ndarray
    tau: np.ndarray
    used: np.ndarray
    friction_kept: np.ndarray
    moving: np.ndarray | None = None
    q: np.ndarray | None = None
    multiplicity: np.ndarray | None = None

    def row_mask(self) -> np.ndarray:
        """``(N, nv)`` booleans: the samples of each joint's row in the data term."""
        mask = np.broadcast_to(self.used[None, :], self.tau.shape)
        return mask & self.moving if self.moving is not None else mask.copy()

    def sample_weights(self, weights: np.ndarray) -> np.ndarray:
        """The data term's weights from the per-joint ``weights`` ``(nv,)``: ``(N, nv)`` with
        the samples at rest at 0, or ``weights`` itself without ``moving``."""
        w = np.asarray(weights, np.float64)
        return np.where(self.moving, w[None, :], 0.0) if self.moving is not None else w

    def full_friction(self, phi: np.ndarray) -> np.ndarray:
        """``(ne,)`` coefficients from those of the kept columns (NaN for the others)."""
        out = np.full(self.friction_kept.size, np.nan)
        out[self.friction_kept] = phi
        return out


@dataclasses.dataclass(frozen=True, eq=False)
class LeastSquares:
    """Ordinary least squares, and the weights of the data term derived from its residuals.

    Attributes:
      params: ``(nb, 10)`` bodies (the held ones at the model's values).
      friction: ``(ne,)`` coefficients (NaN where not fitted).
      noise_var: ``(nv,)`` ``σ̂_j²`` of the residuals.
      correlation_time: ``(nv,)`` ``τ_j`` in samples.
      weights: ``(nv,)`` ``1 / (σ̂_j² τ_j)``, 0 for a channel left out.
      n_parameters: the columns fitted (free bodies' + all joint-model columns).
      sample_weighting: the weighting rule used.
      n_samples: the training samples.
      rest_fraction: ``(nv,)`` the share of the training samples left out of
        each joint's row because the joint rests (0 without the rule).
    """

    params: np.ndarray
    friction: np.ndarray
    noise_var: np.ndarray
    correlation_time: np.ndarray
    weights: np.ndarray
    n_parameters: int
    sample_weighting: str
    n_samples: int
    rest_fraction: np.ndarray | None = None

    @property
    def samples_used(self) -> np.ndarray:
        """``(nv,)`` the samples in each joint's row (the training samples less those at rest)."""
        rest = np.zeros(self.weights.size) if self.rest_fraction is None else self.rest_fraction
        return self.n_samples * (1.0 - rest)

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        used = self.weights > 0
        tau_c = self.correlation_time[used]
        n = self.samples_used[used]
        rest = ""
        if self.rest_fraction is not None:
            share = range_text(100 * self.rest_fraction[used], ".0f")
            rest = (
                f"; samples at rest left out of their joint's row (|dq| <= max(3 sigma_v, "
                f"0.05 rms dq): static friction): {share} %"
            )
        return (
            f"{self.n_parameters} parameters (minimum norm); residual correlation time "
            f"{range_text(tau_c)} samples ({self.sample_weighting} weighting: "
            f"{range_text(n / tau_c, '.0f')} effective samples per joint)" + rest
        ), ()


def training_data(Y, F, tau, held, prior: Prior, channels: Channels, *, q=None, moving=None,
                  rows=None) -> TrainingData:  # fmt: skip
    """The training part as the fit sees it (``Y, F, tau, held``: the regressor stage's part 0;
    ``q`` its positions, ``moving`` its samples in each joint's row, ``rest_rule``;
    ``rows``: its ``FloatingBaseRows`` for a floating base)."""
    cols = np.repeat(prior.free_mask, 10)
    used, mult = channels.used, None
    if rows is not None:
        from .floating_base import row_mask

        used, mult = row_mask(rows, channels.used), rows.multiplicity
    kept = channels.friction_kept
    return TrainingData(  # no copy where every column stays (a long floating-base log's rows)
        Y if cols.all() else Y[..., cols], F if kept.all() else F[..., kept], tau - held, used,
        kept, moving, q, mult,
    )  # fmt: skip


def rest_rule(dq: np.ndarray, joint_model, model=None) -> np.ndarray | None:
    """``(N, nv)`` ``moving_samples(dq)`` when ``joint_model`` has Coulomb friction, else None.

    Through a transmission (``model`` then needed) the rule is the motors': a joint's row
    keeps the samples where every motor that drives it moves (``moving_samples`` of the
    motor velocities ``dq Tᵀ``).
    """
    from ..priors.joint_prior import moving_samples

    if "coulomb" not in joint_model.kinds:
        return None
    if joint_model.transmission is None:
        return moving_samples(dq)
    T = joint_model.matrix(model)
    motor_moving = moving_samples(np.asarray(dq, np.float64) @ T.T)  # (N, n_motors)
    drives = T != 0  # (n_motors, n_joints)
    return np.all(motor_moving[:, :, None] | ~drives[None], axis=1)


def _rank(X: np.ndarray, rows: np.ndarray) -> int:
    Xu = X[rows].reshape(-1, X.shape[-1])
    d = np.linalg.norm(Xu, axis=0)
    live = d > np.sqrt(np.finfo(np.float64).eps) * d.max()
    return int(np.linalg.matrix_rank(Xu[:, live] / d[live]))


def least_squares_stage(
    data: TrainingData, prior: Prior, *, sample_weighting: str, lowpass: float | None, rate: float
) -> LeastSquares:
    """Minimum-norm least squares, and per joint ``σ̂_j²`` and ``τ_j`` of its residuals.

    Args:
      data: the training data.
      prior: the prior (the held bodies' values).
      sample_weighting: ``"autocorrelation"``, ``"bandwidth"`` or ``"independent"``.
      lowpass: the low-pass used, Hz, or None (``"bandwidth"`` weighting).
      rate: the sample rate after decimation, Hz (``"bandwidth"`` weighting).
    """

    from ..fitting.robot_fit import least_squares_torques

    Y, F, tau, used = data.Y, data.F, data.tau, data.used
    nf, n_train, nv = F.shape[-1], tau.shape[0], tau.shape[1]
    rows = data.row_mask()
    w = rows.astype(np.float64)
    if data.multiplicity is not None:  # floating base: the equations each row stands for
        w = w * data.multiplicity
    pi_f, phi = least_squares_torques(
        to_device(Y), to_device(tau), extra=to_device(F) if nf else None,
        weights=to_device(w),
    )  # fmt: skip
    pi_f = np.asarray(pi_f, np.float64).reshape(-1, 10)
    phi = np.zeros(0) if phi is None else np.asarray(phi, np.float64).reshape(-1)
    pi = prior.model.copy()
    pi[prior.free_mask] = pi_f
    if data.multiplicity is None:
        X = np.concatenate([Y, F], -1)
        res = tau - X @ np.concatenate([pi_f.reshape(-1), phi])
        n_rows = rows.sum(axis=0) if data.moving is not None else np.full(nv, n_train)
        if data.moving is not None:
            res = np.where(data.moving, res, 0.0)  # a joint's samples at rest leave its row
        dof = n_rows * (1.0 - _rank(X, rows) / max(int(rows.sum()), 1))
        sigma2 = np.sum(res**2, axis=0) / np.maximum(dof, 1.0)
    else:
        from .floating_base import residual_variance

        res, sigma2 = residual_variance(Y, F, tau, pi_f.reshape(-1), phi, w)
    floor = np.finfo(np.float64).eps * np.mean(tau**2, axis=0)
    sigma2 = np.maximum(sigma2, np.where(floor > 0, floor, np.finfo(np.float64).tiny))
    if sample_weighting == "autocorrelation":
        tau_c = correlation_time(res)
    elif sample_weighting == "bandwidth" and lowpass:
        # a signal band-limited to f_c carries 2 f_c independent values per second
        tau_c = np.full(nv, max(1.0, rate / (2.0 * lowpass)))
    else:
        tau_c = np.ones(nv)
    weights = np.where(used, 1.0 / (sigma2 * tau_c), 0.0)
    n_par = 10 * int(prior.free_mask.sum()) + data.friction_kept.size
    rest = None if data.moving is None else 1.0 - data.moving.mean(axis=0)
    return LeastSquares(pi, data.full_friction(phi), sigma2, np.asarray(tau_c, np.float64),
                        weights, n_par, sample_weighting, n_train, rest)  # fmt: skip
