"""CSBM homophily and bit dropout statistics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.graph.csbm import csbm, edge_homophily
from jaxlab.nn.mlp import dropout


@pytest.mark.parametrize("h", [0.1, 0.5, 0.9])
def test_csbm_homophily(h):
    adj, x, y = csbm(jax.random.key(0), 600, 3000, num_classes=3, homophily=h)
    assert adj.shape == (600, 600) and x.shape == (600, 16)
    assert abs(edge_homophily(adj, y) - h) < 0.05
    assert (adj != adj.T).nnz == 0 and adj.diagonal().sum() == 0


@pytest.mark.parametrize("rate", [0.5, 0.2])
def test_dropout_keep_rate_and_scale(rate):
    x = jnp.ones((64, 100))
    out = np.asarray(dropout(jax.random.key(0), x, rate))
    assert abs(np.mean(out == 0) - rate) < 0.02
    np.testing.assert_allclose(out[out != 0], 1.0 / (1.0 - rate), rtol=1e-6)
