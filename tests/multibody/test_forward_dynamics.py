"""forward_dynamics, nonlinear_effects, gravity_torques and rnea's f_ext against Pinocchio.

The robots are test_multibody's example-robot-data cases (same URDF loaded by both
libraries); the Panda and Solo-12 run by default, the rest are marked ``slow``. References:
Pinocchio's ``aba`` (with ``fext``), ``crba``/``rnea`` for ``M⁻¹ (τ − h)``,
``computeABADerivatives``, ``computeRNEADerivatives``, ``nonLinearEffects`` and
``computeGeneralizedGravity``; closed forms for a pendulum.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import (
    CASES,
    PANDA_LOCKED,
    ROBOTS,
    pin_model,
    raises_argument,
    random_states,
    rel_error,
)

import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError

pin = pytest.importorskip("pinocchio")

FAST = ("panda", "solo12")
PARAMS = [pytest.param(c, id=c[0], marks=() if c[0] in FAST else pytest.mark.slow) for c in CASES]
NSTATES = 3
#: worst relative errors seen, printed at the end of the module (pytest -s) for the report
WORST: dict = {}


def _note(key, err):
    WORST[key] = max(WORST.get(key, 0.0), float(err))


@pytest.fixture(scope="module", autouse=True)
def _print_worst():
    yield
    for k, e in sorted(WORST.items()):
        print(f"worst relative error {k}: {e:.2e}")


@pytest.fixture(scope="module", params=PARAMS)
def robot(request):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    name, rel, floating, locked = request.param
    path = str(ROBOTS / rel)
    model = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    return name, model, pin_model(path, floating, locked)


def _fext_pin(f):
    """Per-body ``[n; f]`` (body frame) -> Pinocchio's ``StdVec_Force`` (joint 0 the universe)."""
    return [pin.Force.Zero()] + [pin.Force(np.r_[w[3:], w[:3]]) for w in f]


@jax.jit
def _fd_all(model, q, v, tau, fext):
    return (
        mb.forward_dynamics(model, q, v, tau, f_ext=fext),
        mb.forward_dynamics(model, q, v, tau, f_ext=fext, method="crba"),
        mb.forward_dynamics(model, q, v, tau),
        mb.nonlinear_effects(model, q, v),
        mb.gravity_torques(model, q),
        mb.rnea(model, q, v, tau, f_ext=fext),
        model.q_to_pinocchio(q),
    )


def test_forward_dynamics_matches_pinocchio(robot):
    name, model, pm = robot
    pd = pm.createData()
    rng = np.random.default_rng(3)
    q, v, tau = (np.asarray(x) for x in random_states(model, NSTATES, rng))
    tau = 10 * tau
    fext = rng.standard_normal((NSTATES, model.nbodies, 6))
    a_aba, a_crba, a_free, h, g, tau_f, qp_all = (
        np.asarray(x) for x in _fd_all(model, q, v, tau, fext)
    )
    perm = model.v_permutation()
    for k in range(NSTATES):
        qp, vp, tp = qp_all[k], v[k][perm], tau[k][perm]
        # forward_dynamics applies the passive damping −damping·v (URDF <dynamics damping>)
        # that Pinocchio reads into model.damping but does not apply
        np.testing.assert_array_equal(np.asarray(model.damping)[perm], pm.damping)
        tp = tp - pm.damping * vp
        fp = _fext_pin(fext[k])
        ref = pin.aba(pm, pd, qp, vp, tp, fp).copy()
        ref_free = pin.aba(pm, pd, qp, vp, tp).copy()
        M = pin.crba(pm, pd, qp).copy()
        M = np.triu(M) + np.triu(M, 1).T
        h_p = pin.nonLinearEffects(pm, pd, qp, vp).copy()
        ref_m = np.linalg.solve(M, tp - h_p)
        for key, got, want in (
            ("aba vs pin.aba (f_ext)", a_aba[k][perm], ref),
            ("crba vs pin.aba (f_ext)", a_crba[k][perm], ref),
            ("aba vs pin.aba", a_free[k][perm], ref_free),
            ("aba vs M^-1(tau - h)", a_free[k][perm], ref_m),
        ):
            err = rel_error(got, want)
            _note(f"{key} [{name}]", err)
            assert err <= 1e-10, (key, err)
        np.testing.assert_allclose(h[k][perm], h_p, rtol=0, atol=1e-12 * max(1, np.abs(h_p).max()))
        g_p = pin.computeGeneralizedGravity(pm, pd, qp)
        np.testing.assert_allclose(g[k][perm], g_p, rtol=0, atol=1e-12 * max(1, np.abs(g_p).max()))
        t_p = pin.rnea(pm, pd, qp, vp, tau[k][perm], fp)
        _note(f"rnea f_ext [{name}]", rel_error(tau_f[k][perm], t_p))
        assert rel_error(tau_f[k][perm], t_p) <= 1e-12


