"""spatialjax.multibody against Pinocchio on example-robot-data robots, plus properties.

Every robot is loaded from the same URDF by both libraries; one jitted function per
robot and dtype computes FK, RNEA, CRBA and the regressor for a batch of random
states (one compile per robot), each state compared with Pinocchio's C++ result.
"""

from __future__ import annotations

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
    raises_error,
    random_states,
    tree_urdf,
)

import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError
from spatialjax.io import ModelFileError

pin = pytest.importorskip("pinocchio")


needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

NSTATES = 3
FLOAT32_ROBOTS = ("solo",)  # URDF robot names: one floating-base robot (free flyer + revolute)


@functools.partial(jax.jit, static_argnames="method")
def _everything(model, q, v, a, method="levels"):
    fk = mb.forward_kinematics(model, q, v, a, method=method)
    tau = mb.rnea(model, q, v, a, method=method)
    H = mb.mass_matrix(model, q, method=method)
    Y = mb.joint_torque_regressor(model, q, v, a, method=method)
    return fk, tau, H, Y


@jax.jit
def _to_pinocchio(model, q, v, a):
    """The states in Pinocchio's layout, in one program (eagerly: ~20 small compiles)."""
    return model.q_to_pinocchio(q), model.v_to_pinocchio(v), model.v_to_pinocchio(a)


def _pin_everything(pm, qp, vp, ap):
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, qp, vp, ap)
    R = np.array([pd.oMi[i].rotation for i in range(1, pm.njoints)])
    p = np.array([pd.oMi[i].translation for i in range(1, pm.njoints)])
    vel = np.array([np.r_[pd.v[i].angular, pd.v[i].linear] for i in range(1, pm.njoints)])
    acc = np.array([np.r_[pd.a[i].angular, pd.a[i].linear] for i in range(1, pm.njoints)])
    tau = pin.rnea(pm, pd, qp, vp, ap).copy()
    H = pin.crba(pm, pd, qp).copy()
    H = np.triu(H) + np.triu(H, 1).T
    Y = pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap).copy()
    return R, p, vel, acc, tau, H, Y


# the two floating-base robots (Talos: 32 bodies) compile for long: their sweeps are `slow`
SLOW_ROBOTS = {"solo12", "talos_reduced"}


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(c, id=c[0], marks=pytest.mark.slow if c[0] in SLOW_ROBOTS else ())
        for c in CASES
    ],
)
def robot(request):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    _, rel, floating, locked = request.param
    path = str(ROBOTS / rel)
    model = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    return model, pin_model(path, floating, locked)


