"""Pre- and meta-aggregators: NNM, bucketing and CTMA, wrapping any base aggregator.

``base`` is any callable mapping stacked vectors ``[m', d]`` to one vector ``[d]`` (e.g.
``functools.partial(trimmed_mean, num_byzantine=f)``). The meta-aggregators flatten a
pytree input to ``[m, d]`` once, call ``base`` on a matrix, and restore the structure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab._checks import check_key
from jaxlab.robust import _stack

PyTree = Any
Aggregator = Callable[[jax.Array], jax.Array]


def _check_base(base: Aggregator) -> None:
    if not callable(base):
        raise ValueError(
            f"base must be an aggregator callable [m, d] -> [d], got {type(base).__name__}"
        )


def nnm(x: PyTree, num_byzantine: int, base: Aggregator) -> PyTree:
    r"""Nearest-neighbour mixing (NNM), then the base aggregator.

    .. math::
       y_i = \frac{1}{m - f} \sum_{j \in N_i} x_j, \qquad
       \mathrm{NNM}(x) = \mathrm{Base}(y_1, \dots, y_m)

    with :math:`N_i` the ``m − f`` nearest vectors to :math:`x_i` (itself included, ℓ2 ties to
    the lowest index). The mixing is one ``[m, m] @ [m, d]`` product, so memory stays
    O(m² + md) — no ``[m, m − f, d]`` gather. A non-finite row is left as it is (the base
    treats it as an outlier) and is never anyone's neighbour while at most ``f`` rows are bad.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      num_byzantine: ``f``, with ``0 <= f < m / 2``.
      base: the aggregator applied to the mixed vectors ``[m, d] -> [d]``.

    Returns:
      ``[...]``: ``base`` of the mixed vectors.

    Example:
      >>> from jaxlab.robust import coordinate_median
      >>> nnm(jnp.array([[0.0], [1.0], [2.0], [9.0]]), 1, coordinate_median)
      Array([1.], dtype=float32)

    References:
      Allouah, Farhadkhani, Guerraoui, Gupta, Pinot, Stephan. "Fixing by mixing: a recipe
      for optimal Byzantine ML under heterogeneity", AISTATS 2023.
    """
    _check_base(base)
    matrix, unflatten = _stack.stack_to_matrix(x)
    m = matrix.shape[0]
    f = _stack.check_num_byzantine(num_byzantine, m)
    good = _stack.finite_rows(matrix)
    dist = _stack.pairwise_squared_distances(matrix, good)
    neighbours = jax.lax.top_k(-dist, m - f)[1]  # [m, m - f]
    weights = jnp.sum(jax.nn.one_hot(neighbours, m, dtype=matrix.dtype), axis=1) / (m - f)
    mixed = jnp.matmul(
        weights, _stack.zero_bad_rows(matrix, good), precision=jax.lax.Precision.HIGHEST
    )
    mixed = jnp.where(good[:, None], mixed, matrix)
    return unflatten(base(mixed))


def bucketing(x: PyTree, bucket_size: int, base: Aggregator, key: jax.Array) -> PyTree:
    r"""Bucketing: average random buckets of ``s`` vectors, then the base aggregator.

    .. math::
       \pi \sim \mathrm{Unif}(S_m), \quad
       y_k = \mathrm{mean}\{x_{\pi(i)} : \lfloor (i - 1) / s \rfloor = k - 1\}, \quad
       \mathrm{Bucketing}(x) = \mathrm{Base}(y_1, \dots, y_{\lceil m/s \rceil})

    When ``s`` does not divide ``m`` the last bucket holds the remaining ``m mod s``
    vectors (as in ByzFL). ``base`` sees ``⌈m / s⌉`` vectors: build it with the number of
    Byzantine *buckets* it must tolerate. The reference code uses ``s = ⌊m / (2f)⌋``.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      bucket_size: ``s``, with ``1 <= s <= m``.
      base: aggregator for the ``[⌈m/s⌉, d]`` bucket means.
      key: PRNG key for the permutation.

    Returns:
      ``[...]``: ``base`` of the bucket means.

    Example:
      >>> from jaxlab.robust import mean
      >>> bucketing(jnp.arange(4.0)[:, None], 2, mean, jax.random.key(0))
      Array([1.5], dtype=float32)

    References:
      Karimireddy, He, Jaggi. "Byzantine-robust learning on heterogeneous datasets via
      bucketing", ICLR 2022.
    """
    _check_base(base)
    check_key("key", key)
    matrix, unflatten = _stack.stack_to_matrix(x)
    m, d = matrix.shape
    if (
        isinstance(bucket_size, bool)
        or not isinstance(bucket_size, int)
        or not (1 <= bucket_size <= m)
    ):
        raise ValueError(f"bucket_size must be an int in [1, m={m}], got {bucket_size!r}")
    # Bucket k holds the shuffled positions [k s, (k + 1) s); the last may be smaller.
    position = jnp.argsort(jax.random.permutation(key, m))  # position of each worker
    bucket = np.arange(m) // bucket_size
    sizes = np.bincount(bucket).astype(np.float32)
    weights = jax.nn.one_hot(jnp.asarray(bucket)[position], len(sizes), dtype=matrix.dtype).T
    weights = weights / jnp.asarray(sizes, matrix.dtype)[:, None]  # [num_buckets, m]
    means = jnp.matmul(weights, matrix, precision=jax.lax.Precision.HIGHEST)
    return unflatten(base(means))


def ctma(x: PyTree, num_byzantine: int, base: Aggregator) -> PyTree:
    r"""Centered Trimmed Meta Aggregator (CTMA), the meta-aggregator of Dahan & Levy.

    .. math::
       x_0 = \mathrm{Base}(x_1, \dots, x_m), \qquad
       S = \text{the } m - f \text{ indices of smallest } \lVert x_i - x_0 \rVert_2, \qquad
       \mathrm{CTMA}(x) = x_0 + \frac{1}{m - f} \sum_{i \in S} (x_i - x_0)
                        = \frac{1}{m - f} \sum_{i \in S} x_i

    Ties in the distance go to the lowest index. Cost O(md + m log m) on top of ``base``
    (NNM costs O(m² d)). Non-finite rows are at infinite distance, so never kept while at
    most ``f`` rows are bad.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      num_byzantine: ``f``, with ``0 <= f < m / 2``.
      base: the aggregator giving the center, ``[m, d] -> [d]``.

    Returns:
      ``[...]``: the mean of the ``m − f`` vectors nearest to ``base(x)``.

    Example:
      >>> from jaxlab.robust import coordinate_median
      >>> ctma(jnp.array([[0.0], [1.0], [2.0], [9.0]]), 1, coordinate_median)
      Array([1.], dtype=float32)

    References:
      Dahan, Levy. "Fault tolerant ML: efficient meta-aggregation and synchronous
      training", ICML 2024 (Algorithm 1).
    """
    _check_base(base)
    matrix, unflatten = _stack.stack_to_matrix(x)
    m = matrix.shape[0]
    f = _stack.check_num_byzantine(num_byzantine, m)
    center = base(matrix)  # step 1: x0 = Base(x)
    # step 2: r_i = ‖x_i − x0‖² (one pass over x), behind a loop boundary so that XLA computes
    # x0 once instead of fusing Base into the reduction (see the helper's docstring).
    radius = _stack.squared_distances_to_computed_point(matrix, center)
    radius = jnp.where(jnp.isnan(radius), jnp.inf, radius)  # a NaN row is infinitely far
    kept = jax.lax.top_k(-radius, m - f)[1]  # the m − f smallest r_i (stable ties)
    return unflatten(_stack.mean_of_rows(matrix, kept))  # step 3: mean of the kept x_i
