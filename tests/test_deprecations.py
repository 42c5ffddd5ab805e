"""Deprecated aliases still work, warn with the name to use instead, and stay out of ``__all__``."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import spatialjax as sj

# (deprecated name, the function that replaces it): both return the 6×6 cross-product matrix
ALIASES = [("crm", sj.motion_cross), ("crf", sj.force_cross)]


@pytest.mark.parametrize(("old", "new"), ALIASES, ids=[a for a, _ in ALIASES])
def test_alias_warns_and_matches(old, new):
    v = jnp.array([[0.1, -0.4, 0.3, 1.0, 2.0, -0.5], [0.0, 0.2, 0.0, 0.3, 0.0, 0.7]])
    with pytest.warns(
        DeprecationWarning, match=rf"spatialjax\.{old} is deprecated.*{new.__name__}"
    ):
        got = getattr(sj, old)(v)
    assert got.shape == (2, 6, 6)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(new(v)))
    assert old not in sj.__all__ and new.__name__ in sj.__all__


def test_matrix_form_times_vector_is_the_product():
    """``motion_cross(v) @ m == motion_cross(v, m)``, the same for forces (RBDA eqs. 2.31-2.32)."""
    rng = np.random.default_rng(3)
    v, m = (jnp.asarray(rng.normal(size=(4, 6))) for _ in range(2))
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", sj.motion_cross(v), m), sj.motion_cross(v, m), atol=1e-14
    )
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", sj.force_cross(v), m), sj.force_cross(v, m), atol=1e-14
    )
