"""MSCP-style planner kernels against NumPy references and closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.rl import cell_distances, make_point_maze, shortest_path_direction
from jaxlab.rl.mscp import (
    ensemble_disagreement,
    expectile_loss,
    goal_value_loss,
    idm_loss,
    pessimism_weight,
    proposal_loss,
    propose,
    select_subgoal,
)


def linear(params, x):
    return x @ params["w"] + params["b"][None]


def test_expectile_closed_form():
    d = np.array([-1.5, 0.0, 0.7])
    np.testing.assert_allclose(expectile_loss(d, 0.8), [0.2 * 2.25, 0.0, 0.8 * 0.49], rtol=1e-6)


def test_goal_value_loss_matches_numpy_and_grads():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(0)
        s, s1, g = (rng.normal(size=(8, 2)).astype(np.float32) for _ in range(3))
        g[0] = s1[0] + 0.01  # one reached goal: target 0
        p = {"w": rng.normal(size=(4, 1)).astype(np.float32), "b": np.zeros(1, np.float32)}
        pt = {"w": rng.normal(size=(4, 1)).astype(np.float32), "b": np.ones(1, np.float32)}
        loss = goal_value_loss(p, pt, linear, s, s1, g, gamma=0.9, reach_radius=0.1, tau=0.7)
        v = (np.concatenate([s, g], 1) @ p["w"])[:, 0]
        vn = (np.concatenate([s1, g], 1) @ pt["w"])[:, 0] + 1.0
        y = np.where(np.linalg.norm(s1 - g, axis=1) < 0.1, 0.0, -1.0 + 0.9 * vn)
        d = y - v
        want = np.mean(np.where(d < 0, 0.3, 0.7) * d**2)
        np.testing.assert_allclose(loss, want, rtol=1e-5)
        check_grads(
            lambda q: goal_value_loss(q, pt, linear, s, s1, g),
            (p,),
            order=1,
            modes=["rev"],
            atol=1e-2,
            rtol=1e-2,
        )
        with pytest.raises(ValueError, match="one shape"):
            goal_value_loss(p, pt, linear, s, s1, g[:3])


def test_proposal_roundtrip():
    # A "model" that outputs scale·(g − s) proposes exactly g, and has zero loss on s' = g.
    s = jnp.array([[0.0, 0.0], [1.0, -1.0]])
    g = jnp.array([[0.1, 0.2], [1.1, -1.0]])
    model = lambda p, x: 10.0 * (x[:, 2:] - x[:, :2])  # noqa: E731
    np.testing.assert_allclose(propose(None, model, s, g), g, atol=1e-6)
    assert float(proposal_loss(None, model, s, g, g)) < 1e-10
    np.testing.assert_allclose(
        proposal_loss(None, model, s, s, g),
        np.mean(np.sum((10 * np.asarray(g - s)) ** 2, 1)),
        rtol=1e-5,
    )


def select_numpy(v_sc, v_cg, v_sg, c, g, vmin):
    if v_sg >= vmin:
        return g
    ok = v_sc >= vmin
    if ok.any():
        return c[np.argmax(np.where(ok, v_cg, -np.inf))]
    return c[np.argmax(v_sc + v_cg)]


def test_select_subgoal_matches_numpy():
    rng = np.random.default_rng(1)
    f = jax.jit(jax.vmap(select_subgoal, in_axes=(0, 0, 0, None, 0, None)))
    v_sc, v_cg = -5 * rng.random((50, 7)), -5 * rng.random((50, 7))
    v_sg = -5 * rng.random(50)
    c, g = rng.normal(size=(7, 2)), rng.normal(size=(50, 2))
    got = f(v_sc, v_cg, v_sg, c, g, -1.0)
    for i in range(50):
        np.testing.assert_allclose(
            got[i], select_numpy(v_sc[i], v_cg[i], v_sg[i], c, g[i], -1.0), rtol=1e-6
        )
    with pytest.raises(ValueError, match="agree on M"):
        select_subgoal(v_sc[0], v_cg[0, :3], v_sg[0], c, g[0], -1.0)


def test_ensemble_disagreement_is_jensen_shannon():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    p_bar, u = ensemble_disagreement(jnp.log(p))
    m = p.mean(0)
    want = np.mean([np.sum(q * np.log(q / m)) for q in p])
    np.testing.assert_allclose(p_bar, m, rtol=1e-6)
    np.testing.assert_allclose(u, want, rtol=1e-5)
    _, u0 = ensemble_disagreement(jnp.log(jnp.array([p[0], p[0]])))
    assert abs(float(u0)) < 1e-6
    np.testing.assert_allclose(pessimism_weight(u, 2.0), np.exp(-2 * want), rtol=1e-5)
    with pytest.raises(ValueError, match=r"\[E, K\]"):
        ensemble_disagreement(jnp.zeros(3))


def test_idm_loss_is_cross_entropy():
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        rng = np.random.default_rng(2)
        s, s1 = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
        a = rng.integers(0, 4, 5)
        p = {"w": rng.normal(size=(4, 4)), "b": np.zeros(4)}
        logits = np.concatenate([s, 10 * (s1 - s)], 1) @ p["w"]
        logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        np.testing.assert_allclose(
            idm_loss(p, linear, s, s1, a), -logp[np.arange(5), a].mean(), rtol=1e-5
        )


def test_shortest_path_expert_reaches_goal():
    env = make_point_maze("four_rooms", start_cells=[(1, 1)], goal_cells=[(7, 7)], max_steps=200)
    dist = cell_distances(env.walls)
    state, _ = env.reset(jax.random.key(0))
    dirs = jnp.asarray(env.directions)
    step = jax.jit(
        lambda st, k: env.step(
            st, jnp.argmax(dirs @ shortest_path_direction(env, dist, st.pos, st.goal)), k
        )
    )
    for i in range(60):
        state, _, r, done, info = step(state, jax.random.key(i))
        if done:
            break
    assert bool(info["success"]) and i < 2 * 12 + 8
