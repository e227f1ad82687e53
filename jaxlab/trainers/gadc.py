"""The GADC experiments' trainer: full-batch node classification (shared by them only).

``train_node_classifier`` trains one model with its config's optimiser (for GADC: Adam with
L2 weight decay added to the gradient, as ``torch.optim.Adam(weight_decay=...)``, see
:func:`make_l2_optimizer`), full batch, and keeps the test accuracy at the epoch of the
best validation loss (or accuracy). It is a pure function of a PRNG key and arrays, so
``batch_runs`` over keys (and masks, features) trains a batch of runs as one program — the
reason the 10-run GADC tables are cheap.

``decoupled_runs`` trains ``num_runs`` MLP/linear heads on pre-diffused features;
``graph_model_runs`` does the same for GCN/APPNP, which propagate in every forward pass.
Both accept per-run masks and features (leading run axis) or shared ones. The loss and the
accuracy are the kernels of :mod:`jaxlab.graph.losses`.

The experiments keep each finished batch of runs with :func:`jaxlab.train.resumable` (an
atomically written ``<workdir>/runs/<name>-<config digest>.npz``), so an experiment killed
mid-run and started again recomputes only the batch it was in.

``fit_with_patience`` is Mujkanovic et al.'s ``gb`` ``fit`` (early stopping on the
validation loss), the trainer of GADC's adaptive-attack protocol (Table 2).

Every hyper-parameter is an argument without a default: the experiments' configs hold them.
An optimiser is a config entry ``{"name", "learning_rate", "l2_weight_decay", ...}``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
import jraph
import numpy as np
import optax
from jax.sharding import Mesh
from jax.typing import ArrayLike

from jaxlab.graph.diffusion import gcn_normalize
from jaxlab.graph.graphs import make_propagate
from jaxlab.graph.losses import masked_accuracy, masked_cross_entropy
from jaxlab.graph.models import node_mlp
from jaxlab.train import (
    batch_runs,
    make_optimizer,
    optimizer_step,
    padded_runs,
    runs_sharding,
    scan_run,
)
from jaxlab.train.mesh import replicated
from jaxlab.train.plan import PlanSpec

InitFn = Callable[[jax.Array], Any]
ApplyFn = Callable[..., jax.Array]


def make_l2_optimizer(spec: Mapping[str, Any]) -> optax.GradientTransformation:
    """The optimiser of a config entry, after L2 weight decay added to the gradient.

    ``g ← g + l2_weight_decay · θ``, then the optimiser :func:`jaxlab.train.make_optimizer`
    builds from the rest of ``spec`` — for ``name="adam"`` that is
    ``torch.optim.Adam(weight_decay=...)`` (coupled L2, not AdamW's decoupled decay), the
    optimiser of the GADC and ``gb`` reference code.

    Raises:
      ValueError: no ``l2_weight_decay`` (or a negative one), or a bad optimiser entry.
    """
    spec = dict(spec.to_dict() if hasattr(spec, "to_dict") else spec)
    if "l2_weight_decay" not in spec:
        raise ValueError(f"optimizer needs 'l2_weight_decay' (0.0 for none), got {spec}")
    l2 = float(spec.pop("l2_weight_decay"))
    if not l2 >= 0:
        raise ValueError(f"l2_weight_decay must be >= 0, got {l2}")
    return optax.chain(optax.add_decayed_weights(l2), make_optimizer(spec))


def _frozen(spec: Mapping[str, Any]) -> tuple:
    """A config entry as a hashable, sorted tuple of items (a cache key)."""
    return tuple(sorted((spec.to_dict() if hasattr(spec, "to_dict") else dict(spec)).items()))


def _rows(mask: jax.Array, size: int) -> tuple[jax.Array, jax.Array]:
    """``size`` node indices where ``mask`` is true (padded with node 0) and their validity."""
    idx = jnp.nonzero(mask, size=size, fill_value=0)[0]
    return idx, jnp.arange(size) < jnp.sum(mask)


def train_node_classifier(
    key: jax.Array,
    init_fn: InitFn,
    apply_fn: ApplyFn,
    x: jax.Array,
    labels: jax.Array,
    train_mask: jax.Array,
    val_mask: jax.Array,
    test_mask: jax.Array,
    *,
    optimizer: Mapping[str, Any],
    epochs: int,
    select: Literal["val_loss", "val_acc"],
    row_wise_sizes: tuple[int, int, int] | None = None,
) -> tuple[dict[str, jax.Array], Any]:
    """Trains one model full-batch; returns metrics at the best validation epoch.

    Each epoch takes one optimiser step on the training nodes (dropout on), then evaluates
    (dropout off); the epoch with the lowest validation loss (``select="val_loss"``, first
    one on ties) or the highest validation accuracy (``"val_acc"``) gives the reported
    numbers and parameters. Test labels are only read for the reported accuracy, computed
    once with the selected parameters. The epochs are one :func:`jaxlab.train.scan_run`.

    A model that maps each node's row on its own (an MLP on fixed, pre-diffused features)
    needs only the rows its losses read: with ``row_wise_sizes`` each epoch runs the model
    on the training rows and then on the validation rows alone — the same computation as
    running it on all ``n`` rows (identical numbers without dropout; with dropout the masks
    are drawn for those rows only, so the draws differ), at a fraction of the cost when the
    labelled sets are small (10 % + 10 % of the nodes in the Pro-GNN splits: ≈ 10× fewer
    FLOPs and random bits).

    Args:
      key: PRNG key of this run (initialization and dropout).
      init_fn: ``key -> params``.
      apply_fn: ``apply_fn(params, x, train=bool, key=key_or_None) -> [n, c]`` logits.
      x: ``[n, d]`` model input.
      labels: ``[n]`` integer labels.
      train_mask, val_mask, test_mask: ``[n]`` boolean masks.
      optimizer: the optimiser's config entry (see :func:`make_l2_optimizer`).
      epochs: number of full-batch steps.
      select: model-selection criterion.
      row_wise_sizes: static upper bounds on the number of train / validation / test
        nodes, for a row-wise ``apply_fn`` only (``None``: evaluate on all rows).

    Returns:
      ``({"val_acc", "test_acc", "val_loss", "best_epoch"}, best_params)``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.graph.models import node_mlp
      >>> from jaxlab.trainers.gadc import flax_fns, train_node_classifier
      >>> x = jax.random.normal(jax.random.key(0), (8, 3))
      >>> labels = (x[:, 0] > 0).astype(jnp.int32)
      >>> init_fn, apply_fn = flax_fns(node_mlp((4,), 2, 0.0), x)
      >>> masks = [jnp.arange(8) % 3 == r for r in range(3)]
      >>> metrics, _ = train_node_classifier(jax.random.key(1), init_fn, apply_fn, x, labels,
      ...     *masks, optimizer={"name": "adam", "learning_rate": 0.1, "l2_weight_decay": 0.0},
      ...     epochs=5, select="val_loss")
      >>> sorted(metrics)
      ['best_epoch', 'test_acc', 'val_acc', 'val_loss']
    """
    if select not in ("val_loss", "val_acc"):
        raise ValueError(f"select must be 'val_loss' or 'val_acc', got {select!r}")
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    if row_wise_sizes is None:
        every = jnp.arange(x.shape[0])
        rows = {
            name: (every, mask)
            for name, mask in (("train", train_mask), ("val", val_mask), ("test", test_mask))
        }
    else:
        rows = {
            name: _rows(mask, size)
            for name, mask, size in zip(
                ("train", "val", "test"),
                (train_mask, val_mask, test_mask),
                row_wise_sizes,
                strict=True,
            )
        }
    # (inputs, labels, weights) of each set: all rows with the mask as weights, or only
    # the set's own rows (row-wise models).
    sets = {
        name: (x if row_wise_sizes is None else x[idx], labels[idx], valid)
        for name, (idx, valid) in rows.items()
    }
    init_key, dropout_key = jax.random.split(key)
    params = init_fn(init_key)
    tx = make_l2_optimizer(optimizer)
    opt_state = tx.init(params)

    def loss_fn(p, dropout_key):
        inputs, targets, valid = sets["train"]
        return masked_cross_entropy(
            apply_fn(p, inputs, train=True, key=dropout_key), targets, valid
        )

    train_step = optimizer_step(loss_fn, tx)

    def epoch(carry, step):
        params, opt_state, best = carry
        (params, opt_state), _ = train_step(
            (params, opt_state), jax.random.fold_in(dropout_key, step)
        )
        inputs, targets, valid = sets["val"]
        logits = apply_fn(params, inputs, train=False, key=None)
        val_loss = masked_cross_entropy(logits, targets, valid)
        val_acc = masked_accuracy(logits, targets, valid)
        improved = (
            val_loss < best["val_loss"] if select == "val_loss" else (val_acc > best["val_acc"])
        )
        now = {
            "val_loss": val_loss,
            "val_acc": val_acc,
            "best_epoch": step.astype(jnp.int32),
            "params": params,
        }
        best = jax.tree.map(lambda new, old: jnp.where(improved, new, old), now, best)
        return (params, opt_state, best), val_loss

    best = {
        "val_loss": jnp.array(jnp.inf),
        "val_acc": jnp.array(0.0),
        "best_epoch": jnp.array(-1, jnp.int32),
        "params": params,
    }
    (_, _, best), _ = scan_run(epoch, (params, opt_state, best), length=epochs)
    best_params = best.pop("params")
    inputs, targets, valid = sets["test"]
    best["test_acc"] = masked_accuracy(
        apply_fn(best_params, inputs, train=False, key=None), targets, valid
    )
    return best, best_params


def flax_fns(module, x_example: jax.Array, **call_kwargs) -> tuple[InitFn, ApplyFn]:
    """``(init_fn, apply_fn)`` for a flax module called as ``module(x, **kw, train=...)``."""

    def init_fn(key):
        return module.init(key, x_example, train=False, **call_kwargs)

    def apply_fn(params, x, *, train, key):
        rngs = {"dropout": key} if train else {}
        return module.apply(params, x, train=train, rngs=rngs, **call_kwargs)

    return init_fn, apply_fn


_NAMES = ("x", "train", "val", "test", "labels")


def _batch_program(train_one: Callable, batching: str, mesh: Mesh | None) -> Callable:
    """``fn(keys, per_run, common) -> metrics``: ``train_one`` over a leading run axis.

    ``per_run`` holds the arrays with a run axis, ``common`` the shared ones (both dicts
    keyed by ``_NAMES``), passed to :func:`jaxlab.train.batch_runs` as arguments, not
    constants baked into the program: the same program then serves every graph of the same
    shapes, and XLA does not spend seconds constant-folding expressions of an ``[n, d]``
    feature matrix. ``batching="vmap"`` trains the runs side by side (accelerators);
    ``"map"`` loops over them inside the program with ``lax.map`` (CPU, where XLA's batched
    matmuls with a broadcast input ran slower than the per-run 2-D matmuls); ``"auto"``
    picks by backend. With a ``mesh`` the runs are split over its ``runs`` axis (the shared
    arrays replicated); on one device the numbers are those of ``mesh=None``.
    """
    if batching not in ("auto", "vmap", "map"):
        raise ValueError(f"batching must be 'auto', 'vmap' or 'map', got {batching!r}")

    def one(k, batched, common):
        full = {**common, **batched}
        return train_one(k, *(full[n] for n in _NAMES))

    return batch_runs(one, in_axes=(0, 0, None), method=batching, mesh=mesh)


def _split_args(x, labels, masks, per_run) -> tuple[dict, dict]:
    arrays = {"x": x, "train": masks[0], "val": masks[1], "test": masks[2], "labels": labels}
    batched = {"x"} & set(per_run) | ({"train", "val", "test"} if "masks" in per_run else set())
    return (
        {n: arrays[n] for n in _NAMES if n in batched},
        {n: arrays[n] for n in _NAMES if n not in batched},
    )


@functools.lru_cache(maxsize=16)
def _decoupled_program(
    hidden: tuple[int, ...],
    num_classes: int,
    dropout: float,
    init: str,
    sizes: tuple[int, int, int],
    optimizer: tuple,
    epochs: int,
    select: str,
    batching: str,
    mesh: Mesh | None,
) -> Callable:
    """The compiled batch of MLP trainings, cached: cells of one table share it."""
    module = node_mlp(hidden, num_classes, dropout, init)

    def train_one(k, x, tr, va, te, labels):
        init_fn, apply_fn = flax_fns(module, x)
        metrics, _ = train_node_classifier(
            k,
            init_fn,
            apply_fn,
            x,
            labels,
            tr,
            va,
            te,
            optimizer=dict(optimizer),
            epochs=epochs,
            select=select,
            row_wise_sizes=sizes,
        )
        return metrics

    return _batch_program(train_one, batching, mesh)


def decoupled_runs(
    key: jax.Array,
    x: jax.Array,
    labels: jax.Array,
    masks: tuple,
    *,
    num_runs: int,
    hidden: tuple[int, ...],
    dropout: float,
    optimizer: Mapping[str, Any],
    epochs: int,
    select: str,
    init: str,
    per_run: tuple[str, ...] = (),
    batching: str = "auto",
    mesh: Mesh | None = None,
) -> dict[str, jax.Array]:
    """Trains ``num_runs`` MLPs on fixed (diffused) features as one compiled batch.

    The MLP is row-wise, so each epoch runs it on the labelled rows only (see
    ``train_node_classifier``'s ``row_wise_sizes``). The compiled program is cached by
    shapes and hyper-parameters, so the cells of a table with equal shapes compile once.

    Args:
      key: PRNG key; run ``i`` uses ``split(key, num_runs)[i]``.
      x: ``[n, d]`` (or ``[R, n, d]`` if ``"x"`` in ``per_run``) model input.
      labels: ``[n]``.
      masks: ``(train, val, test)``, each ``[n]`` or ``[R, n]`` (``"masks"`` in ``per_run``).
      per_run: which of ``"x"``, ``"masks"`` carry a leading run axis.
      batching: ``"vmap"``, ``"map"`` or ``"auto"`` (see ``_batch_program``).
      mesh: split the runs over this mesh's ``runs`` axis (``None``: the default device).

    Returns:
      ``{"val_acc", "test_acc", "val_loss", "best_epoch"}``, each ``[R]``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.trainers.gadc import decoupled_runs
      >>> x = jax.random.normal(jax.random.key(0), (12, 3))
      >>> labels = (x[:, 0] > 0).astype(jnp.int32)
      >>> masks = tuple(jnp.arange(12) % 3 == r for r in range(3))
      >>> out = decoupled_runs(jax.random.key(1), x, labels, masks, num_runs=2, hidden=(),
      ...                      dropout=0.0, epochs=3, select="val_acc", init="default",
      ...                      optimizer={"name": "adam", "learning_rate": 0.1,
      ...                                 "l2_weight_decay": 0.0})
      >>> out["test_acc"].shape
      (2,)
    """
    num_nodes = x.shape[-2]
    sizes = tuple(int(np.asarray(m).reshape(-1, num_nodes).sum(-1).max()) for m in masks)
    program = _decoupled_program(
        tuple(hidden),
        int(jnp.max(labels)) + 1,
        float(dropout),
        init,
        sizes,
        _frozen(optimizer),
        int(epochs),
        select,
        batching,
        mesh,
    )
    batched, common = _split_args(x, labels, masks, per_run)
    return program(jax.random.split(key, num_runs), batched, common)


def graph_model_runs(
    key: jax.Array,
    module,
    graph: jraph.GraphsTuple,
    x: jax.Array,
    labels: jax.Array,
    masks: tuple,
    *,
    num_runs: int,
    optimizer: Mapping[str, Any],
    epochs: int,
    select: str,
    per_run: tuple[str, ...] = (),
    mesh: Mesh | None = None,
) -> dict[str, jax.Array]:
    """Trains ``num_runs`` GCN/APPNP-style models (``module(x, propagate_fn, train=)``).

    Arguments as :func:`decoupled_runs`; ``graph`` is propagated with the GCN
    normalization in every forward pass.
    """
    num_nodes = x.shape[-2]
    a_hat = gcn_normalize(graph, num_nodes)
    propagate_fn = make_propagate(a_hat.senders, a_hat.receivers, a_hat.edges, num_nodes)

    def train_one(k, xi, tr, va, te, labels):
        init_fn, apply_fn = flax_fns(module, xi, propagate_fn=propagate_fn)
        metrics, _ = train_node_classifier(
            k,
            init_fn,
            apply_fn,
            xi,
            labels,
            tr,
            va,
            te,
            optimizer=optimizer,
            epochs=epochs,
            select=select,
        )
        return metrics

    batched, common = _split_args(x, labels, masks, per_run)
    return _batch_program(train_one, "auto", mesh)(jax.random.split(key, num_runs), batched, common)


def fit_with_patience(
    key: jax.Array,
    init_fn: InitFn,
    apply_fn: ApplyFn,
    x: ArrayLike,
    labels: ArrayLike,
    train_mask: ArrayLike,
    val_mask: ArrayLike,
    *,
    optimizer: Mapping[str, Any],
    max_epochs: int,
    patience: int,
) -> tuple[Any, jax.Array]:
    """Full-batch training with patience, as Mujkanovic et al.'s ``gb`` ``fit`` does.

    The config's optimiser (``gb``: Adam with L2 weight decay,
    ``torch.optim.Adam(weight_decay=...)``, see :func:`make_l2_optimizer`), at most
    ``max_epochs`` epochs, stopped ``patience`` epochs after the last improvement of the
    validation loss, returning the parameters of the best validation loss. As in ``gb``,
    each epoch runs the model ONCE in training mode (dropout on): that forward pass gives
    both the training loss (whose gradient takes the step) and the validation loss used
    for selection, and the selected parameters are those that produced it (before the
    step). The loop is a ``lax.while_loop``: it costs the epochs it runs, not
    ``max_epochs``.

    Args:
      key: PRNG key (initialization and dropout).
      init_fn: ``key -> params``.
      apply_fn: ``apply_fn(params, x, train=bool, key=key_or_None) -> [n, c]`` logits.
      x: ``[n, d]`` model input.
      labels: ``[n]`` integer labels.
      train_mask, val_mask: ``[n]`` boolean masks.
      optimizer: the optimiser's config entry (see :func:`make_l2_optimizer`).
      max_epochs, patience: stopping rule (``gb``: stop when the validation loss has not
        improved for ``patience`` epochs), both ``>= 1``.

    Returns:
      ``(params, epochs_run)``: the parameters of the lowest validation loss.
    """
    if max_epochs < 1 or patience < 1:
        raise ValueError(f"max_epochs and patience must be >= 1, got {max_epochs}, {patience}")
    init_key, dropout_key = jax.random.split(key)
    params = init_fn(init_key)
    tx = make_l2_optimizer(optimizer)

    def losses(p, k):
        logits = apply_fn(p, x, train=True, key=k)
        return (
            masked_cross_entropy(logits, labels, train_mask),
            masked_cross_entropy(logits, labels, val_mask),
        )

    def cond(c):
        epoch, _, _, _, _, best_epoch = c
        return (epoch < max_epochs) & (epoch < best_epoch + patience + 1)

    train_step = optimizer_step(losses, tx, has_aux=True)

    def body(c):
        epoch, p, opt_state, best_p, best_loss, best_epoch = c
        (p_next, opt_state), (_, val_loss) = train_step(
            (p, opt_state), jax.random.fold_in(dropout_key, epoch)
        )
        improved = val_loss < best_loss  # of the parameters before the step, ``p``
        best_p = jax.tree.map(lambda new, old: jnp.where(improved, new, old), p, best_p)
        best_loss = jnp.where(improved, val_loss, best_loss)
        best_epoch = jnp.where(improved, epoch, best_epoch)
        return epoch + 1, p_next, opt_state, best_p, best_loss, best_epoch

    init = (jnp.array(0), params, tx.init(params), params, jnp.array(jnp.inf), jnp.array(0))
    epochs, _, _, best_p, _, _ = jax.lax.while_loop(cond, body, init)
    return best_p, epochs


# --- ``jaxlab plan``: the GADC programs at a dataset's shapes, from abstract inputs -------


class GraphShape(NamedTuple):
    """What a plan needs of a dataset (measured from :mod:`jaxlab.data.graphs`' loaders).

    ``edges``: stored entries of the adjacency (the largest over perturbation rates /
    conventions); ``train``/``val``/``test``: labelled nodes per set (a random 60/20/20
    split: ``n - 2⌊0.2n⌋`` / ``⌊0.2n⌋`` / ``⌊0.2n⌋``).
    """

    nodes: int
    features: int
    classes: int
    edges: int
    train: int
    val: int
    test: int


GRAPH_SHAPES = {
    "planetoid/cora": GraphShape(2708, 1433, 7, 10556, 140, 500, 1000),
    "planetoid/citeseer": GraphShape(3327, 3703, 6, 9104, 120, 500, 1000),
    "planetoid/pubmed": GraphShape(19717, 500, 3, 88648, 60, 500, 1000),
    "prognn/cora": GraphShape(2485, 1433, 7, 17156, 247, 249, 1988),
    "prognn/citeseer": GraphShape(2110, 3703, 6, 12598, 210, 211, 1688),
    "prognn/pubmed": GraphShape(19717, 500, 3, 138905, 1971, 1972, 15774),
    "geom-gcn/cornell": GraphShape(183, 1703, 5, 554, 111, 36, 36),
    "geom-gcn/texas": GraphShape(183, 1703, 5, 558, 111, 36, 36),
    "geom-gcn/wisconsin": GraphShape(251, 1703, 5, 900, 151, 50, 50),
    "geom-gcn/film": GraphShape(7600, 932, 5, 53318, 4560, 1520, 1520),
}


def largest_graph(source: str, datasets) -> GraphShape:
    """The :data:`GRAPH_SHAPES` entry of ``datasets`` (of ``source``) with the largest
    feature matrix: the dataset a plan compiles."""
    return max(
        (GRAPH_SHAPES[f"{source}/{ds}"] for ds in datasets),
        key=lambda s: (s.nodes * s.features, s.edges),
    )


def _plan_inputs(mesh, shape: GraphShape, num_runs: int, per_run: tuple[str, ...]):
    """``(lanes, abstract (x, labels, masks))``: ``num_runs`` padded to the mesh's ``runs``
    axis; per-run arrays split over it, the shared ones replicated."""
    lanes = padded_runs(num_runs, mesh)
    split, rep = runs_sharding(mesh), replicated(mesh)
    n = shape.nodes

    def array(dims, dtype, batched):
        return jax.ShapeDtypeStruct(
            ((lanes,) if batched else ()) + dims, dtype, sharding=split if batched else rep
        )

    x = array((n, shape.features), jnp.float32, "x" in per_run)
    masks = tuple(array((n,), jnp.bool_, "masks" in per_run) for _ in range(3))
    return lanes, x, array((n,), jnp.int32, False), masks, rep


def traced_graph(senders: jax.Array, receivers: jax.Array, num_nodes: int) -> jraph.GraphsTuple:
    """A unit-weight graph of traced ``[E]`` edge arrays (what ``from_edges`` builds from
    concrete ones): the graph as a plan's abstract argument."""
    return jraph.GraphsTuple(
        nodes=None,
        edges=jnp.ones(senders.shape, jnp.float32),
        senders=senders,
        receivers=receivers,
        globals=None,
        n_node=jnp.array([num_nodes]),
        n_edge=jnp.array([senders.size]),
    )


def plan_graph_model_runs(
    module,
    mesh,
    shape: GraphShape,
    *,
    num_runs: int,
    total_runs: int,
    optimizer: Mapping[str, Any],
    epochs: int,
    select: str,
    note: str,
) -> PlanSpec:
    """``jaxlab plan``'s spec of :func:`graph_model_runs` on shared features (the function
    itself, with the graph an abstract argument): ``num_runs`` runs per call, ``epochs``
    steps. Each run is a ``graph_model_runs`` call of one run, ``vmap``ped over run keys
    split over ``runs`` (the same batched program; only the key of each run differs).

    A call is every run's whole training (the epoch loop at its trip count, the
    initialisation and the final test evaluation).
    """
    lanes, x, labels, masks, rep = _plan_inputs(mesh, shape, num_runs, ())
    edge = jax.ShapeDtypeStruct((shape.edges,), jnp.int32, sharding=rep)
    keys = jax.ShapeDtypeStruct((lanes,), jax.random.key(0).dtype, sharding=runs_sharding(mesh))

    def fn(keys, senders, receivers, x, labels, masks):
        graph = traced_graph(senders, receivers, shape.nodes)
        return jax.vmap(
            lambda key: graph_model_runs(
                key,
                module,
                graph,
                x,
                labels,
                masks,
                num_runs=1,
                optimizer=optimizer,
                epochs=epochs,
                select=select,
            )
        )(keys)

    return PlanSpec(
        fn=fn,
        abstract_args=(keys, edge, edge, x, labels, masks),
        steps_per_run=1,
        num_runs=total_runs,
        runs_per_call=num_runs,
        note=note,
    )


def plan_decoupled_runs(
    mesh,
    shape: GraphShape,
    *,
    num_runs: int,
    total_runs: int,
    hidden: tuple[int, ...],
    dropout: float,
    optimizer: Mapping[str, Any],
    epochs: int,
    select: str,
    init: str,
    per_run: tuple[str, ...] = (),
    note: str,
) -> PlanSpec:
    """``jaxlab plan``'s spec of :func:`decoupled_runs`' compiled program (the MLPs on
    diffused features of ``shape``), ``num_runs`` runs per call split over ``runs``."""
    lanes, x, labels, masks, rep = _plan_inputs(mesh, shape, num_runs, per_run)
    program = _decoupled_program(
        tuple(hidden),
        shape.classes,
        float(dropout),
        init,
        (shape.train, shape.val, shape.test),
        _frozen(optimizer),
        int(epochs),
        select,
        "vmap",
        None,
    )
    keys = jax.ShapeDtypeStruct((lanes,), jax.random.key(0).dtype, sharding=runs_sharding(mesh))
    batched, common = _split_args(x, labels, masks, per_run)
    return PlanSpec(
        fn=program,
        abstract_args=(keys, batched, common),
        steps_per_run=1,
        num_runs=total_runs,
        runs_per_call=num_runs,
        note=note,
    )
