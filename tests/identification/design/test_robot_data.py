"""Robot data for identification: excitation, perturbed bodies, simulated logs, files, filtering.

References come from closed forms (derivatives of sinusoids, the variance of a
central difference of white noise), Pinocchio's RNEA, and SciPy's frequency
response; none from the code under test.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument, robots_dir

import spatialjax as sj
from spatialjax import ArgumentTypeError
from spatialjax import identification as sid
from spatialjax import multibody as mb
from spatialjax.identification import IdentifyError, IdentifyTypeError, LogError

ROBOTS = robots_dir()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")


def _panda(locked=True):
    path = str(ROBOTS / "panda_description/urdf/panda.urdf")
    return path, mb.Model.from_urdf(
        path, locked_joints=dict.fromkeys(FINGERS, 0.0) if locked else None
    )


# ------------------------------------------------------------------ Fourier series
def _closed_form(a, b, q0, f, t):
    """Per-harmonic NumPy loops (Swevers et al. 1997, eq. 9 and its derivatives)."""
    n, H = a.shape
    q = np.tile(q0, (t.size, 1)).astype(np.float64)
    dq = np.zeros((t.size, n))
    ddq = np.zeros((t.size, n))
    for j in range(n):
        for l in range(1, H + 1):  # noqa: E741
            w = 2 * np.pi * f * l
            q[:, j] += a[j, l - 1] / w * np.sin(w * t) - b[j, l - 1] / w * np.cos(w * t)
            dq[:, j] += a[j, l - 1] * np.cos(w * t) + b[j, l - 1] * np.sin(w * t)
            ddq[:, j] += -a[j, l - 1] * w * np.sin(w * t) + b[j, l - 1] * w * np.cos(w * t)
    return q, dq, ddq


#: fourier_trajectory jitted: one program per shape and dtype (eagerly each call compiles
#: ~20 small ones); its input checks are shape checks and run while tracing, and the bad
#: inputs are tested eagerly below
_fourier = jax.jit(sid.fourier_trajectory)


def test_fourier_single_harmonic_closed_form():
    # a = 1, b = 0, one harmonic: q = sin(ωt)/ω, dq = cos(ωt), ddq = −ω sin(ωt)
    t = np.linspace(0.0, 3.0, 301)
    w = 2 * np.pi * 0.7
    q, dq, ddq = _fourier(np.ones((1, 1)), np.zeros((1, 1)), np.zeros(1), 0.7, t)
    np.testing.assert_allclose(q[:, 0], np.sin(w * t) / w, atol=1e-14)
    np.testing.assert_allclose(dq[:, 0], np.cos(w * t), atol=1e-14)
    np.testing.assert_allclose(ddq[:, 0], -w * np.sin(w * t), atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fourier_matches_loop_reference_and_is_periodic(rng, dtype):
    a, b = rng.normal(size=(2, 3, 4))
    q0 = rng.normal(size=3)
    t = np.linspace(0.0, 12.0, 97)
    f = 0.25
    ref = _closed_form(a, b, q0, f, t)
    got = _fourier(*(x.astype(dtype) for x in (a, b, q0)), dtype(f), t.astype(dtype))
    tol = 1e-12 if dtype == np.float64 else 2e-4
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == dtype and g.shape == (97, 3)
        np.testing.assert_allclose(g, r, atol=tol * (1 + np.abs(r).max()))
    # period 1/f: the same values 4 s later
    later = _fourier(a, b, q0, f, t + 1 / f)
    for g, r in zip(later, ref, strict=True):
        np.testing.assert_allclose(g, r, atol=1e-11)


def test_fourier_derivatives_equal_autodiff_and_finite_differences(rng):
    a, b = rng.normal(size=(2, 2, 5))
    q0 = rng.normal(size=2)
    f = 0.3
    t = np.linspace(0.0, 7.0, 41)
    h = 1e-4
    # forward-mode derivative of q (and dq) with respect to time, sample by sample
    pos = lambda s: sid.fourier_trajectory(a, b, q0, f, s)[0]  # noqa: E731
    vel = lambda s: sid.fourier_trajectory(a, b, q0, f, s)[1]  # noqa: E731

    @jax.jit  # one program for the values, both derivatives and the shifted samples
    def run(t):
        q, dq, ddq = sid.fourier_trajectory(a, b, q0, f, t)
        _, dq_ad = jax.jvp(pos, (t,), (jnp.ones_like(t),))
        _, ddq_ad = jax.jvp(vel, (t,), (jnp.ones_like(t),))
        return dq, ddq, dq_ad, ddq_ad, pos(t + h), pos(t - h)

    dq, ddq, dq_ad, ddq_ad, plus, minus = (np.asarray(x) for x in run(t))
    np.testing.assert_allclose(dq, dq_ad, atol=1e-12)
    np.testing.assert_allclose(ddq, ddq_ad, atol=1e-11)
    # central differences, step h: error ≤ h²/6 · max|d³q/dt³| ≤ h²/6 · Σ |coef| ω_l²
    fd = (plus - minus) / (2 * h)
    w = 2 * np.pi * f * np.arange(1, 6)
    bound = h**2 / 6 * np.max((np.abs(a) + np.abs(b)) @ w**2) + 1e-10 / h
    np.testing.assert_allclose(fd, dq, atol=bound)


def test_fourier_batches_broadcast(rng):
    a, b = rng.normal(size=(2, 3, 1, 2, 4))
    q0 = rng.normal(size=(2,))
    t = np.linspace(0, 1, 11)
    q, dq, ddq = _fourier(a, b, q0, 0.5, t)
    assert q.shape == dq.shape == ddq.shape == (3, 1, 11, 2)
    for i in range(3):
        r = _closed_form(a[i, 0], b[i, 0], q0, 0.5, t)
        np.testing.assert_allclose(q[i, 0], r[0], atol=1e-12)
        np.testing.assert_allclose(ddq[i, 0], r[2], atol=1e-12)


def test_fourier_bad_input():
    with raises_argument(IdentifyError, "b"):
        sid.fourier_trajectory(np.ones((2, 3)), np.ones((2, 4)), np.zeros(2), 1.0, np.zeros(3))
    with raises_argument(IdentifyError, "q0"):
        sid.fourier_trajectory(np.ones((2, 3)), np.ones((2, 3)), np.zeros(3), 1.0, np.zeros(3))
    with raises_argument(IdentifyError, "base_frequency"):
        sid.fourier_trajectory(np.ones((2, 3)), np.ones((2, 3)), np.zeros(2), -1.0, np.zeros(3))
    with raises_argument(ArgumentTypeError, "a"):
        sid.fourier_trajectory(np.ones((2, 3), int), np.ones((2, 3)), np.zeros(2), 1.0, np.zeros(3))


# ------------------------------------------------------------------ excitation
def test_excitation_respects_limits_and_is_batched():
    lim = np.array([[-2.0, 1.0], [-0.5, 0.5], [0.1, 3.0]])
    dqmax = np.array([1.0, 0.3, 2.0])
    t, q, dq, ddq = sid.excitation_trajectory(
        3,
        duration=20.0,
        rate=200.0,
        amplitude=3.0,  # deliberately too large: the limits must scale it down
        key=jax.random.split(jax.random.key(0), 4),
        q_limits=lim,
        dq_limits=dqmax,
        ddq_limits=5.0,
        margin=0.8,
    )
    assert t.shape == (4000,) and q.shape == dq.shape == ddq.shape == (4, 4000, 3)
    np.testing.assert_allclose(t[1] - t[0], 1 / 200.0)
    center, half = lim.mean(1), 0.5 * (lim[:, 1] - lim[:, 0])
    assert np.all(np.abs(q - center) <= 0.8 * half * (1 + 1e-12))
    assert np.all(np.abs(dq) <= 0.8 * dqmax * (1 + 1e-12))
    assert np.all(np.abs(ddq) <= 0.8 * 5.0 * (1 + 1e-12))
    # every joint touches one of its limits (scaled down, not clipped)
    used = np.max(
        np.stack(
            [np.abs(q - center).max(1) / (0.8 * half), np.abs(dq).max(1) / (0.8 * dqmax),
             np.abs(ddq).max(1) / 4.0], 0), 0)  # fmt: skip
    np.testing.assert_allclose(used, 1.0, rtol=1e-9)
    assert not np.allclose(q[0], q[1])  # different keys, different trajectories
    # the derivatives are those of q (np.gradient on 200 Hz samples, band limit 0.5 Hz)
    np.testing.assert_allclose(np.gradient(q[0], t, axis=0)[1:-1], dq[0, 1:-1], atol=2e-4)


def test_excitation_bad_input():
    k = jax.random.key(0)
    with raises_argument(IdentifyError, "duration"):
        sid.excitation_trajectory(2, duration=-1.0, key=k)
    with pytest.raises(ValueError, match="Nyquist"):
        sid.excitation_trajectory(2, duration=1.0, rate=10.0, base_frequency=1.0, key=k)
    with raises_argument(IdentifyError, "q_limits"):
        sid.excitation_trajectory(2, duration=1.0, key=k, q_limits=[[0, 1], [1, 0]])
    with raises_argument(IdentifyError, "dq_limits"):
        sid.excitation_trajectory(2, duration=1.0, key=k, dq_limits=[1.0, 2.0, 3.0])


# ------------------------------------------------------------------ perturbed bodies
def _bodies(rng, dtype):
    """64 random consistent bodies, plus the Panda's 7 links (merged hand) when installed."""
    from helpers import random_inertia_params

    p = random_inertia_params(rng, 64)
    if ROBOTS is not None:
        p = np.concatenate([p, np.asarray(_panda()[1].inertia.params, np.float64)])
    return sj.RigidBodyInertia(jnp.asarray(p, dtype))


