"""Top-level fits pad their samples to ``padded_samples`` with zero-weight rows.

Logs of similar length then share one compiled fit, least squares and
identifiability (a second log of another length runs at warm speed), and a
zero-weight row changes neither the normal equations nor the residuals nor the
noise estimate's degrees of freedom, so the results are those of the data.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import robots_dir

import spatialjax.identification as sid
import spatialjax.multibody as mb
from spatialjax.identification.fitting import identifiability as ident_module
from spatialjax.identification.fitting import robot_fit
from spatialjax.identification.fitting.inputs import padded_samples


@pytest.fixture(scope="module")
def ur5():
    robots = robots_dir()
    if robots is None:
        pytest.skip("needs example-robot-data (the test extra)")
    return mb.Model.from_urdf(robots / "ur_description/urdf/ur5_robot.urdf", dtype="float64")


def _data(model, n, seed=0):
    rng = np.random.default_rng(seed)
    q, v, a = (rng.uniform(-1.5, 1.5, (n, model.nv)) for _ in range(3))
    Y = np.asarray(mb.joint_torque_regressor(model, q, v, a))
    pi = np.asarray(model.inertia.params).reshape(-1) * rng.uniform(0.9, 1.1, 10 * model.nv)
    tau = Y @ pi + 0.05 * rng.standard_normal((n, model.nv))
    return jnp.asarray(Y), jnp.asarray(tau)


def test_padded_samples_adds_a_quarter_or_15_samples_at_most():
    for n in [1, 15, 16, 17, 100, 501, 511, 512, 513, 596, 5000, 123457]:
        m = padded_samples(n)
        assert n <= m <= max(n + 15, 1.25 * n)
        assert padded_samples(m) == m  # a padded length is its own bucket


def test_logs_of_similar_length_share_one_program(ur5):
    before = (robot_fit._fit_batch.cache_size(), robot_fit._lstsq_batch.cache_size(),
              ident_module._ident.cache_size())  # fmt: skip
    for n in (490, 500, 509):  # all padded to 512
        Y, tau = _data(ur5, n, seed=n)
        sid.fit_torques(Y, tau, prior=ur5.inertia)
        sid.least_squares_torques(Y, tau)
        sid.identifiability(Y, prior=ur5.inertia)
    after = (robot_fit._fit_batch.cache_size(), robot_fit._lstsq_batch.cache_size(),
             ident_module._ident.cache_size())  # fmt: skip
    assert all(a - b <= 1 for a, b in zip(after, before, strict=True)), (before, after)


def test_a_second_length_in_the_bucket_compiles_nothing(ur5, compiles):
    """NumPy data of another length in the same bucket run the first length's programs and
    nothing else: the checks, the padding, the weights and the split of the solution are
    NumPy or inside the programs, not eager JAX operations (one small program per shape)."""
    rng = np.random.default_rng(7)
    nv = ur5.nv
    for k, n in enumerate((481, 497, 503)):  # all padded to 512
        Y, tau = (np.asarray(a) for a in _data(ur5, n, seed=n))
        F = rng.normal(size=(n, nv, 2 * nv))
        compiles.clear()
        jax.block_until_ready(sid.fit_torques(Y, tau, prior=ur5.inertia, extra=F, gamma=0.1))
        jax.block_until_ready(sid.least_squares_torques(Y, tau, extra=F, weights=np.ones(nv)))
        jax.block_until_ready(sid.identifiability(Y, extra=F, prior=ur5.inertia))
        if k:
            assert compiles == [], f"{n} samples: {compiles}"
        else:  # the three programs (and the check of their compile options), nothing eager
            programs = {"jit(_fit_batch_impl)", "jit(_lstsq_impl)", "jit(_ident_impl)"}
            assert set(compiles) <= programs | {"jit(negative)"}, compiles


def test_padding_leaves_every_result_unchanged(ur5):
    """The padded call against the program on the data as they are (500 samples, not a
    bucket), default weights: the noise estimate counts the data's rows, not the padding."""
    n, nv = 500, ur5.nv
    assert padded_samples(n) > n
    Y, tau = _data(ur5, n)
    res = sid.fit_torques(Y, tau, prior=ur5.inertia)
    E = jnp.zeros((n, nv, 0))
    pi0 = jnp.asarray(ur5.inertia.params)
    solver = sid.InteriorPoint()
    ref = robot_fit._fit_batch.plain(
        Y, E, tau, jnp.ones((n, nv)), pi0, jnp.zeros(()), jnp.asarray([False, False]),
        jnp.zeros(0, bool), jnp.zeros(0), jnp.zeros(0), jnp.asarray(float(n * nv)),
        batch=(), rtol=solver.rtol_for(jnp.float64), max_iters=solver.max_iters,
        prior_spread=robot_fit.PRIOR_SPREAD, axes=(False,) * 6, sample_weights=False,
    )  # fmt: skip
    for name in ("objective", "residual", "noise_std", "rank", "condition_number", "gamma"):
        np.testing.assert_allclose(getattr(res, name), getattr(ref, name), rtol=1e-9, err_msg=name)
    np.testing.assert_allclose(res.inertia.params, ref.inertia.params, rtol=1e-7, atol=1e-9)
    # least squares: NumPy's on the unpadded rows
    x, _ = sid.least_squares_torques(Y, tau)
    X = np.asarray(Y).reshape(n * nv, -1)
    x_np = np.linalg.lstsq(X, np.asarray(tau).reshape(-1), rcond=None)[0]
    np.testing.assert_allclose(X @ np.asarray(x), X @ x_np, rtol=1e-9, atol=1e-9)
    # identifiability: the rank and the data's condition number of the unpadded rows
    info = sid.identifiability(Y, prior=ur5.inertia)
    assert int(info.rank) == np.linalg.matrix_rank(X / np.linalg.norm(X, axis=0).clip(1e-300))


def test_traced_calls_are_not_padded(ur5):
    """Under the caller's jit the shapes are the caller's: no padding, the same values."""
    Y, tau = _data(ur5, 500)
    x_top, _ = sid.least_squares_torques(Y, tau)
    x_jit, _ = jax.jit(sid.least_squares_torques)(Y, tau)
    np.testing.assert_allclose(x_jit, x_top, rtol=1e-8, atol=1e-10)
