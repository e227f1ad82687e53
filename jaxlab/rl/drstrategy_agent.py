"""Dr. Strategy's agent: a world model, latent landmarks and four behaviours learned in
imagination, and the agent acting in a :class:`jaxlab.rl.PointMaze`.

The agent (Hamed et al. 2024, "Strategic dreaming", spec ``dr_strategy.md`` components 1–5)
keeps, per seed:

    world model   an RSSM (``s = [h, z]``, ``D = Z + S``) or the deterministic latent model
                  (``s = h``, ``D = Z``), trained on replay windows without task reward
    landmarks     a VQ-VAE on ``h``: ``z_e = E(h)``, ``l = argmin_k ‖z_e − e_k‖``,
                  ``ĥ_l = D(e_l)``; loss ``‖D(z_q) − h‖² + β‖z_e − sg(e_l)‖²``, codebook by
                  EMA, dead codes re-seeded every ``reseed_every`` updates
    behaviours    four actor-critics on ``[s, context]`` (context ``[C]``, ``C = max(K, D)``),
                  trained under one ``vmap`` with Dreamer's λ-returns:
                    HIGHWAY     context onehot(l),  r = −‖ĥ_l − h‖ (+ α r_knn(h))
                    EXPLORER    context 0,          r = mean_z Var_e[f_e(s, a)] / mean r
                    FLAT_ACHIEVER, DRSTRATEGY_ACHIEVER
                                context s_g,        r = −d̂(s, s_g)   (the TDP)
                  the flat achiever's imagination starts at replay states, Dr. Strategy's at
                  a visited state of the landmark nearest the goal ("focused sampling")
    TDP           d̂(s_i, s_j) ≈ (j − i) / H on pairs of the achievers' imagined
                  trajectories, 1 across trajectories (LEXA's temporal distance)
    curiosity     c_l = mean explorer λ-return of rollouts starting at ĥ_l,
                  p(l) ∝ c_l − min_k c_k + ε     (the landmark sampling distribution)

Acting (:func:`drstrategy_episode`): "go there, then explore / achieve": the highway policy
runs towards landmark ``l`` until the state's nearest landmark is ``l`` or
``mean (h − ĥ_l)² < reach_mse``, or for ``max_highway_steps``; then the explorer (collection)
or an achiever (evaluation) takes over.

The rewards, the landmark loss, curiosity, TDP pairs and focused sampling are the kernels of
:mod:`jaxlab.rl.drstrategy` (equations in its docstring); this module wires them into one
agent. Every public function is pure (use it under ``jit``/``vmap``/``scan``); the
hyper-parameters (:class:`DrStrategyConfig`) are static Python values.

Shapes: ``O`` observation size, ``A`` actions, ``Z`` size of ``h``, ``S`` of ``z``, ``D``
of the state, ``K`` landmarks, ``C`` context, ``B`` imagination batch, ``H`` horizon.

References:
  Hamed, Kim, Kim, Yoon, Ahn. Dr. Strategy: Model-Based Generalist Agents with Strategic
  Dreaming. ICML 2024.
  Hafner, Lillicrap, Norouzi, Ba. Mastering Atari with Discrete World Models (DreamerV2).
  ICLR 2021.
  Mendonca, Rybkin, Daniilidis, Hafner, Pathak. Discovering and Achieving Goals via World
  Models (LEXA). NeurIPS 2021.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_range, check_type, is_traced
from jaxlab._optional import lazy_import
from jaxlab.nn.mlp import MLP
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
from jaxlab.rl.envs import MazeState, PointMaze
from jaxlab.rl.imagination import actor_critic_loss, imagine, lambda_returns
from jaxlab.rl.landmarks import VQState, ema_update, init_vq, reseed_dead_codes
from jaxlab.rl.replay import ReplayBuffer, replay_sample
from jaxlab.rl.rssm import RSSM, rssm_loss
from jaxlab.rl.world_model import LatentWorldModel, world_model_loss

distrax = lazy_import("distrax", extra="rl")

__all__ = [
    "ACHIEVE_DRSTRATEGY",
    "ACHIEVE_FLAT",
    "DRSTRATEGY_ACHIEVER",
    "EXPLORE",
    "EXPLORER",
    "FLAT_ACHIEVER",
    "HIGHWAY",
    "RANDOM",
    "Behaviours",
    "DrStrategyAgent",
    "DrStrategyConfig",
    "DrStrategyNetworks",
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
]

# The behaviours, in the order of the stacked leaves of :class:`Behaviours`.
HIGHWAY, EXPLORER, FLAT_ACHIEVER, DRSTRATEGY_ACHIEVER = range(4)
NUM_BEHAVIOURS = 4
# Episode modes of :func:`drstrategy_episode`.
RANDOM, EXPLORE, ACHIEVE_FLAT, ACHIEVE_DRSTRATEGY = range(4)


def _dreamer_adam() -> optax.GradientTransformation:
    """DreamerV2's optimiser: Adam (lr 1e-3, ε 1e-5) after a global-norm clip of 100."""
    return optax.chain(optax.clip_by_global_norm(100.0), optax.adam(1e-3, eps=1e-5))


_POSITIVE_INTS = (
    "obs_dim",
    "num_actions",
    "latent_dim",
    "stoch_dim",
    "world_model_hidden",
    "num_landmarks",
    "code_dim",
    "policy_hidden",
    "reseed_every",
    "model_batch",
    "imagination_batch",
    "horizon",
    "knn_k",
    "tdp_positives",
    "episode_length",
    "curiosity_rollouts",
)
_UNIT_FLOATS = ("kl_balance", "discount", "lambda_")
_NONNEGATIVE_FLOATS = (
    "free_nats",
    "kl_scale",
    "dead_code_min_count",
    "entropy_coef",
    "knn_weight",
    "tdp_neg_factor",
    "reach_mse",
)


