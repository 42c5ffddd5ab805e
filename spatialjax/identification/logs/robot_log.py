"""Robot logs: the ``RobotLog`` container, ``.npz``/``.csv`` files and joint matching.

Samples are rows, joints columns: ``t (N,)`` s, ``q (N, n)`` rad or m, ``tau (N, n)``
N·m or N, optional ``dq``, ``ddq``; a floating-base log adds the base pose
(``R_world_base`` as ``w x y z``), twist ``[ω; v]`` in the base frame and contacts.
Every problem raises [`LogError`][spatialjax.identification.LogError] naming the file and
column. File formats: docs page ``identification.md#write-the-log``.
``tau`` is the joint-side torque along each joint's axis, signed as
[rnea][spatialjax.multibody.rnea.rnea] returns it, with gravity and friction in it (not
the motor side before the gear, not a motor current).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import tempfile
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import IdentifyError

__all__ = ["JointMatch", "LogError", "RobotLog", "load_log", "match_joints"]

_KINDS = ("q", "tau", "dq", "ddq")  # per-joint column groups, CSV prefix = kind + "_"
_NPZ_KEYS = ("t", "q", "tau", "dq", "ddq", "joint_names")
#: Floating-base arrays of a log (``.npz`` names and ``RobotLog`` fields), in order.
FLOATING_KEYS = (
    "base_position",
    "base_quaternion",
    "base_velocity",
    "contact_frames",
    "contact_wrenches",
    "contact",
)
#: Largest accepted ``| ‖quaternion‖ − 1 |`` of ``base_quaternion``.
QUATERNION_TOL = 1e-3
_BASE_POSE_COLUMNS = ("base_x", "base_y", "base_z", "base_qw", "base_qx", "base_qy", "base_qz")
_BASE_VELOCITY_COLUMNS = ("base_wx", "base_wy", "base_wz", "base_vx", "base_vy", "base_vz")
_WRENCH_PARTS = ("nx", "ny", "nz", "fx", "fy", "fz")
#: Largest joint value accepted, rad or m: beyond it float64 spacing exceeds 2e-10 rad (and
#: sin/cos of such angles say nothing about a joint; no prismatic joint travels 1000 km).
MAX_JOINT_VALUE = 1e6


class LogError(IdentifyError):
    """A robot log that cannot be used, naming the file (or ``RobotLog``) and the column.

    An [IdentifyError][spatialjax.identification.IdentifyError] about the
    argument ``"log"``; its message starts with ``source`` instead.

    Attributes:
      argument: ``"log"``.
      detail: the message without the source (``"column 't': ..."``).
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
        super().__init__("log", f"{where}{message}")
        self.args = (f"{self.source}: {self.detail}",)

    def __str__(self) -> str:
        return self.args[0]


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


def _check_names(names, column, source, what):
    """A tuple of unique, non-empty, stripped names (``what``: what the names name)."""
    if isinstance(names, (str, bytes)):
        raise LogError(
            source,
            column,
            f"expected a sequence of {what} names (a tuple or list of strings), got the string "
            f"{names!r}",
        )
    out = tuple(names)
    seen = set()
    for nm in out:
        if not isinstance(nm, str) or not nm:
            raise LogError(source, column, f"expected non-empty strings, got {nm!r}")
        if nm != nm.strip():
            raise LogError(
                source,
                column,
                f"{nm!r} begins or ends with white space (a CSV header would not keep it); "
                "strip the name",
            )
        if nm in seen:
            raise LogError(source, column, f"duplicate {what} name {nm!r}")
        seen.add(nm)
    return out


def _check_finite_column(x, column, t, source):
    """A LogError naming the log column, its first non-finite sample and that sample's time."""
    finite = np.isfinite(x)
    if not finite.all():
        idx = tuple(int(i) for i in np.argwhere(~finite)[0])
        k = idx[0]
        raise LogError(
            source,
            column,
            f"{x[idx]} at index {idx} (sample {k}, t = {float(t[k])!r}); drop or repair such "
            "samples before identification",
            k,
        )


