"""Read the inertial parameters of robot model files: URDF, SDFormat and MJCF.

>>> names, inertia = load_inertials("robot.urdf")   # doctest: +SKIP
>>> inertia.batch_shape == (len(names),)            # doctest: +SKIP
True

The format is chosen by the file's root element (``<robot>`` URDF, ``<sdf>``
SDFormat, ``<mujoco>`` MJCF), not by its extension. Only the standard
library's XML parser is used. Every inertial is returned in its link's frame
B: mass, first moment ``h = m c_BoBcm_B`` and rotational inertia about the
link origin ``I_BBo_B`` (:class:`~spatialjax.RigidBodyInertia` convention,
Pinocchio order), whatever the file's own convention (inertial-frame pose,
RPY or quaternion or Euler orientation, diagonal or full inertia). The
per-format rules are in ``_urdf.py``, ``_sdf.py`` and ``_mjcf.py``.

Malformed files (not XML, a missing ``<mass>``, a non-numeric, non-finite or
wrongly sized value, an unknown angle unit or rotation format) raise
:class:`ModelFileError`, a ``ValueError`` naming the file, the line, the link
and the field.

Physically invalid values (a negative mass, a non-PSD inertia, a violated
triangle inequality) are *returned* by default, so that
:func:`spatialjax.physical_consistency` and ``spatialjax check`` can report
and fix them; pass ``strict=True`` to reject negative masses and negative
moments of inertia at read time.
"""

from ._check import check_file
from ._common import LinkInertial, ModelFileError, ModelInertials
from ._load import detect_format, inertia_of, load_inertials, load_sdf_added_mass, read_model
from ._verdict import VERDICTS, Verdict, classify

__all__ = [
    "VERDICTS",
    "LinkInertial",
    "ModelFileError",
    "ModelInertials",
    "Verdict",
    "check_file",
    "classify",
    "detect_format",
    "inertia_of",
    "load_inertials",
    "load_sdf_added_mass",
    "read_model",
]
