"""The MCF denoiser: a PerceiverIO over atoms with spectral coordinates and noisy positions.

Each atom is a point of the molecular graph with an intrinsic "coordinate" (the Laplacian
eigenfunctions concatenated with the RDKit atom features, 32 + 43 = 75 channels for QM9)
and a "signal" (its noisy 3D position). The network predicts the noise ε on every atom; it
is not rotation-equivariant by design.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxlab._checks import check_integer, check_key, check_range
from jaxlab.diffusion import Schedule, ancestral_sample, ddim_sample, ddpm_loss
from jaxlab.nn.perceiver import PerceiverIO


class MCFSize(NamedTuple):
    """Architecture sizes of an MCF denoiser."""

    d_model: int
    num_latents: int
    d_latents: int
    num_blocks: int
    num_self_attends_per_block: int
    num_heads: int
    proj_dim: int


#: Named sizes: S, B (the QM9 model of the paper) and L, plus a tiny CPU size for quick
#: runs and a micro size for tests and notebooks (fast to compile).
SIZES = {
    "micro": MCFSize(16, 4, 16, 1, 1, 2, 8),
    "tiny": MCFSize(64, 16, 64, 2, 1, 2, 32),
    "S": MCFSize(512, 128, 256, 6, 2, 4, 128),
    "B": MCFSize(1024, 512, 512, 8, 2, 4, 128),
    "L": MCFSize(1024, 1024, 1024, 12, 2, 8, 128),
}


def timestep_embedding(t: jax.Array, dim: int, max_period: float = 10_000.0) -> jax.Array:
    """Sinusoidal embedding of (integer or real) steps: ``t [B] -> [B, dim]``.

    e(t) = [cos(t ω_k), sin(t ω_k)]_k,  ω_k = max_period^(−k / (dim/2))   (Vaswani et al.)
    """
    check_integer("dim", dim, low=1)
    check_range("max_period", max_period, 0.0, low_open=True)
    if jnp.ndim(t) != 1:
        raise ValueError(f"t must be [B] timesteps, got shape {jnp.shape(t)}")
    half = dim // 2
    freqs = jnp.exp(-math.log(max_period) * jnp.arange(half, dtype=jnp.float32) / half)
    args = t.astype(jnp.float32)[:, None] * freqs[None, :]
    emb = jnp.concatenate([jnp.cos(args), jnp.sin(args)], axis=-1)
    if dim % 2:
        emb = jnp.pad(emb, ((0, 0), (0, 1)))
    return emb


class _Proj(nn.Module):
    """Dense → LayerNorm → GELU."""

    features: int
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = nn.Dense(self.features, dtype=self.dtype)(x)
        return nn.gelu(nn.LayerNorm(dtype=self.dtype)(x))


class MCFDenoiser(nn.Module):
    """ε_θ(x_t, t; graph) of Molecular Conformer Fields.

    The atom coordinate (eigenfunctions ‖ atom features) goes through a trainable MLP
    embedding; the noisy positions and the sinusoidal time embedding through their own
    projections; the three are concatenated and projected to ``d_model``, once for the
    PerceiverIO inputs (context) and once for its queries. The decoder output,
    concatenated with the position embedding of the queries, is mapped to 3 channels.

    Attributes:
      size: an :class:`MCFSize` (see :data:`SIZES`).
      dtype: computation dtype (``jnp.bfloat16`` for accelerators).

    Example:
      >>> model = MCFDenoiser(SIZES["tiny"])
      >>> coords, x_t = jnp.ones((2, 5, 8)), jnp.zeros((2, 5, 3))  # B = 2, N = 5, C = 8
      >>> t, mask = jnp.array([1, 500]), jnp.ones((2, 5))
      >>> params = jax.jit(model.init)(jax.random.key(0), coords, x_t, t, mask)
      >>> jax.jit(model.apply)(params, coords, x_t, t, mask).shape
      (2, 5, 3)

    References:
      Wang et al., "Swallowing the Bitter Pill: Simplified Scalable Conformer Generation",
      ICML 2024.
    """

    size: MCFSize
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(
        self,
        atom_coords: jax.Array,
        x_t: jax.Array,
        t: jax.Array,
        mask: jax.Array,
    ) -> jax.Array:
        """Predicts the noise.

        Args:
          atom_coords: ``[B, N, C]`` eigenfunctions ‖ atom features.
          x_t: ``[B, N, 3]`` noisy (normalized) positions.
          t: ``[B]`` integer diffusion steps (or a scalar, broadcast over the batch).
          mask: ``[B, N]``, 1 for real atoms.

        Returns:
          ``[B, N, 3]`` ε̂, zero on padding atoms.
        """
        if atom_coords.ndim != 3 or x_t.shape != atom_coords.shape[:2] + (3,):
            raise ValueError(
                f"atom_coords [B, N, C] and x_t [B, N, 3] expected; got {atom_coords.shape}, "
                f"{x_t.shape}"
            )
        if mask.shape != x_t.shape[:2]:
            raise ValueError(f"mask must be {x_t.shape[:2]}; got {mask.shape}")
        s, dt = self.size, self.dtype
        batch, n = x_t.shape[:2]
        t = jnp.broadcast_to(jnp.asarray(t), (batch,))
        coord_emb = nn.Sequential(
            [nn.Dense(s.proj_dim, dtype=dt), nn.gelu, nn.Dense(s.proj_dim, dtype=dt)]
        )(atom_coords)
        time_emb = _Proj(s.proj_dim, dt)(timestep_embedding(t, s.proj_dim))
        time_emb = jnp.broadcast_to(time_emb[:, None, :], (batch, n, s.proj_dim))

        def embed(name):
            x = _Proj(s.proj_dim, dt, name=f"{name}_coord")(coord_emb)
            y = _Proj(s.proj_dim, dt, name=f"{name}_signal")(x_t)
            cat = jnp.concatenate([x, y, time_emb], axis=-1)
            return _Proj(s.d_model, dt, name=f"{name}_cat")(cat), y

        context, _ = embed("context")
        queries, query_signal = embed("query")
        decoded = PerceiverIO(
            num_latents=s.num_latents,
            d_latents=s.d_latents,
            num_blocks=s.num_blocks,
            num_self_attends_per_block=s.num_self_attends_per_block,
            num_self_attention_heads=s.num_heads,
            num_cross_attention_heads=s.num_heads,
            dtype=dt,
        )(context, queries, mask)
        out = nn.Dense(3, dtype=jnp.float32)(jnp.concatenate([decoded, query_signal], axis=-1))
        return out.astype(jnp.float32) * mask[..., None].astype(jnp.float32)


def center_positions(x: jax.Array, mask: jax.Array) -> jax.Array:
    """Subtracts the center of mass of the real atoms: ``x [B, N, 3]``, ``mask [B, N]``.

    The MCF sampler applies it after every reverse step; padding stays 0.
    """
    if jnp.ndim(x) != 3 or jnp.shape(x)[-1] != 3 or jnp.shape(mask) != jnp.shape(x)[:2]:
        raise ValueError(
            f"x must be [B, N, 3] and mask [B, N], got {jnp.shape(x)} and {jnp.shape(mask)}"
        )
    m = mask[..., None].astype(x.dtype)
    com = jnp.sum(x * m, axis=1, keepdims=True) / jnp.maximum(jnp.sum(m, axis=1, keepdims=True), 1)
    return (x - com) * m


def mcf_loss(
    apply_fn, params, schedule: Schedule, batch: dict[str, jax.Array], key: jax.Array
) -> jax.Array:
    """The MCF training loss: masked ε-MSE of :func:`jaxlab.diffusion.ddpm_loss`.

    Args:
      apply_fn: ``apply_fn(params, atom_coords, x_t, t, mask) -> ε̂`` (an
        :class:`MCFDenoiser`'s ``apply``).
      params: model parameters.
      schedule: the noise schedule.
      batch: ``{"atom_coords": [B, N, C], "positions": [B, N, 3] (normalized, centered),
        "mask": [B, N]}``.
      key: PRNG key.

    Returns:
      The scalar loss.
    """
    if not callable(apply_fn):
        raise ValueError(f"apply_fn must be callable, got {type(apply_fn).__name__}")
    missing = {"atom_coords", "positions", "mask"} - set(batch)
    if missing:
        raise ValueError(f"batch lacks {sorted(missing)} (needs atom_coords, positions, mask)")
    check_key("key", key)
    coords, mask = batch["atom_coords"], batch["mask"]
    return ddpm_loss(
        lambda x_t, t: apply_fn(params, coords, x_t, t, mask),
        schedule,
        batch["positions"],
        key,
        mask,
    )


def mcf_sample(
    apply_fn,
    params,
    schedule: Schedule,
    atom_coords: jax.Array,
    mask: jax.Array,
    key: jax.Array,
    *,
    num_steps: int | None = 50,
    eta: float = 1.0,
) -> jax.Array:
    """Samples normalized conformers: ``[B, N, 3]``, centered, zero on padding.

    Starts from centered Gaussian noise; predicts x̂₀, clips it to [−1, 1], re-centers the
    center of mass after every step. ``num_steps=None`` runs the T-step ancestral sampler
    (the paper's test protocol); an integer runs DDIM with that many steps and ``eta``
    (the paper's validation protocol is 50 steps, η = 1).
    """
    check_key("key", key)
    if not callable(apply_fn):
        raise ValueError(f"apply_fn must be callable, got {type(apply_fn).__name__}")
    if jnp.ndim(atom_coords) != 3:
        raise ValueError(f"atom_coords must be [B, N, F], got shape {jnp.shape(atom_coords)}")
    if jnp.shape(mask) != jnp.shape(atom_coords)[:2]:
        raise ValueError(
            f"mask must be [B, N] = {jnp.shape(atom_coords)[:2]}, got {jnp.shape(mask)}"
        )
    init_rng, sample_rng = jax.random.split(key)
    x_T = center_positions(jax.random.normal(init_rng, mask.shape + (3,)), mask)

    def eps_fn(x_t, t):
        return apply_fn(params, atom_coords, x_t, t, mask)

    project = lambda x: center_positions(x, mask)
    if num_steps is None:
        return ancestral_sample(
            eps_fn, schedule, x_T, sample_rng, mask=mask, clip_x0=1.0, project=project
        )
    return ddim_sample(
        eps_fn,
        schedule,
        x_T,
        sample_rng,
        num_steps=num_steps,
        eta=eta,
        mask=mask,
        clip_x0=1.0,
        project=project,
    )
