"""Reinforcement learning kernels: functional environments, PPO/DQN, planners, world models.

Environments (a continuous point maze, a grid of rooms) are pure ``reset``/``step`` functions
for one environment (batch with ``jax.vmap``); losses and single updates are kernels; training
loops live in ``jaxlab.trainers.rl`` and the experiments. Dr. Strategy's whole agent (its
state types and the behaviour / episode-mode constants besides the functions exported here)
is :mod:`jaxlab.rl.drstrategy_agent`.
"""

from jaxlab.rl.dqn import (
    DQNBatch,
    DQNState,
    QNetwork,
    dqn_loss,
    dqn_update,
    epsilon_greedy,
    epsilon_schedule,
    target_update,
)
from jaxlab.rl.drstrategy import (
    LandmarkVQ,
    disagreement_reward,
    focused_starts,
    highway_reward,
    knn_particle_reward,
    landmark_curiosity,
    landmark_loss,
    nearest_landmark,
    temporal_distance_pairs,
)
from jaxlab.rl.drstrategy_agent import (
    DrStrategyConfig,
    drstrategy_curiosity,
    drstrategy_decode,
    drstrategy_encode,
    drstrategy_episode,
    drstrategy_filter,
    drstrategy_init,
    drstrategy_landmark_of,
    drstrategy_landmark_states,
    drstrategy_networks,
    drstrategy_update,
)
from jaxlab.rl.envs import (
    LAYOUTS,
    CellLayout,
    MazeState,
    PointMaze,
    cell_distances,
    layout_array,
    make_point_maze,
    rooms_layout,
    shortest_path_direction,
)
from jaxlab.rl.grid import GRID_MOVES, GridRooms, make_grid_rooms, room_cells, room_of
from jaxlab.rl.imagination import actor_critic_loss, imagine, lambda_returns, return_scale
from jaxlab.rl.landmarks import VQState, ema_update, init_vq, quantize, reseed_dead_codes
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
from jaxlab.rl.ppo import ActorCritic, PPOBatch, gae, policy_distribution, ppo_loss, ppo_update
from jaxlab.rl.replay import ReplayBuffer, replay_add, replay_init, replay_sample
from jaxlab.rl.rssm import RSSM, gaussian, kl_balance, rssm_loss
from jaxlab.rl.world_model import LatentWorldModel, world_model_loss

__all__ = [
    "ActorCritic",
    "CellLayout",
    "DQNBatch",
    "DQNState",
    "DrStrategyConfig",
    "GRID_MOVES",
    "GridRooms",
    "LAYOUTS",
    "LandmarkVQ",
    "LatentWorldModel",
    "MazeState",
    "PPOBatch",
    "PointMaze",
    "QNetwork",
    "RSSM",
    "ReplayBuffer",
    "VQState",
    "actor_critic_loss",
    "cell_distances",
    "disagreement_reward",
    "dqn_loss",
    "dqn_update",
    "drstrategy_curiosity",
    "drstrategy_decode",
    "drstrategy_encode",
    "drstrategy_episode",
    "drstrategy_filter",
    "drstrategy_init",
    "drstrategy_landmark_of",
    "drstrategy_landmark_states",
    "drstrategy_networks",
    "drstrategy_update",
    "ema_update",
    "ensemble_disagreement",
    "epsilon_greedy",
    "epsilon_schedule",
    "expectile_loss",
    "focused_starts",
    "gae",
    "gaussian",
    "goal_value_loss",
    "highway_reward",
    "idm_loss",
    "imagine",
    "init_vq",
    "kl_balance",
    "knn_particle_reward",
    "lambda_returns",
    "landmark_curiosity",
    "landmark_loss",
    "layout_array",
    "make_grid_rooms",
    "make_point_maze",
    "nearest_landmark",
    "pessimism_weight",
    "policy_distribution",
    "ppo_loss",
    "ppo_update",
    "proposal_loss",
    "propose",
    "quantize",
    "replay_add",
    "replay_init",
    "replay_sample",
    "reseed_dead_codes",
    "return_scale",
    "room_cells",
    "room_of",
    "rooms_layout",
    "rssm_loss",
    "select_subgoal",
    "shortest_path_direction",
    "target_update",
    "temporal_distance_pairs",
    "world_model_loss",
]
