"""Diversity diagnostics of ensemble members: linear CKA, an affine-coupling proxy of the
Self-Coupling Index, the loss barrier on the line between two parameter pytrees, and weight
matching of an MLP's hidden units (Git Re-Basin).

The MC Ensemble paper's own Self-Coupling Index formula was not available when this was
written; :func:`affine_coupling_r2` is a clearly named proxy of the idea ("members related by
an affine map of their features are coupled"), not the paper's SCI.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy.optimize import linear_sum_assignment

from jaxlab._checks import check_integer, check_range, numpy_seed
from jaxlab.ood.scores import _check_2d


def linear_cka(
    f_a: ArrayLike, f_b: ArrayLike, *, precision: jax.lax.PrecisionLike = None
) -> jax.Array:
    r"""Linear centred kernel alignment between two feature matrices of the same samples.

    .. math::
        \mathrm{CKA}(X, Y) = \frac{\|Y_c^⊤ X_c\|_F^2}{\|X_c^⊤ X_c\|_F \, \|Y_c^⊤ Y_c\|_F}

    with column-centred :math:`X_c, Y_c`. Invariant to orthogonal maps and isotropic scaling.

    Args:
      f_a: ``[n, d_a]`` features of member A.
      f_b: ``[n, d_b]`` features of member B on the same n samples.
      precision: the precision of the three Gram products (``jax.lax.PrecisionLike``);
        ``None`` multiplies at the ambient ``jax.default_matmul_precision``. Their squared
        Frobenius norms carry TF32's (a GPU's default) ~1e-3 relative error into the CKA;
        ``"highest"`` gives a float32 CKA (``docs/precision.md``).

    Returns:
      ``[]`` CKA in [0, 1].

    Example:
      >>> from jaxlab.ood import linear_cka
      >>> x = jax.random.normal(jax.random.key(0), (50, 4))
      >>> round(float(linear_cka(x, 3.0 * x)), 4)
      1.0

    References:
      Kornblith, Norouzi, Lee, Hinton. "Similarity of neural network representations
      revisited", ICML 2019.
    """
    x, y = _check_2d("f_a", f_a), _check_2d("f_b", f_b)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"f_a and f_b must hold the same samples, got {x.shape} and {y.shape}")
    x = x - x.mean(0, keepdims=True)
    y = y - y.mean(0, keepdims=True)
    gram = functools.partial(jnp.matmul, precision=precision)
    cross = jnp.sum(jnp.square(gram(y.T, x)))
    return cross / (jnp.linalg.norm(gram(x.T, x)) * jnp.linalg.norm(gram(y.T, y)))


def _affine_r2(f_a, f_b, fit, test, ridge, after=None):
    xa = jnp.concatenate([f_a, jnp.ones((f_a.shape[0], 1), f_a.dtype)], axis=1)
    x_fit, x_test = xa[fit], xa[test]
    gram = x_fit.T @ x_fit + ridge * jnp.eye(xa.shape[1], dtype=xa.dtype)
    if after is not None:  # the solve waits for ``after`` (the same gram unless it is NaN)
        gram = jnp.where(jnp.isnan(after), after, gram)
    w = jnp.linalg.solve(gram, x_fit.T @ f_b[fit])
    resid = f_b[test] - x_test @ w
    total = f_b[test] - f_b[test].mean(0, keepdims=True)
    return 1.0 - jnp.sum(jnp.square(resid)) / jnp.sum(jnp.square(total))


def affine_coupling_r2(f_a: ArrayLike, f_b: ArrayLike, ridge: float = 1e-6) -> jax.Array:
    r"""Affine-coupling R² of two members' features: a proxy of the Self-Coupling Index.

    Fit W, b by (ridge) least squares from A's features to B's on the first half of the
    samples and score the fit on the second half,

    .. math::
        R^2(A → B) = 1 − \frac{\|F_B − (F_A W + 1 b^⊤)\|_F^2}{\|F_B − 1 \bar F_B^⊤\|_F^2},

    and return the mean of A → B and B → A. High = tightly (affinely) coupled members, i.e.
    little diversity. This is NOT the paper's SCI formula (not retrieved), only a proxy.

    Args:
      f_a: ``[n, d_a]`` features of member A (n ≥ 4).
      f_b: ``[n, d_b]`` features of member B on the same samples.
      ridge: diagonal added to the normal equations.

    Returns:
      ``[]`` R² (≤ 1; can be negative for no coupling).

    The two directions' solves run one after the other. Under ``jax.vmap`` on XLA:CPU, each
    is a batched LAPACK call that jaxlib (0.10.2) splits into chunks on XLA's intra-op
    thread pool and then waits for, holding its pool thread; two such calls running at once
    on a 2-thread pool (2 cores) wait for each other's chunks forever. A caller that runs
    other batched ``jnp.linalg`` calls beside this one in one program on few cores meets
    the same hang: map over the batch with ``jax.lax.map`` instead.

    Example:
      >>> from jaxlab.ood import affine_coupling_r2
      >>> x = jax.random.normal(jax.random.key(0), (40, 3))
      >>> round(float(affine_coupling_r2(x, x @ jnp.array([[1.0, 2, 0], [0, 1, 0], [3, 0, 1]]))), 3)
      1.0
    """
    x, y = _check_2d("f_a", f_a), _check_2d("f_b", f_b)
    n = x.shape[0]
    check_range("ridge", ridge, 0.0)
    if y.shape[0] != n:
        raise ValueError(f"f_a and f_b must hold the same samples, got {x.shape} and {y.shape}")
    if n < 4:
        raise ValueError(f"need at least 4 samples (fit on one half, test on the other), got {n}")
    fit, test = jnp.arange(n // 2), jnp.arange(n // 2, n)
    r2_ab = _affine_r2(x, y, fit, test, ridge)
    # B → A's solve takes A → B's R² as an input: the two LAPACK solves never run at once.
    return 0.5 * (r2_ab + _affine_r2(y, x, fit, test, ridge, after=r2_ab))


class BarrierResult(NamedTuple):
    """Result of :func:`loss_barrier`.

    Attributes:
      barrier: ``[]`` max_t of the loss above the straight line between the end points.
      ts: ``[num_points]`` interpolation coefficients.
      losses: ``[num_points]`` L(θ(t)).
    """

    barrier: jax.Array
    ts: jax.Array
    losses: jax.Array


def loss_barrier(
    loss_fn: Callable[[Any], ArrayLike], params_a: Any, params_b: Any, num_points: int = 11
) -> BarrierResult:
    r"""Loss barrier on the straight line between two parameter pytrees.

    .. math::
        θ(t) = (1 − t) θ_A + t θ_B,\qquad
        B = \max_t \big[ L(θ(t)) − ((1 − t) L(θ_A) + t L(θ_B)) \big]

    on ``num_points`` evenly spaced t ∈ [0, 1] (``lax.map``). Align hidden units first
    (:func:`weight_match_mlp`) to ask whether two members share a basin up to permutation.

    Args:
      loss_fn: ``params -> []`` loss (e.g. cross-entropy on ID training data).
      params_a: pytree θ_A.
      params_b: pytree θ_B of the same structure and leaf shapes.
      num_points: grid size (≥ 2).

    Returns:
      ``BarrierResult(barrier [], ts [num_points], losses [num_points])``.

    Raises:
      ValueError: pytrees of different structure or leaf shapes; num_points < 2.

    Example:
      >>> from jaxlab.ood import loss_barrier
      >>> res = loss_barrier(lambda p: (p["w"] ** 2 - 1) ** 2, {"w": -1.0}, {"w": 1.0}, 5)
      >>> float(res.barrier)
      1.0

    References:
      Frankle, Dziugaite, Roy, Carbin. "Linear mode connectivity and the lottery ticket
      hypothesis", ICML 2020.
    """
    check_integer("num_points", num_points, low=2)
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    struct_a, struct_b = jax.tree.structure(params_a), jax.tree.structure(params_b)
    if struct_a != struct_b:  # type: ignore[operator]  # jaxlib has no PyTreeDef stub
        raise ValueError(f"params_a and params_b differ in structure: {struct_a} vs {struct_b}")
    for i, (a, b) in enumerate(
        zip(jax.tree.leaves(params_a), jax.tree.leaves(params_b), strict=True)
    ):
        if jnp.shape(a) != jnp.shape(b):
            raise ValueError(
                f"params_a and params_b differ in leaf {i}'s shape: {jnp.shape(a)} vs "
                f"{jnp.shape(b)}"
            )
    ts = jnp.linspace(0.0, 1.0, num_points)

    def at(t):
        return jnp.asarray(
            loss_fn(jax.tree.map(lambda a, b: (1 - t) * a + t * b, params_a, params_b))
        )

    losses = jax.lax.map(at, ts)
    line = (1 - ts) * losses[0] + ts * losses[-1]
    return BarrierResult(jnp.max(losses - line), ts, losses)


def weight_match_mlp(
    params_a: Sequence[tuple[ArrayLike, ArrayLike]],
    params_b: Sequence[tuple[ArrayLike, ArrayLike]],
    max_iters: int = 20,
    *,
    key: jax.Array,
) -> list[tuple[np.ndarray, np.ndarray]]:
    r"""Permutes B's hidden units to match A's weights (Git Re-Basin weight matching).

    For an MLP of ``(W: [in, out], b: [out])`` layers, coordinate ascent over the hidden
    layers' permutations P_l of

    .. math:: \sum_l \langle W^A_l, P_{l-1}^⊤ W^B_l P_l \rangle + \langle b^A_l, b^B_l P_l\rangle,

    each step a linear assignment (``scipy.optimize.linear_sum_assignment``), until no
    permutation changes, from a forward pass that matches incoming weights only. B's
    function is unchanged. Runs in numpy (not ``jit``-able).

    Args:
      params_a: list of ``(W, b)`` of network A.
      params_b: network B, same shapes.
      max_iters: sweeps over the layers.
      key: a ``jax.random.key``; it orders the layers within a sweep (host-side numpy
        generator seeded by the key's integer, :func:`jaxlab._checks.numpy_seed`).

    Returns:
      B's layers with permuted hidden units (numpy arrays).

    Example:
      >>> from jaxlab.ood import weight_match_mlp
      >>> a = [(np.eye(2), np.array([0.0, 1.0])), (np.array([[1.0], [2.0]]), np.zeros(1))]
      >>> b = [(w[:, ::-1], bb[::-1]) if i == 0 else (w[::-1], bb) for i, (w, bb) in
      ...      enumerate(a)]
      >>> np.allclose(weight_match_mlp(a, b, key=jax.random.key(0))[0][0], a[0][0])
      True

    References:
      Ainsworth, Hayase, Srinivasa. "Git Re-Basin: merging models modulo permutation
      symmetries", ICLR 2023.
    """
    check_integer("max_iters", max_iters, low=0)
    seed = numpy_seed("key", key)
    a = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in params_a]
    b = [(np.asarray(w, np.float64), np.asarray(bb, np.float64)) for w, bb in params_b]
    if len(a) != len(b) or any(
        x[0].shape != y[0].shape or x[1].shape != y[1].shape for x, y in zip(a, b, strict=True)
    ):
        raise ValueError("params_a and params_b must be MLPs with the same layer shapes")
    widths = [w.shape[1] for w, _ in a[:-1]]
    # Start from a forward pass matching incoming weights only (exact for permuted copies),
    # then refine all layers by coordinate ascent on the full objective.
    perms: list[np.ndarray] = []
    for layer in range(len(widths)):
        w_b = b[layer][0] if layer == 0 else b[layer][0][perms[-1], :]
        cost = a[layer][0].T @ w_b + np.outer(a[layer][1], b[layer][1])
        perms.append(linear_sum_assignment(cost, maximize=True)[1])
    rng = np.random.default_rng(seed)
    for _ in range(max_iters):
        changed = False
        for layer in rng.permutation(len(widths)):
            w_b, b_b = b[layer]
            w_b = w_b if layer == 0 else w_b[perms[layer - 1], :]
            cost = a[layer][0].T @ w_b + np.outer(a[layer][1], b_b)
            w_next = b[layer + 1][0]
            if layer + 1 < len(widths):
                w_next = w_next[:, perms[layer + 1]]
            cost = cost + a[layer + 1][0] @ w_next.T
            _, cols = linear_sum_assignment(cost, maximize=True)
            if not np.array_equal(cols, perms[layer]):
                perms[layer], changed = cols, True
        if not changed:
            break
    out = []
    for layer, (w, bb) in enumerate(b):
        if layer > 0:
            w = w[perms[layer - 1], :]
        if layer < len(widths):
            w, bb = w[:, perms[layer]], bb[perms[layer]]
        out.append((w, bb))
    return out
