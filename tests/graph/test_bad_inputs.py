"""One bad value per argument of every public ``jaxlab.graph`` kernel (a table, as optax).

The documented behaviour (``jaxlab/_checks.py``): a ``ValueError`` that names the
argument for a bad shape, rank, dtype or static hyper-parameter; integer features promoted
to float; degree-0 nodes and empty edge lists safe; traced hyper-parameters unchecked.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from jaxlab.graph import attacks, csbm, dense, diffusion, graphs, losses, models

KEY = jax.random.key(0)
G = graphs.from_edges([0, 1, 1, 2], [1, 0, 2, 1], num_nodes=3)
X = jnp.ones((3, 2))
ADJ = jnp.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
LOGITS = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
LABELS = jnp.array([0, 1, 1])
MASK = jnp.array([True, True, False])
PGD = dict(
    objective="minimize",
    budget_form="flips",
    iterations=2,
    base_lr=0.1,
    sampling_tries=1,
    max_draws=1,
)


def _pgd(**kw):
    args = dict(key=KEY, adj=ADJ, loss_fn=jnp.sum, budget=1, **PGD)
    args.update(kw)
    return attacks.pgd_structure_attack(**args)


def _gcn(**kw):
    args = dict(hidden=2, num_classes=2, dropout=0.5)
    args.update(kw)
    module = models.GCN(**args)
    return module.init(KEY, X, lambda v: v, train=False)


# (case id, call, the argument name the ValueError must mention)
CASES = [
    # graphs
    ("from_edges/senders_rank", lambda: graphs.from_edges([[0]], [[1]], 2), "senders"),
    ("from_edges/senders_float", lambda: graphs.from_edges([0.5], [1], 2), "senders"),
    ("from_edges/receivers_range", lambda: graphs.from_edges([0], [5], 2), "endpoints"),
    ("from_edges/num_nodes_zero", lambda: graphs.from_edges([], [], 0), "num_nodes"),
    ("from_edges/num_nodes_float", lambda: graphs.from_edges([0], [1], 2.7), "num_nodes"),
    ("from_edges/weights_shape", lambda: graphs.from_edges([0], [1], 2, [1.0, 2.0]), "weights"),
    ("from_scipy/adj_square", lambda: graphs.from_scipy(sp.csr_matrix(np.ones((2, 3)))), "adj"),
    ("pad_edges/graph", lambda: graphs.pad_edges(G._replace(edges=None), 8), "graph.edges"),
    ("pad_edges/num_edges", lambda: graphs.pad_edges(G, 2), "num_edges"),
    (
        "make_propagate/weights",
        lambda: graphs.make_propagate(G.senders, G.receivers, jnp.ones(2), 3),
        "weights",
    ),
    (
        "make_propagate/num_nodes",
        lambda: graphs.make_propagate(G.senders, G.receivers, G.edges, 0),
        "num_nodes",
    ),
    (
        "make_propagate/v_rows",
        lambda: graphs.make_propagate(G.senders, G.receivers, G.edges, 3)(jnp.ones((4, 1))),
        "v",
    ),
    (
        "propagate/x_rank",
        lambda: graphs.propagate(G.senders, G.receivers, G.edges, jnp.float32(1.0)),
        "x",
    ),
    # diffusion
    (
        "gcn_normalize/graph",
        lambda: diffusion.gcn_normalize(G._replace(edges=jnp.ones(2)), 3),
        "graph.edges",
    ),
    ("gcn_normalize/num_nodes", lambda: diffusion.gcn_normalize(G, 0), "num_nodes"),
    ("gcn_normalize/degree", lambda: diffusion.gcn_normalize(G, 3, degree="both"), "degree"),
    ("ppr/x_rank", lambda: diffusion.ppr_diffusion(G, jnp.ones(3), alpha=0.1, num_terms=2), "x"),
    (
        "ppr/x_rows",
        lambda: diffusion.ppr_diffusion(G, jnp.ones((4, 2)), alpha=0.1, num_terms=2),
        "x",
    ),
    (
        "ppr/x_complex",
        lambda: diffusion.ppr_diffusion(G, X.astype(jnp.complex64), alpha=0.1, num_terms=2),
        "x",
    ),
    ("ppr/alpha_zero", lambda: diffusion.ppr_diffusion(G, X, alpha=0.0, num_terms=2), "alpha"),
    ("ppr/alpha_above_one", lambda: diffusion.ppr_diffusion(G, X, alpha=1.5, num_terms=2), "alpha"),
    (
        "ppr/alpha_nan",
        lambda: diffusion.ppr_diffusion(G, X, alpha=float("nan"), num_terms=2),
        "alpha",
    ),
    ("ppr/num_terms", lambda: diffusion.ppr_diffusion(G, X, alpha=0.1, num_terms=-1), "num_terms"),
    (
        "ppr/degree",
        lambda: diffusion.ppr_diffusion(G, X, alpha=0.1, num_terms=2, degree="sym"),
        "degree",
    ),
    ("heat/t", lambda: diffusion.heat_diffusion(G, X, t=0.0, num_terms=2), "t"),
    ("heat/num_terms", lambda: diffusion.heat_diffusion(G, X, t=1.0, num_terms=2.0), "num_terms"),
    (
        "heat/x_rank",
        lambda: diffusion.heat_diffusion(G, jnp.ones((3, 2, 1)), t=1.0, num_terms=2),
        "x",
    ),
    ("gadc/lam", lambda: diffusion.gadc(G, X, lam=-1.0, num_terms=2, phi="cosine"), "lam"),
    ("gadc/eps", lambda: diffusion.gadc(G, X, lam=1.0, num_terms=2, phi="cosine", eps=-0.5), "eps"),
    (
        "gadc/num_terms",
        lambda: diffusion.gadc(G, X, lam=1.0, num_terms=-2, phi="cosine"),
        "num_terms",
    ),
    ("gadc/phi", lambda: diffusion.gadc(G, X, lam=1.0, num_terms=2, phi="dense"), "phi"),
    (
        "gadc/degree",
        lambda: diffusion.gadc(G, X, lam=1.0, num_terms=2, phi="limit", degree="x"),
        "degree",
    ),
    (
        "gadc/x",
        lambda: diffusion.gadc(G, jnp.ones((2, 2)), lam=1.0, num_terms=2, phi="cosine"),
        "x",
    ),
    (
        "gadc/phi_features",
        lambda: diffusion.gadc(
            G, X, lam=1.0, num_terms=2, phi="cosine", phi_features=jnp.ones((4, 2))
        ),
        "phi_features",
    ),
    (
        "adversarial_transition/phi",
        lambda: diffusion.adversarial_transition(G, X, eps=1.0, phi="nope"),
        "phi",
    ),
    (
        "adversarial_transition/eps",
        lambda: diffusion.adversarial_transition(G, X, eps=-1.0, phi="gram"),
        "eps",
    ),
    ("edge_cosine/features", lambda: diffusion.edge_cosine(G, jnp.ones(3)), "features"),
    (
        "neumann_series/num_terms",
        lambda: diffusion.neumann_series(lambda v: v, X, 0.5, 1.0, -1),
        "num_terms",
    ),
    # dense
    ("row_normalize/x", lambda: dense.row_normalize(jnp.float32(1.0)), "x"),
    ("dense_gcn_propagate/adj", lambda: dense.dense_gcn_propagate(jnp.ones((2, 3))), "adj"),
    ("dense_gcn_propagate/v", lambda: dense.dense_gcn_propagate(ADJ)(jnp.ones((2, 1))), "v"),
    ("cosine_matrix/features", lambda: dense.cosine_matrix(jnp.ones(3)), "features"),
    (
        "dense_limit_transition/adj",
        lambda: dense.dense_limit_transition(jnp.ones(3), jnp.ones(3)),
        "adj",
    ),
    (
        "dense_limit_transition/cosine",
        lambda: dense.dense_limit_transition(ADJ, jnp.ones((2, 2))),
        "cosine",
    ),
    # attacks
    ("edge_budget/rate", lambda: attacks.edge_budget(ADJ, 1.5), "rate"),
    ("edge_budget/adj", lambda: attacks.edge_budget(jnp.ones((2, 3)), 0.5), "adj"),
    ("random_edge_flips/key", lambda: attacks.random_edge_flips(0, ADJ, 0.5), "key"),
    ("random_edge_flips/adj", lambda: attacks.random_edge_flips(KEY, X, 0.5), "adj"),
    ("random_edge_flips/rate", lambda: attacks.random_edge_flips(KEY, ADJ, -0.1), "rate"),
    ("gaussian_feature_noise/key", lambda: attacks.gaussian_feature_noise(3, X, 0.1), "key"),
    (
        "gaussian_feature_noise/x",
        lambda: attacks.gaussian_feature_noise(KEY, jnp.ones(3), 0.1),
        "x",
    ),
    ("gaussian_feature_noise/scale", lambda: attacks.gaussian_feature_noise(KEY, X, -1.0), "scale"),
    ("flip_feature_noise/key", lambda: attacks.flip_feature_noise(None, X, 0.1), "key"),
    ("flip_feature_noise/x", lambda: attacks.flip_feature_noise(KEY, jnp.ones(3), 0.1), "x"),
    ("flip_feature_noise/p", lambda: attacks.flip_feature_noise(KEY, X, 1.5), "p"),
    ("flip_edges/flips", lambda: attacks.flip_edges(ADJ, jnp.ones((2, 2))), "flips"),
    ("margin/logits", lambda: attacks.margin(jnp.ones(3), LABELS), "logits"),
    ("margin/labels_shape", lambda: attacks.margin(LOGITS, jnp.array([0, 1])), "labels"),
    ("margin/labels_float", lambda: attacks.margin(LOGITS, jnp.array([0.0, 1.0, 1.0])), "labels"),
    (
        "tanh_margin_loss/mask",
        lambda: attacks.tanh_margin_loss(LOGITS, LABELS, jnp.ones(2, bool)),
        "mask",
    ),
    (
        "project_flip_budget/s",
        lambda: attacks.project_flip_budget(jnp.ones(3, jnp.complex64), 1.0),
        "s",
    ),
    (
        "project_flip_budget/budget",
        lambda: attacks.project_flip_budget(jnp.ones(3), -1.0),
        "budget",
    ),
    (
        "project_flip_budget/tol",
        lambda: attacks.project_flip_budget(jnp.ones(3), 1.0, tol=0.0),
        "tol",
    ),
    ("pgd/key", lambda: _pgd(key=1), "key"),
    ("pgd/adj", lambda: _pgd(adj=jnp.ones((2, 3))), "adj"),
    ("pgd/adj_one_node", lambda: _pgd(adj=jnp.zeros((1, 1))), "adj"),
    ("pgd/budget_negative", lambda: _pgd(budget=-1), "budget"),
    ("pgd/budget_float_flips", lambda: _pgd(budget=1.5), "budget"),
    ("pgd/budget_rate", lambda: _pgd(budget=1.5, budget_form="rate"), "rate"),
    ("pgd/objective", lambda: _pgd(objective="max"), "objective"),
    ("pgd/budget_form", lambda: _pgd(budget_form="pairs"), "budget_form"),
    ("pgd/iterations", lambda: _pgd(iterations=0), "iterations"),
    ("pgd/base_lr", lambda: _pgd(base_lr=0.0), "base_lr"),
    ("pgd/sampling_tries", lambda: _pgd(sampling_tries=0), "sampling_tries"),
    ("pgd/max_draws", lambda: _pgd(max_draws=0), "max_draws"),
    ("pgd/max_candidates", lambda: _pgd(max_candidates=0), "max_candidates"),
    (
        "pseudo_labels/train_mask",
        lambda: attacks.pseudo_labels(LOGITS, LABELS, jnp.ones(2)),
        "train_mask",
    ),
    # losses
    (
        "masked_cross_entropy/logits",
        lambda: losses.masked_cross_entropy(jnp.ones(3), LABELS, MASK),
        "logits",
    ),
    (
        "masked_cross_entropy/labels",
        lambda: losses.masked_cross_entropy(LOGITS, LABELS.astype(jnp.float32), MASK),
        "labels",
    ),
    (
        "masked_cross_entropy/mask",
        lambda: losses.masked_cross_entropy(LOGITS, LABELS, jnp.ones(2)),
        "mask",
    ),
    (
        "masked_accuracy/labels",
        lambda: losses.masked_accuracy(LOGITS, jnp.array([0, 1]), MASK),
        "labels",
    ),
    # models
    ("GCN/activation", lambda: _gcn(activation="tanh"), "activation"),
    ("GCN/init_scheme", lambda: _gcn(init_scheme="he"), "init_scheme"),
    ("node_mlp/init_scheme", lambda: models.node_mlp((2,), 2, 0.0, "he"), "init"),
    ("sgc_features/num_terms", lambda: models.sgc_features(lambda v: v, X, -1), "num_terms"),
    # csbm
    ("csbm/key", lambda: csbm.csbm(0, 10, 20), "key"),
    ("csbm/num_nodes", lambda: csbm.csbm(KEY, 1, 20), "num_nodes"),
    ("csbm/num_edges", lambda: csbm.csbm(KEY, 10, -1), "num_edges"),
    ("csbm/num_classes", lambda: csbm.csbm(KEY, 10, 20, num_classes=1), "num_classes"),
    ("csbm/num_classes_above_n", lambda: csbm.csbm(KEY, 3, 20, num_classes=4), "num_classes"),
    ("csbm/num_features", lambda: csbm.csbm(KEY, 10, 20, num_features=0), "num_features"),
    ("csbm/homophily", lambda: csbm.csbm(KEY, 10, 20, homophily=1.2), "homophily"),
    ("csbm/signal", lambda: csbm.csbm(KEY, 10, 20, signal=-1.0), "signal"),
    ("edge_homophily/labels", lambda: csbm.edge_homophily(sp.eye(3), np.zeros(2)), "labels"),
]


@pytest.mark.parametrize("call,argument", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_int_features_are_promoted_not_truncated():
    x_int = jnp.array([[1, 0], [0, 3], [2, 2]])
    for phi in ("cosine", "gram", "edge_inner", "limit"):
        got = diffusion.gadc(G, x_int, lam=1.0, num_terms=3, phi=phi)
        want = diffusion.gadc(G, x_int.astype(jnp.float32), lam=1.0, num_terms=3, phi=phi)
        assert got.dtype == jnp.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(dense.row_normalize(x_int)[1], [0.0, 1.0])
    noisy = attacks.gaussian_feature_noise(KEY, x_int, 0.5)
    assert noisy.dtype == jnp.float32 and float(jnp.std(noisy - x_int)) > 0.1


def test_isolated_nodes_and_empty_graphs_are_safe():
    isolated = graphs.from_edges([0, 1], [1, 0], num_nodes=3)  # node 2 has degree 0
    empty = graphs.from_edges(np.zeros(0, int), np.zeros(0, int), num_nodes=3)
    x = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    for g in (isolated, empty):
        for phi in ("cosine", "gram", "edge_inner", "limit"):
            out = diffusion.gadc(g, x, lam=1.0, num_terms=4, phi=phi)
            assert np.all(np.isfinite(out))
        # A node with only its self-loop keeps (λ+1)^{-1} Σ_k (λ/(λ+1))^k of itself.
        ppr = diffusion.ppr_diffusion(g, x, alpha=0.5, num_terms=30)
        np.testing.assert_allclose(ppr[2], x[2], rtol=1e-5)
    assert np.all(np.isfinite(dense.dense_gcn_propagate(jnp.zeros((3, 3)))(x)))
    assert np.isnan(csbm.edge_homophily(sp.csr_matrix((3, 3)), np.zeros(3, int)))
    zero = losses.masked_accuracy(LOGITS, LABELS, jnp.zeros(3, bool))
    assert float(zero) == 0.0


def test_traced_hyper_parameters_are_unchecked():
    """Documented: a traced λ / α / ε / t is not checked; out of range gives a number."""
    out = jax.jit(lambda lam: diffusion.gadc(G, X, lam=lam, num_terms=2, phi="cosine"))(-0.5)
    assert out.shape == X.shape
    out = jax.jit(lambda a: diffusion.ppr_diffusion(G, X, alpha=a, num_terms=2))(2.0)
    assert out.shape == X.shape
