"""One state of a small tree: the world-frame path that ``method="auto"`` takes, against Pinocchio.

``rnea``, ``mass_matrix``, ``nonlinear_effects``, ``gravity_torques`` and
``forward_dynamics`` of ONE state of a model of at most 12 bodies run the one-state
form (``multibody/_onestate.py``). Here: a free-floating branching tree with revolute,
prismatic and fixed joints and tilted axes (float64 and float32), joint armature and
damping, external wrenches and a non-default gravity, each against Pinocchio's C++
result; the model passed as an argument of ``jit``; gradients with respect to ``q`` and
the model's inertias against the batched sweep's; ``vmap``; forward dynamics' singular
states; and the Panda.
"""

from __future__ import annotations

import dataclasses

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
    tree_urdf,
)

import spatialjax.multibody as mb
from spatialjax import ArgumentError

pin = pytest.importorskip("pinocchio")

GRAVITY = np.array([0.3, -0.2, -9.7])


def _fext_pin(f):
    """Per-body ``[n; f]`` (body frame) -> Pinocchio's forces (joint 0 the universe)."""
    return [pin.Force.Zero()] + [pin.Force(np.r_[w[3:], w[:3]]) for w in f]


def _tree(tmp_path, dtype):
    path = tree_urdf(tmp_path)
    model = mb.Model.from_urdf(path, floating_base=True, dtype=dtype)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    rng = np.random.default_rng(5)
    arm = rng.uniform(0.0, 0.2, model.nv)
    arm[:6] = 0.0  # a free flyer has none
    damp = rng.uniform(0.0, 0.5, model.nv)
    damp[:6] = 0.0
    model = dataclasses.replace(
        model, armature=jnp.asarray(arm, dtype), damping=jnp.asarray(damp, dtype)
    )
    pm.armature = np.asarray(model.v_to_pinocchio(jnp.asarray(arm)), np.float64)
    pm.gravity.linear = GRAVITY
    return model, pm


def _pin_reference(model, pm, q, v, a, tau, fext):
    qp, vp, ap, tp = (np.asarray(x, np.float64) for x in (model.q_to_pinocchio(q),
                      model.v_to_pinocchio(v), model.v_to_pinocchio(a),
                      model.v_to_pinocchio(tau)))  # fmt: skip
    damp = np.asarray(model.v_to_pinocchio(model.damping), np.float64)
    pd = pm.createData()
    fp = _fext_pin(np.asarray(fext, np.float64))
    tau_ref = pin.rnea(pm, pd, qp, vp, ap, fp).copy()
    H = pin.crba(pm, pd, qp).copy()
    H = np.triu(H) + np.triu(H, 1).T
    h = pin.nonLinearEffects(pm, pd, qp, vp).copy()
    grav = pin.computeGeneralizedGravity(pm, pd, qp).copy()
    acc = pin.aba(pm, pd, qp, vp, tp - damp * vp, fp).copy()
    return tau_ref, H, h, grav, acc


def _ours(model, q, v, a, tau, fext, g):
    return (
        mb.rnea(model, q, v, a, g, f_ext=fext),
        mb.mass_matrix(model, q),
        mb.nonlinear_effects(model, q, v, g),
        mb.gravity_torques(model, q, g),
        mb.forward_dynamics(model, q, v, tau, g, f_ext=fext),
    )


def _to_pin(model, out):
    p = model.v_permutation()
    tau, H, h, grav, acc = (np.asarray(x, np.float64) for x in out)
    return tau[..., p], H[..., p, :][..., :, p], h[..., p], grav[..., p], acc[..., p]


