"""GADC(I) on Geom-GCN graphs in two graph conventions, with the spectrum of T."""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401  (sp.linalg)
from matplotlib.figure import Figure
from tqdm import tqdm

from jaxlab.data.graphs import load_geom_gcn
from jaxlab.data.splits import random_split_masks
from jaxlab.graph.dense import row_normalize
from jaxlab.graph.diffusion import adversarial_transition, gadc
from jaxlab.graph.graphs import from_scipy
from jaxlab.train import mesh_from_config, resumable
from jaxlab.train.mesh import RUNS_AXIS
from jaxlab.train.plan import PlanSpec
from jaxlab.trainers.gadc import (
    decoupled_runs,
    largest_graph,
    plan_decoupled_runs,
)


def _graph(adj: sp.csr_matrix, convention: str):
    if convention == "directed":
        return from_scipy(adj), "out"  # reference: D^{-1/2}(A+I)ᵀD^{-1/2}, row-sum degrees
    sym = sp.csr_matrix(adj + adj.T)
    sym.setdiag(0)
    sym.eliminate_zeros()
    sym.data[:] = 1.0
    return from_scipy(sym), "in"


def spectral_radius(graph, features, *, lam, eps, degree) -> float:
    """Largest |eigenvalue| of λ/(λ+1)·T: dense for small graphs, ARPACK (Arnoldi on the
    sparse operator) above 1000 nodes."""
    n = features.shape[0]
    apply_t = adversarial_transition(graph, features, eps=eps, phi="cosine", degree=degree)
    scale = lam / (lam + 1.0)
    if n <= 1000:
        t = np.asarray(apply_t(jnp.eye(n)))
        return float(np.max(np.abs(np.linalg.eigvals(scale * t))))
    matvec = jax.jit(lambda v: apply_t(v[:, None])[:, 0])
    operator = sp.linalg.LinearOperator(
        (n, n),
        matvec=lambda v: np.asarray(matvec(jnp.asarray(v, jnp.float32)), np.float64),
        dtype=np.float64,
    )
    largest = sp.linalg.eigs(
        operator, k=1, which="LM", return_eigenvectors=False, v0=np.ones(n), tol=1e-4
    )
    return float(scale * np.abs(largest[0]))


def _cell(
    config: ml_collections.ConfigDict,
    graph,
    degree: str,
    x,
    labels,
    masks,
    eps: float,
    key: jax.Array,
    mesh,
) -> dict:
    """One cell's runs (one per split) and the spectral radius of its λ/(λ+1)·T."""
    diffused = gadc(
        graph, x, lam=config.lam, eps=eps, num_terms=config.num_terms, phi="cosine", degree=degree
    )
    metrics = decoupled_runs(
        key,
        diffused,
        labels,
        masks,
        num_runs=config.num_seeds,
        hidden=(config.hidden,),
        dropout=config.dropout,
        optimizer=config.optimizer,
        epochs=config.epochs,
        select=config.select,
        init=config.init_scheme,
        per_run=("masks",),
        mesh=mesh,
    )
    radius = spectral_radius(graph, x, lam=config.lam, eps=eps, degree=degree)
    return {"test_acc": metrics["test_acc"], "spectral_radius": radius}


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, list[float]]:
    """Per cell (graph, convention, ε); each cell is kept in ``workdir`` when done (a
    killed run resumes after it), and the results so far are checkpointed after each."""
    data_dir = config.data_dir or None
    key = jax.random.key(config.seed)
    mesh = mesh_from_config(config, RUNS_AXIS)  # the runs of a cell split over ``runs``
    results: dict[str, list[float]] = {}
    cells = [(ds, conv) for ds in config.graphs for conv in config.conventions]
    for index, (ds, conv) in enumerate(tqdm(cells, desc="gadc_heterophily")):
        data = load_geom_gcn(ds, data_dir)
        graph, degree = _graph(data.adj, conv)
        x = row_normalize(jnp.asarray(data.features))
        labels = jnp.asarray(data.labels)
        split_keys = jax.random.split(jax.random.fold_in(key, 1000 + index), config.num_seeds)
        masks = jax.vmap(functools.partial(random_split_masks, num_nodes=data.num_nodes))(
            split_keys
        )
        for eps in config.eps:
            name = f"{ds}_{conv}_eps{eps:g}"
            out = resumable(
                workdir,
                name,
                config,
                _cell,
                config,
                graph,
                degree,
                x,
                labels,
                masks,
                eps,
                jax.random.fold_in(key, index),
                mesh,
            )
            results[name] = [100.0 * float(v) for v in out["test_acc"]]
            results[f"{name}_spectral_radius"] = float(out["spectral_radius"])
    _plot(results, config, workdir)
    return results


def _plot(results, config, workdir):
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    labels, means = [], []
    for ds in config.graphs:
        for conv in config.conventions:
            for eps in config.eps:
                labels.append(f"{ds[:4]}-{conv[:3]}-ε{eps:g}")
                means.append(np.mean(results[f"{ds}_{conv}_eps{eps:g}"]))
    ax.bar(range(len(means)), means)
    ax.set_xticks(range(len(means)), labels, rotation=90, fontsize=6)
    ax.set_ylabel("test accuracy (%)")
    fig.tight_layout()
    os.makedirs(workdir, exist_ok=True)
    fig.savefig(os.path.join(workdir, "heterophily.png"), dpi=100)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: the whole training of a cell's MLP runs (one per random split),
    split over ``runs``. The diffusions (once per cell) and the spectral radii (host ARPACK) are not
    planned."""
    shape = largest_graph("geom-gcn", config.graphs)
    cells = len(config.graphs) * len(config.conventions) * len(config.eps)
    return plan_decoupled_runs(
        mesh,
        shape,
        num_runs=config.num_seeds,
        total_runs=cells * config.num_seeds,
        hidden=(config.hidden,),
        dropout=config.dropout,
        optimizer=config.optimizer,
        epochs=config.epochs,
        select=config.select,
        init=config.init_scheme,
        per_run=("masks",),
        note=f"{config.epochs} epochs of a cell's 2-layer MLPs on diffused features, "
        f"{shape.nodes} nodes × {shape.features} features; diffusions and spectral radii "
        "not planned",
    )
