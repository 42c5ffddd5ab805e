"""``identify_robot`` as stages: one module per stage over a typed state, and the driver.

* ``options.py``: the options, checked once (``IdentifyOptions``, resolved: ``Options``).
* ``prior.py``, ``sampling.py``, ``filtering.py``, ``regression.py``,
  ``channels.py``, ``least_squares.py``, ``consistent_fit.py``, ``validation.py``
  (and ``floating_base.py`` for a floating base): the
  stages, each ``<name>_stage(...) -> state`` with ``state.describe()`` giving
  the progress line.
* ``driver.py``: ``identify_robot``, which runs them in order and assembles
  the report (``output.report``).
"""

from .driver import identify_robot as identify_robot
from .options import DEFAULT_HOLDOUT as DEFAULT_HOLDOUT
from .options import SAMPLE_WEIGHTINGS as SAMPLE_WEIGHTINGS
from .options import STAGES as STAGES
from .options import IdentifyError as IdentifyError
from .options import IdentifyOptions as IdentifyOptions

__all__ = [
    "DEFAULT_HOLDOUT",
    "SAMPLE_WEIGHTINGS",
    "STAGES",
    "IdentifyError",
    "IdentifyOptions",
    "identify_robot",
]
