"""ADR-GD and its projected-gradient baseline against numpy, a dense grid and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.optim import (
    adr_gd,
    projected_gradient_ascent,
    random_relu_mlp,
    reference_random_relu_mlp,
    relu_mlp,
)


def _np_mlp(params, x):
    h = np.asarray(x, np.float64)
    for w, b in params[:-1]:
        h = np.maximum(h @ np.asarray(w, np.float64) + np.asarray(b, np.float64), 0.0)
    w, b = params[-1]
    return (h @ np.asarray(w, np.float64) + np.asarray(b, np.float64))[..., 0]


def _np_grad(params, x):
    # ∇f(x) of a ReLU MLP in closed form: product of the active-unit-masked weights.
    h, jac = np.asarray(x, np.float64), np.eye(len(x))
    for w, b in params[:-1]:
        z = h @ np.asarray(w, np.float64) + np.asarray(b, np.float64)
        jac = jac @ np.asarray(w, np.float64) * (z > 0)
        h = np.maximum(z, 0.0)
    return (jac @ np.asarray(params[-1][0], np.float64))[:, 0]


def _nets(seed, sizes, count):
    keys = jax.random.split(jax.random.key(seed), count)
    return jax.vmap(lambda k: random_relu_mlp(k, sizes))(keys)


def _take(nets, i):
    return [(w[i], b[i]) for w, b in nets]


def test_relu_mlp_matches_numpy():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        params = random_relu_mlp(jax.random.key(3), [5, 7, 6, 1])
        x = np.random.default_rng(0).uniform(-1, 1, 5)
        np.testing.assert_allclose(relu_mlp(params, x), _np_mlp(params, x), rtol=1e-5)


def test_random_relu_mlp_law():
    w, b = random_relu_mlp(jax.random.key(0), [200, 300, 1])[0]
    w = np.asarray(w)
    assert np.abs(w).max() <= 1.0
    assert abs((w > 0).mean() - 0.5) < 0.01  # random signs
    assert abs(np.abs(w).mean() - 0.5) < 0.01  # |w| ~ U(0, 1)


def test_reference_generator_replays_numpy_stream():
    params = reference_random_relu_mlp(jax.random.key(7), [3, 4, 1])
    rng = np.random.RandomState(7)
    for w, b in params:
        for arr in (w, b):
            probs = rng.uniform(0, 1, arr.shape)
            mag = rng.uniform(0, 1, arr.shape)
            np.testing.assert_array_equal(arr, np.where(probs > 0.5, -mag, mag))


def test_projected_gradient_ascent_matches_numpy_loop():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        params = _take(_nets(1, [3, 8, 1], 1), 0)
        x = np.zeros(3)
        values = []
        for _ in range(20):
            g = _np_grad(params, x)
            x = np.clip(x + 0.3 * g / np.linalg.norm(g), -1.0, 1.0)
            values.append(_np_mlp(params, x))
        res = projected_gradient_ascent(params, jnp.zeros(3), num_steps=20, lr=0.3)
        np.testing.assert_allclose(res.values, values, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(res.best_value, max(values), rtol=1e-4)


def test_first_step_follows_the_true_gradient():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        # σ starts on x0's region and the penalty is 0 there, so the normalised surrogate
        # gradient is ∇f(x0)/‖∇f(x0)‖: the first step equals normalised gradient ascent.
        params = _take(_nets(2, [4, 16, 16, 1], 1), 0)
        x0 = np.array([0.1, -0.2, 0.3, 0.0])
        res = adr_gd(params, x0, num_steps=1, lr=0.05)
        g = _np_grad(params, x0)
        x1 = np.clip(x0 + 0.05 * g / np.linalg.norm(g), -1, 1)
        np.testing.assert_allclose(res.best_x, x1, atol=1e-5)
        np.testing.assert_allclose(res.best_value, _np_mlp(params, x1), rtol=1e-5)


def test_global_maximum_of_tiny_2d_networks():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        nets = _nets(1, [2, 8, 8, 1], 10)
        res = jax.jit(jax.vmap(lambda p: adr_gd(p, jnp.zeros(2), num_steps=300)))(nets)
        grid = np.linspace(-1, 1, 401)
        points = np.stack(np.meshgrid(grid, grid), -1).reshape(-1, 2)
        hits = 0
        for i in range(10):
            params = [(np.asarray(w), np.asarray(b)) for w, b in _take(nets, i)]
            global_max = _np_mlp(params, points).max()
            best = float(res.best_value[i])
            assert best <= global_max + 1e-2  # no value above the true maximum
            np.testing.assert_allclose(best, _np_mlp(params, res.best_x[i]), rtol=1e-4, atol=1e-5)
            hits += best >= global_max - 1e-2 * max(1.0, abs(global_max))
        assert hits >= 7, hits


def test_best_x_stays_in_the_box_and_vmap_matches_loop():
    nets = _nets(4, [6, 16, 16, 1], 3)
    lower = jnp.array([-0.5, 0.0, -1.0, 0.2, -0.1, -2.0])
    upper = jnp.array([0.5, 0.1, 1.0, 0.9, 0.1, 2.0])
    run = jax.jit(
        jax.vmap(
            lambda p: adr_gd(
                p, jnp.zeros(6), lower=lower, upper=upper, num_steps=200, reset_sigma_every=16
            )
        )
    )
    res = run(nets)
    assert bool(jnp.all((res.best_x >= lower[None]) & (res.best_x <= upper[None])))
    single = adr_gd(
        _take(nets, 1), jnp.zeros(6), lower=lower, upper=upper, num_steps=200, reset_sigma_every=16
    )
    np.testing.assert_allclose(res.values[1], single.values, rtol=1e-4, atol=1e-4)
    assert np.all(np.isfinite(res.values))


def test_adr_gd_beats_gradient_ascent_on_reference_network():
    params = reference_random_relu_mlp(jax.random.key(337550), [10, 64, 64, 1])
    adr = adr_gd(params, np.zeros(10), num_steps=1000)
    gd = projected_gradient_ascent(params, np.zeros(10), num_steps=1000)
    assert float(adr.best_value) > float(gd.best_value)


@pytest.mark.parametrize(
    "params, x0, kwargs, match",
    [
        (
            [(np.ones((2, 3)), np.zeros(3)), (np.ones((4, 1)), np.zeros(1))],
            np.zeros(2),
            {},
            "don't chain",
        ),
        (
            [(np.ones((2, 3)), np.zeros(3)), (np.ones((3, 2)), np.zeros(2))],
            np.zeros(2),
            {},
            "one output",
        ),
        ([(np.ones((2, 1)), np.zeros(2))], np.zeros(2), {}, "b must have shape"),
        ([(np.ones((2, 1)), np.zeros(1))], np.zeros(3), {}, "x0 must have shape"),
        (
            [(np.ones((2, 1)), np.zeros(1))],
            np.zeros(2),
            {"lower": 1.0, "upper": 0.0},
            "lower > upper",
        ),
        ([], np.zeros(2), {}, "at least one"),
    ],
)
def test_bad_inputs(params, x0, kwargs, match):
    for fn in (adr_gd, projected_gradient_ascent):
        with pytest.raises(ValueError, match=match):
            fn(params, x0, num_steps=2, **kwargs)
