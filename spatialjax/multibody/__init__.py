"""Kinematic trees: robot models, batched kinematics, inverse and forward dynamics, regressors.

Motion ``[ω; v]``, force ``[n; f]``; each algorithm takes ``method="auto"``, ``"scan"``,
``"levels"`` or ``"loop"`` (same results). Docs page ``dynamics.md#tree-sweeps``.
"""

from ._model import JOINT_TYPES as JOINT_TYPES
from ._model import Model as Model
from ._model import chain_model as chain_model
from .aba import forward_dynamics as forward_dynamics
from .coriolis import coriolis_matrix as coriolis_matrix
from .crba import mass_matrix as mass_matrix
from .interop import from_mujoco as from_mujoco
from .interop import from_pinocchio as from_pinocchio
from .jacobians import center_of_mass as center_of_mass
from .jacobians import center_of_mass_jacobian as center_of_mass_jacobian
from .jacobians import frame_jacobian as frame_jacobian
from .joint_model import JOINT_KINDS as JOINT_KINDS
from .joint_model import JointModel as JointModel
from .kinematics import Kinematics as Kinematics
from .kinematics import forward_kinematics as forward_kinematics
from .kinematics import frame_poses as frame_poses
from .regressor import joint_torque_regressor as joint_torque_regressor
from .rnea import gravity_torques as gravity_torques
from .rnea import nonlinear_effects as nonlinear_effects
from .rnea import rnea as rnea
from .rollout import Rollout as Rollout
from .rollout import difference as difference
from .rollout import integrate as integrate
from .rollout import rollout as rollout
from .transmission import Transmission as Transmission
from .transmission import TransmissionError as TransmissionError

__all__ = [
    "JOINT_KINDS",
    "JOINT_TYPES",
    "JointModel",
    "Kinematics",
    "Model",
    "Rollout",
    "Transmission",
    "TransmissionError",
    "center_of_mass",
    "center_of_mass_jacobian",
    "chain_model",
    "coriolis_matrix",
    "difference",
    "forward_dynamics",
    "forward_kinematics",
    "frame_jacobian",
    "frame_poses",
    "from_mujoco",
    "from_pinocchio",
    "gravity_torques",
    "integrate",
    "joint_torque_regressor",
    "mass_matrix",
    "nonlinear_effects",
    "rnea",
    "rollout",
]
