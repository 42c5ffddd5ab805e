"""Every public type is a full pytree: vmap, scan, shard_batch, tree.map, key paths, indexing.

Each property runs on ``Plx``, ``Plxb``, ``RigidBodyInertia``,
``ConsistencyReport`` and ``FitResult`` over batch shapes ``()``, ``(1,)``,
``(3, 1, 2)`` in float32 and float64. Expected values come from the fields
themselves (NumPy indexing and stacking of the arrays the object was built
from) or from an independent NumPy 6×6 reference, never from the code
under test.
"""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import BATCH_SHAPES, np_skew, raises_argument, random_rotations

from spatialjax import (
    ArgumentError,
    ArgumentTypeError,
    ConsistencyReport,
    Plx,
    Plxb,
    RigidBodyInertia,
    rotz,
    shard_batch,
)
from spatialjax._consistency import physical_consistency
from spatialjax._sharding import batch_mesh
from spatialjax.identification import FitResult

DTYPES = [np.float32, np.float64]
KINDS = ["Plx", "Plxb", "RigidBodyInertia", "ConsistencyReport", "FitResult"]

CONSISTENCY_FIELDS = [
    "finite",
    "mass_positive",
    "inertia_psd",
    "triangle_inequality",
    "pseudo_inertia_psd",
    "fully_consistent",
    "min_eig_inertia_com",
    "triangle_margin",
    "min_eig_pseudo_inertia",
    "principal_moments",
    "inertia_scale",
    "pseudo_inertia_scale",
]
KEY_PATHS = {
    "Plx": [".E", ".r"],
    "Plxb": [".E", ".r"],
    "RigidBodyInertia": [".params"],
    "ConsistencyReport": ["." + f for f in CONSISTENCY_FIELDS],
    "FitResult": (
        [".inertia.params", ".objective", ".residual", ".iterations", ".converged"]
        + [".condition_number", ".prior.params", ".gamma", ".status"]
    ),
}


def _params(rng, shape, dtype):
    """Consistent bodies: unit-ish masses, small CoM, diagonal-dominant inertia."""
    n = int(np.prod(shape))
    p = np.zeros((n, 10))
    p[:, 0] = rng.uniform(0.5, 2.0, n)
    p[:, 1:4] = 0.01 * rng.standard_normal((n, 3))
    p[:, [4, 6, 9]] = rng.uniform(0.5, 1.0, (n, 3))
    p[:, [5, 7, 8]] = 0.01 * rng.standard_normal((n, 3))
    return jnp.asarray(p.reshape(shape + (10,)), dtype)


_FLAT = 8  # bodies per dtype: enough rows for every batch shape used here (at most 6)
_REPORTS = {}


def _flat_body_and_report(dtype):
    """One flat batch of bodies per dtype and its report: ``physical_consistency`` runs (and
    compiles) once per dtype instead of once per test, kind, batch shape and dtype."""
    key = np.dtype(dtype).name
    if key not in _REPORTS:
        body = RigidBodyInertia(_params(np.random.default_rng(7), (_FLAT,), dtype))
        report = jax.jit(physical_consistency)(body)  # one program, not ~65 eager primitives
        _REPORTS[key] = (
            np.asarray(body.params),
            {f: np.asarray(getattr(report, f)) for f in CONSISTENCY_FIELDS},
        )
    return _REPORTS[key]


def _body_and_report(shape, dtype):
    """The first ``prod(shape)`` bodies of the flat batch, reshaped to ``shape``, and a
    ``ConsistencyReport`` built by its constructor from the same rows of the flat report's
    fields (reshaped NumPy arrays), so every batch shape gets its own report object."""
    params, fields = _flat_body_and_report(dtype)
    n = int(np.prod(shape))
    body = RigidBodyInertia(jnp.asarray(params[:n].reshape(shape + (10,))))
    report = ConsistencyReport(
        **{f: jnp.asarray(v[:n].reshape(shape + v.shape[1:])) for f, v in fields.items()}
    )
    return body, report


