"""The shared MLP (jaxlab.nn.mlp) against hand-written Dense stacks, and its users' trees."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.graph.models import node_mlp, reference_init
from jaxlab.nn.cnn import SmallMLP
from jaxlab.nn.mlp import MLP, Dropout, dropout

KEY = jax.random.key(0)
X = jax.random.normal(jax.random.key(1), (5, 6))


class _Stack(nn.Module):
    """The reference: Dense layers with flax's automatic names (Dense_0, ...)."""

    out: int
    hidden: tuple[int, ...]
    act: object = nn.relu

    @nn.compact
    def __call__(self, x):
        for h in self.hidden:
            x = self.act(nn.Dense(h)(x))
        return nn.Dense(self.out)(x)


def _numpy_forward(params, x, act):
    layers = sorted(params, key=lambda k: int(k.rsplit("_", 1)[1]))
    for name in layers[:-1]:
        x = act(x @ np.asarray(params[name]["kernel"]) + np.asarray(params[name]["bias"]))
    last = params[layers[-1]]
    return x @ np.asarray(last["kernel"]) + np.asarray(last["bias"])


@pytest.mark.parametrize(
    "act,np_act",
    [(nn.relu, lambda v: np.maximum(v, 0.0)), (nn.elu, lambda v: np.where(v > 0, v, np.expm1(v)))],
)
@pytest.mark.parametrize("hidden", [(), (7,), (4, 3)])
def test_mlp_matches_a_plain_dense_stack(act, np_act, hidden):
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        mlp = MLP(2, hidden, activation=act)
        params = mlp.init(KEY, X)
        reference = _Stack(2, hidden, act).init(KEY, X)
        assert jax.tree.structure(params) == jax.tree.structure(reference)
        assert all(
            jax.tree.leaves(jax.tree.map(lambda a, b: bool((a == b).all()), params, reference))
        )
        np.testing.assert_allclose(
            mlp.apply(params, X),
            _numpy_forward(params["params"], np.asarray(X), np_act),
            rtol=1e-5,
            atol=1e-6,
        )


def test_small_mlp_flattens_images_into_the_same_tree():
    images = jax.random.normal(KEY, (3, 4, 4, 1))
    params = SmallMLP(5, (6,)).init(KEY, images)
    reference = _Stack(5, (6,)).init(KEY, images.reshape(3, -1))
    assert all(jax.tree.leaves(jax.tree.map(lambda a, b: bool((a == b).all()), params, reference)))


class _NamedStack(nn.Module):
    """The node classifiers' reference: Dense layers named dense_0, ... with given inits."""

    hidden: tuple[int, ...]
    out: int
    reference: bool

    @nn.compact
    def __call__(self, x):
        kw = {}
        if self.reference:
            kw = dict(
                kernel_init=reference_init,
                bias_init=lambda k, s, d=jnp.float32: reference_init(k, (1, *s), d)[0],
            )
        for i, h in enumerate(self.hidden):
            x = nn.relu(nn.Dense(h, name=f"dense_{i}", **kw)(x))
        return nn.Dense(self.out, name=f"dense_{len(self.hidden)}", **kw)(x)


@pytest.mark.parametrize("scheme", ["default", "reference"])
def test_node_mlp_matches_a_named_dense_stack(scheme):
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        params = node_mlp((4,), 3, 0.5, scheme).init(KEY, X, train=False)
        reference = _NamedStack((4,), 3, scheme == "reference").init(KEY, X)
        assert sorted(params["params"]) == ["dense_0", "dense_1"]
        assert all(
            jax.tree.leaves(jax.tree.map(lambda a, b: bool((a == b).all()), params, reference))
        )


def test_node_mlp_drops_before_every_layer_only_when_training():
    mlp = node_mlp((8,), 2, 0.5)
    params = mlp.init(KEY, X, train=False)
    eval_out = mlp.apply(params, X, train=False)
    np.testing.assert_array_equal(eval_out, mlp.apply(params, X, train=False))
    a = mlp.apply(params, X, train=True, rngs={"dropout": jax.random.key(1)})
    b = mlp.apply(params, X, train=True, rngs={"dropout": jax.random.key(2)})
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, eval_out)


@pytest.mark.parametrize("rate", [0.5, 0.2])
def test_dropout_keeps_one_minus_rate_and_rescales(rate):
    x = jnp.ones((200, 64))
    out = np.asarray(dropout(KEY, x, rate))
    kept = out != 0
    assert abs(kept.mean() - (1 - rate)) < 0.02
    np.testing.assert_allclose(out[kept], 1.0 / (1.0 - rate), rtol=1e-6)
    assert Dropout(rate).apply({}, x, train=False) is x


@pytest.mark.parametrize("rate", [1.0, -0.1])
def test_bad_rates_raise(rate):
    with pytest.raises(ValueError, match="rate"):
        dropout(KEY, X, rate)
    with pytest.raises(ValueError, match="dropout"):
        MLP(2, (3,), dropout=rate).init(KEY, X)
