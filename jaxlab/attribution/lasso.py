"""Anchored lasso by FISTA and FLIPAD's final-layer inversion.

The linear operator is a pair of functions (``apply_w``, ``apply_wt``) so that dense
matrices, convolutions and transposed convolutions share one solver; for a last layer
given as an affine callable, :func:`final_layer_inversion` derives the adjoint with
``jax.linear_transpose``. Hand-written: no maintained JAX library ships a FISTA lasso for
matrix-free operators (jaxopt's is unmaintained).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab._checks import as_float, check_integer, check_range

__all__ = [
    "final_layer_inversion",
    "lasso_fista",
    "linear_adjoint",
    "lipschitz_constant",
    "soft_threshold",
]

Operator = Callable[[jax.Array], jax.Array]


def soft_threshold(x: jax.typing.ArrayLike, threshold: jax.typing.ArrayLike) -> jax.Array:
    """The proximal map of threshold·‖·‖₁: sign(x)·max(|x| − threshold, 0).

    ``threshold ≥ 0`` is checked when concrete (unchecked when traced); ints are promoted.
    """
    x = as_float("x", x)
    check_range("threshold", threshold, 0.0)
    return jnp.sign(x) * jnp.maximum(jnp.abs(x) - threshold, 0.0)


def linear_adjoint(apply_w: Operator, example: jax.typing.ArrayLike) -> Operator:
    """The adjoint r ↦ Wᵀ r of a linear map z ↦ W z, by ``jax.linear_transpose``.

    Matrix-free: for a (transposed) convolution Wᵀ is the matching (transposed) convolution
    that JAX's transpose rules emit, never a materialised matrix; ⟨W z, r⟩ = ⟨z, Wᵀ r⟩.

    Args:
      apply_w: z ↦ W z; must be linear in z (no bias: subtract W·0 first; a non-zero W·0
        raises when it is concrete, i.e. outside ``jit``).
      example: an array with the shape and dtype of z.

    Returns:
      r ↦ Wᵀ r, taking the shape of W z (else ``ValueError``) and returning that of z.

    Example:
      >>> from jaxlab.attribution import linear_adjoint
      >>> w = jnp.array([[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]])
      >>> linear_adjoint(lambda z: w @ z, jnp.zeros(2))(jnp.array([1.0, 0.0, 1.0]))
      Array([5., 2.], dtype=float32)
    """
    example = as_float("example", example)
    if not callable(apply_w):
        raise ValueError(f"apply_w must be callable, got {type(apply_w).__name__}")
    at_zero = apply_w(jnp.zeros_like(example))
    if not isinstance(at_zero, jax.core.Tracer) and np.any(np.asarray(at_zero) != 0):
        raise ValueError("apply_w must be linear (W·0 = 0); subtract the bias W·0 first")
    transpose = jax.linear_transpose(apply_w, example)

    def apply_wt(r: jax.typing.ArrayLike) -> jax.Array:
        r = jnp.asarray(r)
        if r.shape != at_zero.shape:
            raise ValueError(f"r must have the shape of W z {at_zero.shape}; got {r.shape}")
        return transpose(r.astype(at_zero.dtype))[0]

    return apply_wt


def lipschitz_constant(
    apply_w: Operator,
    apply_wt: Operator,
    shape: tuple[int, ...],
    num_iters: int = 100,
    dtype=jnp.float32,
) -> jax.Array:
    """‖W‖²_op (the Lipschitz constant of ∇½‖t − Wz‖²) by power iteration on WᵀW.

    Args:
      apply_w: z ↦ W z.
      apply_wt: r ↦ Wᵀ r.
      shape: the shape of z.
      num_iters: power-iteration steps (a fixed start vector, so the result is deterministic).
      dtype: dtype of z.

    Returns:
      The scalar estimate, from below (when the top singular values are close it can be
      short by a few percent; :func:`lasso_fista` backtracks from it).

    Example:
      >>> from jaxlab.attribution import lipschitz_constant
      >>> w = jnp.diag(jnp.array([3.0, 1.0]))
      >>> round(float(lipschitz_constant(lambda z: w @ z, lambda r: w.T @ r, (2,))), 3)
      9.0
    """
    check_integer("num_iters", num_iters, low=1)
    for name, fn in (("apply_w", apply_w), ("apply_wt", apply_wt)):
        if not callable(fn):
            raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    if not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(f"dtype must be a floating dtype, got {dtype}")
    shape = tuple(shape)
    if not shape or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in shape):
        raise ValueError(f"shape must be a non-empty tuple of positive ints, got {shape}")
    v = jax.random.normal(jax.random.key(0), shape, dtype)

    def body(_, v):
        u = apply_wt(apply_w(v))
        return u / jnp.maximum(jnp.linalg.norm(u), 1e-30)

    v = jax.lax.fori_loop(0, num_iters, body, v / jnp.linalg.norm(v))
    return jnp.sum(apply_w(v) ** 2)


def lasso_fista(
    apply_w: Operator,
    apply_wt: Operator,
    target: jax.typing.ArrayLike,
    anchor: jax.typing.ArrayLike,
    alpha: float,
    step: float | jax.typing.ArrayLike | None = None,
    num_iters: int = 1000,
) -> jax.Array:
    """The anchored lasso ẑ = argmin_z ½‖t − W z‖² + α‖z − z̄‖₁ by FISTA.

    With δ = z − z̄ and t' = t − W z̄ the problem is the plain lasso in δ, solved from δ = 0
    by FISTA (Beck & Teboulle 2009):

        δ_k = S_{α·s}( y_k − s·Wᵀ(W y_k − t') ),   s = 1/L, L = ‖W‖²_op
        θ_{k+1} = (1 + √(1 + 4θ_k²)) / 2,   y_{k+1} = δ_k + ((θ_k − 1)/θ_{k+1})(δ_k − δ_{k−1})

    (FLIPAD's reconstruction, Sec. 4 of Laszkiewicz et al.). Written for one query; batch
    queries with ``jax.vmap``.

    Default step: power iteration estimates L from below, and can fall short when the top
    singular values are close. So each iteration backtracks (Beck & Teboulle's FISTA with
    backtracking, Sec. 4): with d = δ_k − y_k it requires ‖W d‖² ≤ L‖d‖² (the quadratic
    upper bound of ½‖t' − W·‖² that FISTA's rate rests on) and else raises L ← 1.5·L and
    redoes the step. L starts at 1.01 × the estimate and never decreases. This costs one
    more application of W per iteration (and one per retry); a given ``step`` is used as is.

    Bad input: ``alpha < 0``, a non-positive ``step``, ``num_iters < 1``, an integer or
    misshapen ``anchor`` or ``target`` raise ``ValueError`` (``alpha`` and ``step`` only when
    concrete; traced, an invalid value gives NaN). A NaN in ``target`` or ``anchor``, or a
    given step too large for W (the iterates blow up), gives NaN.

    Args:
      apply_w: z ↦ W z (linear; a dense matrix, a convolution, …).
      apply_wt: r ↦ Wᵀ r, the adjoint of ``apply_w``.
      target: t, the right-hand side minus the bias (shape of W z).
      anchor: z̄ (shape of z).
      alpha: α ≥ 0.
      step: s > 0, at most 1/L for convergence; ``None`` = backtracking from
        :func:`lipschitz_constant` (see above).
      num_iters: FISTA iterations, ≥ 1.

    Returns:
      ẑ, the shape of ``anchor``.

    Example:
      >>> from jaxlab.attribution import lasso_fista
      >>> w = jnp.eye(3)
      >>> z = lasso_fista(lambda z: w @ z, lambda r: w.T @ r, jnp.array([2.0, 0.1, -1.0]),
      ...                 jnp.zeros(3), alpha=0.5, num_iters=50)
      >>> [round(float(v), 3) for v in z]
      [1.5, 0.0, -0.5]

    References:
      Laszkiewicz, Ricker, Lederer, Fischer. Single-Model Attribution of Generative Models
      Through Final-Layer Inversion. ICML 2024.
      Beck, Teboulle. A Fast Iterative Shrinkage-Thresholding Algorithm for Linear Inverse
      Problems. SIAM J. Imaging Sciences 2009.
    """
    anchor = jnp.asarray(anchor)
    if not jnp.issubdtype(anchor.dtype, jnp.floating):
        raise ValueError(
            f"anchor must be a float array (z̄ is continuous), got dtype {anchor.dtype}"
        )
    target = as_float("target", target).astype(anchor.dtype)
    for name, fn in (("apply_w", apply_w), ("apply_wt", apply_wt)):
        if not callable(fn):
            raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    check_range("alpha", alpha, 0.0)
    check_integer("num_iters", num_iters, low=1)
    try:
        out_shape = jax.eval_shape(apply_w, anchor).shape
    except (TypeError, ValueError) as e:
        raise ValueError(f"anchor of shape {anchor.shape} is not an input of apply_w: {e}") from e
    if out_shape != target.shape:
        raise ValueError(
            f"target must have the shape of W @ anchor {out_shape}; got {target.shape}"
        )
    residual_target = target - apply_w(anchor)  # t' = t − W z̄
    zero = jnp.zeros_like(anchor)
    theta0 = jnp.ones((), anchor.dtype)
    if step is not None:
        check_range("step", step, 0.0, low_open=True)
        delta = _fista_fixed(
            apply_w, apply_wt, residual_target, zero, theta0, alpha, step, num_iters
        )
        valid = (jnp.asarray(alpha) >= 0) & (jnp.asarray(step) > 0)
    else:
        lipschitz = 1.01 * lipschitz_constant(apply_w, apply_wt, anchor.shape, dtype=anchor.dtype)
        delta = _fista_backtracking(
            apply_w, apply_wt, residual_target, zero, theta0, alpha, lipschitz, num_iters
        )
        valid = jnp.asarray(alpha) >= 0
    # A traced α < 0 or step ≤ 0 cannot raise: the answer is NaN, not a "solution".
    return jnp.where(valid, anchor + delta, jnp.nan)


def _momentum(new, delta, theta):
    """FISTA's extrapolation: θ_{k+1} and y_{k+1} (Beck & Teboulle, Eq. 4.2-4.3)."""
    theta_next = (1.0 + jnp.sqrt(1.0 + 4.0 * theta**2)) / 2.0
    return new + ((theta - 1.0) / theta_next) * (new - delta), theta_next


def _fista_fixed(apply_w, apply_wt, residual_target, zero, theta0, alpha, step, num_iters):
    def body(_, state):
        delta, y, theta = state
        grad = apply_wt(apply_w(y) - residual_target)
        new = soft_threshold(y - step * grad, alpha * step)  # δ_k = S_{αs}(y − s∇f(y))
        y, theta_next = _momentum(new, delta, theta)
        return new, y, theta_next

    return jax.lax.fori_loop(0, num_iters, body, (zero, zero, theta0))[0]


def _fista_backtracking(
    apply_w, apply_wt, residual_target, zero, theta0, alpha, lipschitz, num_iters
):
    def body(_, state):
        delta, y, theta, big_l = state
        grad = apply_wt(apply_w(y) - residual_target)

        def attempt(big_l):
            new = soft_threshold(y - grad / big_l, alpha / big_l)
            d = new - y
            # f(new) ≤ f(y) + ⟨∇f(y), d⟩ + L/2‖d‖² ⟺ ‖W d‖² ≤ L‖d‖² (f quadratic).
            # Written as "not above" so that NaN (bad data) stops the retries at once.
            ok = ~(jnp.sum(apply_w(d) ** 2) > big_l * jnp.sum(d * d) * (1.0 + 1e-5))
            return new, big_l, ok

        def retry(carry):
            return attempt(1.5 * carry[1])

        def not_ok(carry):
            return ~carry[2] & jnp.isfinite(carry[1])

        new, big_l, _ = jax.lax.while_loop(not_ok, retry, attempt(big_l))
        y, theta_next = _momentum(new, delta, theta)
        return new, y, theta_next, big_l

    state = (zero, zero, theta0, jnp.asarray(lipschitz, zero.dtype))
    return jax.lax.fori_loop(0, num_iters, body, state)[0]


def final_layer_inversion(
    generator_last_layer: Callable[[jax.Array], jax.Array],
    x: jax.typing.ArrayLike,
    anchor: jax.typing.ArrayLike,
    alpha: float = 5e-4,
    num_iters: int = 1000,
    eps: float = 1e-6,
    step: float | jax.typing.ArrayLike | None = None,
) -> jax.Array:
    """FLIPAD's features: the penultimate activation that best explains a query.

    For a generator whose last layer is x = tanh(W z + b) (``generator_last_layer(z) =
    W z + b``, affine: dense, convolution or transposed convolution):

        t = atanh(clip(x, −1 + ε, 1 − ε))                                (Sec. 4)
        ẑ(x) = argmin_z ½‖t − W z − b‖² + α‖z − z̄‖₁

    with z̄ the anchor (G's mean penultimate activation). b = last_layer(0) and the adjoint
    of z ↦ W z come from ``jax.linear_transpose``. A query with entries at exactly ±1 is
    clipped (finite target ±atanh(1 − ε)). Written for one query; ``jax.vmap`` for batches.

    Args:
      generator_last_layer: z ↦ W z + b (pre-tanh).
      x: one query in (−1, 1)^m (shape of the layer's output); must be finite.
      anchor: z̄ (shape of the layer's input).
      alpha: α (5e-4 in the reference code's GAN settings).
      num_iters: FISTA iterations.
      eps: ε of the clipping.
      step: FISTA step; ``None`` = from power iteration.

    Returns:
      ẑ, the shape of ``anchor``.

    Example:
      >>> from jaxlab.attribution import final_layer_inversion
      >>> w, b = jnp.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), jnp.array([0.1, 0.0, -0.1])
      >>> layer = lambda z: w @ z + b
      >>> x = jnp.tanh(layer(jnp.array([0.3, -0.2])))
      >>> z = final_layer_inversion(layer, x, jnp.zeros(2), alpha=0.0, num_iters=500)
      >>> [round(float(v), 3) for v in z]
      [0.3, -0.2]
    """
    if not callable(generator_last_layer):
        raise ValueError(
            f"generator_last_layer must be callable, got {type(generator_last_layer).__name__}"
        )
    x = jnp.asarray(x)
    anchor = jnp.asarray(anchor)
    if not isinstance(x, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError("x must be finite; got NaN or inf entries")
    if not 0 < eps < 1:
        raise ValueError(f"eps must be in (0, 1); got {eps}")
    bias = generator_last_layer(jnp.zeros_like(anchor))
    if bias.shape != x.shape:
        raise ValueError(f"x must have the last layer's output shape {bias.shape}; got {x.shape}")

    def apply_w(z):
        return generator_last_layer(z) - bias

    apply_wt = linear_adjoint(apply_w, anchor)
    target = jnp.arctanh(jnp.clip(x, -1.0 + eps, 1.0 - eps)) - bias
    return lasso_fista(apply_w, apply_wt, target, anchor, alpha, step=step, num_iters=num_iters)
