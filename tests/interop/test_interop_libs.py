"""Converters to and from Pinocchio, jaxlie and brax.

Each library is optional: its tests skip when it is not installed. Semantics
are checked against the library's own operations (Pinocchio ``act``/
``actInv``/``matrix``, jaxlie ``apply``/``adjoint``/``exp``, brax
``Transform.do``), not only by round trips.
"""

from __future__ import annotations

import dataclasses
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument

from spatialjax import ArgumentTypeError
from spatialjax._rotations import quat_to_matrix, so3_exp
from spatialjax._transforms import Plx, Plxb
from spatialjax.interop import (
    from_brax_force,
    from_brax_inertia,
    from_brax_motion,
    from_brax_transform,
    from_jaxlie_se3,
    from_jaxlie_tangent,
    from_pin_force,
    from_pin_inertia,
    from_pin_motion,
    from_pin_se3,
    to_brax_force,
    to_brax_inertia,
    to_brax_motion,
    to_brax_transform,
    to_jaxlie_se3,
    to_jaxlie_tangent,
    to_pin_force,
    to_pin_inertia,
    to_pin_motion,
    to_pin_se3,
)

P6 = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])  # [v;ω] <-> [ω;v]


def _poses(rng, shape):
    R = so3_exp(jnp.asarray(rng.normal(size=shape + (3,))))
    r = jnp.asarray(rng.normal(size=shape + (3,)))
    return Plxb(R, r)


def _bodies(rng, shape):
    """Random consistent bodies: principal moments (a+b, b+c, a+c) in random axes."""
    from spatialjax._inertia import RigidBodyInertia

    abc = rng.uniform(0.01, 0.1, size=shape + (3,))
    d = abc + np.roll(abc, -1, axis=-1)
    R = np.asarray(so3_exp(jnp.asarray(rng.normal(size=shape + (3,)))))
    I_c = (R * d[..., None, :]) @ np.swapaxes(R, -1, -2)
    m = rng.uniform(0.5, 3.0, size=shape)
    c = rng.normal(size=shape + (3,))
    return RigidBodyInertia.from_mass_com_inertia(jnp.asarray(m), jnp.asarray(c), jnp.asarray(I_c))


# --------------------------------------------------------------------------- Pinocchio


def test_pin_se3_round_trip_and_action(rng):
    pin = pytest.importorskip("pinocchio")
    Y = _poses(rng, (2, 3))
    Ms = to_pin_se3(Y)
    assert len(Ms) == 2 and len(Ms[0]) == 3 and isinstance(Ms[0][0], pin.SE3)
    back = from_pin_se3(Ms)
    np.testing.assert_allclose(back.E, Y.E, atol=1e-15)
    np.testing.assert_allclose(back.r, Y.r, atol=1e-15)
    M, Y0 = Ms[1][2], Y[1, 2]
    np.testing.assert_allclose(M.rotation, Y0.E, atol=1e-15)
    np.testing.assert_allclose(M.translation, Y0.r, atol=1e-15)
    # Plxb.apply_motion (A -> B) is Pinocchio's actInv; the matrices agree up to [v;ω] order
    v = rng.normal(size=6)
    ours = np.asarray(Y0.apply_motion(jnp.asarray(v)))
    theirs = M.actInv(pin.Motion(P6 @ v)).vector
    np.testing.assert_allclose(ours, P6 @ theirs, atol=1e-14)
    np.testing.assert_allclose(Y0.as_matrix(), P6 @ M.inverse().action @ P6, atol=1e-14)
    # a Plx converts through to_plxb
    M2 = to_pin_se3(Plx(Y0.E.T, Y0.r))
    np.testing.assert_allclose(M2.homogeneous, M.homogeneous, atol=1e-15)


def test_pin_inertia_round_trip_and_matrix(rng):
    pin = pytest.importorskip("pinocchio")
    body = _bodies(rng, (4,))
    objs = to_pin_inertia(body)
    assert len(objs) == 4 and isinstance(objs[0], pin.Inertia)
    np.testing.assert_allclose(from_pin_inertia(objs).params, body.params, atol=1e-14)
    for k in range(4):
        np.testing.assert_allclose(objs[k].mass, body.mass[k], atol=1e-15)
        np.testing.assert_allclose(objs[k].lever, body.com[k], atol=1e-14)
        np.testing.assert_allclose(body[k].as_matrix(), P6 @ objs[k].matrix() @ P6, atol=1e-13)
    single = to_pin_inertia(body[0])
    assert isinstance(single, pin.Inertia)
    assert from_pin_inertia(single).batch_shape == ()
    with raises_argument(ArgumentTypeError, "inertia"):
        to_pin_inertia(np.zeros(10))


