"""The model-file linter behind ``spatialjax check``: verdicts on inertials, fixed copies.

``verdict.py`` judges each body, ``check.py`` checks one file and writes fixed copies;
the public names are re-exported by [spatialjax.io][].
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
