"""Functional environments: a goal-conditioned 2-D point maze with walls and rooms.

The environment is a frozen description (:class:`PointMaze`) with two pure functions,
``reset(key) -> (state, obs)`` and ``step(state, action, key) -> (state, obs, reward, done,
info)``, written for ONE environment and batched with ``jax.vmap`` (the gymnax/rlax style).
``step`` resets automatically: when an episode ends, the returned state and observation are
those of a fresh episode, and ``info`` carries the end-of-episode position and flags.

Why our own: of the maintained JAX environment packages, gymnax (classic control, MinAtar,
bsuite, a discrete meta-maze), jumanji (a discrete grid ``Maze``), navix and xminigrid
(MiniGrid-style grid worlds) none has a *continuous* point maze with rooms and a goal state;
navix/xminigrid multi-room grids are discrete-cell worlds with partial egocentric views. The
point maze here is hand-written in the same ``reset``/``step`` interface.

Dynamics (one step, ``a`` the action, ``δ`` the step size, ``σ`` the action-independent
noise scale, ``ξ ~ N(0, I)``):

    Δ = δ · u(a) + σ · ξ,   x ← x + Δ_x unless that cell is a wall,
                            then y ← y + Δ_y unless that cell is a wall,

with ``u(a) = clip(a, -1, 1)`` for continuous actions and the unit vector of direction
``a`` (``K`` directions evenly on the circle, 0 = east, counter-clockwise) for discrete ones.
Positions are in cell units (cell ``(r, c)`` covers ``[c, c+1) × [r, r+1)``); ``|Δ| < 1`` so
a step never crosses a wall. Reward is sparse: 1 when ``‖x − g‖ < goal_radius`` (the
episode then ends), else 0; episodes are truncated after ``max_steps``.

Observation: ``[x/W, y/H, g_x/W, g_y/H] · 2 − 1`` (the goal state is the "goal image").
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_range, check_type

__all__ = [
    "LAYOUTS",
    "CellLayout",
    "MazeState",
    "PointMaze",
    "cell_distances",
    "layout_array",
    "make_point_maze",
    "rooms_layout",
    "shortest_path_direction",
]


def rooms_layout(rooms_per_side: int, room: int = 3) -> str:
    """ASCII layout of ``rooms_per_side²`` square rooms of ``room × room`` free cells.

    Neighbouring rooms are joined by one-cell doors in the middle of the shared wall.

    Example:
      >>> from jaxlab.rl.envs import rooms_layout
      >>> print(rooms_layout(2, room=1))
      #####
      #...#
      #.#.#
      #...#
      #####
    """
    if rooms_per_side < 1 or room < 1:
        raise ValueError(f"rooms_per_side and room must be >= 1, got {rooms_per_side}, {room}")
    n = rooms_per_side * (room + 1) + 1
    grid = np.full((n, n), "#")
    mid = room // 2
    for i in range(rooms_per_side):
        for j in range(rooms_per_side):
            r0, c0 = i * (room + 1) + 1, j * (room + 1) + 1
            grid[r0 : r0 + room, c0 : c0 + room] = "."
            if j + 1 < rooms_per_side:  # door east
                grid[r0 + mid, c0 + room] = "."
            if i + 1 < rooms_per_side:  # door south
                grid[r0 + room, c0 + mid] = "."
    return "\n".join("".join(row) for row in grid)


LAYOUTS = {
    "corridor": "#######\n#.....#\n#######",
    "four_rooms": rooms_layout(2),
    "nine_rooms": rooms_layout(3),
}


def layout_array(layout: str) -> np.ndarray:
    """Boolean wall grid ``[rows, cols]`` (True = wall) of an ASCII layout ('#' = wall)."""
    rows = [r for r in layout.strip("\n").split("\n")]
    if len({len(r) for r in rows}) != 1:
        raise ValueError("layout rows must all have the same length")
    walls = np.array([[ch == "#" for ch in r] for r in rows], dtype=bool)
    if not (walls[0].all() and walls[-1].all() and walls[:, 0].all() and walls[:, -1].all()):
        raise ValueError("layout must be enclosed by walls ('#') on all four sides")
    return walls


def cell_distances(walls: np.ndarray) -> np.ndarray:
    """All-pairs shortest-path lengths ``[R, C, R, C]`` between free cells (4-neighbour BFS).

    Walls and unreachable pairs get ``-1``. Host-side (NumPy), computed once per layout.
    """
    walls = np.asarray(walls)
    if walls.ndim != 2 or walls.dtype != bool:
        raise ValueError(f"walls must be a bool [R, C] grid, got {walls.dtype} {walls.shape}")
    r_, c_ = walls.shape
    dist = np.full((r_, c_, r_, c_), -1, dtype=np.int32)
    for r0 in range(r_):
        for c0 in range(c_):
            if walls[r0, c0]:
                continue
            d = dist[r0, c0]
            d[r0, c0] = 0
            frontier = [(r0, c0)]
            while frontier:
                nxt = []
                for r, c in frontier:
                    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                        rr, cc = r + dr, c + dc
                        if not walls[rr, cc] and d[rr, cc] < 0:
                            d[rr, cc] = d[r, c] + 1
                            nxt.append((rr, cc))
                frontier = nxt
    return dist


class MazeState(NamedTuple):
    """State of one episode: ``pos [2]``, ``goal [2]`` and the step ``t``.

    The point maze stores float (x, y) positions; the grid rooms (:mod:`jaxlab.rl.grid`)
    store int (row, col) cells.
    """

    pos: jax.Array
    goal: jax.Array
    t: jax.Array


@dataclasses.dataclass(frozen=True, eq=False)
class CellLayout:
    """Static geometry of a maze of cells, shared by :class:`PointMaze` and ``GridRooms``.

    Environments built on it have pure ``reset``/``step`` functions acting on one
    environment (``jax.vmap`` them for a batch); the attributes are static (hashable by
    identity), so an instance can be closed over inside ``jit``.
    """

    walls: np.ndarray  # [R, C] bool
    start_cells: np.ndarray  # [S, 2] int (row, col)
    goal_cells: np.ndarray  # [G, 2] int (row, col)

    if TYPE_CHECKING:  # what each environment on the layout defines, for _end_step
        max_steps: int

        def reset(self, key: ArrayLike) -> tuple[MazeState, jax.Array]: ...

        def observe(self, state: MazeState) -> jax.Array: ...

    def __post_init__(self) -> None:
        walls = np.asarray(self.walls)
        if walls.ndim != 2 or walls.dtype != bool:
            raise ValueError(f"walls must be a bool [R, C] grid, got {walls.dtype} {walls.shape}")
        for name in ("start_cells", "goal_cells"):
            _free_cells(walls, getattr(self, name), name)

    @property
    def size(self) -> np.ndarray:
        """``[W, H]``: the layout's width and height in cells."""
        return np.array([self.walls.shape[1], self.walls.shape[0]], np.float32)

    @staticmethod
    def _check_state(state: MazeState) -> None:
        if jnp.shape(state.pos) != (2,):
            raise ValueError(
                f"state.pos must have shape [2] (vmap step over a batch), got "
                f"{jnp.shape(state.pos)}"
            )

    def _end_step(
        self, state: MazeState, pos: jax.Array, success: jax.Array, key: ArrayLike
    ) -> tuple[MazeState, jax.Array, jax.Array, jax.Array, dict[str, Any]]:
        """The step's common tail: count the step, end the episode on success or at
        ``max_steps`` (truncated), auto-reset with ``key``; returns ``step``'s 5-tuple.

        ``info["pos"]`` and ``info["obs"]`` describe the state before the reset.
        """
        t = state.t + 1
        truncated = (t >= self.max_steps) & ~success
        done = success | truncated
        stepped = MazeState(pos=pos, goal=state.goal, t=t)
        fresh, _ = self.reset(key)
        new_state = jax.tree.map(lambda a, b: jnp.where(done, a, b), fresh, stepped)
        info = {
            "success": success,
            "truncated": truncated,
            "pos": pos,
            "obs": self.observe(stepped),
        }
        return new_state, self.observe(new_state), success.astype(jnp.float32), done, info


