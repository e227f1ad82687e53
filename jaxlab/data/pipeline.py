"""grain input pipelines whose position is the step number.

``batch_dataset(arrays, batch_size, seed)[step]`` is the batch of ``step``: examples are
shuffled once per epoch, epochs repeat forever, and the whole order is a function of the
seed. The iterator state is therefore the step alone, which the train loop already
checkpoints: a resumed run reads exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Mapping

import grain
import jax
import numpy as np


def batch_dataset(
    arrays: Mapping[str, np.ndarray],
    batch_size: int,
    seed: int,
    *,
    process_index: int | None = None,
    process_count: int | None = None,
) -> grain.MapDataset:
    """A random-access dataset of shuffled, repeating batches.

    Args:
      arrays: equal-length arrays ``{name: [n, ...]}``, one row per example.
      batch_size: the GLOBAL batch size (over all processes).
      seed: shuffle seed; epoch ``e`` uses a permutation derived from ``seed`` and ``e``.
      process_index, process_count: which slice of each global batch this process reads;
        default ``jax.process_index()`` / ``jax.process_count()``.

    Returns:
      ``ds`` with ``ds[step] = {name: [batch_size // process_count, ...]}``.
    """
    if not arrays:
        raise ValueError("arrays must hold at least one array")
    lengths = {name: len(a) for name, a in arrays.items()}
    n = next(iter(lengths.values()))
    if len(set(lengths.values())) != 1:
        raise ValueError(f"arrays must have equal lengths, got {lengths}")
    if n == 0:
        raise ValueError("arrays are empty")
    index = jax.process_index() if process_index is None else process_index
    count = jax.process_count() if process_count is None else process_count
    if batch_size <= 0 or batch_size % count:
        raise ValueError(
            f"batch_size must be a positive multiple of the process count {count}, got {batch_size}"
        )
    local = batch_size // count
    rows = slice(index * local, (index + 1) * local)

    def gather(example_ids: np.ndarray) -> dict[str, np.ndarray]:
        mine = example_ids[rows]
        return {name: np.asarray(a[mine]) for name, a in arrays.items()}

    return (
        grain.MapDataset.range(n)
        .shuffle(seed=seed)
        .repeat()
        .batch(batch_size, drop_remainder=True)
        .map(gather)
    )
