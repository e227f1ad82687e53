"""LLark-style audio-language model: a linear projector spliced into a decoder-only LM.

LLark (Gardner et al., ICML 2024) maps each frozen audio frame through one linear layer into
the LM's embedding space and puts the projected frames where placeholder tokens sit between
audio-start / audio-end markers (LLaVA-style splicing); the LM is trained on instruction data
with the loss on answer tokens only, projector and LM together. The model here is a small
pre-LN decoder with the layout of ``jaxlab.nn.TransformerLM`` (learned positions, final LN)
built from the same blocks, ``jaxlab.nn.TransformerBlock`` over jaxlab's pluggable
``MultiHeadAttention``. Cached decoding runs those blocks unchanged and swaps only their
attention call for one over a key/value cache (:func:`cached_attention`, through
``flax.linen.intercept_methods``). Parameters: ``projector`` (the multimodal module),
``embed``, ``pos_embed``, ``block_i``, ``ln_final``, ``head`` (the LM).
"""

from __future__ import annotations

from typing import cast

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_range
from jaxlab.nn.attention import MultiHeadAttention, normalized_dot_product_attention
from jaxlab.nn.layers import Normalizer
from jaxlab.nn.transformer import TransformerBlock, check_sizes

KVCache = dict[str, tuple[jax.Array, jax.Array]]


def splice_audio(
    token_embeddings: ArrayLike, audio_embeddings: ArrayLike, is_audio: ArrayLike
) -> jax.Array:
    """Puts the k-th audio frame at the k-th placeholder position of each sequence.

    x_i = a_{c(i)} if token i is an audio placeholder (c(i) = number of placeholders before i),
    else the token's embedding — LLaVA/LLark's splicing. Placeholders beyond the number of
    frames keep their token embedding.

    Args:
      token_embeddings: ``[batch, length, dim]``.
      audio_embeddings: ``[batch, frames, dim]`` (the projected frames).
      is_audio: bool ``[batch, length]``, True at placeholder positions.

    Returns:
      ``[batch, length, dim]``.

    Example:
      >>> from jaxlab.nn import splice_audio
      >>> tokens = jnp.zeros((1, 5, 2))
      >>> frames = jnp.array([[[1.0, 1.0], [2.0, 2.0]]])
      >>> splice_audio(tokens, frames, jnp.array([[False, True, True, False, False]]))[0, :, 0]
      Array([0., 1., 2., 0., 0.], dtype=float32)
    """
    x, a = jnp.asarray(token_embeddings), jnp.asarray(audio_embeddings)
    is_audio = jnp.asarray(is_audio, bool)
    if x.ndim != 3 or a.ndim != 3 or a.shape[::2] != x.shape[::2]:
        raise ValueError(
            f"token_embeddings [b, L, d] {x.shape} and audio_embeddings [b, F, d] "
            f"{a.shape} must agree on batch and dim"
        )
    if is_audio.shape != x.shape[:2]:
        raise ValueError(f"is_audio must be {x.shape[:2]}, got {is_audio.shape}")
    index = jnp.cumsum(is_audio, axis=1) - 1
    use = is_audio & (index < a.shape[1])
    gathered = jnp.take_along_axis(a, jnp.clip(index, 0, a.shape[1] - 1)[..., None], axis=1)
    return jnp.where(use[..., None], gathered.astype(x.dtype), x)


def answer_loss(logits: ArrayLike, tokens: ArrayLike, loss_mask: ArrayLike) -> jax.Array:
    """Next-token cross-entropy averaged over answer tokens only.

    L = −Σ_i m_i log p(t_i | t_<i) / Σ_i m_i for i ≥ 1, with m the answer mask (LLark trains
    on the response tokens; the prompt, the audio and the markers carry no loss).

    Args:
      logits: ``[batch, length, vocab]``; ``logits[:, i]`` predicts ``tokens[:, i + 1]``.
      tokens: int ``[batch, length]``.
      loss_mask: ``[batch, length]``, 1 where ``tokens`` is an answer token to predict.

    Returns:
      A scalar (0 when the mask is empty).
    """
    logits, tokens = jnp.asarray(logits), jnp.asarray(tokens)
    if not jnp.issubdtype(tokens.dtype, jnp.integer):
        raise ValueError(f"tokens must be integer token ids, got dtype {tokens.dtype}")
    mask = jnp.asarray(loss_mask, jnp.float32)
    if logits.ndim != 3 or tokens.shape != logits.shape[:2] or mask.shape != tokens.shape:
        raise ValueError(
            f"logits [b, L, V] {logits.shape}, tokens {tokens.shape} and loss_mask "
            f"{mask.shape} disagree"
        )
    logp = jax.nn.log_softmax(logits[:, :-1].astype(jnp.float32), axis=-1)
    nll = -jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1)[..., 0]
    m = mask[:, 1:]
    return (nll * m).sum() / jnp.maximum(m.sum(), 1.0)


