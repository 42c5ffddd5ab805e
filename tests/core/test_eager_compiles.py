"""Eager (un-jitted) calls compile once per structure, shape and dtype, not once per call.

Public functions check their inputs in Python and run one jitted kernel, so a
second eager call with the same model structure, shapes and dtypes reuses the
compiled program. Before, every eager call of the tree algorithms,
``physical_consistency`` and ``nearest_consistent`` re-traced and re-compiled
the ``lax.scan``/``fori_loop`` inside them (0.9-2 s per call).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spatialjax as sj
from spatialjax import multibody as mb


def _second_calls_compile_nothing(calls, compiles):
    """Each call twice: the second compiles nothing and returns the first's values."""
    for name, call in calls.items():
        first = jax.block_until_ready(call())
        compiles.clear()
        second = jax.block_until_ready(call())
        assert compiles == [], f"{name}: the second eager call compiled {compiles}"
        jax.tree.map(np.testing.assert_array_equal, first, second)


@pytest.mark.parametrize("method", ["scan", "levels"])
def test_second_eager_call_compiles_nothing(compiles, method):
    model = mb.chain_model(3, length=0.5)
    rng = np.random.default_rng(0)
    q, v, a = (jnp.asarray(rng.normal(size=(5, 3))) for _ in range(3))
    calls = {
        "forward_kinematics": lambda: mb.forward_kinematics(model, q, v, a, method=method),
        "rnea": lambda: mb.rnea(model, q, v, a, method=method),
        "mass_matrix": lambda: mb.mass_matrix(model, q, method=method),
        "joint_torque_regressor": lambda: mb.joint_torque_regressor(model, q, v, a, method=method),
        "joint_model": lambda: mb.JointModel().regressor(model, v, a),
        "forward_dynamics": lambda: mb.forward_dynamics(model, q, v, a),
        "forward_dynamics crba": lambda: mb.forward_dynamics(model, q, v, a, method="crba"),
        "nonlinear_effects": lambda: mb.nonlinear_effects(model, q, v, method=method),
        "gravity_torques": lambda: mb.gravity_torques(model, q, method=method),
        "coriolis_matrix": lambda: mb.coriolis_matrix(model, q, v),
    }
    _second_calls_compile_nothing(calls, compiles)
    fk = mb.forward_kinematics(model, q, method=method)
    mb.frame_poses(model, fk.poses)
    compiles.clear()
    mb.frame_poses(model, mb.forward_kinematics(model, q, method=method).poses)
    assert compiles == []


def test_consistency_functions_compile_once(compiles):
    rng = np.random.default_rng(1)
    bodies = sj.box(jnp.asarray(rng.uniform(1, 2, 6)), jnp.asarray(rng.uniform(0.1, 0.5, (6, 3))))
    bad = sj.RigidBodyInertia(bodies.params.at[:, 4].set(-1.0))  # I_xx < 0: projected
    calls = {
        "physical_consistency": lambda: sj.physical_consistency(bodies),
        "is_physically_consistent": lambda: sj.is_physically_consistent(bodies, tol=1e-9),
        "nearest_consistent": lambda: sj.nearest_consistent(bad),
        "nearest_consistent origin": lambda: sj.nearest_consistent(bad, reference="origin"),
    }
    _second_calls_compile_nothing(calls, compiles)


def _fresh(rng, shape):
    return jnp.asarray(rng.normal(size=shape))


def test_each_eager_call_is_one_program(compiles):
    """On a batch shape no other test uses, a first eager call compiles at most one program
    (its kernel; none when the persistent cache has it), not one per operation."""
    rng = np.random.default_rng(2)
    n = (13, 1)  # a batch shape used nowhere else
    E = sj.so3_exp(_fresh(rng, n + (3,)))
    X = sj.Plx(E, _fresh(rng, n + (3,)))
    M = X.as_matrix()
    body = sj.box(jnp.asarray(rng.uniform(1, 2, n)), jnp.asarray(rng.uniform(0.1, 0.5, n + (3,))))
    m, c, I_c = body.mass, body.com, body.inertia_com()
    J = body.pseudo_inertia()
    v6, q4 = _fresh(rng, n + (6,)), _fresh(rng, n + (4,))
    calls = {
        "so3_log": lambda: sj.so3_log(E),
        "matrix_to_quat": lambda: sj.matrix_to_quat(E),
        "quat_to_matrix": lambda: sj.quat_to_matrix(q4),
        "Plx.as_homogeneous": lambda: X.as_homogeneous(),
        "Plx.from_matrix": lambda: sj.Plx.from_matrix(M),
        "motion_cross": lambda: sj.motion_cross(v6, v6),
        "force_cross (matrix)": lambda: sj.force_cross(v6),
        "from_mass_com_inertia": lambda: sj.RigidBodyInertia.from_mass_com_inertia(m, c, I_c),
        "as_matrix (inertia)": lambda: body.as_matrix(),
        "geodesic_distance": lambda: sj.geodesic_distance(J, J),
        "vector_to_log_cholesky": lambda: sj.vector_to_log_cholesky(body.params),
        "physical_consistency": lambda: sj.physical_consistency(body),
        "nearest_consistent": lambda: sj.nearest_consistent(body),
    }
    for name, call in calls.items():
        compiles.clear()
        jax.block_until_ready(call())
        assert len(compiles) <= 1, f"{name}: {len(compiles)} programs compiled: {compiles}"


def test_to_device_compiles_nothing(compiles):
    """``to_device`` of NumPy arrays and scalars of shapes no program has seen, with and without
    a dtype change, copies them without a program (``jnp.asarray`` compiles one per shape in
    jax ≥ 0.9), with ``jnp.asarray``'s dtype and weak type."""
    from spatialjax._checks import to_device

    rng = np.random.default_rng(3)
    x64 = rng.normal(size=(17, 3, 5))  # shapes used nowhere else
    cases = [
        (x64, None),
        (x64.astype(np.float32), None),
        (x64, np.float32),
        (rng.normal(size=(19,)).astype(np.float32), np.float64),
        (2.5, None),
        (np.float64(2.5), None),
        (np.asarray([True, False, True]), None),
    ]
    weak = jax.device_put(2.5)  # a Python float on the device: weakly typed
    compiles.clear()
    out = [to_device(x, dtype) for x, dtype in cases]
    assert compiles == []
    for (x, dtype), y in zip(cases, out, strict=True):
        ref = jnp.asarray(x, dtype)
        assert isinstance(y, jax.Array)
        assert (y.dtype, y.weak_type, y.shape) == (ref.dtype, ref.weak_type, ref.shape)
        np.testing.assert_array_equal(np.asarray(y), np.asarray(ref))
    # a concrete JAX array already in the dtype is returned as it is, a weakly typed one made
    # strong (as astype); a traced one converts
    strong = to_device(weak, weak.dtype)
    assert weak.weak_type and not strong.weak_type and strong.dtype == weak.dtype
    y = out[0]
    assert to_device(y) is y and to_device(y, y.dtype) is y
    traced = jax.jit(lambda a: to_device(a, jnp.float32))(y)
    assert traced.dtype == jnp.float32
