"""Long batches on an accelerator: a few long chunks, the same results as the CPU's.

On the CPU a batch longer than a few thousand states is swept in chunks of 64-2048 states
that stay in cache (``_sweep.chunked``, ``chunked_blocks``). On an accelerator the chunks
run one after another, so there they are ``_sweep._ACCEL_CHUNK`` states long. The
accelerator is simulated here by patching ``_sweep.on_cpu`` (and ``_ACCEL_CHUNK`` to 1024,
so that 5,000 states make five chunks); JAX's compilation caches are cleared around the
patch so that no program traced for one platform is reused for the other.
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from helpers import all_equations, random_states

import spatialjax.multibody as mb
from spatialjax.multibody import _sweep as sweep

N = 5000
ACCEL = 1200  # five chunks of 1,000 states; Coriolis, a quarter: 17 of 295


def _model():
    return mb.chain_model(4, floating_base=True, dtype="float64")


CALLS = {
    "forward_kinematics": lambda m, q, v, a: mb.forward_kinematics(m, q).poses.r,
    "rnea": lambda m, q, v, a: mb.rnea(m, q, v, a),
    "mass_matrix": lambda m, q, v, a: mb.mass_matrix(m, q),
    "forward_dynamics aba": lambda m, q, v, a: mb.forward_dynamics(m, q, v, a, method="aba"),
    "coriolis_matrix": lambda m, q, v, a: mb.coriolis_matrix(m, q, v),
    "joint_torque_regressor": lambda m, q, v, a: mb.joint_torque_regressor(m, q, v, a),
}


def _loop_lengths(jaxpr) -> list[int]:
    """The trip counts of every ``scan`` in ``jaxpr`` and the programs it calls."""
    return [int(e.params["length"]) for e in all_equations(jaxpr) if e.primitive.name == "scan"]


@pytest.fixture
def accelerator(monkeypatch):
    jax.clear_caches()
    monkeypatch.setattr(sweep, "on_cpu", lambda xs: False)
    monkeypatch.setattr(sweep, "_ACCEL_CHUNK", ACCEL)
    yield
    jax.clear_caches()


@pytest.fixture(scope="module")
def cpu_results():
    m = _model()
    x = tuple(random_states(m, N, np.random.default_rng(3)))
    jax.clear_caches()
    out = {name: np.asarray(f(m, *x)) for name, f in CALLS.items()}
    lengths = {name: _loop_lengths(jax.make_jaxpr(lambda *x, f=f: f(m, *x))(*x).jaxpr)
               for name, f in CALLS.items()}  # fmt: skip
    return m, x, out, lengths


@pytest.mark.parametrize("name", list(CALLS))
def test_an_accelerator_sweeps_a_long_batch_in_long_chunks(cpu_results, accelerator, name):
    m, x, ref, cpu_lengths = cpu_results
    f = CALLS[name]
    lengths = _loop_lengths(jax.make_jaxpr(lambda *x: f(m, *x))(*x).jaxpr)
    # five chunks of 1,000 (at most 1,200), nothing longer; Coriolis: a quarter of the length
    chunks = math.ceil(N / (ACCEL // 4 if name == "coriolis_matrix" else ACCEL))
    assert chunks in lengths and max(lengths) == chunks
    assert chunks not in cpu_lengths[name]  # the CPU's chunks are other lengths
    np.testing.assert_allclose(np.asarray(f(m, *x)), ref[name], rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("name", ["rnea", "mass_matrix", "forward_dynamics aba"])
def test_an_accelerator_sweeps_a_batch_shorter_than_a_chunk_in_one_pass(
    cpu_results, accelerator, monkeypatch, name
):
    m, x, ref, _ = cpu_results
    f, short = CALLS[name], tuple(y[:300] for y in x)

    def lengths():
        return sorted(_loop_lengths(jax.make_jaxpr(lambda *x: f(m, *x))(*short).jaxpr))

    one = lengths()
    np.testing.assert_allclose(np.asarray(f(m, *short)), ref[name][:300], rtol=1e-11, atol=1e-11)
    monkeypatch.setattr(sweep, "_ACCEL_CHUNK", 10**6)  # certainly one pass
    jax.clear_caches()
    assert one == lengths()  # the same loops: only the sweep's own, no chunks
    if name == "forward_dynamics aba":  # the CPU sweeps 300 states in chunks of 64
        monkeypatch.setattr(sweep, "on_cpu", lambda xs: True)
        jax.clear_caches()
        assert math.ceil(300 / 64) in lengths() and one != lengths()


@pytest.mark.parametrize("name", ["rnea", "mass_matrix", "forward_dynamics aba"])
def test_an_accelerator_pads_or_overlaps_the_last_chunk(cpu_results, accelerator, name):
    m, x, ref, _ = cpu_results
    f, k = CALLS[name], N - 3  # five chunks of 1,000 for 4,997 states: 3 padded or overlapped
    part = tuple(y[:k] for y in x)
    assert math.ceil(k / ACCEL) in _loop_lengths(jax.make_jaxpr(lambda *x: f(m, *x))(*part).jaxpr)
    np.testing.assert_allclose(np.asarray(f(m, *part)), ref[name][:k], rtol=1e-11, atol=1e-11)


def test_accelerator_chunks_are_the_fewest_equal_ones():
    assert sweep.accel_chunk(1) == 1 and sweep.accel_chunk(0) == 0
    assert sweep.accel_chunk(2**15) == 2**15
    assert sweep.accel_chunk(2**15 + 1) == 2**14 + 1  # two chunks, not 2^15 and 1
    assert sweep.accel_chunk(65537) == 21846  # three chunks, 1 state of padding
    assert sweep.accel_chunk(5000, 1200) == 1000