def cached_attention(
    module: MultiHeadAttention,
    inputs: jax.Array,
    position: ArrayLike,
    key_cache: jax.Array,
    value_cache: jax.Array,
    scale: ArrayLike | None = None,
) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    """Self-attention of one new position over a key/value cache, with ``module``'s weights.

    The new token's key and value are written at ``position`` of the caches; its query
    attends to positions ``0 … position`` through ``normalized_dot_product_attention`` with
    the module's normaliser and scale — the same projections and attention as
    ``module(inputs)`` on the whole prefix, one position at a time.

    Args:
      module: a bound ``MultiHeadAttention`` (its ``query``/``key``/``value``/``out``).
      inputs: ``[batch, 1, features]``, the new position's attention input.
      position: int scalar, the new position.
      key_cache, value_cache: ``[batch, max_len, heads, head_dim]``.
      scale: the score scale of this call (``None``: the module's, else 1/√head_dim).

    Returns:
      ``([batch, 1, out_features], (key_cache, value_cache))`` with the caches updated.
    """
    if module.normalizer == "multimax":
        raise ValueError(
            "cached_attention: normalizer 'multimax' keeps its parameters in a "
            "submodule; decode without the cache (use_cache=False)"
        )
    params = module.variables["params"]
    heads, head_dim = key_cache.shape[2:]

    def project(name: str) -> jax.Array:
        dense = nn.DenseGeneral((heads, head_dim), axis=-1, use_bias=module.use_bias)
        # Module.apply's annotation includes the (output, variables) pair of a mutable apply.
        return cast(jax.Array, dense.apply({"params": params[name]}, inputs))

    key_cache = jax.lax.dynamic_update_slice_in_dim(key_cache, project("key"), position, 1)
    value_cache = jax.lax.dynamic_update_slice_in_dim(value_cache, project("value"), position, 1)
    mask = (jnp.arange(key_cache.shape[1]) <= position)[None, None, None, :]
    x = normalized_dot_product_attention(
        project("query"),
        key_cache,
        value_cache,
        mask=mask,
        deterministic=True,
        normalizer=module.normalizer,
        scale=module.scale if scale is None else scale,
    )
    out = nn.DenseGeneral(
        module.out_features or inputs.shape[-1], axis=(-2, -1), use_bias=module.use_bias
    )
    # Module.apply's annotation includes the (output, variables) pair of a mutable apply.
    return cast(jax.Array, out.apply({"params": params["out"]}, x)), (key_cache, value_cache)


