"""Point-maze environment steps/s under ``jit(vmap)`` vs NumPy, and PPO training throughput.

``jaxlab bench rl`` (or ``python benchmarks/rl.py [--quick]``) measures, in one run:

* environment steps per second of the four-rooms point maze (random discrete actions,
  auto-reset) for 1, 64 and 1024 parallel environments: ``jax.jit`` of a ``lax.scan`` over
  ``vmap(env.step)`` against the same maze written in NumPy (vectorised over environments)
  and stepped in a Python loop — the ratio is jaxlab / NumPy;
* a Gymnasium ``SyncVectorEnv`` wrapping a one-environment NumPy maze, when ``gymnasium``
  is installed ("skipped" otherwise);
* PPO training throughput (environment steps per second of the whole rollout + update
  program, ``jaxlab.trainers.rl``) for 16 environments, and the same for DQN (ε-greedy acting,
  replay buffer, one double-DQN update of batch 64 per vectorised step).

Compilation is excluded (warm-up calls first). ``--quick`` uses fewer steps.
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from jaxlab.rl import make_point_maze
from jaxlab.train import time_interleaved
from jaxlab.trainers.rl import DQNConfig, PPOConfig, make_dqn_train, make_ppo_train


class NumpyMaze:
    """The point maze in NumPy, vectorised over ``n`` environments, with auto-reset."""

    def __init__(self, env, n: int, seed: int = 0):
        self.walls, self.n = env.walls, n
        self.dirs = env.directions.astype(np.float64) * env.step_size
        self.starts, self.goals = env.start_cells, env.goal_cells
        self.radius, self.max_steps = env.goal_radius, env.max_steps
        self.rng = np.random.default_rng(seed)
        self.pos, self.goal, self.t = self._reset(n)

    def _reset(self, m):
        s = self.starts[self.rng.integers(len(self.starts), size=m)][:, ::-1]
        g = self.goals[self.rng.integers(len(self.goals), size=m)][:, ::-1]
        return s + self.rng.uniform(0.1, 0.9, (m, 2)), g + 0.5, np.zeros(m, np.int64)

    def _wall(self, p):
        return self.walls[p[:, 1].astype(np.int64), p[:, 0].astype(np.int64)]

    def step(self, actions):
        d = self.dirs[actions]
        pos = self.pos.copy()
        x = pos.copy()
        x[:, 0] += d[:, 0]
        pos = np.where(self._wall(x)[:, None], pos, x)
        y = pos.copy()
        y[:, 1] += d[:, 1]
        pos = np.where(self._wall(y)[:, None], pos, y)
        self.t += 1
        success = np.linalg.norm(pos - self.goal, axis=1) < self.radius
        done = success | (self.t >= self.max_steps)
        self.pos = pos
        if done.any():
            p, g, t = self._reset(int(done.sum()))
            self.pos[done], self.goal[done], self.t[done] = p, g, t
        return self.pos, success.astype(np.float64), done


def numpy_rollout(maze: NumpyMaze, steps: int, k: int):
    for _ in range(steps):
        maze.step(maze.rng.integers(k, size=maze.n))
    return maze.pos


def gymnasium_env(env, num_envs: int):
    try:
        import gymnasium as gym
    except ImportError:
        return None

    class OneMaze(gym.Env):
        def __init__(self):
            self.maze = NumpyMaze(env, 1)
            self.action_space = gym.spaces.Discrete(env.num_actions)
            self.observation_space = gym.spaces.Box(-1, 1, (4,), np.float64)

        def _obs(self):
            return np.concatenate([self.maze.pos[0], self.maze.goal[0]])

        def reset(self, *, seed=None, options=None):
            return self._obs(), {}

        def step(self, a):
            _, r, d = self.maze.step(np.array([a]))
            return self._obs(), float(r[0]), bool(d[0]), False, {}

    return gym.vector.SyncVectorEnv([OneMaze for _ in range(num_envs)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (about a minute)")
    args = parser.parse_args(argv)
    steps = 200 if args.quick else 1000
    env = make_point_maze("four_rooms")

    def make_jax(n):
        @jax.jit
        def rollout(states, key):
            def body(st, k):
                k_a, k_s = jax.random.split(k)
                a = jax.random.randint(k_a, (n,), 0, env.num_actions)
                st, obs, r, d, _ = jax.vmap(env.step)(st, a, jax.random.split(k_s, n))
                return st, r.sum()

            return jax.lax.scan(body, states, jax.random.split(key, steps))

        states, _ = jax.vmap(env.reset)(jax.random.split(jax.random.key(0), n))
        key = jax.random.key(1)
        return lambda: rollout(states, key)

    print(f"four-rooms point maze, {steps} steps per call, random actions, auto-reset")
    print(
        f"{'envs':>6} {'jaxlab steps/s':>15} {'numpy steps/s':>14} {'ratio':>7} "
        f"{'gymnasium steps/s':>18}"
    )
    for n in (1, 64, 1024):
        maze = NumpyMaze(env, n)
        fns = {"jaxlab": make_jax(n), "numpy": lambda m=maze: numpy_rollout(m, steps, 4)}
        vec = gymnasium_env(env, n) if n <= 64 else None
        if vec is not None:
            vec.reset(seed=0)
            rng = np.random.default_rng(0)
            fns["gymnasium"] = lambda v=vec, n=n, r=rng: [
                v.step(r.integers(0, 4, n)) for _ in range(steps)
            ]
        t = time_interleaved(fns, repeats=3 if args.quick else 5)
        rate = {k: n * steps / v for k, v in t.items()}
        gym_txt = f"{rate['gymnasium']:18.0f}" if "gymnasium" in rate else f"{'skipped':>18}"
        print(
            f"{n:6d} {rate['jaxlab']:15.0f} {rate['numpy']:14.0f} "
            f"{rate['jaxlab'] / rate['numpy']:7.1f} {gym_txt}"
        )

    cfg = PPOConfig(num_envs=16, num_steps=32, num_updates=5 if args.quick else 20)
    train = jax.jit(make_ppo_train(env, cfg))
    key = jax.random.key(0)
    t = time_interleaved({"ppo": lambda: train(key)[1]}, repeats=3)
    total = cfg.num_envs * cfg.num_steps * cfg.num_updates
    print(
        f"PPO (16 envs × 32 steps, 4 epochs × 4 minibatches per update): "
        f"{total / t['ppo']:.0f} env steps/s, {cfg.num_updates / t['ppo']:.1f} updates/s"
    )

    dcfg = DQNConfig(num_envs=16, steps_per_iteration=32, num_iterations=5 if args.quick else 20)
    dqn = jax.jit(make_dqn_train(env, dcfg))
    t = time_interleaved({"dqn": lambda: dqn(key)[1]}, repeats=3)
    steps = dcfg.num_envs * dcfg.steps_per_iteration * dcfg.num_iterations
    updates = dcfg.steps_per_iteration * dcfg.num_iterations * dcfg.updates_per_step
    print(
        f"DQN (16 envs, 1 double-DQN update of batch 64 per vectorised step): "
        f"{steps / t['dqn']:.0f} env steps/s, {updates / t['dqn']:.0f} updates/s"
    )


if __name__ == "__main__":
    main()
