"""Small classifiers (a CNN and an MLP) for 8×8 / 28×28 grey-scale images."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from jaxlab.nn.mlp import MLP


class SmallCNN(nn.Module):
    """conv(5×5) → ReLU → max-pool(2) blocks, then a linear classifier.

    The layout of the MNIST model of Dahan & Levy's reference code, without batch
    normalization (per-worker batch statistics would make the simulated workers stateful).

    Attributes:
      num_classes: number of output logits.
      features: output channels of each conv block (reference: (16, 32)).
      kernel_size: side of the square kernels (reference: 5).

    Input ``[batch, h, w, c]`` float images, output ``[batch, num_classes]`` logits.
    """

    num_classes: int = 10
    features: Sequence[int] = (16, 32)
    kernel_size: int = 5

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        if images.ndim != 4:
            raise ValueError(f"images must be [batch, h, w, c], got shape {images.shape}")
        x = images
        for width in self.features:
            x = nn.Conv(width, (self.kernel_size, self.kernel_size), padding="SAME")(x)
            x = nn.max_pool(nn.relu(x), window_shape=(2, 2), strides=(2, 2), padding="SAME")
        return nn.Dense(self.num_classes)(x.reshape(x.shape[0], -1))


class SmallMLP(MLP):
    """Flatten → :class:`jaxlab.nn.mlp.MLP`: a multilayer perceptron on raw pixels.

    With ``hidden=(64,)`` on 8×8 digits it has d = 64·64 + 64 + 64·10 + 10 = 4810 parameters.

    Attributes:
      out: number of output logits.
      hidden: widths of the hidden layers (``()`` is a linear softmax classifier).
      (and the other attributes of :class:`~jaxlab.nn.mlp.MLP`, ReLU and no dropout by
      default).

    Input ``[batch, h, w, c]`` float images, output ``[batch, out]`` logits.

    Example:
      >>> from jaxlab.nn.cnn import SmallMLP
      >>> params = SmallMLP(10, (64,)).init(jax.random.key(0), jnp.zeros((2, 8, 8, 1)))
      >>> sum(leaf.size for leaf in jax.tree_util.tree_leaves(params))
      4810
    """

    out: int = 10
    hidden: Sequence[int] = (64,)

    @nn.compact
    def __call__(self, images: jax.Array, *, train: bool = False) -> jax.Array:
        if images.ndim != 4:
            raise ValueError(f"images must be [batch, h, w, c], got shape {images.shape}")
        return super().__call__(images.reshape(images.shape[0], -1), train=train)


def classifier_functions(model: nn.Module, image_shape: Sequence[int]):
    """``(init_params, loss_fn, predict_fn)`` of a classifier with softmax cross-entropy.

    Args:
      model: a module mapping ``[batch, *image_shape]`` to logits.
      image_shape: the shape of one image, e.g. ``(8, 8, 1)``.

    Returns:
      ``init_params(key) -> params``, ``loss_fn(params, images, labels) -> scalar`` (mean
      cross-entropy) and ``predict_fn(params, images) -> logits``.
    """
    dummy = jnp.zeros((1, *image_shape), jnp.float32)

    def init_params(key: jax.Array):
        return model.init(key, dummy)["params"]

    def predict_fn(params, images: jax.Array) -> jax.Array:
        # Module.apply's annotation includes the (output, variables) pair of a mutable apply.
        return cast(jax.Array, model.apply({"params": params}, images))

    def loss_fn(params, images: jax.Array, labels: jax.Array) -> jax.Array:
        logits = predict_fn(params, images)
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))

    return init_params, loss_fn, predict_fn
