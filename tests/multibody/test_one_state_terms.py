"""The model's terms of the one-state programs (``multibody/_onestate.py``).

A model closed over by ``jit`` reaches the one-state programs as a few constants of at
most 512 bytes (``host_terms``; XLA:CPU allocates a buffer per constant at every call and
runs a program's kernels in sequence only when no buffer is larger). Here: the packed
terms against the model's fields and the closed forms they stand for, the compiled
programs' constants, when the terms are packed at all, and the closed-over forward
kinematics and Jacobians against the eager ones (the eager calls compute the terms from
the model's two arrays).
"""

from __future__ import annotations

import collections
import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import random_states, tree_urdf

import spatialjax.multibody as mb
from spatialjax.multibody import _onestate

ALL = ("P", "p", "m", "h", "armature", "damping", "Sigma")


def _tree(tmp_path, dtype):
    model = mb.Model.from_urdf(tree_urdf(tmp_path), floating_base=True, dtype=dtype)
    rng = np.random.default_rng(3)
    arm, damp = (jnp.asarray(rng.uniform(0.0, 0.2, model.nv), dtype) for _ in range(2))
    return dataclasses.replace(model, armature=arm, damping=damp)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("which", ["tree", "chain of 10"])  # 10 bodies: terms over 512 bytes
def test_packed_terms_are_the_model_numbers_in_chunks_of_at_most_512_bytes(tmp_path, dtype, which):
    if which == "tree":
        model = _tree(tmp_path, dtype)
    else:
        model = mb.chain_model(10, length=0.3).astype(dtype)
    names = _onestate.all_names(model)
    for program in (_onestate.POSES, _onestate.JACOBIAN, _onestate.RNEA, _onestate.MASS):
        assert set(program) <= set(_onestate.ALL)  # every program's terms are packed
    assert set(names) == set(ALL + tuple(f"frame{k}" for k in range(len(model.frame_names))))
    seen = {}

    def trace(q):  # inside a trace q is a tracer and the closed-over model concrete
        seen["packed"] = _onestate.host_terms(model, q)
        return q

    jax.make_jaxpr(trace)(jnp.zeros(model.nq, dtype))
    packed = seen["packed"]
    assert packed is not None and len(packed.chunks) > 1
    assert all(c.dtype == np.dtype(dtype) and c.nbytes <= 512 for c in packed.chunks)
    K = _onestate.terms(model, names, packed)
    # the axes: static numbers, the model's own (in its dtype)
    a = np.asarray(model.axes, np.float64)
    assert K["axes"] is packed.axes and np.array_equal(np.array(packed.axes), a)
    # against the model's fields and the closed form Σ = ½ tr(I) 1 − I
    P = np.asarray(model.placements.E, np.float64)
    params = np.asarray(model.inertia.params, np.float64)
    ixx, ixy, iyy, ixz, iyz, izz = params[:, 4:].T
    inertia = np.stack([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]).transpose(2, 0, 1)
    sigma = 0.5 * np.trace(inertia, axis1=1, axis2=2)[:, None, None] * np.eye(3) - inertia
    want = dict(
        P=P.reshape(-1, 9), p=np.asarray(model.placements.r), axes=a, m=params[:, 0],
        h=params[:, 1:4], armature=np.asarray(model.armature),
        damping=np.asarray(model.damping), Sigma=sigma.reshape(-1, 9),
    )  # fmt: skip
    E, r = np.asarray(model.frame_placements.E), np.asarray(model.frame_placements.r)
    want.update({f"frame{k}": np.r_[E[k].ravel(), r[k]] for k in range(len(model.frame_names))})
    tol = 1e-15 if dtype == "float64" else 1e-6
    # the traced model's terms (the model's fields in the program): the same numbers
    traced = jax.jit(lambda m: _onestate.terms(m, names))(model)
    assert K["gravity"] is None and traced["gravity"] is None  # no call's gravity here
    for name in names + ("axes",):
        scale = max(1.0, float(np.max(np.abs(want[name]), initial=0.0)))
        for how, got in (("packed", K[name]), ("traced", traced[name])):
            np.testing.assert_allclose(np.asarray(got, np.float64), want[name], rtol=0,
                                       atol=tol * scale, err_msg=f"{name}, {how}")  # fmt: skip