def test_structure_matches_pinocchio(robot):
    model, pm = robot
    assert model.nv == pm.nv and model.nq_pinocchio == pm.nq
    assert model.nbodies == pm.njoints - 1
    names = list(pm.names)[1:]
    assert list(model.joint_names[int(model.floating_base) :]) == names[int(model.floating_base) :]
    assert [p + 1 for p in model.parents] == list(pm.parents)[1:]
    pin_params = np.array([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    np.testing.assert_allclose(model.inertia.params, pin_params, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["levels", "scan"])
def test_float64_matches_pinocchio(robot, method):
    model, pm = robot
    q, v, a = random_states(model, NSTATES, np.random.default_rng(1))
    # NumPy copies: indexing device arrays state by state would compile a slice per shape
    fk, tau, H, Y = jax.tree.map(np.asarray, _everything(model, q, v, a, method=method))
    perm = model.v_permutation()
    qp_all, vp_all, ap_all = (np.asarray(x) for x in _to_pinocchio(model, q, v, a))
    for k in range(NSTATES):
        R, p, vel, acc, tau_p, H_p, Y_p = _pin_everything(pm, qp_all[k], vp_all[k], ap_all[k])
        np.testing.assert_allclose(fk.poses.E[k], R, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fk.poses.r[k], p, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fk.velocities[k], vel, rtol=0, atol=1e-11)
        np.testing.assert_allclose(fk.accelerations[k], acc, rtol=0, atol=1e-11)
        scale = max(1.0, np.abs(tau_p).max())
        np.testing.assert_allclose(np.asarray(tau[k])[perm], tau_p, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(
            np.asarray(H[k])[np.ix_(perm, perm)], H_p, rtol=0, atol=1e-12 * max(1, H_p.max())
        )
        np.testing.assert_allclose(
            np.asarray(Y[k])[perm], Y_p, rtol=0, atol=1e-12 * max(1.0, np.abs(Y_p).max())
        )
    # Y π == rnea (both from this module; Pinocchio checked each above), in NumPy
    Ypi = np.einsum("...ij,j->...i", Y, np.asarray(model.inertia.params).reshape(-1))
    np.testing.assert_allclose(Ypi, tau, rtol=0, atol=1e-10 * max(1.0, float(np.abs(tau).max())))


def test_float32_matches_pinocchio(robot):
    model64, pm = robot
    if model64.name not in FLOAT32_ROBOTS:
        pytest.skip("float32 runs on one floating-base robot (compile time)")
    model = model64.astype(jnp.float32)
    q, v, a = random_states(model, NSTATES, np.random.default_rng(2), np.float32)
    fk, tau, H, Y = jax.tree.map(np.asarray, _everything(model, q, v, a))
    assert tau.dtype == jnp.float32 and H.dtype == jnp.float32 and Y.dtype == jnp.float32
    perm = model.v_permutation()
    q64, v64, a64 = (jnp.asarray(np.asarray(x).astype(np.float64)) for x in (q, v, a))
    qp_all, vp_all, ap_all = (np.asarray(x) for x in _to_pinocchio(model64, q64, v64, a64))
    for k in range(NSTATES):
        R, p, vel, acc, tau_p, H_p, Y_p = _pin_everything(pm, qp_all[k], vp_all[k], ap_all[k])
        # float32 round-off ~6e-8, grown along the chain (~depth) and by the state's scale
        np.testing.assert_allclose(fk.poses.E[k], R, rtol=0, atol=2e-5)
        np.testing.assert_allclose(fk.poses.r[k], p, rtol=0, atol=2e-5)
        tol = 3e-5 * max(1.0, np.abs(tau_p).max())
        np.testing.assert_allclose(np.asarray(tau[k])[perm], tau_p, rtol=0, atol=tol)
        tol = 3e-5 * max(1.0, np.abs(H_p).max())
        np.testing.assert_allclose(np.asarray(H[k])[np.ix_(perm, perm)], H_p, rtol=0, atol=tol)


# ---------------------------------------------------------------- smaller checks


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_one_state_poses_match_pinocchio_and_the_batched_sweep(tmp_path, dtype):
    """One state ``(nq,)`` takes its own pose path (``_onestate.poses``): Pinocchio's ``oMi``,
    the batched sweep's poses, and the same under ``vmap`` and ``grad``."""
    path = tree_urdf(tmp_path)
    model = mb.Model.from_urdf(path, floating_base=True, dtype=dtype)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    Q = next(random_states(model, 3, np.random.default_rng(11), np.dtype(dtype)))
    tol = 1e-12 if dtype == "float64" else 2e-5
    one = jax.jit(lambda q: mb.forward_kinematics(model, q).poses)
    batched = mb.forward_kinematics(model, Q).poses  # 3 states: the loop sweep
    pd = pm.createData()
    for k in range(3):
        got = one(Q[k])
        assert got.E.dtype == np.dtype(dtype) and got.E.shape == (model.nbodies, 3, 3)
        np.testing.assert_allclose(got.E, batched.E[k], rtol=0, atol=tol)
        np.testing.assert_allclose(got.r, batched.r[k], rtol=0, atol=tol)
        pin.forwardKinematics(pm, pd, np.asarray(model.q_to_pinocchio(Q[k]), np.float64))
        for i in range(model.nbodies):
            M = pd.oMi[pm.getJointId(model.joint_names[i]) if i else 1]
            np.testing.assert_allclose(got.E[i], M.rotation, rtol=0, atol=10 * tol)
            np.testing.assert_allclose(got.r[i], M.translation, rtol=0, atol=10 * tol)
    vm = jax.vmap(lambda q: mb.forward_kinematics(model, q).poses.r)(Q)
    np.testing.assert_allclose(vm, batched.r, rtol=0, atol=tol)
    # d r_last / d q: the one-state path against the batched sweep's derivative
    g1 = jax.grad(lambda q: mb.forward_kinematics(model, q).poses.r[-1].sum())(Q[0])
    g3 = jax.grad(lambda q: mb.forward_kinematics(model, q).poses.r[:, -1].sum())(Q[:2])
    np.testing.assert_allclose(g1, g3[0], rtol=0, atol=100 * tol)


def test_level_loop_and_scan_sweeps_agree_on_a_branching_tree(tmp_path):
    path = tree_urdf(tmp_path)
    model = mb.Model.from_urdf(path, floating_base=True, dtype="float64")
    assert model.levels == ((0,), (1, 3), (2,)) and model.parents == (-1, 0, 1, 0)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    q, v, a = (x[0] for x in random_states(model, 1, np.random.default_rng(3)))
    t_lev, t_loop, t_scan = jax.jit(
        lambda q, v, a: tuple(mb.rnea(model, q, v, a, method=m) for m in ("levels", "loop", "scan"))
    )(q, v, a)
    np.testing.assert_allclose(t_lev, t_loop, rtol=0, atol=1e-13)
    np.testing.assert_allclose(t_scan, t_loop, rtol=0, atol=1e-13)
    args = [np.asarray(x) for x in (model.q_to_pinocchio(q), model.v_to_pinocchio(v),
                                    model.v_to_pinocchio(a))]  # fmt: skip
    tau_p = pin.rnea(pm, pm.createData(), *args)
    np.testing.assert_allclose(model.v_to_pinocchio(t_lev), tau_p, rtol=0, atol=1e-12)


@needs_robots
def test_frame_poses_match_pinocchio():
    path = str(ROBOTS / CASES[0][1])
    model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    pm = pin_model(path, False, PANDA_LOCKED)
    q = next(random_states(model, 1, np.random.default_rng(3)))[0]
    frames = jax.jit(lambda q: mb.frame_poses(model, mb.forward_kinematics(model, q).poses))(q)
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, np.asarray(model.q_to_pinocchio(q)))
    for name in ("panda_hand", "panda_leftfinger", "panda_link8", "panda_link0"):
        k = model.frame_names.index(name)
        M = pd.oMf[pm.getFrameId(name)]
        np.testing.assert_allclose(frames.E[k], M.rotation, atol=1e-12)
        np.testing.assert_allclose(frames.r[k], M.translation, atol=1e-12)


@needs_robots
def test_from_pinocchio_matches_from_urdf():
    path = str(ROBOTS / "talos_data/robots/talos_reduced.urdf")
    a = mb.Model.from_urdf(path, floating_base=True, dtype="float64")
    b = mb.from_pinocchio(pin_model(path, True, None), dtype="float64")
    assert a.parents == b.parents and a.joint_types == b.joint_types
    assert a.joint_names[1:] == b.joint_names[1:] and a.body_names == b.body_names
    for x, y in zip(jax.tree.leaves((a.placements, a.axes, a.inertia)),
                    jax.tree.leaves((b.placements, b.axes, b.inertia)), strict=True):  # fmt: skip
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)
    for f in ("armature", "damping", "friction", "lower", "upper", "velocity_limit",
              "effort_limit"):  # fmt: skip
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-15, err_msg=f)


