"""Inertial-parameter identification: body regressor and physically consistent fits.

* [`body_regressor`][spatialjax.identification.body_regressor] — ``Y (..., 6, 10)`` with ``Y @ π``
  the Newton–Euler body wrench ``[n; f]`` (Pinocchio's ``bodyRegressor`` in ``[ω; v]`` order).
* [`fit`][spatialjax.identification.fit] — weighted least squares plus the log-det Bregman
  regulariser, always returning ``J ≻ 0``, batched over bodies.
* [`InteriorPoint`][spatialjax.identification.InteriorPoint] — the solver of
  [`fit`][spatialjax.identification.fit] and of the whole-robot fits (lineax-style options).
* [`FitResult`][spatialjax.identification.FitResult] — what [`fit`][spatialjax.identification.fit]
  returns; [`FitStatus`][spatialjax.identification.FitStatus] — its per-body status codes.

Robot data: [`fourier_trajectory`][spatialjax.identification.fourier_trajectory],
[`excitation_trajectory`][spatialjax.identification.excitation_trajectory] (Swevers et al. 1997
excitation), [`design_excitation`][spatialjax.identification.design_excitation] /
[`ExcitationDesign`][spatialjax.identification.ExcitationDesign] (the coefficients optimised for the
regressor's conditioning inside the joint limits),
[`perturb_inertia`][spatialjax.identification.perturb_inertia],
[`simulate_log`][spatialjax.identification.simulate_log],
[`RobotLog`][spatialjax.identification.RobotLog] with
[`load_log`][spatialjax.identification.load_log] / ``RobotLog.save`` (``.npz``/``.csv``),
[`LogError`][spatialjax.identification.LogError], ROS bags through the same ``load_log``
(``pip install "spatialjax[ros]"``), [`describe_log`][spatialjax.identification.describe_log]
(what a log holds), [`still_joints`][spatialjax.identification.still_joints],
[`match_joints`][spatialjax.identification.match_joints] /
[`JointMatch`][spatialjax.identification.JointMatch], and
[`resample_log`][spatialjax.identification.resample_log] /
[`SamplingReport`][spatialjax.identification.SamplingReport] (irregular timestamps onto a uniform
grid), [`prepare_log`][spatialjax.identification.prepare_log] /
[`PreparedLog`][spatialjax.identification.PreparedLog] (low-pass, differentiation, decimation),
[`parallel_filter`][spatialjax.identification.parallel_filter] (regressor columns filtered like the
torques), [`choose_filter`][spatialjax.identification.choose_filter] /
[`FilterChoice`][spatialjax.identification.FilterChoice] (the cut-off and decimation chosen from the
log).

Whole robots (joint torques):

* [`fit_robot`][spatialjax.identification.fit_robot] — every link (and joint friction) of a
  [`Model`][spatialjax.multibody.Model] from a torque log, consistent, with the
  model's inertias as log-det prior; [`fit_torques`][spatialjax.identification.fit_torques] — the
  same from a joint-torque regressor; [InteriorPoint][spatialjax.identification.InteriorPoint] —
  their solver (``solver=InteriorPoint(rtol=..., max_iters=...)``);
  [`RobotFitResult`][spatialjax.identification.RobotFitResult] — what they return.
* [`least_squares_torques`][spatialjax.identification.least_squares_torques] — ordinary
  (minimum-norm) least squares, the baseline.
* [`identifiability`][spatialjax.identification.identifiability] — rank, conditioning, base columns,
  unidentifiable directions and the prior's share per parameter
  ([`Identifiability`][spatialjax.identification.Identifiability]);
  [`parameter_names`][spatialjax.identification.parameter_names] — ``("panda_link3", "Ixy")``-style
  column names.

The pipeline: [identify_robot][spatialjax.identification.identify_robot] — every
stage of ``spatialjax identify`` (prior, sampling with the positions checked
against the joint limits, filter, regressor, torques, least squares, fit,
validate), with its options in one
[IdentifyOptions][spatialjax.identification.IdentifyOptions] and its errors an
[IdentifyError][spatialjax.identification.IdentifyError] naming the argument, returning a
[RobotIdentification][spatialjax.identification.RobotIdentification] with its report
([IdentificationReport][spatialjax.identification.IdentificationReport]) and
``write(out_path, source=...)``, the fitted model file.

Joint parameters: [joint_prior][spatialjax.identification.joint_prior] /
[JointPrior][spatialjax.identification.JointPrior] — the prior of a
[JointModel][spatialjax.multibody.JointModel]'s armature and friction columns for
[fit_torques][spatialjax.identification.fit_torques]' ``extra_prior``/``extra_prior_weight`` (the
armature's weakly informative Gaussian prior, the split with the first links decided by the priors);
[moving_samples][spatialjax.identification.moving_samples] — the samples where a joint slides
(static friction excluded).

Floating-base robots (legged robots, humanoids): a ``RobotLog`` with a base
pose and contacts; ``prepare_log`` filters and differentiates the base pose;
[floating_base_rows][spatialjax.identification.floating_base_rows] /
[FloatingBaseRows][spatialjax.identification.FloatingBaseRows] — the ``6 + n``
rows per sample with measured contact wrenches, or projected onto the
contacts' null space without them, in the form ``fit_torques`` takes.

Model files: [`write_identified_urdf`][spatialjax.identification.write_identified_urdf] — the input
URDF with only the identified ``<inertial>`` elements (and ``<dynamics>``) rewritten (what
``spatialjax identify --out`` writes);
[write_identified_mjcf][spatialjax.identification.write_identified_mjcf] — the same for MJCF, with
the joints' ``armature``, ``damping``, ``frictionloss``;
[write_identified_model][spatialjax.identification.write_identified_model] — either, by the file's
format.
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
