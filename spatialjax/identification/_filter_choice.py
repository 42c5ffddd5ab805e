r"""The low-pass cut-off and decimation of a robot log, chosen from its positions: `choose_filter`.

Identification differentiates the measured positions twice (once when the
log has velocities) and puts the result into the regressor. Differentiation
multiplies the spectrum of the measurement noise by ``(2πf)²`` per
derivative, so the quantisation and sensor noise of ``q`` that is invisible
in the positions dominates the raw accelerations: the noise enters the
*regressor*, where least squares cannot average it out (errors in
variables), and the inertial parameters come out biased. A zero-phase
low-pass at ``f_c`` with parallel filtering of the regressor
([parallel_filter][spatialjax.identification.parallel_filter], Gautier 1997) removes
the noise above ``f_c``; its price is a distortion of whatever motion lies
near ``f_c``. The rule below chooses ``f_c`` where that trade is best, from
the spectrum of the log itself (D'Amico & Ferrigno 1990 choose the
bandwidth of a differentiating filter the same way: from a model of the
measured spectrum as signal plus a noise floor).

**The spectrum.** Let ``x`` be the highest-order measured signal: ``q``,
or ``q̇`` when the log has a ``dq`` column, and ``p`` the number of
derivatives the pipeline takes of it (2 or 1). ``a`` is the raw
acceleration the pipeline would compute without a filter (``numpy.gradient``
``p`` times); its one-sided power spectral density ``P_j(f)`` per joint
``j`` is estimated by Welch's method (Hann window, segments of the largest
power of two ``≤ N/4`` samples, half overlapping, at least 7 averaged
segments; no detrending: a segment's mean or trend, fitted to a signal whose
power rises as ``f^{2p}``, would carry the high-frequency noise to the lowest
bins). ``R_j(f) = P_j(f) / |D(f)|^{2p}``, with ``D(f) =
sin(2πf h)/h`` the central difference's gain at sample period ``h``, is the
spectrum of ``x`` itself, prewhitened by the differences so that the large
low-frequency motion does not leak into the weak high frequencies (bins up
to ``0.4 f_s``, where ``D`` is still 0.59 of its peak ``1/h``; it falls to
zero at the Nyquist frequency).

**The trajectory's band** of joint ``j`` ends at ``f_b,j``, the highest
frequency at which ``R_j`` stands at least `KNEE` (10×, 10 dB) above
*every* bin beyond it, up to ``0.2 f_s`` (so that "beyond" spans at least an
octave of bins: near the top of the spectrum a single fluctuating bin would
do). A trajectory's spectrum falls by orders of magnitude
where the excitation ends, while a noise floor, white or coloured (a
velocity filtered by the drive, a log resampled by linear interpolation),
does not fall 10× from one bin to everything beyond it, nor do the Welch
estimate's scatter (a χ² of about 14 degrees of freedom or more) or the window's
leakage (Hann sidelobes fall 18 dB per octave). A *smooth* trajectory (a leg's
swing: a ``C²`` bump) has no such knee: its spectrum decays algebraically over
decades, and the knee alone would end its band in the first bins. So the band
ends at the knee or, when higher, at the lowest bin beyond which the trajectory
holds at most `BAND_TAIL` (10⁻³) of its acceleration power ``P − ν |D|^{2p}``,
counted over the contiguous bins from the lowest up to the first where ``R``
no longer stands `KNEE` above the noise floor ``ν`` (the median of ``R`` beyond
``0.2 f_s``, or the quantisation floor when higher): isolated lines above the
floor (a quantised slow motion's harmonics, a vibration) do not count. A
floating-base log's base pose (position and quaternion, signs made continuous)
is analysed as seven more channels when the joints' positions are: the pipeline
differentiates it twice too, and its noise enters the base acceleration. Above ``f_b,j`` the
spectrum counts as noise ``N_j(f) = P_j(f)``, as measured; below it the
noise is the median of ``R_j`` over the bins beyond ``f_b,j`` (or the
quantisation floor ``Δ²/(6 f_s)`` of the resolution ``Δ`` of ``x``, when
higher) times ``|D|^{2p}``, and the signal ``S_j = P_j − N_j`` there (zero
above ``f_b,j``). A joint without such a band does not move above its noise
and does not take part in the choice.

**The bias of the fit.** Let ``G(f) = |H(f)|²`` be the amplitude response
of the zero-phase Butterworth filter of order ``order`` at ``f_c``
(``sosfiltfilt`` runs the digital filter ``H`` forwards and backwards;
``H`` from ``scipy.signal.sosfreqz``). The torques are filtered once (``G``)
and the regressor twice (``q`` before it is differentiated, then the
regressor's columns by parallel filtering: ``G²``). Where the acceleration
column carries motion of power ``S`` and noise of power ``N``, least squares
on the filtered data sees a regressor ``G²Y`` against a target ``GYπ``: the
parameters come out too large by ``(1 − G)/G`` there, to first order in the
distortion's *amplitude*; and the noise, which the regressor carries and the
torques do not, shrinks them by its *power* over the signal's (errors in
variables: Fuller 1987, §1.1). Weighted by the retained signal, the
predicted relative bias of the parameters that joint ``j``'s accelerations
carry is

    b_j(f_c) = Σ_f [G³ (1 − G) S_j + G⁴ N_j] / Σ_f G⁴ S_j,

and without a filter ``b_j = Σ N_j / Σ S_j`` (no distortion, all the noise).
Motion far above ``f_c`` is removed from torques and regressor alike and
costs nothing in ``b``, but it is excitation lost, so the cut-off is never
placed below the band: the candidates are ``f_c ≥ max_j f_b,j`` up to
``0.45 f_s`` (96 log-spaced values), and no filter.

**The rule.** ``f_c`` is the *lowest* candidate whose mean ``b = mean_j
b_j`` over the moving joints is within `TOLERANCE` (10⁻⁴: a bias of 0.01 %
of the parameters, negligible beside any log's noise) of the least ``b`` of
all candidates. Where noise matters that is the least bias; where it does
not (a fine encoder), it is the lowest cut-off that keeps the band
undistorted to 0.01 % (about 2.7 times the band's top for order 4, when the
top carries a third of the acceleration), which also removes the most
torque noise: torque noise
does not bias the fit, so ``b`` leaves it out, but it is part of every
torque error the pipeline reports. A log without measurable noise thus gets
a filter just above its band too; no filter is chosen only where no cut-off
below ``0.45 f_s`` keeps the band.

**The filter's edges.** ``prepare_log`` and ``parallel_filter`` each drop
``edge`` samples at both ends ([prepare_log][spatialjax.identification.prepare_log],
step 4: about ``5.9 / f_c`` seconds for order 4), and the pipeline filters
the training part, the held-out part and every validation log on its own.
The cut-off is raised, if needed, so that every part (``log`` and those in
``parts``) keeps at least `MIN_KEPT` (a quarter) of its samples after
its four edges; a longer log allows a lower cut-off.

**Decimation** (``decimate="auto"``): the largest ``k`` whose new Nyquist
frequency ``f_s / (2k)`` is at least `NYQUIST_MARGIN` (5) times the
cut-off: ten samples or more per period of the cut-off frequency. Aliasing
alone would allow 2 (the forward-backward Butterworth of order 4 passes
``2⁻¹⁶`` of the power at twice its cut-off, and with parallel filtering it
folds the same content into torques and regressor alike), but the steps
after decimation work per sample: the samples at rest that Coulomb friction
leaves out, with the velocity noise estimated from second differences
([moving_samples][spatialjax.identification.moving_samples]), and the
fit's weights. At four samples per period a velocity reversal spans one or
two samples, and in a MuJoCo study of a UR5's joint parameters
(``benchmarks/bench_joint_params.py``, five truths, the same cut-off) a
shoulder's armature drifted from 0.94× to 0.47× of the truth as ``k`` went
from 1 to 31, and stayed within 0.9–1.13× up to ten samples per period.
Without a low-pass there is no anti-aliasing filter and ``k = 1``.

References:
  P. D. Welch, "The use of fast Fourier transform for the estimation of power
  spectra", IEEE Trans. Audio Electroacoustics 15(2), 1967.
  M. D'Amico, G. Ferrigno, "Technique for the evaluation of derivatives from
  noisy biomechanical displacement data using a model-based bandwidth-selection
  procedure", Med. Biol. Eng. Comput. 28(5), 1990.
  M. Gautier, "Dynamic identification of robots with power model", ICRA 1997.
  B. Widrow, I. Kollár, M.-C. Liu, "Statistical theory of quantization",
  IEEE Trans. Instrum. Meas. 45(2), 1996 (quantisation noise ``Δ²/12``, white).
  W. A. Fuller, "Measurement Error Models", Wiley, 1987.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ._log import RobotLog
from ._preprocess import edge_samples, uniform_rate

__all__ = ["FilterChoice", "choose_filter"]

#: The trajectory's band ends at the last bin standing this factor above every bin beyond it.
KNEE = 10.0
#: Relative parameter bias accepted above the least, for a lower cut-off.
TOLERANCE = 1e-4
#: Fraction of every filtered part that must remain after the filter's edges.
MIN_KEPT = 0.25
#: Automatic decimation keeps the new Nyquist frequency at least this factor above the cut-off
#: (ten samples per period of the cut-off).
NYQUIST_MARGIN = 5.0
#: Highest candidate cut-off, as a fraction of the sample rate.
MAX_LOWPASS = 0.45
#: Highest frequency of the spectrum used, as a fraction of the sample rate.
MAX_BIN = 0.4
#: The trajectory's band holds all but this fraction of its acceleration power above the noise
#: floor (the criterion for a smooth trajectory, whose spectrum has no knee).
BAND_TAIL = 1e-3
#: Bins above this fraction of the sample rate give the noise floor of the band criterion.
FLOOR_FROM = 0.2
#: Names of a floating base's pose channels in the analysis (position, then the quaternion).
BASE_CHANNELS = ("base x", "base y", "base z", "base qw", "base qx", "base qy", "base qz")
#: Number of log-spaced candidate cut-offs.
N_CANDIDATES = 96
#: Fewest samples for a spectrum (Welch segments of a quarter of them at most).
MIN_SAMPLES = 64


@dataclasses.dataclass(frozen=True)
class FilterChoice:
    """The low-pass cut-off and decimation for a log.

    What [choose_filter][spatialjax.identification.choose_filter] returns.

    Attributes:
      lowpass: Butterworth cut-off in Hz, or None for no low-pass.
      decimate: keep every ``decimate``-th sample after filtering (1 without
        a low-pass).
      automatic: True when the cut-off was chosen from the data, False when
        it was given.
      reason: one line saying what was chosen and why, for the stage output.
      details: JSON-able measurements behind the choice: the rate, the
        signal analysed (``"q"`` or ``"dq"``), per joint the band edge, noise
        floor, resolution and predicted parameter bias, the least bias and
        where it lies, the lowest cut-off the parts' lengths allow, the bias
        curve ``[[f_c, b], ...]`` and the rule's constants.
    """

    lowpass: float | None
    decimate: int
    automatic: bool
    reason: str
    details: dict

    def to_dict(self) -> dict:
        """JSON-able fields."""
        return {
            "lowpass": self.lowpass,
            "decimate": self.decimate,
            "automatic": self.automatic,
            "reason": self.reason,
            "details": self.details,
        }


# ------------------------------------------------------------------------------ arguments
def check_lowpass(lowpass):
    if lowpass is None or (isinstance(lowpass, str) and lowpass == "auto"):
        return lowpass
    if isinstance(lowpass, str):
        raise ValueError(
            f"lowpass: expected 'auto', None or a cut-off frequency in Hz, got {lowpass!r}"
        )
    if isinstance(lowpass, bool) or not isinstance(lowpass, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"lowpass: expected 'auto', None or a cut-off frequency in Hz (a number), got "
            f"{type(lowpass).__name__} {lowpass!r}"
        )
    if not (math.isfinite(lowpass) and lowpass > 0):
        raise ValueError(f"lowpass: expected a cut-off frequency > 0 in Hz, got {lowpass!r}")
    return float(lowpass)


def check_decimate(decimate):
    if isinstance(decimate, str) and decimate == "auto":
        return decimate
    if isinstance(decimate, bool) or not isinstance(decimate, (int, np.integer)):
        raise (ValueError if isinstance(decimate, str) else TypeError)(
            f"decimate: expected 'auto' or an integer >= 1, got {type(decimate).__name__} "
            f"{decimate!r}"
        )
    if decimate < 1:
        raise ValueError(f"decimate: expected 'auto' or an integer >= 1, got {decimate!r}")
    return int(decimate)


def _check_parts(parts) -> list[int]:
    if isinstance(parts, (str, bytes)) or not isinstance(parts, Sequence):
        raise TypeError(f"parts: expected a sequence of sample counts, got {parts!r}")
    out = []
    for k, n in enumerate(parts):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise ValueError(f"parts[{k}]: expected a sample count >= 2, got {n!r}")
        out.append(int(n))
    return out


def _auto_decimate(rate: float, lowpass: float | None) -> int:
    if lowpass is None:
        return 1
    return max(1, int(math.floor(rate / (2.0 * NYQUIST_MARGIN * lowpass) + 1e-9)))


# ------------------------------------------------------------------------------ spectrum
def grid_step(x: np.ndarray) -> float | None:
    """The step of the grid the values of ``x`` lie on, or None when they lie on none.

    The smallest gap between distinct values (gaps below ``1e-9`` of the
    largest value are decimal-to-binary rounding and ignored), accepted when
    99 % of the values are integer multiples of it from the smallest value
    (within 1 % of a step) and it is at most ``1e-2`` of their range (an
    encoder's step, not a few levels).
    """
    u = np.unique(np.asarray(x, np.float64))
    if u.size < 3:
        return None
    span = float(u[-1] - u[0])
    gaps = np.diff(u)
    gaps = gaps[gaps > 1e-9 * float(np.max(np.abs(u)))]
    if gaps.size == 0:
        return None
    step = float(gaps.min())
    if not step <= 1e-2 * span:
        return None
    r = (u - u[0]) / step
    if np.mean(np.abs(r - np.round(r)) < 1e-2) < 0.99:
        return None
    return step


def _welch(a: np.ndarray, rate: float):
    from scipy import signal

    N = a.shape[0]
    nper = int(2 ** math.floor(math.log2(N / 4)))
    # no detrending: the mean of a segment of a blue (differenced) signal is its edges' noise
    f, P = signal.welch(
        a, fs=rate, window="hann", nperseg=nper, axis=0,
        detrend=False,  # pyright: ignore[reportArgumentType]  (documented; the stub says str)
    )  # fmt: skip
    return f, P, nper


def _band_edge(R: np.ndarray, f: np.ndarray) -> float:
    """Highest ``f`` where ``R`` stands `KNEE` above every bin beyond it (0: none)."""
    beyond = np.maximum.accumulate(R[::-1])[::-1]  # beyond[k] = max R[k:]
    ceiling = np.append(beyond[1:], 0.0)  # max R[k+1:]
    k = np.flatnonzero((R >= KNEE * ceiling) & (f <= 0.5 * f[-1]))  # an octave beyond, at least
    return float(f[k[-1]]) if k.size else 0.0


def _gain(order: int, fc: float, rate: float, f: np.ndarray) -> np.ndarray:
    """``G = |H(f)|²`` of the digital Butterworth at ``fc``: ``sosfiltfilt``'s amplitude gain."""
    from scipy import signal

    sos = signal.butter(order, fc, fs=rate, output="sos")
    _, h = signal.sosfreqz(sos, worN=f, fs=rate)
    return np.abs(h) ** 2


def _lowest_for_parts(rate: float, order: int, shortest: int, f_hi: float) -> float | None:
    """Lowest cut-off whose 4 edges leave `MIN_KEPT` of ``shortest`` samples (None: none)."""
    allowed = (1.0 - MIN_KEPT) * shortest / 4.0

    def fits(fc: float) -> bool:
        return edge_samples(rate, fc, order) <= allowed

    if not fits(f_hi):
        return None
    # the edge (less the 2 gradient samples) scales as 1 / lowpass: bracket, then bisect
    ref = f_hi / 8.0
    guess = ref * max(edge_samples(rate, ref, order) - 2, 1) / max(allowed - 2, 1e-3)
    lo, hi = guess / 2.0, min(2.0 * guess, f_hi)
    while not fits(hi):
        lo, hi = hi, min(2.0 * hi, f_hi)
    while fits(lo) and lo > 1e-6 * rate:
        lo, hi = lo / 2.0, lo
    for _ in range(40):
        if hi / lo < 1.001:
            break
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def base_pose_channels(log: RobotLog) -> np.ndarray | None:
    """``(N, 7)`` a floating-base log's pose as the pipeline differentiates it twice: the
    position and the quaternion (signs made continuous), or None (a fixed base, or a log with
    velocities: then only the joints' are analysed)."""
    if log.base_position is None or log.base_quaternion is None or log.dq is not None:
        return None
    quat = np.array(log.base_quaternion, np.float64)
    flip = np.cumsum(np.sum(quat[1:] * quat[:-1], axis=1) < 0) % 2 == 1
    quat[1:][flip] *= -1.0
    return np.concatenate([np.asarray(log.base_position, np.float64), quat], axis=1)


def _band_by_power(R: np.ndarray, P: np.ndarray, Dp: np.ndarray, f: np.ndarray,
                   rate: float, quantum: float = 0.0) -> float:  # fmt: skip
    """Lowest ``f`` beyond which the trajectory holds at most `BAND_TAIL` of its acceleration
    power (0: none). The trajectory: the bins from the lowest up to the first where ``R``
    no longer stands `KNEE` above the noise floor (the median of the bins beyond
    ``FLOOR_FROM f_s``, or the quantisation floor ``quantum`` when higher), less that floor;
    isolated lines above it (a quantised slow motion's harmonics, vibration) do not count."""
    top = f > FLOOR_FROM * rate
    if not top.any():
        return 0.0
    floor = max(float(np.median(R[top])), quantum)
    above = (R >= KNEE * floor) & ~top
    stop = int(np.argmin(above)) if not above.all() else above.size
    sig = np.where(np.arange(R.size) < stop, P - floor * Dp, 0.0)
    total = float(sig.sum())
    if not total > 0:
        return 0.0
    tail = np.cumsum(sig[::-1])[::-1]  # tail[k] = power at f[k] and beyond
    beyond = np.append(tail[1:], 0.0)
    return float(f[np.flatnonzero(beyond <= BAND_TAIL * total)[0]])


def _analyse_spectra(log: RobotLog, rate: float):
    """Per-channel spectra, band edges, noise and signal (module docstring): the joints, then
    a floating base's pose (``base_pose_channels``)."""
    h = 1.0 / rate
    base = base_pose_channels(log)
    if log.dq is None:
        x, p, source = log.q, 2, "q"
        if base is not None:
            x = np.concatenate([np.asarray(x, np.float64), base], axis=1)
        a = np.gradient(np.gradient(x, log.t, axis=0), log.t, axis=0)
    else:
        x, p, source = log.dq, 1, "dq"
        a = np.gradient(log.dq, log.t, axis=0)
    f, P, nper = _welch(a[2:-2], rate)  # without the one-sided differences at the ends
    keep = (f > 0) & (f <= MAX_BIN * rate)
    f, P = f[keep], P[keep]
    Dp = ((np.sin(2 * np.pi * f * h) / h) ** 2) ** p
    R = P / Dp[:, None]
    n = x.shape[1]
    fb = np.zeros(n)
    floor = np.zeros(n)
    res: list[float | None] = []
    for j in range(n):
        step = grid_step(x[:, j]) if j < log.q.shape[1] else None
        quantum = 0.0 if step is None else step**2 / 6.0 / rate
        fb[j] = max(_band_edge(R[:, j], f), _band_by_power(R[:, j], P[:, j], Dp, f, rate, quantum))
        beyond = f > fb[j]
        floor[j] = float(np.median(R[beyond, j])) if beyond.any() else 0.0
        res.append(step)
        if step is not None:  # quantisation noise: variance Δ²/12, white to f_s/2
            floor[j] = max(floor[j], step**2 / 6.0 / rate)
    below = f[:, None] <= fb[None, :]
    N = np.where(below, floor[None, :] * Dp[:, None], P)
    S = np.where(below, np.maximum(P - N, 0.0), 0.0)
    return {
        "source": source,
        "p": p,
        "f": f,
        "S": S,
        "N": N,
        "band_edge": fb,
        "floor": floor,
        "resolution": res,
        "nperseg": nper,
    }


def _predicted_bias(an, order: int, rate: float, fc: float | None) -> np.ndarray:
    """Per-joint predicted relative parameter bias ``b_j`` at ``fc`` (module docstring)."""
    S, N = an["S"], an["N"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if fc is None:
            total = S.sum(axis=0)
            return np.where(total > 0, N.sum(axis=0) / total, np.inf)
        G = _gain(order, fc, rate, an["f"])[:, None]
        kept = (G**4 * S).sum(axis=0)
        b = (G**3 * (1 - G) * S + G**4 * N).sum(axis=0)
        return np.where(kept > 0, b / kept, np.inf)


# ------------------------------------------------------------------------------ the choice
def choose_filter(
    log: RobotLog,
    *,
    lowpass="auto",
    decimate="auto",
    order: int = 4,
    parts: Sequence[int] = (),
) -> FilterChoice:
    r"""The low-pass cut-off and decimation for identifying a robot from ``log``.

    A given value is checked and kept. ``"auto"`` reads them off the spectrum
    of the log's positions (of its velocities when it has a ``dq`` column:
    the pipeline then differentiates once, not twice):

    1. *The trajectory's band*: per joint (and, for a floating base, per
       channel of the base pose), the highest frequency at which the Welch
       spectrum stands 10× above every frequency beyond it, or, when higher,
       the frequency beyond which the trajectory holds at most 0.1 % of its
       acceleration power above the noise floor (a smooth motion, which has no
       such knee); beyond it the spectrum is noise, as measured
       (quantisation, sensor noise, vibration), and under it the noise floor
       continues flat.
    2. *The predicted bias* of the fitted parameters at a cut-off ``f_c``,
       relative, from the accelerations' spectrum: the torques are filtered
       once and the regressor twice (before differentiation, then by
       [parallel_filter][spatialjax.identification.parallel_filter],
       Gautier 1997), so motion near ``f_c`` is distorted, which biases the
       parameters in proportion to its amplitude; the noise the filter passes
       into the regressor biases them in proportion to its power (errors in
       variables); averaged over the moving joints.
    3. ``f_c`` is the *lowest* cut-off at or above the band whose bias is
       within 0.01 % of the least of all cut-offs up to ``0.45 f_s``: where
       noise matters that is the least bias; where it does not (a fine
       encoder, an exact simulation), the lowest cut-off that keeps the band
       undistorted to 0.01 % (2–3 times its top), which also removes the
       most torque noise. No low-pass only where no cut-off keeps the band.
    4. It is raised, if needed, until the filter's edges (prepare_log and
       parallel_filter each drop ``edge`` samples at both ends: about
       ``5.9 / f_c`` s for order 4) leave a quarter of the log and of each
       part in ``parts``.
    5. *Decimation* (``decimate="auto"``): the largest ``k`` keeping the new
       Nyquist frequency ``f_s / (2k)`` at least twice ``f_c``; 1 without a
       low-pass.

    Only ``log`` is read: the pipeline passes its training part, so that
    nothing of the held-out samples informs the choice. The derivation and
    the constants: ``spatialjax/identification/_filter_choice.py``; when to
    filter and a simulated study: the identification guide.

    Args:
      log: a uniformly sampled [RobotLog][spatialjax.identification.RobotLog]
        ([resample_log][spatialjax.identification.resample_log] makes it so).
      lowpass: ``"auto"``, None (no low-pass: the raw derivatives), or a
        Butterworth cut-off in Hz, ``0 < lowpass < rate / (2·decimate)``.
      decimate: ``"auto"`` or an integer ``≥ 1`` (``> 1`` needs a low-pass:
        it is the anti-aliasing filter).
      order: the Butterworth order the filter will use
        ([prepare_log][spatialjax.identification.prepare_log]'s `order`).
      parts: lengths in samples of the other parts the same filter will be
        applied to on their own (the held-out part, validation logs): an
        automatic cut-off leaves a quarter of each after its edges.

    Returns:
      [FilterChoice][spatialjax.identification.FilterChoice]: ``lowpass``,
      ``decimate``, whether the cut-off was chosen from the data, a one-line
      reason and the measured details.

    Raises:
      TypeError: ``log`` is not a RobotLog; ``lowpass`` or ``decimate`` of
        the wrong type (a bool is neither a frequency nor a factor).
      ValueError: ``lowpass`` not ``"auto"``, None or a positive finite
        number, or at or above the Nyquist frequency (of the decimated rate);
        ``decimate`` below 1, or above 1 without a low-pass; ``order`` not a
        positive integer; a ``parts`` entry below 2; a log that is not
        uniformly sampled, or too short for a spectrum (fewer than 64
        samples) when the cut-off is chosen from it.

    Examples:
      >>> import numpy as np
      >>> from spatialjax.identification import RobotLog, choose_filter
      >>> t = np.arange(20000) / 1000.0  # 20 s at 1 kHz, a 0.5 Hz motion, 20-bit encoder
      >>> step = 2 * np.pi / 2**20
      >>> q = np.round(0.5 * np.sin(2 * np.pi * 0.5 * t)[:, None] / step) * step
      >>> c = choose_filter(RobotLog(t=t, q=q, tau=np.zeros_like(q)))
      >>> c.automatic, 0.5 < c.lowpass < 20, c.decimate == int(1000 // (10 * c.lowpass))
      (True, True, True)

    References:
      P. D. Welch, IEEE Trans. Audio Electroacoustics 15(2), 1967.
      M. D'Amico, G. Ferrigno, "Technique for the evaluation of derivatives
      from noisy biomechanical displacement data using a model-based
      bandwidth-selection procedure", Med. Biol. Eng. Comput. 28(5), 1990.
      M. Gautier, "Dynamic identification of robots with power model", ICRA 1997.
    """
    if not isinstance(log, RobotLog):
        raise TypeError(
            f"log: expected a RobotLog (load_log, simulate_log), got {type(log).__name__}"
        )
    lowpass = check_lowpass(lowpass)
    decimate = check_decimate(decimate)
    if isinstance(order, bool) or not (isinstance(order, (int, np.integer)) and order >= 1):
        raise ValueError(f"order: expected a positive integer, got {order!r}")
    part_sizes = _check_parts(parts)
    rate = uniform_rate(log.t)
    if lowpass is None:
        return _no_lowpass_given(decimate, rate)
    if lowpass != "auto":
        assert isinstance(lowpass, float)
        return _lowpass_given(lowpass, decimate, rate)
    return _automatic_choice(log, decimate, order, part_sizes, rate)


def _no_lowpass_given(decimate, rate: float) -> FilterChoice:
    """``lowpass=None``: no filter, no decimation (a decimation given above 1 raises)."""
    if decimate not in ("auto", 1):
        raise ValueError(
            f"decimate: {decimate} without a low-pass would alias noise; give lowpass "
            f"(below {rate / 2.0 / decimate:g} Hz, the new Nyquist frequency) or decimate 1"
        )
    return FilterChoice(
        None,
        1,
        False,
        "no low-pass (given): q differentiated raw, no decimation",
        {"rate": rate, "given": {"lowpass": None, "decimate": decimate}},
    )


def _lowpass_given(lowpass: float, decimate, rate: float) -> FilterChoice:
    """A given cut-off, checked against the Nyquist frequency; the decimation given or derived."""
    nyquist = rate / 2.0
    k = _auto_decimate(rate, lowpass) if decimate == "auto" else int(decimate)
    if not lowpass < nyquist:
        raise ValueError(
            f"lowpass: expected below {nyquist:g} Hz (the Nyquist frequency of a "
            f"{rate:g} Hz log), got {lowpass!r}"
        )
    if not lowpass < rate / (2 * k):
        raise ValueError(
            f"decimate: {k} puts the Nyquist frequency at {rate / (2 * k):g} Hz, at or below "
            f"the lowpass cut-off {lowpass:g} Hz (log at {rate:g} Hz); decimate less"
        )
    how = (
        f"decimate {k} (the new Nyquist frequency {rate / (2 * k):.4g} Hz is at least "
        f"{NYQUIST_MARGIN:g}× the cut-off)"
        if decimate == "auto"
        else f"decimate {k} (given)"
    )
    return FilterChoice(
        lowpass,
        k,
        False,
        f"low-pass {lowpass:.4g} Hz (given), {how}",
        {"rate": rate, "given": {"lowpass": lowpass, "decimate": decimate}},
    )


def _measured_details(log: RobotLog, an, rate: float, order: int, names, moving) -> dict:
    """The JSON-able measurements every automatic choice reports, per joint and overall."""
    details: dict = {
        "rate": rate,
        "samples": log.n_samples,
        "signal": an["source"],
        "derivatives": an["p"],
        "welch_segment": an["nperseg"],
        "frequency_resolution": float(an["f"][0]),
        "joints": {},
        "rule": {
            "knee": KNEE,
            "tolerance": TOLERANCE,
            "min_kept": MIN_KEPT,
            "nyquist_margin": NYQUIST_MARGIN,
            "order": order,
        },
    }
    unit_std = math.sqrt(rate / 2.0)
    for j, name in enumerate(names):
        details["joints"][name] = {
            "band_edge": float(an["band_edge"][j]),
            "moving": bool(moving[j]),
            "noise_psd": float(an["floor"][j]),
            "noise_std": float(math.sqrt(an["floor"][j]) * unit_std),
            "resolution": an["resolution"][j],
        }
    return details


def _automatic_choice(log: RobotLog, decimate, order: int, part_sizes, rate: float):
    """``lowpass="auto"``: the cut-off of least predicted bias (module docstring, steps 1-4)."""
    if log.n_samples < MIN_SAMPLES:
        raise ValueError(
            f"log: {log.n_samples} samples are too few to estimate its spectrum (at least "
            f"{MIN_SAMPLES}); give lowpass explicitly"
        )
    f_hi = MAX_LOWPASS * rate
    if decimate != "auto" and decimate > 1:
        f_hi = min(f_hi, rate / (2.0 * NYQUIST_MARGIN * decimate))
    an = _analyse_spectra(log, rate)
    fb = an["band_edge"]
    names = log.joint_names or tuple(f"joint {j}" for j in range(log.q.shape[1]))
    names = tuple(names) + BASE_CHANNELS[: fb.size - len(names)]
    shortest = min([log.n_samples, *part_sizes])
    f_parts = _lowest_for_parts(rate, order, shortest, f_hi)

    cands = np.geomspace(max(float(fb.max()), float(an["f"][0])), f_hi, N_CANDIDATES)
    if cands[0] >= f_hi:
        cands = np.array([f_hi])
    EJ = np.array([_predicted_bias(an, order, rate, float(c)) for c in cands])  # (C, n)
    e_none_j = _predicted_bias(an, order, rate, None)
    moving = (fb > 0) & np.isfinite(EJ).all(axis=0) & (EJ.min(axis=0) < 1.0)
    details = _measured_details(log, an, rate, order, names, moving)
    if not moving.any():
        details["lowest_for_parts"] = f_parts
        return FilterChoice(
            None,
            1,
            True,
            f"no low-pass: {an['source']} shows no trajectory above its noise on any joint "
            "(nothing to keep or remove)",
            details,
        )
    e = EJ[:, moving].mean(axis=1)
    e_none = float(e_none_j[moving].mean())
    i_min = int(np.argmin(e))
    # no filter is a candidate unless a decimation is given (it needs the anti-aliasing filter)
    e_min = float(e[i_min]) if decimate not in ("auto", 1) else min(float(e[i_min]), e_none)
    ok = np.flatnonzero(e <= e_min + TOLERANCE)
    fc_rule = float(cands[ok[0]]) if ok.size else None
    details.update(
        {
            "band_edge": float(fb[moving].max()),
            "least_bias": _finite_or_none(e_min),
            "least_bias_at": float(cands[i_min]) if float(e[i_min]) <= e_none else None,
            "bias_no_filter": _finite_or_none(e_none),
            "rule_cutoff": fc_rule,
            "lowest_for_parts": f_parts,
            "shortest_part": shortest,
            "bias_curve": [
                [float(c), _finite_or_none(x)] for c, x in zip(cands[::6], e[::6], strict=True)
            ],
        }
    )
    summary = (
        f"{an['source']}'s trajectory band ends near {details['band_edge']:.3g} Hz, "
        f"{_noise_text(an, moving, rate, an['source'])}"
    )
    if fc_rule is None or f_parts is None:
        why = (
            f"no cut-off below {f_hi:.4g} Hz keeps its band"
            if fc_rule is None
            else "the filter's edges would take more than three quarters of the shortest part "
            f"({shortest} samples) at any cut-off below {f_hi:.4g} Hz"
        )
        _per_joint_error(details, names, e_none_j)
        details["predicted_bias"] = _finite_or_none(e_none)
        return FilterChoice(None, 1, True, f"no low-pass: {summary}; {why}", details)
    return _cutoff_chosen(an, order, rate, decimate, fc_rule, f_parts, f_hi, names, moving,
                          details, summary)  # fmt: skip


def _cutoff_chosen(an, order, rate, decimate, fc_rule, f_parts, f_hi, names, moving, details,
                   summary) -> FilterChoice:  # fmt: skip
    """The rule's cut-off, raised where the parts need it (step 4), and the decimation (5)."""
    raised = f_parts > fc_rule
    fc = _round_up(max(fc_rule, f_parts))
    ej = _predicted_bias(an, order, rate, fc)
    _per_joint_error(details, names, ej)
    chosen_e = float(ej[moving].mean())
    details["predicted_bias"] = _finite_or_none(chosen_e)
    k = _auto_decimate(rate, fc) if decimate == "auto" else int(decimate)
    tail = (
        f"; raised from {fc_rule:.3g} Hz so the filter's edges leave a quarter of the shortest "
        f"part ({details['shortest_part']} samples)"
        if raised
        else ""
    )
    if decimate != "auto" and decimate > 1:
        tail += f"; at most {f_hi:.3g} Hz for decimate {decimate} (given)"
    reason = (
        f"low-pass {fc:.3g} Hz, decimate {k}: {summary}; {100 * chosen_e:.2g} % bias predicted "
        f"in what the accelerations carry{tail}"
    )
    return FilterChoice(fc, k, True, reason, details)


def _finite_or_none(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _per_joint_error(details: dict, names, ej) -> None:
    for j, name in enumerate(names):
        details["joints"][name]["predicted_bias"] = _finite_or_none(ej[j])


def _round_up(x: float) -> float:
    """``x`` rounded up to 3 significant digits."""
    d = 10.0 ** (math.floor(math.log10(x)) - 2)
    return float(f"{math.ceil(x / d - 1e-9) * d:.3g}")


def _noise_text(an, moving, rate: float, src: str) -> str:
    """``"its noise floor σ 2.7e-05 (steps of 9.6e-05 = 2π/2^16)"``: a summary over the joints."""
    sig = np.sqrt(an["floor"][moving] * rate / 2.0)
    lo, hi = float(sig.min()), float(sig.max())
    s = f"{lo:.2g}" if f"{lo:.2g}" == f"{hi:.2g}" else f"{lo:.2g}–{hi:.2g}"
    steps = [r for r, m in zip(an["resolution"], moving, strict=True) if m and r is not None]
    extra = ""
    if steps and len(steps) == int(moving.sum()):
        step = float(np.median(steps))
        bits = math.log2(2 * math.pi / step)
        extra = (
            f"; steps of {step:.2g}"
            + (f" = 2π/2^{round(bits)}" if abs(bits - round(bits)) < 0.05 else "")
            if src == "q"
            else f"; steps of {step:.2g}"
        )
    return f"its noise floor σ {s}{extra}"
