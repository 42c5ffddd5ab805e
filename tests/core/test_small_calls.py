"""The small-call paths: operations run as one jitted kernel and wrap their results unchecked.

The methods of ``Plx``/``Plxb``/``RigidBodyInertia`` check their operands in
Python, call one jitted kernel of arrays and wrap the result without running
the constructor again (``_new``). These tests pin what that must keep:

* results are the same objects the constructor would build (fields on one
  batch shape, the same dtype), for broadcasting batch shapes too;
* bad operands still raise where the user called, eagerly and under ``jit``,
  with the argument named (the fast path of ``as_float_array`` included);
* the kernels compose with ``jit``, ``vmap`` and ``grad``.

Reference values are closed forms (6×6 matrix products, written with NumPy).
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax import Plx, Plxb, RigidBodyInertia, rotx, roty, rotz
from spatialjax._checks import as_float_array, broadcast_batch


def raises(exc, *fragments):
    return pytest.raises(exc, match=".*".join(re.escape(f) for f in fragments))


def _plx(batch, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(batch))
    angles = rng.uniform(-3, 3, (n, 3))
    E = np.stack([np.asarray(rotx(a) @ roty(b) @ rotz(c)) for a, b, c in angles])
    r = rng.normal(size=(n, 3))
    return jnp.asarray(E.reshape(batch + (3, 3))), jnp.asarray(r.reshape(batch + (3,)))


@pytest.mark.parametrize("cls", [Plx, Plxb])
def test_compose_result_fields_share_the_broadcast_batch_shape(cls):
    E1, r1 = _plx((2, 1), 0)
    E2, r2 = _plx((3,), 1)
    Z = cls(E1, r1) @ cls(E2, r2)
    assert Z.E.shape == (2, 3, 3, 3) and Z.r.shape == (2, 3, 3)
    assert Z.batch_shape == (2, 3)
    # the 6×6 matrices multiply in the class's order (closed form, NumPy)
    M1 = np.asarray(cls(E1, r1).as_matrix())
    M2 = np.asarray(cls(E2, r2).as_matrix())
    want = M1 @ M2 if cls is Plx else M2 @ M1
    np.testing.assert_allclose(np.asarray(Z.as_matrix()), want, atol=1e-5)
    # the wrapped result equals what the checked constructor builds from the same fields
    assert Z == cls(Z.E, Z.r)


@pytest.mark.parametrize("cls", [Plx, Plxb])
def test_inverse_result_is_a_checked_equivalent_object(cls):
    E, r = _plx((4,), 2)
    X = cls(E, r)
    Xi = X.inverse()
    assert Xi == cls(Xi.E, Xi.r)
    np.testing.assert_allclose(
        np.asarray(Xi.as_matrix()) @ np.asarray(X.as_matrix()),
        np.broadcast_to(np.eye(6), (4, 6, 6)),
        atol=1e-5,
    )


def test_inertia_transform_result_is_a_checked_equivalent_object():
    E, r = _plx((3,), 3)
    p = jnp.asarray(np.random.default_rng(4).normal(size=(10,)), E.dtype)
    body = RigidBodyInertia(p).transform(Plx(E, r))  # unbatched body, batched transform
    assert body.params.shape == (3, 10)
    assert body == RigidBodyInertia(body.params)
    # X* M X⁻¹ with 6×6 matrices (RBDA eq. 2.66), written with NumPy
    X = np.asarray(Plx(E, r).as_matrix())
    Xinv = np.linalg.inv(X)
    M = np.asarray(RigidBodyInertia(p).as_matrix())
    want = np.swapaxes(Xinv, -1, -2) @ M @ Xinv
    np.testing.assert_allclose(np.asarray(body.as_matrix()), want, atol=1e-4)


@pytest.mark.parametrize("jit", [False, True])
def test_bad_operands_still_raise_on_the_fast_paths(jit):
    E, r = _plx((2,), 5)
    X = Plx(E, r)

    def call(f, *args):
        return jax.jit(f)(*args) if jit else f(*args)

    with raises(ValueError, "m", "(..., 6)", "(2, 5)"):
        call(lambda X, m: X.apply_motion(m), X, jnp.zeros((2, 5)))
    with raises(ValueError, "batch shapes do not broadcast", "(2,)", "(3,)"):
        call(lambda X, f: X.apply_force(f), X, jnp.zeros((3, 6)))
    with raises(TypeError, "m: dtype float16", "Plx.E's dtype"):
        call(lambda X, m: X.apply_motion(m), X, jnp.zeros((2, 6), jnp.float16))
    with raises(TypeError, "X:", "Plx or Plxb", "ndarray"):
        RigidBodyInertia(jnp.zeros(10)).transform(np.eye(3))
    with raises(ValueError, "batch shapes do not broadcast", "inertia", "X"):
        call(lambda b, X: b.transform(X), RigidBodyInertia(jnp.zeros((3, 10))), X)
    with raises(TypeError, "Plx.compose", "Plxb", "to_plx()"):
        call(lambda X, Y: X @ Y, X, Plxb(E, r))


def test_as_float_array_fast_path_keeps_its_errors():
    x = jnp.zeros((4, 3))
    assert as_float_array(x, "x", (3,)) is x  # no copy, no conversion
    with raises(ValueError, "x", "(..., 3, 3)", "(4, 3)"):
        as_float_array(x, "x", (3, 3))
    with raises(ValueError, "x", "(..., 3)", "()"):
        as_float_array(jnp.zeros(()), "x", (3,))
    with raises(TypeError, "x", "floating-point", "int32"):
        as_float_array(jnp.zeros(3, jnp.int32), "x", (3,))
    with raises(TypeError, "x", "floating-point", "bool"):
        as_float_array(jnp.zeros(3, bool), "x", (3,))


def test_broadcast_batch_fast_path():
    assert broadcast_batch("a", (2, 3), "b", (2, 3)) == (2, 3)
    assert broadcast_batch("a", [2, 3], "b", (2, 3)) == (2, 3)
    assert broadcast_batch("a", (2, 1), "b", (3,)) == (2, 3)
    with raises(ValueError, "a has batch shape (2,)", "b has batch shape (3,)"):
        broadcast_batch("a", (2,), "b", (3,))


def test_kernels_under_vmap_and_grad():
    E, r = _plx((5,), 6)
    m = jnp.asarray(np.random.default_rng(7).normal(size=(5, 6)), E.dtype)
    X = Plx(E, r)
    batched = X.apply_motion(m)
    mapped = jax.vmap(lambda X, m: X.apply_motion(m))(X, m)
    np.testing.assert_allclose(np.asarray(mapped), np.asarray(batched), rtol=1e-6, atol=1e-6)
    # d/dm of sum(X m) = Xᵀ 1 (the motion matrix is linear in m)
    g = jax.grad(lambda m: jnp.sum(X.apply_motion(m)))(m)
    want = np.swapaxes(np.asarray(X.as_matrix()), -1, -2) @ np.ones(6)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-5)
    # grad through compose and the inertia transform (finite on every input)
    p = jnp.asarray(np.random.default_rng(8).normal(size=(5, 10)), E.dtype)

    def loss(E, r, p):
        Z = Plx(E, r) @ Plx(E, r)
        return jnp.sum(RigidBodyInertia(p).transform(Z).params ** 2)

    grads = jax.grad(loss, argnums=(0, 1, 2))(E, r, p)
    assert all(bool(jnp.all(jnp.isfinite(gi))) for gi in grads)
