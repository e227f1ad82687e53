"""NEM loss, occlusion, RELAX, saliency and locality metrics against numpy references."""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxlab.explain.metrics as metrics_mod
import jaxlab.explain.nem as nem_mod
from jaxlab.explain import (
    deletion_auc,
    gradient_saliency,
    insertion_auc,
    masked_input,
    mass_inside,
    nem_contrastive_loss,
    nem_loss,
    pointing_game,
    relax,
    smooth_random_masks,
)

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4 * 4 * 2, 3)).astype(np.float32)


def encode(x):
    return jnp.tanh(x.reshape(x.shape[0], -1) @ A)


def np_cos(u, v):
    den = np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1)
    return (u * v).sum(-1) / np.maximum(den, 1e-12)


def test_masked_input_and_losses_match_numpy():
    x = RNG.normal(size=(2, 4, 4, 2)).astype(np.float32)
    m = RNG.random(size=(2, 4, 4)).astype(np.float32)
    b = RNG.normal(size=(2, 4, 4, 2)).astype(np.float32)
    xm = masked_input(x, m, b)
    np.testing.assert_allclose(xm, m[..., None] * x + (1 - m[..., None]) * b, rtol=1e-6)
    e, em = np.asarray(encode(x)), np.asarray(encode(xm))
    d = (1 - np_cos(e, em)) / 2
    np.testing.assert_allclose(
        nem_loss(e, em, m, 4.0, 0.5), 4 * d.mean() + 0.5 * m.mean(), rtol=1e-5
    )
    ec = np.asarray(encode(masked_input(x, 1 - m, b)))
    dn = (1 - np_cos(e, ec)) / 2
    np.testing.assert_allclose(
        nem_contrastive_loss(e, em, ec, m, lambda_c=2.0),
        4 * d.mean() + 0.5 * m.mean() + 2 * (1 - dn.mean()),
        rtol=1e-5,
    )
    # The loss is differentiable in the mask through the encoder (what trains the decoder).
    g = jax.grad(lambda mm: nem_loss(e, encode(masked_input(x, mm, 0.0)), mm))(jnp.asarray(m))
    assert g.shape == m.shape and np.all(np.isfinite(g))


def test_relax_matches_numpy_and_is_chunk_invariant():
    x = jnp.asarray(RNG.normal(size=(4, 4, 2)).astype(np.float32))
    key = jax.random.key(3)
    masks = np.asarray(smooth_random_masks(key, 60, 4, 4, cells=2))
    assert masks.min() >= 0 and masks.max() <= 1
    ref = np.asarray(encode(x[None]))[0]
    sims = np.array(
        [
            np_cos(np.asarray(encode(jnp.asarray(mk[None, ..., None] * x[None])))[0], ref)
            for mk in masks
        ]
    )
    expected = (sims[:, None, None] * masks).sum(0) / masks.sum(0)
    got = relax(encode, x, key, num_masks=60, chunk_size=20, cells=2)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        jax.jit(lambda x: relax(encode, x, key, 60, 60, cells=2))(x), expected, rtol=1e-4, atol=1e-5
    )


def test_gradient_saliency_closed_form():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        lin = RNG.normal(size=(32, 3)).astype(np.float32)
        x = RNG.normal(size=(2, 4, 4, 2)).astype(np.float32)

        def f(z):
            return z.reshape(z.shape[0], -1) @ lin

        # ∇‖f(x)‖² = 2 W Wᵀ x for a linear f.
        grad = 2 * (x.reshape(2, -1) @ lin @ lin.T).reshape(2, 4, 4, 2)
        np.testing.assert_allclose(gradient_saliency(f, x), np.abs(grad).max(-1), rtol=1e-4)


def test_locality_metrics_match_numpy():
    sal = RNG.normal(size=(5, 6, 6)).astype(np.float32)
    gt = RNG.random(size=(5, 6, 6)) > 0.6
    flat = sal.reshape(5, -1)
    hits = gt.reshape(5, -1)[np.arange(5), flat.argmax(1)]
    np.testing.assert_allclose(pointing_game(sal, gt), hits.astype(np.float32))
    pos = np.maximum(sal, 0)
    np.testing.assert_allclose(
        mass_inside(sal, gt), (pos * gt).sum((1, 2)) / pos.sum((1, 2)), rtol=1e-5
    )


def np_deletion(x, sal, steps, insert):
    ref = np.asarray(encode(jnp.asarray(x)))
    out = []
    for i in range(len(x)):
        order = np.argsort(-sal[i].ravel(), kind="stable")
        sims = []
        for k in np.round(np.linspace(0, 16, steps + 1)).astype(int):
            keep = np.zeros(16, bool)
            keep[order[:k]] = True
            keep = keep.reshape(4, 4)[..., None]
            img = np.where(keep, x[i], 0.0) if insert else np.where(keep, 0.0, x[i])
            sims.append(np_cos(np.asarray(encode(jnp.asarray(img[None])))[0], ref[i]))
        sims = np.array(sims)
        out.append(np.mean((sims[1:] + sims[:-1]) / 2))
    return np.array(out)


def test_deletion_insertion_match_numpy():
    x = RNG.normal(size=(3, 4, 4, 2)).astype(np.float32)
    sal = RNG.permutation(48).reshape(3, 4, 4).astype(np.float32)  # no ties
    np.testing.assert_allclose(
        deletion_auc(encode, x, sal, num_steps=8),
        np_deletion(x, sal, 8, False),
        rtol=1e-4,
        atol=1e-5,
    )
    np.testing.assert_allclose(
        insertion_auc(encode, x, sal, num_steps=8),
        np_deletion(x, sal, 8, True),
        rtol=1e-4,
        atol=1e-5,
    )


def test_bad_inputs():
    x = jnp.ones((1, 2, 2, 1))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        masked_input(x, jnp.full((1, 2, 2), 1.5))
    with pytest.raises(ValueError, match="mask"):
        masked_input(x, jnp.ones((1, 3, 2)))
    with pytest.raises(ValueError, match="num_masks"):
        relax(encode, jnp.ones((4, 4, 2)), jax.random.key(0), num_masks=10, chunk_size=3)
    with pytest.raises(ValueError, match="gt_mask"):
        pointing_game(jnp.ones((1, 2, 2)), jnp.ones((1, 2, 3)))


@pytest.mark.parametrize("module", [nem_mod, metrics_mod])
def test_doctests(module):
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(module, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0
