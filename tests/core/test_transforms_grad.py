"""Gradients of the transform and rotation API.

``jax.test_util.check_grads`` (order 2, forward and reverse mode, float64,
central differences with ``eps = 1e-4``) on every differentiable public
function, plus regression tests at the singular points of ``so3_exp`` /
``so3_log`` (angle exactly 0, exactly π, near π), where the gradient must be
finite and, where it is defined, equal to its closed form.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import np_skew
from jax.test_util import check_grads

from spatialjax import (
    Plx,
    Plxb,
    force_cross,
    matrix_to_quat,
    motion_cross,
    quat_to_matrix,
    rotx,
    roty,
    rotz,
    skew,
    so3_exp,
    so3_log,
)

EPS = 1e-4
CLASSES = [Plx, Plxb]


def check(f, args, *, jit=True):
    """Order-2 ``check_grads`` of ``f``, by default through ``jax.jit(f)``.

    The derivatives checked, the random directions and the tolerances are the same either way;
    only the number of XLA compilations differs. Eagerly, every primitive of every JVP/VJP and
    finite-difference evaluation is compiled on its own (100-230 programs for ``so3_log`` or
    ``quat_to_matrix``); jitted, each of the ~13 derivative programs once. Small functions
    built from the primitives an earlier eager check already compiled (``roty`` after ``rotx``)
    cost nothing eagerly, so those stay eager (``jit=False``).
    """
    check_grads(jax.jit(f) if jit else f, args, order=2, modes=("fwd", "rev"), eps=EPS)


def np_rodrigues(w):
    w = np.asarray(w, np.float64)
    th = np.linalg.norm(w)
    if th == 0:
        return np.eye(3)
    k = w / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.cos(th) * np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * np.outer(k, k)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2024)

    def rot(axis_angle):
        return jnp.asarray(np_rodrigues(axis_angle))

    E = jnp.stack([rot(rng.normal(size=3)) for _ in range(2)])
    E2 = jnp.stack([rot(rng.normal(size=3)) for _ in range(2)])
    return {
        "E": E,
        "E2": E2,
        "r": jnp.asarray(rng.normal(size=(2, 3))),
        "r2": jnp.asarray(rng.normal(size=(2, 3))),
        "m": jnp.asarray(rng.normal(size=(2, 6))),
        "f": jnp.asarray(rng.normal(size=(2, 6))),
        "rot": rot,
    }


# ---------------------------------------------------------------------------
# check_grads on every differentiable public function
# ---------------------------------------------------------------------------

METHODS = {
    "compose": lambda cls, d: (
        lambda E, r, E2, r2: jax.tree.leaves(cls(E, r).compose(cls(E2, r2))),
        (d["E"], d["r"], d["E2"], d["r2"]),
    ),
    "inverse": lambda cls, d: (
        lambda E, r: jax.tree.leaves(cls(E, r).inverse()),
        (d["E"], d["r"]),
    ),
    "apply_motion": lambda cls, d: (
        lambda E, r, m: cls(E, r).apply_motion(m),
        (d["E"], d["r"], d["m"]),
    ),
    "apply_force": lambda cls, d: (
        lambda E, r, f: cls(E, r).apply_force(f),
        (d["E"], d["r"], d["f"]),
    ),
    "inverse_apply_motion": lambda cls, d: (
        lambda E, r, m: cls(E, r).inverse_apply_motion(m),
        (d["E"], d["r"], d["m"]),
    ),
    "inverse_apply_force": lambda cls, d: (
        lambda E, r, f: cls(E, r).inverse_apply_force(f),
        (d["E"], d["r"], d["f"]),
    ),
    "as_matrix": lambda cls, d: (lambda E, r: cls(E, r).as_matrix(), (d["E"], d["r"])),
    "as_force_matrix": lambda cls, d: (
        lambda E, r: cls(E, r).as_force_matrix(),
        (d["E"], d["r"]),
    ),
    "as_homogeneous": lambda cls, d: (lambda E, r: cls(E, r).as_homogeneous(), (d["E"], d["r"])),
    "from_matrix": lambda cls, d: (
        lambda X6: jax.tree.leaves(cls.from_matrix(X6)),
        (cls(d["E"], d["r"]).as_matrix(),),
    ),
}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.slow  # order-2 check_grads of every method, forward and reverse
def test_check_grads_transform_methods(method, data):
    """One check per method covering both classes (fewer eager second-order traces)."""
    (f_plx, args), (f_plxb, args_b) = (METHODS[method](cls, data) for cls in CLASSES)
    n = len(args)
    check(lambda *a: (f_plx(*a[:n]), f_plxb(*a[n:])), args + args_b)


FUNCTIONS = {
    "skew": lambda d: (skew, (d["r"],)),
    "rotx": lambda d: (rotx, (jnp.array([0.3, -2.0]),)),
    "roty": lambda d: (roty, (jnp.array([0.3, -2.0]),)),
    "rotz": lambda d: (rotz, (jnp.array([0.3, -2.0]),)),
    "quat_to_matrix": lambda d: (
        quat_to_matrix,
        (jnp.array([[0.9, 0.1, -0.3, 0.2], [0.1, 1.0, 0.5, -0.7]]),),
    ),
    "motion_cross matrix": lambda d: (motion_cross, (d["m"],)),
    "force_cross matrix": lambda d: (force_cross, (d["m"],)),
    "motion_cross": lambda d: (motion_cross, (d["m"], d["f"])),
    "force_cross": lambda d: (force_cross, (d["m"], d["f"])),
    # a generic angle and one on the Taylor branch (θ² < 1e-6 even after the ±eps steps)
    "so3_exp": lambda d: (so3_exp, (jnp.array([[2.0, 1.0, -0.5], [1e-5, -2e-5, 3e-5]]),)),
    # one rotation per Shepperd branch: w, x, y and z the largest component
    "matrix_to_quat": lambda d: (
        matrix_to_quat,
        (
            jnp.stack(
                [
                    d["rot"](a)
                    for a in ([0.3, 0.2, -0.1], [2.8, 0.3, 0.1], [0.2, -2.7, 0.4], [0.1, 0.3, 2.9])
                ]
            ),
        ),
    ),
    "so3_log": lambda d: (
        so3_log,
        (
            jnp.stack(
                [
                    d["rot"](a)
                    for a in ([0.3, 0.2, -0.1], [2.8, 0.3, 0.1], [0.2, -2.7, 0.4], [0.1, 0.3, 2.9])
                ]
            ),
        ),
    ),
}


# checked eagerly: they share their primitives (and so their compiled programs) in pairs
EAGER = {
    "rotx",
    "roty",
    "rotz",
    "motion_cross matrix",
    "force_cross matrix",
    "motion_cross",
    "force_cross",
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.slow  # order-2 check_grads of every function, forward and reverse
def test_check_grads_functions(name, data):
    f, args = FUNCTIONS[name](data)
    check(f, args, jit=name not in EAGER)


# ---------------------------------------------------------------------------
# Singular points of so3_exp / so3_log
# ---------------------------------------------------------------------------

AXIS = np.array([0.36, -0.48, 0.8])  # unit
SINGULAR = {
    "zero": np.zeros(3),
    "pi": np.pi * AXIS,
    "pi_about_x": np.array([np.pi, 0.0, 0.0]),
    "near_pi": (np.pi - 1e-7) * AXIS,
}


_so3_log = jax.jit(so3_log)  # one compilation for every finite-difference evaluation below


def _all_finite(tree):
    return all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(tree))


# jitted once: every singular point reuses one compilation per function
_W = jnp.arange(9.0).reshape(3, 3)
_exp_jacs = jax.jit(
    lambda w: (
        jax.jacfwd(so3_exp)(w),
        jax.jacrev(so3_exp)(w),
        jax.hessian(lambda w: jnp.sum(so3_exp(w) * _W))(w),
    )
)
_log_jacs = jax.jit(
    lambda R: (
        jax.jacfwd(so3_log)(R),
        jax.jacrev(so3_log)(R),
        jax.hessian(lambda R: jnp.sum(so3_log(R) * jnp.array([1.0, -2.0, 0.5])))(R),
    )
)
_round_trip = jax.jit(
    lambda w: (
        so3_log(so3_exp(w)),
        jax.jacfwd(lambda w: so3_log(so3_exp(w)))(w),
        jax.jacrev(lambda w: so3_log(so3_exp(w)))(w),
        jax.grad(lambda w: jnp.sum(so3_log(so3_exp(w)) ** 2))(w),
    )
)


@pytest.mark.parametrize("point", list(SINGULAR))
def test_so3_exp_gradient_finite_and_correct_at_singular_points(point):
    w = SINGULAR[point]
    J_fwd, J_rev, H = _exp_jacs(jnp.asarray(w))
    assert _all_finite((J_fwd, J_rev, H))
    np.testing.assert_allclose(J_fwd, J_rev, atol=1e-14)
    # central differences of the NumPy Rodrigues reference
    h = 1e-6
    J_num = np.stack(
        [(np_rodrigues(w + h * e) - np_rodrigues(w - h * e)) / (2 * h) for e in np.eye(3)], -1
    )
    np.testing.assert_allclose(J_fwd, J_num, atol=1e-8)
    if point == "zero":
        # dR/dω_i at 0 is the generator skew(e_i), exactly
        np.testing.assert_allclose(J_fwd, np.stack([np_skew(e) for e in np.eye(3)], -1), atol=0)


@pytest.mark.parametrize("point", list(SINGULAR))
def test_so3_log_gradient_finite_at_singular_points(point):
    J_fwd, J_rev, H = _log_jacs(jnp.asarray(np_rodrigues(SINGULAR[point])))
    assert _all_finite((J_fwd, J_rev, H))
    np.testing.assert_allclose(J_fwd, J_rev, atol=1e-12)


def test_so3_log_derivative_at_identity_is_vee():
    """d/dt log(exp(t a×)) at t = 0 along a skew direction is a; along a symmetric one, 0."""
    a = np.array([0.3, -1.2, 0.7])
    J = _log_jacs(jnp.eye(3))[0]  # (3, 3, 3): d log_i / d R_jk
    np.testing.assert_allclose(np.einsum("ijk,jk->i", J, np_skew(a)), a, atol=1e-15)
    S = np.array([[1.0, 0.2, 0.3], [0.2, -1.0, 0.4], [0.3, 0.4, 0.5]])
    np.testing.assert_allclose(np.einsum("ijk,jk->i", J, S), np.zeros(3), atol=1e-15)


@pytest.mark.parametrize("theta", [1e-3, 2.0, np.pi - 1e-3, np.pi - 1e-7])
def test_so3_log_derivative_along_the_group_matches_finite_differences(theta):
    """d/dt log(R exp(t a×)) at 0, against central differences of the same curve."""
    R = np_rodrigues(theta * AXIS)
    a = np.array([0.5, 0.1, -0.4])
    J = np.asarray(_log_jacs(jnp.asarray(R))[0])
    jvp = np.einsum("ijk,jk->i", J, R @ np_skew(a))
    # small enough not to cross angle π, large enough for rounding (eps π / h)
    h = min(1e-6, (np.pi - theta) / 100)
    num = (
        np.asarray(_so3_log(jnp.asarray(R @ np_rodrigues(h * a))))
        - np.asarray(_so3_log(jnp.asarray(R @ np_rodrigues(-h * a))))
    ) / (2 * h)
    assert np.all(np.isfinite(jvp))
    np.testing.assert_allclose(jvp, num, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("theta", [0.0, 1e-9, 1e-4, 0.5, 3.0, np.pi - 1e-6, np.pi - 1e-9])
def test_so3_log_exp_round_trip_and_jacobian(theta):
    """log(exp(ω)) = ω with Jacobian 1 for ‖ω‖ < π, up to π."""
    w = jnp.asarray(theta * AXIS)
    out, J_fwd, J_rev, g = _round_trip(w)
    np.testing.assert_allclose(out, w, atol=1e-12)
    np.testing.assert_allclose(J_fwd, np.eye(3), atol=1e-6)
    np.testing.assert_allclose(J_rev, J_fwd, atol=1e-9)
    np.testing.assert_allclose(g, 2 * np.asarray(w), atol=1e-5)


def test_so3_log_exp_round_trip_at_exactly_pi_is_finite():
    w = jnp.asarray(np.pi * AXIS)
    out, J_fwd, J_rev, g = _round_trip(w)
    # ω and −ω are both logs of a rotation by π
    np.testing.assert_allclose(jnp.abs(out), jnp.abs(w), atol=1e-12)
    assert _all_finite((J_fwd, J_rev, g))