@jax.jit
def _consistency_and_pseudo_inertias(J, J0):
    """One program per dtype (eagerly these are ~50 small compiles)."""
    return sj.is_physically_consistent(J), J.pseudo_inertia(), J0.pseudo_inertia(), J.mass, J0.mass


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_perturb_inertia_consistent_at_the_requested_geodesic_distance(rng, dtype):
    J0 = _bodies(rng, dtype)
    nb = J0.batch_shape[0]
    relative = np.resize([0.02, 0.1, 0.3, 0.6], nb).astype(dtype)  # one size per body
    J = sid.perturb_inertia(J0, relative, jax.random.key(3))
    assert J.params.dtype == dtype and J.batch_shape == (nb,)
    ok, PJ, PJ0, m, m0 = (np.asarray(x) for x in _consistency_and_pseudo_inertias(J, J0))
    assert ok.all()
    # distance of the returned numbers, evaluated in float64; in float32 the construction can
    # resolve J0's eigen-directions only to about eps · cond(J0) (a Panda link has cond 7.5e5)
    J64, J064 = (jnp.asarray(x.astype(np.float64)) for x in (PJ, PJ0))
    d = np.asarray(jax.jit(sj.geodesic_distance)(J64, J064))
    eps = np.finfo(dtype).eps
    cond = np.linalg.cond(np.asarray(J064))
    np.testing.assert_array_less(np.abs(d - relative), 1e-6 * relative + 10 * eps * cond)
    ratio = m / m0
    bound = np.exp(np.sqrt(2) * relative)
    assert np.all((ratio <= bound * 1.0001) & (ratio >= 1 / bound / 1.0001))
    assert not np.allclose(J.params, J0.params)


