"""Forward kinematics of a chain of n transforms: lax.scan vs lax.associative_scan (n to 4096).

Options: those of ``spatialjax bench`` (``--help``); ``--ops`` defaults to ``fk_chain``.
Example: ``python benchmarks/bench_fk_chain.py --fk-batch 1,1024 --dtype float32``.
"""

import sys

from _script import main

if __name__ == "__main__":
    sys.exit(main(__doc__.splitlines()[0], "fk_chain"))
