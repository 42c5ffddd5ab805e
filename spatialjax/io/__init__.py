"""Read the inertial parameters of robot model files: URDF, SDFormat and MJCF.

Examples:
  >>> names, inertia = load_inertials("robot.urdf")   # doctest: +SKIP
  >>> inertia.batch_shape == (len(names),)            # doctest: +SKIP
  True

The format is chosen by the file's root element (``<robot>`` URDF, ``<sdf>``
SDFormat, ``<mujoco>`` MJCF), not by its extension. Only the standard
library's XML parser is used. Every inertial is returned in its link's frame
B: mass, first moment ``h = m c_BoBcm_B`` and rotational inertia about the
link origin ``I_BBo_B`` ([`RigidBodyInertia`][spatialjax.RigidBodyInertia] convention,
Pinocchio order), whatever the file's own convention (inertial-frame pose,
RPY or quaternion or Euler orientation, diagonal or full inertia).

Layout: one reader per format (``_urdf.py``, ``_sdf.py``, ``_mjcf.py``, each
stating its format's rules) parses a file once (``_xml.py``: expat with line
numbers and byte spans for ``--fix``) into a format-neutral description
(``_description.py``: the inertials, and on request the tree of links,
joints with their poses, axes, dynamics and limits, and named frames).
[`read_model`][spatialjax.io.read_model] returns the description's inertials (``spatialjax check``
edits the file through them); [`read_description`][spatialjax.io.read_description] returns the
whole description from one parse, from which ``spatialjax.multibody.Model.from_description`` builds
a model (``from_urdf`` / ``from_sdf`` / ``from_mjcf`` read and build in one call) and the
identification's writers edit the file, without parsing it again.

Judging the inertials read is the linter's work (``spatialjax check``):
[check_file][spatialjax.io.check_file], [classify][spatialjax.io.classify],
[Verdict][spatialjax.io.Verdict] and [VERDICTS][spatialjax.io.VERDICTS] live
in their own private package (``spatialjax/_lint/``) and are re-exported here.

Malformed files (not XML, a missing ``<mass>``, a non-numeric, non-finite or
wrongly sized value, an unknown angle unit or rotation format) raise
[`ModelFileError`][spatialjax.io.ModelFileError], a ``ValueError`` naming the file, the line, the
link and the field.

Physically invalid values (a negative mass, a non-PSD inertia, a violated
triangle inequality) are *returned* by default, so that
[`spatialjax.physical_consistency`][spatialjax.physical_consistency] and ``spatialjax check`` can
report and fix them; pass ``strict=True`` to reject negative masses and negative
moments of inertia at read time.
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
