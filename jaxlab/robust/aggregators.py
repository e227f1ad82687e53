"""Robust aggregation rules: mean, CWMed, CWTM, geometric median, (Multi-)Krum, CC.

Each rule maps the ``m`` stacked worker vectors ``x: [m, ...]`` (an array or a pytree whose
leaves are ``[m, ...]``, treated as one flat vector per worker) to one vector with the
structure of a single worker. All are pure, ``jit``-able and ``vmap``-able, and
differentiable almost everywhere.

Non-finite inputs: a row (worker) holding any NaN or ±Inf counts as an outlier. The
coordinate-wise rules send NaN to +inf and trim or skip it; the distance-based rules give the
row an infinite distance (zero weight). So as long as at most ``f`` rows are non-finite the
robust rules return a finite vector; ``mean`` is not robust and returns NaN/Inf.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxlab.robust import _stack
from jaxlab.robust._sorting_network import order_statistics

PyTree = Any


def mean(x: PyTree) -> PyTree:
    r"""Average of the worker vectors (not robust: one bad row moves it arbitrarily).

    .. math:: \mathrm{Avg}(x_1, \dots, x_m) = \frac1m \sum_{i=1}^m x_i

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).

    Returns:
      ``[...]``: the mean, with the structure of one worker.

    Example:
      >>> mean(jnp.array([[0.0, 2.0], [2.0, 4.0]]))
      Array([1., 3.], dtype=float32)
    """
    matrix, unflatten = _stack.stack_to_matrix(x)
    return unflatten(_stack.sum_rows(matrix) / matrix.shape[0])


def _nan_to_inf(matrix: jax.Array) -> jax.Array:
    return jnp.where(jnp.isnan(matrix), jnp.inf, matrix)


def _nan_where_reached(value: jax.Array, matrix: jax.Array, top_rank: int) -> jax.Array:
    """NaN in the coordinates where the order statistic ``top_rank`` is a NaN entry.

    NaN entries sort above every number (``_nan_to_inf``), so with ``c`` of them in a
    coordinate the ranks ``m - c ... m - 1`` are NaN: a rule that reaches one of them has no
    finite answer, and returns NaN rather than +inf.
    """
    count = _stack.sum_rows(jnp.isnan(matrix).astype(matrix.dtype))
    return jnp.where(count >= matrix.shape[0] - top_rank, jnp.nan, value)


def coordinate_median(x: PyTree) -> PyTree:
    r"""Coordinate-wise median (CWMed).

    .. math:: [\mathrm{CWMed}(x_1, \dots, x_m)]_k = \mathrm{median}([x_1]_k, \dots, [x_m]_k)

    For even ``m`` the two middle values are averaged (numpy's convention). Computed with a
    sorting network over the worker axis (see ``_sorting_network``): ~100x faster than
    ``jnp.median(x, axis=0)`` on CPU at ``m = 17``. NaN entries sort above every number, so
    a minority of NaN rows is ignored; a coordinate where the median reaches a NaN entry
    (``≥ m/2`` of them) is NaN.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).

    Returns:
      ``[...]``: the coordinate-wise median.

    Example:
      >>> coordinate_median(jnp.array([[0.0], [1.0], [100.0]]))
      Array([1.], dtype=float32)

    References:
      Yin, Chen, Kannan, Bartlett. "Byzantine-robust distributed learning: towards optimal
      statistical rates", ICML 2018.
    """
    matrix, unflatten = _stack.stack_to_matrix(x)
    m = matrix.shape[0]
    ranks = (m // 2,) if m % 2 else (m // 2 - 1, m // 2)
    rows = order_statistics(_nan_to_inf(matrix), ranks)
    median = rows[0] if m % 2 else 0.5 * (rows[0] + rows[1])
    return unflatten(_nan_where_reached(median, matrix, ranks[-1]))


def trimmed_mean(x: PyTree, num_byzantine: int) -> PyTree:
    r"""Coordinate-wise trimmed mean (CWTM): drop the ``f`` largest and ``f`` smallest.

    .. math:: [\mathrm{CWTM}_f(x)]_k = \frac{1}{m - 2f} \sum_{j=f+1}^{m-f} [x]_{k,(j)}

    where :math:`[x]_{k,(j)}` is the ``j``-th smallest value of coordinate ``k``. NaN entries
    sort above every number: up to ``f`` of them per coordinate are trimmed away, more give
    NaN.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      num_byzantine: ``f``, with ``0 <= f < m / 2``.

    Returns:
      ``[...]``: the trimmed mean.

    Example:
      >>> trimmed_mean(jnp.array([[-100.0], [1.0], [2.0], [3.0], [100.0]]), 1)
      Array([2.], dtype=float32)

    References:
      Yin, Chen, Kannan, Bartlett. "Byzantine-robust distributed learning: towards optimal
      statistical rates", ICML 2018.
    """
    matrix, unflatten = _stack.stack_to_matrix(x)
    m = matrix.shape[0]
    f = _stack.check_num_byzantine(num_byzantine, m)
    if f == 0:
        return unflatten(_stack.sum_rows(matrix) / m)
    kept = order_statistics(_nan_to_inf(matrix), tuple(range(f, m - f)))
    trimmed = sum(kept[1:], start=kept[0]) / (m - 2 * f)
    return unflatten(_nan_where_reached(trimmed, matrix, m - f - 1))


def geometric_median(x: PyTree, num_iters: int = 3, smoothing: float = 0.1) -> PyTree:
    r"""Approximate geometric median by the smoothed Weiszfeld algorithm (RFA).

    .. math::
       z_{l+1} = \frac{\sum_i \beta_i x_i}{\sum_i \beta_i}, \qquad
       \beta_i = \frac{1}{\max(\nu, \lVert x_i - z_l \rVert_2)}, \qquad z_0 = 0

    approximating :math:`\arg\min_z \sum_i \lVert z - x_i \rVert_2`. Non-finite rows get
    weight 0.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      num_iters: ``T``, the number of Weiszfeld iterations (reference: 3).
      smoothing: ``ν > 0``, the floor on distances (reference: 0.1).

    Returns:
      ``[...]``: the approximate geometric median.

    Example:
      >>> geometric_median(jnp.array([[0.0], [1.0], [2.0]]), num_iters=10).round(2)
      Array([1.], dtype=float32)

    References:
      Pillutla, Kakade, Harchaoui. "Robust aggregation for federated learning", IEEE TSP
      2022. Weiszfeld, Tohoku Math. J. 1937.
    """
    if int(num_iters) < 1:
        raise ValueError(f"num_iters must be >= 1, got {num_iters}")
    if not smoothing > 0:
        raise ValueError(f"smoothing must be > 0, got {smoothing}")
    matrix, unflatten = _stack.stack_to_matrix(x)
    good = _stack.finite_rows(matrix)
    clean = _stack.zero_bad_rows(matrix, good)

    def weiszfeld_step(_, z):
        dist = jnp.sqrt(_stack.squared_distances_to(clean, z, good))
        beta = jnp.where(good, 1.0 / jnp.maximum(dist, smoothing), 0.0)
        return _stack.weighted_row_sum(beta, clean) / jnp.sum(beta)

    z0 = jnp.zeros(matrix.shape[1], matrix.dtype)
    return unflatten(jax.lax.fori_loop(0, int(num_iters), weiszfeld_step, z0))


def _krum_scores(matrix: jax.Array, f: int) -> jax.Array:
    """``[m]``: sum of squared distances to the ``m − f − 1`` nearest other rows."""
    m = matrix.shape[0]
    good = _stack.finite_rows(matrix)
    dist = _stack.pairwise_squared_distances(matrix, good)
    dist = jnp.where(jnp.eye(m, dtype=bool), jnp.inf, dist)  # exclude the row itself
    num_neighbours = m - f - 1
    if num_neighbours < 1:
        return jnp.where(good, 0.0, jnp.inf)
    nearest = -jax.lax.top_k(-dist, num_neighbours)[0]
    return jnp.sum(nearest, axis=1)


def krum(x: PyTree, num_byzantine: int) -> PyTree:
    r"""Krum: the worker vector closest to its ``m − f`` nearest neighbours.

    .. math::
       \mathrm{Krum}_f(x) = x_{i^\star}, \qquad
       i^\star = \arg\min_i \sum_{j \in N_i} \lVert x_i - x_j \rVert_2^2

    where :math:`N_i` are the ``m − f − 1`` nearest other vectors (the ``m − f`` nearest
    counting :math:`x_i` itself — the convention of ByzFL and Allouah et al. 2023; Blanchard
    et al. use ``m − f − 2``). Ties go to the lowest index.

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      num_byzantine: ``f``, with ``0 <= f < m / 2``.

    Returns:
      ``[...]``: the selected worker's vector.

    Example:
      >>> krum(jnp.array([[0.0], [0.1], [0.2], [50.0]]), 1)
      Array([0.1], dtype=float32)

    References:
      Blanchard, El Mhamdi, Guerraoui, Stainer. "Machine learning with adversaries:
      Byzantine tolerant gradient descent", NeurIPS 2017.
    """
    matrix, unflatten = _stack.stack_to_matrix(x)
    f = _stack.check_num_byzantine(num_byzantine, matrix.shape[0])
    best = jnp.argmin(_krum_scores(matrix, f))
    return unflatten(matrix[best])


def multi_krum(x: PyTree, num_byzantine: int, num_selected: int | None = None) -> PyTree:
    r"""Multi-Krum: the mean of the ``q`` vectors with the lowest Krum scores.

    .. math:: \mathrm{MultiKrum}_{f,q}(x) = \frac1q \sum_{i \in S_q} x_i

    with :math:`S_q` the ``q`` indices of smallest Krum score (see :func:`krum`).

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      num_byzantine: ``f``, with ``0 <= f < m / 2``.
      num_selected: ``q`` in ``[1, m]``; default ``m − f``.

    Returns:
      ``[...]``: the Multi-Krum average.

    Example:
      >>> multi_krum(jnp.array([[0.0], [1.0], [2.0], [50.0]]), 1)
      Array([1.], dtype=float32)

    References:
      Blanchard et al., NeurIPS 2017; El Mhamdi, Guerraoui, Rouault, ICML 2018.
    """
    matrix, unflatten = _stack.stack_to_matrix(x)
    m = matrix.shape[0]
    f = _stack.check_num_byzantine(num_byzantine, m)
    q = m - f if num_selected is None else int(num_selected)
    if not 1 <= q <= m:
        raise ValueError(f"num_selected must be in [1, m={m}], got {num_selected}")
    selected = jax.lax.top_k(-_krum_scores(matrix, f), q)[1]
    return unflatten(_stack.mean_of_rows(matrix, selected))


def centered_clipping(
    x: PyTree,
    center: PyTree | None = None,
    radius: float = 1.0,
    num_iters: int = 1,
) -> PyTree:
    r"""Centered clipping (CC): average the differences to a center, each clipped to τ.

    .. math::
       v_{l+1} = v_l + \frac1m \sum_{i=1}^m (x_i - v_l)
                 \min\Big(1, \frac{\tau}{\lVert x_i - v_l \rVert_2}\Big), \qquad v_0 = c

    A non-finite row contributes 0 (it is clipped away entirely).

    Args:
      x: ``[m, ...]`` stacked worker vectors (array or pytree of such).
      center: ``c``, one worker-shaped vector (e.g. the previous aggregate); default 0.
      radius: ``τ > 0``.
      num_iters: ``L >= 1`` clipping iterations.

    Returns:
      ``[...]``: ``v_L``.

    Example:
      >>> centered_clipping(jnp.array([[1.0], [1.0], [100.0]]), radius=1.0)
      Array([1.], dtype=float32)

    References:
      Karimireddy, He, Jaggi. "Learning from history for Byzantine robust optimization",
      ICML 2021.
    """
    if not radius > 0:
        raise ValueError(f"radius must be > 0, got {radius}")
    if int(num_iters) < 1:
        raise ValueError(f"num_iters must be >= 1, got {num_iters}")
    matrix, unflatten = _stack.stack_to_matrix(x)
    m, d = matrix.shape
    v0 = (
        jnp.zeros(d, matrix.dtype)
        if center is None
        else _stack.vector_like(center, d).astype(matrix.dtype)
    )

    def clip_step(_, v):
        # Two reads of x per step and no [m, d] temporary (CPU memory bandwidth is the cost:
        # ≈ 1.5x faster than zeroing bad rows into a copy and a matrix–vector product). A
        # row whose squared distance is not finite (NaN / ±Inf entries, or overflow, whose
        # clip factor τ / ∞ would be 0 anyway) contributes exactly 0.
        diff = matrix - v[None, :]
        sq = jnp.sum(diff * diff, axis=1)
        good = jnp.isfinite(sq)
        norm = jnp.sqrt(jnp.maximum(sq, jnp.finfo(matrix.dtype).tiny))
        scale = jnp.where(good, radius / jnp.maximum(norm, radius), 0.0)
        return v + _stack.masked_weighted_row_sum(scale, diff, good) / m

    return unflatten(jax.lax.fori_loop(0, int(num_iters), clip_step, v0))