@dataclasses.dataclass(frozen=True)
class DrStrategyConfig:
    """The agent's hyper-parameters (static; the defaults are the maze experiment's quick
    preset, the reference code's ``agent/drstrategy.yaml`` where it has the value).

    Attributes:
      obs_dim: ``O``, the observation size.
      num_actions: ``A``, discrete actions.
      stochastic_latent: an RSSM with a Gaussian ``z`` (``True``) or the deterministic
        latent model (``False``).
      latent_dim: ``Z``, the size of ``h`` (the RSSM's GRU state; the landmarks live on it).
      stoch_dim: ``S``, the size of the RSSM's ``z`` (unused when deterministic).
      world_model_hidden: hidden width of the world model and the landmark VQ-VAE.
      ensemble_size: ``E >= 2`` one-step predictors of the explorer's disagreement.
      num_landmarks: ``K``, codebook entries.
      code_dim: size of a landmark code ``e_k``.
      policy_hidden: hidden width (two layers) of the actors, critics and the TDP.
      kl_balance: DreamerV2's KL-balancing ``α`` in ``[0, 1]``.
      free_nats: free nats of the KL.
      kl_scale: weight of the KL.
      codebook_decay: EMA decay of the codebook, in ``[0, 1)``.
      dead_code_min_count: codes with an EMA count below this are re-seeded.
      reseed_every: re-seed dead codes on updates whose index is a multiple of this.
      model_batch: replay windows per world-model update.
      model_length: steps per replay window (``>= 2``).
      imagination_batch: ``B``, imagined rollouts per behaviour and update (``>= 2``).
      horizon: ``H``, imagination steps.
      discount: ``γ`` of the λ-returns, in ``[0, 1]``.
      lambda_: ``λ`` of the λ-returns, in ``[0, 1]``.
      entropy_coef: the actors' entropy bonus.
      knn_weight: ``α``, weight of the kNN particle reward in the highway reward (0: off).
      knn_k: ``k`` of the kNN particle reward.
      tdp_positives: positive TDP pairs per update.
      tdp_neg_factor: negative TDP pairs per positive.
      episode_length: steps of one :func:`drstrategy_episode`.
      reach_mse: the highway phase ends once ``mean (h − ĥ_l)² <`` this.
      max_highway_steps: at most this many highway steps (``>= 0``).
      curiosity_rollouts: imagined explorer rollouts per landmark for curiosity.
      model_optimizer: optax optimiser of the world model and of the landmark VQ-VAE.
      behaviour_optimizer: optax optimiser of the behaviours and of the TDP.
    """

    obs_dim: int = 2
    num_actions: int = 4
    stochastic_latent: bool = True
    latent_dim: int = 32
    stoch_dim: int = 16
    world_model_hidden: int = 96
    ensemble_size: int = 4
    num_landmarks: int = 16
    code_dim: int = 16
    policy_hidden: int = 64
    kl_balance: float = 0.8
    free_nats: float = 1.0
    kl_scale: float = 1.0
    codebook_decay: float = 0.99
    dead_code_min_count: float = 1.0
    reseed_every: int = 25
    model_batch: int = 32
    model_length: int = 16
    imagination_batch: int = 64
    horizon: int = 15
    discount: float = 0.99
    lambda_: float = 0.95
    entropy_coef: float = 1e-3
    knn_weight: float = 0.0
    knn_k: int = 30
    tdp_positives: int = 256
    tdp_neg_factor: float = 0.1
    episode_length: int = 100
    reach_mse: float = 0.05
    max_highway_steps: int = 30
    curiosity_rollouts: int = 4
    model_optimizer: optax.GradientTransformation = dataclasses.field(default_factory=_dreamer_adam)
    behaviour_optimizer: optax.GradientTransformation = dataclasses.field(
        default_factory=_dreamer_adam
    )

    def __post_init__(self) -> None:
        for name in _POSITIVE_INTS:
            check_integer(name, getattr(self, name), low=1)
        check_integer("ensemble_size", self.ensemble_size, low=2)
        check_integer("model_length", self.model_length, low=2)
        check_integer("imagination_batch", self.imagination_batch, low=2)
        check_integer("max_highway_steps", self.max_highway_steps, low=0)
        if not isinstance(self.stochastic_latent, bool):
            raise ValueError(f"stochastic_latent must be a bool, got {self.stochastic_latent!r}")
        for name in _UNIT_FLOATS:
            check_range(name, getattr(self, name), 0.0, 1.0)
        for name in _NONNEGATIVE_FLOATS:
            check_range(name, getattr(self, name), 0.0)
        check_range("codebook_decay", self.codebook_decay, 0.0, 1.0, high_open=True)
        for name in ("model_optimizer", "behaviour_optimizer"):
            check_type(name, getattr(self, name), optax.GradientTransformation)

    @property
    def state_dim(self) -> int:
        """``D``: ``Z + S`` (RSSM) or ``Z`` (deterministic model)."""
        return self.latent_dim + (self.stoch_dim if self.stochastic_latent else 0)

    @property
    def context_dim(self) -> int:
        """``C = max(K, D)``: a landmark's one-hot or a goal state, zero-padded."""
        return max(self.num_landmarks, self.state_dim)