def test_pinocchio_converters_round_trip_and_layout():
    model = mb.chain_model(3, floating_base=True, dtype="float64")
    q = jnp.array([0.1, 0.2, 0.3, 0.5, 0.5, -0.5, 0.5, 0.7, -0.4])
    qp = model.q_to_pinocchio(q)
    np.testing.assert_array_equal(qp[3:7], [0.5, -0.5, 0.5, 0.5])  # xyzw
    np.testing.assert_array_equal(model.q_from_pinocchio(qp), q)
    v = jnp.arange(8.0)
    np.testing.assert_array_equal(model.v_to_pinocchio(v), [3, 4, 5, 0, 1, 2, 6, 7])  # [v; ω]
    np.testing.assert_array_equal(model.v_from_pinocchio(model.v_to_pinocchio(v)), v)
    assert (model.nq, model.nv) == (9, 8)


def test_continuous_joint_q_is_cos_sin_in_pinocchio():
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = ROBOTS / "double_pendulum_description/urdf/double_pendulum_continuous.urdf"
    model = mb.Model.from_urdf(path, dtype="float64")
    assert model.joint_types == ("continuous", "continuous")
    q = jnp.array([0.3, -2.0])
    qp = model.q_to_pinocchio(q)
    np.testing.assert_allclose(qp, [np.cos(0.3), np.sin(0.3), np.cos(-2.0), np.sin(-2.0)])
    np.testing.assert_allclose(model.q_from_pinocchio(qp), q, atol=1e-15)


