"""The run lifecycle an experiment should never write itself: placing runs on the mesh,
gathering results to the host on every process, and resuming finished pieces atomically.

    mesh = mesh_from_config(config)                 # {"runs": R} or {"runs": R, "data": D}
    keys = place_runs(keys, mesh)                   # run axis split over "runs"
    out = resumable(workdir, "arm-a", config, program, keys, data)   # once per config
    host = to_host(out)                             # every process gets every run

All are correct on several processes (``jax.distributed``): ``place`` and ``place_runs``
assemble global arrays from the value every process holds (``jax.device_put`` cannot reach
another process's devices), ``to_host`` gathers with
``multihost_utils.process_allgather`` (never ``np.asarray`` on an array another process
holds), and ``resumable`` writes from process 0 only, through a temporary file and an
atomic rename, after every process has its copy.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxlab.train.mesh import RUNS_AXIS

__all__ = [
    "atomic_write_json",
    "atomic_write_npz",
    "atomic_write_text",
    "config_digest",
    "from_process_0",
    "padded_runs",
    "place",
    "place_runs",
    "resumable",
    "run_lanes",
    "runs_sharding",
    "to_host",
]


def runs_sharding(mesh: Mesh | None, axis: str = RUNS_AXIS) -> NamedSharding | None:
    """Leading (run) axis split over ``axis`` when ``mesh`` has it, else replicated over the
    mesh; ``None`` without a mesh."""
    if mesh is None:
        return None
    spec = PartitionSpec(axis) if axis in mesh.axis_names else PartitionSpec()
    return NamedSharding(mesh, spec)


def padded_runs(num_runs: int, mesh: Mesh | None, axis: str = RUNS_AXIS) -> int:
    """The smallest multiple of the mesh's ``axis`` size that holds ``num_runs`` runs.

    A caller that must pad fills the extra runs with real work where it can (more seeds)
    and otherwise reports their share, ``1 - num_runs / padded_runs(...)``.

    Raises:
      ValueError: ``num_runs < 1``.
    """
    if num_runs < 1:
        raise ValueError(f"num_runs must be >= 1, got {num_runs}")
    size = mesh.shape[axis] if mesh is not None and axis in mesh.axis_names else 1
    return -(-num_runs // size) * size


def run_lanes(num_runs: int, mesh: Mesh | None, axis: str = RUNS_AXIS) -> np.ndarray:
    """The run each lane of a padded run axis computes: ``0 .. num_runs - 1``, then run 0
    again up to :func:`padded_runs` (int64, on the host). Index the runs' inputs with it
    (``keys[run_lanes(n, mesh)]``) and keep the first ``num_runs`` lanes of every result.

    Example:
      >>> run_lanes(3, None).tolist()
      [0, 1, 2]
    """
    lanes = padded_runs(num_runs, mesh, axis)
    return np.concatenate([np.arange(num_runs), np.zeros(lanes - num_runs, np.int64)])


def place(tree: Any, sharding: NamedSharding) -> Any:
    """Every leaf of ``tree`` placed with ``sharding``.

    On one process this is ``jax.device_put`` (a python scalar becomes a weakly typed array).
    On several, python scalars are left to ``jit``; a global array (one that spans other
    processes' devices, e.g. an earlier program's output) is resharded by a program; any
    other leaf is a value every process holds alike (same seed, same computation) and
    becomes a global array assembled from it (``jax.make_array_from_callback``), typed PRNG
    keys through their key data.
    """
    if jax.process_count() == 1:
        return jax.tree.map(lambda x: jax.device_put(x, sharding), tree)
    return jax.tree.map(lambda x: _place_global(x, sharding), tree)


@functools.partial(jax.jit, static_argnums=1)
def _reshard(x: jax.Array, sharding: NamedSharding) -> jax.Array:
    return jax.lax.with_sharding_constraint(x, sharding)


def _place_global(x: Any, sharding: NamedSharding) -> Any:
    if not hasattr(x, "shape"):
        return x
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return _reshard(x, sharding)
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        data = _place_global(jax.random.key_data(x), sharding)
        return jax.random.wrap_key_data(data, impl=jax.random.key_impl(x))
    host = np.asarray(x)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _concat_run_0(tree: Any, pad: int) -> Any:
    return jax.tree.map(lambda x: jnp.concatenate([x, jnp.repeat(x[:1], pad, axis=0)]), tree)


_concat_run_0_program = jax.jit(_concat_run_0, static_argnums=1)


def pad_with_run_0(tree: Any, pad: int) -> Any:
    """Every leaf's leading (run) axis extended by ``pad`` copies of run 0.

    Host arrays are padded in numpy, traced ones in the caller's program, device arrays in
    one program for the whole tree: one eager op per leaf would queue a multi-device
    computation per leaf, and XLA:CPU's per-device limit on queued computations can then
    deadlock a later program's collective.
    """
    leaves = jax.tree.leaves(tree)
    if not pad:
        return tree
    if all(isinstance(x, np.ndarray | np.generic) for x in leaves):
        return jax.tree.map(lambda x: np.concatenate([x, np.repeat(x[:1], pad, axis=0)]), tree)
    if any(isinstance(x, jax.core.Tracer) for x in leaves):
        return _concat_run_0(tree, pad)
    return _concat_run_0_program(tree, pad)


def place_runs(tree: Any, mesh: Mesh | None, axis: str = RUNS_AXIS, *, pad: bool = False) -> Any:
    """``tree``'s leading (run) axis split over the mesh's ``axis`` (:func:`runs_sharding`),
    correct on several processes (:func:`place`); the tree as is without a mesh.

    Args:
      tree: arrays with a common leading run axis ``[R, ...]``.
      mesh: the run's mesh, or ``None``.
      axis: the mesh axis the runs split over.
      pad: first extend the run axis to :func:`padded_runs` with copies of run 0, which the
        caller drops from every result (``out[:R]``).

    Raises:
      ValueError: the leaves' leading axes differ, or (without ``pad``) do not divide over
        ``axis``.
    """
    if mesh is None:
        return tree
    leaves = jax.tree.leaves(tree)
    sizes = {np.shape(x)[0] if np.ndim(x) else -1 for x in leaves}
    if len(sizes) != 1 or -1 in sizes:
        raise ValueError(f"every leaf needs the same leading run axis, got sizes {sizes}")
    (num_runs,) = sizes
    target = padded_runs(num_runs, mesh, axis)
    if target != num_runs:
        if not pad:
            raise ValueError(
                f"{num_runs} runs do not divide over the mesh's {axis!r} axis of size "
                f"{mesh.shape[axis]}: pass pad=True (copies of run 0) or change the run count"
            )
        tree = pad_with_run_0(tree, target - num_runs)
    sharding = runs_sharding(mesh, axis)
    assert sharding is not None  # a mesh is given
    return place(tree, sharding)


def to_host(tree: Any) -> Any:
    """Every leaf as a host numpy array, on every process.

    A global array that spans several processes is gathered with
    ``multihost_utils.process_allgather`` (every process calls this); typed PRNG keys
    come back as their key data. On one process this is ``jax.device_get``.
    """

    def leaf(x: Any) -> Any:
        if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            from jax.experimental import multihost_utils

            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(jax.device_get(x))

    return jax.tree.map(leaf, tree)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file and a rename: a reader sees the
    old file or the whole new one, never a part. Only process 0 writes."""
    if jax.process_index() != 0:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def atomic_write_json(path: str | os.PathLike, value: Any) -> None:
    """:func:`atomic_write_text` of ``value`` as indented JSON."""
    atomic_write_text(path, json.dumps(value, indent=1, default=str) + "\n")


