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
from helpers import FIXTURES

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
    with raises(ValueError, "E:", "(..., 3, 3)", "(3, 4)"):
        cls(jnp.zeros((3, 4)), r)
    with raises(ValueError, "E:", "(..., 3, 3)", "(3,)"):
        cls(jnp.zeros(3), r)


@pytest.mark.parametrize("cls", CLASSES)
def test_wrong_translation_shape(cls):
    with raises(ValueError, "r:", "(..., 3)", "(2,)"):
        cls(E, jnp.zeros(2))
    with raises(ValueError, "r:", "(..., 3)", "(4, 1)"):
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
    with raises(ValueError, "r:", "do not broadcast", "E", "(4,)", "(5,)"):
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
    with raises(ValueError, "E:", "(..., 3, 3)", "(3, 4)"):
        jax.jit(lambda E: Plx(E, r))(jnp.zeros((3, 4)))


# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_integer_arrays_are_refused(cls):
    with raises(TypeError, "E:", "floating-point", "int"):
        cls(jnp.eye(3, dtype=jnp.int32), r)
    with raises(TypeError, "r:", "floating-point", "int"):
        cls(E, np.zeros(3, dtype=np.int64))
    with raises(TypeError, "r:", "floating-point", "int"):
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
    with raises(TypeError, "r:", "float64", "E", "float32"):
        cls(E.astype(jnp.float32), r)
    X64 = cls(E, r)
    X32 = cls(E.astype(jnp.float32), r.astype(jnp.float32))
    with raises(TypeError, "m: dtype float32", "float64", "convert one explicitly"):
        X64.apply_motion(jnp.zeros(6, jnp.float32))
    with raises(TypeError, "f: dtype float64", "float32"):
        X32.apply_force(jnp.zeros(6, jnp.float64))
    with raises(TypeError, "other: dtype float32", "self's dtype float64"):
        X64 @ X32
    with raises(TypeError, "m: dtype float32", "v's dtype float64"):
        motion_cross(jnp.zeros(6), jnp.zeros(6, jnp.float32))
    with raises(TypeError, "f: dtype float32", "v's dtype float64"):
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


# ------------------------------------------------------------------ models and identification
# (issue 23: bad-input trials of the loaders, the kinematics and the identification helpers)
_FIX = FIXTURES


def test_model_loaders_refuse_half_precision_and_a_list_of_locked_joints():
    from spatialjax import multibody as mb

    loaders = (
        (mb.Model.from_urdf, _FIX / "arm.urdf", "joint1"),
        (mb.Model.from_mjcf, _FIX / "walker.xml", None),
        (mb.Model.from_sdf, _FIX / "branch.sdf", None),
    )
    for load, path, joint in loaders:
        for dtype in ("float16", jnp.bfloat16):
            with raises(TypeError, "dtype: expected a floating dtype (float32 or float64)"):
                load(path, dtype=dtype)
        with raises(TypeError, "locked_joints: expected a mapping {joint name: value}", "list"):
            load(path, locked_joints=[joint or "j"])
    m = mb.Model.from_urdf(_FIX / "arm.urdf", locked_joints={"joint1": 0.5}, dtype="float32")
    assert "joint1" not in m.joint_names


def test_zero_free_flyer_quaternion_is_refused_on_concrete_input():
    from spatialjax import multibody as mb

    m = mb.Model.from_urdf(_FIX / "arm.urdf", floating_base=True, dtype="float32")
    q = np.zeros((2, m.nq), np.float32)
    q[:, 3] = 1.0
    q[1, 3:7] = 0.0
    with raises(ValueError, "q: the free flyer's quaternion q[1, 3:7] is zero"):
        mb.forward_kinematics(m, q)
    with raises(ValueError, "q: the free flyer's quaternion"):
        mb.rnea(m, q, np.zeros((2, m.nv), np.float32), np.zeros((2, m.nv), np.float32))
    # traced: no check (documented), NaN for that sample only
    fk = jax.jit(lambda q: mb.forward_kinematics(m, q))(q)
    assert np.all(np.isfinite(np.asarray(fk.poses.E[0]))) and np.all(
        np.isnan(np.asarray(fk.poses.E[1, 0]))
    )
    mb.forward_kinematics(m, q[:1])  # a unit quaternion passes


def test_write_identified_urdf_names_the_given_path(tmp_path, monkeypatch):
    from spatialjax import multibody as mb
    from spatialjax.identification import write_identified_urdf

    model = mb.Model.from_urdf(_FIX / "arm.urdf", dtype="float64")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as info:
        write_identified_urdf(_FIX / "arm.urdf", model, model.inertia, "no_dir/o.urdf")
    assert "'no_dir/o.urdf'" in str(info.value) and ".tmp" not in str(info.value)


def test_on_cpu_reads_placed_arrays_then_the_default_device_then_the_backend(monkeypatch):
    """``_checks.on_cpu``: the devices of concrete JAX arrays decide; NumPy inputs and
    tracers go to ``jax.default_device`` where one is set, else to the default backend
    (patched here to a GPU's name: this machine has only a CPU)."""
    from spatialjax._checks import on_cpu

    cpu = jax.devices("cpu")[0]
    placed = jax.device_put(jnp.ones(2), cpu)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert on_cpu((placed, None, np.ones(2))) is True
    assert on_cpu((np.ones(2), None)) is False
    seen = []
    jax.jit(lambda x: seen.append(on_cpu((x,))) or x)(jnp.ones(3))
    assert seen == [False]
    with jax.default_device(cpu):
        assert on_cpu((np.ones(2),)) is True
        jax.jit(lambda x: seen.append(on_cpu((x,))) or x)(jnp.ones(4))
    with jax.default_device("cpu"):
        assert on_cpu(np.ones(2)) is True
    assert seen == [False, True]
