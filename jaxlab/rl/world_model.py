"""A small deterministic latent world model (MLP), trained on replay sequences.

The model is the deterministic half of Dreamer's RSSM (no stochastic state ``z_t``; the
maze is deterministic and observed through its state), with a Plan2Explore ensemble head
(the full RSSM, with a stochastic state and KL balancing, is :mod:`jaxlab.rl.rssm`):

    h_t = enc(o_t)                             encoder, h ∈ [−1, 1]^Z (tanh)
    ĥ_{t+1} = f(ĥ_t, a_t)                      latent transition (imagination)
    ô_t = dec(h_t)                             decoder
    ĥ^{(e)}_{t+1} = f_e(h_t, a_t), e = 1..E    ensemble of one-step latent predictors

Loss on a window ``o_{0:L}``, ``a_{0:L−1}`` (open-loop from ``ĥ_0 = h_0``; ``sg`` is
stop-gradient):

    L = mean‖dec(h_t) − o_t‖² + mean‖dec(ĥ_t) − o_t‖² + mean‖ĥ_t − sg(h_t)‖²
        + Σ_e mean‖f_e(sg(h_t), a_t) − sg(h_{t+1})‖²

The open-loop terms make imagined rollouts stay decodable for ``L`` steps; the ensemble's
disagreement is the explorer's curiosity (Sekar et al. 2020). Hand-written: no maintained
JAX library ships a small state-based latent model (``dreamerv3`` is a full agent).

References:
  Hafner, Lillicrap, Ba, Norouzi. Dream to Control. ICLR 2020.
  Sekar, Rybkin, Daniilidis, Abbeel, Hafner, Pathak. Planning to Explore via
  Self-Supervised World Models. ICML 2020.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_type
from jaxlab.nn.mlp import MLP

__all__ = ["LatentWorldModel", "world_model_loss"]


class LatentWorldModel(nn.Module):
    """Deterministic latent model (module docstring) for ``num_actions`` discrete actions.

    Methods (call with ``model.apply(params, ..., method=...)``): ``encode(obs [..., d])
    -> h [..., Z]``, ``transition(h [..., Z], a [...] int) -> h'``, ``decode(h) -> obs``,
    ``ensemble(h, a) -> [E, ..., Z]``.
    """

    obs_dim: int
    num_actions: int
    latent: int = 32
    hidden: int = 128
    ensemble_size: int = 4

    def __post_init__(self) -> None:
        for name in ("obs_dim", "num_actions", "latent", "hidden", "ensemble_size"):
            check_integer(name, getattr(self, name), low=1)
        super().__post_init__()

    def setup(self):
        h2 = (self.hidden, self.hidden)
        self.enc = MLP(self.latent, h2, activation=nn.elu)
        self.dyn = MLP(self.latent, h2, activation=nn.elu)
        self.dec = MLP(self.obs_dim, h2, activation=nn.elu)
        self.heads = nn.vmap(
            MLP,
            variable_axes={"params": 0},
            split_rngs={"params": True},
            in_axes=None,
            out_axes=0,
            axis_size=self.ensemble_size,
        )(self.latent, (self.hidden,), activation=nn.elu)

    def encode(self, obs: jax.Array) -> jax.Array:
        return jnp.tanh(self.enc(obs))

    def _ha(self, h: jax.Array, a: jax.Array) -> jax.Array:
        return jnp.concatenate([h, jax.nn.one_hot(a, self.num_actions, dtype=h.dtype)], -1)

    def transition(self, h: jax.Array, a: jax.Array) -> jax.Array:
        return jnp.tanh(self.dyn(self._ha(h, a)))

    def decode(self, h: jax.Array) -> jax.Array:
        return self.dec(h)

    def ensemble(self, h: jax.Array, a: jax.Array) -> jax.Array:
        return jnp.tanh(self.heads(self._ha(h, a)))

    def __call__(self, obs: jax.Array, actions: jax.Array) -> jax.Array:
        """Initialisation path: touches every sub-module."""
        h = self.encode(obs)
        return (
            self.decode(self.transition(h, actions))
            + self.ensemble(h, actions).sum(0)[..., : self.obs_dim]
        )


def check_sequences(
    obs: ArrayLike, actions: ArrayLike, obs_dim: int, min_length: int = 1
) -> tuple[jax.Array, jax.Array]:
    """Checks replay windows ``obs [B, L, obs_dim]`` and int ``actions [B, L − 1]``.

    Raises ``ValueError`` naming the argument for a wrong shape, ``L < min_length`` or
    non-integer actions; returns both as arrays.
    """
    obs, actions = jnp.asarray(obs), jnp.asarray(actions)
    if obs.ndim != 3 or obs.shape[-1] != obs_dim or obs.shape[1] < min_length:
        length = f"L >= {min_length}" if min_length > 1 else "L"
        raise ValueError(f"obs must be [B, {length}, {obs_dim}], got {obs.shape}")
    if actions.shape != obs.shape[:1] + (obs.shape[1] - 1,):
        raise ValueError(
            f"actions must be [B, L - 1] = [{obs.shape[0]}, {obs.shape[1] - 1}], got "
            f"{actions.shape}"
        )
    if not jnp.issubdtype(actions.dtype, jnp.integer):
        raise ValueError(f"actions must be integers, got {actions.dtype}")
    return obs, actions


def world_model_loss(
    params, model: LatentWorldModel, obs: ArrayLike, actions: ArrayLike
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The world-model loss of the module docstring on a batch of replay windows.

    Args:
      params: the model's parameters.
      model: a :class:`LatentWorldModel`.
      obs: ``o: [B, L, d]`` observations.
      actions: ``a: [B, L − 1]`` int actions (``a_t`` takes ``o_t`` to ``o_{t+1}``).

    Returns:
      ``(loss, metrics)`` with metrics ``recon``, ``open_loop``, ``latent``, ``ensemble``.

    Example:
      >>> from jaxlab.rl.world_model import LatentWorldModel, world_model_loss
      >>> m = LatentWorldModel(obs_dim=2, num_actions=4, latent=8, hidden=16)
      >>> p = m.init(jax.random.key(0), jnp.zeros((1, 2)), jnp.zeros((1,), jnp.int32))
      >>> loss, _ = world_model_loss(p, m, jnp.zeros((3, 5, 2)), jnp.zeros((3, 4), jnp.int32))
      >>> loss.shape
      ()
    """
    check_type("model", model, LatentWorldModel)
    obs, actions = check_sequences(obs, actions, model.obs_dim)

    def apply(method, *args):
        return model.apply(params, *args, method=method)

    h = apply(model.encode, obs)  # [B, L, Z]
    recon = jnp.mean(jnp.sum(jnp.square(apply(model.decode, h) - obs), -1))

    def roll(h_prev, a):
        h_next = apply(model.transition, h_prev, a)
        return h_next, h_next

    _, h_open = jax.lax.scan(roll, h[:, 0], jnp.swapaxes(actions, 0, 1))
    h_open = jnp.swapaxes(h_open, 0, 1)  # [B, L-1, Z], predictions of h_1..h_{L-1}
    open_loop = jnp.mean(jnp.sum(jnp.square(apply(model.decode, h_open) - obs[:, 1:]), -1))
    target = jax.lax.stop_gradient(h[:, 1:])
    latent = jnp.mean(jnp.sum(jnp.square(h_open - target), -1))
    ens = apply(model.ensemble, jax.lax.stop_gradient(h[:, :-1]), actions)  # [E, B, L-1, Z]
    ensemble = jnp.mean(jnp.sum(jnp.square(ens - target[None]), -1)) * ens.shape[0]
    loss = recon + open_loop + latent + ensemble
    return loss, {"recon": recon, "open_loop": open_loop, "latent": latent, "ensemble": ensemble}
