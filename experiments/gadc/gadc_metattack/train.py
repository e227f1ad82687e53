"""GADC(IV) + MLP on the Metattack graphs; GCN and APPNP baselines (Table 1)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_collections
from jaxlab_experiments.gadc.trainer import (
    decoupled_runs,
    graph_model_runs,
    largest_graph,
    plan_graph_model_runs,
    resumable,
)
from tqdm import tqdm

from jaxlab.data.graphs import load_prognn
from jaxlab.data.splits import index_masks
from jaxlab.graph.dense import row_normalize
from jaxlab.graph.diffusion import gadc
from jaxlab.graph.graphs import from_scipy
from jaxlab.graph.models import APPNP, GCN
from jaxlab.train import mesh_from_config
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec


def _percent(values) -> list[float]:
    return [100.0 * float(v) for v in values]


def _appnp(ap: ml_collections.ConfigDict, num_classes: int) -> APPNP:
    return APPNP(ap.hidden, num_classes, ap.alpha, ap.num_terms, ap.dropout)


def _gadc_runs(config: ml_collections.ConfigDict, graph, x, labels, masks, num_terms: int,
               key: jax.Array, mesh) -> dict[str, jax.Array]:
    """GADC(IV) + MLP runs of one cell: Φ on raw features, diffusion of row-normalised ones
    (as the reference code)."""
    diffused = gadc(graph, row_normalize(x), lam=config.lam, num_terms=num_terms, phi="limit",
                    phi_features=x)
    return decoupled_runs(
        key, diffused, labels, masks, num_runs=config.num_seeds, hidden=(config.hidden,),
        dropout=config.dropout, optimizer=config.optimizer, epochs=config.epochs,
        select=config.select, init=config.init_scheme, mesh=mesh)


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, list[float]]:
    """Per cell (dataset, rate): GADC's runs, and the baselines' where configured. Each
    batch of runs is kept in ``workdir`` when done (a killed run resumes after it)."""
    data_dir = config.data_dir or None
    key = jax.random.key(config.seed)
    mesh = mesh_from_config(config, RUNS_AXIS)  # the runs of a cell split over ``runs``
    results: dict[str, list[float]] = {}
    cells = [(ds, rate, k) for ds in config.datasets
             for rate, k in zip(config.ptb_rates, config.num_terms, strict=True)]
    for index, (ds, rate, k) in enumerate(tqdm(cells, desc="gadc_metattack")):
        data = load_prognn(ds, rate, data_dir)
        graph = from_scipy(data.adj)
        x = jnp.asarray(data.features)
        labels = jnp.asarray(data.labels)
        masks = index_masks(data.num_nodes, data.idx_train, data.idx_val, data.idx_test)
        cell_key = jax.random.fold_in(key, index)
        metrics = resumable(workdir, f"{ds}_{rate}_gadc", config, _gadc_runs, config, graph, x,
                            labels, masks, k, cell_key, mesh)
        results[f"{ds}_{rate}_gadc"] = _percent(metrics["test_acc"])
        if ds in config.baseline_datasets and rate in config.baseline_rates:
            x_in = row_normalize(x)
            gcn, ap = config.gcn, config.appnp
            for name, module, hp in (
                ("gcn", GCN(gcn.hidden, data.num_classes, gcn.dropout, activation=gcn.activation,
                            input_dropout=gcn.input_dropout, init_scheme=gcn.init_scheme), gcn),
                ("appnp", _appnp(ap, data.num_classes), ap),
            ):
                metrics = resumable(
                    workdir, f"{ds}_{rate}_{name}", config, graph_model_runs, cell_key, module,
                    graph, x_in, labels, masks, num_runs=config.baseline_num_seeds,
                    optimizer=hp.optimizer, epochs=hp.epochs, select=config.select, mesh=mesh)
                results[f"{ds}_{rate}_{name}"] = _percent(metrics["test_acc"])
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one epoch of the APPNP baseline's runs of one cell, split over
    ``runs`` (APPNP propagates K times in every forward pass: the costliest program; the
    GADC(IV) MLPs and GCN are not planned)."""
    shape = largest_graph("prognn", config.baseline_datasets)
    ap = config.appnp
    cells = len(config.baseline_datasets) * len(config.baseline_rates)
    return plan_graph_model_runs(
        _appnp(ap, shape.classes), mesh, shape, num_runs=config.baseline_num_seeds,
        total_runs=cells * config.baseline_num_seeds, optimizer=ap.optimizer, epochs=ap.epochs,
        select=config.select,
        note=f"one APPNP epoch (K = {ap.num_terms} propagations) of a cell's runs, "
        f"{shape.nodes} nodes × {shape.features} features; GADC MLPs and GCN not planned")
