"""coriolis_matrix against Pinocchio's computeCoriolisMatrix, and its defining properties.

``C v = h − g`` (Pinocchio's ``nonLinearEffects`` minus ``computeGeneralizedGravity``) and
``Ṁ − 2C`` skew-symmetric with ``Ṁ`` the directional derivative of ``mass_matrix`` along
``q̇`` (``jax.jvp``; for a free flyer ``q̇`` is the quaternion and position rate of ``v``).
The Panda and Solo-12 run by default, the other example-robot-data cases are ``slow``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import CASES, ROBOTS, pin_model, raises_argument, random_states

import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError

pin = pytest.importorskip("pinocchio")

FAST = ("panda", "solo12")
PARAMS = [pytest.param(c, id=c[0], marks=() if c[0] in FAST else pytest.mark.slow) for c in CASES]


def _qdot(model, q, v):
    """``dq/dt`` for ``v``: a free flyer's ``ṗ = R v_lin``, ``q̇uat = ½ quat ⊗ [0, ω]``."""
    if not model.floating_base:
        return v
    w, x, y, z = q[3], q[4], q[5], q[6]
    R = jnp.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    om = v[:3]
    quat_dot = 0.5 * jnp.array(
        [
            -x * om[0] - y * om[1] - z * om[2],
            w * om[0] + y * om[2] - z * om[1],
            w * om[1] + z * om[0] - x * om[2],
            w * om[2] + x * om[1] - y * om[0],
        ]
    )
    return jnp.concatenate([R @ v[3:6], quat_dot, v[6:]])


@jax.jit
def _all(model, q, v):
    C = mb.coriolis_matrix(model, q, v)

    def one(q, v):
        return jax.jvp(lambda q: mb.mass_matrix(model, q), (q,), (_qdot(model, q, v),))[1]

    Mdot = jax.vmap(one)(q, v)
    h = mb.nonlinear_effects(model, q, v) - mb.gravity_torques(model, q)
    return C, Mdot, h, model.q_to_pinocchio(q)


@pytest.fixture(scope="module", params=PARAMS)
def robot(request):
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    name, rel, floating, locked = request.param
    path = str(ROBOTS / rel)
    model = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    return name, model, pin_model(path, floating, locked)


def test_coriolis_matches_pinocchio_and_mdot_minus_2c_is_skew(robot):
    name, model, pm = robot
    pd = pm.createData()
    q, v, _ = (np.asarray(x) for x in random_states(model, 3, np.random.default_rng(4)))
    C, Mdot, h, qp_all = (np.asarray(x) for x in _all(model, q, v))
    perm = model.v_permutation()
    worst = 0.0
    for k in range(3):
        Cp = pin.computeCoriolisMatrix(pm, pd, qp_all[k], v[k][perm])
        err = np.abs(C[k][np.ix_(perm, perm)] - Cp).max() / max(1.0, np.abs(Cp).max())
        worst = max(worst, err)
        assert err <= 1e-11, err
        N = Mdot[k] - 2 * C[k]
        np.testing.assert_allclose(N, -N.T, rtol=0, atol=1e-10 * max(1.0, np.abs(N).max()))
        np.testing.assert_allclose(
            C[k] @ v[k], h[k], rtol=0, atol=1e-11 * max(1, np.abs(h[k]).max())
        )
    print(f"worst relative error coriolis vs pin [{name}]: {worst:.2e}")


def test_linear_in_v_batched_and_float32():
    model = mb.chain_model(3, floating_base=True, dtype="float64")
    rng = np.random.default_rng(0)
    q, v, _ = (np.asarray(x) for x in random_states(model, 4, rng))
    C = mb.coriolis_matrix(model, q.reshape(2, 2, -1), v.reshape(2, 2, -1))
    assert C.shape == (2, 2, model.nv, model.nv)
    C2 = mb.coriolis_matrix(model, q[0], 2.0 * v[0] - 3.0 * v[1])
    ref = 2.0 * mb.coriolis_matrix(model, q[0], v[0]) - 3.0 * mb.coriolis_matrix(model, q[0], v[1])
    np.testing.assert_allclose(C2, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(C[0, 1], mb.coriolis_matrix(model, q[1], v[1]), atol=1e-13)
    m32 = model.astype(jnp.float32)
    C32 = mb.coriolis_matrix(m32, q[0].astype(np.float32), v[0].astype(np.float32))
    assert C32.dtype == jnp.float32
    np.testing.assert_allclose(C32, C[0, 0], rtol=0, atol=1e-4 * max(1.0, np.abs(C[0, 0]).max()))


def test_bad_input():
    model = mb.chain_model(2, dtype="float64")
    with raises_argument(ArgumentError, "v"):
        mb.coriolis_matrix(model, np.zeros(2), np.zeros(3))
    with raises_argument(ArgumentTypeError, "q"):
        mb.coriolis_matrix(model, np.zeros(2, np.float32), np.zeros(2))
