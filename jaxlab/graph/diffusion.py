"""Graph diffusion kernels: GCN normalization, PPR/heat GDC and GADC (options I–IV).

All kernels take the raw graph (both directions of each undirected edge, unit or given
weights) and normalize internally. The node count is ``x.shape[0]``; the kernels are pure
and work under ``jit``, ``vmap`` (over feature matrices, λ or ε) and ``grad``.

References:
  Liu, Chen, Fu, Lin, Zitnik, Wu. "Graph Adversarial Diffusion Convolution". ICML 2024.
  Gasteiger, Weißenberger, Günnemann. "Diffusion Improves Graph Learning". NeurIPS 2019.
  Kipf, Welling. "Semi-Supervised Classification with Graph Convolutional Networks".
  ICLR 2017.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import jax
import jax.numpy as jnp
import jraph
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import as_float, check_integer, check_range, is_traced
from jaxlab.graph.graphs import check_graph, check_num_nodes, make_propagate

Degree = Literal["in", "out"]
Phi = Literal["cosine", "gram", "edge_inner", "limit"]
_PHIS = ("cosine", "gram", "edge_inner", "limit")


def _check_features(graph: jraph.GraphsTuple, x: ArrayLike, name: str = "x") -> jax.Array:
    """``x`` as a float ``[n, d]`` matrix matching the graph (ints promoted to float32)."""
    x = as_float(name, x, ndim=2)
    check_num_nodes(graph, x.shape[0], name)
    return x


def _check_degree(degree: str) -> None:
    if degree not in ("in", "out"):
        raise ValueError(f"degree must be 'in' or 'out', got {degree!r}")


def _safe_rsqrt(d: jax.Array) -> jax.Array:
    positive = d > 0
    return jnp.where(positive, jax.lax.rsqrt(jnp.where(positive, d, 1.0)), 0.0)


def gcn_normalize(
    graph: jraph.GraphsTuple,
    num_nodes: int,
    *,
    add_self_loops: bool = True,
    degree: Degree = "in",
) -> jraph.GraphsTuple:
    """GCN normalization Â = D̃^{-1/2}(A + I)D̃^{-1/2}, returned as edge weights.

    With ``M`` the propagation matrix of ``graph`` (``M[r, s] = w`` per edge s -> r),
    the result propagates with ``D^{-1/2}(M + I)D^{-1/2}``. ``degree`` picks ``D``:
    ``"in"`` sums the weights arriving at a node (row sums of ``M``, the usual choice),
    ``"out"`` the weights leaving it (row sums of the adjacency ``A = Mᵀ``). For a directed
    graph read as ``A[i, j]`` = edge i -> j, ``degree="out"`` gives the GADC reference's
    ``D^{-1/2}(A + I)ᵀD^{-1/2}`` with D the row sums of ``A + I``. Nodes of degree 0 get
    weight 0 (no NaN).

    Args:
      graph: raw graph with ``[E]`` edge weights in ``graph.edges``.
      num_nodes: ``n``, a static int (kernels pass ``x.shape[0]``).
      add_self_loops: add ``I`` before normalizing (the renormalization trick of Kipf & Welling).
      degree: ``"in"`` or ``"out"``, see above.

    Returns:
      A graph with ``E + n`` edges (``E`` without self-loops) carrying Â's entries.

    Example:
      >>> from jaxlab.graph.graphs import from_edges
      >>> g = from_edges([0, 1], [1, 0], num_nodes=2)  # one undirected edge
      >>> a_hat = gcn_normalize(g, 2)  # 2 edges + 2 self-loops, every degree 2
      >>> a_hat.edges
      Array([0.5, 0.5, 0.5, 0.5], dtype=float32)
    """
    _check_degree(degree)
    check_graph(graph)
    check_integer("num_nodes", num_nodes, low=1)
    senders, receivers, weights = graph.senders, graph.receivers, graph.edges
    if add_self_loops:
        # Under jit a graph closed over as a constant keeps a concrete edge list, so its
        # CSR order is computed once in numpy (see make_propagate), not folded by XLA.
        with jax.ensure_compile_time_eval():
            loops = jnp.arange(num_nodes, dtype=senders.dtype)
            senders = jnp.concatenate([senders, loops])
            receivers = jnp.concatenate([receivers, loops])
        weights = jnp.concatenate([weights, jnp.ones((num_nodes,), weights.dtype)])
    ends = receivers if degree == "in" else senders
    deg = jax.ops.segment_sum(weights, ends, num_segments=num_nodes)
    inv_sqrt = _safe_rsqrt(deg)
    new_weights = inv_sqrt[senders] * weights * inv_sqrt[receivers]  # D^{-1/2}(A+I)D^{-1/2}
    return graph._replace(senders=senders, receivers=receivers, edges=new_weights)


def neumann_series(
    apply_t: Callable[[jax.Array], jax.Array],
    x: jax.Array,
    coef: ArrayLike,
    scale: ArrayLike,
    num_terms: int,
) -> jax.Array:
    """``scale · Σ_{k=0..K} (coef · T)^k x`` for any linear operator ``apply_t: v ↦ T v``.

    Computed by the recurrence ``out ← coef · T out; acc ← acc + out`` (K steps), which
    is how GADC and APPNP evaluate their kernels; ``x: [n, ...]``; ``K ≥ 0`` a static int
    (``coef`` and ``scale`` may be traced and are unchecked).
    """
    check_integer("num_terms", num_terms, low=0)

    def body(_, carry):
        out, acc = carry
        out = coef * apply_t(out)
        return out, acc + out

    _, acc = jax.lax.fori_loop(0, num_terms, body, (x, x))
    return scale * acc


def ppr_diffusion(
    graph: jraph.GraphsTuple,
    x: ArrayLike,
    *,
    alpha: ArrayLike,
    num_terms: int,
    degree: Degree = "in",
) -> jax.Array:
    """Personalised-PageRank (GDC/APPNP) diffusion, truncated after ``K`` terms.

    ``S x = α Σ_{k=0..K} ((1 − α) Â)^k x`` with Â the GCN-normalized adjacency.

    Args:
      graph: raw graph (no self-loops needed; they are added).
      x: ``[n, d]`` features.
      alpha: teleport probability ``α`` in (0, 1] (may be traced: then unchecked).
      num_terms: ``K ≥ 0`` (number of propagation steps), a static int.
      degree: degree convention of :func:`gcn_normalize`.

    Returns:
      ``[n, d]`` diffused features.

    Example:
      >>> from jaxlab.graph.graphs import from_edges
      >>> g = from_edges([0, 1], [1, 0], num_nodes=2)
      >>> ppr_diffusion(g, jnp.array([[1.0], [0.0]]), alpha=0.1, num_terms=10)
      Array([[0.393...],
             [0.293...]], dtype=float32)

    References:
      Gasteiger et al., "Predict then Propagate" (ICLR 2019); "Diffusion Improves Graph
      Learning" (NeurIPS 2019).
    """
    x = _check_features(graph, x)
    check_integer("num_terms", num_terms, low=0)
    check_range("alpha", alpha, 0.0, 1.0, low_open=True)
    a_hat = gcn_normalize(graph, x.shape[0], degree=degree)
    apply_t = make_propagate(a_hat.senders, a_hat.receivers, a_hat.edges, x.shape[0])
    return neumann_series(apply_t, x, 1.0 - alpha, alpha, num_terms)


def heat_diffusion(
    graph: jraph.GraphsTuple,
    x: ArrayLike,
    *,
    t: ArrayLike,
    num_terms: int,
    degree: Degree = "in",
) -> jax.Array:
    """Heat-kernel GDC diffusion ``S x = Σ_{k=0..K} e^{-t} t^k / k! · Â^k x``.

    Args:
      graph: raw graph.
      x: ``[n, d]`` features.
      t: diffusion time ``t > 0`` (may be traced: then unchecked).
      num_terms: ``K ≥ 0``, a static int.
      degree: degree convention of :func:`gcn_normalize`.

    Returns:
      ``[n, d]`` diffused features.

    References:
      Gasteiger, Weißenberger, Günnemann. "Diffusion Improves Graph Learning". NeurIPS 2019.
    """
    x = _check_features(graph, x)
    check_integer("num_terms", num_terms, low=0)
    check_range("t", t, 0.0, None, low_open=True)
    a_hat = gcn_normalize(graph, x.shape[0], degree=degree)
    apply_a = make_propagate(a_hat.senders, a_hat.receivers, a_hat.edges, x.shape[0])

    def body(k, carry):
        out, acc = carry
        out = (t / (k + 1)) * apply_a(out)
        return out, acc + out

    _, acc = jax.lax.fori_loop(0, num_terms, body, (x, x))
    return jnp.exp(jnp.negative(t)) * acc


def edge_cosine(graph: jraph.GraphsTuple, features: jax.Array) -> jax.Array:
    """``[E]`` cosine similarity of the features at both ends of each edge (0 if a norm is 0).

    Edges of weight 0 (padding) get 0.
    """
    check_graph(graph)
    features = as_float("features", features, ndim=2)
    # Normalize the n rows first, then one gathered dot product per edge (a zero row
    # stays zero, so its cosines are 0).
    norms = jnp.linalg.norm(features, axis=-1, keepdims=True)
    positive = norms > 0
    unit = jnp.where(positive, features / jnp.where(positive, norms, 1.0), 0.0)
    cos = jnp.sum(unit[graph.senders] * unit[graph.receivers], axis=-1)
    return jnp.where(graph.edges != 0, cos, 0.0)


def _edge_inner(graph: jraph.GraphsTuple, features: jax.Array) -> jax.Array:
    values = jnp.sum(features[graph.senders] * features[graph.receivers], axis=-1)
    values = jnp.where(graph.edges != 0, values, 0.0)
    norm = jnp.linalg.norm(values)
    return jnp.where(norm > 0, values / jnp.where(norm > 0, norm, 1.0), 0.0)


def _gram_operator(features: jax.Array) -> Callable[[jax.Array], jax.Array]:
    """Φ v = P(Pᵀv)/‖PPᵀ‖_F with ‖PPᵀ‖_F = ‖PᵀP‖_F (d×d); never forms the n×n matrix."""
    norm = jnp.linalg.norm(features.T @ features)
    inv = jnp.where(norm > 0, 1.0 / jnp.where(norm > 0, norm, 1.0), 0.0)
    return lambda v: inv * (features @ (features.T @ v))


def adversarial_transition(
    graph: jraph.GraphsTuple,
    phi_features: jax.Array,
    *,
    eps: ArrayLike,
    phi: Phi,
    degree: Degree = "in",
) -> Callable[[jax.Array], jax.Array]:
    """The operator ``v ↦ T v`` of GADC, ``T = Â − ε Φ`` (or option IV's limit).

    Args:
      graph: raw graph.
      phi_features: ``[n, d']`` features Φ is computed from.
      eps: adversary budget ``ε`` (unused by ``"limit"``).
      phi: ``"cosine"`` (I), ``"gram"`` (II), ``"edge_inner"`` (III) or ``"limit"`` (IV).
      degree: degree convention of :func:`gcn_normalize`.

    Returns:
      A function mapping ``[n, ...]`` arrays to ``[n, ...]`` arrays.
    """
    if phi not in _PHIS:
        raise ValueError(f"phi must be one of {_PHIS}, got {phi!r}")
    phi_features = _check_features(graph, phi_features, "phi_features")
    check_range("eps", eps, 0.0, None)
    n = phi_features.shape[0]
    if phi == "limit":
        # Option IV: T = cos-on-edges + I, the ε → ∞ limit of −Φ/ε (no re-normalization).
        cos = edge_cosine(graph, phi_features)
        apply_cos = make_propagate(graph.senders, graph.receivers, cos, n)
        return lambda v: apply_cos(v) + v
    a_hat = gcn_normalize(graph, n, degree=degree)
    if not is_traced(eps) and float(np.asarray(eps)) == 0.0:  # T = Â: skip computing Φ
        return make_propagate(a_hat.senders, a_hat.receivers, a_hat.edges, n)
    if phi == "gram":
        propagate_a = make_propagate(a_hat.senders, a_hat.receivers, a_hat.edges, n)
        phi_op = _gram_operator(phi_features)
        return lambda v: propagate_a(v) - eps * phi_op(v)  # T = Â − εΦ
    values = (
        edge_cosine(graph, phi_features) if phi == "cosine" else _edge_inner(graph, phi_features)
    )
    # Φ lives on the graph's edges, which are Â's first E edges (the self-loops follow):
    # T = Â − εΦ is one sparse matrix with Â's pattern, one CSR product per step.
    loops = jnp.zeros((n,), values.dtype)
    weights = a_hat.edges - eps * jnp.concatenate([values, loops])
    return make_propagate(a_hat.senders, a_hat.receivers, weights, n)


def gadc(
    graph: jraph.GraphsTuple,
    x: ArrayLike,
    *,
    lam: ArrayLike,
    num_terms: int,
    phi: Phi,
    eps: ArrayLike = 1.0,
    phi_features: ArrayLike | None = None,
    degree: Degree = "in",
) -> jax.Array:
    """Graph Adversarial Diffusion Convolution: ``F = S x`` with a K-term Neumann series.

    ``S = 1/(λ+1) Σ_{k=0..K} (λ/(λ+1) · T)^k`` with ``T = Â − εΦ`` — the truncated
    inverse of ``I + λL̃ + λεΦ`` (the paper's closed form of the min-max denoising
    problem), where Φ replaces ``FFᵀ/‖FFᵀ‖_F`` by a function of the input:

    * ``"cosine"`` (I): Φ_ij = cos(x_i, x_j) on the edges of the graph;
    * ``"gram"`` (II): Φ = XXᵀ/‖XXᵀ‖_F over all pairs, applied as X(Xᵀv)/‖XᵀX‖_F;
    * ``"edge_inner"`` (III): Φ_ij = x_i·x_j on edges, divided by the ℓ2 norm of those values;
    * ``"limit"`` (IV): T = cos-on-edges + I (the ε → ∞ limit rescaled by −1/ε; ``eps``
      unused, no normalization).

    With ``eps = 0`` this is :func:`ppr_diffusion` with ``α = 1/(λ+1)``.

    Args:
      graph: raw graph (both directions of undirected edges, no self-loops required).
      x: ``[n, d]`` features to diffuse.
      lam: ``λ > 0``, weight of the smoothness term (may be traced: then unchecked).
      num_terms: ``K ≥ 0``, number of Neumann terms beyond the identity (a static int).
      phi: which Φ (see above).
      eps: ``ε ≥ 0``, the adversary's budget (may be traced: then unchecked).
      phi_features: ``[n, d']`` features Φ is computed from; ``x`` when omitted (the
        reference code computes Φ on raw features and diffuses row-normalized ones).
        Integer features (``x`` or ``phi_features``) are promoted to float32.
      degree: degree convention of :func:`gcn_normalize` (``"out"`` reproduces the
        reference's directed form).

    Returns:
      ``[n, d]`` diffused features ``F``. Isolated nodes (degree 0) are safe: their row of
      ``Â`` is the self-loop alone, their cosines are 0. A zero feature row gives zero
      cosines; an all-zero ``phi_features`` gives ``Φ = 0`` for ``"gram"`` and
      ``"edge_inner"`` (no NaN).

    Example:
      >>> from jaxlab.graph.graphs import from_edges
      >>> g = from_edges([0, 1], [1, 0], num_nodes=2)
      >>> f = gadc(g, jnp.eye(2), lam=1.0, num_terms=16, phi="cosine", eps=1.0)
      >>> [[round(v, 3) for v in row] for row in f.tolist()]
      [[0.75, 0.25], [0.25, 0.75]]

    References:
      Liu, Chen, Fu, Lin, Zitnik, Wu. "Graph Adversarial Diffusion Convolution". ICML 2024.
    """
    x = _check_features(graph, x)
    check_integer("num_terms", num_terms, low=0)
    if phi not in _PHIS:
        raise ValueError(f"phi must be one of {_PHIS}, got {phi!r}")
    _check_degree(degree)
    check_range("lam", lam, 0.0, None, low_open=True)
    check_range("eps", eps, 0.0, None)
    p = x if phi_features is None else _check_features(graph, phi_features, "phi_features")
    if p.shape[0] != x.shape[0]:
        raise ValueError(f"phi_features has {p.shape[0]} rows, x has {x.shape[0]}")
    apply_t = adversarial_transition(graph, p, eps=eps, phi=phi, degree=degree)
    # Neumann approximation of (I + λL̃ + λεΦ)^{-1}: S = 1/(λ+1) Σ_k (λ/(λ+1) T)^k.
    return neumann_series(apply_t, x, lam / (lam + 1.0), 1.0 / (lam + 1.0), num_terms)
