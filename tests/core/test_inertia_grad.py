"""``jax.test_util.check_grads`` (order 2, forward and reverse, float64) on every
differentiable function of ``_inertia``, ``_log_cholesky`` and ``_metrics``.

Points are generic: a physically consistent body (a point-mass cloud, so
``J ≻ 0`` and the log-Cholesky inverse and the metrics are defined) in a small
batch, a random rotation ``E`` and offset ``r``, random velocities. Gradients at
the singular points (``J1 == J2``, repeated eigenvalues, ``θ = 0``, ``m = 0``)
are tested in ``test_metrics.py``, ``test_log_cholesky.py`` and
``test_inertia.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import random_rotations
from jax.test_util import check_grads

from spatialjax import (
    Plx,
    Plxb,
    RigidBodyInertia,
    geodesic_distance,
    inertia_to_second_moment,
    log_cholesky_to_vector,
    log_det_divergence,
    parallel_axis,
    pseudo_inertia_sandwich,
    second_moment_to_inertia,
    vector_to_log_cholesky,
)

B = 2  # batch of bodies


def _points(rng):
    """Well-conditioned clouds (cond(J) ~ 10) so the finite differences are accurate."""
    masses = rng.uniform(0.5, 2.0, size=(B, 8))
    pos = rng.normal(size=(B, 8, 3)) + 0.3 * rng.normal(size=(B, 1, 3))
    return masses, pos


def _params(masses, pos):
    m = masses.sum(-1)
    h = np.einsum("bk,bki->bi", masses, pos)
    S = np.einsum("bk,bki,bkj->bij", masses, pos, pos)
    I = np.trace(S, axis1=-2, axis2=-1)[:, None, None] * np.eye(3) - S
    sym = np.stack([I[:, 0, 0], I[:, 0, 1], I[:, 1, 1], I[:, 0, 2], I[:, 1, 2], I[:, 2, 2]], -1)
    return np.concatenate([m[:, None], h, sym], -1)


_rng = np.random.default_rng(31415)
MASSES, POS = _points(_rng)
PI = jnp.asarray(_params(MASSES, POS))
PI2 = jnp.asarray(_params(*_points(_rng)))
E = jnp.asarray(random_rotations(_rng, B))
R_OFF = jnp.asarray(_rng.normal(size=(B, 3)))
C_OFF = jnp.asarray(_rng.normal(size=(B, 3)))
V = jnp.asarray(_rng.normal(size=(B, 6)))
THETA = jnp.asarray(0.4 * _rng.normal(size=(B, 10)))
_body = RigidBodyInertia(PI)
J_A = _body.pseudo_inertia()
J_B = RigidBodyInertia(PI2).pseudo_inertia()
M6 = _body.as_matrix()
I_C = _body.inertia_com()
A33 = jnp.asarray(_rng.normal(size=(B, 3, 3)))
T44 = jnp.asarray(_rng.normal(size=(B, 4, 4)))


def constructors(pi, m, c, I_c, J, M6, theta, masses, positions):
    return {
        "from_vector": RigidBodyInertia.from_vector(pi).params,
        "from_mass_com_inertia": RigidBodyInertia.from_mass_com_inertia(m, c, I_c).params,
        "from_pseudo_inertia": RigidBodyInertia.from_pseudo_inertia(J).params,
        "from_matrix": RigidBodyInertia.from_matrix(M6).params,
        "from_log_cholesky": RigidBodyInertia.from_log_cholesky(theta).params,
        "from_point_masses": RigidBodyInertia.from_point_masses(masses, positions).params,
    }


def accessors(pi):
    b = RigidBodyInertia(pi)
    return {
        "mass": b.mass,
        "com": b.com,
        "h": b.h,
        "inertia_origin": b.inertia_origin(),
        "inertia_com": b.inertia_com(),
        "second_moment": b.second_moment(),
        "pseudo_inertia": b.pseudo_inertia(),
        "as_matrix": b.as_matrix(),
        "to_vector": b.to_vector(),
        "to_log_cholesky": b.to_log_cholesky(),
    }


def operations(pi, q, E, r, v):
    b = RigidBodyInertia(pi)
    return {
        "transform_plx": b.transform(Plx(E, r)).params,
        "transform_plxb": b.transform(Plxb(E, r)).params,
        "add": (b + RigidBodyInertia(q)).params,
        "momentum": b.momentum(v),
        "kinetic_energy": b.kinetic_energy(v),
    }


def free_functions(A, I_c, m, p, T, J):
    return {
        "inertia_to_second_moment": inertia_to_second_moment(A),
        "second_moment_to_inertia": second_moment_to_inertia(A),
        "parallel_axis": parallel_axis(I_c, m, p),
        "pseudo_inertia_sandwich": pseudo_inertia_sandwich(T, J),
    }


def log_cholesky_maps(theta, pi):
    return {
        "log_cholesky_to_vector": log_cholesky_to_vector(theta),
        "vector_to_log_cholesky": vector_to_log_cholesky(pi),
    }


def metrics(J1, J2):
    """At generic points: ``J1 ≠ J2``, distinct eigenvalues of ``J1⁻¹ J2``.

    (With ``RigidBodyInertia`` arguments the metrics use ``pseudo_inertia()``,
    whose gradients the ``accessors`` case checks.)
    """
    return {
        "log_det_divergence": log_det_divergence(J1, J2),
        "geodesic_distance": geodesic_distance(J1, J2),
    }


CASES = {
    "constructors": (
        constructors,
        (PI, PI[:, 0], C_OFF, I_C, J_A, M6, THETA, jnp.asarray(MASSES), jnp.asarray(POS)),
    ),
    "accessors": (accessors, (PI,)),
    "operations": (operations, (PI, PI2, E, R_OFF, V)),
    "free_functions": (free_functions, (A33, I_C, PI[:, 0], R_OFF, T44, J_A)),
    "log_cholesky_maps": (log_cholesky_maps, (THETA, PI)),
    "metrics": (metrics, (J_A, J_B)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.slow  # second-order forward and reverse derivatives of every inertia function
def test_check_grads_order2_fwd_rev(name):
    fn, args = CASES[name]
    for a in args:
        assert a.dtype == jnp.float64
    for key, out in fn(*args).items():
        assert np.all(np.isfinite(out)), key
    # jitted: each nested jvp/vjp is one (large) compile, 147 programs for the six groups
    # instead of 841 per-primitive eager ones; measured with the test XLA flags of conftest,
    # 26 s of CPU against 31 s eagerly (and only the two smallest groups are cheaper eagerly,
    # because they reuse primitives compiled by the others). Same derivatives, directions and
    # tolerances.
    check_grads(jax.jit(fn), args, order=2, modes=("fwd", "rev"))


def test_transform_gradient_wrt_rotation_is_that_of_the_6x6_formula():
    """Spot check of one gradient against an independent formula: d/dr of ``X* M X⁻¹``."""

    def via_6x6(p, r):
        X = Plx(E[0], r).as_matrix()
        Xi = jnp.linalg.inv(X)
        return Xi.T @ RigidBodyInertia(p).as_matrix() @ Xi

    def via_transform(p, r):
        return RigidBodyInertia(p).transform(Plx(E[0], r)).as_matrix()

    j1 = jax.jit(jax.jacfwd(via_6x6, argnums=(0, 1)))(PI[0], R_OFF[0])
    j2 = jax.jit(jax.jacfwd(via_transform, argnums=(0, 1)))(PI[0], R_OFF[0])
    for a, b in zip(j1, j2, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-11)