def test_terms_are_packed_only_for_a_concrete_model_inside_a_trace(tmp_path):
    model = _tree(tmp_path, "float64")
    q = jnp.zeros(model.nq)
    assert _onestate.host_terms(model, q) is None  # an eager call
    got = {}

    def f(m, q):
        got["closed"] = _onestate.host_terms(model, q)
        got["argued"] = _onestate.host_terms(m, q)
        return q

    jax.make_jaxpr(f)(model, q)
    assert got["closed"] is not None and got["argued"] is None
    batched = jax.tree.map(lambda x: jnp.stack([x, x]), model)
    jax.make_jaxpr(lambda q: _onestate.host_terms(batched, q) or q)(q)
    # kept on the model: the second trace reuses the first's arrays
    first = got["closed"]
    jax.make_jaxpr(f)(model, q)
    assert got["closed"].chunks is first.chunks


def _entry(f, *x):
    """The entry computation of ``jax.jit(f)``'s compiled program at ``x`` (XLA's text)."""
    text = jax.jit(f).lower(*x).compile().as_text()
    return text[text.index("ENTRY") :]


def _constant_bytes(compiled_text):
    sizes = []
    for dt, dims in re.findall(r"= (f64|f32|s32|pred)\[([\d,]*)\]\{?[\d,]*\}? constant\(",
                               compiled_text):  # fmt: skip
        n = int(np.prod([int(d) for d in dims.split(",") if d])) if dims else 1
        sizes.append(n * {"f64": 8, "f32": 4, "s32": 4, "pred": 1}[dt])
    return sizes


@pytest.mark.parametrize("op", ["fk", "jacobian", "rnea", "mass", "fd"])
def test_closed_over_one_state_programs_hold_no_constant_over_512_bytes(tmp_path, op):
    model = _tree(tmp_path, "float64")
    rng = np.random.default_rng(1)
    Q, V, A = random_states(model, 1, rng)
    q, v, a = Q[0], V[0], A[0]
    f = {
        "fk": lambda q: mb.forward_kinematics(model, q).poses,
        "jacobian": lambda q: mb.frame_jacobian(model, q, model.frame_names[-1]),
        "rnea": lambda q: mb.rnea(model, q, v, a),
        "mass": lambda q: mb.mass_matrix(model, q),
        "fd": lambda q: mb.forward_dynamics(model, q, v, a),
    }[op]
    sizes = _constant_bytes(_entry(f, q))
    assert sizes and max(sizes) <= 512, sizes
    assert len(sizes) <= 10, sizes  # not one per folded field


@pytest.mark.parametrize("reference", ["world", "local", "local_world_aligned"])
def test_closed_over_kinematics_and_jacobians_equal_the_eager_ones(tmp_path, reference):
    model = _tree(tmp_path, "float64")
    Q, _, _ = random_states(model, 2, np.random.default_rng(2))
    frames = [model.frame_names[0], model.frame_names[-1], model.body_names[-1]]
    for q in Q:
        eager = mb.forward_kinematics(model, q).poses
        closed = jax.jit(lambda q: mb.forward_kinematics(model, q).poses)(q)
        for x, y in zip(jax.tree.leaves(eager), jax.tree.leaves(closed), strict=True):
            np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=0, atol=1e-13)
        for name in frames:
            J = mb.frame_jacobian(model, q, name, reference=reference)
            Jc = jax.jit(lambda q, n=name: mb.frame_jacobian(model, q, n, reference=reference))
            np.testing.assert_allclose(np.asarray(Jc(q)), np.asarray(J), rtol=0, atol=1e-13)


def test_a_model_of_writable_numpy_arrays_is_read_again_at_every_trace():
    """Terms are kept on the model only if its arrays cannot change in place: after a change
    of a writable NumPy field, a new closed-over program sees the new values (reference: the
    eager call, which reads the model's arrays)."""
    model = dataclasses.replace(mb.chain_model(4, length=0.3), armature=np.zeros(4))
    q, v, a = jnp.linspace(0.1, 0.4, 4), jnp.full(4, 0.3), jnp.ones(4)
    before = jax.jit(lambda q: mb.rnea(model, q, v, a))(q)
    model.armature[:] = 5.0
    after = jax.jit(lambda q: mb.rnea(model, q, v, a))(q)
    np.testing.assert_allclose(np.asarray(after - before), 5.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(after), np.asarray(mb.rnea(model, q, v, a)), atol=1e-12)
    leaves = jax.tree.map(np.array, mb.chain_model(3, length=0.3))  # writable leaves
    H0 = jax.jit(lambda q: mb.mass_matrix(leaves, q))(jnp.zeros(3))
    leaves.body_values[:, 15] *= 2.0  # every body's mass (after E, r and the axis) doubled
    H1 = jax.jit(lambda q: mb.mass_matrix(leaves, q))(jnp.zeros(3))
    np.testing.assert_allclose(np.asarray(H1), np.asarray(mb.mass_matrix(leaves, jnp.zeros(3))),
                               rtol=0, atol=1e-12)  # fmt: skip
    assert not np.allclose(np.asarray(H1), np.asarray(H0))
    # immutable (JAX) arrays: the terms are kept, the second trace reuses them
    fixed = mb.chain_model(4, length=0.3)
    jax.jit(lambda q: mb.rnea(fixed, q, v, a))(q)
    assert "_host_terms" in fixed.__dict__


