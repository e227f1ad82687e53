"""Bad input, one row per argument of every public ``jaxlab.rl`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row)."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax.training.train_state import TrainState

from jaxlab import rl
from tests.bad_inputs import KEY, NAN, Case, case_id, check

H6 = jax.random.normal(KEY, (6, 3))
QV = jnp.array([[0.0, 2.0, 1.0]])
VQ = rl.init_vq(KEY, 3, 3)
MAZE = rl.make_point_maze()
PPO_NET = rl.ActorCritic(num_actions=3, hidden=(4,))
PPO_PARAMS = PPO_NET.init(KEY, jnp.zeros((1, 2)))
PPO_BATCH = rl.PPOBatch(
    jnp.zeros((4, 2)),
    jnp.zeros(4, jnp.int32),
    jnp.full(4, -1.1),
    jnp.arange(4.0),
    jnp.ones(4),
    jnp.zeros((4, 3)),
    jnp.zeros(4),
)
PPO_STATE = TrainState.create(apply_fn=PPO_NET.apply, params=PPO_PARAMS, tx=optax.sgd(0.1))
Q_NET = rl.QNetwork(num_actions=2, hidden=(4,))
Q_PARAMS = Q_NET.init(KEY, jnp.zeros((1, 3)))
DQN_BATCH = rl.DQNBatch(
    jnp.zeros((4, 3)), jnp.zeros(4, jnp.int32), jnp.zeros(4), jnp.zeros(4), jnp.zeros((4, 3))
)
DQN_STATE = rl.DQNState.create(
    apply_fn=Q_NET.apply, params=Q_PARAMS, tx=optax.sgd(0.1), target_params=Q_PARAMS
)
LVQ = rl.LandmarkVQ(latent=3, code_dim=2, hidden=(4,))
LVQ_PARAMS = LVQ.init(KEY, H6)
LWM = rl.LatentWorldModel(obs_dim=2, num_actions=3, latent=4, hidden=4, ensemble_size=2)
RSSM_M = rl.RSSM(obs_dim=2, num_actions=3, deter=4, stoch=2, hidden=4, embed_dim=4, ensemble_size=2)
OBS = jnp.zeros((2, 3, 2))
ACTS = jnp.zeros((2, 2), jnp.int32)
MLP_FN = lambda p, x: x[..., :1] * 0.0  # noqa: E731
IDM_FN = lambda p, x: jnp.zeros(x.shape[:-1] + (3,))  # noqa: E731
REPLAY = rl.replay_init({"x": jnp.zeros((5, 2))}, 4)
POLICY = lambda h, k: (h, jnp.zeros(h.shape[:-1]), jnp.zeros(h.shape[:-1]))  # noqa: E731
TRANS = lambda h, a, k: h  # noqa: E731

CASES = [
    Case("rl.gae", "rewards", lambda: rl.gae(jnp.ones((2, 2)), jnp.ones((2, 2)), jnp.zeros(3))),
    Case("rl.gae", "discounts", lambda: rl.gae(jnp.ones(3), jnp.full(3, 1.5), jnp.zeros(4))),
    Case("rl.gae", "values", lambda: rl.gae(jnp.ones(3), jnp.ones(3), jnp.zeros(3))),
    Case("rl.gae", "lambda_", lambda: rl.gae(jnp.ones(3), jnp.ones(3), jnp.zeros(4), -0.5)),
    Case(
        "rl.lambda_returns",
        "next_values",
        lambda: rl.lambda_returns(jnp.ones(3), jnp.ones(3), jnp.zeros(4)),
    ),
    Case(
        "rl.lambda_returns",
        "lambda_",
        lambda: rl.lambda_returns(jnp.ones(3), jnp.ones(3), jnp.zeros(3), 1.5),
    ),
    Case(
        "rl.lambda_returns",
        "rewards",
        lambda: rl.lambda_returns(jnp.ones(()), jnp.ones(3), jnp.zeros(3)),
    ),
    Case(
        "rl.lambda_returns",
        "discounts",
        lambda: rl.lambda_returns(jnp.ones(3), jnp.ones(2), jnp.zeros(3)),
    ),
    Case("rl.return_scale", "returns", lambda: rl.return_scale(jnp.zeros(0))),
    Case(
        "rl.actor_critic_loss",
        "values",
        lambda: rl.actor_critic_loss(
            jnp.ones((3, 2)), jnp.ones((3, 2)), jnp.ones((3, 2)), jnp.ones((3, 2))
        ),
    ),
    Case(
        "rl.actor_critic_loss",
        "discount",
        lambda: rl.actor_critic_loss(
            jnp.ones((3, 2)), jnp.ones((4, 2)), jnp.ones((3, 2)), jnp.ones((3, 2)), discount=1.5
        ),
    ),
    Case(
        "rl.actor_critic_loss",
        "ent_coef",
        lambda: rl.actor_critic_loss(
            jnp.ones((3, 2)), jnp.ones((4, 2)), jnp.ones((3, 2)), jnp.ones((3, 2)), ent_coef=-1.0
        ),
    ),
    Case("rl.imagine", "horizon", lambda: rl.imagine(TRANS, POLICY, H6, KEY, 0)),
    Case("rl.imagine", "key", lambda: rl.imagine(TRANS, POLICY, H6, 0, 3)),
    Case("rl.imagine", "transition", lambda: rl.imagine(None, POLICY, H6, KEY, 3)),
    Case("rl.imagine", "policy", lambda: rl.imagine(TRANS, None, H6, KEY, 3)),
    Case(
        "rl.ppo_loss",
        "clip_eps",
        lambda: rl.ppo_loss(PPO_PARAMS, PPO_NET.apply, PPO_BATCH, clip_eps=-0.1),
    ),
    Case(
        "rl.ppo_loss",
        "vf_coef",
        lambda: rl.ppo_loss(PPO_PARAMS, PPO_NET.apply, PPO_BATCH, vf_coef=-1.0),
    ),
    Case(
        "rl.ppo_loss",
        "guide_coef",
        lambda: rl.ppo_loss(PPO_PARAMS, PPO_NET.apply, PPO_BATCH, guide_coef=-1.0),
    ),
    Case("rl.ppo_loss", "batch", lambda: rl.ppo_loss(PPO_PARAMS, PPO_NET.apply, (1, 2))),
    Case("rl.ppo_loss", "apply_fn", lambda: rl.ppo_loss(PPO_PARAMS, None, PPO_BATCH)),
    Case(
        "rl.ppo_update",
        "num_minibatches",
        lambda: rl.ppo_update(PPO_STATE, PPO_BATCH, KEY, num_minibatches=3),
    ),
    Case(
        "rl.ppo_update",
        "num_epochs",
        lambda: rl.ppo_update(PPO_STATE, PPO_BATCH, KEY, num_epochs=0),
    ),
    Case("rl.ppo_update", "key", lambda: rl.ppo_update(PPO_STATE, PPO_BATCH, 0)),
    Case("rl.policy_distribution", "pi_params", lambda: rl.policy_distribution((jnp.ones(2),))),
    Case("rl.epsilon_greedy", "epsilon", lambda: rl.epsilon_greedy(QV, KEY, 1.5)),
    Case("rl.epsilon_greedy", "q_values", lambda: rl.epsilon_greedy(jnp.ones(1), KEY, 0.1)),
    Case("rl.epsilon_greedy", "key", lambda: rl.epsilon_greedy(QV, 3, 0.1)),
    Case("rl.epsilon_schedule", "start", lambda: rl.epsilon_schedule(start=2.0)),
    Case("rl.epsilon_schedule", "end", lambda: rl.epsilon_schedule(end=-0.1)),
    Case("rl.epsilon_schedule", "steps", lambda: rl.epsilon_schedule(steps=0)),
    Case(
        "rl.dqn_loss",
        "discount",
        lambda: rl.dqn_loss(Q_PARAMS, Q_PARAMS, Q_NET.apply, DQN_BATCH, discount=1.5),
    ),
    Case(
        "rl.dqn_loss",
        "huber_delta",
        lambda: rl.dqn_loss(Q_PARAMS, Q_PARAMS, Q_NET.apply, DQN_BATCH, huber_delta=0.0),
    ),
    Case(
        "rl.dqn_loss",
        "batch",
        lambda: rl.dqn_loss(
            Q_PARAMS, Q_PARAMS, Q_NET.apply, DQN_BATCH._replace(actions=jnp.zeros(4))
        ),
    ),
    Case("rl.dqn_loss", "apply_fn", lambda: rl.dqn_loss(Q_PARAMS, Q_PARAMS, None, DQN_BATCH)),
    Case("rl.dqn_update", "tau", lambda: rl.dqn_update(DQN_STATE, DQN_BATCH, tau=1.5)),
    Case(
        "rl.dqn_update",
        "target_period",
        lambda: rl.dqn_update(DQN_STATE, DQN_BATCH, target_period=0),
    ),
    Case("rl.dqn_update", "discount", lambda: rl.dqn_update(DQN_STATE, DQN_BATCH, discount=-1.0)),
    Case(
        "rl.dqn_update",
        "batch",
        lambda: rl.dqn_update(DQN_STATE, DQN_BATCH._replace(rewards=jnp.zeros(3))),
    ),
    Case("rl.dqn_update", "state", lambda: rl.dqn_update(PPO_STATE, DQN_BATCH)),
    Case("rl.target_update", "tau", lambda: rl.target_update(Q_PARAMS, Q_PARAMS, 0, tau=-0.5)),
    Case("rl.target_update", "period", lambda: rl.target_update(Q_PARAMS, Q_PARAMS, 0, period=0)),
    Case(
        "rl.target_update",
        "target_params",
        lambda: rl.target_update(Q_PARAMS, {"a": jnp.ones(2)}, 0),
    ),
    Case("rl.init_vq", "num_codes", lambda: rl.init_vq(KEY, 0, 3)),
    Case("rl.init_vq", "dim", lambda: rl.init_vq(KEY, 3, 0)),
    Case("rl.init_vq", "scale", lambda: rl.init_vq(KEY, 3, 3, scale=-1.0)),
    Case("rl.init_vq", "key", lambda: rl.init_vq(1, 3, 3)),
    Case("rl.quantize", "z_e", lambda: rl.quantize(jnp.ones((2, 2)), VQ.codebook)),
    Case("rl.quantize", "codebook", lambda: rl.quantize(H6, jnp.ones(3))),
    Case("rl.quantize", "beta", lambda: rl.quantize(H6, VQ.codebook, beta=-1.0)),
    Case("rl.ema_update", "decay", lambda: rl.ema_update(VQ, H6, jnp.zeros(6, int), decay=1.5)),
    Case("rl.ema_update", "eps", lambda: rl.ema_update(VQ, H6, jnp.zeros(6, int), eps=0.0)),
    Case("rl.ema_update", "codes", lambda: rl.ema_update(VQ, H6, jnp.full(6, 3))),
    Case("rl.ema_update", "z_e", lambda: rl.ema_update(VQ, H6[:, :2], jnp.zeros(6, int))),
    Case("rl.ema_update", "state", lambda: rl.ema_update((1, 2), H6, jnp.zeros(6, int))),
    Case(
        "rl.reseed_dead_codes",
        "min_count",
        lambda: rl.reseed_dead_codes(VQ, H6, KEY, min_count=-1.0),
    ),
    Case("rl.reseed_dead_codes", "key", lambda: rl.reseed_dead_codes(VQ, H6, 0)),
    Case("rl.reseed_dead_codes", "z_e", lambda: rl.reseed_dead_codes(VQ, jnp.ones(3), KEY)),
    Case("rl.reseed_dead_codes", "state", lambda: rl.reseed_dead_codes(None, H6, KEY)),
    Case("rl.nearest_landmark", "landmarks", lambda: rl.nearest_landmark(H6, jnp.ones((2, 2)))),
    Case("rl.nearest_landmark", "h", lambda: rl.nearest_landmark(jnp.ones(3), H6)),
    Case("rl.highway_reward", "target", lambda: rl.highway_reward(H6, H6[:2])),
    Case("rl.highway_reward", "h", lambda: rl.highway_reward(jnp.ones(()), jnp.ones(()))),
    Case("rl.knn_particle_reward", "k", lambda: rl.knn_particle_reward(H6, k=0)),
    Case("rl.knn_particle_reward", "h", lambda: rl.knn_particle_reward(jnp.ones((1, 3)))),
    Case("rl.disagreement_reward", "predictions", lambda: rl.disagreement_reward(jnp.ones((1, 3)))),
    Case(
        "rl.landmark_curiosity",
        "num_landmarks",
        lambda: rl.landmark_curiosity(jnp.ones(3), jnp.zeros(3, int), 0),
    ),
    Case(
        "rl.landmark_curiosity",
        "starts",
        lambda: rl.landmark_curiosity(jnp.ones(3), jnp.array([0, 1, 5]), 2),
    ),
    Case(
        "rl.landmark_curiosity",
        "eps",
        lambda: rl.landmark_curiosity(jnp.ones(3), jnp.zeros(3, int), 2, eps=0.0),
    ),
    Case(
        "rl.landmark_curiosity",
        "returns",
        lambda: rl.landmark_curiosity(jnp.ones(2), jnp.zeros(3, int), 2),
    ),
    Case(
        "rl.temporal_distance_pairs",
        "trajectories",
        lambda: rl.temporal_distance_pairs(jnp.ones((1, 2, 3)), KEY),
    ),
    Case(
        "rl.temporal_distance_pairs",
        "num_positives",
        lambda: rl.temporal_distance_pairs(jnp.ones((3, 2, 3)), KEY, num_positives=0),
    ),
    Case(
        "rl.temporal_distance_pairs",
        "neg_factor",
        lambda: rl.temporal_distance_pairs(jnp.ones((3, 2, 3)), KEY, neg_factor=-1.0),
    ),
    Case(
        "rl.temporal_distance_pairs",
        "key",
        lambda: rl.temporal_distance_pairs(jnp.ones((3, 2, 3)), 0),
    ),
    Case("rl.focused_starts", "landmarks", lambda: rl.focused_starts(H6, jnp.ones(3))),
    Case("rl.focused_starts", "goals", lambda: rl.focused_starts(jnp.ones(3), H6)),
    Case(
        "rl.focused_starts",
        "candidates",
        lambda: rl.focused_starts(H6, H6, candidates=jnp.ones((2, 2)), key=KEY),
    ),
    Case("rl.focused_starts", "key", lambda: rl.focused_starts(H6, H6, candidates=H6, key=0)),
    Case(
        "rl.landmark_loss",
        "h",
        lambda: rl.landmark_loss(LVQ_PARAMS, LVQ, VQ.codebook[:, :2], jnp.ones((2, 5))),
    ),
    Case(
        "rl.landmark_loss",
        "beta",
        lambda: rl.landmark_loss(LVQ_PARAMS, LVQ, VQ.codebook[:, :2], H6, beta=-1.0),
    ),
    Case(
        "rl.landmark_loss",
        "codebook",
        lambda: rl.landmark_loss(LVQ_PARAMS, LVQ, jnp.ones((3, 5)), H6),
    ),
    Case(
        "rl.landmark_loss",
        "model",
        lambda: rl.landmark_loss(LVQ_PARAMS, None, VQ.codebook[:, :2], H6),
    ),
    Case("rl.expectile_loss", "tau", lambda: rl.expectile_loss(jnp.ones(3), tau=1.5)),
    Case("rl.expectile_loss", "diff", lambda: rl.expectile_loss(jnp.array([1j]))),
    Case(
        "rl.goal_value_loss",
        "gamma",
        lambda: rl.goal_value_loss({}, {}, MLP_FN, H6, H6, H6, gamma=1.0),
    ),
    Case(
        "rl.goal_value_loss",
        "reach_radius",
        lambda: rl.goal_value_loss({}, {}, MLP_FN, H6, H6, H6, reach_radius=-1.0),
    ),
    Case(
        "rl.goal_value_loss", "tau", lambda: rl.goal_value_loss({}, {}, MLP_FN, H6, H6, H6, tau=0.0)
    ),
    Case(
        "rl.goal_value_loss", "s_next", lambda: rl.goal_value_loss({}, {}, MLP_FN, H6, H6[:2], H6)
    ),
    Case("rl.goal_value_loss", "apply_fn", lambda: rl.goal_value_loss({}, {}, None, H6, H6, H6)),
    Case("rl.proposal_loss", "scale", lambda: rl.proposal_loss({}, IDM_FN, H6, H6, H6, 0.0)),
    Case("rl.proposal_loss", "g_sub", lambda: rl.proposal_loss({}, IDM_FN, H6, H6, H6[:2])),
    Case("rl.proposal_loss", "apply_fn", lambda: rl.proposal_loss({}, None, H6, H6, H6)),
    Case("rl.propose", "scale", lambda: rl.propose({}, IDM_FN, H6, H6, scale=-1.0)),
    Case("rl.propose", "g_sub", lambda: rl.propose({}, IDM_FN, H6, H6[:2])),
    Case("rl.propose", "apply_fn", lambda: rl.propose({}, None, H6, H6)),
    Case("rl.idm_loss", "actions", lambda: rl.idm_loss({}, IDM_FN, H6, H6, jnp.zeros(6))),
    Case("rl.idm_loss", "s_next", lambda: rl.idm_loss({}, IDM_FN, H6, H6[:2], jnp.zeros(6, int))),
    Case("rl.idm_loss", "scale", lambda: rl.idm_loss({}, IDM_FN, H6, H6, jnp.zeros(6, int), 0.0)),
    Case("rl.idm_loss", "apply_fn", lambda: rl.idm_loss({}, None, H6, H6, jnp.zeros(6, int))),
    Case("rl.ensemble_disagreement", "logits", lambda: rl.ensemble_disagreement(jnp.ones(3))),
    Case("rl.pessimism_weight", "beta", lambda: rl.pessimism_weight(jnp.ones(3), -1.0)),
    Case("rl.pessimism_weight", "u", lambda: rl.pessimism_weight(jnp.array([NAN]), 1.0), "nan"),
    Case(
        "rl.select_subgoal",
        "candidates",
        lambda: rl.select_subgoal(
            jnp.ones(3), jnp.ones(3), 0.0, jnp.ones((2, 1)), jnp.ones(1), -1.0
        ),
    ),
    Case(
        "rl.select_subgoal",
        "goal",
        lambda: rl.select_subgoal(
            jnp.ones(3), jnp.ones(3), 0.0, jnp.ones((3, 1)), jnp.ones(2), -1.0
        ),
    ),
    Case(
        "rl.select_subgoal",
        "v_sg",
        lambda: rl.select_subgoal(
            jnp.ones(3), jnp.ones(3), jnp.ones(3), jnp.ones((3, 1)), jnp.ones(1), -1.0
        ),
    ),
    Case(
        "rl.select_subgoal",
        "min_value",
        lambda: rl.select_subgoal(
            jnp.ones(3), jnp.ones(3), 0.0, jnp.ones((3, 1)), jnp.ones(1), NAN
        ),
    ),
    Case(
        "rl.kl_balance",
        "alpha",
        lambda: rl.kl_balance((jnp.zeros(2), jnp.ones(2)), (jnp.zeros(2), jnp.ones(2)), 1.5),
    ),
    Case(
        "rl.kl_balance",
        "free_nats",
        lambda: rl.kl_balance(
            (jnp.zeros(2), jnp.ones(2)), (jnp.zeros(2), jnp.ones(2)), free_nats=-1.0
        ),
    ),
    Case(
        "rl.kl_balance",
        "prior",
        lambda: rl.kl_balance((jnp.zeros(2), jnp.ones(2)), (jnp.zeros(3), jnp.ones(3))),
    ),
    Case(
        "rl.kl_balance",
        "post",
        lambda: rl.kl_balance((jnp.zeros(2), -jnp.ones(2)), (jnp.zeros(2), jnp.ones(2))),
    ),
    Case("rl.gaussian", "std", lambda: rl.gaussian(jnp.zeros(2), jnp.ones(3))),
    Case("rl.gaussian", "mean", lambda: rl.gaussian(jnp.zeros(()), jnp.ones(()))),
    Case(
        "rl.rssm_loss",
        "rewards",
        lambda: rl.rssm_loss({}, RSSM_M, OBS, ACTS, KEY, rewards=jnp.ones(2)),
    ),
    Case("rl.rssm_loss", "obs", lambda: rl.rssm_loss({}, RSSM_M, OBS[0], ACTS, KEY)),
    Case("rl.rssm_loss", "actions", lambda: rl.rssm_loss({}, RSSM_M, OBS, ACTS[:, :1], KEY)),
    Case("rl.rssm_loss", "key", lambda: rl.rssm_loss({}, RSSM_M, OBS, ACTS, 0)),
    Case(
        "rl.rssm_loss", "kl_scale", lambda: rl.rssm_loss({}, RSSM_M, OBS, ACTS, KEY, kl_scale=-1.0)
    ),
    Case("rl.rssm_loss", "alpha", lambda: rl.rssm_loss({}, RSSM_M, OBS, ACTS, KEY, alpha=2.0)),
    Case(
        "rl.rssm_loss",
        "free_nats",
        lambda: rl.rssm_loss({}, RSSM_M, OBS, ACTS, KEY, free_nats=-1.0),
    ),
    Case("rl.rssm_loss", "model", lambda: rl.rssm_loss({}, None, OBS, ACTS, KEY)),
    Case("rl.world_model_loss", "obs", lambda: rl.world_model_loss({}, LWM, OBS[0], ACTS)),
    Case(
        "rl.world_model_loss",
        "actions",
        lambda: rl.world_model_loss({}, LWM, OBS, ACTS.astype(float)),
    ),
    Case("rl.world_model_loss", "model", lambda: rl.world_model_loss({}, None, OBS, ACTS)),
    Case("rl.replay_init", "capacity", lambda: rl.replay_init({"x": jnp.zeros((5, 2))}, 0)),
    Case("rl.replay_init", "example", lambda: rl.replay_init({}, 4)),
    Case("rl.replay_add", "segments", lambda: rl.replay_add(REPLAY, {"y": jnp.zeros((1, 5, 2))})),
    Case("rl.replay_add", "buffer", lambda: rl.replay_add(None, {"x": jnp.zeros((1, 5, 2))})),
    Case("rl.replay_sample", "length", lambda: rl.replay_sample(REPLAY, KEY, 2, 6)),
    Case("rl.replay_sample", "batch_size", lambda: rl.replay_sample(REPLAY, KEY, 0, 2)),
    Case("rl.replay_sample", "key", lambda: rl.replay_sample(REPLAY, 0, 2, 2)),
    Case("rl.replay_sample", "buffer", lambda: rl.replay_sample((), KEY, 2, 2)),
    Case("rl.rooms_layout", "rooms_per_side", lambda: rl.rooms_layout(0)),
    Case("rl.rooms_layout", "room", lambda: rl.rooms_layout(2, room=0)),
    Case("rl.layout_array", "layout", lambda: rl.layout_array("#..\n#")),
    Case("rl.cell_distances", "walls", lambda: rl.cell_distances(np.ones(3))),
    Case("rl.room_cells", "rooms", lambda: rl.room_cells(2, 3, [(2, 0)])),
    Case("rl.room_cells", "rooms_per_side", lambda: rl.room_cells(0, 3, [(0, 0)])),
    Case("rl.room_cells", "room", lambda: rl.room_cells(2, 0, [(0, 0)])),
    Case("rl.room_of", "cells", lambda: rl.room_of(np.ones((3, 2)) * 0.5, 3)),
    Case("rl.room_of", "room", lambda: rl.room_of(np.ones((3, 2), int), 0)),
    Case("rl.make_point_maze", "step_size", lambda: rl.make_point_maze(step_size=1.5)),
    Case("rl.make_point_maze", "num_actions", lambda: rl.make_point_maze(num_actions=1)),
    Case("rl.make_point_maze", "layout", lambda: rl.make_point_maze("bogus")),
    Case("rl.make_point_maze", "noise", lambda: rl.make_point_maze(noise=-0.1)),
    Case("rl.make_point_maze", "goal_radius", lambda: rl.make_point_maze(goal_radius=0.0)),
    Case("rl.make_point_maze", "max_steps", lambda: rl.make_point_maze(max_steps=0)),
    Case("rl.make_point_maze", "start_cells", lambda: rl.make_point_maze(start_cells=[(0, 0)])),
    Case("rl.make_point_maze", "goal_cells", lambda: rl.make_point_maze(goal_cells=[])),
    Case("rl.make_grid_rooms", "max_steps", lambda: rl.make_grid_rooms(max_steps=0)),
    Case("rl.make_grid_rooms", "obs_type", lambda: rl.make_grid_rooms(obs_type="pixels")),
    Case("rl.make_grid_rooms", "layout", lambda: rl.make_grid_rooms("bogus")),
    Case("rl.make_grid_rooms", "start_cells", lambda: rl.make_grid_rooms(start_cells=[(0, 0)])),
    Case("rl.make_grid_rooms", "goal_cells", lambda: rl.make_grid_rooms(goal_cells=[(0, 0)])),
    Case(
        "rl.shortest_path_direction",
        "pos",
        lambda: rl.shortest_path_direction(
            MAZE, rl.cell_distances(MAZE.walls), jnp.ones(3), jnp.ones(2)
        ),
    ),
    Case(
        "rl.shortest_path_direction",
        "dist",
        lambda: rl.shortest_path_direction(MAZE, jnp.ones((2, 2)), jnp.ones(2), jnp.ones(2)),
    ),
    Case(
        "rl.shortest_path_direction",
        "env",
        lambda: rl.shortest_path_direction(None, jnp.ones((2, 2)), jnp.ones(2), jnp.ones(2)),
    ),
    Case(
        "rl.shortest_path_direction",
        "goal",
        lambda: rl.shortest_path_direction(
            MAZE, rl.cell_distances(MAZE.walls), jnp.ones(2), jnp.ones(())
        ),
    ),
    # Flax modules and environment classes: sizes checked when built.
    Case("rl.ActorCritic", "num_actions", lambda: rl.ActorCritic(num_actions=1)),
    Case("rl.ActorCritic", "action_dim", lambda: rl.ActorCritic(action_dim=-1)),
    Case("rl.ActorCritic", "hidden", lambda: rl.ActorCritic(hidden=(0,))),
    Case("rl.QNetwork", "num_actions", lambda: rl.QNetwork(num_actions=0)),
    Case("rl.QNetwork", "hidden", lambda: rl.QNetwork(num_actions=2, hidden=(-1,))),
    Case("rl.LandmarkVQ", "latent", lambda: rl.LandmarkVQ(latent=0)),
    Case("rl.LandmarkVQ", "code_dim", lambda: rl.LandmarkVQ(latent=2, code_dim=0)),
    Case("rl.LandmarkVQ", "hidden", lambda: rl.LandmarkVQ(latent=2, hidden=(0,))),
    Case("rl.LatentWorldModel", "obs_dim", lambda: rl.LatentWorldModel(obs_dim=0, num_actions=2)),
    Case(
        "rl.LatentWorldModel", "num_actions", lambda: rl.LatentWorldModel(obs_dim=2, num_actions=0)
    ),
    Case(
        "rl.LatentWorldModel",
        "latent",
        lambda: rl.LatentWorldModel(obs_dim=2, num_actions=2, latent=0),
    ),
    Case(
        "rl.LatentWorldModel",
        "hidden",
        lambda: rl.LatentWorldModel(obs_dim=2, num_actions=2, hidden=0),
    ),
    Case(
        "rl.LatentWorldModel",
        "ensemble_size",
        lambda: rl.LatentWorldModel(obs_dim=2, num_actions=2, ensemble_size=0),
    ),
    Case("rl.RSSM", "obs_dim", lambda: rl.RSSM(obs_dim=0, num_actions=2)),
    Case("rl.RSSM", "num_actions", lambda: rl.RSSM(obs_dim=2, num_actions=0)),
    Case("rl.RSSM", "deter", lambda: rl.RSSM(obs_dim=2, num_actions=2, deter=0)),
    Case("rl.RSSM", "stoch", lambda: rl.RSSM(obs_dim=2, num_actions=2, stoch=0)),
    Case("rl.RSSM", "hidden", lambda: rl.RSSM(obs_dim=2, num_actions=2, hidden=0)),
    Case("rl.RSSM", "embed_dim", lambda: rl.RSSM(obs_dim=2, num_actions=2, embed_dim=0)),
    Case("rl.RSSM", "ensemble_size", lambda: rl.RSSM(obs_dim=2, num_actions=2, ensemble_size=0)),
    Case("rl.RSSM", "min_std", lambda: rl.RSSM(obs_dim=2, num_actions=2, min_std=-0.1)),
    Case(
        "rl.CellLayout",
        "walls",
        lambda: rl.CellLayout(np.ones(3), np.zeros((1, 2), int), np.zeros((1, 2), int)),
    ),
    Case(
        "rl.CellLayout",
        "start_cells",
        lambda: rl.CellLayout(MAZE.walls, np.zeros((1, 3), int), MAZE.goal_cells),
    ),
    Case(
        "rl.CellLayout",
        "goal_cells",
        lambda: rl.CellLayout(MAZE.walls, MAZE.start_cells, np.zeros(2, int)),
    ),
    Case(
        "rl.PointMaze",
        "step_size",
        lambda: rl.PointMaze(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, step_size=0.0),
    ),
    Case(
        "rl.PointMaze",
        "num_actions",
        lambda: rl.PointMaze(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, num_actions=1),
    ),
    Case(
        "rl.PointMaze",
        "noise",
        lambda: rl.PointMaze(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, noise=-1.0),
    ),
    Case(
        "rl.PointMaze",
        "goal_radius",
        lambda: rl.PointMaze(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, goal_radius=0.0),
    ),
    Case(
        "rl.PointMaze",
        "max_steps",
        lambda: rl.PointMaze(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, max_steps=0),
    ),
    Case(
        "rl.PointMaze", "walls", lambda: rl.PointMaze(np.ones(3), MAZE.start_cells, MAZE.goal_cells)
    ),
    Case(
        "rl.PointMaze",
        "start_cells",
        lambda: rl.PointMaze(MAZE.walls, np.zeros(3, int), MAZE.goal_cells),
    ),
    Case(
        "rl.PointMaze",
        "goal_cells",
        lambda: rl.PointMaze(MAZE.walls, MAZE.start_cells, np.zeros(3, int)),
    ),
    Case(
        "rl.GridRooms",
        "max_steps",
        lambda: rl.GridRooms(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, max_steps=0),
    ),
    Case(
        "rl.GridRooms",
        "obs_type",
        lambda: rl.GridRooms(MAZE.walls, MAZE.start_cells, MAZE.goal_cells, obs_type="x"),
    ),
    Case(
        "rl.GridRooms", "walls", lambda: rl.GridRooms(np.ones(3), MAZE.start_cells, MAZE.goal_cells)
    ),
    Case(
        "rl.GridRooms",
        "start_cells",
        lambda: rl.GridRooms(MAZE.walls, np.zeros(3, int), MAZE.goal_cells),
    ),
    Case(
        "rl.GridRooms",
        "goal_cells",
        lambda: rl.GridRooms(MAZE.walls, MAZE.start_cells, np.zeros(3, int)),
    ),
    Case(
        "rl.actor_critic_loss",
        "rewards",
        lambda: rl.actor_critic_loss(jnp.ones(3), jnp.ones(4), jnp.ones(3), jnp.ones(3)),
    ),
    Case(
        "rl.actor_critic_loss",
        "log_probs",
        lambda: rl.actor_critic_loss(
            jnp.ones((3, 2)), jnp.ones((4, 2)), jnp.ones((3, 1)), jnp.ones((3, 2))
        ),
    ),
    Case(
        "rl.actor_critic_loss",
        "entropies",
        lambda: rl.actor_critic_loss(
            jnp.ones((3, 2)), jnp.ones((4, 2)), jnp.ones((3, 2)), jnp.ones(2)
        ),
    ),
    Case(
        "rl.actor_critic_loss",
        "lambda_",
        lambda: rl.actor_critic_loss(
            jnp.ones((3, 2)), jnp.ones((4, 2)), jnp.ones((3, 2)), jnp.ones((3, 2)), lambda_=-0.1
        ),
    ),
    Case(
        "rl.dqn_update",
        "huber_delta",
        lambda: rl.dqn_update(DQN_STATE, DQN_BATCH, huber_delta=-1.0),
    ),
    Case("rl.goal_value_loss", "s", lambda: rl.goal_value_loss({}, {}, MLP_FN, H6[0], H6, H6)),
    Case("rl.goal_value_loss", "g", lambda: rl.goal_value_loss({}, {}, MLP_FN, H6, H6, H6[:, :2])),
    Case("rl.idm_loss", "s", lambda: rl.idm_loss({}, IDM_FN, H6[:, :2], H6, jnp.zeros(6, int))),
    Case("rl.imagine", "h0", lambda: rl.imagine(TRANS, POLICY, H6[0], KEY, 3)),
    Case(
        "rl.ppo_loss",
        "ent_coef",
        lambda: rl.ppo_loss(PPO_PARAMS, PPO_NET.apply, PPO_BATCH, ent_coef=-1.0),
    ),
    Case(
        "rl.ppo_loss",
        "bc",
        lambda: rl.ppo_loss(
            PPO_PARAMS, PPO_NET.apply, PPO_BATCH, guide_coef=1.0, bc=(jnp.zeros((2, 2)),)
        ),
    ),
    Case("rl.ppo_update", "state", lambda: rl.ppo_update(None, PPO_BATCH, KEY)),
    Case("rl.ppo_update", "batch", lambda: rl.ppo_update(PPO_STATE, (1, 2), KEY)),
    Case(
        "rl.ppo_update",
        "bc",
        lambda: rl.ppo_update(PPO_STATE, PPO_BATCH, KEY, guide_coef=1.0, bc=(1, 2, 3, 4)),
    ),
    Case(
        "rl.ppo_update", "loss_kwargs", lambda: rl.ppo_update(PPO_STATE, PPO_BATCH, KEY, bogus=1.0)
    ),
    Case("rl.proposal_loss", "s", lambda: rl.proposal_loss({}, IDM_FN, jnp.ones(3), H6, H6)),
    Case("rl.proposal_loss", "s_next", lambda: rl.proposal_loss({}, IDM_FN, H6, H6[:2], H6)),
    Case("rl.propose", "s", lambda: rl.propose({}, IDM_FN, jnp.ones(()), H6)),
    Case(
        "rl.select_subgoal",
        "v_sc",
        lambda: rl.select_subgoal(
            jnp.ones(2), jnp.ones(3), 0.0, jnp.ones((3, 1)), jnp.ones(1), -1.0
        ),
    ),
    Case(
        "rl.select_subgoal",
        "v_cg",
        lambda: rl.select_subgoal(
            jnp.ones(3), jnp.ones(2), 0.0, jnp.ones((3, 1)), jnp.ones(1), -1.0
        ),
    ),
    Case("rl.target_update", "step", lambda: rl.target_update(Q_PARAMS, Q_PARAMS, 0.5)),
]


# Dr. Strategy's agent (jaxlab.rl.drstrategy_agent): a tiny agent, built on first use.
DRS_CONFIG = rl.DrStrategyConfig(
    latent_dim=3,
    stoch_dim=2,
    world_model_hidden=4,
    ensemble_size=2,
    num_landmarks=2,
    code_dim=2,
    policy_hidden=4,
    episode_length=3,
)
DRS_REPLAY = rl.replay_init({"obs": jnp.zeros((3, 2)), "action": jnp.zeros(3, jnp.int32)}, 2)
DRS_BAD_FIELDS = {
    "obs_dim": 0,
    "num_actions": 0,
    "stochastic_latent": "yes",
    "latent_dim": 0,
    "stoch_dim": 0,
    "world_model_hidden": 0,
    "ensemble_size": 1,
    "num_landmarks": 0,
    "code_dim": 0,
    "policy_hidden": 0,
    "kl_balance": 1.5,
    "free_nats": -1.0,
    "kl_scale": -1.0,
    "codebook_decay": 1.0,
    "dead_code_min_count": -1.0,
    "reseed_every": 0,
    "model_batch": 0,
    "model_length": 1,
    "imagination_batch": 1,
    "horizon": 0,
    "discount": 1.5,
    "lambda_": -0.1,
    "entropy_coef": -1.0,
    "knn_weight": NAN,
    "knn_k": 0,
    "tdp_positives": 0,
    "tdp_neg_factor": -1.0,
    "episode_length": 0,
    "reach_mse": -1.0,
    "max_highway_steps": -1,
    "curiosity_rollouts": 0,
    "model_optimizer": "adam",
    "behaviour_optimizer": None,
}


@functools.cache
def drs_agent() -> Any:
    return rl.drstrategy_init(KEY, DRS_CONFIG)


def drs_episode(**bad: Any) -> Any:
    args = dict(
        agent=drs_agent(),
        config=DRS_CONFIG,
        env=MAZE,
        key=KEY,
        start=jnp.ones(2),
        goal=jnp.ones(2),
        landmark=jnp.array(0),
        mode=jnp.array(1),
    )
    return rl.drstrategy_episode(**{**args, **bad})


CASES += [
    *(
        Case("rl.DrStrategyConfig", name, lambda n=name, v=value: rl.DrStrategyConfig(**{n: v}))
        for name, value in DRS_BAD_FIELDS.items()
    ),
    Case("rl.drstrategy_networks", "config", lambda: rl.drstrategy_networks({})),
    Case("rl.drstrategy_init", "key", lambda: rl.drstrategy_init(0, DRS_CONFIG)),
    Case("rl.drstrategy_init", "config", lambda: rl.drstrategy_init(KEY, None)),
    Case(
        "rl.drstrategy_update",
        "agent",
        lambda: rl.drstrategy_update(None, DRS_CONFIG, DRS_REPLAY, KEY, 0),
    ),
    Case(
        "rl.drstrategy_update",
        "config",
        lambda: rl.drstrategy_update(drs_agent(), None, DRS_REPLAY, KEY, 0),
    ),
    Case(
        "rl.drstrategy_update",
        "replay",
        lambda: rl.drstrategy_update(drs_agent(), DRS_CONFIG, REPLAY, KEY, 0),
    ),
    Case(
        "rl.drstrategy_update",
        "key",
        lambda: rl.drstrategy_update(drs_agent(), DRS_CONFIG, DRS_REPLAY, 3, 0),
    ),
    Case(
        "rl.drstrategy_update",
        "step",
        lambda: rl.drstrategy_update(drs_agent(), DRS_CONFIG, DRS_REPLAY, KEY, 0.5),
    ),
    Case(
        "rl.drstrategy_landmark_states",
        "agent",
        lambda: rl.drstrategy_landmark_states({}, DRS_CONFIG),
    ),
    Case(
        "rl.drstrategy_landmark_states",
        "config",
        lambda: rl.drstrategy_landmark_states(drs_agent(), None),
    ),
    Case(
        "rl.drstrategy_landmark_of",
        "agent",
        lambda: rl.drstrategy_landmark_of(None, DRS_CONFIG, jnp.zeros((2, 5))),
    ),
    Case(
        "rl.drstrategy_landmark_of",
        "config",
        lambda: rl.drstrategy_landmark_of(drs_agent(), None, jnp.zeros((2, 5))),
    ),
    Case(
        "rl.drstrategy_landmark_of",
        "states",
        lambda: rl.drstrategy_landmark_of(drs_agent(), DRS_CONFIG, jnp.zeros((2, 3))),
    ),
    Case(
        "rl.drstrategy_encode",
        "agent",
        lambda: rl.drstrategy_encode(None, DRS_CONFIG, jnp.zeros(2)),
    ),
    Case(
        "rl.drstrategy_encode",
        "config",
        lambda: rl.drstrategy_encode(drs_agent(), None, jnp.zeros(2)),
    ),
    Case(
        "rl.drstrategy_encode",
        "observations",
        lambda: rl.drstrategy_encode(drs_agent(), DRS_CONFIG, jnp.zeros(3)),
    ),
    Case(
        "rl.drstrategy_decode",
        "agent",
        lambda: rl.drstrategy_decode(None, DRS_CONFIG, jnp.zeros(5)),
    ),
    Case(
        "rl.drstrategy_decode",
        "config",
        lambda: rl.drstrategy_decode(drs_agent(), None, jnp.zeros(5)),
    ),
    Case(
        "rl.drstrategy_decode",
        "states",
        lambda: rl.drstrategy_decode(drs_agent(), DRS_CONFIG, jnp.zeros(3, jnp.int32)),
    ),
    Case(
        "rl.drstrategy_filter",
        "agent",
        lambda: rl.drstrategy_filter(None, DRS_CONFIG, OBS, ACTS, KEY),
    ),
    Case(
        "rl.drstrategy_filter",
        "config",
        lambda: rl.drstrategy_filter(drs_agent(), None, OBS, ACTS, KEY),
    ),
    Case(
        "rl.drstrategy_filter",
        "observations",
        lambda: rl.drstrategy_filter(drs_agent(), DRS_CONFIG, OBS[0], ACTS, KEY),
    ),
    Case(
        "rl.drstrategy_filter",
        "actions",
        lambda: rl.drstrategy_filter(drs_agent(), DRS_CONFIG, OBS, ACTS[:, :1], KEY),
    ),
    Case(
        "rl.drstrategy_filter",
        "key",
        lambda: rl.drstrategy_filter(drs_agent(), DRS_CONFIG, OBS, ACTS, None),
    ),
    Case(
        "rl.drstrategy_curiosity", "agent", lambda: rl.drstrategy_curiosity(None, DRS_CONFIG, KEY)
    ),
    Case(
        "rl.drstrategy_curiosity", "config", lambda: rl.drstrategy_curiosity(drs_agent(), None, KEY)
    ),
    Case(
        "rl.drstrategy_curiosity",
        "key",
        lambda: rl.drstrategy_curiosity(drs_agent(), DRS_CONFIG, 7),
    ),
    Case("rl.drstrategy_episode", "agent", lambda: drs_episode(agent=None)),
    Case("rl.drstrategy_episode", "config", lambda: drs_episode(config=None)),
    Case("rl.drstrategy_episode", "env", lambda: drs_episode(env=None)),
    Case("rl.drstrategy_episode", "key", lambda: drs_episode(key=1)),
    Case("rl.drstrategy_episode", "start", lambda: drs_episode(start=jnp.ones(3))),
    Case("rl.drstrategy_episode", "goal", lambda: drs_episode(goal=jnp.ones((1, 2)))),
    Case("rl.drstrategy_episode", "landmark", lambda: drs_episode(landmark=jnp.array(2))),
    Case("rl.drstrategy_episode", "mode", lambda: drs_episode(mode=jnp.array(4))),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)
