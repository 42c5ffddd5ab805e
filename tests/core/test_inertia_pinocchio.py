"""``RigidBodyInertia`` against Pinocchio (``pin.Inertia``) on 1,000 random bodies each.

Two populations: physically consistent bodies built from random point masses,
and ``pin.Inertia.Random()`` (whose inertias may violate the triangle
inequality; the conversion formulas must agree regardless).

Frame mapping: ``pin.SE3(R, p)`` is the pose of B in A (``aMb``), so
``aMb.actInv(I_A) = I_B`` is ``body.transform(Plxb(R, p))`` =
``body.transform(Plx(R.T, p))`` and ``aMb.act(I_B) = I_A`` is
``body.transform(Plxb(R, p).inverse())``. Pinocchio orders spatial vectors and
matrices ``[v; ω]`` / ``[f; n]``; the permutation ``P`` below converts them to
our ``[ω; v]`` / ``[n; f]``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import random_rotations

from spatialjax import Plx, Plxb, RigidBodyInertia

pin = pytest.importorskip("pinocchio")

N = 1000
TOL = 1e-12

# P @ [v; ω] = [ω; v]
P = np.zeros((6, 6))
P[:3, 3:] = np.eye(3)
P[3:, :3] = np.eye(3)


def consistent_pin_inertias(rng, n):
    """Point-mass clouds (fully consistent): mass, CoM and inertia about the CoM."""
    out = []
    for _ in range(n):
        k = 5
        masses = rng.uniform(0.2, 2.0, size=k)
        pos = 0.5 * rng.normal(size=(k, 3)) + rng.normal(size=3)
        m = masses.sum()
        c = masses @ pos / m
        d = pos - c
        I_c = np.einsum("k,ki,ki->", masses, d, d) * np.eye(3) - np.einsum(
            "k,ki,kj->ij", masses, d, d
        )
        out.append(pin.Inertia(m, c, I_c))
    return out


@pytest.fixture(scope="module", params=["consistent", "pin_random"])
def population(request):
    rng = np.random.default_rng(2024)
    if request.param == "consistent":
        inertias = consistent_pin_inertias(rng, N)
    else:
        pin.seed(7)
        inertias = [pin.Inertia.Random() for _ in range(N)]
    R = random_rotations(rng, N)
    p = rng.normal(size=(N, 3))
    poses = [pin.SE3(R[i], p[i]) for i in range(N)]
    body = RigidBodyInertia.from_mass_com_inertia(
        jnp.asarray([I.mass for I in inertias]),
        jnp.asarray(np.stack([I.lever for I in inertias])),
        jnp.asarray(np.stack([I.inertia for I in inertias])),
    )
    return inertias, poses, R, p, body


def pin_params(inertias):
    return np.stack([I.toDynamicParameters() for I in inertias])


def assert_close_rows(actual, expected, tol=TOL):
    """Per-body absolute error relative to that body's largest reference entry (≥ 1)."""
    actual = np.asarray(actual).reshape(len(expected), -1)
    expected = np.asarray(expected).reshape(len(expected), -1)
    scale = np.maximum(1.0, np.max(np.abs(expected), axis=-1))
    err = np.max(np.abs(actual - expected), axis=-1) / scale
    assert np.max(err) <= tol, f"worst relative error {np.max(err):.3e} (body {np.argmax(err)})"


def test_from_mass_com_inertia_matches_dynamic_parameters(population):
    inertias, _, _, _, body = population
    assert_close_rows(body.to_vector(), pin_params(inertias))
    # and from the 10-vector back to mass, lever, inertia about the CoM
    from_vec = RigidBodyInertia.from_vector(jnp.asarray(pin_params(inertias)))
    assert_close_rows(from_vec.mass[:, None], np.array([[I.mass] for I in inertias]))
    assert_close_rows(from_vec.com, np.stack([I.lever for I in inertias]))
    assert_close_rows(from_vec.inertia_com(), np.stack([I.inertia for I in inertias]), 1e-11)


