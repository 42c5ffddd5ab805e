"""Read the inertial parameters of robot model files: URDF, SDFormat and MJCF.

Examples:
  >>> names, inertia = load_inertials("robot.urdf")   # doctest: +SKIP
  >>> inertia.batch_shape == (len(names),)            # doctest: +SKIP
  True

The format is chosen by the root element; every inertial is returned about its
link frame's origin in its axes (Pinocchio order); malformed files raise
[`ModelFileError`][spatialjax.io.ModelFileError] naming file, line, link and field.
Conventions of each format: docs page ``model-files.md#reading``.
"""

from .._lint import VERDICTS, Verdict, check_file, classify
from ._common import LinkInertial, ModelFileError, ModelInertials
from ._description import ModelDescription
from ._load import (
    detect_format,
    inertia_of,
    load_inertials,
    load_sdf_added_mass,
    read_description,
    read_model,
)

__all__ = [
    "VERDICTS",
    "LinkInertial",
    "ModelDescription",
    "ModelFileError",
    "ModelInertials",
    "Verdict",
    "check_file",
    "classify",
    "detect_format",
    "inertia_of",
    "load_inertials",
    "load_sdf_added_mass",
    "read_description",
    "read_model",
]
