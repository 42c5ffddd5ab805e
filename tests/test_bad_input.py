"""Bad inputs to transforms, rotations and spatial cross products.

Every mistake raises at call (or trace) time with the error type and a message
that names the argument, what was expected and what was received.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

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

CLASSES = [Plx, Plxb]
E = jnp.eye(3)
r = jnp.zeros(3)


def raises(exc, *fragments):
    """pytest.raises matching every fragment (literal text) in order."""
    return pytest.raises(exc, match=".*".join(re.escape(f) for f in fragments))


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_wrong_rotation_shape(cls):
    name = cls.__name__
    with raises(ValueError, f"{name}.E", "(..., 3, 3)", "(3, 4)"):
        cls(jnp.zeros((3, 4)), r)
    with raises(ValueError, f"{name}.E", "(..., 3, 3)", "(3,)"):
        cls(jnp.zeros(3), r)


@pytest.mark.parametrize("cls", CLASSES)
def test_wrong_translation_shape(cls):
    with raises(ValueError, f"{cls.__name__}.r", "(..., 3)", "(2,)"):
        cls(E, jnp.zeros(2))
    with raises(ValueError, f"{cls.__name__}.r", "(..., 3)", "(4, 1)"):
        cls(E, jnp.zeros((4, 1)))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize(
    "method, arg",
    [
        ("apply_motion", "m"),
        ("inverse_apply_motion", "m"),
        ("apply_force", "f"),
        ("inverse_apply_force", "f"),
    ],
)
def test_wrong_vector_shape(cls, method, arg):
    X = cls(E, r)
    with raises(ValueError, f"{arg}:", "(..., 6)", "(5,)"):
        getattr(X, method)(jnp.zeros(5))
    with raises(ValueError, f"{arg}:", "(..., 6)", "(6, 3)"):
        getattr(X, method)(jnp.zeros((6, 3)))


@pytest.mark.parametrize("cls", CLASSES)
def test_batch_shapes_that_do_not_broadcast(cls):
    X = cls(jnp.broadcast_to(E, (4, 3, 3)), jnp.zeros((4, 3)))
    for method in ("apply_motion", "apply_force", "inverse_apply_motion", "inverse_apply_force"):
        with raises(ValueError, "do not broadcast", "(4,)", "(5,)"):
            getattr(X, method)(jnp.zeros((5, 6)))
    with raises(ValueError, "do not broadcast", f"{cls.__name__}.E", "(4,)", "(5,)"):
        cls(jnp.broadcast_to(E, (4, 3, 3)), jnp.zeros((5, 3)))
    other = cls(jnp.broadcast_to(E, (5, 3, 3)), jnp.zeros((5, 3)))
    with raises(ValueError, "do not broadcast", "self", "(4,)", "other", "(5,)"):
        X @ other


@pytest.mark.parametrize("cls", CLASSES)
def test_from_matrix_wrong_shape(cls):
    with raises(ValueError, "X6", "(..., 6, 6)", "(6, 5)"):
        cls.from_matrix(jnp.zeros((6, 5)))


def test_rotation_and_cross_product_shapes():
    with raises(ValueError, "v:", "(..., 3)", "(2,)"):
        skew(jnp.zeros(2))
    with raises(ValueError, "q:", "(..., 4)", "(3,)"):
        quat_to_matrix(jnp.zeros(3))
    with raises(ValueError, "R:", "(..., 3, 3)", "(3, 4)"):
        matrix_to_quat(jnp.zeros((3, 4)))
    with raises(ValueError, "R:", "(..., 3, 3)", "(4, 4)"):
        so3_log(jnp.eye(4))
    with raises(ValueError, "omega:", "(..., 3)", "(4,)"):
        so3_exp(jnp.zeros(4))
    for fn in (motion_cross, force_cross):  # the 6×6 matrices
        with raises(ValueError, "v:", "(..., 6)", "(5,)"):
            fn(jnp.zeros(5))
    with raises(ValueError, "m:", "(..., 6)", "(3,)"):
        motion_cross(jnp.zeros(6), jnp.zeros(3))
    with raises(ValueError, "f:", "(..., 6)", "(3,)"):
        force_cross(jnp.zeros(6), jnp.zeros(3))
    with raises(ValueError, "do not broadcast", "(4,)", "(5,)"):
        motion_cross(jnp.zeros((4, 6)), jnp.zeros((5, 6)))
    with raises(ValueError, "do not broadcast", "(4,)", "(5,)"):
        force_cross(jnp.zeros((4, 6)), jnp.zeros((5, 6)))


def test_shape_errors_raise_at_trace_time_under_jit_and_vmap():
    X = Plx(E, r)
    with raises(ValueError, "m:", "(..., 6)", "(5,)"):
        jax.jit(lambda m: X.apply_motion(m))(jnp.zeros(5))
    with raises(ValueError, "m:", "(..., 6)", "(5,)"):
        jax.vmap(lambda m: X.apply_motion(m))(jnp.zeros((3, 5)))
    with raises(ValueError, "Plx.E", "(..., 3, 3)", "(3, 4)"):
        jax.jit(lambda E: Plx(E, r))(jnp.zeros((3, 4)))


# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_integer_arrays_are_refused(cls):
    with raises(TypeError, f"{cls.__name__}.E", "floating-point", "int"):
        cls(jnp.eye(3, dtype=jnp.int32), r)
    with raises(TypeError, f"{cls.__name__}.r", "floating-point", "int"):
        cls(E, np.zeros(3, dtype=np.int64))
    with raises(TypeError, f"{cls.__name__}.r", "floating-point", "int"):
        cls(E, [0, 0, 1])
    X = cls(E, r)
    with raises(TypeError, "m:", "floating-point", "int32"):
        X.apply_motion(jnp.zeros(6, jnp.int32))
    with raises(TypeError, "f:", "floating-point", "bool"):
        X.apply_force(jnp.zeros(6, bool))


def test_integer_arrays_refused_by_rotation_helpers():
    with raises(TypeError, "theta", "floating-point", "int"):
        rotx(jnp.array([1, 2]))
    for fn in (roty, rotz):
        with raises(TypeError, "theta", "floating-point"):
            fn(np.arange(3))
    with raises(TypeError, "v:", "floating-point"):
        skew(jnp.array([1, 2, 3]))
    with raises(TypeError, "q:", "floating-point"):
        quat_to_matrix(jnp.array([1, 0, 0, 0]))
    with raises(TypeError, "omega:", "floating-point"):
        so3_exp(jnp.array([1, 0, 0]))
    with raises(TypeError, "R:", "floating-point"):
        so3_log(jnp.eye(3, dtype=jnp.int32))
    with raises(TypeError, "v:", "floating-point"):
        motion_cross(jnp.arange(6))


@pytest.mark.parametrize("cls", CLASSES)
def test_float32_float64_mix_is_refused(cls):
    with raises(TypeError, f"{cls.__name__}.r", "float64", f"{cls.__name__}.E", "float32"):
        cls(E.astype(jnp.float32), r)
    X64 = cls(E, r)
    X32 = cls(E.astype(jnp.float32), r.astype(jnp.float32))
    with raises(TypeError, "m has dtype float32", "float64", "convert one explicitly"):
        X64.apply_motion(jnp.zeros(6, jnp.float32))
    with raises(TypeError, "f has dtype float64", "float32"):
        X32.apply_force(jnp.zeros(6, jnp.float64))
    with raises(TypeError, "other.E has dtype float32", "self.E has dtype float64"):
        X64 @ X32
    with raises(TypeError, "m has dtype float32", "v has dtype float64"):
        motion_cross(jnp.zeros(6), jnp.zeros(6, jnp.float32))
    with raises(TypeError, "f has dtype float32", "v has dtype float64"):
        force_cross(jnp.zeros(6), jnp.zeros(6, jnp.float32))


# ---------------------------------------------------------------------------
# Operators and indexing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_matmul_with_array_is_refused_with_hint(cls):
    X = cls(E, r)
    for vec in (np.zeros(6), jnp.zeros(6)):
        with raises(TypeError, f"{cls.__name__} @", "composes transforms only", "apply_motion"):
            X @ vec


def test_matmul_across_conventions_is_refused_with_hint():
    with raises(TypeError, "expected a Plx, got Plxb", "other.to_plx()"):
        Plx(E, r) @ Plxb(E, r)
    with raises(TypeError, "expected a Plxb, got Plx", "other.to_plxb()"):
        Plxb(E, r) @ Plx(E, r)
    with raises(TypeError, "expected a Plx, got Plxb", "to_plx()"):
        Plx(E, r).compose(Plxb(E, r))
    with raises(TypeError, "expected a Plx, got ndarray"):
        Plx(E, r).compose(np.eye(6))


@pytest.mark.parametrize("cls", CLASSES)
def test_indexing_an_unbatched_transform(cls):
    with raises(IndexError, f"{cls.__name__}[0]", "batch shape ()"):
        cls(E, r)[0]