def atomic_write_npz(path: str | os.PathLike, arrays: Mapping[str, Any]) -> None:
    """Writes ``arrays`` (host arrays by name) to the ``.npz`` file ``path`` as
    :func:`atomic_write_text` writes text: whole or not at all, by process 0 only."""
    if jax.process_index() != 0:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.npz")
    np.savez(tmp, **{name: np.asarray(value) for name, value in arrays.items()})  # type: ignore[arg-type]
    os.replace(tmp, path)


def config_digest(config: Any) -> str:
    """The first 12 hex digits of the SHA-256 of ``config`` (a ``ConfigDict``, or a
    JSON-able value whose ``ConfigDict`` entries are converted) as sorted JSON: the name a
    saved piece carries, so a piece of another config is never read."""
    text = (
        config.to_json_best_effort(sort_keys=True)
        if hasattr(config, "to_json_best_effort")
        else json.dumps(config, sort_keys=True, default=_jsonable)
    )
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _jsonable(value: Any) -> Any:
    return value.to_dict() if hasattr(value, "to_dict") else str(value)


def from_process_0(value: Any) -> Any:
    """Process 0's ``value`` (a pytree of numbers or arrays) on every process.

    For anything one process measures or decides on its own (a wall time, a file's
    existence) that then sets the program: every process must take the same branch and the
    same number of steps, or their collectives wait on each other. On one process, ``value``
    as is; on several, ``multihost_utils.broadcast_one_to_all`` (numpy leaves back).

    Example:
      >>> from_process_0({"restarts": 3})
      {'restarts': 3}
    """
    if jax.process_count() == 1:
        return value
    from jax.experimental import multihost_utils

    out = multihost_utils.broadcast_one_to_all(jax.tree.map(np.asarray, value))
    return jax.tree.map(_like, out, value)


def _like(received: Any, sent: Any) -> Any:
    """``received`` (a numpy array) as the type of ``sent`` when that was a scalar."""
    array = np.asarray(received)
    return array.item() if isinstance(sent, (bool, int, float)) else array


def _agreed(flag: bool) -> bool:
    """Process 0's ``flag`` on every process, so all take the same branch (a piece computed
    by some processes and loaded by others would leave its collectives waiting)."""
    return bool(from_process_0(flag))


def resumable(
    workdir: str | os.PathLike | None,
    name: str,
    config: Any,
    compute: Callable[..., Mapping[str, Any]],
    *args: Any,
    **kwargs: Any,
) -> dict[str, np.ndarray]:
    """``compute(*args, **kwargs)`` once per ``(workdir, name, config)``; its arrays on the
    host of every process.

    The result is saved as ``<workdir>/runs/<name>-<config digest>.npz`` (atomically, by
    process 0). An experiment killed at any moment and run again loads the pieces it
    finished and computes the rest; each piece draws its randomness from its own keys, so
    the results are those of an uninterrupted run. A file of another config (another
    digest) is never read. ``workdir=None`` computes without saving.

    Args:
      workdir: the run's directory.
      name: the piece (an arm, a grid cell), unique within the run.
      config: the run's config (``ConfigDict`` or a JSON-able value): part of the file name.
      compute: returns ``{name: array}`` (global arrays are gathered with :func:`to_host`).
    """
    path = (
        None if workdir is None else Path(workdir) / "runs" / f"{name}-{config_digest(config)}.npz"
    )
    if path is not None and _agreed(path.exists()):
        with np.load(path) as saved:
            return dict(saved)
    out = {k: np.asarray(v) for k, v in to_host(dict(compute(*args, **kwargs))).items()}
    if path is not None:
        atomic_write_npz(path, out)
    return out
