"""Whole-robot identification: fit_torques / fit_robot / least_squares_torques / identifiability.

Synthetic torque logs from ``multibody.rnea`` on a 2-link spatial arm written
here as a URDF (and the Panda of example-robot-data), with "true" bodies
drawn consistent and different from the URDF prior, plus joint friction.
References are independent: the truth that generated the data, NumPy
``lstsq``/``matrix_rank``, cvxpy + Clarabel on the same objective, Pinocchio's
``computeJointTorqueRegressor``. Every fit of the 2-link arm uses the same
shapes (N = 150 samples) so that compiled programs are shared.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument, random_inertia_params, robots_dir

import spatialjax as sj
import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError, _params
from spatialjax.identification import (
    FitStatus,
    IdentifyError,
    IdentifyTypeError,
    InteriorPoint,
    RobotFitResult,
    fit_robot,
    fit_torques,
    identifiability,
    least_squares_torques,
    parameter_names,
)

N = 150
URDF = """<?xml version="1.0"?>
<robot name="arm2">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0.02 0.01 0.15"/><mass value="2.0"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0.0" iyy="0.025" iyz="0.0" izz="0.01"/></inertial>
  </link>
  <link name="fore">
    <inertial><origin xyz="0.2 0.0 0.01"/><mass value="1.2"/>
      <inertia ixx="0.004" ixy="0.0" ixz="0.001" iyy="0.02" iyz="0.0" izz="0.021"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="5"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0 0 0.3" rpy="0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="5"/>
  </joint>
</robot>
"""
FRICTION = np.array([[0.15, 0.4, 0.05], [0.08, 0.25, -0.03]])  # viscous, coulomb, offset
NONNEG = np.array([True, True, False] * 2)


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    path = tmp_path_factory.mktemp("urdf") / "arm2.urdf"
    path.write_text(URDF)
    return mb.Model.from_urdf(path, dtype="float64")


def _trajectory(n=N, seed=0, nj=2):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 12.0, n)[:, None]
    w = 0.5 + rng.uniform(0.0, 1.5, (3, nj))
    A = rng.uniform(0.4, 1.2, (3, nj))
    ph = rng.uniform(0, 2 * np.pi, (3, nj))
    q = sum(A[i] * np.sin(w[i] * t + ph[i]) for i in range(3))
    v = sum(A[i] * w[i] * np.cos(w[i] * t + ph[i]) for i in range(3))
    a = sum(-A[i] * w[i] ** 2 * np.sin(w[i] * t + ph[i]) for i in range(3))
    return q, v, a


def _truth(model, seed=1):
    """Consistent bodies near the URDF ones (mass ±20 %, CoM and moments perturbed)."""
    rng = np.random.default_rng(seed)
    prior = np.asarray(model.inertia.params)
    rand = random_inertia_params(rng, prior.shape[0])  # consistent, about the origin
    return 0.8 * prior + 0.2 * rand * (prior[:, :1] / rand[:, :1])  # convex mix: consistent


@jax.jit
def _simulate(model, true, q, v, a):
    """The truth's rigid-body torques and the model's regressors, in one program (eager
    multibody calls compile a program per operation: ~150 here)."""
    mt = dataclasses.replace(model, inertia=sj.RigidBodyInertia(true))
    return (
        mb.rnea(mt, q, v, a),
        mb.joint_torque_regressor(model, q, v, a),
        mb.JointModel(("viscous", "coulomb", "offset")).regressor(model, v, a),
    )


def _data(model, noise=0.0, seed=0, n=N):
    """Joint states, regressors, measured torques and the true parameters; the same
    arguments give the same arrays (computed once per model and arguments, read-only)."""
    key = (id(model), float(noise), int(seed), int(n))
    if key not in _DATA:  # the model is kept with its entry, so its id is not reused
        _DATA[key] = (model, _make_data(model, noise, seed, n))
    return _DATA[key][1]


_DATA: dict = {}


def _make_data(model, noise, seed, n):
    q, v, a = _trajectory(n, seed, model.nv)
    true = _truth(model)
    tau, Y, E = (np.asarray(x) for x in _simulate(model, jnp.asarray(true), q, v, a))
    tau = tau + FRICTION[:, 0] * v + FRICTION[:, 1] * np.sign(v) + FRICTION[:, 2]
    tau = tau + noise * np.random.default_rng(seed + 7).standard_normal(tau.shape)
    x_true = np.concatenate([true.reshape(-1), FRICTION.reshape(-1)])
    out = ((q, v, a), Y, E, tau, x_true)
    for x in jax.tree.leaves(out):
        x.flags.writeable = False
    return out


def _min_eig_J(pi):
    """Smallest eigenvalue of each body's pseudo-inertia, NumPy float64."""
    J = _params.pseudo_inertia(np.asarray(pi, np.float64), np)
    return np.linalg.eigvalsh(J)[..., 0]


def _x(res):
    return np.concatenate(
        [np.asarray(res.inertia.params).reshape(res.batch_shape + (-1,)), np.asarray(res.extra)],
        -1,
    )


