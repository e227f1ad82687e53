r"""ADR-GD: activation-descent regularisation for maximising a ReLU network over a box.

Yu & Gao (ICML 2024) relax the activation pattern of a ReLU MLP into one continuous variable
σ ∈ [0.3, 0.7] per hidden unit ("on" when σ < 0.5), optimise the input x and σ jointly on a
surrogate that is linear once σ is fixed, and keep x inside the region that σ names with a
worst-unit hinge penalty whose multiplier c is ascended. The surrogate only guides the
search: the result is the best TRUE value f(x) met along the trajectory.

Networks are lists of ``(W, b)`` layers, ``W: [in, out]``, ``b: [out]``; hidden layers apply
``h = relu(h @ W + b)`` and the last layer (``out = 1``) is linear. Hand-written: no
maintained JAX library implements ADR-GD; the hyper-parameters and their defaults follow the
reference code's small configuration (``configs/small_config.py`` and
``input_optimization_ncopt`` in github.com/hoy021/ADR-GD).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import (
    as_float,
    check_integer,
    check_key,
    check_range,
    is_traced,
    numpy_seed,
)

Layer = tuple[ArrayLike, ArrayLike]
MLP = Sequence[Layer]

SIGMA_MIN, SIGMA_MAX = 0.3, 0.7


class ADRGDResult(NamedTuple):
    """Result of :func:`adr_gd` and :func:`projected_gradient_ascent`.

    Attributes:
      best_value: ``[]`` the largest true f(x) over the trajectory.
      best_x: ``[n]`` the point that reached it (always inside the box).
      values: ``[num_steps]`` the true f(x_t) after each step t = 1..num_steps.
    """

    best_value: jax.Array
    best_x: jax.Array
    values: jax.Array


def _check_mlp(params: MLP, x0: ArrayLike | None = None) -> list[tuple[jax.Array, jax.Array]]:
    if len(params) < 1:
        raise ValueError("params must hold at least one (W, b) layer, got an empty list")
    layers = []
    prev = None
    for i, layer in enumerate(params):
        if len(layer) != 2:
            raise ValueError(f"params[{i}] must be a (W, b) pair, got {len(layer)} items")
        w, b = as_float(f"params[{i}] W", layer[0]), as_float(f"params[{i}] b", layer[1])
        if w.ndim != 2:
            raise ValueError(f"params[{i}] W must have shape [in, out], got {w.shape}")
        if b.shape != (w.shape[1],):
            raise ValueError(f"params[{i}] b must have shape [{w.shape[1]}], got {b.shape}")
        if prev is not None and w.shape[0] != prev:
            raise ValueError(
                f"layer shapes don't chain: params[{i - 1}] has {prev} outputs but params[{i}] "
                f"W has shape {w.shape}"
            )
        prev = w.shape[1]
        layers.append((w, b))
    if prev != 1:
        raise ValueError(
            f"params' last layer must have one output, got W of shape {layers[-1][0].shape}"
        )
    if x0 is not None and jnp.shape(x0) != (layers[0][0].shape[0],):
        raise ValueError(
            f"x0 must have shape [{layers[0][0].shape[0]}] (the first W's rows), got "
            f"{jnp.shape(x0)}"
        )
    return layers


def _check_sizes(sizes: Sequence[int]) -> None:
    if len(sizes) < 2 or any(
        isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 1 for s in sizes
    ):
        raise ValueError(f"sizes must hold at least two positive int widths, got {list(sizes)}")


def _check_positive(**values: float | None) -> None:
    for name, value in values.items():
        if value is not None:
            check_range(name, value, 0.0, low_open=True)


def _check_nonnegative(**values: float | None) -> None:
    for name, value in values.items():
        if value is not None:
            check_range(name, value, 0.0)


def _check_box(lower: ArrayLike, upper: ArrayLike, n: int) -> tuple[jax.Array, jax.Array]:
    lo = (
        jnp.broadcast_to(jnp.asarray(lower, jnp.float32), (n,))
        if jnp.ndim(lower) == 0
        else (jnp.asarray(lower, jnp.float32))
    )
    hi = (
        jnp.broadcast_to(jnp.asarray(upper, jnp.float32), (n,))
        if jnp.ndim(upper) == 0
        else (jnp.asarray(upper, jnp.float32))
    )
    if lo.shape != (n,) or hi.shape != (n,):
        raise ValueError(f"lower/upper must be scalars or shape [{n}], got {lo.shape}, {hi.shape}")
    if not isinstance(lo, jax.core.Tracer) and not isinstance(hi, jax.core.Tracer):
        bad = np.asarray(lo) > np.asarray(hi)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"box has lower > upper at coordinate {i}: {float(lo[i])} > {float(hi[i])}"
            )
    return lo, hi


def relu_mlp(params: MLP, x: ArrayLike) -> jax.Array:
    """True value f(x) of a ReLU MLP with a scalar output.

    Args:
      params: list of ``(W: [in, out], b: [out])``; hidden layers use ReLU, the last
        (``out = 1``) is linear.
      x: ``[n]`` input.

    Returns:
      ``[]`` the output f(x).

    Example:
      >>> from jaxlab.optim import relu_mlp
      >>> params = [(jnp.eye(2), jnp.zeros(2)), (jnp.ones((2, 1)), jnp.zeros(1))]
      >>> float(relu_mlp(params, jnp.array([1.0, -1.0])))
      1.0
    """
    params = _check_mlp(params, x)
    h = as_float("x", x)
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[0]


def random_relu_mlp(
    key: jax.Array,
    sizes: Sequence[int],
    *,
    scale: float = 1.0,
    positive_prob: float = 0.5,
    normalize_columns: bool = False,
) -> list[tuple[jax.Array, jax.Array]]:
    """Random ReLU MLP of the reference: |w| ~ U(0, scale) with a random sign, biases alike.

    Each weight and bias is ``u · s`` with ``u ~ U(0, scale)`` and ``s = +1`` with probability
    ``positive_prob`` (else −1); ``normalize_columns`` divides every W and b by the column
    norms of W (the reference's ``batch_norm`` flag, applied to both as in the reference).
    ``vmap`` over keys to draw a batch of networks.

    Args:
      key: PRNG key.
      sizes: layer widths ``[n, h_1, ..., 1]`` (the reference's small config is
        ``[10, 64, 64, 1]``, the large one ``[128, 500, 500, 500, 1]``).
      scale: the magnitude range.
      positive_prob: probability of a positive sign.
      normalize_columns: divide by the column norms of each W.

    Returns:
      list of ``(W: [sizes[l], sizes[l+1]], b: [sizes[l+1]])``.

    Example:
      >>> from jaxlab.optim import random_relu_mlp
      >>> params = random_relu_mlp(jax.random.key(0), [10, 64, 64, 1])
      >>> [w.shape for w, _ in params]
      [(10, 64), (64, 64), (64, 1)]
    """
    _check_sizes(sizes)
    check_key("key", key)
    _check_positive(scale=scale)
    check_range("positive_prob", positive_prob, 0.0, 1.0)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        kw, kws, kb, kbs = jax.random.split(jax.random.fold_in(key, i), 4)
        w = jax.random.uniform(kw, (n_in, n_out), maxval=scale)
        w = jnp.where(jax.random.uniform(kws, (n_in, n_out)) > positive_prob, -w, w)
        b = jax.random.uniform(kb, (n_out,), maxval=scale)
        b = jnp.where(jax.random.uniform(kbs, (n_out,)) > positive_prob, -b, b)
        if normalize_columns:
            norms = jnp.linalg.norm(w, axis=0)
            w, b = w / norms, b / norms
        layers.append((w, b))
    return layers


def reference_random_relu_mlp(
    key: jax.Array, sizes: Sequence[int], *, scale: float = 1.0, positive_prob: float = 0.5
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The reference notebook's networks, bit for bit: numpy's legacy stream seeded from ``key``.

    ``generate_random_ReLU_NN`` of the reference draws, per layer, sign probabilities then
    magnitudes for W, then the same for b, from ``np.random.seed(s)`` where ``key`` is
    ``jax.random.key(s)`` (:func:`jaxlab._checks.numpy_seed`). With seed 337550 and
    ``[10, 64, 64, 1]`` (resp. 499777 and ``[128, 500, 500, 500, 1]``) this is the network of
    the reference notebook's stored output (GD 19.96 vs ADR-GD 24.84, resp. 31236 vs 34681).

    Args:
      key: ``jax.random.key(s)``; ``s`` (< 2**32) seeds numpy's legacy stream.
      sizes: layer widths ``[n, h_1, ..., 1]``.
      scale: the magnitude range.
      positive_prob: probability of a positive sign.

    Returns:
      list of float64 numpy ``(W, b)``.

    Example:
      >>> from jaxlab.optim import reference_random_relu_mlp
      >>> params = reference_random_relu_mlp(jax.random.key(337550), [10, 64, 64, 1])
      >>> params[0][0].shape, params[0][1].shape
      ((10, 64), (64,))
    """
    _check_sizes(sizes)
    _check_positive(scale=scale)
    check_range("positive_prob", positive_prob, 0.0, 1.0)
    seed = numpy_seed("key", key)
    if seed >= 2**32:
        raise ValueError(f"key must come from a seed < 2**32 (numpy's legacy stream), got {seed}")
    rng = np.random.RandomState(seed)

    def draw(shape):
        probs = rng.uniform(0, 1, shape)
        w = rng.uniform(0, scale, shape)
        w[np.where(probs > positive_prob)] *= -1.0
        return w

    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        w = draw((n_in, n_out))
        b = draw((n_out,))
        layers.append((w, b))
    return layers


def _preactivations(params, x):
    """Pre-activations z_l(x) of every hidden layer on the true network."""
    zs = []
    h = x
    for w, b in params[:-1]:
        z = h @ w + b
        zs.append(z)
        h = jax.nn.relu(z)
    return zs


def _init_sigmas(params, x):
    # σ_l = 0.5 − 0.01·sign(z_l(x)): the gates open exactly on the units active at x.
    return tuple(0.5 - 0.01 * jnp.sign(z) for z in _preactivations(params, x))


def _scale_grad(g: jax.Array, threshold: float | None) -> jax.Array:
    # ĝ = g / ‖g‖ when ‖g‖ exceeds the threshold (and is not ≈ 0, atol 1e-4 as in the code).
    norm = jnp.linalg.norm(g)
    big = norm > 1e-4
    if threshold is not None:
        big = big & (norm > threshold)
    return jnp.where(big, g / jnp.where(big, norm, 1.0), g)


def _safe_norm(v, axis=None):
    n = jnp.linalg.norm(v, axis=axis)
    return jnp.where(n > 0, n, 1.0)


def adr_gd(
    params: MLP,
    x0: ArrayLike,
    *,
    lower: ArrayLike = -1.0,
    upper: ArrayLike = 1.0,
    num_steps: int = 3000,
    lr: float = 0.5,
    lr_sigma: float = 1.0,
    lr_c: float | None = 1e-2,
    c: float = 1.0,
    c_min: float = 0.2,
    c_max: float = 10.0,
    c_reduce_rate: float = 1e-2,
    c_grad_tolerance: float = 1e-2,
    kappa: float = 2000.0,
    perturb_freq: int | None = 25,
    noise_scale: float = 0.1,
    grad_threshold: float = 1e-4,
    x_grad_threshold: float | None = 1.0,
    reset_sigma_every: int | None = None,
    normalize: bool = True,
    key: jax.Array | None = None,
) -> ADRGDResult:
    r"""Maximises a ReLU MLP over a box by activation-descent regularisation (ADR-GD).

    With gates a_l = 1 − sigmoid(κ(σ_l − 0.5 + 10⁻⁶)) the surrogate is linear in x,
    h̃_l = (W_lᵀh̃_{l−1} + b_l) ⊙ a_l, f̃(x; σ) = W_Lᵀh̃_{L−1} + b_L, and with the true
    pre-activations z_l(x) the worst-unit consistency penalty is

    .. math::
        R_l = \max_j \mathrm{relu}(z_{lj}\,\mathrm{relu}(σ_{lj} − ½))
            + \max_j \mathrm{relu}(−z_{lj}\,\mathrm{relu}(½ − σ_{lj})),\qquad
        L(x, σ, c) = −f̃(x; σ) + c \textstyle\sum_l R_l .

    Each step takes one ``value_and_grad`` of L over (x, σ, c):
    x ← clip(x − η ĝ_x, lower, upper); σ_l ← clip(σ_l − η_σ ĝ_{σ_l}, 0.3, 0.7), where ĝ is
    the gradient divided by its norm when that norm exceeds the threshold (``x_grad_threshold``
    for x, 1 for each σ_l); c ← clip(c + η_c ∂L/∂c, c_min, c_max), or c − ``c_reduce_rate``
    when ∂L/∂c ≤ ``c_grad_tolerance``. Escape: when ‖ĝ_{σ_l}‖ ≤ ``grad_threshold`` and at
    least ``perturb_freq`` steps passed since layer l's last kick, N(0, noise_scale²) noise is
    added to ĝ_{σ_l}. With ``normalize`` z_l is divided by the column norms of
    W_1 diag(a_1) ⋯ W_l and f̃ by the norm of the full gated product (gates under
    stop-gradient), as in the reference. σ starts at 0.5 − 0.01·sign(z_l(x₀)) (and is reset so
    every ``reset_sigma_every`` steps when given), c at ``c``.

    The returned point is always inside the box (x₀ is clipped into it first). ``vmap`` over
    networks (batched ``params``), starting points or keys.

    Args:
      params: list of ``(W: [in, out], b: [out])``, last layer ``out = 1``.
      x0: ``[n]`` starting point (the reference starts at 0).
      lower: scalar or ``[n]`` lower bounds of the box.
      upper: scalar or ``[n]`` upper bounds (must be ≥ ``lower``).
      num_steps: T.
      lr: η, step on x.
      lr_sigma: η_σ, step on σ.
      lr_c: η_c, ascent step on c (``None``: c stays fixed).
      c: initial multiplier.
      c_min: lower clip of c.
      c_max: upper clip of c.
      c_reduce_rate: decrement of c when the penalty is small.
      c_grad_tolerance: "small" threshold on ∂L/∂c.
      kappa: κ, the sharpness of the gates.
      perturb_freq: minimum steps between two kicks of a layer's σ (``None``: no kicks).
      noise_scale: standard deviation of a kick.
      grad_threshold: ‖ĝ_σ‖ below which a kick is due.
      x_grad_threshold: ‖g_x‖ above which g_x is normalised (``None``: always).
      reset_sigma_every: re-initialise σ from the current x every so many steps (``None``).
      normalize: the layer normalisation of the penalty and objective.
      key: PRNG key of the kicks (default ``jax.random.key(0)``).

    Hyper-parameters are checked when concrete (``ValueError`` naming the argument:
    ``lr``, ``lr_sigma``, ``kappa``, ``x_grad_threshold`` > 0; ``lr_c``, ``c``, ``c_min``,
    ``c_reduce_rate``, ``noise_scale``, ``grad_threshold`` ≥ 0; ``c_min ≤ c_max``); traced
    ones (``vmap`` over a grid) are unchecked. Integer ``x0`` is promoted to float.

    Returns:
      ``ADRGDResult(best_value [], best_x [n], values [num_steps])`` on the TRUE network.

    Example:
      >>> from jaxlab.optim import adr_gd, random_relu_mlp
      >>> params = random_relu_mlp(jax.random.key(0), [4, 16, 1])
      >>> res = adr_gd(params, jnp.zeros(4), num_steps=50)
      >>> res.values.shape, bool(jnp.all(jnp.abs(res.best_x) <= 1.0))
      ((50,), True)

    References:
      Yu, Gao. "Activation-Descent Regularization for Input Optimization of ReLU Networks",
      ICML 2024 (arXiv 2406.00494); reference code github.com/hoy021/ADR-GD.
    """
    layers = _check_mlp(params, x0)
    n = layers[0][0].shape[0]
    lo, hi = _check_box(lower, upper, n)
    check_integer("num_steps", num_steps, low=1)
    if reset_sigma_every is not None:
        check_integer("reset_sigma_every", reset_sigma_every, low=1)
    if perturb_freq is not None:
        check_integer("perturb_freq", perturb_freq, low=1)
    _check_positive(lr=lr, lr_sigma=lr_sigma, kappa=kappa, x_grad_threshold=x_grad_threshold)
    _check_nonnegative(
        lr_c=lr_c,
        c=c,
        c_min=c_min,
        c_reduce_rate=c_reduce_rate,
        noise_scale=noise_scale,
        grad_threshold=grad_threshold,
    )
    check_range("c_grad_tolerance", c_grad_tolerance)
    check_range("c_max", c_max, None if is_traced(c_min) else c_min)
    key = jax.random.key(0) if key is None else check_key("key", key)
    hidden, (w_out, b_out) = layers[:-1], layers[-1]
    num_hidden = len(hidden)

    def objective(x, sigmas, cc):
        h_sur, h_true, prod = x, x, None
        penalty = 0.0
        for (w, b), sigma in zip(hidden, sigmas, strict=True):
            gate = 1.0 - jax.nn.sigmoid(kappa * (sigma - 0.5 + 1e-6))
            prod = w if prod is None else prod @ w
            z = h_true @ w + b
            if normalize:  # column norms of W_1 diag(a_1) ... W_l (gates stop-gradient)
                z = z / jax.lax.stop_gradient(_safe_norm(prod, axis=0))
            prod = prod * jax.lax.stop_gradient(gate)[None, :] if normalize else prod
            # R_l: worst-unit hinge on gate/sign disagreement.
            penalty = penalty + jnp.max(jax.nn.relu(z * jax.nn.relu(sigma - 0.5)))
            penalty = penalty + jnp.max(jax.nn.relu(-z * jax.nn.relu(0.5 - sigma)))
            h_sur = (h_sur @ w + b) * gate
            h_true = jax.nn.relu(h_true @ w + b)
        f_sur = (h_sur @ w_out + b_out)[0]
        if normalize:
            scale = w_out if prod is None else prod @ w_out
            f_sur = f_sur / jax.lax.stop_gradient(_safe_norm(scale))
        return -f_sur + cc * penalty

    grad_fn = jax.grad(objective, argnums=(0, 1, 2))
    x_start = jnp.clip(jnp.asarray(x0, jnp.float32), lo, hi)

    def step(carry, t):
        x, sigmas, cc, last_kick, key = carry
        if reset_sigma_every is not None:
            fresh = _init_sigmas(layers, x)
            reset = (t + 1) % reset_sigma_every == 0
            sigmas = tuple(jnp.where(reset, f, s) for f, s in zip(fresh, sigmas, strict=True))
        g_x, g_sigmas, g_c = grad_fn(x, sigmas, cc)
        x = jnp.clip(x - lr * _scale_grad(g_x, x_grad_threshold), lo, hi)
        if lr_c is not None:
            cc = jnp.where(g_c <= c_grad_tolerance, cc - c_reduce_rate, cc + lr_c * g_c)
            cc = jnp.clip(cc, c_min, c_max)
        key, *subkeys = jax.random.split(key, num_hidden + 1)
        new_sigmas, new_last = [], []
        for i, (sigma, g) in enumerate(zip(sigmas, g_sigmas, strict=True)):
            g = _scale_grad(g, 1.0)
            if perturb_freq is not None:  # escape kick when σ's gradient vanishes
                kick = ((t - last_kick[i]) >= perturb_freq) & (jnp.linalg.norm(g) <= grad_threshold)
                noise = noise_scale * jax.random.normal(subkeys[i], g.shape)
                g = jnp.where(kick, g + noise, g)
                new_last.append(jnp.where(kick, t, last_kick[i]))
            else:
                new_last.append(last_kick[i])
            new_sigmas.append(jnp.clip(sigma - lr_sigma * g, SIGMA_MIN, SIGMA_MAX))
        carry = (x, tuple(new_sigmas), cc, jnp.stack(new_last), key)
        return carry, (relu_mlp(layers, x), x)

    carry0 = (
        x_start,
        _init_sigmas(layers, x_start),
        jnp.asarray(c, jnp.float32),
        jnp.zeros((max(num_hidden, 1),), jnp.int32),
        key,
    )
    _, (values, xs) = jax.lax.scan(step, carry0, jnp.arange(num_steps))
    best = jnp.argmax(values)
    return ADRGDResult(values[best], xs[best], values)


def projected_gradient_ascent(
    params: MLP,
    x0: ArrayLike,
    *,
    lower: ArrayLike = -1.0,
    upper: ArrayLike = 1.0,
    num_steps: int = 3000,
    lr: float = 0.5,
    gradient: Literal["normalized", "sign", "raw"] = "normalized",
) -> ADRGDResult:
    r"""Projected gradient ascent on a ReLU MLP over a box: the baseline of ADR-GD.

    .. math:: x_{t+1} = \mathrm{clip}(x_t + η\,d(∇f(x_t)), \text{lower}, \text{upper})

    with d(g) = g/‖g‖ (``"normalized"``, the reference's ``norm_grad=True``; zero gradients
    stay zero), sign(g) (``"sign"``, L∞ PGD) or g (``"raw"``).

    Args:
      params: list of ``(W: [in, out], b: [out])``, last layer ``out = 1``.
      x0: ``[n]`` starting point (clipped into the box).
      lower: scalar or ``[n]`` lower bounds.
      upper: scalar or ``[n]`` upper bounds.
      num_steps: T.
      lr: η.
      gradient: the step direction.

    Returns:
      ``ADRGDResult(best_value [], best_x [n], values [num_steps])``; the reference returns
      the last value, here the best along the trajectory (never lower).

    Example:
      >>> from jaxlab.optim import projected_gradient_ascent, random_relu_mlp
      >>> params = random_relu_mlp(jax.random.key(0), [4, 16, 1])
      >>> res = projected_gradient_ascent(params, jnp.zeros(4), num_steps=50)
      >>> res.values.shape
      (50,)

    References:
      Yu, Gao. "Activation-Descent Regularization for Input Optimization of ReLU Networks",
      ICML 2024 (``input_optimization_gd`` of the reference code).
    """
    layers = _check_mlp(params, x0)
    lo, hi = _check_box(lower, upper, layers[0][0].shape[0])
    if gradient not in ("normalized", "sign", "raw"):
        raise ValueError(f"gradient must be 'normalized', 'sign' or 'raw', got {gradient!r}")
    check_integer("num_steps", num_steps, low=1)
    _check_positive(lr=lr)
    value_and_grad = jax.value_and_grad(lambda x: relu_mlp(layers, x))

    def step(x, _):
        _, g = value_and_grad(x)
        if gradient == "normalized":
            g = g / _safe_norm(g)
        elif gradient == "sign":
            g = jnp.sign(g)
        x = jnp.clip(x + lr * g, lo, hi)
        return x, (relu_mlp(layers, x), x)

    x_start = jnp.clip(jnp.asarray(x0, jnp.float32), lo, hi)
    _, (values, xs) = jax.lax.scan(step, x_start, None, length=num_steps)
    best = jnp.argmax(values)
    return ADRGDResult(values[best], xs[best], values)