@pytest.mark.parametrize("dtype", ["float64", pytest.param("float32", marks=pytest.mark.slow)])
def test_one_state_matches_pinocchio_on_a_floating_tree(tmp_path, dtype):
    """Eager, jitted (model closed over and as an argument) and a batch of one, against
    Pinocchio's rnea (fext), crba (armature), nonLinearEffects, computeGeneralizedGravity and
    aba (τ − damping v, fext), with a gravity that is not the default."""
    model, pm = _tree(tmp_path, dtype)
    rng = np.random.default_rng(7)
    Q, V, A = random_states(model, 2, rng, np.dtype(dtype))
    T = jnp.asarray(rng.standard_normal((2, model.nv)), dtype)
    F = jnp.asarray(rng.standard_normal((2, model.nbodies, 6)), dtype)
    g = jnp.asarray(GRAVITY, dtype)
    tol = 1e-10 if dtype == "float64" else 2e-3
    closed = jax.jit(lambda *x: _ours(model, *x, g))
    argued = jax.jit(_ours)
    for k in range(2):
        x = (Q[k], V[k], A[k], T[k], F[k])
        ref = _pin_reference(model, pm, *x)
        for name, out in (
            ("eager", _ours(model, *x, g)),
            ("jit", closed(*x)),
            ("jit, model as argument", argued(model, *x, g)),
            ("batch of one", [y[0] for y in _ours(model, *(y[None] for y in x), g)]),
        ):
            assert out[1].dtype == np.dtype(dtype) and out[1].shape == (model.nv, model.nv)
            for what, got, want in zip(("rnea", "mass", "h", "g", "fd"), _to_pin(model, out),
                                       ref, strict=True):  # fmt: skip
                scale = max(1.0, float(np.max(np.abs(want))))
                np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale,
                                           err_msg=f"{what}, {name}")  # fmt: skip


@pytest.mark.parametrize("dtype", ["float64", pytest.param("float32", marks=pytest.mark.slow)])
def test_one_state_forward_dynamics_of_a_floating_base_with_eight_dofs(tmp_path, dtype):
    """Free flyer, a revolute and a prismatic joint (the other revolute locked): ``nv = 8``,
    the largest mass matrix that one-state forward dynamics factorises written out
    (``_smallmat``) rather than with LAPACK; against Pinocchio's ABA, eager, closed over and
    with the model an argument."""
    path = tree_urdf(tmp_path)
    locked = {"jb1": 0.3}
    model = mb.Model.from_urdf(path, floating_base=True, locked_joints=locked, dtype=dtype)
    pm = pin_model(str(path), True, locked)
    pm.gravity.linear = GRAVITY
    assert model.nv == 8 and "prismatic" in model.joint_types
    rng = np.random.default_rng(4)
    Q, V, _ = random_states(model, 2, rng, np.dtype(dtype))
    T = jnp.asarray(rng.standard_normal((2, model.nv)), dtype)
    g = jnp.asarray(GRAVITY, dtype)
    p = model.v_permutation()
    rel = 1e-10 if dtype == "float64" else 2e-3
    for q, v, tau in zip(Q, V, T, strict=True):
        qp, vp, tp = (np.asarray(x, np.float64) for x in (model.q_to_pinocchio(q),
                      model.v_to_pinocchio(v), model.v_to_pinocchio(tau)))  # fmt: skip
        want = pin.aba(pm, pm.createData(), qp, vp, tp)
        for name, got in (
            ("eager", mb.forward_dynamics(model, q, v, tau, g)),
            ("jit", jax.jit(lambda *x: mb.forward_dynamics(model, *x, g))(q, v, tau)),
            ("jit, model as argument", jax.jit(mb.forward_dynamics)(model, q, v, tau, g)),
        ):
            assert got.dtype == np.dtype(dtype)
            tol = rel * max(1.0, np.abs(want).max())
            np.testing.assert_allclose(np.asarray(got)[p], want, rtol=0, atol=tol, err_msg=name)


