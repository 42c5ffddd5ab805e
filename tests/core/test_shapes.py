"""Uniform-density shapes: closed forms, dense point-mass samples, batching, dtypes, bad input.

Reference values: the textbook formulas written out independently here
(Wikipedia "List of moments of inertia"; the capsule via hemispheres and the
parallel axis theorem), and ``RigidBodyInertia.from_point_masses`` on dense
midpoint-rule samples of each solid or surface (weights = volume or area
elements computed here), whose error is O(h²) in the grid spacing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

from spatialjax import ArgumentError, ArgumentTypeError, RigidBodyInertia
from spatialjax._consistency import physical_consistency
from spatialjax._shapes import (
    box,
    box_shell,
    capsule,
    cylinder,
    ellipsoid,
    ellipsoid_shell,
    sphere,
)


def diag_of(body):
    return np.diagonal(np.asarray(body.inertia_origin()), axis1=-2, axis2=-1)


def assert_centred_diagonal(body):
    np.testing.assert_array_equal(body.h, np.zeros_like(body.h))
    I = np.asarray(body.inertia_origin())
    np.testing.assert_array_equal(I * (1.0 - np.eye(3)), 0.0)


def sampled(masses, points):
    """Point-mass body from weights normalised to a total mass of 1."""
    w = masses / masses.sum()
    return RigidBodyInertia.from_point_masses(jnp.asarray(w), jnp.asarray(points))


def midpoints(lo, hi, n):
    h = (hi - lo) / n
    return lo + h * (np.arange(n) + 0.5)


def ball_samples(n=48, theta_range=(0.0, np.pi)):
    """Midpoint rule in spherical coordinates over the unit ball (optionally a cap range)."""
    r = midpoints(0.0, 1.0, n)
    th = midpoints(*theta_range, n)
    ph = midpoints(0.0, 2 * np.pi, 2 * n)
    R, TH, PH = np.meshgrid(r, th, ph, indexing="ij")
    pts = np.stack([R * np.sin(TH) * np.cos(PH), R * np.sin(TH) * np.sin(PH), R * np.cos(TH)], -1)
    w = R**2 * np.sin(TH)
    return w.ravel(), pts.reshape(-1, 3)


# ------------------------------------------------------------------- closed forms
def test_closed_forms_solids():
    m, (a, b, c) = 3.0, (0.4, 1.1, 2.0)
    np.testing.assert_allclose(
        diag_of(box(m, jnp.array([a, b, c]))),
        [m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12],
        rtol=1e-14,
    )
    np.testing.assert_allclose(diag_of(sphere(m, 0.7)), [0.4 * m * 0.49] * 3, rtol=1e-14)
    np.testing.assert_allclose(
        diag_of(ellipsoid(m, jnp.array([a, b, c]))),
        [m * (b * b + c * c) / 5, m * (a * a + c * c) / 5, m * (a * a + b * b) / 5],
        rtol=1e-14,
    )
    r, h = 0.3, 1.5
    Ixx = m * (3 * r * r + h * h) / 12
    np.testing.assert_allclose(diag_of(cylinder(m, r, h)), [Ixx, Ixx, m * r * r / 2], rtol=1e-14)


def test_capsule_from_hemispheres_and_parallel_axis():
    m, r, L = 2.0, 0.25, 0.8
    v_cyl, v_ball = np.pi * r * r * L, 4.0 / 3.0 * np.pi * r**3
    m_cyl = m * v_cyl / (v_cyl + v_ball)
    m_half = 0.5 * (m - m_cyl)  # one hemisphere
    # hemisphere: 2/5 m r² about any diameter of its flat face; CoM 3r/8 from that face
    I_half_cm = 0.4 * m_half * r * r - m_half * (3 * r / 8) ** 2
    d = L / 2 + 3 * r / 8
    Ixx = m_cyl * (3 * r * r + L * L) / 12 + 2 * (I_half_cm + m_half * d * d)
    Izz = m_cyl * r * r / 2 + 2 * 0.4 * m_half * r * r
    body = capsule(m, r, L)
    np.testing.assert_allclose(diag_of(body), [Ixx, Ixx, Izz], rtol=1e-14)
    # limits: a ball and a rod
    np.testing.assert_allclose(diag_of(capsule(m, r, 0.0)), diag_of(sphere(m, r)), rtol=1e-14)
    np.testing.assert_allclose(diag_of(capsule(m, 0.0, L)), [m * L * L / 12] * 2 + [0.0])
    np.testing.assert_array_equal(capsule(m, 0.0, 0.0).params, [m] + [0.0] * 9)


def test_closed_forms_shells():
    m, r = 1.3, 0.6
    np.testing.assert_allclose(
        diag_of(ellipsoid_shell(m, jnp.array([r, r, r]))), [2 / 3 * m * r * r] * 3, rtol=1e-14
    )
    s = 0.9  # hollow cube: 5/18 m s²
    np.testing.assert_allclose(
        diag_of(box_shell(m, jnp.array([s, s, s]))), [5 / 18 * m * s * s] * 3
    )
    # flat ellipsoid shell = both faces of an elliptic disc = a lamina m/4 diag(b², a², a²+b²)
    a, b = 1.2, 0.5
    np.testing.assert_allclose(
        diag_of(ellipsoid_shell(m, jnp.array([a, b, 0.0]))),
        [m * b * b / 4, m * a * a / 4, m * (a * a + b * b) / 4],
        rtol=1e-13,
    )
    # needle: surface ∝ perimeter of the cross-section ∝ √(1 − x²/a²)  ⇒  ∫x² = m a²/4
    np.testing.assert_allclose(
        diag_of(ellipsoid_shell(m, jnp.array([a, 0.0, 0.0]))),
        [0.0, m * a * a / 4, m * a * a / 4],
        atol=1e-13,
    )
    # flattened box shell: two faces of a rectangle (a lamina)
    np.testing.assert_allclose(
        diag_of(box_shell(m, jnp.array([a, b, 0.0]))),
        [m * b * b / 12, m * a * a / 12, m * (a * a + b * b) / 12],
        rtol=1e-14,
    )
    np.testing.assert_array_equal(ellipsoid_shell(m, jnp.zeros(3)).params, [m] + [0.0] * 9)
    np.testing.assert_array_equal(box_shell(m, jnp.zeros(3)).params, [m] + [0.0] * 9)


# ------------------------------------------------------------ dense point samples
def test_solids_against_dense_samples():
    tol = 2e-3  # midpoint rule, O(h²)
    # box: regular grid
    a, b, c = 0.5, 1.0, 1.5
    g = [midpoints(-s / 2, s / 2, 30) for s in (a, b, c)]
    pts = np.stack(np.meshgrid(*g, indexing="ij"), -1).reshape(-1, 3)
    ref = sampled(np.ones(len(pts)), pts)
    np.testing.assert_allclose(diag_of(box(1.0, jnp.array([a, b, c]))), diag_of(ref), rtol=tol)
    # ball and ellipsoid: spherical coordinates (ellipsoid = linearly scaled ball)
    w, unit = ball_samples()
    np.testing.assert_allclose(diag_of(sphere(1.0, 1.0)), diag_of(sampled(w, unit)), rtol=tol)
    axes = np.array([0.3, 0.8, 1.4])
    ref = sampled(w, unit * axes)
    np.testing.assert_allclose(diag_of(ellipsoid(1.0, jnp.asarray(axes))), diag_of(ref), rtol=tol)
    # cylinder: polar grid
    r, L, n = 0.4, 1.2, 40
    R, PH, Z = np.meshgrid(
        midpoints(0, r, n),
        midpoints(0, 2 * np.pi, 2 * n),
        midpoints(-L / 2, L / 2, n),
        indexing="ij",
    )
    cyl_pts = np.stack([R * np.cos(PH), R * np.sin(PH), Z], -1).reshape(-1, 3)
    cyl_w = R.ravel() * (r / n) * (2 * np.pi / (2 * n)) * (L / n)
    np.testing.assert_allclose(
        diag_of(cylinder(1.0, r, L)), diag_of(sampled(cyl_w, cyl_pts)), rtol=tol
    )
    # capsule: the same cylinder plus two hemispherical caps (volume weights, one density)
    wb, up = ball_samples(40, (0.0, np.pi / 2))
    wb = wb * (1.0 / 40) * (np.pi / 2 / 40) * (2 * np.pi / 80) * r**3
    cap_top = up * r + [0, 0, L / 2]
    cap_bot = -up * r - [0, 0, L / 2]
    pts = np.concatenate([cyl_pts, cap_top, cap_bot])
    ws = np.concatenate([cyl_w, wb, wb])
    np.testing.assert_allclose(diag_of(capsule(1.0, r, L)), diag_of(sampled(ws, pts)), rtol=tol)


def test_box_shell_against_dense_surface_samples():
    a, b, c = 0.6, 1.0, 1.7
    n = 60
    pts, ws = [], []
    sizes = np.array([a, b, c])
    for axis in range(3):
        i, j = [k for k in range(3) if k != axis]
        U, V = np.meshgrid(
            midpoints(-sizes[i] / 2, sizes[i] / 2, n), midpoints(-sizes[j] / 2, sizes[j] / 2, n)
        )
        dA = sizes[i] * sizes[j] / n**2
        for sign in (-1, 1):
            p = np.zeros(U.shape + (3,))
            p[..., axis] = sign * sizes[axis] / 2
            p[..., i], p[..., j] = U, V
            pts.append(p.reshape(-1, 3))
            ws.append(np.full(U.size, dA))
    ref = sampled(np.concatenate(ws), np.concatenate(pts))
    np.testing.assert_allclose(diag_of(box_shell(1.0, jnp.asarray(sizes))), diag_of(ref), rtol=1e-3)


@pytest.mark.parametrize("axes", [(1.0, 0.5, 0.25), (0.3, 2.0, 0.7), (1.0, 1.0, 0.2)])
def test_ellipsoid_shell_against_dense_surface_samples(axes):
    """Midpoint rule in (θ, φ) with the area element |∂p/∂θ × ∂p/∂φ| computed by a cross product."""
    a, b, c = axes
    n = 300
    TH, PH = np.meshgrid(midpoints(0, np.pi, n), midpoints(0, 2 * np.pi, 2 * n), indexing="ij")
    p = np.stack([a * np.sin(TH) * np.cos(PH), b * np.sin(TH) * np.sin(PH), c * np.cos(TH)], -1)
    d_th = np.stack([a * np.cos(TH) * np.cos(PH), b * np.cos(TH) * np.sin(PH), -c * np.sin(TH)], -1)
    d_ph = np.stack([-a * np.sin(TH) * np.sin(PH), b * np.sin(TH) * np.cos(PH), 0 * TH], -1)
    dA = np.linalg.norm(np.cross(d_th, d_ph), axis=-1)
    ref = sampled(dA.ravel(), p.reshape(-1, 3))
    np.testing.assert_allclose(
        diag_of(ellipsoid_shell(2.0, jnp.asarray(axes))), 2.0 * diag_of(ref), rtol=2e-5
    )


def test_ellipsoid_shell_against_adaptive_quadrature():
    """A second, tighter reference: nested adaptive quadrature (SciPy) of the area integrals."""
    integrate = pytest.importorskip("scipy.integrate")
    a, b, c = 1.0, 0.1, 0.01

    def dA(u, ph):
        return np.sqrt(
            c * c * (1 - u * u) * (b * b * np.cos(ph) ** 2 + a * a * np.sin(ph) ** 2)
            + (a * b * u) ** 2
        )

    def integral(f):
        def inner(ph):
            return integrate.quad(lambda u: f(u, ph) * dA(u, ph), 0, 1, epsrel=1e-12, limit=200)[0]

        return integrate.quad(inner, 0, np.pi / 2, epsrel=1e-12, limit=200)[0]

    area = integral(lambda u, ph: 1.0)
    Sx = a * a * integral(lambda u, ph: (1 - u * u) * np.cos(ph) ** 2) / area
    Sy = b * b * integral(lambda u, ph: (1 - u * u) * np.sin(ph) ** 2) / area
    Sz = c * c * integral(lambda u, ph: u * u) / area
    ref = np.array([Sy + Sz, Sx + Sz, Sx + Sy])
    np.testing.assert_allclose(diag_of(ellipsoid_shell(1.0, jnp.array([a, b, c]))), ref, rtol=1e-10)


def test_ellipsoid_shell_is_not_the_homoeoid_limit():
    """A scaled-copy shell (homoeoid) has I = m (b² + c²)/3; uniform surface density does not."""
    a, b, c = 1.0, 0.5, 0.25
    homoeoid = np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 3
    got = diag_of(ellipsoid_shell(1.0, jnp.array([a, b, c])))
    assert np.abs(got - homoeoid).max() > 1e-3


def test_ellipsoid_shell_axis_order_and_convergence(rng):
    axes = np.array([0.9, 0.2, 0.5])
    body = ellipsoid_shell(1.0, jnp.asarray(axes))
    perm = [2, 0, 1]
    permuted = ellipsoid_shell(1.0, jnp.asarray(axes[perm]))
    np.testing.assert_allclose(diag_of(permuted), diag_of(body)[perm], rtol=1e-14)
    coarse = ellipsoid_shell(1.0, jnp.asarray(axes), num_points=32)
    np.testing.assert_allclose(diag_of(coarse), diag_of(body), rtol=1e-13)
    with raises_argument(ArgumentError, "num_points"):
        ellipsoid_shell(1.0, jnp.asarray(axes), num_points=1)


# ------------------------------------------------------- batching, dtype, transforms
SHAPES = {
    "box": (box, (3,)),
    "box_shell": (box_shell, (3,)),
    "ellipsoid": (ellipsoid, (3,)),
    "ellipsoid_shell": (ellipsoid_shell, (3,)),
    "sphere": (sphere, ()),
    "cylinder": (cylinder, (), ()),
    "capsule": (capsule, (), ()),
}


def _args(name, rng, batch, dtype):
    fn, *dims = SHAPES[name]
    args = [rng.uniform(0.5, 2.0, size=batch).astype(dtype)]
    args += [rng.uniform(0.05, 1.5, size=batch + d).astype(dtype) for d in dims]
    return fn, [jnp.asarray(x) for x in args]


# physical_consistency is the largest program of the sweep: it runs on the bodies flattened and
# padded (with copies of the first) to one batch of _N_FLAT, so it compiles once per dtype rather
# than once per (batch shape, dtype); every body of the batch is still judged
_N_FLAT = 6  # the largest batch below, (3, 1, 2)
_consistency_jit = jax.jit(physical_consistency)


def _all_consistent(body):
    flat = np.asarray(body.params).reshape(-1, 10)
    padded = np.concatenate([flat, np.repeat(flat[:1], _N_FLAT - flat.shape[0], axis=0)])
    report = _consistency_jit(RigidBodyInertia(jnp.asarray(padded)))
    return bool(np.all(np.asarray(report.fully_consistent)))


@settings(max_examples=10)
@given(
    name=st.sampled_from(sorted(SHAPES)),
    batch=st.sampled_from([(), (1,), (3, 1, 2)]),
    f32=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_batched_dtype_jit_consistent(name, batch, f32, seed):
    rng = np.random.default_rng(seed)
    dtype = np.float32 if f32 else np.float64
    fn, args = _args(name, rng, batch, dtype)
    body = jax.jit(fn)(*args)
    assert body.batch_shape == batch and body.dtype == dtype
    assert_centred_diagonal(body)
    assert _all_consistent(body)
    # agrees with the float64 evaluation
    ref = jax.jit(fn)(*[a.astype(jnp.float64) for a in args])
    np.testing.assert_allclose(body.params, ref.params, rtol=2e-6 if f32 else 1e-14)
    if batch:
        flat = [a.reshape((-1,) + a.shape[len(batch) :]) for a in args]
        vm = jax.jit(jax.vmap(fn))(*flat)
        np.testing.assert_allclose(vm.params.reshape(body.params.shape), body.params, rtol=1e-5)


def test_mass_broadcasts_against_dimensions(rng):
    masses = jnp.asarray(rng.uniform(1, 2, size=(4, 1)))
    sizes = jnp.asarray(rng.uniform(0.1, 1, size=(3, 3)))
    for fn in (box, box_shell, ellipsoid, ellipsoid_shell):
        body = fn(masses, sizes)
        assert body.batch_shape == (4, 3)
        np.testing.assert_allclose(body.mass, np.broadcast_to(masses, (4, 3)))
        np.testing.assert_allclose(body[2, 1].params, fn(masses[2, 0], sizes[1]).params, rtol=1e-14)
    body = cylinder(masses, jnp.asarray([0.1, 0.2, 0.3]), 1.0)
    assert body.batch_shape == (4, 3)


def test_python_scalars_adopt_array_dtype():
    body = box(2.0, jnp.array([1.0, 2.0, 3.0], jnp.float32))
    assert body.dtype == jnp.float32
    assert cylinder(jnp.float32(1.0), 0.5, 2.0).dtype == jnp.float32
    assert ellipsoid_shell(1.0, jnp.ones(3, jnp.float32)).dtype == jnp.float32
    with raises_argument(ArgumentTypeError, "size"):
        box(jnp.array(1.0, jnp.float64), jnp.ones(3, jnp.float32))


def test_gradients(rng):
    def all_shapes(m, s3, r, L):
        return jnp.concatenate(
            [
                box(m, s3).params,
                box_shell(m, s3).params,
                ellipsoid(m, s3).params,
                sphere(m, r).params,
                cylinder(m, r, L).params,
                capsule(m, r, L).params,
            ]
        )

    args = (jnp.asarray(1.3), jnp.asarray([0.3, 0.9, 0.5]), jnp.asarray(0.2), jnp.asarray(0.7))
    check_grads(jax.jit(all_shapes), args, order=1, modes=["rev"])
    # the shell: generic, at a sphere (all semi-axes equal) and at a spheroid
    f = jax.jit(lambda m, s: ellipsoid_shell(m, s).params)
    for s in ([0.9, 0.2, 0.5], [0.5, 0.5, 0.5], [0.4, 0.4, 1.0]):
        check_grads(f, (jnp.asarray(1.3), jnp.asarray(s)), order=1, modes=["rev"], eps=1e-6)
    # d/dr of the sphere shell 2/3 m r² is 4/3 m r: by the chain rule through s = (r, r, r),
    # the sum of ∂I_yy/∂s_i (one VJP with the argument types of the checks above, so it reuses
    # their compiled programs)
    _, f_vjp = jax.vjp(f, jnp.asarray(1.0), jnp.asarray([0.5, 0.5, 0.5]))
    _, ds = f_vjp(jnp.asarray(np.eye(10)[4]))
    np.testing.assert_allclose(np.sum(np.asarray(ds)), 4 / 3 * 0.5, rtol=1e-12)


def test_bad_inputs():
    with raises_argument(
        ArgumentError, "size", match=r"size: expected finite values >= 0, got entries \[-1.0\]"
    ):
        box(1.0, jnp.array([1.0, -1.0, 2.0]))
    with raises_argument(ArgumentError, "mass"):
        sphere(-1.0, 1.0)
    with raises_argument(ArgumentError, "length"):
        capsule(1.0, 0.2, jnp.nan)
    with raises_argument(ArgumentError, "semi_axes"):
        ellipsoid_shell(1.0, jnp.ones(2))
    with raises_argument(ArgumentTypeError, "size"):
        box_shell(1.0, np.array([1, 2, 3]))
    with raises_argument(ArgumentError, "radius"):
        cylinder(jnp.ones(3), jnp.ones(2), 1.0)
    # under jit the values are not checked (documented): no error, formula applied
    out = jax.jit(sphere)(1.0, -2.0)
    np.testing.assert_allclose(out.params[4], 0.4 * 4.0)


_ARG_NAMES = {
    "box": ("mass", "size"),
    "box_shell": ("mass", "size"),
    "ellipsoid": ("mass", "semi_axes"),
    "ellipsoid_shell": ("mass", "semi_axes"),
    "sphere": ("mass", "radius"),
    "cylinder": ("mass", "radius", "length"),
    "capsule": ("mass", "radius", "length"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_integer_array_error_names_the_right_argument(name):
    """Regression: ``box(1.0, jnp.ones(3, int))`` blamed ``mass`` (a Python float adopted the
    integer array's dtype before being checked)."""
    fn, *dims = SHAPES[name]
    names = _ARG_NAMES[name]
    shapes = [(), *dims]
    for k, bad_name in enumerate(names):
        for other in ("python", "float32"):
            args = [
                (1.0 if other == "python" else jnp.ones(s, jnp.float32))
                if s == ()
                else jnp.ones(s, jnp.float32)
                for s in shapes
            ]
            args[k] = jnp.ones(shapes[k], jnp.int32)
            with raises_argument(ArgumentTypeError, bad_name) as err:
                fn(*args)
            assert "int32" in str(err.value)
