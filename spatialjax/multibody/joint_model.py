r"""The joint model: armature, viscous and Coulomb friction and an offset per joint.

Per one-degree-of-freedom joint ``j`` (body order; a free flyer has none) the
measured joint torque is the rigid-body torque plus

$$τ_{J,j} = I_{a,j}\, \ddot q_j + b_j\, \dot q_j + F_{c,j}\, \mathrm{sign}(\dot q_j) + o_j,$$

all four linear in their coefficients, so they are extra columns of the
identification regressor (``τ = Y(q, q̇, q̈) π + Y_J(q̇, q̈) φ``). Each kind is a
field of [Model][spatialjax.multibody.Model] and an attribute of the model files
(``KIND_FIELDS``, ``MJCF_ATTRIBUTES``, ``URDF_ATTRIBUTES`` in this module):

* ``armature``: the rotor inertia reflected through the gear, ``ρ² I_r``
  (kg·m², kg for a prismatic joint). Model ``armature``; MJCF ``armature``;
  URDF none (Drake's extension ``drake:rotor_inertia`` carries it).
* ``viscous``: viscous damping ``b`` (N·m·s/rad). Model ``damping``; MJCF
  ``damping`` (its linear term); URDF ``<dynamics damping>``.
* ``coulomb``: Coulomb friction ``F_c`` (N·m). Model ``friction``; MJCF
  ``frictionloss``; URDF ``<dynamics friction>``.
* ``offset``: a torque-sensor bias ``o`` (N·m). No field, no attribute.

``armature``, ``viscous`` and ``coulomb`` are ``≥ 0``; the offset has either
sign. ``sign(0) = 0``. The coefficients are joint-major, kinds in
``JOINT_KINDS`` order: ``φ = [I_a1, b_1, F_c1, o_1, I_a2, …]`` for all four.
Each column is ``q̈_j``, ``q̇_j``, ``sign(q̇_j)`` or ``1`` on joint ``j``'s row
(zero elsewhere, and on a free flyer's six rows).

Semantics in MuJoCo: ``armature`` is added to the mass matrix diagonal and
``damping`` acts through ``qfrc_passive`` (``−b q̇``), both exactly as above;
``frictionloss`` is a soft constraint that equals ``F_c sign(q̇)`` while the
joint slides, but near rest (within the constraint's regularisation, and while
it sticks) its force lies anywhere in ``[−F_c, F_c]``: neither it nor real
static friction is ``F_c sign(q̇)`` there (see
[moving_samples][spatialjax.identification.moving_samples]). Pinocchio's
``rnea`` adds ``armature · a``; its ``damping`` and ``friction`` are stored only.

References:
  R. Featherstone, *Rigid Body Dynamics Algorithms*, 2008, §9.2 (gears; the
  rotor inertia reflected as ``ρ² I_r`` on the joint-space inertia diagonal).
  C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic
  identification of the Franka Emika Panda robot with retrieval of feasible
  parameters using penalty-based optimization", IEEE RA-L 4(4), 2019.
  E. Todorov, T. Erez, Y. Tassa, "MuJoCo: a physics engine for model-based
  control", IROS 2012 (soft constraints, friction loss).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _sweep as sweep

#: The joint-model kinds, in column order within a joint.
JOINT_KINDS = ("armature", "viscous", "coulomb", "offset")
#: The [Model][spatialjax.multibody.Model] field each kind's coefficient is (None: none).
KIND_FIELDS = {"armature": "armature", "viscous": "damping", "coulomb": "friction", "offset": None}
#: The MJCF ``<joint>`` attribute each kind is written to (None: none).
MJCF_ATTRIBUTES = {
    "armature": "armature",
    "viscous": "damping",
    "coulomb": "frictionloss",
    "offset": None,
}
#: The URDF joint element/attribute each kind is written to (None: URDF has none).
URDF_ATTRIBUTES = {
    "armature": None,
    "viscous": "dynamics/@damping",
    "coulomb": "dynamics/@friction",
    "offset": None,
}
#: Units of each kind's coefficient (revolute joint; prismatic: kg, N·s/m, N, N).
JOINT_UNITS = {"armature": "kg·m²", "viscous": "N·m·s/rad", "coulomb": "N·m", "offset": "N·m"}
_NONNEGATIVE = {"armature": True, "viscous": True, "coulomb": True, "offset": False}


@dataclasses.dataclass(frozen=True)
class JointModel:
    """Which joint-model kinds each one-DoF joint has (module docstring), and their columns.

    Attributes:
      kinds: a subset of ``JOINT_KINDS``, stored in that order; ``()`` is
        no joint model.

    Examples:
      >>> JointModel(("coulomb", "armature")).kinds
      ('armature', 'coulomb')
      >>> JointModel.parse("viscous,coulomb").kinds
      ('viscous', 'coulomb')
    """

    kinds: tuple[str, ...] = JOINT_KINDS

    def __post_init__(self):
        kinds = self.kinds
        if isinstance(kinds, str) or not isinstance(kinds, (tuple, list)):
            raise TypeError(f"kinds: expected a tuple of names from {JOINT_KINDS}, got {kinds!r}")
        bad = [k for k in kinds if k not in JOINT_KINDS]
        if bad:
            raise ValueError(f"kinds: unknown joint-model kind {bad[0]!r}; known: {JOINT_KINDS}")
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"kinds: a joint-model kind is repeated in {tuple(kinds)!r}")
        object.__setattr__(self, "kinds", tuple(k for k in JOINT_KINDS if k in kinds))

    @classmethod
    def parse(cls, text: str) -> JointModel:
        """From ``"armature,viscous,coulomb,offset"`` (any comma-separated subset) or ``"none"``.

        Raises:
          ValueError: an unknown or repeated kind, or an empty string.
        """
        parts = [p.strip().lower() for p in str(text).split(",")]
        if parts == ["none"]:
            return cls(())
        try:
            if not all(parts):
                raise ValueError("an empty kind")
            return cls(tuple(parts))
        except ValueError as e:
            raise ValueError(
                f"expected a comma-separated subset of {','.join(JOINT_KINDS)}, or 'none'; "
                f"got {text!r} ({str(e).removeprefix('kinds: ')})"
            ) from None

    # ---------------------------------------------------------------- per model
    @staticmethod
    def n_joints(model) -> int:
        """Number of one-DoF joints of ``model`` (its ``nv`` less a free flyer's 6)."""
        return model.nv - (6 if model.floating_base else 0)

    def n_columns(self, model) -> int:
        """``n_joints · len(kinds)``."""
        return self.n_joints(model) * len(self.kinds)

    def names(self, model) -> tuple[tuple[str, str], ...]:
        """``(joint, kind)`` of every column, joint-major."""
        off = 1 if model.floating_base else 0
        return tuple((j, k) for j in model.joint_names[off:] for k in self.kinds)

    def joints(self, model) -> np.ndarray:
        """``(n_columns,)`` the one-DoF joint (``0 … n_joints − 1``) of every column."""
        return np.repeat(np.arange(self.n_joints(model)), len(self.kinds))

    def nonnegative(self, model) -> np.ndarray:
        """``(n_columns,)`` booleans: the coefficients constrained ``≥ 0`` (all but the offset)."""
        return np.array([_NONNEGATIVE[k] for _ in range(self.n_joints(model)) for k in self.kinds])

    def file_values(self, model) -> np.ndarray:
        """``(n_columns,)`` float64: the model's own values of each column's coefficient.

        ``model.armature``, ``model.damping`` and ``model.friction`` (what the
        model file gave: MJCF ``armature``/``damping``/``frictionloss``, URDF
        ``<dynamics>``, 0 where absent); the offset has no field (0).
        """
        off = 6 if model.floating_base else 0
        n1 = self.n_joints(model)
        out = np.zeros((n1, len(self.kinds)))
        for c, k in enumerate(self.kinds):
            if KIND_FIELDS[k] is not None:
                out[:, c] = np.asarray(getattr(model, KIND_FIELDS[k]), np.float64)[off:]
        return out.reshape(-1)

    def regressor(self, model, v, a) -> jax.Array:
        """``(..., nv, n_columns)``: ``τ_J = regressor @ φ`` (a free flyer's rows are zero).

        Args:
          model: the [Model][spatialjax.multibody.Model].
          v: ``(..., nv)`` joint velocities.
          a: ``(..., nv)`` joint accelerations (batch broadcasting with ``v``).

        Raises:
          ValueError: ``v`` or ``a`` whose last axis is not ``nv``.
          TypeError: non-float input, or a dtype other than the model's.
        """
        v = sweep.as_input(v, "v", model.nv, model)
        a = sweep.as_input(a, "a", model.nv, model)
        return _joint_kernel(model, v, a, self.kinds)

    def torque(self, model, v, a, coefficients) -> jax.Array:
        """``(..., nv)`` joint-model torques for ``coefficients`` ``(..., n_columns)``.

        Raises:
          ValueError: ``coefficients`` whose last axis is not ``n_columns``.
        """
        phi = jnp.asarray(coefficients)
        n = self.n_columns(model)
        if phi.ndim < 1 or phi.shape[-1] != n:
            raise ValueError(
                f"coefficients: expected shape (..., {n}) ({len(self.kinds)} per one-DoF joint: "
                f"{', '.join(self.kinds) or 'none'}), got {phi.shape}"
            )
        Y = self.regressor(model, v, a)
        return jnp.einsum("...jc,...c->...j", Y, phi)

    def as_table(self, model, coefficients) -> np.ndarray:
        """``(..., n_joints, 4)`` ``[armature, viscous, coulomb, offset]`` per joint (NaN: not
        modelled)."""
        phi = np.asarray(coefficients, np.float64)
        n1, nk = self.n_joints(model), len(self.kinds)
        if phi.shape[-1:] != (n1 * nk,):
            raise ValueError(f"coefficients: expected shape (..., {n1 * nk}), got {phi.shape}")
        out = np.full(phi.shape[:-1] + (n1, len(JOINT_KINDS)), np.nan)
        sel = [JOINT_KINDS.index(k) for k in self.kinds]
        out[..., sel] = phi.reshape(phi.shape[:-1] + (n1, nk))
        return out

    def to_dict(self, model, coefficients) -> dict:
        """``{joint: {kind: value or None}}`` for one set of coefficients (report form)."""
        table = self.as_table(model, coefficients)
        off = 1 if model.floating_base else 0
        return {
            j: {k: (None if np.isnan(table[i, c]) else float(table[i, c]))
                for c, k in enumerate(JOINT_KINDS)}
            for i, j in enumerate(model.joint_names[off:])
        }  # fmt: skip

    def joint_parameters(self, model, coefficients) -> dict:
        """``{Model field: (n_joints,) float64}`` of the modelled kinds that have a field.

        The form [write_identified_model][spatialjax.identification.write_identified_model]
        takes: ``"armature"``, ``"damping"`` (viscous), ``"friction"``
        (Coulomb; MJCF ``frictionloss``), each present only when its kind is
        modelled. NaN coefficients (a joint left out of a fit) stay NaN.
        """
        table = self.as_table(model, coefficients)
        return {
            KIND_FIELDS[k]: table[..., JOINT_KINDS.index(k)].copy()
            for k in self.kinds
            if KIND_FIELDS[k] is not None
        }


@functools.partial(jax.jit, static_argnames=("kinds",))
def _joint_kernel(model, v, a, kinds):
    """The joint-model columns on checked ``v``, ``a``: per one-DoF joint ``j`` and kind,
    ``a_j`` (armature), ``v_j`` (viscous), ``sign(v_j)`` (Coulomb) or ``1`` (offset) on row
    ``j`` (after a free flyer's six), joint-major."""
    off = 6 if model.floating_base else 0
    n1 = model.nv - off
    v, a = jnp.broadcast_arrays(v, a)
    if not kinds:
        return jnp.zeros(v.shape + (0,), v.dtype)
    vj, aj = v[..., off:], a[..., off:]
    values = {"armature": aj, "viscous": vj, "coulomb": jnp.sign(vj), "offset": jnp.ones_like(vj)}
    cols = jnp.stack([values[k] for k in kinds], axis=-1)  # (..., n1, nk)
    eye = jnp.eye(model.nv, dtype=v.dtype)[:, off:]  # row d, joint j: δ_d,off+j
    F = eye[..., None] * cols[..., None, :, :]  # (..., nv, n1, nk)
    return F.reshape(v.shape + (n1 * len(kinds),))


__all__ = [
    "JOINT_KINDS",
    "JOINT_UNITS",
    "KIND_FIELDS",
    "MJCF_ATTRIBUTES",
    "URDF_ATTRIBUTES",
    "JointModel",
]
