"""spatialjax: Featherstone spatial algebra, batched and differentiable in JAX.

Conventions (one set, everywhere): motion vectors ``[ω; v]``, force vectors
``[n; f]``, quaternions ``wxyz``, inertial 10-vectors in Pinocchio order
``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the frame origin. See
the README's conventions table.
"""

from ._inertia import RigidBodyInertia as RigidBodyInertia
from ._inertia import inertia_to_second_moment as inertia_to_second_moment
from ._inertia import parallel_axis as parallel_axis
from ._inertia import pseudo_inertia_sandwich as pseudo_inertia_sandwich
from ._inertia import second_moment_to_inertia as second_moment_to_inertia
from ._log_cholesky import log_cholesky_to_vector as log_cholesky_to_vector
from ._log_cholesky import vector_to_log_cholesky as vector_to_log_cholesky
from ._metrics import geodesic_distance as geodesic_distance
from ._metrics import log_det_divergence as log_det_divergence
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
    "RigidBodyInertia",
    "geodesic_distance",
    "inertia_to_second_moment",
    "log_cholesky_to_vector",
    "log_det_divergence",
    "parallel_axis",
    "pseudo_inertia_sandwich",
    "second_moment_to_inertia",
    "vector_to_log_cholesky",
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
