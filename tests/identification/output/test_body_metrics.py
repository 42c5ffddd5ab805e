"""The report's NumPy body metrics: closed forms, and the JAX definitions they mirror."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax.identification.output.body_metrics import consistency_margins, geodesic_distances
from spatialjax.identification.output.model_writer import body_metrics


def _body(m, c, I_c):
    """10-vector about the origin of a body of mass ``m``, CoM ``c``, CoM inertia ``I_c``."""
    c = np.asarray(c, float)
    I_o = np.asarray(I_c, float) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2],
                     I_o[2, 2]])  # fmt: skip


def test_closed_forms():
    box = _body(2.0, [0.1, -0.2, 0.3], np.diag([1.0, 2.0, 2.5]))  # principal moments 1, 2, 2.5
    rod = _body(1.0, [0.0, 0.0, 0.5], np.diag([1.0, 1.0, 0.0]))  # on the triangle boundary
    bad = _body(1.0, [0.0, 0.0, 0.0], np.diag([1.0, 1.0, 3.0]))  # 1 + 1 - 3 < 0
    r = consistency_margins(np.stack([box, rod, bad]))
    np.testing.assert_allclose(r["principal_moments"][0], [1.0, 2.0, 2.5], atol=1e-12)
    np.testing.assert_allclose(r["triangle_margin"], [0.5, 0.0, -1.0], atol=1e-12)
    assert r["consistent"].tolist() == [True, True, False]
    nan = consistency_margins(np.array([[np.nan] + [0.0] * 9]))
    assert not nan["consistent"][0] and np.isnan(nan["triangle_margin"][0])
    # J0 = s J: every eigenvalue of J⁻¹ J0 is s, d = √(½ · 4 log² s) = √2 |log s|
    d = geodesic_distances(np.stack([box, box]), np.stack([3.0 * box, box]))
    np.testing.assert_allclose(d, [np.sqrt(2.0) * np.log(3.0), 0.0], rtol=1e-12)


def test_body_metrics_masks_inconsistent_bodies():
    box = _body(2.0, [0.1, -0.2, 0.3], np.diag([1.0, 2.0, 2.5]))
    bad = _body(1.0, [0.0, 0.0, 0.0], np.diag([1.0, 1.0, 3.0]))
    s = body_metrics(np.stack([box, bad]), np.stack([box * 2.0, box]))
    assert s["consistent"].tolist() == [True, False]
    assert np.isclose(s["geodesic"][0], np.sqrt(2.0) * np.log(2.0)) and np.isnan(s["geodesic"][1])


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_physical_consistency_and_geodesic_distance(seed):
    """Same definitions as the JAX functions (random bodies, some inconsistent)."""
    import spatialjax as sj

    rng = np.random.default_rng(seed)
    P = np.stack([_body(rng.uniform(0.1, 5), rng.normal(size=3) * 0.3,
                        np.diag(rng.uniform(0.05, 1.0, 3))) for _ in range(12)])  # fmt: skip
    P[::3, 4] *= 5.0  # Ixx inflated: violates the triangle inequality for some
    P0 = P * rng.uniform(0.5, 2.0, size=(12, 1))
    rep = sj.physical_consistency(sj.RigidBodyInertia(jnp.asarray(P)))  # float64 (conftest)
    J, J0 = (sj.RigidBodyInertia(jnp.asarray(x)).pseudo_inertia() for x in (P, P0))
    d = np.asarray(sj.geodesic_distance(J, J0))
    r = consistency_margins(P)
    assert r["consistent"].tolist() == np.asarray(rep.fully_consistent).tolist()
    assert 0 < r["consistent"].sum() < 12
    for k in ("principal_moments", "triangle_margin", "min_eig_inertia_com",
              "min_eig_pseudo_inertia"):  # fmt: skip
        np.testing.assert_allclose(r[k], np.asarray(getattr(rep, k)), rtol=1e-9, atol=1e-12)
    ok = r["consistent"]
    np.testing.assert_allclose(geodesic_distances(P[ok], P0[ok]), d[ok], rtol=1e-9, atol=1e-12)
