"""Shared plumbing for the model-file readers: errors, numbers, rotations, records.

Standard library and float64 NumPy only: files are parsed once, eagerly.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._xml import XNode
# ----------------------------------------------------------------------------- errors


class ModelFileError(ValueError):
    """A model file that cannot be read: names the file, line, link and field.

    Attributes:
      path: the file.
      line: 1-based line of the offending element, or ``None``.
      link: the link / body name, or ``None`` when the problem is not in a link.
      field: the element or attribute at fault (``"mass"``, ``"inertia/ixy"``,
        ``"compiler/angle"``), or ``None``.
      problem: what is wrong, in words.
    """

    def __init__(self, path, problem: str, *, line=None, link=None, field=None):
        self.path = str(path)
        self.line = line
        self.link = link
        self.field = field
        self.problem = problem
        where = self.path + (f":{line}" if line is not None else "")
        parts = []
        if link is not None:
            parts.append(f"link '{link}'")
        if field is not None:
            parts.append(f"field '{field}'")
        prefix = (", ".join(parts) + ": ") if parts else ""
        super().__init__(f"{where}: {prefix}{problem}")


# -------------------------------------------------------------------------- numbers

# ASCII digits only: Python's ``\d`` and ``float`` also accept other scripts' digits ("٢" -> 2.0),
# which XML Schema's decimal and double (and urdfdom, SDFormat, MuJoCo) do not.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


class Ctx:
    """Where a value is read from, for error messages: file, line, link, field."""

    __slots__ = ("path", "line", "link", "field")

    def __init__(self, path, line=None, link=None, field=None):
        self.path, self.line, self.link, self.field = path, line, link, field

    def at(self, node: XNode | None = None, field=None) -> Ctx:
        return Ctx(
            self.path,
            node.line if node is not None else self.line,
            self.link,
            field if field is not None else self.field,
        )

    def error(self, problem: str) -> ModelFileError:
        return ModelFileError(self.path, problem, line=self.line, link=self.link, field=self.field)


def parse_numbers(text: str | None, ctx: Ctx, count: int | tuple[int, ...]) -> np.ndarray:
    """Parse whitespace-separated decimal numbers (float64) or raise naming the field.

    Accepts the XML/xsd decimal and double forms in ASCII digits; rejects ``nan``,
    ``inf``, units (``1kg``) and digits of other scripts.

    Args:
      text: the attribute value or element text (``None``: missing).
      ctx: where the value comes from.
      count: required number of values (or a tuple of allowed counts).
    """
    if text is None:
        raise ctx.error("missing")
    tokens = text.split()
    counts = (count,) if isinstance(count, int) else tuple(count)
    for tok in tokens:
        if not _NUMBER.match(tok):
            raise ctx.error(f"expected a finite decimal number, got {tok!r}")
    if len(tokens) not in counts:
        want = " or ".join(str(c) for c in counts)
        raise ctx.error(f"expected {want} number(s), got {len(tokens)} ({text.strip()!r})")
    values = np.array([float(t) for t in tokens], dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ctx.error(f"value out of floating-point range: {text.strip()!r}")
    return values


def joint_axis(text: str | None, ctx: Ctx, joint: str, fixed: bool = False) -> np.ndarray:
    """A joint's ``axis`` (3 numbers), normalised; zero is an error unless the joint is fixed."""
    axis = parse_numbers(text, ctx, 3)
    norm = float(np.linalg.norm(axis))
    if norm == 0.0 and not fixed:
        raise ctx.error(f"joint {joint!r} has a zero axis")
    return axis / norm if norm > 0 else axis


#: URDF and SDFormat joint dynamics and limits: ``{element: {child: Model field}}``. The two
#: formats name them alike (``<dynamics damping friction>``, ``<limit lower upper velocity
#: effort>``); URDF writes them as attributes of the joint's elements, SDFormat as child
#: elements of ``<axis><dynamics>``/``<axis><limit>``.
JOINT_DYNAMICS_FIELDS = {
    "dynamics": {"damping": "damping", "friction": "friction"},
    "limit": {
        "lower": "lower",
        "upper": "upper",
        "velocity": "velocity_limit",
        "effort": "effort_limit",
    },
}