class DrStrategyNetworks(NamedTuple):
    """The agent's Flax modules (built from the config by :func:`drstrategy_networks`)."""

    world_model: LatentWorldModel | RSSM
    landmarks: LandmarkVQ  # h [.., Z] -> z_e [.., code_dim] -> ĥ [.., Z]
    actor: MLP  # [s, context] [.., D + C] -> logits [.., A]
    critic: MLP  # [s, context] [.., D + C] -> value [.., 1]
    temporal_distance: MLP  # [s_i, s_j] [.., 2D] -> d̂ [.., 1]


class Behaviours(NamedTuple):
    """Actor and critic parameters, every leaf stacked ``[4, ...]`` in the order
    ``HIGHWAY, EXPLORER, FLAT_ACHIEVER, DRSTRATEGY_ACHIEVER``."""

    actor: Any
    critic: Any


class DrStrategyAgent(NamedTuple):
    """One agent's learned state (a pytree: ``vmap`` it over seeds)."""

    world_model: Any  # world-model parameters
    landmarks: Any  # LandmarkVQ parameters (encoder and decoder)
    codebook: VQState  # the EMA codebook e [K, code_dim] and its statistics
    behaviours: Behaviours
    temporal_distance: Any  # TDP parameters
    opt_state: tuple[Any, Any, Any, Any]  # world model, landmarks, behaviours [4], TDP


def _apply(module: nn.Module, params: Any, *args: Any, method: Any = None) -> Any:
    """``module.apply(params, *args, method=method)`` (typed ``Any``: Flax's ``apply`` also
    returns ``(out, state)`` pairs, which no call here asks for)."""
    return module.apply(params, *args, method=method)


def _check_config(config: Any) -> DrStrategyConfig:
    return check_type("config", config, DrStrategyConfig)


def _check_agent(agent: Any) -> DrStrategyAgent:
    return check_type("agent", agent, DrStrategyAgent)


def _check_last_axis(name: str, x: ArrayLike, size: int) -> jax.Array:
    arr = jnp.asarray(x)
    if arr.ndim < 1 or arr.shape[-1] != size:
        raise ValueError(f"{name} must be [..., {size}], got shape {arr.shape}")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        raise ValueError(f"{name} must be floating, got dtype {arr.dtype}")
    return arr


def _check_index(name: str, x: ArrayLike, high: int) -> jax.Array:
    """An integer scalar in ``[0, high)`` (the range checked when concrete)."""
    arr = jnp.asarray(x)
    if arr.ndim != 0 or not jnp.issubdtype(arr.dtype, jnp.integer):
        raise ValueError(f"{name} must be an integer scalar, got {arr.dtype} {arr.shape}")
    if not is_traced(arr) and not 0 <= int(arr) < high:
        raise ValueError(f"{name} must lie in [0, {high}), got {int(arr)}")
    return arr


def _deterministic_part(config: DrStrategyConfig, states: jax.Array) -> jax.Array:
    """``h [..., Z]``: the first ``Z`` entries of states ``[..., D]`` (landmarks live on h)."""
    return states[..., : config.latent_dim]


def _pad_context(x: jax.Array, dim: int) -> jax.Array:
    """Zero-pads the last axis of ``x`` to ``dim`` (a one-hot or a goal state → ``[.., C]``)."""
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, dim - x.shape[-1])])


def drstrategy_networks(config: DrStrategyConfig) -> DrStrategyNetworks:
    """The agent's modules for ``config`` (see :class:`DrStrategyNetworks` for shapes)."""
    config = _check_config(config)
    hidden = (config.policy_hidden, config.policy_hidden)
    world_model: LatentWorldModel | RSSM
    if config.stochastic_latent:
        world_model = RSSM(
            obs_dim=config.obs_dim,
            num_actions=config.num_actions,
            deter=config.latent_dim,
            stoch=config.stoch_dim,
            hidden=config.world_model_hidden,
            embed_dim=config.latent_dim,
            ensemble_size=config.ensemble_size,
        )
    else:
        world_model = LatentWorldModel(
            obs_dim=config.obs_dim,
            num_actions=config.num_actions,
            latent=config.latent_dim,
            hidden=config.world_model_hidden,
            ensemble_size=config.ensemble_size,
        )
    return DrStrategyNetworks(
        world_model,
        LandmarkVQ(
            latent=config.latent_dim,
            code_dim=config.code_dim,
            hidden=(config.world_model_hidden,),
        ),
        MLP(config.num_actions, hidden, activation=nn.elu),
        MLP(1, hidden, activation=nn.elu),
        MLP(1, hidden, activation=nn.elu),
    )


def drstrategy_init(key: ArrayLike, config: DrStrategyConfig) -> DrStrategyAgent:
    """A fresh agent: initial parameters, a random codebook and the optimiser states.

    Args:
      key: PRNG key.
      config: the hyper-parameters.

    Returns:
      The :class:`DrStrategyAgent`.
    """
    key = check_key("key", key)
    config = _check_config(config)
    nets = drstrategy_networks(config)
    keys = jax.random.split(key, 6)
    world_model = nets.world_model.init(
        keys[0], jnp.zeros((1, config.obs_dim)), jnp.zeros((1,), jnp.int32)
    )
    landmarks = nets.landmarks.init(keys[1], jnp.zeros((1, config.latent_dim)))

    def behaviour(key: jax.Array) -> Behaviours:
        k_actor, k_critic = jax.random.split(key)
        x = jnp.zeros((1, config.state_dim + config.context_dim))
        return Behaviours(nets.actor.init(k_actor, x), nets.critic.init(k_critic, x))

    behaviours = jax.vmap(behaviour)(jax.random.split(keys[2], NUM_BEHAVIOURS))
    temporal_distance = nets.temporal_distance.init(keys[3], jnp.zeros((1, 2 * config.state_dim)))
    model_tx, behaviour_tx = config.model_optimizer, config.behaviour_optimizer
    opt_state = (
        model_tx.init(world_model),
        model_tx.init(landmarks),
        jax.vmap(behaviour_tx.init)(behaviours),
        behaviour_tx.init(temporal_distance),
    )
    codebook = init_vq(keys[4], config.num_landmarks, config.code_dim)
    return DrStrategyAgent(
        world_model, landmarks, codebook, behaviours, temporal_distance, opt_state
    )


