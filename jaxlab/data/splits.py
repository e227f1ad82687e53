"""Train/validation/test node masks: from index arrays, or a random split."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def index_masks(num_nodes: int, *indices: np.ndarray) -> tuple[jax.Array, ...]:
    """Boolean ``[n]`` masks from index arrays.

    Example:
      >>> [m.tolist() for m in index_masks(4, [0, 2], [3])]
      [[True, False, True, False], [False, False, False, True]]
    """
    out = []
    for idx in indices:
        m = np.zeros((num_nodes,), bool)
        m[np.asarray(idx)] = True
        out.append(jnp.asarray(m))
    return tuple(out)


def random_split_masks(
    key: jax.Array, num_nodes: int, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``[n]`` train/val/test masks of a random split (val and test of ⌊f·n⌋ nodes).

    Example:
      >>> train, val, test = random_split_masks(jax.random.key(0), 10)
      >>> int(train.sum()), int(val.sum()), int(test.sum())
      (6, 2, 2)
    """
    perm = jax.random.permutation(key, num_nodes)
    n_val, n_test = int(num_nodes * fractions[1]), int(num_nodes * fractions[2])
    rank = jnp.zeros((num_nodes,), jnp.int32).at[perm].set(jnp.arange(num_nodes))
    val = rank < n_val
    test = (rank >= n_val) & (rank < n_val + n_test)
    return ~(val | test), val, test
