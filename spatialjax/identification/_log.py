"""Robot logs: the ``RobotLog`` container, ``.npz``/``.csv`` files and joint matching.

A robot log is what a controller records along an excitation trajectory:
sample times ``t (N,)`` in s, joint positions ``q (N, n)`` (rad or m) and
joint torques ``tau (N, n)`` (N·m or N), optionally velocities ``dq`` and
accelerations ``ddq`` (N, n), with the joints named. Rows are samples,
columns joints.

File formats (chosen by the suffix):

* ``.npz``: arrays ``t (N,)``, ``q (N, n)``, ``tau (N, n)``, optional
  ``dq (N, n)``, ``ddq (N, n)`` and ``joint_names (n,)`` (strings; default:
  the model's movable joints in order, see
  [`match_joints`][spatialjax.identification.match_joints]). No other array names are accepted.
* ``.csv``: one header line, then one line per sample, comma separated. The
  column rule: ``t``, then for every joint ``<joint>`` the columns
  ``q_<joint>`` and ``tau_<joint>``, optionally ``dq_<joint>`` and
  ``ddq_<joint>`` (for all joints or none), in any order. The joints and their
  order are those of the ``q_`` columns. Numbers are written with Python's
  ``repr`` (the shortest string that reads back to the same float64), so a
  save/load round trip is bit-exact.

Every problem with a log raises [`LogError`][spatialjax.identification.LogError] (a ``ValueError``)
naming the file and the column: a missing or unknown column, a NaN or infinite value
(with its first sample index), a line with the wrong number of fields,
inconsistent array shapes, a non-finite or not strictly increasing ``t``,
duplicate joint names.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

__all__ = ["JointMatch", "LogError", "RobotLog", "load_log", "match_joints"]

_KINDS = ("q", "tau", "dq", "ddq")  # per-joint column groups, CSV prefix = kind + "_"
_NPZ_KEYS = ("t", "q", "tau", "dq", "ddq", "joint_names")
#: Largest joint value accepted, rad or m: beyond it float64 spacing exceeds 2e-10 rad (and
#: sin/cos of such angles say nothing about a joint; no prismatic joint travels 1000 km).
MAX_JOINT_VALUE = 1e6


class LogError(ValueError):
    """A robot log that cannot be used, naming the file (or ``RobotLog``) and the column.

    Attributes:
      source: the file path, or ``"RobotLog"`` for an in-memory log.
      column: the column or array concerned (``"t"``, ``"q_panda_joint3"``,
        ``"joint_names"``, ...), or None.
      sample: the first offending sample index (0-based), or None.
    """

    def __init__(self, source, column, message, sample=None):
        self.source = str(source)
        self.column = column
        self.sample = sample
        where = f"column {column!r}: " if column is not None else ""
        super().__init__(f"{self.source}: {where}{message}")


def _column(kind, j, names):
    return f"{kind}_{names[j]}" if names is not None else f"{kind}[:, {j}]"


def _as_float64(x, name, source):
    arr = np.asarray(x)
    if arr.dtype.kind != "f":
        raise LogError(
            source,
            name,
            f"expected floating-point numbers, got dtype {arr.dtype} (convert "
            "explicitly; integer or text data are not converted silently)",
        )
    return np.asarray(arr, np.float64)


def _check_arrays(t, q, tau, dq, ddq, joint_names, source):
    """Shapes, finiteness, monotonic time and unique names; returns the float64 arrays."""
    t = _as_float64(t, "t", source)
    if t.ndim != 1:
        raise LogError(source, "t", f"expected shape (N,), got shape {t.shape}")
    N = t.shape[0]
    if N < 2:
        raise LogError(source, "t", f"expected at least 2 samples, got {N}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise LogError(source, "t", f"non-finite time {t[bad[0]]} at sample {bad[0]}", int(bad[0]))
    steps = np.diff(t)
    bad = np.flatnonzero(~(steps > 0))
    if bad.size:
        k = int(bad[0]) + 1
        raise LogError(
            source,
            "t",
            f"not strictly increasing: t[{k}] = {float(t[k])!r} after t[{k - 1}] = "
            f"{float(t[k - 1])!r} (sample {k})",
            k,
        )
    if joint_names is not None:
        if isinstance(joint_names, (str, bytes)):
            raise LogError(
                source,
                "joint_names",
                f"expected a sequence of names (a tuple or list of strings), got the string "
                f"{joint_names!r}",
            )
        names = tuple(joint_names)
        for nm in names:
            if not isinstance(nm, str) or not nm:
                raise LogError(source, "joint_names", f"expected non-empty strings, got {nm!r}")
            if nm != nm.strip():
                raise LogError(
                    source,
                    "joint_names",
                    f"{nm!r} begins or ends with white space (a CSV header would not keep "
                    "it); strip the name",
                )
        seen = set()
        for nm in names:
            if nm in seen:
                raise LogError(source, "joint_names", f"duplicate joint name {nm!r}")
            seen.add(nm)
    else:
        names = None
    out = {}
    n = None
    for kind, x in (("q", q), ("tau", tau), ("dq", dq), ("ddq", ddq)):
        if x is None:
            if kind in ("q", "tau"):
                raise LogError(source, kind, "missing (q and tau are required)")
            out[kind] = None
            continue
        x = _as_float64(x, kind, source)
        if x.ndim != 2 or x.shape[0] != N:
            raise LogError(
                source,
                kind,
                f"expected shape (N, n_joints) with N = {N} (the length of t), got shape {x.shape}",
            )
        if n is None:
            n = x.shape[1]
            if names is not None and len(names) != n:
                raise LogError(
                    source, "joint_names", f"{len(names)} names for {n} joint columns of q"
                )
        elif x.shape[1] != n:
            raise LogError(source, kind, f"expected {n} joint columns (as q), got {x.shape[1]}")
        finite = np.isfinite(x)
        if not finite.all():
            k, j = (int(i) for i in np.argwhere(~finite)[0])
            raise LogError(
                source,
                _column(kind, j, names),
                f"{x[k, j]} at sample {k} (t = {float(t[k])!r}); "
                "drop or repair such samples before identification",
                k,
            )
        if kind == "q":
            big = np.abs(x) > MAX_JOINT_VALUE
            if big.any():
                k, j = (int(i) for i in np.argwhere(big)[0])
                raise LogError(
                    source,
                    _column(kind, j, names),
                    f"{float(x[k, j])!r} at sample {k} (t = {float(t[k])!r}): joint values beyond "
                    f"±{MAX_JOINT_VALUE:g} (rad or m) are refused (trigonometry of such angles "
                    "is meaningless); check the units",
                    k,
                )
        out[kind] = x
    return t, out, names


@dataclasses.dataclass(frozen=True, eq=False)
class RobotLog:
    """One robot log (see the module docstring): float64 NumPy arrays, rows = samples.

    Attributes:
      t: ``(N,)`` sample times in s, finite and strictly increasing.
      q: ``(N, n)`` joint positions (rad, or m for prismatic joints), each
        within ``±1e6`` (``MAX_JOINT_VALUE``).
      tau: ``(N, n)`` joint torques (N·m, or N), the motor side as measured.
      dq: ``(N, n)`` joint velocities, or None (hardware logs usually lack
        them: [`prepare_log`][spatialjax.identification.prepare_log] differentiates).
      ddq: ``(N, n)`` joint accelerations, or None.
      joint_names: ``n`` unique joint names (the column order; a sequence of
        strings, not one string; no leading or trailing white space), or None
        (then the columns are the model's movable joints in order).

    The constructor checks shapes, finiteness, time order and names and
    raises [`LogError`][spatialjax.identification.LogError] (source ``"RobotLog"``); floating arrays
    are stored as float64 (exact), integer arrays are refused.
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    dq: np.ndarray | None = None
    ddq: np.ndarray | None = None
    joint_names: tuple[str, ...] | None = None

    def __post_init__(self):
        t, arrs, names = _check_arrays(
            self.t, self.q, self.tau, self.dq, self.ddq, self.joint_names, "RobotLog"
        )
        object.__setattr__(self, "t", t)
        for kind, x in arrs.items():
            object.__setattr__(self, kind, x)
        object.__setattr__(self, "joint_names", names)

    @property
    def n_samples(self) -> int:
        """``N``, the number of samples."""
        return int(self.t.shape[0])

    @property
    def n_joints(self) -> int:
        """``n``, the number of joint columns."""
        return int(self.q.shape[1])

    @property
    def rate(self) -> float:
        """Mean sample rate in Hz, ``(N − 1) / (t[-1] − t[0])``."""
        return float((self.n_samples - 1) / (self.t[-1] - self.t[0]))

    def __repr__(self) -> str:
        extra = "".join(f", {k}" for k in ("dq", "ddq") if getattr(self, k) is not None)
        return (
            f"RobotLog(N={self.n_samples}, n={self.n_joints}, t=[{self.t[0]:g}, {self.t[-1]:g}] s"
            f"{extra}, joint_names={self.joint_names})"
        )

    def save(self, path, *, overwrite: bool = False) -> Path:
        """Write the log to ``path`` as ``.npz`` or ``.csv`` (by suffix; see the module docstring).

        The file is written to a temporary file in the same folder and moved
        into place, so a failed write leaves nothing behind.

        Args:
          path: destination; its suffix picks the format.
          overwrite: replace an existing file (default: refuse).

        Returns:
          The path written.

        Raises:
          FileExistsError: ``path`` exists and ``overwrite`` is False.
          FileNotFoundError: ``path``'s folder does not exist (naming ``path``).
          OSError: the write failed (naming ``path``, not the temporary file).
          ValueError: an unknown suffix, or a CSV for a log without joint names
            (the CSV column rule needs them).
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".npz", ".csv"):
            raise ValueError(f"path: expected a .npz or .csv file name, got {str(path)!r}")
        if suffix == ".csv" and self.joint_names is None:
            raise ValueError(
                "joint_names: a CSV log names its columns q_<joint>, tau_<joint>, ...; "
                "build the RobotLog with joint_names=... to save it as CSV"
            )
        if path.exists() and not overwrite:
            raise FileExistsError(f"path: {str(path)!r} exists; pass overwrite=True to replace it")
        folder = path.parent
        if not folder.is_dir():
            raise FileNotFoundError(
                f"path: cannot write {str(path)!r}: no such folder {str(folder)!r}"
            )
        try:
            fd, tmp = tempfile.mkstemp(suffix=suffix, prefix=".tmp-", dir=folder)
        except OSError as e:
            raise type(e)(e.errno, f"path: cannot write {str(path)!r}: {e.strerror}") from None
        try:
            with os.fdopen(fd, "wb") if suffix == ".npz" else os.fdopen(fd, "w", newline="") as fh:
                if suffix == ".npz":
                    arrays = {"t": self.t, "q": self.q, "tau": self.tau}
                    for k in ("dq", "ddq"):
                        if getattr(self, k) is not None:
                            arrays[k] = getattr(self, k)
                    if self.joint_names is not None:
                        arrays["joint_names"] = np.asarray(self.joint_names, dtype=str)
                    np.savez(fh, **arrays)  # pyright: ignore[reportArgumentType]
                else:
                    self._write_csv(fh)
            os.replace(tmp, path)
        except OSError as e:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise type(e)(e.errno, f"path: cannot write {str(path)!r}: {e.strerror}") from None
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    def _write_csv(self, fh) -> None:
        names = self.joint_names
        assert names is not None
        kinds = [k for k in _KINDS if getattr(self, k) is not None]
        header = ["t"] + [f"{k}_{nm}" for k in kinds for nm in names]
        for h in header:
            if "," in h or "\n" in h or '"' in h:
                raise ValueError(f"joint_names: {h!r} cannot be a CSV column name")
        data = np.concatenate([self.t[:, None]] + [getattr(self, k) for k in kinds], axis=1)
        fh.write(",".join(header) + "\n")
        for row in data.tolist():  # Python floats: repr is the shortest exact round trip
            fh.write(",".join(map(repr, row)) + "\n")


def _read_csv(path: Path):
    # utf-8-sig: a byte-order mark (what spreadsheet programs write) is not part of the
    # first column's name
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise LogError(path, None, "empty file: expected a header line") from None
        header = [h.strip() for h in header]
        seen: dict[str, int] = {}
        for i, h in enumerate(header):
            if h in seen:
                raise LogError(
                    path, h, f"appears twice in the header (fields {seen[h] + 1} and {i + 1})"
                )
            seen[h] = i
        rows = []
        for row in reader:
            if not row or all(not f.strip() for f in row):
                continue
            if len(row) != len(header):
                raise LogError(
                    path,
                    None,
                    f"line {reader.line_num} has {len(row)} fields, the header has {len(header)}",
                    len(rows),
                )
            rows.append(row)
    if not rows:
        raise LogError(path, None, "no data lines after the header")
    groups: dict[str, dict[str, int]] = {k: {} for k in _KINDS}
    joint_order: list[str] = []
    for i, h in enumerate(header):
        if h == "t":
            continue
        for k in ("ddq", "dq", "tau", "q"):  # longest prefix first: "ddq_" before "dq_" before "q_"
            if h.startswith(k + "_") and len(h) > len(k) + 1:
                nm = h[len(k) + 1 :]
                groups[k][nm] = i
                if k == "q":
                    joint_order.append(nm)
                break
        else:
            raise LogError(
                path,
                h,
                "unknown column; the column rule is t, q_<joint>, tau_<joint> and "
                "optionally dq_<joint>, ddq_<joint> (remove other columns)",
            )
    if "t" not in seen:
        raise LogError(path, "t", "missing (the sample times in s)")
    if not joint_order:
        raise LogError(path, "q_<joint>", "missing: no joint position columns")
    for k in ("tau", "dq", "ddq"):
        for nm in groups[k]:
            if nm not in groups["q"]:
                raise LogError(path, f"q_{nm}", f"missing (the log has {k}_{nm})")
    for k in ("tau", "dq", "ddq"):
        if k != "tau" and not groups[k]:
            continue
        for nm in joint_order:
            if nm not in groups[k]:
                raise LogError(path, f"{k}_{nm}", "missing")

    def parse(col_index, name):
        out = np.empty(len(rows))
        for r, row in enumerate(rows):
            s = row[col_index].strip()
            try:
                out[r] = float(s)
            except ValueError:
                raise LogError(path, name, f"sample {r}: {s!r} is not a number", r) from None
        return out

    t = parse(seen["t"], "t")
    arrays = {}
    for k in _KINDS:
        if groups[k]:
            arrays[k] = np.stack([parse(groups[k][nm], f"{k}_{nm}") for nm in joint_order], axis=1)
        else:
            arrays[k] = None
    return t, arrays, tuple(joint_order)


_DAMAGED = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


def _read_npz(path: Path):
    try:
        data = np.load(path, allow_pickle=False)
    except _DAMAGED as e:
        what = "empty" if isinstance(e, EOFError) else f"{type(e).__name__}: {e}"
        raise LogError(path, None, f"not a readable .npz file ({what})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise LogError(
            path,
            None,
            f"holds a single array (shape {getattr(data, 'shape', '?')}, as numpy.save "
            "writes), not an .npz archive of t, q, tau, ... (numpy.savez)",
        )
    with data:
        for k in data.files:
            if k not in _NPZ_KEYS:
                raise LogError(path, k, f"unknown array; expected some of {', '.join(_NPZ_KEYS)}")
        for k in ("t", "q", "tau"):
            if k not in data.files:
                raise LogError(path, k, "missing (t, q and tau are required)")
        try:
            arrays = {k: (data[k] if k in data.files else None) for k in _KINDS}
            t = data["t"]
            names = data["joint_names"] if "joint_names" in data.files else None
        except ValueError as e:  # object arrays need pickle, which is refused
            raise LogError(path, None, f"cannot read an array without pickle ({e})") from None
        except _DAMAGED as e:  # truncated or corrupted members (bad CRC-32, ...)
            raise LogError(path, None, f"damaged .npz file ({type(e).__name__}: {e})") from None
    if names is not None:
        if names.dtype.kind != "U" or names.ndim != 1:
            raise LogError(
                path,
                "joint_names",
                f"expected a (n,) array of strings, got dtype {names.dtype} shape {names.shape}",
            )
        names = tuple(str(s) for s in names)
    return t, arrays, names


def load_log(path) -> RobotLog:
    """Read a robot log from a ``.npz`` or ``.csv`` file (formats: the module docstring).

    Args:
      path: the file; its suffix (``.npz`` or ``.csv``) picks the reader.

    Returns:
      [`RobotLog`][spatialjax.identification.RobotLog] with float64 arrays (a CSV's joints in the
      order of its ``q_`` columns).

    Raises:
      FileNotFoundError: no such file.
      LogError: a problem with the file or its content, naming the file and
        the column: another suffix than ``.npz``/``.csv``, an empty,
        truncated or corrupted ``.npz``, a single ``numpy.save`` array under
        an ``.npz`` name, a missing or unknown column, duplicate column,
        NaN/inf or a joint value beyond ``±1e6`` with the first sample index,
        a line with the wrong number of fields, shapes that disagree,
        non-finite or non-increasing ``t``, duplicate joint names. A CSV's
        UTF-8 byte-order mark is skipped. Irregular intervals are accepted
        ([`resample_log`][spatialjax.identification.resample_log] makes them uniform).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".csv"):
        raise LogError(path, None, "expected a .npz or .csv file (the suffix picks the reader)")
    if not path.is_file():
        raise FileNotFoundError(f"path: no such file {str(path)!r}")
    t, arrays, names = _read_npz(path) if suffix == ".npz" else _read_csv(path)
    t, arrays, names = _check_arrays(
        t, arrays["q"], arrays["tau"], arrays["dq"], arrays["ddq"], names, str(path)
    )
    return RobotLog(t=t, joint_names=names, **arrays)  # pyright: ignore[reportArgumentType]


