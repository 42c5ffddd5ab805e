"""``with_derivative``: the value of the optimum, the derivative of the step, the step traced
only when differentiated."""

import jax
import jax.numpy as jnp
import numpy as np

from spatialjax.identification.fitting.implicit import with_derivative


def _step(a, b):
    """A step of the form the fits pass: zero at the optimum ``x* = b / a``."""
    return -(a * jax.lax.stop_gradient(b / a) - b) / a


def test_value_is_the_value_and_derivative_is_the_steps():
    # x*(a, b) = b / a; its derivative is what the implicit function theorem gives
    def solved(a, b):
        x = jax.lax.stop_gradient(b / a)
        return with_derivative(x, _step, a, b)

    a, b = 2.0, 3.0
    assert float(jax.jit(solved)(a, b)) == 1.5
    da, db = jax.grad(solved, argnums=(0, 1))(a, b)
    np.testing.assert_allclose([da, db], [-b / a**2, 1.0 / a], rtol=1e-12)
    # forward mode, batched
    a_s, b_s = jnp.array([1.0, 2.0, 4.0]), jnp.array([1.0, 3.0, 2.0])
    jac = jax.vmap(jax.jacfwd(solved, argnums=1))(a_s, b_s)
    np.testing.assert_allclose(jac, 1.0 / a_s, rtol=1e-12)


def test_value_keeps_its_own_derivative():
    # value + step: a value that is not held constant keeps its derivative
    f = lambda x: with_derivative(x**2, lambda y: 3.0 * y, x)  # noqa: E731
    np.testing.assert_allclose(jax.grad(f)(2.0), 2 * 2.0 + 3.0)


def test_step_is_not_traced_without_a_derivative():
    calls = []

    def step(a):
        calls.append(1)
        return jnp.linalg.solve(a, jnp.ones(a.shape[0]))

    a = jnp.eye(3) * 2.0
    out = jax.jit(lambda a: with_derivative(jnp.zeros(3), step, a))(a)
    np.testing.assert_array_equal(out, np.zeros(3))
    assert calls == []
    text = jax.jit(lambda a: with_derivative(jnp.zeros(3), step, a)).lower(a).as_text()
    assert "lapack" not in text.lower() and "solve" not in text.lower()
    jax.grad(lambda a: with_derivative(jnp.zeros(3), step, a).sum())(a)
    assert calls
