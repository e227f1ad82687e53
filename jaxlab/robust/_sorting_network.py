"""Order statistics over the (small) worker axis with a sorting network.

``jnp.sort`` / ``jnp.median`` over axis 0 of a ``[m, d]`` matrix sorts ``d`` short columns
with a generic comparison sort, which XLA:CPU runs slowly for large ``d``. For the small
``m`` of Byzantine-robust training a fixed comparator network is much faster: it is a
straight-line program of ``jnp.minimum`` / ``jnp.maximum`` over whole rows, which XLA fuses
into one vectorized loop over the coordinates, and it is differentiable (sub-gradients of
min / max) and ``vmap``-able like any elementwise code.

The network is Batcher's odd–even merge sort for the next power of two, with comparators that
touch padding positions (``>= m``, conceptually +inf) dropped, then pruned backwards to the
comparators that can influence the requested ranks.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

# Above this many workers the network grows as m log² m comparators; fall back to jnp.sort.
MAX_NETWORK_SIZE = 64


@functools.cache
def batcher_comparators(m: int) -> tuple[tuple[int, int], ...]:
    """Comparators ``(i, j)``, ``i < j``, of Batcher's odd–even merge sort on ``m`` inputs."""
    n = 1
    while n < m:
        n *= 2
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    # A comparator against a padding slot (+inf) never moves anything: drop it.
    return tuple((a, b) for a, b in pairs if b < m)


@functools.cache
def pruned_comparators(m: int, ranks: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The comparators of the network that can influence the outputs at ``ranks``."""
    needed = set(ranks)
    kept = []
    for a, b in reversed(batcher_comparators(m)):
        if a in needed or b in needed:
            kept.append((a, b))
            needed.update((a, b))
    return tuple(reversed(kept))


def order_statistics(x: jax.Array, ranks: tuple[int, ...]) -> list[jax.Array]:
    """The rows of ``sort(x, axis=0)`` at ``ranks`` (0 = smallest).

    Args:
      x: ``[m, d]``; NaN must have been mapped to +inf by the caller (min/max propagate NaN).
      ranks: static ranks in ``[0, m)``.

    Returns:
      one ``[d]`` array per rank.
    """
    m = x.shape[0]
    if m > MAX_NETWORK_SIZE:
        s = jnp.sort(x, axis=0)
        return [s[r] for r in ranks]
    rows = [x[i] for i in range(m)]
    for a, b in pruned_comparators(m, tuple(sorted(set(ranks)))):
        lo = jnp.minimum(rows[a], rows[b])
        hi = jnp.maximum(rows[a], rows[b])
        rows[a], rows[b] = lo, hi
    return [rows[r] for r in ranks]
