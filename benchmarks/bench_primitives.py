"""Batched primitives (compose, apply, inertia transform, sandwich, consistency) vs baselines.

Options: those of ``spatialjax bench`` (``--help``); ``--ops`` defaults to every primitive.
Example: ``python benchmarks/bench_primitives.py --max-size 1e7 --out benchmarks/results``.
"""

import sys

from _script import main

PRIMITIVES = (
    "plx_compose,plxb_compose,apply_motion,apply_force,inertia_transform,"
    "pseudo_inertia_sandwich,physical_consistency"
)

if __name__ == "__main__":
    sys.exit(main(__doc__.splitlines()[0], PRIMITIVES))
