"""Whole runs as one program: ``scan_run`` (a run as a ``lax.scan``) and ``batch_runs``.

Many experiments are short runs repeated over seeds and grid points: train a small model
for a few hundred steps, roll out an environment, adapt along a test stream. Their best
JAX form is one ``lax.scan`` over the steps of a run, batched over runs with ``vmap`` (or
``lax.map`` / a Python loop where batching does not pay, e.g. XLA:CPU convolutions). The
run's data and hyper-parameters are *arguments* of the compiled program, never constants
closed over: the same program then serves every seed, graph or grid point of the same
shapes, and XLA does not spend seconds constant-folding a closed-over dataset.

    step(carry, x) -> (carry, metrics)              pure; x is the step's input
    final, history = scan_run(step, carry0, xs)     history: metrics stacked over steps
    final, history = segmented_scan_run(step, carry0, xs, segments=k,
                                        checkpointer=Checkpointer(workdir))
                                                    the same, in k checkpointed segments
    final, history = segmented_scan_run(jax.vmap(step), carry0, xs, mesh=mesh)
                                                    a batch of runs, split over the mesh
    run_all = batch_runs(run, in_axes=(0, None))    run(key, data) -> pytree
    results = run_all(keys, data)                   leading axis: one entry per run

``batch_runs(..., mesh=mesh)`` spreads the runs over the devices: the run axis of the
batched arguments is split over the mesh's ``runs`` axis (``NamedSharding``), the shared
arguments are replicated, and each device runs its block of runs with the chosen method.

``fast_compile=True`` (``jit_run``, ``batch_runs``) compiles with XLA's cheapest settings:
tiny ``smoke`` runs are compile-bound, and on XLA:CPU this halves their compile time at
the cost of roughly 3x slower steps (measured on the MSCP and Dr. Strategy smoke runs).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxlab.train.checkpoint import Checkpointer
from jaxlab.train.lifecycle import pad_with_run_0, padded_runs, place, to_host
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.metrics import MetricsWriter

Carry = TypeVar("Carry")
METHODS = ("vmap", "map", "loop", "auto")
# XLA debug options (every backend): no backend optimization, no expensive LLVM passes.
FAST_COMPILE_OPTIONS = {
    "xla_backend_optimization_level": 0,
    "xla_llvm_disable_expensive_passes": True,
}


def jit_run(fun: Callable[..., Any], *, fast_compile: bool = False, **jit_kwargs: Any):
    """``jax.jit(fun, **jit_kwargs)``, with XLA's cheapest compile when ``fast_compile``.

    Experiments pass ``config.fast_compile`` (``True`` at the ``smoke`` preset only), so
    quick and paper runs compile with full optimization. XLA takes compiler options only at
    the top level, so a ``fast_compile`` function called under another trace (``jax.jit``,
    ``jax.eval_shape``, ``jaxlab plan``) is inlined there as a plain ``jax.jit``.
    """
    if not fast_compile:
        return jax.jit(fun, **jit_kwargs)
    fast = jax.jit(fun, compiler_options=FAST_COMPILE_OPTIONS, **jit_kwargs)
    nested = jax.jit(fun, **jit_kwargs)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        traced = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves((args, kwargs)))
        return (nested if traced else fast)(*args, **kwargs)

    return call


def scan_run(
    step: Callable[[Carry, Any], tuple[Carry, Any]],
    carry: Carry,
    xs: Any = None,
    *,
    length: int | None = None,
    unroll: int = 1,
) -> tuple[Carry, Any]:
    """One whole run as a ``lax.scan``: ``carry_{t+1}, metrics_t = step(carry_t, x_t)``.

    Args:
      step: pure function ``(carry, x) -> (carry, metrics)``.
      carry: the initial state (a pytree of arrays: parameters, optimizer state, rng, ...).
      xs: per-step inputs with a leading step axis (a pytree), or ``None``; with ``None``
        the step receives its index ``t`` (an int32 scalar) as ``x``, so it can fold it
        into an rng (``jax.random.fold_in(key, t)``) or index a data array.
      length: number of steps; required when ``xs`` is ``None``.
      unroll: passed to ``lax.scan``.

    Returns:
      ``(final_carry, metrics)`` with every leaf of ``metrics`` stacked on a leading step
      axis.

    Example:
      >>> final, sums = scan_run(lambda c, t: (c + t, c), 0, length=4)
      >>> int(final), sums.tolist()
      (6, [0, 0, 1, 3])
    """
    if xs is None:
        if length is None or length < 0:
            raise ValueError(f"scan_run without xs needs length >= 0, got {length}")
        xs = jnp.arange(length, dtype=jnp.int32)
    return jax.lax.scan(step, carry, xs, length=length, unroll=unroll)


def segmented_scan_run(
    step: Callable[[Carry, Any], tuple[Carry, Any]],
    carry: Carry,
    xs: Any = None,
    *,
    length: int | None = None,
    segments: int = 1,
    checkpointer: Checkpointer | None = None,
    unroll: int = 1,
    fast_compile: bool = False,
    mesh: Mesh | None = None,
    carry_axes: Any = 0,
    axis: str = RUNS_AXIS,
) -> tuple[Carry, Any]:
    """:func:`scan_run` in ``segments`` jitted pieces, checkpointed between them.

    The steps ``0 .. length-1`` are cut into ``segments`` consecutive pieces of
    ``ceil(length / segments)`` steps (the last may be shorter); each piece is one jitted
    ``lax.scan`` of the same ``step``. After each piece the carry and the metrics of every
    finished step are saved through ``checkpointer`` (orbax, atomically); a call on a
    workdir holding such a checkpoint resumes after its last complete piece. The carry
    and the step inputs ``x_t`` are those of the uninterrupted scan, so a run killed at
    any moment and called again ends bit-identical to :func:`scan_run` (the step's rng
    must come from the carry or from ``t``, as in :func:`scan_run`).

    With a ``checkpointer``, each piece's metrics are also written, as it finishes, to
    ``metrics.jsonl`` (and TensorBoard) in the checkpointer's workdir by process 0
    (:class:`jaxlab.train.MetricsWriter`), so a long run shows its curves while it trains:
    one row per logged step (at most ``MAX_HISTORY_ROWS`` in a run, and its last step),
    each metric named by its path in the metrics' tree and averaged over its axes after
    the step axis (the runs). Rows a killed call wrote after its last checkpoint are
    replaced.

    A batch of runs is the same call with a batched step (e.g. ``jax.vmap(step)``) and a
    carry with a leading run axis. With a ``mesh``, the carry lives on it for the whole
    scan: the leaves ``carry_axes`` marks ``0`` are split over the mesh's ``axis``
    (:func:`jaxlab.train.runs_sharding`, on every process a global array), those marked
    ``None`` replicated, and every piece returns them with the same shardings. A run
    count that does not divide the axis is padded with copies of run 0
    (:func:`jaxlab.train.lifecycle.pad_with_run_0`) for the scan; the padding runs are
    dropped from the returned carry and metrics (every metric then has the run axis
    after the step axis, as a vmapped step's). On a one-device mesh the call is that
    without a mesh.

    Args:
      step: pure ``(carry, x) -> (carry, metrics)``.
      carry: the initial state (concrete arrays: this runs on the host, not under jit).
      xs: per-step inputs with a leading step axis, or ``None`` (then ``x_t = t``).
      length: number of steps; required when ``xs`` is ``None``.
      segments: number of pieces (``1``: one scan, still checkpointed at its end).
      checkpointer: a :class:`jaxlab.train.Checkpointer` on the run's workdir; ``None``
        keeps nothing (the pieces still run).
      unroll: passed to ``lax.scan``.
      fast_compile: compile with XLA's cheapest settings (see :func:`jit_run`).
      mesh: keep the carry on this mesh, its runs split over ``axis``; ``None``: the carry
        as given.
      carry_axes: a prefix of the carry's tree: ``0`` (a leading run axis) or ``None``
        (shared by every run) per subtree; an int or ``None`` applies to all.
      axis: the mesh axis of the runs.

    Returns:
      ``(final_carry, metrics)`` as :func:`scan_run` (metrics: numpy arrays stacked on a
      leading step axis, or ``None`` when the step returns none).

    Raises:
      ValueError: ``segments < 1``, no length, a mesh without ``axis``, batched carry
        leaves without one common leading axis, or (padded runs) a metric without the run
        axis.
      jaxlab.train.CheckpointError: the workdir holds a checkpoint of another run shape.
    """
    if xs is None:
        if length is None or length < 0:
            raise ValueError(f"segmented_scan_run without xs needs length >= 0, got {length}")
        xs = jnp.arange(length, dtype=jnp.int32)
    length = jax.tree.leaves(xs)[0].shape[0]
    if segments < 1:
        raise ValueError(f"segments must be >= 1, got {segments}")
    if mesh is not None and axis not in mesh.axis_names:
        raise ValueError(f"mesh has no axis {axis!r} for the runs (axes: {mesh.axis_names})")
    axes = _carry_axes(carry_axes, carry)
    num_runs, pad, shardings = 0, 0, None
    if mesh is not None and mesh.size > 1:
        carry, num_runs, pad, shardings = _carry_on_mesh(carry, axes, mesh, axis)
    piece = max(1, -(-length // segments))
    metrics_shape = (
        jax.eval_shape(lambda c, x: step(c, x)[1], carry, jax.tree.map(lambda a: a[0], xs))
        if length
        else None
    )
    if pad:
        _check_run_axis(metrics_shape, num_runs + pad)
    history = jax.tree.map(lambda s: np.zeros((length, *s.shape), s.dtype), metrics_shape)
    leaves, treedef = jax.tree.flatten(carry)
    impls = [_key_impl(leaf) for leaf in leaves]
    start = 0
    if checkpointer is not None:
        restored = checkpointer.restore({"carry": _unkey(carry), "history": history})
        if restored is not None:
            state, _, start = restored
            carry = jax.tree.unflatten(
                treedef,
                [
                    _rekey(leaf, impl)
                    for leaf, impl in zip(jax.tree.leaves(state["carry"]), impls, strict=True)
                ],
            )
            history = jax.tree.map(np.asarray, state["history"])

    def pieces(c, x):
        c, out = jax.lax.scan(step, c, x, unroll=unroll)
        if shardings is not None:
            c = jax.lax.with_sharding_constraint(c, shardings)
        return c, out

    scan = jit_run(pieces, fast_compile=fast_compile)
    _probe_carry(carry, axes, start)
    writer = None
    if checkpointer is not None and metrics_shape is not None and jax.process_index() == 0:
        writer = MetricsWriter(checkpointer.directory.parent)
        writer.truncate_after(start)
    for begin in range(start, length, piece):
        stop = min(begin + piece, length)
        carry, out = scan(carry, jax.tree.map(lambda a, b=begin, e=stop: a[b:e], xs))
        _probe_carry(carry, axes, stop)
        jax.tree.map(
            lambda h, o, b=begin, e=stop: h.__setitem__(slice(b, e), o), history, to_host(out)
        )
        if writer is not None:  # before the checkpoint: a resumed call rewrites these rows
            segment = jax.tree.map(  # the padding runs (copies of run 0) are not logged
                lambda h, b=begin, e=stop: h[b:e, :num_runs] if pad else h[b:e], history
            )
            _log_segment(writer, segment, first_step=begin + 1, length=length)
        if checkpointer is not None:
            checkpointer.save(stop, {"carry": _unkey(carry), "history": history})
    if checkpointer is not None:
        checkpointer.wait()
    if writer is not None:
        writer.close()
    if pad:
        carry = _map_batched(lambda leaves: _first_runs_program(leaves, num_runs), carry, axes)
        history = jax.tree.map(lambda h: h[:, :num_runs], history)
    return carry, history


#: The most rows a segmented run logs to ``metrics.jsonl`` (:func:`segmented_scan_run`).
MAX_HISTORY_ROWS = 1000


def _log_segment(writer: MetricsWriter, metrics: Any, *, first_step: int, length: int) -> None:
    """Rows of ``metrics`` (a pytree of arrays ``[n, ...]``, steps ``first_step ..``) in
    ``writer``: each leaf named by its tree path (``"metric"`` for a lone array) and
    averaged over its axes after the step axis; steps that are multiples of
    ``ceil(length / MAX_HISTORY_ROWS)`` and the run's last step."""
    named = {
        _path_name(path) or "metric": np.asarray(leaf, np.float64).reshape(leaf.shape[0], -1)
        for path, leaf in jax.tree_util.tree_flatten_with_path(metrics)[0]
    }
    every = max(1, -(-length // MAX_HISTORY_ROWS))
    steps = next(iter(named.values())).shape[0] if named else 0
    for t in range(steps):
        step = first_step + t
        if step % every == 0 or step == length:
            writer.write(step, {name: float(values[t].mean()) for name, values in named.items()})


def _path_name(path: Sequence[Any]) -> str:
    parts = []
    for entry in path:
        key = getattr(entry, "key", getattr(entry, "idx", getattr(entry, "name", entry)))
        parts.append(str(key))
    return "/".join(parts)


def _carry_axes(carry_axes: Any, carry: Any) -> Any:
    """``carry_axes`` broadcast to one ``0``/``None`` per leaf of ``carry``."""
    if carry_axes in (0, None):
        return jax.tree.map(lambda _: carry_axes, carry)
    axes = jax.tree.map(
        lambda a, sub: jax.tree.map(lambda _: a, sub),
        carry_axes,
        carry,
        is_leaf=lambda a: a is None,
    )
    if any(a not in (0, None) for a in jax.tree.leaves(axes, is_leaf=lambda a: a is None)):
        raise ValueError(f"carry_axes entries must be 0 (batched) or None (shared): {carry_axes}")
    return axes


def _flat_axes(axes: Any) -> list[Any]:
    return jax.tree.leaves(axes, is_leaf=lambda a: a is None)


def _batched(carry: Any, axes: Any) -> list[Any]:
    """The carry's leaves that ``axes`` marks ``0``, in tree order."""
    return [x for a, x in zip(_flat_axes(axes), jax.tree.leaves(carry), strict=True) if a == 0]


def _map_batched(fn: Callable[[list[Any]], list[Any]], carry: Any, axes: Any) -> Any:
    """``carry`` with its batched leaves replaced by ``fn(batched leaves)``."""
    flat, treedef = jax.tree.flatten(carry)
    new = iter(fn(_batched(carry, axes)))
    return jax.tree.unflatten(
        treedef, [next(new) if a == 0 else x for a, x in zip(_flat_axes(axes), flat, strict=True)]
    )


def _carry_on_mesh(carry: Any, axes: Any, mesh: Mesh, axis: str):
    """``(carry, runs, pad, shardings)``: the batched leaves padded with copies of run 0 to
    :func:`padded_runs` and split over ``axis``, the shared ones replicated."""
    sizes = {np.shape(x)[0] if np.ndim(x) else -1 for x in _batched(carry, axes)}
    if len(sizes) != 1 or -1 in sizes:
        raise ValueError(f"the batched carry leaves need one leading run axis, got {sizes}")
    (num_runs,) = sizes
    pad = padded_runs(num_runs, mesh, axis) - num_runs
    split, shared = NamedSharding(mesh, PartitionSpec(axis)), NamedSharding(mesh, PartitionSpec())
    shardings = jax.tree.map(
        lambda a: split if a == 0 else shared, axes, is_leaf=lambda a: a is None
    )
    carry = _map_batched(lambda leaves: pad_with_run_0(leaves, pad), carry, axes)
    carry = jax.tree.map(lambda sharding, x: place(x, sharding), shardings, carry)
    return carry, num_runs, pad, shardings


def _check_run_axis(metrics_shape: Any, runs: int) -> None:
    for leaf in jax.tree.leaves(metrics_shape):
        if not leaf.shape or leaf.shape[0] != runs:
            raise ValueError(
                f"padded runs are dropped from every metric's run axis; a metric of shape "
                f"{leaf.shape} (per step) has no leading axis of {runs} runs"
            )


#: Where :func:`segmented_scan_run` records its carry's placement at every segment, when
#: set: ``<dir>/carry-<process index>.jsonl`` (the carry-sharding test reads it).
CARRY_PROBE_ENV = "JAXLAB_CARRY_PROBE"


def _probe_carry(carry: Any, axes: Any, step: int) -> None:
    """One JSON line per batched carry leaf: its sharding and this process's run blocks."""
    folder = os.environ.get(CARRY_PROBE_ENV)
    if not folder:
        return
    lines = []
    for x in _batched(carry, axes):
        sharding = getattr(x, "sharding", None)
        shards = getattr(x, "addressable_shards", [])
        blocks = [
            [
                shard.device.id,
                *(shard.index[0].indices(x.shape[0])[:2] if np.ndim(x) else (0, 0)),
            ]
            for shard in shards
        ]
        lines.append(
            json.dumps(
                {
                    "step": step,
                    "runs": int(np.shape(x)[0]) if np.ndim(x) else 0,
                    "kind": type(sharding).__name__ if sharding is not None else "host",
                    "spec": str(tuple(getattr(sharding, "spec", ()))),
                    "num_devices": len(sharding.device_set) if sharding is not None else 0,
                    "global_devices": jax.device_count(),
                    "blocks": blocks,
                }
            )
        )
    path = os.path.join(folder, f"carry-{jax.process_index()}.jsonl")
    with open(path, "a") as file:
        file.write("".join(line + "\n" for line in lines))


def _key_impl(leaf):
    if jax.dtypes.issubdtype(getattr(leaf, "dtype", None), jax.dtypes.prng_key):
        return jax.random.key_impl(leaf)
    return None


def _unkey(tree):
    """PRNG keys as their raw data (orbax saves plain arrays)."""
    return jax.tree.map(lambda x: jax.random.key_data(x) if _key_impl(x) is not None else x, tree)


def _rekey(leaf, impl):
    return leaf if impl is None else jax.random.wrap_key_data(leaf, impl=impl)


def _normalize_axes(in_axes: int | None | Sequence[int | None], num_args: int):
    axes = tuple(in_axes) if isinstance(in_axes, list | tuple) else (in_axes,) * num_args
    if len(axes) != num_args:
        raise ValueError(f"in_axes has {len(axes)} entries for {num_args} arguments")
    if any(a not in (0, None) for a in axes):
        raise ValueError(f"in_axes entries must be 0 (batched) or None (shared), got {axes}")
    if all(a is None for a in axes):
        raise ValueError("in_axes marks no argument as batched (0)")
    return axes


def _merge(axes, batched, shared):
    b, s = iter(batched), iter(shared)
    return [next(b) if a == 0 else next(s) for a in axes]


def _resolve(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "auto":
        # Measured on XLA:CPU (docs/gadc.md, docs/byzantine.md): batching small dense runs
        # with vmap is 0.9x a loop there, lax.map 1.1x; accelerators want vmap.
        return "map" if jax.default_backend() == "cpu" else "vmap"
    return method


def batch_runs(
    run: Callable[..., Any],
    in_axes: int | None | Sequence[int | None] = 0,
    method: str = "vmap",
    batch_size: int | None = None,
    fast_compile: bool = False,
    mesh: Mesh | None = None,
    axis: str = RUNS_AXIS,
) -> Callable[..., Any]:
    """Batches ``run`` over a leading run axis of some arguments; returns a jitted callable.

    ``batch_runs(run, in_axes=(0, None))(keys, data)`` returns
    ``stack([run(keys[i], data) for i in range(len(keys))])`` computed as one program.
    Arguments marked ``None`` are shared by every run and passed to the program as
    arguments (not constants), so the returned callable compiles once per shape.

    With a ``mesh``, the run axis is split over the mesh axis ``axis``: the batched
    arguments are placed with ``NamedSharding(mesh, P(axis))``, the shared ones replicated,
    and every device runs its block of runs (``"vmap"``: one vectorized block; ``"map"``:
    its runs in sequence). On several processes (``jax.distributed``) every process passes
    the same arguments and gets every run's outputs back as host arrays. A run count that
    does not divide ``mesh.shape[axis]`` is *padded* with copies of run 0 and the padded
    runs are dropped from the outputs (their work is wasted, their values never seen). The
    outputs keep the run sharding when no padding was needed. ``vmap`` carries
    ``spmd_axis_name=axis``, so a ``shard_map`` inside ``run`` over another mesh axis (e.g.
    Byzantine ``workers``) stays split over ``axis``.
    On one device the numbers are those of ``mesh=None``.

    Args:
      run: a pure function of arrays/pytrees returning a pytree.
      in_axes: per positional argument, ``0`` (batched on the leading axis) or ``None``
        (shared); an int or ``None`` applies to all.
      method: ``"vmap"`` (one batched program), ``"map"`` (``lax.map``, runs in sequence
        inside one program, ``batch_size`` at a time), ``"loop"`` (a Python loop over one
        jitted run, results stacked; not with a mesh) or ``"auto"`` (``"map"`` on CPU,
        ``"vmap"`` on accelerators).
      batch_size: for ``"map"``: runs vectorized together per iteration.
      fast_compile: compile with XLA's cheapest settings (see :func:`jit_run`).
      mesh: split the runs over this mesh's ``axis``; ``None``: the default device.
      axis: the mesh axis of the runs.

    Returns:
      A function with ``run``'s positional arguments whose outputs gain a leading run axis.

    Raises:
      ValueError: a bad ``method``/``in_axes``, ``method="loop"`` with a mesh, a mesh
        without ``axis``, or batched arguments without one common leading axis.

    Example:
      >>> both = batch_runs(lambda k, x: jax.random.normal(k) + x, in_axes=(0, None))
      >>> both(jax.random.split(jax.random.key(0), 3), 1.0).shape
      (3,)
    """
    method = _resolve(method)
    if mesh is not None and method == "loop":
        raise ValueError("batch_runs(method='loop') runs one run at a time; it takes no mesh")
    if mesh is not None and axis not in mesh.axis_names:
        raise ValueError(f"mesh has no axis {axis!r} for the runs (axes: {mesh.axis_names})")

    def split(args):
        axes = _normalize_axes(in_axes, len(args))
        batched = [x for a, x in zip(axes, args, strict=True) if a == 0]
        shared = [x for a, x in zip(axes, args, strict=True) if a is None]
        sizes = {leaf.shape[0] for leaf in jax.tree.leaves(batched) if jnp.ndim(leaf)}
        if len(sizes) != 1 or any(jnp.ndim(x) == 0 for x in jax.tree.leaves(batched)):
            raise ValueError(
                f"batched arguments must share one leading run axis, got sizes {sorted(sizes)}"
            )
        return axes, batched, shared

    if method == "loop":
        one = jit_run(
            lambda axes, batched, shared: run(*_merge(axes, batched, shared)),
            fast_compile=fast_compile,
            static_argnums=0,
        )

        def looped(*args):
            axes, batched, shared = split(args)
            n = jax.tree.leaves(batched)[0].shape[0]
            outs = [one(axes, jax.tree.map(lambda x, i=i: x[i], batched), shared) for i in range(n)]
            return jax.tree.map(lambda *xs: jnp.stack(xs), *outs)

        return looped

    if mesh is not None and mesh.size == 1:
        mesh = None  # one device: the unsharded program (bit-identical to ``mesh=None``)
    if mesh is None:

        @functools.partial(jit_run, fast_compile=fast_compile, static_argnums=0)
        def program(axes, batched, shared):
            one = lambda b: run(*_merge(axes, b, shared))
            if method == "vmap":
                return jax.vmap(one)(batched)
            return jax.lax.map(one, batched, batch_size=batch_size)

        def batched_call(*args):
            axes, batched, shared = split(args)
            return program(axes, batched, shared)

        return batched_call

    devices = mesh.shape[axis]
    runs_sharding = NamedSharding(mesh, PartitionSpec(axis))
    replicated = NamedSharding(mesh, PartitionSpec())

    @functools.partial(
        jit_run, fast_compile=fast_compile, static_argnums=0, out_shardings=runs_sharding
    )
    def sharded_program(axes, batched, shared):
        one = lambda b: run(*_merge(axes, b, shared))
        if method == "vmap":
            return jax.vmap(one, spmd_axis_name=axis)(batched)
        # "map": [devices, runs per device]; each device runs its block in sequence.
        blocks = jax.tree.map(lambda x: x.reshape(devices, -1, *x.shape[1:]), batched)
        per_device = lambda block: jax.lax.map(one, block, batch_size=batch_size)
        out = jax.vmap(per_device, spmd_axis_name=axis)(blocks)
        return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), out)

    def sharded_call(*args):
        axes, batched, shared = split(args)
        n = jax.tree.leaves(batched)[0].shape[0]
        pad = -n % devices
        if _traced((batched, shared)):
            # Called inside another program (a scan, a jit): the sharded program is inlined
            # there with its shardings; placement and gathering belong to the outer call.
            out = sharded_program(axes, pad_with_run_0(batched, pad), shared)
            return _first_runs(out, n) if pad else out
        batched = place(pad_with_run_0(batched, pad), runs_sharding)
        shared = place(shared, replicated)
        out = _gather_processes(sharded_program(axes, batched, shared))
        out = _first_runs_program(out, n) if pad else out
        # The call ends when its programs have: XLA:CPU runs a multi-device program on a
        # pool of one thread per device, and a host that has queued many such programs
        # ahead (up to its per-device limit of in-flight computations) can leave a launch
        # waiting for a thread that waits, in a collective, for that launch.
        return jax.block_until_ready(out)

    return sharded_call


def _first_runs(tree: Any, n: int) -> Any:
    """Every leaf's first ``n`` runs (the padding copies dropped)."""
    return jax.tree.map(lambda x: x[:n], tree)


# One program for a whole tree (not one eager op per leaf, see pad_with_run_0).
_first_runs_device = jax.jit(_first_runs, static_argnums=1)


def _first_runs_program(tree: Any, n: int) -> Any:
    """:func:`_first_runs` in numpy when every leaf is a host array, else as one program."""
    if all(isinstance(x, np.ndarray | np.generic) for x in jax.tree.leaves(tree)):
        return _first_runs(tree, n)
    return _first_runs_device(tree, n)


def _traced(tree: Any) -> bool:
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(tree))


def _gather_processes(tree: Any) -> Any:
    """On several processes (``jax.distributed``), every process gets every run's outputs as
    host arrays (``process_allgather``; typed PRNG keys as key arrays over the gathered key
    data); on one process the tree is returned as is."""
    if jax.process_count() == 1:
        return tree
    from jax.experimental import multihost_utils

    def gather(x):
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            data = multihost_utils.process_allgather(jax.random.key_data(x), tiled=True)
            return jax.random.wrap_key_data(np.asarray(data), impl=jax.random.key_impl(x))
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))

    return jax.tree.map(gather, tree)
