"""Stage 3, **filter**: hold out the end of the log, filter and differentiate every part apart."""

from __future__ import annotations

import dataclasses

from ..errors import TooShortError
from ..logs.filter_choice import FilterChoice
from ..logs.preprocess import PreparedLog
from ..logs.robot_log import RobotLog
from .options import IdentifyError


@dataclasses.dataclass(frozen=True, eq=False)
class Filtered:
    """The parts of the logs, each filtered, differentiated (and, without a low-pass, decimated).

    Attributes:
      parts: ``(name, log)``: the training part, the held-out part (when
        ``n_raw_hold > 0``), then each validation log.
      prepared: one ``PreparedLog`` per part (at the full rate when
        ``lowpass`` is set: the regressor stage decimates after parallel
        filtering).
      lowpass: the cut-off used, Hz, or None.
      decimate: the decimation used.
      choice: what was chosen (from the training part, or given) and why.
      n_raw: samples of the (resampled) main log.
      n_raw_hold: its last samples held out.
      n_validate: the validation logs.
    """

    parts: tuple[tuple[str, RobotLog], ...]
    prepared: tuple[PreparedLog, ...]
    lowpass: float | None
    decimate: int
    choice: FilterChoice
    n_raw: int
    n_raw_hold: int
    n_validate: int

    def training_rows(self) -> int:
        """The training part's samples after the regressor stage: those ``parallel_filter``
        keeps with a low-pass (its edges dropped, then decimated), all without."""
        from ..logs.preprocess import parallel_rows

        p = self.prepared[0]
        if not self.lowpass:
            return p.n_samples
        return len(range(*parallel_rows(p, self.decimate).indices(p.n_samples)))

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        p0 = self.prepared[0]
        if self.choice.automatic:
            filt = f"{self.choice.reason} (zero-phase Butterworth, order {p0.order})"
        elif self.lowpass:
            filt = f"zero-phase Butterworth low-pass {self.lowpass:g} Hz (order {p0.order})" + (
                f", decimated by {self.decimate}" if self.decimate > 1 else ""
            )
        else:
            filt = "no low-pass (given): q differentiated raw"
        text = (
            f"{filt}; training part {p0.n_samples} samples"
            + (
                f", held-out part (the last {self.n_raw_hold} raw samples) "
                f"{self.prepared[1].n_samples}"
                if self.n_raw_hold
                else ""
            )
            + (f", {self.n_validate} validation log(s)" if self.n_validate else "")
            + f" at {p0.rate:.4g} Hz"
        )
        return text, ()


def part_error(e: IdentifyError, part: str, n: int, holdout: float, lowpass,
               argument: str = "log") -> IdentifyError:  # fmt: skip
    """A building block's error on one part of the logs, as the error about the argument at fault.

    ``lowpass`` and ``decimate`` keep their argument, the part named; a part too
    short for the filter (``TooShortError``) is ``lowpass``'s fault for the
    training part (the filter's edges) and ``holdout``'s for the held-out part;
    anything else is the log's (``argument``: ``"log"`` or ``"validate[k]"``).
    """
    if e.argument in ("lowpass", "decimate"):
        return e.about(context=f"(the {part}: {n} samples)")
    if isinstance(e, TooShortError):
        if part == "training part" and lowpass is not None:
            return IdentifyError(
                "lowpass",
                f"{lowpass:g} Hz: its filter's edges leave nothing of the {part}: {e.template}; "
                "raise `lowpass` or record a longer log",
            )
        if part == "held-out part":
            return IdentifyError(
                "holdout", f"{holdout}: the held-out part is too short to filter: {e.template}"
            )
    return IdentifyError(argument, f"the {part} ({n} samples): {e.template}")


def part_argument(k: int, n_split: int) -> str:
    """The argument of part ``k``: ``"log"`` for the training and held-out parts, else
    ``"validate[j]"``."""
    return "log" if k < n_split else f"validate[{k - n_split}]"