def test_batch_shapes_broadcast():
    model = mb.chain_model(3, dtype="float64")

    def shapes(q, v, a):
        fk = mb.forward_kinematics(model, q, v)
        return mb.joint_torque_regressor(model, q, v, a), fk, mb.mass_matrix(model, q)

    rng = np.random.default_rng(4)
    q = jnp.asarray(rng.standard_normal((2, 1, 3)))
    v = jnp.asarray(rng.standard_normal((4, 3)))
    a = jnp.asarray(rng.standard_normal((3,)))
    # shapes by abstract evaluation (no compile); values through one small program
    Y, fk, H = jax.eval_shape(shapes, q, v, a)
    assert Y.shape == (2, 4, 3, 30) and H.shape == (2, 1, 3, 3)
    assert fk.poses.E.shape == (2, 4, 3, 3, 3) and fk.velocities.shape == (2, 4, 3, 6)
    f = jax.jit(lambda q, v, a: mb.rnea(model, q, v, a))
    tau = f(q, v, a)
    assert tau.shape == (2, 4, 3)
    full = (jnp.broadcast_to(x, (2, 4, 3)) for x in (q, v, a))
    np.testing.assert_allclose(tau, f(*full), rtol=0, atol=1e-13)


def test_empty_batch_gives_empty_results():
    """A batch of 0 states gives empty results of the right shapes (regression test: the
    in-place chunked sweep of the mass matrix and regressor divided by the batch size)."""
    model = mb.chain_model(3, floating_base=True, dtype="float64")
    q, v = jnp.zeros((0, model.nq)), jnp.zeros((0, model.nv))
    assert mb.mass_matrix(model, q).shape == (0, model.nv, model.nv)
    Y = mb.joint_torque_regressor(model, q, v, v)
    assert Y.shape == (0, model.nv, 10 * model.nbodies)
    assert mb.rnea(model, q, v, v).shape == (0, model.nv)


def test_single_pendulum_closed_form():
    """One rod about z with gravity along -y: τ = I_o θ̈ + m g (L/2) cos θ (textbook pendulum)."""
    model = mb.chain_model(1, length=2.0, mass=3.0, dtype="float64")
    th, thd, thdd = 0.4, 1.3, -0.7
    tau, H = jax.jit(
        lambda q, v, a: (mb.rnea(model, q, v, a, (0.0, -9.81, 0.0)), mb.mass_matrix(model, q))
    )(jnp.array([th]), jnp.array([thd]), jnp.array([thdd]))
    I_o = 3.0 * 2.0**2 / 3.0  # rod about its end: m L² / 3
    np.testing.assert_allclose(tau[0], I_o * thdd + 3.0 * 9.81 * 1.0 * np.cos(th), rtol=1e-14)
    np.testing.assert_allclose(H[0, 0], I_o, rtol=1e-14)


