r"""The joint model: armature, viscous and Coulomb friction and an offset per joint.

Per one-degree-of-freedom joint ``j`` (body order; a free flyer has none) the
measured joint torque is the rigid-body torque plus

$$τ_{J,j} = I_{a,j}\, \ddot q_j + b_j\, \dot q_j + F_{c,j}\, \mathrm{sign}(\dot q_j) + o_j,$$

all four linear in their coefficients, so they are extra columns of the
identification regressor (``τ = Y(q, q̇, q̈) π + Y_J(q̇, q̈) φ``).

**Per motor, through a transmission.** With ``transmission=``
([Transmission][spatialjax.multibody.Transmission], the motor-from-joint velocity
matrix ``T``, ``θ̇ = T q̇``) the four kinds belong to the motors, in the motors' units:
``τ_J = Tᵀ (I_a ∘ T q̈ + b ∘ T q̇ + F_c ∘ sign(T q̇) + o)``. A motor's columns are
``T_m q̈``, ``T_m q̇``, ``sign(T_m q̇)``, ``1`` times ``T_mᵀ`` (its row of ``T``) over the
joint rows. Joints that no motor drives get their own motor (ratio 1, named after
the joint), so without coupling this is the per-joint model. This is MuJoCo's fixed
tendon (its ``armature``, ``damping``, ``frictionloss``) and Drake's
``JointActuator`` rotor inertia and gear ratio generalised to several joints. Each kind is a
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
from .transmission import Transmission

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
    """Which joint-model kinds each motor has (module docstring), and their columns.

    Without a transmission every one-DoF joint is its own motor (ratio 1), and
    "motor" below is "joint".

    Attributes:
      kinds: a subset of ``JOINT_KINDS``, stored in that order; ``()`` is
        no joint model.
      transmission: None (one motor per joint) or a
        [Transmission][spatialjax.multibody.Transmission]: the motor-from-joint matrix
        ``T``; the joints it leaves without a motor get their own (ratio 1).

    Raises:
      TypeError: ``kinds`` not a tuple of names, ``transmission`` not a Transmission.
      ValueError: an unknown or repeated kind.

    Examples:
      >>> JointModel(("coulomb", "armature")).kinds
      ('armature', 'coulomb')
      >>> JointModel.parse("viscous,coulomb").kinds
      ('viscous', 'coulomb')
      >>> wrist = Transmission(("m6",), ("j5", "j6"), [[1.0, 1.0]])
      >>> JointModel(("viscous",), transmission=wrist).transmission.motors
      ('m6',)
    """

    kinds: tuple[str, ...] = JOINT_KINDS
    transmission: Transmission | None = None

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
        if self.transmission is not None and not isinstance(self.transmission, Transmission):
            raise TypeError(
                "transmission: expected a spatialjax.multibody.Transmission or None, got "
                f"{type(self.transmission).__name__}"
            )

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

    @staticmethod
    def one_dof_joints(model) -> tuple[str, ...]:
        """The one-DoF joints of ``model``, its order (a free flyer left out)."""
        return tuple(model.joint_names[1 if model.floating_base else 0 :])

    def complete_transmission(self, model) -> Transmission:
        """The transmission over all of ``model``'s one-DoF joints (its order), the joints
        without a motor given their own; the identity without a transmission.

        Raises:
          TransmissionError: a joint of the transmission that the model lacks.
        """
        joints = self.one_dof_joints(model)
        if self.transmission is None:
            return Transmission(joints, joints, np.eye(len(joints)))
        return self.transmission.complete(joints)

    def motors(self, model) -> tuple[str, ...]:
        """The motors' names (the joints' without a transmission)."""
        if self.transmission is None:
            return self.one_dof_joints(model)
        return self.complete_transmission(model).motors

    def matrix(self, model) -> np.ndarray:
        """``(n_motors, n_joints)`` float64 ``T`` (the identity without a transmission)."""
        if self.transmission is None:
            return np.eye(self.n_joints(model))
        return self.complete_transmission(model).array()

    def n_motors(self, model) -> int:
        """Number of motors (``n_joints`` without a transmission)."""
        return len(self.motors(model))

    def n_columns(self, model) -> int:
        """``n_motors · len(kinds)``."""
        return self.n_motors(model) * len(self.kinds)

    def names(self, model) -> tuple[tuple[str, str], ...]:
        """``(motor, kind)`` of every column, motor-major (the joint's name is the motor's
        without a transmission)."""
        return tuple((m, k) for m in self.motors(model) for k in self.kinds)

    def joints(self, model) -> np.ndarray:
        """``(n_columns,)`` the motor (``0 … n_motors − 1``; the one-DoF joint without a
        transmission) of every column."""
        return np.repeat(np.arange(self.n_motors(model)), len(self.kinds))

    def column_rows(self, model) -> np.ndarray:
        """``(n_columns, n_joints)`` booleans: the joint rows each column acts on."""
        return np.repeat(self.matrix(model) != 0, len(self.kinds), axis=0)

    def nonnegative(self, model) -> np.ndarray:
        """``(n_columns,)`` booleans: the coefficients constrained ``≥ 0`` (all but the offset)."""
        return np.array([_NONNEGATIVE[k] for _ in range(self.n_motors(model)) for k in self.kinds])

    def file_values(self, model) -> np.ndarray:
        """``(n_columns,)`` float64: the model's own values of each column's coefficient.

        ``model.armature``, ``model.damping`` and ``model.friction`` (what the
        model file gave: MJCF ``armature``/``damping``/``frictionloss``, URDF
        ``<dynamics>``, 0 where absent); the offset has no field (0). Through a
        transmission: the transmission's own values (an MJCF tendon's) where it
        has them, else for a motor on one joint with ratio ``r`` the joint's value
        in motor units (``/r²`` for armature and damping, ``/|r|`` for Coulomb), else 0.
        """
        off = 6 if model.floating_base else 0
        T = self.matrix(model)
        single = np.count_nonzero(T, axis=1) == 1
        j = np.argmax(T != 0, axis=1)
        r = T[np.arange(T.shape[0]), j]
        tr = self.complete_transmission(model) if self.transmission is not None else None
        out = np.zeros((T.shape[0], len(self.kinds)))
        for c, k in enumerate(self.kinds):
            if KIND_FIELDS[k] is None:
                continue
            joint = np.asarray(getattr(model, KIND_FIELDS[k]), np.float64)[off:][j]
            power = 1 if k == "coulomb" else 2
            out[:, c] = np.where(single, joint / np.abs(r) ** power, 0.0)
            given = None if tr is None else tr.value(k)
            if given is not None:
                out[:, c] = np.where(np.isnan(given), out[:, c], given)
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
          TransmissionError: a transmission joint that the model lacks.
        """
        v = sweep.as_input(v, "v", model.nv, model)
        a = sweep.as_input(a, "a", model.nv, model)
        T = None if self.transmission is None else self.complete_transmission(model).matrix
        return _joint_kernel(model, v, a, self.kinds, T)

    def torque(self, model, v, a, coefficients) -> jax.Array:
        """``(..., nv)`` joint-model torques for ``coefficients`` ``(..., n_columns)``.

        Raises:
          ValueError: ``coefficients`` whose last axis is not ``n_columns``.
        """
        phi = jnp.asarray(coefficients)
        n = self.n_columns(model)
        if phi.ndim < 1 or phi.shape[-1] != n:
            raise ValueError(
                f"coefficients: expected shape (..., {n}) ({len(self.kinds)} per motor: "
                f"{', '.join(self.kinds) or 'none'}), got {phi.shape}"
            )
        Y = self.regressor(model, v, a)
        return jnp.einsum("...jc,...c->...j", Y, phi)

    def as_table(self, model, coefficients) -> np.ndarray:
        """``(..., n_motors, 4)`` ``[armature, viscous, coulomb, offset]`` per motor (per
        joint without a transmission; NaN: not modelled)."""
        phi = np.asarray(coefficients, np.float64)
        n1, nk = self.n_motors(model), len(self.kinds)
        if phi.shape[-1:] != (n1 * nk,):
            raise ValueError(f"coefficients: expected shape (..., {n1 * nk}), got {phi.shape}")
        out = np.full(phi.shape[:-1] + (n1, len(JOINT_KINDS)), np.nan)
        sel = [JOINT_KINDS.index(k) for k in self.kinds]
        out[..., sel] = phi.reshape(phi.shape[:-1] + (n1, nk))
        return out

    def to_dict(self, model, coefficients) -> dict:
        """``{motor: {kind: value or None}}`` for one set of coefficients (report form)."""
        table = self.as_table(model, coefficients)
        return {
            m: {k: (None if np.isnan(table[i, c]) else float(table[i, c]))
                for c, k in enumerate(JOINT_KINDS)}
            for i, m in enumerate(self.motors(model))
        }  # fmt: skip

    def joint_parameters(self, model, coefficients) -> dict:
        """``{Model field: (n_joints,) float64}`` of the modelled kinds that have a field.

        The form [write_identified_model][spatialjax.identification.write_identified_model]
        takes: ``"armature"``, ``"damping"`` (viscous), ``"friction"``
        (Coulomb; MJCF ``frictionloss``), each present only when its kind is
        modelled. NaN coefficients (a joint left out of a fit) stay NaN. Through a
        transmission, a joint with its own motor (one that drives it alone, ratio
        ``r``) gets that motor's values in joint units (``r²`` armature and damping,
        ``|r|`` Coulomb), a joint without one NaN; the coupled motors' values are
        theirs ([coupled_motors][spatialjax.multibody.JointModel.coupled_motors]).
        """
        table = self.as_table(model, coefficients)
        T = self.matrix(model)
        n1 = T.shape[1]
        out = {}
        for k in self.kinds:
            if KIND_FIELDS[k] is None:
                continue
            power = 1 if k == "coulomb" else 2
            col = np.full(table.shape[:-2] + (n1,), np.nan)
            for j in range(n1):
                (ms,) = np.nonzero((T[:, j] != 0) & (np.count_nonzero(T, axis=1) == 1))
                if ms.size == 1:  # the joint's own motor
                    r = abs(T[ms[0], j])
                    col[..., j] = table[..., ms[0], JOINT_KINDS.index(k)] * r**power
            out[KIND_FIELDS[k]] = col
        return out

    def coupled_motors(self, model) -> tuple[int, ...]:
        """Indices of the motors that drive more than one joint (none without a
        transmission)."""
        T = self.matrix(model)
        return tuple(int(m) for m in np.flatnonzero(np.count_nonzero(T, axis=1) > 1))