def make(kind, shape, dtype, rng):
    """A ``kind`` object with batch shape ``shape`` and dtype ``dtype``."""
    shape = tuple(shape)
    if kind in ("Plx", "Plxb"):
        n = int(np.prod(shape))
        E = jnp.asarray(random_rotations(rng, (n,)).reshape(shape + (3, 3)), dtype)
        r = jnp.asarray(rng.standard_normal(shape + (3,)), dtype)
        return {"Plx": Plx, "Plxb": Plxb}[kind](E, r)
    if kind == "RigidBodyInertia":
        return RigidBodyInertia(_params(rng, shape, dtype))
    body, report = _body_and_report(shape, dtype)
    if kind == "ConsistencyReport":
        return report

    def arr(x, dt=dtype):
        return jnp.asarray(np.broadcast_to(x, shape), dt)

    return FitResult(
        inertia=body,
        objective=arr(rng.uniform(size=shape)),
        residual=arr(rng.uniform(size=shape)),
        iterations=arr(rng.integers(1, 50, size=shape), jnp.int32),
        converged=arr(rng.uniform(size=shape) > 0.5, jnp.bool_),
        condition_number=arr(rng.uniform(1, 10, size=shape)),
        prior=RigidBodyInertia(_params(rng, shape, dtype)),
        gamma=arr(rng.uniform(size=shape)),
        status=arr(rng.integers(0, 6, size=shape), jnp.int32),
    )


def _fields(obj):
    """``{key path: numpy array}`` of an object's leaves (the independent view)."""
    flat, _ = jax.tree_util.tree_flatten_with_path(obj)
    return {jax.tree_util.keystr(k): np.asarray(v) for k, v in flat}


def _core_ndim(path):
    return {".E": 2, ".r": 1, ".params": 1, ".principal_moments": 1}.get(
        "." + path.rsplit(".", 1)[-1], 0
    )


cases = pytest.mark.parametrize(
    "kind,shape,dtype",
    [(k, s, d) for k in KINDS for s in BATCH_SHAPES for d in DTYPES],
    ids=lambda x: getattr(x, "__name__", str(x)),
)


