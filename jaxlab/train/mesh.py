"""Device meshes and data placement (single- and multi-host).

The same code runs on one CPU, on 8 fake CPU devices, and on several hosts after
``jax.distributed.initialize()``: batches are built per process and assembled into global
arrays with ``jax.make_array_from_process_local_data``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"


def make_mesh(
    axes: Mapping[str, int] | None = None, devices: Sequence[jax.Device] | None = None
) -> Mesh:
    """A mesh over ``devices`` (default: all), by default one ``data`` axis.

    Args:
      axes: ordered ``{axis_name: size}``; one size may be ``-1`` (takes the rest).
      devices: the devices to use; default ``jax.devices()``.
    """
    devices = list(jax.devices() if devices is None else devices)
    axes = dict(axes or {DATA_AXIS: -1})
    known = int(np.prod([s for s in axes.values() if s != -1]))
    if list(axes.values()).count(-1) > 1:
        raise ValueError(f"at most one axis size may be -1, got {axes}")
    sizes = tuple(len(devices) // known if s == -1 else s for s in axes.values())
    if int(np.prod(sizes)) != len(devices):
        raise ValueError(f"mesh axes {axes} do not fit {len(devices)} devices")
    return jax.make_mesh(
        sizes, tuple(axes), devices=devices,
        axis_types=(jax.sharding.AxisType.Auto,) * len(sizes),
    )


def replicated(mesh: Mesh) -> NamedSharding:
    """The sharding that keeps a full copy on every device of ``mesh``."""
    return NamedSharding(mesh, PartitionSpec())


def batch_sharding(mesh: Mesh, axis: str = DATA_AXIS) -> NamedSharding:
    """Leading dimension split over ``axis``, the rest replicated."""
    return NamedSharding(mesh, PartitionSpec(axis))


def put_batch(batch, mesh: Mesh, axis: str = DATA_AXIS):
    """Assembles this process's rows of a batch into global arrays sharded over ``axis``.

    Raises:
      ValueError: a leaf's leading dimension does not divide over the axis.
    """
    sharding = batch_sharding(mesh, axis)
    local_devices = mesh.size // jax.process_count() if mesh.size > 1 else 1
    per_process_shards = max(1, local_devices * mesh.shape[axis] // mesh.size)

    def put(leaf):
        leaf = np.asarray(leaf)
        if leaf.ndim == 0 or leaf.shape[0] % per_process_shards:
            raise ValueError(
                f"batch leaf of shape {leaf.shape} cannot be split over {per_process_shards} "
                f"local shards of mesh axis {axis!r}"
            )
        return jax.make_array_from_process_local_data(sharding, leaf)

    return jax.tree.map(put, batch)


def replicate(tree, mesh: Mesh):
    """Places every leaf of ``tree`` fully on every device of ``mesh`` (of every process).

    Each process must hold the same values (same seed, same init), as after a
    deterministic initialisation.
    """
    sharding = replicated(mesh)

    def put(leaf):
        if jax.dtypes.issubdtype(getattr(leaf, "dtype", None), jax.dtypes.prng_key):
            impl = jax.random.key_impl(leaf)
            return jax.random.wrap_key_data(put(jax.random.key_data(leaf)), impl=impl)
        host = np.asarray(leaf)
        return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])

    return jax.tree.map(put, tree)
