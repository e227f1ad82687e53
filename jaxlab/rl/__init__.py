"""Reinforcement learning kernels: functional environments, PPO pieces, planners, world models.

Environments are pure ``reset``/``step`` functions for one environment (batch with
``jax.vmap``); losses and single updates are kernels; training loops live in
``jaxlab.train.rl`` and the experiments.
"""

from jaxlab.rl.envs import (
    LAYOUTS,
    MazeState,
    PointMaze,
    cell_distances,
    layout_array,
    make_point_maze,
    rooms_layout,
    shortest_path_direction,
)
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

__all__ = [
    "LAYOUTS",
    "ActorCritic",
    "MazeState",
    "PPOBatch",
    "PointMaze",
    "VQState",
    "cell_distances",
    "ema_update",
    "ensemble_disagreement",
    "expectile_loss",
    "gae",
    "goal_value_loss",
    "idm_loss",
    "init_vq",
    "layout_array",
    "make_point_maze",
    "pessimism_weight",
    "policy_distribution",
    "ppo_loss",
    "ppo_update",
    "proposal_loss",
    "propose",
    "quantize",
    "reseed_dead_codes",
    "rooms_layout",
    "select_subgoal",
    "shortest_path_direction",
]
