r"""SDFormat / Gazebo link inertials, with fluid added mass, as Featherstone spatial inertias.

[`gazebo_link_spatial_inertia`][spatialjax.interop.gazebo_link_spatial_inertia] turns an SDF
``<inertial>`` element (optionally with ``<fluid_added_mass>``, SDFormat specification 1.10,
``link.sdf``) into the spatial inertia about the link origin, exactly, and
documents how Gazebo's own sum (``gz::math::Inertial::SpatialMatrix`` in
gz-math, used by gz-physics' DART plugin) differs from it.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, broadcast_batch, same_dtype
from .._errors import ArgumentError, ArgumentTypeError
from .._inertia import RigidBodyInertia
from .._rotations import quat_to_matrix
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
    r"""Featherstone spatial inertia of an SDF link about its origin, with exact added mass.

    Frames (Drake's monogram notation): ``B`` link frame with
    origin ``Bo``; ``Bcm`` the centre-of-mass frame whose pose in ``B`` is the
    ``<inertial><pose>`` ``X_BBcm = (R_BBcm, c_BoBcm_B)``. SDF gives the
    inertia ``I_BBcm_Bcm`` about ``Bcm`` in ``Bcm``'s axes.

    Result, in ``[ω; v]`` order, about ``Bo``, in ``B``'s axes:

    $$
    M_B = \underbrace{\begin{bmatrix} I_{BBo\_B} & m c_\times \\
        m c_\times^T & m 1\end{bmatrix}}_{\text{rigid body (RBDA 2.63)}}
        + X^{*} M_a X^{-1},
    $$

    with ``I_BBo_B = R I_BBcm_Bcm Rᵀ − m c× c×`` (what DART builds from
    ``setMoment``/``setLocalCOM``) and ``M_a`` the fluid added mass, reordered
    from SDF's ``[v; ω]`` (``xx … xr, …, rr``: x, y, z linear then p, q, r
    angular) and moved to ``Bo`` in ``B`` by the congruence
    [`transform_spatial_matrix`][spatialjax.transform_spatial_matrix] — the only frame change that
    preserves the added kinetic energy ``½ Vᵀ M_a V`` (the congruence of
    Featherstone, RBDA 2008, eq. 2.66, applied to any symmetric 6×6 matrix).

    **Where the naive sum goes wrong.** Gazebo's DART plugin adds the
    unshifted added-mass matrix to DART's tensor about ``Bo`` (gz-physics,
    ``dartsim`` plugin, with gz-math's ``Inertial::SpatialMatrix``); a
    tempting correction shifts only the rotational block, ``+ CM M⁻¹ CMᵀ`` with ``M``
    the linear and ``CM`` the angular-from-linear block (meant as
    ``c× M c×ᵀ``). The exact shift of ``[[A, B], [C, D]]`` (``[ω; v]``, about
    ``Bcm``, B axes, ``R = skew(−c)``) is
    ``[[A + B R − R C − R D R, B − R D], [C + D R, D]]``: every block except the
    linear one changes, and the rotational block depends on the coupling
    ``B, C`` linearly, not through ``CM M⁻¹ CMᵀ``. Example (the numbers are
    checked in ``tests/test_gazebo.py``): ``m = 2``, ``c = (0.3, −0.1, 0.2)``,
    ``R_BBcm = 1``, ``I = diag(0.02, 0.03, 0.04)``, added mass about ``Bcm``
    with linear ``diag(1, 4, 5)``, angular ``diag(0.1, 0.3, 0.4)`` and
    coupling ``yr = 0.5``, ``zq = −0.6`` (kg, kg m, kg m²). The exact
    rotational diagonal about ``Bo`` is ``(0.43, 1.44, 1.31)``; the naive sum
    gives ``(0.22, 0.59, 0.64)`` and the rotational-block-only correction
    ``(0.22, 0.662, 0.7025)``. Both also miss the angular–linear coupling
    ``c× M`` of the added mass (entry ``[1, 5]``: exact ``−2.7``, both
    ``−1.2``): largest entry error 1.5 for both, Frobenius error 3.29 (naive)
    and 3.26 (corrected) against ``‖M_B‖_F = 11.33``. Without coupling terms
    that correction is zero, so it is exactly as wrong as the naive sum
    whenever ``c ≠ 0``. It is exact only for a decoupled added mass
    ``M ⊕ A`` whose coupling block was already replaced by ``c× M`` (the
    half-shifted form of Gazebo's ``BodyMatrix``), which is not how SDF's
    ``<fluid_added_mass>`` is specified.

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
        about/in: ``"com"`` (default; about ``Bcm`` in ``B``'s axes, the
        reading of gz-math's ``Inertial::SpatialMatrix = BodyMatrix + addedMass``),
        ``"com_frame"`` (about ``Bcm`` in ``Bcm``'s axes) or
        ``"link"`` (about ``Bo`` in ``B``'s axes: only reordered).

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
      >>> A = jnp.diag(jnp.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]))  # 1 kg added along x, y, z
      >>> M = gazebo_link_spatial_inertia(2.0, pose, 0.1 * jnp.eye(3), A)
      >>> round(float(M[0, 0]), 6)  # the added mass is shifted to Bo too: + 1 · c_z²
      0.85
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
    I_BBcm_B = R @ I_sym @ jnp.swapaxes(R, -1, -2)
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
