"""Kinematic trees: robot models, batched kinematics, inverse and forward dynamics, regressors.

Example:

    import spatialjax.multibody as mb
    model = mb.Model.from_urdf("panda.urdf", locked_joints={"panda_finger_joint1": 0.0,
                                                            "panda_finger_joint2": 0.0})
    tau = mb.rnea(model, q, v, a)  # (..., nv)
    a = mb.forward_dynamics(model, q, v, tau)  # (..., nv), the inverse

Conventions (motion ``[ω; v]``, force ``[n; f]``, free flyer ``q = [p, wxyz]``,
``v = [ω; v]`` in the body frame) are stated in [`Model`][spatialjax.multibody.Model]; converters to
Pinocchio's ordering are ``Model.q_to_pinocchio`` / ``Model.v_to_pinocchio``.

One algorithm per module (as Pinocchio's ``algorithm/`` folder):
``kinematics`` (``forward_kinematics``, ``frame_poses``),
``rnea`` (``rnea``, ``nonlinear_effects``,
``gravity_torques``), ``crba`` (``mass_matrix``),
``aba`` (``forward_dynamics``),
``coriolis`` (``coriolis_matrix``),
``regressor`` (``joint_torque_regressor``),
``jacobians`` (``frame_jacobian``, ``center_of_mass``),
``rollout`` (``integrate``, ``difference``, ``rollout``),
``joint_model`` (``JointModel``: armature, friction and offset
columns, per joint or per motor, and the model-file attribute each becomes),
``transmission`` (``Transmission``: motors coupling joints); the tree
sweeps they share are in ``_sweep`` and the batch-last kernels in ``_batchlast``.
``Model.from_urdf``, ``from_sdf`` and ``from_mjcf`` read the file with the
format's reader of ``spatialjax.io`` (one parse, a format-neutral
description) and build the model from it in ``_build`` (merging fixed and
locked joints, frames, floating base), the same code for every format.

Tree sweeps. The algorithms take ``method="auto"`` (default), ``"scan"`` (one
``lax.scan`` step per body, compiled once whatever the number of bodies),
``"levels"`` (all bodies of one tree depth in one vectorised step) or
``"loop"`` (one unrolled step per body). All give the same results.
``"auto"`` is ``"loop"`` for a model of at most 12 bodies swept at a batch of
at most 16 states (the batch shape is static when a call is traced), else
``"scan"``; and for ONE state of such a model (a controller step, a
``lax.scan`` or ``vmap`` body) ``rnea``, ``mass_matrix``, ``nonlinear_effects``,
``gravity_torques``, ``forward_dynamics`` and ``frame_jacobian`` take a
world-frame one-state form with few, small operations (``_onestate``).
``forward_dynamics(method="auto")``, the default, takes the Cholesky route for
models of at most 12 dofs and the articulated-body algorithm above.

A free flyer's quaternion ``q[..., 3:7]`` is normalised; a zero one has no
rotation: on concrete input every function taking ``q`` raises ``ValueError``
naming the sample, under ``jit``/``vmap`` (no values to read) that sample's
results are NaN and the others are unaffected.
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