@dataclasses.dataclass(frozen=True)
class JointMatch:
    """How a log's joint columns map onto a model's movable joints (from ``match_joints``).

    Attributes:
      joint_names: the model's movable joints that the log drives, in model
        order (the joints of the model loaded with ``locked_joints=locked``).
      columns: for each of them, its column in the log.
      locked: ``{joint: value}`` for the model's movable joints to lock (rad
        or m): those missing from the log (value 0 or the one given) and
        those given in ``lock``; pass it as ``Model.from_urdf(...,
        locked_joints=locked)``.
      dropped: log joints not used because ``lock`` locks them.
    """

    joint_names: tuple[str, ...]
    columns: tuple[int, ...]
    locked: Mapping[str, float]
    dropped: tuple[str, ...]

    def apply(self, log: RobotLog) -> RobotLog:
        """The log with its columns reordered (and dropped) to ``joint_names``' order."""
        cols = list(self.columns)
        if log.n_joints <= (max(cols) if cols else -1):
            raise ValueError(f"log: has {log.n_joints} joints, this match uses column {max(cols)}")
        pick = lambda x: None if x is None else x[:, cols]  # noqa: E731
        return RobotLog(
            t=log.t,
            q=log.q[:, cols],
            tau=log.tau[:, cols],
            dq=pick(log.dq),
            ddq=pick(log.ddq),
            joint_names=self.joint_names,
        )


