r"""The kinematic-tree ``Model`` pytree and its Pinocchio ``q``/``v`` converters.

Bodies in topological order (``parents[i] < i``, ``-1``: the world); body frames
are joint frames; ``q``/``v`` per joint type (free flyer ``[p, wxyz]``, ``[ω; v]``
in the body frame). Conventions: docs page ``dynamics.md#model``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import resolve_float_dtype
from .._errors import ArgumentError, ArgumentTypeError
from .._inertia import RigidBodyInertia
from .._transforms import Plxb
from ..io._load import read_description
from ._build import model_arguments

JOINT_TYPES = ("revolute", "continuous", "prismatic", "free_flyer")
_Tracer = jax.core.Tracer  # pyright: ignore[reportAttributeAccessIssue]
_ONE_DOF = ("revolute", "continuous", "prismatic")


def _levels(parents):
    depth = []
    for p in parents:
        depth.append(0 if p < 0 else depth[p] + 1)
    nlev = max(depth) + 1 if depth else 0
    return tuple(tuple(i for i, d in enumerate(depth) if d == k) for k in range(nlev))


_STRUCTURE_FIELDS = (
    "name",
    "parents",
    "joint_types",
    "joint_names",
    "body_names",
    "levels",
    "frame_names",
    "frame_bodies",
)


class ModelStructure:
    """The static fields of a [Model][spatialjax.multibody.Model] in one hashable object.

    Hashed once when the model is built; equal structures compare equal (the same
    robot loaded twice shares compiled programs). Read the fields through the model.

    Attributes:
      name, parents, joint_types, joint_names, body_names, levels, frame_names,
        frame_bodies: as documented on [Model][spatialjax.multibody.Model].
    """

    __slots__ = (*_STRUCTURE_FIELDS, "_hash")
    name: str
    parents: tuple
    joint_types: tuple
    joint_names: tuple
    body_names: tuple
    levels: tuple
    frame_names: tuple
    frame_bodies: tuple
    _hash: int

    def __init__(self, name, parents, joint_types, joint_names, body_names, levels,
                 frame_names, frame_bodies):  # fmt: skip
        values = (name, parents, joint_types, joint_names, body_names, levels, frame_names,
                  frame_bodies)  # fmt: skip
        for k, x in zip(_STRUCTURE_FIELDS, values, strict=True):
            object.__setattr__(self, k, x)
        object.__setattr__(self, "_hash", hash(values))

    def _values(self) -> tuple:
        return tuple(getattr(self, k) for k in _STRUCTURE_FIELDS)

    def __setattr__(self, key, value):
        raise AttributeError(f"ModelStructure is immutable (cannot set {key!r})")

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, ModelStructure) or self._hash != other._hash:
            return False
        return self._values() == other._values()

    def __reduce__(self):  # pickled by value: the hash of strings differs between processes
        return (ModelStructure, self._values())

    def __repr__(self) -> str:
        return f"ModelStructure({self.name!r}, {len(self.parents)} bodies)"


@dataclasses.dataclass(frozen=True, init=False)
class Model:
    """A kinematic tree of rigid bodies (conventions: docs page ``dynamics.md#model``).

    The static fields (``name`` to ``frame_bodies``, read-only properties over
    ``structure``) are what ``jit`` specialises on; the numeric fields
    (``placements`` to ``effort_limit``) are held in the model's two pytree leaves,
    [`body_values`][spatialjax.multibody.Model.body_values] and
    [`other_values`][spatialjax.multibody.Model.other_values] (a model passed to ``jit`` is
    two arguments; a model rebuilt by ``jit``, ``vmap``, ``grad`` or ``jax.tree.map`` reads
    its fields from them when one is first used). Joint dynamics and
    limits are in ``v``'s order unless said; a free flyer's entries are 0 and ±inf.
    Batch robots with ``jax.vmap`` over a model whose fields carry a leading axis
    (``jax.tree.map(lambda x: jnp.stack([x, x]), model)``: ``body_values`` of shape
    ``(2, nbodies, 25)``).

    Attributes:
      structure: the static fields as one hashable ``ModelStructure``.
      name: robot name.
      parents: ``parents[i]`` is body ``i``'s parent body, ``-1`` for the world
        (``parents[i] < i``).
      joint_types: ``"revolute"``, ``"continuous"``, ``"prismatic"`` or
        ``"free_flyer"`` (body 0 only) per body.
      joint_names: the joint of each body (URDF joint names).
      body_names: the URDF link that is each body's frame.
      levels: bodies grouped by depth (``levels[0]``: children of the world).
      frame_names: every frame of the source file: URDF/SDF links (merged ones
        included) then SDF ``<frame>`` elements; MJCF bodies then named sites.
      frame_bodies: the body each frame is attached to (``-1``: the world).
      placements: [`Plxb`][spatialjax.Plxb] of batch ``(nbodies,)``: pose of
        each joint frame at zero joint value in its parent body's frame.
      axes: ``(nbodies, 3)`` unit joint axis in the joint frame (zeros for a
        free flyer).
      inertia: [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of batch
        ``(nbodies,)`` about each body frame's origin, in its axes.
      frame_placements: [`Plxb`][spatialjax.Plxb] of batch ``(nframes,)``: pose
        of each frame in its body's frame (in the world for body ``-1``).
      armature: ``(nv,)`` reflected rotor inertia (kg m², kg), added to the mass
        matrix diagonal, to ``rnea`` and to the ABA (as MuJoCo and Pinocchio).
      damping: ``(nv,)`` viscous damping (N m s/rad, N s/m); ``−damping · v``
        enters [`forward_dynamics`][spatialjax.multibody.forward_dynamics] only.
      friction: ``(nv,)`` Coulomb friction (N m, N); stored, applied by no
        algorithm (see [`JointModel`][spatialjax.multibody.JointModel]).
      lower: ``(nq,)`` lower position limits (rad, m), −inf where none.
      upper: ``(nq,)`` upper position limits, +inf where none.
      velocity_limit: ``(nv,)`` maximum ``|v|`` (inf: none).
      effort_limit: ``(nv,)`` maximum ``|τ|`` (inf: none).
    """

    placements: Plxb
    axes: jax.Array
    inertia: RigidBodyInertia
    frame_placements: Plxb
    armature: jax.Array
    damping: jax.Array
    friction: jax.Array
    lower: jax.Array
    upper: jax.Array
    velocity_limit: jax.Array
    effort_limit: jax.Array
    structure: ModelStructure = dataclasses.field(metadata=dict(static=True))

    def __init__(
        self,
        placements,
        axes,
        inertia,
        frame_placements,
        armature,
        damping,
        friction,
        lower,
        upper,
        velocity_limit,
        effort_limit,
        structure: ModelStructure | None = None,
        **static,
    ):
        """Fields as listed; the static ones as ``structure`` or by name (by name wins;
        ``levels`` follows ``parents`` unless given).
        """
        unknown = set(static) - set(_STRUCTURE_FIELDS)
        if unknown:
            raise TypeError(f"Model: unexpected keyword arguments {sorted(unknown)}")
        if static or structure is None:
            values: dict = {}
            if structure is not None:
                values.update(zip(_STRUCTURE_FIELDS, structure._values(), strict=True))
            values.update(static)
            if "parents" in static and "levels" not in static:
                values["levels"] = _levels(tuple(static["parents"]))
            missing = [k for k in _STRUCTURE_FIELDS if k not in values]
            if missing:
                raise TypeError(f"Model: missing static fields {missing} (or a structure)")
            structure = ModelStructure(*(values[k] for k in _STRUCTURE_FIELDS))
        data = dict(placements=placements, axes=axes, inertia=inertia,
                    frame_placements=frame_placements, armature=armature, damping=damping,
                    friction=friction, lower=lower, upper=upper, velocity_limit=velocity_limit,
                    effort_limit=effort_limit, structure=structure)  # fmt: skip
        for k, x in data.items():
            object.__setattr__(self, k, x)

    # ---------------------------------------------------------- static fields
    @property
    def name(self) -> str:
        """Robot name."""
        return self.structure.name

    @property
    def parents(self) -> tuple:
        """``parents[i]``: body ``i``'s parent body, ``-1`` for the world."""
        return self.structure.parents

    @property
    def joint_types(self) -> tuple:
        """The joint type of each body."""
        return self.structure.joint_types

    @property
    def joint_names(self) -> tuple:
        """The joint of each body (URDF joint names)."""
        return self.structure.joint_names

    @property
    def body_names(self) -> tuple:
        """The link that is each body's frame."""
        return self.structure.body_names

    @property
    def levels(self) -> tuple:
        """Bodies grouped by depth."""
        return self.structure.levels

    @property
    def frame_names(self) -> tuple:
        """Every frame of the source file."""
        return self.structure.frame_names

    @property
    def frame_bodies(self) -> tuple:
        """The body each frame is attached to (``-1``: the world)."""
        return self.structure.frame_bodies

    # ------------------------------------------------------- the two leaves
    @property
    def body_values(self):
        """``(..., nbodies, 25)``: per body, ``placements.E`` (row-major), ``placements.r``,
        ``axes`` and ``inertia.params``, after the fields' leading batch axes: the first of
        the model's two pytree leaves."""
        return self._leaves()[0]

    @property
    def other_values(self):
        """``(..., n)``: ``frame_placements`` (``E`` row-major, then ``r``), ``armature``,
        ``damping``, ``friction``, ``lower``, ``upper``, ``velocity_limit`` and
        ``effort_limit``, raveled one after the other: the second pytree leaf."""
        return self._leaves()[1]

    def _leaves(self) -> tuple:
        # jit, vmap, grad, lax.scan and jax.tree.map see these two arrays (a model passed to
        # jit is two arguments); a model they rebuild reads its fields from them on first use
        d = self.__dict__
        if "_values" in d:
            return d["_values"]
        leaves = _pack(self)
        if _keepable(self, leaves):
            object.__setattr__(self, "_values", leaves)
        return leaves

    def __getattr__(self, name: str):
        # the numeric fields of a model rebuilt from its leaf (_unflatten_model), on first use
        d = self.__dict__
        if name == "_values":  # _flatten_model on a model whose leaves are not kept
            return self._leaves()
        if name in _NUMERIC_FIELDS and "_values" in d and "structure" in d:
            fields = _unpack(d["structure"], d["_values"])
            # kept unless made in a trace (a concrete leaf first read inside jit)
            if not any(isinstance(x, _Tracer) for x in jax.tree.leaves(fields)):
                for k, x in fields.items():
                    object.__setattr__(self, k, x)
            return fields[name]
        raise AttributeError(f"'Model' object has no attribute {name!r}")

    def __eq__(self, other) -> bool:
        """Same structure and the same values (a Python ``bool``; not inside ``jit``)."""
        if not isinstance(other, Model) or self.structure != other.structure:
            return False
        return all(
            np.array_equal(np.asarray(a), np.asarray(b))
            for a, b in zip(self._leaves(), other._leaves(), strict=True)
        )

    __hash__ = None  # pyright: ignore[reportAssignmentType]

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_urdf(
        cls, path, *, locked_joints=None, floating_base: bool = False, dtype=None
    ) -> Model:
        """Read the kinematic tree of a URDF file.

        ``fixed`` joints and ``locked_joints`` are merged into the parent body
        (composite-body rule, RBDA §6.2). Bodies are numbered as Pinocchio's
        ``buildModelFromUrdf`` numbers its joints: body ``i`` is Pinocchio joint ``i + 1``.

        Args:
          path: the URDF file.
          locked_joints: ``{joint name: value}`` (rad or m) of movable joints to
            freeze at that value and merge.
          floating_base: attach the root link with a free flyer; otherwise the root
            link and the links rigidly attached to it are world frames.
          dtype: float dtype of the numeric leaves (default JAX's default float).

        Returns:
          The [`Model`][spatialjax.multibody.Model].

        Raises:
          spatialjax.io.ModelFileError: malformed file, a loop, several roots, an
            unknown link or an unsupported joint type, naming file, line and joint.
          ValueError: a name in ``locked_joints`` that is no movable joint.
          TypeError: ``locked_joints`` not a mapping; ``dtype`` not float32/float64.
        """
        desc = read_description(path, "urdf")
        return cls.from_description(
            desc, locked_joints=locked_joints, floating_base=floating_base, dtype=dtype
        )

    @classmethod
    def from_mjcf(cls, path, *, locked_joints=None, dtype=None) -> Model:
        """Read the kinematic tree of an MJCF (MuJoCo) file.

        ``hinge`` is revolute, ``slide`` prismatic, ``free`` a free flyer (root only);
        jointless bodies and ``locked_joints`` are merged (RBDA §6.2). Bodies are
        numbered depth first in document order (MuJoCo's order); a body's frame is its
        MJCF frame moved to its joint's ``pos``. A body without ``<inertial>`` is
        massless. Docs page ``model-files.md#mjcf``.

        Args:
          path: the MJCF file.
          locked_joints: ``{joint name: value}`` (rad or m) of hinge/slide joints to
            freeze at that value and merge.
          dtype: float dtype of the numeric leaves (default JAX's default float).

        Returns:
          The [`Model`][spatialjax.multibody.Model].

        Raises:
          spatialjax.io.ModelFileError: malformed file, a ``ball`` or unknown joint,
            several joints on a body, a free joint below the root.
          ValueError: a name in ``locked_joints`` that is no hinge/slide joint.
          TypeError: ``locked_joints`` not a mapping; ``dtype`` not float32/float64.
        """
        desc = read_description(path, "mjcf")
        return cls.from_description(desc, locked_joints=locked_joints, dtype=dtype)

    @classmethod
    def from_sdf(
        cls,
        path,
        *,
        model_name: str | None = None,
        locked_joints=None,
        floating_base: bool = False,
        dtype=None,
    ) -> Model:
        """Read the kinematic tree of one ``<model>`` of an SDFormat file.

        ``fixed`` joints and ``locked_joints`` are merged (RBDA §6.2); poses follow
        SDFormat 1.7+ ``relative_to``; bodies are numbered depth first from the root,
        siblings by joint name. Docs page ``model-files.md#sdformat``.

        Args:
          path: the SDFormat file.
          model_name: the ``<model>`` to read when the file has several.
          locked_joints: ``{joint name: value}`` (rad or m) of movable joints to
            freeze at that value and merge.
          floating_base: attach the root link with a free flyer.
          dtype: float dtype of the numeric leaves (default JAX's default float).

        Returns:
          The [`Model`][spatialjax.multibody.Model].

        Raises:
          spatialjax.io.ModelFileError: malformed file, two roots, a loop, an unknown
            frame, an unsupported joint type, naming file, line and joint.
          ValueError: an unknown ``model_name`` or name in ``locked_joints``.
          TypeError: ``locked_joints`` not a mapping; ``dtype`` not float32/float64.
        """
        desc = read_description(path, "sdf", model_name=model_name)
        return cls.from_description(
            desc, locked_joints=locked_joints, floating_base=floating_base, dtype=dtype
        )

    @classmethod
    def from_description(
        cls, description, *, locked_joints=None, floating_base: bool = False, dtype=None
    ) -> Model:
        """Build the model of a description read by ``spatialjax.io.read_description``.

        The same model as ``from_urdf`` / ``from_mjcf`` / ``from_sdf`` of the file,
        without reading it again.

        Args:
          description: a [`ModelDescription`][spatialjax.io.ModelDescription].
          locked_joints: ``{joint name: value}`` (rad or m) of movable joints to
            freeze at that value and merge.
          floating_base: attach the root link with a free flyer (URDF, SDFormat).
          dtype: float dtype of the numeric leaves (default JAX's default float).

        Returns:
          The [`Model`][spatialjax.multibody.Model].

        Raises:
          TypeError: ``description`` not a ``ModelDescription`` with a tree;
            ``locked_joints`` not a mapping; ``dtype`` not float32/float64.
          ValueError: a name in ``locked_joints`` that is no movable joint,
            ``floating_base`` for a tree rooted at the world.
          spatialjax.io.ModelFileError: a model without a moving body (MJCF, SDFormat).

        Examples:
          >>> import pathlib, tempfile
          >>> from spatialjax.io import read_description
          >>> from spatialjax.multibody import Model
          >>> path = pathlib.Path(tempfile.mkdtemp()) / "pendulum.urdf"
          >>> _ = path.write_text(
          ...     '<robot name="pendulum"><link name="base"/><link name="arm"><inertial>'
          ...     '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
          ...     '</inertial></link><joint name="hinge" type="continuous"><parent link="base"/>'
          ...     '<child link="arm"/></joint></robot>'
          ... )
          >>> Model.from_description(read_description(path), floating_base=True).joint_names
          ('root_joint', 'hinge')
        """
        from ..io import ModelDescription

        if not isinstance(description, ModelDescription) or not description.links:
            raise ArgumentTypeError(
                "description",
                "expected the ModelDescription of spatialjax.io.read_description, "
                f"got {type(description).__name__}"
                + (" without a tree (read_model's)" if isinstance(description, ModelDescription)
                   else "")
            )  # fmt: skip
        args = model_arguments(description, locked_joints=locked_joints,
                               floating_base=floating_base)  # fmt: skip
        return build_model(**args, dtype=dtype)

    # ------------------------------------------------------------------ sizes
    @property
    def nbodies(self) -> int:
        """Number of moving bodies (fixed joints merged)."""
        return len(self.parents)

    @property
    def floating_base(self) -> bool:
        """Whether body 0 is attached to the world by a free flyer."""
        return bool(self.joint_types) and self.joint_types[0] == "free_flyer"

    @property
    def nq(self) -> int:
        """Length of ``q`` (7 for a free flyer, 1 per other joint)."""
        return sum(7 if t == "free_flyer" else 1 for t in self.joint_types)

    @property
    def nv(self) -> int:
        """Length of ``v``, ``a`` and ``tau`` (6 for a free flyer, 1 per other joint)."""
        return sum(6 if t == "free_flyer" else 1 for t in self.joint_types)

    @property
    def dtype(self):
        d = self.__dict__
        return d["axes"].dtype if "axes" in d else self.body_values.dtype

    def body_index(self, name: str) -> int:
        """Index of the body whose frame is link ``name`` (raises ``KeyError`` naming it)."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise KeyError(
                f"body_index: no body named {name!r} in model {self.name!r} "
                f"(bodies: {', '.join(self.body_names)}; merged links are frames: "
                "see frame_names)"
            ) from None

    def frame_index(self, name: str) -> int:
        """Index of frame ``name`` in ``frame_names`` / ``frame_placements``.

        Raises:
          ValueError: no such frame (lists the closest names), or a shared name.
        """
        if not isinstance(name, str):
            raise ArgumentTypeError(
                "frame", f"expected a frame name (str), got {type(name).__name__}"
            )
        hits = [i for i, n in enumerate(self.frame_names) if n == name]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise ArgumentError(
                "frame",
                f"{len(hits)} frames of model {self.name!r} are named {name!r} "
                f"(frame indices {hits}); rename one in the model file",
            )
        import difflib

        close = difflib.get_close_matches(name, self.frame_names, n=5, cutoff=0.5)
        hint = f"closest: {', '.join(map(repr, close))}" if close else "no close name"
        raise ArgumentError(
            "frame",
            f"no frame named {name!r} in model {self.name!r} ({hint}; "
            f"{len(self.frame_names)} frames in model.frame_names)",
        )

    def frame(self, name: str) -> tuple[int, Plxb]:
        """``(body, placement)`` of frame ``name``: the body it is attached to
        (``-1``: the world) and its pose in that body's frame (``Plxb``, ``E`` =
        frame axes in body coordinates, ``r`` = frame origin in body coordinates).

        Raises:
          ValueError: as [`frame_index`][spatialjax.multibody.Model.frame_index].

        Examples:
          >>> from spatialjax.multibody import chain_model
          >>> body, X = chain_model(2).frame("link1")
          >>> body, X.r.tolist()
          (1, [0.0, 0.0, 0.0])
        """
        i = self.frame_index(name)
        return self.frame_bodies[i], self.frame_placements[i]

    def astype(self, dtype) -> Model:
        """The same model with every numeric leaf cast to ``dtype`` (float32 or float64)."""
        dtype = resolve_float_dtype(dtype, "astype")
        return jax.tree.map(lambda x: jnp.asarray(x, dtype), self)

    def neutral_configuration(self) -> jax.Array:
        """``q`` with every joint at zero and a free flyer at the origin with identity rotation."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[3] = 1.0
        return jnp.asarray(q, self.dtype)

    # --------------------------------------------------------- Pinocchio order
    def _check_last(self, x, n, name):
        x = jnp.asarray(x)
        if x.ndim < 1 or x.shape[-1] != n:
            raise ArgumentError(
                name, f"expected shape (..., {n}) for model {self.name!r}, got {tuple(x.shape)}"
            )
        if not jnp.issubdtype(x.dtype, jnp.floating):
            raise ArgumentTypeError(name, f"expected a floating-point array, got dtype {x.dtype}")
        return x

    @property
    def nq_pinocchio(self) -> int:
        """Length of Pinocchio's ``q`` for this model (continuous joints take 2 entries)."""
        return self.nq + sum(t == "continuous" for t in self.joint_types)

    def q_to_pinocchio(self, q) -> jax.Array:
        """``q`` (this module's order) -> Pinocchio's ``q``.

        Free flyer ``[p, qw, qx, qy, qz]`` -> ``[p, qx, qy, qz, qw]``;
        continuous ``θ`` -> ``[cos θ, sin θ]``; other joints unchanged.
        """
        q = self._check_last(q, self.nq, "q")
        out, k = [], 0
        for t in self.joint_types:
            if t == "free_flyer":
                out += [q[..., k : k + 3], q[..., k + 4 : k + 7], q[..., k + 3 : k + 4]]
                k += 7
            elif t == "continuous":
                out += [jnp.cos(q[..., k : k + 1]), jnp.sin(q[..., k : k + 1])]
                k += 1
            else:
                out.append(q[..., k : k + 1])
                k += 1
        return jnp.concatenate(out, axis=-1)

    def q_from_pinocchio(self, q_pin) -> jax.Array:
        """Pinocchio's ``q`` -> this module's ``q`` (inverse of ``q_to_pinocchio``).

        A continuous joint's angle is ``atan2(sin, cos)`` in ``(-π, π]``.
        """
        q_pin = self._check_last(q_pin, self.nq_pinocchio, "q_pin")
        out, k = [], 0
        for t in self.joint_types:
            if t == "free_flyer":
                out += [q_pin[..., k : k + 3], q_pin[..., k + 6 : k + 7], q_pin[..., k + 3 : k + 6]]
                k += 7
            elif t == "continuous":
                out.append(jnp.arctan2(q_pin[..., k + 1 : k + 2], q_pin[..., k : k + 1]))
                k += 2
            else:
                out.append(q_pin[..., k : k + 1])
                k += 1
        return jnp.concatenate(out, axis=-1)

    def _v_perm(self):
        perm, k = [], 0
        for t in self.joint_types:
            if t == "free_flyer":
                perm += [k + 3, k + 4, k + 5, k, k + 1, k + 2]
                k += 6
            else:
                perm.append(k)
                k += 1
        return np.asarray(perm)

    def v_to_pinocchio(self, v) -> jax.Array:
        """``v`` (or ``a``, ``tau``) -> Pinocchio's order: free flyer ``[ω; v]`` -> ``[v; ω]``.

        Its own inverse; a mass matrix converts with ``M[..., p, :][..., :, p]``,
        ``p = model.v_permutation()``.
        """
        v = self._check_last(v, self.nv, "v")
        return v[..., self._v_perm()]

    def v_from_pinocchio(self, v_pin) -> jax.Array:
        """Pinocchio's ``v`` (or ``a``, ``tau``) -> this module's order."""
        v_pin = self._check_last(v_pin, self.nv, "v_pin")
        return v_pin[..., self._v_perm()]

    def v_permutation(self) -> np.ndarray:
        """Index array ``p`` with ``v_pin = v[p]`` (and ``v = v_pin[p]``)."""
        return self._v_perm()


#: The numeric fields of a :class:`Model` held per body, in the columns of its first leaf
#: (``body_values``)
_BODY_PATHS = ("placements.E", "placements.r", "axes", "inertia.params")
#: The other numeric fields, raveled one after the other in its second leaf (``other_values``)
_OTHER_PATHS = ("frame_placements.E", "frame_placements.r", "armature", "damping", "friction",
                "lower", "upper", "velocity_limit", "effort_limit")  # fmt: skip
_NUMERIC_PATHS = _BODY_PATHS + _OTHER_PATHS
#: the indices in ``_NUMERIC_PATHS`` of each leaf's fields
_GROUPS = (range(len(_BODY_PATHS)), range(len(_BODY_PATHS), len(_NUMERIC_PATHS)))
_JOINT_PATHS = _OTHER_PATHS[2:]
_NUMERIC_FIELDS = ("placements", "axes", "inertia", "frame_placements", *_JOINT_PATHS)
_LEAF_KEYS = (jax.tree_util.GetAttrKey("body_values"), jax.tree_util.GetAttrKey("other_values"))


@functools.lru_cache(maxsize=256)
def _layout(structure: ModelStructure) -> tuple:
    """``(shapes, spans)``: each numeric field's shape (``_NUMERIC_PATHS`` order, without
    leading batch axes) and its ``(start, stop)`` on its leaf's last axis (a body's row of
    ``body_values``, ``other_values``)."""
    nb, nf = len(structure.parents), len(structure.frame_names)
    nq = sum(7 if t == "free_flyer" else 1 for t in structure.joint_types)
    nv = sum(6 if t == "free_flyer" else 1 for t in structure.joint_types)
    shapes = {"placements.E": (nb, 3, 3), "placements.r": (nb, 3), "axes": (nb, 3),
              "inertia.params": (nb, 10), "frame_placements.E": (nf, 3, 3),
              "frame_placements.r": (nf, 3), "lower": (nq,), "upper": (nq,)}  # fmt: skip
    shapes = tuple(shapes.get(path, (nv,)) for path in _NUMERIC_PATHS)
    spans = []
    for group, per_body in zip(_GROUPS, (True, False), strict=True):
        at = 0
        for i in group:
            n = math.prod(shapes[i][1:] if per_body else shapes[i])
            spans.append((at, at + n))
            at += n
    return shapes, tuple(spans)


def _numeric_arrays(m: Model) -> list:
    out = []
    for path in _NUMERIC_PATHS:
        x = m
        for name in path.split("."):
            x = getattr(x, name)
        out.append(x)
    return out


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, jax.Array))  # tracers are jax.Array too