def _slice(log: RobotLog, start: int, stop: int) -> RobotLog:
    def cut(x):
        return None if x is None else x[start:stop]

    return RobotLog(
        t=log.t[start:stop], q=log.q[start:stop], tau=log.tau[start:stop], dq=cut(log.dq),
        ddq=cut(log.ddq), joint_names=log.joint_names,
        base_position=cut(log.base_position), base_quaternion=cut(log.base_quaternion),
        base_velocity=cut(log.base_velocity), contact_frames=log.contact_frames,
        contact_wrenches=cut(log.contact_wrenches), contact=cut(log.contact),
    )  # fmt: skip


def split_holdout(log: RobotLog, holdout: float) -> tuple[tuple[str, RobotLog], ...]:
    """The training part and (for ``holdout > 0``) the held-out last ``holdout`` of ``log``.

    Raises:
      IdentifyError: ``"holdout"``, leaving fewer than 2 samples in a part.
    """
    n_raw = log.n_samples
    n_hold = int(round(n_raw * holdout)) if holdout else 0
    if holdout and n_hold < 2:
        raise IdentifyError(
            "holdout", f"{holdout} of {n_raw} samples holds out {n_hold}; at least 2 are needed"
        )
    if n_raw - n_hold < 2:
        raise IdentifyError("holdout", f"{holdout} leaves {n_raw - n_hold} training samples")
    parts = [("training part", _slice(log, 0, n_raw - n_hold))]
    if n_hold:
        parts.append(("held-out part", _slice(log, n_raw - n_hold, n_raw)))
    return tuple(parts)


def choose(parts, lowpass, decimate) -> FilterChoice:
    """``choose_filter`` on the training part (``parts[0]``), leaving room in every other part.

    Raises:
      IdentifyError: naming ``"lowpass"`` or ``"decimate"`` (e.g. at or above the
        Nyquist frequency), or ``"log"`` (a training part too short for a spectrum).
    """
    from ..logs.filter_choice import choose_filter

    try:
        return choose_filter(
            parts[0][1], lowpass=lowpass, decimate=decimate,
            parts=[lg.n_samples for _, lg in parts[1:]],
        )  # fmt: skip
    except IdentifyError as e:
        if e.argument in ("lowpass", "decimate"):
            raise e.about() from None
        raise IdentifyError("log", f"the training part: {e.template}") from None


def filter_stage(
    logs: tuple[RobotLog, ...], *, lowpass: float | str | None, decimate: int | str,
    holdout: float,
) -> Filtered:  # fmt: skip
    """Split ``logs[0]`` (training, held-out) and filter each part and each of ``logs[1:]``.

    The cut-off and the decimation are ``choose_filter``'s: read off the
    training part's spectrum for ``"auto"``, else as given.

    Args:
      logs: the main log, then the validation logs (uniformly sampled).
      lowpass: Butterworth cut-off in Hz, None (differences of the raw ``q``)
        or ``"auto"``.
      decimate: decimation factor (with a low-pass, applied by the regressor
        stage) or ``"auto"``.
      holdout: the held-out fraction of ``logs[0]``.

    Raises:
      IdentifyError: naming ``"lowpass"``, ``"decimate"``, ``"holdout"``, ``"log"``
        or ``"validate[k]"`` (a part too short for the filter, a Nyquist
        frequency below the cut-off).
    """
    from ..logs.preprocess import prepare_log

    split = split_holdout(logs[0], holdout)
    n_val = len(logs) - 1
    parts = split + tuple((f"validation log {k}", lg) for k, lg in enumerate(logs[1:]))
    choice = choose(parts, lowpass, decimate)
    lowpass, K = choice.lowpass, choice.decimate
    preps = []
    for k, (part, lg) in enumerate(parts):
        try:
            preps.append(prepare_log(lg, lowpass=lowpass, decimate=1 if lowpass else K))
        except IdentifyError as e:
            arg = part_argument(k, len(split))
            raise part_error(e, part, lg.n_samples, holdout, lowpass, arg) from None
    n_hold = split[1][1].n_samples if len(split) > 1 else 0
    return Filtered(parts, tuple(preps), lowpass, K, choice, logs[0].n_samples, n_hold, n_val)