def test_one_state_calls_in_one_program_share_their_poses():
    """Every one-state program reads the same packed terms (one layout per model), only the
    chunks it needs: a controller step (mass matrix, bias, Jacobian, forward kinematics in one
    jitted program) computes the joint rotations' 3x3 products once, as many as the mass
    matrix alone; forward kinematics alone holds fewer constants than forward dynamics."""
    model = mb.chain_model(6, length=0.3)
    q, v = jnp.linspace(0.1, 0.6, 6), jnp.full(6, 0.3)

    def products(f):
        return len(re.findall(r"= f(?:64|32)\[3,3\]\{1,0\} dot\(", _entry(f, q)))

    alone = products(lambda q: mb.mass_matrix(model, q))
    step = products(lambda q: (mb.mass_matrix(model, q), mb.nonlinear_effects(model, q, v),
                               mb.frame_jacobian(model, q, model.frame_names[-1]),
                               mb.forward_kinematics(model, q).poses))  # fmt: skip
    assert alone >= model.nbodies - 1 and step == alone
    fk = _constant_bytes(_entry(lambda q: mb.forward_kinematics(model, q).poses, q))
    fd = _constant_bytes(_entry(lambda q: mb.forward_dynamics(model, q, v, v), q))
    assert 0 < len(fk) < len(fd)


