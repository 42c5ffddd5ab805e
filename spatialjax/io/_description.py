"""The format-neutral description of a model file, which each format's reader produces.

A pose ``(R, p)`` is the active rotation ``R_AB`` and the translation ``p_AoBo_A`` of
frame ``B`` in frame ``A`` (float64 NumPy); at joint value ``q`` a child link is at
``T_PC(q) = T_PJ · T_J(q) · T_JC``. Docs page ``model-files.md#building-the-model``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._common import LinkInertial, ModelFileError, ModelInertials


@dataclasses.dataclass(frozen=True, eq=False)
class LinkDescription:
    """A link (URDF/SDF) or body (MJCF): its name, its inertial and its line.

    Attributes:
      name: the link name (unnamed MJCF bodies: ``"<body N>"``).
      inertial: the [`LinkInertial`][spatialjax.io.LinkInertial], or ``None`` for a
        massless link (an MJCF body without ``<inertial>``).
      line: line of the element.
      element: the link's XML element with its byte spans, for write-back; or None.
    """

    name: str
    inertial: LinkInertial | None
    line: int | None
    element: Any = None


@dataclasses.dataclass(frozen=True, eq=False)
class JointDescription:
    """A joint between two links (frames: see the module docstring).

    Attributes:
      name: the joint name, or ``None`` for an MJCF body welded to its parent.
      type: ``"revolute"``, ``"continuous"``, ``"prismatic"``, ``"fixed"`` or
        ``"free_flyer"`` (an MJCF free joint; its parent is the world).
      parent, child: link names (``parent`` may be ``"world"``).
      rotation, translation: pose ``(R_PJ, p_PoJo_P)`` of the joint frame in
        the parent link frame.
      axis: ``(3,)`` unit axis in the joint frame (zeros for ``free_flyer``).
      child_rotation, child_translation: pose ``(R_JC, p_JoCo_J)`` of the child
        link frame in the joint frame.
      dynamics: ``{Model field: value}`` given by the file (``armature``, ``damping``,
        ``friction``, ``lower``, ``upper``, ``velocity_limit``, ``effort_limit``).
      line: line of the joint (or welded body) element.
      element: the joint's XML element with its byte spans, for write-back; or None.
    """

    name: str | None
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    child_rotation: np.ndarray
    child_translation: np.ndarray
    dynamics: dict
    line: int | None
    element: Any = None


@dataclasses.dataclass(frozen=True, eq=False)
class FrameDescription:
    """A named frame other than a link's (SDF ``<frame>``, MJCF ``<site>``).

    Attributes:
      name: the frame name.
      link: the link it is rigidly attached to (``"world"``: a world frame).
      rotation, translation: its pose in that link's frame.
    """

    name: str
    link: str
    rotation: np.ndarray
    translation: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class ModelDescription:
    """Everything one reader took from one model file, from one parse.

    From [`read_description`][spatialjax.io.read_description]: the tree, ``inertials``
    ``None`` (every link carries its own). A reader asked for the inertials only fills
    ``inertials`` and leaves the tree empty.

    Attributes:
      path: the file.
      format: ``"urdf"``, ``"sdf"`` or ``"mjcf"``.
      inertials: the [`ModelInertials`][spatialjax.io.ModelInertials] of every link, or ``None``.
      name: the robot / model name.
      line: line of the element that holds the tree.
      links: every link in document order.
      joints: every joint, in document order.
      siblings_by_name: number the children of a link in the byte order of their
        joint names (URDF, SDF), not in document order (MJCF).
      frames: the named frames other than the links.
      root: the root link, or ``"world"`` when joints attach links to the world.
      source: the file's bytes (the elements' byte spans index them).
      element: the file's root element with every element's byte spans, for
        write-back; or None.
    """

    path: str
    format: str
    inertials: ModelInertials | None = None
    name: str = ""
    line: int | None = None
    links: tuple[LinkDescription, ...] = ()
    joints: tuple[JointDescription, ...] = ()
    frames: tuple[FrameDescription, ...] = ()
    root: str = ""
    siblings_by_name: bool = True
    source: bytes = dataclasses.field(default=b"", repr=False)
    element: Any = dataclasses.field(default=None, repr=False)


def parent_joints(path, joints, child_field: str) -> dict:
    """``{child link: joint}``; a ``ModelFileError`` for a link with two parent joints."""
    parent_joint = {}
    for j in joints:
        if j.child in parent_joint:
            other = parent_joint[j.child]
            raise ModelFileError(
                path,
                f"link {j.child!r} is the child of two joints, {other.name!r} (line "
                f"{other.line}) and {j.name!r}: the joints form a kinematic loop, which a "
                "tree model cannot represent",
                line=j.line,
                field=f"joint[{j.name}]/{child_field}",
            )
        parent_joint[j.child] = j
    return parent_joint


def check_connected(path, root: str, joints, link_line: dict, what: str) -> None:
    """Raise for the links (``{name: line}``) that no chain of ``joints`` hangs from ``root``."""
    children: dict[str, list[str]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j.child)
    seen, stack = {root}, [root]
    while stack:
        for c in children.get(stack.pop(), ()):
            if c not in seen:
                seen.add(c)
                stack.append(c)
    lost = [n for n in link_line if n not in seen]
    if lost:
        raise ModelFileError(
            path,
            f"links {', '.join(map(repr, lost))} are not connected to the {what} {root!r}: "
            "their joints form a loop",
            line=link_line[lost[0]],
        )
