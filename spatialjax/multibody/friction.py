r"""Joint friction: ``FrictionModel`` and the friction regressor.

Per one-degree-of-freedom joint ``j`` (body order; a free flyer has none)

$$
τ_{f,j} = F_{v,j}\, \dot q_j + F_{c,j}\, \mathrm{sign}(\dot q_j) + o_j,
$$

viscous ``F_v ≥ 0`` (N·m·s/rad or N·s/m), Coulomb ``F_c ≥ 0`` (N·m or N) and
a constant offset ``o`` (N·m or N: a torque-sensor bias or gravity
compensation error, either sign), linear in the coefficients (the friction
model of Gaz et al. 2019 without its smooth sigmoid; Swevers et al. 1997).
``sign(0) = 0``: at rest the Coulomb column is zero. A model chooses which of
the three kinds it has; its coefficients are joint-major, kind order as in
[`FRICTION_KINDS`][spatialjax.multibody.FRICTION_KINDS]: ``φ = [F_v1, F_c1, o_1, F_v2, …]`` for all
three.

References:
  C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic
  identification of the Franka Emika Panda robot with retrieval of feasible
  parameters using penalty-based optimization", IEEE RA-L 4(4), 2019.
  J. Swevers, C. Ganseman, D. B. Tükel, J. De Schutter, H. Van Brussel,
  "Optimal robot excitation and identification", IEEE T-RA 13(5), 1997.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from . import _sweep as sweep
from ._model import Model

#: The friction kinds, in column order within a joint.
FRICTION_KINDS = ("viscous", "coulomb", "offset")
#: Units of each kind's coefficient (revolute joint; prismatic: N·s/m, N, N).
FRICTION_UNITS = {"viscous": "N·m·s/rad", "coulomb": "N·m", "offset": "N·m"}
_NONNEGATIVE = {"viscous": True, "coulomb": True, "offset": False}


@dataclasses.dataclass(frozen=True)
class FrictionModel:
    """Which friction kinds each one-DoF joint has (module docstring), and their columns.

    Attributes:
      kinds: a subset of [`FRICTION_KINDS`][spatialjax.multibody.FRICTION_KINDS], stored in that
        order; ``()`` is no friction.

    Examples:
      >>> FrictionModel(("coulomb", "viscous")).kinds
      ('viscous', 'coulomb')
      >>> FrictionModel.parse("none").kinds
      ()
    """

    kinds: tuple[str, ...] = FRICTION_KINDS

    def __post_init__(self):
        kinds = self.kinds
        if isinstance(kinds, str) or not isinstance(kinds, (tuple, list)):
            raise TypeError(
                f"kinds: expected a tuple of names from {FRICTION_KINDS}, got {kinds!r}"
            )
        bad = [k for k in kinds if k not in FRICTION_KINDS]
        if bad:
            raise ValueError(f"kinds: unknown friction kind {bad[0]!r}; known: {FRICTION_KINDS}")
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"kinds: a friction kind is repeated in {tuple(kinds)!r}")
        object.__setattr__(self, "kinds", tuple(k for k in FRICTION_KINDS if k in kinds))

    @classmethod
    def parse(cls, text: str) -> FrictionModel:
        """From ``"viscous,coulomb,offset"`` (any comma-separated subset) or ``"none"``.

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
                f"expected a comma-separated subset of {','.join(FRICTION_KINDS)}, or 'none'; "
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

    def columns(self, model) -> np.ndarray:
        """Indices of this model's columns among the three-per-joint columns of
        [`friction_regressor`][spatialjax.multibody.friction_regressor]."""
        sel = [FRICTION_KINDS.index(k) for k in self.kinds]
        return np.array([3 * j + s for j in range(self.n_joints(model)) for s in sel], int)

    def names(self, model) -> tuple[tuple[str, str], ...]:
        """``(joint, kind)`` of every column, joint-major."""
        off = 1 if model.floating_base else 0
        joints = model.joint_names[off:]
        return tuple((j, k) for j in joints for k in self.kinds)

    def nonnegative(self, model) -> np.ndarray:
        """``(n_columns,)`` booleans: the coefficients constrained ``≥ 0`` (viscous, Coulomb)."""
        return np.array([_NONNEGATIVE[k] for _ in range(self.n_joints(model)) for k in self.kinds])

    def regressor(self, model, v) -> jax.Array:
        """``(..., nv, n_columns)``: ``τ_f = regressor @ φ`` (a free flyer's rows are zero).

        Args:
          model: the [`Model`][spatialjax.multibody.Model].
          v: ``(..., nv)`` joint velocities.
        """
        full = friction_regressor(model, v)
        return full[..., self.columns(model)]

    def torque(self, model, v, coefficients) -> jax.Array:
        """``(..., nv)`` friction torques for ``coefficients`` ``(..., n_columns)``.

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
        Y = self.regressor(model, v)
        return jnp.einsum("...jc,...c->...j", Y, phi)

    def as_table(self, model, coefficients) -> np.ndarray:
        """``(..., n_joints, 3)`` ``[viscous, coulomb, offset]`` per joint (NaN: not modelled)."""
        phi = np.asarray(coefficients, np.float64)
        n1 = self.n_joints(model)
        out = np.full(phi.shape[:-1] + (3 * n1,), np.nan)
        out[..., self.columns(model)] = phi
        return out.reshape(phi.shape[:-1] + (n1, 3))

    def to_dict(self, model, coefficients) -> dict:
        """``{joint: {kind: value or None}}`` for one set of coefficients (report form)."""
        table = self.as_table(model, coefficients)
        off = 1 if model.floating_base else 0
        return {
            j: {k: (None if np.isnan(table[i, c]) else float(table[i, c]))
                for c, k in enumerate(FRICTION_KINDS)}
            for i, j in enumerate(model.joint_names[off:])
        }  # fmt: skip


def friction_regressor(model: Model, v) -> jax.Array:
    r"""Joint friction regressor: ``τ_friction = Y_f(v) @ φ``.

    Three columns per one-degree-of-freedom joint ``j`` (in body order):
    viscous ``v_j``, Coulomb ``sign(v_j)`` and a constant offset ``1``, so
    ``φ = [F_v1, F_c1, o_1, F_v2, ...]`` and ``τ_j = F_vj v_j + F_cj sign(v_j) + o_j``.
    ``sign(0) = 0`` (``jnp.sign``): at rest the Coulomb column is zero, and
    its derivative is zero everywhere (no subgradient). A free flyer's six
    rows are zero (no joint friction on a floating base).

    Args:
      model: the tree.
      v: ``(..., nv)`` velocity.

    Returns:
      ``(..., nv, 3 * n1)`` with ``n1`` the number of one-DoF joints.
    """
    return _friction_kernel(model, sweep.as_input(v, "v", model.nv, model))


@jax.jit
def _friction_kernel(model: Model, v) -> jax.Array:
    """[`friction_regressor`][spatialjax.multibody.friction_regressor] on a checked ``v``."""
    off = 6 if model.floating_base else 0
    n1 = model.nv - off
    vj = v[..., off:]
    cols = jnp.stack([vj, jnp.sign(vj), jnp.ones_like(vj)], axis=-1)  # (..., n1, 3)
    eye = jnp.eye(n1, dtype=v.dtype)
    block = eye[:, :, None] * cols[..., None, :, :]  # (..., n1, n1, 3): row d, joint j, col
    block = block.reshape(v.shape[:-1] + (n1, 3 * n1))
    if off:
        block = jnp.concatenate([jnp.zeros(v.shape[:-1] + (off, 3 * n1), v.dtype), block], -2)
    return block