def test_pin_motion_force_round_trip_and_transform(rng):
    pytest.importorskip("pinocchio")
    v = jnp.asarray(rng.normal(size=(3, 6)))
    f = jnp.asarray(rng.normal(size=(3, 6)))
    ms, fs = to_pin_motion(v), to_pin_force(f)
    np.testing.assert_allclose(ms[1].angular, v[1, :3])
    np.testing.assert_allclose(ms[1].linear, v[1, 3:])
    np.testing.assert_allclose(fs[2].angular, f[2, :3])
    np.testing.assert_allclose(fs[2].linear, f[2, 3:])
    np.testing.assert_allclose(from_pin_motion(ms), v)
    np.testing.assert_allclose(from_pin_force(fs), f)
    # forces: Plxb.inverse_apply_force (B -> A) is Pinocchio's act
    Y = _poses(rng, ())
    M = to_pin_se3(Y)
    np.testing.assert_allclose(
        Y.inverse_apply_force(f[0]), from_pin_force(M.act(to_pin_force(f[0]))), atol=1e-14
    )
    # the power pairing is order-independent
    np.testing.assert_allclose(ms[0].dot(fs[0]), jnp.dot(v[0], f[0]), atol=1e-14)


# ------------------------------------------------------------------------------ jaxlie


def test_jaxlie_se3_round_trip_apply_and_adjoint(rng):
    jaxlie = pytest.importorskip("jaxlie")
    Y = _poses(rng, (2, 3))
    T = to_jaxlie_se3(Y)
    assert isinstance(T, jaxlie.SE3) and T.wxyz_xyz.shape == (2, 3, 7)
    back = from_jaxlie_se3(T)
    np.testing.assert_allclose(back.E, Y.E, atol=1e-14)
    np.testing.assert_allclose(back.r, Y.r, atol=1e-15)
    # T_AB maps B points to A: p_A = R_AB p_B + r
    p = jnp.asarray(rng.normal(size=(2, 3, 3)))
    np.testing.assert_allclose(T.apply(p), jnp.einsum("...ij,...j->...i", Y.E, p) + Y.r, atol=1e-14)
    # jaxlie's adjoint maps B twists to A twists in (v, ω) order: our inverse_apply_motion
    v_B = jnp.asarray(rng.normal(size=(2, 3, 6)))
    lhs = jnp.einsum("...ij,...j->...i", T.adjoint(), to_jaxlie_tangent(v_B))
    np.testing.assert_allclose(from_jaxlie_tangent(lhs), Y.inverse_apply_motion(v_B), atol=1e-13)


def test_jaxlie_tangent_order_and_jit(rng):
    jaxlie = pytest.importorskip("jaxlie")
    w = jnp.asarray(rng.normal(size=3))
    v = jnp.asarray(rng.normal(size=3))
    xi = to_jaxlie_tangent(jnp.concatenate([w, v]))
    np.testing.assert_array_equal(xi, jnp.concatenate([v, w]))
    np.testing.assert_array_equal(from_jaxlie_tangent(xi), jnp.concatenate([w, v]))
    T = jaxlie.SE3.exp(xi)
    np.testing.assert_allclose(T.rotation().as_matrix(), so3_exp(w), atol=1e-14)
    Y = _poses(rng, (5,))
    f = jax.jit(lambda Y: from_jaxlie_se3(to_jaxlie_se3(Y)))
    np.testing.assert_allclose(f(Y).E, Y.E, atol=1e-14)


@pytest.mark.parametrize(
    ("module", "call"),
    [
        ("jaxlie", lambda: to_jaxlie_se3(Plxb.identity())),
        ("pinocchio", lambda: to_pin_se3(Plxb.identity())),
        ("brax.base", lambda: to_brax_motion(jnp.zeros(6))),
    ],
)
def test_missing_library_gives_an_install_hint(monkeypatch, module, call):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=rf"^{module} is needed .*'spatialjax\[interop\]'"):
        call()


def test_interop_exports_exactly_its_converters():
    """``spatialjax.interop`` is a package with an ``__all__`` and no leaked helpers."""
    import spatialjax.interop as interop

    public = {n for n in dir(interop) if not n.startswith("_")}
    assert public == set(interop.__all__)
    assert len(interop.__all__) == 21 and "gazebo_link_spatial_inertia" in interop.__all__
    assert all(callable(getattr(interop, n)) for n in interop.__all__)


# -------------------------------------------------------------------------------- brax