def joint_value(text: str | None, ctx: Ctx, joint: str, label: str, signed: bool) -> float:
    """One number of a joint's dynamics or limits, ``>= 0`` unless ``signed``."""
    (x,) = parse_numbers(text, ctx, 1)
    if not math.isfinite(x) or (not signed and x < 0):
        want = "a finite value" if signed else "a finite value >= 0"
        raise ctx.error(f"joint {joint!r}: {label}{x} (expected {want})")
    return float(x)


def reflected_inertia(rotor_inertia, gear_ratio, joint: str) -> float:
    """Drake's reflected rotor inertia ``ρ² I_r`` (``(text, ctx)`` pairs or ``None``)."""
    text, ictx = rotor_inertia
    I_r = joint_value(text, ictx, joint, "drake:rotor_inertia ", signed=False)
    rho = 1.0
    if gear_ratio is not None:
        rho = joint_value(gear_ratio[0], gear_ratio[1], joint, "drake:gear_ratio ", signed=True)
    return rho * rho * I_r


def format_number(x: float) -> str:
    """Shortest text that reads back as exactly ``x`` (``repr`` of a float64)."""
    x = float(x)
    if x == 0.0:
        return "0"
    return repr(x)


# ------------------------------------------------------------------------ rotations
# (the NumPy rotation helpers live in spatialjax/_rotations.py, beside the JAX ones)


def principal_axes(I: np.ndarray, R_ref: np.ndarray | None = None):
    """``(d, Q)`` with ``I = Q diag(d) Qᵀ`` and ``Q`` the proper rotation nearest ``R_ref``.

    Of the 24 orderings and signs of ``eigh``'s columns, the one nearest ``R_ref``
    (identity by default), so that a nearly diagonal inertia keeps its axes.
    """
    R_ref = np.eye(3) if R_ref is None else R_ref
    d, V = np.linalg.eigh(0.5 * (I + I.T))
    best = None
    for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        Vp = V[:, perm]
        signs = np.sign(np.sum(Vp * R_ref, axis=0))
        signs[signs == 0] = 1.0
        Q = Vp * signs
        if np.linalg.det(Q) < 0:
            j = int(np.argmin(np.abs(np.sum(Vp * R_ref, axis=0))))
            Q[:, j] = -Q[:, j]
        score = np.sum(Q * R_ref)
        if best is None or score > best[0]:
            best = (score, d[list(perm)], Q)
    return best[1], best[2]


# -------------------------------------------------------------------------- records


@dataclasses.dataclass(frozen=True, eq=False)
class LinkInertial:
    """The inertial of one link/body, as read, in float64.

    Attributes:
      name: link (URDF/SDF) or body (MJCF) name; unnamed MJCF bodies are
        called ``"<body N>"`` with N the MuJoCo body id (depth-first, world = 0).
      status: ``"inertial"`` (read from an ``<inertial>`` element),
        ``"absent"`` (URDF link without ``<inertial>``: a massless frame),
        ``"sdf-default"`` (SDF link without ``<inertial>``: the SDF
        specification's default, 1 kg and unit inertia).
      mass: ``m``.
      com: ``(3,)`` ``c_BoBcm_B``: CoM relative to the link origin in link axes.
      inertia_com: ``(3, 3)`` ``I_BBcm_B``: rotational inertia about the CoM in
        the link's axes (``R I_file Rᵀ``).
      rotation: ``(3, 3)`` ``R_BBi``: orientation of the file's inertial
        frame Bi in the link frame B (active rotation).
      inertia_file: ``(3, 3)`` the inertia as written, about the CoM in Bi axes.
      line: line of the ``<inertial>`` (or link) element.
      added_mass: ``(6, 6)`` SDF ``<fluid_added_mass>`` as written, rows and
        columns in the file's ``[x, y, z, p, q, r]`` order, or ``None``.
      rewrite: the reader's ``rewrite(m, c, I_c)``, which returns the text edits that write
        new values (``c`` and ``I_c`` as ``com`` and ``inertia_com``) into this element of the
        file, keeping its inertial-frame rotation; ``None`` where the inertial cannot be
        rewritten (none in the file).
    """

    name: str
    status: str
    mass: float
    com: np.ndarray
    inertia_com: np.ndarray
    rotation: np.ndarray
    inertia_file: np.ndarray
    line: int | None
    added_mass: np.ndarray | None = None
    # format-specific: rewrite this inertial with new values (None: not rewritable)
    rewrite: Callable | None = dataclasses.field(default=None, repr=False)


