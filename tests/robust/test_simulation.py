"""Simulated distributed training: one step against an independent computation, and the
vmap (1 device) and shard_map (8 fake devices, m = 17 not divisible) paths agree."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.sharding import AxisType

from jaxlab import optim, robust
from jaxlab.robust import attacks, simulation

M, F, B, D, C = 17, 8, 3, 5, 3


def loss_fn(params, x, y):
    logits = x @ params["w"] + params["b"][None, :]
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))


def problem(seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "w": jnp.asarray(rng.normal(size=(D, C)), jnp.float32),
        "b": jnp.zeros(C, jnp.float32),
    }
    x = jnp.asarray(rng.normal(size=(M, B, D)), jnp.float32)
    y = jnp.asarray(rng.integers(0, C, size=(M, B)), jnp.int32)
    return params, x, y


def test_one_step_is_sgd_on_the_pooled_batch():
    """β = 0 momentum, mean, no Byzantine workers: the step is SGD on all workers' data."""
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        params, x, y = problem()
        estimator = optim.worker_momentum(0.0)
        server = optax.sgd(0.5)
        state = simulation.init_state(params, estimator, server, M)
        new_state, metrics = jax.jit(
            lambda s: simulation.byzantine_step(
                s, x, y, jax.random.key(0),
                loss_fn=loss_fn, estimator=estimator, server=server,
                aggregate=lambda rows, key: robust.mean(rows), attack=attacks.no_attack,
                num_byzantine=0, num_classes=C,
            )
        )(state)  # fmt: skip
        pooled = jax.grad(loss_fn)(params, x.reshape(M * B, D), y.reshape(M * B))
        for k in params:
            np.testing.assert_allclose(
                new_state.params[k], params[k] - 0.5 * pooled[k], rtol=1e-5, atol=1e-6
            )
        for k in params:
            np.testing.assert_array_equal(new_state.prev_params[k], params[k])
        assert np.isfinite(metrics["loss"])


def test_label_flip_only_touches_byzantine_rows():
    params, x, y = problem(1)
    estimator = optim.worker_momentum(0.0)
    server = optax.sgd(0.0)
    state = simulation.init_state(params, estimator, server, M)
    seen = {}

    def capture(rows, key):
        jax.debug.callback(lambda r: seen.setdefault("rows", np.asarray(r)), rows)
        return robust.mean(rows)

    jax.jit(
        lambda s: simulation.byzantine_step(
            s, x, y, jax.random.key(0),
            loss_fn=loss_fn, estimator=estimator, server=server, aggregate=capture,
            attack=attacks.label_flip, num_byzantine=F, num_classes=C, flip_labels=True,
        )[1]
    )(state)  # fmt: skip
    rows = np.asarray(seen["rows"])
    grad_rows = lambda labels: np.stack(  # noqa: E731
        [
            np.concatenate(
                [g.reshape(-1) for g in jax.tree.leaves(jax.grad(loss_fn)(params, xi, yi))]
            )
            for xi, yi in zip(x, labels, strict=True)
        ]
    )
    clean, flipped = grad_rows(y), grad_rows(C - 1 - y)
    np.testing.assert_allclose(rows[: M - F], clean[: M - F], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rows[M - F :], flipped[M - F :], rtol=1e-5, atol=1e-6)


@pytest.mark.devices(8)
def test_vmap_and_shard_map_paths_agree():
    """μ²-SGD: STORM workers (the two-point path), clipped AnyTime server."""
    assert jax.device_count() == 8
    mesh = jax.make_mesh((8,), ("workers",), axis_types=(AxisType.Auto,))
    params, x, y = problem(2)
    estimator, two_point = optim.storm(0.01), True
    server = optax.chain(
        optax.clip_by_global_norm(2.0), optim.anytime_averaging(0.1, gamma_floor=0.01)
    )
    aggregate = lambda rows, key: robust.ctma(  # noqa: E731
        rows, F, functools.partial(robust.trimmed_mean, num_byzantine=F)
    )
    attack = functools.partial(attacks.a_little_is_enough, num_workers=M, num_byzantine=F)

    def run(mesh):
        state = simulation.init_state(params, estimator, server, M)
        step = jax.jit(
            lambda s, k: simulation.byzantine_step(
                s,
                x,
                y,
                k,
                loss_fn=loss_fn,
                estimator=estimator,
                server=server,
                aggregate=aggregate,
                attack=attack,
                num_byzantine=F,
                num_classes=C,
                two_point=two_point,
                mesh=mesh,
            )  # fmt: skip
        )
        trajectory = []
        for t in range(4):
            state, _ = step(state, jax.random.key(t))
            trajectory.append(np.asarray(state.params["w"]))
        return np.array(trajectory)

    np.testing.assert_allclose(run(None), run(mesh), rtol=1e-5, atol=1e-6)


@pytest.mark.devices(8)
def test_map_workers_pads_and_unpads():
    mesh = jax.make_mesh((8,), ("workers",), axis_types=(AxisType.Auto,))
    per_worker = jnp.arange(17.0)[:, None] * jnp.ones((17, 3))
    out = simulation.map_workers(lambda a, s: a * s, per_worker, 2.0, mesh)
    np.testing.assert_allclose(out, 2.0 * per_worker)
    # per-worker gradients w.r.t. a shared (replicated) argument must not be summed
    grads = simulation.map_workers(
        lambda a, s: jax.grad(lambda v: jnp.sum(a * v))(s), per_worker, jnp.ones(3), mesh
    )
    np.testing.assert_allclose(grads, per_worker)


@pytest.mark.devices(8)
def test_explicit_mesh_is_rejected():
    mesh = jax.make_mesh((8,), ("workers",), axis_types=(AxisType.Explicit,))
    with pytest.raises(ValueError, match="Auto"):
        simulation.map_workers(lambda a, s: a, jnp.ones((17, 2)), 0.0, mesh)
