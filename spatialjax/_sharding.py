"""Split batched inputs over several devices along the first batch axis.

Multi-host: docs page ``spatial.md#multi-host``.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ._errors import ArgumentError


def batch_mesh(devices: Sequence | None = None, axis_name: str = "batch") -> Mesh:
    """A one-axis device mesh named ``axis_name`` over ``devices`` (default: all devices).

    Args:
      devices: devices to split the batch over, e.g. ``jax.devices("gpu")``.
      axis_name: mesh axis name used by [`batch_sharding`][spatialjax.batch_sharding] /
        [`shard_batch`][spatialjax.shard_batch].
    """
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ArgumentError("devices", "expected at least one device, got none")
    return Mesh(np.asarray(devices), (axis_name,))


def batch_sharding(mesh: Mesh | None = None, axis_name: str = "batch") -> NamedSharding:
    """``NamedSharding(mesh, PartitionSpec(axis_name))``: first axis split, the rest replicated."""
    mesh = batch_mesh(axis_name=axis_name) if mesh is None else mesh
    if axis_name not in mesh.axis_names:
        raise ArgumentError(
            "axis_name", f"mesh has axes {tuple(mesh.axis_names)}, no axis named {axis_name!r}"
        )
    return NamedSharding(mesh, PartitionSpec(axis_name))


def shard_batch(tree, mesh: Mesh | None = None, *, axis_name: str = "batch"):
    """Place every array leaf of ``tree`` with its first axis split over ``mesh[axis_name]``.

    Scalars are replicated.

    Args:
      tree: a pytree of arrays (e.g. a ``Plx`` of batch ``(N, ...)``).
      mesh: the device mesh (default [`batch_mesh`][spatialjax.batch_mesh] over all devices).
      axis_name: the mesh axis to split the batch over.

    Returns:
      The same pytree, leaves sharded by [`batch_sharding`][spatialjax.batch_sharding].

    Raises:
      ValueError: a leaf's first axis does not divide evenly over the devices.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from spatialjax import Plx
      >>> X = Plx(jnp.broadcast_to(jnp.eye(3), (8, 3, 3)), jnp.zeros((8, 3)))
      >>> Xs = shard_batch(X, batch_mesh(jax.devices()[:1]))
      >>> Xs.E.sharding.spec == jax.sharding.PartitionSpec("batch")
      True
    """
    sharding = batch_sharding(mesh, axis_name)
    count = sharding.mesh.shape[axis_name]
    replicated = NamedSharding(sharding.mesh, PartitionSpec())

    def place(path, x):
        shape = np.shape(x)
        if not shape:
            return jax.device_put(x, replicated)
        if shape[0] % count:
            raise ArgumentError(
                "tree",
                f"leaf {jax.tree_util.keystr(path) or '<root>'} has leading axis "
                f"{shape[0]} (shape {tuple(shape)}), which does not split over {count} devices "
                f"of mesh axis {axis_name!r}; expected a multiple of {count}",
            )
        return jax.device_put(x, sharding)

    return jax.tree_util.tree_map_with_path(place, tree)
