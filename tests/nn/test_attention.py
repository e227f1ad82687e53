"""Attention with pluggable normalisers, the Linen modules and the weight-decay mask."""

import functools

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.nn import (
    MultiHeadAttention,
    MultiMax,
    TransformerLM,
    ViT,
    make_attention_fn,
    multimax,
    multimax_decay_mask,
)
from jaxlab.nn.multimax import MultiMaxParams

from .test_multimax import np_multimax


def hand_attention(params, x, normalise, mask=None):
    """Multi-head attention written out with numpy."""
    x = np.asarray(x, np.float64)
    p = jax.tree.map(lambda a: np.asarray(a, np.float64), params)
    q = np.einsum("bld,dhk->blhk", x, p["query"]["kernel"]) + p["query"]["bias"]
    k = np.einsum("bld,dhk->blhk", x, p["key"]["kernel"]) + p["key"]["bias"]
    v = np.einsum("bld,dhk->blhk", x, p["value"]["kernel"]) + p["value"]["bias"]
    scores = np.einsum("bqhk,bshk->bhqs", q, k) / np.sqrt(q.shape[-1])
    weights = normalise(scores, mask)
    out = np.einsum("bhqs,bshk->bqhk", weights, v)
    return np.einsum("bqhk,hkd->bqd", out, p["out"]["kernel"]) + p["out"]["bias"]


def np_softmax(s, mask):
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


X = jnp.asarray(np.random.default_rng(0).normal(size=(2, 5, 8)), jnp.float32)
CAUSAL = np.tril(np.ones((5, 5), bool))[None, None]


@pytest.mark.parametrize("mask", [None, CAUSAL])
def test_multimax_attention_against_hand_written(mask):
    layer = MultiHeadAttention(num_heads=2, normalizer="multimax")
    variables = layer.init(jax.random.key(0), X)
    # Give the modulator visible strength so the check is not softmax in disguise.
    strong = {
        "multimax_b": [-0.5, 0.3],
        "multimax_d": [0.4, 0.6],
        "multimax_t_b": [0.7, 0.4],
        "multimax_t_d": [-0.3, 0.5],
    }
    params = dict(variables["params"])
    params["multimax"] = {k: jnp.asarray(v) for k, v in strong.items()}
    with jax.default_matmul_precision("highest"):  # the float64 reference, not TF32
        got = layer.apply({"params": params}, X, mask=mask)
    mm = MultiMaxParams(*(np.asarray(strong[f"multimax_{n}"]) for n in MultiMaxParams._fields))
    want = hand_attention(params, X, lambda s, m: np_multimax(s, mm, mask=m), mask)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask", [None, CAUSAL])
