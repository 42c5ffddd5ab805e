"""SDF/Gazebo ``<inertial>`` with fluid added mass -> spatial inertia about the link origin.

References: explicit NumPy 6×6 matrices (the motion transform ``X`` from the CoM
frame to the link frame and ``X⁻ᵀ M X⁻¹``), kinetic-energy invariance for
random twists, Pinocchio's ``Inertia.matrix()`` for the rigid part, and the two
flawed variants (Gazebo's naive sum, a rotational-block-only shift) computed
here to measure how far they are from the exact result.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import np_skew, raises_argument
from jax.test_util import check_grads

from spatialjax import ArgumentError, ArgumentTypeError, Plxb, matrix_to_quat
from spatialjax.interop import gazebo_link_spatial_inertia


def np_swap(M):
    """``[v; ω]`` <-> ``[ω; v]`` with an explicit permutation matrix."""
    P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
    return P @ M @ P


def np_plx(E, r):
    return np.block([[E, np.zeros((3, 3))], [-E @ np_skew(r), E]])


def np_rigid(m, c, I_c_B):
    """RBDA eq. 2.63 about Bo: ``[[I_c + m c× c×ᵀ, m c×], [m c×ᵀ, m 1]]``."""
    C = np_skew(c)
    return np.block([[I_c_B + m * C @ C.T, m * C], [m * C.T, m * np.eye(3)]])


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def random_spd6(rng):
    A = rng.normal(size=(6, 6))
    return A @ A.T + 0.5 * np.eye(6)


# The docstring example: added mass with angular-linear coupling.
M_EX, C_EX, I_EX = 2.0, np.array([0.3, -0.1, 0.2]), np.diag([0.02, 0.03, 0.04])


def example_added_mass(coupling=True):
    A = np.diag([1.0, 4.0, 5.0, 0.1, 0.3, 0.4])  # [x y z p q r]
    if coupling:
        A[1, 5] = A[5, 1] = 0.5  # yr
        A[2, 4] = A[4, 2] = -0.6  # zq
    return A


def naive_and_block_shift(m, c, I_c_B, added):
    """Gazebo's sum of the unshifted added mass, and the rotational-block-only shift."""
    naive = np_rigid(m, c, I_c_B) + np_swap(added)
    M_lin, CM = added[:3, :3], added[3:, :3]  # TOP_LEFT and BOTTOM_LEFT of the [v; ω] matrix
    shifted = naive.copy()
    shifted[:3, :3] += CM @ np.linalg.inv(M_lin) @ CM.T
    return naive, shifted


# ---------------------------------------------------------------------- exactness
@pytest.mark.parametrize("reference", ["com", "com_frame", "link"])
def test_matches_numpy_congruence(reference, rng):
    m = 3.1
    R = random_rotation(rng)
    c = rng.normal(size=3)
    I_cc = np.diag([0.2, 0.3, 0.4])
    added = random_spd6(rng)
    out = gazebo_link_spatial_inertia(m, (R, c), I_cc, added, added_mass_reference=reference)
    rigid = np_rigid(m, c, R @ I_cc @ R.T)
    Ma = np_swap(added)  # [ω; v] about the reference point
    if reference == "link":
        X = np.eye(6)
    elif reference == "com":  # frame at Bcm with B's axes -> B: E = 1, r = Bo − Bcm = −c
        X = np_plx(np.eye(3), -c)
    else:  # CoM frame -> B: E = R_BBcm, r = Bo relative to Bcm in Bcm axes = −Rᵀ c
        X = np_plx(R, -R.T @ c)
    Xi = np.linalg.inv(X)
    np.testing.assert_allclose(out, rigid + Xi.T @ Ma @ Xi, atol=1e-12)
    np.testing.assert_allclose(out, np.asarray(out).T, atol=1e-12)
    assert np.linalg.eigvalsh(np.asarray(out)).min() > 0


@pytest.mark.parametrize("reference", ["com", "com_frame"])
def test_kinetic_energy_invariance(reference, rng):
    """½ Vᵀ M V of the added mass is the same at Bo (result) and at the reference (input)."""
    R = random_rotation(rng)
    c = rng.normal(size=3)
    added = random_spd6(rng)
    zero_body = gazebo_link_spatial_inertia(0.0, (R, c), np.zeros((3, 3)), None)
    np.testing.assert_array_equal(zero_body, np.zeros((6, 6)))
    M_B = np.asarray(
        gazebo_link_spatial_inertia(
            0.0, (R, c), np.zeros((3, 3)), added, added_mass_reference=reference
        )
    )
    E = np.eye(3) if reference == "com" else R.T  # B -> reference axes
    for _ in range(20):
        w, v_o = rng.normal(size=3), rng.normal(size=3)
        V_B = np.concatenate([w, v_o])
        v_cm = v_o + np.cross(w, c)  # velocity of the point Bcm
        V_ref = np.concatenate([E @ w, E @ v_cm])  # [ω; v] at Bcm in the reference axes
        V_sdf = np.concatenate([V_ref[3:], V_ref[:3]])  # SDF order [v; ω]
        np.testing.assert_allclose(V_B @ M_B @ V_B, V_sdf @ added @ V_sdf, rtol=1e-12)