# ------------------------------------------------------------------ (1) noiseless recovery
def test_noiseless_recovers_identifiable_combinations_and_ols_is_lstsq(arm):
    _, Y, E, tau, x_true = _data(arm)
    X = np.concatenate([Y, E], -1).reshape(-1, 26)
    res = fit_torques(
        Y, tau, prior=arm.inertia, extra=E, extra_nonnegative=NONNEG, weights=1.0, gamma=1e-9
    )
    assert isinstance(res, RobotFitResult) and int(res.status) == FitStatus.CONVERGED
    assert bool(jnp.all(res.consistency.fully_consistent))
    # the identifiable combinations X x are the truth's (torques reproduced to rounding)
    dx = _x(res) - x_true
    assert np.linalg.norm(X @ dx) <= 1e-7 * np.linalg.norm(X @ x_true)
    # least squares: NumPy's minimum-norm lstsq on the column-scaled stacked regressor
    # (the documented rule; columns below √eps of the largest are left out)
    pi, phi = least_squares_torques(Y, tau, extra=E)
    d = np.linalg.norm(X, axis=0)
    live = d > np.sqrt(np.finfo(float).eps) * d.max()
    ref = np.zeros(26)
    ref[live] = np.linalg.lstsq(X[:, live] / d[live], tau.reshape(-1), rcond=None)[0] / d[live]
    np.testing.assert_allclose(np.concatenate([pi, phi]), ref, rtol=1e-6, atol=1e-8)
    assert np.linalg.norm(X @ (ref - x_true)) <= 1e-9 * np.linalg.norm(X @ x_true)