def _pack(m: Model) -> tuple:
    """``(body_values, other_values)`` of ``m``'s fields.

    Array fields: one float dtype, leading batch shapes broadcast to one; NumPy arrays stay
    NumPy, others are concatenated on the host and put on the first JAX field's device (no
    program compiled), traced ones with ``jnp``. A leaf whose fields are all one non-array
    object (``None``, an axis of ``in_axes``, a sentinel) is that object.
    """
    shapes, spans = _layout(m.structure)
    arrays = _numeric_arrays(m)
    leads, dtype, first = [], None, None
    for group in _GROUPS:
        kinds = [_is_array(arrays[i]) for i in group]
        if not all(kinds):
            i = group[kinds.index(False)] if any(kinds) else group[0]
            if any(kinds) or any(arrays[j] is not arrays[i] for j in group):
                raise ArgumentError(
                    f"model.{_NUMERIC_PATHS[i]}",
                    f"expected an array, or the one object of every field of its leaf "
                    f"({', '.join(_NUMERIC_PATHS[j] for j in group)}), got "
                    f"{type(arrays[i]).__name__}",
                )
            continue
        for i in group:
            x, shape, path = arrays[i], shapes[i], _NUMERIC_PATHS[i]
            k = x.ndim - len(shape)
            if k < 0 or tuple(x.shape[k:]) != shape:
                raise ArgumentError(
                    f"model.{path}",
                    f"expected shape (...) + {shape} for model {m.name!r}, got {tuple(x.shape)}",
                )
            if dtype is None:
                dtype, first = x.dtype, path
            elif x.dtype != dtype:
                raise ArgumentTypeError(
                    f"model.{path}", f"expected {dtype} like model.{first}, got {x.dtype}"
                )
            leads.append((path, tuple(x.shape[:k])))
    lead: tuple = ()
    for path, shape in leads:
        try:
            lead = np.broadcast_shapes(lead, shape)
        except ValueError:
            raise ArgumentError(
                f"model.{path}",
                f"leading batch shape {shape} does not broadcast with the other fields' {lead}",
            ) from None
    traced = any(isinstance(x, _Tracer) for x in arrays)
    xp = jnp if traced else np
    leaves = []
    for group in _GROUPS:
        if not _is_array(arrays[group[0]]):
            leaves.append(arrays[group[0]])
            continue
        parts = []
        for i in group:
            x, shape, (a, b) = arrays[i], shapes[i], spans[i]
            tail = (shape[0], b - a) if group is _GROUPS[0] else (b - a,)
            x = x if traced else np.asarray(x)
            parts.append(xp.reshape(xp.broadcast_to(x, lead + shape), lead + tail))
        leaf = xp.concatenate(parts, axis=-1)
        jax_fields = [arrays[i] for i in group if isinstance(arrays[i], jax.Array)]
        if not traced and jax_fields:
            leaf = _on_device_of(np.asarray(leaf), jax_fields[0])
        leaves.append(leaf)
    return tuple(leaves)


