"""integrate, difference and rollout.

References: Pinocchio's ``integrate``/``difference`` and an explicit NumPy loop of
``pin.aba`` + ``pin.integrate`` (semi-implicit Euler), SciPy's ``solve_ivp`` on
Pinocchio's ``aba`` (RK4 against a tight adaptive solution), energy ``½ vᵀ M v − m g·c``
for torque-free chains (conservation and the order of its drift), closed forms for
a free body, central finite differences for the gradients.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, ROBOTS, pin_model, raises_argument, random_states
from jax.test_util import check_grads

import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError

G_PLANE = jnp.array([0.0, -9.81, 0.0])  # chain_model's joints turn about z: swing in the xy plane


def _robot(rel, floating=False, locked=None):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = str(ROBOTS / rel)
    m = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    return m, pin_model(path, floating, locked)


def _same_config(m, a, b, atol):
    """Compare in Pinocchio's layout with the free flyer's quaternion sign made positive-w."""
    a, b = np.array(m.q_to_pinocchio(a)), np.array(m.q_to_pinocchio(b))
    if m.floating_base:
        a[..., 3:7] *= np.sign(a[..., 6:7])
        b[..., 3:7] *= np.sign(b[..., 6:7])
    np.testing.assert_allclose(a, b, rtol=0, atol=atol)


# ------------------------------------------------------------------ integrate, difference
@pytest.mark.parametrize(
    "rel, floating",
    [
        ("solo_description/robots/solo12.urdf", True),
        ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", False),
        ("panda_description/urdf/panda.urdf", False),
    ],
    ids=["solo12", "double_pendulum_continuous", "panda"],
)
def test_integrate_and_difference_match_pinocchio(rel, floating):
    pin = pytest.importorskip("pinocchio")
    m, pm = _robot(rel, floating)
    rng = np.random.default_rng(11)
    q0, v, _ = random_states(m, 4, rng)
    q1, _, _ = random_states(m, 4, rng)
    dt = 0.37
    got = np.asarray(m.q_to_pinocchio(mb.integrate(m, q0, v, dt)))
    d = np.asarray(mb.difference(m, q0, q1))
    back = mb.integrate(m, q0, jnp.asarray(d), 1.0)
    q0p, q1p = np.asarray(m.q_to_pinocchio(q0)), np.asarray(m.q_to_pinocchio(q1))
    perm = m.v_permutation()
    for k in range(4):
        ref = pin.integrate(pm, q0p[k], np.asarray(v[k])[perm] * dt)
        np.testing.assert_allclose(got[k], ref, rtol=0, atol=1e-13)
        np.testing.assert_allclose(d[k][perm], pin.difference(pm, q0p[k], q1p[k]), atol=1e-12)
    _same_config(m, back, q1, 1e-12)  # integrate(q0, difference(q0, q1)) == q1
    # difference inverts integrate for steps of rotation angle below π
    small = 0.3 * v
    np.testing.assert_allclose(
        np.asarray(mb.difference(m, q0, mb.integrate(m, q0, small, 1.0))),
        np.asarray(small),
        atol=1e-12,
    )


def test_free_body_closed_form_and_batching():
    m = mb.chain_model(1, floating_base=True, dtype="float64")
    q = m.neutral_configuration()
    # constant body twist (ω about z, u along body x): the origin runs on a circle of radius u/ω
    w, u, t = 2.0, 3.0, np.array([0.1, 0.7, 1.9])
    v = jnp.array([0.0, 0.0, w, u, 0.0, 0.0])
    out = np.asarray(mb.integrate(m, q, v, jnp.asarray(t)))
    r = u / w
    np.testing.assert_allclose(out[:, 0], r * np.sin(w * t), atol=1e-14)
    np.testing.assert_allclose(out[:, 1], r * (1 - np.cos(w * t)), atol=1e-14)
    np.testing.assert_allclose(out[:, 3], np.cos(w * t / 2), atol=1e-15)
    np.testing.assert_allclose(out[:, 6], np.sin(w * t / 2), atol=1e-15)
    for shape in BATCH_SHAPES:
        vv = jnp.broadcast_to(v, shape + (6,))
        assert mb.integrate(m, q, vv, 0.5).shape == shape + (7,)
        assert mb.difference(m, q, mb.integrate(m, q, vv, 0.5)).shape == shape + (6,)


def test_integrate_difference_gradients_finite_at_identity():
    m = mb.chain_model(2, floating_base=True, dtype="float64")
    q = jnp.asarray(np.r_[0.1, -0.2, 0.3, 0.5, 0.5, 0.5, 0.5, 0.4])
    zero = jnp.zeros(m.nv)
    for v in (zero, 1e-5 * jnp.arange(1.0, 8.0), jnp.arange(1.0, 8.0) / 7):
        Jf = jax.jacfwd(lambda x: mb.integrate(m, q, x, 1.0))(v)
        Jr = jax.jacrev(lambda x: mb.difference(m, q, mb.integrate(m, q, x, 1.0)))(v)
        assert np.isfinite(np.asarray(Jf)).all() and np.isfinite(np.asarray(Jr)).all()
        np.testing.assert_allclose(np.asarray(Jr), np.eye(m.nv), atol=1e-8)  # d(log∘exp) = 1
    check_grads(lambda x: mb.integrate(m, q, x, 0.5), (zero + 0.2,), order=2, modes=("rev",))
    check_grads(lambda x: mb.difference(m, q, x), (q.at[:3].add(0.1),), order=1)


# ------------------------------------------------------------------ rollouts vs Pinocchio
def test_semi_implicit_euler_matches_a_pinocchio_loop():
    pin = pytest.importorskip("pinocchio")
    m, pm = _robot("solo_description/robots/solo12.urdf", floating=True)
    pd = pm.createData()
    rng = np.random.default_rng(2)
    q0, v0, _ = random_states(m, 1, rng)
    q0, v0 = q0[0], v0[0]
    tau = 2 * rng.standard_normal((6, m.nv))
    tau[:, :6] = 0.0
    dt = 0.01
    r = mb.rollout(m, q0, v0, jnp.asarray(tau), dt)
    perm = m.v_permutation()
    q, v = np.asarray(m.q_to_pinocchio(q0)), np.asarray(v0)[perm]
    for k in range(6):
        v = v + dt * pin.aba(pm, pd, q, v, tau[k][perm] - pm.damping * v)
        q = pin.integrate(pm, q, v * dt)
        np.testing.assert_allclose(np.asarray(r.v[k + 1])[perm], v, rtol=0, atol=1e-11)
        _same_config(m, r.q[k + 1], m.q_from_pinocchio(jnp.asarray(q)), 1e-12)


def test_rk4_matches_a_tight_adaptive_solution():
    pin = pytest.importorskip("pinocchio")
    solve_ivp = pytest.importorskip("scipy.integrate").solve_ivp
    m, pm = _robot("ur_description/urdf/ur5_robot.urdf")
    pd = pm.createData()
    rng = np.random.default_rng(4)
    q0 = rng.uniform(-1, 1, m.nv)
    v0 = rng.standard_normal(m.nv)
    tau = rng.standard_normal(m.nv)
    n, dt = 100, 2e-3

    def f(_, y):
        q, v = y[: m.nv], y[m.nv :]
        return np.r_[v, pin.aba(pm, pd, q, v, tau - pm.damping * v)]

    sol = solve_ivp(f, (0, n * dt), np.r_[q0, v0], method="DOP853", rtol=1e-13, atol=1e-13)
    r = mb.rollout(m, jnp.asarray(q0), jnp.asarray(v0), jnp.tile(tau, (n, 1)), dt, integrator="rk4")
    # RK4's global error ~ dt⁴ (1.6e-11 here) times the dynamics' derivatives
    np.testing.assert_allclose(np.asarray(r.q[-1]), sol.y[: m.nv, -1], rtol=0, atol=1e-8)
    np.testing.assert_allclose(np.asarray(r.v[-1]), sol.y[m.nv :, -1], rtol=0, atol=1e-7)


# ------------------------------------------------------------------ energy and order
def _energy(m, q, v, g):
    M = mb.mass_matrix(m, q)
    kinetic = 0.5 * jnp.einsum("...i,...ij,...j->...", v, M, v)
    return kinetic - jnp.sum(m.inertia.params[:, 0]) * (mb.center_of_mass(m, q) @ g)


def _drift(m, q0, v0, dt, steps, pieces, integrator, g=G_PLANE):
    """Max |E − E0| over ``pieces`` chained rollouts of ``steps`` steps (one compiled program)."""
    E0 = _energy(m, q0, v0, g)
    worst, q, v = 0.0, q0, v0
    for _ in range(pieces):
        r = mb.rollout(m, q, v, jnp.zeros((steps, m.nv)), dt, integrator=integrator, gravity=g)
        worst = max(worst, float(jnp.abs(_energy(m, r.q, r.v, g) - E0).max()))
        q, v = r.q[-1], r.v[-1]
    return worst, q, v


@pytest.mark.parametrize(
    "floating", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["fixed", "floating"]
)
def test_rk4_energy_drift_shrinks_as_dt_to_the_fourth(floating):
    m = mb.chain_model(3, floating_base=floating, dtype="float64")
    q0 = m.neutral_configuration().at[-1].set(0.5).at[-2].set(-0.3)
    v0 = jnp.asarray(np.random.default_rng(0).standard_normal(m.nv))
    d1, *_ = _drift(m, q0, v0, 0.02, 50, 1, "rk4")  # 1 s at dt
    d2, *_ = _drift(m, q0, v0, 0.01, 50, 2, "rk4")  # the same second at dt / 2
    assert d1 < 1e-3 and 12 < d1 / d2 < 20, (d1, d2)


def test_rk4_is_fourth_order_on_a_floating_base():
    """Final-state error against dt/8, dt and dt/2: ratio 2⁴ (2² without the dexp⁻¹ terms)."""
    m = mb.chain_model(2, floating_base=True, dtype="float64")
    q0 = m.neutral_configuration().at[-1].set(0.8)
    v0 = jnp.asarray([0.1, -1.0, 1.5, 0.5, 0.2, -0.1, 1.0])
    _, qr, vr = _drift(m, q0, v0, 0.02 / 8, 20, 8, "rk4")
    errs = []
    for pieces, dt in ((1, 0.02), (2, 0.01)):
        _, q, v = _drift(m, q0, v0, dt, 20, pieces, "rk4")
        errs.append(float(jnp.abs(mb.difference(m, qr, q)).max() + jnp.abs(v - vr).max()))
    assert 12 < errs[0] / errs[1] < 20, errs


def test_semi_implicit_euler_energy_error_is_bounded_and_first_order():
    m = mb.chain_model(1, dtype="float64")  # a pendulum in the vertical xy plane
    q0, v0 = jnp.asarray([0.3]), jnp.asarray([2.0])
    d_short, *_ = _drift(m, q0, v0, 0.01, 200, 1, "semi_implicit_euler")
    d_long, *_ = _drift(m, q0, v0, 0.01, 200, 10, "semi_implicit_euler")  # ten times longer
    assert d_long < 1.2 * d_short  # no secular growth (symplectic)
    d_half, *_ = _drift(m, q0, v0, 0.005, 200, 2, "semi_implicit_euler")
    assert 1.6 < d_short / d_half < 2.4, (d_short, d_half)
    # explicit (non-symplectic) Euler would gain energy every step: the RK4 drift is tiny
    d_rk4, *_ = _drift(m, q0, v0, 0.01, 200, 10, "rk4")
    assert d_rk4 < 1e-6 * abs(float(_energy(m, q0, v0, G_PLANE)))


# ------------------------------------------------------------------ gradients
@pytest.mark.parametrize(
    "integrator", ["semi_implicit_euler", pytest.param("rk4", marks=pytest.mark.slow)]
)
def test_gradients_match_finite_differences(integrator):
    m = mb.chain_model(2, dtype="float64")
    rng = np.random.default_rng(9)
    q0, v0 = jnp.asarray(rng.normal(size=2)), jnp.asarray(rng.normal(size=2))
    tau = jnp.asarray(rng.normal(size=(15, 2)))

    def loss(q0, v0, tau, params):
        mm = dataclasses.replace(m, inertia=type(m.inertia)(params))
        r = mb.rollout(mm, q0, v0, tau, 0.02, integrator=integrator, gravity=G_PLANE)
        return jnp.sum(r.q[-1] ** 2) + jnp.sum(jnp.sin(r.v[-1]))

    check_grads(loss, (q0, v0, tau, m.inertia.params), order=1, modes=("rev",), eps=1e-5)


@pytest.mark.slow  # compile time; CI's second step
def test_control_function_gains_gradients_and_replay():
    m = mb.chain_model(2, dtype="float64")
    q_ref = jnp.asarray([0.5, -0.4])

    def pd(t, q, v, gains):
        return gains[0] * (q_ref - q) - gains[1] * v

    q0 = jnp.zeros((3, 2))  # three initial states in one call
    v0 = jnp.asarray([[0.0, 0.0], [1.0, 0.0], [0.0, -1.0]])
    gains = jnp.asarray([40.0, 8.0])
    r = mb.rollout(m, q0, v0, pd, 0.01, T=600, params=gains, integrator="rk4", gravity=G_PLANE)
    assert r.q.shape == (3, 601, 2) and r.v.shape == (3, 601, 2) and r.tau.shape == (3, 600, 2)
    # a PD without gravity compensation settles near q_ref, off by the gravity droop K⁻¹ g(q)
    droop = np.asarray(mb.gravity_torques(m, r.q[:, -1], G_PLANE)) / 40.0
    np.testing.assert_allclose(np.asarray(r.q[:, -1]) + droop, np.tile(q_ref, (3, 1)), atol=1e-3)
    # replaying the recorded torques gives the same trajectory
    again = mb.rollout(m, q0, v0, r.tau, 0.01, integrator="rk4", gravity=G_PLANE)
    np.testing.assert_allclose(np.asarray(again.q), np.asarray(r.q), atol=1e-12)

    def loss(gains):
        out = mb.rollout(m, q0, v0, pd, 0.01, T=30, params=gains, gravity=G_PLANE)
        return jnp.sum((out.q[:, -1] - q_ref) ** 2)

    check_grads(loss, (gains,), order=1, modes=("rev",))


# ------------------------------------------------------------------ batching, dtypes
@pytest.mark.slow  # compile time; CI's second step
def test_batching_vmap_over_models_and_float32():
    m = mb.chain_model(2, floating_base=True, dtype="float64")
    rng = np.random.default_rng(3)
    q0, v0, _ = random_states(m, 2, rng)
    tau = jnp.asarray(rng.normal(size=(4, 1, 10, m.nv)))
    r = mb.rollout(m, q0, v0, tau, 0.01, integrator="rk4")  # (2,) x (4, 1) -> (4, 2)
    assert r.q.shape == (4, 2, 11, m.nq) and r.tau.shape == (4, 2, 10, m.nv)
    one = mb.rollout(m, q0[1], v0[1], tau[3, 0], 0.01, integrator="rk4")
    np.testing.assert_allclose(np.asarray(r.q[3, 1]), np.asarray(one.q), atol=1e-13)
    # several models (inertias scaled) in one vmap
    scales = jnp.asarray([0.5, 1.0, 2.0])
    many = jax.vmap(
        lambda s: dataclasses.replace(m, inertia=type(m.inertia)(s * m.inertia.params))
    )(scales)
    rv = jax.vmap(lambda mm: mb.rollout(mm, q0[0], v0[0], tau[0, 0], 0.01).q[-1])(many)
    mid = mb.rollout(m, q0[0], v0[0], tau[0, 0], 0.01).q[-1]
    np.testing.assert_allclose(np.asarray(rv[1]), np.asarray(mid), atol=1e-13)
    # float32
    m32 = m.astype("float32")
    r32 = mb.rollout(m32, q0.astype(jnp.float32), v0.astype(jnp.float32),
                     tau.astype(jnp.float32), 0.01, integrator="rk4")  # fmt: skip
    assert r32.q.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(r32.q), np.asarray(r.q), atol=1e-4)


def test_bad_inputs():
    m = mb.chain_model(2, dtype="float64")
    q, v, tau = jnp.zeros(2), jnp.zeros(2), jnp.zeros((5, 2))
    with raises_argument(ArgumentError, "integrator"):
        mb.rollout(m, q, v, tau, 0.01, integrator="euler")
    with raises_argument(ArgumentError, "tau"):
        mb.rollout(m, q, v, jnp.zeros((5, 3)), 0.01)
    with raises_argument(ArgumentError, "tau"):
        mb.rollout(m, q, v, jnp.zeros(2), 0.01)
    with raises_argument(ArgumentError, "q0"):
        mb.rollout(m, jnp.zeros(3), v, tau, 0.01)
    with raises_argument(ArgumentError, "T"):
        mb.rollout(m, q, v, lambda t, q, v, p: -v, 0.01)
    with raises_argument(ArgumentError, "tau"):
        mb.rollout(m, q, v, lambda t, q, v, p: jnp.zeros(3), 0.01, T=3)
    with raises_argument(ArgumentError, "T"):
        mb.rollout(m, q, v, tau, 0.01, T=4)
    with raises_argument(ArgumentError, "T"):
        mb.rollout(m, q, v, lambda t, q, v, p: -v, 0.01, T=0)
    with raises_argument(ArgumentError, "dt"):
        mb.rollout(m, q, v, tau, -0.01)
    with raises_argument(ArgumentError, "dt"):
        mb.rollout(m, q, v, tau, jnp.ones(2))
    with raises_argument(ArgumentTypeError, "dt"):
        mb.rollout(m, q, v, tau, jnp.float32(0.01))
    with raises_argument(ArgumentTypeError, "tau"):
        mb.rollout(m, q, v, "zeros", 0.01)
    with raises_argument(ArgumentError, "v0"):
        mb.rollout(m, jnp.zeros((3, 2)), jnp.zeros((4, 2)), tau, 0.01)
    with raises_argument(ArgumentError, "v"):
        mb.integrate(m, q, jnp.zeros(3), 0.1)
    with raises_argument(ArgumentError, "dt"):
        mb.integrate(m, q, v, float("nan"))
    with raises_argument(ArgumentTypeError, "q1"):
        mb.difference(m, q, np.zeros(2, int))
