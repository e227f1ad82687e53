"""Graph attacks: random edge flips, feature noise and a PGD structure attack (JAX).

Attacks never read evaluation labels: the PGD attack's loss uses the training labels and
the surrogate model's own predictions elsewhere (self-training labels, as Metattack).

References:
  Xu, Chen, Liu, Chen, Weng, Hong, Lin. "Topology Attack and Defense for Graph Neural
  Networks: An Optimization Perspective". IJCAI 2019.
  Liu et al. "Graph Adversarial Diffusion Convolution". ICML 2024 (feature-noise setups).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def _check_square(adj: jax.Array) -> None:
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adj must be a square [n, n] matrix, got shape {adj.shape}")


def _budget(adj: jax.Array, rate: float) -> int:
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"budget rate must lie in [0, 1], got {rate}")
    num_edges = int(jnp.sum(jnp.triu(adj, 1) != 0))
    return int(rate * num_edges)


def random_edge_flips(key: jax.Array, adj: ArrayLike, rate: float) -> jax.Array:
    """Flips ``⌊rate · |E|⌋`` distinct node pairs of a symmetric ``[n, n]`` 0/1 adjacency.

    Args:
      key: PRNG key.
      adj: ``[n, n]`` symmetric 0/1 adjacency without self-loops.
      rate: budget as a fraction of the undirected edge count.

    Returns:
      The perturbed symmetric ``[n, n]`` adjacency.
    """
    adj = jnp.asarray(adj)
    _check_square(adj)
    n = adj.shape[0]
    budget = _budget(adj, rate)
    rows, cols = jnp.triu_indices(n, 1)
    chosen = jax.random.choice(key, rows.shape[0], (budget,), replace=False)
    flips = jnp.zeros((n, n), adj.dtype).at[rows[chosen], cols[chosen]].set(1.0)
    flips = flips + flips.T
    return adj + (1.0 - 2.0 * adj) * flips


def gaussian_feature_noise(key: jax.Array, x: ArrayLike, scale: float) -> jax.Array:
    """``x + ξ·N(0, I)`` with ξ = ``scale``; ``x: [n, d]``."""
    x = jnp.asarray(x)
    if scale < 0:
        raise ValueError(f"scale (ξ) must be non-negative, got {scale}")
    return x + scale * jax.random.normal(key, x.shape, x.dtype)


def flip_feature_noise(key: jax.Array, x: ArrayLike, p: float) -> jax.Array:
    """Flips each entry of binary features ``x: [n, d]`` with probability ``p``."""
    x = jnp.asarray(x)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    flip = jax.random.bernoulli(key, p, x.shape)
    return jnp.where(flip, 1.0 - x, x)


def _project_budget(s: jax.Array, budget: float, iters: int = 30) -> jax.Array:
    """Euclidean projection onto {0 ≤ s ≤ 1, Σ s ≤ budget} by bisection on the shift μ."""
    clipped = jnp.clip(s, 0.0, 1.0)

    def shifted(mu):
        return jnp.clip(s - mu, 0.0, 1.0)

    def bisect(_, bounds):
        lo, hi = bounds
        mid = 0.5 * (lo + hi)
        over = jnp.sum(shifted(mid)) > budget
        return jnp.where(over, mid, lo), jnp.where(over, hi, mid)

    lo, hi = jax.lax.fori_loop(0, iters, bisect, (jnp.min(s) - 1.0, jnp.max(s)))
    return jnp.where(jnp.sum(clipped) <= budget, clipped, shifted(hi))


def pgd_structure_attack(
    key: jax.Array,
    adj: ArrayLike,
    loss_fn: Callable[[jax.Array], jax.Array],
    rate: float,
    *,
    steps: int = 100,
    lr: float = 200.0,
    num_samples: int = 20,
) -> jax.Array:
    """PGD topology attack on a relaxed adjacency (Xu et al. 2019), fixed edge budget.

    Maximizes ``loss_fn(A')`` over ``A' = A + (1 − 2A) ⊙ S`` with ``S`` symmetric,
    ``S_ij ∈ [0, 1]`` and ``Σ_{i<j} S_ij ≤ B = ⌊rate·|E|⌋``: projected gradient ascent with
    step ``lr/√t`` (Xu et al., Eq. (9)–(10)), then ``num_samples`` Bernoulli(S) draws
    (rescaled to the budget when they exceed it) and the draw with the largest loss.

    For an evasion attack ``loss_fn`` evaluates a trained model on ``A'``; for poisoning,
    train a model on the returned graph.

    Args:
      key: PRNG key (sampling).
      adj: ``[n, n]`` symmetric 0/1 adjacency without self-loops.
      loss_fn: differentiable ``[n, n] -> scalar`` attack objective (higher = worse model).
      rate: budget as a fraction of the clean undirected edge count.
      steps: PGD iterations.
      lr: base step size.
      num_samples: random roundings tried.

    Returns:
      The perturbed symmetric 0/1 ``[n, n]`` adjacency with at most ``B`` flipped pairs.
    """
    adj = jnp.asarray(adj, jnp.float32)
    _check_square(adj)
    n = adj.shape[0]
    budget = _budget(adj, rate)
    upper = jnp.triu(jnp.ones((n, n), bool), 1)

    def perturbed(s_upper):
        s = s_upper + s_upper.T
        return adj + (1.0 - 2.0 * adj) * s

    grad_fn = jax.grad(lambda s: loss_fn(perturbed(jnp.where(upper, s, 0.0))))

    def step(t, s):
        g = grad_fn(s)
        s = s + lr / jnp.sqrt(t + 1.0) * g  # ascent step, Xu et al. Eq. (9)
        return jnp.where(upper, _project_budget(jnp.where(upper, s, 0.0), budget), 0.0)

    s = jax.lax.fori_loop(0, steps, step, jnp.zeros((n, n), jnp.float32))

    def sample(k):
        draw = jax.random.bernoulli(k, s).astype(jnp.float32) * upper
        # Keep the B largest-probability flips when a draw exceeds the budget.
        scores = jnp.where(draw > 0, s, -1.0).ravel()
        top = jax.lax.top_k(scores, budget)[1]
        keep = jnp.zeros((n * n,), jnp.float32).at[top].set(1.0).reshape(n, n) * draw
        draw = jnp.where(jnp.sum(draw) > budget, keep, draw)
        return draw, loss_fn(perturbed(draw))

    draws, losses = jax.lax.map(sample, jax.random.split(key, num_samples))
    best = draws[jnp.argmax(losses)]
    return perturbed(best)


def pseudo_labels(logits: jax.Array, labels: ArrayLike, train_mask: ArrayLike) -> jax.Array:
    """Training labels on training nodes, the model's predictions elsewhere (``[n]``)."""
    return jnp.where(jnp.asarray(train_mask), jnp.asarray(labels), jnp.argmax(logits, -1))
