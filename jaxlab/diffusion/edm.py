"""EDM (Karras et al. 2022): preconditioning, the training loss, σ steps and the Heun sampler.

The EDM parametrisation is x = y + σ·n with n ~ N(0, I); a denoiser D(x; σ) estimates y.
Every function here takes the denoiser as a plain callable ``denoise_fn(x, sigma) -> D``
with ``x: [b, ...]`` and ``sigma: [b]``, so a network (wrapped by :func:`edm_denoise`) and
a closed form such as :func:`jaxlab.diffusion.optimal_denoiser` plug in alike.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxlab._checks import as_float, check_key, check_range

__all__ = [
    "edm_denoise",
    "edm_heun_sample",
    "edm_loss",
    "edm_precondition",
    "edm_sigma_steps",
]

DenoiseFn = Callable[[jax.Array, jax.Array], jax.Array]


def _expand(v: jax.Array, x: jax.Array) -> jax.Array:
    """``[b]`` -> ``[b, 1, ..., 1]`` matching ``x``'s rank (no implicit rank promotion)."""
    return jnp.reshape(v, v.shape + (1,) * (x.ndim - v.ndim))


def _check_denoise_fn(denoise_fn: DenoiseFn) -> None:
    if not callable(denoise_fn):
        raise ValueError(
            f"denoise_fn must be callable (x, sigma) -> D, got {type(denoise_fn).__name__}"
        )


