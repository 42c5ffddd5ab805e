"""One pytree base for every public type (transforms, inertias, reports, results).

``pytree_dataclass`` + ``Pytree`` give key-path registration (``_meta_fields``
static), an unflatten without validation, value equality returning a Python
``bool``, a short repr and batch indexing. Docs page ``spatial.md#pytrees``.
"""

from __future__ import annotations

import dataclasses
import operator
import sys
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10
    try:
        from typing_extensions import dataclass_transform
    except ImportError:

        def dataclass_transform(**kwargs):
            return lambda cls: cls


import jax
import numpy as np

from ._checks import as_float_array
from ._errors import ArgumentTypeError

_T = TypeVar("_T")
_P = TypeVar("_P", bound="Pytree")


def _is_axis_spec(value: Any) -> bool:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return True
    return isinstance(value, Pytree) and value._is_axis_spec()


def field_array(value: Any, name: str, trailing: Sequence[int] = ()) -> jax.Array:
    """A data field as a floating JAX array (as ``as_float_array``; scalars and None refused)."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        want = "(..., " + ", ".join(str(t) for t in trailing) + ")" if trailing else "(...)"
        raise ArgumentTypeError(
            name,
            f"expected a floating-point array of shape {want}, got "
            f"{type(value).__name__} {value!r} (Python ints and None are accepted only when "
            "every field is one: a vmap/scan axis spec such as Plx(0, None))",
        )
    return as_float_array(value, name, trailing)


def _leaf_equal(a: Any, b: Any) -> bool:
    if hasattr(a, "shape") and hasattr(b, "shape"):
        if np.shape(a) != np.shape(b) or np.dtype(a.dtype) != np.dtype(b.dtype):
            return False
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    if hasattr(a, "shape") or hasattr(b, "shape"):
        return False
    return bool(a == b)


class Pytree:
    """Mixin for frozen pytree dataclasses (``_core_ndims`` per data field, ``_meta_fields``)."""

    _core_ndims: ClassVar[dict[str, int]] = {}
    _meta_fields: ClassVar[tuple[str, ...]] = ()
    _data_fields: ClassVar[tuple[str, ...]] = ()

    # ------------------------------------------------------------------ structure
    def _is_axis_spec(self) -> bool:
        return all(_is_axis_spec(getattr(self, n)) for n in self._data_fields)

    @classmethod
    def _from_fields(cls: type[_P], **fields: Any) -> _P:
        """Build without running ``__post_init__`` (fields are trusted)."""
        obj = object.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(obj, name, value)
        return obj

    def _field_batch_shape(self, name: str) -> tuple[int, ...]:
        value = getattr(self, name)
        if isinstance(value, Pytree):
            return value.batch_shape
        shape = np.shape(value)
        core = self._core_ndims.get(name, 0)
        return tuple(shape[: len(shape) - core])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading batch shape shared by every field (their broadcast)."""
        return tuple(np.broadcast_shapes(*(self._field_batch_shape(n) for n in self._data_fields)))

    @property
    def dtype(self) -> np.dtype:
        """Floating dtype of the fields (all floating fields share it)."""
        for leaf in jax.tree_util.tree_leaves(self):
            dtype = getattr(leaf, "dtype", None)
            if dtype is not None and np.issubdtype(dtype, np.floating):
                return np.dtype(dtype)
        raise AttributeError(f"{type(self).__name__} has no floating-point field")

    # ------------------------------------------------------------------- indexing
    def __getitem__(self: _P, idx: Any) -> _P:
        """Index the leading batch axes of every field (``x[0]``, ``x[:, 1:]``, ``x[mask]``).

        Core (trailing) axes are kept; fields are broadcast to the common batch
        shape first. ``None`` adds a batch axis, also to unbatched objects.
        """
        shape = self.batch_shape
        items = idx if isinstance(idx, tuple) else (idx,)
        if not shape and any(i is not None and i is not Ellipsis for i in items):
            raise IndexError(
                f"{type(self).__name__}[{idx!r}]: this object has batch shape (); only "
                "batched objects can be indexed (None adds a batch axis)"
            )
        fields = {n: getattr(self, n) for n in self._meta_fields}
        for name in self._data_fields:
            value = getattr(self, name)
            if isinstance(value, Pytree):
                fields[name] = value[idx]
                continue
            core = self._core_ndims.get(name, 0)
            core_shape = tuple(np.shape(value)[np.ndim(value) - core :])
            value = jax.numpy.broadcast_to(value, shape + core_shape)
            fields[name] = value[items + (slice(None),) * core]
        return type(self)._from_fields(**fields)

    # ------------------------------------------------------------- equality, repr
    def __eq__(self, other: object) -> bool:
        """Value equality (a Python ``bool``); see the module docstring."""
        if type(other) is not type(self):
            return NotImplemented
        leaves_a, tree_a = jax.tree_util.tree_flatten(self)
        leaves_b, tree_b = jax.tree_util.tree_flatten(other)
        tracer = jax.core.Tracer  # pyright: ignore[reportAttributeAccessIssue]
        if any(isinstance(x, tracer) for x in leaves_a + leaves_b):
            raise TypeError(
                f"{type(self).__name__} == {type(other).__name__}: '==' compares values and "
                "returns a Python bool, which traced values (inside jit/vmap/grad) do not "
                "have; compare the fields instead, e.g. jnp.all(X.E == Y.E)"
            )
        if tree_a != tree_b:
            return False
        return all(_leaf_equal(a, b) for a, b in zip(leaves_a, leaves_b, strict=True))

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]  # mutable-valued (arrays): not hashable

    def __repr__(self) -> str:
        leaves = jax.tree_util.tree_leaves(self)
        if leaves and all(hasattr(x, "shape") and hasattr(x, "dtype") for x in leaves):
            try:
                shape = self.batch_shape
            except ValueError:
                shape = None
            if shape is not None:
                return f"{type(self).__name__}(batch_shape={shape}, dtype={self.dtype})"
        names = self._data_fields + self._meta_fields
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{type(self).__name__}({inner})"