def _landmark_states(
    nets: DrStrategyNetworks, agent: DrStrategyAgent, config: DrStrategyConfig
) -> jax.Array:
    decoded = _apply(
        nets.landmarks, agent.landmarks, agent.codebook.codebook, method=nets.landmarks.decode
    )
    if config.stochastic_latent:  # the prior's mean completes the state: [ĥ_l, μ_p(ĥ_l)]
        prior_mean = _apply(
            nets.world_model, agent.world_model, decoded, method=nets.world_model.prior
        )[0]
        decoded = jnp.concatenate([decoded, prior_mean], -1)
    return decoded


def drstrategy_landmark_states(agent: DrStrategyAgent, config: DrStrategyConfig) -> jax.Array:
    """The decoded landmarks as states: ``ĥ_l = D(e_l)`` ``[K, Z]``; with the RSSM
    ``[ĥ_l, μ_p(ĥ_l)]`` ``[K, Z + S]`` (the prior's mean completes the state)."""
    agent, config = _check_agent(agent), _check_config(config)
    return _landmark_states(drstrategy_networks(config), agent, config)


def drstrategy_landmark_of(
    agent: DrStrategyAgent, config: DrStrategyConfig, states: ArrayLike
) -> jax.Array:
    """The landmark of each state: ``argmin_l ‖h − ĥ_l‖`` on ``h``, for ``states [n, D]``
    → ``[n]`` int."""
    agent, config = _check_agent(agent), _check_config(config)
    states = _check_last_axis("states", states, config.state_dim)
    if states.ndim != 2:
        raise ValueError(f"states must be [n, {config.state_dim}], got shape {states.shape}")
    landmarks = _landmark_states(drstrategy_networks(config), agent, config)
    return nearest_landmark(
        _deterministic_part(config, states), _deterministic_part(config, landmarks)
    )


def drstrategy_encode(
    agent: DrStrategyAgent, config: DrStrategyConfig, observations: ArrayLike
) -> jax.Array:
    """The state of a single observation (a goal): the world model's ``encode``,
    ``[..., O]`` → ``[..., D]``."""
    agent, config = _check_agent(agent), _check_config(config)
    observations = _check_last_axis("observations", observations, config.obs_dim)
    wm = drstrategy_networks(config).world_model
    return _apply(wm, agent.world_model, observations, method=wm.encode)


def drstrategy_decode(
    agent: DrStrategyAgent, config: DrStrategyConfig, states: ArrayLike
) -> jax.Array:
    """The world model's reconstruction of states ``[..., D]`` → observations ``[..., O]``."""
    agent, config = _check_agent(agent), _check_config(config)
    states = _check_last_axis("states", states, config.state_dim)
    wm = drstrategy_networks(config).world_model
    return _apply(wm, agent.world_model, states, method=wm.decode)


def drstrategy_filter(
    agent: DrStrategyAgent,
    config: DrStrategyConfig,
    observations: ArrayLike,
    actions: ArrayLike,
    key: ArrayLike,
) -> jax.Array:
    """The agent's states along stored sequences: the RSSM's filtered posterior means
    (``z = μ_q``), or the deterministic model's encoder step by step.

    Args:
      agent: the agent.
      config: its hyper-parameters.
      observations: ``[B, T, O]``.
      actions: ``[B, T − 1]`` int, ``a_t`` between ``o_t`` and ``o_{t+1}``.
      key: PRNG key (unused by the means; the RSSM's filter takes one).

    Returns:
      ``[B, T, D]``.
    """
    agent, config = _check_agent(agent), _check_config(config)
    observations = _check_last_axis("observations", observations, config.obs_dim)
    if observations.ndim != 3:
        raise ValueError(f"observations must be [B, T, O], got shape {observations.shape}")
    actions = jnp.asarray(actions)
    batch, length = observations.shape[:2]
    if actions.shape != (batch, length - 1) or not jnp.issubdtype(actions.dtype, jnp.integer):
        raise ValueError(
            f"actions must be int [{batch}, {length - 1}], got {actions.dtype} {actions.shape}"
        )
    key = check_key("key", key)
    wm = drstrategy_networks(config).world_model
    if config.stochastic_latent:
        return _apply(wm, agent.world_model, observations, actions, key, False, method=wm.observe)[
            0
        ]
    flat = _apply(wm, agent.world_model, observations.reshape(-1, config.obs_dim), method=wm.encode)
    return flat.reshape(batch, length, -1)


