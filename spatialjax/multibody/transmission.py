r"""Coupled transmissions: motors that drive combinations of joints.

``T`` is the motor-from-joint velocity matrix (``θ̇ = T q̇``, rows motors,
columns joints); motor torques reach the joints as ``Tᵀ τ_m``; joints no motor
drives get their own (ratio 1). MuJoCo's fixed tendon is a motor row. Docs page
``dynamics.md#transmissions`` (Featherstone 2008 §9.2; Todorov et al. 2012).
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: The file values a transmission may carry per motor, in JointModel's kind names.
MOTOR_VALUE_KINDS = ("armature", "viscous", "coulomb")


class TransmissionError(ValueError):
    """A transmission that cannot be used.

    Attributes:
      argument: the argument or file (``"transmission"``, ``"matrix"``, a CSV path).
      detail: the message without the argument.
      row: the CSV row (1 = the header) or the matrix row, or None.
      column: the CSV column name or the matrix column, or None.
    """

    def __init__(self, argument: str, detail: str, row=None, column=None):
        self.argument, self.detail, self.row, self.column = argument, detail, row, column
        where = "".join(
            (f", row {row}" if row is not None else "", f", column {column!r}" if column else "")
        )
        super().__init__(f"{argument}{where}: {detail}")


@dataclasses.dataclass(frozen=True)
class Transmission:
    """The motor-from-joint velocity matrix ``T`` (docs page ``dynamics.md#transmissions``).

    Attributes:
      motors: ``(n_motors,)`` distinct motor names, one per row.
      joints: ``(n,)`` distinct joint names, one per column (other joints of the
        model get their own motor in [complete][spatialjax.multibody.Transmission.complete]).
      matrix: ``n_motors`` rows of ``n`` finite numbers, ``θ̇ = T q̇``; no zero row
        (a tuple of tuples: hashable).
      values: optional ``{kind: (n_motors,)}`` file values per motor
        (``"armature"``, ``"viscous"``, ``"coulomb"``).
      source: where it was read (for messages), or None.

    Raises:
      TransmissionError: names repeated or empty, a matrix of another shape, a
        non-finite entry, a zero row, values of another length.

    Examples:
      >>> t = Transmission(("m5", "m6"), ("j5", "j6"), [[50.0, 0.0], [30.0, 30.0]])
      >>> t.array().tolist()
      [[50.0, 0.0], [30.0, 30.0]]
    """

    motors: tuple[str, ...]
    joints: tuple[str, ...]
    matrix: Any  # array-like in, a tuple of tuples of floats stored
    values: Any = None  # {kind: (n_motors,)} in, a tuple of (kind, values) pairs stored
    source: str | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self):
        arg = self.source or "transmission"
        motors, joints = _names(self.motors, "motors", arg), _names(self.joints, "joints", arg)
        T = np.asarray(self.matrix, np.float64)
        if T.shape != (len(motors), len(joints)):
            raise TransmissionError(
                arg, f"matrix: expected shape ({len(motors)}, {len(joints)}) (motors, joints), "
                f"got {T.shape}",
            )  # fmt: skip
        for m, row in enumerate(T):
            bad = np.flatnonzero(~np.isfinite(row))
            if bad.size:
                raise TransmissionError(
                    arg, f"non-finite coefficient {row[bad[0]]}", m, joints[bad[0]]
                )
            if not np.any(row):
                raise TransmissionError(arg, f"motor {motors[m]!r} drives no joint (a zero row)", m)
        object.__setattr__(self, "motors", motors)
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "matrix", tuple(tuple(float(x) for x in r) for r in T))
        object.__setattr__(self, "values", _values(self.values, len(motors), arg))

    def array(self) -> np.ndarray:
        """``(n_motors, n)`` float64 ``T``."""
        return np.array(self.matrix, np.float64).reshape(len(self.motors), len(self.joints))

    def value(self, kind: str) -> np.ndarray | None:
        """``(n_motors,)`` file values of ``kind`` (NaN: none for that motor), or None."""
        found = dict(self.values or ()).get(kind)
        return None if found is None else np.array(found, np.float64)

    def complete(self, joint_names: Sequence[str]) -> Transmission:
        """Over exactly ``joint_names`` (the model's one-DoF joints, its order): a zero column
        becomes the joint's own motor (named after it, ratio 1, appended in joint order).

        Raises:
          TransmissionError: a joint the model lacks; a motor named after a joint that
            gets its own motor.
        """
        arg = self.source or "transmission"
        names = tuple(joint_names)
        unknown = [j for j in self.joints if j not in names]
        if unknown:
            raise TransmissionError(
                arg, f"no joint {unknown[0]!r} in the model (its one-DoF joints: "
                f"{', '.join(names)})", 1 if self.source else None, unknown[0],
            )  # fmt: skip
        T0 = self.array()
        T = np.zeros((len(self.motors), len(names)))
        for c, j in enumerate(self.joints):
            T[:, names.index(j)] = T0[:, c]
        own = [j for c, j in enumerate(names) if not np.any(T[:, c])]
        clash = [j for j in own if j in self.motors]
        if clash:
            raise TransmissionError(
                arg, f"motor {clash[0]!r} is named after joint {clash[0]!r}, which no motor "
                "drives (that joint gets its own motor of that name): rename the motor",
            )  # fmt: skip
        eye = np.eye(len(names))[[names.index(j) for j in own]]
        values = None
        if self.values is not None:
            values = tuple((k, v + (math.nan,) * len(own)) for k, v in self.values)
        return Transmission(self.motors + tuple(own), names, np.vstack([T, eye]), values,
                            self.source)  # fmt: skip

    @classmethod
    def from_mjcf(cls, path, model) -> Transmission | None:
        """The ``<tendon><fixed>`` elements of an MJCF file as motor rows (None: none).

        Each named fixed tendon is a motor: its row the ``coef`` per joint, its values its
        ``armature``, ``damping``, ``frictionloss``. A coupled joint with its own values
        keeps its own motor too (MuJoCo applies both).

        Args:
          path: the MJCF file ``model`` was read from, or its
            [ModelDescription][spatialjax.io.ModelDescription].
          model: the [Model][spatialjax.multibody.Model] (``Model.from_mjcf(path)``).

        Returns:
          The [Transmission][spatialjax.multibody.Transmission], or None for a file
          without fixed tendons.

        Raises:
          TransmissionError: a tendon coupling a joint the model lacks (a locked one).
          spatialjax.io.ModelFileError: a fixed tendon without a name or joints, a
            non-numeric attribute.

        Examples:
          >>> import spatialjax.multibody as mb, tempfile, pathlib
          >>> xml = (
          ...     "<mujoco><worldbody><body><joint name='a'/><geom size='.1'/>"
          ...     "<body pos='.3 0 0'><joint name='b'/><geom size='.1'/></body></body>"
          ...     "</worldbody><tendon><fixed name='ab' damping='2'><joint joint='a' coef='1'/>"
          ...     "<joint joint='b' coef='1'/></fixed></tendon></mujoco>"
          ... )
          >>> p = pathlib.Path(tempfile.mkdtemp()) / "ab.xml"
          >>> _ = p.write_text(xml)
          >>> t = Transmission.from_mjcf(p, mb.Model.from_mjcf(p))
          >>> t.motors, t.matrix, t.value("viscous").tolist()
          (('ab',), ((1.0, 1.0),), [2.0])
        """
        return _from_mjcf(path, model)

    @classmethod
    def from_csv(cls, path) -> Transmission:
        """Read a CSV: header ``motor,<joint names...>``, one row per motor,
        ``θ̇_motor = Σ coefficient × q̇_joint`` (a gear's ratio on its joint's column; an
        empty cell or a missing joint column is 0). Joints of the model with no motor get
        their own (docs page ``dynamics.md#transmissions``).

        Args:
          path: the CSV file.

        Returns:
          The [Transmission][spatialjax.multibody.Transmission] (``source`` = the path).

        Raises:
          TransmissionError: naming the file, the row (1 = the header) and the column:
            no header or no ``motor`` first column, a repeated joint or motor, an empty
            motor name, a cell that is not a finite number, a row of zeros, no motor row.
          FileNotFoundError: no such file.

        Examples:
          >>> import tempfile, pathlib
          >>> p = pathlib.Path(tempfile.mkdtemp()) / "T.csv"
          >>> _ = p.write_text("motor,j5,j6\\nm5,50,\\nm6,30,30\\n")
          >>> Transmission.from_csv(p).matrix
          ((50.0, 0.0), (30.0, 30.0))
        """
        p = Path(path)
        with p.open(newline="", encoding="utf-8") as f:
            rows = [r for r in csv.reader(f)]
        return _parse_rows(rows, str(p))


def _from_mjcf(path, model) -> Transmission | None:
    """``Transmission.from_mjcf``'s body."""
    from ..io import ModelDescription
    from ..io._common import read_bytes
    from ..io._mjcf_tendons import read_fixed_tendons
    from ..io._xml import parse_xml

    if isinstance(path, ModelDescription):  # the file's one read (spatialjax.io.read_description)
        root, path = path.element, path.path
    else:
        root = parse_xml(read_bytes(path), path)
    tendons = read_fixed_tendons(root, path)
    if not tendons:
        return None
    off = 6 if model.floating_base else 0
    joints = tuple(model.joint_names[1 if model.floating_base else 0 :])
    src = str(path)
    rows, names = [], []
    for t in tendons:
        row = np.zeros(len(joints))
        for j, c in zip(t.joints, t.coefs, strict=True):
            if j not in joints:
                raise TransmissionError(
                    src, f"tendon {t.name!r} couples {j!r}, no one-DoF joint of the model "
                    f"({', '.join(joints)})", t.element.line,
                )  # fmt: skip
            row[joints.index(j)] = c
        rows.append(row)
        names.append(t.name)
    covered = np.any(np.array(rows) != 0, axis=0)
    own = [
        i for i in range(len(joints))
        if covered[i] and any(float(np.asarray(getattr(model, f))[off + i]) != 0
                              for f in ("armature", "damping", "friction"))
    ]  # fmt: skip
    for i in own:  # MuJoCo applies the joint's own values too: its own motor
        rows.append(np.eye(len(joints))[i])
        names.append(joints[i])
    values = {
        k: [t.values[k] for t in tendons] + [math.nan] * len(own)
        for k in ("armature", "viscous", "coulomb")
    }
    return Transmission(tuple(names), joints, np.array(rows), values, src)


def _parse_rows(rows: list, src: str) -> Transmission:
    """The CSV rows of ``Transmission.from_csv`` (messages name ``src``)."""
    rows = [[c.strip() for c in r] for r in rows if any(c.strip() for c in r)]
    if not rows or not rows[0] or rows[0][0].lower() != "motor":
        raise TransmissionError(src, "expected a header 'motor,<joint names...>'", 1)
    joints = rows[0][1:]
    if not joints or any(not j for j in joints):
        raise TransmissionError(src, "expected joint names after 'motor' (none empty)", 1)
    seen: set = set()
    for j in joints:
        if j in seen:
            raise TransmissionError(src, "joint repeated in the header", 1, j)
        seen.add(j)
    if len(rows) < 2:
        raise TransmissionError(src, "no motor row under the header", 1)
    motors, T = [], np.zeros((len(rows) - 1, len(joints)))
    for i, r in enumerate(rows[1:]):
        line = i + 2
        if len(r) > len(joints) + 1:
            raise TransmissionError(src, f"{len(r)} cells, the header has {len(joints) + 1}", line)
        if not r[0]:
            raise TransmissionError(src, "empty motor name", line, "motor")
        if r[0] in motors:
            raise TransmissionError(src, f"motor {r[0]!r} repeated", line, "motor")
        motors.append(r[0])
        for c, cell in enumerate(r[1:]):
            try:
                x = float(cell) if cell else 0.0
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                raise TransmissionError(
                    src, f"expected a finite number, got {cell!r}", line, joints[c]
                )
            T[i, c] = x
        if not np.any(T[i]):
            raise TransmissionError(src, f"motor {r[0]!r} drives no joint (a zero row)", line)
    return Transmission(tuple(motors), tuple(joints), T, source=src)


def _names(names, what: str, arg: str) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise TransmissionError(
            arg, f"{what}: expected a sequence of non-empty names, got {names!r}"
        )
    names = tuple(names)
    if len(set(names)) != len(names):
        rep = next(n for n in names if names.count(n) > 1)
        raise TransmissionError(arg, f"{what}: {rep!r} repeated")
    return names


def _values(values, n: int, arg: str):
    if values is None:
        return None
    items = values.items() if isinstance(values, dict) else values
    out = []
    for k, v in items:
        if k not in MOTOR_VALUE_KINDS:
            raise TransmissionError(arg, f"values: unknown kind {k!r}; known: {MOTOR_VALUE_KINDS}")
        v = tuple(float(x) for x in np.asarray(v, np.float64).reshape(-1))
        if len(v) != n:
            raise TransmissionError(arg, f"values[{k!r}]: expected {n} values, got {len(v)}")
        out.append((k, v))
    return tuple(out)


__all__ = ["MOTOR_VALUE_KINDS", "Transmission", "TransmissionError"]
