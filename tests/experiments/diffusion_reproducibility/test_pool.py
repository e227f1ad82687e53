"""The dataset pool: CIFAR-10's records read by index, and its streamed PCA proxy."""

import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from jaxlab import diffusion
from jaxlab.data import streaming
from jaxlab_experiments.diffusion_reproducibility.diffusion_reproducibility.train import (
    Pool,
    _load,
    pool_proxy,
)


def _streamed(items: np.ndarray) -> Pool:
    return Pool(len(items), lambda ids: items[ids], None)


def test_streamed_pca_proxy_gives_the_svd_proxy_cosines():
    rng = np.random.default_rng(0)
    items = (rng.normal(size=(300, 12)) * np.linspace(3.0, 0.1, 12)).astype(np.float32)
    held = pool_proxy(Pool(len(items), lambda ids: items[ids], items), 4)
    streamed = pool_proxy(_streamed(items), 4, chunk=64)  # 5 chunks, the last partial
    np.testing.assert_allclose(streamed.mean, held.mean, atol=1e-6)
    # the same principal axes, up to signs
    np.testing.assert_allclose(
        jnp.abs(streamed.components @ held.components.T), np.eye(4), atol=1e-4
    )
    x = rng.normal(size=(20, 12)).astype(np.float32)
    a, b = diffusion.pca_embed(held, x), diffusion.pca_embed(streamed, x)
    np.testing.assert_allclose(a @ a.T, b @ b.T, atol=1e-4)  # every cosine


def test_streamed_pca_proxy_refuses_more_components_than_items_or_dims():
    items = np.zeros((10, 3), np.float32)
    with pytest.raises(ValueError, match="num_components"):
        pool_proxy(_streamed(items), 4, chunk=4)


def test_cifar10_take_reads_the_records_of_the_whole_split_at_those_indices():
    config = ml_collections.ConfigDict({"data_dir": ""})
    with streaming.mock_datasets(num_examples=40):
        pool = _load("cifar10", config, np.random.default_rng(0))
        source = streaming.open_source("cifar10", "train")
        whole = np.stack([np.asarray(source[i]["image"]) for i in range(len(source))])
        ids = np.array([[7, 3, 39], [0, 3, 12]])
        taken = pool.take(ids)
    assert pool.size == 40 and pool.items is None
    expected = (whole.reshape(40, -1) / 127.5 - 1.0).astype(np.float32)[ids]
    assert taken.shape == (2, 3, 3072) and taken.dtype == np.float32
    np.testing.assert_array_equal(taken, expected)