# ------------------------------------------------------------------------- structure
@cases
def test_key_paths_batch_shape_dtype(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    fields = _fields(obj)
    assert list(fields) == KEY_PATHS[kind]
    assert obj.batch_shape == shape
    assert obj.dtype == np.dtype(dtype)
    for path, value in fields.items():
        core = _core_ndim(path)
        assert value.shape[: value.ndim - core] == shape, path


@cases
def test_tree_map_keeps_type_and_accepts_non_array_leaves(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    doubled = jax.tree.map(lambda x: x * 2 if x.dtype == dtype else x, obj)
    assert type(doubled) is type(obj)
    for path, value in _fields(doubled).items():
        ref = _fields(obj)[path]
        np.testing.assert_array_equal(value, ref * 2 if ref.dtype == dtype else ref)
    shapes = jax.tree.map(lambda x: x.shape, obj)  # tuples as leaves: no validation runs
    assert type(shapes) is type(obj)
    names = jax.tree_util.tree_map_with_path(lambda k, x: jax.tree_util.keystr(k), obj)
    assert type(names) is type(obj)
    assert jax.tree.leaves(names) == KEY_PATHS[kind]


# ----------------------------------------------------------------- vmap, scan, jit
@cases
def test_vmap_over_first_batch_axis(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    if not shape:
        obj = obj[None]  # vmap needs an axis to map over
    n = obj.batch_shape[0]
    seen = jax.vmap(lambda o: (o, jnp.zeros(o.batch_shape)))(obj)
    out, zeros = seen
    assert type(out) is type(obj) and out == obj
    assert zeros.shape == obj.batch_shape  # inside, each item had batch shape [1:]
    # in_axes / out_axes given as an object of axis specs
    spec = jax.tree.map(lambda _: 0, obj)
    out = jax.vmap(lambda o: o, in_axes=(spec,), out_axes=spec)(obj)
    assert out == obj
    assert n == out.batch_shape[0]


@cases
def test_scan_over_first_batch_axis(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    if not shape:
        obj = obj[None]

    def step(carry, item):
        return item, carry  # emit the previous item; carry has the item's type

    last, prev = jax.lax.scan(step, obj[0], obj)
    assert type(last) is type(obj) and last == obj[-1]
    assert type(prev) is type(obj) and prev.batch_shape == obj.batch_shape
    assert prev[1:] == obj[:-1]
    assert prev[0] == obj[0]


@cases
def test_jit_round_trip_and_equality(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    out = jax.jit(lambda o: o)(obj)
    assert type(out) is type(obj)
    assert out == obj and not (out != obj)
    chex.assert_trees_all_equal(out, obj)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_shard_batch_on_simulated_devices(kind, dtype, rng):
    if jax.device_count() < 3:
        pytest.skip("needs 3 devices (conftest sets --xla_force_host_platform_device_count=8)")
    mesh = batch_mesh(jax.devices()[:3])
    obj = make(kind, (3, 1, 2), dtype, rng)
    sharded = shard_batch(obj, mesh)
    assert type(sharded) is type(obj) and sharded == obj
    for leaf in jax.tree.leaves(sharded):
        assert len(leaf.sharding.device_set) == 3
        assert leaf.addressable_shards[0].data.shape[0] == 1
    out = jax.jit(lambda o: o)(sharded)
    assert out == obj


# ---------------------------------------------------------------------- indexing
@cases
def test_batch_indexing(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    fields = _fields(obj)
    expanded = obj[None]
    assert expanded.batch_shape == (1,) + shape
    if not shape:
        with pytest.raises(IndexError, match=r"batch shape \(\); only batched"):
            obj[0]
        return
    for idx in [0, -1, (Ellipsis, 0), (slice(None), None)]:
        sub = obj[idx]
        assert type(sub) is type(obj)
        items = idx if isinstance(idx, tuple) else (idx,)
        for path, value in _fields(sub).items():
            core = _core_ndim(path)
            np.testing.assert_array_equal(value, fields[path][items + (slice(None),) * core])
        assert sub.batch_shape == np.empty(shape)[idx].shape


def test_indexing_with_a_boolean_mask(rng):
    body = make("RigidBodyInertia", (5,), np.float64, rng)
    mask = np.array([True, False, True, True, False])
    np.testing.assert_array_equal(body[mask].params, np.asarray(body.params)[mask])


# ------------------------------------------------------------------ equality, repr
@cases
def test_equality_compares_values(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    copy = jax.tree.map(lambda x: jnp.array(np.asarray(x)), obj)
    assert copy is not obj and copy == obj
    first = jax.tree.leaves(obj)[0]
    changed = jax.tree.map(lambda x: x + 1 if x is first else x, obj)
    assert changed != obj and not (changed == obj)
    assert obj != "something else" and obj != 1.0
    other_dtype = np.float64 if dtype == np.float32 else np.float32
    cast = jax.tree.map(lambda x: x.astype(other_dtype) if x.dtype == dtype else x, obj)
    assert cast != obj  # same numbers, different dtype
    with pytest.raises(TypeError, match="unhashable"):
        hash(obj)


def test_plx_and_plxb_with_equal_fields_are_not_equal(rng):
    X = make("Plx", (2,), np.float64, rng)
    assert Plxb(X.E, X.r) != X


def test_equality_nan_is_not_equal():
    body = RigidBodyInertia(jnp.full((10,), jnp.nan))
    assert body != body  # numpy.array_equal semantics


def test_equality_under_jit_raises_a_clear_error(rng):
    X = make("Plx", (2,), np.float32, rng)
    with pytest.raises(TypeError, match=r"traced values .* compare the fields"):
        jax.jit(lambda a, b: a == b)(X, X)


@cases
def test_repr_shows_type_batch_shape_dtype(kind, shape, dtype, rng):
    obj = make(kind, shape, dtype, rng)
    assert repr(obj) == f"{kind}(batch_shape={shape}, dtype={np.dtype(dtype).name})"


def test_repr_of_axis_specs_shows_fields():
    assert repr(Plx(0, None)) == "Plx(E=0, r=None)"
    assert repr(RigidBodyInertia(0)) == "RigidBodyInertia(params=0)"


# ------------------------------------------------ README example: broadcast fields
@pytest.mark.parametrize("dtype", DTYPES)
def test_readme_transform_with_shared_offset_works_under_vmap_and_sharding(dtype, rng):
    """``Plx(rotz(theta), jnp.array([1., 0., 0.]))`` failed under vmap ("inconsistent sizes")."""
    theta = jnp.asarray(rng.uniform(-np.pi, np.pi, 6), dtype)
    X = Plx(rotz(theta), jnp.array([1.0, 0.0, 0.0], dtype))
    assert X.batch_shape == (6,) and X.r.shape == (6, 3)
    m = rng.standard_normal((6, 6)).astype(dtype)
    out = jax.vmap(lambda X, m: X.apply_motion(m))(X, jnp.asarray(m))
    # independent reference: RBDA eq. 2.24, X = [[E, 0], [-E r×, E]], E = rotz(θ) (coordinate)
    t = np.asarray(theta, np.float64)
    c, s = np.cos(t), np.sin(t)
    E = np.zeros((6, 3, 3))
    E[:, 0, 0], E[:, 0, 1], E[:, 1, 0], E[:, 1, 1], E[:, 2, 2] = c, s, -s, c, 1.0
    X6 = np.zeros((6, 6, 6))
    X6[:, :3, :3] = X6[:, 3:, 3:] = E
    X6[:, 3:, :3] = -E @ np_skew(np.array([1.0, 0.0, 0.0]))
    ref = np.einsum("nij,nj->ni", X6, m.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(out, np.float64), ref, rtol=tol, atol=tol)
    if jax.device_count() >= 2:
        Xs = shard_batch(X, batch_mesh(jax.devices()[:2]))
        assert Xs == X
        np.testing.assert_array_equal(np.asarray(Xs.apply_motion(jnp.asarray(m))), out)


def test_body_transform_broadcasts_a_shared_body_against_a_batch_of_transforms(rng):
    X = make("Plx", (4,), np.float64, rng)
    body = make("RigidBodyInertia", (), np.float64, rng)
    out = jax.vmap(lambda X: body.transform(X))(X)
    assert out.batch_shape == (4,)
    for i in range(4):
        np.testing.assert_allclose(out.params[i], body.transform(X[i]).params, rtol=1e-12)


# ------------------------------------------------------------------ bad constructions
@pytest.mark.parametrize(
    "build,error,argument,message",
    [
        (lambda: Plx(1.0, 2.0), ArgumentTypeError, "E", None),
        (lambda: RigidBodyInertia(3.0), ArgumentTypeError, "params", None),
        (lambda: Plxb(jnp.eye(3), None), ArgumentTypeError, "r", None),
        # the message says what an int means in a field (a vmap axis spec)
        (lambda: Plx(0, jnp.zeros(3)), ArgumentTypeError, "E", r"got int 0 .* axis spec"),
        (
            lambda: Plx(jnp.eye(3, dtype=jnp.float32), jnp.zeros(3, jnp.float64)),
            ArgumentTypeError,
            "r",
            None,
        ),
        (lambda: Plx(jnp.zeros((4, 3, 3)), jnp.zeros((5, 3))), ArgumentError, "r", None),
        (lambda: Plx(jnp.zeros((3, 4)), jnp.zeros(3)), ArgumentError, "E", None),
        (lambda: Plx(jnp.eye(3, dtype=jnp.int32), jnp.zeros(3)), ArgumentTypeError, "E", None),
        (lambda: RigidBodyInertia(jnp.zeros(9)), ArgumentError, "params", None),
        (
            lambda: RigidBodyInertia([1, 0, 0, 0, 1, 0, 1, 0, 0, 1]),
            ArgumentTypeError,
            "params",
            None,
        ),
    ],
)
def test_bad_constructions_raise_clear_errors(build, error, argument, message):
    with raises_argument(error, argument, match=message):
        build()


def test_report_and_result_constructors_check_field_types(rng):
    rep = make("ConsistencyReport", (2,), np.float64, rng)
    fields = {f: getattr(rep, f) for f in CONSISTENCY_FIELDS}
    with raises_argument(ArgumentTypeError, "finite"):
        ConsistencyReport(**{**fields, "finite": True})
    res = make("FitResult", (2,), np.float64, rng)
    kw = {k: getattr(res, k) for k in KEY_PATHS_FIT}
    with pytest.raises(TypeError, match=r"FitResult\.inertia: expected a RigidBodyInertia"):
        FitResult(**{**kw, "inertia": res.inertia.params})
    with pytest.raises(TypeError, match=r"FitResult\.objective: expected an array, got float"):
        FitResult(**{**kw, "objective": 1.0})


KEY_PATHS_FIT = [
    "inertia",
    "objective",
    "residual",
    "iterations",
    "converged",
    "condition_number",
    "prior",
    "gamma",
    "status",
]


def test_axis_specs_build_without_checks():
    spec = Plx(0, None)
    assert spec.E == 0 and spec.r is None
    assert RigidBodyInertia(0).params == 0


# ------------------------------------------- the same calls with and without jit
def _np_plx(E, r):
    """RBDA eq. 2.24: ``[[E, 0], [-E r×, E]]`` (NumPy, batched)."""
    X = np.zeros(E.shape[:-2] + (6, 6))
    X[..., :3, :3] = X[..., 3:, 3:] = E
    X[..., 3:, :3] = -E @ np_skew(r)
    return X


class TestWithAndWithoutJit(chex.TestCase):
    """Core operations on pytree arguments give the NumPy 6×6 result, jitted or not."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_compose_and_apply_on_pytree_arguments(self):
        rng = np.random.default_rng(3)
        E1, E2 = random_rotations(rng, (4,)), random_rotations(rng, (4,))
        r1, r2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
        m = rng.standard_normal((4, 6))

        @self.variant
        def f(X1, X2, m):
            return (X1 @ X2).apply_motion(m)

        out = f(Plx(jnp.asarray(E1), jnp.asarray(r1)), Plx(jnp.asarray(E2), jnp.asarray(r2)), m)
        ref = np.einsum("nij,njk,nk->ni", _np_plx(E1, r1), _np_plx(E2, r2), m)
        chex.assert_trees_all_close(np.asarray(out), ref, rtol=1e-12, atol=1e-12)

    @chex.variants(with_jit=True, without_jit=True)
    def test_inertia_transform_on_pytree_arguments(self):
        rng = np.random.default_rng(4)
        E, r = random_rotations(rng, (3,)), rng.standard_normal((3, 3))
        body = make("RigidBodyInertia", (3,), np.float64, rng)

        @self.variant
        def f(body, X):
            return body.transform(X).as_matrix()

        out = f(body, Plx(jnp.asarray(E), jnp.asarray(r)))
        Xinv = np.linalg.inv(_np_plx(E, r))
        p = np.asarray(body.params)
        M = np.zeros((3, 6, 6))  # RBDA eq. 2.63 about the origin, from the 10-vector by hand
        M[:, :3, :3] = p[:, [[4, 5, 7], [5, 6, 8], [7, 8, 9]]]
        M[:, :3, 3:] = np_skew(p[:, 1:4])
        M[:, 3:, :3] = -np_skew(p[:, 1:4])
        M[:, 3:, 3:] = p[:, 0, None, None] * np.eye(3)
        ref = np.swapaxes(Xinv, -1, -2) @ M @ Xinv  # RBDA eq. 2.66
        chex.assert_trees_all_close(np.asarray(out), ref, rtol=1e-11, atol=1e-11)