def test_projected_regressor_columns_are_s_transpose_phi():
    """The regressor's written-out ``sᵀ Φ(v, a)`` equals ``sᵀ`` times the dense body regressor
    (``identification.body_regressor``, checked against Pinocchio in test_identification),
    and ``Φ(v, a) π`` is the body force ``I a + v ×* I v`` (RBDA eq. 2.63 inertia product)."""
    from spatialjax.identification import body_regressor
    from spatialjax.multibody import _batchlast as bl

    rng = np.random.default_rng(11)
    n = 7  # states, on the last axis (the module's internal layout)
    s, v, a = (jnp.asarray(rng.standard_normal((6, n))) for _ in range(3))
    pi = jnp.asarray(rng.standard_normal((10, 1)))
    phi = body_regressor(v.T, a.T)  # (n, 6, 10), batch first
    x = a[3:] + jnp.cross(v[:3], v[3:], axis=0)
    got = bl.projected_regressor_columns(s, v[:3], a[:3], x)  # (10, n)
    np.testing.assert_allclose(got, jnp.einsum("kn,nkc->cn", s, phi), rtol=0, atol=1e-12)
    force = bl.inertia_times(pi, a) + bl.crf(v, bl.inertia_times(pi, v))
    np.testing.assert_allclose(jnp.einsum("nkc,cn->kn", phi, pi), force, rtol=0, atol=1e-12)


def test_joint_model_friction_columns_and_sign_zero():
    model = mb.chain_model(3, floating_base=True, dtype="float64")
    v = jnp.array([1.0, 2, 3, 4, 5, 6, -0.5, 0.0])
    jm = mb.JointModel(("viscous", "coulomb", "offset"))
    # one program, not ~20 eager ops
    Yf = np.asarray(jax.jit(lambda m, v: jm.regressor(m, v, jnp.zeros_like(v)))(model, v))
    assert Yf.shape == (8, 6)
    phi = jnp.array([0.1, 0.2, 0.3, 1.0, 2.0, 3.0])  # (F_v, F_c, offset) per joint
    expected = [0, 0, 0, 0, 0, 0, 0.1 * -0.5 + 0.2 * -1 + 0.3, 1.0 * 0.0 + 2.0 * 0.0 + 3.0]
    np.testing.assert_allclose(Yf @ phi, expected, atol=1e-15)


def test_vmap_over_models_with_different_inertias():
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = str(ROBOTS / CASES[0][1])
    base = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    scales = np.array([0.5, 1.0, 2.0])
    # the stacked models and states built in NumPy (eager jnp would compile per leaf shape)
    models = jax.tree.map(lambda x: np.stack([x, x, x]), base)
    params = models.inertia.params * scales[:, None, None]
    models = type(base)(**{**_fields(models), "inertia": type(base.inertia)(params)})
    q, v, a = (np.asarray(x) for x in random_states(base, 1, np.random.default_rng(5)))
    taus = jax.jit(jax.vmap(mb.rnea, in_axes=(0, None, None, None)))(models, q[0], v[0], a[0])
    taus = np.asarray(taus)
    pm = pin_model(path, False, PANDA_LOCKED)
    for k in range(3):
        pmk = pm.copy()
        for i in range(1, pm.njoints):
            pmk.inertias[i] = pin.Inertia.FromDynamicParameters(np.asarray(params[k, i - 1]))
        tau_p = pin.rnea(pmk, pmk.createData(), *(np.asarray(x) for x in
                         (base.q_to_pinocchio(q[0]), v[0], a[0])))  # fmt: skip
        np.testing.assert_allclose(taus[k], tau_p, rtol=0, atol=1e-12)


def _fields(model):
    import dataclasses

    return {f.name: getattr(model, f.name) for f in dataclasses.fields(model)}