@pytest.mark.parametrize("name", ["panda", "solo12"])
def test_float32(name):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    _, rel, floating, locked = next(c for c in CASES if c[0] == name)
    path = str(ROBOTS / rel)
    m64 = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    m32 = m64.astype(jnp.float32)
    q, v, tau = (np.asarray(x) for x in random_states(m64, NSTATES, np.random.default_rng(4)))
    a64 = np.asarray(jax.jit(mb.forward_dynamics)(m64, q, v, tau))
    a32 = jax.jit(mb.forward_dynamics)(m32, *(x.astype(np.float32) for x in (q, v, tau)))
    assert a32.dtype == jnp.float32
    # float32 round-off (~6e-8) amplified by the mass matrix conditioning (seen: 1e-7, 2e-7)
    for k in range(NSTATES):
        assert rel_error(np.asarray(a32[k], np.float64), a64[k]) <= 2e-5


# ------------------------------------------------------------------ derivatives
def _pin_robot(name):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    _, rel, floating, locked = next(c for c in CASES if c[0] == name)
    path = str(ROBOTS / rel)
    model = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    # Pinocchio's derivatives are those of aba without the passive damping forward_dynamics adds
    model = dataclasses.replace(model, damping=jnp.zeros_like(model.damping))
    return model, pin_model(path, floating, locked)


@functools.partial(jax.jit, static_argnames="which")
def _jacobians(model, q, v, tau, which):
    if which == "aba":
        f = lambda q, v, t: mb.forward_dynamics(model, q, v, t)  # noqa: E731
    else:
        f = lambda q, v, t: mb.rnea(model, q, v, t)  # noqa: E731
    return jax.jacfwd(f, argnums=(0, 1, 2))(q, v, tau)


@pytest.mark.parametrize("name", ["panda", pytest.param("ur5", marks=pytest.mark.slow)])
def test_jacfwd_matches_pinocchio_derivatives(name):
    """``∂a/∂(q, v, τ)`` against ``computeABADerivatives`` and ``∂τ/∂(q, v, a)`` against
    ``computeRNEADerivatives`` (revolute joints: the tangent is ``dq`` itself)."""
    model, pm = _pin_robot(name)
    pd = pm.createData()
    q, v, tau = (np.asarray(x[0]) for x in random_states(model, 1, np.random.default_rng(8)))
    qp = np.asarray(model.q_to_pinocchio(q))
    da = [np.asarray(x) for x in _jacobians(model, q, v, tau, "aba")]
    ref = pin.computeABADerivatives(pm, pd, qp, v, tau)
    for got, want, key in zip(da, ref, ("ddq_dq", "ddq_dv", "ddq_dtau"), strict=True):
        err = rel_error(got, np.asarray(want))
        _note(f"jacfwd aba {key} [{name}]", err)
        assert err <= 1e-9, (key, err)
    dt = [np.asarray(x) for x in _jacobians(model, q, v, tau, "rnea")]
    ref = pin.computeRNEADerivatives(pm, pd, qp, v, tau)
    for got, want, key in zip(dt, ref, ("dtau_dq", "dtau_dv", "dtau_da"), strict=True):
        want = np.asarray(want)
        if key == "dtau_da":
            want = np.triu(want) + np.triu(want, 1).T
        err = rel_error(got, want)
        _note(f"jacfwd rnea {key} [{name}]", err)
        assert err <= 1e-10, (key, err)


@pytest.mark.slow  # compile time; CI's second step
def test_jacfwd_velocity_and_torque_derivatives_floating_base():
    """Solo-12: ``∂a/∂v`` and ``∂a/∂τ = M⁻¹`` (Pinocchio's ``[v; ω]`` order permuted)."""
    model, pm = _pin_robot("solo12")
    pd = pm.createData()
    q, v, tau = (np.asarray(x[0]) for x in random_states(model, 1, np.random.default_rng(9)))
    perm = model.v_permutation()
    _, da_dv, da_dt = (np.asarray(x) for x in _jacobians(model, q, v, tau, "aba"))
    ref = pin.computeABADerivatives(pm, pd, np.asarray(model.q_to_pinocchio(q)), v[perm], tau[perm])
    assert rel_error(da_dv[np.ix_(perm, perm)], np.asarray(ref[1])) <= 1e-9
    assert rel_error(da_dt[np.ix_(perm, perm)], np.asarray(ref[2])) <= 1e-9


