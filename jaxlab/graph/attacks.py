"""Graph attacks: random edge flips, feature noise and one PGD structure attack (JAX).

:func:`pgd_structure_attack` is Xu et al.'s (2019) projected-gradient topology attack on
relaxed edge flips; the objective's sign (``objective="maximize"`` for a loss the attacker
raises, ``"minimize"`` for a margin it lowers) and the form of the budget (``budget_form=
"flips"``: a number of node pairs; ``"rate"``: a fraction of the clean edge count) are
arguments. With ``objective="minimize"``, the tanh-margin loss of the test nodes and the
defaults of Mujkanovic et al.'s ``gb`` package it is the "Aux-Attack" of GADC's Table 2.

References:
  Xu, Chen, Liu, Chen, Weng, Hong, Lin. "Topology Attack and Defense for Graph Neural
  Networks: An Optimization Perspective". IJCAI 2019.
  Mujkanovic, Geisler, Günnemann, Bojchevski. "Are Defenses for Graph Neural Networks
  Robust?". NeurIPS 2022.
  Liu et al. "Graph Adversarial Diffusion Convolution". ICML 2024 (Section 4.1, Table 2;
  feature-noise setups).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_key, check_range, check_square, is_traced

Objective = Literal["maximize", "minimize"]
BudgetForm = Literal["flips", "rate"]


def edge_budget(adj: ArrayLike, rate: float) -> int:
    """``⌊rate · |E|⌋`` for a concrete symmetric ``[n, n]`` adjacency (``|E|``: pairs i < j).

    Example:
      >>> edge_budget(jnp.array([[0.0, 1.0], [1.0, 0.0]]), 1.0)
      1
    """
    check_range("rate", rate, 0.0, 1.0)
    if is_traced(adj):
        raise ValueError(
            "adj must be concrete to turn a rate into a budget; pass "
            "budget_form='flips' with a number of pairs under jit"
        )
    adj = np.asarray(adj)
    check_square("adj", adj)
    return int(rate * int(np.sum(np.triu(adj, 1) != 0)))


def random_edge_flips(key: jax.Array, adj: ArrayLike, rate: float) -> jax.Array:
    """Flips ``⌊rate · |E|⌋`` distinct node pairs of a symmetric ``[n, n]`` 0/1 adjacency.

    Args:
      key: PRNG key.
      adj: concrete ``[n, n]`` symmetric 0/1 adjacency without self-loops (float or int;
        ints are promoted to float32).
      rate: budget as a fraction of the undirected edge count, in ``[0, 1]``.

    Returns:
      The perturbed symmetric ``[n, n]`` adjacency (float).
    """
    check_key("key", key)
    adj = as_float("adj", adj)
    budget = edge_budget(adj, rate)
    n = adj.shape[0]
    rows, cols = jnp.triu_indices(n, 1)
    chosen = jax.random.choice(key, rows.shape[0], (budget,), replace=False)
    flips = jnp.zeros((n, n), adj.dtype).at[rows[chosen], cols[chosen]].set(1.0)
    return flip_edges(adj, flips + flips.T)


def gaussian_feature_noise(key: jax.Array, x: ArrayLike, scale: float) -> jax.Array:
    """``x + ξ·N(0, I)`` with ξ = ``scale ≥ 0``; ``x: [n, d]`` (ints promoted to float32)."""
    check_key("key", key)
    x = as_float("x", x, ndim=2)
    check_range("scale", scale, 0.0, None)
    return x + scale * jax.random.normal(key, x.shape, x.dtype)


def flip_feature_noise(key: jax.Array, x: ArrayLike, p: float) -> jax.Array:
    """Flips each entry of binary features ``x: [n, d]`` with probability ``p ∈ [0, 1]``."""
    check_key("key", key)
    x = as_float("x", x, ndim=2)
    check_range("p", p, 0.0, 1.0)
    flip = jax.random.bernoulli(key, p, x.shape)
    return jnp.where(flip, 1.0 - x, x)


def flip_edges(adj: ArrayLike, flips: ArrayLike) -> jax.Array:
    """``A + P ⊙ (1 − 2A)``: flips the (relaxed) pairs ``P`` of a 0/1 adjacency ``[n, n]``.

    Example:
      >>> flip_edges(jnp.array([[0.0, 1.0], [1.0, 0.0]]), jnp.ones((2, 2))).tolist()
      [[1.0, 0.0], [0.0, 1.0]]
    """
    adj, flips = jnp.asarray(adj), jnp.asarray(flips)
    if adj.shape != flips.shape:
        raise ValueError(f"adj and flips must have one shape, got {adj.shape} and {flips.shape}")
    return adj + flips * (1.0 - 2.0 * adj)


def margin(logits: ArrayLike, labels: ArrayLike) -> jax.Array:
    """Classification margin ``z_{i,y_i} − max_{c ≠ y_i} z_{i,c}`` (``[n, c]``, ``[n]`` → ``[n]``).

    Positive where node ``i`` is classified correctly.

    Example:
      >>> margin(jnp.array([[3.0, 1.0, 0.0], [0.0, 2.0, 5.0]]), jnp.array([0, 1])).tolist()
      [2.0, -3.0]
    """
    logits, labels = jnp.asarray(logits), jnp.asarray(labels)
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise ValueError(
            f"logits must be [n, c] and labels [n], got {logits.shape} and {labels.shape}"
        )
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise ValueError(f"labels must be integers, got dtype {labels.dtype}")
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
      >>> z = jnp.array([[3.0, 1.0], [0.0, 2.0]])
      >>> round(float(tanh_margin_loss(z, jnp.array([0, 0]), jnp.array([True, False]))), 4)
      0.964
    """
    m = margin(logits, labels)
    w = jnp.asarray(mask).astype(m.dtype)
    if w.shape != m.shape:
        raise ValueError(f"mask must be [{m.shape[0]}], got {w.shape}")
    return jnp.sum(jnp.tanh(m) * w) / jnp.maximum(jnp.sum(w), 1.0)


