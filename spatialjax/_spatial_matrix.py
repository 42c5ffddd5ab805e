r"""General 6×6 spatial matrices: exact frame changes and ``[v; ω]`` <-> ``[ω; v]`` reordering.

``M_B = X⁻ᵀ M_A X⁻¹`` (RBDA 2008 §2.13, eq. 2.66) on the 3×3 blocks; docs page
``spatial.md#spatial-matrices``.
"""

from __future__ import annotations

import jax.numpy as jnp

from . import _smallmat as la
from ._checks import as_float_array, broadcast_batch, same_dtype
from ._errors import ArgumentTypeError
from ._transforms import Plx, Plxb


def _plx_parts(X):
    if isinstance(X, Plx):
        return X.E, X.r
    if isinstance(X, Plxb):
        return la.tr(X.E), X.r
    raise ArgumentTypeError("X", f"expected a Plx or Plxb transform, got {type(X).__name__}")


def _split_blocks(M):
    return M[..., :3, :3], M[..., :3, 3:], M[..., 3:, :3], M[..., 3:, 3:]


def _sandwich(E, Y):
    """``E Y Eᵀ``."""
    return la.mmt(la.mm(E, Y), E)


def _tsandwich(E, Y):
    """``Eᵀ Y E``."""
    return la.mm(la.mtm(E, Y), E)


def transform_spatial_matrix(M, X, *, inverse: bool = False):
    """Re-express a 6×6 motion-to-force matrix (inertia, added mass, ...) in another frame.

    ``M_B = X⁻ᵀ M_A X⁻¹`` for ``X`` mapping motions from A- to B-coordinates (a
    [`Plx`][spatialjax.Plx] ``X_BA`` or a [`Plxb`][spatialjax.Plxb]); ``inverse=True`` gives
    ``M_A = Xᵀ M_B X`` without inverting ``X``. Exact for any 6×6 ``M``, ``[ω; v]`` order.

    Args:
      M: ``(..., 6, 6)`` matrix mapping motion ``[ω; v]`` to force ``[n; f]``.
      X: ``Plx`` or ``Plxb`` with batch shape broadcastable against ``M``'s.
      inverse: apply the inverse transform (B -> A) instead.

    Returns:
      ``(..., 6, 6)`` matrix in the target frame, same dtype as ``M``.

    Raises:
      TypeError: ``X`` is not a ``Plx``/``Plxb``, or dtypes differ.
      ValueError: ``M`` is not ``(..., 6, 6)`` or batch shapes do not broadcast.

    Examples:
      >>> import jax.numpy as jnp
      >>> from spatialjax import Plx
      >>> M = jnp.diag(jnp.array([0.0, 0.0, 0.0, 2.0, 2.0, 2.0]))  # point mass at A's origin
      >>> X = Plx(jnp.eye(3), jnp.array([1.0, 0.0, 0.0]))  # B's origin at x = 1 in A
      >>> transform_spatial_matrix(M, X)[:3, :3].diagonal().tolist()  # 2 * 1**2 about y and z
      [0.0, 2.0, 2.0]
    """
    M = as_float_array(M, "M", (6, 6))
    E, r = _plx_parts(X)
    same_dtype(M=M, X=E)
    broadcast_batch("M", M.shape[:-2], "X", X.batch_shape)
    A, B, C, D = _split_blocks(M)
    R = la.hat(r)
    if not inverse:
        RD = la.mm(R, D)
        a = A + la.mm(B, R) - la.mm(R, C) - la.mm(RD, R)
        b = B - RD
        c = C + la.mm(D, R)
        return la.block2x2(_sandwich(E, a), _sandwich(E, b), _sandwich(E, c), _sandwich(E, D))
    A, B, C, D = (_tsandwich(E, Y) for Y in (A, B, C, D))
    RD = la.mm(R, D)
    b = B + RD
    a = A + la.mm(R, C) - la.mm(b, R)
    c = C - la.mm(D, R)
    return la.block2x2(a, b, c, D)


def swap_linear_angular(M):
    """Reorder a 6×6 matrix between ``[v; ω]`` and ``[ω; v]`` (self-inverse).

    ``[[A, B], [C, D]] -> [[D, C], [B, A]]`` (e.g. Gazebo ``<fluid_added_mass>``,
    Pinocchio's ``Inertia.matrix()``).

    Args:
      M: ``(..., 6, 6)``.

    Returns:
      ``(..., 6, 6)``.
    """
    M = as_float_array(M, "M", (6, 6))
    A, B, C, D = _split_blocks(M)
    return la.block2x2(D, C, B, A)


def swap_linear_angular_vector(v):
    """Reorder a spatial vector between ``[v; ω]`` and ``[ω; v]`` (``(..., 6)``; self-inverse)."""
    v = as_float_array(v, "v", (6,))
    return jnp.concatenate([v[..., 3:], v[..., :3]], axis=-1)
