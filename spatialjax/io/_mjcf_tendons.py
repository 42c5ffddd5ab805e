"""MJCF fixed tendons: read them (a coupled transmission) and write their joint-model values.

A ``<tendon><fixed>`` with ``<joint joint=... coef=.../>`` children is a motor row
``θ̇ = Σ coef q̇_j`` ([Transmission][spatialjax.multibody.Transmission]); attributes from
the element, else its default class, else 0. ``<spatial>`` tendons are ignored.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._common import ModelFileError
from ._xml import XNode

#: MJCF tendon attribute of each JointModel kind.
TENDON_ATTRIBUTES = {"armature": "armature", "viscous": "damping", "coulomb": "frictionloss"}


@dataclasses.dataclass(frozen=True)
class FixedTendon:
    """One ``<fixed>`` tendon: ``name``, its element, ``joints``, ``coefs`` and the
    resolved ``values`` ``{armature | viscous | coulomb: float}``."""

    name: str
    element: XNode
    joints: tuple[str, ...]
    coefs: tuple[float, ...]
    values: dict


def _tendon_defaults(root: XNode) -> dict:
    """``{class: {tendon attribute: text}}``, inheritance resolved."""
    classes: dict = {}

    def visit(node, inherited):
        own = dict(inherited)
        for t in node.findall("tendon"):
            own.update(t.attrib)
        classes[node.attrib.get("class", "main")] = own
        for child in node.findall("default"):
            visit(child, own)

    for d in root.findall("default"):
        visit(d, {})
    return classes


def _number(text: str, path, line: int, what: str) -> float:
    try:
        x = float(text.split()[0])
    except (ValueError, IndexError):
        raise ModelFileError(path, f"{what}: expected a number, got {text!r}", line=line) from None
    if not np.isfinite(x):
        raise ModelFileError(path, f"{what}: expected a finite number, got {text!r}", line=line)
    return x


def read_fixed_tendons(root: XNode, path) -> tuple[FixedTendon, ...]:
    """Every ``<tendon><fixed>`` of an MJCF document, in file order.

    Raises:
      ModelFileError: a fixed tendon without a name or without joints, a joint
        child without ``joint``, a repeated joint, a non-numeric attribute, an
        unknown default class.
    """
    classes = _tendon_defaults(root)
    out = []
    for tendons in root.findall("tendon"):
        for el in tendons.findall("fixed"):
            name = el.attrib.get("name", "").strip()
            if not name:
                raise ModelFileError(
                    path, "a <fixed> tendon without a name cannot be a motor: name it", line=el.line
                )
            cls = el.attrib.get("class", "main")
            if cls not in classes and cls != "main":
                raise ModelFileError(path, f"tendon {name!r}: unknown default class {cls!r}",
                                     line=el.line)  # fmt: skip
            attrs = {**classes.get(cls, {}), **el.attrib}
            joints, coefs = [], []
            for j in el.findall("joint"):
                jn = j.attrib.get("joint", "").strip()
                if not jn:
                    raise ModelFileError(path, f"tendon {name!r}: <joint> without joint=",
                                         line=j.line)  # fmt: skip
                if jn in joints:
                    raise ModelFileError(path, f"tendon {name!r}: joint {jn!r} repeated",
                                         line=j.line)  # fmt: skip
                joints.append(jn)
                coefs.append(_number(j.attrib.get("coef", "1"), path, j.line,
                                     f"tendon {name!r} joint {jn!r} coef"))  # fmt: skip
            if not joints:
                raise ModelFileError(path, f"tendon {name!r} couples no joint", line=el.line)
            values = {
                kind: _number(attrs[attr], path, el.line, f"tendon {name!r} {attr}")
                if attr in attrs else 0.0
                for kind, attr in TENDON_ATTRIBUTES.items()
            }  # fmt: skip
            out.append(FixedTendon(name, el, tuple(joints), tuple(coefs), values))
    return tuple(out)


def tendon_edits(tendons, values: dict, fn: str):
    """Edits writing ``values`` ``{tendon: {kind: value}}`` (kinds of ``TENDON_ATTRIBUTES``;
    NaN keeps the file's) into the ``<fixed>`` elements, every other byte kept, and the
    per-tendon report ``[{tendon, <attribute>: {file, identified, written}}]``.

    Raises:
      ValueError: a tendon name the file lacks, a negative value.
    """
    from ._xml import scalar_attribute_edits

    by_name = {t.name: t for t in tendons}
    edits: list = []
    report = []
    for name, kinds in values.items():
        if name not in by_name:
            raise ValueError(f"{fn}: tendon_params: no <fixed> tendon {name!r} in the file "
                             f"(its fixed tendons: {', '.join(by_name) or 'none'})")  # fmt: skip
        t = by_name[name]
        el = t.element
        entry: dict = {"tendon": name}
        changes = []
        for kind, new in kinds.items():
            if kind not in TENDON_ATTRIBUTES:
                raise ValueError(f"{fn}: tendon_params[{name!r}]: unknown kind {kind!r}; "
                                 f"known: {tuple(TENDON_ATTRIBUTES)}")  # fmt: skip
            new = float(new)
            if np.isnan(new):
                continue
            if new < 0:
                raise ValueError(f"{fn}: tendon_params[{name!r}][{kind!r}]: expected a value "
                                 f">= 0, got {new}")  # fmt: skip
            attr, old = TENDON_ATTRIBUTES[kind], t.values[kind]
            entry[attr] = {"file": old, "identified": new, "written": True}
            changes.append((attr, old, new))
        edits += scalar_attribute_edits(el, changes)
        report.append(entry)
    return edits, report
