"""The GADC trainer (``jaxlab/trainers/gadc.py``) against Python loops and numpy.

``train_node_classifier`` / ``decoupled_runs`` / ``graph_model_runs`` against a Python loop
of Adam steps with numpy selection; ``fit_with_patience`` (``gb``'s early stopping) against
its patience rule on a separable toy graph; ``jaxlab.train.resumable`` as the GADC
experiments use it (file per piece and config).
"""

import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
import pytest

from jaxlab.data.splits import index_masks, random_split_masks
from jaxlab.graph.csbm import csbm
from jaxlab.graph.dense import dense_gcn_propagate
from jaxlab.graph.graphs import from_scipy
from jaxlab.graph.losses import masked_accuracy, masked_cross_entropy
from jaxlab.graph.models import GCN, node_mlp
from jaxlab.train import resumable
from jaxlab.trainers.gadc import (
    decoupled_runs,
    fit_with_patience,
    flax_fns,
    graph_model_runs,
    make_l2_optimizer,
    train_node_classifier,
)


def _adam(learning_rate, l2_weight_decay):
    return {"name": "adam", "learning_rate": learning_rate, "l2_weight_decay": l2_weight_decay}


def test_l2_optimizer_first_step_is_torch_adam_with_weight_decay():
    """Adam's first step from zero moments is ``-lr · g/(|g| + eps)`` (bias-corrected), with
    ``g`` the gradient plus ``l2 · θ`` (torch's ``Adam(weight_decay=)``), in numpy."""
    theta = np.array([0.5, -2.0, 3.0], np.float32)
    grad = np.array([0.1, 0.0, -4.0], np.float32)
    tx = make_l2_optimizer(_adam(0.01, 0.3))
    updates, _ = tx.update(jnp.asarray(grad), tx.init(jnp.asarray(theta)), jnp.asarray(theta))
    g = grad + 0.3 * theta
    np.testing.assert_allclose(updates, -0.01 * g / (np.abs(g) + 1e-8), rtol=1e-5)
    with pytest.raises(ValueError, match="l2_weight_decay"):
        make_l2_optimizer({"name": "adam", "learning_rate": 0.01})
    with pytest.raises(ValueError, match="l2_weight_decay"):
        make_l2_optimizer(_adam(0.01, -1.0))


def _problem(seed, n=120, classes=3):
    adj, x, y = csbm(jax.random.key(seed), n, 4 * n, num_classes=classes, homophily=0.8, signal=2.0)
    idx = np.random.default_rng(seed).permutation(n)
    masks = index_masks(n, idx[:30], idx[30:60], idx[60:])
    return adj, jnp.asarray(x), jnp.asarray(y), masks


def _softmax_ce(logits, y):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -logp[np.arange(len(y)), y]


@pytest.mark.parametrize("select", ["val_loss", "val_acc"])
def test_training_matches_a_python_loop(select):
    """A linear model (no dropout): Adam + L2 in a Python loop, selection in numpy."""
    _, x, y, masks = _problem(0)
    init_fn, apply_fn = flax_fns(node_mlp((), 3, 0.0), x)
    kw = dict(optimizer=_adam(0.05, 1e-3), epochs=12, select=select)
    metrics, best = jax.jit(
        lambda k: train_node_classifier(k, init_fn, apply_fn, x, y, *masks, **kw)
    )(jax.random.key(4))
    params = init_fn(jax.random.split(jax.random.key(4))[0])
    tx = optax.chain(optax.add_decayed_weights(1e-3), optax.adam(0.05))
    state = tx.init(params)
    tr, va, te = (np.asarray(m) for m in masks)
    xn, yn = np.asarray(x), np.asarray(y)

    def logits(p):
        w = p["params"]["dense_0"]
        return xn @ np.asarray(w["kernel"]) + np.asarray(w["bias"])

    def loss(p):
        out = apply_fn(p, x, train=False, key=None)
        ce = optax.softmax_cross_entropy_with_integer_labels(out, y)
        return jnp.sum(ce * tr) / tr.sum()

    grad = jax.jit(jax.grad(loss))
    history = []
    for _ in range(12):
        updates, state = tx.update(grad(params), state, params)
        params = optax.apply_updates(params, updates)
        z = logits(params)
        history.append(
            (_softmax_ce(z[va], yn[va]).mean(), np.mean(z[va].argmax(-1) == yn[va]), params)
        )
    if select == "val_loss":
        epoch = int(np.argmin([h[0] for h in history]))
    else:
        epoch = int(np.argmax([h[1] for h in history]))
    assert int(metrics["best_epoch"]) == epoch
    np.testing.assert_allclose(metrics["val_loss"], history[epoch][0], rtol=1e-5)
    np.testing.assert_allclose(metrics["val_acc"], history[epoch][1], rtol=1e-6)
    z = logits(history[epoch][2])
    np.testing.assert_allclose(metrics["test_acc"], np.mean(z[te].argmax(-1) == yn[te]), rtol=1e-6)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), best, history[epoch][2]
    )