def continuous_quaternions(quat: np.ndarray) -> np.ndarray:
    """Quaternions ``(N, 4)`` with signs flipped so that ``q_k · q_{k−1} ≥ 0`` for every ``k``."""
    d = np.sum(quat[1:] * quat[:-1], axis=1)
    flips = np.concatenate([[1.0], np.cumprod(np.where(d < 0, -1.0, 1.0))])
    return quat * flips[:, None]


def _check_floating(t, fields, source):
    """Shapes, finiteness and unit quaternions of the floating-base fields; returns them."""
    N = t.shape[0]
    out = dict(fields)
    has_pose = fields["base_position"] is not None or fields["base_quaternion"] is not None
    if has_pose and (fields["base_position"] is None or fields["base_quaternion"] is None):
        missing = "base_position" if fields["base_position"] is None else "base_quaternion"
        raise LogError(source, missing, "missing (a base pose needs both position and quaternion)")
    if not has_pose:
        for k in ("base_velocity", "contact_frames", "contact_wrenches", "contact"):
            if fields[k] is not None:
                raise LogError(
                    source,
                    k,
                    "given without a base pose: base velocity and contacts belong to a "
                    "floating-base log (give base_position and base_quaternion)",
                )
        return out
    for k, width in (("base_position", 3), ("base_quaternion", 4), ("base_velocity", 6)):
        x = fields[k]
        if x is None:
            continue
        x = _as_float64(x, k, source)
        if x.shape != (N, width):
            raise LogError(
                source, k, f"expected shape (N, {width}) with N = {N} (the length of t), got "
                f"shape {x.shape}",
            )  # fmt: skip
        _check_finite_column(x, k, t, source)
        out[k] = x
    norm = np.linalg.norm(out["base_quaternion"], axis=1)
    bad = np.flatnonzero(~(np.abs(norm - 1.0) <= QUATERNION_TOL))
    if bad.size:
        k = int(bad[0])
        raise LogError(
            source,
            "base_quaternion",
            f"not a unit quaternion at sample {k} (t = {float(t[k])!r}): norm {norm[k]:.6g}, "
            f"expected 1 within {QUATERNION_TOL:g} (w x y z, scalar first)",
            k,
        )
    frames = fields["contact_frames"]
    if frames is None:
        for k in ("contact_wrenches", "contact"):
            if fields[k] is not None:
                raise LogError(source, k, "given without contact_frames (the frames' names)")
        return out
    frames = _check_names(frames, "contact_frames", source, "contact frame")
    out["contact_frames"] = frames
    nk = len(frames)
    w = fields["contact_wrenches"]
    if w is not None:
        w = _as_float64(w, "contact_wrenches", source)
        if w.shape != (N, nk, 6):
            raise LogError(
                source,
                "contact_wrenches",
                f"expected shape (N, k, 6) = ({N}, {nk}, 6) (samples, contact_frames, [n; f]), "
                f"got shape {w.shape}",
            )
        _check_finite_column(w, "contact_wrenches", t, source)
        out["contact_wrenches"] = w
    c = fields["contact"]
    if c is not None:
        c = np.asarray(c)
        if c.dtype != np.bool_:
            raise LogError(
                source,
                "contact",
                f"expected booleans (True while the frame touches), got dtype {c.dtype} "
                "(convert explicitly, e.g. contact != 0)",
            )
        if c.shape != (N, nk):
            raise LogError(
                source,
                "contact",
                f"expected shape (N, k) = ({N}, {nk}) (samples, contact_frames), got shape "
                f"{c.shape}",
            )
        out["contact"] = c
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class RobotLog:
    """One robot log: float64 NumPy arrays, rows = samples.

    Attributes:
      t: ``(N,)`` sample times in s, finite and strictly increasing.
      q: ``(N, n)`` joint positions (rad, or m for prismatic joints), each
        within ``±1e6`` (``MAX_JOINT_VALUE``).
      tau: ``(N, n)`` joint torques (N·m, or N for prismatic joints): the joint-side
        torque along each joint's axis, signed as ``rnea`` returns it, with gravity and
        friction in it.
      dq: ``(N, n)`` joint velocities, or None.
      ddq: ``(N, n)`` joint accelerations, or None.
      joint_names: ``n`` unique joint names (the column order), or None (the
        model's movable joints in order).
      base_position: ``(N, 3)`` base origin in the world (m), or None (a
        fixed-base log).
      base_quaternion: ``(N, 4)`` base orientation ``R_world_base``, ``w x y
        z``, each within ``1e-3`` of unit norm; given with ``base_position``.
      base_velocity: ``(N, 6)`` base twist ``[ω; v]`` in the base frame
        (rad/s, m/s), or None.
      contact_frames: ``k`` unique names of model frames that touch the
        environment (feet), or None.
      contact_wrenches: ``(N, k, 6)`` wrench ``[n; f]`` the environment exerts
        at each contact frame, in the frame's axes about its origin (N·m, N),
        or None.
      contact: ``(N, k)`` booleans, True while the frame touches, or None.
      notes: what the reader decided (a bag's time base, merged or ignored
        joints); not saved with the log.

    The constructor raises [`LogError`][spatialjax.identification.LogError] on bad shapes,
    values, time order or names; integer arrays are refused. Contact wrenches and
    schedules need ``contact_frames``.
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    dq: np.ndarray | None = None
    ddq: np.ndarray | None = None
    joint_names: tuple[str, ...] | None = None
    base_position: np.ndarray | None = None
    base_quaternion: np.ndarray | None = None
    base_velocity: np.ndarray | None = None
    contact_frames: tuple[str, ...] | None = None
    contact_wrenches: np.ndarray | None = None
    contact: np.ndarray | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if isinstance(self.notes, str) or not all(isinstance(n, str) for n in self.notes):
            raise LogError("RobotLog", "notes", f"expected a tuple of strings, got {self.notes!r}")
        object.__setattr__(self, "notes", tuple(self.notes))
        t, arrs, names = _check_arrays(
            self.t, self.q, self.tau, self.dq, self.ddq, self.joint_names, "RobotLog"
        )
        object.__setattr__(self, "t", t)
        for kind, x in arrs.items():
            object.__setattr__(self, kind, x)
        object.__setattr__(self, "joint_names", names)
        fl = _check_floating(t, {k: getattr(self, k) for k in FLOATING_KEYS}, "RobotLog")
        for k, x in fl.items():
            object.__setattr__(self, k, x)

    @property
    def floating_base(self) -> bool:
        """Whether the log has a base pose (a floating-base robot's log)."""
        return self.base_position is not None

    @property
    def n_contacts(self) -> int:
        """``k``, the number of contact frames (0 without them)."""
        return 0 if self.contact_frames is None else len(self.contact_frames)

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
        if self.floating_base:
            extra += ", floating base" + (
                ", base_velocity" if self.base_velocity is not None else ""
            )
            if self.contact_frames is not None:
                what = [k for k in ("contact_wrenches", "contact") if getattr(self, k) is not None]
                extra += f", contact_frames={self.contact_frames}" + "".join(f", {k}" for k in what)
        return (
            f"RobotLog(N={self.n_samples}, n={self.n_joints}, t=[{self.t[0]:g}, {self.t[-1]:g}] s"
            f"{extra}, joint_names={self.joint_names})"
        )

    def save(self, path, *, overwrite: bool = False) -> Path:
        """Write the log to ``path`` as ``.npz`` or ``.csv`` (by suffix), atomically.

        Args:
          path: destination; its suffix picks the format.
          overwrite: replace an existing file (default: refuse).

        Returns:
          The path written.

        Raises:
          FileExistsError: ``path`` exists and ``overwrite`` is False.
          FileNotFoundError: ``path``'s folder does not exist (naming ``path``).
          OSError: the write failed (naming ``path``).
          ValueError: an unknown suffix, or a CSV for a log without joint names.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".npz", ".csv"):
            raise IdentifyError("path", f"expected a .npz or .csv file name, got {str(path)!r}")
        if suffix == ".csv" and self.joint_names is None:
            raise IdentifyError(
                "joint_names",
                "a CSV log names its columns q_<joint>, tau_<joint>, ...; "
                "build the RobotLog with joint_names=... to save it as CSV",
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
                    for k in FLOATING_KEYS:
                        x = getattr(self, k)
                        if x is not None:
                            arrays[k] = np.asarray(x, dtype=str) if k == "contact_frames" else x
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
                raise IdentifyError("joint_names", f"{h!r} cannot be a CSV column name")
        blocks: list[np.ndarray] = [self.t[:, None]] + [getattr(self, k) for k in kinds]
        if self.floating_base:
            header += list(_BASE_POSE_COLUMNS)
            blocks += [np.asarray(self.base_position), np.asarray(self.base_quaternion)]
            if self.base_velocity is not None:
                header += list(_BASE_VELOCITY_COLUMNS)
                blocks.append(self.base_velocity)
            frames = self.contact_frames or ()
            for f in frames:
                if "," in f or "\n" in f or '"' in f:
                    raise IdentifyError(
                        "contact_frames", f"{f!r} cannot be part of a CSV column name"
                    )
            if self.contact is not None:
                header += [f"contact_{f}" for f in frames]
                blocks.append(self.contact.astype(np.float64))
            if self.contact_wrenches is not None:
                header += [f"wrench_{c}_{f}" for f in frames for c in _WRENCH_PARTS]
                blocks.append(self.contact_wrenches.reshape(self.n_samples, -1))
            if frames and self.contact is None and self.contact_wrenches is None:
                raise IdentifyError(
                    "contact_frames",
                    "a CSV log names its contact frames through contact_<frame> "
                    "or wrench_*_<frame> columns; without a schedule or wrenches save it as .npz",
                )
        data = np.concatenate(blocks, axis=1)
        fh.write(",".join(header) + "\n")
        for row in data.tolist():  # Python floats: repr is the shortest exact round trip
            fh.write(",".join(map(repr, row)) + "\n")


def _read_csv(path: Path):
    header, seen, rows = _csv_rows(path)
    cols = _csv_columns(path, header)
    groups, joint_order = cols.groups, cols.joint_order
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
        return _csv_numbers(path, rows, col_index, name)

    t = parse(seen["t"], "t")
    arrays = {}
    for k in _KINDS:
        if groups[k]:
            arrays[k] = np.stack([parse(groups[k][nm], f"{k}_{nm}") for nm in joint_order], axis=1)
        else:
            arrays[k] = None
    floating = _csv_floating(path, cols, parse, len(t))
    return t, arrays, tuple(joint_order), floating


def _csv_rows(path: Path):
    """``(header, {column: index}, data rows)`` of a CSV log; blank lines skipped."""
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
    return header, seen, rows


@dataclasses.dataclass
class _CsvColumns:
    """Where each CSV column goes: ``groups``, ``joint_order``, ``base``, contacts, wrenches."""

    groups: dict
    joint_order: list
    base: dict
    contact_cols: dict
    wrench_cols: dict
    frame_order: list


def _csv_columns(path: Path, header) -> _CsvColumns:
    """Sort the header's columns by the column rule (raise for an unknown one)."""
    groups: dict[str, dict[str, int]] = {k: {} for k in _KINDS}
    joint_order: list[str] = []
    base: dict[str, int] = {}
    contact_cols: dict[str, int] = {}
    wrench_cols: dict[tuple[str, str], int] = {}
    frame_order: list[str] = []
    for i, h in enumerate(header):
        if h == "t":
            continue
        if h in _BASE_POSE_COLUMNS or h in _BASE_VELOCITY_COLUMNS:
            base[h] = i
            continue
        frame = None
        if h.startswith("contact_") and len(h) > len("contact_"):
            frame = h[len("contact_") :]
            contact_cols[frame] = i
        elif (
            h.startswith("wrench_")
            and h[len("wrench_") : len("wrench_") + 2] in _WRENCH_PARTS
            and h[len("wrench_") + 2 : len("wrench_") + 3] == "_"
            and len(h) > len("wrench_nx_")
        ):
            frame = h[len("wrench_nx_") :]
            wrench_cols[(frame, h[len("wrench_") : len("wrench_") + 2])] = i
        if frame is not None:
            if frame not in frame_order:
                frame_order.append(frame)
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
                "optionally dq_<joint>, ddq_<joint>; for a floating-base log base_x, base_y, "
                "base_z, base_qw, base_qx, base_qy, base_qz, optionally base_wx ... base_vz, "
                "contact_<frame>, wrench_nx_<frame> ... wrench_fz_<frame> (remove other columns)",
            )
    return _CsvColumns(groups, joint_order, base, contact_cols, wrench_cols, frame_order)


