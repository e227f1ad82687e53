"""NEM-U's masking network: frozen encoder, decoder gradients, patching, learning a toy mask."""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxlab.explain.masking as masking_mod
from jaxlab.explain import (
    MaskDecoder,
    NEMParams,
    StagedEncoder,
    masked_input,
    nem_contrastive_loss,
    nem_mask,
    nem_objective,
)

H = W = 8
RNG = np.random.default_rng(1)


def stages_fn(a, x):
    """Toy encoder: texture gated by an object channel; emb = [A vec(x0 x1); 1]."""
    s1 = x[..., :1] * x[..., 1:2]  # [b, 8, 8, 1]
    s2 = s1.reshape(-1, 4, 2, 4, 2, 1).mean((2, 4))  # [b, 4, 4, 1]
    emb = s1.reshape(x.shape[0], -1) @ a
    return jnp.concatenate([emb, jnp.ones((x.shape[0], 1))], axis=1), (x, s1, s2)


def make_batch(rng, b):
    tex = rng.normal(size=(b, H, W, 1))
    obj = np.zeros((b, H, W, 1))
    for i in range(b):
        r, c = rng.integers(0, H - 3, size=2)
        obj[i, r : r + 3, c : c + 3] = 1.0
    return jnp.asarray(np.concatenate([tex, obj], -1), jnp.float32)


def init(decoder, a, x, seed=0):
    key = jax.random.key(seed, impl="rbg")  # threefry's compile dominates these tests on CPU
    return NEMParams(a, jax.jit(decoder.init, static_argnums=2)(key, stages_fn(a, x)[1], (H, W)))


def np_cos(u, v):
    return (u * v).sum(-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))


def test_objective_matches_numpy_and_encoder_gets_zero_gradient():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        a = jnp.asarray(RNG.normal(size=(H * W, 3)), jnp.float32)
        x = make_batch(RNG, 4)
        dec = MaskDecoder(channels=(4, 4))
        params = init(dec, a, x)
        loss, aux = nem_objective(stages_fn, dec, params, x, lambda_f=4.0, lambda_s=0.5)
        mask, emb = nem_mask(stages_fn, dec, params, x)
        m = np.asarray(mask)
        assert m.shape == (4, H, W) and m.min() > 0 and m.max() < 1
        xm = np.asarray(x) * m[..., None]
        e = np.asarray(emb)
        em = np.concatenate(
            [(xm[..., 0] * xm[..., 1]).reshape(4, -1) @ np.asarray(a), np.ones((4, 1))], 1
        )
        d = (1 - np_cos(e, em)) / 2
        np.testing.assert_allclose(loss, 4 * d.mean() + 0.5 * m.mean(), rtol=1e-5)
        np.testing.assert_allclose(aux["distance"], d.mean(), rtol=1e-5)
        grads = jax.jit(jax.grad(lambda p: nem_objective(stages_fn, dec, p, x)[0]))(params)
        assert np.all(np.asarray(grads.encoder) == 0.0)  # stop-gradient on the frozen encoder
        dec_norms = [float(jnp.abs(g).max()) for g in jax.tree.leaves(grads.decoder)]
        assert all(np.isfinite(dec_norms)) and max(dec_norms) > 0


def test_patching_cells_and_vmap_over_decoders():
    a = jnp.asarray(RNG.normal(size=(H * W, 3)), jnp.float32)
    x = make_batch(RNG, 3)
    one_cell = MaskDecoder(channels=(4, 4), patch=H)
    mask, _ = nem_mask(stages_fn, one_cell, init(one_cell, a, x), x)
    # p = H: a single cell, so the mask is constant over each image.
    np.testing.assert_allclose(mask, np.broadcast_to(mask[:, :1, :1], mask.shape), atol=1e-6)
    dec = MaskDecoder(channels=(4, 4), patch=2)
    p0, p1 = init(dec, a, x, 0), init(dec, a, x, 1)
    stacked = jax.tree.map(lambda u, v: jnp.stack([u, v]), p0.decoder, p1.decoder)
    batched = jax.vmap(lambda d: nem_mask(stages_fn, dec, NEMParams(a, d), x)[0])(stacked)
    np.testing.assert_allclose(batched[1], nem_mask(stages_fn, dec, p1, x)[0], atol=1e-6)
    assert batched.shape == (2, 3, H, W)


def test_decoder_learns_the_object_mask():
    a = jnp.asarray(RNG.normal(size=(H * W, 3)), jnp.float32)
    dec = MaskDecoder(channels=(4, 4))
    x = make_batch(RNG, 32)
    params = init(dec, a, x)
    opt = optax.adam(3e-2)

    @jax.jit
    def step(carry, _):
        theta, state = carry
        g = jax.grad(lambda t: nem_objective(stages_fn, dec, NEMParams(a, t), x)[0])(theta)
        upd, state = opt.update(g, state, theta)
        return (optax.apply_updates(theta, upd), state), None

    (theta, _), _ = jax.lax.scan(step, (params.decoder, opt.init(params.decoder)), length=150)
    x_test = make_batch(RNG, 16)
    mask, _ = nem_mask(stages_fn, dec, NEMParams(a, theta), x_test)
    obj = np.asarray(x_test[..., 1]) > 0
    inside, outside = float(mask[obj].mean()), float(mask[~obj].mean())
    assert inside > outside + 0.4, (inside, outside)


def test_contrastive_reference_form_matches_numpy():
    e, em, ec = (RNG.normal(size=(3, 5)).astype(np.float32) for _ in range(3))
    m = RNG.random(size=(3, 4, 4)).astype(np.float32)
    dp = ((1 - np_cos(e, em)) / 2).mean()
    dn = ((1 - np_cos(em, ec)) / 2).mean()
    want = 4 * dp + 0.5 * m.mean() - 2 * dn * (dp + 1e-6) + 1e-6
    got = nem_contrastive_loss(e, em, ec, m, lambda_c=2.0, form="reference")
    np.testing.assert_allclose(got, want, rtol=1e-5)
    with pytest.raises(ValueError, match="form"):
        nem_contrastive_loss(e, em, ec, m, form="other")


def test_bad_inputs():
    a = jnp.ones((H * W, 3))
    x = make_batch(RNG, 2)
    with pytest.raises(ValueError, match="patch"):
        dec = MaskDecoder(channels=(4, 4), patch=3)
        dec.init(jax.random.key(0), stages_fn(a, x)[1], (H, W))
    with pytest.raises(ValueError, match="stages"):
        MaskDecoder(channels=(4,)).init(jax.random.key(0), stages_fn(a, x)[1], (H, W))
    dec = MaskDecoder(channels=(4, 4))
    params = init(dec, a, x)
    with pytest.raises(ValueError, match=r"x must have shape"):
        nem_mask(stages_fn, dec, params, x[0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        masked_input(x, jnp.full((2, H, W), -0.1))


def test_doctests():
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(masking_mod, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0


def test_staged_encoder_stages_fit_the_decoder():
    enc = StagedEncoder(widths=(4, 8, 8), emb_dim=5)
    x = jnp.ones((2, 16, 16, 1))
    params = enc.init(jax.random.key(0), x)
    emb, stages = enc.apply(params, x)
    assert emb.shape == (2, 5)
    assert [s.shape for s in stages] == [(2, 16, 16, 1), (2, 16, 16, 4), (2, 8, 8, 8), (2, 4, 4, 8)]
    dec = MaskDecoder(channels=(8, 4, 4))
    mask = dec.apply(dec.init(jax.random.key(1), stages, (16, 16)), stages, (16, 16))
    assert mask.shape == (2, 16, 16)