@dataclasses.dataclass(frozen=True, eq=False)
class PointMaze(CellLayout):
    """A goal-conditioned 2-D point maze (see the module docstring for the dynamics).

    Build it with :func:`make_point_maze`.
    """

    num_actions: int = 4  # 0 = continuous actions in [-1, 1]^2
    step_size: float = 0.5
    noise: float = 0.0
    goal_radius: float = 0.5
    max_steps: int = 50

    def __post_init__(self) -> None:
        super().__post_init__()
        check_integer("num_actions", self.num_actions, low=0)
        if self.num_actions == 1:
            raise ValueError("num_actions must be 0 (continuous) or >= 2, got 1")
        check_range("step_size", self.step_size, 0.0, 1.0, low_open=True, high_open=True)
        check_range("noise", self.noise, 0.0)
        check_range("goal_radius", self.goal_radius, 0.0, low_open=True)
        check_integer("max_steps", self.max_steps, low=1)

    @property
    def obs_dim(self) -> int:
        return 4

    @functools.cached_property
    def directions(self) -> np.ndarray:
        """``[K, 2]`` unit displacement of each discrete action (0 = east, CCW)."""
        k = max(self.num_actions, 1)
        ang = 2 * np.pi * np.arange(k) / k
        return np.round(np.stack([np.cos(ang), np.sin(ang)], -1), 7).astype(np.float32)

    def observe(self, state: MazeState) -> jax.Array:
        """Observation ``[4]``: position and goal scaled to ``[-1, 1]``."""
        size = jnp.asarray(self.size)
        return jnp.concatenate([state.pos / size, state.goal / size]) * 2.0 - 1.0

    def is_wall(self, pos: ArrayLike) -> jax.Array:
        """Whether the cell containing ``pos [..., 2]`` (x, y) is a wall."""
        pos = jnp.asarray(pos)
        col = jnp.clip(jnp.floor(pos[..., 0]).astype(jnp.int32), 0, self.walls.shape[1] - 1)
        row = jnp.clip(jnp.floor(pos[..., 1]).astype(jnp.int32), 0, self.walls.shape[0] - 1)
        return jnp.asarray(self.walls)[row, col]

    def reset(self, key: ArrayLike) -> tuple[MazeState, jax.Array]:
        """Start uniformly inside a random start cell; goal at the centre of a goal cell.

        Args:
          key: a PRNG key.

        Returns:
          ``(state, obs)`` with ``obs: [4]``.
        """
        k_s, k_g, k_u = jax.random.split(key, 3)
        s = jnp.asarray(self.start_cells)[jax.random.randint(k_s, (), 0, len(self.start_cells))]
        g = jnp.asarray(self.goal_cells)[jax.random.randint(k_g, (), 0, len(self.goal_cells))]
        # (row, col) -> (x, y); start anywhere in [0.1, 0.9]^2 of its cell.
        pos = s[::-1].astype(jnp.float32) + jax.random.uniform(k_u, (2,), minval=0.1, maxval=0.9)
        goal = g[::-1].astype(jnp.float32) + 0.5
        state = MazeState(pos=pos, goal=goal, t=jnp.zeros((), jnp.int32))
        return state, self.observe(state)

    def displacement(self, action: ArrayLike) -> jax.Array:
        """``δ · u(a)``: the action's intended displacement ``[2]``.

        Continuous actions are clipped to ``[-1, 1]²`` (documented behaviour for actions
        outside the action space; NaN components move nothing). Discrete actions are
        clipped to ``0 .. K-1``.
        """
        action = jnp.asarray(action)
        if self.num_actions:
            if action.shape != () or not jnp.issubdtype(action.dtype, jnp.integer):
                raise ValueError(
                    f"action must be an integer scalar for a discrete maze, got shape "
                    f"{action.shape} dtype {action.dtype}"
                )
            a = jnp.clip(action, 0, self.num_actions - 1)
            return self.step_size * jnp.asarray(self.directions)[a]
        if action.shape != (2,):
            raise ValueError(f"action must have shape [2], got {action.shape}")
        u = jnp.clip(jnp.nan_to_num(action.astype(jnp.float32), nan=0.0), -1.0, 1.0)
        return self.step_size * u

    def move(self, pos: jax.Array, delta: jax.Array) -> jax.Array:
        """Axis-wise move with wall blocking: x first, then y (module docstring)."""
        x_try = pos.at[0].add(delta[0])
        pos = jnp.where(self.is_wall(x_try), pos, x_try)
        y_try = pos.at[1].add(delta[1])
        return jnp.where(self.is_wall(y_try), pos, y_try)

    def step(
        self, state: MazeState, action: ArrayLike, key: ArrayLike
    ) -> tuple[MazeState, jax.Array, jax.Array, jax.Array, dict[str, Any]]:
        """One step with auto-reset.

        Args:
          state: the current :class:`MazeState` (one environment).
          action: an int scalar (discrete) or ``[2]`` floats (continuous).
          key: a PRNG key (noise and the reset of a finished episode).

        Returns:
          ``(state, obs, reward, done, info)``; after ``done`` the state/obs are a new
          episode's; ``info`` has ``success``, ``truncated``, ``pos`` (the position reached
          by this step, before any reset) and ``obs`` (its observation).
        """
        self._check_state(state)
        k_noise, k_reset = jax.random.split(key)
        delta = self.displacement(action)
        if self.noise:
            delta = delta + self.noise * jax.random.normal(k_noise, (2,))
            delta = jnp.clip(delta, -0.95, 0.95)  # never cross a whole wall cell
        pos = self.move(state.pos, delta)
        success = jnp.linalg.norm(pos - state.goal) < self.goal_radius
        return self._end_step(state, pos, success, k_reset)

    def render(self, state: MazeState, scale: int = 8) -> jax.Array:
        """An RGB frame ``[R·scale, C·scale, 3]`` uint8: walls grey, agent blue, goal red."""
        r_, c_ = self.walls.shape
        ys = (jnp.arange(r_ * scale) + 0.5) / scale
        xs = (jnp.arange(c_ * scale) + 0.5) / scale
        yy, xx = jnp.meshgrid(ys, xs, indexing="ij")
        wall = jnp.repeat(jnp.repeat(jnp.asarray(self.walls), scale, 0), scale, 1)
        img = jnp.where(wall[..., None], 90, 245) * jnp.ones((1, 1, 3))
        d_a = (xx - state.pos[0]) ** 2 + (yy - state.pos[1]) ** 2
        d_g = (xx - state.goal[0]) ** 2 + (yy - state.goal[1]) ** 2
        img = jnp.where((d_g < self.goal_radius**2)[..., None], jnp.array([220, 60, 60]), img)
        img = jnp.where((d_a < 0.09)[..., None], jnp.array([40, 80, 220]), img)
        return img.astype(jnp.uint8)


