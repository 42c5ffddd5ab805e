"""From a raw robot log to identification inputs: zero-phase low-pass, differentiation, decimation.

Butterworth ``sosfiltfilt``, central differences on ``t``, decimation, edges
dropped; a floating base's pose filtered as a unit quaternion, its twist
``[ω; v]`` in the base frame. Derivation: docs page
``identification-methods.md#prepare-log``.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ..._rotations import quat_wxyz_to_matrix
from ..errors import IdentifyError, IdentifyTypeError, TooShortError
from .robot_log import RobotLog, continuous_quaternions

__all__ = ["PreparedLog", "parallel_filter", "prepare_log"]

#: Fraction of the impulse response's absolute sum left in the tail beyond the dropped edge.
_EDGE_TAIL = 1e-6
#: Samples at each end where ``numpy.gradient`` (applied twice) is one-sided.
_GRADIENT_EDGE = 2
#: Sample-interval jitter accepted before refusing a log as not uniformly sampled.
_JITTER = 0.25


@dataclasses.dataclass(frozen=True, eq=False)
class PreparedLog:
    """A filtered, differentiated, decimated log (from ``prepare_log``); float64.

    Attributes:
      t: ``(M,)`` sample times in s.
      q: ``(M, n)`` filtered positions.
      dq: ``(M, n)`` velocities (differentiated, or the log's filtered).
      ddq: ``(M, n)`` accelerations.
      tau: ``(M, n)`` filtered torques.
      joint_names: as in the log (None: the model's movable joints in order).
      rate: sample rate after decimation, Hz.
      lowpass: the cut-off used, Hz (None: no filter).
      order: the Butterworth order.
      decimate: the decimation factor.
      edge: samples dropped at each end, at the log's original rate.
      base_pose: ``(M, 7)`` filtered free-flyer configuration ``[x, y, z, qw,
        qx, qy, qz]`` (unit quaternion), or None for a fixed-base log.
      base_velocity: ``(M, 6)`` base twist ``[ω; v]`` in the base frame, or None.
      base_acceleration: ``(M, 6)`` its time derivative (the free flyer's
        ``a``), or None.
      contact_frames: the log's contact frames, or None.
      contact_wrenches: ``(M, k, 6)`` filtered contact wrenches ``[n; f]``
        (each in its frame's axes), or None.
      contact: ``(M, k)`` contact schedule (booleans, as logged), or None.
      raw_tau: ``(M, n)`` the torques as logged (unfiltered) at these samples,
        for a floating-base log (the rows of
        [floating_base_rows][spatialjax.identification.floating_base_rows]
        are formed before filtering), else None.
      raw_contact_wrenches: ``(M, k, 6)`` the contact wrenches as logged, or None.
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    joint_names: tuple[str, ...] | None
    rate: float
    lowpass: float | None
    order: int
    decimate: int
    edge: int
    base_pose: np.ndarray | None = None
    base_velocity: np.ndarray | None = None
    base_acceleration: np.ndarray | None = None
    contact_frames: tuple[str, ...] | None = None
    contact_wrenches: np.ndarray | None = None
    contact: np.ndarray | None = None
    raw_tau: np.ndarray | None = None
    raw_contact_wrenches: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """``M``, the number of samples."""
        return int(self.t.shape[0])

    @property
    def floating_base(self) -> bool:
        """Whether the log has a base pose."""
        return self.base_pose is not None

    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, v, a)`` in the model's layout: ``(M, nq)``, ``(M, nv)``, ``(M, nv)``.

        A floating base's free flyer comes first (``q = [base_pose, q]``,
        ``v = [base_velocity, dq]``, ``a = [base_acceleration, ddq]``).
        """
        if self.base_pose is None:
            return self.q, self.dq, self.ddq
        v0, a0 = np.asarray(self.base_velocity), np.asarray(self.base_acceleration)
        return (
            np.concatenate([self.base_pose, self.q], axis=1),
            np.concatenate([v0, self.dq], axis=1),
            np.concatenate([a0, self.ddq], axis=1),
        )

    def _take(self, index) -> dict:
        """Every per-sample field, indexed along the samples (for ``dataclasses.replace``)."""
        out = {}
        for k in _SAMPLED:
            x = getattr(self, k)
            if x is not None:
                out[k] = x[index]
        return out

    def split(self, holdout: float) -> tuple[PreparedLog, PreparedLog]:
        """``(train, test)``: the last ``holdout`` fraction of samples (in time) is the test part.

        Args:
          holdout: fraction in ``(0, 1)``.

        Raises:
          IdentifyError: ``"holdout"`` outside ``(0, 1)`` or a part with fewer than 2 samples.
        """
        if not 0 < holdout < 1:
            raise IdentifyError("holdout", f"expected a fraction in (0, 1), got {holdout!r}")
        cut = int(round(self.n_samples * (1 - holdout)))
        if cut < 2 or self.n_samples - cut < 2:
            raise IdentifyError(
                "holdout", f"{holdout} of {self.n_samples} samples leaves a part with < 2 samples"
            )
        sl = lambda s: dataclasses.replace(self, **self._take(s))  # noqa: E731
        return sl(slice(None, cut)), sl(slice(cut, None))


#: Per-sample fields of ``PreparedLog`` (cut, split and decimated together).
_SAMPLED = (
    "t",
    "q",
    "dq",
    "ddq",
    "tau",
    "base_pose",
    "base_velocity",
    "base_acceleration",
    "contact_wrenches",
    "contact",
    "raw_tau",
    "raw_contact_wrenches",
)


def uniform_rate(t: np.ndarray, need: str = "") -> float:
    """The sample rate ``1 / h`` of times ``t``, ``h`` their median interval.

    Raises:
      IdentifyError: ``"log"``, naming the first interval more than ``_JITTER`` off ``h``
        (``need`` says why uniform samples are needed, ending in "; ").
    """
    dt = np.diff(t)
    h = float(np.median(dt))
    bad = np.flatnonzero(np.abs(dt - h) > _JITTER * h)
    if bad.size:
        k = int(bad[0])
        raise IdentifyError(
            "log",
            f"not uniformly sampled: t[{k + 1}] - t[{k}] = {dt[k]:.6g} s, the median interval "
            f"is {h:.6g} s ({need}resample it with identification.resample_log first)",
        )
    return 1.0 / h


@functools.lru_cache(maxsize=64)
def tail_samples(rate: float, lowpass: float, order: int, tail: float) -> int:
    """Samples after which the Butterworth impulse response's tail ``Σ|h|`` is ``≤ tail`` of all.

    The response is computed over 60 time constants of the slowest pole (``|p|ⁿ = e⁻⁶⁰``,
    1e-26, of it left out), or more for a ``tail`` below e⁻³⁰, and 64 samples more.
    """
    from .butterworth import butterworth, sosfilt

    sos = butterworth(order, lowpass, rate)
    slowest = max(float(np.max(np.abs(np.roots(s[3:])))) for s in sos)
    spans = max(60.0, 30.0 - math.log(tail))  # time constants: e^-30 of the tail left out
    L = int(math.ceil(spans / -math.log(slowest))) + 64
    impulse = np.zeros(L)
    impulse[0] = 1.0
    h = np.abs(sosfilt(sos, impulse))
    rest = np.cumsum(h[::-1])[::-1]  # rest[k] = Σ_{i ≥ k} |h_i|
    return int(np.flatnonzero(rest <= tail * rest[0])[0])


def edge_samples(rate: float, lowpass: float | None, order: int) -> int:
    """Samples dropped at each end by ``prepare_log``: the filter's reach plus 2."""
    if lowpass is None:
        return _GRADIENT_EDGE
    return tail_samples(rate, lowpass, order, _EDGE_TAIL) + _GRADIENT_EDGE


def prepare_log(
    log: RobotLog, *, lowpass: float | None = None, decimate: int = 1, order: int = 4
) -> PreparedLog:
    """Filter, differentiate and decimate a raw log as on hardware.

    Zero-phase Butterworth low-pass of ``q``, ``tau`` (and logged ``dq``,
    ``ddq``), central differences on ``t`` for missing derivatives, every
    ``decimate``-th sample kept, ``edge`` samples dropped at each end.
    Derivation: docs page ``identification-methods.md#prepare-log``.

    Args:
      log: a [`RobotLog`][spatialjax.identification.RobotLog], sampled uniformly
        (each interval within 25 % of the median).
      lowpass: Butterworth cut-off in Hz, ``0 < lowpass < rate / (2·decimate)``;
        None: no filtering (derivatives of the raw ``q``).
      decimate: keep every ``decimate``-th sample (≥ 1); above 1 it needs a
        ``lowpass`` (the anti-aliasing filter).
      order: Butterworth order (≥ 1); the forward-backward pass doubles it.

    Returns:
      [`PreparedLog`][spatialjax.identification.PreparedLog] with ``t, q, dq, ddq, tau`` (and the
      settings).

    Raises:
      IdentifyError: naming the argument (``.argument``): ``lowpass`` not positive or at/above the
        Nyquist frequency (of the decimated rate), ``decimate`` or ``order`` not a positive integer,
        ``decimate > 1`` without ``lowpass``, a log that is not uniformly sampled (naming the
        sample; [`resample_log`][spatialjax.identification.resample_log] makes it so), or too short
        for the filter.
      IdentifyTypeError: ``log`` is not a RobotLog; ``lowpass`` is not a number.
    """
    if not isinstance(log, RobotLog):
        raise IdentifyTypeError(
            "log", f"expected a RobotLog (load_log, simulate_log), got {type(log).__name__}"
        )
    if not (isinstance(decimate, (int, np.integer)) and decimate >= 1):
        raise IdentifyError("decimate", f"expected a positive integer, got {decimate!r}")
    if not (isinstance(order, (int, np.integer)) and order >= 1):
        raise IdentifyError("order", f"expected a positive integer, got {order!r}")
    t = log.t
    rate = uniform_rate(t, "the filter needs uniform samples; ")
    nyquist = rate / (2 * decimate)
    if lowpass is not None:
        if isinstance(lowpass, bool) or not isinstance(
            lowpass, (int, float, np.integer, np.floating)
        ):
            raise IdentifyTypeError(
                "lowpass",
                f"expected a cut-off frequency in Hz (a number), got {type(lowpass).__name__} "
                f"{lowpass!r}",
            )
        if not math.isfinite(lowpass):
            raise IdentifyError("lowpass", f"expected a cut-off frequency in Hz, got {lowpass!r}")
        if not 0 < lowpass < nyquist:
            after = f" after `decimate` {decimate}" if decimate > 1 else ""
            raise IdentifyError(
                "lowpass",
                f"expected a cut-off between 0 and {nyquist:g} Hz (the Nyquist frequency{after} "
                f"of a {rate:g} Hz log), got {lowpass!r}",
            )
    elif decimate > 1:
        raise IdentifyError(
            "decimate",
            f"{decimate} without a low-pass would alias noise; give `lowpass` below "
            f"{nyquist:g} Hz (the new Nyquist frequency)",
        )
    edge = edge_samples(rate, lowpass, order)
    N = log.n_samples
    if N - 2 * edge < 2 * decimate:
        raise TooShortError(
            "log",
            f"{N} samples are too few: {edge} are dropped at each end (filter and "
            "differentiation edges)",
        )

    from .butterworth import butterworth, sosfiltfilt

    sos = None if lowpass is None else butterworth(order, float(lowpass), rate)

    def filt(x: np.ndarray) -> np.ndarray:
        return x if sos is None else sosfiltfilt(sos, x)

    q = filt(log.q)
    tau = filt(log.tau)
    dq = filt(log.dq) if log.dq is not None else np.gradient(q, t, axis=0)
    ddq = filt(log.ddq) if log.ddq is not None else np.gradient(dq, t, axis=0)
    keep = slice(edge, N - edge, decimate)
    base = {}
    if log.floating_base:
        pose, vel, acc = _base_motion(log, t, filt)
        base = {"base_pose": pose, "base_velocity": vel, "base_acceleration": acc}
        base["raw_tau"] = log.tau
        if log.contact_wrenches is not None:
            base["contact_wrenches"] = filt(log.contact_wrenches)
            base["raw_contact_wrenches"] = log.contact_wrenches
        if log.contact is not None:
            base["contact"] = log.contact
        base = {k: x[keep] for k, x in base.items()}
        base["contact_frames"] = log.contact_frames
    return PreparedLog(
        t=t[keep],
        q=q[keep],
        dq=dq[keep],
        ddq=ddq[keep],
        tau=tau[keep],
        joint_names=log.joint_names,
        rate=rate / decimate,
        lowpass=None if lowpass is None else float(lowpass),
        order=int(order),
        decimate=int(decimate),
        edge=edge,
        **base,
    )


def _base_motion(log: RobotLog, t: np.ndarray, filt):
    """Filtered base pose ``(N, 7)``, base twist ``(N, 6)`` (base frame), its derivative."""
    pos = filt(log.base_position)
    quat = np.asarray(log.base_quaternion)
    quat = continuous_quaternions(quat / np.linalg.norm(quat, axis=1, keepdims=True))
    quat = filt(quat)
    quat = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    if log.base_velocity is not None:
        vel = filt(log.base_velocity)
    else:
        dquat = np.gradient(quat, t, axis=0)
        w, u = quat[:, :1], quat[:, 1:]
        dw, du = dquat[:, :1], dquat[:, 1:]
        omega = 2.0 * (w * du - dw * u - np.cross(u, du))  # 2 Im(q̄ ⊗ q̇), base frame
        R = quat_wxyz_to_matrix(quat)  # (N, 3, 3)
        lin = np.einsum("nji,nj->ni", R, np.gradient(pos, t, axis=0))  # Rᵀ ṗ
        vel = np.concatenate([omega, lin], axis=1)
    acc = np.gradient(vel, t, axis=0)
    return np.concatenate([pos, quat], axis=1), vel, acc


def parallel_filter(prepared: PreparedLog, *columns, decimate: int = 1):
    """Filter regressor columns exactly as the torques were filtered, then decimate both.

    Parallel filtering (Gautier 1997): the regressor's columns go through the
    torques' zero-phase low-pass, so that the Coulomb steps at velocity reversals
    are smoothed alike in model and measurement.

    Args:
      prepared: a [`PreparedLog`][spatialjax.identification.PreparedLog] from
        ``prepare_log(log, lowpass=…)`` with ``decimate=1`` (the full rate).
      *columns: arrays with ``prepared.n_samples`` rows (samples first), e.g.
        the joint-torque and friction regressors evaluated on
        ``prepared.q, prepared.dq, prepared.ddq``.
      decimate: keep every ``decimate``-th sample afterwards (``prepared``'s
        cut-off must be below the new Nyquist frequency).

    Returns:
      ``(log, *filtered)``: ``log`` is ``prepared`` with ``edge`` more samples
      dropped at each end and decimated; each filtered column is cut and
      decimated the same way (NumPy float64).

    Raises:
      IdentifyError: naming the argument: ``prepared`` was not low-passed or was already decimated,
        a column's first axis is not ``prepared.n_samples``, ``decimate`` is not a positive integer
        or puts the Nyquist frequency below the cut-off, or too few samples remain.
    """
    sos, keep, log = _parallel_setup(prepared, decimate)
    M = prepared.n_samples
    arrays = []
    for k, x in enumerate(columns):
        x = np.asarray(x, np.float64)
        if x.ndim < 1 or x.shape[0] != M:
            raise IdentifyError(
                f"columns[{k}]", f"expected {M} rows (prepared.n_samples), got shape {x.shape}"
            )
        arrays.append(x)
    return (log, *(_filter_live_columns(sos, x, keep) for x in arrays))


def parallel_filter_last(prepared: PreparedLog, values: np.ndarray, *, decimate: int = 1):
    """``parallel_filter`` of columns stored samples LAST: ``values (k, N)``, each row a
    column over the ``prepared.n_samples`` samples (``host_regressor.LiveColumns``).

    Returns:
      ``(log, filtered (k, N'))``, as ``parallel_filter``.

    Raises:
      IdentifyError: as ``parallel_filter``.
    """
    from .butterworth import sosfiltfilt

    sos, keep, log = _parallel_setup(prepared, decimate)
    values = np.asarray(values, np.float64)
    if values.ndim != 2 or values.shape[1] != prepared.n_samples:
        raise IdentifyError(
            "values",
            f"expected shape (k, {prepared.n_samples}) (prepared.n_samples last), "
            f"got {values.shape}",
        )
    out = sosfiltfilt(sos, values, axis=-1, keep=keep)
    return log, out


def _parallel_setup(prepared: PreparedLog, decimate: int):
    """``(sos, keep, log)`` of a parallel filtering: the torques' filter, the full-rate
    samples kept, and ``prepared`` cut and decimated like them (the checks of
    ``parallel_filter``)."""
    if prepared.lowpass is None:
        raise IdentifyError("prepared", "parallel filtering needs prepare_log(..., lowpass=...)")
    if prepared.decimate != 1:
        raise IdentifyError(
            "prepared",
            f"expected the full-rate log (prepare_log with decimate=1), got "
            f"decimate={prepared.decimate}; decimate here instead",
        )
    if not (isinstance(decimate, (int, np.integer)) and decimate >= 1):
        raise IdentifyError("decimate", f"expected a positive integer, got {decimate!r}")
    if not prepared.lowpass < prepared.rate / (2 * decimate):
        raise IdentifyError(
            "decimate",
            f"{decimate} puts the Nyquist frequency at {prepared.rate / (2 * decimate):g} Hz, "
            f"below the {prepared.lowpass:g} Hz cut-off",
        )
    M, edge = prepared.n_samples, prepared.edge
    if M - 2 * edge < 2 * decimate:
        raise TooShortError("prepared", f"{M} samples are too few to drop {edge} more at each end")
    from .butterworth import butterworth

    sos = butterworth(prepared.order, prepared.lowpass, prepared.rate)
    keep = parallel_rows(prepared, decimate)
    log = dataclasses.replace(
        prepared,
        **prepared._take(keep),
        rate=prepared.rate / decimate,
        decimate=int(decimate),
        edge=2 * edge,
    )
    return sos, keep, log


def parallel_rows(prepared: PreparedLog, decimate: int) -> slice:
    """The full-rate samples ``parallel_filter(prepared, ..., decimate=decimate)`` keeps: its
    filter's edge more at each end, then every ``decimate``-th."""
    return slice(prepared.edge, prepared.n_samples - prepared.edge, decimate)


def _filter_live_columns(sos, x: np.ndarray, keep: slice) -> np.ndarray:
    """``sosfiltfilt(sos, x)[keep]``, filtering only the columns that are not all zero.

    A regressor is zero wherever a joint does not move a body (half of a chain's
    ``Y``, most joint-model columns): those columns filter to exactly zero.
    """
    from .butterworth import sosfiltfilt

    flat = x.reshape(x.shape[0], -1)
    live = np.flatnonzero(np.any(flat != 0, axis=0))
    out = np.zeros((len(range(*keep.indices(x.shape[0]))), flat.shape[1]))
    out[:, live] = sosfiltfilt(sos, flat[:, live], keep=keep)
    return out.reshape(out.shape[:1] + x.shape[1:])
