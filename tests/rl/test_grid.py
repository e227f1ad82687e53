"""Grid rooms: step-by-step against a NumPy re-implementation, BFS reachability and shortest
paths, jit/vmap over 64 environments, auto-reset, time limit, bad inputs, PPO solving it."""

from collections import deque

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.rl import LAYOUTS, make_grid_rooms, rooms_layout
from jaxlab.rl.grid import room_cells, room_of
from jaxlab.trainers.rl import PPOConfig, make_ppo_train

# (Δrow, Δcol) of actions 0..3, written out independently of GRID_MOVES.
MOVES = {0: (0, 1), 1: (1, 0), 2: (0, -1), 3: (-1, 0)}


def parse(layout):
    return np.array([[ch == "#" for ch in row] for row in layout.split("\n")])


def bfs(walls, source):
    """Shortest-path lengths from ``source`` to every cell (4-neighbour; -1 = unreachable)."""
    dist = np.full(walls.shape, -1)
    dist[source] = 0
    queue = deque([source])
    while queue:
        r, c = queue.popleft()
        for dr, dc in MOVES.values():
            if not walls[r + dr, c + dc] and dist[r + dr, c + dc] < 0:
                dist[r + dr, c + dc] = dist[r, c] + 1
                queue.append((r + dr, c + dc))
    return dist


class NumpyGrid:
    """Independent NumPy grid world (same rules as the module docstring)."""

    def __init__(self, layout, max_steps, obs_type):
        self.walls = parse(layout)
        self.max_steps, self.obs_type = max_steps, obs_type

    def obs(self, pos, goal):
        h, w = self.walls.shape
        if self.obs_type == "coords":
            return (
                np.array(
                    [
                        (pos[1] + 0.5) / w,
                        (pos[0] + 0.5) / h,
                        (goal[1] + 0.5) / w,
                        (goal[0] + 0.5) / h,
                    ]
                )
                * 2
                - 1
            )
        out = np.zeros(2 * h * w)
        out[pos[0] * w + pos[1]] = 1
        out[h * w + goal[0] * w + goal[1]] = 1
        return out

    def step(self, pos, goal, t, a):
        dr, dc = MOVES[min(max(a, 0), 3)]
        r, c = pos
        if not self.walls[r + dr, c + dc]:
            r, c = r + dr, c + dc
        t += 1
        success = (r, c) == tuple(goal)
        truncated = t >= self.max_steps and not success
        return (r, c), t, success, truncated


@pytest.mark.parametrize(
    "layout,obs_type,max_steps",
    [
        ("four_rooms", "coords", 20),
        ("nine_rooms", "onehot", 30),
    ],
)
def test_64_envs_step_matches_numpy(layout, obs_type, max_steps):
    n, steps = 64, 60
    env = make_grid_rooms(layout, max_steps=max_steps, obs_type=obs_type)
    ref = NumpyGrid(LAYOUTS[layout], max_steps, obs_type)
    walls = ref.walls
    door = ~walls & (
        (np.roll(walls, 1, 0) & np.roll(walls, -1, 0))
        | (np.roll(walls, 1, 1) & np.roll(walls, -1, 1))
    )
    actions = np.random.default_rng(0).integers(0, 4, (steps, n)).astype(np.int32)

    @jax.jit
    def rollout(key):
        states, obs0 = jax.vmap(env.reset)(jax.random.split(key, n))

        def body(s, xs):
            a, k = xs
            out = jax.vmap(env.step)(s, a, jax.random.split(k, n))
            return out[0], (s, out)

        keys = jax.random.split(jax.random.fold_in(key, 1), steps)
        return obs0, jax.lax.scan(body, states, (jnp.asarray(actions), keys))[1]

    obs0, (before, (after, obs, reward, done, info)) = jax.tree.map(
        np.asarray, rollout(jax.random.key(0))
    )
    starts = {tuple(c) for c in np.argwhere(~walls)}
    counts = dict(wall=0, door=0, success=0, truncated=0)
    for i in range(n):
        np.testing.assert_allclose(obs0[i], ref.obs(before.pos[0, i], before.goal[0, i]), atol=1e-6)
        for t in range(steps):
            pos, goal, tt = tuple(before.pos[t, i]), before.goal[t, i], int(before.t[t, i])
            if t:  # the state carried over is the one step returned
                assert pos == tuple(after.pos[t - 1, i]) and tt == int(after.t[t - 1, i])
            new, t_new, success, truncated = ref.step(pos, goal, tt, int(actions[t, i]))
            assert tuple(info["pos"][t, i]) == new
            assert bool(info["success"][t, i]) == success
            assert bool(info["truncated"][t, i]) == truncated
            assert float(reward[t, i]) == float(success)
            assert bool(done[t, i]) == (success or truncated)
            np.testing.assert_allclose(info["obs"][t, i], ref.obs(new, goal), atol=1e-6)
            if success or truncated:  # auto-reset: a fresh, valid episode
                p2, g2 = tuple(after.pos[t, i]), tuple(after.goal[t, i])
                assert int(after.t[t, i]) == 0 and p2 in starts and g2 in starts and p2 != g2
            else:
                assert tuple(after.pos[t, i]) == new and int(after.t[t, i]) == t_new
                np.testing.assert_array_equal(after.goal[t, i], goal)
            np.testing.assert_allclose(
                obs[t, i], ref.obs(after.pos[t, i], after.goal[t, i]), atol=1e-6
            )
            counts["wall"] += new == pos
            counts["door"] += bool(door[new])
            counts["success"] += success
            counts["truncated"] += truncated
    # Walls blocked, doorways were crossed, and both episode ends happened.
    assert min(counts.values()) >= 10, counts


