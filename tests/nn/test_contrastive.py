"""SimCLR and SupCon losses against numpy loops, optax.ntxent, gradients and bad inputs.

Comparisons with a reference run under ``jax.default_matmul_precision("highest")``
(``docs/precision.md``): a GPU's default TF32 products miss them by ~1e-3.
"""

import doctest

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.test_util import check_grads

import jaxlab.nn.contrastive as contrastive
from jaxlab.nn.contrastive import simclr_loss, supcon_loss


def np_supcon(z, labels, tau):
    """Eq. (2) of Khosla et al. as explicit loops over anchors and positives."""
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    b = len(z)
    losses = []
    for i in range(b):
        others = [a for a in range(b) if a != i]
        pos = [p for p in others if labels[p] == labels[i]]
        if not pos:
            continue
        denom = np.log(sum(np.exp(z[i] @ z[a] / tau) for a in others))
        losses.append(-np.mean([z[i] @ z[p] / tau - denom for p in pos]))
    return np.mean(losses) if losses else 0.0


def np_simclr(z1, z2, tau):
    b = len(z1)
    return np_supcon(np.concatenate([z1, z2]), np.concatenate([np.arange(b)] * 2), tau)


@pytest.mark.parametrize("tau", [0.1, 0.5])
def test_simclr_matches_numpy_and_optax(tau):
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(0)
        z1, z2 = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
        ours = simclr_loss(z1, z2, tau)
        np.testing.assert_allclose(ours, np_simclr(z1, z2, tau), rtol=1e-5)
        labels = jnp.concatenate([jnp.arange(6)] * 2)
        ref = optax.ntxent(jnp.concatenate([z1, z2]).astype(jnp.float32), labels, tau)
        np.testing.assert_allclose(ours, ref, rtol=1e-4)


def test_supcon_matches_numpy_with_singletons():
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(1)
        z = rng.normal(size=(9, 4))
        labels = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3])  # label 2 has no positive
        np.testing.assert_allclose(
            supcon_loss(z, labels, 0.2), np_supcon(z, labels, 0.2), rtol=1e-5
        )


def test_supcon_no_positive_is_zero_and_small_temperature_finite():
    z = jax.random.normal(jax.random.key(0), (5, 3))
    assert float(supcon_loss(z, jnp.arange(5), 0.1)) == 0.0
    assert np.isfinite(float(simclr_loss(z, -z, 1e-3)))


def test_jit_vmap_grad():
    with jax.default_matmul_precision("highest"):
        z1 = jax.random.normal(jax.random.key(0), (3, 4, 5))
        z2 = jax.random.normal(jax.random.key(1), (3, 4, 5))
        batched = jax.vmap(simclr_loss, in_axes=(0, 0, None))(z1, z2, 0.5)
        loop = jnp.stack([simclr_loss(a, b, 0.5) for a, b in zip(z1, z2, strict=True)])
        np.testing.assert_allclose(
            jax.jit(jax.vmap(simclr_loss, (0, 0, None)))(z1, z2, 0.5), loop, rtol=1e-5
        )
        np.testing.assert_allclose(batched, loop, rtol=1e-5)
        labels = jnp.array([0, 0, 1, 1])
        check_grads(
            lambda z: supcon_loss(z, labels, 0.5),
            (z1[0],),
            order=1,
            modes=["rev"],
            atol=1e-2,
            rtol=1e-2,
        )
        check_grads(
            lambda a: simclr_loss(a, z2[0], 0.5),
            (z1[0],),
            order=1,
            modes=["rev"],
            atol=1e-2,
            rtol=1e-2,
        )


def test_bad_inputs():
    z = jnp.ones((4, 3))
    with pytest.raises(ValueError, match="z2"):
        simclr_loss(z, jnp.ones((5, 3)))
    with pytest.raises(ValueError, match="z1"):
        simclr_loss(jnp.ones(3), jnp.ones(3))
    with pytest.raises(ValueError, match="labels"):
        supcon_loss(z, jnp.zeros(3, int))
    with pytest.raises(ValueError, match="temperature"):
        supcon_loss(z, jnp.zeros(4, int), temperature=0.0)


def test_doctests():
    globs = {"jax": jax, "jnp": jnp, "np": np, "nn": nn, "optax": optax}
    result = doctest.testmod(contrastive, extraglobs=globs)
    assert result.failed == 0 and result.attempted > 0