def project_flip_budget(s: ArrayLike, budget: float, *, tol: float = 1e-5) -> jax.Array:
    """Euclidean projection onto ``{P : 0 ≤ P ≤ 1, Σ P ≤ budget}`` (Xu et al. Eq. (10)).

    ``clip(s, 0, 1)`` when that is within the budget, else ``clip(s − μ, 0, 1)`` with the
    shift ``μ > 0`` that spends the budget exactly: the root of the decreasing, piecewise
    linear ``f(μ) = Σ clip(s − μ, 0, 1) − budget`` in the bracket
    ``[max(min s − 1, 0), max s]`` (``gb``'s bracket). Newton steps from the current point
    (slope = the number of entries in the linear part), safeguarded by bisection whenever a
    step leaves the bracket (and every fourth step, so the bracket at least halves every
    four steps); stop once a step or the bracket is below ``tol`` — the root ``gb``'s
    bisection finds, usually in a few passes over ``s``.

    Args:
      s: float array of any shape.
      budget: ``B ≥ 0`` (concrete; ``B = 0`` projects onto 0).
      tol: tolerance on ``μ``, ``> 0``.

    Returns:
      The projection, same shape as ``s``.

    Example:
      >>> p = project_flip_budget(jnp.array([2.0, 0.5, 0.5]), 1.0)
      >>> [round(v, 3) for v in p.tolist()]
      [1.0, 0.0, 0.0]
    """
    s = as_float("s", s)
    check_range("budget", budget, 0.0, None)
    check_range("tol", tol, 0.0, None, low_open=True)
    cap = jnp.asarray(budget, s.dtype)

    def excess_and_slope(mu):
        t = s - mu
        return (
            jnp.sum(jnp.clip(t, 0.0, 1.0)) - cap,
            jnp.sum(((t > 0) & (t < 1)).astype(s.dtype)),
        )

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
    return jnp.where(jnp.sum(clipped) <= cap, clipped, jnp.clip(s - mu, 0.0, 1.0))


