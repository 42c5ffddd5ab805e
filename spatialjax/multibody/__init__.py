"""Kinematic trees: robot models, batched forward kinematics, RNEA, CRBA and regressors.

Example::

    import spatialjax.multibody as mb
    model = mb.Model.from_urdf("panda.urdf", locked_joints={"panda_finger_joint1": 0.0,
                                                            "panda_finger_joint2": 0.0})
    tau = mb.rnea(model, q, v, a)  # (..., nv)

Conventions (motion ``[ω; v]``, force ``[n; f]``, free flyer ``q = [p, wxyz]``,
``v = [ω; v]`` in the body frame) are stated in :class:`Model`; converters to
Pinocchio's ordering are ``Model.q_to_pinocchio`` / ``Model.v_to_pinocchio``.
"""

from ._algorithms import Kinematics as Kinematics
from ._algorithms import forward_kinematics as forward_kinematics
from ._algorithms import frame_poses as frame_poses
from ._algorithms import friction_regressor as friction_regressor
from ._algorithms import joint_torque_regressor as joint_torque_regressor
from ._algorithms import mass_matrix as mass_matrix
from ._algorithms import rnea as rnea
from ._friction_model import FRICTION_KINDS as FRICTION_KINDS
from ._friction_model import FrictionModel as FrictionModel
from ._model import JOINT_TYPES as JOINT_TYPES
from ._model import Model as Model
from ._model import chain_model as chain_model
from .interop import from_mujoco as from_mujoco
from .interop import from_pinocchio as from_pinocchio

__all__ = [
    "FRICTION_KINDS",
    "FrictionModel",
    "JOINT_TYPES",
    "Kinematics",
    "Model",
    "chain_model",
    "forward_kinematics",
    "frame_poses",
    "friction_regressor",
    "from_mujoco",
    "from_pinocchio",
    "joint_torque_regressor",
    "mass_matrix",
    "rnea",
]
