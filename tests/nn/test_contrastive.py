"""SupCon and SimCLR (NT-Xent) against numpy loops of the papers' equations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.nn.contrastive import simclr_loss, supcon_loss


def _np_supcon(z, labels, tau):
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    n, total, anchors = len(z), 0.0, 0
    for i in range(n):
        pos = [p for p in range(n) if p != i and labels[p] == labels[i]]
        if not pos:
            continue
        denom = sum(np.exp(z[i] @ z[a] / tau) for a in range(n) if a != i)
        total += -np.mean([np.log(np.exp(z[i] @ z[p] / tau) / denom) for p in pos])
        anchors += 1
    return total / anchors


def test_supcon_matches_numpy_loop():
    rng = np.random.default_rng(0)
    z, labels = rng.normal(size=(12, 5)), np.array([0, 1, 2, 0, 1, 3, 0, 1, 2, 4, 4, 2])
    np.testing.assert_allclose(supcon_loss(z, labels, 0.2), _np_supcon(z, labels, 0.2),
                               rtol=1e-5)


def test_simclr_is_nt_xent():
    rng = np.random.default_rng(1)
    z1, z2 = rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    z = np.concatenate([z1, z2])
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    sims = np.exp(z @ z.T / 0.5)
    losses = []
    for i in range(12):
        j = (i + 6) % 12
        losses.append(-np.log(sims[i, j] / (sims[i].sum() - sims[i, i])))
    np.testing.assert_allclose(simclr_loss(z1, z2, 0.5), np.mean(losses), rtol=1e-5)


def test_grad_jit_and_errors():
    z = jax.random.normal(jax.random.key(0), (8, 3))
    g = jax.jit(jax.grad(lambda z: supcon_loss(z, jnp.arange(8) % 2)))(z)
    assert np.all(np.isfinite(g))
    with pytest.raises(ValueError, match="same shape"):
        simclr_loss(z, z[:4])
    with pytest.raises(ValueError, match="labels"):
        supcon_loss(z, jnp.arange(3))
    with pytest.raises(ValueError, match="n >= 2"):
        supcon_loss(z[:1], jnp.arange(1))
