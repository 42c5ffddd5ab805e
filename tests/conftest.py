"""Test configuration: float64 enabled so Pinocchio comparisons can reach 1e-12.

float32 behaviour is tested explicitly by passing float32 arrays (x64 mode
keeps float32 inputs float32).
"""

import os
from importlib.metadata import version
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
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
