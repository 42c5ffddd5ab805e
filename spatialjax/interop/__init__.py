"""Conversions to and from other robotics software: Pinocchio, jaxlie, brax, SDFormat/Gazebo.

Each converter imports its library when called (``pip install 'spatialjax[interop]'``).
Each library's conventions and directions: docs page ``conventions.md#other-libraries``.
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