def test_rigid_part_matches_pinocchio(rng):
    pin = pytest.importorskip("pinocchio")
    R = random_rotation(rng)
    c = rng.normal(size=3)
    I_cc = np.array([[0.3, 0.01, 0.02], [0.01, 0.4, -0.03], [0.02, -0.03, 0.5]])
    out = gazebo_link_spatial_inertia(1.7, (R, c), I_cc)
    ref = pin.Inertia(1.7, c, R @ I_cc @ R.T).matrix()  # about the origin, [v; ω]
    np.testing.assert_allclose(out, np_swap(ref), atol=1e-12)


def test_pose_forms_agree(rng):
    R = random_rotation(rng)
    c = rng.normal(size=3)
    I_cc = np.diag([0.2, 0.3, 0.4])
    added = random_spd6(rng)
    kw = dict(added_mass_reference="com_frame")
    a = gazebo_link_spatial_inertia(1.0, (R, c), I_cc, added, **kw)
    b = gazebo_link_spatial_inertia(1.0, (matrix_to_quat(jnp.asarray(R)), c), I_cc, added, **kw)
    d = gazebo_link_spatial_inertia(1.0, Plxb(jnp.asarray(R), jnp.asarray(c)), I_cc, added, **kw)
    np.testing.assert_allclose(b, a, atol=1e-12)
    np.testing.assert_allclose(d, a, atol=1e-12)


# ------------------------------------------- naive sum and block-shift discrepancies
def test_naive_and_block_shift_variants_are_wrong_with_coupling():
    added = example_added_mass(coupling=True)
    exact = np.asarray(gazebo_link_spatial_inertia(M_EX, (np.eye(3), C_EX), I_EX, added))
    naive, shifted = naive_and_block_shift(M_EX, C_EX, I_EX, added)
    # the figures quoted in the docstring
    np.testing.assert_allclose(np.diag(exact)[:3], [0.43, 1.44, 1.31], atol=1e-12)
    np.testing.assert_allclose(np.diag(naive)[:3], [0.22, 0.59, 0.64], atol=1e-12)
    np.testing.assert_allclose(np.diag(shifted)[:3], [0.22, 0.662, 0.7025], atol=1e-12)
    assert exact[1, 5] == pytest.approx(-2.7) and naive[1, 5] == pytest.approx(-1.2)
    assert np.abs(naive - exact).max() == pytest.approx(1.5)
    assert np.abs(shifted - exact).max() == pytest.approx(1.5)
    assert np.linalg.norm(naive - exact) == pytest.approx(3.2857, abs=1e-4)
    assert np.linalg.norm(shifted - exact) == pytest.approx(3.2556, abs=1e-4)
    assert np.linalg.norm(exact) == pytest.approx(11.3345, abs=1e-4)


def test_block_shift_correction_vanishes_without_coupling():
    added = example_added_mass(coupling=False)
    exact = np.asarray(gazebo_link_spatial_inertia(M_EX, (np.eye(3), C_EX), I_EX, added))
    naive, shifted = naive_and_block_shift(M_EX, C_EX, I_EX, added)
    np.testing.assert_array_equal(shifted, naive)
    # the missing part is exactly the shift of diag(M_lin) from Bcm to Bo
    C, M_lin = np_skew(C_EX), np.diag([1.0, 4.0, 5.0])
    np.testing.assert_allclose(exact[:3, :3] - naive[:3, :3], C @ M_lin @ C.T, atol=1e-12)
    np.testing.assert_allclose(exact[:3, 3:] - naive[:3, 3:], C @ M_lin, atol=1e-12)
    assert np.abs(naive - exact).max() == pytest.approx(
        1.5
    )  # (c× M)[1, 2] = −c_x · M_zz = −0.3 · 5


