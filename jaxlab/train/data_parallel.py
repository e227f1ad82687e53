"""Config-level choices of a trainer: the data-parallel mesh and the compute dtype.

``data_parallel_mesh(batch_size)`` is the one-axis ``data`` mesh over this process's
devices that :func:`jaxlab.train.fit` takes as ``mesh=`` (state replicated, batch rows
split over the devices: plain data parallelism, gradients all-reduced by XLA);
``compute_dtype("bfloat16")`` is the dtype a flax model computes in (parameters stay
float32). Used by the MCF trainer (``mcf_qm9``); the same on 8 fake CPU devices, one
accelerator or several.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from jaxlab.train.mesh import DATA_AXIS, make_mesh

_DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}


def data_parallel_mesh(batch_size: int, devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A ``data`` mesh over ``devices`` (default: this process's devices).

    Args:
      batch_size: the global batch; it must split evenly over the devices.
      devices: the devices; default ``jax.local_devices()``.

    Returns:
      A :class:`jax.sharding.Mesh` with one axis ``"data"``.

    Example:
      >>> from jaxlab.train.data_parallel import data_parallel_mesh
      >>> mesh = data_parallel_mesh(8 * len(jax.local_devices()))
      >>> mesh.axis_names, mesh.size == len(jax.local_devices())
      (('data',), True)
    """
    devices = list(jax.local_devices() if devices is None else devices)
    if batch_size < 1 or batch_size % len(devices):
        raise ValueError(
            f"batch_size must be a positive multiple of the {len(devices)} "
            f"devices, got {batch_size}"
        )
    return make_mesh({DATA_AXIS: len(devices)}, devices)


def compute_dtype(name: str) -> jnp.dtype:
    """``"float32"`` or ``"bfloat16"`` → the dtype (a config holds the name).

    Example:
      >>> from jaxlab.train.data_parallel import compute_dtype
      >>> compute_dtype("bfloat16")
      <class 'jax.numpy.bfloat16'>
    """
    if name not in _DTYPES:
        raise ValueError(f"compute_dtype must be one of {sorted(_DTYPES)}, got {name!r}")
    return _DTYPES[name]
