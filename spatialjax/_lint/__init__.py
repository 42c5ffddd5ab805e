"""The model-file linter behind ``spatialjax check``: verdicts on inertials, fixed copies.

Its own package, so that ``spatialjax.io`` only reads and writes files:

* ``verdict.py``: the verdict on each body of a model file (massless frame,
  point mass, rod or lamina, non-positive mass, not PSD, triangle inequality
  violated) and the tolerance it is judged with;
* ``check.py``: ``check_file``, one file read, judged and, on request,
  written back with every invalid inertial replaced by its nearest consistent
  one (every other byte unchanged).

The public names are re-exported by [spatialjax.io][] (``check_file``,
``classify``, ``Verdict``, ``VERDICTS``); the command line
(``spatialjax._cli.check``) adds the printing, the output paths and the exit
status.
"""

from .check import check_file
from .verdict import DEFAULT_LENGTH_SCALE, DEFAULT_TOL, VERDICTS, Verdict, body_tolerance, classify

__all__ = [
    "DEFAULT_LENGTH_SCALE",
    "DEFAULT_TOL",
    "VERDICTS",
    "Verdict",
    "body_tolerance",
    "check_file",
    "classify",
]
