"""GADC(II) vs ε = 0 vs APPNP under Gaussian / flip feature noise (Planetoid split)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import ml_collections
from tqdm import tqdm

from jaxlab.data.graphs import GraphData, load_planetoid
from jaxlab.data.splits import index_masks
from jaxlab.data.streaming import open_source
from jaxlab.data.tfds_builders.planetoid import graph_from_example  # registers it
from jaxlab.graph.attacks import flip_feature_noise, gaussian_feature_noise
from jaxlab.graph.dense import row_normalize
from jaxlab.graph.diffusion import gadc
from jaxlab.graph.graphs import from_scipy
from jaxlab.graph.models import APPNP
from jaxlab.train import batch_runs, mesh_from_config, resumable
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec
from jaxlab.trainers.gadc import (
    _plan_inputs,
    decoupled_runs,
    graph_model_runs,
    largest_graph,
    traced_graph,
)


def _diffuse_runs(graph, noisy: jax.Array, hp, eps: float, mesh) -> jax.Array:
    """GADC(II) of each run's own noisy features ``[R, n, d]``: one diffusion per run, in
    sequence on each device (``lax.map`` keeps memory flat), the runs split over ``runs``."""

    def run(features, graph_):
        return gadc(graph_, features, lam=hp.lam, eps=eps, num_terms=hp.num_terms, phi="gram")

    return batch_runs(run, in_axes=(0, None), method="map", mesh=mesh)(noisy, graph)


def _linear_runs(
    config: ml_collections.ConfigDict,
    graph,
    noisy: jax.Array,
    labels,
    masks,
    hp,
    eps: float,
    key: jax.Array,
    mesh,
) -> dict[str, jax.Array]:
    """One arm of a cell: the diffusion of each run's noise, then a linear model per run."""
    lin = config.linear
    return decoupled_runs(
        key,
        _diffuse_runs(graph, noisy, hp, eps, mesh),
        labels,
        masks,
        num_runs=config.num_seeds,
        hidden=lin.hidden,
        dropout=lin.dropout,
        optimizer=lin.optimizer,
        epochs=config.epochs,
        select=config.select,
        init=lin.init_scheme,
        per_run=("x",),
        mesh=mesh,
    )


def _load(config: ml_collections.ConfigDict, graph: str) -> GraphData:
    """A Planetoid graph: through TFDS where the preset reads ``planetoid``
    (``open_source``), else from the data directory's files."""
    if "planetoid" in config.datasets:
        return graph_from_example(
            open_source(f"planetoid/{graph}", "train", data_dir=config.data_dir or None)[0]
        )
    return load_planetoid(graph, config.data_dir or None)


def _flip_eps(config: ml_collections.ConfigDict, graph: str, level_index: int) -> float:
    """GADC's ε of a flip-noise cell: the reference's per graph and rate (``flip_eps``,
    paper preset), else ``config.eps``."""
    if "flip_eps" in config:
        return float(config.flip_eps[graph][level_index])
    return config.eps


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, list[float]]:
    """Per cell (graph, noise, level): one entry per seed = per noise draw, for each arm.

    Seed ``i`` of a cell draws one noisy feature matrix, shared by GADC(II), ε = 0 and
    APPNP (and the same training key for the two diffusions), so the arms are paired. Each
    arm's batch of runs is kept in ``workdir`` when done (a killed run resumes after it),
    and the results so far are checkpointed after each cell.
    """
    key = jax.random.key(config.seed)
    mesh = mesh_from_config(config, RUNS_AXIS)  # the runs of a cell split over ``runs``
    results: dict[str, list[float]] = {}
    cells = [
        (ds, "gauss", level, config.eps) for ds in config.graphs for level in config.gaussian_levels
    ]
    cells += [
        (ds, "flip", level, _flip_eps(config, ds, i))
        for ds in config.graphs
        for i, level in enumerate(config.flip_levels)
    ]
    for index, (ds, kind, level, eps) in enumerate(tqdm(cells, desc="gadc_feature_noise")):
        data = _load(config, ds)
        graph = from_scipy(data.adj)
        x = jnp.asarray(data.features)
        labels = jnp.asarray(data.labels)
        masks = index_masks(data.num_nodes, data.idx_train, data.idx_val, data.idx_test)
        cell_key = jax.random.fold_in(key, index)
        noise_keys = jax.random.split(jax.random.fold_in(cell_key, 1), config.num_seeds)
        if kind == "gauss":
            noisy = row_normalize(
                jax.vmap(functools.partial(gaussian_feature_noise, x=x, scale=level))(noise_keys)
            )
            hp = config.gaussian
        else:
            noisy = jax.vmap(functools.partial(flip_feature_noise, x=x, p=level))(noise_keys)
            hp = config.flip
        name = f"{ds}_{kind}{level:g}"
        for label, arm_eps in (("gadc", eps), ("eps0", 0.0)):
            metrics = resumable(
                workdir,
                f"{name}_{label}",
                config,
                _linear_runs,
                config,
                graph,
                noisy,
                labels,
                masks,
                hp,
                arm_eps,
                cell_key,
                mesh,
            )
            results[f"{name}_{label}"] = [100.0 * float(v) for v in metrics["test_acc"]]
        ap = config.appnp
        module = APPNP(ap.hidden, data.num_classes, ap.alpha, ap.num_terms, ap.dropout)
        metrics = resumable(
            workdir,
            f"{name}_appnp",
            config,
            graph_model_runs,
            cell_key,
            module,
            graph,
            noisy,
            labels,
            masks,
            num_runs=config.num_seeds,
            optimizer=ap.optimizer,
            epochs=ap.epochs,
            select=config.select,
            per_run=("x",),
            mesh=mesh,
        )
        results[f"{name}_appnp"] = [100.0 * float(v) for v in metrics["test_acc"]]
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the GADC(II) diffusion of every noise draw (its Neumann loop at
    its trip count).

    The diffusions (``num_terms`` products with Â and with X(Xᵀ·) per cell and ε arm, on
    ``[n, d]`` features) dominate the cost: the draws' diffusions are vmap lanes split over
    ``runs`` (the run loops over them with ``lax.map`` on one device). A run is one noise
    draw of one dataset; its calls are the diffusions of all its cells and both ε arms. The
    linear heads and APPNP (≈ 10× fewer FLOPs) are not planned.
    """
    shape = largest_graph("planetoid", config.graphs)
    lanes, x, _, _, rep = _plan_inputs(mesh, shape, config.num_seeds, ("x",))
    edge = jax.ShapeDtypeStruct((shape.edges,), jnp.int32, sharding=rep)
    hp = config.flip if config.flip_levels else config.gaussian

    def fn(senders, receivers, noisy):
        graph = traced_graph(senders, receivers, shape.nodes)
        return jax.vmap(
            functools.partial(
                gadc, graph, lam=hp.lam, eps=config.eps, num_terms=hp.num_terms, phi="gram"
            )
        )(noisy)

    diffusions = 2 * (len(config.gaussian_levels) + len(config.flip_levels))
    return PlanSpec(
        fn=fn,
        abstract_args=(edge, edge, x),
        steps_per_run=diffusions,
        num_runs=config.num_seeds * len(config.graphs),
        runs_per_call=config.num_seeds,
        note=f"one GADC(II) diffusion ({hp.num_terms} terms of Â and X(Xᵀ·) on [n, d]) of "
        "every noise draw, "
        f"{shape.nodes} nodes × {shape.features} features; linear heads and APPNP not planned",
    )
