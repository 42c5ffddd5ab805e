"""Test configuration: float64 enabled so Pinocchio comparisons can reach 1e-12.

float32 behaviour is tested explicitly by passing float32 arrays (x64 mode
keeps float32 inputs float32).
"""

import logging
import os
from importlib.metadata import version
from pathlib import Path

# Eight simulated CPU devices (the sharding tests), and XLA:CPU's quick-compile settings: the
# suite compiles a few thousand programs and, on the 2-core CI machine, spends most of its time
# in XLA, while each program runs for micro- to milliseconds. LLVM at -O0 without its expensive
# passes and the older loop emitters (as `fit` already uses) halve the compile time of a small
# program (25 → 13 ms) and took the suite from 12.7 to 5.7 min (3.5 min with the tests and the
# library's eager paths sharing compiled programs). They change
# how the same program is lowered, not what it computes: every test keeps its tolerance, one
# test of a flat optimum compares points in the objective's own metric (test_robot_fit).
# The notebooks and the command-line subprocesses inherit this environment. Benchmarks and
# users get XLA's defaults; SPATIALJAX_TEST_XLA=default runs the tests with them too (slower).
_QUICK_XLA = (
    ""
    if os.environ.get("SPATIALJAX_TEST_XLA") == "default"
    else " --xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
    " --xla_cpu_use_fusion_emitters=false"
)
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8" + _QUICK_XLA)
# A persistent XLA compilation cache, shared by the pytest-xdist workers, the notebook kernels
# (nbmake starts them with this environment) and later runs on the same checkout: most of the
# suite's time is XLA compiling `fit` and `physical_consistency`, and a program compiled by one
# process is loaded by the others (~0.1 s instead of ~10 s for `fit`). JAX keys each entry on
# the program itself, the compile options, XLA_FLAGS and the jax/jaxlib versions, so an entry
# can never be used for a changed program; one folder per jax version keeps old entries from
# piling up. In .pytest_cache/ (git-ignored; `pytest --cache-clear` empties it). Set
# JAX_COMPILATION_CACHE_DIR to use another folder, or JAX_ENABLE_COMPILATION_CACHE=false to
# compile everything afresh.
_CACHE = Path(__file__).resolve().parents[1] / ".pytest_cache" / f"jax-{version('jax')}-xla"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.5")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
jax.config.update(
    "jax_persistent_cache_min_compile_time_secs",
    float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]),
)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


class _Compiles(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.names = []

    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("Compiling "):
            self.names.append(msg.split(" ")[1])


@pytest.fixture
def compiles():
    """The names of the programs JAX compiles inside the test (its "Compiling" log lines)."""
    handler = _Compiles()
    logger = logging.getLogger("jax")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with jax.log_compiles(True):
            yield handler.names
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the notebooks `slow` (they run in the second step of `.ci/run`, `pytest -m slow`).

    nbmake collects each notebook as one item, which no decorator can mark; this hook runs
    before `-m` selects (tryfirst), so `pytest -m "not slow"` leaves them out. It lives here,
    not in notebooks/, because a second `conftest.py` would clash with this one when
    `--doctest-modules` imports them; it applies to every collected item of the session.
    """
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
