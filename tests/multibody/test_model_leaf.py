"""``Model`` as a pytree: two leaves, ``body_values`` and ``other_values``, every numeric field in
a documented order."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument

import spatialjax as sj
import spatialjax.multibody as mb

BODY = ("placements.E", "placements.r", "axes", "inertia.params")
OTHER = ("frame_placements.E", "frame_placements.r", "armature", "damping", "friction", "lower",
         "upper", "velocity_limit", "effort_limit")  # fmt: skip


def _field(model, path):
    obj = model
    for name in path.split("."):
        obj = getattr(obj, name)
    return obj


def _model(floating=False):
    m = mb.chain_model(3, floating_base=floating, dtype="float64")
    rng = np.random.default_rng(0)
    return dataclasses.replace(
        m,
        armature=jnp.asarray(rng.uniform(0.1, 0.2, m.nv)),
        damping=jnp.asarray(rng.uniform(size=m.nv)),
    )


def _state(model, seed=1):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=model.nq)
    if model.floating_base:
        q[3:7] /= np.linalg.norm(q[3:7])
    return (jnp.asarray(q), *(jnp.asarray(rng.normal(size=model.nv)) for _ in range(2)))


@pytest.mark.parametrize("floating", [False, True])
def test_two_leaves_hold_every_numeric_field_in_the_documented_order(floating):
    model = _model(floating)
    nb = model.nbodies
    body = np.concatenate([np.reshape(_field(model, p), (nb, -1)) for p in BODY], axis=1)
    other = np.concatenate([np.ravel(_field(model, p)) for p in OTHER])
    flat = jax.tree_util.tree_flatten_with_path(model)[0]
    assert [jax.tree_util.keystr(path) for path, _ in flat] == [".body_values", ".other_values"]
    assert flat[0][1] is model.body_values and flat[1][1] is model.other_values
    for leaf, ref in ((model.body_values, body), (model.other_values, other)):
        assert isinstance(leaf, jax.Array) and leaf.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(leaf), ref)
    assert body.shape == (nb, 25)
    # rebuilt from its leaves: the same fields (views of the leaves on the host)
    back = jax.tree.map(lambda x: x, model)
    assert back.body_values is model.body_values
    for p in BODY + OTHER:
        np.testing.assert_array_equal(np.asarray(_field(back, p)), np.asarray(_field(model, p)))
    assert back.dtype == np.float64 and back.astype("float32").other_values.dtype == np.float32


def test_the_model_as_an_argument_is_the_model_closed_over():
    """One compiled program for two models of one structure; the same numbers as closed over."""
    model = _model()
    other = dataclasses.replace(model, inertia=sj.RigidBodyInertia(model.inertia.params * 1.5))
    q, v, a = _state(model)
    traces = []

    def f(m, q, v, a):
        traces.append(1)
        return mb.rnea(m, q, v, a), mb.mass_matrix(m, q)

    jf = jax.jit(f)
    for m in (model, other):
        tau, M = jf(m, q, v, a)
        np.testing.assert_allclose(tau, mb.rnea(m, q, v, a), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(M, mb.mass_matrix(m, q), rtol=1e-13, atol=1e-13)
    assert len(traces) == 1


def test_vmap_over_stacked_models_and_grad_with_respect_to_the_model():
    model = _model(floating=True)
    other = dataclasses.replace(model, inertia=sj.RigidBodyInertia(model.inertia.params * 1.5))
    q, v, a = _state(model)
    both = jax.tree.map(lambda x, y: jnp.stack([x, y]), model, other)
    assert both.body_values.shape == (2, model.nbodies, 25)
    assert both.other_values.shape == (2, model.other_values.shape[0])
    assert both.inertia.params.shape == (2, model.nbodies, 10)
    tau = jax.vmap(lambda m: mb.rnea(m, q, v, a))(both)
    for k, m in enumerate((model, other)):
        np.testing.assert_allclose(tau[k], mb.rnea(m, q, v, a), rtol=1e-12, atol=1e-12)
    # the gradient with respect to the model is a model: its inertia part is the gradient
    # with respect to the inertial parameters alone
    g = jax.grad(lambda m: jnp.sum(mb.rnea(m, q, v, a) ** 2))(model)
    ref = jax.grad(lambda p: jnp.sum(mb.rnea(
        dataclasses.replace(model, inertia=sj.RigidBodyInertia(p)), q, v, a) ** 2))(
        model.inertia.params)  # fmt: skip
    np.testing.assert_allclose(g.inertia.params, ref, rtol=1e-12, atol=1e-12)
    assert np.all(np.asarray(g.lower) == 0.0)  # limits do not enter the RNEA


def test_models_built_inside_a_trace_leak_nothing():
    """A model whose fields are traced (built in ``jit``) goes through inner transformations;
    a closed-over model rebuilt from a concrete leaf is first read inside a trace."""
    model = _model()
    q, v, a = _state(model)

    @jax.jit
    def f(p):
        m = dataclasses.replace(model, inertia=sj.RigidBodyInertia(p))
        tau = jax.lax.scan(lambda c, _: (c + mb.rnea(m, q, v, a), None), jnp.zeros(model.nv),
                           None, length=2)[0]  # fmt: skip
        return tau, jax.jit(lambda m: m)(m)

    for _ in range(2):
        tau, m = f(model.inertia.params)
        np.testing.assert_allclose(tau, 2 * mb.rnea(model, q, v, a), rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(np.asarray(m.inertia.params), model.inertia.params)
    lazy = jax.tree.map(lambda x: x + 0.0, model)
    out = jax.jit(lambda q: mb.rnea(lazy, q, v, a))(q)  # fields first read while traced
    np.testing.assert_allclose(out, mb.rnea(model, q, v, a), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(mb.rnea(lazy, q, v, a), out, rtol=1e-13, atol=1e-13)


def test_fields_of_the_wrong_shape_and_leaves_of_the_wrong_length_are_refused():
    model = _model()
    bad = dataclasses.replace(model, axes=model.axes[:, :2])
    with raises_argument(sj.ArgumentError, "model.axes"):
        jax.tree.leaves(bad)
    three = sj.RigidBodyInertia(jnp.stack([model.inertia.params] * 3))
    ragged = dataclasses.replace(model, armature=jnp.stack([model.armature] * 2), inertia=three)
    with raises_argument(sj.ArgumentError, "model.armature"):
        jax.jit(mb.rnea)(ragged, *_state(model))
    short = jax.tree.unflatten(jax.tree.structure(model), [model.body_values, np.zeros(5)])
    with raises_argument(sj.ArgumentError, "model.other_values"):
        _ = short.inertia


def test_shapes_specs_and_sentinels_take_the_place_of_the_leaves():
    """``eval_shape`` gives shape-only fields; a leaf replaced by any other object (an axis,
    ``None``) gives that object as each of its fields; a spec batches the per-body fields
    alone (``in_axes``)."""
    model = _model()
    shapes = jax.eval_shape(lambda m: m, model)
    assert shapes.axes.shape == (model.nbodies, 3) and shapes.armature.dtype == np.float64
    zeros = jax.tree.map(lambda x: 0, model)
    assert zeros.axes == 0 and zeros.inertia.params == 0 and "Model(" in repr(zeros)
    spec = jax.tree.unflatten(jax.tree.structure(model), [0, None])
    assert spec.inertia.params == 0 and spec.armature is None
    other = dataclasses.replace(model, inertia=sj.RigidBodyInertia(model.inertia.params * 1.5))
    both = jax.tree.unflatten(
        jax.tree.structure(model),
        [jnp.stack([model.body_values, other.body_values]), model.other_values],
    )
    q, v, a = _state(model)
    tau = jax.vmap(lambda m: mb.rnea(m, q, v, a), in_axes=(spec,))(both)
    for k, m in enumerate((model, other)):
        np.testing.assert_allclose(tau[k], mb.rnea(m, q, v, a), rtol=1e-12, atol=1e-12)
    # a leaf's fields either all arrays or all the same object
    with raises_argument(sj.ArgumentError, "model.placements.E"):
        jax.tree.leaves(
            dataclasses.replace(zeros, inertia=sj.RigidBodyInertia(model.inertia.params))
        )


def test_fields_broadcast_to_one_batch_shape_and_keep_one_dtype():
    model = _model()
    q, v, a = _state(model)
    params = jnp.stack([model.inertia.params, 1.5 * model.inertia.params])
    two = dataclasses.replace(model, inertia=sj.RigidBodyInertia(params))
    assert two.body_values.shape == (2, model.nbodies, 25)
    assert two.other_values.shape == (2, model.other_values.shape[0])
    tau = jax.vmap(lambda m: mb.rnea(m, q, v, a))(two)
    np.testing.assert_allclose(tau[0], mb.rnea(model, q, v, a), rtol=1e-12, atol=1e-12)
    single = model.astype("float32")
    with raises_argument(sj.ArgumentTypeError, "model.lower"):
        jax.tree.leaves(dataclasses.replace(single, lower=np.zeros(model.nq)))
    empty = jax.tree.map(lambda x: jnp.stack([x, x])[:0], model)
    assert jax.tree.leaves(dataclasses.replace(empty, damping=empty.damping))[0].shape == (0, 3, 25)


def test_zero_bodies_equality_and_numpy_fields():
    model = _model()
    assert model == jax.tree.map(lambda x: x, model)
    assert model != dataclasses.replace(model, damping=model.damping + 1.0)
    none = dataclasses.replace(model, placements=model.placements[:0], axes=model.axes[:0],
                               inertia=sj.RigidBodyInertia(model.inertia.params[:0]),
                               parents=(), joint_types=(), joint_names=(), body_names=(),
                               armature=model.armature[:0], damping=model.damping[:0],
                               friction=model.friction[:0], lower=model.lower[:0],
                               upper=model.upper[:0], velocity_limit=model.velocity_limit[:0],
                               effort_limit=model.effort_limit[:0], frame_names=(),
                               frame_bodies=(),
                               frame_placements=model.frame_placements[:0])  # fmt: skip
    assert [x.shape for x in jax.tree.leaves(none)] == [(0, 25), (0,)]
    # NumPy fields are read afresh at each flattening: an edit in place is seen
    arm = np.array(model.armature)
    mn = dataclasses.replace(model, armature=arm)
    q, v, a = _state(model)
    before = np.asarray(jax.jit(mb.rnea)(mn, q, v, a))
    arm += 1.0
    after = np.asarray(jax.jit(mb.rnea)(mn, q, v, a))
    np.testing.assert_allclose(after - before, np.asarray(a), rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(jax.device_count() < 2, reason="needs 2 devices (tests/conftest.py)")
def test_a_model_stays_on_its_device_and_its_sharding():
    model = _model()
    dev = jax.devices()[1]
    m1 = jax.device_put(model, dev)
    assert m1.body_values.devices() == {dev} and m1.axes.devices() == {dev}
    moved = dataclasses.replace(m1, damping=m1.damping * 2.0)
    assert all(x.devices() == {dev} for x in jax.tree.leaves(moved))
    n = jax.device_count()
    batch = jax.tree.map(lambda x: jnp.stack([x] * n), model)
    sharded = sj.shard_batch(batch)
    assert len(sharded.inertia.params.sharding.device_set) == n
    again = dataclasses.replace(sharded, damping=sharded.damping * 2.0)
    assert all(len(x.sharding.device_set) == n for x in jax.tree.leaves(again))
