"""Functional environments: a goal-conditioned grid world of rooms joined by doorways.

The discrete-cell sibling of :class:`jaxlab.rl.envs.PointMaze`, in the same interface: a
frozen description (:class:`GridRooms`) with two pure functions for ONE environment,
``reset(key) -> (state, obs)`` and ``step(state, action, key) -> (state, obs, reward, done,
info)``, batched with ``jax.vmap``; ``step`` resets automatically and ``info`` carries the
end-of-episode cell, observation and flags. Layouts are the ASCII grids of
:mod:`jaxlab.rl.envs` (``LAYOUTS``, :func:`~jaxlab.rl.envs.rooms_layout`), one cell each.

Why our own (evaluation in ``docs/rl_envs.md``): navix 0.7.4 (the last release for Python
3.11) and xminigrid 0.9.3 install with our jax, but their room worlds are MiniGrid-style
(turn/forward actions, egocentric or whole-grid image observations, no goal vector, no
MultiRoom-N task); gymnax's ``FourRooms-misc`` has the right semantics but one hard-coded
13 × 13 map; jumanji's ``Maze`` is a random corridor maze without rooms. This module is
hand-written.

Dynamics (one step, agent cell ``p = (row, col)``, action ``a``):

    p' = p + m(a) unless p + m(a) is a wall, else p' = p,
    m = [(0, +1), (+1, 0), (0, −1), (−1, 0)]   (a = 0 .. 3: +x, +y, −x, −y),

the direction indices of a 4-action :class:`PointMaze` (0 = east, then counter-clockwise in
``(x, y) = (col, row)``). Reward is sparse: 1 when ``p' = g`` (the episode then ends), else 0;
episodes are truncated after ``max_steps``. Start and goal cells are drawn uniformly from
``start_cells`` and ``goal_cells`` with the start never on the goal.

Observation (``obs_type``):
  ``"coords"``: ``[x/W, y/H, g_x/W, g_y/H] · 2 − 1`` with cell centres ``x = col + ½``,
    ``y = row + ½`` (exactly :class:`PointMaze`'s observation for the same maze), ``[4]``;
  ``"onehot"``: ``[onehot(p), onehot(g)]`` over the ``R·C`` cells (row-major), ``[2·R·C]``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.ndimage
from jax.typing import ArrayLike

from jaxlab._checks import check_integer
from jaxlab.rl.envs import LAYOUTS, CellLayout, MazeState, _free_cells, layout_array

__all__ = ["GRID_MOVES", "GridRooms", "make_grid_rooms", "room_cells", "room_of"]

GRID_MOVES = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], np.int32)
"""``[4, 2]`` (Δrow, Δcol) of actions 0..3: +x (east), +y (row + 1), −x, −y."""


def room_cells(rooms_per_side: int, room: int, rooms) -> np.ndarray:
    """The free cells inside the given rooms of a ``rooms_layout(rooms_per_side, room)`` maze.

    Room ``(i, j)`` (row ``i``, column ``j`` of rooms, ``(0, 0)`` top-left) covers the cells
    ``(i·(room + 1) + 1 + r, j·(room + 1) + 1 + c)`` for ``r, c ∈ 0 .. room − 1``; doors
    (the one-cell gaps in the walls between rooms) belong to no room. Host-side NumPy.

    Args:
      rooms_per_side: rooms per side of the maze (``n`` of ``rooms_layout(n, room)``).
      room: free cells per side of one room.
      rooms: iterable of ``(i, j)`` room indices, each in ``0 .. rooms_per_side − 1``.

    Returns:
      ``[len(rooms) · room², 2]`` int32 (row, col) cells, room by room, row-major inside a
      room.

    Raises:
      ValueError: ``rooms_per_side < 1``, ``room < 1`` or a room index out of range.

    Example:
      >>> room_cells(2, 1, [(1, 1)]).tolist()
      [[3, 3]]
    """
    if rooms_per_side < 1 or room < 1:
        raise ValueError(f"rooms_per_side and room must be >= 1, got {rooms_per_side}, {room}")
    rooms = np.asarray(list(rooms), np.int64).reshape(-1, 2)
    if ((rooms < 0) | (rooms >= rooms_per_side)).any():
        raise ValueError(f"rooms must be (i, j) in 0..{rooms_per_side - 1}, got {rooms.tolist()}")
    offsets = np.stack(np.meshgrid(np.arange(room), np.arange(room), indexing="ij"), -1)
    cells = rooms[:, None, None, :] * (room + 1) + 1 + offsets[None]
    return cells.reshape(-1, 2).astype(np.int32)


def room_of(cells: ArrayLike, room: int) -> tuple[np.ndarray, np.ndarray]:
    """Room index and door flag of free (row, col) cells of a ``rooms_layout(n, room)`` maze.

    The inverse of :func:`room_cells`: ``(i, j) = (cell − 1) // (room + 1)``; a cell on a
    wall row or column (``(cell − 1) mod (room + 1) = room``) is a door, and gets the index
    of the room to its north (south door) or west (east door).

    Args:
      cells: ``[n, 2]`` integer (row, col) free cells.
      room: free cells per side of one room.

    Returns:
      ``(rooms [n, 2] int32, door [n] bool)``.

    Raises:
      ValueError: ``room < 1`` or ``cells`` not an integer ``[n, 2]`` array.

    Example:
      >>> rooms, door = room_of(np.array([[1, 1], [2, 4], [5, 6]]), room=3)
      >>> rooms.tolist(), door.tolist()
      ([[0, 0], [0, 0], [1, 1]], [False, True, False])
    """
    if room < 1:
        raise ValueError(f"room must be >= 1, got {room}")
    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[1] != 2 or not np.issubdtype(cells.dtype, np.integer):
        raise ValueError(f"cells must be integer [n, 2], got shape {cells.shape} {cells.dtype}")
    rel = (cells - 1) % (room + 1)
    return ((cells - 1) // (room + 1)).astype(np.int32), (rel == room).any(axis=1)


def _check_options(max_steps: int, obs_type: str) -> None:
    check_integer("max_steps", max_steps, low=1)
    if obs_type not in ("coords", "onehot"):
        raise ValueError(f"obs_type must be 'coords' or 'onehot', got {obs_type!r}")


@dataclasses.dataclass(frozen=True, eq=False)
class GridRooms(CellLayout):
    """A goal-conditioned grid world of rooms (see the module docstring for the rules).

    Build it with :func:`make_grid_rooms`. Its state is a :class:`~jaxlab.rl.envs.MazeState`
    holding int (row, col) cells.
    """

    max_steps: int = 50
    obs_type: str = "coords"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_options(self.max_steps, self.obs_type)

    @property
    def num_actions(self) -> int:
        return 4

    @property
    def obs_dim(self) -> int:
        return 4 if self.obs_type == "coords" else 2 * self.walls.size

    def observe(self, state: MazeState) -> jax.Array:
        """Observation of ``state`` (``[4]`` coordinates or ``[2·R·C]`` one-hots)."""
        if self.obs_type == "coords":
            size = jnp.asarray(self.size)
            xy = state.pos[::-1].astype(jnp.float32) + 0.5
            gxy = state.goal[::-1].astype(jnp.float32) + 0.5
            return jnp.concatenate([xy / size, gxy / size]) * 2.0 - 1.0
        n, cols = self.walls.size, self.walls.shape[1]
        return jnp.concatenate(
            [
                jax.nn.one_hot(state.pos[0] * cols + state.pos[1], n),
                jax.nn.one_hot(state.goal[0] * cols + state.goal[1], n),
            ]
        )

    def reset(self, key: ArrayLike) -> tuple[MazeState, jax.Array]:
        """Draw a goal cell, then a start cell different from it (both uniform).

        Args:
          key: a PRNG key.

        Returns:
          ``(state, obs)``.
        """
        k_s, k_g = jax.random.split(key)
        starts = jnp.asarray(self.start_cells)
        g = jnp.asarray(self.goal_cells)[jax.random.randint(k_g, (), 0, len(self.goal_cells))]
        # Uniform over the start cells other than g: the u-th allowed one, u ~ U{0 .. m-1}
        # (one integer draw; make_grid_rooms guarantees m >= 1).
        allowed = jnp.any(starts != g[None], axis=-1)
        u = jax.random.randint(k_s, (), 0, allowed.sum())
        s = starts[jnp.argmax(jnp.cumsum(allowed) > u)]
        state = MazeState(pos=s, goal=g, t=jnp.zeros((), jnp.int32))
        return state, self.observe(state)

    def move(self, pos: jax.Array, action: ArrayLike) -> jax.Array:
        """The cell reached from ``pos`` by ``action`` (a wall blocks: stay).

        Actions outside ``0 .. 3`` are clipped into range (documented behaviour under jit,
        as in :meth:`PointMaze.displacement`): ``-1 -> 0`` (+x), ``7 -> 3`` (−y).
        """
        action = jnp.asarray(action)
        if action.shape != () or not jnp.issubdtype(action.dtype, jnp.integer):
            raise ValueError(
                f"action must be an integer scalar in 0..3, got shape {action.shape} dtype "
                f"{action.dtype}"
            )
        nxt = pos + jnp.asarray(GRID_MOVES)[jnp.clip(action, 0, 3)]
        # Layouts are enclosed by walls, so a free cell's neighbour is always in the grid.
        return jnp.where(jnp.asarray(self.walls)[nxt[0], nxt[1]], pos, nxt)

    def step(
        self, state: MazeState, action: ArrayLike, key: ArrayLike
    ) -> tuple[MazeState, jax.Array, jax.Array, jax.Array, dict[str, Any]]:
        """One step with auto-reset.

        Args:
          state: the current :class:`MazeState` (one environment).
          action: an integer scalar in ``0 .. 3`` (others clipped, see :meth:`move`).
          key: a PRNG key (the reset of a finished episode; the moves are deterministic).

        Returns:
          ``(state, obs, reward, done, info)``; after ``done`` the state/obs are a new
          episode's; ``info`` has ``success``, ``truncated``, ``pos`` (the cell reached by
          this step, before any reset) and ``obs`` (its observation).
        """
        self._check_state(state)
        pos = self.move(state.pos, action)
        return self._end_step(state, pos, jnp.all(pos == state.goal), key)

    def render(self, state: MazeState, scale: int = 8) -> jax.Array:
        """An RGB frame ``[R·scale, C·scale, 3]`` uint8: walls grey, agent blue, goal red."""
        r_, c_ = self.walls.shape
        rows, cols = jnp.arange(r_), jnp.arange(c_)
        img = jnp.where(jnp.asarray(self.walls)[..., None], 90, 245) * jnp.ones((1, 1, 3))
        goal = (rows[:, None] == state.goal[0]) & (cols[None, :] == state.goal[1])
        agent = (rows[:, None] == state.pos[0]) & (cols[None, :] == state.pos[1])
        img = jnp.where(goal[..., None], jnp.array([220, 60, 60]), img)
        img = jnp.where(agent[..., None], jnp.array([40, 80, 220]), img)
        img = jnp.repeat(jnp.repeat(img, scale, 0), scale, 1)
        return img.astype(jnp.uint8)


def make_grid_rooms(
    layout: str = "four_rooms",
    *,
    start_cells=None,
    goal_cells=None,
    max_steps: int = 50,
    obs_type: str = "coords",
) -> GridRooms:
    """Build a :class:`GridRooms` from a layout name (``LAYOUTS``) or an ASCII layout.

    Args:
      layout: ``"corridor"``, ``"four_rooms"``, ``"nine_rooms"`` or an ASCII grid ('#' =
        wall), e.g. ``rooms_layout(3, room=5)`` for 9 rooms of 5 × 5 cells.
      start_cells, goal_cells: ``[n, 2]`` (row, col) free cells; default: all free cells.
      max_steps: truncation horizon.
      obs_type: ``"coords"`` or ``"onehot"`` (module docstring).

    Raises:
      ValueError: a cell inside a wall or outside the grid, a goal cell with no start cell
        other than itself, a goal unreachable from some start, ``max_steps < 1`` or an
        unknown ``obs_type``.

    Example:
      >>> from jaxlab.rl import make_grid_rooms
      >>> env = make_grid_rooms("four_rooms", start_cells=[(1, 1)], goal_cells=[(1, 2)])
      >>> state, obs = env.reset(jax.random.key(0))
      >>> state, obs, r, done, info = env.step(state, jnp.int32(0), jax.random.key(1))
      >>> float(r), bool(done), info["pos"].tolist()
      (1.0, True, [1, 2])
    """
    walls = layout_array(LAYOUTS.get(layout, layout))
    _check_options(max_steps, obs_type)
    starts = _free_cells(walls, start_cells, "start_cells")
    goals = _free_cells(walls, goal_cells, "goal_cells")
    for g in goals:
        if np.all(starts == g[None], axis=-1).all():
            raise ValueError(f"goal cell {g.tolist()} has no start cell other than itself")
    comp, _ = scipy.ndimage.label(~walls)  # 4-connected components of the free cells
    apart = comp[starts[:, 0], starts[:, 1]][:, None] != comp[goals[:, 0], goals[:, 1]][None]
    if apart.any():
        s, g = np.argwhere(apart)[0]
        raise ValueError(
            f"goal cell {goals[g].tolist()} is unreachable from start cell {starts[s].tolist()}"
        )
    return GridRooms(
        walls=walls,
        start_cells=starts,
        goal_cells=goals,
        max_steps=max_steps,
        obs_type=obs_type,
    )
