"""Dot-product attention with a pluggable normaliser and an explicit score scale.

The normaliser is a callable ``fn(scores, where=None) -> weights`` over the last (key) axis,
or one of the names of ``jaxlab.nn.layers.NORMALIZERS`` ("softmax", "multimax",
"sparsemax", "entmax15", "norm_softmax", "norm_softmax_std"), which
``jaxlab.nn.layers.resolve_normalizer`` maps to callables.

Score scale: the scores are ``scale · q·kᵀ (+ bias)``. ``scale=None`` means the default
1/√d_h (computed as a division by √d_h, bit-identical to before). NormSoftmax wants the
UNscaled logits and γ = 1/scale; its registry entry undoes the scale and sets γ, so with
the default scale it is ``norm_softmax(q·kᵀ, γ=√d_h)`` as in the reference code.
The scale can change at every call: ``MultiHeadAttention`` (and ``ViT``/``TransformerLM``)
take a call-time ``scale`` (a Python float or a traced scalar) that overrides the
``scale`` attribute, so heat treatment passes ``heat_treatment_schedule(...)(step)`` on
each training step without re-creating the module or recompiling.

``MultiHeadAttention`` is a drop-in for ``flax.linen.MultiHeadDotProductAttention``: same
call signature for the common arguments, the same parameter names and shapes
(``query``/``key``/``value``/``out``), plus one ``MultiMax`` parameter set per layer, shared
across heads, when ``normalizer="multimax"``. ``make_attention_fn`` plugs a parameter-free
normaliser (or fixed MultiMax parameters) into Flax's own module as ``attention_fn``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import broadcast_as, check_integer, check_range
from jaxlab.nn.layers import MultiMax, Normalizer, check_normalizer, resolve_normalizer
from jaxlab.nn.multimax import MultiMaxParams, multimax


def attention_weights(
    query: ArrayLike,
    key: ArrayLike,
    normalizer: str | Normalizer = "softmax",
    multimax_params: MultiMaxParams | None = None,
    mask: ArrayLike | None = None,
    bias: ArrayLike | None = None,
    scale: ArrayLike | None = None,
) -> jax.Array:
    """Attention weights normalise(scale · q·kᵀ + bias) over the keys (scale = 1/√d default).

    For MultiMax the scores are modulated before the mask is applied (the paper's order:
    scores → σ → mask → softmax).

    Args:
      query: ``[batch..., q_len, heads, depth]``.
      key: ``[batch..., kv_len, heads, depth]``.
      normalizer: a callable ``fn(scores, where=None)`` or a name of ``NORMALIZERS``.
      multimax_params: the layer's ``MultiMaxParams`` (only for ``"multimax"``).
      mask: boolean, broadcastable to ``[batch..., heads, q_len, kv_len]``; False hides a key.
      bias: additive, broadcastable to the same shape.
      scale: score scale (scalar, may be traced); ``None`` is 1/√depth.

    Returns:
      Weights ``[batch..., heads, q_len, kv_len]``.
    """
    query, key = jnp.asarray(query), jnp.asarray(key)
    if query.ndim < 3 or query.ndim != key.ndim:
        raise ValueError(
            f"query and key must be [batch..., length, heads, depth] of equal rank, got "
            f"{query.shape} and {key.shape}"
        )
    if query.shape[-2:] != key.shape[-2:] or query.shape[:-3] != key.shape[:-3]:
        raise ValueError(f"query {query.shape} and key {key.shape} disagree on batch/heads/depth")
    fn = resolve_normalizer(
        normalizer,
        scale=query.shape[-1] ** -0.5 if scale is None else scale,
        multimax_params=multimax_params,
    )
    logits = jnp.einsum("...qhd,...khd->...hqk", query, key)
    if scale is None:
        scores = logits / jnp.sqrt(query.shape[-1])
    else:
        scale = jnp.asarray(scale)
        if scale.ndim != 0:
            raise ValueError(f"scale must be a scalar, got shape {scale.shape}")
        scores = logits * scale.astype(logits.dtype)
    if bias is not None:
        scores = scores + broadcast_as("bias", bias, scores.shape, scores.dtype)
    where = None if mask is None else broadcast_as("mask", mask, scores.shape, bool)
    if isinstance(normalizer, str) and normalizer != "multimax":
        # The named normalisers run on float32 scores (their row statistics in float32);
        # MultiMax does so inside, keeping the saved scores in their own dtype.
        stats_dtype = jnp.promote_types(scores.dtype, jnp.float32)
        return fn(scores.astype(stats_dtype), where=where).astype(scores.dtype)
    return fn(scores, where=where)


def normalized_dot_product_attention(
    query: ArrayLike,
    key: ArrayLike,
    value: ArrayLike,
    bias: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    broadcast_dropout: bool = True,
    dropout_rng: jax.Array | None = None,
    dropout_rate: float = 0.0,
    deterministic: bool = False,
    dtype: Any = None,
    precision: Any = None,
    module: nn.Module | None = None,
    *,
    normalizer: str | Normalizer = "softmax",
    multimax_params: MultiMaxParams | None = None,
    scale: ArrayLike | None = None,
) -> jax.Array:
    """``flax.linen.dot_product_attention`` with a pluggable normaliser.

    Args:
      query: ``[batch..., q_len, heads, depth]``.
      key: ``[batch..., kv_len, heads, depth]``.
      value: ``[batch..., kv_len, heads, v_depth]``.
      bias, mask, broadcast_dropout, dropout_rng, dropout_rate, deterministic, dtype,
        precision: as in ``flax.linen.dot_product_attention``.
      module: if given, the weights are sown into its ``intermediates`` collection
        under ``attention_weights``.
      normalizer: a callable ``fn(scores, where=None)`` or a name of ``NORMALIZERS``.
      multimax_params: the layer's ``MultiMaxParams`` (only for ``"multimax"``).
      scale: score scale (scalar, may be traced); ``None`` is 1/√depth.

    Returns:
      ``[batch..., q_len, heads, v_depth]``.
    """
    del dtype, precision  # computed in the inputs' dtype at default precision
    check_range("dropout_rate", dropout_rate, 0.0, 1.0, high_open=True)
    if module is not None and not isinstance(module, nn.Module):
        raise ValueError(f"module must be a flax Module or None, got {type(module).__name__}")
    value = jnp.asarray(value)
    key_arr = jnp.asarray(key)
    if value.ndim != key_arr.ndim or value.shape[:-1] != key_arr.shape[:-1]:
        raise ValueError(
            f"value must be [batch..., kv_len, heads, v_depth] matching key "
            f"{key_arr.shape} but the last axis, got {value.shape}"
        )
    weights = attention_weights(query, key, normalizer, multimax_params, mask, bias, scale)
    if module is not None:
        module.sow("intermediates", "attention_weights", weights)
    if not deterministic and dropout_rate > 0.0:
        if dropout_rng is None:
            raise ValueError("dropout_rate > 0 and not deterministic needs a dropout_rng")
        keep_shape = list(weights.shape)
        if broadcast_dropout:
            keep_shape[:-2] = [1] * (len(keep_shape) - 2)
        keep = jax.random.bernoulli(dropout_rng, 1.0 - dropout_rate, keep_shape)
        keep = jnp.broadcast_to(keep, weights.shape)
        weights = jnp.where(keep, weights / (1.0 - dropout_rate), 0.0)
    return jnp.einsum("...hqk,...khd->...qhd", weights, jnp.asarray(value))


def make_attention_fn(
    normalizer: str | Normalizer,
    multimax_params: MultiMaxParams | None = None,
    scale: float | None = None,
) -> Callable[..., jax.Array]:
    """An ``attention_fn`` for ``flax.linen.MultiHeadDotProductAttention``.

    ``normalizer`` is a name or a callable ``fn(scores, where=None)``; ``scale`` a fixed
    score scale (``None``: 1/√depth).

    Example:
      >>> attn = nn.MultiHeadDotProductAttention(
      ...     num_heads=4, attention_fn=make_attention_fn("sparsemax"))
    """
    check_normalizer(normalizer)
    if multimax_params is not None and not isinstance(multimax_params, MultiMaxParams):
        raise ValueError(
            f"multimax_params must be MultiMaxParams, got {type(multimax_params).__name__}"
        )
    if scale is not None:
        check_range("scale", scale, 0.0, low_open=True)
    return functools.partial(
        normalized_dot_product_attention,
        normalizer=normalizer,
        multimax_params=multimax_params,
        scale=scale,
    )


class MultiHeadAttention(nn.Module):
    """Multi-head attention with a selectable normaliser; drop-in for Flax's module.

    Parameters ``query``, ``key``, ``value`` and ``out`` have the names and shapes of
    ``flax.linen.MultiHeadDotProductAttention``'s, so weights move between the two; with
    ``normalizer="multimax"`` a ``MultiMax`` submodule named ``multimax`` holds the layer's
    ``4 · multimax_order`` scalars, shared across heads.

    Attributes:
      num_heads: number of heads.
      qkv_features: total query/key/value width (default: the query input's width).
      out_features: output width (default: the query input's width).
      normalizer: ``"softmax"``, ``"multimax"``, ``"sparsemax"`` or ``"entmax15"``.
      multimax_order: order of the MultiMax modulator.
      fused_multimax: MultiMax with its hand-written VJP (``multimax(..., fused=True)``);
        ``False``: automatic differentiation of the same formula (a benchmark baseline).
      dropout_rate: dropout on the attention weights.
      broadcast_dropout: one dropout mask across batch and heads.
      deterministic: default for ``__call__``'s ``deterministic``.
      use_bias: biases in the projections.
      kernel_init, bias_init: initialisers of the projections.
      dtype: the computation dtype of the projections and the attention products
        (``jnp.bfloat16`` for mixed precision); normaliser statistics stay float32.
      param_dtype: the dtype of the parameters (float32 master weights).

    Example:
      >>> layer = MultiHeadAttention(num_heads=2, normalizer="multimax")
      >>> x = jnp.ones((1, 5, 8))
      >>> variables = layer.init(jax.random.key(0), x)
      >>> layer.apply(variables, x).shape
      (1, 5, 8)
    """

    num_heads: int
    qkv_features: int | None = None
    out_features: int | None = None
    normalizer: str | Normalizer = "softmax"
    scale: float | None = None
    multimax_order: int = 2
    fused_multimax: bool = True
    dropout_rate: float = 0.0
    broadcast_dropout: bool = True
    deterministic: bool | None = None
    use_bias: bool = True
    kernel_init: Callable[..., jax.Array] = nn.linear.default_kernel_init
    bias_init: Callable[..., jax.Array] = nn.initializers.zeros_init()
    dtype: Any = jnp.float32
    param_dtype: Any = jnp.float32

    def __post_init__(self) -> None:
        check_integer("num_heads", self.num_heads, low=1)
        for name in ("qkv_features", "out_features"):
            if getattr(self, name) is not None:
                check_integer(name, getattr(self, name), low=1)
        if self.qkv_features is not None and self.qkv_features % self.num_heads:
            raise ValueError(
                f"qkv_features {self.qkv_features} must be divisible by num_heads {self.num_heads}"
            )
        check_normalizer(self.normalizer)
        check_integer("multimax_order", self.multimax_order, low=1)
        check_range("dropout_rate", self.dropout_rate, 0.0, 1.0, high_open=True)
        if self.scale is not None:
            check_range("scale", self.scale, 0.0, low_open=True)
        super().__post_init__()

    @nn.compact
    def __call__(
        self,
        inputs_q: ArrayLike,
        inputs_k: ArrayLike | None = None,
        inputs_v: ArrayLike | None = None,
        *,
        mask: ArrayLike | None = None,
        deterministic: bool | None = None,
        dropout_rng: jax.Array | None = None,
        sow_weights: bool = False,
        scale: ArrayLike | None = None,
    ) -> jax.Array:
        """Attends from ``inputs_q`` ``[batch..., q_len, features]`` to ``inputs_k``/``inputs_v``.

        ``inputs_k`` defaults to ``inputs_q`` and ``inputs_v`` to ``inputs_k``; ``mask`` is
        boolean ``[batch..., heads or 1, q_len, kv_len]``; ``scale`` (a scalar, may be
        traced, e.g. a heat-treatment schedule's value) overrides the ``scale`` attribute.
        Returns ``[batch..., q_len, out_features]``.
        """
        check_normalizer(self.normalizer)
        inputs_q = jnp.asarray(inputs_q)
        inputs_k = inputs_q if inputs_k is None else jnp.asarray(inputs_k)
        inputs_v = inputs_k if inputs_v is None else jnp.asarray(inputs_v)
        features = self.out_features or inputs_q.shape[-1]
        qkv_features = self.qkv_features or inputs_q.shape[-1]
        if qkv_features % self.num_heads:
            raise ValueError(
                f"qkv_features {qkv_features} must be divisible by num_heads {self.num_heads}"
            )
        dense = functools.partial(
            nn.DenseGeneral,
            axis=-1,
            features=(self.num_heads, qkv_features // self.num_heads),
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            use_bias=self.use_bias,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
        )
        query = dense(name="query")(inputs_q)
        key = dense(name="key")(inputs_k)
        value = dense(name="value")(inputs_v)

        multimax_params, normalizer = None, self.normalizer
        if self.normalizer == "multimax":
            multimax_params = MultiMax(order=self.multimax_order, name="multimax").params()
            normalizer = functools.partial(
                multimax, params=multimax_params, axis=-1, fused=self.fused_multimax
            )
        if self.dropout_rate > 0.0:
            deterministic = nn.merge_param("deterministic", self.deterministic, deterministic)
            if not deterministic and dropout_rng is None:
                dropout_rng = self.make_rng("dropout")
        else:
            deterministic = True
        x = normalized_dot_product_attention(
            query,
            key,
            value,
            mask=mask,
            broadcast_dropout=self.broadcast_dropout,
            dropout_rng=dropout_rng,
            dropout_rate=self.dropout_rate,
            deterministic=deterministic,
            module=self if sow_weights else None,
            normalizer=normalizer,
            multimax_params=multimax_params,
            scale=self.scale if scale is None else scale,
        )
        return nn.DenseGeneral(
            features=features,
            axis=(-2, -1),
            kernel_init=self.kernel_init,
            bias_init=self.bias_init,
            use_bias=self.use_bias,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            name="out",
        )(x)
