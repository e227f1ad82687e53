"""The FLIPAD experiments' one data-parallel program: a function of each query row, the
queries split over the ``data`` axis of the run's mesh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh

from jaxlab.train import to_host
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import DATA_AXIS, batch_sharding, replicate


def over_queries(
    fn: Callable[..., jax.Array], shared: Any, xs: np.ndarray, mesh: Mesh
) -> np.ndarray:
    """``fn(*shared, xs)`` with the rows of ``xs [n, ...]`` split over ``mesh``'s ``data``.

    ``fn`` must treat each row independently (e.g. a ``vmap``); ``shared`` (a tuple of
    pytrees) is replicated on every device. A row count that does not divide the ``data``
    axis is padded with copies of row 0, whose outputs are dropped. Returns the ``[n, ...]``
    result on the host of every process (every process passes the same ``shared`` and
    ``xs``); on one device it is ``fn(*shared, xs)`` exactly.
    """
    xs = np.asarray(xs)
    n = xs.shape[0]
    pad = padded_runs(n, mesh, DATA_AXIS) - n
    if pad:
        xs = np.concatenate([xs, np.repeat(xs[:1], pad, axis=0)])
    rows = batch_sharding(mesh)
    placed = jax.make_array_from_callback(xs.shape, rows, lambda index: xs[index])
    out = fn(*replicate(tuple(shared), mesh), placed)
    return to_host(out)[:n]