@dataclasses.dataclass(frozen=True, eq=False)
class ModelInertials:
    """Everything read from one model file.

    Attributes:
      path: the file.
      format: ``"urdf"``, ``"sdf"`` or ``"mjcf"`` (from the root element).
      links: one [`LinkInertial`][spatialjax.io.LinkInertial] per link/body with an inertial to
        check, in document order.
      notes: things a user should know that are not errors (MJCF bodies whose
        inertia MuJoCo infers from geoms, compiler flags that change inertias,
        unsupported meta-elements skipped).
      source: the file's bytes (for ``--fix``).
    """

    path: str
    format: str
    links: tuple
    notes: tuple
    source: bytes = dataclasses.field(repr=False, default=b"")

    @property
    def names(self) -> list[str]:
        return [link.name for link in self.links]


def check_unique_names(path, nodes, what: str, rule: str) -> None:
    """Raise for the first element whose ``name`` an earlier one in ``nodes`` already has.

    Args:
      path: the file, for the error.
      nodes: ``XNode`` elements of one kind (``<link>``, ``<joint>``) that must
        have distinct names; unnamed ones are skipped (reported elsewhere).
      what: the element kind, for the message and the field.
      rule: the rule broken, with ``{what}`` filled in (names the specification).
    """
    seen: dict[str, int] = {}
    for node in nodes:
        name = node.attrib.get("name")
        if name is None:
            continue
        if name in seen:
            raise Ctx(path, node.line, None, f"{what}/name").error(
                f"duplicate {what} name {name!r} (first defined on line {seen[name]}); "
                + rule.format(what=what)
            )
        seen[name] = node.line


def make_link(name, status, mass, com, R, I_file, line, added_mass=None, rewrite=None):
    I_file = 0.5 * (I_file + I_file.T)
    return LinkInertial(
        name=name,
        status=status,
        mass=float(mass),
        com=np.asarray(com, dtype=np.float64),
        inertia_com=R @ I_file @ R.T,
        rotation=R,
        inertia_file=I_file,
        line=line,
        added_mass=added_mass,
        rewrite=rewrite,
    )


def sym3(xx, xy, xz, yy, yz, zz) -> np.ndarray:
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=np.float64)


def new_values_in_frame(R: np.ndarray, inertia_com_new: np.ndarray) -> np.ndarray:
    """The corrected inertia about the CoM written in the file's inertial axes ``Bi``."""
    I = R.T @ inertia_com_new @ R
    return 0.5 * (I + I.T)


def changed(old, new, scale: float) -> bool:
    """Whether a number moved by more than round-off relative to ``scale``."""
    return abs(float(new) - float(old)) > 1e-13 * max(scale, abs(float(old)), 1e-300)


def read_bytes(path) -> bytes:
    p = Path(path)
    try:
        return p.read_bytes()
    except OSError as e:
        raise ModelFileError(path, f"cannot read file: {e.strerror or e}") from None


def updated_vector_text(old_text: str | None, old, new, scale: float | None = None) -> str | None:
    """New text for a number list, keeping the original token of every unchanged entry.

    Returns ``None`` when no entry moved by more than round-off.
    """
    old = np.atleast_1d(np.asarray(old, dtype=np.float64))
    new = np.atleast_1d(np.asarray(new, dtype=np.float64))
    scale = float(np.max(np.abs(old), initial=0.0)) if scale is None else scale
    tokens = old_text.split() if old_text is not None else [format_number(v) for v in old]
    if len(tokens) < len(old):
        tokens = [format_number(v) for v in old]
    moved = [changed(o, n, scale) for o, n in zip(old, new, strict=True)]
    if not any(moved):
        return None
    out = list(tokens)
    for i, (m, v) in enumerate(zip(moved, new, strict=True)):
        if m:
            out[i] = format_number(v)
    return " ".join(out)