class AudioLM(nn.Module):
    """Decoder-only LM with a linear audio projector spliced at placeholder tokens (LLark).

    Attributes:
      vocab_size: tokens.
      audio_token_id: the placeholder token that audio frames replace.
      max_len: longest sequence (learned positions).
      dim, depth, num_heads, mlp_dim: LM sizes.
      normalizer: the attention normaliser of every block (``jaxlab.nn.TransformerBlock``);
        cached decoding takes any but ``"multimax"``.
    """

    vocab_size: int
    audio_token_id: int
    max_len: int = 256
    dim: int = 128
    depth: int = 2
    num_heads: int = 4
    mlp_dim: int = 512
    normalizer: str | Normalizer = "softmax"

    def __post_init__(self) -> None:
        check_sizes(self, ("vocab_size", "max_len", "dim", "num_heads", "mlp_dim"), "normalizer")
        check_integer("audio_token_id", self.audio_token_id, low=0)
        if self.audio_token_id >= self.vocab_size:
            raise ValueError(
                f"audio_token_id must lie in [0, vocab_size={self.vocab_size}), "
                f"got {self.audio_token_id}"
            )
        super().__post_init__()

    def setup(self):
        self.projector = nn.Dense(self.dim, name="projector")
        self.embed = nn.Embed(self.vocab_size, self.dim, name="embed")
        self.pos_embed = self.param(
            "pos_embed", nn.initializers.normal(0.02), (1, self.max_len, self.dim)
        )
        self.blocks = [
            TransformerBlock(self.num_heads, self.mlp_dim, self.normalizer, name=f"block_{i}")
            for i in range(self.depth)
        ]
        self.ln_final = nn.LayerNorm(name="ln_final")
        self.head = nn.Dense(self.vocab_size, name="head")

    def embed_inputs(self, tokens: ArrayLike, audio: ArrayLike | None = None) -> jax.Array:
        """Token embeddings with projected audio frames spliced in (no positions).

        ``tokens: int [b, L]``, ``audio: [b, F, feature_dim]`` or None → ``[b, L, dim]``.
        """
        tokens = jnp.asarray(tokens)
        if tokens.ndim != 2 or not jnp.issubdtype(tokens.dtype, jnp.integer):
            raise ValueError(
                f"tokens must be int [batch, length], got {tokens.dtype} {tokens.shape}"
            )
        x = self.embed(tokens)
        if audio is None:  # text only (initialise with audio to create the projector)
            return x
        audio = jnp.asarray(audio, x.dtype)
        if audio.ndim != 3 or audio.shape[0] != tokens.shape[0]:
            raise ValueError(
                f"audio must be [batch, frames, features] with batch "
                f"{tokens.shape[0]}, got {audio.shape}"
            )
        return splice_audio(x, self.projector(audio), tokens == self.audio_token_id)

    def _trunk(self, x: jax.Array, mask: jax.Array | None) -> jax.Array:
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln_final(x))

    def __call__(self, tokens: ArrayLike, audio: ArrayLike | None = None) -> jax.Array:
        """Next-token logits ``[b, L, vocab]`` of ``tokens: int [b, L]`` with ``audio [b, F, f]``.

        Raises:
          ValueError: a sequence longer than ``max_len`` (a prompt beyond the context).
        """
        length = jnp.shape(tokens)[-1]
        if length > self.max_len:
            raise ValueError(f"sequence length {length} exceeds the context max_len {self.max_len}")
        x = self.embed_inputs(tokens, audio)
        x = x + jnp.broadcast_to(self.pos_embed[:, :length], x.shape)
        mask = nn.make_causal_mask(jnp.ones((1, length), jnp.int32), dtype=jnp.bool_)
        return self._trunk(x, mask)

    def decode_step(
        self, x: ArrayLike, position: ArrayLike, cache: KVCache
    ) -> tuple[jax.Array, KVCache]:
        """One cached decoding step of the same blocks.

        ``x: [b, 1, dim]`` is the input embedding at ``position`` (int); ``cache`` holds each
        block's keys and values of the earlier positions (:func:`init_cache`). Every block
        runs as in ``__call__``, except that its attention call becomes
        :func:`cached_attention`. Returns ``(logits [b, 1, vocab], updated cache)``.
        """
        updated: KVCache = {}

        def attend(call, args, kwargs, context):
            module = context.module
            if not isinstance(module, MultiHeadAttention) or context.method_name != "__call__":
                return call(*args, **kwargs)
            block = module.parent.name
            out, updated[block] = cached_attention(
                module, args[0], position, *cache[block], scale=kwargs.get("scale")
            )
            return out

        pos = jax.lax.dynamic_slice_in_dim(self.pos_embed, position, 1, axis=1)
        with nn.intercept_methods(attend):
            logits = self._trunk(jnp.asarray(x) + jnp.broadcast_to(pos, jnp.shape(x)), None)
        return logits, updated