def test_perturb_inertia_zero_is_identity_and_errors(rng):
    J0 = _bodies(rng, np.float64)
    np.testing.assert_allclose(sid.perturb_inertia(J0, 0.0, jax.random.key(0)).params, J0.params,
                               rtol=1e-10, atol=1e-14)  # fmt: skip
    with raises_argument(IdentifyError, "relative"):
        sid.perturb_inertia(J0, -0.1, jax.random.key(0))
    with raises_argument(IdentifyTypeError, "inertia"):
        sid.perturb_inertia(J0.params, 0.1, jax.random.key(0))
    with raises_argument(IdentifyError, "key"):
        sid.perturb_inertia(J0, 0.1, jax.random.split(jax.random.key(0), 2))


# ------------------------------------------------------------------ simulated log vs Pinocchio
@needs_robots
def test_simulate_log_torques_equal_pinocchio_rnea_plus_friction(rng):
    pin = pytest.importorskip("pinocchio")
    path, model = _panda()
    t, q, dq, ddq = sid.excitation_trajectory(
        7, duration=0.2, rate=250.0, base_frequency=2.0, amplitude=2.0, key=jax.random.key(1)
    )
    true = sid.perturb_inertia(model.inertia, 0.3, jax.random.key(2))
    fr = np.column_stack(
        [rng.uniform(0.05, 0.6, 7), rng.uniform(0.2, 1.0, 7), rng.normal(0, 0.1, 7)]
    )
    log = sid.simulate_log(model, t, q, dq, ddq, key=jax.random.key(4), inertia=true, friction=fr)
    assert log.dq is None and log.ddq is None and log.joint_names == model.joint_names
    np.testing.assert_array_equal(log.q, np.asarray(q))  # no encoder effects asked
    # Pinocchio: the same URDF, fingers locked, the true bodies written in (body i = joint i + 1)
    pm = pin.buildModelFromUrdf(path)
    pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in FINGERS], pin.neutral(pm))
    true_params = np.asarray(true.params)
    for i in range(7):
        pm.inertias[i + 1] = pin.Inertia.FromDynamicParameters(true_params[i])
    data = pm.createData()
    qn, dqn, ddqn = (np.asarray(x) for x in (q, dq, ddq))
    ref = np.stack([pin.rnea(pm, data, qn[k], dqn[k], ddqn[k]) for k in range(len(t))])
    ref = ref + fr[:, 0] * dqn + fr[:, 1] * np.sign(dqn) + fr[:, 2]
    np.testing.assert_allclose(log.tau, ref, rtol=1e-10, atol=1e-10)


