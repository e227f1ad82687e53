"""The Byzantine paper's trainer (``jaxlab/trainers/byzantine.py``): a whole run against a
Python loop of ``byzantine_step``, a batch of runs against its runs one by one, and the
same batch split over a ``runs`` (× ``workers``) mesh of 8 devices."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab import robust
from jaxlab.robust import attacks, simulation
from jaxlab.train import make_mesh
from jaxlab.trainers import byzantine

M, F, B, D, C, N, STEPS = 7, 2, 3, 4, 3, 40, 5


def linear_spec(optimizer="momentum"):
    def init_params(key):
        return {"w": 0.1 * jax.random.normal(key, (D, C)), "b": jnp.zeros(C)}

    def predict(params, x):
        return x @ params["w"] + params["b"][None, :]

    def loss_fn(params, x, y):
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(predict(params, x), y))

    estimator, make_server, two_point = byzantine.worker_and_server(
        optimizer, momentum_beta=0.9, clip_norm=2.0, beta_floor=0.01, gamma_floor=0.01
    )
    return byzantine.RunSpec(
        init_params=init_params,
        loss_fn=loss_fn,
        predict_fn=predict,
        estimator=estimator,
        make_server=make_server,
        aggregators=(
            lambda x, k: robust.mean(x),
            lambda x, k: robust.trimmed_mean(x, num_byzantine=F),
        ),
        attacks=(
            attacks.no_attack,
            attacks.label_flip,
            functools.partial(attacks.a_little_is_enough, num_workers=M, num_byzantine=F),
        ),
        attack_flips_labels=(False, True, False),
        num_workers=M,
        num_byzantine=F,
        batch_size=B,
        num_steps=STEPS,
        num_classes=C,
        two_point=two_point,
    )


def data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D)).astype(np.float32)
    y = rng.integers(0, C, size=N).astype(np.int32)
    return (x, y), (x[:10], y[:10])


@pytest.mark.parametrize("optimizer", ["momentum", "mu2sgd"])
def test_run_equals_a_python_loop_of_steps(optimizer):
    spec = linear_spec(optimizer)
    train, test = data()
    key, agg, att, lr = jax.random.key(3), 1, 2, 0.2
    out = jax.jit(lambda k: byzantine.simulate_run(spec, k, agg, att, lr, train, test))(key)
    # The same run by hand: per-step sampling and one jitted step per iteration.
    init_key, data_key = jax.random.split(key)
    server = spec.make_server(lr)
    state = simulation.init_state(spec.init_params(init_key), spec.estimator, server, M)
    step = jax.jit(
        lambda s, xb, yb, k: simulation.byzantine_step(
            s,
            xb,
            yb,
            k,
            loss_fn=spec.loss_fn,
            estimator=spec.estimator,
            server=server,
            aggregate=spec.aggregators[agg],
            attack=spec.attacks[att],
            num_byzantine=F,
            num_classes=C,
            two_point=spec.two_point,
        )
    )
    losses = []
    for t in range(STEPS):
        sample_key, agg_key = jax.random.split(jax.random.fold_in(data_key, t))
        idx = np.asarray(jax.random.randint(sample_key, (M, B), 0, N))
        state, metrics = step(state, train[0][idx], train[1][idx], agg_key)
        losses.append(float(metrics["loss"]))
    np.testing.assert_allclose(out["loss"], losses, rtol=1e-5)
    logits = np.asarray(spec.predict_fn(state.params, test[0]))
    np.testing.assert_allclose(out["accuracy"], np.mean(logits.argmax(-1) == test[1]))


@pytest.mark.parametrize("method", ["vmap", "map", "loop"])
def test_batch_equals_runs_one_by_one(method):
    spec = linear_spec()
    train, test = data(1)
    lanes = dict(
        seeds=[0, 1, 2],
        aggregator_indices=[0, 1, 1],
        attack_indices=[0, 1, 2],
        learning_rates=[0.1, 0.2, 0.3],
    )
    out = byzantine.run_batch(spec, train=train, test=test, method=method, **lanes)
    chex.assert_shape(out["accuracy"], (3,))
    chex.assert_shape(out["loss"], (3, STEPS))
    one = jax.jit(lambda k, g, a, lr: byzantine.simulate_run(spec, k, g, a, lr, train, test))
    for i in range(3):
        ref = one(
            jax.random.key(lanes["seeds"][i]),
            lanes["aggregator_indices"][i],
            lanes["attack_indices"][i],
            jnp.float32(lanes["learning_rates"][i]),
        )
        np.testing.assert_allclose(out["loss"][i], ref["loss"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["accuracy"][i], ref["accuracy"])


def test_shared_aggregator_index_equals_per_run_indices():
    spec = linear_spec()
    train, test = data(2)
    lanes = dict(seeds=[0, 1], attack_indices=[0, 2], learning_rates=[0.1, 0.3])
    shared = byzantine.run_batch(spec, aggregator_indices=1, train=train, test=test, **lanes)
    per_run = byzantine.run_batch(spec, aggregator_indices=[1, 1], train=train, test=test, **lanes)
    np.testing.assert_allclose(shared["loss"], per_run["loss"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(shared["accuracy"], per_run["accuracy"])


@pytest.mark.parametrize("layout", [{"runs": -1}, {"runs": 2, "workers": -1}])
def test_runs_split_over_a_mesh_equal_unsharded(layout):
    spec = linear_spec("mu2sgd")
    train, test = data(3)
    lanes = dict(
        seeds=[0, 1, 2],
        aggregator_indices=1,
        attack_indices=[0, 1, 2],
        learning_rates=[0.1, 0.2, 0.3],
    )  # 3 runs: padded over the runs axis
    ref = byzantine.run_batch(spec, train=train, test=test, **lanes)
    out = byzantine.run_batch(spec, train=train, test=test, mesh=make_mesh(layout), **lanes)
    np.testing.assert_allclose(out["loss"], ref["loss"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["accuracy"], ref["accuracy"])


def test_bad_inputs():
    spec = linear_spec()
    train, test = data()
    with pytest.raises(ValueError, match="equal lengths"):
        byzantine.run_batch(spec, [0, 1], [0], [0, 0], [0.1, 0.1], train, test)
    with pytest.raises(ValueError, match="optimizer"):
        byzantine.worker_and_server(
            "adam", momentum_beta=0.9, clip_norm=2.0, beta_floor=0.01, gamma_floor=0.01
        )


def test_tfds_dataset_is_normalised_as_the_reference_and_augmented_per_minibatch(tmp_path):
    from jaxlab.data.streaming import mock_datasets

    with mock_datasets(12):
        (x, y), (xt, yt) = byzantine.load_dataset("cifar10")
    assert x.shape == (12, 32, 32, 3) and xt.shape == (12, 32, 32, 3) and y.dtype == np.int32
    lo = (0 - np.array(byzantine.REFERENCE_STATS["cifar10"][0])) / np.array(
        byzantine.REFERENCE_STATS["cifar10"][1]
    )
    assert np.all(x >= lo.astype(np.float32) - 1e-5)
    spec = byzantine.make_run_spec(
        optimizer="momentum",
        cells=[("cwtm", "ctma")],
        attack_names=["none"],
        image_shape=(32, 32, 3),
        **{
            **dict(
                model="cnn",
                hidden=(8,),
                num_workers=5,
                num_byzantine=1,
                batch_size=2,
                num_steps=2,
                features=(4,),
                kernel_size=3,
                ipm_epsilon=0.5,
                clip_norm=2.0,
                momentum_beta=0.9,
                beta_floor=0.01,
                gamma_floor=0.01,
            ),
            "crop_padding": 2,
            "flip": True,
        },
    )
    out = byzantine.run_batch(spec, [0], 0, [0], [0.1], (x, y % 10), (xt, yt % 10))
    assert out["loss"].shape == (1, 2) and np.isfinite(out["loss"]).all()
    pieces = {"momentum-cwtm+ctma": out}
    byzantine.checkpoint_pieces(str(tmp_path), pieces)
    byzantine.checkpoint_pieces(str(tmp_path), pieces)  # a resumed run: already saved
    assert any((tmp_path / "checkpoints").iterdir())