def pgd_structure_attack(
    key: jax.Array,
    adj: ArrayLike,
    loss_fn: Callable[[jax.Array], jax.Array],
    budget: float,
    *,
    objective: Objective,
    budget_form: BudgetForm,
    iterations: int,
    base_lr: float,
    sampling_tries: int,
    max_draws: int,
    tol: float = 1e-5,
    max_candidates: int | None = None,
) -> tuple[jax.Array, jax.Array]:
    """PGD topology attack on relaxed edge flips (Xu et al. 2019), then the best sample.

    Optimizes ``loss_fn(A')`` over ``A' = A + P ⊙ (1 − 2A)`` with ``P`` symmetric, a zero
    diagonal, ``P_ij ∈ [0, 1]`` and ``Σ_{i<j} P_ij ≤ B``, one number per node pair:
    ``P ← Π(P ∓ base_lr · B/√(t+1) · ∇L)`` (Xu et al. Eq. (9), with ``gb``'s step
    schedule; ``−`` minimizes, ``+`` maximizes; ``∇L`` is the gradient with respect to the
    pair, ``∂L/∂P_ij + ∂L/∂P_ji``; ``Π`` is :func:`project_flip_budget`, Eq. (10)) for
    ``iterations`` steps from ``P = 0``; then ``sampling_tries`` draws ``Bernoulli(P)`` of
    the pairs with at most ``B`` flips (a draw over the budget is redrawn, up to
    ``max_draws`` times, as ``gb``) and the draw with the best loss is kept.

    For an evasion attack ``loss_fn`` evaluates a trained model on ``A'``; for poisoning,
    train a model on the returned graph. Attacks that must not read test labels use
    :func:`pseudo_labels` in ``loss_fn``.

    Args:
      key: PRNG key (sampling).
      adj: ``[n, n]`` symmetric 0/1 adjacency without self-loops (ints are promoted).
      loss_fn: differentiable ``[n, n] -> scalar`` objective of the perturbed adjacency.
      budget: with ``budget_form="flips"`` the number ``B ≥ 0`` of node pairs that may be
        flipped (an integer); with ``"rate"`` the fraction in ``[0, 1]`` of the clean
        undirected edge count, ``B = ⌊rate·|E|⌋`` (``adj`` must then be concrete).
      objective: ``"maximize"`` (e.g. cross-entropy) or ``"minimize"`` (e.g. the tanh
        margin of :func:`tanh_margin_loss`).
      budget_form: ``"flips"`` or ``"rate"``.
      iterations: PGD steps ``≥ 1``.
      base_lr: base step size ``> 0`` (multiplied by ``B/√(t+1)``).
      sampling_tries: samples within the budget that are scored, ``≥ 1``.
      max_draws: draws per try before giving up on that try (its loss is then the worst
        possible), ``≥ 1``.
      tol: tolerance of the projection's shift, ``> 0``.
      max_candidates: static bound on the number of pairs with ``P_ij > 0`` the sampler
        draws from (``None``: all ``n(n−1)/2`` pairs). When more pairs are positive the
        sampler falls back to drawing all pairs, so the result does not depend on it; it
        only makes the usual case (a few thousand positive pairs) cheap.

    Returns:
      ``(perturbed, loss)``: the perturbed symmetric 0/1 ``[n, n]`` adjacency (at most
      ``B`` flipped pairs; ``adj`` itself when ``B = 0``) and ``loss_fn(perturbed)``.

    Example:
      >>> w = jnp.array([[0.0, -1.0, 2.0], [-1.0, 0.0, 0.5], [2.0, 0.5, 0.0]])
      >>> adj, loss = pgd_structure_attack(
      ...     jax.random.key(0), jnp.zeros((3, 3)), lambda a: jnp.sum(w * a), 1,
      ...     objective="minimize", budget_form="flips", iterations=20, base_lr=0.1,
      ...     sampling_tries=4, max_draws=10)
      >>> adj.tolist(), float(loss)  # adding pair (0, 1) is the only helpful flip
      ([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], -2.0)
    """
    check_key("key", key)
    adj = as_float("adj", adj)
    check_square("adj", adj)
    if objective not in ("maximize", "minimize"):
        raise ValueError(f"objective must be 'maximize' or 'minimize', got {objective!r}")
    if budget_form == "rate":
        budget = edge_budget(adj, budget)
    elif budget_form == "flips":
        check_integer("budget", budget, low=0)
        budget = int(budget)
    else:
        raise ValueError(f"budget_form must be 'flips' or 'rate', got {budget_form!r}")
    for name, setting in (
        ("iterations", iterations),
        ("sampling_tries", sampling_tries),
        ("max_draws", max_draws),
    ):
        check_integer(name, setting, low=1)
    check_range("base_lr", base_lr, 0.0, None, low_open=True)
    n = adj.shape[0]
    if n < 2:
        raise ValueError(f"adj must have at least 2 nodes, got shape {adj.shape}")
    num_pairs = n * (n - 1) // 2
    if max_candidates is not None:
        check_integer("max_candidates", max_candidates, low=1)
    k_max = num_pairs if max_candidates is None else min(int(max_candidates), num_pairs)
    if budget == 0:
        return adj, loss_fn(adj)
    sign = 1.0 if objective == "minimize" else -1.0  # minimize sign · loss
    off_diag = ~jnp.eye(n, dtype=bool)

    def objective_of(p):
        return sign * loss_fn(flip_edges(adj, p))

    grad_fn = jax.grad(objective_of)

    def step(t, p):
        g = grad_fn(p)
        lr = base_lr * budget / jnp.sqrt(t + 1.0)  # Xu et al. Eq. (9), gb's schedule
        p = jnp.where(off_diag, p - lr * (g + g.T), 0.0)
        # P holds every pair twice, so the pair budget B is 2B over the matrix (same μ).
        return project_flip_budget(p, 2.0 * budget, tol=tol)  # Xu et al. Eq. (10)

    probs = jax.lax.fori_loop(0, iterations, step, jnp.zeros((n, n), adj.dtype))
    rows, cols = jnp.triu_indices(n, 1)
    upper = jnp.triu(probs, 1)
    # The pairs that can be drawn, in row-major order of the upper triangle.
    cand = jnp.nonzero(upper > 0, size=k_max, fill_value=0)
    cand_probs = jnp.where(jnp.arange(k_max) < jnp.sum(upper > 0), upper[cand], 0.0)

    def draw(k):
        def few(k):
            hit = jax.random.bernoulli(k, cand_probs).astype(adj.dtype)
            return jnp.zeros((n, n), adj.dtype).at[cand].max(hit)

        def all_pairs(k):
            hit = jax.random.bernoulli(k, probs[rows, cols]).astype(adj.dtype)
            return jnp.zeros((n, n), adj.dtype).at[rows, cols].set(hit)

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
        value = jnp.where(jnp.sum(sample) <= budget, objective_of(flips), jnp.inf)
        return flips, value

    def best_of(carry, k):
        best_flips, best_value = carry
        flips, value = one_try(k)
        better = value < best_value  # strict: the first of equal losses is kept, as gb
        return (jnp.where(better, flips, best_flips), jnp.where(better, value, best_value)), None

    init = (jnp.zeros((n, n), adj.dtype), jnp.array(jnp.inf, adj.dtype))
    (flips, value), _ = jax.lax.scan(best_of, init, jax.random.split(key, sampling_tries))
    return flip_edges(adj, flips), sign * value


def pseudo_labels(logits: ArrayLike, labels: ArrayLike, train_mask: ArrayLike) -> jax.Array:
    """Training labels on training nodes, the model's predictions elsewhere (``[n]``).

    The labels a structure attack may use without reading evaluation labels (self-training
    labels, as Metattack).
    """
    logits, labels, train_mask = (jnp.asarray(a) for a in (logits, labels, train_mask))
    if logits.ndim != 2 or labels.shape != logits.shape[:1] or train_mask.shape != labels.shape:
        raise ValueError(
            f"logits must be [n, c], labels and train_mask [n], got "
            f"{logits.shape}, {labels.shape}, {train_mask.shape}"
        )
    return jnp.where(train_mask, labels, jnp.argmax(logits, -1))