def _keepable(m: Model, leaves: tuple) -> bool:
    """Whether ``leaves`` may be kept on ``m``: not traced, and no field a NumPy array that
    may still change in place."""
    if any(isinstance(x, _Tracer) for x in leaves):
        return False
    return not any(map(_writable, _numeric_arrays(m)))


def _writable(x) -> bool:
    """Whether ``x`` is a NumPy array that may still change in place."""
    return isinstance(x, np.ndarray) and x.flags.writeable


def _on_device_of(host: np.ndarray, like: jax.Array):
    """``host`` put where ``like`` lives: its device, or its sharding of the leading axes."""
    if len(like.sharding.device_set) == 1:
        return jax.device_put(host, like.sharding)
    return jax.device_put(host, _leading_sharding(like, host.ndim))


def _leading_sharding(like: jax.Array, ndim: int):
    """``like``'s sharding of its leading (batch) axes, for an array of ``ndim`` axes."""
    sharding = like.sharding
    if not isinstance(sharding, jax.sharding.NamedSharding):  # replicated on its devices
        return jax.sharding.NamedSharding(
            jax.sharding.Mesh(np.array(sorted(sharding.device_set, key=lambda d: d.id)), ("d",)),
            jax.sharding.PartitionSpec(),
        )
    spec = sharding.spec
    lead = [spec[i] if i < len(spec) else None for i in range(ndim - 1)]
    return jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec(*lead, None))


