"""``_smallmat.solve_spd_unrolled``: the written-out Cholesky solve of one-state forward dynamics.

Against NumPy's LAPACK solve for every size it is used for (1 to ``SOLVE_UNROLL_MAX``), its
flag on matrices that are not positive definite or not finite, and its derivatives: equal to
those of ``jnp.linalg.solve`` on a positive definite matrix, finite on one that is not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax import _smallmat as smallmat


def _spd(n, rng, cond=1e3):
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.geomspace(1.0, 1.0 / cond, n)) @ Q.T


@pytest.mark.parametrize("n", range(1, smallmat.SOLVE_UNROLL_MAX + 1))
def test_solves_like_lapack(n):
    rng = np.random.default_rng(n)
    H, b = _spd(n, rng), rng.standard_normal(n)
    x, ok = jax.jit(smallmat.solve_spd_unrolled)(jnp.asarray(H), jnp.asarray(b))
    assert bool(ok)
    np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-11, atol=1e-12)
    # float32: within condition number (1e3) x a few float32 epsilons of the largest entry
    x32, ok32 = smallmat.solve_spd_unrolled(jnp.asarray(H, "float32"), jnp.asarray(b, "float32"))
    assert bool(ok32) and x32.dtype == jnp.float32
    ref = np.linalg.solve(H, b)
    np.testing.assert_allclose(x32, ref, rtol=0, atol=1e3 * 1e-6 * np.abs(ref).max())


def test_flags_matrices_without_a_cholesky_factor():
    rng = np.random.default_rng(0)
    H = _spd(6, rng)
    b = jnp.asarray(rng.standard_normal(6))
    indefinite = H - 2.0 * np.outer(np.eye(6)[3], np.eye(6)[3])  # pivot 3 negative
    singular = H.copy()
    singular[:, 5] = singular[5, :] = 0.0  # last pivot zero
    infinite = H.copy()
    infinite[5, 5] = np.inf
    nan = H.copy()
    nan[0, 1] = nan[1, 0] = np.nan
    for bad in (indefinite, singular, infinite, nan):
        x, ok = smallmat.solve_spd_unrolled(jnp.asarray(bad), b)
        assert not bool(ok)
    x, ok = smallmat.solve_spd_unrolled(jnp.asarray(indefinite), b)
    assert bool(jnp.all(jnp.isfinite(x)))  # the replaced pivot keeps x finite for the mask


def test_derivatives_match_lapack_and_stay_finite_when_not_positive_definite():
    rng = np.random.default_rng(1)
    H, b = jnp.asarray(_spd(7, rng)), jnp.asarray(rng.standard_normal(7))
    w = jnp.asarray(rng.standard_normal(7))

    # H enters as (S + Sᵀ)/2: ours reads H's lower triangle, LAPACK's solve all of it; on
    # symmetric matrices (the mass matrix) the two derivatives agree
    def ours(S, b):
        return w @ smallmat.solve_spd_unrolled((S + S.T) / 2, b)[0]

    def lapack(S, b):
        return w @ jnp.linalg.solve((S + S.T) / 2, b)

    for got, want in zip(jax.grad(ours, (0, 1))(H, b), jax.grad(lapack, (0, 1))(H, b),
                         strict=True):  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)

    def masked(H, b):  # how forward dynamics uses it
        x, ok = smallmat.solve_spd_unrolled(H, b)
        return jnp.nansum(jnp.where(ok, x, jnp.nan))

    bad = H.at[2, 2].set(-1.0)
    gH, gb = jax.grad(masked, (0, 1))(bad, b)
    assert bool(jnp.all(jnp.isfinite(gH))) and bool(jnp.all(jnp.isfinite(gb)))
    assert not bool(jnp.any(gH)) and not bool(jnp.any(gb))  # the masked state contributes 0
