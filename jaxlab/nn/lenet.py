"""LeNet-style CNN with optional Gaussian smoothing of its feature maps (CBS)."""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def gaussian_blur(x: ArrayLike, sigma: ArrayLike, kernel_size: int = 3) -> jax.Array:
    """Depthwise Gaussian smoothing of feature maps ``x [b, h, w, c]`` with width ``σ``.

    The kernel is ``k(u, v) ∝ exp(−(u² + v²)/(2σ²))`` on a ``kernel_size × kernel_size``
    grid, normalised to sum 1, applied to every channel with SAME padding. ``σ`` is an
    array argument, so annealing it (curriculum by smoothing) never recompiles; ``σ → 0``
    tends to the identity.

    Args:
      x: ``[b, h, w, c]`` feature maps.
      sigma: scalar ``σ > 0``.
      kernel_size: odd side of the kernel.

    Returns:
      ``[b, h, w, c]`` smoothed maps.

    Example:
      >>> from jaxlab.nn.lenet import gaussian_blur
      >>> y = gaussian_blur(jnp.ones((1, 4, 4, 2)), 1.0)
      >>> bool(jnp.allclose(y[0, 1:3, 1:3], 1.0))
      True

    References:
      Sinha, Garg, Larochelle, Curriculum By Smoothing, NeurIPS 2020.
    """
    x = jnp.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"x must be [b, h, w, c], got shape {x.shape}")
    if kernel_size < 1 or kernel_size % 2 == 0:
        raise ValueError(f"kernel_size must be odd and positive, got {kernel_size}")
    r = jnp.arange(kernel_size, dtype=x.dtype) - (kernel_size - 1) / 2
    sigma = jnp.maximum(jnp.asarray(sigma, x.dtype), 1e-3)
    g = jnp.exp(-(r**2) / (2 * sigma**2))
    k2 = g[:, None] * g[None, :]
    k2 = k2 / jnp.sum(k2)
    c = x.shape[-1]
    kernel = jnp.tile(k2[:, :, None, None], (1, 1, 1, c))  # HWIO, depthwise
    return jax.lax.conv_general_dilated(
        x, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=c
    )


class LeNet(nn.Module):
    """LeNet-5 layout: two conv(5×5)-ReLU-max-pool blocks, then ReLU MLP layers.

    With ``sigma`` given, each conv's output is Gaussian-smoothed before the ReLU (the
    CBS model curriculum; ``sigma=None`` is the plain network).

    Attributes:
      num_classes: output logits.
      features: channels of the conv blocks (LeNet: (6, 16)).
      hidden: widths of the hidden dense layers (LeNet: (120, 84)).
      kernel_size: smoothing kernel side for ``sigma``.

    Input ``[b, h, w, c]``, output ``[b, num_classes]``.
    """

    num_classes: int = 10
    features: Sequence[int] = (6, 16)
    hidden: Sequence[int] = (120, 84)
    kernel_size: int = 3

    @nn.compact
    def __call__(self, images: jax.Array, sigma: jax.Array | None = None) -> jax.Array:
        if images.ndim != 4:
            raise ValueError(f"images must be [b, h, w, c], got shape {images.shape}")
        x = images
        for width in self.features:
            x = nn.Conv(width, (5, 5), padding="SAME")(x)
            if sigma is not None:
                x = gaussian_blur(x, sigma, self.kernel_size)
            x = nn.max_pool(nn.relu(x), (2, 2), strides=(2, 2), padding="SAME")
        x = x.reshape(x.shape[0], -1)
        for width in self.hidden:
            x = nn.relu(nn.Dense(width)(x))
        return nn.Dense(self.num_classes)(x)