@functools.partial(jax.jit, static_argnames=("kinds", "T"))
def _joint_kernel(model, v, a, kinds, T):
    """The joint-model columns on checked ``v``, ``a``: per motor ``m`` and kind,
    ``T_m a`` (armature), ``T_m v`` (viscous), ``sign(T_m v)`` (Coulomb) or ``1``
    (offset) times ``T_mᵀ`` on the joint rows (after a free flyer's six), motor-major;
    ``T`` None is the identity (a tuple of rows otherwise: a static argument)."""
    off = 6 if model.floating_base else 0
    n1 = model.nv - off
    v, a = jnp.broadcast_arrays(v, a)
    Tm = jnp.eye(n1, dtype=v.dtype) if T is None else jnp.asarray(T, v.dtype)
    nm = Tm.shape[0]
    if not kinds:
        return jnp.zeros(v.shape + (0,), v.dtype)
    vm = v[..., off:] @ Tm.T if T is not None else v[..., off:]
    am = a[..., off:] @ Tm.T if T is not None else a[..., off:]
    values = {"armature": am, "viscous": vm, "coulomb": jnp.sign(vm), "offset": jnp.ones_like(vm)}
    cols = jnp.stack([values[k] for k in kinds], axis=-1)  # (..., nm, nk)
    rows = jnp.concatenate([jnp.zeros((off, nm), v.dtype), Tm.T], axis=0)  # (nv, nm)
    F = rows[:, :, None] * cols[..., None, :, :]  # (..., nv, nm, nk)
    return F.reshape(v.shape + (nm * len(kinds),))


__all__ = [
    "JOINT_KINDS",
    "JOINT_UNITS",
    "KIND_FIELDS",
    "MJCF_ATTRIBUTES",
    "URDF_ATTRIBUTES",
    "JointModel",
]