def match_joints(log: RobotLog, model, lock: Mapping[str, float] | None = None) -> JointMatch:
    """Map a log's joints onto a model's movable (one-degree-of-freedom) joints.

    A log with ``joint_names=None`` must have exactly the model's movable
    joints, in model order. Otherwise every log joint must be a movable joint
    of ``model``; model joints absent from the log are locked at 0 or at the
    value in ``lock``; joints named in ``lock`` that the log has are locked
    too and their columns dropped.

    Args:
      log: the [`RobotLog`][spatialjax.identification.RobotLog].
      model: a fixed-base [`Model`][spatialjax.multibody.Model] loaded without
        locked joints (so that all its movable joints can be matched).
      lock: ``{joint name: value}`` (rad or m) for joints to lock.

    Returns:
      [`JointMatch`][spatialjax.identification.JointMatch]; ``match.apply(log)`` reorders the log's
      columns.

    Raises:
      ValueError: a floating-base model; a log joint or a ``lock`` name that
        is no movable joint of the model (naming it and listing the model's);
        a nameless log whose column count differs from the model's; a log that
        drives no joint once locked ones are dropped.
    """
    if getattr(model, "floating_base", False):
        raise ValueError("model: a floating-base model cannot be matched to a joint log")
    movable = tuple(
        nm
        for nm, ty in zip(model.joint_names, model.joint_types, strict=True)
        if ty != "free_flyer"
    )
    lock = dict(lock or {})
    for nm, value in lock.items():
        if nm not in movable:
            raise ValueError(
                f"lock: {nm!r} is no movable joint of model {model.name!r} "
                f"(movable joints: {', '.join(movable)})"
            )
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value)):
            raise ValueError(f"lock: {nm!r} needs a finite number, got {value!r}")
    names = log.joint_names
    if names is None:
        if log.n_joints != len(movable):
            raise ValueError(
                f"log: has {log.n_joints} unnamed joint columns but model {model.name!r} has "
                f"{len(movable)} movable joints ({', '.join(movable)}); name the columns "
                "(joint_names) to use a subset"
            )
        names = movable
    for nm in names:
        if nm not in movable:
            raise ValueError(
                f"log: joint {nm!r} is no movable joint of model {model.name!r} "
                f"(movable joints: {', '.join(movable)})"
            )
    index = {nm: j for j, nm in enumerate(names)}
    used = tuple(nm for nm in movable if nm in index and nm not in lock)
    if not used:
        raise ValueError("log: no joint left to identify once the locked joints are dropped")
    locked = {nm: float(lock.get(nm, 0.0)) for nm in movable if nm not in used}
    return JointMatch(
        joint_names=used,
        columns=tuple(index[nm] for nm in used),
        locked=locked,
        dropped=tuple(nm for nm in names if nm in lock),
    )
