"""SmallCNN and ``classifier_functions`` against a numpy forward pass and cross-entropy.

Comparisons with a reference run under ``jax.default_matmul_precision("highest")``
(``docs/precision.md``): a GPU's default TF32 products miss them by ~1e-3.
"""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.nn.cnn import SmallCNN, classifier_functions


def np_conv_same(x, kernel, bias):
    """Cross-correlation with SAME padding (odd kernels): x [b, h, w, c], kernel [k, k, c, o]."""
    k = kernel.shape[0]
    pad = (k - 1) // 2
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    b, h, w, _ = x.shape
    out = np.zeros((b, h, w, kernel.shape[-1]))
    for i in range(h):
        for j in range(w):
            out[:, i, j] = np.einsum("bklc,klco->bo", xp[:, i : i + k, j : j + k], kernel)
    return out + bias


def np_max_pool(x):
    b, h, w, c = x.shape
    return x.reshape(b, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def np_forward(params, images):
    x = images.astype(np.float64)
    for i in range(len([k for k in params if k.startswith("Conv_")])):
        p = params[f"Conv_{i}"]
        x = np_max_pool(np.maximum(np_conv_same(x, p["kernel"], p["bias"]), 0.0))
    dense = params["Dense_0"]
    return x.reshape(x.shape[0], -1) @ dense["kernel"] + dense["bias"]


def test_forward_loss_and_prediction_match_numpy():
    with jax.default_matmul_precision("highest"):
        model = SmallCNN(num_classes=4, features=(2, 3), kernel_size=3)
        init, loss_fn, predict_fn = classifier_functions(model, (8, 8, 1))
        params = jax.jit(init)(jax.random.key(0))
        rng = np.random.default_rng(0)
        images = rng.uniform(size=(5, 8, 8, 1)).astype(np.float32)
        labels = rng.integers(0, 4, size=5)
        logits = jax.jit(predict_fn)(params, images)
        chex.assert_shape(logits, (5, 4))
        p64 = jax.tree.map(lambda a: np.asarray(a, np.float64), params)
        ref = np_forward(p64, images)
        np.testing.assert_allclose(logits, ref, rtol=1e-4, atol=1e-5)
        z = ref - ref.max(1, keepdims=True)
        ce = -(z - np.log(np.exp(z).sum(1, keepdims=True)))[np.arange(5), labels]
        np.testing.assert_allclose(jax.jit(loss_fn)(params, images, labels), ce.mean(), rtol=1e-4)


def test_layout_and_batching():
    model = SmallCNN(num_classes=10)
    params = jax.jit(model.init)(jax.random.key(1), jnp.zeros((1, 28, 28, 1)))["params"]
    chex.assert_shape(params["Conv_0"]["kernel"], (5, 5, 1, 16))
    chex.assert_shape(params["Conv_1"]["kernel"], (5, 5, 16, 32))
    chex.assert_shape(params["Dense_0"]["kernel"], (7 * 7 * 32, 10))  # 28 → 14 → 7
    images = jax.random.uniform(jax.random.key(2), (3, 28, 28, 1))
    apply = jax.jit(lambda x: model.apply({"params": params}, x))
    batch = apply(images)
    for i in range(3):  # each image's logits do not depend on the rest of the batch
        np.testing.assert_allclose(batch[i], apply(images[i : i + 1])[0], rtol=1e-5, atol=1e-6)


def test_bad_image_rank():
    model = SmallCNN()
    with pytest.raises(ValueError, match="images must be"):
        model.init(jax.random.key(0), jnp.zeros((8, 8, 1)))