def test_simulate_log_noise_and_encoder():
    model = mb.chain_model(2)
    t = np.arange(20000) / 1000.0
    q = np.column_stack([np.sin(t), 0.3 * np.cos(2 * t)])
    dq = np.column_stack([np.cos(t), -0.6 * np.sin(2 * t)])
    ddq = np.column_stack([-np.sin(t), -1.2 * np.cos(2 * t)])
    clean = sid.simulate_log(model, t, q, dq, ddq, key=jax.random.key(0), include_derivatives=True)
    np.testing.assert_array_equal(clean.dq, dq)
    res = 2 * np.pi / 2**14
    noisy = sid.simulate_log(model, t, q, dq, ddq, key=jax.random.key(0), torque_noise=[0.02, 0.05],
                             encoder_resolution=res)  # fmt: skip
    err = noisy.tau - clean.tau
    # sample std of 20000 normal draws: within 4 standard errors (σ / √(2N) ≈ 0.5 %)
    np.testing.assert_allclose(err.std(0), [0.02, 0.05], rtol=0.02)
    np.testing.assert_allclose(err.mean(0), 0.0, atol=4 * 0.05 / math.sqrt(20000))
    counts = noisy.q / res
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-6)
    assert np.all(np.abs(noisy.q - q) <= res / 2 * (1 + 1e-9))
    with raises_argument(IdentifyError, "friction"):
        sid.simulate_log(model, t, q, dq, ddq, key=jax.random.key(0), friction=np.ones((3, 3)))
    with raises_argument(IdentifyError, "torque_noise"):
        sid.simulate_log(model, t, q, dq, ddq, key=jax.random.key(0), torque_noise=-1.0)
    with raises_argument(IdentifyError, "dq"):
        sid.simulate_log(model, t, q, dq[:, :1], ddq, key=jax.random.key(0))


# ------------------------------------------------------------------ preprocessing
def _fourier_log(noise=0.0, seed=0, rate=1000.0, duration=12.0):
    rng = np.random.default_rng(seed)
    H, f = 5, 0.1
    a, b = rng.normal(0, 0.4, (2, 3, H))
    t = np.arange(int(duration * rate)) / rate
    q, dq, ddq = _closed_form(a, b, np.zeros(3), f, t)
    qm = q + noise * rng.standard_normal(q.shape)
    log = sid.RobotLog(t=t, q=qm, tau=np.cos(q), joint_names=("a", "b", "c"))
    return log, (q, dq, ddq), (a, b, f)


