"""Device meshes and data placement (single- and multi-host).

The same code runs on one CPU, on 8 fake CPU devices, and on several hosts after
``jax.distributed.initialize()``: batches are built per process and assembled into global
arrays with ``jax.make_array_from_process_local_data``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"
RUNS_AXIS = "runs"
WORKERS_AXIS = "workers"
#: Outer to inner: the order of a config's axes in its mesh (a ``ConfigDict`` sorts its
#: keys, so the order is fixed here); other names follow, sorted.
AXIS_ORDER = (RUNS_AXIS, WORKERS_AXIS, DATA_AXIS)


def make_mesh(
    axes: Mapping[str, int] | Any | None = None, devices: Sequence[jax.Device] | None = None
) -> Mesh:
    """A mesh over ``devices`` (default: all), by default one ``data`` axis.

    Args:
      axes: ``{axis_name: size}`` (a dict, kept in its order, or a config's ``ConfigDict``,
        put in :data:`AXIS_ORDER`); one size may be ``-1`` (takes the rest). Without a
        ``-1`` the mesh takes the first ``prod(sizes)`` devices, so ``{"runs": 1}`` is a
        one-device layout on any machine.
      devices: the devices to use; default ``jax.devices()``.

    Raises:
      ValueError: two ``-1`` sizes, or sizes that do not fit the devices.
    """
    devices = list(jax.devices() if devices is None else devices)
    if axes is not None and hasattr(axes, "to_dict"):  # a ConfigDict (keys sorted): canonical
        axes = dict(sorted(axes.to_dict().items(), key=lambda kv: _axis_rank(kv[0])))  # order
    axes = dict(axes or {DATA_AXIS: -1})
    if list(axes.values()).count(-1) > 1:
        raise ValueError(f"at most one axis size may be -1, got {axes}")
    if any(not isinstance(s, int | np.integer) or (s < 1 and s != -1) for s in axes.values()):
        raise ValueError(f"mesh axis sizes must be positive ints or -1, got {axes}")
    known = int(np.prod([s for s in axes.values() if s != -1]))
    if -1 not in axes.values() and known <= len(devices):
        devices = devices[:known]
    sizes = tuple(len(devices) // known if s == -1 else int(s) for s in axes.values())
    if int(np.prod(sizes)) != len(devices):
        raise ValueError(f"mesh axes {axes} do not fit {len(devices)} devices")
    return jax.make_mesh(
        sizes,
        tuple(axes),
        devices=devices,
        axis_types=(jax.sharding.AxisType.Auto,) * len(sizes),
    )


def _axis_rank(name: str) -> tuple[int, str]:
    return (AXIS_ORDER.index(name) if name in AXIS_ORDER else len(AXIS_ORDER), name)


def mesh_from_config(
    config: Any, default_axis: str = DATA_AXIS, devices: Sequence[jax.Device] | None = None
) -> Mesh:
    """The mesh a config asks for: ``config.mesh`` (e.g. ``{"runs": -1}``,
    ``{"runs": 2, "data": -1}``), or every device on ``default_axis`` when it has none.

    Example:
      >>> import ml_collections
      >>> config = ml_collections.ConfigDict({"mesh": {"data": -1, "runs": 1}})
      >>> mesh_from_config(config).axis_names
      ('runs', 'data')
    """
    layout = config.get("mesh") if hasattr(config, "get") else None
    return make_mesh(layout or {default_axis: -1}, devices)


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