def test_softmax_is_drop_in_for_flax(mask):
    ours = MultiHeadAttention(num_heads=2)
    variables = ours.init(jax.random.key(1), X)
    flax_layer = nn.MultiHeadDotProductAttention(num_heads=2)
    with jax.default_matmul_precision("highest"):  # the float64 reference, not TF32
        got = ours.apply(variables, X, mask=mask)
        np.testing.assert_allclose(
            got, flax_layer.apply(variables, X, mask=mask), rtol=1e-5, atol=1e-6
        )
    np.testing.assert_allclose(
        got, hand_attention(variables["params"], X, np_softmax, mask), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("normalizer", ["sparsemax", "entmax15"])
def test_sparse_attention_fn_in_flax_module(normalizer):
    flax_layer = nn.MultiHeadDotProductAttention(
        num_heads=2, attention_fn=make_attention_fn(normalizer)
    )
    ours = MultiHeadAttention(num_heads=2, normalizer=normalizer)
    variables = ours.init(jax.random.key(2), X)
    with jax.default_matmul_precision("highest"):  # both sides at full float32
        got = ours.apply(variables, X, mask=CAUSAL, sow_weights=True, mutable=["intermediates"])
        want = flax_layer.apply(variables, X, mask=CAUSAL)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    (weights,) = got[1]["intermediates"]["attention_weights"]
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert np.all(np.asarray(weights)[..., ~CAUSAL[0, 0]] == 0.0)


def test_multimax_module_and_decay_mask():
    layer = MultiMax(order=2)
    variables = layer.init(jax.random.key(0), jnp.zeros(3))
    assert sorted(variables["params"]) == [
        "multimax_b",
        "multimax_d",
        "multimax_t_b",
        "multimax_t_d",
    ]
    x = jnp.array([0.5, -1.0, 2.0])
    p = variables["params"]
    want = multimax(
        x, MultiMaxParams(p["multimax_b"], p["multimax_d"], p["multimax_t_b"], p["multimax_t_d"])
    )
    np.testing.assert_allclose(layer.apply(variables, x), want, rtol=1e-6)

    model = ViT(
        num_classes=3,
        patch_size=4,
        dim=16,
        depth=1,
        num_heads=2,
        mlp_dim=32,
        attention_normalizer="multimax",
        output_normalizer="multimax",
    )
    params = jax.jit(model.init)(jax.random.key(0), jnp.zeros((1, 8, 8, 1)))["params"]
    mask = multimax_decay_mask(params)
    flat = jax.tree_util.tree_flatten_with_path(mask)[0]
    excluded = [jax.tree_util.keystr(path) for path, keep in flat if not keep]
    assert len(excluded) == 4 * 2  # the attention layer + the output layer
    # With zero gradients adamw only decays: MultiMax scalars stay, kernels shrink.
    tx = optax.adamw(0.1, weight_decay=1.0, mask=multimax_decay_mask)
    updates, _ = tx.update(jax.tree.map(jnp.zeros_like, params), tx.init(params), params)
    head = params["block_0"]["attention"]
    moved = updates["block_0"]["attention"]
    assert all(bool(jnp.all(v == 0)) for v in moved["multimax"].values())
    assert bool(jnp.any(moved["query"]["kernel"] != 0)) and bool(jnp.any(head["query"]["kernel"]))


def test_lm_is_causal_and_differentiable():
    attn = "multimax"
    model = TransformerLM(
        vocab_size=11,
        max_len=8,
        dim=16,
        depth=1,
        num_heads=2,
        mlp_dim=32,
        attention_normalizer=attn,
        output_normalizer="multimax",
    )
    tokens = jnp.asarray(np.random.default_rng(0).integers(0, 11, size=(2, 8)), jnp.int32)
    variables = jax.jit(model.init)(jax.random.key(0), tokens)
    apply = jax.jit(model.apply)
    logits = apply(variables, tokens)
    changed = apply(variables, tokens.at[:, -1].set((tokens[:, -1] + 1) % 11))
    np.testing.assert_allclose(logits[:, :-1], changed[:, :-1], rtol=1e-5, atol=1e-6)

    def loss(params):
        out = model.apply({"params": params}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(out, tokens).mean()

    grads = jax.jit(jax.grad(loss))(variables["params"])
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in jax.tree.leaves(grads))
    assert float(jnp.abs(grads["output_multimax"]["multimax_t_d"]).sum()) > 0


def test_bad_model_settings():
    with pytest.raises(ValueError, match="normalizer"):
        MultiHeadAttention(num_heads=2, normalizer="relu").init(jax.random.key(0), X)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(num_heads=3).init(jax.random.key(0), X)
    with pytest.raises(ValueError, match="normalizer"):
        ViT(num_classes=2, output_normalizer="sparsemax").init(
            jax.random.key(0), jnp.zeros((1, 8, 8, 1))
        )
    with pytest.raises(ValueError, match="patch_size"):
        ViT(num_classes=2, patch_size=3).init(jax.random.key(0), jnp.zeros((1, 8, 8, 1)))
    with pytest.raises(ValueError, match="max_len"):
        TransformerLM(vocab_size=5, max_len=4).init(jax.random.key(0), jnp.zeros((1, 6), int))


def test_transformer_lm_tied_embeddings_reuse_the_input_table():
    import jax
    import jax.numpy as jnp

    from jaxlab.nn import TransformerLM

    model = TransformerLM(
        vocab_size=11, max_len=4, dim=8, depth=1, num_heads=2, mlp_dim=16, tie_embeddings=True
    )
    tokens = jnp.array([[1, 2, 3]])
    params = model.init(jax.random.key(0), tokens)["params"]
    assert "head" not in params
    assert model.apply({"params": params}, tokens).shape == (1, 3, 11)


def _small_models(**kwargs):
    sizes = dict(dim=16, depth=1, num_heads=2, mlp_dim=32)
    normalizers = dict(attention_normalizer="multimax", output_normalizer="multimax")
    vit = ViT(num_classes=5, patch_size=4, **sizes, **normalizers, **kwargs)
    lm = TransformerLM(vocab_size=11, max_len=8, **sizes, **normalizers, **kwargs)
    images = jnp.asarray(np.random.default_rng(1).normal(size=(2, 8, 8, 1)), jnp.float32)
    tokens = jnp.asarray(np.random.default_rng(2).integers(0, 11, size=(2, 8)), jnp.int32)
    return (vit, images, jnp.array([1, 3])), (lm, tokens, tokens)


def _loss_and_grads(model, params, inputs, labels):
    def loss(p):
        logits = model.apply({"params": p}, inputs)
        assert logits.dtype == jnp.float32  # the loss in float32
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    return jax.jit(jax.value_and_grad(loss))(params)


@pytest.mark.parametrize("index", [0, 1], ids=["vit", "lm"])
def test_mixed_precision_keeps_float32_master_weights(index):
    """bfloat16 compute: float32 parameters, logits, loss and gradients, within bfloat16
    rounding of the float32 model with the same parameters."""
    (model32, inputs, labels) = _small_models()[index]
    (model16, _, _) = _small_models(dtype=jnp.bfloat16)[index]
    params = model16.init(jax.random.key(0), inputs)["params"]
    assert {leaf.dtype for leaf in jax.tree.leaves(params)} == {jnp.dtype(jnp.float32)}
    _, inter = jax.jit(functools.partial(model16.apply, mutable=["intermediates"]))(
        {"params": params}, inputs
    )
    (weights,) = inter["intermediates"]["block_0"]["attention"]["attention_weights"]
    assert weights.dtype == jnp.bfloat16  # the attention runs in bfloat16
    with jax.default_matmul_precision("highest"):
        loss32, grads32 = _loss_and_grads(model32, params, inputs, labels)
        loss16, grads16 = _loss_and_grads(model16, params, inputs, labels)
    assert {g.dtype for g in jax.tree.leaves(grads16)} == {jnp.dtype(jnp.float32)}
    np.testing.assert_allclose(loss16, loss32, rtol=2e-2)
    flat32, flat16 = (
        jnp.concatenate([g.ravel() for g in jax.tree.leaves(t)]) for t in (grads32, grads16)
    )
    assert float(jnp.linalg.norm(flat16 - flat32) / jnp.linalg.norm(flat32)) < 0.05


@pytest.mark.parametrize("index", [0, 1], ids=["vit", "lm"])
def test_unfused_multimax_model_matches_fused(index):
    (fused, inputs, labels) = _small_models()[index]
    (plain, _, _) = _small_models(fused_multimax=False)[index]
    params = fused.init(jax.random.key(0), inputs)["params"]
    with jax.default_matmul_precision("highest"):
        got = _loss_and_grads(fused, params, inputs, labels)
        want = _loss_and_grads(plain, params, inputs, labels)
    chex.assert_trees_all_close(got, want, rtol=1e-4, atol=1e-6)