def _csv_numbers(path: Path, rows, col_index: int, name: str) -> np.ndarray:
    """One column as float64, or a LogError naming the column and the first bad sample."""
    out = np.empty(len(rows))
    for r, row in enumerate(rows):
        s = row[col_index].strip()
        try:
            out[r] = float(s)
        except ValueError:
            raise LogError(path, name, f"sample {r}: {s!r} is not a number", r) from None
    return out


def _csv_floating(path: Path, cols: _CsvColumns, parse, n: int) -> dict:
    """The floating-base fields (``FLOATING_KEYS``; ``None`` where the log has no columns)."""
    base, frame_order = cols.base, cols.frame_order
    floating: dict = dict.fromkeys(FLOATING_KEYS)
    for names, key in ((_BASE_POSE_COLUMNS, None), (_BASE_VELOCITY_COLUMNS, "base_velocity")):
        present = [c for c in names if c in base]
        if not present:
            continue
        for c in names:
            if c not in base:
                raise LogError(path, c, f"missing (the log has {present[0]})")
        block = np.stack([parse(base[c], c) for c in names], axis=1)
        if key is None:
            floating["base_position"], floating["base_quaternion"] = block[:, :3], block[:, 3:]
        else:
            floating[key] = block
    if frame_order:
        floating["contact_frames"] = tuple(frame_order)
        if cols.contact_cols:
            floating["contact"] = _csv_contacts(path, cols, parse)
        if cols.wrench_cols:
            blocks = []
            for f in frame_order:
                for c in _WRENCH_PARTS:
                    if (f, c) not in cols.wrench_cols:
                        raise LogError(
                            path, f"wrench_{c}_{f}", "missing (six wrench columns per contact "
                            "frame, for every frame or none)",
                        )  # fmt: skip
                    blocks.append(parse(cols.wrench_cols[(f, c)], f"wrench_{c}_{f}"))
            floating["contact_wrenches"] = np.stack(blocks, axis=1).reshape(n, -1, 6)
    return floating


