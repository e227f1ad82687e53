"""Graph containers: ``jraph.GraphsTuple`` builders, padding and sparse propagation.

A graph here is a single ``jraph.GraphsTuple`` whose ``senders``/``receivers`` list every
directed edge (both directions of an undirected edge) and whose ``edges`` hold one weight
per edge (shape ``[E]``). Propagation ``propagate(graph, x)`` computes ``M x`` with
``M[r, s] = w`` for an edge ``s -> r`` (messages flow from sender to receiver), so for an
adjacency matrix ``A`` with ``A[i, j] = 1`` meaning the edge ``i -> j`` it computes
``Aᵀ x``; for symmetric graphs the direction does not matter.

The node count is never read from ``n_node`` inside a kernel: kernels take it from the
shape of the feature matrix (or a static ``num_nodes`` argument), so they work under
``jit`` and ``vmap``. Padding edges point from node 0 to node 0 with weight 0 and change
nothing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jraph
import numpy as np
import scipy.sparse as sp
from jax.typing import ArrayLike


def from_edges(
    senders: ArrayLike,
    receivers: ArrayLike,
    num_nodes: int,
    weights: ArrayLike | None = None,
) -> jraph.GraphsTuple:
    """Builds a one-graph ``GraphsTuple`` from edge arrays.

    Args:
      senders: ``[E]`` integer source node of each directed edge.
      receivers: ``[E]`` integer target node of each directed edge.
      num_nodes: number of nodes ``n`` (a Python int).
      weights: optional ``[E]`` edge weights; unit weights when omitted.

    Returns:
      A ``jraph.GraphsTuple`` with ``edges`` the ``[E]`` float32 weights.

    Example:
      >>> g = from_edges([0, 1], [1, 0], num_nodes=2)
    """
    senders = np.asarray(senders)
    receivers = np.asarray(receivers)
    if senders.ndim != 1 or senders.shape != receivers.shape:
        raise ValueError(
            f"senders and receivers must be 1-D of equal length, got {senders.shape} and "
            f"{receivers.shape}"
        )
    num_nodes = int(num_nodes)
    if num_nodes <= 0:
        raise ValueError(f"num_nodes must be positive, got {num_nodes}")
    if senders.size and (min(senders.min(), receivers.min()) < 0
                         or max(senders.max(), receivers.max()) >= num_nodes):
        raise ValueError(f"edge endpoints must lie in [0, {num_nodes}), got out-of-range ids")
    if weights is None:
        weights = np.ones(senders.shape, np.float32)
    weights = np.asarray(weights, np.float32)
    if weights.shape != senders.shape:
        raise ValueError(f"weights must have shape {senders.shape}, got {weights.shape}")
    return jraph.GraphsTuple(
        nodes=None,
        edges=jnp.asarray(weights),
        senders=jnp.asarray(senders, jnp.int32),
        receivers=jnp.asarray(receivers, jnp.int32),
        globals=None,
        n_node=jnp.asarray([num_nodes], jnp.int32),
        n_edge=jnp.asarray([senders.size], jnp.int32),
    )


def from_scipy(adj: sp.spmatrix | sp.sparray, *, transpose: bool = False) -> jraph.GraphsTuple:
    """Builds a graph from a scipy sparse adjacency matrix ``A`` (``A[i, j]``: edge i -> j).

    Args:
      adj: ``[n, n]`` sparse adjacency; stored entries become edges with their values.
      transpose: use ``Aᵀ`` instead (edge j -> i for ``A[i, j]``).

    Returns:
      The ``GraphsTuple`` with one directed edge per stored nonzero entry.
    """
    coo = sp.coo_matrix(adj)
    if coo.shape[0] != coo.shape[1]:
        raise ValueError(f"adj must be square, got shape {coo.shape}")
    coo.eliminate_zeros()
    rows, cols = (coo.col, coo.row) if transpose else (coo.row, coo.col)
    return from_edges(rows, cols, coo.shape[0], coo.data)


def pad_edges(graph: jraph.GraphsTuple, num_edges: int) -> jraph.GraphsTuple:
    """Pads a graph to exactly ``num_edges`` edges with zero-weight self-edges on node 0.

    Graphs of similar size padded to the same ``num_edges`` share one compiled program.

    Args:
      graph: a one-graph ``GraphsTuple`` with ``[E]`` edge weights.
      num_edges: target edge count, ``>= E``.

    Returns:
      The padded graph (``n_edge`` still counts the real edges).
    """
    e = graph.senders.shape[0]
    if num_edges < e:
        raise ValueError(f"num_edges={num_edges} is smaller than the graph's {e} edges")
    pad = num_edges - e
    zeros = jnp.zeros((pad,), jnp.int32)
    return graph._replace(
        senders=jnp.concatenate([graph.senders, zeros]),
        receivers=jnp.concatenate([graph.receivers, zeros]),
        edges=jnp.concatenate([graph.edges, jnp.zeros((pad,), graph.edges.dtype)]),
    )


def to_dense(graph: jraph.GraphsTuple, num_nodes: int) -> jax.Array:
    """The ``[n, n]`` propagation matrix ``M`` with ``M[r, s] = sum of weights s -> r``."""
    m = jnp.zeros((num_nodes, num_nodes), graph.edges.dtype)
    return m.at[graph.receivers, graph.senders].add(graph.edges)


def check_num_nodes(graph: jraph.GraphsTuple, num_nodes: int, name: str = "x") -> None:
    """Raises ``ValueError`` when a concrete ``graph.n_node`` disagrees with ``num_nodes``.

    Under ``jit`` the node count of a traced graph cannot be read; the check is skipped
    and the static shapes alone define the node count.
    """
    n_node = graph.n_node
    if n_node is None or isinstance(n_node, jax.core.Tracer):
        return
    total = int(np.sum(np.asarray(n_node)))
    if total != num_nodes:
        raise ValueError(
            f"{name} has {num_nodes} rows but the graph has {total} nodes (n_node={total})"
        )


def propagate(
    senders: jax.Array, receivers: jax.Array, weights: jax.Array, x: jax.Array
) -> jax.Array:
    """``y = M x`` with ``M[r, s] = w`` per edge ``s -> r``; ``x: [n, ...]``, ``y: [n, ...]``."""
    messages = weights.reshape(weights.shape + (1,) * (x.ndim - 1)) * x[senders]
    return jax.ops.segment_sum(messages, receivers, num_segments=x.shape[0])
