"""Test configuration: float64 enabled so Pinocchio comparisons can reach 1e-12.

float32 behaviour is tested explicitly by passing float32 arrays (x64 mode
keeps float32 inputs float32).
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
