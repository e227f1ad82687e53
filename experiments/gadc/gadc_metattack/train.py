"""GADC(IV) + MLP on the Metattack graphs; GCN and APPNP baselines (Table 1)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_collections
from tqdm import tqdm

from jaxlab.data.graphs import GraphData, load_prognn, prognn_from_planetoid
from jaxlab.data.splits import index_masks
from jaxlab.data.streaming import open_source
from jaxlab.data.tfds_builders.planetoid import graph_from_example  # registers it
from jaxlab.graph.dense import row_normalize
from jaxlab.graph.diffusion import gadc
from jaxlab.graph.graphs import from_scipy
from jaxlab.graph.models import APPNP, GCN
from jaxlab.train import mesh_from_config, resumable
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec
from jaxlab.trainers.gadc import (
    decoupled_runs,
    graph_model_runs,
    largest_graph,
    plan_graph_model_runs,
)


def _percent(values) -> list[float]:
    return [100.0 * float(v) for v in values]


def _appnp(ap: ml_collections.ConfigDict, num_classes: int) -> APPNP:
    return APPNP(ap.hidden, num_classes, ap.alpha, ap.num_terms, ap.dropout)


def _gadc_runs(
    config: ml_collections.ConfigDict,
    graph,
    x,
    labels,
    masks,
    num_terms: int,
    key: jax.Array,
    mesh,
    optimizer=None,
    epochs=None,
) -> dict[str, jax.Array]:
    """GADC(IV) + MLP runs of one cell: Φ on raw features, diffusion of row-normalised ones
    (as the reference code). ``optimizer``/``epochs``: a graph's own (Pubmed's), else the
    config's."""
    diffused = gadc(
        graph, row_normalize(x), lam=config.lam, num_terms=num_terms, phi="limit", phi_features=x
    )
    return decoupled_runs(
        key,
        diffused,
        labels,
        masks,
        num_runs=config.num_seeds,
        hidden=(config.hidden,),
        dropout=config.dropout,
        optimizer=config.optimizer if optimizer is None else optimizer,
        epochs=config.epochs if epochs is None else epochs,
        select=config.select,
        init=config.init_scheme,
        mesh=mesh,
    )


def _load(config: ml_collections.ConfigDict, ds: str, rate: float) -> GraphData:
    """A cell's graph: Cora/Citeseer from the Pro-GNN files; Pubmed from the ``planetoid``
    TFDS dataset with Pro-GNN's split and the Metattack graph of ``rate`` from the data
    directory (a dry run's mock Pubmed keeps its own graph and masks)."""
    data_dir = config.data_dir or None
    if ds != "pubmed":
        return load_prognn(ds, rate, data_dir)
    base = graph_from_example(open_source("planetoid/pubmed", "train", data_dir=data_dir)[0])
    return base if config.dry_run else prognn_from_planetoid(base, ds, rate, data_dir)


def _cell_settings(config: ml_collections.ConfigDict, ds: str, rate_index: int):
    """``(K, optimizer or None, epochs or None)`` of a cell: Pubmed's own in the paper
    preset (``config.pubmed``), else the shared ones (``None``)."""
    if ds != "pubmed":
        return config.num_terms[rate_index], None, None
    pm = config.pubmed
    optimizer = ml_collections.ConfigDict(config.optimizer.to_dict())
    optimizer.l2_weight_decay = pm.l2_weight_decay[rate_index]
    return pm.num_terms[rate_index], optimizer, pm.epochs


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, list[float]]:
    """Per cell (graph, rate): GADC's runs, and the baselines' where configured. Each
    batch of runs is kept in ``workdir`` when done (a killed run resumes after it), and the
    results so far are checkpointed after each cell."""
    key = jax.random.key(config.seed)
    mesh = mesh_from_config(config, RUNS_AXIS)  # the runs of a cell split over ``runs``
    results: dict[str, list[float]] = {}
    if len(config.ptb_rates) != len(config.num_terms):
        raise ValueError("ptb_rates and num_terms must have the same length")
    cells = [(ds, rate, r) for ds in config.graphs for r, rate in enumerate(config.ptb_rates)]
    for index, (ds, rate, r) in enumerate(tqdm(cells, desc="gadc_metattack")):
        data = _load(config, ds, rate)
        k, optimizer, epochs = _cell_settings(config, ds, r)
        graph = from_scipy(data.adj)
        x = jnp.asarray(data.features)
        labels = jnp.asarray(data.labels)
        masks = index_masks(data.num_nodes, data.idx_train, data.idx_val, data.idx_test)
        cell_key = jax.random.fold_in(key, index)
        metrics = resumable(
            workdir,
            f"{ds}_{rate}_gadc",
            config,
            _gadc_runs,
            config,
            graph,
            x,
            labels,
            masks,
            k,
            cell_key,
            mesh,
            optimizer,
            epochs,
        )
        results[f"{ds}_{rate}_gadc"] = _percent(metrics["test_acc"])
        if ds in config.baseline_datasets and rate in config.baseline_rates:
            x_in = row_normalize(x)
            gcn, ap = config.gcn, config.appnp
            for name, module, hp in (
                (
                    "gcn",
                    GCN(
                        gcn.hidden,
                        data.num_classes,
                        gcn.dropout,
                        activation=gcn.activation,
                        input_dropout=gcn.input_dropout,
                        init_scheme=gcn.init_scheme,
                    ),
                    gcn,
                ),
                ("appnp", _appnp(ap, data.num_classes), ap),
            ):
                metrics = resumable(
                    workdir,
                    f"{ds}_{rate}_{name}",
                    config,
                    graph_model_runs,
                    cell_key,
                    module,
                    graph,
                    x_in,
                    labels,
                    masks,
                    num_runs=config.baseline_num_seeds,
                    optimizer=hp.optimizer,
                    epochs=hp.epochs,
                    select=config.select,
                    mesh=mesh,
                )
                results[f"{ds}_{rate}_{name}"] = _percent(metrics["test_acc"])
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the whole training of the APPNP baseline's runs of one cell, split over
    ``runs`` (APPNP propagates K times in every forward pass: the costliest program; the
    GADC(IV) MLPs and GCN are not planned)."""
    shape = largest_graph("prognn", config.baseline_datasets)
    ap = config.appnp
    cells = len(config.baseline_datasets) * len(config.baseline_rates)
    return plan_graph_model_runs(
        _appnp(ap, shape.classes),
        mesh,
        shape,
        num_runs=config.baseline_num_seeds,
        total_runs=cells * config.baseline_num_seeds,
        optimizer=ap.optimizer,
        epochs=ap.epochs,
        select=config.select,
        note=f"{ap.epochs} APPNP epochs (K = {ap.num_terms} propagations) of a cell's runs, "
        f"{shape.nodes} nodes × {shape.features} features; GADC MLPs and GCN not planned",
    )
