"""NEM-U's masking network: a U-Net whose encoder is the frozen representation model.

The representation model is given as a function of its parameters,
``stages_fn(encoder_params, x) -> (emb, stages)`` with ``x: [b, H, W, C]``, ``emb: [b, k]``
and ``stages`` a tuple of feature maps ``[b, h_i, w_i, c_i]`` from the shallowest to the
deepest stage (the image itself may be stage 0, as in the reference's ``use_img_space``).
Only the decoder (``MaskDecoder``, a thin ``flax.linen`` module) is trained; the encoder's
parameters pass through ``jax.lax.stop_gradient`` so their gradient is exactly zero.
Hand-written: no maintained JAX library ships NEM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxlab._checks import check_range
from jaxlab.explain.nem import check_baseline, cosine_distance, masked_input, nem_loss

__all__ = ["MaskDecoder", "NEMParams", "nem_mask", "nem_objective"]

StagesFn = Callable[[Any, jax.Array], tuple[jax.Array, Sequence[jax.Array]]]


class NEMParams(NamedTuple):
    """Parameters of a NEM-U model: the frozen encoder's and the trained decoder's."""

    encoder: Any
    decoder: Any


class StagedEncoder(nn.Module):
    """A small CNN encoder that also returns its stages, the input NEM-U's decoder needs.

    ``x [b, S, S, c] -> (emb [b, emb_dim], stages)``: one 3×3 convolution + SiLU per entry
    of ``widths`` (stride 1, then 2), a spatial mean and a dense embedding; ``stages`` are
    the image and every stage's map, shallow to deep (``len(widths) + 1`` arrays), so
    ``MaskDecoder(channels=...)`` with ``len(widths)`` channels fits it.
    """

    widths: Sequence[int] = (8, 16, 32, 32)
    emb_dim: int = 64

    @nn.compact
    def __call__(self, x: jax.Array) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        stages = [x]
        h = x
        for i, w in enumerate(self.widths):
            h = nn.silu(nn.Conv(w, (3, 3), strides=1 if i == 0 else 2, padding="SAME")(h))
            stages.append(h)
        return nn.Dense(self.emb_dim)(h.mean(axis=(1, 2))), tuple(stages)


class MaskDecoder(nn.Module):
    """U-Net decoder from the encoder's stages to a sigmoid occlusion mask.

    From the deepest stage upwards, each block upsamples (nearest) to the next shallower
    stage's size, concatenates that stage (the skip connection) and applies two 3×3
    convolutions with GroupNorm and SiLU; a 1×1 convolution gives one logit per pixel. With
    ``patch = p > 1`` a p×p convolution of stride p maps the logits to an (H/p)×(W/p) grid
    of cells whose sigmoid is upsampled bilinearly to H×W (the reference's "patching"
    layer); with ``p = 1`` the mask is the logits' sigmoid. GroupNorm replaces the
    reference's BatchNorm so that the decoder holds no running statistics.

    Attributes:
      channels: output channels of the decoder blocks, one per skip connection (deepest
        first); the reference uses (256, 128, 64, 32, 16) on a ResNet-50.
      patch: p, the side of the mask cells (must divide H and W).
      groups: GroupNorm groups (at most the block's channels).
    """

    channels: Sequence[int] = (32, 16, 16)
    patch: int = 1
    groups: int = 4

    @nn.compact
    def __call__(self, stages: Sequence[jax.Array], image_hw: tuple[int, int]) -> jax.Array:
        """``stages``: shallow → deep ``[b, h_i, w_i, c_i]``; returns the mask ``[b, H, W]``."""
        if len(stages) != len(self.channels) + 1:
            raise ValueError(
                f"stages must hold len(channels) + 1 = {len(self.channels) + 1} "
                f"feature maps (shallow to deep); got {len(stages)}"
            )
        for s in stages:
            if s.ndim != 4 or s.shape[0] != stages[0].shape[0]:
                raise ValueError(
                    f"every stage must be [b, h, w, c] with one b; got "
                    f"{[tuple(t.shape) for t in stages]}"
                )
        h, w = image_hw
        p = self.patch
        if p < 1 or h % p or w % p:
            raise ValueError(f"patch ({p}) must be a positive divisor of H={h} and W={w}")
        y = stages[-1]
        for skip, ch in zip(reversed(stages[:-1]), self.channels, strict=True):
            y = _upsample_to(y, skip.shape[1:3])
            y = jnp.concatenate([y, skip.astype(y.dtype)], axis=-1)
            for _ in range(2):
                y = nn.Conv(ch, (3, 3), padding="SAME", use_bias=False)(y)
                y = nn.GroupNorm(num_groups=min(self.groups, ch))(y)
                y = nn.silu(y)
        y = _upsample_to(y, (h, w))
        logits = nn.Conv(1, (1, 1))(y)
        if p == 1:
            return jax.nn.sigmoid(logits[..., 0])
        cells = nn.Conv(1, (p, p), strides=(p, p), padding="VALID", name="patching")(logits)
        mask = jax.nn.sigmoid(cells[..., 0])  # [b, H/p, W/p]
        return jax.image.resize(mask, (mask.shape[0], h, w), "bilinear")


def _upsample_to(y: jax.Array, hw: tuple[int, ...]) -> jax.Array:
    """Nearest-neighbour upsampling of ``y [b, h, w, c]`` to ``hw`` (``jnp.repeat`` for
    integer factors, which compiles and differentiates faster than a gather)."""
    (h, w), (th, tw) = y.shape[1:3], hw
    if (h, w) == (th, tw):
        return y
    if th % h == 0 and tw % w == 0:
        return jnp.repeat(jnp.repeat(y, th // h, axis=1), tw // w, axis=2)
    return jax.image.resize(y, (y.shape[0], th, tw, y.shape[-1]), "nearest")


def _check_x(x: jax.Array) -> None:
    if x.ndim != 4:
        raise ValueError(f"x must have shape [b, H, W, C]; got {x.shape}")


def nem_mask(
    stages_fn: StagesFn, decoder: MaskDecoder, params: NEMParams, x: jax.typing.ArrayLike
) -> tuple[jax.Array, jax.Array]:
    """The explanation mask and the embedding of a batch, in one encoder pass.

        m = sigmoid(g_θ(stages of f(x))),   θ = decoder parameters; f's parameters frozen

    Args:
      stages_fn: ``(encoder_params, x) -> (emb [b, k], stages)``, the representation model.
      decoder: the ``MaskDecoder`` module.
      params: ``NEMParams``; ``params.encoder`` passes through ``stop_gradient``.
      x: ``[b, H, W, C]`` images.

    Returns:
      ``(mask [b, H, W] in [0, 1], emb [b, k])``.

    Example:
      >>> from jaxlab.explain.masking import MaskDecoder, NEMParams, nem_mask
      >>> def stages_fn(w, x):
      ...     s1 = jnp.tanh(x @ w)                                   # [b, 8, 8, 4]
      ...     s2 = s1.reshape(-1, 4, 2, 4, 2, 4).mean((2, 4))        # [b, 4, 4, 4]
      ...     return s2.mean((1, 2)), (x, s1, s2)
      >>> dec = MaskDecoder(channels=(8, 8), patch=2)
      >>> x = jnp.ones((2, 8, 8, 3))
      >>> w = jnp.ones((3, 4))
      >>> key = jax.random.key(0, impl="rbg")  # compiles faster than threefry on CPU
      >>> theta = dec.init(key, stages_fn(w, x)[1], (8, 8))
      >>> mask, emb = nem_mask(stages_fn, dec, NEMParams(w, theta), x)
      >>> mask.shape, emb.shape
      ((2, 8, 8), (2, 4))

    References:
      Møller, Igel, Wickstrøm, Sporring, Jenssen, Ibragimov. Finding NEM-U: Explaining
      unsupervised representation learning through neural network generated explanation
      masks. ICML 2024.
    """
    if not callable(stages_fn):
        raise ValueError(f"stages_fn must be callable, got {type(stages_fn).__name__}")
    if not isinstance(decoder, MaskDecoder):
        raise ValueError(f"decoder must be a MaskDecoder, got {type(decoder).__name__}")
    if not isinstance(params, NEMParams):
        raise ValueError(f"params must be NEMParams(encoder, decoder), got {type(params).__name__}")
    x = jnp.asarray(x)
    _check_x(x)
    frozen = jax.tree.map(jax.lax.stop_gradient, params.encoder)
    emb, stages = stages_fn(frozen, x)
    # Module.apply's annotation includes the (output, variables) pair of a mutable apply.
    mask = cast(jax.Array, decoder.apply(params.decoder, tuple(stages), x.shape[1:3]))
    return mask, emb


def nem_objective(
    stages_fn: StagesFn,
    decoder: MaskDecoder,
    params: NEMParams,
    x: jax.typing.ArrayLike,
    baseline: jax.typing.ArrayLike = 0.0,
    lambda_f: float = 4.0,
    lambda_s: float = 0.5,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """NEM's training objective of a batch (differentiate it with respect to ``params``).

        L = λ_f · mean_b d(f(x), f(m ⊙ x + (1 − m) ⊙ b)) + λ_s · mean(m),
        d(u, v) = (1 − cos(u, v)) / 2

    f(x) is a constant (stop-gradient); the gradient reaches the decoder through m, both
    in the masked input and in the sparsity term, and never the encoder's parameters.

    Args:
      stages_fn: ``(encoder_params, x) -> (emb, stages)``.
      decoder: the ``MaskDecoder``.
      params: ``NEMParams``.
      x: ``[b, H, W, C]``.
      baseline: b, broadcastable to ``x`` (0, noise at the data's mean/std, or a blur).
      lambda_f: λ_f (reference 4).
      lambda_s: λ_s (reference 1/2).

    Returns:
      ``(loss, {"distance": mean d, "mask_mean": mean m})``.

    Example:
      >>> from jaxlab.explain.masking import MaskDecoder, NEMParams, nem_objective
      >>> def stages_fn(w, x):
      ...     s1 = jnp.tanh(x @ w)
      ...     return s1.mean((1, 2)), (x, s1)
      >>> dec = MaskDecoder(channels=(4,))
      >>> x = jax.random.normal(jax.random.key(1), (2, 4, 4, 3))
      >>> w = jnp.ones((3, 4))
      >>> key = jax.random.key(0, impl="rbg")
      >>> params = NEMParams(w, dec.init(key, stages_fn(w, x)[1], (4, 4)))
      >>> grads = jax.jit(jax.grad(lambda p: nem_objective(stages_fn, dec, p, x)[0]))(params)
      >>> float(jnp.abs(grads.encoder).max())
      0.0
    """
    check_baseline(baseline, jnp.asarray(x))
    for name, value in (("lambda_f", lambda_f), ("lambda_s", lambda_s)):
        check_range(name, value, 0.0)
    x = jnp.asarray(x)
    mask, emb = nem_mask(stages_fn, decoder, params, x)
    emb = jax.lax.stop_gradient(emb)
    frozen = jax.tree.map(jax.lax.stop_gradient, params.encoder)
    emb_masked, _ = stages_fn(frozen, masked_input(x, mask, baseline))
    loss = nem_loss(emb, emb_masked, mask, lambda_f, lambda_s)
    distance = jnp.mean(cosine_distance(emb, emb_masked))
    return loss, {"distance": distance, "mask_mean": jnp.mean(mask)}