def edm_precondition(
    sigma: jax.typing.ArrayLike, sigma_data: float = 0.5
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """EDM's preconditioning coefficients (Table 1 of Karras et al.).

        c_skip = σ_data² / (σ² + σ_data²),   c_out = σ·σ_data / √(σ² + σ_data²),
        c_in = 1 / √(σ² + σ_data²),          c_noise = ¼ ln σ

    so that D(x; σ) = c_skip·x + c_out·F(c_in·x; c_noise)                  (Eq. 7)

    Args:
      sigma: σ > 0, any shape. A concrete σ ≤ 0 (or NaN) raises ``ValueError``; under
        ``jit`` the coefficients of such entries are NaN (never a finite wrong number).
      sigma_data: σ_data > 0, the standard deviation of the data (same rule).

    Returns:
      ``(c_skip, c_out, c_in, c_noise)``, each of ``sigma``'s shape.

    Example:
      >>> from jaxlab.diffusion import edm_precondition
      >>> c_skip, c_out, c_in, c_noise = edm_precondition(jnp.array([0.5]))
      >>> print(round(float(c_skip[0]), 3), round(float(c_in[0]), 3))
      0.5 1.414

    References:
      Karras, Aittala, Aila, Laine. Elucidating the Design Space of Diffusion-Based
      Generative Models. NeurIPS 2022.
    """
    sigma = as_float("sigma", sigma)
    check_range("sigma", sigma, 0.0, low_open=True)
    check_range("sigma_data", sigma_data, 0.0, low_open=True)
    total = sigma**2 + sigma_data**2
    c_skip = sigma_data**2 / total
    c_out = sigma * sigma_data / jnp.sqrt(total)
    c_in = 1.0 / jnp.sqrt(total)
    c_noise = jnp.log(sigma) / 4.0
    valid = (sigma > 0) & (jnp.asarray(sigma_data) > 0)  # traced σ ≤ 0: NaN, not a number
    c_skip, c_out, c_in, c_noise = (
        jnp.where(valid, c, jnp.nan) for c in (c_skip, c_out, c_in, c_noise)
    )
    return c_skip, c_out, c_in, c_noise


def edm_denoise(
    raw_fn: Callable[[jax.Array, jax.Array], jax.Array],
    x: jax.typing.ArrayLike,
    sigma: jax.typing.ArrayLike,
    sigma_data: float = 0.5,
) -> jax.Array:
    """The preconditioned denoiser D(x; σ) = c_skip·x + c_out·F(c_in·x; c_noise)  (Eq. 7).

    Args:
      raw_fn: the raw network F(x_in, c_noise) with ``x_in: [b, ...]``, ``c_noise: [b]``.
      x: ``[b, ...]`` noisy inputs.
      sigma: ``[b]`` noise levels (σ > 0).
      sigma_data: σ_data.

    Returns:
      ``[b, ...]`` denoised estimate.

    Example:
      >>> from jaxlab.diffusion import edm_denoise
      >>> d = edm_denoise(lambda x, c: jnp.zeros_like(x), jnp.ones((2, 3)), jnp.ones(2))
      >>> d.shape
      (2, 3)
    """
    x = as_float("x", x)
    sigma = as_float("sigma", sigma)
    if not callable(raw_fn):
        raise ValueError(f"raw_fn must be callable, got {type(raw_fn).__name__}")
    if x.ndim < 1:
        raise ValueError(f"x must have shape [b, ...], got a scalar {x.shape}")
    if x.ndim < 1 or sigma.shape != x.shape[:1]:
        raise ValueError(
            f"sigma must have shape [{x.shape[0]}] (one per row of x); got {sigma.shape}"
        )
    c_skip, c_out, c_in, c_noise = edm_precondition(sigma, sigma_data)
    f = raw_fn(_expand(c_in, x) * x, c_noise)
    return _expand(c_skip, x) * x + _expand(c_out, x) * f


def edm_loss(
    denoise_fn: DenoiseFn,
    y: jax.typing.ArrayLike,
    key: jax.Array,
    p_mean: float = -1.2,
    p_std: float = 1.2,
    sigma_data: float = 0.5,
) -> jax.Array:
    """EDM's training loss with its log-normal σ sampling and weighting λ(σ).

        ln σ ~ N(P_mean, P_std²),  n ~ N(0, σ²I),
        L = E[ λ(σ) ‖D(y + n; σ) − y‖² ],  λ(σ) = (σ² + σ_data²) / (σ·σ_data)²   (Eq. 8, Table 1)

    The squared error is averaged over the feature axes and the batch.

    Args:
      denoise_fn: ``D(x, sigma)`` with ``x: [b, ...]``, ``sigma: [b]``.
      y: ``[b, ...]`` clean training examples.
      key: a PRNG key (σ and the noise are drawn from it).
      p_mean: P_mean.
      p_std: P_std.
      sigma_data: σ_data > 0.

    Returns:
      The scalar loss. ``p_std ≥ 0`` and ``sigma_data > 0`` are checked when concrete.

    Example:
      >>> from jaxlab.diffusion import edm_loss
      >>> loss = edm_loss(lambda x, s: 0.0 * x, jnp.ones((4, 2)), jax.random.key(0))
      >>> bool(loss > 0)
      True
    """
    _check_denoise_fn(denoise_fn)
    y = as_float("y", y)
    if y.ndim < 2 or y.shape[0] == 0:
        raise ValueError(f"y must have shape [b >= 1, ...] with a feature axis; got {y.shape}")
    check_key("key", key)
    check_range("p_std", p_std, 0.0)
    check_range("p_mean", p_mean)
    check_range("sigma_data", sigma_data, 0.0, low_open=True)
    k_sigma, k_noise = jax.random.split(key)
    sigma = jnp.exp(p_mean + p_std * jax.random.normal(k_sigma, y.shape[:1]))
    weight = (sigma**2 + sigma_data**2) / (sigma * sigma_data) ** 2
    x = y + _expand(sigma, y) * jax.random.normal(k_noise, y.shape, y.dtype)
    err = (denoise_fn(x, sigma) - y) ** 2
    per_example = jnp.mean(jnp.reshape(err, (y.shape[0], -1)), axis=1)
    return jnp.mean(weight * per_example)


def edm_sigma_steps(
    num_steps: int, sigma_min: float = 0.002, sigma_max: float = 80.0, rho: float = 7.0
) -> jax.Array:
    """EDM's noise levels σ_0 > … > σ_{N−1} = σ_min, with σ_N = 0 appended.

        σ_i = (σ_max^{1/ρ} + i/(N−1)·(σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ              (Eq. 5)

    Args:
      num_steps: N ≥ 2.
      sigma_min: σ_min > 0.
      sigma_max: σ_max > σ_min.
      rho: ρ > 0.

    Returns:
      ``[N + 1]`` decreasing levels ending with 0.

    Example:
      >>> from jaxlab.diffusion import edm_sigma_steps
      >>> s = edm_sigma_steps(18)
      >>> s.shape, float(s[0]), float(s[-1])
      ((19,), 80.0, 0.0)
    """
    if num_steps < 2:
        raise ValueError(f"num_steps must be >= 2; got {num_steps}")
    if not 0 < sigma_min < sigma_max:
        raise ValueError(f"need 0 < sigma_min < sigma_max; got {sigma_min}, {sigma_max}")
    if not rho > 0:
        raise ValueError(f"rho must be positive; got {rho}")
    i = jnp.arange(num_steps, dtype=jnp.result_type(float))
    inv = 1.0 / rho
    sigmas = (sigma_max**inv + i / (num_steps - 1) * (sigma_min**inv - sigma_max**inv)) ** rho
    # Pin the ends exactly (the power round-trip is off by an ulp).
    sigmas = sigmas.at[0].set(sigma_max).at[-1].set(sigma_min)
    return jnp.concatenate([sigmas, jnp.zeros((1,), sigmas.dtype)])


def edm_heun_sample(
    denoise_fn: DenoiseFn, noise: jax.typing.ArrayLike, sigmas: jax.typing.ArrayLike
) -> jax.Array:
    """Deterministic EDM sampler: Heun's 2nd-order method on the probability-flow ODE.

        dx/dσ = (x − D(x; σ)) / σ,   x_0 = σ_0 · noise                         (Eq. 4, Alg. 1)
        x̃ = x_i + (σ_{i+1} − σ_i)·d_i,  d_i = (x_i − D(x_i; σ_i)) / σ_i
        x_{i+1} = x_i + (σ_{i+1} − σ_i)·(d_i + d'_i)/2,  d'_i = (x̃ − D(x̃; σ_{i+1})) / σ_{i+1}

    with the Euler step alone when σ_{i+1} = 0. The same ``noise`` gives the same sample:
    this is the map whose agreement across models the reproducibility score measures.

    Args:
      denoise_fn: ``D(x, sigma)`` with ``x: [b, ...]``, ``sigma: [b]``.
      noise: ``[b, ...]`` standard normal initial noise (scaled by σ_0 here).
      sigmas: ``[N + 1]`` decreasing levels, e.g. :func:`edm_sigma_steps`; σ_N may be 0,
        the others must be > 0 (checked when concrete).

    Returns:
      ``[b, ...]`` samples x_N.

    Example:
      >>> from jaxlab.diffusion import edm_heun_sample, edm_sigma_steps
      >>> d = lambda x, s: jnp.zeros_like(x)      # data = a point mass at 0
      >>> x = edm_heun_sample(d, jnp.ones((2, 3)), edm_sigma_steps(8))
      >>> bool(jnp.allclose(x, 0.0, atol=1e-5))
      True

    References:
      Karras, Aittala, Aila, Laine. Elucidating the Design Space of Diffusion-Based
      Generative Models. NeurIPS 2022, Algorithm 1.
    """
    _check_denoise_fn(denoise_fn)
    noise = as_float("noise", noise)
    sigmas = as_float("sigmas", sigmas).astype(noise.dtype)
    if noise.ndim < 1 or noise.shape[0] < 1:
        raise ValueError(f"noise must have shape [b, ...]; got {noise.shape}")
    if sigmas.ndim != 1 or sigmas.shape[0] < 2:
        raise ValueError(f"sigmas must have shape [N + 1] with N >= 1; got {sigmas.shape}")
    check_range("sigmas", sigmas[:-1], 0.0, low_open=True)  # only the last may be 0
    check_range("sigmas", sigmas[-1:], 0.0)
    b = noise.shape[0]

    def step(x, pair):
        s_cur, s_next = pair
        d = (x - denoise_fn(x, jnp.full((b,), s_cur))) / s_cur
        x_euler = x + (s_next - s_cur) * d
        safe_next = jnp.where(s_next > 0, s_next, 1.0)
        d_next = (x_euler - denoise_fn(x_euler, jnp.full((b,), safe_next))) / safe_next
        x_heun = x + (s_next - s_cur) * 0.5 * (d + d_next)
        return jnp.where(s_next > 0, x_heun, x_euler), None

    x, _ = jax.lax.scan(step, noise * sigmas[0], (sigmas[:-1], sigmas[1:]))
    return x