@pytest.mark.slow  # compile time; CI's second step
def test_one_state_agrees_with_the_batched_sweeps_under_vmap_and_grad(tmp_path):
    """vmap of the one-state call equals the batched call; the gradients with respect to q,
    the model's inertias and armature (the model an argument) equal those of
    ``method="scan"``."""
    model, _ = _tree(tmp_path, "float64")
    rng = np.random.default_rng(8)
    Q, V, A = random_states(model, 3, rng)
    T = jnp.asarray(rng.standard_normal((3, model.nv)))
    fd = jax.vmap(lambda q, v, t: mb.forward_dynamics(model, q, v, t))(Q, V, T)
    np.testing.assert_allclose(fd, mb.forward_dynamics(model, Q, V, T, method="aba"), atol=1e-10)
    H = jax.vmap(lambda q: mb.mass_matrix(model, q))(Q)
    np.testing.assert_allclose(H, mb.mass_matrix(model, Q, method="scan"), atol=1e-12)

    def loss(m, q, v, a, method):
        tau = mb.rnea(m, q, v, a, method=method)
        M = mb.mass_matrix(m, q, method=method)
        return jnp.sum(tau**2) + jnp.sum(M * M)

    for method in ("auto", "scan"):  # one state: the one-state path, and the scan sweep
        gm, gq = jax.grad(loss, argnums=(0, 1))(model, Q[0], V[0], A[0], method)
        if method == "auto":
            ref_m, ref_q = gm, gq
    # the inertias enter linearly, whatever the formulation: their gradients agree (those
    # with respect to placement matrices do not have to: the two forms use different
    # identities of rotation matrices, equal on SO(3) but not off it)
    np.testing.assert_allclose(ref_q, gq, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ref_m.inertia.params, gm.inertia.params, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ref_m.armature, gm.armature, rtol=1e-9, atol=1e-9)
    gfd = jax.grad(lambda m: jnp.sum(mb.forward_dynamics(m, Q[0], V[0], T[0]) ** 2))(model)
    gaba = jax.grad(lambda m: jnp.sum(mb.forward_dynamics(m, Q[0], V[0], T[0], method="aba")
                                      ** 2))(model)  # fmt: skip
    np.testing.assert_allclose(gfd.inertia.params, gaba.inertia.params, rtol=1e-8, atol=1e-8)


def test_one_state_forward_dynamics_flags_a_singular_mass_matrix():
    """A massless leaf: eagerly a ValueError naming the model; under jit every entry NaN and
    the gradient with respect to the model finite (the guard refactors the identity)."""
    model = mb.chain_model(3, dtype="float64")
    params = model.inertia.params.at[2].set(0.0)
    model = dataclasses.replace(model, inertia=type(model.inertia)(params))
    q, v, t = jnp.zeros(3), jnp.ones(3), jnp.ones(3)
    with raises_argument(ArgumentError, "model"):
        mb.forward_dynamics(model, q, v, t)
    a = jax.jit(lambda q: mb.forward_dynamics(model, q, v, t))(q)
    assert a.shape == (3,) and bool(jnp.all(jnp.isnan(a)))
    g = jax.grad(lambda m: jnp.nansum(mb.forward_dynamics(m, q, v, t)))(model)
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(g))


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_one_state_panda_matches_pinocchio():
    path = str(ROBOTS / CASES[0][1])
    model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    pm = pin_model(path, False, PANDA_LOCKED)
    pm.armature = np.asarray(model.armature, np.float64)
    pm.gravity.linear = GRAVITY
    rng = np.random.default_rng(9)
    q, v, a = (x[0] for x in random_states(model, 1, rng))
    tau = jnp.asarray(rng.standard_normal(model.nv))
    fext = jnp.asarray(rng.standard_normal((model.nbodies, 6)))
    ref = _pin_reference(model, pm, q, v, a, tau, fext)
    out = jax.jit(_ours)(model, q, v, a, tau, fext, jnp.asarray(GRAVITY))
    for what, got, want in zip(("rnea", "mass", "h", "g", "fd"), _to_pin(model, out), ref,
                               strict=True):  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * max(1.0, np.abs(want).max()),
                                   err_msg=what)  # fmt: skip
