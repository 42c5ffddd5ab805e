r"""Conversions to and from other robotics software: Pinocchio, jaxlie, brax, SDFormat/Gazebo.

[`gazebo_link_spatial_inertia`][spatialjax.interop.gazebo_link_spatial_inertia] turns an SDF/Gazebo
``<inertial>`` (with ``<fluid_added_mass>``) into the spatial inertia about the link origin,
exactly. ``to_pin_* / from_pin_*``, ``to_jaxlie_* / from_jaxlie_*`` and
``to_brax_* / from_brax_*`` convert between those libraries' objects and
spatialjax's. None of these libraries is a dependency: each converter
imports its library when it is called and says what to install when it is
missing (``pip install 'spatialjax[interop]'`` installs all three).
Conventions on each side:

========== ===================== ============================ ==========================
library    pose of B in A         spatial vectors              inertia
========== ===================== ============================ ==========================
spatialjax ``Plxb(E=R_AB, r)``    ``[ω; v]``, ``[n; f]``       10-vector about the origin
Pinocchio  ``pin.SE3(R_AB, p)``   ``Motion``/``Force``         ``pin.Inertia(m, c, I_c)``
           (``aMb``)              stored ``[v; ω]``, ``[f; n]``  (``toDynamicParameters``
                                                               is our 10-vector)
jaxlie     ``SE3`` ``T_AB``       tangent ``(v, ω)``           --
           (``wxyz_xyz``)
brax       ``Transform(pos, rot)`` ``Motion(ang, vel)``,        ``Inertia(transform, i,
           (``rot`` wxyz)         ``Force(ang, vel)``          mass)``: CoM frame, inertia
                                                               about the CoM in that frame
========== ===================== ============================ ==========================

Directions: ``Plxb(R_AB, r).apply_motion`` maps A- to B-coordinates. It equals
Pinocchio's ``M.actInv`` (``M.act`` maps B to A), the inverse of jaxlie's
``T.adjoint()`` (which maps B to A in ``(v, ω)`` order) and brax's
``Transform.do(Motion)``; brax's ``Transform.do(Force)`` goes the other way,
B to A, like ``Plxb.inverse_apply_force``.

Batches: jaxlie and brax objects are batched arrays and convert as such.
Pinocchio objects are single; a batched spatialjax value becomes nested lists
of them (matching the batch shape), and ``from_pin_*`` accepts a single object
or (nested) sequences of them.
"""

from ._brax import (
    from_brax_force,
    from_brax_inertia,
    from_brax_motion,
    from_brax_transform,
    to_brax_force,
    to_brax_inertia,
    to_brax_motion,
    to_brax_transform,
)
from ._gazebo import gazebo_link_spatial_inertia
from ._jaxlie import from_jaxlie_se3, from_jaxlie_tangent, to_jaxlie_se3, to_jaxlie_tangent
from ._pinocchio import (
    from_pin_force,
    from_pin_inertia,
    from_pin_motion,
    from_pin_se3,
    to_pin_force,
    to_pin_inertia,
    to_pin_motion,
    to_pin_se3,
)

__all__ = [
    "from_brax_force",
    "from_brax_inertia",
    "from_brax_motion",
    "from_brax_transform",
    "from_jaxlie_se3",
    "from_jaxlie_tangent",
    "from_pin_force",
    "from_pin_inertia",
    "from_pin_motion",
    "from_pin_se3",
    "gazebo_link_spatial_inertia",
    "to_brax_force",
    "to_brax_inertia",
    "to_brax_motion",
    "to_brax_transform",
    "to_jaxlie_se3",
    "to_jaxlie_tangent",
    "to_pin_force",
    "to_pin_inertia",
    "to_pin_motion",
    "to_pin_se3",
]
