"""A pure-JAX ring replay buffer of fixed-length segments (static shapes, jittable).

Each item is a segment of ``T`` consecutive environment steps (any pytree whose leaves are
``[T, ...]``); the buffer holds ``capacity`` of them and overwrites the oldest first.
``sample`` draws windows of ``L ≤ T`` consecutive steps from uniformly chosen stored
segments, the batches a latent world model trains on (Dreamer's ``batch_length``).

Hand-written: flashbax's trajectory buffer would fit, but it is not installed and this is
twenty lines; every function is pure, so the buffer lives inside a ``lax.scan`` carry and
can be ``vmap``-ed over seeds.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_type

__all__ = ["ReplayBuffer", "replay_add", "replay_init", "replay_sample"]


class ReplayBuffer(NamedTuple):
    """``data``: pytree with leaves ``[capacity, T, ...]``; ``pos``: next slot; ``size``."""

    data: Any
    pos: jax.Array
    size: jax.Array


def _seg_len(tree: Any) -> int:
    lens = {leaf.shape[1] for leaf in jax.tree.leaves(tree)}
    if len(lens) != 1:
        raise ValueError(f"all leaves must share the segment length T, got {sorted(lens)}")
    return lens.pop()


def replay_init(example: Any, capacity: int) -> ReplayBuffer:
    """An empty buffer for segments shaped like ``example`` (leaves ``[T, ...]``).

    Example:
      >>> from jaxlab.rl.replay import replay_add, replay_init, replay_sample
      >>> buf = replay_init({"obs": jnp.zeros((4, 2))}, capacity=3)
      >>> buf = replay_add(buf, {"obs": jnp.ones((2, 4, 2))})
      >>> int(buf.size), replay_sample(buf, jax.random.key(0), 5, 3)["obs"].shape
      (2, (5, 3, 2))
    """
    if not jax.tree.leaves(example):
        raise ValueError(f"example must be a pytree of [T, ...] arrays, got {example!r:.60}")
    if capacity < 1:
        raise ValueError(f"capacity must be >= 1, got {capacity}")
    data = jax.tree.map(
        lambda x: jnp.zeros((capacity,) + jnp.shape(x), jnp.asarray(x).dtype), example
    )
    return ReplayBuffer(data, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))


def replay_add(buffer: ReplayBuffer, segments: Any) -> ReplayBuffer:
    """Add ``n`` segments (leaves ``[n, T, ...]``), overwriting the oldest slots (ring).

    Raises ``ValueError`` when the segments' shapes do not match the buffer's items or ``n``
    exceeds the capacity.
    """
    check_type("buffer", buffer, ReplayBuffer)
    cap = jax.tree.leaves(buffer.data)[0].shape[0]
    leaves = jax.tree.leaves(segments)
    n = leaves[0].shape[0]
    if jax.tree.structure(segments) != jax.tree.structure(buffer.data):  # type: ignore[operator]  # jaxlib has no PyTreeDef stub
        raise ValueError("segments must have the same pytree structure as the buffer's items")
    for new, old in zip(leaves, jax.tree.leaves(buffer.data), strict=True):
        if new.shape[1:] != old.shape[1:] or new.shape[0] != n:
            raise ValueError(
                f"segments must be [n, {', '.join(map(str, old.shape[1:]))}], got {new.shape}"
            )
    if n > cap:
        raise ValueError(f"cannot add {n} segments to a buffer of capacity {cap}")
    idx = (buffer.pos + jnp.arange(n)) % cap
    data = jax.tree.map(lambda d, x: d.at[idx].set(x.astype(d.dtype)), buffer.data, segments)
    return ReplayBuffer(data, (buffer.pos + n) % cap, jnp.minimum(buffer.size + n, cap))


def replay_sample(buffer: ReplayBuffer, key: ArrayLike, batch_size: int, length: int) -> Any:
    """``batch_size`` windows of ``length`` consecutive steps, leaves ``[B, L, ...]``.

    Segments are drawn uniformly among the ``size`` stored ones (with replacement), the
    window start uniformly in ``0 .. T − L``. Sampling an empty buffer returns slot 0.
    """
    check_type("buffer", buffer, ReplayBuffer)
    check_integer("batch_size", batch_size, low=1)
    key = check_key("key", key)
    t_len = _seg_len(buffer.data)
    if not 1 <= length <= t_len:
        raise ValueError(f"length must be in [1, T={t_len}], got {length}")
    k_i, k_t = jax.random.split(key)
    i = jax.random.randint(k_i, (batch_size,), 0, jnp.maximum(buffer.size, 1))
    t0 = jax.random.randint(k_t, (batch_size,), 0, t_len - length + 1)
    t = t0[:, None] + jnp.arange(length)[None]
    return jax.tree.map(lambda d: d[i[:, None], t], buffer.data)
