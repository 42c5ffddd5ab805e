"""fit: batch axes, vmap, float32, the solver object, weights, gradients, status, bad input.

Complements test_identification.py (noiseless recovery and method agreement,
consistency on noisy data, rank deficiency). Every fit here uses the shapes of
``_fit_cases`` (3 bodies x 24 samples) so compiled programs are shared.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _fit_cases import (
    N_BODIES,
    N_SAMPLES,
    box_prior,
    fit_vmapped,
    fit_vmapped_grad,
    probe,
    problem,
    regressor_of,
)
from helpers import raises_argument

import spatialjax as sj
from spatialjax import ArgumentError, ArgumentTypeError
from spatialjax.identification import (
    FitStatus,
    IdentifyError,
    IdentifyTypeError,
    InteriorPoint,
    fit,
)


def _two_copies(f, w, prior_params, gamma, *, reverse=True):
    """``(3, 2, ...)`` NumPy copies of ``f``, ``w``, prior parameters and ``γ`` for fit_vmapped.

    Each body twice, the second copy from the reversed batch (the same body where
    ``reverse=False``); ``Y (3, N, 6, 10)`` is broadcast against the inner axis (2,).
    """

    def two(x):
        x = np.asarray(x)
        return np.stack([x, x[::-1] if reverse else x], axis=1)

    f2 = two(f)
    return f2, np.broadcast_to(np.asarray(w), f2.shape).copy(), two(prior_params), two(gamma)


@pytest.mark.slow
def test_defaults_recover_truth_from_noiseless_data(rng):
    # default prior = the (consistent) least-squares body = the truth, so the default γ > 0
    # does not bias the fit
    truth, Y, f, w = problem(rng, noise=0.0)
    res = fit(Y, f, weights=w)  # InteriorPoint() is the default solver
    assert bool(jnp.all(res.converged)) and bool(jnp.all(res.gamma > 0))
    assert bool(jnp.all(res.status == FitStatus.CONVERGED))
    assert res.status.dtype == jnp.int32
    assert bool(jnp.all(res.consistency.fully_consistent))
    assert float(jnp.max(sj.geodesic_distance(truth, res.inertia))) <= 1e-6


@pytest.mark.slow
def test_vmap_and_broadcast_leading_axes_match_the_flat_batch(rng):
    truth, Y, f, w = problem(rng, noise=1.0)
    prior = box_prior(truth.mass * 1.3)
    gamma = jnp.asarray([0.5, 0.05, 0.005])
    flat = fit(Y, f, weights=w, prior=prior, gamma=gamma)
    # (3, 2, ...): each body twice, the second copy with the wrenches, prior and γ of the
    # reversed batch; Y (N, 6, 10) is broadcast against the inner axis (2,)
    res = fit_vmapped(Y, *_two_copies(f, w, prior.params, gamma))
    assert res.inertia.batch_shape == (3, 2)
    assert res.objective.shape == res.converged.shape == res.status.shape == (3, 2)
    np.testing.assert_allclose(res.inertia.params[:, 0], flat.inertia.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.objective[:, 0], flat.objective, rtol=1e-9)
    # body i's regressor with body (2 - i)'s data: all bodies share one trajectory, so
    # this is body (2 - i)'s fit again
    np.testing.assert_allclose(
        res.inertia.params[:, 1], flat.inertia.params[::-1], rtol=1e-7, atol=1e-9
    )
    assert bool(jnp.all(res.converged))


@pytest.mark.slow  # compile time; CI's second step
def test_float32_in_float32_out_and_consistent(rng):
    truth, Y, f, w = problem(rng, noise=1.0, dtype=jnp.float32)
    res = fit(Y, f, weights=w)
    for x in (res.inertia.params, res.objective, res.residual, res.gamma, res.condition_number):
        assert x.dtype == jnp.float32
    assert bool(jnp.all(res.consistency.fully_consistent))
    assert bool(jnp.all(res.consistency.min_eig_pseudo_inertia > 0))
    ref = fit(Y.astype(float), f.astype(float), weights=w.astype(float))
    np.testing.assert_allclose(res.objective, ref.objective, rtol=1e-3)


@pytest.mark.slow  # compile time; CI's second step
def test_the_solver_object_sets_the_tolerance_and_the_iteration_cap(rng):
    truth, Y, f, w = problem(rng, noise=1.0)
    kw = dict(weights=w, prior=box_prior(truth.mass * 1.3), gamma=0.01)  # a start off the optimum
    a = fit(Y, f, **kw)
    assert bool(jnp.all(a.converged))
    # a looser tolerance stops earlier, at most rtol |F| (half the Newton decrement) above
    b = fit(Y, f, **kw, solver=InteriorPoint(rtol=1e-4))
    assert bool(jnp.all(b.converged))
    assert bool(jnp.all(b.iterations <= a.iterations))
    gap = (b.objective - a.objective) / jnp.abs(a.objective)
    assert float(jnp.max(gap)) <= 1e-4 and float(jnp.min(gap)) >= -1e-12, gap
    # the cap: stopped short, NOT_CONVERGED, yet every body consistent
    c = fit(Y, f, **kw, solver=InteriorPoint(max_iters=2))
    assert bool(jnp.all(c.status == FitStatus.NOT_CONVERGED)) and not bool(jnp.any(c.converged))
    assert bool(jnp.all(c.iterations == 2))
    assert bool(jnp.all(c.consistency.fully_consistent))
    assert bool(jnp.all(c.objective > a.objective))


def test_the_solver_object_validates_its_options():
    assert InteriorPoint() == InteriorPoint(rtol=None, max_iters=300)
    assert hash(InteriorPoint(rtol=1e-8)) == hash(InteriorPoint(rtol=1e-8))  # static jit args
    assert InteriorPoint(max_iters=np.int64(300)) == InteriorPoint()  # NumPy ints are ints too
    for make, match in (
        (lambda: InteriorPoint(rtol=2.0), r"InteriorPoint: rtol: expected a float in \(0, 1\)"),
        (lambda: InteriorPoint(rtol=0.0), r"InteriorPoint: rtol: expected a float in \(0, 1\)"),
        (lambda: InteriorPoint(rtol=float("nan")), r"rtol: expected a float in \(0, 1\)"),
        (lambda: InteriorPoint(max_iters=0), r"InteriorPoint: max_iters: expected an int ≥ 1"),
        (lambda: InteriorPoint(max_iters=2.5), r"InteriorPoint: max_iters: expected an int ≥ 1"),
    ):
        with pytest.raises(ValueError, match=match):
            make()


@pytest.mark.slow  # compile time; CI's second step
def test_weights_broadcast_like_numpy(rng):
    # regression: weights had to be (6,), (N, 6) or (..., N, 6); per-sample (N, 1) and scalar
    # weights were refused. Any shape broadcastable to f's (..., N, 6) now works.
    truth, Y, f, w = problem(rng, noise=1.0)
    per_sample = jnp.asarray(rng.uniform(0.5, 2.0, size=(N_SAMPLES, 1)))
    tiled = jnp.broadcast_to(per_sample * w, f.shape)
    a = fit(Y, f, weights=per_sample * w)  # (N, 6)
    b = fit(Y, f, weights=tiled)  # (3, N, 6)
    np.testing.assert_allclose(a.inertia.params, b.inertia.params, rtol=1e-12, atol=1e-15)
    c = fit(Y, f, weights=per_sample)  # (N, 1)
    d = fit(Y, f, weights=jnp.broadcast_to(per_sample, f.shape))
    np.testing.assert_allclose(c.inertia.params, d.inertia.params, rtol=1e-12, atol=1e-15)
    # a scalar weight scales the objective only (the default γ is unit-free); the optimum to
    # the solver's tolerance (rtol 1e-12 on F leaves the weakest direction ~1e-9 of the largest)
    e = fit(Y, f, weights=2.0)
    g = fit(Y, f)
    np.testing.assert_allclose(e.inertia.params, g.inertia.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(e.objective, 2.0 * g.objective, rtol=1e-7)
    for bad in ((5, 6), (N_SAMPLES, 3), (7,)):
        with pytest.raises(ValueError, match=r"weights: expected a shape broadcastable to f"):
            fit(Y, f, weights=jnp.ones(bad))
    with pytest.raises(ValueError, match=r"Y and f has batch shape \(3,\), weights has .*\(2,\)"):
        fit(Y, f, weights=jnp.ones((2, N_SAMPLES, 6)))


_fit_shared_jit = jax.jit(lambda Y, f, w: fit(Y, f, weights=w))


@pytest.mark.slow
def test_shared_regressor_and_weights_give_the_per_body_fit(rng):
    # Y (N, 6, 10) and w (6,) shared by every body are factorised once (QR of W^½ Y) instead
    # of broadcast and factorised per body: the same fits as with per-body copies
    truth, Y, f, w = problem(rng, noise=1.0)
    shared = _fit_shared_jit(Y[0], f, w)
    copies = fit(Y, f, weights=jnp.broadcast_to(w, f.shape))  # per-body Y and weights
    np.testing.assert_allclose(shared.inertia.params, copies.inertia.params, rtol=1e-12, atol=0)
    np.testing.assert_allclose(shared.objective, copies.objective, rtol=1e-12)
    np.testing.assert_array_equal(shared.status, copies.status)
    # a body with non-finite data is reported and leaves the shared data and the others alone
    f_nan = f.at[1, 3, 2].set(jnp.nan)
    res = _fit_shared_jit(Y[0], f_nan, w)
    np.testing.assert_array_equal(res.status, [FitStatus.CONVERGED, FitStatus.NONFINITE_INPUT,
                                               FitStatus.CONVERGED])  # fmt: skip
    assert bool(jnp.all(jnp.isnan(res.inertia.params[1])))
    np.testing.assert_array_equal(res.inertia.params[::2], shared.inertia.params[::2])


def test_default_prior_is_least_squares_when_that_is_consistent(rng):
    truth, Y, f, w = problem(rng, noise=0.01)
    res = fit(Y, f, weights=w)
    Yw = np.asarray(Y * jnp.sqrt(w)[:, None]).reshape(N_BODIES, -1, 10)
    fw = np.asarray(f * jnp.sqrt(w)).reshape(N_BODIES, -1)
    ls = np.stack([np.linalg.lstsq(Yw[i], fw[i], rcond=None)[0] for i in range(N_BODIES)])
    assert bool(
        jnp.all(sj.physical_consistency(sj.RigidBodyInertia(jnp.asarray(ls))).fully_consistent)
    )
    np.testing.assert_allclose(res.prior.params, ls, rtol=1e-8, atol=1e-10)
    # data term and regulariser are both minimal at the least-squares body
    np.testing.assert_allclose(res.inertia.params, ls, rtol=1e-6, atol=1e-8)
    assert bool(jnp.all(res.gamma > 0)) and bool(jnp.all(res.converged))


@pytest.mark.slow  # compile time; CI's second step
def test_gradients_in_data_prior_and_gamma_match_finite_differences(rng):
    # reverse mode under jit and vmap (fit_vmapped_grad: the program of the vmap test), in
    # the layout of that test: copy 1 of each body has the reversed batch's f, prior and γ
    truth, Y, f, w = problem(rng, noise=1.0)
    # NumPy on the test's side: eager jnp arithmetic would compile a program per operation
    masses = np.asarray(truth.mass) * 1.1
    gamma = np.full(N_BODIES, 0.5)
    f2, w2, p2, g2 = _two_copies(f, w, box_prior(masses).params, gamma)
    out = fit_vmapped_grad(Y, f2, w2, p2, g2)
    assert bool(jnp.all(out.result.converged))
    # probe: Σ mass (best determined) + Σ (rotational inertia)² (least determined)
    np.testing.assert_allclose(out.probe, probe(out.result.inertia.params), rtol=1e-14)
    grads = tuple(np.asarray(g) for g in (out.grad_f, out.grad_prior, out.grad_gamma))
    assert all(np.all(np.isfinite(g)) and np.abs(g).max() > 0 for g in grads)

    def value(f2, p2, g2):
        return float(fit_vmapped_grad(Y, f2, w2, p2, g2).probe)

    d_masses = rng.normal(size=(N_BODIES, 2))
    # steps large enough that the solver's tolerance (1e-10 relative) does not dominate;
    # a box prior is linear in its mass: d · box_prior(1).params is the masses direction d
    eps_m = 1e-4 * np.max(np.abs(masses))
    cases = (
        (0, rng.normal(size=f2.shape), 1e-2),  # data
        (1, d_masses[..., None] * np.asarray(box_prior(1.0).params), eps_m),  # prior: masses
        (1, rng.normal(size=p2.shape) * np.abs(p2).max(-1, keepdims=True), 1e-4),  # prior: any
        (2, rng.normal(size=g2.shape), 1e-4 * np.max(np.abs(g2))),  # γ
    )
    args = (f2, p2, g2)

    def step(i, d, h):
        at = list(args)
        at[i] = args[i] + h * d
        return value(*at)

    for i, d, eps in cases:
        # fourth-order central difference: truncation error O(eps⁴)
        fd = 8 * (step(i, d, eps) - step(i, d, -eps)) - step(i, d, 2 * eps) + step(i, d, -2 * eps)
        fd = fd / (12 * eps)
        np.testing.assert_allclose(np.sum(grads[i] * d), fd, rtol=2e-3, atol=1e-8)


@pytest.mark.slow  # compile time; CI's second step
def test_invalid_values_under_jit_give_nan_and_a_status_not_silent_nan(rng):
    # regression: under jit, NaN data, negative weights, γ < 0 and an inconsistent prior
    # came back as NaN parameters (or, for γ < 0, a "converged" fit) with no reason given
    truth, Y, f, w = problem(rng, noise=1.0)
    prior = box_prior(truth.mass * 1.3).params
    gamma = jnp.full((N_BODIES,), 0.05)
    f2, w2, p2, g2 = _two_copies(f, w, prior, gamma, reverse=False)
    good = fit_vmapped(Y, f2, w2, p2, g2)
    assert bool(jnp.all(good.status == FitStatus.CONVERGED))
    # one invalid input per (body, copy), copy (2, 1) left valid
    f2[0, 0, 3, 2] = np.nan
    w2[0, 1, 5, 0] = -1.0
    p2[1, 0, 0] = -1.0  # negative mass: J0 not positive definite
    g2[1, 1] = -0.1
    p2[2, 0, 4] = np.inf
    res = fit_vmapped(Y, f2, w2, p2, g2)
    want = np.array(
        [
            [FitStatus.NONFINITE_INPUT, FitStatus.INVALID_INPUT],
            [FitStatus.INVALID_INPUT, FitStatus.INVALID_INPUT],
            [FitStatus.NONFINITE_INPUT, FitStatus.CONVERGED],
        ]
    )
    np.testing.assert_array_equal(res.status, want)
    np.testing.assert_array_equal(res.converged, want == FitStatus.CONVERGED)
    bad = want != FitStatus.CONVERGED
    assert bool(jnp.all(jnp.isnan(res.inertia.params[bad])))
    assert bool(jnp.all(jnp.isnan(res.objective[bad])))
    # invalid bodies neither hold up nor perturb the valid one
    assert int(jnp.max(res.iterations[bad])) <= 3, res.iterations
    np.testing.assert_allclose(res.inertia.params[2, 1], good.inertia.params[2, 1], rtol=1e-12)
    assert "negative weight" in FitStatus.describe(res.status[0, 1])


@pytest.mark.slow  # compile time; CI's second step
def test_unexcited_data_with_gamma_zero_is_undetermined_not_nan(rng):
    # regression: fit(..., gamma=0) on an all-zero regressor returned NaN with no reason;
    # without excitation nothing determines the body unless a prior and γ > 0 do
    truth, Y, f, w = problem(rng, noise=0.0)
    Z = jnp.zeros_like(Y)
    for gamma in (0.0, None):  # explicit γ = 0 and the default γ
        # concrete data: refused where the user called, naming the body (issue 32)
        with pytest.raises(
            ValueError,
            match=r"Y: no excitation for body \(0,\): every "
            r"regressor row is zero or weighted 0",
        ):
            fit(Z, jnp.zeros_like(f), weights=w, gamma=gamma)
        # traced data (under jit): the status says it, the parameters are NaN
        res = jax.jit(lambda Z, f, w, g=gamma: fit(Z, f, weights=w, gamma=g))(
            Z, jnp.zeros_like(f), w
        )
        np.testing.assert_array_equal(res.status, FitStatus.UNDETERMINED)
        assert not bool(jnp.any(res.converged))
        assert bool(jnp.all(jnp.isnan(res.inertia.params)))
        assert bool(jnp.all(res.condition_number == jnp.inf))  # not 0/0 = NaN
    # with a prior and γ > 0 the prior decides: the fit is the prior itself, also with the
    # default γ (issue 23 reported NaN there), for a zero regressor, zero wrenches or zero
    # weights
    prior = box_prior(truth.mass)
    data = (
        (Z, jnp.zeros_like(f), w),
        (Z, f, w),
        (Y, f, jnp.zeros_like(w)),
    )
    for (Yd, fd, wd), gamma in itertools.product(data, (1.0, None)):
        res = fit(Yd, fd, weights=wd, prior=prior, gamma=gamma)
        np.testing.assert_array_equal(res.status, FitStatus.CONVERGED)
        np.testing.assert_allclose(res.inertia.params, prior.params, rtol=1e-7, atol=1e-9)


def test_no_excitation_and_no_prior_is_a_named_error(rng):
    """The single-body fit on all-zero data with the default γ and no prior (it returned NaN).

    Zero regressor rows, or zero weights, for one body of a batch: the error names that body;
    a prior makes the same data fine (the prior decides, see above).
    """
    truth, Y, f, w = problem(rng, noise=0.0)
    # the verdict says why and what to do (pass a prior or data that move the body)
    with raises_argument(IdentifyError, "Y", match=r"without a prior nothing determines the body"):
        fit(jnp.zeros_like(Y[0]), jnp.zeros_like(f[0]))
    with raises_argument(IdentifyError, "Y"):
        fit(Y, f, weights=jnp.broadcast_to(w, f.shape).at[1].set(0.0))
    with raises_argument(IdentifyError, "Y"):
        fit(Y.at[2].set(0.0), f)
    res = fit(Y.at[2].set(0.0), f, prior=box_prior(truth.mass))
    assert bool(jnp.all(res.converged))


def test_bad_input_is_rejected_with_clear_messages(rng):
    truth, Y, f, w = problem(rng, noise=1.0)
    with raises_argument(IdentifyError, "Y"):
        fit(Y[0, 0], f[0, 0])
    with raises_argument(IdentifyError, "f"):
        fit(Y, f[:, :23])
    with raises_argument(ArgumentError, "f"):
        fit(Y, f[:2])
    with raises_argument(IdentifyError, "weights"):
        fit(Y, f, weights=jnp.ones((5, 6)))
    with raises_argument(ArgumentError, "weights"):
        fit(Y, f, weights=w.at[3].set(-1.0))
    with raises_argument(ArgumentTypeError, "f"):
        fit(Y, f.astype(jnp.float32))
    with raises_argument(IdentifyError, "gamma"):
        fit(Y, f, gamma=-1.0)
    with raises_argument(ArgumentError, "gamma"):
        fit(Y, f, gamma=jnp.ones(4))
    with raises_argument(IdentifyTypeError, "prior"):
        fit(Y, f, prior=truth.params)
    bad = sj.RigidBodyInertia(truth.params.at[1, 0].set(-1.0))
    with raises_argument(IdentifyError, "prior"):
        fit(Y, f, prior=bad)
    with raises_argument(ArgumentError, "prior"):
        fit(Y, f, prior=box_prior(jnp.ones(2)))
    # no string forms of the solver, no loose solver keywords (removed before 1.0)
    for bad in ("interior_point", "barrier", 1e-8):
        with raises_argument(IdentifyTypeError, "solver"):
            fit(Y, f, solver=bad)
    for kw in ("weight", "method", "rtol", "max_iters", "optimizer"):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{kw}'"):
            fit(Y, f, **{kw: 1})


def test_non_finite_and_out_of_range_values_are_rejected_eagerly(rng):
    # regression: an unbatched inconsistent prior slipped through (np.argwhere on a 0-d
    # mask found nothing) and the fit came back all NaN; NaN data and NaN weights passed
    truth, Y, f, w = problem(rng, noise=1.0)
    one = sj.RigidBodyInertia(truth.params[0].at[0].set(-1.0))
    with raises_argument(IdentifyError, "prior"):
        fit(Y, f, prior=one)
    with raises_argument(ArgumentError, "Y"):
        fit(Y.at[1, 2, 3, 4].set(jnp.nan), f)
    with raises_argument(ArgumentError, "f"):
        fit(Y, f.at[0, 5, 1].set(jnp.inf))
    with raises_argument(ArgumentError, "weights"):
        fit(Y, f, weights=w.at[2].set(jnp.nan))
    with raises_argument(ArgumentError, "prior"):
        fit(Y, f, prior=sj.RigidBodyInertia(truth.params.at[0, 4].set(jnp.nan)))
    for gamma in (jnp.nan, jnp.inf, -1e-9):
        with raises_argument(IdentifyError, "gamma"):
            fit(Y, f, gamma=gamma)


@pytest.mark.slow
def test_translation_only_excitation_with_gamma_zero_reports_undetermined(rng):
    # regression: with γ = 0 and only linear motion the rotational inertia is unexcited;
    # the former log-Cholesky solver returned λ_min(J) ≈ 0 with converged=True
    truth, _, _, w = problem(rng, noise=0.0)
    t = np.arange(N_SAMPLES)[:, None] * 0.12
    freq = np.array([1.0, 1.3, 1.7])
    v = np.zeros((N_SAMPLES, 6))
    a = np.zeros((N_SAMPLES, 6))
    v[:, 3:], a[:, 3:] = np.sin(freq * t), freq * np.cos(freq * t)
    Y = regressor_of(jnp.asarray(v), jnp.asarray(a))
    f = jnp.einsum("nsij,nj->nsi", Y, truth.params)
    res = fit(Y, f, weights=w, gamma=0.0)
    np.testing.assert_array_equal(res.status, FitStatus.UNDETERMINED)
    assert not bool(jnp.any(res.converged))
    assert bool(jnp.all(res.condition_number == jnp.inf))
    assert bool(jnp.all(res.consistency.fully_consistent))
    # mass and first moment are excited and still recovered
    np.testing.assert_allclose(res.inertia.params[:, :4], truth.params[:, :4], rtol=1e-6)
    # the default γ > 0 decides the unexcited directions: a unique, certified optimum
    res = fit(Y, f, weights=w)
    assert bool(jnp.all(res.converged)) and bool(jnp.all(res.consistency.fully_consistent))
