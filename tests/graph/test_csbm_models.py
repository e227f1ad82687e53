"""CSBM homophily, bit dropout statistics and the vmap-ed training loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.graph.csbm import csbm, edge_homophily
from jaxlab.graph.models import MLP, dropout
from jaxlab.graph.training import flax_fns, train_node_classifier


@pytest.mark.parametrize("h", [0.1, 0.5, 0.9])
def test_csbm_homophily(h):
    adj, x, y = csbm(0, 600, 3000, num_classes=3, homophily=h)
    assert adj.shape == (600, 600) and x.shape == (600, 16)
    assert abs(edge_homophily(adj, y) - h) < 0.05
    assert (adj != adj.T).nnz == 0 and adj.diagonal().sum() == 0


@pytest.mark.parametrize("rate", [0.5, 0.2])
def test_dropout_keep_rate_and_scale(rate):
    x = jnp.ones((64, 100))
    out = np.asarray(dropout(jax.random.key(0), x, rate))
    assert abs(np.mean(out == 0) - rate) < 0.02
    np.testing.assert_allclose(out[out != 0], 1.0 / (1.0 - rate), rtol=1e-6)
    with pytest.raises(ValueError, match="rate"):
        dropout(jax.random.key(0), x, 1.0)


def test_vmapped_training_equals_loop_and_learns():
    adj, x, y = csbm(1, 200, 800, num_classes=2, homophily=0.9, signal=3.0)
    x, y = jnp.asarray(x), jnp.asarray(y)
    idx = np.random.default_rng(0).permutation(200)
    masks = [jnp.zeros(200, bool).at[idx[a:b]].set(True) for a, b in ((0, 60), (60, 100),
                                                                      (100, 200))]
    init_fn, apply_fn = flax_fns(MLP((8,), 2, 0.5), x)
    run = lambda k: train_node_classifier(k, init_fn, apply_fn, x, y, *masks, lr=0.05,
                                          weight_decay=0.0, epochs=30)[0]
    keys = jax.random.split(jax.random.key(0), 3)
    batched = jax.jit(jax.vmap(run))(keys)
    for i in range(3):
        single = jax.jit(run)(keys[i])
        np.testing.assert_allclose(batched["test_acc"][i], single["test_acc"], atol=1e-6)
    assert float(batched["test_acc"].mean()) > 0.8


def test_row_wise_training_matches_full_evaluation():
    # Without dropout an MLP's run on only the labelled rows must give the numbers of the
    # run that evaluates all n rows and masks the losses (sizes may exceed the counts).
    _, x, y = csbm(2, 150, 600, num_classes=3, homophily=0.8, signal=2.0)
    x, y = jnp.asarray(x), jnp.asarray(y)
    idx = np.random.default_rng(1).permutation(150)
    masks = [jnp.zeros(150, bool).at[idx[a:b]].set(True) for a, b in ((0, 20), (20, 45),
                                                                      (45, 150))]
    init_fn, apply_fn = flax_fns(MLP((8,), 3, 0.0), x)
    kw = dict(lr=0.05, weight_decay=1e-4, epochs=25)
    full, p_full = train_node_classifier(jax.random.key(3), init_fn, apply_fn, x, y, *masks,
                                         **kw)
    rows, p_rows = train_node_classifier(jax.random.key(3), init_fn, apply_fn, x, y, *masks,
                                         row_wise_sizes=(20, 30, 105), **kw)
    assert int(full["best_epoch"]) == int(rows["best_epoch"])
    for name in ("val_loss", "val_acc", "test_acc"):
        np.testing.assert_allclose(rows[name], full[name], rtol=1e-5, atol=1e-6)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6),
                 p_rows, p_full)
