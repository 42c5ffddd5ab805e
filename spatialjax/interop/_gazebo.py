"""SDFormat / Gazebo link inertials, with fluid added mass, as Featherstone spatial inertias.

Frames and the difference from Gazebo's own sum: docs page ``conventions.md#gazebo-added-mass``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, broadcast_batch, same_dtype
from .._errors import ArgumentError, ArgumentTypeError
from .._inertia import RigidBodyInertia
from .._rotations import quat_to_matrix
from .._smallmat import matmul
from .._spatial_matrix import swap_linear_angular, transform_spatial_matrix
from .._transforms import Plxb

__all__ = ["gazebo_link_spatial_inertia"]

_REFERENCES = ("com", "com_frame", "link")


def _com_pose(com_pose):
    """``(R_BBcm, c_BoBcm_B)`` of ``com_pose``; a bad part is reported as ``com_pose``'s."""
    if isinstance(com_pose, Plxb):
        return com_pose.E, com_pose.r
    if not isinstance(com_pose, (tuple, list)) or len(com_pose) != 2:
        raise ArgumentTypeError(
            "com_pose",
            "expected a Plxb (pose of Bcm in B: "
            "E = R_BBcm, r = c_BoBcm_B) or a pair (rotation, position) with rotation "
            f"(..., 3, 3) R_BBcm or (..., 4) wxyz quaternion; got {type(com_pose).__name__}",
        )
    rot, pos = com_pose
    try:
        rot = as_float_array(rot, "rotation")
        if rot.ndim >= 1 and rot.shape[-1] == 4:
            R = quat_to_matrix(rot)
        elif rot.ndim >= 2 and rot.shape[-2:] == (3, 3):
            R = rot
        else:
            raise ArgumentError(
                "rotation",
                "expected shape (..., 3, 3) (R_BBcm) or (..., 4) (wxyz "
                f"quaternion), got shape {tuple(rot.shape)}",
            )
        pos = as_float_array(pos, "position", (3,))
        same_dtype(rotation=R, position=pos)
        broadcast_batch("rotation", R.shape[:-2], "position", pos.shape[:-1])
    except (ArgumentError, ArgumentTypeError) as e:
        raise type(e)("com_pose", f"{e.argument}: {e.detail}") from None
    return R, pos


def gazebo_link_spatial_inertia(
    mass, com_pose, inertia_com, fluid_added_mass=None, *, added_mass_reference: str = "com"
):
    """Featherstone spatial inertia of an SDF link about its origin, with exact added mass.

    ``B`` is the link frame with origin ``Bo``, ``Bcm`` the centre-of-mass frame of the
    ``<inertial><pose>``. The added mass is moved to ``Bo`` by the congruence
    [`transform_spatial_matrix`][spatialjax.transform_spatial_matrix] (RBDA 2008, eq. 2.66);
    derivation and Gazebo's naive sum: docs page ``conventions.md#gazebo-added-mass``.

    Args:
      mass: ``(...)`` link mass ``m``.
      com_pose: pose of ``Bcm`` in ``B``: a [`Plxb`][spatialjax.Plxb]
        ``Plxb(E=R_BBcm, r=c_BoBcm_B)`` or a pair ``(rotation, position)``
        with ``rotation`` ``(..., 3, 3)`` ``R_BBcm`` or ``(..., 4)`` wxyz
        quaternion (SDF's ``<pose>`` rpy must be converted first) and
        ``position`` ``(..., 3)`` ``c_BoBcm_B``.
      inertia_com: ``(..., 3, 3)`` ``I_BBcm_Bcm`` (SDF ``ixx … izz``); its
        symmetric part is used.
      fluid_added_mass: optional ``(..., 6, 6)`` added mass in SDF's
        ``[v; ω]`` order.
      added_mass_reference: the point and axes ``fluid_added_mass`` is given
        about/in: ``"com"`` (default; about ``Bcm`` in ``B``'s axes, as gz-math's
        ``Inertial::SpatialMatrix``), ``"com_frame"`` (about ``Bcm`` in ``Bcm``'s axes)
        or ``"link"`` (about ``Bo`` in ``B``'s axes: only reordered).

    Returns:
      ``(..., 6, 6)`` spatial inertia about ``Bo`` in ``B``, ``[ω; v]`` order
      (symmetric when the added mass is).

    Raises:
      ValueError: wrong shapes or an unknown ``added_mass_reference``.
      TypeError: mixed dtypes or a malformed ``com_pose``.

    Examples:
      >>> import jax.numpy as jnp
      >>> pose = (jnp.eye(3), jnp.array([0.0, 0.0, 0.5]))  # CoM 0.5 m above Bo
      >>> M = gazebo_link_spatial_inertia(2.0, pose, 0.1 * jnp.eye(3))
      >>> round(float(M[0, 0]), 6)  # Ixx about Bo = 0.1 + m c_z²
      0.6
    """
    if added_mass_reference not in _REFERENCES:
        raise ArgumentError(
            "added_mass_reference", f"expected one of {_REFERENCES}, got {added_mass_reference!r}"
        )
    m = as_float_array(mass, "mass")
    R, c = _com_pose(com_pose)
    I = as_float_array(inertia_com, "inertia_com", (3, 3))
    same_dtype(mass=m, com_pose=R, inertia_com=I)
    pose_shape = tuple(np.broadcast_shapes(R.shape[:-2], c.shape[:-1]))
    shape = broadcast_batch("mass", m.shape, "com_pose", pose_shape)
    broadcast_batch("mass, com_pose", shape, "inertia_com", I.shape[:-2])
    I_sym = 0.5 * (I + jnp.swapaxes(I, -1, -2))
    I_BBcm_B = matmul(matmul(R, I_sym), jnp.swapaxes(R, -1, -2))
    M = RigidBodyInertia.from_mass_com_inertia(m, c, I_BBcm_B).as_matrix()
    if fluid_added_mass is None:
        return M
    A = as_float_array(fluid_added_mass, "fluid_added_mass", (6, 6))
    same_dtype(mass=m, fluid_added_mass=A)
    broadcast_batch("mass, com_pose, inertia_com", shape, "fluid_added_mass", A.shape[:-2])
    A = swap_linear_angular(A)
    if added_mass_reference == "link":
        A_B = A
    else:
        E = R if added_mass_reference == "com_frame" else jnp.eye(3, dtype=c.dtype)
        # Plxb(E, c) maps B-coordinates to the reference frame's; go back with Yᵀ M Y.
        A_B = transform_spatial_matrix(A, Plxb(E, c), inverse=True)
    return M + A_B