def test_reward_walls_doorway_and_time_limit():
    env = make_grid_rooms("four_rooms", start_cells=[(2, 3)], goal_cells=[(2, 5)], max_steps=4)
    state, obs = env.reset(jax.random.key(0))
    assert state.pos.tolist() == [2, 3] and state.goal.tolist() == [2, 5]
    step = jax.jit(env.step)
    k = jax.random.key(1)
    state, _, r, done, info = step(state, jnp.int32(3), k)  # -y: free cell (1, 3)
    assert info["pos"].tolist() == [1, 3] and not bool(done)
    state, _, r, done, info = step(state, jnp.int32(3), k)  # -y: wall at (0, 3)
    assert info["pos"].tolist() == [1, 3] and float(r) == 0.0
    state, _, r, done, info = step(state, jnp.int32(1), k)  # back to (2, 3)
    state, _, r, done, info = step(state, jnp.int32(0), k)  # into the doorway (2, 4)
    assert info["pos"].tolist() == [2, 4]
    assert bool(done) and bool(info["truncated"]) and not bool(info["success"])  # t = 4
    assert int(state.t) == 0 and state.pos.tolist() == [2, 3]  # auto-reset
    state, _, r, done, info = step(state, jnp.int32(0), k)
    state, _, r, done, info = step(state, jnp.int32(0), k)  # through the doorway to the goal
    assert float(r) == 1.0 and bool(done) and bool(info["success"])
    assert not bool(info["truncated"]) and int(state.t) == 0


def test_out_of_range_actions_are_clipped():
    env = make_grid_rooms("four_rooms", start_cells=[(2, 2)], goal_cells=[(7, 7)])
    state, _ = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    assert step(state, jnp.int32(-5), jax.random.key(0))[4]["pos"].tolist() == [2, 3]  # as 0
    assert step(state, jnp.int32(9), jax.random.key(0))[4]["pos"].tolist() == [1, 2]  # as 3


@pytest.mark.parametrize(
    "layout,cells",
    [
        ("nine_rooms", None),
        (rooms_layout(3, room=5), [(1, 1), (17, 17), (9, 9)]),
    ],
)
def test_every_reset_is_reachable_and_bfs_greedy_reaches_the_goal(layout, cells):
    env = make_grid_rooms(layout, start_cells=cells, goal_cells=cells, max_steps=200)
    walls = parse(LAYOUTS.get(layout, layout))
    states, _ = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), 1000))
    pos, goal = np.asarray(states.pos), np.asarray(states.goal)
    allowed = {tuple(c) for c in (np.argwhere(~walls) if cells is None else cells)}
    assert {tuple(p) for p in pos} == allowed  # every start cell is drawn
    assert {tuple(g) for g in goal} == allowed
    if cells is not None:  # each of the 6 ordered (start, goal) pairs has probability 1/6
        pairs = [(tuple(p), tuple(g)) for p, g in zip(pos, goal, strict=True)]
        counts = [pairs.count((a, b)) for a in allowed for b in allowed if a != b]
        assert len(counts) == 6 and sum(counts) == 1000
        assert max(abs(c - 1000 / 6) for c in counts) < 5 * np.sqrt(1000 * 5 / 36)
    dists = {g: bfs(walls, g) for g in {tuple(g) for g in goal}}
    d0 = np.array([dists[tuple(g)][tuple(p)] for p, g in zip(pos, goal, strict=True)])
    assert (d0 > 0).all()  # reachable, and the start is never the goal

    # Follow the numpy BFS greedily in the JAX env: success after exactly d0 steps.
    step = jax.jit(jax.vmap(env.step))
    n = 64
    s = jax.tree.map(lambda x: x[:n], states)
    steps_taken = np.zeros(n, int)
    finished = np.zeros(n, bool)
    for t in range(int(d0[:n].max())):
        acts, pos_t = np.zeros(n, np.int32), np.asarray(s.pos)
        for i in range(n):
            d, (r, c) = dists[tuple(goal[i])], pos_t[i]
            acts[i] = min(
                MOVES,
                key=lambda a: (
                    d[r + MOVES[a][0], c + MOVES[a][1]]
                    if d[r + MOVES[a][0], c + MOVES[a][1]] >= 0
                    else 10**9
                ),
            )
        s, _, r, done, info = step(s, jnp.asarray(acts), jax.random.split(jax.random.key(t), n))
        new = np.asarray(info["success"]) & ~finished
        steps_taken[new] = t + 1
        finished |= np.asarray(done)
    np.testing.assert_array_equal(steps_taken, d0[:n])


