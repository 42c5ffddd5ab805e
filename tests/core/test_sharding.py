"""Batched operations on inputs sharded over 8 simulated CPU devices.

``tests/conftest.py`` sets ``XLA_FLAGS=--xla_force_host_platform_device_count=8``
before JAX starts. Each case runs once on ordinary (single-device) arrays
and once on the same values sharded along the batch axis with
``NamedSharding(mesh, PartitionSpec("batch"))``, eagerly and under
``jax.jit``; the results must be equal to rounding and sharded the same way
(every device holding its slice of the batch).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument, random_inertia_params, random_rotations
from jax.sharding import NamedSharding, PartitionSpec

from spatialjax import ArgumentError
from spatialjax._inertia import RigidBodyInertia, pseudo_inertia_sandwich
from spatialjax._sharding import batch_mesh, batch_sharding, shard_batch
from spatialjax._transforms import Plx, Plxb

DEVICES = 8

pytestmark = pytest.mark.skipif(
    jax.device_count() < DEVICES,
    reason=f"needs {DEVICES} devices: run with XLA_FLAGS=--xla_force_host_platform_device_count=8",
)


@pytest.fixture(scope="module")
def mesh():
    return batch_mesh(jax.devices()[:DEVICES])


def _inputs(rng, batch, dtype):
    n = int(np.prod(batch))

    def arr(x):
        return np.asarray(x, dtype).reshape(batch + x.shape[1:])

    return {
        "E1": arr(random_rotations(rng, n)),
        "r1": arr(rng.standard_normal((n, 3))),
        "E2": arr(random_rotations(rng, n)),
        "r2": arr(rng.standard_normal((n, 3))),
        "m": arr(rng.standard_normal((n, 6))),
        "p": arr(random_inertia_params(rng, n)),
    }


def _consistency(a):
    from spatialjax._consistency import physical_consistency

    return physical_consistency(RigidBodyInertia(a["p"]))


CASES = {
    "plx_compose": lambda a: Plx(a["E1"], a["r1"]) @ Plx(a["E2"], a["r2"]),
    "plxb_compose": lambda a: Plxb(a["E1"], a["r1"]) @ Plxb(a["E2"], a["r2"]),
    "plx_inverse": lambda a: Plx(a["E1"], a["r1"]).inverse(),
    "apply_motion": lambda a: Plx(a["E1"], a["r1"]).apply_motion(a["m"]),
    "apply_force": lambda a: Plx(a["E1"], a["r1"]).apply_force(a["m"]),
    "plxb_inverse_apply_force": lambda a: Plxb(a["E1"], a["r1"]).inverse_apply_force(a["m"]),
    "inertia_transform_plx": lambda a: RigidBodyInertia(a["p"]).transform(Plx(a["E1"], a["r1"])),
    "inertia_transform_plxb": lambda a: RigidBodyInertia(a["p"]).transform(Plxb(a["E1"], a["r1"])),
    "pseudo_inertia_sandwich": lambda a: pseudo_inertia_sandwich(
        Plx(a["E1"], a["r1"]).as_homogeneous(), RigidBodyInertia(a["p"]).pseudo_inertia()
    ),
    "kinetic_energy": lambda a: RigidBodyInertia(a["p"]).kinetic_energy(a["m"]),
    "physical_consistency": _consistency,
}


def _assert_same(sharded, single, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    leaves_s = jax.tree_util.tree_leaves(sharded)
    leaves_1 = jax.tree_util.tree_leaves(single)
    assert len(leaves_s) == len(leaves_1)
    for s, o in zip(leaves_s, leaves_1, strict=True):
        assert s.dtype == o.dtype and s.shape == o.shape
        np.testing.assert_allclose(np.asarray(s), np.asarray(o), rtol=tol, atol=tol)


def _assert_batch_sharded(tree, mesh, batch0):
    want = NamedSharding(mesh, PartitionSpec("batch"))
    for leaf in jax.tree_util.tree_leaves(tree):
        assert leaf.sharding.is_equivalent_to(want, leaf.ndim), (leaf.shape, leaf.sharding)
        shards = leaf.addressable_shards
        assert len(shards) == DEVICES
        assert {s.device for s in shards} == set(mesh.devices.flat)
        assert all(s.data.shape == (batch0 // DEVICES,) + leaf.shape[1:] for s in shards)


@functools.cache
def _jitted_cases(dtype, batch, mesh):
    """Inputs and every case's results, single-device and sharded, each under one ``jit``.

    All cases of a dtype and batch shape run in one compiled program (and one for the
    sharded inputs) instead of one per case: the per-case tests below then compare their
    own entries. Inputs come from the ``rng`` fixture's seed, as each test drew them.
    """
    host = _inputs(np.random.default_rng(12345), batch, dtype)

    def all_cases(a):
        return {name: fn(a) for name, fn in CASES.items()}

    single = jax.jit(all_cases)({k: jnp.asarray(v) for k, v in host.items()})
    sharded_in = shard_batch(host, mesh)
    return host, sharded_in, single, jax.jit(all_cases)(sharded_in)


def _run_case(name, dtype, batch, mesh, *, eager):
    host, sharded_in, single, sharded = _jitted_cases(dtype, batch, mesh)
    for key, x in sharded_in.items():
        assert x.sharding.is_equivalent_to(batch_sharding(mesh), x.ndim), key
    out = CASES[name](sharded_in) if eager else sharded[name]
    _assert_same(out, single[name], dtype)
    _assert_batch_sharded(out, mesh, batch[0])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(16,), (8, 3)])
def test_jit_sharded_equals_single_device(name, dtype, batch, mesh):
    _run_case(name, dtype, batch, mesh, eager=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_sharded_equals_single_device(name, mesh):
    """Without jit every primitive runs on the sharded arrays and keeps the batch sharding."""
    _run_case(name, np.float32, (16,), mesh, eager=True)


def test_sharded_pytree_inputs_under_jit(mesh, rng):
    """Transforms and inertias passed as pytrees (not raw arrays) keep their sharding."""
    host = _inputs(rng, (16,), np.float64)
    X = shard_batch(Plx(host["E1"], host["r1"]), mesh)
    body = shard_batch(RigidBodyInertia(host["p"]), mesh)
    out = jax.jit(lambda X, b: b.transform(X))(X, body)
    ref = RigidBodyInertia(jnp.asarray(host["p"])).transform(Plx(host["E1"], host["r1"]))
    _assert_same(out, ref, np.float64)
    _assert_batch_sharded(out, mesh, 16)


@pytest.mark.slow  # compiles fit for 8 devices
def test_fit_sharded_over_bodies(mesh):
    """identification.fit on bodies sharded over the mesh equals the single-device fit."""
    identification = pytest.importorskip("spatialjax.identification")
    rng = np.random.default_rng(7)
    bodies, samples = 8, 24
    truth = random_inertia_params(rng, bodies)
    v = rng.standard_normal((bodies, samples, 6))
    a = rng.standard_normal((bodies, samples, 6))
    Y = np.asarray(identification.body_regressor(v, a))
    f = np.einsum("bnij,bj->bni", Y, truth)
    single = identification.fit(jnp.asarray(Y), jnp.asarray(f))
    Ys, fs = shard_batch((Y, f), mesh)
    sharded = identification.fit(Ys, fs)
    np.testing.assert_allclose(
        np.asarray(sharded.inertia.params), np.asarray(single.inertia.params), rtol=1e-8, atol=1e-9
    )
    np.testing.assert_array_equal(np.asarray(sharded.converged), np.asarray(single.converged))
    np.testing.assert_allclose(np.asarray(single.inertia.params), truth, rtol=1e-6, atol=1e-8)
    want = NamedSharding(mesh, PartitionSpec("batch"))
    assert sharded.inertia.params.sharding.is_equivalent_to(want, 2)
    assert len(sharded.inertia.params.addressable_shards) == DEVICES


def test_shard_batch_rejects_uneven_batch(mesh):
    with raises_argument(ArgumentError, "tree"):
        shard_batch({"E": np.zeros((12, 3, 3))}, mesh)


def test_shard_batch_replicates_scalars(mesh):
    out = shard_batch({"x": np.zeros((8, 3)), "s": np.float64(2.0)}, mesh)
    assert out["s"].sharding.is_fully_replicated
    assert len(out["s"].sharding.device_set) == DEVICES
    np.testing.assert_array_equal(np.asarray(out["s"]), 2.0)


def test_batch_sharding_checks_axis_name(mesh):
    with raises_argument(ArgumentError, "axis_name"):
        batch_sharding(mesh, "bodies")
