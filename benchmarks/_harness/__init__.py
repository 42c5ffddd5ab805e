"""The benchmark harness: spatialjax's batched primitives vs a copy roofline and other libraries.

This folder is tooling of the source checkout, not part of the installed
package. Run it with the scripts next to it (``python benchmarks/bench_primitives.py``,
``python benchmarks/bench_fk_chain.py``) or, from a source checkout,
``spatialjax bench``; every script takes the options of ``--help``. Modules:

* ``core``: compile-apart timing, interleaved medians, the copy roofline;
* ``ops``: the operations and their inputs; ``baselines``: NumPy, Pinocchio
  and jaxlie versions of the same operations;
* ``suite``: the sweeps; ``report``: tables and targets; ``plot``: the PNG;
* ``cli``: the options and the run (``main(argv)``).

matplotlib, Pinocchio and jaxlie are imported only when their part runs
(``pip install 'spatialjax[bench]'`` installs them all).
"""

from .cli import add_arguments as add_arguments
from .cli import main as main
from .cli import run as run
from .ops import OPS as OPS
from .suite import Settings as Settings
from .suite import run_fk as run_fk
from .suite import run_ops as run_ops