def _free_cells(walls: np.ndarray, cells, name: str) -> np.ndarray:
    """``cells`` as int ``[n, 2]`` free cells (all free cells when None); refused, naming
    ``name``, when empty, not integer pairs, inside a wall or outside the maze."""
    if cells is None:
        return np.argwhere(~walls).astype(np.int32)
    arr = np.asarray(cells)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be integer (row, col) cells, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) == 0:
        if arr.size and arr.ndim == 1 and arr.shape[0] == 2:
            arr = arr[None]
        else:
            raise ValueError(f"{name} must be a non-empty [n, 2] list of cells, got {arr.shape}")
    cells = arr.astype(np.int32)
    r_, c_ = walls.shape
    bad = (cells[:, 0] < 0) | (cells[:, 0] >= r_) | (cells[:, 1] < 0) | (cells[:, 1] >= c_)
    if bad.any() or walls[cells[:, 0], cells[:, 1]].any():
        raise ValueError(f"{name} {cells.tolist()} include a wall or lie outside the maze")
    return cells


def make_point_maze(
    layout: str = "four_rooms",
    *,
    start_cells=None,
    goal_cells=None,
    num_actions: int = 4,
    step_size: float = 0.5,
    noise: float = 0.0,
    goal_radius: float = 0.5,
    max_steps: int = 50,
) -> PointMaze:
    """Build a :class:`PointMaze` from a layout name (``LAYOUTS``) or an ASCII layout.

    Args:
      layout: ``"corridor"``, ``"four_rooms"``, ``"nine_rooms"`` or an ASCII grid.
      start_cells, goal_cells: ``[n, 2]`` (row, col) free cells; default: all free cells.
        A cell inside a wall raises ``ValueError``.
      num_actions: ``K`` discrete directions, or 0 for continuous actions in ``[-1, 1]²``.
      step_size: ``δ`` in cells, in ``(0, 1)``.
      noise: ``σ`` of the action-independent Gaussian displacement.
      goal_radius: success radius in cells.
      max_steps: truncation horizon.

    Example:
      >>> from jaxlab.rl import make_point_maze
      >>> env = make_point_maze("corridor", start_cells=[(1, 1)], goal_cells=[(1, 5)])
      >>> state, obs = env.reset(jax.random.key(0))
      >>> state, obs, r, done, info = env.step(state, jnp.int32(0), jax.random.key(1))
      >>> obs.shape, float(r)
      ((4,), 0.0)
    """
    walls = layout_array(LAYOUTS.get(layout, layout))
    return PointMaze(  # the constructor checks every argument
        walls=walls,
        start_cells=_free_cells(walls, start_cells, "start_cells"),
        goal_cells=_free_cells(walls, goal_cells, "goal_cells"),
        num_actions=num_actions,
        step_size=step_size,
        noise=noise,
        goal_radius=goal_radius,
        max_steps=max_steps,
    )