@functools.lru_cache(maxsize=1)
def _node_defs():
    """Tree structures of a ``Plxb`` and a ``RigidBodyInertia`` (rebuilt from leaves)."""
    # NumPy placeholders (only the structures are kept): no device array, even when first
    # called while a function is traced
    E, r, p = np.eye(3)[None], np.zeros((1, 3)), np.zeros((1, 10))
    return (
        jax.tree.structure(Plxb(E, r)),  # pyright: ignore[reportArgumentType]
        jax.tree.structure(RigidBodyInertia(p)),  # pyright: ignore[reportArgumentType]
    )


def _unpack(structure: ModelStructure, values) -> dict:
    """The numeric fields of the leaves ``values`` (``(body_values, other_values)``).

    Traced leaves: slices. NumPy leaves: views. Concrete JAX leaves: views on the host put
    back on the leaf's device or sharding (no program compiled; traced when called inside
    a trace). ``jax.ShapeDtypeStruct`` leaves: ``ShapeDtypeStruct`` fields. Any other object
    (``None``, an axis, a sentinel, a symbolic zero): every field of its leaf is that object.
    """
    shapes, spans = _layout(structure)
    part = {}
    for name, x, group in zip(("body_values", "other_values"), values, _GROUPS, strict=True):
        width = spans[group[-1]][1]  # of a body's row, or of the whole leaf
        tail = (shapes[0][0], width) if group is _GROUPS[0] else (width,)
        if not (_is_array(x) or isinstance(x, jax.ShapeDtypeStruct)):
            part.update((_NUMERIC_PATHS[i], x) for i in group)
            continue
        if tuple(x.shape[len(x.shape) - len(tail) :]) != tail:
            raise ArgumentError(
                f"model.{name}",
                f"expected shape (...) + {tail} for a model of this structure, got {x.shape}",
            )
        lead = tuple(x.shape[: len(x.shape) - len(tail)])
        if isinstance(x, jax.ShapeDtypeStruct):
            part.update((_NUMERIC_PATHS[i], jax.ShapeDtypeStruct(lead + shapes[i], x.dtype))
                        for i in group)  # fmt: skip
            continue
        host = x if isinstance(x, (np.ndarray, _Tracer)) else np.asarray(x)
        for i in group:
            a, b = spans[i]
            field = host[..., a:b].reshape(lead + shapes[i])
            if host is not x:
                field = _on_device_of(field, x)
            part[_NUMERIC_PATHS[i]] = field
    plxb, inertia = _node_defs()
    return dict(
        placements=jax.tree.unflatten(plxb, (part["placements.E"], part["placements.r"])),
        axes=part["axes"],
        inertia=jax.tree.unflatten(inertia, (part["inertia.params"],)),
        frame_placements=jax.tree.unflatten(
            plxb, (part["frame_placements.E"], part["frame_placements.r"])
        ),
        **{k: part[k] for k in _JOINT_PATHS},
    )


