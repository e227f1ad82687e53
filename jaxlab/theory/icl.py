"""In-context learning of binary pattern tasks by a one-layer nonlinear transformer.

The data model and network of Li, Wang, Lu, Cui, Chen (ICML 2024). Inputs in ℝ^d are a
relevant pattern plus a scaled irrelevant one, x = μ + κ·ν (+ noise), with orthonormal
in-domain-relevant (IDR) patterns μ_1..μ_{M1} and in-domain-irrelevant (IDI) patterns
ν_1..ν_{M2}. A task is an ordered pair (μ_a, μ_b): label +1 for inputs carrying μ_a, −1 for
μ_b. A prompt holds l demonstrations p_s = [x_s; y_s] and a query p_q = [x_q; 0]; a fraction
α of the demonstrations carry the query's relevant pattern. The network

    F(P) = Σ_{i=1..m} a_i · ReLU( W_{O,i} · Σ_s W_V p_s · softmax_s((W_K p_s)ᵀ W_Q p_q) )

has fixed output weights a_i ∈ {+1/m, −1/m} and is trained on the hinge loss
max(0, 1 − y·F(P)). Everything here is one prompt; batch with ``jax.vmap``. Hand-written:
the paper has no released code. The data-model constants (κ's range, noise) were not
checked against the paper; the experiment states what it uses.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_range

PRUNE_ORDERS = ("smallest", "largest", "random")


class ICLParams(NamedTuple):
    """Parameters of the one-layer transformer (token width n = d + 1).

    Attributes:
      w_q: ``[m_a, n]`` W_Q.
      w_k: ``[m_a, n]`` W_K.
      w_v: ``[m_b, n]`` W_V.
      w_o: ``[m, m_b]`` W_O; row i is neuron i.
      a: ``[m]`` fixed output weights ±1/m (no gradient flows into them).
    """

    w_q: jax.Array
    w_k: jax.Array
    w_v: jax.Array
    w_o: jax.Array
    a: jax.Array


class ICLPrompt(NamedTuple):
    """One prompt.

    Attributes:
      demos: ``[l, d + 1]`` demonstrations [x_s; y_s].
      query: ``[d + 1]`` the query [x_q; 0].
      label: scalar ±1, the query's label.
      same: bool ``[l]``, demonstrations carrying the query's relevant pattern.
    """

    demos: jax.Array
    query: jax.Array
    label: jax.Array
    same: jax.Array


def make_icl_patterns(
    key: jax.Array, dim: int, num_relevant: int, num_irrelevant: int
) -> tuple[jax.Array, jax.Array]:
    """Random orthonormal IDR patterns μ ``[M1, d]`` and IDI patterns ν ``[M2, d]``.

    Args:
      key: a PRNG key.
      dim: d ≥ M1 + M2.
      num_relevant: M1.
      num_irrelevant: M2.

    Returns:
      ``(mu, nu)``, jointly orthonormal rows.

    Example:
      >>> from jaxlab.theory import make_icl_patterns
      >>> mu, nu = make_icl_patterns(jax.random.key(0), 6, 2, 3)
      >>> mu.shape, nu.shape
      ((2, 6), (3, 6))
    """
    check_key("key", key)
    if num_relevant < 1 or num_irrelevant < 1 or dim < num_relevant + num_irrelevant:
        raise ValueError(
            f"need dim >= num_relevant + num_irrelevant >= 2, got dim={dim}, "
            f"num_relevant={num_relevant}, num_irrelevant={num_irrelevant}"
        )
    q, _ = jnp.linalg.qr(jax.random.normal(key, (dim, num_relevant + num_irrelevant)))
    return q[:, :num_relevant].T, q[:, num_relevant:].T


def sample_icl_prompt(
    key: jax.Array,
    positive: ArrayLike,
    negative: ArrayLike,
    irrelevant: ArrayLike,
    alpha: ArrayLike,
    length: int,
    kappa: float = 0.5,
    noise: float = 0.0,
) -> ICLPrompt:
    """Draws one prompt of the task (positive → +1, negative → −1).

    The query's label is ±1 with probability ½; ``round(α·l)`` demonstrations (at random
    positions) carry the query's relevant pattern, the others the task's other pattern.
    Every input is x = μ + κ·ν + ε with ν drawn uniformly from ``irrelevant``,
    κ ~ U[−kappa, kappa] and ε ~ N(0, noise²·I).

    Args:
      key: a PRNG key.
      positive: ``[d]`` the relevant pattern labelled +1 (μ_a).
      negative: ``[d]`` the relevant pattern labelled −1 (μ_b).
      irrelevant: ``[M, d]`` irrelevant patterns.
      alpha: α in [0, 1] (may be traced).
      length: number of demonstrations l.
      kappa: bound of the irrelevant pattern's coefficient.
      noise: standard deviation of the additive Gaussian noise.

    Returns:
      An ``ICLPrompt``.

    Example:
      >>> from jaxlab.theory import sample_icl_prompt
      >>> p = sample_icl_prompt(jax.random.key(0), jnp.eye(4)[0], jnp.eye(4)[1],
      ...                       jnp.eye(4)[2:], 0.5, length=6)
      >>> p.demos.shape, p.query.shape, int(p.same.sum())
      ((6, 5), (5,), 3)
    """
    check_key("key", key)
    check_range("kappa", kappa, 0.0)
    check_range("noise", noise, 0.0)
    pos, neg, irr = jnp.asarray(positive), jnp.asarray(negative), jnp.asarray(irrelevant)
    if pos.ndim != 1 or neg.shape != pos.shape or irr.ndim != 2 or irr.shape[1] != pos.shape[0]:
        raise ValueError(
            f"positive and negative must be [d] and irrelevant [M, d]; got {pos.shape}, "
            f"{neg.shape}, {irr.shape}"
        )
    if not isinstance(alpha, jax.core.Tracer) and not 0.0 <= float(np.asarray(alpha)) <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    k_y, k_perm, k_nu, k_kappa, k_noise = jax.random.split(key, 5)
    y_q = jnp.where(jax.random.bernoulli(k_y), 1.0, -1.0)
    n_same = jnp.round(jnp.asarray(alpha) * length)
    same = jax.random.permutation(k_perm, jnp.arange(length) < n_same)
    y_all = jnp.concatenate([jnp.where(same, y_q, -y_q), y_q[None]])  # demos, then query
    rel = jnp.where((y_all > 0)[:, None], pos, neg)
    nu = irr[jax.random.randint(k_nu, (length + 1,), 0, irr.shape[0])]
    kap = jax.random.uniform(k_kappa, (length + 1, 1), minval=-kappa, maxval=kappa)
    x = rel + kap * nu + noise * jax.random.normal(k_noise, rel.shape)
    demos = jnp.concatenate([x[:length], y_all[:length, None]], axis=1)
    query = jnp.concatenate([x[length], jnp.zeros(1)])
    return ICLPrompt(demos, query, y_q, same)


def init_icl_params(
    key: jax.Array,
    dim: int,
    num_neurons: int,
    attention_dim: int | None = None,
    value_dim: int | None = None,
    init_scale: float = 0.1,
) -> ICLParams:
    """Gaussian initialisation; a_i = +1/m for the first half of the neurons, −1/m after.

    Args:
      key: a PRNG key.
      dim: token width n = d + 1.
      num_neurons: m (even).
      attention_dim: m_a (default n).
      value_dim: m_b (default n).
      init_scale: standard deviation of every weight times 1/√(fan-in).

    Returns:
      ``ICLParams``.

    Example:
      >>> from jaxlab.theory import init_icl_params
      >>> init_icl_params(jax.random.key(0), 5, 4).w_o.shape
      (4, 5)
    """
    check_key("key", key)
    check_integer("dim", dim, low=1)
    check_range("init_scale", init_scale, 0.0, low_open=True)
    for name, value in (("attention_dim", attention_dim), ("value_dim", value_dim)):
        if value is not None:
            check_integer(name, value, low=1)
    if num_neurons < 2 or num_neurons % 2:
        raise ValueError(f"num_neurons must be even and >= 2, got {num_neurons}")
    m_a, m_b = attention_dim or dim, value_dim or dim
    k_q, k_k, k_v, k_o = jax.random.split(key, 4)
    s = init_scale / jnp.sqrt(dim)
    a = jnp.where(jnp.arange(num_neurons) < num_neurons // 2, 1.0, -1.0) / num_neurons
    return ICLParams(
        s * jax.random.normal(k_q, (m_a, dim)),
        s * jax.random.normal(k_k, (m_a, dim)),
        s * jax.random.normal(k_v, (m_b, dim)),
        init_scale / jnp.sqrt(m_b) * jax.random.normal(k_o, (num_neurons, m_b)),
        a,
    )


def _check_params(params: ICLParams) -> None:
    if not isinstance(params, ICLParams):
        raise ValueError(
            f"params must be ICLParams (from init_icl_params), got {type(params).__name__}"
        )


def _check_prompt(params: ICLParams, demos: jax.Array, query: jax.Array) -> None:
    _check_params(params)
    n = params.w_q.shape[1]
    if demos.ndim != 2 or demos.shape[1] != n or query.shape != (n,):
        raise ValueError(
            f"demos must be [l, {n}] and query [{n}] for these params; got {demos.shape} "
            f"and {query.shape}"
        )


def icl_attention(params: ICLParams, demos: ArrayLike, query: ArrayLike) -> jax.Array:
    """softmax_s((W_K p_s)ᵀ W_Q p_q) over the demonstrations.

    Args:
      params: ``ICLParams``.
      demos: ``[l, n]``.
      query: ``[n]``.

    Returns:
      ``[l]`` attention weights.
    """
    demos, query = jnp.asarray(demos), jnp.asarray(query)
    _check_prompt(params, demos, query)
    return jax.nn.softmax((demos @ params.w_k.T) @ (params.w_q @ query))


def icl_forward(params: ICLParams, demos: ArrayLike, query: ArrayLike) -> jax.Array:
    """F(P) = Σ_i a_i ReLU(W_O,i · Σ_s W_V p_s attn_s) for one prompt.

    Args:
      params: ``ICLParams``.
      demos: ``[l, n]`` demonstrations [x_s; y_s].
      query: ``[n]`` the query [x_q; 0].

    Returns:
      Scalar F(P); the prediction is its sign.

    Example:
      >>> from jaxlab.theory import icl_forward, init_icl_params
      >>> params = init_icl_params(jax.random.key(0), 5, 4)
      >>> icl_forward(params, jnp.ones((3, 5)), jnp.ones(5)).shape
      ()
    """
    attn = icl_attention(params, demos, query)
    mixed = params.w_v @ (jnp.asarray(demos).T @ attn)  # Σ_s W_V p_s attn_s
    hidden = jax.nn.relu(params.w_o @ mixed)
    return jnp.dot(jax.lax.stop_gradient(params.a), hidden)


def icl_hinge_loss(
    params: ICLParams, demos: ArrayLike, query: ArrayLike, label: ArrayLike
) -> jax.Array:
    """max(0, 1 − y·F(P)) for one prompt (the paper's training loss).

    Example:
      >>> from jaxlab.theory import icl_hinge_loss, init_icl_params
      >>> params = init_icl_params(jax.random.key(0), 5, 4)
      >>> jax.grad(icl_hinge_loss)(params, jnp.ones((3, 5)), jnp.ones(5), 1.0).w_q.shape
      (5, 5)
    """
    if jnp.ndim(label) != 0:
        raise ValueError(f"label must be a scalar ±1, got shape {jnp.shape(label)}")
    return jax.nn.relu(1.0 - jnp.asarray(label) * icl_forward(params, demos, query))


def weighted_vote(demos: ArrayLike, query: ArrayLike) -> jax.Array:
    """Ideal in-context reference: Σ_s y_s ⟨x_s, x_q⟩ (its sign is the prediction).

    Args:
      demos: ``[l, d + 1]`` demonstrations [x_s; y_s].
      query: ``[d + 1]`` (its last entry is ignored).

    Returns:
      Scalar score.
    """
    demos, query = jnp.asarray(demos), jnp.asarray(query)
    if demos.ndim != 2 or query.shape != demos.shape[1:]:
        raise ValueError(
            f"query must be [{demos.shape[-1]}] like the rows of demos [l, d + 1], "
            f"got {demos.shape} and {query.shape}"
        )
    demos, query = jnp.asarray(demos), jnp.asarray(query)
    return jnp.dot(demos[:, -1], demos[:, :-1] @ query[:-1])


def magnitude_prune(
    params: ICLParams,
    rate: ArrayLike,
    order: str = "smallest",
    key: jax.Array | None = None,
) -> ICLParams:
    """Removes the fraction ``rate`` of the MLP neurons, ranked by ‖W_O,i‖.

    ``floor(rate·m)`` neurons are removed (their rows of W_O set to zero, so they output
    ReLU(0) = 0): those of smallest norm (``"smallest"``, the paper's magnitude pruning),
    largest norm (``"largest"``) or uniformly at random (``"random"``, needs ``key``).

    Args:
      params: ``ICLParams``.
      rate: R in [0, 1] (may be traced, e.g. under ``vmap`` over rates).
      order: ``"smallest"``, ``"largest"`` or ``"random"``.
      key: PRNG key for ``"random"``.

    Returns:
      ``ICLParams`` with the pruned rows of ``w_o`` zeroed.

    Example:
      >>> from jaxlab.theory import ICLParams, magnitude_prune
      >>> p = ICLParams(None, None, None, jnp.diag(jnp.arange(1.0, 5.0)), jnp.ones(4))
      >>> jnp.linalg.norm(magnitude_prune(p, 0.5).w_o, axis=1).tolist()
      [0.0, 0.0, 3.0, 4.0]
    """
    _check_params(params)
    if order not in PRUNE_ORDERS:
        raise ValueError(f"order must be one of {PRUNE_ORDERS}, got {order!r}")
    if not isinstance(rate, jax.core.Tracer) and not 0.0 <= float(np.asarray(rate)) <= 1.0:
        raise ValueError(f"rate must be in [0, 1], got {rate}")
    if order == "random" and key is None:
        raise ValueError("order 'random' needs a key")
    w_o = params.w_o
    m = w_o.shape[0]
    norms = jnp.linalg.norm(w_o, axis=1)
    if order == "smallest":
        score = norms
    elif order == "largest":
        score = -norms
    else:
        assert key is not None  # "random" without a key raised above
        score = jax.random.uniform(key, (m,))
    rank = jnp.argsort(jnp.argsort(score))  # 0 = first to prune
    removed = rank < jnp.floor(jnp.asarray(rate) * m + 1e-6)
    return params._replace(w_o=jnp.where(removed[:, None], 0.0, w_o))