def test_prepare_log_recovers_derivatives_of_a_noiseless_fourier_trajectory():
    log, (q, dq, ddq), (a, b, f) = _fourier_log()
    h = 1e-3
    lowpass, order = 20.0, 4
    p = sid.prepare_log(log, lowpass=lowpass, order=order)
    e = p.edge
    assert p.q.shape == (12000 - 2 * e, 3) and p.rate == pytest.approx(1000.0)
    # Derived bound, per joint, summed over harmonics l with velocity amplitude A_l = |(a, b)_l|
    # and ω_l = 2π f l: central differences are low by (ωh)²/6 (dq) and (ωh)²/3 (ddq, central
    # differences of central differences: sin²(ωh)/h²); the zero-phase Butterworth passes
    # 1/(1 + (f_l/f_c)^(2·order)). Edges: sosfiltfilt extends q by odd reflection, which keeps q
    # and dq continuous but flips ddq, a jump of at most 2 max|ddq|; filtering commutes with
    # differentiation, so after `edge` samples what is left of that jump is at most
    # 2 max|ddq| · Σ_{i≥edge}|h_i| per pass (h: the filter's impulse response, from SciPy), two
    # passes. ×2 on the sampling terms and +1e-9 for rounding.
    from scipy import signal

    w = 2 * np.pi * f * np.arange(1, 6)
    A = np.hypot(a, b)
    gain_err = 1 - 1 / (1 + (w / (2 * np.pi) / lowpass) ** (2 * order))
    impulse = np.zeros(4000)
    impulse[0] = 1.0
    habs = np.abs(signal.sosfilt(signal.butter(order, lowpass, fs=1e3, output="sos"), impulse))
    edge_left = 2 * (2 * np.abs(ddq).max(0)) * habs[e - 2 :].sum()  # e − 2: gradient's share
    tol_dq = 2 * (A @ ((w * h) ** 2 / 6 + gain_err)) + 1e-9
    tol_ddq = 2 * (A @ (w * ((w * h) ** 2 / 3 + gain_err))) + edge_left + 1e-9
    sl = slice(e, -e)
    assert np.all(np.abs(p.dq - dq[sl]) <= tol_dq)
    assert np.all(np.abs(p.ddq - ddq[sl]) <= tol_ddq)
    np.testing.assert_allclose(p.q, q[sl], atol=1e-9)
    # decimation keeps every K-th of the same samples
    p5 = sid.prepare_log(log, lowpass=lowpass, decimate=5, order=order)
    np.testing.assert_array_equal(p5.t, log.t[e : 12000 - e : 5])
    np.testing.assert_allclose(p5.dq, p.dq[::5], atol=1e-15)
    assert p5.rate == pytest.approx(200.0)


def test_prepare_log_reduces_noise_as_the_filter_predicts():
    from scipy import signal

    sigma = 1e-4
    log, (q, dq, ddq), _ = _fourier_log(noise=sigma, seed=1, duration=20.0)
    h = 1e-3
    raw = sid.prepare_log(log)
    e = raw.edge
    err_raw = (raw.dq - dq[e:-e]).std()
    # central difference of white noise: var = 2σ²/(2h)² = σ²/(2h²)
    np.testing.assert_allclose(err_raw, sigma / (h * math.sqrt(2)), rtol=0.03)
    fc = 10.0
    p = sid.prepare_log(log, lowpass=fc)
    e = p.edge
    err = (p.dq - dq[e:-e]).std()
    # predicted: σ² (1/π) ∫₀^π |H(ω)|⁴ (sin ω / h)² dω (zero phase: |H|² in amplitude)
    sos = signal.butter(4, fc, fs=1000.0, output="sos")
    wgrid, H = signal.sosfreqz(sos, worN=200000)
    pred = sigma * math.sqrt(np.trapezoid(np.abs(H) ** 4 * (np.sin(wgrid) / h) ** 2, wgrid) / np.pi)
    # the signal's own differentiation error (≈1e-5 rad/s) is far below the noise (≈1e-3)
    np.testing.assert_allclose(err, pred, rtol=0.15)
    assert err < err_raw / 10


def test_prepare_log_bad_input():
    log, _, _ = _fourier_log(duration=2.0)
    cases = [
        (dict(lowpass=500.0), "lowpass"),  # at the Nyquist frequency
        (dict(lowpass=120.0, decimate=5), "lowpass"),  # above the decimated Nyquist frequency
        (dict(decimate=5), "decimate"),  # decimation without a low-pass aliases the noise
        (dict(decimate=0), "decimate"),
    ]
    for kwargs, argument in cases:
        with pytest.raises(sid.IdentifyError) as e:
            sid.prepare_log(log, **kwargs)
        assert e.value.argument == argument, (kwargs, str(e.value))
    with raises_argument(IdentifyError, "lowpass", match=r"decimated Nyquist|100 Hz"):
        sid.prepare_log(log, lowpass=120.0, decimate=5)  # the message says which limit
    t = log.t.copy()
    t[100:] += 0.01
    gap = sid.RobotLog(t=t, q=log.q, tau=log.tau)
    with raises_argument(IdentifyError, "log") as e:
        sid.prepare_log(gap, lowpass=5.0)
    assert e.value.argument == "log"
    with pytest.raises(TypeError) as e:
        sid.prepare_log(log.q)
    assert e.value.argument == "log"  # pyright: ignore[reportAttributeAccessIssue]


