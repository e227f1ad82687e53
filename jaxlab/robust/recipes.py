"""Ready-made pieces for Byzantine-robust training experiments (a small CNN, m workers).

Both ``byzantine_*`` experiments, the benchmark and the notebook build their runs here, so the
code path is shared: :func:`make_run_spec` names the optimiser, aggregator and attacks;
:func:`run_batch` trains a batch of runs (seeds × attacks × learning rates) as one
``jit(vmap(...))``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh

from jaxlab import optim
from jaxlab.nn.cnn import SmallCNN, classifier_functions
from jaxlab.robust import attacks as attacks_lib
from jaxlab.robust.compose import make_aggregator
from jaxlab.robust.simulation import RunSpec, simulate_run

OPTIMIZERS = ("momentum", "mu2sgd")
ATTACKS = ("none", "sf", "lf", "ipm", "alie")


def worker_and_server(
    optimizer: str,
    *,
    momentum_beta: float = 0.9,
    clip_norm: float | None = 2.0,
    beta_floor: float = 0.01,
    gamma_floor: float = 0.01,
):
    """``(estimator, make_server(lr), two_point)`` for ``optimizer`` ∈ OPTIMIZERS.

    momentum: workers send ``worker_momentum(β)``; the server clips and takes an SGD step.
    mu2sgd: workers send their STORM estimate; the server clips and takes the AnyTime step
    (reference variant: no α_t in the w-step, γ_t and β_t floored at 0.01).
    """
    clip = optax.clip_by_global_norm(clip_norm) if clip_norm else optax.identity()
    if optimizer == "momentum":
        return (
            optim.worker_momentum(momentum_beta),
            lambda lr: optax.chain(clip, optax.sgd(lr)),
            False,
        )
    if optimizer == "mu2sgd":
        return (
            optim.storm(beta_floor),
            lambda lr: optax.chain(clip, optim.anytime_averaging(lr, gamma_floor=gamma_floor)),
            True,
        )
    raise ValueError(f"unknown optimizer {optimizer!r}; valid: {OPTIMIZERS}")


#: The keyword arguments of :func:`make_run_spec` that experiment configs carry by name.
SPEC_KEYS = (
    "num_workers",
    "num_byzantine",
    "batch_size",
    "num_steps",
    "features",
    "kernel_size",
    "ipm_epsilon",
    "clip_norm",
    "momentum_beta",
)


def make_run_spec(
    *,
    optimizer: str,
    cells: Sequence[tuple[str, str]],
    attack_names: Sequence[str] = ATTACKS,
    num_workers: int = 17,
    num_byzantine: int = 8,
    batch_size: int = 8,
    num_steps: int = 200,
    image_shape: Sequence[int] = (8, 8, 1),
    num_classes: int = 10,
    features: Sequence[int] = (16, 32),
    kernel_size: int = 5,
    ipm_epsilon: float = 0.5,
    clip_norm: float | None = 2.0,
    momentum_beta: float = 0.9,
) -> RunSpec:
    """The :class:`RunSpec` of a SmallCNN trained by ``m`` workers, ``f`` of them Byzantine.

    ``cells`` are the ``(base, meta)`` aggregator pairs a run can pick by index (see
    :func:`jaxlab.robust.compose.make_aggregator`); ``attack_names`` ⊆ ATTACKS likewise.
    """
    init_params, loss_fn, predict_fn = classifier_functions(
        SmallCNN(num_classes, tuple(features), kernel_size), tuple(image_shape)
    )
    estimator, make_server, two_point = worker_and_server(
        optimizer, momentum_beta=momentum_beta, clip_norm=clip_norm
    )
    return RunSpec(
        init_params=init_params,
        loss_fn=loss_fn,
        predict_fn=predict_fn,
        estimator=estimator,
        make_server=make_server,
        aggregators=tuple(
            make_aggregator(base, meta, num_workers, num_byzantine) for base, meta in cells
        ),
        attacks=tuple(
            attacks_lib.get_attack(a, num_workers, num_byzantine, ipm_epsilon) for a in attack_names
        ),
        attack_flips_labels=tuple(a == "lf" for a in attack_names),
        num_workers=num_workers,
        num_byzantine=num_byzantine,
        batch_size=batch_size,
        num_steps=num_steps,
        num_classes=num_classes,
        two_point=two_point,
    )


def run_batch(
    spec: RunSpec,
    seeds: Sequence[int],
    aggregator_indices: Sequence[int],
    attack_indices: Sequence[int],
    learning_rates: Sequence[float],
    train: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    mesh: Mesh | None = None,
) -> dict[str, np.ndarray]:
    """Trains ``len(seeds)`` runs (equal-length sequences) as one ``jit(vmap(...))``.

    Returns ``{"accuracy": [R], "loss": [R, num_steps]}`` as numpy arrays.
    """
    if not len(seeds) == len(aggregator_indices) == len(attack_indices) == len(learning_rates):
        raise ValueError("seeds, indices and learning_rates need equal lengths")
    train = tuple(jnp.asarray(a) for a in train)
    test = tuple(jnp.asarray(a) for a in test)
    runs = jax.jit(
        jax.vmap(
            lambda k, g, a, lr: simulate_run(spec, k, g, a, lr, train, test, mesh),
        )
    )
    keys = jax.vmap(jax.random.key)(jnp.asarray(seeds, jnp.uint32))
    out = runs(
        keys,
        jnp.asarray(aggregator_indices),
        jnp.asarray(attack_indices),
        jnp.asarray(learning_rates, jnp.float32),
    )
    return jax.tree_util.tree_map(np.asarray, out)


def time_aggregator(aggregate, num_workers: int, dim: int, repeats: int = 20) -> float:
    """Median wall time (seconds) of one jitted call ``aggregate(rows [m, dim], key)``."""
    rows = jax.random.normal(jax.random.key(0), (num_workers, dim), jnp.float32)
    key = jax.random.key(1)
    fn = jax.jit(functools.partial(aggregate))
    fn(rows, key).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(rows, key).block_until_ready()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