#: ``(leaves, structure)`` of a model (``jax.tree.flatten``; at every call of a jitted function
#: that takes the model): the two leaves, ``m.body_values`` and ``m.other_values``, are
#: ``m._values`` when kept on the model (else ``Model.__getattr__`` packs them). An
#: ``attrgetter`` runs no Python frame (benchmarks/README.md, "The joint axes and gravity as
#: numbers in the program")
_flatten_model = operator.attrgetter("_values", "structure")


def _flatten_model_with_keys(m: Model):
    return tuple(zip(_LEAF_KEYS, m._leaves(), strict=True)), m.structure


def _unflatten_model(structure, leaves):
    """The model of ``leaves``, whose fields are read from them when one is first used
    (``Model.__getattr__``): traced leaves at once, in the trace that rebuilds the model."""
    obj = object.__new__(Model)
    object.__setattr__(obj, "structure", structure)
    object.__setattr__(obj, "_values", tuple(leaves))
    if any(isinstance(x, _Tracer) for x in leaves):
        for k, x in _unpack(structure, tuple(leaves)).items():
            object.__setattr__(obj, k, x)
    return obj


jax.tree_util.register_pytree_with_keys(
    Model, _flatten_model_with_keys, _unflatten_model, _flatten_model
)


#: Joint dynamics and limit fields of :class:`Model` and their defaults (file says nothing).
JOINT_DYNAMICS_DEFAULTS = {
    "armature": 0.0,
    "damping": 0.0,
    "friction": 0.0,
    "lower": -math.inf,
    "upper": math.inf,
    "velocity_limit": math.inf,
    "effort_limit": math.inf,
}