def test_parallel_filter_matches_the_filtered_coulomb_step():
    # τ = F_c sign(q̇) on a sinusoid: low-passing τ smooths each step; the regressor column
    # sign(q̇_filtered) does not, unless it goes through the same filter (Gautier 1997)
    t = np.arange(20000) / 1000.0
    q = np.sin(2 * np.pi * 0.5 * t)[:, None]
    Fc = 0.7
    tau = Fc * np.sign(np.cos(2 * np.pi * 0.5 * t))[:, None]
    full = sid.prepare_log(sid.RobotLog(t=t, q=q, tau=tau), lowpass=10.0)
    col = np.sign(full.dq)
    naive = np.abs(Fc * col - full.tau).max()
    log, fcol = sid.parallel_filter(full, col, decimate=5)
    assert log.n_samples == len(range(full.edge, full.n_samples - full.edge, 5))
    assert log.edge == 2 * full.edge and log.rate == pytest.approx(200.0)
    np.testing.assert_array_equal(log.tau, full.tau[full.edge : full.n_samples - full.edge : 5])
    # the same filter on the same step: equal up to where sign(q̇_filtered) and sign(q̇) differ
    # (q̇ is recovered to ~1e-5 rad/s, i.e. within a sample of each reversal)
    assert naive > 0.3 * Fc
    err = np.abs(Fc * fcol - log.tau).max()
    assert err < 0.05 * Fc
    est = np.linalg.lstsq(fcol, log.tau, rcond=None)[0].item()
    bad = np.linalg.lstsq(col[::5], full.tau[::5], rcond=None)[0].item()
    assert abs(est - Fc) < 1e-3 * Fc < abs(bad - Fc)
    with raises_argument(IdentifyError, "columns[0]"):
        sid.parallel_filter(full, col[:-1])
    with raises_argument(IdentifyError, "prepared"):
        sid.parallel_filter(sid.prepare_log(sid.RobotLog(t=t, q=q, tau=tau)), col)
    with raises_argument(IdentifyError, "prepared"):
        sid.parallel_filter(sid.prepare_log(sid.RobotLog(t=t, q=q, tau=tau), lowpass=10.0,
                                            decimate=5), col[::5])  # fmt: skip


def test_parallel_filter_is_sosfiltfilt_of_every_column():
    """All-zero columns skipped (``_filter_live_columns``), the others the package's
    ``sosfiltfilt`` of the whole array at the kept samples, and SciPy's to round-off."""
    from scipy import signal

    from spatialjax.identification.logs import butterworth

    rng = np.random.default_rng(5)
    t = np.arange(20000) / 1000.0
    q = np.sin(2 * np.pi * 0.5 * t)[:, None]
    full = sid.prepare_log(sid.RobotLog(t=t, q=q, tau=np.cos(t)[:, None]), lowpass=10.0)
    cols = rng.standard_normal((full.n_samples, 5, 9)).cumsum(axis=0)
    cols[:, :, 3] = 0.0  # columns a joint does not reach
    log, out = sid.parallel_filter(full, cols, decimate=4)
    sos = butterworth.butterworth(full.order, full.lowpass, full.rate)
    keep = slice(full.edge, full.n_samples - full.edge, 4)
    whole = butterworth.sosfiltfilt(sos, cols)[keep]
    np.testing.assert_allclose(out, whole, rtol=0, atol=1e-14 * np.abs(whole).max())
    ref = signal.sosfiltfilt(sos, cols, axis=0)[keep]
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    assert out.shape == (log.n_samples, 5, 9) and not out[:, :, 3].any()


# ------------------------------------------------------------------ files
def _awkward_log(with_derivatives):
    rng = np.random.default_rng(3)
    N, n = 50, 2
    t = np.cumsum(rng.uniform(1e-4, 2e-3, N))
    vals = rng.normal(size=(4, N, n)) * np.array([1.0, 1e-300, 1e300, 1 / 3])[:, None, None]
    vals[0, 0, 0] = 0.1
    vals[0, 1, 0] = -0.0
    vals[0, 2, 1] = 5e-324  # the smallest subnormal
    return sid.RobotLog(
        t=t, q=vals[0], tau=vals[1],
        dq=vals[2] if with_derivatives else None,
        ddq=vals[3] if with_derivatives else None,
        joint_names=("shoulder", "q_elbow"),  # a joint whose name starts like a prefix
    )  # fmt: skip