def test_vmapped_training_equals_loop_and_learns():
    _, x, y, masks = _problem(1, n=200, classes=2)
    init_fn, apply_fn = flax_fns(node_mlp((8,), 2, 0.5), x)
    run = lambda k: train_node_classifier(  # noqa: E731
        k, init_fn, apply_fn, x, y, *masks, optimizer=_adam(0.05, 0.0), epochs=30, select="val_loss"
    )[0]
    keys = jax.random.split(jax.random.key(0), 3)
    batched = jax.jit(jax.vmap(run))(keys)
    for i in range(3):
        single = jax.jit(run)(keys[i])
        np.testing.assert_allclose(batched["test_acc"][i], single["test_acc"], atol=1e-6)
    assert float(batched["test_acc"].mean()) > 0.8


def test_row_wise_training_matches_full_evaluation():
    # Without dropout an MLP's run on only the labelled rows must give the numbers of the
    # run that evaluates all n rows and masks the losses (sizes may exceed the counts).
    _, x, y, _ = _problem(2, n=150)
    idx = np.random.default_rng(1).permutation(150)
    masks = index_masks(150, idx[:20], idx[20:45], idx[45:])
    init_fn, apply_fn = flax_fns(node_mlp((8,), 3, 0.0), x)
    kw = dict(optimizer=_adam(0.05, 1e-4), epochs=25, select="val_loss")
    full, p_full = train_node_classifier(jax.random.key(3), init_fn, apply_fn, x, y, *masks, **kw)
    rows, p_rows = train_node_classifier(
        jax.random.key(3), init_fn, apply_fn, x, y, *masks, row_wise_sizes=(20, 30, 105), **kw
    )
    assert int(full["best_epoch"]) == int(rows["best_epoch"])
    for name in ("val_loss", "val_acc", "test_acc"):
        np.testing.assert_allclose(rows[name], full[name], rtol=1e-5, atol=1e-6)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6), p_rows, p_full
    )


@pytest.mark.parametrize("batching", ["vmap", "map"])
def test_decoupled_runs_equal_single_runs(batching):
    """Run i of the batch is ``train_node_classifier`` with ``split(key, R)[i]`` and its
    own features / masks."""
    _, x, y, _ = _problem(3)
    runs = 3
    xs = x[None] + 0.1 * jax.random.normal(jax.random.key(9), (runs, *x.shape))
    masks = jax.vmap(lambda k: random_split_masks(k, x.shape[0]))(
        jax.random.split(jax.random.key(5), runs)
    )
    kw = dict(optimizer=_adam(0.05, 1e-4), epochs=6, select="val_acc")
    out = decoupled_runs(
        jax.random.key(7),
        xs,
        y,
        masks,
        num_runs=runs,
        hidden=(8,),
        dropout=0.0,
        init="default",
        per_run=("x", "masks"),
        batching=batching,
        **kw,
    )
    keys = jax.random.split(jax.random.key(7), runs)
    init_fn, apply_fn = flax_fns(node_mlp((8,), 3, 0.0), x)
    single = jax.jit(
        lambda k, xi, m: train_node_classifier(k, init_fn, apply_fn, xi, y, *m, **kw)[0]
    )
    for i in range(runs):
        ref = single(keys[i], xs[i], tuple(m[i] for m in masks))
        for name in ("val_acc", "test_acc", "best_epoch"):
            np.testing.assert_allclose(out[name][i], ref[name], rtol=1e-5, atol=1e-6)


def test_graph_model_runs_equal_dense_propagation():
    """GCN over the sparse GCN-normalized graph == the same GCN with a dense Â."""
    adj, x, y, masks = _problem(4, n=60)
    a = adj.toarray() + np.eye(60)
    d = 1.0 / np.sqrt(a.sum(1))
    a_hat = jnp.asarray(d[:, None] * a * d[None, :], jnp.float32)
    module = GCN(8, 3, 0.0)
    kw = dict(optimizer=_adam(0.05, 5e-4), epochs=5, select="val_loss")
    out = graph_model_runs(
        jax.random.key(2), module, from_scipy(adj), x, y, masks, num_runs=2, **kw
    )
    keys = jax.random.split(jax.random.key(2), 2)
    init_fn, apply_fn = flax_fns(module, x, propagate_fn=lambda v: a_hat @ v)
    single = jax.jit(lambda k: train_node_classifier(k, init_fn, apply_fn, x, y, *masks, **kw)[0])
    for i in range(2):
        ref = single(keys[i])
        for name in ("val_loss", "test_acc"):
            np.testing.assert_allclose(out[name][i], ref[name], rtol=1e-4, atol=1e-5)