def _joint_dynamics_arrays(joint_types, per_body) -> dict:
    """Per-body joint values -> the ``(nv,)`` / ``(nq,)`` arrays of ``Model``."""
    unknown = set(per_body) - set(JOINT_DYNAMICS_DEFAULTS)
    if unknown:
        raise ArgumentError("joint_dynamics", f"unknown fields {sorted(unknown)}")
    out = {}
    for key, default in JOINT_DYNAMICS_DEFAULTS.items():
        vals = per_body.get(key)
        if vals is not None and len(vals) != len(joint_types):
            raise ArgumentError(
                f"joint_dynamics[{key!r}]",
                f"expected one value per body ({len(joint_types)}), got {len(vals)}",
            )
        row = []
        for i, t in enumerate(joint_types):
            if t == "free_flyer":
                n = 7 if key in ("lower", "upper") else 6
                row += [default] * n
                continue
            x = default if vals is None or vals[i] is None else float(vals[i])
            if key in ("lower", "upper") and t == "continuous":
                x = default
            row.append(x)
        out[key] = np.asarray(row, np.float64)
    for i, (lo, hi) in enumerate(zip(out["lower"], out["upper"], strict=True)):
        if lo > hi:
            raise ValueError(f"joint limits: q[{i}] has lower {lo} > upper {hi}")
    for key in ("armature", "damping", "friction", "velocity_limit", "effort_limit"):
        if (out[key] < 0).any() or np.isnan(out[key]).any():
            raise ValueError(f"joint_dynamics[{key!r}]: expected values >= 0, got {out[key]}")
    return out