@dataclass_transform(frozen_default=True, eq_default=False)
def pytree_dataclass(cls: type[_T]) -> type[_T]:
    """Make ``cls`` a frozen dataclass registered as a pytree (unflattening skips ``__init__``)."""
    if not issubclass(cls, Pytree):
        raise TypeError(f"pytree_dataclass: {cls.__name__} must derive from Pytree")
    cls = dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    meta = tuple(cls._meta_fields)
    unknown = set(meta) - set(names)
    if unknown:
        raise TypeError(f"pytree_dataclass: {cls.__name__}._meta_fields names {sorted(unknown)}")
    data = tuple(n for n in names if n not in meta)
    cls._data_fields = data
    keys = tuple(jax.tree_util.GetAttrKey(n) for n in data)
    # flatten/unflatten run on every jit call with these objects as arguments or
    # results: attrgetter and a __dict__ update keep them to a few hundred ns.
    get_data = operator.attrgetter(*data) if len(data) > 1 else None
    get_meta = operator.attrgetter(*meta) if len(meta) > 1 else None
    first_data = next(iter(data), "")

    def flatten(obj):
        children = get_data(obj) if get_data else (getattr(obj, first_data),)
        if not meta:
            return children, ()
        return children, get_meta(obj) if get_meta else (getattr(obj, meta[0]),)

    def flatten_with_keys(obj):
        children, aux = flatten(obj)
        return tuple(zip(keys, children, strict=True)), aux

    def unflatten(aux, children):
        obj = object.__new__(cls)
        fields = obj.__dict__
        fields.update(zip(data, children, strict=True))
        if meta:
            fields.update(zip(meta, aux, strict=True))
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    return cls
