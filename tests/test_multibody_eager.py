"""Eager (un-jitted) calls of the tree algorithms compile once per structure, not per call.

Each public algorithm checks its inputs in Python and runs one jitted kernel, so a
second eager call with the same model structure, shapes and dtypes reuses the
compiled program. Before, every eager call re-traced and re-compiled its
``lax.scan`` sweeps (1-2 s per call for a Panda).
"""

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax import multibody as mb


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


@pytest.mark.parametrize("method", ["scan", "levels"])
def test_second_eager_call_compiles_nothing(compiles, method):
    model = mb.chain_model(3, length=0.5)
    rng = np.random.default_rng(0)
    q, v, a = (jnp.asarray(rng.normal(size=(5, 3))) for _ in range(3))
    calls = {
        "forward_kinematics": lambda: mb.forward_kinematics(model, q, v, a, method=method),
        "rnea": lambda: mb.rnea(model, q, v, a, method=method),
        "mass_matrix": lambda: mb.mass_matrix(model, q, method=method),
        "joint_torque_regressor": lambda: mb.joint_torque_regressor(model, q, v, a, method=method),
        "friction_regressor": lambda: mb.friction_regressor(model, v),
    }
    for name, call in calls.items():
        first = jax.block_until_ready(call())
        compiles.clear()
        second = jax.block_until_ready(call())
        assert compiles == [], f"{name}: the second eager call compiled {compiles}"
        jax.tree.map(np.testing.assert_array_equal, first, second)
    fk = mb.forward_kinematics(model, q, method=method)
    mb.frame_poses(model, fk.poses)
    compiles.clear()
    mb.frame_poses(model, mb.forward_kinematics(model, q, method=method).poses)
    assert compiles == []