@pytest.mark.slow  # check_grads of rnea, mass_matrix and FK on a floating chain
def test_gradients_check_grads():
    """Derivatives of rnea (q, v, a, inertias), mass_matrix and FK against finite differences."""
    model = mb.chain_model(2, floating_base=True, dtype="float64")
    q, v, a = (x[0] for x in random_states(model, 1, np.random.default_rng(6)))

    @jax.jit
    def f(q, v, a, params):
        m = type(model)(**{**_fields(model), "inertia": type(model.inertia)(params)})
        fk = mb.forward_kinematics(m, q)
        return mb.rnea(m, q, v, a), mb.mass_matrix(m, q), fk.poses.r, fk.poses.E

    # jax.test_util.check_grads(f, args, order=1, modes=("rev",)) checks the same
    # identity ⟨c, J t⟩ == ⟨Jᵀ c, t⟩ with J t from central differences; here the VJP is
    # one jitted program (the eager VJP of a jitted function compiles twice, ~2x slower)
    # and every argument gets its own tangent so a wrong block is named.
    args = (q, v, a, model.inertia.params)
    rng = np.random.default_rng(7)
    out = f(*args)
    cot = jax.tree.map(lambda x: jnp.asarray(rng.standard_normal(x.shape)), out)
    vjp = jax.jit(lambda args, c: jax.vjp(f, *args)[1](c))(args, cot)
    eps = 1e-5
    # the perturbed points and the inner products in NumPy (f's one program is reused;
    # eager jnp arithmetic would compile a program per operation and shape)
    args_np = [np.asarray(x) for x in args]
    cot_np = [np.asarray(c) for c in cot]
    for k, name in enumerate(("q", "v", "a", "params")):
        t = rng.standard_normal(args[k].shape)
        plus = f(*(x + eps * t if j == k else x for j, x in enumerate(args_np)))
        minus = f(*(x - eps * t if j == k else x for j, x in enumerate(args_np)))
        fd = sum(float(np.vdot(c, (np.asarray(p) - np.asarray(m)) / (2 * eps)))
                 for c, p, m in zip(cot_np, plus, minus, strict=True))  # fmt: skip
        ad = float(np.vdot(np.asarray(vjp[k]), t))
        assert abs(fd - ad) <= 1e-6 * max(1.0, abs(ad)), (name, fd, ad)


# -------------------------------------------------------------------- bad input

_URDF_HEAD = '<?xml version="1.0"?>\n<robot name="r">\n'
_LINKS = "".join(f'  <link name="l{i}"/>\n' for i in range(3))


def _joint(name, parent, child, jtype="revolute"):
    return (
        f'  <joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
        f'<child link="{child}"/><axis xyz="0 0 1"/></joint>\n'
    )


def _write(tmp_path, body):
    p = tmp_path / "r.urdf"
    p.write_text(_URDF_HEAD + body + "</robot>\n")
    return p


def test_bad_q_length_and_dtype():
    model = mb.chain_model(3, dtype="float64")
    with raises_argument(ArgumentError, "q"):
        mb.rnea(model, jnp.zeros(4), jnp.zeros(3), jnp.zeros(3))
    with raises_argument(ArgumentError, "v"):
        mb.forward_kinematics(model, jnp.zeros(3), jnp.zeros(2))
    with raises_argument(ArgumentTypeError, "q"):
        mb.rnea(model, jnp.zeros(3, jnp.float32), jnp.zeros(3), jnp.zeros(3))
    with raises_argument(ArgumentError, "v"):
        mb.rnea(model, jnp.zeros((2, 3)), jnp.zeros((5, 3)), jnp.zeros(3))
    with raises_argument(ArgumentError, "method"):
        mb.mass_matrix(model, jnp.zeros(3), method="fast")
    msg = r"method: expected one of \('auto', 'levels', 'loop', 'scan'\), got 'fast'"
    with raises_argument(ArgumentError, "method", match=msg):
        mb.rnea(model, jnp.zeros(3), jnp.zeros(3), jnp.zeros(3), method="fast")


