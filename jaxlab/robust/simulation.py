"""Synchronous Byzantine-robust training with m simulated workers on a ``workers`` axis.

One step (Dahan & Levy 2024, Algorithm 2 with a generic worker estimator):

1. every worker ``i`` draws its minibatch and computes its gradient — at the query point and,
   for STORM, also at the previous query point — and updates its estimator state (worker
   momentum or STORM) — all per worker: ``jax.vmap`` over the leading ``workers`` axis, or
   ``jax.shard_map`` over a ``workers`` mesh axis when a mesh is given (the worker axis is
   padded to a multiple of the device count and the padding dropped: the result does not
   depend on the layout);
2. the last ``f`` workers are Byzantine: their rows are replaced by ``attack(honest, own)``
   (label flip instead changes their labels in step 1);
3. the server aggregates the ``m`` rows and takes its optimizer step (SGD for worker
   momentum, AnyTime averaging for μ²-SGD).

Pure functions of arrays: the step is a kernel; whole runs (a scan of steps, batched over
seeds × grid points) belong to the code that trains with it (the Byzantine experiments'
trainer), not to this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.flatten_util import ravel_pytree
from jax.sharding import AxisType, Mesh, PartitionSpec

from jaxlab.robust import attacks as attacks_lib

Params = Any
WORKERS_AXIS = "workers"


class ByzantineState(NamedTuple):
    """Training state.

    Attributes:
      params: the query point x_t (the model's weights).
      prev_params: x_{t−1}, where STORM re-evaluates the new minibatch (x_0 = x_1).
      worker_state: every worker's estimator state, stacked on a leading ``[m]`` axis.
      server_state: the server optimizer's state.
    """

    params: Params
    prev_params: Params
    worker_state: Any
    server_state: Any


def init_state(
    params: Params,
    estimator: optax.GradientTransformation,
    server: optax.GradientTransformation,
    num_workers: int,
) -> ByzantineState:
    """Initial state: one estimator state per worker, the server state, x_0 = x_1."""
    one = estimator.init(params)
    stacked = jax.tree_util.tree_map(
        lambda a: jnp.broadcast_to(a, (num_workers, *jnp.shape(a))), one
    )
    return ByzantineState(params, params, stacked, server.init(params))


def map_workers(
    fn: Callable[[Any, Any], Any],
    per_worker: Any,
    shared: Any,
    mesh: Mesh | None = None,
    axis_name: str = WORKERS_AXIS,
) -> Any:
    """``fn(per_worker[i], shared)`` for every worker ``i``, stacked on the leading axis.

    Without a mesh (or with a one-device axis) this is ``jax.vmap``. With a mesh the worker
    axis is padded (repeating worker 0) to a multiple of ``mesh.shape[axis_name]``, split over
    that mesh axis with ``jax.shard_map`` (``vmap`` inside each shard) and the padding is
    dropped, so ``m`` need not divide the device count.
    """
    batched = jax.vmap(fn, in_axes=(0, None))
    if mesh is None or mesh.shape[axis_name] == 1:
        return batched(per_worker, shared)
    if AxisType.Explicit in mesh.axis_types:
        raise ValueError(
            "map_workers needs a mesh with Auto axis types (e.g. jaxlab.train.mesh.make_mesh "
            f"or jax.make_mesh(..., axis_types=(AxisType.Auto,))), got {mesh.axis_types}"
        )
    m = jax.tree_util.tree_leaves(per_worker)[0].shape[0]
    pad = -m % mesh.shape[axis_name]
    padded = jax.tree_util.tree_map(
        lambda a: jnp.concatenate([a, jnp.repeat(a[:1], pad, axis=0)], axis=0), per_worker
    )

    # check_vma=False: no implicit "pvary" of the shared inputs, whose transpose would psum
    # gradients taken w.r.t. them across the workers; it also lets a vmap with
    # spmd_axis_name (a ``runs`` axis around this call) batch the body. The body is
    # per-device by nature (no collective), so the check has nothing to verify.
    out = jax.shard_map(
        batched,
        mesh=mesh,
        in_specs=(PartitionSpec(axis_name), PartitionSpec()),
        out_specs=PartitionSpec(axis_name),
        check_vma=False,
    )(padded, shared)
    return jax.tree_util.tree_map(lambda a: a[:m], out)


def _ravel_rows(tree: Any) -> jax.Array:
    """``[m, ...]`` pytree → ``[m, d]`` (worker rows)."""
    leaves = jax.tree_util.tree_leaves(tree)
    m = leaves[0].shape[0]
    return jnp.concatenate([leaf.reshape(m, -1) for leaf in leaves], axis=1)


def byzantine_step(
    state: ByzantineState,
    images: jax.Array,
    labels: jax.Array,
    key: jax.Array,
    *,
    loss_fn: Callable[[Params, jax.Array, jax.Array], jax.Array],
    estimator: optax.GradientTransformationExtraArgs,
    server: optax.GradientTransformation,
    aggregate: Callable[[jax.Array, jax.Array], jax.Array],
    attack: Callable[[Any, Any], Any],
    num_byzantine: int,
    num_classes: int,
    flip_labels: bool | jax.Array = False,
    two_point: bool = False,
    mesh: Mesh | None = None,
) -> tuple[ByzantineState, dict[str, jax.Array]]:
    """One synchronous step of Byzantine-robust training.

    Args:
      state: the current :class:`ByzantineState`.
      images: ``[m, B, ...]`` one minibatch per worker.
      labels: ``[m, B]`` integer labels.
      key: PRNG key for the aggregator (bucketing).
      loss_fn: ``loss_fn(params, images [B, ...], labels [B]) -> scalar``.
      estimator: per-worker estimator (``worker_momentum`` or ``storm``).
      server: server optimizer applied to the aggregate (params are passed to it).
      aggregate: ``aggregate(rows [m, d], key) -> [d]``.
      attack: ``attack(honest [m−f, d], own [f, d]) -> [f, d]``.
      num_byzantine: ``f``; the last ``f`` workers are Byzantine.
      num_classes: for the label-flip transform.
      flip_labels: whether the Byzantine workers train on flipped labels (may be traced).
      two_point: STORM: also evaluate each minibatch at ``state.prev_params``.
      mesh: optional mesh with a ``workers`` axis for :func:`map_workers`.

    Returns:
      the new state and ``{"loss": mean honest loss, "grad_norm": ‖aggregate‖}``.
    """
    m = labels.shape[0]
    f = num_byzantine
    is_byzantine = jnp.arange(m) >= m - f
    flip = jnp.logical_and(is_byzantine, flip_labels)[:, None]
    labels = jnp.where(flip, attacks_lib.flip_labels(labels, num_classes), labels)
    value_and_grad = jax.value_and_grad(loss_fn)

    def worker(per_worker, shared):
        worker_state, x, y = per_worker
        params, prev_params = shared
        if two_point:
            # Two calls, not a vmap over the stacked pair: with the params shared by all
            # workers each call is one convolution over the workers' pooled batch, whereas
            # batched params would make it a grouped convolution (slow on CPU).
            loss, grads_new = value_and_grad(params, x, y)
            _, grads_old = value_and_grad(prev_params, x, y)
        else:
            loss, grads_new = value_and_grad(params, x, y)
            grads_old = grads_new
        estimate, worker_state = estimator.update(grads_new, worker_state, grads_at_prev=grads_old)
        return worker_state, estimate, loss

    worker_state, estimates, losses = map_workers(
        worker, (state.worker_state, images, labels), (state.params, state.prev_params), mesh
    )
    rows = _ravel_rows(estimates)
    if f:
        byzantine = attack(rows[: m - f], rows[m - f :])
        rows = jnp.concatenate([rows[: m - f], byzantine], axis=0)
    aggregated = aggregate(rows, key)
    _, unravel = ravel_pytree(state.params)
    direction = unravel(aggregated)
    updates, server_state = server.update(direction, state.server_state, state.params)
    params = optax.apply_updates(state.params, updates)
    metrics = {
        "loss": jnp.mean(losses[: m - f]),
        "grad_norm": jnp.linalg.norm(aggregated),
    }
    return ByzantineState(params, state.params, worker_state, server_state), metrics