def _fake_brax(monkeypatch):
    """Stand-in containers with the fields of brax.base (documented in brax/base.py).

    Only the containers are faked; no brax behaviour is reproduced, so these tests
    check the field mapping. The behaviour is tested against the real brax below.
    """

    @dataclasses.dataclass
    class Transform:
        pos: object
        rot: object

    @dataclasses.dataclass
    class Motion:
        ang: object
        vel: object

    @dataclasses.dataclass
    class Force:
        ang: object
        vel: object

    @dataclasses.dataclass
    class Inertia:
        transform: object
        i: object
        mass: object

    base = types.ModuleType("brax.base")
    base.Transform, base.Motion, base.Force, base.Inertia = Transform, Motion, Force, Inertia
    brax = types.ModuleType("brax")
    brax.base = base
    monkeypatch.setitem(sys.modules, "brax", brax)
    monkeypatch.setitem(sys.modules, "brax.base", base)


def test_brax_field_mapping(monkeypatch, rng):
    _fake_brax(monkeypatch)
    Y = _poses(rng, (4,))
    t = to_brax_transform(Y)
    np.testing.assert_allclose(t.pos, Y.r)
    np.testing.assert_allclose(quat_to_matrix(t.rot), Y.E, atol=1e-14)
    assert np.all(np.asarray(t.rot)[..., 0] >= 0)  # wxyz, scalar first
    back = from_brax_transform(t)
    np.testing.assert_allclose(back.E, Y.E, atol=1e-14)

    v = jnp.asarray(rng.normal(size=(4, 6)))
    m = to_brax_motion(v)
    np.testing.assert_array_equal(m.ang, v[:, :3])
    np.testing.assert_array_equal(m.vel, v[:, 3:])
    np.testing.assert_array_equal(from_brax_motion(m), v)
    f = to_brax_force(v)
    np.testing.assert_array_equal(f.ang, v[:, :3])
    np.testing.assert_array_equal(f.vel, v[:, 3:])
    np.testing.assert_array_equal(from_brax_force(f), v)


@pytest.mark.parametrize("principal", [False, True])
def test_brax_inertia_link_convention(monkeypatch, rng, principal):
    _fake_brax(monkeypatch)
    body = _bodies(rng, (3,))
    it = to_brax_inertia(body, principal=principal)
    np.testing.assert_allclose(it.mass, body.mass)
    np.testing.assert_allclose(it.transform.pos, body.com, atol=1e-15)
    R = np.asarray(quat_to_matrix(it.transform.rot))
    i = np.asarray(it.i)
    # i is about the CoM, in the axes of the inertial frame: R i Rᵀ = I_c in link axes
    np.testing.assert_allclose(R @ i @ np.swapaxes(R, -1, -2), body.inertia_com(), atol=1e-13)
    if principal:
        np.testing.assert_allclose(i, np.eye(3) * np.diagonal(i, axis1=-2, axis2=-1)[..., None])
        assert np.all(np.linalg.det(R) > 0)
    else:
        np.testing.assert_allclose(R, np.broadcast_to(np.eye(3), R.shape), atol=1e-15)
    np.testing.assert_allclose(from_brax_inertia(it).params, body.params, atol=1e-13)


def test_brax_readers_accept_any_object_with_the_fields(rng):
    """brax's MJCF loader stores body_ipos, body_iquat and diag(body_inertia): read it back."""
    q = np.array([0.9, 0.1, -0.3, 0.2])
    q /= np.linalg.norm(q)
    d = np.array([0.05, 0.06, 0.07])
    it = types.SimpleNamespace(
        transform=types.SimpleNamespace(pos=jnp.array([0.01, 0.0, 0.02]), rot=jnp.asarray(q)),
        i=jnp.diag(jnp.asarray(d)),
        mass=jnp.asarray(4.0),
    )
    body = from_brax_inertia(it)
    pin = pytest.importorskip("pinocchio")
    R = pin.Quaternion(*q).toRotationMatrix()
    expected = pin.Inertia(4.0, np.array([0.01, 0.0, 0.02]), R @ np.diag(d) @ R.T)
    np.testing.assert_allclose(body.params, expected.toDynamicParameters(), atol=1e-15)


def test_real_brax_semantics(rng):
    base = pytest.importorskip("brax.base")
    Y = _poses(rng, ())
    t = to_brax_transform(Y)
    v = jnp.asarray(rng.normal(size=6))
    # brax maps motions parent -> child and forces child -> parent
    np.testing.assert_allclose(
        from_brax_motion(t.do(to_brax_motion(v))), Y.apply_motion(v), atol=1e-6
    )
    np.testing.assert_allclose(
        from_brax_force(t.do(to_brax_force(v))), Y.inverse_apply_force(v), atol=1e-6
    )
    Y2 = _poses(rng, ())
    composed = from_brax_transform(t.do(to_brax_transform(Y2)))
    np.testing.assert_allclose(composed.E, Y.compose(Y2).E, atol=1e-6)
    assert isinstance(to_brax_inertia(_bodies(rng, ())), base.Inertia)