def build_model(
    *,
    name,
    parents,
    joint_types,
    joint_names,
    body_names,
    placement_R,
    placement_p,
    axes,
    params,
    frame_names,
    frame_bodies,
    frame_R,
    frame_p,
    joint_dynamics=None,
    dtype=None,
) -> Model:
    """Assemble a [`Model`][spatialjax.multibody.Model] (internal; loaders call it).

    Numeric arguments are float64 array-likes of per-body (per-frame) rows;
    ``joint_dynamics`` is ``{field: per-body values}`` over ``JOINT_DYNAMICS_DEFAULTS``
    (missing fields and ``None`` take the default).
    """
    dtype = resolve_float_dtype(dtype)
    parents = tuple(int(p) for p in parents)
    for i, p in enumerate(parents):
        if not -1 <= p < i:
            raise ArgumentError("parents", f"body {i} has parent {p}; expected topological order")
    for i, t in enumerate(joint_types):
        if t not in JOINT_TYPES:
            raise ValueError(f"joint_types[{i}]: unknown joint type {t!r}")
        if t == "free_flyer" and (i != 0 or parents[0] != -1):
            raise ValueError("a free_flyer joint is only allowed for body 0, attached to the world")
    nb = len(parents)
    nf = len(frame_names)

    def arr(x, shape):
        return jnp.asarray(np.asarray(x, np.float64).reshape(shape), dtype)

    jd = _joint_dynamics_arrays(joint_types, joint_dynamics or {})
    return Model(
        placements=Plxb(arr(placement_R, (nb, 3, 3)), arr(placement_p, (nb, 3))),
        axes=arr(axes, (nb, 3)),
        inertia=RigidBodyInertia(arr(params, (nb, 10))),
        frame_placements=Plxb(arr(frame_R, (nf, 3, 3)), arr(frame_p, (nf, 3))),
        **{k: jnp.asarray(x, dtype) for k, x in jd.items()},
        structure=ModelStructure(
            str(name),
            parents,
            tuple(joint_types),
            tuple(joint_names),
            tuple(body_names),
            _levels(parents),
            tuple(frame_names),
            tuple(int(b) for b in frame_bodies),
        ),
    )


