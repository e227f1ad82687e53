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
from jaxlab.rl.ppo import ActorCritic, PPOBatch, gae, policy_distribution, ppo_loss, ppo_update

__all__ = [
    "LAYOUTS",
    "ActorCritic",
    "MazeState",
    "PPOBatch",
    "PointMaze",
    "cell_distances",
    "gae",
    "layout_array",
    "make_point_maze",
    "policy_distribution",
    "ppo_loss",
    "ppo_update",
    "rooms_layout",
    "shortest_path_direction",
]
