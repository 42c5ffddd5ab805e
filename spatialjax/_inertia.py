"""Rigid-body inertial parameters (Featherstone RBDA 2008, §2.13; Wensing, Kim & Slotine 2017).

About the origin ``Bo`` of a frame B, in B: ``π = [m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz,
Iyz, Izz]`` (Pinocchio order), ``h = m c``, ``I`` about ``Bo``; frames change by the
pseudo-inertia congruence ``J_B = T_BA J_A T_BAᵀ``.
Derivation: docs page ``spatial.md#inertial-parameters``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _params
from . import _smallmat as la
from ._checks import as_float_array, broadcast_batch, same_dtype
from ._errors import ArgumentError, ArgumentTypeError
from ._pytree import Pytree, field_array, pytree_dataclass
from ._transforms import Plx, Plxb


def inertia_to_second_moment(I):
    """Second moment ``S = ½ tr(I) 1 − I`` (Wensing, Kim & Slotine 2017), same point and axes.

    Args:
      I: ``(..., 3, 3)`` rotational inertia.

    Returns:
      ``(..., 3, 3)`` second moment of mass.
    """
    return _to_second_moment(as_float_array(I, "I", (3, 3)))


def second_moment_to_inertia(S):
    """Rotational inertia ``I = tr(S) 1 − S`` about the same point.

    Args:
      S: ``(..., 3, 3)`` second moment of mass ``∫ρ r rᵀ``.

    Returns:
      ``(..., 3, 3)`` rotational inertia.
    """
    return _to_inertia(as_float_array(S, "S", (3, 3)))


def parallel_axis(I_c, m, p):
    """Inertia about a point at offset ``p`` from the CoM: ``I_p = I_c − m p× p×`` (RBDA eq. 2.63).

    Args:
      I_c: ``(..., 3, 3)`` rotational inertia about the centre of mass.
      m: ``(...)`` mass (pass ``-m`` to move back towards the CoM).
      p: ``(..., 3)`` the new reference point relative to the CoM, in ``I_c``'s axes.

    Returns:
      ``(..., 3, 3)`` inertia about the point.
    """
    I_c = as_float_array(I_c, "I_c", (3, 3))
    m = as_float_array(m, "m")
    p = as_float_array(p, "p", (3,))
    same_dtype(I_c=I_c, m=m, p=p)
    return _parallel_axis(I_c, m, p)


def pseudo_inertia_sandwich(T_ba, J_a):
    """``J_b = T_ba J_a T_baᵀ``: the pseudo-inertia in another frame (Wensing et al. 2017).

    Args:
      T_ba: ``(..., 4, 4)`` homogeneous transform mapping points from frame a to frame b
        (``Plx.as_homogeneous()``).
      J_a: ``(..., 4, 4)`` pseudo-inertia expressed in a.

    Returns:
      ``(..., 4, 4)`` pseudo-inertia expressed in b.
    """
    T = as_float_array(T_ba, "T_ba", (4, 4))
    J = as_float_array(J_a, "J_a", (4, 4))
    if T.dtype != J.dtype:
        same_dtype(T_ba=T, J_a=J)
    broadcast_batch("T_ba", T.shape[:-2], "J_a", J.shape[:-2])
    return _sandwich_kernel(T, J)


@jax.jit
def _sandwich_kernel(T, J):
    # float32: T (J Tᵀ), the same products as (T J) Tᵀ in the other order, which XLA:CPU's
    # fused loop runs faster; float64 keeps (T J) Tᵀ, where the order made no difference
    if T.dtype == jnp.float32:
        return la.mm(T, la.mmt(J, T))
    return la.mmt(la.mm(T, J), T)


def _sandwich_params(E, r, p, transposed):
    """10-vector of ``J_B = T J Tᵀ`` for ``T = [[R, t], [0, 1]]`` (``transposed``: a Plxb)."""
    if transposed:
        R = [[E[..., b, a] for b in range(3)] for a in range(3)]
    else:
        R = [[E[..., a, b] for b in range(3)] for a in range(3)]
    rs = [r[..., a] for a in range(3)]
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = (p[..., k] for k in range(10))
    h = [hx, hy, hz]
    t = [-(R[a][0] * rs[0] + R[a][1] * rs[1] + R[a][2] * rs[2]) for a in range(3)]
    half = 0.5 * (xx + yy + zz)
    S = [[half - xx, -xy, -xz], [-xy, half - yy, -yz], [-xz, -yz, half - zz]]
    u = [R[a][0] * h[0] + R[a][1] * h[1] + R[a][2] * h[2] for a in range(3)]
    hb = [u[a] + m * t[a] for a in range(3)]
    RS = [
        [R[a][0] * S[0][j] + R[a][1] * S[1][j] + R[a][2] * S[2][j] for j in range(3)]
        for a in range(3)
    ]

    def sb(a, b):
        rsr = RS[a][0] * R[b][0] + RS[a][1] * R[b][1] + RS[a][2] * R[b][2]
        return rsr + u[a] * t[b] + t[a] * hb[b]

    s00, s11, s22 = sb(0, 0), sb(1, 1), sb(2, 2)
    out = (m, hb[0], hb[1], hb[2], s11 + s22, -sb(0, 1), s00 + s22, -sb(0, 2), -sb(1, 2), s00 + s11)
    return la.stack_last(*(x[..., None] for x in out))


# ------------------------------------------------------------------ kernels
# One jitted function of arrays per operation (see ``_transforms``): an eager call is one
# XLA dispatch; under an outer jit/vmap/grad it is inlined. Callers check the operands.


@jax.jit
def _transform_plx(E, r, params):
    return _sandwich_params(E, r, params, transposed=False)


@jax.jit
def _transform_plxb(E, r, params):
    return _sandwich_params(E, r, params, transposed=True)


@jax.jit
def _add(a, b):
    return a + b


@jax.jit
def _momentum(params, v):
    w, vo = v[..., :3], v[..., 3:]
    h = params[..., _params.FIRST_MOMENT]
    ang = la.mv(_params.sym_from6(params[..., _params.INERTIA]), w) + la.cross(h, vo)
    lin = params[..., _params.MASS, None] * vo - la.cross(h, w)
    return la.join_last(ang, lin)


# constructors and free functions: one jitted kernel each after the Python checks
@jax.jit
def _to_second_moment(I):
    return _params.second_moment_from_inertia(I)


@jax.jit
def _to_inertia(S):
    return _params.inertia_from_second_moment(S)


@jax.jit
def _parallel_axis(I_c, m, p):
    P = la.hat(p)
    return I_c - m[..., None, None] * la.mm(P, P)


@jax.jit
def _from_mass_com_inertia(m, c, I_c):
    return _params.pack(m, m[..., None] * c, _parallel_axis(I_c, m, c))  # I_o = I_c − m c× c×


@jax.jit
def _from_pseudo_inertia(J):
    return _params.from_pseudo_inertia(J)


@jax.jit
def _from_spatial_matrix(M6):
    m = _params.trace3(M6[..., 3:, 3:]) / 3.0
    h = 0.5 * (la.vee(M6[..., :3, 3:]) - la.vee(M6[..., 3:, :3]))
    return _params.pack(m, h, M6[..., :3, :3])


@jax.jit
def _from_point_masses(masses, positions):
    mp = masses[..., None] * positions
    S = jnp.sum(mp[..., :, :, None] * positions[..., :, None, :], axis=-3)
    I_o = _params.inertia_from_second_moment(S)
    return _params.pack(jnp.sum(masses, -1), jnp.sum(mp, -2), I_o)


# accessors: one jitted kernel each (an eager call is one dispatch instead of one per operation)
@jax.jit
def _com(p):
    m, h = p[..., _params.MASS], p[..., _params.FIRST_MOMENT]
    nonzero = m != 0
    safe = jnp.where(nonzero, m, jnp.ones_like(m))
    return jnp.where(nonzero[..., None], h / safe[..., None], jnp.zeros_like(h))


@jax.jit
def _inertia_origin(p):
    return _params.sym_from6(p[..., _params.INERTIA])


@jax.jit
def _inertia_com(p):
    m = p[..., _params.MASS]
    safe = jnp.where(m != 0, m, jnp.ones_like(m))
    H = la.hat(p[..., _params.FIRST_MOMENT])
    return _inertia_origin(p) + la.mm(H, H) / safe[..., None, None]


@jax.jit
def _second_moment(p):
    return _params.second_moment_from_inertia(_inertia_origin(p))


@jax.jit
def _pseudo_inertia(p):
    return _params.pseudo_inertia(p)


@jax.jit
def _as_matrix(p):
    H = la.hat(p[..., _params.FIRST_MOMENT])
    mI = p[..., _params.MASS][..., None, None] * la.eye3((), p.dtype)
    return la.block2x2(_inertia_origin(p), H, la.tr(H), mI)


@pytree_dataclass
class RigidBodyInertia(Pytree):
    """Inertial parameters of a rigid body about a frame's origin, batched.

    Attributes:
      params: ``(..., 10)`` vector ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz,
        Izz]`` (Pinocchio's ``toDynamicParameters`` order): mass, first moment
        ``h = m c_BoBcm_B`` and inertia ``I_BBo_B`` about the frame origin.

    ``params`` must be a floating array (a Python number raises ``TypeError``).
    Constructors check shapes and dtypes only; values are checked by
    ``physical_consistency`` (jit-safe flags) and ``validate`` (eager).

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import RigidBodyInertia
      >>> body = RigidBodyInertia.from_point_masses(
      ...     jnp.array([0.5, 0.5]), jnp.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]))
      >>> body.inertia_origin().diagonal().tolist()  # two 0.5 kg points at x = ±1
      [0.0, 1.0, 1.0]
    """

    params: jax.Array
    _core_ndims = {"params": 1}

    def __post_init__(self):
        if self._is_axis_spec():  # ``RigidBodyInertia(0)``: a vmap/scan axis spec
            return
        params = field_array(self.params, "params", (10,))
        object.__setattr__(self, "params", params)

    @classmethod
    def _new(cls, params) -> RigidBodyInertia:
        """Wrap a kernel's ``(..., 10)`` result (trusted) without the constructor's checks."""
        obj = object.__new__(cls)
        obj.__dict__["params"] = params
        return obj

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_vector(cls, pi) -> RigidBodyInertia:
        """From the 10-vector ``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (about the origin)."""
        return cls(as_float_array(pi, "pi", (10,)))

    @classmethod
    def zeros(cls, batch_shape=(), dtype=None) -> RigidBodyInertia:
        """The massless body (identity of ``+``)."""
        dtype = dtype or jnp.zeros(()).dtype
        return cls(jnp.zeros(tuple(batch_shape) + (10,), dtype))

    @classmethod
    def from_mass_com_inertia(cls, m, c, I_c) -> RigidBodyInertia:
        """Featherstone's ``mcI``: mass, CoM and inertia about the CoM (values not checked).

        Args:
          m: ``(...)`` mass.
          c: ``(..., 3)`` CoM position ``c_BoBcm_B``.
          I_c: ``(..., 3, 3)`` inertia about the CoM in B's axes (``I_BBcm_B``); its
            symmetric part is used.

        Returns:
          The body about ``Bo``: ``h = m c``, ``I_o = I_c − m c× c×``.
        """
        m = as_float_array(m, "m")
        c = as_float_array(c, "c", (3,))
        I_c = as_float_array(I_c, "I_c", (3, 3))
        same_dtype(m=m, c=c, I_c=I_c)
        shape = broadcast_batch("m", m.shape, "c", c.shape[:-1])
        broadcast_batch("m, c", shape, "I_c", I_c.shape[:-2])
        return cls(_from_mass_com_inertia(m, c, I_c))

    @classmethod
    def from_pseudo_inertia(cls, J) -> RigidBodyInertia:
        """From the 4×4 pseudo-inertia ``[[S, h], [hᵀ, m]]`` (symmetric part used)."""
        return cls(_from_pseudo_inertia(as_float_array(J, "J", (4, 4))))

    @classmethod
    def from_matrix(cls, M6) -> RigidBodyInertia:
        """From a 6×6 spatial inertia ``[[I, skew(h)], [skew(h)ᵀ, m 1]]`` about the origin.

        ``[ω; v]`` order; ``m`` is the mean of the lower-right diagonal; general (e.g.
        added-mass) matrices go through ``transform_spatial_matrix``.
        """
        return cls(_from_spatial_matrix(as_float_array(M6, "M6", (6, 6))))

    @classmethod
    def from_log_cholesky(cls, theta) -> RigidBodyInertia:
        """From log-Cholesky parameters (see ``spatialjax._log_cholesky``); always consistent."""
        from ._log_cholesky import log_cholesky_to_vector

        return cls(log_cholesky_to_vector(theta))

    @classmethod
    def from_point_masses(cls, masses, positions) -> RigidBodyInertia:
        """Body of point masses ``(..., N)`` at ``positions (..., N, 3)`` in B, from ``Bo``."""
        masses = as_float_array(masses, "masses")
        positions = as_float_array(positions, "positions", (3,))
        same_dtype(masses=masses, positions=positions)
        if masses.ndim < 1 or positions.ndim < 2:
            raise ArgumentError(
                "masses" if masses.ndim < 1 else "positions",
                f"expected masses of shape (..., N) and positions (..., N, 3), got "
                f"{tuple(masses.shape)} and {tuple(positions.shape)}",
            )
        if masses.shape[-1] != positions.shape[-2]:
            raise ArgumentError(
                "positions",
                f"has N={positions.shape[-2]} points but masses has N={masses.shape[-1]} "
                f"(shapes {tuple(positions.shape)}, {tuple(masses.shape)})",
            )
        broadcast_batch("masses", masses.shape[:-1], "positions", positions.shape[:-2])
        return cls(_from_point_masses(masses, positions))

    # -------------------------------------------------------------------- accessors
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading batch shape (``params`` is ``batch_shape + (10,)``)."""
        return tuple(np.shape(self.params)[:-1])

    @property
    def dtype(self) -> np.dtype:
        """Floating dtype of ``params``."""
        return np.dtype(self.params.dtype)

    @property
    def mass(self):
        """``(...)`` mass ``m``."""
        return self.params[..., _params.MASS]

    @property
    def h(self):
        """``(..., 3)`` first moment of mass ``h = m c`` about the origin."""
        return self.params[..., _params.FIRST_MOMENT]

    @property
    def com(self):
        """``(..., 3)`` centre of mass ``c = h / m``; the origin (zeros) where ``m == 0``."""
        return _com(self.params)

    def to_vector(self):
        """``(..., 10)`` parameters in Pinocchio order (about the origin)."""
        return self.params

    def inertia_origin(self):
        """``(..., 3, 3)`` rotational inertia about the frame origin (``I_BBo_B``)."""
        return _inertia_origin(self.params)

    def inertia_com(self):
        """``(..., 3, 3)`` inertia about the CoM, B axes: ``I_o + h× h× / m`` (``I_o`` if m = 0)."""
        return _inertia_com(self.params)

    def second_moment(self):
        """``(..., 3, 3)`` second moment ``S = ∫ρ r rᵀ = ½ tr(I_o) 1 − I_o`` about the origin."""
        return _second_moment(self.params)

    def pseudo_inertia(self):
        """``(..., 4, 4)`` pseudo-inertia ``J = [[S, h], [hᵀ, m]]``."""
        return _pseudo_inertia(self.params)

    def as_matrix(self):
        """``(..., 6, 6)`` spatial inertia ``[[I_o, skew(h)], [skew(h)ᵀ, m 1]]`` (``[ω; v]``)."""
        return _as_matrix(self.params)

    def to_log_cholesky(self):
        """``(..., 10)`` log-Cholesky parameters; requires ``J ≻ 0`` (else NaN entries)."""
        from ._log_cholesky import vector_to_log_cholesky

        return vector_to_log_cholesky(self.params)

    # ------------------------------------------------------------------- operations
    def transform(self, X) -> RigidBodyInertia:
        """Re-express the body given in frame A in frame B, for ``X`` (``Plx`` or ``Plxb``) A -> B.

        ``M_B = X* M_A X⁻¹``, computed as the pseudo-inertia sandwich ``J_B = T J_A Tᵀ``
        with ``T = X.as_homogeneous()`` in closed form.
        """
        if isinstance(X, Plx):
            kernel = _transform_plx
        elif isinstance(X, Plxb):
            kernel = _transform_plxb
        else:
            raise ArgumentTypeError("X", f"expected a Plx or Plxb, got {type(X).__name__}")
        if self.params.dtype != X.E.dtype:
            same_dtype(inertia=self.params, X=X.E)
        broadcast_batch("inertia", self.batch_shape, "X", X._batch())
        return RigidBodyInertia._new(kernel(X.E, X.r, self.params))

    def __add__(self, other) -> RigidBodyInertia:
        """Bodies rigidly joined (both expressed in the same frame): parameters add."""
        if not isinstance(other, RigidBodyInertia):
            return NotImplemented
        if self.params.dtype != other.params.dtype:
            same_dtype(**{"self": self.params, "other": other.params})
        broadcast_batch("self", self.batch_shape, "other", other.batch_shape)
        return RigidBodyInertia._new(_add(self.params, other.params))

    def momentum(self, v):
        """Spatial momentum ``M v = [I_o ω + h × v_o; m v_o − h × ω]`` of a motion ``[ω; v_o]``."""
        v = as_float_array(v, "v", (6,))
        if v.dtype != self.params.dtype:
            same_dtype(inertia=self.params, v=v)
        broadcast_batch("inertia", self.batch_shape, "v", v.shape[:-1])
        return _momentum(self.params, v)

    def kinetic_energy(self, v):
        """``½ vᵀ M v`` for a motion ``v = [ω; v_o]`` of the frame (``(...)``)."""
        return 0.5 * jnp.sum(self.momentum(v) * v, axis=-1)