def chain_model(
    n: int,
    *,
    length: float = 1.0,
    mass: float = 1.0,
    floating_base: bool = False,
    dtype=None,
) -> Model:
    """A serial chain of ``n`` revolute-z links, each a uniform rod of ``mass`` along x.

    Joint ``i > 0`` sits ``length`` along the parent's x axis; with
    ``floating_base`` the first link carries a free flyer.
    """
    if n < 1:
        raise ArgumentError("n", f"expected at least one link, got {n}")
    L, m = float(length), float(mass)
    c = np.array([L / 2, 0.0, 0.0])
    I_c = np.diag([m * L * L / 1200, m * L * L / 12, m * L * L / 12])
    I_o = I_c + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    pi = np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])
    types = ["revolute"] * n
    axes = np.tile([0.0, 0.0, 1.0], (n, 1))
    if floating_base:
        types[0] = "free_flyer"
        axes[0] = 0.0
    Pp = np.zeros((n, 3))
    Pp[1:, 0] = L
    names = [f"link{i}" for i in range(n)]
    return build_model(
        name=f"chain{n}",
        parents=list(range(-1, n - 1)),
        joint_types=types,
        joint_names=[f"joint{i}" for i in range(n)],
        body_names=names,
        placement_R=np.tile(np.eye(3), (n, 1, 1)),
        placement_p=Pp,
        axes=axes,
        params=np.tile(pi, (n, 1)),
        frame_names=names,
        frame_bodies=list(range(n)),
        frame_R=np.tile(np.eye(3), (n, 1, 1)),
        frame_p=np.zeros((n, 3)),
        dtype=dtype,
    )