def test_bad_inputs():
    _, x, y, masks = _problem(0, n=30)
    init_fn, apply_fn = flax_fns(node_mlp((), 3, 0.0), x)
    with pytest.raises(ValueError, match="select"):
        train_node_classifier(
            jax.random.key(0),
            init_fn,
            apply_fn,
            x,
            y,
            *masks,
            optimizer=_adam(0.1, 0.0),
            epochs=2,
            select="test_acc",
        )
    with pytest.raises(ValueError, match="epochs"):
        train_node_classifier(
            jax.random.key(0),
            init_fn,
            apply_fn,
            x,
            y,
            *masks,
            optimizer=_adam(0.1, 0.0),
            epochs=0,
            select="val_loss",
        )
    with pytest.raises(ValueError, match="batching"):
        decoupled_runs(
            jax.random.key(0),
            x,
            y,
            masks,
            num_runs=2,
            hidden=(),
            dropout=0.0,
            optimizer=_adam(0.1, 0.0),
            epochs=2,
            select="val_acc",
            init="default",
            batching="loop",
        )


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


def _linear_gcn(adj, x, hidden):
    module = GCN(hidden, 2, 0.5, activation="none", input_dropout=False, init_scheme="glorot")
    return module, *flax_fns(module, x, propagate_fn=dense_gcn_propagate(adj))


def test_fit_with_patience_learns_and_selects_a_low_validation_loss():
    adj, x, labels, train, val = _two_cliques()
    module, init_fn, apply_fn = _linear_gcn(adj, x, 8)
    params, epochs = jax.jit(
        lambda k: fit_with_patience(
            k,
            init_fn,
            apply_fn,
            x,
            labels,
            train,
            val,
            optimizer=_adam(1e-2, 5e-4),
            max_epochs=200,
            patience=20,
        )
    )(jax.random.key(0))
    logits = apply_fn(params, x, train=False, key=None)
    assert float(masked_accuracy(logits, labels, val)) == 1.0
    assert float(masked_cross_entropy(logits, labels, val)) < np.log(2.0)
    assert int(epochs) <= 200


@pytest.mark.parametrize("patience,expect_all", [(500, True), (1, False)])
def test_fit_with_patience_rule(patience, expect_all):
    adj, x, labels, train, val = _two_cliques()
    _, init_fn, apply_fn = _linear_gcn(adj, x, 4)
    _, epochs = fit_with_patience(
        jax.random.key(1),
        init_fn,
        apply_fn,
        x,
        labels,
        train,
        val,
        optimizer=_adam(0.5, 5e-4),
        max_epochs=60,
        patience=patience,
    )
    assert (int(epochs) == 60) == expect_all


def test_fit_with_patience_bad_inputs():
    adj, x, labels, train, val = _two_cliques()
    _, init_fn, apply_fn = _linear_gcn(adj, x, 4)
    with pytest.raises(ValueError, match="patience"):
        fit_with_patience(
            jax.random.key(0),
            init_fn,
            apply_fn,
            x,
            labels,
            train,
            val,
            optimizer=_adam(0.1, 0.0),
            max_epochs=10,
            patience=0,
        )


def test_resumable_computes_once_per_config_and_reloads_exactly(tmp_path):
    calls = []

    def compute(scale, *, shift):
        calls.append(scale)
        return {"acc": jnp.arange(3, dtype=jnp.float32) / 7 * scale + shift, "radius": 1 / 3}

    config = ml_collections.ConfigDict({"lr": 0.1})
    first = resumable(str(tmp_path), "cell", config, compute, 2.0, shift=1.0)
    again = resumable(str(tmp_path), "cell", config, compute, 2.0, shift=1.0)
    assert calls == [2.0]  # the second call read the saved batch
    for name in ("acc", "radius"):
        np.testing.assert_array_equal(again[name], first[name])
        assert again[name].dtype == first[name].dtype
    assert float(again["radius"]) == 1 / 3
    assert not [f for f in os.listdir(tmp_path / "runs") if "tmp" in f]
    config.lr = 0.2  # another config never reads the first one's file
    resumable(str(tmp_path), "cell", config, compute, 3.0, shift=0.0)
    assert calls == [2.0, 3.0]


def test_resumable_file_is_named_by_piece_and_config_digest(tmp_path):
    """The experiments' resume files: ``runs/<name>-<first 12 hex of the SHA-256 of the
    config's sorted JSON>.npz``."""
    import hashlib

    config = ml_collections.ConfigDict({"lr": 0.1, "a": (1, 2)})
    resumable(str(tmp_path), "cora_0.25_gadc", config, lambda: {"acc": np.ones(2)})
    digest = hashlib.sha256(config.to_json_best_effort(sort_keys=True).encode()).hexdigest()
    assert os.listdir(tmp_path / "runs") == [f"cora_0.25_gadc-{digest[:12]}.npz"]