def _csv_contacts(path: Path, cols: _CsvColumns, parse) -> np.ndarray:
    """``(T, n_frames)`` booleans from the ``contact_<frame>`` columns (each 0 or 1)."""
    out = []
    for f in cols.frame_order:
        if f not in cols.contact_cols:
            raise LogError(path, f"contact_{f}", "missing (every contact frame or none)")
        x = parse(cols.contact_cols[f], f"contact_{f}")
        bad = np.flatnonzero((x != 0) & (x != 1))
        if bad.size:
            r = int(bad[0])
            raise LogError(path, f"contact_{f}", f"sample {r}: {x[r]!r} is not 0 or 1", r)
        out.append(x == 1)
    return np.stack(out, axis=1)


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
            if k not in _NPZ_KEYS + FLOATING_KEYS:
                raise LogError(
                    path,
                    k,
                    f"unknown array; expected some of {', '.join(_NPZ_KEYS + FLOATING_KEYS)}",
                )
        for k in ("t", "q", "tau"):
            if k not in data.files:
                raise LogError(path, k, "missing (t, q and tau are required)")
        try:
            arrays = {k: (data[k] if k in data.files else None) for k in _KINDS}
            t = data["t"]
            names = data["joint_names"] if "joint_names" in data.files else None
            floating: dict = {k: (data[k] if k in data.files else None) for k in FLOATING_KEYS}
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
    frames = floating["contact_frames"]
    if frames is not None:
        if frames.dtype.kind != "U" or frames.ndim != 1:
            raise LogError(
                path,
                "contact_frames",
                f"expected a (k,) array of strings, got dtype {frames.dtype} shape {frames.shape}",
            )
        floating["contact_frames"] = tuple(str(s) for s in frames)
    return t, arrays, names, floating