def test_observation_encodings():
    env_c = make_grid_rooms("four_rooms", start_cells=[(1, 1)], goal_cells=[(7, 6)])
    env_o = make_grid_rooms(
        "four_rooms", start_cells=[(1, 1)], goal_cells=[(7, 6)], obs_type="onehot"
    )
    s, obs = env_c.reset(jax.random.key(0))
    np.testing.assert_allclose(
        obs, [1.5 / 9 * 2 - 1, 1.5 / 9 * 2 - 1, 6.5 / 9 * 2 - 1, 7.5 / 9 * 2 - 1], atol=1e-6
    )
    _, obs = env_o.reset(jax.random.key(0))
    assert env_o.obs_dim == obs.shape[0] == 162
    assert np.flatnonzero(np.asarray(obs)).tolist() == [10, 81 + 69]


def test_bad_inputs():
    with pytest.raises(ValueError, match="wall"):
        make_grid_rooms("four_rooms", goal_cells=[(0, 0)])
    with pytest.raises(ValueError, match="outside"):
        make_grid_rooms("four_rooms", start_cells=[(9, 1)])
    with pytest.raises(ValueError, match="unreachable"):
        make_grid_rooms("#####\n#.#.#\n#####")
    with pytest.raises(ValueError, match="other than itself"):
        make_grid_rooms("four_rooms", start_cells=[(1, 1)], goal_cells=[(1, 1), (2, 2)])
    with pytest.raises(ValueError, match="obs_type"):
        make_grid_rooms("four_rooms", obs_type="rgb")
    with pytest.raises(ValueError, match="max_steps"):
        make_grid_rooms("four_rooms", max_steps=0)
    with pytest.raises(ValueError, match="enclosed"):
        make_grid_rooms("...\n...")
    env = make_grid_rooms("four_rooms")
    state, _ = env.reset(jax.random.key(0))
    with pytest.raises(ValueError, match="integer scalar"):
        env.step(state, jnp.float32(1.0), jax.random.key(0))
    with pytest.raises(ValueError, match="integer scalar"):
        env.step(state, jnp.zeros(2, jnp.int32), jax.random.key(0))
    states, _ = jax.vmap(env.reset)(jax.random.split(jax.random.key(0), 3))
    with pytest.raises(ValueError, match="vmap"):
        env.step(states, jnp.int32(0), jax.random.key(0))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jax.vmap(env.step)(states, jnp.zeros(4, jnp.int32), jax.random.split(jax.random.key(0), 3))


def test_render():
    env = make_grid_rooms("four_rooms", start_cells=[(1, 1)], goal_cells=[(7, 6)])
    state, _ = env.reset(jax.random.key(0))
    img = np.asarray(jax.jit(env.render)(state))
    assert img.shape == (72, 72, 3) and img.dtype == np.uint8
    assert img[12, 12].tolist() == [40, 80, 220]  # agent cell (1, 1)
    assert img[7 * 8 + 4, 6 * 8 + 4].tolist() == [220, 60, 60]  # goal cell (7, 6)
    assert img[0, 0].tolist() == [90, 90, 90] and img[12, 20].tolist() == [245] * 3


