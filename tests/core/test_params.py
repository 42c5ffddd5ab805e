"""The inertial 10-vector layout (``spatialjax._params``) against point-mass closed forms.

For point masses ``mᵢ`` at ``pᵢ`` the pseudo-inertia is ``J = Σ mᵢ p̃ᵢ p̃ᵢᵀ``
with ``p̃ = [p; 1]`` (Wensing, Kim & Slotine 2017) and the 10-vector is
``[Σm, Σ m p, Σ m (|p|² 1 − p pᵀ)]`` packed as ``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``:
both written here from their definitions, not from the module.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax import _params


def _point_masses(rng, n=4):
    return rng.uniform(0.1, 2.0, n), rng.standard_normal((n, 3))


def _pi_by_hand(m, p):
    I = sum(mi * (pi @ pi * np.eye(3) - np.outer(pi, pi)) for mi, pi in zip(m, p, strict=True))
    h = (m[:, None] * p).sum(0)
    return np.array([m.sum(), *h, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def _J_by_hand(m, p):
    pt = np.concatenate([p, np.ones((len(m), 1))], axis=1)
    return np.einsum("n,ni,nj->ij", m, pt, pt)


@pytest.mark.parametrize("xp", [np, jnp], ids=["numpy", "jax"])
def test_pseudo_inertia_and_back_match_point_masses(xp, rng):
    m, p = _point_masses(rng)
    pi = _pi_by_hand(m, p)
    J = np.asarray(_params.pseudo_inertia(xp.asarray(pi), xp))
    np.testing.assert_allclose(J, _J_by_hand(m, p), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        np.asarray(_params.from_pseudo_inertia(xp.asarray(J), xp)), pi, rtol=1e-12, atol=1e-12
    )


def test_basis_is_the_derivative_of_J(rng):
    pi = rng.standard_normal(10)
    J = np.tensordot(pi, _params.PSEUDO_INERTIA_BASIS, axes=1)
    np.testing.assert_allclose(J, _params.pseudo_inertia(pi, np), rtol=1e-14, atol=1e-14)
    assert not _params.PSEUDO_INERTIA_BASIS.flags.writeable


def test_packing_order_and_symmetric_part():
    I = np.array([[1.0, 2.0, 4.0], [2.5, 3.0, 5.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(_params.sym_to6(I, np), [1.0, 2.25, 3.0, 4.0, 5.0, 6.0])
    S = _params.sym_from6(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), np)
    np.testing.assert_array_equal(S, [[1, 2, 4], [2, 3, 5], [4, 5, 6]])
    assert _params.I6_INDEX == ((0, 1, 3), (1, 2, 4), (3, 4, 5))


def test_second_moment_round_trip_and_trace_identity(rng):
    A = rng.standard_normal((5, 3, 3))
    I = A + np.swapaxes(A, -1, -2)
    S = _params.second_moment_from_inertia(I, np)
    half_tr = 0.5 * np.trace(I, axis1=-2, axis2=-1)[:, None, None]
    np.testing.assert_allclose(S + I, half_tr * np.eye(3))
    np.testing.assert_allclose(_params.inertia_from_second_moment(S, np), I, atol=1e-12)


def test_pack_broadcasts_and_split_inverts(rng):
    m = np.float64(2.0)
    h = rng.standard_normal((4, 3))
    A = rng.standard_normal((3, 3))
    pi = _params.pack(jnp.asarray(m), jnp.asarray(h), jnp.asarray(A + A.T))
    assert pi.shape == (4, 10)
    m2, h2, I2 = _params.split(pi)
    np.testing.assert_array_equal(m2, np.full(4, 2.0))
    np.testing.assert_array_equal(h2, h)
    np.testing.assert_allclose(I2, np.broadcast_to(A + A.T, (4, 3, 3)))


def test_pseudo_inertia_upper_matches_J(rng):
    pi = rng.standard_normal((3, 10))
    J = _params.pseudo_inertia(pi, np)
    upper = [np.asarray(u)[..., 0] for u in _params.pseudo_inertia_upper(pi)]
    rows, cols = np.triu_indices(4)
    np.testing.assert_array_equal(np.stack(upper, -1), J[..., rows, cols])
