"""Read the inertial parameters of robot model files: URDF, SDFormat and MJCF.

The format is chosen by the root element; every inertial is returned about its link
frame's origin in its axes (Pinocchio order). Docs page ``model-files.md#reading``.
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
