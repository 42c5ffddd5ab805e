"""spatialjax: Featherstone spatial algebra, batched and differentiable in JAX.

Conventions (one set, everywhere): motion vectors ``[ω; v]``, force vectors
``[n; f]``, quaternions ``wxyz``, inertial 10-vectors in Pinocchio order
``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the frame origin. See
the README's conventions table.
"""

from ._rotations import matrix_to_quat as matrix_to_quat
from ._rotations import quat_to_matrix as quat_to_matrix
from ._rotations import quat_wxyz_to_xyzw as quat_wxyz_to_xyzw
from ._rotations import quat_xyzw_to_wxyz as quat_xyzw_to_wxyz
from ._rotations import rotx as rotx
from ._rotations import roty as roty
from ._rotations import rotz as rotz
from ._rotations import skew as skew
from ._rotations import so3_exp as so3_exp
from ._rotations import so3_log as so3_log
from ._spatial import crf as crf
from ._spatial import crm as crm
from ._spatial import force_cross as force_cross
from ._spatial import motion_cross as motion_cross
from ._transforms import Plx as Plx
from ._transforms import Plxb as Plxb

__version__ = "0.1.0"

__all__ = [
    "Plx",
    "Plxb",
    "crf",
    "crm",
    "force_cross",
    "matrix_to_quat",
    "motion_cross",
    "quat_to_matrix",
    "quat_wxyz_to_xyzw",
    "quat_xyzw_to_wxyz",
    "rotx",
    "roty",
    "rotz",
    "skew",
    "so3_exp",
    "so3_log",
]