@functools.partial(jax.jit, static_argnames="which")
def _tangent_jacobian(model, q, v, x, which):
    """``∂f/∂δ`` at ``δ = 0`` of ``f(q ⊕ δ)``: the configuration derivative on the manifold,
    the tangent Pinocchio's ``ddq_dq``/``dtau_dq`` use (``q ⊕ δ = integrate(q, δ)``)."""

    def f(d):
        qd = mb.integrate(model, q, d, 1.0)
        if which == "aba":
            return mb.forward_dynamics(model, qd, v, x)
        return mb.rnea(model, qd, v, x)

    return jax.jacfwd(f)(jnp.zeros_like(v))


@pytest.mark.slow  # compile time; CI's second step
@pytest.mark.parametrize("name", ["solo12", "talos_reduced"])
def test_configuration_derivatives_floating_base(name):
    """``∂a/∂q`` against ``computeABADerivatives`` and ``∂τ/∂q`` against
    ``computeRNEADerivatives`` on a floating base, the free flyer's tangent taken through
    :func:`integrate` (Pinocchio's ``q ⊕ δ`` with the body twist) and its ``[ω; v]``
    rows and columns permuted to Pinocchio's ``[v; ω]``."""
    model, pm = _pin_robot(name)
    pd = pm.createData()
    q, v, tau = (np.asarray(x[0]) for x in random_states(model, 1, np.random.default_rng(10)))
    perm = model.v_permutation()
    qp = np.asarray(model.q_to_pinocchio(q))
    da_dq = np.asarray(_tangent_jacobian(model, q, v, tau, "aba"))
    ref = pin.computeABADerivatives(pm, pd, qp, v[perm], tau[perm])
    err = rel_error(da_dq[np.ix_(perm, perm)], np.asarray(ref[0]))
    _note(f"jacfwd aba ddq_dq floating [{name}]", err)
    assert err <= 1e-9, err
    a = np.asarray(pd.ddq)[np.argsort(perm)]
    dtau_dq = np.asarray(_tangent_jacobian(model, q, v, a, "rnea"))
    ref = pin.computeRNEADerivatives(pm, pd, qp, v[perm], a[perm])
    err = rel_error(dtau_dq[np.ix_(perm, perm)], np.asarray(ref[0]))
    _note(f"jacfwd rnea dtau_dq floating [{name}]", err)
    assert err <= 1e-10, err


@pytest.mark.slow  # compile time; CI's second step
def test_finite_gradients_at_zero_and_with_massless_links():
    """At ``q = v = 0`` and on a chain whose middle links are massless (the leaf keeps mass, so
    ``M`` stays regular), gradients through both methods and through the inertias are finite
    and agree with central differences."""
    base = mb.chain_model(4, floating_base=False, dtype="float64")
    params = np.asarray(base.inertia.params).copy()
    params[1:3] = 0.0  # two massless links between massive ones
    massless = dataclasses.replace(base, inertia=type(base.inertia)(jnp.asarray(params)))
    gvec = jnp.array([0.0, -9.81, 0.0])
    for model in (base, massless):
        for q in (np.zeros(4), np.array([0.3, -0.7, 1.1, 0.2])):
            v, tau = np.zeros(4), np.array([1.0, -0.5, 0.2, 0.1])

            def f(q, v, tau, p, method, model=model):
                m = dataclasses.replace(model, inertia=type(model.inertia)(p))
                return mb.forward_dynamics(m, q, v, tau, gvec, method=method)

            p0 = model.inertia.params
            for method in ("aba", "crba"):
                fj = jax.jit(functools.partial(f, method=method))
                J = jax.jit(jax.jacfwd(fj, argnums=(0, 3)))(q, v, tau, p0)
                assert all(np.isfinite(np.asarray(x)).all() for x in J), (model.name, method)
                eps = 1e-6
                t = np.random.default_rng(1).standard_normal(4)
                plus, minus = fj(q + eps * t, v, tau, p0), fj(q - eps * t, v, tau, p0)
                fd = (np.asarray(plus) - np.asarray(minus)) / (2 * eps)
                np.testing.assert_allclose(np.asarray(J[0]) @ t, fd, rtol=1e-6, atol=1e-6)