def test_block_shift_is_exact_only_for_the_half_shifted_form():
    """If the coupling block already is ``c× M`` (BodyMatrix style), the block shift is right."""
    M_lin, A_rot = np.diag([1.0, 4.0, 5.0]), np.diag([0.1, 0.3, 0.4])
    C = np_skew(C_EX)
    half = np.block([[M_lin, (C @ M_lin).T], [C @ M_lin, A_rot]])
    _, shifted = naive_and_block_shift(M_EX, C_EX, I_EX, half)
    decoupled = np.block([[M_lin, np.zeros((3, 3))], [np.zeros((3, 3)), A_rot]])
    exact = gazebo_link_spatial_inertia(M_EX, (np.eye(3), C_EX), I_EX, decoupled)
    np.testing.assert_allclose(shifted, exact, atol=1e-12)


# ----------------------------------------------------------- batching, dtype, grads
def test_batched_jit_vmap_float32(rng):
    n = 5
    R = np.stack([random_rotation(rng) for _ in range(n)])
    c = rng.normal(size=(n, 3))
    I_cc = np.broadcast_to(np.diag([0.2, 0.3, 0.4]), (n, 3, 3))
    added = np.stack([random_spd6(rng) for _ in range(n)])
    m = rng.uniform(1, 2, size=n)
    f = jax.jit(gazebo_link_spatial_inertia, static_argnames="added_mass_reference")
    out = f(m, (R, c), I_cc, added, added_mass_reference="com_frame")
    assert out.shape == (n, 6, 6)
    one = gazebo_link_spatial_inertia(
        m[3], (R[3], c[3]), I_cc[3], added[3], added_mass_reference="com_frame"
    )
    np.testing.assert_allclose(out[3], one, atol=1e-12)
    # the vmapped, float32 and broadcast calls jitted: one compile each instead of one per
    # primitive (the unbatched eager call above is the reference for the jitted batch)
    vmapped = jax.vmap(lambda *a: gazebo_link_spatial_inertia(a[0], (a[1], a[2]), a[3], a[4]))
    vm = jax.jit(vmapped)(m, R, c, I_cc, added)
    ref = f(m, (R, c), I_cc, added)
    np.testing.assert_allclose(vm, ref, atol=1e-12)
    f32 = [jnp.asarray(x, jnp.float32) for x in (m, R, c, I_cc, added)]
    out32 = f(f32[0], (f32[1], f32[2]), f32[3], f32[4])
    assert out32.dtype == jnp.float32
    np.testing.assert_allclose(out32, ref, rtol=1e-5, atol=1e-5)
    # broadcasting: one link inertia, several added-mass matrices
    out_b = f(m[0], (R[0], c[0]), I_cc[0], added)
    assert out_b.shape == (n, 6, 6)


def test_gradients(rng):
    R = jnp.asarray(random_rotation(rng))
    added = jnp.asarray(random_spd6(rng))

    def f(m, c, I, A):
        return gazebo_link_spatial_inertia(m, (R, c), I, A, added_mass_reference="com_frame")

    args = (
        jnp.asarray(1.5),
        jnp.asarray(rng.normal(size=3)),
        jnp.diag(jnp.array([0.2, 0.3, 0.4])),
        added,
    )
    check_grads(jax.jit(f), args, order=1, modes=["fwd", "rev"])


def test_bad_inputs():
    I = np.eye(3)
    pose = (np.eye(3), np.zeros(3))
    with raises_argument(ArgumentError, "added_mass_reference"):
        gazebo_link_spatial_inertia(1.0, pose, I, np.eye(6), added_mass_reference="origin")
    with raises_argument(ArgumentError, "fluid_added_mass"):
        gazebo_link_spatial_inertia(1.0, pose, I, np.eye(3))
    with raises_argument(
        ArgumentError,
        "com_pose",
        match=r"com_pose: rotation: expected shape \(\.\.\., 3, 3\) \(R_BBcm\) or \(\.\.\., 4\)",
    ):
        gazebo_link_spatial_inertia(1.0, (np.ones(3), np.zeros(3)), I)
    with raises_argument(ArgumentTypeError, "com_pose"):
        gazebo_link_spatial_inertia(1.0, np.eye(4), I)
    with raises_argument(ArgumentError, "inertia_com"):
        gazebo_link_spatial_inertia(1.0, pose, np.ones(6))
    with raises_argument(ArgumentTypeError, "inertia_com"):
        gazebo_link_spatial_inertia(
            jnp.float32(1.0), (jnp.eye(3, dtype=jnp.float32), jnp.zeros(3, jnp.float32)), jnp.eye(3)
        )
    with raises_argument(ArgumentError, "inertia_com"):
        gazebo_link_spatial_inertia(np.ones(2), pose, np.stack([I] * 3))
