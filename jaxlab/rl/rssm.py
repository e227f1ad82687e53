"""A small recurrent state-space model (RSSM) with a Gaussian stochastic state (Dreamer).

The state is ``s_t = [h_t, z_t]`` with a deterministic GRU part ``h_t ∈ ℝ^D`` and a
stochastic part ``z_t ∈ ℝ^S`` (Hafner et al. 2019, Eq. 1; DreamerV1, Sec. 3):

    e_t = enc(o_t)                                            embedding
    h_t = GRU(h_{t−1}, [z_{t−1}, a_{t−1}])                    deterministic path
    p(z_t | h_t)      = N(μ_p(h_t), σ_p(h_t))                 prior (imagination)
    q(z_t | h_t, e_t) = N(μ_q(h_t, e_t), σ_q(h_t, e_t))       posterior (filtering)
    σ = softplus(·) + σ_min                                   (DreamerV1, σ_min = 0.1)
    z_t = μ + σ ⊙ ε, ε ~ N(0, I)                              reparameterised sample
    ô_t = dec(s_t),  r̂_t = rew(s_t)                           heads

Loss on a window ``o_{0:L}``, ``a_{0:L−1}`` (``h_0 = 0``; ``sg`` is stop-gradient), with
DreamerV2's KL balancing (α = 0.8) and free nats ``F`` on the batch-mean KL (Hafner et al.
2021, Algorithm 2, ``free_avg``):

    L = mean ‖ô_t − o_t‖² [+ mean (r̂_t − r_t)²]
        + α max(F, mean KL(sg q ‖ p)) + (1 − α) max(F, mean KL(q ‖ sg p))
        + Σ_e mean ‖f_e(sg s_t, a_t) − sg e_{t+1}‖²              Plan2Explore ensemble
        + mean ‖g(o_t) − sg [h_t, μ_q,t]‖²                        state from one observation

The squared reconstruction error is the unit-variance Gaussian negative log-likelihood up
to a constant and a factor ½ (as the deterministic model of ``world_model.py``).

Why Gaussian rather than DreamerV2's categorical latents: the observations are continuous
positions in a deterministic maze, the Gaussian KL is closed form (so the KL-balancing
test compares against an exact expression), and 32 × 32 categoricals with straight-through
gradients would dwarf the 2-D observation at CPU scale. The distributions and the KL come
from distrax (``MultivariateNormalDiag``); the GRU from flax.

The last loss term is ours: ``h_t`` summarises the past, so a single observation (a goal
image, in the paper) has no posterior state of its own; ``g`` amortises "the state of the
model at this observation" by regressing the filtered posterior states (LEXA instead
predicts embeddings from states). Hand-written otherwise: no maintained JAX library ships
a small RSSM (``dreamerv3`` is a full agent).

References:
  Hafner, Lillicrap, Fischer, Villegas, Ha, Lee, Davidson. Learning Latent Dynamics for
  Planning from Pixels (PlaNet). ICML 2019.
  Hafner, Lillicrap, Ba, Norouzi. Dream to Control. ICLR 2020.
  Hafner, Lillicrap, Norouzi, Ba. Mastering Atari with Discrete World Models. ICLR 2021.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_range, check_type
from jaxlab._optional import lazy_import
from jaxlab.nn.mlp import MLP
from jaxlab.rl.world_model import check_sequences

if TYPE_CHECKING:
    import distrax
else:
    distrax = lazy_import("distrax", extra="rl")

__all__ = ["RSSM", "gaussian", "kl_balance", "rssm_loss"]


def gaussian(mean: jax.Array, std: jax.Array) -> distrax.MultivariateNormalDiag:
    """The diagonal Gaussian ``N(mean, diag(std²))`` over the last axis (distrax); its
    ``sample`` is reparameterised (differentiable in ``mean`` and ``std``)."""
    mean, std = jnp.asarray(mean), jnp.asarray(std)
    if mean.ndim < 1:
        raise ValueError("mean must be [..., d], got a scalar")
    if std.shape != mean.shape:
        raise ValueError(f"std must have mean's shape {mean.shape}, got {std.shape}")
    return distrax.MultivariateNormalDiag(mean, std)


def kl_balance(
    post: tuple[ArrayLike, ArrayLike],
    prior: tuple[ArrayLike, ArrayLike],
    alpha: float = 0.8,
    free_nats: float = 1.0,
) -> tuple[jax.Array, jax.Array]:
    """KL balancing with free nats (DreamerV2, Algorithm 2 with ``free_avg``).

    ``α max(F, mean KL(sg q ‖ p)) + (1 − α) max(F, mean KL(q ‖ sg p))``: the prior moves
    toward the posterior with weight ``α``, the posterior toward the prior with ``1 − α``.

    Args:
      post: ``(μ_q, σ_q)``, each ``[..., S]``.
      prior: ``(μ_p, σ_p)``, each ``[..., S]``.
      alpha: ``α`` in ``[0, 1]`` (0.8 in DreamerV2).
      free_nats: ``F ≥ 0``; the clamp applies to the KL averaged over the leading axes.

    Returns:
      ``(loss, mean KL(q ‖ p))``.

    Example:
      >>> from jaxlab.rl.rssm import kl_balance
      >>> z = (jnp.zeros((4, 2)), jnp.ones((4, 2)))
      >>> [float(x) for x in kl_balance(z, z, 0.8, 0.0)]
      [0.0, 0.0]
    """
    qm, qs, pm, ps = map(jnp.asarray, (*post, *prior))
    if not (qm.shape == qs.shape == pm.shape == ps.shape) or qm.ndim < 1:
        raise ValueError(
            f"post and prior must be (mean, std) of one shape [..., S], got {qm.shape}, "
            f"{qs.shape}, {pm.shape}, {ps.shape}"
        )
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    check_range("post", qs, 0.0, low_open=True)  # the stds; NaN refused too
    check_range("prior", ps, 0.0, low_open=True)
    if free_nats < 0:
        raise ValueError(f"free_nats must be >= 0, got {free_nats}")
    sg = jax.lax.stop_gradient
    lhs = jnp.mean(gaussian(sg(qm), sg(qs)).kl_divergence(gaussian(pm, ps)))  # trains prior
    rhs = jnp.mean(gaussian(qm, qs).kl_divergence(gaussian(sg(pm), sg(ps))))  # trains post
    loss = alpha * jnp.maximum(lhs, free_nats) + (1 - alpha) * jnp.maximum(rhs, free_nats)
    return loss, sg(lhs)


class RSSM(nn.Module):
    """Recurrent state-space model (module docstring) for ``num_actions`` discrete actions.

    A state is the packed vector ``s = [h, z]: [..., D + S]``. Methods (call with
    ``model.apply(params, ..., method=...)``):

    * ``embed(o [..., d]) -> e [..., E]``; ``prior(h) -> (μ, σ)``;
      ``posterior(h, e) -> (μ, σ)``;
    * ``transition(s, a [...] int, key) -> s'``: one prior step (imagination);
    * ``obs_step(s, a, o, key, sample=True) -> (s', prior, post)``: one filtering step;
    * ``initial(o, key, sample=True) -> (s_0, prior, post)``: the first step, ``h_0 = 0``;
    * ``observe(o [B, L, d], a [B, L − 1], key, sample=True) -> (s [B, L, D + S],
      prior, post)``, ``prior``/``post`` as ``(μ, σ)`` of shape ``[B, L, S]``;
    * ``decode(s) -> ô``, ``reward(s) -> r̂ [...]``, ``ensemble(s, a) -> [N, ..., E]``;
    * ``encode(o) -> s``: the state of the model at a single observation (``g``).

    With ``sample=False`` the posterior mean is used instead of a sample (acting).
    """

    obs_dim: int
    num_actions: int
    deter: int = 32
    stoch: int = 16
    hidden: int = 128
    embed_dim: int = 32
    ensemble_size: int = 4
    min_std: float = 0.1

    def __post_init__(self) -> None:
        for name in (
            "obs_dim",
            "num_actions",
            "deter",
            "stoch",
            "hidden",
            "embed_dim",
            "ensemble_size",
        ):
            check_integer(name, getattr(self, name), low=1)
        check_range("min_std", self.min_std, 0.0, low_open=True)
        super().__post_init__()

    @property
    def state_dim(self) -> int:
        return self.deter + self.stoch

    def setup(self):
        h2 = (self.hidden, self.hidden)
        self.enc = MLP(self.embed_dim, h2, activation=nn.elu)
        self.img_in = nn.Dense(self.hidden)
        self.gru = nn.GRUCell(features=self.deter)
        self.prior_net = MLP(2 * self.stoch, (self.hidden,), activation=nn.elu)
        self.post_net = MLP(2 * self.stoch, (self.hidden,), activation=nn.elu)
        self.dec = MLP(self.obs_dim, h2, activation=nn.elu)
        self.rew = MLP(1, h2, activation=nn.elu)
        self.goal = MLP(self.deter + self.stoch, h2, activation=nn.elu)
        self.heads = nn.vmap(
            MLP,
            variable_axes={"params": 0},
            split_rngs={"params": True},
            in_axes=None,
            out_axes=0,
            axis_size=self.ensemble_size,
        )(self.embed_dim, (self.hidden,), activation=nn.elu)

    def _stats(self, raw: jax.Array) -> tuple[jax.Array, jax.Array]:
        mean, std = jnp.split(raw, 2, -1)
        return mean, jax.nn.softplus(std) + self.min_std  # σ = softplus(·) + σ_min

    def _z(self, stats, key, sample: bool) -> jax.Array:
        return gaussian(*stats).sample(seed=key) if sample else stats[0]  # z = μ + σ ⊙ ε

    def embed(self, obs: jax.Array) -> jax.Array:
        return self.enc(obs)

    def prior(self, h: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self._stats(self.prior_net(h))  # p(z_t | h_t)

    def posterior(self, h: jax.Array, e: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self._stats(self.post_net(jnp.concatenate([h, e], -1)))  # q(z_t | h_t, e_t)

    def _recur(self, s: jax.Array, a: jax.Array) -> jax.Array:
        h, z = s[..., : self.deter], s[..., self.deter :]
        x = jnp.concatenate([z, jax.nn.one_hot(a, self.num_actions, dtype=s.dtype)], -1)
        return self.gru(h, nn.elu(self.img_in(x)))[0]  # h_t = GRU(h_{t−1}, [z_{t−1}, a_{t−1}])

    def transition(self, s: jax.Array, a: jax.Array, key: jax.Array) -> jax.Array:
        h = self._recur(s, a)
        return jnp.concatenate([h, self._z(self.prior(h), key, True)], -1)

    def obs_step(self, s, a, obs, key, sample: bool = True):
        h = self._recur(s, a)
        prior, post = self.prior(h), self.posterior(h, self.embed(obs))
        return jnp.concatenate([h, self._z(post, key, sample)], -1), prior, post

    def initial(self, obs, key, sample: bool = True):
        h = jnp.zeros(obs.shape[:-1] + (self.deter,), obs.dtype)
        prior, post = self.prior(h), self.posterior(h, self.embed(obs))
        return jnp.concatenate([h, self._z(post, key, sample)], -1), prior, post

    def observe(self, obs, actions, key, sample: bool = True):
        k0, k1 = jax.random.split(key)
        s0, pr0, po0 = self.initial(obs[:, 0], k0, sample)

        def step(mdl, s, xs):
            o, a, k = xs
            s, pr, po = mdl.obs_step(s, a, o, k, sample)
            return s, (s, pr, po)

        scan = nn.scan(step, variable_broadcast="params", split_rngs={"params": False})
        xs = (
            jnp.swapaxes(obs[:, 1:], 0, 1),
            jnp.swapaxes(actions, 0, 1),
            jax.random.split(k1, actions.shape[1]),
        )
        _, (ss, prs, pos) = scan(self, s0, xs)

        def cat(first, rest):  # [B, ...] and [L − 1, B, ...] -> [B, L, ...]
            return jnp.concatenate([first[:, None], jnp.swapaxes(rest, 0, 1)], 1)

        return (cat(s0, ss), jax.tree.map(cat, pr0, prs), jax.tree.map(cat, po0, pos))

    def decode(self, s: jax.Array) -> jax.Array:
        return self.dec(s)

    def reward(self, s: jax.Array) -> jax.Array:
        return self.rew(s)[..., 0]

    def ensemble(self, s: jax.Array, a: jax.Array) -> jax.Array:
        return self.heads(
            jnp.concatenate([s, jax.nn.one_hot(a, self.num_actions, dtype=s.dtype)], -1)
        )

    def encode(self, obs: jax.Array) -> jax.Array:
        g = self.goal(obs)
        return jnp.concatenate([jnp.tanh(g[..., : self.deter]), g[..., self.deter :]], -1)

    def __call__(self, obs: jax.Array, actions: jax.Array) -> jax.Array:
        """Initialisation path (``obs [B, d]``, ``actions [B]``): touches every sub-module."""
        key = jax.random.key(0)
        s, _, _ = self.initial(obs, key)
        s2, _, _ = self.obs_step(s, actions, obs, key)
        s3 = self.transition(s2, actions, key) + self.encode(obs)
        out = self.decode(s3) + self.reward(s3)[..., None]
        return out + self.ensemble(s3, actions).sum(0)[..., : self.obs_dim]


def rssm_loss(
    params,
    model: RSSM,
    obs: ArrayLike,
    actions: ArrayLike,
    key: ArrayLike,
    rewards: ArrayLike | None = None,
    *,
    alpha: float = 0.8,
    free_nats: float = 1.0,
    kl_scale: float = 1.0,
) -> tuple[jax.Array, tuple[dict[str, jax.Array], jax.Array]]:
    """The RSSM loss of the module docstring on a batch of replay windows.

    Args:
      params: the model's parameters.
      model: an :class:`RSSM`.
      obs: ``o: [B, L, d]`` observations.
      actions: ``a: [B, L − 1]`` int actions (``a_t`` takes ``o_t`` to ``o_{t+1}``).
      key: PRNG key of the posterior samples.
      rewards: optional ``r: [B, L]`` (reward observed with ``o_t``); without it the reward
        head is not trained (reward-free exploration, as Dr. Strategy's world model).
      alpha: KL balancing ``α``.
      free_nats: ``F``.
      kl_scale: weight of the KL term.

    Returns:
      ``(loss, (metrics, states))``: metrics ``recon``, ``kl``, ``reward``, ``ensemble``,
      ``encode``; ``states`` the stop-gradient posterior samples ``[B, L, D + S]``
      (imagination starts, as in Dreamer).

    Example:
      >>> from jaxlab.rl.rssm import RSSM, rssm_loss
      >>> m = RSSM(obs_dim=2, num_actions=4, deter=8, stoch=4, hidden=16, embed_dim=8)
      >>> p = m.init(jax.random.key(0), jnp.zeros((1, 2)), jnp.zeros((1,), jnp.int32))
      >>> o, a = jnp.zeros((3, 5, 2)), jnp.zeros((3, 4), jnp.int32)
      >>> loss, (_, s) = jax.jit(rssm_loss, static_argnums=1)(p, m, o, a, jax.random.key(1))
      >>> loss.shape, s.shape
      ((), (3, 5, 12))
    """
    check_type("model", model, RSSM)
    obs, actions = check_sequences(obs, actions, model.obs_dim, min_length=2)
    key = check_key("key", key)
    check_range("kl_scale", kl_scale, 0.0)
    check_range("alpha", alpha, 0.0, 1.0)
    check_range("free_nats", free_nats, 0.0)
    if rewards is not None and jnp.shape(rewards) != obs.shape[:2]:
        raise ValueError(f"rewards must be [B, L] = {obs.shape[:2]}, got {jnp.shape(rewards)}")

    def apply(method, *args):
        return model.apply(params, *args, method=method)

    sg = jax.lax.stop_gradient
    states, prior, post = apply(model.observe, obs, actions, key)
    recon = jnp.mean(jnp.sum(jnp.square(apply(model.decode, states) - obs), -1))
    kl_loss, kl = kl_balance(post, prior, alpha, free_nats)
    rew = jnp.zeros(())
    if rewards is not None:
        rew = jnp.mean(jnp.square(apply(model.reward, states) - jnp.asarray(rewards)))
    target = sg(apply(model.embed, obs[:, 1:]))
    ens = apply(model.ensemble, sg(states[:, :-1]), actions)  # [N, B, L − 1, E]
    ensemble = jnp.mean(jnp.sum(jnp.square(ens - target[None]), -1)) * ens.shape[0]
    mean_state = sg(jnp.concatenate([states[..., : model.deter], post[0]], -1))
    enc = jnp.mean(jnp.sum(jnp.square(apply(model.encode, obs) - mean_state), -1))
    loss = recon + kl_scale * kl_loss + rew + ensemble + enc
    metrics = {"recon": recon, "kl": kl, "reward": rew, "ensemble": ensemble, "encode": enc}
    return loss, (metrics, sg(states))
