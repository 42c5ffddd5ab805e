"""spatialjax: Featherstone spatial algebra, batched and differentiable in JAX.

Conventions (one set, everywhere): motion vectors ``[ω; v]``, force vectors
``[n; f]``, quaternions ``wxyz``, inertial 10-vectors in Pinocchio order
``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the frame origin. See
the conventions table of the documentation (``docs/conventions.md``).
"""

from ._util import collector_paused as _collector_paused

# no cyclic garbage collection while the package and jax load: the collections their
# allocations set off took 0.15-0.2 s of `import spatialjax`'s 0.7 s
with _collector_paused():
    from . import interop as interop
    from . import multibody as multibody
    from ._consistency import ConsistencyReport as ConsistencyReport
    from ._consistency import is_physically_consistent as is_physically_consistent
    from ._consistency import physical_consistency as physical_consistency
    from ._errors import ArgumentError as ArgumentError
    from ._errors import ArgumentTypeError as ArgumentTypeError
    from ._inertia import RigidBodyInertia as RigidBodyInertia
    from ._inertia import inertia_to_second_moment as inertia_to_second_moment
    from ._inertia import parallel_axis as parallel_axis
    from ._inertia import pseudo_inertia_sandwich as pseudo_inertia_sandwich
    from ._inertia import second_moment_to_inertia as second_moment_to_inertia
    from ._log_cholesky import log_cholesky_to_vector as log_cholesky_to_vector
    from ._log_cholesky import vector_to_log_cholesky as vector_to_log_cholesky
    from ._metrics import geodesic_distance as geodesic_distance
    from ._metrics import log_det_divergence as log_det_divergence
    from ._projection import nearest_consistent as nearest_consistent
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
    from ._shapes import box as box
    from ._shapes import box_shell as box_shell
    from ._shapes import capsule as capsule
    from ._shapes import cylinder as cylinder
    from ._shapes import ellipsoid as ellipsoid
    from ._shapes import ellipsoid_shell as ellipsoid_shell
    from ._shapes import sphere as sphere
    from ._sharding import batch_mesh as batch_mesh
    from ._sharding import batch_sharding as batch_sharding
    from ._sharding import shard_batch as shard_batch
    from ._spatial import force_cross as force_cross
    from ._spatial import motion_cross as motion_cross
    from ._spatial_matrix import swap_linear_angular as swap_linear_angular
    from ._spatial_matrix import swap_linear_angular_vector as swap_linear_angular_vector
    from ._spatial_matrix import transform_spatial_matrix as transform_spatial_matrix
    from ._transforms import Plx as Plx
    from ._transforms import Plxb as Plxb
    from ._validate import validate as validate
    from ._version import __version__ as __version__
del _collector_paused

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "ConsistencyReport",
    "Plx",
    "Plxb",
    "RigidBodyInertia",
    "batch_mesh",
    "batch_sharding",
    "box",
    "box_shell",
    "capsule",
    "cylinder",
    "ellipsoid",
    "ellipsoid_shell",
    "force_cross",
    "geodesic_distance",
    "inertia_to_second_moment",
    "interop",
    "is_physically_consistent",
    "log_cholesky_to_vector",
    "log_det_divergence",
    "matrix_to_quat",
    "motion_cross",
    "multibody",
    "nearest_consistent",
    "parallel_axis",
    "physical_consistency",
    "pseudo_inertia_sandwich",
    "quat_to_matrix",
    "quat_wxyz_to_xyzw",
    "quat_xyzw_to_wxyz",
    "rotx",
    "roty",
    "rotz",
    "second_moment_to_inertia",
    "shard_batch",
    "skew",
    "so3_exp",
    "so3_log",
    "sphere",
    "swap_linear_angular",
    "swap_linear_angular_vector",
    "transform_spatial_matrix",
    "validate",
    "vector_to_log_cholesky",
]
