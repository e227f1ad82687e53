"""DCTPAD's features: log-absolute 2-D DCT-II coefficients of images (Frank et al. 2020)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.fft

__all__ = ["log_dct"]


def log_dct(x: jax.typing.ArrayLike, eps: float = 1e-5) -> jax.Array:
    """log(|DCT-II(x)| + ε) over the last two (spatial) axes, orthonormal DCT.

        X[k, l] = c_k c_l Σ_{i,j} x[i, j] cos(π(2i + 1)k / 2H) cos(π(2j + 1)l / 2W)
        features = log(|X| + ε)

    with the orthonormal scaling c_0 = √(1/N), c_k = √(2/N) (``norm="ortho"``, as
    ``scipy.fft.dctn``). The log-scaled spectrum is the input of the DCT-based GAN-image
    detectors (Frank et al. 2020) and of FLIPAD's DCTPAD baseline (Deep SAD on it). Built on
    ``jax.scipy.fft.dctn``; works under ``jit``/``vmap``/``grad``.

    Args:
      x: ``[..., H, W]`` images (channels, if any, before H and W: ``[..., C, H, W]``).
      eps: ε > 0 keeps the logarithm finite where a coefficient is 0.

    Returns:
      ``[..., H, W]`` log-absolute coefficients.

    Example:
      >>> from jaxlab.attribution import log_dct
      >>> out = log_dct(jnp.ones((4, 4)))  # only the DC coefficient (= 4) is non-zero
      >>> round(float(out[0, 0]), 4), bool(out[1, 2] < -11)
      (1.3863, True)

    References:
      Frank, Eisenhofer, Schönherr, Fischer, Kolossa, Holz. Leveraging Frequency Analysis
      for Deep Fake Image Recognition. ICML 2020.
      Laszkiewicz, Ricker, Lederer, Fischer. Single-Model Attribution of Generative Models
      Through Final-Layer Inversion. ICML 2024.
    """
    x = jnp.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape [..., H, W] (ndim >= 2); got {x.shape}")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.float32)
    if not eps > 0:
        raise ValueError(f"eps must be > 0; got {eps}")
    coeffs = jax.scipy.fft.dctn(x, type=2, axes=(-2, -1), norm="ortho")
    return jnp.log(jnp.abs(coeffs) + eps)
