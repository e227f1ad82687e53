"""The multilayer perceptron every jaxlab model builds on, and its dropout.

``MLP(out, hidden)`` maps ``x [..., d]`` to ``[..., out]`` through ``len(hidden)`` hidden
layers ``x ← activation(Dense(x))`` and a linear output layer, with optional inverted
dropout before every layer. Its layers are named ``{layer_name}_0 … {layer_name}_L``
(``Dense_0 …`` by default), so a parameter tree, and the initial values flax derives from
the layer names, depend only on the attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

__all__ = ["MLP", "Dropout", "dropout"]

Initializer = Callable[..., Any]


def dropout(key: jax.Array, x: jax.Array, rate: float) -> jax.Array:
    """Inverted dropout; at ``rate = 0.5`` it draws one random bit per entry.

    Each uint32 from the PRNG supplies 32 keep/drop decisions, so the mask of a
    ``[R, n, d]`` batch costs ``R·n·d/32`` random words instead of ``R·n·d`` floats — on CPU
    the random numbers, not the matmuls, dominate a vmap-ed batch of MLPs otherwise.

    Args:
      key: PRNG key.
      x: ``[..., d]`` input.
      rate: drop probability in [0, 1).

    Returns:
      ``x`` with entries zeroed with probability ``rate`` and the rest scaled by
      ``1/(1 − rate)``.

    Example:
      >>> from jaxlab.nn.mlp import dropout
      >>> y = dropout(jax.random.key(0), jnp.ones((2, 40)), 0.5)
      >>> sorted({float(v) for v in y.ravel()})
      [0.0, 2.0]
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"rate must lie in [0, 1), got {rate}")
    if rate == 0.0:
        return x
    if rate == 0.5:
        width = x.shape[-1]
        words = -(-width // 32)
        bits = jax.random.bits(key, (*x.shape[:-1], words, 1), jnp.uint32)
        shifts = jnp.arange(32, dtype=jnp.uint32).reshape((1,) * (x.ndim) + (32,))
        keep = ((bits >> shifts) & 1).reshape(*x.shape[:-1], words * 32)[..., :width] == 1
    else:
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


class Dropout(nn.Module):
    """Flax wrapper of :func:`dropout` (rng stream ``"dropout"``); identity unless ``train``."""

    rate: float

    @nn.compact
    def __call__(self, x: jax.Array, *, train: bool) -> jax.Array:
        if not train or self.rate == 0.0:
            return x
        return dropout(self.make_rng("dropout"), x, self.rate)


class MLP(nn.Module):
    """``[Dropout →] Dense → activation → … → [Dropout →] Dense``; ``hidden=()`` is linear.

    Attributes:
      out: output width.
      hidden: hidden widths.
      activation: the hidden layers' nonlinearity (``nn.relu``; the world models use
        ``nn.elu``).
      dropout: rate of the :class:`Dropout` before every layer (``0``: none; a linear model
        never drops its input).
      kernel_init, bias_init: the layers' initialisers (flax's ``Dense`` defaults: LeCun
        normal, zeros).
      layer_name: prefix of the layers' names in the parameter tree.
      dtype: the layers' computation dtype (``None``: the inputs' and parameters' promoted
        dtype, float32 for float32 inputs); ``jnp.bfloat16`` computes the activations and
        matrix products in bf16 from float32 parameters (``param_dtype``).
      param_dtype: the parameters' dtype (float32: the master weights).

    Input ``x [..., d]``, output ``[..., out]``; ``train`` switches dropout on (it then
    needs the ``"dropout"`` rng).

    Example:
      >>> from jaxlab.nn.mlp import MLP
      >>> params = MLP(3, (5,)).init(jax.random.key(0), jnp.zeros((2, 4)))
      >>> jax.tree.map(jnp.shape, params["params"])
      {'Dense_0': {'bias': (5,), 'kernel': (4, 5)}, 'Dense_1': {'bias': (3,), 'kernel': (5, 3)}}
    """

    out: int
    hidden: Sequence[int] = (64, 64)
    activation: Callable[[jax.Array], jax.Array] = nn.relu
    dropout: float = 0.0
    kernel_init: Initializer = nn.linear.default_kernel_init
    bias_init: Initializer = nn.initializers.zeros_init()
    layer_name: str = "Dense"
    dtype: Any = None
    param_dtype: Any = jnp.float32

    def _dense(self, features: int, index: int) -> nn.Dense:
        return nn.Dense(
            features,
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            name=f"{self.layer_name}_{index}",
            dtype=self.dtype,
            param_dtype=self.param_dtype,
        )

    @nn.compact
    def __call__(self, x: jax.Array, *, train: bool = False) -> jax.Array:
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")
        drop = self.dropout > 0.0
        for i, width in enumerate(self.hidden):
            if drop:
                x = Dropout(self.dropout)(x, train=train)
            x = self.activation(self._dense(width, i)(x))
        if drop and self.hidden:
            x = Dropout(self.dropout)(x, train=train)
        return self._dense(self.out, len(self.hidden))(x)
