"""Physical consistency: flags, margins, ``validate`` messages, ``nearest_consistent``.

Reference values are built here in NumPy from the definitions of Wensing, Kim & Slotine
(RA-L 2017):
point-mass sums ``S = Σ mᵢ pᵢ pᵢᵀ``, ``I = tr(S) 1 − S``, the pseudo-inertia
``J = [[S, h], [hᵀ, m]]`` and bodies assembled from a chosen mass, CoM and
central second moment ``S_c`` (so which side of the boundary a sample lies on
is known by construction, not computed by the code under test).
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, np_skew, raises_argument, random_rotations
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

from spatialjax import (
    ArgumentError,
    ArgumentTypeError,
    Plx,
    RigidBodyInertia,
    geodesic_distance,
    inertia_to_second_moment,
    parallel_axis,
    pseudo_inertia_sandwich,
    second_moment_to_inertia,
)
from spatialjax._consistency import (
    _flags,
    default_tol,
    is_physically_consistent,
    physical_consistency,
)
from spatialjax._projection import nearest_consistent
from spatialjax._validate import validate

# jitted (eager op-by-op dispatch compiles every primitive separately); used as they are
# where the batch shape itself is under test or the call is traced (gradients)
pc_jit = jax.jit(physical_consistency)
ipc_jit = jax.jit(is_physically_consistent)
nc_jit = jax.jit(nearest_consistent, static_argnames="reference")
vpc_jit = jax.jit(jax.vmap(physical_consistency))

# Elsewhere every body batch is flattened and padded to one of a few sizes (larger batches go
# in chunks of the largest), so the tests share one compiled program per size, dtype and tol/eps
# form instead of one per batch shape (each compile of physical_consistency costs ~0.5-1 s).
# The functions act body by body (the property test checks batch shapes, jit and vmap against
# each other); the padding rows are a consistent unit body and are cut off again.
_PAD_ROW = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
_BUCKETS = (64, 2048)


def _padded(fn):
    sig = inspect.signature(fn)
    first = next(iter(sig.parameters))

    def call(body, *args, **kwargs):
        # every optional argument passed by keyword, defaults included: jit keys its cache on
        # how arguments are passed (positional, keyword or left out)
        bound = sig.bind(body, *args, **kwargs)
        bound.apply_defaults()
        kwargs = {k: v for k, v in bound.arguments.items() if k != first}
        p = np.asarray(body.params)
        shape = p.shape[:-1]
        n = int(np.prod(shape))
        size = next((b for b in _BUCKETS if b >= n), None)
        if size is None:  # larger batches: in chunks of the largest size
            size = -(-n // _BUCKETS[-1]) * _BUCKETS[-1]
        pad = np.broadcast_to(_PAD_ROW.astype(p.dtype), (size - n, 10))
        flat = np.concatenate([p.reshape(n, 10), pad])
        chunk = min(size, _BUCKETS[-1])
        outs = [
            fn(RigidBodyInertia(jnp.asarray(flat[i : i + chunk])), **kwargs)
            for i in range(0, size, chunk)
        ]
        out = jax.tree.map(
            lambda *x: np.concatenate([np.asarray(a) for a in x])[:n].reshape(
                shape + x[0].shape[1:]
            ),
            *outs,
        )
        # bodies as JAX arrays (as returned), reports and flags as NumPy arrays
        if isinstance(out, RigidBodyInertia):
            return RigidBodyInertia(jnp.asarray(out.params))
        return out

    return call


pc = _padded(pc_jit)
ipc = _padded(ipc_jit)
nc = _padded(nc_jit)


# ----------------------------------------------------------------------------- helpers
def np_params(m, c, S_c):
    """10-vector (Pinocchio order, about the origin) from mass, CoM and central second moment."""
    m = np.asarray(m, dtype=np.float64)
    S = S_c + m[..., None, None] * c[..., :, None] * c[..., None, :]
    I = np.trace(S, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - S
    h = m[..., None] * c
    six = np.stack(
        [I[..., 0, 0], I[..., 0, 1], I[..., 1, 1], I[..., 0, 2], I[..., 1, 2], I[..., 2, 2]], -1
    )
    return np.concatenate([m[..., None], h, six], -1)


def np_pseudo(params):
    m, h = params[..., 0], params[..., 1:4]
    xx, xy, yy, xz, yz, zz = (params[..., 4 + i] for i in range(6))
    I = np.stack(
        [np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2
    )
    S = 0.5 * np.trace(I, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - I
    top = np.concatenate([S, h[..., :, None]], -1)
    bottom = np.concatenate([h, m[..., None]], -1)[..., None, :]
    return np.concatenate([top, bottom], -2)


def body_from(m, c, sigma, R):
    """Body with mass ``m``, CoM ``c``, central second moment ``R diag(σ) Rᵀ``."""
    S_c = R @ (sigma[..., :, None] * np.swapaxes(R, -1, -2))
    return RigidBodyInertia(jnp.asarray(np_params(m, c, S_c)))


def random_consistent(rng, shape):
    """Bodies with σ(S_c) ∈ [0.01, 1]: strictly inside the consistent set."""
    m = rng.uniform(0.2, 5.0, size=shape)
    c = rng.normal(size=tuple(shape) + (3,))
    sigma = rng.uniform(0.01, 1.0, size=tuple(shape) + (3,))
    return body_from(m, c, sigma, random_rotations(rng, shape))


def two_point_masses():
    """Two point masses 0.5 at x = ±1: a segment, on the boundary of the consistent set."""
    return RigidBodyInertia.from_point_masses(
        jnp.array([0.5, 0.5]), jnp.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    )


# ------------------------------------------------- Wensing, Kim & Slotine (2017) identities
def test_trace_identity_and_round_trip(rng):
    """``tr(I) = 2 tr(S)`` and ``S = ½ tr(I) 1 − I`` inverts ``I = tr(S) 1 − S``."""
    masses = rng.uniform(0.1, 1.0, size=(10, 7))
    pos = rng.normal(size=(10, 7, 3))
    S_ref = np.einsum("bn,bni,bnj->bij", masses, pos, pos)
    I_ref = np.einsum("bn,bn->b", masses, np.sum(pos * pos, -1))[:, None, None] * np.eye(3) - S_ref
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))
    np.testing.assert_allclose(body.inertia_origin(), I_ref, atol=1e-12)
    S = inertia_to_second_moment(body.inertia_origin())
    np.testing.assert_allclose(S, S_ref, atol=1e-12)
    np.testing.assert_allclose(np.trace(I_ref, axis1=1, axis2=2), 2 * np.trace(S, axis1=1, axis2=2))
    np.testing.assert_allclose(second_moment_to_inertia(S), I_ref, atol=1e-12)


def test_two_point_mass_example():
    body = two_point_masses()
    np.testing.assert_allclose(body.inertia_origin(), np.diag([0.0, 1.0, 1.0]), atol=1e-15)
    np.testing.assert_allclose(body.second_moment(), np.diag([1.0, 0.0, 0.0]), atol=1e-15)
    rep = pc(body)
    assert bool(rep.fully_consistent) and bool(rep.pseudo_inertia_psd)
    np.testing.assert_allclose(rep.principal_moments, [0.0, 1.0, 1.0], atol=1e-15)
    assert abs(float(rep.triangle_margin)) < 1e-15  # on the boundary: a line of mass
    validate(body)
    # the same body in float32 passes with the default (dtype-scaled) tolerance
    b32 = RigidBodyInertia(body.params.astype(jnp.float32))
    assert bool(ipc(b32))
    assert default_tol(jnp.float32) == pytest.approx(100 * np.finfo(np.float32).eps)


def test_triangle_counter_example():
    """``I = diag(1, 0, 0)`` is PSD but ``S = ½ diag(−1, 1, 1)`` is not (triangle inequality)."""
    I = jnp.diag(jnp.array([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(inertia_to_second_moment(I), 0.5 * np.diag([-1.0, 1.0, 1.0]))
    body = RigidBodyInertia.from_mass_com_inertia(1.0, jnp.zeros(3), I)
    rep = pc(body, tol=0.0)
    assert bool(rep.mass_positive) and bool(rep.inertia_psd)
    assert not bool(rep.triangle_inequality) and not bool(rep.pseudo_inertia_psd)
    assert not bool(rep.fully_consistent)
    assert float(rep.triangle_margin) == pytest.approx(-1.0)  # = 2 λmin(S_c) = 2 · (−½)
    assert float(rep.min_eig_pseudo_inertia) == pytest.approx(-0.5)
    with raises_argument(
        ArgumentError, "inertia", match=r"triangle inequality violated: λ1 \+ λ2 − λ3 = 0 \+ 0 − 1"
    ):
        validate(body)
    with raises_argument(ArgumentError, "inertia", match="triangle inequality violated"):
        validate(I)  # the 3×3 form


def test_parallel_axis_between_arbitrary_points(rng):
    """``I_p = I_q + m Δq× Δq× − m Δp× Δp×`` against point-mass sums about p and q."""
    masses = rng.uniform(0.1, 1.0, size=9)
    pos = rng.normal(size=(9, 3))
    p, q = rng.normal(size=3), rng.normal(size=3)
    m = masses.sum()
    c = masses @ pos / m

    def brute(point):
        d = pos - point
        return np.einsum("n,n->", masses, np.sum(d * d, -1)) * np.eye(3) - np.einsum(
            "n,ni,nj->ij", masses, d, d
        )

    I_p, I_q = brute(p), brute(q)
    dp, dq = np_skew(p - c), np_skew(q - c)
    np.testing.assert_allclose(I_q + m * dq @ dq - m * dp @ dp, I_p, atol=1e-12)
    # library: about the CoM then out to p (parallel_axis), and the body re-expressed at p
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos))
    I_c = body.inertia_com()
    np.testing.assert_allclose(
        parallel_axis(I_c, jnp.asarray(m), jnp.asarray(p - c)), I_p, atol=1e-12
    )
    at_p = body.transform(Plx(jnp.eye(3), jnp.asarray(p)))
    np.testing.assert_allclose(at_p.inertia_origin(), I_p, atol=1e-12)
    # I_p ⪰ I_c with equality only at the CoM
    assert np.linalg.eigvalsh(I_p - np.asarray(I_c)).min() >= -1e-12
    np.testing.assert_allclose(parallel_axis(I_c, jnp.asarray(m), jnp.zeros(3)), I_c)


def test_shift_dominates_central_inertia(rng):
    body = random_consistent(rng, (50,))
    p = jnp.asarray(rng.normal(size=(50, 3)))
    I_p = parallel_axis(body.inertia_com(), body.mass, p)
    gap = np.linalg.eigvalsh(np.asarray(I_p - body.inertia_com()))
    assert gap.min() >= -1e-12
    # m |p|² is the largest eigenvalue of −m p× p× (in the plane orthogonal to p)
    np.testing.assert_allclose(gap[:, -1], body.mass * jnp.sum(p * p, -1), rtol=1e-10)


def test_sandwich_equals_shift_then_rotate(rng):
    """``Π_b = T Π_a Tᵀ`` equals the point masses moved to b, and shift-then-rotate."""
    masses = rng.uniform(0.1, 1.0, size=6)
    pos_a = rng.normal(size=(6, 3))
    E = random_rotations(rng, ())
    r = rng.normal(size=3)  # b's origin in a
    pos_b = (pos_a - r) @ E.T  # p_b = E (p_a − r)
    J_b_ref = np_pseudo(
        np.asarray(
            RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos_b)).params
        )
    )
    S_b = np.einsum("n,ni,nj->ij", masses, pos_b, pos_b)
    np.testing.assert_allclose(J_b_ref[:3, :3], S_b, atol=1e-12)
    body = RigidBodyInertia.from_point_masses(jnp.asarray(masses), jnp.asarray(pos_a))
    X = Plx(jnp.asarray(E), jnp.asarray(r))
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = E, -E @ r
    J_b = pseudo_inertia_sandwich(jnp.asarray(T), body.pseudo_inertia())
    np.testing.assert_allclose(J_b, J_b_ref, atol=1e-12)
    np.testing.assert_allclose(body.transform(X).pseudo_inertia(), J_b_ref, atol=1e-12)
    shifted = body.transform(Plx(jnp.eye(3), jnp.asarray(r)))
    rotated = shifted.transform(Plx(jnp.asarray(E), jnp.zeros(3)))
    np.testing.assert_allclose(rotated.params, body.transform(X).params, atol=1e-12)
    # consistency is frame independent
    np.testing.assert_allclose(
        pc(rotated).principal_moments,
        pc(body).principal_moments,
        atol=1e-12,
    )


def test_bigger_second_moment_bigger_inertia(rng):
    A = rng.normal(size=(40, 3, 3))
    S = jnp.asarray(A @ np.swapaxes(A, -1, -2))
    B = rng.normal(size=(40, 3, 2))  # rank-2 increments: PSD, singular
    dS = jnp.asarray(B @ np.swapaxes(B, -1, -2))
    dI = second_moment_to_inertia(S + dS) - second_moment_to_inertia(S)
    assert np.linalg.eigvalsh(np.asarray(dI)).min() >= -1e-12


@pytest.mark.parametrize("side", [+1.0, -1.0])
def test_pseudo_inertia_psd_iff_fully_consistent_near_boundary(side, rng):
    """``m > 0 and Π ⪰ 0  ⇔  mass_positive & inertia_psd & triangle_inequality`` (tol = 0)."""
    n = 400
    m = rng.uniform(0.1, 10.0, size=n) * np.where(rng.uniform(size=n) < 0.2, -1.0, 1.0)
    c = rng.normal(size=(n, 3)) * rng.choice([0.01, 1.0, 10.0], size=(n, 1))
    sigma = rng.uniform(0.05, 1.0, size=(n, 3))
    k = rng.integers(0, 3, size=n)
    delta = side * 1e-6 * sigma.max(-1)  # just inside (+) or just outside (−) the boundary
    sigma[np.arange(n), k] = delta
    body = body_from(m, c, sigma, random_rotations(rng, (n,)))
    rep = pc(body, tol=0.0)
    truth = (m > 0) & (side > 0)
    np.testing.assert_array_equal(rep.fully_consistent, truth)
    np.testing.assert_array_equal(rep.mass_positive & rep.pseudo_inertia_psd, truth)
    np.testing.assert_array_equal(rep.triangle_inequality, side > 0)
    # triangle_margin = 2 λmin(S_c) = 2 δ
    np.testing.assert_allclose(rep.triangle_margin, 2 * delta, rtol=1e-4, atol=1e-9)


def test_negative_principal_moment_fails_psd_and_triangle(rng):
    I_c = np.diag([-0.1, 1.0, 1.05])  # triangle holds for the two large ones, PSD fails
    body = RigidBodyInertia.from_mass_com_inertia(
        1.0, jnp.asarray(rng.normal(size=3)), jnp.asarray(I_c)
    )
    rep = pc(body)
    assert not bool(rep.inertia_psd) and not bool(rep.triangle_inequality)
    assert float(rep.min_eig_inertia_com) == pytest.approx(-0.1)
    with raises_argument(
        ArgumentError, "inertia", match=r"not positive semi-definite \(min principal moment -0.1\)"
    ):
        validate(body)


def test_tolerance_is_relative():
    sigma = np.array([0.0, 0.5, 0.5])
    sigma[0] = -1e-10
    body = body_from(np.array(2.0), np.array([1.0, 2.0, 3.0]), sigma, np.eye(3))
    rep = pc(body)
    # ‖I_c‖_F of λ = (½, ½, 1), about the CoM
    assert float(rep.inertia_scale) == pytest.approx(np.sqrt(1.5), rel=1e-9)
    assert float(rep.triangle_margin) == pytest.approx(-2e-10, rel=1e-5)
    # −2e-10 ≥ −(1e-9 · 1.22 + 8 eps · m|c|²), m|c|² = 28: relative to the CoM moments only
    assert bool(ipc(body, tol=1e-9))
    assert not bool(ipc(body, tol=1e-10))  # the old scale max|λ| + m|c|² = 29 accepted this
    # scaling the body by 1e6 in mass does not change the verdict
    big = RigidBodyInertia(body.params * 1e6)
    assert bool(ipc(big, tol=1e-9)) and not bool(ipc(big, tol=1e-10))
    with raises_argument(ArgumentError, "tol"):
        physical_consistency(body, tol=-1.0)


def test_nonpositive_mass_is_finite_and_flagged(rng):
    params = np_params(np.array([0.0, -1.0]), rng.normal(size=(2, 3)), np.stack([np.eye(3)] * 2))
    params[0, 1:4] = [0.3, 0.0, 0.0]  # m = 0 with h ≠ 0: no CoM, J indefinite
    rep = pc(RigidBodyInertia(jnp.asarray(params)))
    assert not np.any(rep.mass_positive) and not np.any(rep.fully_consistent)
    assert not np.any(rep.pseudo_inertia_psd)
    for leaf in jax.tree_util.tree_leaves(rep):
        assert np.all(np.isfinite(leaf))
    # m = −1 keeps its CoM-based meaning: S_c = 1 ⇒ principal moments 2
    np.testing.assert_allclose(rep.principal_moments[1], [2.0, 2.0, 2.0], atol=1e-12)


def test_non_finite_flags():
    p = np.asarray(two_point_masses().params).copy()
    p[5] = np.nan
    rep = pc(RigidBodyInertia(jnp.asarray(p)))
    assert not bool(rep.finite) and not bool(rep.fully_consistent)
    with raises_argument(
        ArgumentError, "inertia", match=r"inertia: 1 of 1 entries contain NaN or infinity"
    ):
        validate(RigidBodyInertia(jnp.asarray(p)))


_MAX_BATCH = max(int(np.prod(s)) for s in BATCH_SHAPES)


@pytest.mark.slow  # a property sweep: each batch shape and dtype compiles its programs
@settings(max_examples=12)
@given(batch=st.sampled_from(BATCH_SHAPES), seed=st.integers(0, 2**32 - 1), f32=st.booleans())
def test_property_batched_jit_vmap_dtype(batch, seed, f32):
    rng = np.random.default_rng(seed)
    n = int(np.prod(batch)) if batch else 1
    m = rng.uniform(0.1, 3.0, size=n)
    c = rng.normal(size=(n, 3))
    sigma = rng.uniform(-0.3, 1.0, size=(n, 3))  # mixes consistent and inconsistent
    body = body_from(m, c, sigma, random_rotations(rng, (n,)))
    dtype = jnp.float32 if f32 else jnp.float64
    params = body.params.astype(dtype).reshape(batch + (10,))
    rep = pc_jit(RigidBodyInertia(params))
    assert rep.fully_consistent.shape == batch and rep.principal_moments.shape == batch + (3,)
    assert rep.triangle_margin.dtype == dtype
    for leaf in jax.tree_util.tree_leaves(rep):
        assert np.all(np.isfinite(leaf))
    truth = (sigma.min(-1) > 0).reshape(batch)
    clear = (np.abs(sigma).min(-1) > 1e-3).reshape(batch)  # away from the boundary
    np.testing.assert_array_equal(np.asarray(rep.fully_consistent)[clear], truth[clear])
    # vmap over the flat batch, padded to the largest batch: one vmap compile per dtype
    flat = np.asarray(params).reshape((-1, 10))
    pad = np.broadcast_to(_PAD_ROW.astype(flat.dtype), (_MAX_BATCH - n, 10))
    vm = vpc_jit(RigidBodyInertia(jnp.asarray(np.concatenate([flat, pad]))))
    np.testing.assert_array_equal(vm.fully_consistent[:n].reshape(batch), rep.fully_consistent)


def test_gradients_of_margins(rng):
    body = random_consistent(rng, ())

    def margins(p):
        r = pc_jit(RigidBodyInertia(p))
        return jnp.stack([r.min_eig_inertia_com, r.triangle_margin, r.min_eig_pseudo_inertia])

    # eps: the inertia about the CoM has large third derivatives in m (h× h× / m)
    margins_jit = jax.jit(margins)
    check_grads(margins_jit, (body.params,), order=1, modes=["fwd", "rev"], eps=1e-6)
    # repeated eigenvalues (a ball off the origin): gradients stay finite; the full reverse-mode
    # Jacobian row by row through the same compiled vjp as check_grads (jacrev would compile a
    # batched one)
    ball = body_from(np.array(1.0), np.array([0.1, 0.2, 0.3]), np.full(3, 0.2), np.eye(3))
    _, vjp = jax.vjp(margins_jit, ball.params)
    g = np.stack([vjp(jnp.asarray(row))[0] for row in np.eye(3)])
    assert g.shape == (3, 10) and np.all(np.isfinite(g))


# ------------------------------------------------------------------------- validate
def test_validate_lists_failing_indices(rng):
    good = np_params(np.ones(6), rng.normal(size=(6, 3)), np.stack([np.diag([0.1, 0.2, 0.3])] * 6))
    bad = good.copy()
    bad[1, 0] = -2.0  # negative mass (h unchanged: the CoM flips sign)
    bad[4] = np_params(np.array(1.0), np.zeros(3), np.diag([-0.5, 1.0, 1.0]))
    body = RigidBodyInertia(jnp.asarray(bad.reshape(2, 3, 10)))
    with raises_argument(ArgumentError, "links") as err:
        validate(body, name="links")
    msg = str(err.value)
    assert "links: 2 of 6 bodies are not fully physically consistent" in msg
    assert "links[0, 1]: mass is not positive (m = -2)" in msg
    assert "links[1, 1]: triangle inequality violated" in msg
    assert (
        "principal moments about the CoM [0.5, 0.5, 2]" in msg
    )  # tr(S_c) 1 − S_c, S_c = diag(−.5, 1, 1)
    assert "CoM [0, 0, 0]" in msg and "mass 1" in msg
    assert validate(RigidBodyInertia(jnp.asarray(good))) is not None


def test_validate_truncates_long_lists():
    p = np_params(-np.ones(9), np.zeros((9, 3)), np.stack([np.eye(3)] * 9))
    with raises_argument(
        ArgumentError,
        "inertia",
        match=r"(?s)9 of 9 .*inertia\[1\]: mass.*\.\.\. and 7 more: inertia\[2\], inertia\[3\]",
    ):
        validate(RigidBodyInertia(jnp.asarray(p)), max_listed=2)


def test_validate_matrix_forms(rng):
    body = random_consistent(rng, (3,))
    assert validate(body.pseudo_inertia()) is not None
    assert validate(body.as_matrix()) is not None
    assert validate(body.params) is not None
    J = np.asarray(body.pseudo_inertia()).copy()
    J[2, 0, 1] += 1e-3  # non-symmetric
    with raises_argument(
        ArgumentError,
        "J",
        match=r"J: 1 of 3 matrices are not symmetric:\n  J\[2\]: the pseudo-inertia",
    ):
        validate(J, name="J")
    M = np.asarray(body.as_matrix()).copy()
    M[0, 0, 4] += 0.1
    with raises_argument(
        ArgumentError, "inertia", match="the 6×6 spatial inertia is not symmetric"
    ):
        validate(M)
    M = np.asarray(body.as_matrix()).copy()
    M[1, 3, 3] += 0.5  # anisotropic "mass": an added-mass matrix, not a rigid body
    with raises_argument(
        ArgumentError, "M6", match=r"M6\[1\]: lower-right \(linear\) block is not m·1"
    ):
        validate(M, name="M6")
    I = np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with raises_argument(ArgumentError, "inertia", match="the 3×3 inertia is not symmetric"):
        validate(I)
    with raises_argument(
        ArgumentError, "inertia", match=r"not positive semi-definite \(min eigenvalue -1\)"
    ):
        validate(np.diag([-1.0, 1.0, 1.0]))
    assert validate(np.diag([1.0, 1.0, 2.0])) is not None  # on the triangle boundary: a lamina


def test_validate_bad_shapes_types_and_tracing():
    with raises_argument(ArgumentError, "inertia"):
        validate(np.zeros((2, 5)))
    with raises_argument(ArgumentTypeError, "inertia"):
        validate(np.zeros((4, 4), dtype=np.int64))
    with raises_argument(ArgumentTypeError, "inertia", match="validate is eager"):
        jax.jit(lambda p: validate(RigidBodyInertia(p)))(two_point_masses().params)
    with raises_argument(ArgumentTypeError, "inertia"):
        physical_consistency("body")
    with raises_argument(ArgumentError, "inertia"):
        physical_consistency(np.zeros((3, 9)))


# --------------------------------------------------------------- nearest_consistent
@pytest.mark.parametrize("reference", ["com", "origin"])
def test_nearest_keeps_consistent_inputs_exactly(reference, rng):
    body = random_consistent(rng, (20,))
    out = nc(body, reference=reference)
    np.testing.assert_array_equal(out.params, body.params)
    edge = two_point_masses()  # on the boundary
    np.testing.assert_allclose(nc(edge).params, edge.params, atol=1e-12)


@pytest.mark.parametrize("reference", ["com", "origin"])
def test_nearest_outputs_are_consistent(reference, rng):
    n = 200
    m = rng.uniform(-1.0, 3.0, size=n)
    m[:5] = 0.0
    c = rng.normal(size=(n, 3))
    sigma = rng.uniform(-1.0, 1.0, size=(n, 3))
    body = body_from(m, c, sigma, random_rotations(rng, (n,)))
    p = np.asarray(body.params).copy()
    p[:5, 1:4] = rng.normal(size=(5, 3))  # massless with a first moment
    body = RigidBodyInertia(jnp.asarray(p))
    out = nc(body, reference=reference)
    rep = pc(out, tol=0.0)
    assert np.all(rep.fully_consistent) and np.all(rep.pseudo_inertia_psd)
    assert np.all(np.isfinite(out.params))


def test_nearest_com_is_the_frobenius_projection_of_central_second_moment(rng):
    n = 30
    m = rng.uniform(0.5, 2.0, size=n)
    c = rng.normal(size=(n, 3))
    sigma = rng.uniform(-0.5, 1.0, size=(n, 3))
    sigma[:, 0] = -np.abs(sigma[:, 0]) - 0.01  # every body inconsistent
    R = random_rotations(rng, (n,))
    body = body_from(m, c, sigma, R)
    eps = 1e-9
    out = nc(body, eps)
    np.testing.assert_allclose(out.mass, m, rtol=1e-14)  # mass kept
    np.testing.assert_allclose(out.com, c, atol=1e-12)  # CoM kept
    s = np.maximum(m, np.abs(sigma).max(-1))
    sigma_ref = np.maximum(sigma, eps * s[:, None])
    ref = np_params(m, c, R @ (sigma_ref[..., :, None] * np.swapaxes(R, -1, -2)))
    np.testing.assert_allclose(out.params, ref, atol=1e-12)


def test_nearest_com_falls_back_to_origin_for_a_negligible_mass():
    # regression: least squares on rank-deficient robot data returns links like this one
    # (m ≈ 1e-16 kg, h ≈ 1e-4 kg m); keeping its "CoM" h/m ≈ 1e12 m made the projection
    # meaningless (second moments ~1e8, NaN geodesic distances)
    p = jnp.array([1e-16, 1e-4, -2e-4, 3e-4, 0.02, 0.001, 0.03, 0.0, 0.002, 0.025])
    body = RigidBodyInertia(p)
    assert not bool(pc(body, tol=0.0).fully_consistent)
    out = nc(body)
    np.testing.assert_array_equal(out.params, nc(body, reference="origin").params)
    assert bool(pc(out, tol=0.0).fully_consistent)
    assert np.all(np.abs(np.asarray(out.params)) < 1.0)  # not the 1e8 of the CoM projection
    assert np.isfinite(float(geodesic_distance(out, nc(RigidBodyInertia(p.at[0].set(0.5))))))
    # a sane inconsistent body (CoM within its own extent) still keeps mass and CoM
    sane = body_from(
        np.array(1.5), np.array([0.1, 0.0, 0.2]), np.array([-0.1, 0.5, 0.7]), np.eye(3)
    )
    out = nc(sane)
    np.testing.assert_allclose(out.mass, 1.5, rtol=1e-14)
    np.testing.assert_allclose(out.com, [0.1, 0.0, 0.2], atol=1e-12)


def test_nearest_origin_is_eigenvalue_clipping_of_J(rng):
    n = 30
    body = body_from(
        rng.uniform(-1, 2, size=n),
        rng.normal(size=(n, 3)),
        rng.uniform(-1, 1, size=(n, 3)),
        random_rotations(rng, (n,)),
    )
    eps = 1e-6
    out = nc(body, eps, reference="origin")
    J = np_pseudo(np.asarray(body.params))
    w, V = np.linalg.eigh(J)
    s = np.abs(w).max(-1)
    J_ref = V @ (np.maximum(w, eps * s[:, None])[..., :, None] * np.swapaxes(V, -1, -2))
    inconsistent = ~np.asarray(pc(body, tol=0.0).fully_consistent)
    assert inconsistent.sum() > 10
    np.testing.assert_allclose(
        np_pseudo(np.asarray(out.params))[inconsistent], J_ref[inconsistent], atol=1e-12
    )
    # no random consistent candidate is closer in the Frobenius norm of J
    k = int(np.argmax(inconsistent))
    d_best = np.linalg.norm(J_ref[k] - J[k])
    for _ in range(200):
        A = rng.normal(size=(4, 4))
        cand = J_ref[k] + 0.05 * (A @ A.T)  # J_ref + PSD stays ⪰ eps·s
        assert np.linalg.norm(cand - J[k]) >= d_best - 1e-12 or np.linalg.eigvalsh(cand).min() < 0


@pytest.mark.slow
def test_nearest_float32_vmap_and_gradients(rng):
    body = body_from(
        np.array([1.0, 2.0]),
        rng.normal(size=(2, 3)),
        np.array([[-0.2, 0.5, 0.7], [0.1, 0.2, 0.3]]),
        random_rotations(rng, (2,)),
    )
    b32 = RigidBodyInertia(body.params.astype(jnp.float32))
    out = jax.jit(jax.vmap(nearest_consistent))(b32)
    assert out.params.dtype == jnp.float32
    assert np.all(pc(out, tol=0.0).fully_consistent)
    np.testing.assert_array_equal(out.params[1], b32.params[1])
    f = jax.jit(lambda p: nc_jit(RigidBodyInertia(p)).params)
    check_grads(f, (body.params[0],), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    # identity on consistent bodies: the reverse-mode Jacobian row by row through one compiled
    # vjp (jacrev would compile a batched one besides check_grads' programs)
    _, vjp = jax.vjp(f, body.params[1])
    jac = np.stack([vjp(jnp.asarray(row))[0] for row in np.eye(10)])
    np.testing.assert_allclose(jac, np.eye(10), atol=1e-12)
    # repeated eigenvalues in the unclipped part (σ = (−0.2, 0.5, 0.5)): finite gradient
    deg = body_from(np.array(1.0), np.array([0.1, 0.0, 0.2]), np.array([-0.2, 0.5, 0.5]), np.eye(3))
    check_grads(f, (deg.params,), order=1, modes=["fwd", "rev"], atol=1e-5, rtol=1e-5)
    with raises_argument(ArgumentError, "reference"):
        nearest_consistent(body, reference="cog")
    with raises_argument(ArgumentError, "eps"):
        nearest_consistent(body, 0.0)


# ------------------------------------------------- written-out eigenvalues vs LAPACK
def _reference_eigs(params):
    """NumPy float64 LAPACK eigenvalues of ``I_c`` (from the definition) and of ``J``."""
    p = np.asarray(params, np.float64)
    m, h = p[..., 0], p[..., 1:4]
    J = np_pseudo(p)
    S = J[..., :3, :3]
    S_c = S - h[..., :, None] * h[..., None, :] / m[..., None, None]
    I_c = np.trace(S_c, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - S_c
    return np.linalg.eigvalsh(I_c), np.linalg.eigvalsh(J)


def _degenerate_bodies(rng, n):
    """Point masses, rods, laminas, spheres, repeated and clustered moments, random rotations."""
    m = rng.uniform(0.2, 5.0, size=(6, n))
    c = rng.normal(size=(6, n, 3))
    one = np.ones(n)
    sig = np.stack(
        [
            np.zeros((n, 3)),  # point mass: J rank one, triple zero eigenvalue
            np.stack([one, 0 * one, 0 * one], -1),  # rod: I_c = (0, 1, 1)
            np.stack([one, 2 * one, 0 * one], -1),  # lamina: λ3 = λ1 + λ2
            np.full((n, 3), 0.3),  # sphere: repeated moments
            np.stack([one, one, 1 + 1e-9 * one], -1),  # clustered
            rng.uniform(-0.5, 1.0, size=(n, 3)),  # partly inconsistent (σ < 0)
        ]
    )
    R = random_rotations(rng, (6, n))
    S_c = R @ (sig[..., :, None] * np.swapaxes(R, -1, -2))
    return np_params(m, c, S_c)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_margins_match_lapack(rng, dtype):
    """Margins, principal moments and scales agree with ``np.linalg.eigvalsh`` (eps · scale)."""
    n = 200
    params = np.concatenate(
        [
            _degenerate_bodies(rng, n).reshape(-1, 10),
            # random symmetric parameters: mostly inconsistent, any sign of the mass
            np.concatenate([rng.uniform(0.1, 2, (n, 1)), rng.normal(size=(n, 9))], -1),
            -np.concatenate([rng.uniform(0.1, 2, (n, 1)), rng.normal(size=(n, 9))], -1),
        ]
    )
    scales = 10.0 ** rng.integers(-12, 13, size=(params.shape[0], 1))
    params = params * scales
    params = params.astype(dtype).astype(np.float64)  # the reference sees the same inputs
    lam, mu = _reference_eigs(params)
    rep = pc(RigidBodyInertia(jnp.asarray(params.astype(dtype))))
    tol = 20 * np.finfo(dtype).eps
    # error scale: the origin-frame numbers I_c is computed from
    s_lam = np.max(np.abs(lam), -1) + np.abs(params[:, 0]) * np.sum(
        (params[:, 1:4] / params[:, :1]) ** 2, -1
    )
    s_mu = np.max(np.abs(mu), -1)
    np.testing.assert_array_less(
        np.abs(rep.principal_moments - lam), np.broadcast_to(tol * s_lam[:, None], lam.shape)
    )
    np.testing.assert_array_less(np.abs(rep.min_eig_inertia_com - lam[:, 0]), tol * s_lam)
    tri = lam[:, 0] + lam[:, 1] - lam[:, 2]
    np.testing.assert_array_less(np.abs(rep.triangle_margin - tri), 2 * tol * s_lam)
    np.testing.assert_array_less(np.abs(rep.min_eig_pseudo_inertia - mu[:, 0]), tol * s_mu)
    np.testing.assert_array_less(np.abs(rep.pseudo_inertia_scale - s_mu), tol * s_mu)
    np.testing.assert_array_less(
        np.abs(rep.inertia_scale - np.sqrt(np.sum(lam * lam, -1))), 2 * tol * s_lam
    )


def test_boundary_bodies_keep_exact_flags(rng):
    """Point masses, rods and laminas (on the boundary) stay consistent at the default tol,
    and axis-aligned ones give exactly zero margins (as LAPACK on a diagonal matrix)."""
    params = _degenerate_bodies(rng, 20)[:3].reshape(-1, 10)
    for dtype in (jnp.float64, jnp.float32):
        rep = pc(RigidBodyInertia(jnp.asarray(params, dtype)))
        assert np.all(rep.fully_consistent) and np.all(rep.pseudo_inertia_psd)
    rod = body_from(np.array(2.0), np.zeros(3), np.array([1.0, 0.0, 0.0]), np.eye(3))
    rep = pc(rod, tol=0.0)
    assert float(rep.triangle_margin) == 0.0 and float(rep.min_eig_pseudo_inertia) == 0.0
    assert bool(rep.fully_consistent)


# ------------------------------------------- the verdict does not depend on the frame origin
# principal moments about the CoM (ascending) and the verdict known by construction
_FRAME_BODIES = {
    "half_violated": ([1.0, 1.0, 3.0], False),  # λ3 = 1.5 (λ1 + λ2)
    "negative_moment": ([-0.1, 1.0, 1.05], False),
    "rod": ([0.0, 1.0, 1.0], True),  # on the boundary: λ1 + λ2 = λ3 or λ = 0
    "lamina": ([1.0, 2.0, 3.0], True),
    "point_mass": ([0.0, 0.0, 0.0], True),
    "box": ([2.0, 2.5, 3.0], True),
}
_OFFSETS = [0.0, 1.0, 3.0, 10.0, 30.0, 100.0]


def _translated_bodies(rng, n_copies=8):
    """``(len(_FRAME_BODIES) · n_copies, len(_OFFSETS), 10)`` float64 parameters and truths.

    Each body gets a random orientation, a random scale ``10^k`` of mass and moments, and its
    CoM at ``offset · L`` in a random direction, ``L = 2 √(tr S_c / m)`` (its rms diameter).
    """
    kinds = list(_FRAME_BODIES)
    lam = np.repeat(np.array([_FRAME_BODIES[k][0] for k in kinds]), n_copies, axis=0)
    truth = np.repeat(np.array([_FRAME_BODIES[k][1] for k in kinds]), n_copies)
    n = lam.shape[0]
    scale = 10.0 ** rng.uniform(-3, 3, size=n)
    m = 2.0 * scale
    lam = lam * scale[:, None]
    sigma = 0.5 * lam.sum(-1, keepdims=True) - lam  # σᵢ = ½(λj + λk − λi)
    R = random_rotations(rng, (n,))
    S_c = R @ (sigma[..., :, None] * np.swapaxes(R, -1, -2))
    L = 2.0 * np.sqrt(np.maximum(sigma.sum(-1), 1e-3 * scale) / m)
    u = rng.normal(size=(n, 3))
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    c = np.asarray(_OFFSETS)[None, :, None] * (L[:, None] * u)[:, None, :]
    k = len(_OFFSETS)
    params = np_params(np.repeat(m[:, None], k, 1), c, np.repeat(S_c[:, None], k, 1))
    return params, truth


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_verdict_does_not_depend_on_the_frame_origin(dtype, rng):
    """Regression: float32 accepted a body whose triangle inequality is violated by half once
    its CoM was ~100 sizes from the origin (the tolerance grew like tol · m|c|²)."""
    params, truth = _translated_bodies(rng)
    rep = pc(RigidBodyInertia(jnp.asarray(params.astype(dtype))))
    expected = np.broadcast_to(truth[:, None], rep.fully_consistent.shape)
    np.testing.assert_array_equal(rep.fully_consistent, expected)
    np.testing.assert_array_equal(rep.triangle_inequality, expected)
    np.testing.assert_array_equal(rep.pseudo_inertia_psd, expected)
    np.testing.assert_array_equal(
        ipc(RigidBodyInertia(jnp.asarray(params.astype(dtype)))), expected
    )
    # the same bodies built at the CoM and moved by transform (float arithmetic in dtype)
    at_com = RigidBodyInertia(jnp.asarray(params[:, 0].astype(dtype)))
    c = np.asarray(RigidBodyInertia(jnp.asarray(params)).com)
    E = random_rotations(rng, c.shape[:-1]).astype(dtype)
    moved = jax.vmap(lambda b, E, r: b.transform(Plx(E, r)), in_axes=(None, 1, 1), out_axes=1)(
        at_com, jnp.asarray(E), jnp.asarray(-c.astype(dtype))
    )
    np.testing.assert_array_equal(pc(moved).fully_consistent, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_validate_and_nearest_agree_with_flags_far_from_the_origin(dtype, rng):
    params, truth = _translated_bodies(rng, n_copies=2)
    body = RigidBodyInertia(jnp.asarray(params.astype(dtype)))
    # validate raises exactly for the bodies the flags reject, at every offset
    good = RigidBodyInertia(body.params[truth])
    bad = RigidBodyInertia(body.params[~truth])
    assert validate(good) is good
    n_bad = int(np.prod(bad.batch_shape))
    with raises_argument(
        ArgumentError, "inertia", match=f"{n_bad} of {n_bad} bodies are not fully physically"
    ):
        validate(bad)
    out = nc(body)
    rep = pc(out)
    assert np.all(rep.fully_consistent) and np.all(np.isfinite(out.params))
    validate(out)
    # the projection keeps mass and CoM (reference="com") at every offset
    np.testing.assert_allclose(out.mass, body.mass, rtol=10 * np.finfo(dtype).eps)


def test_nearest_rejects_non_finite_input_eagerly(rng):
    """Regression: a body with a NaN entry came back as NaN without a word."""
    body = random_consistent(rng, (2, 3))
    p = np.asarray(body.params).copy()
    p[1, 0, 5] = np.nan  # Ixy
    p[0, 2, 0] = np.inf  # m
    bad = RigidBodyInertia(jnp.asarray(p))
    with raises_argument(ArgumentError, "inertia") as err:
        nearest_consistent(bad)
    msg = str(err.value)
    assert msg.startswith("inertia: 2 of 6 bodies have non-finite parameters")
    assert "inertia[0, 2]: m = inf" in msg and "inertia[1, 0]: Ixy = nan" in msg
    with raises_argument(ArgumentError, "inertia", match=r"inertia\[3\]: hy = nan"):
        q = np.asarray(random_consistent(rng, (4,)).params).copy()
        q[3, 2] = np.nan
        nearest_consistent(q)  # the (..., 10) array form
    with raises_argument(ArgumentError, "eps"):
        nearest_consistent(body, float("nan"))
    # under jit (no check possible): the non-finite bodies come back all-NaN, the rest as usual
    out = np.asarray(nc(bad).params)
    assert np.all(np.isnan(out[1, 0])) and np.all(np.isnan(out[0, 2]))
    keep = np.ones((2, 3), bool)
    keep[1, 0] = keep[0, 2] = False
    np.testing.assert_array_equal(out[keep], p[keep])
    assert not np.any(pc(nc(bad)).finite[~keep])


# ------------------------------------------------------- eigenvalue-free flags path
def _rot_diag(rng, sigma):
    R = random_rotations(rng, sigma.shape[:-1])
    return R @ (sigma[..., :, None] * np.swapaxes(R, -1, -2))


def _flag_bodies(rng, n):
    """At least ``n`` random bodies of many kinds plus edge cases, float64 ``(N, 10)``."""
    k = n // 5
    consistent = np.asarray(random_consistent(rng, (k,)).params)
    m = rng.uniform(-1.0, 3.0, size=k)
    sigma = rng.uniform(-1.0, 1.0, size=(k, 3))
    mixed = np_params(m, rng.normal(size=(k, 3)) * 3, _rot_diag(rng, sigma))
    # near the boundary, but clear of rounding: one σ at ±1e-3 of the others
    sigma = rng.uniform(0.05, 1.0, size=(k, 3))
    sigma[np.arange(k), rng.integers(0, 3, size=k)] = rng.choice([-1e-3, 1e-3], size=k)
    near = np_params(rng.uniform(0.1, 5, size=k), rng.normal(size=(k, 3)), _rot_diag(rng, sigma))
    noise = rng.normal(size=(k, 10)) * 10.0 ** rng.integers(-6, 7, size=(k, 1))
    degenerate = _degenerate_bodies(rng, (n - 4 * k) // 6 + 1).reshape(-1, 10)
    edge = np.zeros((8, 10))  # edge[0]: the zero body
    edge[1, 0] = 1.0  # point mass at the origin
    edge[2, 1] = 0.3  # massless with a first moment
    edge[3] = np_params(np.array(2.0), np.zeros(3), np.diag([1.0, 0.0, 0.0]))  # rod
    edge[4] = np_params(np.array(2.0), np.zeros(3), np.diag([1.0, 1.0, 0.0]))  # lamina
    edge[5] = np_params(np.array(-1.0), np.zeros(3), np.eye(3))  # negative mass
    edge[6] = np_params(np.array(1.0), np.zeros(3), np.diag([-1.0, 1.0, 1.0]))  # triangle
    edge[7, 4] = np.nan
    return np.concatenate([consistent, mixed, near, noise, degenerate, edge])


_flags_jit = jax.jit(lambda p, t: _flags(p, t, p.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flags_without_eigenvalues_match_the_eigenvalue_path(dtype, rng):
    """``is_physically_consistent`` (pivoted LDLᵀ, no eigenvalues) gives the flags of
    ``physical_consistency`` (eigenvalues) on 20,000 random and edge-case bodies."""
    params = _flag_bodies(rng, 20_000).astype(dtype)
    assert params.shape[0] >= 20_000
    body = RigidBodyInertia(jnp.asarray(params))
    names = ("finite", "mass_positive", "inertia_psd", "triangle_inequality")
    names += ("pseudo_inertia_psd", "fully_consistent")
    for tol in (None, 1e-3):
        rep = pc(body, tol)
        t = jnp.asarray(default_tol(dtype) if tol is None else tol, dtype)
        for name, got in zip(names, _flags_jit(body.params, t), strict=True):
            np.testing.assert_array_equal(got, getattr(rep, name), err_msg=name)
        np.testing.assert_array_equal(ipc(body, tol), rep.fully_consistent)
        # both verdicts occur in numbers (the comparison would be empty otherwise)
        assert 0.2 < float(np.mean(rep.fully_consistent)) < 0.8