def load_log(
    path,
    *,
    topic: str | None = None,
    joints: Sequence[str] | None = None,
    base_topic: str | None = "auto",
    base_frame: str | None = None,
    wrench_topics: str | Sequence[str] | None = "auto",
) -> RobotLog:
    """Read a robot log: a ``.npz`` or ``.csv`` file or a ROS bag.

    Formats: docs page ``identification.md#write-the-log``; bags:
    ``identification.md#from-a-ros-bag``.

    Args:
      path: the file; ``.npz`` or ``.csv``, or a ROS bag (``.bag``, ``.mcap``,
        ``.db3`` or a ROS 2 folder with ``metadata.yaml``; needs
        ``pip install "spatialjax[ros]"``).
      topic: bags only: the ``sensor_msgs/JointState`` topic (default: the only
        one, else ``/joint_states``).
      joints: bags only: the joints to read (default: every joint on the topic).
      base_topic: bags only: the base pose's ``nav_msgs/Odometry``,
        ``geometry_msgs/PoseStamped`` or ``tf2_msgs/TFMessage`` topic;
        ``"auto"`` (default): the only Odometry topic, if any; None: none.
      base_frame: bags only, a TFMessage ``base_topic``: the base's
        ``child_frame_id`` (default: the topic's only child frame).
      wrench_topics: bags only, with a base pose: the
        ``geometry_msgs/WrenchStamped`` topics of the contacts; ``"auto"``
        (default): all of them.

    Returns:
      [`RobotLog`][spatialjax.identification.RobotLog] with float64 arrays (a CSV's joints in the
      order of its ``q_`` columns, a bag's in order of first appearance).

    Raises:
      FileNotFoundError: no such file.
      ImportError: a bag without ``rosbags`` installed (naming the extra).
      BagOptionError: (a ``LogError``) a bag option that does not suit the bag,
        named in ``argument``.
      LogError: a problem with the file or its content, naming the file and
        the column (unknown suffix, corrupted file, missing or unknown column,
        NaN/inf with the first sample index, wrong field count, shapes that
        disagree, non-increasing ``t``, duplicate names, a quaternion off unit
        norm, contacts without a base pose).
    """
    from .rosbag import is_bag, read_bag

    path = Path(path)
    suffix = path.suffix.lower()
    bag_options: dict = dict(topic=topic, joints=joints, base_topic=base_topic,
                             base_frame=base_frame, wrench_topics=wrench_topics)  # fmt: skip
    notes: tuple[str, ...] = ()
    if is_bag(path):
        t, arrays, names, floating, notes = read_bag(path, **bag_options)
    else:
        if suffix not in (".npz", ".csv"):
            raise LogError(
                path, None, "expected a .npz or .csv file or a ROS bag (.bag, .mcap, .db3, a "
                "folder with metadata.yaml); the suffix picks the reader",
            )  # fmt: skip
        defaults = dict(topic=None, joints=None, base_topic="auto", base_frame=None,
                        wrench_topics="auto")  # fmt: skip
        for k, v in bag_options.items():
            if v != defaults[k]:
                raise IdentifyError(k, f"applies to ROS bags only, and {str(path)!r} is not one")
        if not path.is_file():
            raise FileNotFoundError(f"path: no such file {str(path)!r}")
        t, arrays, names, floating = _read_npz(path) if suffix == ".npz" else _read_csv(path)
    t, arrays, names = _check_arrays(
        t, arrays["q"], arrays["tau"], arrays["dq"], arrays["ddq"], names, str(path)
    )
    floating = _check_floating(t, floating, str(path))
    return RobotLog(t=t, joint_names=names, **arrays, **floating, notes=notes)  # pyright: ignore[reportArgumentType]


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
            raise IdentifyError(
                "log", f"has {log.n_joints} joints, this match uses column {max(cols)}"
            )
        pick = lambda x: None if x is None else x[:, cols]  # noqa: E731
        return dataclasses.replace(  # the base pose and the contacts are kept
            log,
            q=log.q[:, cols],
            tau=log.tau[:, cols],
            dq=pick(log.dq),
            ddq=pick(log.ddq),
            joint_names=self.joint_names,
        )


