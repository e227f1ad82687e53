"""PerceiverIO (Jaegle et al., 2022) in Flax Linen: cross-attend into latents, self-attend, decode.

The encoder repeats ``num_blocks`` times: a cross-attention from the latent array into the
(masked) inputs, then ``num_self_attends_per_block`` latent self-attention layers. The
decoder cross-attends from the output queries into the final latents. All layers are
pre-LayerNorm with residual connections and a GELU MLP.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


class PerceiverLayer(nn.Module):
    """One attention layer: ``x + Attn(LN(x), LN(context))`` then ``x + MLP(LN(x))``.

    Attributes:
      num_heads: attention heads.
      widening_factor: MLP hidden width as a multiple of the query width.
      query_residual: whether the attention output is added to the queries.
    """

    num_heads: int
    widening_factor: int = 1
    query_residual: bool = True
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(
        self, x: jax.Array, context: jax.Array, mask: jax.Array | None = None
    ) -> jax.Array:
        """x: [B, Q, d]; context: [B, K, c]; mask: optional [B, K] (1 = attend)."""
        width = x.shape[-1]
        attn_mask = None if mask is None else mask[:, None, None, :].astype(bool)
        attended = nn.MultiHeadDotProductAttention(
            num_heads=self.num_heads,
            qkv_features=width,
            out_features=width,
            dtype=self.dtype,
            force_fp32_for_softmax=True,  # softmax in float32 under bf16 compute
        )(
            nn.LayerNorm(dtype=self.dtype)(x),
            nn.LayerNorm(dtype=self.dtype)(context),
            mask=attn_mask,
        )
        x = x + attended if self.query_residual else attended
        hidden = nn.Dense(width * self.widening_factor, dtype=self.dtype)(
            nn.LayerNorm(dtype=self.dtype)(x)
        )
        return x + nn.Dense(width, dtype=self.dtype)(nn.gelu(hidden))


class PerceiverIO(nn.Module):
    """PerceiverIO encoder-decoder over a set of inputs and a set of output queries.

    Attributes:
      num_latents: size of the latent array.
      d_latents: width of the latent array.
      num_blocks: encoder blocks (each: one cross-attention + the self-attention layers).
      num_self_attends_per_block: latent self-attention layers per block.
      num_self_attention_heads: heads of the latent self-attention.
      num_cross_attention_heads: heads of the encoder and decoder cross-attentions.
      widening_factor: MLP widening of every layer.

    References:
      Jaegle et al., "Perceiver IO: A General Architecture for Structured Inputs &
      Outputs", ICLR 2022.
    """

    num_latents: int
    d_latents: int
    num_blocks: int
    num_self_attends_per_block: int
    num_self_attention_heads: int
    num_cross_attention_heads: int
    widening_factor: int = 1
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(
        self, inputs: jax.Array, queries: jax.Array, input_mask: jax.Array | None = None
    ) -> jax.Array:
        """Encodes ``inputs`` and decodes at ``queries``.

        Args:
          inputs: ``[B, N, d_in]``.
          queries: ``[B, M, d_q]``.
          input_mask: optional ``[B, N]``; 0 marks padding the latents must not attend to.

        Returns:
          ``[B, M, d_q]``: the decoder output (query residual included).
        """
        if inputs.ndim != 3 or queries.ndim != 3 or inputs.shape[0] != queries.shape[0]:
            raise ValueError(
                f"inputs [B, N, d] and queries [B, M, d] expected; got {inputs.shape}, "
                f"{queries.shape}"
            )
        if input_mask is not None and input_mask.shape != inputs.shape[:2]:
            raise ValueError(f"input_mask must be {inputs.shape[:2]}; got {input_mask.shape}")
        latents = self.param(
            "latents",
            nn.initializers.truncated_normal(0.02),
            (self.num_latents, self.d_latents),
        )
        z = jnp.broadcast_to(latents.astype(self.dtype), (inputs.shape[0],) + latents.shape)
        for _ in range(self.num_blocks):
            z = PerceiverLayer(
                self.num_cross_attention_heads, self.widening_factor, dtype=self.dtype
            )(z, inputs, input_mask)
            for _ in range(self.num_self_attends_per_block):
                z = PerceiverLayer(
                    self.num_self_attention_heads, self.widening_factor, dtype=self.dtype
                )(z, z)
        return PerceiverLayer(
            self.num_cross_attention_heads, self.widening_factor, dtype=self.dtype
        )(queries, z)