def shortest_path_direction(
    env: PointMaze, dist: ArrayLike, pos: ArrayLike, goal: ArrayLike
) -> jax.Array:
    """Unit direction ``[2]`` a shortest-path expert takes from ``pos`` toward ``goal``.

    The expert heads for the centre of the free 4-neighbour cell with the smallest BFS
    distance to the goal's cell (``dist`` from :func:`cell_distances`), or straight to the
    goal when both are in the same cell. Used to script passive (state-only) demonstrations.

    Args:
      env: the maze.
      dist: ``[R, C, R, C]`` cell distances of ``env.walls``.
      pos, goal: ``[2]`` (x, y).

    Returns:
      ``[2]`` unit vector (zero at the goal).
    """
    check_type("env", env, CellLayout)
    pos, goal, dist = jnp.asarray(pos), jnp.asarray(goal), jnp.asarray(dist)
    if dist.shape != env.walls.shape * 2:
        raise ValueError(
            f"dist must be cell_distances(env.walls) of shape "
            f"{env.walls.shape * 2}, got {dist.shape}"
        )
    for name, x in (("pos", pos), ("goal", goal)):
        if x.shape != (2,):
            raise ValueError(f"{name} must be [2] (x, y), got {x.shape}")
    cell = jnp.floor(pos[::-1]).astype(jnp.int32)  # (row, col)
    gcell = jnp.floor(goal[::-1]).astype(jnp.int32)
    nbrs = cell[None] + jnp.array([[0, 1], [1, 0], [0, -1], [-1, 0]], jnp.int32)
    d = dist[nbrs[:, 0], nbrs[:, 1], gcell[0], gcell[1]]
    d = jnp.where(d < 0, jnp.iinfo(jnp.int32).max, d)
    best = nbrs[jnp.argmin(d)]
    same = jnp.all(cell == gcell)
    target = jnp.where(same, goal, best[::-1].astype(jnp.float32) + 0.5)
    v = target - pos
    return v / jnp.maximum(jnp.linalg.norm(v), 1e-6)
