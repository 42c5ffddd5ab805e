r"""Inertias of uniform-density primitive shapes (solids and thin shells).

Each about the shape's centre of mass, in its own axes; full side lengths for
boxes and cylinder/capsule lengths, radii or semi-axes otherwise; ``mass``
broadcasts against the dimensions. Formulas: docs page ``spatial.md#shapes``.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from ._checks import as_float_array, broadcast_batch, same_dtype
from ._errors import ArgumentError
from ._inertia import RigidBodyInertia


def _inputs(spec):
    """Coerce ``{name: (value, trailing)}``; Python scalars take the arrays' dtype.

    Every argument is checked under its own name *before* a Python scalar adopts the dtype
    of the arrays, so an integer array is reported as itself (not as the scalar it infected).
    """
    out = {}
    for name, (v, trailing) in spec.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            continue
        out[name] = as_float_array(v, name, trailing)
    dtypes = {np.dtype(v.dtype) for v in out.values() if not getattr(v, "weak_type", False)}
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    for name, (v, trailing) in spec.items():
        if name not in out:
            v = jnp.asarray(float(v), dtype) if dtype is not None else v
            out[name] = as_float_array(v, name, trailing)
    out = {name: out[name] for name in spec}
    same_dtype(**out)
    shape = ()
    prev = []
    for name, v in out.items():
        core = len(spec[name][1])
        shape = broadcast_batch(" and ".join(prev) or name, shape, name, v.shape[: v.ndim - core])
        prev.append(name)
    for name, v in out.items():
        if isinstance(v, Tracer):
            continue
        x = np.asarray(v)
        if not np.all(np.isfinite(x)) or np.any(x < 0):
            bad = x[~(np.isfinite(x) & (x >= 0))]
            raise ArgumentError(
                name,
                "expected finite values >= 0, got entries "
                f"{bad.ravel()[:5].tolist()}{' ...' if bad.size > 5 else ''}",
            )
    return out, shape


def _from_second_moments(m, Sx, Sy, Sz, shape):
    """Body at its CoM with ``I = diag(Sy + Sz, Sx + Sz, Sx + Sy)``."""
    m, Sx, Sy, Sz = (jnp.broadcast_to(x, shape) for x in (m, Sx, Sy, Sz))
    z = jnp.zeros_like(m)
    params = jnp.stack([m, z, z, z, Sy + Sz, z, Sx + Sz, z, z, Sx + Sy], axis=-1)
    return RigidBodyInertia(params)


def box(mass, size) -> RigidBodyInertia:
    """Solid box ``I = m/12 diag(b² + c², a² + c², a² + b²)``.

    Args:
      mass: ``(...)`` mass.
      size: ``(..., 3)`` full side lengths ``(a, b, c)`` along x, y, z.

    Examples:
      >>> import jax.numpy as jnp
      >>> box(12.0, jnp.array([1.0, 2.0, 3.0])).inertia_origin().diagonal().tolist()
      [13.0, 10.0, 5.0]
    """
    v, shape = _inputs({"mass": (mass, ()), "size": (size, (3,))})
    m, s = v["mass"], v["size"]
    S = m[..., None] * s * s / 12.0
    return _from_second_moments(m, S[..., 0], S[..., 1], S[..., 2], shape)


def sphere(mass, radius) -> RigidBodyInertia:
    """Solid ball ``I = 2/5 m r² 1``.

    Args:
      mass: ``(...)`` mass.
      radius: ``(...)`` radius.
    """
    v, shape = _inputs({"mass": (mass, ()), "radius": (radius, ())})
    S = v["mass"] * v["radius"] ** 2 / 5.0
    return _from_second_moments(v["mass"], S, S, S, shape)


def ellipsoid(mass, semi_axes) -> RigidBodyInertia:
    """Solid ellipsoid ``I = m/5 diag(b² + c², a² + c², a² + b²)``.

    Args:
      mass: ``(...)`` mass.
      semi_axes: ``(..., 3)`` semi-axes ``(a, b, c)`` along x, y, z.
    """
    v, shape = _inputs({"mass": (mass, ()), "semi_axes": (semi_axes, (3,))})
    m, s = v["mass"], v["semi_axes"]
    S = m[..., None] * s * s / 5.0
    return _from_second_moments(m, S[..., 0], S[..., 1], S[..., 2], shape)


def cylinder(mass, radius, length) -> RigidBodyInertia:
    """Solid cylinder along z: ``Izz = m r²/2``, ``Ixx = Iyy = m (3 r² + L²)/12``.

    Args:
      mass: ``(...)`` mass.
      radius: ``(...)`` radius.
      length: ``(...)`` full length along z.
    """
    v, shape = _inputs({"mass": (mass, ()), "radius": (radius, ()), "length": (length, ())})
    m, r, L = v["mass"], v["radius"], v["length"]
    Sxy = m * r * r / 4.0
    return _from_second_moments(m, Sxy, Sxy, m * L * L / 12.0, shape)


def capsule(mass, radius, length) -> RigidBodyInertia:
    r"""Solid capsule along z: a cylinder of ``length`` capped by two hemispheres.

    Total height ``length + 2 radius``; mass split by volume (docs page
    ``spatial.md#shapes``).

    ``length = 0`` is a ball; ``radius = 0`` a thin rod.

    Args:
      mass: ``(...)`` mass.
      radius: ``(...)`` radius of the cylinder and the caps.
      length: ``(...)`` length of the cylindrical part (between the cap centres).
    """
    v, shape = _inputs({"mass": (mass, ()), "radius": (radius, ()), "length": (length, ())})
    m, r, L = v["mass"], v["radius"], v["length"]
    den = 3.0 * L + 4.0 * r
    pos = den > 0
    den_safe = jnp.where(pos, den, jnp.ones_like(den))
    m_cyl = jnp.where(pos, m * 3.0 * L / den_safe, jnp.zeros_like(m))
    m_hem = jnp.where(pos, m * 4.0 * r / den_safe, m)
    # second moments: in-plane axes (cylinder r²/4, ball r²/5), axial (L²/12; caps shifted)
    Sxy = m_cyl * r * r / 4.0 + m_hem * r * r / 5.0
    Sz = m_cyl * L * L / 12.0 + m_hem * (L * L / 4.0 + 3.0 * L * r / 8.0 + r * r / 5.0)
    return _from_second_moments(m, Sxy, Sxy, Sz, shape)


def box_shell(mass, size) -> RigidBodyInertia:
    r"""Thin-walled hollow box: the six faces with uniform areal density.

    A cube of side ``s`` gives ``I = 5/18 m s²``; a zero-area box is a point mass.

    Args:
      mass: ``(...)`` mass.
      size: ``(..., 3)`` full side lengths ``(a, b, c)``.
    """
    v, shape = _inputs({"mass": (mass, ()), "size": (size, (3,))})
    m, s = v["mass"], v["size"]
    a, b, c = s[..., 0], s[..., 1], s[..., 2]
    P = 2.0 * jnp.stack([b * c, a * c, a * b], axis=-1)
    A = jnp.sum(P, axis=-1)
    pos = A > 0
    A_safe = jnp.where(pos, A, jnp.ones_like(A))
    frac = jnp.where(pos[..., None], 1.0 / 12.0 + P / (6.0 * A_safe[..., None]), 0.0)
    S = m[..., None] * s * s * frac
    return _from_second_moments(m, S[..., 0], S[..., 1], S[..., 2], shape)


# ----------------------------------------------------------------- ellipsoid shell

_NSER = 17  # series terms; used for arguments < 0.1, so the truncation is < 0.1**17
_SER_MAX = 0.1
_T_COEF = np.array([1.0 / (2 * k + 1) for k in range(_NSER)])
_HB_COEF = np.array(
    [1.0 / (2 * k + 1) - 2.0 / (2 * k - 1) + 1.0 / (2 * k - 3) for k in range(2, _NSER + 2)]
)


def _binom_half(k):
    r = 1.0
    for i in range(k):
        r *= (0.5 - i) / (i + 1)
    return r


_Q_COEF = np.array([math.comb(2 * k, k) / 4.0**k / (2 * k + 1) for k in range(_NSER + 1)])
_E_COEF = np.array([_binom_half(k) * (-1) ** k for k in range(_NSER + 1)])
_HA_COEF = np.array(
    [(_Q_COEF[k] - _E_COEF[k] + 2 * _E_COEF[k - 1]) / 8.0 for k in range(1, _NSER + 1)]
)


def _poly(coef, x):
    """``Σ coef[k] x^k`` by Horner's rule."""
    acc = jnp.full_like(x, float(coef[-1]))
    for cf in coef[-2::-1]:
        acc = acc * x + float(cf)
    return acc


def _u_integrals(alpha, beta):
    r"""``I0 = ∫₀¹ √(α(1−u²) + βu²) du`` and ``I2 = ∫₀¹ u² √(…) du`` in closed form (α, β ≥ 0).

    ``atanh`` form for ``β ≥ α``, ``asin`` form otherwise, power series near
    ``α = β``; gradients finite (double ``where``). Docs page ``spatial.md#shapes``.
    """
    caseB = beta >= alpha
    one = jnp.ones_like(alpha)
    # --- β ≥ α
    kap = jnp.where(caseB, alpha / jnp.where(caseB, beta, one), 0.5 * one)
    z = 1.0 - kap
    small = z < _SER_MAX
    zs = jnp.where(small, z, 0.0 * one)
    F_ser = 0.5 * (1.0 + kap * _poly(_T_COEF, zs))
    H_ser = 1.0 / 3.0 - zs * _poly(_HB_COEF, zs) / 8.0
    zc = jnp.where(small, 0.5 * one, z)
    kc = jnp.where(small, 0.5 * one, kap)
    kpos = kc > 0
    kl = jnp.where(kpos, kc, one)
    rz = jnp.sqrt(zc)
    L = jnp.log1p(rz) - 0.5 * jnp.log(kl)  # atanh(√z) = log(1 + √z) − ½ log κ
    kT = jnp.where(kpos, kl * L / rz, 0.0 * one)
    k2T = jnp.where(kpos, kl * kl * L / rz, 0.0 * one)
    F_cl = 0.5 * (1.0 + kT)
    H_cl = ((1.0 + zc) - k2T) / (8.0 * zc)
    sb = jnp.sqrt(jnp.where(caseB, beta, one))
    I0B = sb * jnp.where(small, F_ser, F_cl)
    I2B = sb * jnp.where(small, H_ser, H_cl)
    # --- α > β
    lam = jnp.where(caseB, 0.5 * one, beta / jnp.where(caseB, one, alpha))
    zeta = 1.0 - lam
    small = zeta < _SER_MAX
    zs = jnp.where(small, zeta, 0.0 * one)
    rl = jnp.sqrt(lam)
    F_ser = 0.5 * (rl + _poly(_Q_COEF, zs))
    H_ser = _poly(_HA_COEF, zs)
    zc = jnp.where(small, 0.5 * one, zeta)
    lc = jnp.where(small, 0.5 * one, lam)
    rzc, rlc = jnp.sqrt(zc), jnp.sqrt(lc)
    Q = jnp.arctan2(rzc, rlc) / rzc  # asin(√ζ)/√ζ, finite slope at ζ = 1
    F_cl = 0.5 * (rlc + Q)
    H_cl = (Q - (1.0 - 2.0 * zc) * rlc) / (8.0 * zc)
    sa = jnp.sqrt(jnp.where(caseB, one, alpha))
    I0A = sa * jnp.where(small, F_ser, F_cl)
    I2A = sa * jnp.where(small, H_ser, H_cl)
    return jnp.where(caseB, I0B, I0A), jnp.where(caseB, I2B, I2A)


def _shell_ratios(polar, a, b, num_points):
    """``(∫x² dA, ∫y² dA, ∫z² dA) / ∫dA`` for semi-axes ``(a, b, polar)`` along (x, y, z).

    ``x = a √(1−u²) cos φ, y = b √(1−u²) sin φ, z = polar · u``; the ``u``
    integral is exact (``_u_integrals``), the ``φ`` integral the periodic
    trapezoid rule on ``4·num_points`` nodes folded onto ``[0, π/2]``.
    """
    dtype = a.dtype
    j = np.arange(num_points + 1)
    phi = 0.5 * np.pi * j / num_points
    w = np.where((j == 0) | (j == num_points), 0.5, 1.0)  # folded trapezoid weights
    cos2 = jnp.asarray(np.cos(phi) ** 2, dtype)
    sin2 = jnp.asarray(np.sin(phi) ** 2, dtype)
    w = jnp.asarray(w / w.sum(), dtype)  # normalisation cancels in the ratios
    a2, b2, c2 = (x[..., None] ** 2 for x in (a, b, polar))
    alpha = c2 * (b2 * cos2 + a2 * sin2)
    beta = jnp.broadcast_to(a2 * b2, alpha.shape)
    I0, I2 = _u_integrals(alpha, beta)
    area = jnp.sum(w * I0, axis=-1)
    Mx = a2[..., 0] * jnp.sum(w * cos2 * (I0 - I2), axis=-1)
    My = b2[..., 0] * jnp.sum(w * sin2 * (I0 - I2), axis=-1)
    Mz = c2[..., 0] * jnp.sum(w * I2, axis=-1)
    return Mx / area, My / area, Mz / area


def ellipsoid_shell(mass, semi_axes, *, num_points: int = 128) -> RigidBodyInertia:
    r"""Thin ellipsoidal shell with uniform *surface* density (mass ∝ area).

    ``Sᵢ = m ∫ xᵢ² dA / ∫ dA``: closed-form integrals in latitude, the
    periodic trapezoid rule in longitude (exact for spheroids). Not a solid
    ellipsoid minus a scaled copy. Docs page ``spatial.md#shapes``.

    Args:
      mass: ``(...)`` mass.
      semi_axes: ``(..., 3)`` semi-axes ``(a, b, c)`` along x, y, z.
      num_points: trapezoid intervals on a quarter turn of ``φ`` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> shell = ellipsoid_shell(3.0, jnp.array([1.0, 1.0, 1.0]))  # 2/3 m r²
      >>> shell.inertia_origin().diagonal().round(5).tolist()
      [2.0, 2.0, 2.0]
    """
    if not isinstance(num_points, int) or num_points < 2:
        raise ArgumentError("num_points", f"expected an int >= 2, got {num_points!r}")
    v, shape = _inputs({"mass": (mass, ()), "semi_axes": (semi_axes, (3,))})
    return RigidBodyInertia(
        _ellipsoid_shell(v["mass"], v["semi_axes"], shape=tuple(shape), num_points=num_points)
    )


@functools.partial(jax.jit, static_argnames=("shape", "num_points"))
def _ellipsoid_shell(m, s, *, shape, num_points):
    """``ellipsoid_shell``'s parameters from checked inputs (one compiled program)."""
    dtype = s.dtype
    order = jnp.argsort(s, axis=-1)
    ss = jnp.take_along_axis(s, order, axis=-1)
    s2 = ss[..., 2]
    pos = s2 > 0
    scale = jnp.where(pos, s2, jnp.ones_like(s2))
    n = jnp.where(pos[..., None], ss / scale[..., None], jnp.ones_like(ss))
    n = jnp.maximum(n, jnp.asarray(np.finfo(np.dtype(dtype)).eps, dtype))
    n0, n1, n2 = n[..., 0], n[..., 1], n[..., 2]
    short_polar = n1 * n1 >= n0 * n2  # ratio n1/n2 (polar = shortest) ≥ n0/n1 (polar = longest)
    polar = jnp.where(short_polar, n0, n2)
    a = jnp.where(short_polar, n2, n1)
    b = jnp.where(short_polar, n1, n0)
    Ra, Rb, Rp = _shell_ratios(polar, a, b, num_points)
    # back to ascending order: short_polar -> (polar, b, a), else (b, a, polar)
    r_sorted = jnp.where(
        short_polar[..., None], jnp.stack([Rp, Rb, Ra], -1), jnp.stack([Rb, Ra, Rp], -1)
    )
    inv = jnp.argsort(order, axis=-1)
    r = jnp.take_along_axis(r_sorted, inv, axis=-1)
    S = m[..., None] * r * (scale * scale)[..., None]
    S = jnp.where(pos[..., None], S, jnp.zeros_like(S))
    S = jnp.broadcast_to(S, tuple(shape) + (3,))
    return _from_second_moments(m, S[..., 0], S[..., 1], S[..., 2], shape).params