def test_ppo_solves_four_rooms_from_a_fixed_start():
    # Goal in the neighbouring room: 8 steps through the doorway (numpy BFS).
    start, goal = (1, 1), (3, 7)
    d = bfs(parse(LAYOUTS["four_rooms"]), goal)[start]
    env = make_grid_rooms("four_rooms", start_cells=[start], goal_cells=[goal], max_steps=50)
    cfg = PPOConfig(num_envs=16, num_steps=32, num_updates=60, hidden=(32, 32), lr=3e-3)
    _, m = jax.jit(jax.vmap(make_ppo_train(env, cfg)))(jax.random.split(jax.random.key(0), 2))
    sr, episodes = np.asarray(m["success_rate"]), np.asarray(m["episodes"])
    steps_per_episode = cfg.num_envs * cfg.num_steps / np.maximum(episodes, 1)
    assert d == 8
    assert (steps_per_episode[:, 0] > 2 * d).all()  # the initial policy wanders
    assert (sr[:, -3:] > 0.95).all() and (steps_per_episode[:, -3:] < 1.1 * d).all()


# ----------------------------------------------------------------------- room geometry
def brute_force_rooms(layout):
    """Doors by their neighbourhood, rooms as connected components of the other free cells.

    A door is a free cell with walls on two opposite sides and free cells on the other two
    (true of no room cell when rooms are at least 2 × 2). Rooms are the 4-connected
    components of the free non-door cells; returned as {centroid (row, col): set of cells}.
    """
    walls = parse(layout)
    free = [tuple(c) for c in np.argwhere(~walls)]
    doors = set()
    for r, c in free:
        ns = walls[r, c + 1], walls[r, c - 1]
        ew = walls[r + 1, c], walls[r - 1, c]
        if (all(ns) and not any(ew)) or (all(ew) and not any(ns)):
            doors.add((r, c))
    left = set(free) - doors
    rooms = {}
    while left:
        seed = left.pop()
        comp, queue = {seed}, deque([seed])
        while queue:
            r, c = queue.popleft()
            for dr, dc in MOVES.values():
                if (r + dr, c + dc) in left:
                    left.remove((r + dr, c + dc))
                    comp.add((r + dr, c + dc))
                    queue.append((r + dr, c + dc))
        rooms[tuple(np.mean(sorted(comp), axis=0))] = comp
    return doors, rooms


@pytest.mark.parametrize("n,room", [(1, 2), (2, 3), (3, 3), (3, 5), (4, 2)])
def test_room_geometry_matches_brute_force(n, room):
    doors, rooms = brute_force_rooms(rooms_layout(n, room))
    assert len(rooms) == n * n
    free = np.array(sorted(doors | set().union(*rooms.values())), np.int32)
    idx, door = room_of(free, room)
    assert {tuple(c) for c in free[door]} == doors
    for i in range(n):
        for j in range(n):
            cells = room_cells(n, room, [(i, j)])
            # The room at grid position (i, j) is the component centred at the centre of
            # the (i, j)-th block of room + 1 cells, found independently above.
            centre = (i * (room + 1) + 1 + (room - 1) / 2, j * (room + 1) + 1 + (room - 1) / 2)
            assert {tuple(c) for c in cells.tolist()} == rooms[centre]
            assert (room_of(cells, room)[0] == [i, j]).all()
            assert not room_of(cells, room)[1].any()
    # Several rooms at once: the concatenation, in the order given.
    both = room_cells(n, room, [(n - 1, 0), (0, n - 1)])
    parts = [room_cells(n, room, [r]) for r in [(n - 1, 0), (0, n - 1)]]
    np.testing.assert_array_equal(both, np.concatenate(parts))
    # A door gets the room to its north (south door) or west (east door).
    for r, c in doors:
        i, j = room_of(np.array([[r, c]]), room)[0][0]
        centre = (i * (room + 1) + 1 + (room - 1) / 2, j * (room + 1) + 1 + (room - 1) / 2)
        assert (r - 1, c) in rooms[centre] or (r, c - 1) in rooms[centre]


def test_room_geometry_bad_input():
    with pytest.raises(ValueError, match="rooms must be"):
        room_cells(2, 3, [(2, 0)])
    with pytest.raises(ValueError, match="rooms_per_side and room"):
        room_cells(2, 0, [(0, 0)])
    with pytest.raises(ValueError, match="cells must be integer"):
        room_of(np.array([[1.0, 1.0]]), 3)
    with pytest.raises(ValueError, match="room must be"):
        room_of(np.array([[1, 1]]), 0)