@pytest.mark.parametrize(
    "nbodies, n",
    [(3, 5), *(pytest.param(*p, marks=pytest.mark.slow) for p in ((3, 1), (3, 40), (14, 2)))],
)  # fmt: skip
def test_auto_method_is_loop_for_small_models_and_batches_and_same_results(nbodies, n):
    """``method="auto"`` (the default) resolves to the unrolled loop for small models at
    small batches and to the scan otherwise, and gives the explicit methods' results."""
    from spatialjax.multibody import _sweep

    model = mb.chain_model(nbodies, floating_base=True, dtype="float64")
    want = (
        "loop" if nbodies <= _sweep._AUTO_LOOP_BODIES and n <= _sweep._AUTO_LOOP_STATES else "scan"
    )
    assert _sweep.resolve_method("auto", model, (n,)) == want
    assert _sweep.resolve_method("levels", model, (n,)) == "levels"
    q, v, a = random_states(model, n, np.random.default_rng(nbodies + n))
    ref = {m: _everything(model, q, v, a, method=m) for m in ("loop", "scan")}
    got = _everything(model, q, v, a, method="auto")
    for m in ("loop", "scan"):
        for x, y in zip(jax.tree.leaves(got), jax.tree.leaves(ref[m]), strict=True):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-10)
    # the defaults are "auto": eager calls of the public functions give the same (one state
    # of a small model: the world-frame one-state form, the same to rounding)
    tol = 1e-12 if _sweep.one_state("auto", model, (n,)) else 0.0
    np.testing.assert_allclose(mb.rnea(model, q, v, a), ref[want][1], rtol=tol, atol=tol)
    np.testing.assert_allclose(mb.mass_matrix(model, q), ref[want][2], rtol=tol, atol=tol)


def test_unknown_locked_joint(tmp_path):
    p = _write(tmp_path, _LINKS + _joint("j1", "l0", "l1") + _joint("j2", "l1", "l2"))
    with raises_argument(ArgumentError, "locked_joints"):
        mb.Model.from_urdf(p, locked_joints={"nope": 0.0})
    m = mb.Model.from_urdf(p, locked_joints={"j2": 0.5})
    assert m.joint_names == ("j1",) and m.frame_bodies == (-1, 0, 0)


def test_urdf_loop_two_roots_and_unsupported_joint(tmp_path):
    p = _write(tmp_path, _LINKS + _joint("j1", "l0", "l1") + _joint("j2", "l1", "l2")
               + _joint("j3", "l0", "l2"))  # fmt: skip
    with raises_error(ModelFileError, field="joint[j3]/child/link"):
        mb.Model.from_urdf(p)
    p = _write(tmp_path, _LINKS + _joint("j1", "l0", "l1"))
    with pytest.raises(ModelFileError, match=r"2 root links \('l0' \(line 3\), 'l2' \(line 5\)\)"):
        mb.Model.from_urdf(p)
    p = _write(tmp_path, _LINKS + _joint("j1", "l0", "l1") + _joint("j2", "l1", "l0")
               + _joint("j3", "l1", "l2"))  # fmt: skip
    with pytest.raises(ModelFileError, match="no root link"):
        mb.Model.from_urdf(p)
    p = _write(tmp_path, _LINKS + _joint("j1", "l0", "l1") + _joint("j2", "l1", "l2", "planar"))
    with raises_error(ModelFileError, line=7, field="joint[j2]/type"):
        mb.Model.from_urdf(p)
    p = _write(tmp_path, _LINKS + _joint("j1", "l0", "l1") + _joint("j2", "l1", "lx"))
    with raises_error(ModelFileError, field="joint[j2]/child/link"):
        mb.Model.from_urdf(p)


