"""fit_gcn: learns a separable toy graph, runs every epoch without early stop, stops with one."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.graph.aux_attack import gcn_logits
from jaxlab.graph.losses import masked_accuracy, masked_cross_entropy
from jaxlab.train.early_stopping import fit_gcn


def _two_cliques(k=6):
    block = np.ones((k, k), np.float32) - np.eye(k, dtype=np.float32)
    adj = np.zeros((2 * k, 2 * k), np.float32)
    adj[:k, :k] = adj[k:, k:] = block
    labels = np.repeat([0, 1], k)
    x = np.random.default_rng(0).normal(size=(2 * k, 4)).astype(np.float32)
    x[:, 0] += 2.0 * (2 * labels - 1)
    train = np.arange(2 * k) % 3 == 0
    val = np.arange(2 * k) % 3 == 1
    return (jnp.asarray(a) for a in (adj, x, labels, train, val))


def test_learns_and_selects_a_low_validation_loss():
    adj, x, labels, train, val = _two_cliques()
    params, epochs = jax.jit(lambda k: fit_gcn(k, adj, x, labels, train, val, hidden=8,
                                               num_classes=2, max_epochs=200,
                                               patience=20))(jax.random.key(0))
    logits = gcn_logits(params, adj, x)
    assert float(masked_accuracy(logits, labels, val)) == 1.0
    init_loss = np.log(2.0)
    assert float(masked_cross_entropy(logits, labels, val)) < init_loss
    assert int(epochs) <= 200


@pytest.mark.parametrize("patience,expect_all", [(500, True), (1, False)])
def test_patience_rule(patience, expect_all):
    adj, x, labels, train, val = _two_cliques()
    _, epochs = fit_gcn(jax.random.key(1), adj, x, labels, train, val, hidden=4,
                        num_classes=2, lr=0.5, max_epochs=60, patience=patience)
    assert (int(epochs) == 60) == expect_all


def test_bad_inputs():
    adj, x, labels, train, val = _two_cliques()
    with pytest.raises(ValueError, match="patience"):
        fit_gcn(jax.random.key(0), adj, x, labels, train, val, hidden=4, num_classes=2,
                patience=0)
