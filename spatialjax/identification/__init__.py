"""Inertial-parameter identification: body regressor and physically consistent fits.

One body from wrenches (``fit``), whole robots from joint torques (``identify_robot``,
``fit_torques``, ``fit_robot``), floating-base rows, robot logs, excitation design and model-file
write-back; every public name is listed in the API reference, docs page ``api/identification.md``.
"""

from .design.excitation import ExcitationDesign as ExcitationDesign
from .design.excitation import design_excitation as design_excitation
from .design.simulate import perturb_inertia as perturb_inertia
from .design.simulate import simulate_log as simulate_log
from .design.trajectory import excitation_trajectory as excitation_trajectory
from .design.trajectory import fourier_trajectory as fourier_trajectory
from .errors import IdentifyError as IdentifyError
from .errors import IdentifyTypeError as IdentifyTypeError
from .fitting.body_fit import fit as fit
from .fitting.body_regressor import body_regressor as body_regressor
from .fitting.body_result import FitResult as FitResult
from .fitting.floating_rows import CONTACT_TYPES as CONTACT_TYPES
from .fitting.floating_rows import FloatingBaseRows as FloatingBaseRows
from .fitting.floating_rows import floating_base_rows as floating_base_rows
from .fitting.identifiability import identifiability as identifiability
from .fitting.identifiability import parameter_names as parameter_names
from .fitting.robot_fit import fit_robot as fit_robot
from .fitting.robot_fit import fit_torques as fit_torques
from .fitting.robot_fit import least_squares_torques as least_squares_torques
from .fitting.robot_result import Identifiability as Identifiability
from .fitting.robot_result import RobotFitResult as RobotFitResult
from .fitting.solvers import InteriorPoint as InteriorPoint
from .fitting.status import FitStatus as FitStatus
from .logs.correlation import correlation_time as correlation_time
from .logs.filter_choice import FilterChoice as FilterChoice
from .logs.filter_choice import choose_filter as choose_filter
from .logs.preprocess import PreparedLog as PreparedLog
from .logs.preprocess import parallel_filter as parallel_filter
from .logs.preprocess import prepare_log as prepare_log
from .logs.resample import SamplingReport as SamplingReport
from .logs.resample import resample_log as resample_log
from .logs.robot_log import JointMatch as JointMatch
from .logs.robot_log import LogError as LogError
from .logs.robot_log import RobotLog as RobotLog
from .logs.robot_log import load_log as load_log
from .logs.robot_log import match_joints as match_joints
from .logs.rosbag import BagOptionError as BagOptionError
from .logs.rosbag import LogInventory as LogInventory
from .logs.rosbag import TopicSummary as TopicSummary
from .logs.rosbag import describe_log as describe_log
from .logs.rosbag import still_joints as still_joints
from .output.model_writer import write_identified_mjcf as write_identified_mjcf
from .output.model_writer import write_identified_model as write_identified_model
from .output.model_writer import write_identified_urdf as write_identified_urdf
from .output.report import IdentificationReport as IdentificationReport
from .output.report import RobotIdentification as RobotIdentification
from .pipeline import IdentifyOptions as IdentifyOptions
from .pipeline import identify_robot as identify_robot
from .priors.joint_prior import JointPrior as JointPrior
from .priors.joint_prior import joint_prior as joint_prior
from .priors.joint_prior import moving_samples as moving_samples
from .priors.prior_repair import PriorError as PriorError
from .priors.prior_repair import PriorRepair as PriorRepair
from .priors.prior_repair import repair_prior as repair_prior

__all__ = [
    "FitResult",
    "FitStatus",
    "body_regressor",
    "fit",
    # robot data
    "JointMatch",
    "LogError",
    "PreparedLog",
    "RobotLog",
    "ExcitationDesign",
    "design_excitation",
    "excitation_trajectory",
    "fourier_trajectory",
    "load_log",
    "match_joints",
    "parallel_filter",
    "perturb_inertia",
    "prepare_log",
    "resample_log",
    "SamplingReport",
    "simulate_log",
    "BagOptionError",
    "LogInventory",
    "TopicSummary",
    "describe_log",
    "still_joints",
    # whole-robot identification (robot-fit)
    "Identifiability",
    "InteriorPoint",
    "RobotFitResult",
    "fit_robot",
    "fit_torques",
    "identifiability",
    "least_squares_torques",
    "parameter_names",
    # joint parameters (armature, friction)
    "JointPrior",
    "joint_prior",
    "moving_samples",
    # the pipeline (identify_robot) and its parts
    "FilterChoice",
    "IdentificationReport",
    "IdentifyError",
    "IdentifyOptions",
    "IdentifyTypeError",
    "PriorError",
    "PriorRepair",
    "RobotIdentification",
    "choose_filter",
    "correlation_time",
    "identify_robot",
    "repair_prior",
    # floating-base robots
    "CONTACT_TYPES",
    "FloatingBaseRows",
    "floating_base_rows",
    # model files (identify-cli)
    "write_identified_mjcf",
    "write_identified_model",
    "write_identified_urdf",
]