def match_joints(log: RobotLog, model, lock: Mapping[str, float] | None = None) -> JointMatch:
    """Map a log's joints onto a model's movable (one-degree-of-freedom) joints.

    A log with ``joint_names=None`` must have exactly the model's movable joints, in model order.
    Otherwise every log joint must be a movable joint of ``model``; model joints absent from the
    log are locked at 0 or at the value in ``lock``; log joints named in ``lock`` are locked too
    and their columns dropped.

    Args:
      log: the [`RobotLog`][spatialjax.identification.RobotLog].
      model: a [Model][spatialjax.multibody.Model] loaded without locked joints; floating-base
        (a free flyer) exactly when the log has a base pose.
      lock: ``{joint name: value}`` (rad or m) for joints to lock.

    Returns:
      [JointMatch][spatialjax.identification.JointMatch]; ``match.apply(log)`` reorders the
      log's columns (and keeps its base pose and contacts).

    Raises:
      IdentifyError: naming the argument (``.argument``): ``"model"`` or ``"log"`` when one has a
        base pose and the other not, a log joint that is no movable joint of the model, or a
        nameless log with the wrong column count; ``"lock"``, a name that is no movable joint, a
        value that is not a finite number, or locks that leave the log no joint.
    """
    floating = bool(getattr(model, "floating_base", False))
    if floating and not log.floating_base:
        raise IdentifyError(
            "model",
            f"{model.name!r} is floating-base but the log has no base pose "
            "(base_position, base_quaternion); load the model without floating_base=True for "
            "a fixed-base log",
        )
    if log.floating_base and not floating:
        raise IdentifyError(
            "log",
            f"has a base pose (a floating-base log) but model {model.name!r} is fixed-base; "
            "load it with floating_base=True",
        )
    movable = tuple(
        nm
        for nm, ty in zip(model.joint_names, model.joint_types, strict=True)
        if ty != "free_flyer"
    )
    lock = dict(lock or {})
    for nm, value in lock.items():
        if nm not in movable:
            raise IdentifyError(
                "lock",
                f"{nm!r} is no movable joint of model {model.name!r} "
                f"(movable joints: {', '.join(movable)})",
            )
        if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value)):
            raise IdentifyError("lock", f"{nm!r} needs a finite number, got {value!r}")
    names = log.joint_names
    if names is None:
        if log.n_joints != len(movable):
            raise IdentifyError(
                "log",
                f"has {log.n_joints} unnamed joint columns but model {model.name!r} has "
                f"{len(movable)} movable joints ({', '.join(movable)}); name the columns "
                "(joint_names) to use a subset",
            )
        names = movable
    for nm in names:
        if nm not in movable:
            raise IdentifyError(
                "log",
                f"joint {nm!r} is no movable joint of model {model.name!r} "
                f"(movable joints: {', '.join(movable)})",
            )
    index = {nm: j for j, nm in enumerate(names)}
    used = tuple(nm for nm in movable if nm in index and nm not in lock)
    if not used:
        raise IdentifyError("lock", "leaves no joint of the log to identify")
    locked = {nm: float(lock.get(nm, 0.0)) for nm in movable if nm not in used}
    return JointMatch(
        joint_names=used,
        columns=tuple(index[nm] for nm in used),
        locked=locked,
        dropped=tuple(nm for nm in names if nm in lock),
    )
