r"""Plücker transforms in both associativity conventions (Featherstone, RBDA 2008, §2.8).

``Plx(E, r)``: left-associative, ``E = R_AB.T``; ``Plxb(E, r)``: right-associative
pose (TDS, brax), ``E = R_AB``. Every ``as_*``/``apply_*`` maps A- to B-coordinates.
Docs page ``spatial.md#transforms``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _smallmat as la
from ._checks import as_float_array, broadcast_batch, same_dtype
from ._errors import ArgumentTypeError
from ._pytree import Pytree, field_array, pytree_dataclass


def _split6(x):
    return x[..., :3], x[..., 3:]


def _join6(a, b):
    # a select, not jnp.concatenate: fuses into one loop on XLA:CPU (see _smallmat)
    return la.join_last(a, b)


def _broadcast_fields(E, r, broadcast):
    """``E (..., 3, 3)`` and ``r (..., 3)`` on one batch shape (``broadcast`` computes it)."""
    bE, br = E.shape[:-2], r.shape[:-1]
    if bE == br:
        return E, r
    shape = tuple(broadcast(bE, br))
    if bE != shape:
        E = jnp.broadcast_to(E, shape + (3, 3))
    if br != shape:
        r = jnp.broadcast_to(r, shape + (3,))
    return E, r


# ------------------------------------------------------------------ kernels
# Each operation's arithmetic is one jitted function of arrays. The methods check their
# operands in Python and call these: an eager call is then one XLA dispatch (instead of one
# per jnp operation), and under an outer jit/vmap/grad the kernel is
# inlined like any nested jit. Shapes and dtypes are checked by the callers.


@jax.jit
def _plx_compose(E1, r1, E2, r2):
    return la.mm(E1, E2), la.mtv(E2, r1) + r2


@jax.jit
def _plxb_compose(E1, r1, E2, r2):
    return la.mm(E1, E2), r1 + la.mv(E1, r2)


@jax.jit
def _plx_inverse(E, r):
    return la.tr(E), -la.mv(E, r)


@jax.jit
def _plxb_inverse(E, r):
    return la.tr(E), -la.mtv(E, r)


@jax.jit
def _plx_apply_motion(E, r, m):
    w, v = _split6(m)
    return _join6(la.mv(E, w), la.mv(E, v - la.cross(r, w)))


@jax.jit
def _plx_apply_force(E, r, f):
    n, fl = _split6(f)
    return _join6(la.mv(E, n - la.cross(r, fl)), la.mv(E, fl))


@jax.jit
def _plx_inverse_apply_motion(E, r, m):
    w, v = _split6(m)
    wa = la.mtv(E, w)
    return _join6(wa, la.mtv(E, v) + la.cross(r, wa))


@jax.jit
def _plx_inverse_apply_force(E, r, f):
    n, fl = _split6(f)
    fa = la.mtv(E, fl)
    return _join6(la.mtv(E, n) + la.cross(r, fa), fa)


@jax.jit
def _plxb_apply_motion(E, r, m):
    w, v = _split6(m)
    return _join6(la.mtv(E, w), la.mtv(E, v - la.cross(r, w)))


@jax.jit
def _plxb_apply_force(E, r, f):
    n, fl = _split6(f)
    return _join6(la.mtv(E, n - la.cross(r, fl)), la.mtv(E, fl))


@jax.jit
def _plxb_inverse_apply_motion(E, r, m):
    w, v = _split6(m)
    wa = la.mv(E, w)
    return _join6(wa, la.mv(E, v) + la.cross(r, wa))


@jax.jit
def _plxb_inverse_apply_force(E, r, f):
    n, fl = _split6(f)
    fa = la.mv(E, fl)
    return _join6(la.mv(E, n) + la.cross(r, fa), fa)


class _PluckerBase(Pytree):
    """Shared plumbing: validation and broadcasting, dtype, operand checks."""

    E: jax.Array
    r: jax.Array
    _core_ndims = {"E": 2, "r": 1}

    def __post_init__(self):
        # All-int/None fields are a vmap/scan axis spec (``Plx(0, None)``): kept as given.
        if self._is_axis_spec():
            return
        E = field_array(self.E, "E", (3, 3))
        r = field_array(self.r, "r", (3,))
        if E.dtype != r.dtype:
            same_dtype(E=E, r=r)
        # one batch shape for both fields, so vmap/scan/shard_batch see equal leading axes
        E, r = _broadcast_fields(E, r, lambda a, b: broadcast_batch("E", a, "r", b))
        object.__setattr__(self, "E", E)
        object.__setattr__(self, "r", r)

    @classmethod
    def _new(cls, E, r):
        """Wrap kernel results (trusted arrays) without the constructor's checks."""
        E, r = _broadcast_fields(E, r, np.broadcast_shapes)
        obj = object.__new__(cls)
        obj.__dict__.update(E=E, r=r)
        return obj

    if TYPE_CHECKING:  # defined by Plx and Plxb; declared here for the type checker

        def compose(self, other: Any) -> Any: ...

        def inverse(self) -> Any: ...

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading batch shape (``E`` is ``batch_shape + (3, 3)``, ``r`` ``batch_shape + (3,)``)."""
        return tuple(np.broadcast_shapes(np.shape(self.E)[:-2], np.shape(self.r)[:-1]))

    @property
    def dtype(self) -> np.dtype:
        """Floating dtype of ``E`` and ``r``."""
        return np.dtype(self.E.dtype)

    def _vector(self, x, name):
        x = as_float_array(x, name, (6,))
        E = self.E
        if x.dtype != E.dtype:
            same_dtype(**{f"{type(self).__name__}.E": E, name: x})
        broadcast_batch(f"{type(self).__name__}", self._batch(), name, x.shape[:-1])
        return x

    def _batch(self) -> tuple[int, ...]:
        """``batch_shape``, read from ``E`` when both fields agree (they do unless JAX
        rebuilt the object from inconsistent leaves)."""
        b = self.E.shape[:-2]
        return b if self.r.shape[:-1] == b else self.batch_shape

    def _other(self, other, method):
        if not isinstance(other, type(self)):
            hint = ""
            if isinstance(other, _PluckerBase):
                conv = "to_plx()" if isinstance(self, Plx) else "to_plxb()"
                hint = f"; convert first with other.{conv}"
            raise ArgumentTypeError(
                "other",
                f"{type(self).__name__}.{method} expected a {type(self).__name__}, "
                f"got {type(other).__name__}{hint}",
            )
        if self.E.dtype != other.E.dtype:
            same_dtype(self=self.E, other=other.E)
        broadcast_batch("self", self._batch(), "other", other._batch())
        return other

    def __matmul__(self, other):
        if not isinstance(other, _PluckerBase):
            raise ArgumentTypeError(
                "other",
                f"{type(self).__name__} @ {type(other).__name__}: '@' composes transforms "
                "only; use apply_motion(m) or apply_force(f) for spatial vectors",
            )
        return self.compose(other)

    def as_force_matrix(self):
        """6×6 force matrix ``X* = X⁻ᵀ`` (A -> B, ``[n; f]`` order)."""
        return la.tr(self.inverse().as_matrix())


@pytree_dataclass
class Plx(_PluckerBase):
    """Featherstone's left-associative Plücker transform ``X_BA`` (A -> B coordinates).

    Attributes:
      E: ``(..., 3, 3)`` coordinate rotation A -> B (``E = R_AB.T``; ``rotx``
        etc. produce this form).
      r: ``(..., 3)`` position of B's origin relative to A's origin, in A
        coordinates.

    Motion matrix ``[[E, 0], [-E skew(r), E]]`` (RBDA eq. 2.24); ``X1 @ X2 ==
    Plx(E1 E2, E2ᵀ r1 + r2)`` (apply ``X2`` first). ``E`` and ``r``: floating
    arrays of one dtype, broadcast to ``batch_shape`` (Python numbers refused
    with ``TypeError``, except ``vmap`` axis specs such as ``Plx(0, None)``).

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import Plx, rotz
      >>> X = Plx(rotz(jnp.pi / 2), jnp.array([1.0, 0.0, 0.0]))
      >>> m = X.apply_motion(jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0]))
      >>> (m.round(6) + 0.0).tolist()  # + 0.0 prints a rounding -0.0 as 0.0
      [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    """

    E: jax.Array
    r: jax.Array

    @classmethod
    def identity(cls, batch_shape=(), dtype=None) -> Plx:
        """Identity transform with the given batch shape (default dtype: JAX's float)."""
        dtype = dtype or jnp.zeros(()).dtype
        return cls(la.eye3(batch_shape, dtype), jnp.zeros(tuple(batch_shape) + (3,), dtype))

    @classmethod
    def from_matrix(cls, X6) -> Plx:
        """Read ``(E, r)`` from a 6×6 motion matrix ``[[E, 0], [-E skew(r), E]]``.

        The input is not checked to be a valid motion transform; ``r`` is read
        from the skew-symmetric part of ``-Eᵀ X[3:, :3]``.
        """
        return cls(*_plx_from_matrix(as_float_array(X6, "X6", (6, 6))))

    def compose(self, other: Plx) -> Plx:
        """``self @ other`` = ``Plx(E1 E2, E2ᵀ r1 + r2)``: ``other`` maps A->B, ``self`` B->C."""
        other = self._other(other, "compose")
        return Plx._new(*_plx_compose(self.E, self.r, other.E, other.r))

    def inverse(self) -> Plx:
        """``X⁻¹ = Plx(Eᵀ, -E r)`` (B -> A); motion matrix ``[[Eᵀ, 0], [skew(r) Eᵀ, Eᵀ]]``."""
        return Plx._new(*_plx_inverse(self.E, self.r))

    def apply_motion(self, m):
        """``X m = [E ω; E (v - r × ω)]`` for a motion ``m = [ω; v]`` in A; result in B."""
        return _plx_apply_motion(self.E, self.r, self._vector(m, "m"))

    def apply_force(self, f):
        """``X* f = [E (n - r × f); E f]`` for a force ``f = [n; f]`` in A; result in B."""
        return _plx_apply_force(self.E, self.r, self._vector(f, "f"))

    def inverse_apply_motion(self, m):
        """``X⁻¹ m = [Eᵀ ω; Eᵀ v + r × Eᵀ ω]`` for a motion in B; result in A."""
        return _plx_inverse_apply_motion(self.E, self.r, self._vector(m, "m"))

    def inverse_apply_force(self, f):
        """``Xᵀ f = [Eᵀ n + r × Eᵀ f; Eᵀ f]`` for a force in B; result in A."""
        return _plx_inverse_apply_force(self.E, self.r, self._vector(f, "f"))

    def as_matrix(self):
        """6×6 motion matrix ``[[E, 0], [-E skew(r), E]]`` (A -> B, ``[ω; v]``)."""
        return _motion_matrix(self.E, self.r, transposed=False)

    def as_homogeneous(self):
        """4×4 ``T_BA = [[E, -E r], [0, 1]]`` mapping homogeneous *points* A -> B.

        ``p_B = E (p_A - r)``. The pose of B in A (``T_AB``) is
        ``X.inverse().as_homogeneous()``.
        """
        return _plx_homogeneous(self.E, self.r)

    def to_plxb(self) -> Plxb:
        """The same physical transform as a right-associative ``Plxb(Eᵀ, r)``."""
        return Plxb(la.tr(self.E), self.r)


@pytree_dataclass
class Plxb(_PluckerBase):
    """Right-associative (TDS / brax) transform: the pose of child B in parent A.

    Attributes:
      E: ``(..., 3, 3)`` active rotation ``R_AB`` (B's axes in A coordinates).
      r: ``(..., 3)`` position of B's origin in A coordinates.

    Maps A- to B-coordinates with motion matrix ``[[Eᵀ, 0], [-Eᵀ skew(r), Eᵀ]]``;
    ``Y1 @ Y2 == Plxb(E1 E2, r1 + E1 r2)`` is pose composition. Fields as for
    [`Plx`][spatialjax.Plx].
    """

    E: jax.Array
    r: jax.Array

    @classmethod
    def identity(cls, batch_shape=(), dtype=None) -> Plxb:
        """Identity transform with the given batch shape (default dtype: JAX's float)."""
        dtype = dtype or jnp.zeros(()).dtype
        return cls(la.eye3(batch_shape, dtype), jnp.zeros(tuple(batch_shape) + (3,), dtype))

    @classmethod
    def from_matrix(cls, X6) -> Plxb:
        """Read ``(E, r)`` from a 6×6 motion matrix ``[[Eᵀ, 0], [-Eᵀ skew(r), Eᵀ]]``."""
        return Plx.from_matrix(X6).to_plxb()

    def compose(self, other: Plxb) -> Plxb:
        """``self @ other`` = ``Plxb(E1 E2, r1 + E1 r2)`` (``other`` is a pose in self's frame)."""
        other = self._other(other, "compose")
        return Plxb._new(*_plxb_compose(self.E, self.r, other.E, other.r))

    def inverse(self) -> Plxb:
        """``Plxb(Eᵀ, -Eᵀ r)``: the pose of A in B."""
        return Plxb._new(*_plxb_inverse(self.E, self.r))

    def apply_motion(self, m):
        """``Y m = [Eᵀ ω; Eᵀ (v - r × ω)]`` for a motion in A (parent); result in B (child)."""
        return _plxb_apply_motion(self.E, self.r, self._vector(m, "m"))

    def apply_force(self, f):
        """``Y* f = [Eᵀ (n - r × f); Eᵀ f]`` for a force in A (parent); result in B (child)."""
        return _plxb_apply_force(self.E, self.r, self._vector(f, "f"))

    def inverse_apply_motion(self, m):
        """``Y⁻¹ m = [E ω; E v + r × E ω]`` for a motion in B (child); result in A (parent)."""
        return _plxb_inverse_apply_motion(self.E, self.r, self._vector(m, "m"))

    def inverse_apply_force(self, f):
        """``Yᵀ f = [E n + r × E f; E f]`` for a force in B (child); result in A (parent)."""
        return _plxb_inverse_apply_force(self.E, self.r, self._vector(f, "f"))

    def as_matrix(self):
        """6×6 motion matrix ``[[Eᵀ, 0], [-Eᵀ skew(r), Eᵀ]]`` (A -> B, ``[ω; v]``)."""
        return _motion_matrix(self.E, self.r, transposed=True)

    def as_homogeneous(self):
        """4×4 ``T_BA = [[Eᵀ, -Eᵀ r], [0, 1]]`` mapping homogeneous *points* A -> B.

        Same direction as [`Plx.as_homogeneous`][spatialjax.Plx.as_homogeneous] and as
        [`as_matrix`][spatialjax.Plxb.as_matrix]. The brax/TDS pose matrix
        ``T_AB = [[E, r], [0, 1]]`` is ``Y.inverse().as_homogeneous()``.
        """
        return _plxb_homogeneous(self.E, self.r)

    def to_plx(self) -> Plx:
        """The same physical transform as a left-associative ``Plx(Eᵀ, r)``."""
        return Plx(la.tr(self.E), self.r)


def _homogeneous(R, p):
    batch = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    R = jnp.broadcast_to(R, batch + (3, 3))
    p = jnp.broadcast_to(p, batch + (3,))
    top = jnp.concatenate([R, p[..., :, None]], axis=-1)
    bottom = jnp.broadcast_to(jnp.array([0, 0, 0, 1], R.dtype), batch + (1, 4))
    return jnp.concatenate([top, bottom], axis=-2)


@jax.jit
def _plx_from_matrix(X6):
    E = X6[..., :3, :3]
    return E, la.vee(-la.mtm(E, X6[..., 3:, :3]))


@functools.partial(jax.jit, static_argnames=("transposed",))
def _motion_matrix(E, r, *, transposed: bool):
    """``[[R, 0], [-R skew(r), R]]`` with ``R = E`` (Plx) or ``R = Eᵀ`` (Plxb, ``transposed``)."""
    R = la.tr(E) if transposed else E
    return la.block2x2(R, jnp.zeros_like(R), -la.mm(R, la.hat(r)), R)


@jax.jit
def _plx_homogeneous(E, r):
    return _homogeneous(E, -la.mv(E, r))


@jax.jit
def _plxb_homogeneous(E, r):
    return _homogeneous(la.tr(E), -la.mtv(E, r))
