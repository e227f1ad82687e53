"""PerceiverIO against a numpy forward pass built from its parameters, and its invariances.

Comparisons with a reference run under ``jax.default_matmul_precision("highest")``
(``docs/precision.md``): a GPU's default TF32 products miss them by ~1e-3.
"""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.nn.perceiver import PerceiverIO, PerceiverLayer


def np_layer_norm(x, p, eps=1e-6):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * p["scale"] + p["bias"]


def np_gelu(x):  # flax's default: the tanh approximation
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def np_attention(p, q_in, kv_in, mask):
    q = np.einsum("bqi,ihd->bqhd", q_in, p["query"]["kernel"]) + p["query"]["bias"]
    k = np.einsum("bki,ihd->bkhd", kv_in, p["key"]["kernel"]) + p["key"]["bias"]
    v = np.einsum("bki,ihd->bkhd", kv_in, p["value"]["kernel"]) + p["value"]["bias"]
    logits = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if mask is not None:
        logits = np.where(mask[:, None, None, :] > 0, logits, -1e30)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    out = np.einsum("bhqk,bkhd->bqhd", w, v)
    return np.einsum("bqhd,hdo->bqo", out, p["out"]["kernel"]) + p["out"]["bias"]


def np_perceiver_layer(p, x, context, mask=None, query_residual=True):
    attended = np_attention(
        p["MultiHeadDotProductAttention_0"],
        np_layer_norm(x, p["LayerNorm_0"]),
        np_layer_norm(context, p["LayerNorm_1"]),
        mask,
    )
    x = x + attended if query_residual else attended
    h = np_layer_norm(x, p["LayerNorm_2"]) @ p["Dense_0"]["kernel"] + p["Dense_0"]["bias"]
    return x + np_gelu(h) @ p["Dense_1"]["kernel"] + p["Dense_1"]["bias"]


def as_np(tree):
    return jax.tree.map(lambda a: np.asarray(a, np.float64), tree)


def inputs(seed=0, b=2, n=6, m=3, d_in=5, d_q=4):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(b, n, d_in)).astype(np.float32)
    q = rng.normal(size=(b, m, d_q)).astype(np.float32)
    mask = np.ones((b, n), np.float32)
    mask[1, -2:] = 0.0  # the second example has two padding inputs
    return x, q, mask


@pytest.mark.parametrize("query_residual", [True, False])
def test_layer_matches_numpy(query_residual):
    with jax.default_matmul_precision("highest"):
        x, _, mask = inputs()
        z = np.random.default_rng(1).normal(size=(2, 3, 8)).astype(np.float32)
        layer = PerceiverLayer(num_heads=2, widening_factor=2, query_residual=query_residual)
        params = jax.jit(layer.init)(jax.random.key(0), z, x, mask)
        out = jax.jit(layer.apply)(params, z, x, mask)
        chex.assert_shape(out, (2, 3, 8))
        ref = np_perceiver_layer(
            as_np(params["params"]),
            z.astype(np.float64),
            x.astype(np.float64),
            mask,
            query_residual,
        )
        np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-5)


MODEL = PerceiverIO(
    num_latents=4,
    d_latents=8,
    num_blocks=2,
    num_self_attends_per_block=1,
    num_self_attention_heads=2,
    num_cross_attention_heads=1,
)


@pytest.fixture(scope="module")
def params():
    return jax.jit(MODEL.init)(jax.random.key(1), *inputs())


APPLY = jax.jit(MODEL.apply)


def test_model_matches_numpy(params):
    with jax.default_matmul_precision("highest"):
        x, q, mask = inputs(2)
        out = APPLY(params, x, q, mask)
        chex.assert_shape(out, q.shape)
        p = as_np(params["params"])
        z = np.broadcast_to(p["latents"], (2, 4, 8))
        names = iter(
            sorted(
                (k for k in p if k.startswith("PerceiverLayer_")),
                key=lambda k: int(k.split("_")[1]),
            )
        )
        for _ in range(2):
            z = np_perceiver_layer(p[next(names)], z, x.astype(np.float64), mask)
            z = np_perceiver_layer(p[next(names)], z, z)
        ref = np_perceiver_layer(p[next(names)], q.astype(np.float64), z)
        np.testing.assert_allclose(out, ref, rtol=5e-4, atol=5e-5)


def test_padding_and_input_order_do_not_matter(params):
    x, q, mask = inputs(3)
    apply = APPLY
    out = apply(params, x, q, mask)
    changed = x.copy()
    changed[1, -2:] = 1e3  # padding content is never attended to
    np.testing.assert_allclose(apply(params, changed, q, mask), out, rtol=1e-5, atol=1e-6)
    perm = np.random.default_rng(0).permutation(6)  # no positions: a set of inputs
    np.testing.assert_allclose(
        apply(params, x[:, perm], q, mask[:, perm]), out, rtol=1e-4, atol=1e-5
    )
    qperm = np.array([2, 0, 1])  # outputs follow their queries
    np.testing.assert_allclose(
        apply(params, x, q[:, qperm], mask), out[:, qperm], rtol=1e-4, atol=1e-5
    )


def test_bad_shapes(params):
    x, q, mask = inputs()
    with pytest.raises(ValueError, match="inputs"):
        MODEL.apply(params, x[0], q, mask)
    with pytest.raises(ValueError, match="inputs"):
        MODEL.apply(params, x, q[:1], mask)
    with pytest.raises(ValueError, match="input_mask"):
        MODEL.apply(params, x, q, mask[:, :3])


def test_bf16_layer_keeps_float32_parameters_and_softmax():
    """bf16 compute (``dtype=jnp.bfloat16``): float32 parameters, bf16 matrix products, the
    attention softmax in float32, and the output within bf16 rounding of the float64
    reference. bf16 keeps 8 significand bits (unit roundoff u = 2⁻⁸); the layer rounds its
    operands at ≈ 8 matrix products and norms in a row, so the tolerance is 8u relative to
    the output's scale."""
    x, _, mask = inputs()
    z = np.random.default_rng(1).normal(size=(2, 3, 8)).astype(np.float32)
    layer = PerceiverLayer(num_heads=2, widening_factor=2, dtype=jnp.bfloat16)
    params = jax.jit(layer.init)(jax.random.key(0), z, x, mask)
    assert {leaf.dtype for leaf in jax.tree.leaves(params)} == {jnp.dtype(jnp.float32)}
    out = jax.jit(layer.apply)(params, z, x, mask)
    ref = np_perceiver_layer(
        as_np(params["params"]), z.astype(np.float64), x.astype(np.float64), mask
    )
    scale = np.abs(ref).max()
    np.testing.assert_allclose(np.asarray(out, np.float64), ref, rtol=0, atol=8 * 2.0**-8 * scale)
    jaxpr = jax.make_jaxpr(layer.apply)(params, z, x, mask)
    exps = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "exp"]
    assert exps and all(e.outvars[0].aval.dtype == jnp.float32 for e in exps)
    # every product in bf16 but the float32 attention weights times the values
    dots = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "dot_general"]
    in_bf16 = [all(v.aval.dtype == jnp.bfloat16 for v in e.invars) for e in dots]
    assert len(dots) == 8 and sum(in_bf16) == 7  # q, k, v, logits, out, 2 MLP | weights·v