# ------------------------------------------------------------------ (2) cvxpy + Clarabel
def _clarabel(Y, E, tau, w, prior, gamma, nonneg):
    cp = pytest.importorskip("cvxpy")
    X = np.concatenate([Y, E], -1)
    p = X.shape[-1]
    nb = Y.shape[-1] // 10
    Xw = (X * np.sqrt(w)[None, :, None]).reshape(-1, p)
    tw = (tau * np.sqrt(w)).reshape(-1)
    x = cp.Variable(p)
    obj = cp.sum_squares(Xw @ x - tw)
    for i in range(nb):
        J = sum(x[10 * i + k] * _params.PSEUDO_INERTIA_BASIS[k] for k in range(10))
        J0 = _params.pseudo_inertia(prior[i], np)
        obj = obj + gamma * (
            cp.trace(np.linalg.inv(J0) @ J) - cp.log_det(J) + np.linalg.slogdet(J0)[1] - 4.0
        )
    prob = cp.Problem(cp.Minimize(obj), [x[10 * nb :][nonneg] >= 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == "optimal"
    return x.value, prob.value


def _hessian_np(Y, E, w, x, gamma):
    """Exact Hessian of the objective at ``x``: ``2 Xᵀ W X`` plus, per body,
    ``γ ∂²(−log det J)/∂π_a ∂π_b = γ tr(J⁻¹ B_a J⁻¹ B_b)`` (``B``: the pseudo-inertia basis)."""
    X = np.concatenate([Y, E], -1)
    H = 2.0 * np.einsum("nja,j,njb->ab", X, np.broadcast_to(w, X.shape[1:2]), X)
    B = np.asarray(_params.PSEUDO_INERTIA_BASIS, np.float64)
    for i in range(Y.shape[-1] // 10):
        Jinv = np.linalg.inv(_params.pseudo_inertia(x[10 * i : 10 * i + 10], np))
        M = np.einsum("ij,ajk->aik", Jinv, B)  # J⁻¹ B_a
        H[10 * i : 10 * i + 10, 10 * i : 10 * i + 10] += gamma * np.einsum("aij,bji->ab", M, M)
    return H


def _objective_np(Y, E, tau, w, prior, gamma):
    def f(x):
        r = np.concatenate([Y, E], -1) @ x - tau
        val = np.sum(w * r * r)
        for i in range(prior.shape[0]):
            J = _params.pseudo_inertia(x[10 * i : 10 * i + 10], np)
            J0 = _params.pseudo_inertia(prior[i], np)
            val += gamma * (
                np.trace(np.linalg.solve(J0, J))
                - np.linalg.slogdet(J)[1]
                + np.linalg.slogdet(J0)[1]
                - 4.0
            )
        return val

    return f


@pytest.mark.parametrize("gamma", [8.0, 0.05])
def test_optimum_matches_cvxpy_clarabel(arm, gamma):
    _, Y, E, tau, _ = _data(arm, noise=0.05)
    w = np.array([400.0, 300.0])
    res = fit_torques(
        Y, tau, prior=arm.inertia, extra=E, extra_nonnegative=NONNEG, weights=w, gamma=gamma
    )
    assert int(res.status) == FitStatus.CONVERGED
    x_ref, f_ref = _clarabel(Y, E, tau, w, np.asarray(arm.inertia.params), gamma, NONNEG)
    assert abs(float(res.objective) - f_ref) <= 1e-10 * abs(f_ref)
    # parameters, in the metric the objective itself sets: both points are within ~1e-10 |F*|
    # of the optimum, so ½ dxᵀ H dx (H: F's exact Hessian at Clarabel's point) is at most
    # 4·1e-10 |F*| (triangle inequality in the H-norm); a Euclidean bound would only measure
    # how flat the optimum's flattest direction is (γ small: round-off and compiler settings
    # move the point along it). Our point is at least as good by the same NumPy evaluation.
    x = _x(res)
    dx = x - x_ref
    H = _hessian_np(Y, E, w, x_ref, gamma)
    assert 0.5 * dx @ H @ dx <= 4e-10 * abs(f_ref)
    f_np = _objective_np(Y, E, tau, w, np.asarray(arm.inertia.params), gamma)
    assert f_np(x) <= f_np(x_ref) + 1e-12 * abs(f_ref)


@pytest.mark.slow
def test_default_weights_and_gamma_follow_the_documented_rules(arm):
    (q, v, a), Y, E, tau, _ = _data(arm, noise=0.05)
    res = fit_robot(arm, q, v, a, tau)
    # σ̂_j² = OLS residual energy of joint j / (N (1 − rank/(N nv))), NumPy reference
    X = np.concatenate([Y, E], -1)
    sol, *_ = np.linalg.lstsq(X.reshape(-1, 26), tau.reshape(-1), rcond=None)
    r = (X @ sol) - tau
    rank = np.linalg.matrix_rank(X.reshape(-1, 26))
    sigma = np.sqrt(np.sum(r * r, 0) / (N * (1 - rank / (2 * N))))
    np.testing.assert_allclose(res.noise_std, sigma, rtol=1e-6)
    assert float(res.gamma) == 8.0  # 2 / 0.5²
    assert int(res.rank) == rank
    # condition number of the whitened, column-scaled base regressor (finite; was inf), the
    # base columns picked with the fit's own weights (near-tied pivots may flip otherwise)
    s_fit = np.asarray(res.noise_std)
    base = np.asarray(identifiability(Y, extra=E, weights=s_fit**-2.0).base_columns)[:rank]
    Xw = (X / s_fit[:, None]).reshape(-1, 26)[:, base]
    assert np.linalg.matrix_rank(Xw) == rank
    ref = np.linalg.cond(Xw / np.linalg.norm(Xw, axis=0))
    np.testing.assert_allclose(float(res.condition_number), ref, rtol=1e-6)
    np.testing.assert_allclose(res.prior.params, arm.inertia.params)
    # joint parameters (n1, 4), armature not fitted (NaN), and the same optimum as
    # fit_torques with those weights and γ
    assert res.joint_parameters.shape == (2, 4)
    assert bool(jnp.all(jnp.isnan(res.joint_parameters[:, 0])))
    ref = fit_torques(
        Y,
        tau,
        prior=arm.inertia,
        extra=E,
        extra_nonnegative=NONNEG,
        weights=sigma**-2.0,
        gamma=8.0,
    )
    np.testing.assert_allclose(_x(res), _x(ref), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(res.joint_parameters[:, 1:].reshape(-1), res.extra)
    # a subset of friction kinds: the others come back NaN
    sub = fit_robot(arm, q, v, a, tau, joint_model=("coulomb",), weights=sigma**-2.0, gamma=8.0)
    assert sub.extra.shape == (2,) and bool(jnp.all(jnp.isnan(sub.joint_parameters[:, [0, 1, 3]])))
    assert bool(jnp.all(sub.joint_parameters[:, 2] >= 0))
    # the text form is the same model
    txt = fit_robot(arm, q, v, a, tau, joint_model="coulomb", weights=sigma**-2.0, gamma=8.0)
    np.testing.assert_array_equal(np.asarray(txt.extra), np.asarray(sub.extra))


# ------------------------------------------------------------------ (3) consistency
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_link_consistent_where_least_squares_is_not(arm, dtype):
    # noisy samples: least squares returns impossible links
    (q, v, a), Y, E, tau, _ = _data(arm, noise=0.5, seed=3)
    Y, E, tau = Y[:N].astype(dtype), E[:N].astype(dtype), tau[:N].astype(dtype)
    pi, _ = least_squares_torques(Y, tau, extra=E)
    assert _min_eig_J(pi.reshape(2, 10)).min() < 0  # NumPy: J ⊁ 0 for some link
    prior = sj.RigidBodyInertia(arm.inertia.params.astype(dtype))
    w = np.full(2, 4.0, dtype)
    res = fit_torques(Y, tau, prior=prior, extra=E, extra_nonnegative=NONNEG, weights=w)
    assert res.inertia.params.dtype == dtype
    assert int(res.status) == FitStatus.CONVERGED
    assert bool(jnp.all(res.consistency.fully_consistent))
    assert _min_eig_J(res.inertia.params).min() > 0  # NumPy, in float64: J ≻ 0 exactly
    assert bool(jnp.all(res.extra[NONNEG] >= 0))
    if dtype == np.float32:
        # the same float32 data fitted in float64 is the reference
        ref = fit_torques(
            Y.astype(np.float64),
            tau.astype(np.float64),
            prior=arm.inertia,
            extra=E.astype(np.float64),
            extra_nonnegative=NONNEG,
            weights=w.astype(np.float64),
        )
        np.testing.assert_allclose(res.inertia.mass, ref.inertia.mass, rtol=2e-2)
        np.testing.assert_allclose(res.extra, ref.extra, rtol=2e-2, atol=2e-3)


# ------------------------------------------------------------------ (4, 5) batch, jit, vmap, grad
@pytest.mark.slow
def test_batch_of_resamples_equals_separate_calls_and_vmap(arm):
    _, Y, E, tau, _ = _data(arm, noise=0.05)
    rng = np.random.default_rng(5)
    counts = rng.multinomial(N, np.full(N, 1.0 / N), size=3).astype(float)  # bootstrap
    w = counts[:, :, None] * np.array([400.0, 300.0])  # (3, N, 2), Y shared
    kw = dict(prior=arm.inertia, extra=E, extra_nonnegative=NONNEG, gamma=8.0)
    batch = fit_torques(Y, tau, weights=w, **kw)
    assert batch.batch_shape == (3,) and batch.inertia.batch_shape == (3, 2)
    for i in range(3):
        one = fit_torques(Y, tau, weights=w[i], **kw)
        np.testing.assert_allclose(_x(batch[i]), _x(one), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(batch.objective[i], one.objective, rtol=1e-9)
    # under the user's jit of a vmap (one compile covers both transformations)
    vm = jax.jit(jax.vmap(lambda wi: fit_torques(Y, tau, weights=wi, **kw).objective))
    np.testing.assert_allclose(vm(jnp.asarray(w)), batch.objective, rtol=1e-9)


@pytest.mark.slow
def test_grad_wrt_tau_matches_finite_differences(arm):
    _, Y, E, tau, _ = _data(arm, noise=0.05)
    kw = dict(
        prior=arm.inertia, extra=E, extra_nonnegative=NONNEG, weights=np.array([400.0, 300.0])
    )
    c = np.random.default_rng(2).standard_normal(26)

    def f(t):
        res = fit_torques(Y, t, gamma=8.0, **kw)
        return jnp.concatenate([res.inertia.params.reshape(-1), res.extra]) @ c

    t0 = jnp.asarray(tau)
    g = jax.grad(f)(t0)
    assert bool(jnp.all(jnp.isfinite(g)))
    d = np.random.default_rng(3).standard_normal(tau.shape)
    h = 1e-4
    fd = (float(f(t0 + h * d)) - float(f(t0 - h * d))) / (2 * h)
    assert abs(float(jnp.sum(g * d)) - fd) <= 1e-5 * max(abs(fd), 1.0)


# ------------------------------------------------------------------ (6) identifiability
def test_identifiability_rank_matches_pinocchio_and_prior_decides_unexcited():
    pin = pytest.importorskip("pinocchio")
    robots = robots_dir()
    if robots is None:
        pytest.skip("example-robot-data not installed")
    path = robots / "panda_description/urdf/panda.urdf"
    locked = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
    model = mb.Model.from_urdf(path, locked_joints=locked, dtype="float64")
    rng = np.random.default_rng(0)
    n = 30
    q, v, a = rng.uniform(-2, 2, (n, 7)), rng.standard_normal((n, 7)), rng.standard_normal((n, 7))
    Y = np.asarray(jax.jit(mb.joint_torque_regressor)(model, q, v, a))  # one program
    names = parameter_names(model, ())
    idf = identifiability(Y, prior=model.inertia, weights=400.0, names=names)
    pm = pin.buildModelFromUrdf(str(path))
    pm = pin.buildReducedModel(pm, [pm.getJointId(j) for j in locked], pin.neutral(pm))
    pd = pm.createData()
    Yp = np.concatenate(
        [pin.computeJointTorqueRegressor(pm, pd, q[i], v[i], a[i]) for i in range(n)]
    )
    rank = np.linalg.matrix_rank(Yp)
    assert rank == 43  # Panda's base parameters (no friction)
    assert int(idf.rank) == rank == np.linalg.matrix_rank(Y.reshape(-1, 70))
    # the first `rank` pivoted columns are independent; the null directions are unexcited
    base = np.asarray(idf.base_columns)[:rank]
    assert np.linalg.matrix_rank(Y.reshape(-1, 70)[:, base]) == rank
    # condition number of the column-scaled base regressor (finite), not of all 70 columns
    Xb = Y.reshape(-1, 70)[:, base]
    ref = np.linalg.cond(Xb / np.linalg.norm(Xb, axis=0))
    assert np.isfinite(float(idf.condition_number))
    np.testing.assert_allclose(float(idf.condition_number), ref, rtol=1e-8)
    null = np.asarray(idf.unidentifiable())
    assert null.shape == (70, 70 - rank)
    assert np.linalg.norm(Y.reshape(-1, 70) @ null) <= 1e-6 * np.linalg.norm(Y)
    # link1 turns about the vertical z axis: only its Izz enters the torques (gravity ∥ axis)
    # data shares are fractions of prior variance removed: in [0, 1] (the diagonal of the
    # resolution matrix reported before reached 1.24 and -0.36 here)
    s = np.asarray(idf.data_share)
    assert np.all((s >= 0.0) & (s <= 1.0)), (s.min(), s.max())
    share = dict(zip(names, s, strict=True))
    # of link1's parameters only Izz enters (with the other links' axis moments); the others
    # are never seen by the data (their prior correlation with Izz gives them no share)
    assert share["panda_link1", "Izz"] >= 1e-3
    for k in ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz"):
        assert share["panda_link1", k] <= share["panda_link1", "Izz"]
    assert max(share.values()) >= 0.9  # and the data decide the well-excited ones
    assert ("panda_link1", "m") in idf.prior_decided()


def test_identifiability_small_arm_with_friction_matches_numpy_rank(arm):
    _, Y, E, _, _ = _data(arm)
    idf = identifiability(Y, extra=E)
    assert int(idf.rank) == np.linalg.matrix_rank(np.concatenate([Y, E], -1).reshape(-1, 26))
    assert bool(jnp.all(jnp.isnan(idf.data_share)))  # no prior given
    X = np.concatenate([Y, E], -1).reshape(-1, 26)
    Xb = X[:, np.asarray(idf.base_columns)[: int(idf.rank)]]
    ref = np.linalg.cond(Xb / np.linalg.norm(Xb, axis=0))
    np.testing.assert_allclose(float(idf.condition_number), ref, rtol=1e-8)
    assert len(parameter_names(arm)) == 26 and parameter_names(arm)[-1] == ("elbow", "offset")


def test_base_columns_and_condition_number_do_not_depend_on_round_off(arm):
    """Near-tied pivots are broken by the lowest column index, not by round-off.

    Every column of the column-scaled regressor has norm 1, so the first pivot is a tie
    among all of them; a duplicated column makes a later exact tie. Relative noise of
    1e-13 (far below any real difference between columns) used to change the base
    columns and with them the reported condition number (5.130 against 5.144 for the
    2-link arm on two machines). The base set, its order, and the condition number
    must come out the same for every perturbation, and the weights used by
    ``fit_robot`` must give the same figure as ``identifiability`` with those weights.
    """
    (q, v, a), Y, E, tau, _ = _data(arm, noise=0.05)
    Y, E = np.asarray(Y), np.asarray(E)
    # a duplicated column: an exact tie at whatever step it is reached
    E2 = np.concatenate([E, E[..., :1]], -1)
    ref = identifiability(Y, extra=E2)
    rank = int(ref.rank)
    base = np.asarray(ref.base_columns)[:rank]
    # of the duplicated pair (columns 20 and 26) the lower index is the base column
    assert 20 in base and 26 not in base
    X = np.concatenate([Y, E2], -1).reshape(-1, 27)
    Xb = X[:, base]
    np.testing.assert_allclose(
        float(ref.condition_number),
        np.linalg.cond(Xb / np.linalg.norm(Xb, axis=0)),
        rtol=1e-8,
    )
    for seed in range(6):
        rng = np.random.default_rng(seed)
        Yp = Y * (1.0 + 1e-13 * rng.standard_normal(Y.shape))
        Ep = E2 * (1.0 + 1e-13 * rng.standard_normal(E2.shape))
        w = 1.0 + 1e-13 * rng.standard_normal(2)
        got = identifiability(Yp, extra=Ep, weights=w)
        assert int(got.rank) == rank
        np.testing.assert_array_equal(np.asarray(got.base_columns), np.asarray(ref.base_columns))
        np.testing.assert_allclose(
            float(got.condition_number), float(ref.condition_number), rtol=1e-9
        )
    # the fit's own weights: the same base set and figure as identifiability with them
    res = fit_robot(arm, q, v, a, tau)
    s = np.asarray(res.noise_std)
    for scale in (1.0, 1.0 + 1e-13, 1.0 - 1e-13):
        idf = identifiability(Y, extra=E, weights=(s * scale) ** -2.0)
        np.testing.assert_allclose(
            float(res.condition_number), float(idf.condition_number), rtol=1e-9
        )


def test_data_share_closed_form_one_parameter():
    """One body whose mass alone enters (a vertical prismatic joint: τ = m g), a diagonal prior.

    With ``J0`` diagonal (CoM at the origin, diagonal inertia) ``∇²(−log det J)`` couples the
    mass to nothing, ``H_mm = 1/m0²``, and the variance reduction is the scalar Bayes update
    ``1 − C/P = 2a / (2a + γ h)`` with ``a = Σ w c²`` (objective ``Σ w r² + γ D``: data
    precision ``2a``, prior precision ``γ h``). Friction columns have no prior (infinite
    variance): share 1 when the data determine them, 0 for a column that never moves.
    """
    c, w, m0, gamma = 9.81, 4.0, 2.0, 3.0
    Y = np.zeros((N, 1, 10))
    Y[:, 0, 0] = c
    alt = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)  # orthogonal to the mass column
    E = np.stack([alt, np.zeros(N)], -1)[:, None, :]
    prior = sj.RigidBodyInertia(jnp.asarray([[m0, 0, 0, 0, 0.1, 0, 0.2, 0, 0, 0.25]]))
    idf = identifiability(Y, extra=E, weights=w, prior=prior, gamma=gamma)
    a = N * w * c**2
    want = np.zeros(12)
    want[0] = 2 * a / (2 * a + gamma / m0**2)
    want[10] = 1.0
    np.testing.assert_allclose(np.asarray(idf.data_share), want, rtol=1e-12, atol=1e-12)
    # γ = 0: no prior anywhere, 1 for the determined parameters, 0 for the others
    idf0 = identifiability(Y, extra=E, weights=w, prior=prior, gamma=0.0)
    want0 = np.zeros(12)
    want0[[0, 10]] = 1.0
    np.testing.assert_array_equal(np.asarray(idf0.data_share), want0)


def _pseudo_inertia(pi):
    """``J = [[Σ, h], [hᵀ, m]]`` of a 10-vector ``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
    (written here from its definition: ``Σ = ½ tr(I) 1 − I``)."""
    m, h = pi[0], pi[1:4]
    Ixx, Ixy, Iyy, Ixz, Iyz, Izz = pi[4:]
    inertia = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def _logdet_hessian(pi):
    """``∇²(−log det J)`` at ``pi``: ``tr(J⁻¹ ∂_i J J⁻¹ ∂_j J)`` (``J`` is linear in ``pi``)."""
    K = np.linalg.inv(_pseudo_inertia(pi))
    dJ = [_pseudo_inertia(np.eye(10)[i]) - _pseudo_inertia(np.zeros(10)) for i in range(10)]
    return np.array([[np.trace(K @ a @ K @ b) for b in dJ] for a in dJ])


def _prior_covariance(prior_params, gamma):
    """``P = (γ blockdiag ∇²(−log det J0_i))⁻¹`` from the formula, NumPy."""
    nb = prior_params.shape[0]
    Lam = np.zeros((10 * nb, 10 * nb))
    for b in range(nb):
        Lam[10 * b : 10 * b + 10, 10 * b : 10 * b + 10] = gamma * _logdet_hessian(prior_params[b])
    return np.linalg.inv(Lam)


def _decoupled_share_numpy(X, w, prior_params, gamma):
    """``1 − C'_kk / P_kk`` by brute force: for every ``k`` the prior precision rebuilt with
    ``k``'s correlations removed (``P'_k = P`` with row and column ``k`` zeroed but ``P_kk``),
    and the posterior ``(2 XᵀWX + P'_k⁻¹)⁻¹`` inverted in full."""
    P = _prior_covariance(prior_params, gamma)
    A2 = 2.0 * (X * w[:, None]).T @ X
    out = np.zeros(P.shape[0])
    for k in range(P.shape[0]):
        Pk = P.copy()
        Pk[k, :] = 0.0
        Pk[:, k] = 0.0
        Pk[k, k] = P[k, k]
        Ck = np.linalg.inv(A2 + np.linalg.inv(Pk))
        out[k] = 1.0 - Ck[k, k] / P[k, k]
    return out


def _alone_share_numpy(X, w, c, prior_var):
    """``P / (P + cᵀ(2XᵀWX)⁺c)`` where the data determine ``cᵀπ`` alone (``c`` in the row
    space of ``X``: the least-squares fit reproduces it), else 0 (NumPy ``pinv``, ``lstsq``)."""
    Xw = X * np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(Xw.T, c, rcond=1e-10)[0]  # c = Xwᵀ coef if c is in the row space
    if np.linalg.norm(Xw.T @ coef - c) > 1e-8 * np.linalg.norm(c):
        return 0.0
    v = c @ np.linalg.pinv(2.0 * Xw.T @ Xw, rcond=1e-12) @ c
    return prior_var / (prior_var + v)


def test_data_share_ignores_the_priors_coupling_of_mass_and_moments():
    """The data see only ``hx`` of a body whose CoM is off its origin: the log-det prior
    correlates ``m`` with ``hx`` (ρ² = 2 hx² / (m Σ_xx + hx²) per axis, Wishart-like), so
    ``1 − C_mm/P_mm`` would credit the data with a share of the mass. The share counts
    only what the data say about the parameter itself: 0 for ``m`` (its column is zero),
    and for ``hx`` the scalar Bayes update ``2a P_hh / (1 + 2a P_hh)`` with ``P_hh`` the
    prior's marginal variance of ``hx`` (``P = (γ ∇²(−log det J0))⁻¹``, NumPy)."""
    c, w, gamma = 3.0, 2.0, 8.0
    p0 = np.array([1.5, 0.3, 0.06, 0.0, 0.05, 0.0, 0.12, 0.0, 0.0, 0.13])
    Y = np.zeros((N, 1, 10))
    Y[:, 0, 1] = c * np.cos(np.arange(N))
    prior = sj.RigidBodyInertia(jnp.asarray(p0[None]))
    idf = identifiability(Y, weights=w, prior=prior, gamma=gamma)
    share = np.asarray(idf.data_share)
    P = np.linalg.inv(gamma * _logdet_hessian(p0))
    a = w * float(np.sum(Y[:, 0, 1] ** 2))
    assert abs(P[0, 1]) / np.sqrt(P[0, 0] * P[1, 1]) > 0.5  # the prior ties m to hx
    np.testing.assert_allclose(share[1], 2 * a * P[1, 1] / (1 + 2 * a * P[1, 1]), rtol=1e-9)
    assert share[0] == pytest.approx(0.0, abs=1e-12)
    # every parameter but hx: the data say nothing about it
    np.testing.assert_allclose(np.delete(share, 1), 0.0, atol=1e-12)


def test_data_share_matches_a_brute_force_numpy_computation(arm):
    """The two-link arm's weighted regressor: the shares against the definition computed
    with NumPy (the prior's Hessian from its formula, one full inversion per parameter; the
    masses: the data alone, every other parameter free)."""
    (q, v, a), Y, _, _, _ = _data(arm)
    Y = np.asarray(Y)
    w = np.array([4.0, 9.0])
    pi0 = np.asarray(arm.inertia.params).reshape(-1, 10)
    idf = identifiability(Y, weights=w, prior=arm.inertia, gamma=8.0)
    X, wt = Y.reshape(-1, 20), np.tile(w, N)
    want = _decoupled_share_numpy(X, wt, pi0, 8.0)
    P = _prior_covariance(pi0, 8.0)
    for k in (0, 10):  # the masses
        want[k] = _alone_share_numpy(X, wt, np.eye(20)[k], P[k, k])
    np.testing.assert_allclose(np.asarray(idf.data_share), want, rtol=1e-6, atol=1e-9)
    # the elbow's link rides on a revolute joint: its mass regroups into the upper arm's
    # first moment and cannot be told apart by the data (the first link's never enters)
    np.testing.assert_array_equal(np.asarray(idf.data_share)[[0, 10]], 0.0)
    assert float(idf.total_mass_share) == 0.0  # a fixed base never sees the total mass


def test_mass_and_total_mass_shares_closed_form():
    """Two bodies whose masses enter only as their sum (one column ``c`` for both, as a
    vertical prismatic joint carrying both): the data cannot split them (each mass: 0), but
    determine the total: ``P_t / (P_t + 1/(2a))``, ``P_t = P_m1 + P_m2`` (independent
    bodies), ``a = Σ w c²``; the first moments they never see (the mass's prior correlation
    with them gives nothing)."""
    c, w, gamma = 9.81, 4.0, 8.0
    p0 = np.array([[1.5, 0.2, 0.0, 0.0, 0.06, 0.0, 0.05, 0.0, 0.0, 0.07],
                   [0.5, 0.0, 0.05, 0.0, 0.02, 0.0, 0.03, 0.0, 0.0, 0.04]])  # fmt: skip
    Y = np.zeros((N, 1, 20))
    Y[:, 0, 0] = Y[:, 0, 10] = c * (1.0 + 0.3 * np.sin(np.arange(N)))
    prior = sj.RigidBodyInertia(jnp.asarray(p0))
    idf = identifiability(Y, weights=w, prior=prior, gamma=gamma)
    share = np.asarray(idf.data_share)
    np.testing.assert_array_equal(share[[0, 10]], 0.0)
    P = _prior_covariance(p0, gamma)
    a = w * float(np.sum(Y[:, 0, 0] ** 2))
    Pt = P[0, 0] + P[10, 10]
    np.testing.assert_allclose(float(idf.total_mass_share), Pt / (Pt + 1 / (2 * a)), rtol=1e-9)
    assert float(identifiability(Y, weights=w, prior=prior, gamma=0.0).total_mass_share) == 1.0


# ------------------------------------------------------------------ (7) bad input
def test_bad_inputs_raise_clear_errors(arm):
    (q, v, a), Y, E, tau, _ = _data(arm)
    kw = dict(prior=arm.inertia)
    with raises_argument(IdentifyError, "Y"):
        fit_torques(Y[:, 0], tau, **kw)
    with raises_argument(IdentifyError, "tau"):
        fit_torques(Y, np.zeros((N, 3)), **kw)
    bad = tau.copy()
    bad[17, 1] = np.nan
    with raises_argument(ArgumentError, "tau"):
        fit_torques(Y, bad, **kw)
    # the message counts the samples against the parameters
    with raises_argument(
        IdentifyError, "tau", match=r"20 torque samples \(N=10 samples × nv=2 joints\).*p=26"
    ):
        fit_torques(Y[:10], tau[:10], extra=E[:10], **kw)
    zero = arm.inertia.params.at[1].set(0.0)
    with raises_argument(IdentifyError, "prior"):
        fit_robot(arm, q, v, a, tau, prior=sj.RigidBodyInertia(zero))
    with raises_argument(IdentifyError, "prior"):
        fit_torques(Y, tau, prior=arm.inertia[:1])
    with raises_argument(IdentifyError, "extra_nonnegative"):
        fit_torques(Y, tau, extra=E, extra_nonnegative=[True, False], **kw)
    with raises_argument(ArgumentError, "weights"):
        fit_torques(Y, tau, weights=np.array([1.0, -1.0]), **kw)
    with raises_argument(IdentifyError, "weights"):
        fit_torques(Y, tau, weights=np.ones(3), **kw)
    with raises_argument(IdentifyError, "gamma"):
        fit_torques(Y, tau, gamma=-1.0, **kw)
    with raises_argument(ArgumentTypeError, "tau"):
        fit_torques(Y, tau.astype(np.float32), **kw)
    with raises_argument(IdentifyError, "joint_model"):
        fit_robot(arm, q, v, a, tau, joint_model=("stiction",))
    with raises_argument(IdentifyTypeError, "model"):
        fit_robot("arm.urdf", q, v, a, tau)


# ------------------------------------------------------------------ (8) the solver object
def test_interior_point_holds_the_options(arm):
    (q, v, a), Y, E, tau, _ = _data(arm, noise=0.05)
    kw = dict(prior=arm.inertia, extra=E, extra_nonnegative=NONNEG)
    # two Newton iterations: the cap reaches the loop (the fit needs more to converge)
    capped = fit_torques(Y, tau, solver=InteriorPoint(max_iters=2), **kw)
    assert int(capped.iterations) == 2 and FitStatus(int(capped.status)) == FitStatus.NOT_CONVERGED
    full = fit_torques(Y, tau, **kw)
    assert int(full.iterations) > 2 and bool(full.converged)
    new = fit_robot(arm, q, v, a, tau, solver=InteriorPoint(rtol=1e-12, max_iters=2))
    assert int(new.iterations) == 2
    # the defaults per dtype
    assert (
        InteriorPoint().rtol_for(np.float64) == 1e-12
        and InteriorPoint().rtol_for("float32") == 1e-6
    )
    assert InteriorPoint(rtol=1e-9).rtol_for(np.float32) == 1e-9
    assert hash(InteriorPoint(rtol=1e-8)) == hash(InteriorPoint(rtol=1e-8))  # static jit args


def test_bad_solver_arguments_raise_naming_them(arm):
    (q, v, a), Y, E, tau, _ = _data(arm)
    kw = dict(prior=arm.inertia)
    # no string form, no loose solver keywords (removed before 1.0)
    for bad in ("interior_point", 300, object()):
        with raises_argument(IdentifyTypeError, "solver"):
            fit_torques(Y, tau, solver=bad, **kw)
        with raises_argument(IdentifyTypeError, "solver"):
            fit_robot(arm, q, v, a, tau, solver=bad)
    for name in ("rtol", "max_iters", "_body_names"):
        with pytest.raises(
            TypeError, match=rf"fit_torques\(\) got an unexpected keyword .*'{name}'"
        ):
            fit_torques(Y, tau, **{name: 1}, **kw)
        with pytest.raises(TypeError, match=rf"fit_robot\(\) got an unexpected keyword .*'{name}'"):
            fit_robot(arm, q, v, a, tau, **{name: 1})
    for make, match in (
        (lambda: InteriorPoint(rtol=0.0), r"InteriorPoint: rtol: expected a float in \(0, 1\)"),
        (lambda: InteriorPoint(rtol=1.0), r"InteriorPoint: rtol: expected a float in \(0, 1\)"),
        (lambda: InteriorPoint(max_iters=0), r"InteriorPoint: max_iters: expected an int ≥ 1"),
        (lambda: InteriorPoint(max_iters=2.5), r"InteriorPoint: max_iters: expected an int ≥ 1"),
    ):
        with pytest.raises(ValueError, match=match):
            make()


def test_fit_and_fit_torques_word_the_same_mistake_alike(arm):
    # one check each (spatialjax._checks, identification.fitting.inputs): the same message, and the
    # index of the bad entry in the caller's own array (a 1-d weight vector: (1,), not (0, 1))
    from spatialjax.identification import fit

    (q, v, a), Y, E, tau, _ = _data(arm)
    rng = np.random.default_rng(3)
    Yb, fb = rng.normal(size=(24, 6, 10)), rng.normal(size=(24, 6))
    calls = {
        "fit": lambda **kw: fit(Yb, fb, **kw),
        "fit_torques": lambda **kw: fit_torques(Y, tau, **({"prior": arm.inertia} | kw)),
    }
    for name, call in calls.items():
        w = np.ones(6 if name == "fit" else 2)
        w[1] = np.nan
        with raises_argument(ArgumentError, "weights"):
            call(weights=w)
        w[1] = -1.0
        with raises_argument(ArgumentError, "weights"):
            call(weights=w)
    bad = np.asarray(arm.inertia.params).copy()
    bad[1, 0] = -1.0
    want = (
        r"^prior: expected a fully consistent body \(pseudo-inertia J0 positive definite, as a "
        r"log-det prior needs\); body {} is not \(smallest eigenvalue of J0: -?[0-9.e+-]+{}\)\. "
        r"Replace it, e\.g\. with spatialjax\.nearest_consistent\(prior\)"
    )
    with raises_argument(IdentifyError, "prior"):
        fit(Yb, fb, prior=sj.RigidBodyInertia(bad))
    # the message names the body and what to do about it
    with raises_argument(
        IdentifyError, "prior", match=want.format(r"1 \('fore'\)", r", index \(1,\)")
    ):
        fit_robot(arm, q, v, a, tau, prior=sj.RigidBodyInertia(bad))


def test_fit_robot_names_the_callers_array_and_least_squares_survives_huge_scales(arm):
    (q, v, a), Y, E, tau, _ = _data(arm)
    qn = np.array(q)
    qn[7, 1] = np.nan
    with raises_argument(ArgumentError, "q"):
        fit_robot(arm, qn, v, a, tau)
    an = np.array(a)
    an[3, 0] = np.inf
    with raises_argument(ArgumentError, "a"):
        fit_robot(arm, q, v, an, tau)
    # least squares of data scaled by 1e±160: the same answer, scaled (was all zeros)
    pi0, e0 = least_squares_torques(Y, tau, extra=E)
    x0 = np.concatenate([pi0, e0])
    for s in (1e160, 1e-160):
        pi, e = least_squares_torques(Y * s, tau * s, extra=E * s)
        np.testing.assert_allclose(np.concatenate([pi, e]), x0, rtol=1e-9, atol=1e-12)
        pi, e = least_squares_torques(Y, tau * s, extra=E, weights=s)
        np.testing.assert_allclose(np.concatenate([pi, e]) / s, x0, rtol=1e-9, atol=1e-12)
