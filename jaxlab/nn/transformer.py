"""Small pre-LayerNorm transformers with selectable normalisers: a ViT and a decoder-only LM.

The attention normaliser and the output normaliser are chosen independently. At the
output, ``"multimax"`` returns σ(logits) (Eq. (6)), so that a softmax cross-entropy on the
returned values trains MultiMax(logits) as the predictive distribution, as the reference
code does; sparse output normalisers need other losses and are not offered here.

Mixed precision: ``dtype`` is the computation dtype of every layer (``jnp.bfloat16`` for
mixed precision), ``param_dtype`` that of the parameters (float32 master weights). Layer
norm and normaliser statistics run in float32 whatever ``dtype`` is, and the models return
float32 logits, so the loss is computed in float32.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer
from jaxlab.nn.attention import MultiHeadAttention
from jaxlab.nn.layers import MultiMax, Normalizer, check_normalizer

OUTPUT_NORMALIZERS = ("softmax", "multimax")


class TransformerBlock(nn.Module):
    """Pre-LN block: x + Attn(LN(x)), then x + MLP(LN(x)).

    Attributes:
      num_heads: attention heads.
      mlp_dim: hidden width of the MLP.
      normalizer: the attention normaliser (a name or a callable, see ``MultiHeadAttention``).
      fused_multimax: see ``MultiHeadAttention``.
      dtype, param_dtype: computation and parameter dtypes (module docstring).
    """

    num_heads: int
    mlp_dim: int
    normalizer: str | Normalizer = "softmax"
    fused_multimax: bool = True
    dtype: Any = jnp.float32
    param_dtype: Any = jnp.float32

    def __post_init__(self) -> None:
        check_integer("num_heads", self.num_heads, low=1)
        check_integer("mlp_dim", self.mlp_dim, low=1)
        check_normalizer(self.normalizer)
        super().__post_init__()

    @nn.compact
    def __call__(
        self, x: jax.Array, mask: jax.Array | None = None, scale: ArrayLike | None = None
    ) -> jax.Array:
        """``x: [batch, length, dim]`` → same shape; ``mask: [batch or 1, 1, length, length]``.

        ``scale``: the attention score scale (``None``: 1/√d_h).
        """
        dtypes = dict(dtype=self.dtype, param_dtype=self.param_dtype)
        y = nn.LayerNorm(name="ln_attention", **dtypes)(x)
        x = x + MultiHeadAttention(
            num_heads=self.num_heads,
            normalizer=self.normalizer,
            fused_multimax=self.fused_multimax,
            name="attention",
            **dtypes,
        )(y, mask=mask, sow_weights=True, scale=scale)
        y = nn.LayerNorm(name="ln_mlp", **dtypes)(x)
        y = nn.Dense(self.mlp_dim, name="mlp_in", **dtypes)(y)
        y = nn.Dense(x.shape[-1], name="mlp_out", **dtypes)(nn.gelu(y))
        return x + y


def check_sizes(module: nn.Module, positive: tuple[str, ...], attention: str) -> None:
    """Refuses a non-positive size among ``positive``, a negative ``depth``, a ``dim`` that
    ``num_heads`` does not divide and an unknown attention normaliser (the field ``attention``)."""
    for name in positive:
        check_integer(name, getattr(module, name), low=1)
    check_integer("depth", module.depth, low=0)
    if module.dim % module.num_heads:
        raise ValueError(f"dim {module.dim} must be divisible by num_heads {module.num_heads}")
    check_normalizer(getattr(module, attention), name=attention)


def _block(model: nn.Module, name: str) -> TransformerBlock:
    """One block of a ``ViT``/``TransformerLM`` with the model's sizes, attention
    normaliser and dtypes."""
    return TransformerBlock(
        model.num_heads,
        model.mlp_dim,
        model.attention_normalizer,
        fused_multimax=model.fused_multimax,
        dtype=model.dtype,
        param_dtype=model.param_dtype,
        name=name,
    )


def _output(logits: jax.Array, output_normalizer: str) -> jax.Array:
    logits = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
    if output_normalizer == "multimax":
        return MultiMax(name="output_multimax").modulate(logits)
    return logits


class ViT(nn.Module):
    """A small Vision Transformer with global average pooling (as the reference DeiT code).

    Attributes:
      num_classes: number of classes.
      patch_size: side of the square patches.
      dim: token width.
      depth: number of blocks.
      num_heads: attention heads.
      mlp_dim: MLP hidden width.
      attention_normalizer: a name of ``NORMALIZERS`` (``"softmax"``, ``"multimax"``,
        ``"sparsemax"``, ``"entmax15"``, ``"norm_softmax"``, ``"norm_softmax_std"``) or a
        callable ``fn(scores, where=None)``.
      output_normalizer: ``"softmax"`` or ``"multimax"``.
      fused_multimax: MultiMax attention with its hand-written VJP (``False``: autodiff).
      dtype: computation dtype (``jnp.bfloat16``: mixed precision; module docstring).
      param_dtype: parameter dtype (float32 master weights).

    The call-time ``attention_scale`` sets every layer's attention score scale (default
    1/√d_h); heat treatment passes its schedule's value at the current step. The logits
    are float32.
    """

    num_classes: int
    patch_size: int = 4
    dim: int = 64
    depth: int = 2
    num_heads: int = 4
    mlp_dim: int = 128
    attention_normalizer: str | Normalizer = "softmax"
    output_normalizer: str = "softmax"
    fused_multimax: bool = True
    dtype: Any = jnp.float32
    param_dtype: Any = jnp.float32

    def __post_init__(self) -> None:
        check_sizes(
            self,
            ("num_classes", "patch_size", "dim", "num_heads", "mlp_dim"),
            "attention_normalizer",
        )
        check_normalizer(self.output_normalizer, OUTPUT_NORMALIZERS, "output_normalizer")
        super().__post_init__()

    @nn.compact
    def __call__(self, images: ArrayLike, attention_scale: ArrayLike | None = None) -> jax.Array:
        """``images: [batch, height, width, channels]`` → logits ``[batch, num_classes]``.

        Attention weights are sown into ``intermediates``; ``attention_scale`` is the score
        scale of every layer (``None``: 1/√d_h).
        """
        check_normalizer(self.output_normalizer, OUTPUT_NORMALIZERS)
        images = jnp.asarray(images)
        if images.ndim != 4:
            raise ValueError(f"images must be [batch, height, width, channels], got {images.shape}")
        if images.shape[1] % self.patch_size or images.shape[2] % self.patch_size:
            raise ValueError(
                f"image size {images.shape[1:3]} is not divisible by patch_size {self.patch_size}"
            )
        p = self.patch_size
        dtypes = dict(dtype=self.dtype, param_dtype=self.param_dtype)
        x = nn.Conv(
            self.dim, (p, p), strides=(p, p), padding="VALID", name="patch_embed", **dtypes
        )(images)
        x = x.reshape(x.shape[0], -1, self.dim)
        pos = self.param(
            "pos_embed", nn.initializers.normal(0.02), (1, *x.shape[1:]), self.param_dtype
        )
        x = x + jnp.broadcast_to(pos, x.shape).astype(x.dtype)
        for i in range(self.depth):
            x = _block(self, f"block_{i}")(x, scale=attention_scale)
        x = nn.LayerNorm(name="ln_final", **dtypes)(x).mean(axis=1)
        return _output(nn.Dense(self.num_classes, name="head", **dtypes)(x), self.output_normalizer)


class TransformerLM(nn.Module):
    """A small decoder-only (causal) transformer language model.

    Attributes:
      vocab_size: number of tokens.
      max_len: longest sequence (learned position embeddings).
      dim, depth, num_heads, mlp_dim: sizes as in ``ViT``.
      attention_normalizer: a name of ``NORMALIZERS`` or a callable ``fn(scores, where=None)``.
      output_normalizer: ``"softmax"`` or ``"multimax"``.
      tie_embeddings: the output layer is the transposed input embedding (no bias), as
        fairseq's ``--share-decoder-input-output-embed``; ``False``: a ``head`` Dense layer.
      fused_multimax, dtype, param_dtype: as in ``ViT`` (float32 logits).

    The call-time ``attention_scale`` sets every layer's attention score scale, as in ``ViT``.
    """

    vocab_size: int
    max_len: int = 128
    dim: int = 64
    depth: int = 2
    num_heads: int = 4
    mlp_dim: int = 256
    attention_normalizer: str | Normalizer = "softmax"
    output_normalizer: str = "softmax"
    tie_embeddings: bool = False
    fused_multimax: bool = True
    dtype: Any = jnp.float32
    param_dtype: Any = jnp.float32

    def __post_init__(self) -> None:
        check_sizes(
            self, ("vocab_size", "max_len", "dim", "num_heads", "mlp_dim"), "attention_normalizer"
        )
        check_normalizer(self.output_normalizer, OUTPUT_NORMALIZERS, "output_normalizer")
        super().__post_init__()

    @nn.compact
    def __call__(self, tokens: ArrayLike, attention_scale: ArrayLike | None = None) -> jax.Array:
        """``tokens: int [batch, length]`` → next-token logits ``[batch, length, vocab_size]``."""
        check_normalizer(self.output_normalizer, OUTPUT_NORMALIZERS)
        tokens = jnp.asarray(tokens)
        if tokens.ndim != 2 or not jnp.issubdtype(tokens.dtype, jnp.integer):
            raise ValueError(
                f"tokens must be int [batch, length]; got {tokens.dtype} {tokens.shape}"
            )
        length = tokens.shape[1]
        if length > self.max_len:
            raise ValueError(f"sequence length {length} exceeds max_len {self.max_len}")
        dtypes = dict(dtype=self.dtype, param_dtype=self.param_dtype)
        embed = nn.Embed(self.vocab_size, self.dim, name="embed", **dtypes)
        x = embed(tokens)
        pos = self.param(
            "pos_embed", nn.initializers.normal(0.02), (1, self.max_len, self.dim), self.param_dtype
        )
        x = x + jnp.broadcast_to(pos[:, :length], x.shape).astype(x.dtype)
        mask = nn.make_causal_mask(jnp.ones((1, length), jnp.int32), dtype=jnp.bool_)
        for i in range(self.depth):
            x = _block(self, f"block_{i}")(x, mask, attention_scale)
        x = nn.LayerNorm(name="ln_final", **dtypes)(x)
        logits = (
            embed.attend(x)
            if self.tie_embeddings
            else nn.Dense(self.vocab_size, name="head", **dtypes)(x)
        )
        return _output(logits, self.output_normalizer)
