"""Bad input, one row per argument of every public ``jaxlab.nn`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxlab import nn as jnn
from tests.bad_inputs import KEY, Case, case_id, check

Q4 = jnp.ones((2, 3, 2, 4))  # [batch, length, heads, depth]
MMP = jnn.init_multimax_params(KEY)
S3 = jnp.array([[0.5, 1.0, -1.0]])
Z4 = jax.random.normal(KEY, (4, 3))
TOK = jnp.zeros((2, 5), jnp.int32)

CASES = [
    Case("nn.sparsemax", "x", lambda: jnn.sparsemax(jnp.ones(()))),
    Case("nn.sparsemax", "axis", lambda: jnn.sparsemax(S3, axis=2)),
    Case("nn.sparsemax", "x", lambda: jnn.sparsemax(jnp.array([1 + 1j]))),
    Case("nn.entmax15", "x", lambda: jnn.entmax15(jnp.zeros((2, 0)))),
    Case("nn.entmax15", "axis", lambda: jnn.entmax15(S3, axis=-3)),
    Case("nn.multimax", "x", lambda: jnn.multimax(jnp.ones(()), MMP)),
    Case("nn.multimax", "params", lambda: jnn.multimax(S3, (1.0, 2.0))),
    Case("nn.multimax", "axis", lambda: jnn.multimax(S3, MMP, axis=5)),
    Case("nn.multimax", "where", lambda: jnn.multimax(S3, MMP, where=jnp.ones((1, 3)))),
    Case("nn.multimax_modulate", "params", lambda: jnn.multimax_modulate(S3, None)),
    Case("nn.multimax_modulate", "x", lambda: jnn.multimax_modulate(jnp.array([1j]), MMP)),
    Case("nn.init_multimax_params", "order", lambda: jnn.init_multimax_params(KEY, order=0)),
    Case("nn.init_multimax_params", "std", lambda: jnn.init_multimax_params(KEY, std=-1.0)),
    Case("nn.init_multimax_params", "key", lambda: jnn.init_multimax_params(0)),
    Case(
        "nn.init_multimax_params", "dtype", lambda: jnn.init_multimax_params(KEY, dtype=jnp.int32)
    ),
    Case("nn.norm_softmax", "gamma", lambda: jnn.norm_softmax(S3, 0.0)),
    Case("nn.norm_softmax", "gamma", lambda: jnn.norm_softmax(S3, jnp.ones(2))),
    Case("nn.norm_softmax", "logits", lambda: jnn.norm_softmax(jnp.ones(()), 1.0)),
    Case("nn.norm_softmax", "axis", lambda: jnn.norm_softmax(S3, 1.0, axis=4)),
    Case("nn.norm_softmax", "spread", lambda: jnn.norm_softmax(S3, 1.0, spread="bogus")),
    Case("nn.norm_softmax", "where", lambda: jnn.norm_softmax(S3, 1.0, where=jnp.ones(2, bool))),
    Case(
        "nn.heat_treatment_schedule",
        "init_scale",
        lambda: jnn.heat_treatment_schedule(0.0, 1.0, 10),
    ),
    Case(
        "nn.heat_treatment_schedule",
        "final_scale",
        lambda: jnn.heat_treatment_schedule(1.0, -1.0, 10),
    ),
    Case(
        "nn.heat_treatment_schedule",
        "transition_steps",
        lambda: jnn.heat_treatment_schedule(1.0, 2.0, 0),
    ),
    Case("nn.normalize", "normalizer", lambda: jnn.normalize(S3, "bogus")),
    Case("nn.normalize", "multimax_params", lambda: jnn.normalize(S3, "multimax")),
    Case("nn.normalize", "scale", lambda: jnn.normalize(S3, "norm_softmax")),
    Case("nn.normalize", "axis", lambda: jnn.normalize(S3, "softmax", axis=3)),
    Case("nn.normalize", "where", lambda: jnn.normalize(S3, "softmax", where=jnp.ones((2, 2)))),
    Case("nn.normalize", "scores", lambda: jnn.normalize(jnp.ones(()), "softmax")),
    Case("nn.resolve_normalizer", "normalizer", lambda: jnn.resolve_normalizer(3)),
    Case(
        "nn.resolve_normalizer",
        "multimax_params",
        lambda: jnn.resolve_normalizer("multimax", multimax_params=(1, 2)),
    ),
    Case("nn.resolve_normalizer", "scale", lambda: jnn.resolve_normalizer("norm_softmax_std")),
    Case("nn.attention_weights", "query", lambda: jnn.attention_weights(jnp.ones((3, 4)), Q4)),
    Case("nn.attention_weights", "key", lambda: jnn.attention_weights(Q4, Q4[..., :3])),
    Case(
        "nn.attention_weights",
        "normalizer",
        lambda: jnn.attention_weights(Q4, Q4, normalizer="bogus"),
    ),
    Case(
        "nn.attention_weights",
        "multimax_params",
        lambda: jnn.attention_weights(Q4, Q4, normalizer="multimax"),
    ),
    Case("nn.attention_weights", "mask", lambda: jnn.attention_weights(Q4, Q4, mask=jnp.ones(5))),
    Case("nn.attention_weights", "bias", lambda: jnn.attention_weights(Q4, Q4, bias=jnp.ones(5))),
    Case("nn.attention_weights", "scale", lambda: jnn.attention_weights(Q4, Q4, scale=jnp.ones(2))),
    Case(
        "nn.normalized_dot_product_attention",
        "value",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4[:, :2]),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "dropout_rng",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, dropout_rate=0.5),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "dropout_rate",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, dropout_rate=1.5, dropout_rng=KEY),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "module",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, module="m"),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "normalizer",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, normalizer="bogus"),
    ),
    Case("nn.make_attention_fn", "normalizer", lambda: jnn.make_attention_fn("bogus")),
    Case(
        "nn.make_attention_fn",
        "multimax_params",
        lambda: jnn.make_attention_fn("multimax", multimax_params=(1, 2)),
    ),
    Case("nn.make_attention_fn", "scale", lambda: jnn.make_attention_fn("softmax", scale=0.0)),
    Case("nn.multimax_decay_mask", "params", lambda: jnn.multimax_decay_mask(None)),
    Case("nn.simclr_loss", "z1", lambda: jnn.simclr_loss(jnp.ones(3), jnp.ones(3))),
    Case("nn.simclr_loss", "z2", lambda: jnn.simclr_loss(Z4, Z4[:3])),
    Case("nn.simclr_loss", "temperature", lambda: jnn.simclr_loss(Z4, Z4, temperature=0.0)),
    Case("nn.supcon_loss", "z", lambda: jnn.supcon_loss(jnp.ones((1, 3)), jnp.zeros(1, int))),
    Case("nn.supcon_loss", "labels", lambda: jnn.supcon_loss(Z4, jnp.zeros(3, int))),
    Case("nn.supcon_loss", "labels", lambda: jnn.supcon_loss(Z4, jnp.array([0.0, 1, 0, 1]))),
    Case(
        "nn.supcon_loss",
        "temperature",
        lambda: jnn.supcon_loss(Z4, jnp.array([0, 1, 0, 1]), temperature=-1.0),
    ),
    Case(
        "nn.splice_audio",
        "audio_embeddings",
        lambda: jnn.splice_audio(jnp.ones((1, 4, 3)), jnp.ones((1, 2, 5)), jnp.ones((1, 4), bool)),
    ),
    Case(
        "nn.splice_audio",
        "is_audio",
        lambda: jnn.splice_audio(jnp.ones((1, 4, 3)), jnp.ones((1, 2, 3)), jnp.ones((1, 3), bool)),
    ),
    Case(
        "nn.splice_audio",
        "token_embeddings",
        lambda: jnn.splice_audio(jnp.ones((4, 3)), jnp.ones((1, 2, 3)), jnp.ones((1, 4), bool)),
    ),
    Case(
        "nn.answer_loss", "logits", lambda: jnn.answer_loss(jnp.ones((2, 5)), TOK, jnp.ones((2, 5)))
    ),
    Case(
        "nn.answer_loss",
        "tokens",
        lambda: jnn.answer_loss(jnp.ones((2, 5, 3)), TOK.astype(float), jnp.ones((2, 5))),
    ),
    Case(
        "nn.answer_loss",
        "loss_mask",
        lambda: jnn.answer_loss(jnp.ones((2, 5, 3)), TOK, jnp.ones((2, 4))),
    ),
    Case(
        "nn.generate",
        "prompt_length",
        lambda: jnn.generate(
            {},
            jnn.AudioLM(10, 9, max_len=8, dim=8, depth=1, num_heads=2, mlp_dim=8),
            TOK,
            jnp.ones(3, int),
            None,
            KEY,
        ),
    ),
    Case(
        "nn.generate",
        "temperature",
        lambda: jnn.generate(
            {},
            jnn.AudioLM(10, 9, max_len=8, dim=8, depth=1, num_heads=2, mlp_dim=8),
            TOK,
            jnp.ones(2, int),
            None,
            KEY,
            temperature=-1.0,
        ),
    ),
    Case(
        "nn.generate",
        "key",
        lambda: jnn.generate(
            {},
            jnn.AudioLM(10, 9, max_len=8, dim=8, depth=1, num_heads=2, mlp_dim=8),
            TOK,
            jnp.ones(2, int),
            None,
            0,
        ),
    ),
    Case("nn.generate", "model", lambda: jnn.generate({}, None, TOK, jnp.ones(2, int), None, KEY)),
    Case(
        "nn.generate",
        "prompt",
        lambda: jnn.generate(
            {},
            jnn.AudioLM(10, 9, max_len=8, dim=8, depth=1, num_heads=2, mlp_dim=8),
            TOK[0],
            jnp.ones(2, int),
            None,
            KEY,
        ),
    ),
    # Flax modules: their sizes are checked when the module is built.
    Case("nn.MultiMax", "order", lambda: jnn.MultiMax(order=0)),
    Case("nn.MultiMax", "init_std", lambda: jnn.MultiMax(init_std=-1.0)),
    Case("nn.MultiHeadAttention", "num_heads", lambda: jnn.MultiHeadAttention(num_heads=0)),
    Case(
        "nn.MultiHeadAttention",
        "normalizer",
        lambda: jnn.MultiHeadAttention(num_heads=2, normalizer="bogus"),
    ),
    Case(
        "nn.MultiHeadAttention",
        "dropout_rate",
        lambda: jnn.MultiHeadAttention(num_heads=2, dropout_rate=1.0),
    ),
    Case(
        "nn.MultiHeadAttention",
        "qkv_features",
        lambda: jnn.MultiHeadAttention(num_heads=2, qkv_features=3),
    ),
    Case(
        "nn.MultiHeadAttention",
        "out_features",
        lambda: jnn.MultiHeadAttention(num_heads=2, out_features=0),
    ),
    Case(
        "nn.MultiHeadAttention",
        "multimax_order",
        lambda: jnn.MultiHeadAttention(num_heads=2, multimax_order=0),
    ),
    Case("nn.MultiHeadAttention", "scale", lambda: jnn.MultiHeadAttention(num_heads=2, scale=-1.0)),
    Case("nn.TransformerBlock", "num_heads", lambda: jnn.TransformerBlock(num_heads=0, mlp_dim=4)),
    Case("nn.TransformerBlock", "mlp_dim", lambda: jnn.TransformerBlock(num_heads=2, mlp_dim=0)),
    Case(
        "nn.TransformerBlock",
        "normalizer",
        lambda: jnn.TransformerBlock(num_heads=2, mlp_dim=4, normalizer="bogus"),
    ),
    Case("nn.ViT", "num_classes", lambda: jnn.ViT(num_classes=0)),
    Case("nn.ViT", "patch_size", lambda: jnn.ViT(num_classes=2, patch_size=0)),
    Case("nn.ViT", "dim", lambda: jnn.ViT(num_classes=2, dim=6, num_heads=4)),
    Case("nn.ViT", "depth", lambda: jnn.ViT(num_classes=2, depth=-1)),
    Case("nn.ViT", "num_heads", lambda: jnn.ViT(num_classes=2, num_heads=0)),
    Case("nn.ViT", "mlp_dim", lambda: jnn.ViT(num_classes=2, mlp_dim=0)),
    Case(
        "nn.ViT",
        "attention_normalizer",
        lambda: jnn.ViT(num_classes=2, attention_normalizer="bogus"),
    ),
    Case(
        "nn.ViT", "output_normalizer", lambda: jnn.ViT(num_classes=2, output_normalizer="sparsemax")
    ),
    Case("nn.TransformerLM", "vocab_size", lambda: jnn.TransformerLM(vocab_size=0)),
    Case("nn.TransformerLM", "max_len", lambda: jnn.TransformerLM(vocab_size=5, max_len=0)),
    Case("nn.TransformerLM", "dim", lambda: jnn.TransformerLM(vocab_size=5, dim=0)),
    Case("nn.TransformerLM", "depth", lambda: jnn.TransformerLM(vocab_size=5, depth=-1)),
    Case("nn.TransformerLM", "num_heads", lambda: jnn.TransformerLM(vocab_size=5, num_heads=3)),
    Case("nn.TransformerLM", "mlp_dim", lambda: jnn.TransformerLM(vocab_size=5, mlp_dim=0)),
    Case(
        "nn.TransformerLM",
        "attention_normalizer",
        lambda: jnn.TransformerLM(vocab_size=5, attention_normalizer="bogus"),
    ),
    Case(
        "nn.TransformerLM",
        "output_normalizer",
        lambda: jnn.TransformerLM(vocab_size=5, output_normalizer="entmax15"),
    ),
    Case("nn.AudioLM", "vocab_size", lambda: jnn.AudioLM(vocab_size=0, audio_token_id=0)),
    Case("nn.AudioLM", "audio_token_id", lambda: jnn.AudioLM(vocab_size=5, audio_token_id=5)),
    Case("nn.AudioLM", "max_len", lambda: jnn.AudioLM(5, 1, max_len=0)),
    Case("nn.AudioLM", "dim", lambda: jnn.AudioLM(5, 1, dim=10, num_heads=4)),
    Case("nn.AudioLM", "depth", lambda: jnn.AudioLM(5, 1, depth=-1)),
    Case("nn.AudioLM", "num_heads", lambda: jnn.AudioLM(5, 1, num_heads=0)),
    Case("nn.AudioLM", "mlp_dim", lambda: jnn.AudioLM(5, 1, mlp_dim=0)),
    Case("nn.AudioLM", "normalizer", lambda: jnn.AudioLM(5, 1, normalizer="bogus")),
    Case(
        "nn.generate",
        "audio",
        lambda: jnn.generate(
            {},
            jnn.AudioLM(10, 9, max_len=8, dim=8, depth=1, num_heads=2, mlp_dim=8),
            TOK,
            jnp.ones(2, int),
            jnp.ones((3, 2, 4)),
            KEY,
        ),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "query",
        lambda: jnn.normalized_dot_product_attention(jnp.ones((3, 4)), Q4, Q4),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "key",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4[..., :3], Q4),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "bias",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, bias=jnp.ones(5)),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "mask",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, mask=jnp.ones(5)),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "multimax_params",
        lambda: jnn.normalized_dot_product_attention(
            Q4, Q4, Q4, normalizer="multimax", multimax_params=(1, 2)
        ),
    ),
    Case(
        "nn.normalized_dot_product_attention",
        "scale",
        lambda: jnn.normalized_dot_product_attention(Q4, Q4, Q4, scale=jnp.ones(3)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
