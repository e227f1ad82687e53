"""Byzantine attacks on worker vectors (omniscient attackers that see the honest vectors).

Every vector attack has the signature ``attack(honest, own) -> byzantine`` where

* ``honest``: ``[h, ...]`` the vectors the ``h = m − f`` honest workers send, and
* ``own``: ``[f, ...]`` what the ``f`` Byzantine workers would have sent had they been honest
  (their own estimate on their own data),

and it returns the ``[f, ...]`` rows the Byzantine workers actually send. ``own`` is needed
by sign flip, label flip (the flip happens in the data, see :func:`flip_labels`) and no
attack; the omniscient attacks use only ``honest``. Arrays or pytrees of ``[n, ...]`` leaves.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike
from scipy.special import ndtri

PyTree = Any
Attack = Callable[[PyTree, PyTree], PyTree]


def no_attack(honest: PyTree, own: PyTree) -> PyTree:
    """No attack: the "Byzantine" workers behave honestly and send ``own``."""
    del honest
    return own


def sign_flip(honest: PyTree, own: PyTree) -> PyTree:
    r"""Sign flip (SF): each Byzantine worker sends the negation of its own estimate.

    .. math:: b_j = -g_j

    Args:
      honest: ``[h, ...]`` honest vectors (unused).
      own: ``[f, ...]`` the Byzantine workers' honest estimates.

    Returns:
      ``[f, ...]``: ``−own``.

    References:
      Allen-Zhu, Ebrahimianghazani, Li, Alistarh. "Byzantine-resilient non-convex stochastic
      gradient descent", ICLR 2021.
    """
    del honest
    return jax.tree_util.tree_map(jnp.negative, own)


def label_flip(honest: PyTree, own: PyTree) -> PyTree:
    """Label flip (LF) on vectors: send ``own``, computed on labels from :func:`flip_labels`."""
    del honest
    return own


def flip_labels(labels: ArrayLike, num_classes: int) -> jax.Array:
    r"""The data transform of the label-flip attack: :math:`y \mapsto C - 1 - y`.

    Args:
      labels: integer class labels in ``[0, C)``, any shape.
      num_classes: ``C``.

    Returns:
      the flipped labels, same shape and dtype.
    """
    labels = jnp.asarray(labels)
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise ValueError(f"labels must be integers, got dtype {labels.dtype}")
    return (num_classes - 1 - labels).astype(labels.dtype)


def _broadcast_rows(vector_tree: PyTree, own: PyTree) -> PyTree:
    return jax.tree_util.tree_map(
        lambda v, o: jnp.broadcast_to(v[None], jnp.shape(o)).astype(jnp.asarray(o).dtype),
        vector_tree,
        own,
    )


def inner_product_manipulation(honest: PyTree, own: PyTree, epsilon: float = 0.1) -> PyTree:
    r"""Inner-product manipulation (IPM, "empire"): send :math:`-\varepsilon \bar g`.

    .. math:: b_j = -\varepsilon \cdot \frac1h \sum_{i=1}^h g_i

    Args:
      honest: ``[h, ...]`` honest vectors.
      own: ``[f, ...]`` (only its shape is used).
      epsilon: ``ε`` (0.1 in Xie et al.; the reference CLI default is 0.5).

    Returns:
      ``[f, ...]``: ``f`` copies of ``−ε · mean(honest)``.

    References:
      Xie, Koyejo, Gupta. "Fall of empires: breaking Byzantine-tolerant SGD by inner product
      manipulation", UAI 2019.
    """
    target = jax.tree_util.tree_map(lambda g: -epsilon * jnp.mean(g, axis=0), honest)
    return _broadcast_rows(target, own)


def alie_z(num_workers: int, num_byzantine: int) -> float:
    r"""The ALIE deviation factor ``z`` of Baruch et al.

    .. math::
       s = \lfloor m/2 + 1 \rfloor - f, \qquad z = \Phi^{-1}\Big(\frac{m - f - s}{m - f}\Big)

    Args:
      num_workers: ``m``.
      num_byzantine: ``f``, with ``0 < f < m / 2``.

    Returns:
      ``z`` (≈ 1.22 for m = 17, f = 8).
    """
    m, f = int(num_workers), int(num_byzantine)
    if not 0 < f < m / 2:
        raise ValueError(f"ALIE needs 0 < num_byzantine < m/2, got f={f}, m={m}")
    s = math.floor(m / 2 + 1) - f
    return float(ndtri((m - f - s) / (m - f)))


def a_little_is_enough(honest: PyTree, own: PyTree, num_workers: int, num_byzantine: int) -> PyTree:
    r"""A little is enough (ALIE): shift the honest mean by ``z`` standard deviations.

    .. math:: b_j = \mu - z \sigma \quad \text{(coordinate-wise over the honest vectors)}

    with ``σ`` the unbiased (``ddof = 1``) standard deviation and ``z`` from :func:`alie_z`.

    Args:
      honest: ``[h, ...]`` honest vectors, ``h >= 2``.
      own: ``[f, ...]`` (only its shape is used).
      num_workers: ``m``.
      num_byzantine: ``f``.

    Returns:
      ``[f, ...]``: ``f`` copies of ``μ − zσ``.

    References:
      Baruch, Baruch, Goldberg. "A little is enough: circumventing defenses for distributed
      learning", NeurIPS 2019.
    """
    z = alie_z(num_workers, num_byzantine)
    target = jax.tree_util.tree_map(
        lambda g: jnp.mean(g, axis=0) - z * jnp.std(g, axis=0, ddof=1), honest
    )
    return _broadcast_rows(target, own)


def get_attack(name: str, num_workers: int, num_byzantine: int, ipm_epsilon: float = 0.1) -> Attack:
    """The attack called ``name`` ∈ {none, sf, lf, ipm, alie} as an ``(honest, own)`` map."""
    attacks: dict[str, Attack] = {
        "none": no_attack,
        "sf": sign_flip,
        "lf": label_flip,
        "ipm": functools.partial(inner_product_manipulation, epsilon=ipm_epsilon),
        "alie": functools.partial(
            a_little_is_enough, num_workers=num_workers, num_byzantine=num_byzantine
        ),
    }
    if name not in attacks:
        raise ValueError(f"unknown attack {name!r}; valid: {sorted(attacks)}")
    return attacks[name]