AXES = [(0.0, 0.0, 1.0), (0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.6, 0.0, -0.8), (0.48, 0.6, 0.64)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("axis", AXES)
def test_static_axis_products_equal_the_closed_forms(dtype, axis):
    """``axis_cross`` and ``axis_times`` with the axis as static numbers (a closed-over
    model's ``HostTerms.axes``) and as an array (a traced model): the rows ``x × a`` and
    ``M a`` (NumPy's cross and matrix product, float64)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 3))
    want_cross = np.cross(x, np.array(axis))
    want_times = x @ np.array(axis)
    tol = 1e-15 if dtype == "float64" else 1e-6
    for a in (axis, jnp.asarray(axis, dtype)):
        xs = jnp.asarray(x, dtype)
        got = jax.jit(lambda x, a=a: (_onestate.axis_cross(x, a), _onestate.axis_times(x, a)))(xs)
        assert all(g.dtype == np.dtype(dtype) for g in got)
        np.testing.assert_allclose(np.asarray(got[0], np.float64), want_cross, rtol=0, atol=tol * 4)
        np.testing.assert_allclose(np.asarray(got[1], np.float64), want_times, rtol=0, atol=tol * 4)


def test_a_coordinate_axis_costs_no_multiplication():
    """A joint about a coordinate axis (most URDF joints): ``P K``, ``P K²`` and ``R a`` are
    signs and selections of entries, no product (a general axis: products)."""
    x = jnp.ones((3, 3))

    def muls(f):
        return sum(e.primitive.name == "mul" for e in jax.make_jaxpr(f)(x).eqns)

    for axis in AXES[:3]:
        assert muls(lambda x, a=axis: _onestate.axis_cross(_onestate.axis_cross(x, a), a)) == 0
        assert muls(lambda x, a=axis: _onestate.axis_times(x, a)) == 0
    assert muls(lambda x: _onestate.axis_cross(x, AXES[3])) == 4
    assert muls(lambda x: _onestate.axis_times(x, AXES[4])) == 3


def test_closed_over_forward_kinematics_reads_only_the_placements():
    """The closed-over forward kinematics' constants are the chunks that hold ``P`` and ``p``
    (the joint axes are numbers in the program, ``P K`` and ``P K²`` formed there)."""
    model = mb.chain_model(7, length=0.3)  # P and p: 7 · 12 doubles, two chunks of 64
    q = jnp.linspace(0.1, 0.7, 7)
    sizes = _constant_bytes(_entry(lambda q: mb.forward_kinematics(model, q).poses, q))
    assert sizes == [512, 512], sizes


@pytest.mark.parametrize("gravity", [None, (0.3, -9.7, 1.2), np.array([0.0, 0.0, 3.0])])
def test_a_known_gravity_is_numbers_in_the_program(tmp_path, gravity):
    """A gravity known when the caller's program is traced (the default, a tuple, a NumPy
    array) enters the closed-over one-state programs as numbers, not a constant: the same
    torques and accelerations as the eager calls (which pass it as an array) and as a
    gravity passed as an argument of the program; the RNEA's constants are its terms'."""
    model = _tree(tmp_path, "float64")
    Q, V, A = random_states(model, 1, np.random.default_rng(4))
    q, v, a = Q[0], V[0], A[0]
    calls = {
        "rnea": lambda q, g: mb.rnea(model, q, v, a, gravity=g),
        "nle": lambda q, g: mb.nonlinear_effects(model, q, v, gravity=g),
        "gravity": lambda q, g: mb.gravity_torques(model, q, gravity=g),
        "fd": lambda q, g: mb.forward_dynamics(model, q, v, a, gravity=g),
    }
    for name, f in calls.items():
        eager = np.asarray(f(q, gravity))
        closed = np.asarray(jax.jit(lambda q, f=f: f(q, gravity))(q))
        np.testing.assert_allclose(closed, eager, rtol=0, atol=1e-11, err_msg=name)
        if gravity is not None:
            argued = np.asarray(jax.jit(f)(q, jnp.asarray(gravity, jnp.float64)))
            np.testing.assert_allclose(argued, eager, rtol=0, atol=1e-11, err_msg=name)

    def constants(f, *x):
        return sorted(_constant_bytes(_entry(f, *x)))

    # no constant that the program with the gravity as its argument does not have too
    closed = constants(lambda q: calls["rnea"](q, gravity), q)
    g = jnp.asarray((0.0, 0.0, -9.81) if gravity is None else gravity, jnp.float64)
    argued = constants(calls["rnea"], q, g)
    extra = collections.Counter(closed) - collections.Counter(argued)
    assert closed and not extra, (closed, argued)


@pytest.mark.parametrize("op", ["fk", "jacobian", "rnea", "mass", "fd"])
def test_one_state_programs_of_a_model_passed_as_an_argument_hold_no_constant(op):
    """The model an argument of ``jit`` (its terms read from its two leaves): no constant in
    the one-state programs of a chain, every one a buffer XLA:CPU allocates at every call
    (the default gravity is numbers in the program, ``Σ`` formed from slices, not a gather
    of constant indices, and the mass matrix mirrored by selects on indices, no zeros)."""
    model = mb.chain_model(6, length=0.3)
    q, v = jnp.linspace(0.1, 0.6, 6), jnp.full(6, 0.3)
    f = {
        "fk": lambda m, q: mb.forward_kinematics(m, q).poses,
        "jacobian": lambda m, q: mb.frame_jacobian(m, q, m.body_names[-1]),
        "rnea": lambda m, q: mb.rnea(m, q, v, v),
        "mass": lambda m, q: mb.mass_matrix(m, q),
        "fd": lambda m, q: mb.forward_dynamics(m, q, v, v),
    }[op]
    assert _constant_bytes(_entry(f, model, q)) == []


def test_eager_transforms_compile_one_kernel_whatever_the_gravity_and_the_axes(compiles):
    """Static numbers are part of a kernel's cache key: they are written only while a
    program is staged (``jit``). An eager ``vmap`` or ``jacfwd`` over ``q`` of one-state
    calls compiles nothing more for a new gravity or a model of the same structure with
    other axes, as the gravity and the axes stay arrays there (what it computes: the eager
    call's)."""
    model = mb.chain_model(4, length=0.3)
    q, v, a = jnp.linspace(0.1, 0.4, 4), jnp.full(4, 0.3), jnp.ones(4)
    Q = jnp.stack([q, 2.0 * q])

    def tilted(i):  # the same structure, the first joint's axis tilted by 0.1 i rad
        axes = np.array(model.axes)
        axes[0] = [np.sin(0.1 * i), 0.0, np.cos(0.1 * i)]
        return dataclasses.replace(model, axes=jnp.asarray(axes))

    def vmapped(g):
        return jax.vmap(lambda q: mb.rnea(model, q, v, a, gravity=g))(Q)

    def jacobian(m):
        return jax.jacfwd(lambda q: mb.rnea(m, q, v, a))(q)

    vmapped((0.0, 0.0, -9.8)), jacobian(tilted(0))  # compiled here
    for i in range(1, 3):
        g = (0.1 * i, 0.0, -9.81)
        before = len(compiles)
        got = jax.block_until_ready(vmapped(g))
        jax.block_until_ready(jacobian(tilted(i)))
        assert compiles[before:] == []
        want = mb.rnea(model, Q[1], v, a, gravity=g)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want), rtol=0, atol=1e-12)