@pytest.mark.parametrize("suffix", [".npz", ".csv"])
@pytest.mark.parametrize("with_derivatives", [False, True])
def test_save_load_round_trip_is_bit_exact(tmp_path, suffix, with_derivatives):
    log = _awkward_log(with_derivatives)
    path = log.save(tmp_path / f"log{suffix}")
    back = sid.load_log(path)
    assert back.joint_names == log.joint_names
    for k in ("t", "q", "tau", "dq", "ddq"):
        x, y = getattr(log, k), getattr(back, k)
        if x is None:
            assert y is None
        else:
            assert y.dtype == np.float64
            np.testing.assert_array_equal(x.view(np.int64), y.view(np.int64))  # bits, incl. -0.0


@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_save_never_overwrites_unless_asked(tmp_path, suffix):
    path = tmp_path / f"log{suffix}"
    path.write_text("precious")
    log = _awkward_log(False)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        log.save(path)
    assert path.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left
    log.save(path, overwrite=True)
    np.testing.assert_array_equal(sid.load_log(path).q, log.q)
    with raises_argument(IdentifyError, "path"):
        log.save(tmp_path / "log.txt")


def test_csv_column_rule_any_order(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("tau_b,q_b,t,q_a,tau_a\n1,2,0,3,4\n5,6,0.5,7,8\n")
    log = sid.load_log(path)
    assert log.joint_names == ("b", "a")
    np.testing.assert_array_equal(log.q, [[2, 3], [6, 7]])
    np.testing.assert_array_equal(log.tau, [[1, 4], [5, 8]])
    np.testing.assert_array_equal(log.t, [0, 0.5])


def _write(path, text):
    path.write_text(text)
    return path


CSV_CASES = {
    # name: (content, column named in the error, message fragment)
    "missing_tau_column": ("t,q_a,q_b,tau_a\n0,1,2,3\n1,1,2,3\n", "tau_b", "missing"),
    "missing_t": ("q_a,tau_a\n0,1\n1,1\n", "t", "missing"),
    "missing_dq_for_one_joint": ("t,q_a,q_b,tau_a,tau_b,dq_a\n0,1,2,3,4,5\n1,1,2,3,4,5\n", "dq_b",
                                 "missing"),
    "unknown_column": ("t,q_a,tau_a,current_a\n0,1,2,3\n1,1,2,3\n", "current_a", "unknown column"),
    "nan": ("t,q_a,tau_a\n0,1,2\n1,nan,2\n2,1,2\n", "q_a", "nan at sample 1"),
    "inf": ("t,q_a,tau_a\n0,1,2\n1,1,2\n2,1,-inf\n", "tau_a", "-inf at sample 2"),
    "wrong_field_count": ("t,q_a,tau_a\n0,1,2\n1,1\n", None, "line 3 has 2 fields, the header has"),
    "not_a_number": ("t,q_a,tau_a\n0,1,2\n1,x,2\n", "q_a", "'x' is not a number"),
    "non_monotonic_t": ("t,q_a,tau_a\n0,1,2\n1,1,2\n1,1,2\n", "t", "not strictly increasing"),
    "non_finite_t": ("t,q_a,tau_a\n0,1,2\ninf,1,2\n", "t", "non-finite time"),
    "duplicate_joint": ("t,q_a,tau_a,q_a\n0,1,2,3\n1,1,2,3\n", "q_a", "appears twice"),
    "empty": ("", None, "empty file"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_csv_log_errors_name_file_and_column(tmp_path, case):
    text, column, fragment = CSV_CASES[case]
    path = _write(tmp_path / f"{case}.csv", text)
    with pytest.raises(sid.LogError) as info:
        sid.load_log(path)
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert str(path) in msg and fragment in msg
    assert info.value.column == column
    if column is not None:
        assert repr(column) in msg


NPZ_CASES = {
    "missing_tau": (dict(t=np.arange(3.0), q=np.ones((3, 2))), "tau", "missing"),
    "inconsistent_rows": (dict(t=np.arange(3.0), q=np.ones((3, 2)), tau=np.ones((2, 2))), "tau",
                          "N = 3"),
    "inconsistent_joints": (dict(t=np.arange(3.0), q=np.ones((3, 2)), tau=np.ones((3, 3))), "tau",
                            "expected 2 joint columns"),
    "duplicate_names": (dict(t=np.arange(3.0), q=np.ones((3, 2)), tau=np.ones((3, 2)),
                             joint_names=np.array(["a", "a"])), "joint_names", "duplicate"),
    "name_count": (dict(t=np.arange(3.0), q=np.ones((3, 2)), tau=np.ones((3, 2)),
                        joint_names=np.array(["a"])), "joint_names", "1 names for 2"),
    "nan_with_names": (dict(t=np.arange(3.0), q=np.ones((3, 2)),
                            tau=np.array([[1, 1], [1, 1], [1, np.nan]]),
                            joint_names=np.array(["a", "b"])), "tau_b", "nan at sample 2"),
    "decreasing_t": (dict(t=np.array([0.0, 2.0, 1.0]), q=np.ones((3, 1)), tau=np.ones((3, 1))), "t",
                     "not strictly increasing"),
    "integer_q": (dict(t=np.arange(3.0), q=np.ones((3, 1), int), tau=np.ones((3, 1))), "q",
                  "floating-point"),
    "unknown_array": (dict(t=np.arange(3.0), q=np.ones((3, 1)), tau=np.ones((3, 1)),
                           qd=np.ones((3, 1))), "qd", "unknown array"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(NPZ_CASES))
def test_npz_log_errors_name_file_and_column(tmp_path, case):
    arrays, column, fragment = NPZ_CASES[case]
    path = tmp_path / f"{case}.npz"
    np.savez(path, **arrays)
    with pytest.raises(sid.LogError) as info:
        sid.load_log(path)
    assert str(path) in str(info.value) and fragment in str(info.value)
    assert info.value.column == column


def test_robotlog_constructor_checks():
    with raises_argument(LogError, "log") as e:
        sid.RobotLog(t=np.array([0.0, 0.0]), q=np.ones((2, 1)), tau=np.ones((2, 1)))
    assert (e.value.source, e.value.column, e.value.sample) == ("RobotLog", "t", 1)
    with raises_argument(LogError, "log") as e:
        sid.RobotLog(t=np.arange(2.0), q=np.array([[0, np.nan], [0, 0]]), tau=np.ones((2, 2)))
    assert (e.value.column, e.value.sample) == ("q[:, 1]", 0)
    log = sid.RobotLog(t=np.arange(2.0), q=np.ones((2, 1)), tau=np.ones((2, 1)))
    with raises_argument(IdentifyError, "joint_names"):
        log.save("unused.csv")


# ------------------------------------------------------------------ joint matching
@needs_robots
def test_match_joints_maps_reorders_and_locks():
    _, full = _panda(locked=False)
    names = ("panda_joint3", "panda_joint1", "panda_joint2", "panda_joint7", "panda_joint6",
             "panda_joint5", "panda_joint4", "panda_finger_joint1")  # fmt: skip
    N = 4
    q = np.arange(N * len(names), dtype=float).reshape(N, len(names))
    log = sid.RobotLog(t=np.arange(N) / 1e3, q=q, tau=-q, joint_names=names)
    m = sid.match_joints(log, full, lock={"panda_finger_joint2": 0.04})
    assert m.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8)) + ("panda_finger_joint1",)
    assert dict(m.locked) == {"panda_finger_joint2": 0.04}
    out = m.apply(log)
    for j, nm in enumerate(m.joint_names):
        np.testing.assert_array_equal(out.q[:, j], q[:, names.index(nm)])
    # locking a joint the log has drops its column; unlisted missing joints lock at 0
    m2 = sid.match_joints(log, full, lock={"panda_finger_joint1": 0.01})
    assert m2.dropped == ("panda_finger_joint1",)
    assert dict(m2.locked) == {"panda_finger_joint1": 0.01, "panda_finger_joint2": 0.0}
    # the matched model (locked joints merged) has exactly the matched joints
    locked_model = mb.Model.from_urdf(str(ROBOTS / "panda_description/urdf/panda.urdf"),
                                      locked_joints=m2.locked)  # fmt: skip
    assert locked_model.joint_names == m2.joint_names
    bad = sid.RobotLog(t=log.t, q=q[:, :2], tau=q[:, :2], joint_names=("panda_joint1", "elbow"))
    with raises_argument(IdentifyError, "log"):
        sid.match_joints(bad, full)
    with raises_argument(IdentifyError, "lock"):
        sid.match_joints(log, full, lock={"wrist": 0.0})
    nameless = sid.RobotLog(t=log.t, q=q[:, :3], tau=q[:, :3])
    with raises_argument(IdentifyError, "log"):
        sid.match_joints(nameless, full)