# -------------------------------------------------------------- batches, models
@pytest.mark.slow  # compile time; CI's second step
def test_batches_broadcast_and_vmap_over_models():
    model = mb.chain_model(3, floating_base=True, dtype="float64")
    rng = np.random.default_rng(2)
    q, v, tau = (np.asarray(x) for x in random_states(model, 6, rng))
    q, v, tau = q.reshape(2, 3, -1), v[:3], tau[:1]
    fext = rng.standard_normal((model.nbodies, 6))
    a = mb.forward_dynamics(model, q[:, :, None], v, tau, f_ext=fext)  # (2, 3, 3, nv)
    assert a.shape == (2, 3, 3, model.nv)
    one = mb.forward_dynamics(model, q[1, 2], v[0], tau[0], f_ext=fext)
    np.testing.assert_allclose(a[1, 2, 0], one, rtol=1e-13)
    # f_ext with its own batch axis broadcasts against the states'
    fb = rng.standard_normal((4, 1, model.nbodies, 6))
    assert mb.forward_dynamics(model, q[0, 0], v, tau[0], f_ext=fb).shape == (4, 3, model.nv)
    # rnea's level and loop sweeps subtract f_ext like the scan
    r = [mb.rnea(model, q[0], v, tau[0], f_ext=fb, method=k) for k in ("scan", "levels", "loop")]
    assert r[0].shape == (4, 3, model.nv)
    np.testing.assert_allclose(r[1], r[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(r[2], r[0], rtol=0, atol=1e-12)
    # vmap over models with different inertias == one call per model
    scales = jnp.array([0.5, 1.0, 3.0])
    models = dataclasses.replace(
        jax.tree.map(lambda x: jnp.stack([x] * 3), model),
        inertia=type(model.inertia)(model.inertia.params[None] * scales[:, None, None]),
    )
    got = jax.jit(jax.vmap(mb.forward_dynamics, in_axes=(0, None, None, None)))(
        models, q[0, 0], v[0], tau[0]
    )
    for k in range(3):
        mk = jax.tree.map(lambda x, k=k: x[k], models)
        np.testing.assert_allclose(got[k], mb.forward_dynamics(mk, q[0, 0], v[0], tau[0]),
                                   rtol=1e-12)  # fmt: skip


def test_pendulum_closed_form():
    """One rod of mass m, length L about z with gravity along −y: ``I θ̈ = τ − m g L/2 cos θ``."""
    m, L = 2.0, 1.0
    model = mb.chain_model(1, length=L, mass=m, dtype="float64")
    I = m * L * L / 12 + m * (L / 2) ** 2 + 0.0  # noqa: E741 - about z through the joint
    th = np.array([[0.0], [0.4], [1.2]])
    tau = np.array([0.5])
    a = mb.forward_dynamics(model, th, np.zeros(1), tau, gravity=(0.0, -9.81, 0.0))
    ref = (tau - m * 9.81 * L / 2 * np.cos(th)) / I
    np.testing.assert_allclose(a, ref, rtol=1e-13)


# -------------------------------------------------------------------- singular
@pytest.mark.slow  # compile time; CI's second step
def test_singular_mass_matrix_raises_eagerly_and_is_nan_under_jit():
    zero = mb.chain_model(3, mass=0.0, dtype="float64")
    q, v, tau = np.zeros(3), np.zeros(3), np.ones(3)
    for method in ("aba", "crba"):
        with raises_argument(ArgumentError, "model", match="singular in 1 of 1 states"):
            mb.forward_dynamics(zero, q, v, tau, method=method)
        a = jax.jit(functools.partial(mb.forward_dynamics, method=method))(zero, q, v, tau)
        assert np.isnan(np.asarray(a)).all()
    # vmap over a regular and a zero-mass model: only the singular one is NaN, and the
    # regular one's gradient stays finite
    reg = mb.chain_model(3, mass=1.0, dtype="float64")
    both = jax.tree.map(lambda a, b: jnp.stack([a, b]), reg, zero)
    for method in ("aba", "crba"):
        fd = jax.vmap(functools.partial(mb.forward_dynamics, method=method), (0, None, None, None))
        a = np.asarray(jax.jit(fd)(both, q, v, tau))
        assert np.isfinite(a[0]).all() and np.isnan(a[1]).all()
        gq = jax.jit(jax.grad(lambda q, fd=fd: fd(both, q, v, tau)[0].sum()))(q)
        assert np.isfinite(np.asarray(gq)).all()
    # a floating zero-mass chain: the free flyer's articulated inertia is singular
    zf = mb.chain_model(2, mass=0.0, floating_base=True, dtype="float64")
    qf = np.asarray(zf.neutral_configuration())
    with raises_argument(ArgumentError, "model"):
        mb.forward_dynamics(zf, qf, np.zeros(zf.nv), np.zeros(zf.nv))


# -------------------------------------------------------------------- bad input
def test_bad_input():
    model = mb.chain_model(3, dtype="float64")
    q, v, tau = np.zeros(3), np.zeros(3), np.zeros(3)
    with raises_argument(ArgumentError, "q"):
        mb.forward_dynamics(model, np.zeros(4), v, tau)
    with raises_argument(ArgumentError, "tau"):
        mb.forward_dynamics(model, q, v, np.zeros(2))
    with raises_argument(ArgumentError, "v"):
        mb.nonlinear_effects(model, q, np.zeros(5))
    with raises_argument(ArgumentError, "f_ext"):
        mb.forward_dynamics(model, q, v, tau, f_ext=np.zeros((3, 3)))
    with raises_argument(ArgumentError, "f_ext"):
        mb.rnea(model, q, v, tau, f_ext=np.zeros((2, 6)))
    with raises_argument(ArgumentError, "f_ext"):
        mb.forward_dynamics(model, np.zeros((2, 3)), v, tau, f_ext=np.zeros((3, 3, 6)))
    with raises_argument(ArgumentError, "method"):
        mb.forward_dynamics(model, q, v, tau, method="featherstone")
    with raises_argument(ArgumentError, "gravity"):
        mb.gravity_torques(model, q, gravity=(0.0, -9.81))
    with raises_argument(ArgumentTypeError, "tau"):
        mb.forward_dynamics(model, q, v, np.zeros(3, np.float32))
    with raises_argument(ArgumentTypeError, "f_ext"):
        mb.forward_dynamics(model, q, v, tau, f_ext=np.zeros((3, 6), int))


def test_locked_panda_fingers_structure():
    """The locked Panda (fingers merged) has the 7 arm dofs in forward dynamics too."""
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = str(ROBOTS / CASES[0][1])
    model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    a = mb.forward_dynamics(model, np.zeros(7), np.zeros(7), np.zeros(7))
    assert a.shape == (7,) and np.isfinite(np.asarray(a)).all()


def test_long_batches_are_chunked_without_changing_results():
    """More than two chunks of states (``aba._ABA_CHUNK``; the last one padded) give the
    single-state results and the Cholesky method's."""
    from spatialjax.multibody import aba

    model = mb.chain_model(3, floating_base=True, dtype="float64")
    n = 2 * aba._ABA_CHUNK + 7
    q, v, tau = (np.asarray(x) for x in random_states(model, n, np.random.default_rng(12)))
    a = np.asarray(jax.jit(mb.forward_dynamics)(model, q, v, tau))
    ref = np.asarray(
        jax.jit(functools.partial(mb.forward_dynamics, method="crba"))(model, q, v, tau)
    )
    np.testing.assert_allclose(a, ref, rtol=1e-10, atol=1e-10)
    one = jax.jit(mb.forward_dynamics)
    for k in (0, aba._ABA_CHUNK - 1, aba._ABA_CHUNK, n - 1):
        np.testing.assert_allclose(a[k], one(model, q[k], v[k], tau[k]), rtol=1e-12, atol=1e-12)


def test_auto_route_by_dofs_and_batch():
    """``method="auto"``: one state of a small tree and batches of at most
    ``_AUTO_CRBA_DOFS`` dofs take the Cholesky route, larger trees the ABA."""
    from spatialjax.multibody import aba

    small = mb.chain_model(aba._AUTO_CRBA_DOFS, dtype="float64")
    large = mb.chain_model(aba._AUTO_CRBA_DOFS + 1, dtype="float64")
    assert aba._fd_route("auto", small, ()) == "crba"
    assert aba._fd_route("auto", small, (1000,)) == "crba"
    assert aba._fd_route("auto", large, (1000,)) == "aba"
    assert aba._fd_route("aba", small, (1000,)) == "aba"
    assert aba._fd_route("crba", large, (2, 3)) == "crba"