def test_pseudo_inertia_matches(population):
    inertias, _, _, _, body = population
    expected = np.stack([I.toPseudoInertia().toMatrix() for I in inertias])
    assert_close_rows(body.pseudo_inertia(), expected)
    back = RigidBodyInertia.from_pseudo_inertia(jnp.asarray(expected))
    assert_close_rows(back.to_vector(), pin_params(inertias))


def test_spatial_matrix_matches_with_permutation(population):
    inertias, _, _, _, body = population
    expected = np.stack([P @ I.matrix() @ P.T for I in inertias])
    assert_close_rows(body.as_matrix(), expected)
    back = RigidBodyInertia.from_matrix(jnp.asarray(expected))
    assert_close_rows(back.to_vector(), pin_params(inertias))


@pytest.mark.parametrize("form", ["plxb", "plx"])
def test_transform_matches_act_inv(population, form):
    """``aMb.actInv(I_A) = I_B`` == ``transform(Plxb(R, p))`` == ``transform(Plx(Rᵀ, p))``."""
    inertias, poses, R, p, body = population
    expected = pin_params([M.actInv(I) for M, I in zip(poses, inertias, strict=True)])
    also = pin_params([I.se3ActionInverse(M) for M, I in zip(poses, inertias, strict=True)])
    np.testing.assert_array_equal(expected, also)
    if form == "plxb":
        X = Plxb(jnp.asarray(R), jnp.asarray(p))
    else:
        X = Plx(jnp.asarray(np.swapaxes(R, -1, -2)), jnp.asarray(p))
    got = body.transform(X)
    assert_close_rows(got.to_vector(), expected)
    # and the 6×6 matrices with the [v; ω] permutation
    mats = np.stack([P @ M.actInv(I).matrix() @ P.T for M, I in zip(poses, inertias, strict=True)])
    assert_close_rows(got.as_matrix(), mats)


def test_transform_inverse_matches_act(population):
    """``aMb.act(I_B) = I_A`` == ``transform(Plxb(R, p).inverse())``."""
    inertias, poses, R, p, body = population
    expected = pin_params([M.act(I) for M, I in zip(poses, inertias, strict=True)])
    also = pin_params([I.se3Action(M) for M, I in zip(poses, inertias, strict=True)])
    np.testing.assert_array_equal(expected, also)
    got = body.transform(Plxb(jnp.asarray(R), jnp.asarray(p)).inverse())
    assert_close_rows(got.to_vector(), expected)
    got_plx = body.transform(Plx(jnp.asarray(np.swapaxes(R, -1, -2)), jnp.asarray(p)).inverse())
    assert_close_rows(got_plx.to_vector(), expected)


def test_transform_matches_action_matrix_congruence(population):
    """``I_B = aXbᵀ I_A aXb`` with Pinocchio's 6×6 action matrix (``[v; ω]``)."""
    inertias, poses, R, p, body = population
    expected = np.stack(
        [
            P @ M.toActionMatrix().T @ I.matrix() @ M.toActionMatrix() @ P.T
            for M, I in zip(poses, inertias, strict=True)
        ]
    )
    assert_close_rows(body.transform(Plxb(jnp.asarray(R), jnp.asarray(p))).as_matrix(), expected)


def test_momentum_and_kinetic_energy_match(population):
    """``I * v`` (Pinocchio force ``[f; n]``) and ``½ vtiv``, with motions ``[v; ω]``."""
    inertias, _, _, _, body = population
    rng = np.random.default_rng(5)
    v = rng.normal(size=(N, 6))  # ours: [ω; v]
    motions = [pin.Motion(v[i] @ P) for i in range(N)]  # [v; ω] = Pᵀ [ω; v]
    forces = np.stack([(I * mo).vector for I, mo in zip(inertias, motions, strict=True)])
    assert_close_rows(body.momentum(jnp.asarray(v)), forces @ P.T)
    ke = np.array([0.5 * I.vtiv(mo) for I, mo in zip(inertias, motions, strict=True)])
    assert_close_rows(body.kinetic_energy(jnp.asarray(v))[:, None], ke[:, None])
