"""The adaptive structure attack behind Table 2 of GADC: Mujkanovic et al.'s "Aux-Attack".

A model trained on the clean graph (the "auxiliary" model: the defended model itself) is
attacked white-box: projected gradient descent (PGD, Xu et al. 2019) on relaxed edge flips
``P ∈ [0, 1]^{n×n}`` (symmetric, zero diagonal, ``Σ_{i<j} P_ij ≤ B``) minimizes the mean
``tanh`` of the classification margin of the attacked nodes, then the best of Bernoulli(P)
samples within the budget is kept. The perturbed graph ``A' = A + P ⊙ (1 − 2A)`` is then
used at test time (evasion) or to train a fresh model (poisoning). This is the attack and
the linear two-layer GCN of the GADC reference's ``Adaptive_Adversarial_Attack`` scripts
(which import Mujkanovic et al.'s ``gb`` package); hand-written because no maintained JAX
library has it.

Conventions follow ``gb.attack.proj_grad_descent``: step size ``base_lr · B / √(t + 1)``,
Euclidean projection onto ``{0 ≤ P ≤ 1, Σ P ≤ B}`` by bisection on the shift ``μ ≥ 0`` to
a tolerance ``ξ``, and ``sampling_tries`` samples that respect the budget (draws over the
budget are redrawn).

References:
  Mujkanovic, Geisler, Günnemann, Bojchevski. "Are Defenses for Graph Neural Networks
  Robust?". NeurIPS 2022.
  Xu, Chen, Liu, Chen, Weng, Hong, Lin. "Topology Attack and Defense for Graph Neural
  Networks: An Optimization Perspective". IJCAI 2019.
  Liu et al. "Graph Adversarial Diffusion Convolution". ICML 2024 (Section 4.1, Table 2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab.graph.models import dropout as _dropout


class GCNParams(NamedTuple):
    """Parameters of a two-layer GCN: ``w0: [d, h]``, ``b0: [h]``, ``w1: [h, c]``, ``b1: [c]``."""

    w0: jax.Array
    b0: jax.Array
    w1: jax.Array
    b1: jax.Array


def init_gcn(key: jax.Array, num_features: int, hidden: int, num_classes: int) -> GCNParams:
    """Glorot-uniform weights and zero biases (the PyTorch Geometric init ``gb`` uses).

    Example:
      >>> from jaxlab.graph.aux_attack import init_gcn
      >>> p = init_gcn(jax.random.key(0), 5, 4, 3)
      >>> p.w0.shape, p.b1.shape
      ((5, 4), (3,))
    """
    if min(num_features, hidden, num_classes) < 1:
        raise ValueError(f"sizes must be >= 1, got {(num_features, hidden, num_classes)}")
    k0, k1 = jax.random.split(key)
    glorot = jax.nn.initializers.glorot_uniform()
    return GCNParams(glorot(k0, (num_features, hidden)), jnp.zeros((hidden,)),
                     glorot(k1, (hidden, num_classes)), jnp.zeros((num_classes,)))


def gcn_logits(
    params: GCNParams,
    adj: ArrayLike,
    x: ArrayLike,
    *,
    activation: str = "none",
    dropout_rate: float = 0.0,
    key: jax.Array | None = None,
) -> jax.Array:
    """Two-layer GCN on a dense (possibly relaxed or weighted) adjacency.

    ``Â (σ(Â X W₀ + b₀)) W₁ + b₁`` with ``Â = D̃^{-1/2}(A + I)D̃^{-1/2}`` (Kipf & Welling
    Eq. (2)), ``σ`` the identity (``activation="none"``, the model of the GADC adaptive
    experiments: a linear two-hop model, SGC-like) or ReLU, and dropout on the hidden layer
    when ``key`` is given. Differentiable in ``adj``.

    Args:
      params: :class:`GCNParams`.
      adj: ``[n, n]`` symmetric non-negative adjacency (0/1, relaxed, or GADC's ``T``).
      x: ``[n, d]`` features.
      activation: ``"none"`` or ``"relu"``.
      dropout_rate: hidden-layer dropout in training (used only with ``key``).
      key: PRNG key for dropout; ``None`` evaluates.

    Returns:
      ``[n, c]`` logits.

    Example:
      >>> from jaxlab.graph.aux_attack import gcn_logits, init_gcn
      >>> adj = jnp.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
      >>> p = init_gcn(jax.random.key(0), 2, 4, 3)
      >>> gcn_logits(p, adj, jnp.ones((3, 2))).shape
      (3, 3)
    """
    adj, x = jnp.asarray(adj), jnp.asarray(x)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adj must be a square [n, n] matrix, got shape {adj.shape}")
    if x.ndim != 2 or x.shape[0] != adj.shape[0] or x.shape[1] != params.w0.shape[0]:
        raise ValueError(f"x must be [{adj.shape[0]}, {params.w0.shape[0]}], got {x.shape}")
    if activation not in ("none", "relu"):
        raise ValueError(f"activation must be 'none' or 'relu', got {activation!r}")
    # Â v = D̃^{-1/2} (A + I) D̃^{-1/2} v, applied to the narrow [n, k] operand instead of
    # forming Â: one pass over the [n, n] adjacency per product (and in the backward pass).
    inv_sqrt = jax.lax.rsqrt(jnp.maximum(jnp.sum(adj, axis=1) + 1.0, 1e-5))[:, None]

    def propagate(v):
        u = inv_sqrt * v
        return inv_sqrt * (adj @ u + u)

    if activation == "none" and (key is None or dropout_rate == 0.0):
        # Linear model: Â(Â X W₀ + b₀) W₁ = Â(Â (X W₀ W₁) + b₀ W₁), c columns instead of h.
        h = propagate(x @ (params.w0 @ params.w1)) + (params.b0 @ params.w1)[None, :]
        return propagate(h) + params.b1[None, :]
    h = propagate(x @ params.w0) + params.b0[None, :]
    if activation == "relu":
        h = jax.nn.relu(h)
    if key is not None and dropout_rate > 0.0:
        h = _dropout(key, h, dropout_rate)
    return propagate(h @ params.w1) + params.b1[None, :]


def margin(logits: ArrayLike, labels: ArrayLike) -> jax.Array:
    """Classification margin ``z_{i,y_i} − max_{c ≠ y_i} z_{i,c}`` (``[n, c]``, ``[n]`` → ``[n]``).

    Positive where node ``i`` is classified correctly.

    Example:
      >>> from jaxlab.graph.aux_attack import margin
      >>> margin(jnp.array([[3.0, 1.0, 0.0], [0.0, 2.0, 5.0]]), jnp.array([0, 1])).tolist()
      [2.0, -3.0]
    """
    logits, labels = jnp.asarray(logits), jnp.asarray(labels)
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise ValueError(f"logits must be [n, c] and labels [n], got {logits.shape} and "
                         f"{labels.shape}")
    true = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    is_true = jnp.arange(logits.shape[1])[None, :] == labels[:, None]
    other = jnp.max(jnp.where(is_true, -jnp.inf, logits), axis=1)
    return true - other


def tanh_margin_loss(logits: ArrayLike, labels: ArrayLike, mask: ArrayLike) -> jax.Array:
    """Mean ``tanh(margin)`` over the nodes in ``mask`` — the loss Aux-Attack minimizes.

    Args:
      logits: ``[n, c]``.
      labels: ``[n]`` integer labels.
      mask: ``[n]`` boolean (the attacked nodes).

    Returns:
      A scalar in ``[−1, 1]``.

    Example:
      >>> from jaxlab.graph.aux_attack import tanh_margin_loss
      >>> z = jnp.array([[3.0, 1.0], [0.0, 2.0]])
      >>> round(float(tanh_margin_loss(z, jnp.array([0, 0]), jnp.array([True, False]))), 4)
      0.964
    """
    m = margin(logits, labels)
    w = jnp.asarray(mask).astype(m.dtype)
    if w.shape != m.shape:
        raise ValueError(f"mask must be [{m.shape[0]}], got {w.shape}")
    return jnp.sum(jnp.tanh(m) * w) / jnp.maximum(jnp.sum(w), 1.0)


def flip_edges(adj: ArrayLike, flips: ArrayLike) -> jax.Array:
    """``A + P ⊙ (1 − 2A)``: flips the (relaxed) pairs ``P`` of a 0/1 adjacency ``[n, n]``.

    Example:
      >>> from jaxlab.graph.aux_attack import flip_edges
      >>> flip_edges(jnp.array([[0.0, 1.0], [1.0, 0.0]]), jnp.ones((2, 2))).tolist()
      [[1.0, 0.0], [0.0, 1.0]]
    """
    adj, flips = jnp.asarray(adj), jnp.asarray(flips)
    if adj.shape != flips.shape:
        raise ValueError(f"adj and flips must have one shape, got {adj.shape} and {flips.shape}")
    return adj + flips * (1.0 - 2.0 * adj)


def project_flip_budget(s: ArrayLike, budget: float, *, tol: float = 1e-5) -> jax.Array:
    """Euclidean projection onto ``{P : 0 ≤ P ≤ 1, Σ P ≤ budget}`` (Xu et al. Eq. (10)).

    ``clip(s, 0, 1)`` when that is within the budget, else ``clip(s − μ, 0, 1)`` with the
    shift ``μ > 0`` that spends the budget exactly: the root of the decreasing, piecewise
    linear ``f(μ) = Σ clip(s − μ, 0, 1) − budget`` in the bracket
    ``[max(min s − 1, 0), max s]`` (``gb``'s bracket). ``gb`` bisects to a half-width ``ξ``
    (about 23 passes over ``s``); here Newton steps from the current point (slope = the
    number of entries in the linear part), safeguarded by bisection whenever a step leaves
    the bracket (and every fourth step, so the bracket at least halves every four steps);
    stop once a step or the bracket is below ``tol`` — the same root to the same tolerance,
    usually in a few passes.

    Args:
      s: array of any shape.
      budget: ``B > 0``.
      tol: tolerance on ``μ``.

    Returns:
      The projection, same shape as ``s``.

    Example:
      >>> from jaxlab.graph.aux_attack import project_flip_budget
      >>> p = project_flip_budget(jnp.array([2.0, 0.5, 0.5]), 1.0)
      >>> [round(v, 3) for v in p.tolist()]
      [1.0, 0.0, 0.0]
    """
    s = jnp.asarray(s)
    if not budget > 0:
        raise ValueError(f"budget must be > 0, got {budget}")
    budget = jnp.asarray(budget, s.dtype)

    def excess_and_slope(mu):
        t = s - mu
        return (jnp.sum(jnp.clip(t, 0.0, 1.0)) - budget,
                jnp.sum(((t > 0) & (t < 1)).astype(s.dtype)))

    def cond(c):
        bot, top, _, _, _, step, _ = c
        return (top - bot > 2 * tol) & (step > tol)

    def body(c):
        bot, top, mu, f, slope, _, i = c
        newton = mu + f / jnp.maximum(slope, 1.0)
        # Every fourth step bisects, so the bracket at least halves every four steps.
        ok = (slope > 0) & (newton > bot) & (newton < top) & (i % 4 != 3)
        new = jnp.where(ok, newton, 0.5 * (bot + top))
        f_new, slope_new = excess_and_slope(new)
        bot, top = jnp.where(f_new > 0, new, bot), jnp.where(f_new > 0, top, new)
        step = jnp.where(f_new == 0, 0.0, jnp.abs(new - mu))
        return bot, top, new, f_new, slope_new, step, i + 1

    bot0 = jnp.maximum(jnp.min(s) - 1.0, 0.0)
    f0, slope0 = excess_and_slope(bot0)
    init = (bot0, jnp.max(s), bot0, f0, slope0, jnp.array(jnp.inf, s.dtype), jnp.array(0))
    mu = jax.lax.while_loop(cond, body, init)[2]
    clipped = jnp.clip(s, 0.0, 1.0)
    return jnp.where(jnp.sum(clipped) <= budget, clipped, jnp.clip(s - mu, 0.0, 1.0))


def pgd_flip_attack(
    key: jax.Array,
    loss_fn: Callable[[jax.Array], jax.Array],
    num_nodes: int,
    budget: int,
    *,
    iterations: int = 200,
    base_lr: float = 0.1,
    tol: float = 1e-5,
    sampling_tries: int = 100,
    max_draws: int = 100,
    max_candidates: int | None = None,
) -> tuple[jax.Array, jax.Array]:
    """PGD on relaxed edge flips, then the best Bernoulli sample within the budget.

    Minimizes ``loss_fn(P)`` over symmetric ``P`` with a zero diagonal, ``P_ij ∈ [0, 1]``
    and ``Σ_{i<j} P_ij ≤ B``, one number per node pair:
    ``P ← Π(P − base_lr · B/√(t+1) · ∇L)`` (Xu et al. Eq. (9); ``∇L`` is the gradient with
    respect to the pair, ``∂L/∂P_ij + ∂L/∂P_ji``; ``Π`` is :func:`project_flip_budget`) for
    ``iterations`` steps from ``P = 0``; then ``sampling_tries`` draws ``Bernoulli(P)`` of
    the pairs with at most ``B`` flips (a draw over the budget is redrawn, up to
    ``max_draws`` times) and the draw of lowest loss is returned.

    Args:
      key: PRNG key (sampling).
      loss_fn: ``[n, n] -> scalar`` loss of the symmetric flip matrix, to be minimized
        (for Aux-Attack: :func:`tanh_margin_loss` of the model on
        ``flip_edges(adj, P)``); differentiable.
      num_nodes: ``n``.
      budget: ``B``, the number of node pairs that may be flipped.
      iterations: PGD steps.
      base_lr: base step size (multiplied by ``B/√(t+1)``).
      tol: tolerance of the projection's shift.
      sampling_tries: samples within the budget that are scored.
      max_draws: draws per try before giving up on that try (its loss counts as +∞).
      max_candidates: static bound on the number of pairs with ``P_ij > 0`` the sampler
        draws from (``None``: all ``n(n−1)/2`` pairs). When more pairs are positive the
        sampler falls back to drawing all pairs, so the result does not depend on it; it
        only makes the usual case (a few thousand positive pairs) cheap.

    Returns:
      ``(flips, loss)``: the chosen symmetric 0/1 ``[n, n]`` flip matrix (at most ``B``
      pairs) and ``loss_fn(flips)``.

    Example:
      >>> from jaxlab.graph.aux_attack import pgd_flip_attack
      >>> w = jnp.array([[0.0, -1.0, 2.0], [-1.0, 0.0, 0.5], [2.0, 0.5, 0.0]])
      >>> flips, loss = pgd_flip_attack(jax.random.key(0), lambda p: jnp.sum(w * p), 3, 1,
      ...                               iterations=20, sampling_tries=4)
      >>> flips.tolist(), float(loss)  # flipping pair (0, 1) is the only helpful flip
      ([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], -2.0)
    """
    if num_nodes < 2:
        raise ValueError(f"num_nodes must be >= 2, got {num_nodes}")
    if int(budget) != budget or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget}")
    if iterations < 1 or sampling_tries < 1 or max_draws < 1:
        raise ValueError("iterations, sampling_tries and max_draws must be >= 1, got "
                         f"{(iterations, sampling_tries, max_draws)}")
    n = num_nodes
    num_pairs = n * (n - 1) // 2
    k_max = num_pairs if max_candidates is None else min(int(max_candidates), num_pairs)
    if k_max < 1:
        raise ValueError(f"max_candidates must be >= 1, got {max_candidates}")
    off_diag = ~jnp.eye(n, dtype=bool)
    grad_fn = jax.grad(loss_fn)

    def step(t, p):
        g = grad_fn(p)
        lr = base_lr * budget / jnp.sqrt(t + 1.0)  # Xu et al. Eq. (9), gb's schedule
        p = jnp.where(off_diag, p - lr * (g + g.T), 0.0)
        # P holds every pair twice, so the pair budget B is 2B over the matrix (same μ).
        return project_flip_budget(p, 2.0 * budget, tol=tol)

    probs = jax.lax.fori_loop(0, iterations, step, jnp.zeros((n, n), jnp.float32))
    rows, cols = jnp.triu_indices(n, 1)
    upper = jnp.triu(probs, 1)
    # The pairs that can be drawn, in row-major order of the upper triangle.
    cand = jnp.nonzero(upper > 0, size=k_max, fill_value=0)
    cand_probs = jnp.where(jnp.arange(k_max) < jnp.sum(upper > 0), upper[cand], 0.0)

    def draw(k):
        def few(k):
            hit = jax.random.bernoulli(k, cand_probs).astype(jnp.float32)
            return jnp.zeros((n, n), jnp.float32).at[cand].max(hit)

        def all_pairs(k):
            hit = jax.random.bernoulli(k, probs[rows, cols]).astype(jnp.float32)
            return jnp.zeros((n, n), jnp.float32).at[rows, cols].set(hit)

        if k_max == num_pairs:
            return all_pairs(k)
        return jax.lax.cond(jnp.sum(upper > 0) <= k_max, few, all_pairs, k)

    def one_try(k):
        def cond(c):
            i, sample, _ = c
            return (jnp.sum(sample) > budget) & (i < max_draws)

        def body(c):
            i, _, kk = c
            kk, sub = jax.random.split(kk)
            return i + 1, draw(sub), kk

        k, first = jax.random.split(k)
        _, sample, _ = jax.lax.while_loop(cond, body, (jnp.array(1), draw(first), k))
        flips = sample + sample.T
        loss = jnp.where(jnp.sum(sample) <= budget, loss_fn(flips), jnp.inf)
        return flips, loss

    def best_of(carry, k):
        best_flips, best_loss = carry
        flips, loss = one_try(k)
        better = loss < best_loss  # strict: the first of equal losses is kept, as gb
        return (jnp.where(better, flips, best_flips), jnp.where(better, loss, best_loss)), None

    init = (jnp.zeros((n, n), jnp.float32), jnp.array(jnp.inf, jnp.float32))
    (flips, loss), _ = jax.lax.scan(best_of, init, jax.random.split(key, sampling_tries))
    return flips, loss