@pytest.mark.slow
def test_long_batches_are_chunked_without_changing_results():
    """Batches over 2 chunks are swept in chunks (lax.map with a padded last chunk; the mass
    matrix and regressor in place, the last chunk overlapping): same rows as unchunked."""
    from spatialjax.multibody import _sweep

    model = mb.chain_model(2, floating_base=True, dtype="float64")
    n = 2 * _sweep._CHUNK + 5  # 3 chunks, the last one padded
    q, v, a = random_states(model, n, np.random.default_rng(8))
    rows = np.array([0, 1, _sweep._CHUNK, 2 * _sweep._CHUNK - 1, n - 3, n - 1])

    def sweeps(q, v, a, m="levels"):
        return (
            mb.rnea(model, q, v, a, method=m),
            mb.forward_kinematics(model, q, v, a, method=m),
            mb.mass_matrix(model, q, method=m),
            mb.joint_torque_regressor(model, q, v, a, method=m),
        )

    # one program: both methods on the long batch, and the level sweep on the rows alone
    # (4 states: one unpadded chunk)
    @jax.jit
    def f(q, v, a):
        long = [sweeps(q, v, a, m) for m in ("levels", "scan")]
        return long, sweeps(q[rows], v[rows], a[rows])

    ((tau, fk, H, Y), (tau_s, fk_s, H_s, Y_s)), (tau_r, fk_r, H_r, Y_r) = jax.tree.map(
        np.asarray, f(q, v, a)
    )
    np.testing.assert_allclose(tau[rows], tau_r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tau_s, tau, rtol=0, atol=1e-12)
    # mass matrix and regressor: two levels of chunks, both with an overlapping last chunk
    for x, x_s, x_r in ((H, H_s, H_r), (Y, Y_s, Y_r)):
        np.testing.assert_allclose(x[rows], x_r, rtol=0, atol=1e-12)
        np.testing.assert_allclose(x_s, x, rtol=0, atol=1e-12)
    for x, y in zip(jax.tree.leaves(fk_s), jax.tree.leaves(fk), strict=True):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)
    for x, y in zip(jax.tree.leaves(fk), jax.tree.leaves(fk_r), strict=True):
        np.testing.assert_allclose(x[rows], y, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_mass_matrix_and_regressor_chunks_agree_with_single_states():
    """Large per-state results are swept in small chunks (``_sweep.chunk_for``), each written in
    place into the output: 3 chunks (the last one overlapping the second) give the rows of
    one-state calls, also in the overlap (regression test for the chunked mass matrix and
    regressor)."""
    from spatialjax.multibody import _sweep

    # the smallest chain whose mass matrix (nv = 33: 8.7 kB per state) is swept 64 states
    # at a time: compiling every (joint, body) pair of a longer chain costs seconds
    model = mb.chain_model(28, floating_base=True, dtype="float64")
    chunk_h = _sweep.chunk_for(model.nv * model.nv * 8)
    chunk_y = _sweep.chunk_for(model.nv * model.nbodies * 10 * 8)
    assert chunk_h == 64 and chunk_y == 64
    n = 2 * chunk_h + 5
    q, v, a = random_states(model, n, np.random.default_rng(9))
    rows = np.array([0, 1, chunk_y, n - chunk_h + 3, 2 * chunk_h - 1, n - 1])

    # one program: the long batch, and the rows alone (5 states: one chunk) with their rnea
    @jax.jit
    def f(q, v, a):
        qr, vr, ar = q[rows], v[rows], a[rows]
        return (
            (mb.mass_matrix(model, q), mb.joint_torque_regressor(model, q, v, a)),
            (mb.mass_matrix(model, qr), mb.joint_torque_regressor(model, qr, vr, ar)),
            mb.rnea(model, qr, vr, ar),
        )

    (H, Y), (H_r, Y_r), tau = jax.tree.map(np.asarray, f(q, v, a))
    np.testing.assert_allclose(H[rows], H_r, rtol=0, atol=1e-10)
    np.testing.assert_allclose(Y[rows], Y_r, rtol=0, atol=1e-10)
    pi = np.asarray(model.inertia.params).reshape(-1)
    np.testing.assert_allclose(Y_r @ pi, tau, rtol=0, atol=1e-9)
    np.testing.assert_allclose(H_r, np.swapaxes(H_r, -1, -2), rtol=0, atol=1e-12)
