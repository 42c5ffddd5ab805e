"""body_regressor: batch shapes, dtypes, transformations, gravity conventions, bad input.

(The Newton–Euler 6×6 and Pinocchio cross-checks are in test_identification.py.)
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, raises_argument
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

import spatialjax as sj
from spatialjax import ArgumentError, ArgumentTypeError
from spatialjax.identification import IdentifyError, body_regressor


def _random_pi(rng, shape=()):
    """A consistent body (point masses), as a 10-vector."""
    m = rng.uniform(0.1, 1.0, size=shape + (5,))
    p = rng.uniform(-0.5, 0.5, size=shape + (5, 3))
    return sj.RigidBodyInertia.from_point_masses(jnp.asarray(m), jnp.asarray(p)).params


def _newton_euler(pi, v, a):
    """``M a + v ×* M v`` with the 6×6 inertia built from closed forms (no code under test)."""
    pi = np.asarray(pi, np.float64)
    m, h = pi[0], pi[1:4]
    xx, xy, yy, xz, yz, zz = pi[4:]
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    H = np.array([[0, -h[2], h[1]], [h[2], 0, -h[0]], [-h[1], h[0], 0]])
    M = np.block([[I, H], [H.T, m * np.eye(3)]])
    Mv = M @ v
    w, vo = v[:3], v[3:]
    crf = np.concatenate([np.cross(w, Mv[:3]) + np.cross(vo, Mv[3:]), np.cross(w, Mv[3:])])
    return M @ a + crf


# one compilation per shape pair (eagerly, every primitive compiles anew for each new shape);
# test_jit_and_vmap_agree_with_eager checks that jit changes nothing
_body_regressor_jit = jax.jit(body_regressor)


# 3 x 2 shape pairs: 12 examples cover each about twice
@settings(max_examples=12)
@given(
    shape_v=st.sampled_from(BATCH_SHAPES),
    shape_a=st.sampled_from([(), (2, 1)]),
    seed=st.integers(0, 2**16),
)
def test_batch_shapes_broadcast(shape_v, shape_a, seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=shape_v + (6,))
    a = rng.normal(size=shape_a + (6,))
    Y = _body_regressor_jit(jnp.asarray(v), jnp.asarray(a))
    batch = np.broadcast_shapes(shape_v, shape_a)
    assert Y.shape == batch + (6, 10)
    pi = np.asarray(_random_pi(rng))
    vb = np.broadcast_to(v, batch + (6,)).reshape(-1, 6)
    ab = np.broadcast_to(a, batch + (6,)).reshape(-1, 6)
    got = np.asarray(Y @ pi).reshape(-1, 6)
    want = np.stack([_newton_euler(pi, vi, ai) for vi, ai in zip(vb, ab, strict=True)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_float32_stays_float32(rng):
    v = jnp.asarray(rng.normal(size=(4, 6)), jnp.float32)
    a = jnp.asarray(rng.normal(size=(4, 6)), jnp.float32)
    g = jnp.asarray([0.0, 0.0, -9.81], jnp.float32)
    Y = body_regressor(v, a, gravity=g)
    assert Y.dtype == jnp.float32
    Y64 = body_regressor(v.astype(jnp.float64), a.astype(jnp.float64), gravity=g.astype(float))
    np.testing.assert_allclose(Y, Y64, rtol=1e-5, atol=1e-5)


def test_jit_and_vmap_agree_with_eager(rng):
    v = jnp.asarray(rng.normal(size=(5, 6)))
    a = jnp.asarray(rng.normal(size=(5, 6)))
    eager = body_regressor(v, a)
    np.testing.assert_allclose(jax.jit(body_regressor)(v, a), eager, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(jax.vmap(body_regressor)(v, a), eager, rtol=1e-14, atol=1e-14)


@pytest.mark.slow  # compile time; CI's second step
def test_wrench_gradients(rng):
    pi = _random_pi(rng)
    g = jnp.asarray(rng.normal(size=3))

    def wrench(v, a, g):
        return body_regressor(v, a, gravity=g) @ pi

    v = jnp.asarray(rng.normal(size=6))
    a = jnp.asarray(rng.normal(size=6))
    # eager on purpose: jax.jit(wrench) compiles 17 programs instead of 124 but takes as long
    # (its second-order programs are large), and eager shares its primitives with other tests
    check_grads(wrench, (v, a, g), order=2, modes=("fwd", "rev"))


def test_static_body_in_gravity_needs_its_weight_and_torque(rng):
    # held still: f = -m g and n = c × (-m g) about the sensor origin (statics)
    pi = np.asarray(_random_pi(rng))
    g = np.array([0.3, -1.2, -9.81])
    Y = body_regressor(jnp.zeros(6), jnp.zeros(6), gravity=jnp.asarray(g))
    w = np.asarray(Y @ pi)
    m, c = pi[0], pi[1:4] / pi[0]
    np.testing.assert_allclose(w[3:], -m * g, rtol=1e-13)
    np.testing.assert_allclose(w[:3], np.cross(c, -m * g), rtol=1e-12, atol=1e-13)


def test_spatial_gravity_equals_linear_gravity_padded(rng):
    v = jnp.asarray(rng.normal(size=(3, 6)))
    a = jnp.asarray(rng.normal(size=(3, 6)))
    g = jnp.asarray(rng.normal(size=3))
    ag = jnp.concatenate([jnp.zeros(3), g])
    np.testing.assert_allclose(
        body_regressor(v, a, gravity=g), body_regressor(v, a, gravity=ag), atol=1e-14
    )
    # an angular part of a_g enters like an angular acceleration
    alpha_g = jnp.asarray(rng.normal(size=3))
    np.testing.assert_allclose(
        body_regressor(v, a, gravity=jnp.concatenate([alpha_g, g])),
        body_regressor(v, a.at[..., :3].add(-alpha_g).at[..., 3:].add(-g)),
        atol=1e-12,
    )


def test_bad_input():
    with raises_argument(ArgumentError, "a"):
        body_regressor(jnp.zeros(6), jnp.zeros(3))
    with raises_argument(IdentifyError, "gravity"):
        body_regressor(jnp.zeros(6), jnp.zeros(6), gravity=jnp.zeros(4))
    with raises_argument(ArgumentError, "a"):
        body_regressor(jnp.zeros((2, 6)), jnp.zeros((3, 6)))
    with raises_argument(ArgumentError, "gravity"):
        body_regressor(jnp.zeros((2, 6)), jnp.zeros((2, 6)), gravity=jnp.zeros((3, 3)))
    with raises_argument(ArgumentTypeError, "a"):
        body_regressor(jnp.zeros(6, jnp.float32), jnp.zeros(6, jnp.float64))
    with pytest.raises(TypeError):
        body_regressor(jnp.zeros(6), jnp.zeros(6), gravity=jnp.zeros(3, jnp.int32))
