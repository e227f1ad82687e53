"""White-box PGD structure attack against GCN, APPNP and GADC(IV) on Pro-GNN Cora."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from tqdm import tqdm

from jaxlab.data.graphs import load_prognn
from jaxlab.data.splits import index_masks
from jaxlab.graph.attacks import pgd_structure_attack, pseudo_labels
from jaxlab.graph.dense import (
    cosine_matrix,
    dense_gcn_normalize,
    dense_limit_transition,
    row_normalize,
)
from jaxlab.graph.diffusion import neumann_series
from jaxlab.graph.losses import masked_accuracy, masked_cross_entropy
from jaxlab.graph.models import APPNP, GCN, MLP
from jaxlab.train.node_classification import flax_fns, train_node_classifier


def _graph_model(name, config, num_classes):
    """``(module, logits(params, adj, x, train, rng), needs features)`` for one model."""
    if name == "gcn":
        module = GCN(config.gcn.hidden, num_classes, config.gcn.dropout)
    elif name == "appnp":
        ap = config.appnp
        module = APPNP(ap.hidden, num_classes, ap.alpha, ap.num_terms, ap.dropout)
    else:
        raise ValueError(name)

    def logits(params, adj, x, train_mode, rng):
        a_hat = dense_gcn_normalize(adj)
        rngs = {"dropout": rng} if train_mode else {}
        return module.apply(params, x, lambda v: a_hat @ v, train=train_mode, rngs=rngs)

    return module, logits


def _fit(key, make_fns, graph_input, x, labels, masks, hp):
    """Trains one model with ``train_node_classifier``; ``(params, test accuracy)``.

    ``make_fns(graph_input, x) -> (init_fn, apply_fn)`` builds the model from the traced
    arguments: the adjacency (or nothing) and the features are arguments of the compiled
    program, not constants closed over.
    """
    def run(k, graph_input, x, labels, masks):
        init_fn, apply_fn = make_fns(graph_input, x)
        return train_node_classifier(k, init_fn, apply_fn, x, labels, *masks, lr=hp.lr,
                                     weight_decay=hp.weight_decay, epochs=hp.epochs,
                                     select="val_loss")

    metrics, params = jax.jit(run)(key, graph_input, x, labels, masks)
    return params, float(metrics["test_acc"])


def _attack_loss(eval_logits, targets, mask, adj):
    """Cross-entropy of the model on ``adj`` against training/self-training labels."""
    return masked_cross_entropy(eval_logits(adj), targets, mask)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, float]:
    data = load_prognn(config.dataset, None, config.data_dir or None)
    key = jax.random.key(config.seed)
    adj = jnp.asarray(data.adj.toarray())
    x_raw = jnp.asarray(data.features)
    x = row_normalize(x_raw)
    labels = jnp.asarray(data.labels)
    masks = index_masks(data.num_nodes, data.idx_train, data.idx_val, data.idx_test)
    cosine = cosine_matrix(x_raw)
    g = config.gadc
    mlp = MLP((g.hidden,), data.num_classes, g.dropout, "reference")

    def gadc_diffuse(a, v):
        t = dense_limit_transition(a, cosine)
        return neumann_series(lambda u: t @ u, v, g.lam / (g.lam + 1.0), 1.0 / (g.lam + 1.0),
                              g.num_terms)

    def gadc_eval_logits(params, a):
        # The MLP's first layer is linear, so S·X·W₁ = S·(X·W₁): diffuse n×hidden, not n×d.
        p = params["params"]
        h = gadc_diffuse(a, x @ p["dense_0"]["kernel"]) + p["dense_0"]["bias"][None, :]
        return jax.nn.relu(h) @ p["dense_1"]["kernel"] + p["dense_1"]["bias"][None, :]

    def fit_model(name, a, k):
        """Trains ``name`` on adjacency ``a``; returns (eval logits fn of adj, test acc)."""
        if name == "gadc":
            params, acc = _fit(k, lambda _, xi: flax_fns(mlp, xi), None, gadc_diffuse(a, x),
                               labels, masks, g)
            return (lambda adj_: gadc_eval_logits(params, adj_)), acc
        module, logits = _graph_model(name, config, data.num_classes)

        def make_fns(a_in, xi):
            a_hat = dense_gcn_normalize(a_in)
            init_fn = lambda kk: module.init(kk, xi, lambda v: a_hat @ v, train=False)
            apply_fn = lambda p, xj, *, train, rng: logits(p, a_in, xj, train, rng)
            return init_fn, apply_fn

        params, acc = _fit(k, make_fns, a, x, labels, masks, config[name])
        return (lambda adj_: logits(params, adj_, x, False, None)), acc

    results: dict[str, float] = {}
    for m_index, name in enumerate(tqdm(("gcn", "appnp", "gadc"), desc="gadc_adaptive")):
        model_key = jax.random.fold_in(key, m_index)
        eval_logits, clean_acc = fit_model(name, adj, model_key)
        results[f"{config.dataset}_clean_{name}"] = 100.0 * clean_acc
        targets = pseudo_labels(eval_logits(adj), labels, masks[0])
        attack_mask = jnp.ones_like(masks[0])
        loss_fn = functools.partial(_attack_loss, eval_logits, targets, attack_mask)
        for budget in config.budgets:
            attacked = pgd_structure_attack(
                jax.random.fold_in(model_key, int(budget * 1000)), adj, loss_fn, budget,
                steps=config.pgd_steps, lr=config.pgd_lr, num_samples=config.pgd_samples)
            tag = f"{config.dataset}_pgd{budget:g}"
            results[f"{tag}_evasion_{name}"] = 100.0 * float(
                masked_accuracy(eval_logits(attacked), labels, masks[2]))
            results[f"{tag}_flips_{name}"] = float(np.sum(np.triu(np.abs(
                np.asarray(attacked) - np.asarray(adj)), 1)))
            if config.poisoning:
                _, acc = fit_model(name, attacked, jax.random.fold_in(model_key, 7))
                results[f"{tag}_poisoning_{name}"] = 100.0 * acc
    return results
