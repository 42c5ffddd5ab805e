"""Benchmarks of spatialjax's batched primitives against a copy roofline and other libraries.

Run them with ``spatialjax bench`` (see ``spatialjax bench --help``) or the
scripts in ``benchmarks/``. Modules:

* ``_core``: compile-apart timing, interleaved medians, the copy roofline;
* ``_ops``: the operations and their inputs; ``_baselines``: NumPy, Pinocchio
  and jaxlie versions of the same operations;
* ``_suite``: the sweeps; ``_report``: tables and targets; ``_plot``: the PNG;
* ``_cli``: the ``spatialjax bench`` sub-command.

Nothing here is imported by ``import spatialjax``; matplotlib, Pinocchio and
jaxlie are imported only when their part runs.
"""

from ._cli import add_arguments as add_arguments
from ._cli import run as run
from ._ops import OPS as OPS
from ._suite import Settings as Settings
from ._suite import run_fk as run_fk
from ._suite import run_ops as run_ops