def _policy(
    nets: DrStrategyNetworks, actor: Any, context: jax.Array
) -> Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array, jax.Array]]:
    """``π(a | s, context)``: ``(s [B, D], key) -> (a [B], log π [B], entropy [B])``."""

    def policy(states: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        logits = _apply(nets.actor, actor, jnp.concatenate([states, context], -1))
        dist = distrax.Categorical(logits=logits)
        action = dist.sample(seed=key)
        return action, dist.log_prob(action), dist.entropy()

    return policy


def _imagine(
    nets: DrStrategyNetworks,
    config: DrStrategyConfig,
    agent: DrStrategyAgent,
    actor: Any,
    start: jax.Array,
    context: jax.Array,
    key: jax.Array,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Rollouts of ``H`` steps in the world model from ``start [B, D]`` (the RSSM samples its
    prior): ``(states [H + 1, B, D], actions [H, B], log π [H, B], entropy [H, B])``."""
    wm = nets.world_model

    def transition(states: jax.Array, action: jax.Array, *key: jax.Array) -> jax.Array:
        return _apply(wm, agent.world_model, states, action, *key, method=wm.transition)

    return imagine(
        transition,
        _policy(nets, actor, context),
        start,
        key,
        config.horizon,
        stochastic=config.stochastic_latent,
    )


def _explorer_reward(
    nets: DrStrategyNetworks, world_model: Any, states: jax.Array, actions: jax.Array
) -> jax.Array:
    """``r_exp = mean_z Var_e[f_e(s_t, a_t)]`` ``[H, B]`` (Plan2Explore disagreement),
    divided by its batch mean (Dreamer's reward normalisation)."""
    wm = nets.world_model
    reward = disagreement_reward(_apply(wm, world_model, states[:-1], actions, method=wm.ensemble))
    return reward / jax.lax.stop_gradient(jnp.mean(reward) + 1e-8)


def _replay_states(
    nets: DrStrategyNetworks, world_model: Any, replay: ReplayBuffer, key: jax.Array, n: int
) -> jax.Array:
    """``[n, D]`` encoded single observations drawn from the replay buffer."""
    batch = replay_sample(replay, key, n, 1)
    wm = nets.world_model
    return jax.lax.stop_gradient(_apply(wm, world_model, batch["obs"][:, 0], method=wm.encode))


def _check_replay(replay: Any, config: DrStrategyConfig) -> ReplayBuffer:
    replay = check_type("replay", replay, ReplayBuffer)
    data = replay.data
    if not isinstance(data, dict) or not {"obs", "action"} <= set(data):
        raise ValueError("replay must store a dict with 'obs' [T, O] and 'action' [T] segments")
    if data["obs"].shape[-1] != config.obs_dim:
        raise ValueError(
            f"replay 'obs' must be [N, T, {config.obs_dim}], got shape {data['obs'].shape}"
        )
    return replay


def drstrategy_update(
    agent: DrStrategyAgent,
    config: DrStrategyConfig,
    replay: ReplayBuffer,
    key: ArrayLike,
    step: ArrayLike,
) -> tuple[DrStrategyAgent, dict[str, jax.Array]]:
    """One Dreamer-style update of every part of the agent, in this order.

    1. World model on ``model_batch`` replay windows of ``model_length`` steps (the RSSM's
       loss with KL balancing and free nats, :func:`jaxlab.rl.rssm_loss`; or
       :func:`jaxlab.rl.world_model_loss`).
    2. Landmarks: the VQ-VAE loss ``‖D(z_q) − h‖² + β‖z_e − sg(e_l)‖²`` on the windows'
       ``h`` (the RSSM's posterior states), the codebook by EMA, dead codes re-seeded when
       ``step % reseed_every == 0``.
    3. The four behaviours under one ``vmap``, each an actor-critic loss on ``B`` imagined
       rollouts of ``H`` steps (:func:`jaxlab.rl.actor_critic_loss`):
       highway from replay states with a uniform landmark ``l`` as context,
       ``r = −‖ĥ_l − h‖ (+ α r_knn(h))``; explorer from replay states (half) and decoded
       landmarks (half), ``r = r_exp``; the flat achiever from replay states and Dr.
       Strategy's achiever from a replay state of the goal's landmark (focused sampling),
       both with a replay state as goal ``s_g`` and ``r = −d̂(s, s_g)``.
    4. The TDP: ``(d̂(s_i, s_j) − target)²`` on pairs of both achievers' trajectories.

    Args:
      agent: the agent.
      config: its hyper-parameters.
      replay: a :class:`jaxlab.rl.ReplayBuffer` of ``{"obs": [T, O], "action": [T] int}``
        segments (``action[t]`` leads from ``obs[t]`` to ``obs[t + 1]``).
      key: PRNG key.
      step: int scalar, the update's index (dead codes are re-seeded on multiples of
        ``reseed_every``).

    Returns:
      ``(agent', metrics)`` with scalar ``world_model_loss``, ``landmark_loss``,
      ``tdp_loss`` and the behaviours' mean λ-returns ``returns [4]``.
    """
    agent, config = _check_agent(agent), _check_config(config)
    replay = _check_replay(replay, config)
    key = check_key("key", key)
    step = jnp.asarray(step)
    if step.ndim != 0 or not jnp.issubdtype(step.dtype, jnp.integer):
        raise ValueError(f"step must be an integer scalar, got {step.dtype} {step.shape}")
    nets = drstrategy_networks(config)
    wm = nets.world_model
    model_tx, behaviour_tx = config.model_optimizer, config.behaviour_optimizer
    opt_model, opt_landmarks, opt_behaviours, opt_tdp = agent.opt_state
    k_model, k_focus, k_reseed, k_starts, k_landmark, k_imagine, k_tdp = jax.random.split(key, 7)

    # 1. World model on replay windows.
    windows = replay_sample(replay, k_model, config.model_batch, config.model_length)
    if isinstance(wm, RSSM):  # the windows' posterior states start imagination
        rssm = wm

        def model_loss(params: Any, batch: Any) -> Any:
            return rssm_loss(
                params,
                rssm,
                batch["obs"],
                batch["action"][:, :-1],
                jax.random.fold_in(k_model, 1),
                alpha=config.kl_balance,
                free_nats=config.free_nats,
                kl_scale=config.kl_scale,
            )
    else:
        latent_model = wm

        def model_loss(params: Any, batch: Any) -> Any:
            return world_model_loss(params, latent_model, batch["obs"], batch["action"][:, :-1])

    (world_model, opt_model), (model_loss_value, model_aux) = _optimizer_step(
        model_loss, model_tx, (agent.world_model, opt_model), windows
    )

    # 2. Landmarks: the VQ-VAE on the windows' h; EMA codebook; dead codes re-seeded.
    if config.stochastic_latent:
        posterior = model_aux[1].reshape(-1, model_aux[1].shape[-1])  # [n, D]
        h = _deterministic_part(config, posterior)
    else:
        h = jax.lax.stop_gradient(
            _apply(wm, world_model, windows["obs"].reshape(-1, config.obs_dim), method=wm.encode)
        )
    # L_lm = ‖D(z_q) − h‖² + β‖z_e − sg(e_l)‖², straight-through z_q.
    (landmarks, opt_landmarks), (landmark_loss_value, (z_e, codes)) = _optimizer_step(
        lambda p, x: landmark_loss(p, nets.landmarks, agent.codebook.codebook, x),
        model_tx,
        (agent.landmarks, opt_landmarks),
        h,
    )
    # e_k ← EMA of the z_e assigned to k (VQ-VAE, van den Oord et al. 2017, App. A.1).
    codebook = ema_update(agent.codebook, z_e, codes, decay=config.codebook_decay)
    reseeded = reseed_dead_codes(codebook, z_e, k_reseed, min_count=config.dead_code_min_count)
    codebook = jax.tree.map(
        lambda r, c: jnp.where(step % config.reseed_every == 0, r, c), reseeded, codebook
    )
    agent = agent._replace(world_model=world_model, landmarks=landmarks, codebook=codebook)

    # 3. The behaviours in imagination.
    landmark_states = _landmark_states(nets, agent, config)  # [K, D]
    n, context_dim = config.imagination_batch, config.context_dim
    if config.stochastic_latent:
        replay_states = posterior[jax.random.randint(k_starts, (3 * n,), 0, posterior.shape[0])]
    else:
        replay_states = _replay_states(nets, world_model, replay, k_starts, 3 * n)
    starts, goals, others = replay_states[:n], replay_states[n : 2 * n], replay_states[2 * n :]
    landmark = jax.random.randint(k_landmark, (n,), 0, config.num_landmarks)
    # Focused sampling on h: a visited state of the goal's landmark (the full state of the
    # chosen candidate is looked up by its h).
    focused_h, _ = focused_starts(
        _deterministic_part(config, goals),
        _deterministic_part(config, landmark_states),
        _deterministic_part(config, others),
        k_focus,
    )
    if config.stochastic_latent:
        focused = others[nearest_landmark(focused_h, _deterministic_part(config, others))]
    else:
        focused = focused_h
    half = n // 2
    explorer_starts = jnp.concatenate([others[:half], landmark_states[landmark[half:]]])
    behaviour_starts = jnp.stack([starts, explorer_starts, others, focused])  # [4, B, D]
    goal_context = _pad_context(goals, context_dim)
    contexts = jnp.stack(
        [
            _pad_context(jax.nn.one_hot(landmark, config.num_landmarks), context_dim),
            jnp.zeros((n, context_dim)),
            goal_context,
            goal_context,
        ]
    )  # [4, B, C]
    target = _deterministic_part(config, landmark_states[landmark])  # ĥ_l [B, Z]

    def reward(behaviour: jax.Array, states: jax.Array, actions: jax.Array) -> jax.Array:
        """``r_t`` ``[H, B]`` of the behaviour's rollout ``states [H + 1, B, D]``."""
        h_next = _deterministic_part(config, states[1:])
        # Highway: r = −‖ĥ_l − h‖ (+ α r_knn(h), Choreographer's particle entropy).
        r_highway = highway_reward(h_next, jnp.broadcast_to(target[None], h_next.shape))
        if config.knn_weight:
            r_highway = r_highway + config.knn_weight * jax.vmap(
                lambda x: knn_particle_reward(x, config.knn_k)
            )(h_next)
        r_explorer = _explorer_reward(nets, world_model, states, actions)  # mean_z Var_e f_e
        # Achievers: r = −d̂(s, s_g), the TDP's temporal distance to the goal (LEXA).
        pairs = jnp.concatenate([states[1:], jnp.broadcast_to(goals[None], states[1:].shape)], -1)
        r_achiever = -_apply(nets.temporal_distance, agent.temporal_distance, pairs)[..., 0]
        return jnp.where(
            behaviour == HIGHWAY,
            r_highway,
            jnp.where(behaviour == EXPLORER, r_explorer, r_achiever),
        )

    def behaviour_loss(
        params: Behaviours,
        behaviour: jax.Array,
        start: jax.Array,
        context: jax.Array,
        key: jax.Array,
    ) -> tuple[jax.Array, tuple[dict[str, jax.Array], jax.Array]]:
        states, actions, log_probs, entropies = _imagine(
            nets, config, agent, params.actor, start, context, key
        )
        inputs = jnp.concatenate(
            [states, jnp.broadcast_to(context[None], states.shape[:2] + context.shape[1:])], -1
        )
        values = _apply(nets.critic, params.critic, inputs)[..., 0]
        total, metrics = actor_critic_loss(
            reward(behaviour, states, actions),
            values,
            log_probs,
            entropies,
            discount=config.discount,
            lambda_=config.lambda_,
            ent_coef=config.entropy_coef,
        )
        return total, (metrics, states)

    (behaviours, opt_behaviours), (_, (metrics, trajectories)) = jax.vmap(
        lambda carry, xs: _optimizer_step(
            lambda p, x: behaviour_loss(p, *x), behaviour_tx, carry, xs
        )
    )(
        (agent.behaviours, opt_behaviours),
        (
            jnp.arange(NUM_BEHAVIOURS),
            behaviour_starts,
            contexts,
            jax.random.split(k_imagine, NUM_BEHAVIOURS),
        ),
    )

    # 4. The TDP on both achievers' imagined trajectories (shared by the two achievers).
    achieved = jnp.concatenate(
        [trajectories[FLAT_ACHIEVER], trajectories[DRSTRATEGY_ACHIEVER]], 1
    )  # [H + 1, 2B, D]
    pairs = temporal_distance_pairs(achieved, k_tdp, config.tdp_positives, config.tdp_neg_factor)

    def tdp_loss(params: Any, batch: tuple[jax.Array, jax.Array, jax.Array]) -> jax.Array:
        first, second, distance = batch
        predicted = _apply(nets.temporal_distance, params, jnp.concatenate([first, second], -1))
        return jnp.mean(jnp.square(predicted[..., 0] - distance))

    (temporal_distance, opt_tdp), tdp_loss_value = _optimizer_step(
        tdp_loss, behaviour_tx, (agent.temporal_distance, opt_tdp), pairs, has_aux=False
    )
    agent = agent._replace(
        behaviours=behaviours,
        temporal_distance=temporal_distance,
        opt_state=(opt_model, opt_landmarks, opt_behaviours, opt_tdp),
    )
    return agent, {
        "world_model_loss": model_loss_value,
        "landmark_loss": landmark_loss_value,
        "tdp_loss": tdp_loss_value,
        "returns": metrics["return"],
    }


def _optimizer_step(
    loss_fn: Callable[[Any, Any], Any],
    optimizer: optax.GradientTransformation,
    carry: tuple[Any, Any],
    batch: Any,
    has_aux: bool = True,
) -> tuple[tuple[Any, Any], Any]:
    """``((params', opt_state'), loss or (loss, aux))``: one optax step on
    ``loss_fn(params, batch)``."""
    params, opt_state = carry
    out, grads = jax.value_and_grad(loss_fn, has_aux=has_aux)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), opt_state), out


def drstrategy_curiosity(
    agent: DrStrategyAgent, config: DrStrategyConfig, key: ArrayLike
) -> jax.Array:
    """The landmark sampling distribution ``p [K]``: ``c_l`` = mean λ-return of
    ``curiosity_rollouts`` explorer rollouts from each decoded landmark ``ĥ_l``,
    ``p(l) ∝ c_l − min_k c_k + ε`` (:func:`jaxlab.rl.landmark_curiosity`)."""
    agent, config = _check_agent(agent), _check_config(config)
    key = check_key("key", key)
    nets = drstrategy_networks(config)
    landmark_states = _landmark_states(nets, agent, config)
    starts = jnp.repeat(jnp.arange(config.num_landmarks), config.curiosity_rollouts)
    explorer = jax.tree.map(lambda x: x[EXPLORER], agent.behaviours)
    context = jnp.zeros((starts.shape[0], config.context_dim))
    states, actions, _, _ = _imagine(
        nets, config, agent, explorer.actor, landmark_states[starts], context, key
    )
    rewards = _explorer_reward(nets, agent.world_model, states, actions)
    inputs = jnp.concatenate(
        [states, jnp.broadcast_to(context[None], states.shape[:2] + context.shape[1:])], -1
    )
    values = _apply(nets.critic, explorer.critic, inputs)[..., 0]
    # G^λ_t = r_t + γ((1 − λ) v_{t+1} + λ G^λ_{t+1})  (Dreamer's λ-return).
    returns = lambda_returns(
        rewards, jnp.full_like(rewards, config.discount), values[1:], config.lambda_
    )
    # c_l = mean_{rollouts from ĥ_l} G^λ_0,  p(l) ∝ c_l − min_k c_k + ε.
    _, probabilities = landmark_curiosity(returns[0], starts, config.num_landmarks)
    return probabilities


def _unit_position(position: jax.Array, size: jax.Array) -> jax.Array:
    """Maze positions in cells ``[..., 2]`` → the observation range ``[−1, 1]``."""
    return position / jnp.broadcast_to(size, position.shape) * 2.0 - 1.0


def drstrategy_episode(
    agent: DrStrategyAgent,
    config: DrStrategyConfig,
    env: PointMaze,
    key: ArrayLike,
    start: ArrayLike,
    goal: ArrayLike,
    landmark: ArrayLike,
    mode: ArrayLike,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """One episode of ``episode_length`` steps in the maze, the agent filtering its state.

    Modes: ``RANDOM`` (uniform actions), ``EXPLORE`` (highway to ``landmark``, then the
    explorer: collection), ``ACHIEVE_FLAT`` (the flat achiever towards ``goal``) and
    ``ACHIEVE_DRSTRATEGY`` (highway to ``landmark``, then Dr. Strategy's achiever). The
    highway phase ends once the state's nearest landmark is ``landmark`` or
    ``mean (h − ĥ_l)² < reach_mse``, or after ``max_highway_steps``. Actions are sampled
    from the policies; the agent stops moving once the goal is reached. The state is the
    deterministic model's encoding of the position, or the RSSM's filtered posterior mean.

    Args:
      agent: the agent.
      config: its hyper-parameters (``obs_dim == 2``: the observation is the position).
      env: the maze (its ``max_steps`` above ``episode_length`` for one episode).
      key: PRNG key.
      start: ``[2]`` start position (x, y) in cells.
      goal: ``[2]`` goal position in cells (an unreachable one for collection).
      landmark: int scalar in ``[0, K)``, the highway's landmark.
      mode: int scalar, one of the modes above.

    Returns:
      ``(positions [T, 2] in cells before each step, actions [T] int, success, whether the
      highway phase reached its landmark)``.
    """
    agent, config = _check_agent(agent), _check_config(config)
    env = check_type("env", env, PointMaze)
    if config.obs_dim != 2:
        raise ValueError(f"config.obs_dim must be 2 (maze positions), got {config.obs_dim}")
    key = check_key("key", key)
    start = _check_last_axis("start", start, 2)
    goal = _check_last_axis("goal", goal, 2)
    if start.ndim != 1:
        raise ValueError(f"start must be [2], got shape {start.shape}")
    if goal.ndim != 1:
        raise ValueError(f"goal must be [2], got shape {goal.shape}")
    landmark = _check_index("landmark", landmark, config.num_landmarks)
    mode = _check_index("mode", mode, 4)
    nets = drstrategy_networks(config)
    wm = nets.world_model
    landmark_states = _landmark_states(nets, agent, config)
    size = jnp.asarray(env.size)
    context_dim = config.context_dim
    goal_state = _apply(wm, agent.world_model, _unit_position(goal, size), method=wm.encode)
    highway_context = _pad_context(jax.nn.one_hot(landmark, config.num_landmarks), context_dim)
    second = jnp.where(
        mode == EXPLORE,
        EXPLORER,
        jnp.where(mode == ACHIEVE_FLAT, FLAT_ACHIEVER, DRSTRATEGY_ACHIEVER),
    )
    second_context = jnp.where(
        mode == EXPLORE, jnp.zeros(context_dim), _pad_context(goal_state, context_dim)
    )
    actors = agent.behaviours.actor
    highway_actor = jax.tree.map(lambda x: x[HIGHWAY], actors)
    second_actor = jax.tree.map(lambda x: x[second], actors)
    target_h = _deterministic_part(config, landmark_states)
    state = MazeState(pos=start, goal=goal, t=jnp.zeros((), jnp.int32))

    def filtered_state(
        previous: jax.Array, previous_action: jax.Array, position: jax.Array, t: jax.Array, k
    ) -> jax.Array:
        """The agent's state at ``position``: the encoder, or the RSSM's posterior mean."""
        if not config.stochastic_latent:
            return _apply(wm, agent.world_model, position, method=wm.encode)
        first = _apply(wm, agent.world_model, position, k, False, method=wm.initial)[0]
        later = _apply(
            wm, agent.world_model, previous, previous_action, position, k, False, method=wm.obs_step
        )[0]
        return jnp.where(t == 0, first, later)

    def step(carry: tuple, k: jax.Array) -> tuple[tuple, tuple[jax.Array, jax.Array]]:
        maze, second_phase, t, success, reached_landmark, previous, previous_action = carry
        k_action, k_env = jax.random.split(k)
        position = env.observe(maze)[:2]
        s = filtered_state(previous, previous_action, position, t, k_env)
        h = _deterministic_part(config, s)
        nearest = nearest_landmark(h[None], target_h)[0]
        close = jnp.mean(jnp.square(_deterministic_part(config, s - landmark_states[landmark])))
        # Reached l: h's nearest landmark is l, or mean (h − ĥ_l)² < reach_mse.
        reached = (nearest == landmark) | (close < config.reach_mse)
        reached_landmark = reached_landmark | (reached & ~second_phase)
        second_phase = (
            second_phase | reached | (t >= config.max_highway_steps) | (mode == ACHIEVE_FLAT)
        )
        logits = jnp.where(
            second_phase,
            _apply(nets.actor, second_actor, jnp.concatenate([s, second_context])),
            _apply(nets.actor, highway_actor, jnp.concatenate([s, highway_context])),
        )
        logits = jnp.where(mode == RANDOM, jnp.zeros_like(logits), logits)
        action = jax.random.categorical(k_action, logits)
        moved, _, _, _, info = env.step(maze, action, k_env)
        maze = jax.tree.map(lambda old, new: jnp.where(success, old, new), maze, moved)
        carry_out = (
            maze,
            second_phase,
            t + 1,
            success | info["success"],
            reached_landmark,
            s,
            action,
        )
        return carry_out, (carry[0].pos, action)

    false = jnp.zeros((), bool)
    zero = jnp.zeros((), jnp.int32)
    init = (state, false, zero, false, false, jnp.zeros(config.state_dim), zero)
    (_, _, _, success, reached_landmark, _, _), (positions, actions) = jax.lax.scan(
        step, init, jax.random.split(key, config.episode_length)
    )
    return positions, actions.astype(jnp.int32), success, reached_landmark