def init_cache(model: AudioLM, batch: int, dtype=jnp.float32) -> KVCache:
    """An empty key/value cache of ``model`` for ``batch`` sequences: per block, keys and
    values ``[batch, max_len, num_heads, dim // num_heads]``."""
    shape = (batch, model.max_len, model.num_heads, model.dim // model.num_heads)
    return {
        f"block_{i}": (jnp.zeros(shape, dtype), jnp.zeros(shape, dtype)) for i in range(model.depth)
    }


def generate(
    params,
    model: AudioLM,
    prompt: ArrayLike,
    prompt_length: ArrayLike,
    audio: ArrayLike | None,
    key: jax.Array,
    temperature: float = 0.0,
    use_cache: bool = True,
) -> jax.Array:
    """Completes each prompt to ``prompt.shape[1]`` tokens, greedily or by temperature sampling.

    Position t+1 keeps the prompt's token while t + 1 < ``prompt_length`` and otherwise takes
    the model's next token: argmax at ``temperature == 0``, else a sample of
    softmax(logits / temperature). With ``use_cache`` each step is one token through a
    key/value cache (``AudioLM.decode_step``); without, the whole prefix is recomputed.

    Args:
      params: ``AudioLM`` parameters.
      model: the ``AudioLM``.
      prompt: int ``[b, L]``; entries at or beyond ``prompt_length`` are ignored.
      prompt_length: int ``[b]``, at least 1.
      audio: ``[b, F, features]`` or None.
      key: PRNG key (used when ``temperature > 0``).
      temperature: sampling temperature; 0 is greedy.
      use_cache: decode with the key/value cache.

    Returns:
      int ``[b, L]``: the prompts followed by the generated tokens.
    """
    if not isinstance(model, AudioLM):
        raise ValueError(f"model must be an AudioLM, got {type(model).__name__}")
    prompt = jnp.asarray(prompt)
    if prompt.ndim != 2 or not jnp.issubdtype(prompt.dtype, jnp.integer):
        raise ValueError(f"prompt must be int [batch, length], got {prompt.dtype} {prompt.shape}")
    prompt = prompt.astype(jnp.int32)
    prompt_length = jnp.asarray(prompt_length, jnp.int32)
    check_range("temperature", temperature, 0.0)
    key = check_key("key", key)
    b, length = prompt.shape
    if audio is not None and (jnp.ndim(audio) != 3 or jnp.shape(audio)[0] != b):
        raise ValueError(f"audio must be [{b}, frames, features] or None, got {jnp.shape(audio)}")
    if prompt_length.shape != (b,):
        raise ValueError(f"prompt_length must be [{b}], got {prompt_length.shape}")
    if length > model.max_len:
        raise ValueError(f"prompt buffer {length} exceeds the context max_len {model.max_len}")
    embedded = model.apply(params, prompt, audio, method=AudioLM.embed_inputs)

    def pick(logits, t):
        if temperature == 0.0:
            return jnp.argmax(logits, axis=-1).astype(jnp.int32)
        return jax.random.categorical(jax.random.fold_in(key, t), logits / temperature)

    def write(tokens, t, new):
        keep = t + 1 < prompt_length
        given = jax.lax.dynamic_index_in_dim(tokens, t + 1, 1, keepdims=False)
        nxt = jnp.where(keep, given, new.astype(jnp.int32))
        return jax.lax.dynamic_update_slice_in_dim(tokens, nxt[:, None], t + 1, axis=1)

    if use_cache:
        cache = init_cache(model, b)

        def step(carry, t):
            tokens, cache = carry
            current = jax.lax.dynamic_slice_in_dim(tokens, t, 1, axis=1)
            tok_embed = model.apply(params, current, method=AudioLM.embed_inputs)
            prompt_embed = jax.lax.dynamic_slice_in_dim(embedded, t, 1, axis=1)
            x = jnp.where((t < prompt_length)[:, None, None], prompt_embed, tok_embed)
            logits, cache = model.apply(params, x, t, cache, method=AudioLM.decode_step)
            return (write(tokens, t, pick(logits[:, 0], t)), cache), None

        (tokens, _), _ = jax.lax.scan(step, (prompt, cache), jnp.arange(length - 1))
        return tokens

    def full_step(tokens, t):
        x = model.apply(params, tokens, method=AudioLM.embed_inputs)
        position = jnp.arange(length)[None, :, None]
        x = jnp.where(position < prompt_length[:, None, None], embedded, x)
        logits = model.apply(params, x, method=_forward_embedded)
        return write(tokens, t, pick(jax.lax.dynamic_index_in_dim(logits, t, 1, False), t)), None

    tokens, _ = jax.lax.scan(full_step, prompt, jnp.arange(length - 1))
    return tokens


def _forward_embedded(model: AudioLM, x: jax.Array) -> jax.Array:
    length = x.shape[1]
    x = x + jnp.broadcast_to(model.pos_embed[:, :length], x.shape)
    mask = nn.make_causal_mask(jnp.ones((1, length), jnp.int32), dtype=jnp.bool_)
    return model._trunk(x, mask)
