"""Log-Cholesky parameters of the pseudo-inertia (Rucker & Wensing, RA-L 2022).

``θ = [α, d1, d2, d3, s12, s23, s13, t1, t2, t3]`` (Pinocchio order), ``J = U Uᵀ``,
``m = e^{2α}``, ``c = t``: every ``θ`` is a body with ``J ≻ 0`` and every such body has
one ``θ``. Derivation: docs page ``spatial.md#log-cholesky``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _params
from . import _smallmat as la
from ._checks import as_float_array


def _upper_L(theta):
    d1, d2, d3 = theta[..., 1], theta[..., 2], theta[..., 3]
    s12, s23, s13 = theta[..., 4], theta[..., 5], theta[..., 6]
    z = jnp.zeros_like(d1)
    return jnp.stack(
        [
            jnp.stack([jnp.exp(d1), s12, s13], -1),
            jnp.stack([z, jnp.exp(d2), s23], -1),
            jnp.stack([z, z, jnp.exp(d3)], -1),
        ],
        axis=-2,
    )


def log_cholesky_to_vector(theta):
    """Inertial 10-vector (Pinocchio order, about the origin) of log-Cholesky ``θ``.

    ``m = e^{2α}``, ``h = m t``, ``S = m (L Lᵀ + t tᵀ)``, ``I = tr(S) 1 − S``.

    Args:
      theta: ``(..., 10)`` log-Cholesky parameters.

    Returns:
      ``(..., 10)`` ``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``.
    """
    return _to_vector(as_float_array(theta, "theta", (10,)))


@jax.jit
def _to_vector(theta):
    m = jnp.exp(2.0 * theta[..., 0])
    t = theta[..., 7:10]
    L = _upper_L(theta)
    S = m[..., None, None] * (la.mmt(L, L) + t[..., :, None] * t[..., None, :])
    return _params.pack(m, m[..., None] * t, _params.inertia_from_second_moment(S))


def vector_to_log_cholesky(pi):
    """Inverse of ``log_cholesky_to_vector``; requires ``J ≻ 0`` (``m > 0``, ``S_c ≻ 0``).

    Outside that set the affected entries are NaN: check with ``physical_consistency``
    or use ``nearest_consistent`` first.

    Args:
      pi: ``(..., 10)`` inertial parameters (Pinocchio order, about the origin).

    Returns:
      ``(..., 10)`` ``[α, d1, d2, d3, s12, s23, s13, t1, t2, t3]``.
    """
    return _to_log_cholesky(as_float_array(pi, "pi", (10,)))


@jax.jit
def _to_log_cholesky(pi):
    m = pi[..., _params.MASS]
    c = pi[..., _params.FIRST_MOMENT] / m[..., None]
    xx, xy, yy, xz, yz, zz = (pi[..., _params.INERTIA][..., k] for k in range(6))
    tr_half = 0.5 * (xx + yy + zz)
    # A = S_c / m, with S = ½ tr(I) 1 − I and S_c = S − m c cᵀ
    a00 = (tr_half - xx) / m - c[..., 0] ** 2
    a11 = (tr_half - yy) / m - c[..., 1] ** 2
    a22 = (tr_half - zz) / m - c[..., 2] ** 2
    a01 = -xy / m - c[..., 0] * c[..., 1]
    a02 = -xz / m - c[..., 0] * c[..., 2]
    a12 = -yz / m - c[..., 1] * c[..., 2]
    # upper-triangular L with L Lᵀ = A, solved from the bottom-right corner
    l22_sq = a22
    l22 = jnp.sqrt(l22_sq)
    s23 = a12 / l22
    s13 = a02 / l22
    l11_sq = a11 - s23**2
    s12 = (a01 - s13 * s23) / jnp.sqrt(l11_sq)
    l00_sq = a00 - s12**2 - s13**2
    alpha = 0.5 * jnp.log(m)
    d = 0.5 * jnp.log(jnp.stack([l00_sq, l11_sq, l22_sq], -1))
    return jnp.concatenate([alpha[..., None], d, jnp.stack([s12, s23, s13], -1), c], axis=-1)
