"""EfficientTrain: low-frequency images and weak augmentation first, the full signal later.

Vision-only, as in CurBench. Wang et al. expose the model early in training only to the
lower-frequency components of each image (a crop of its 2-D Fourier spectrum, Eq. (1)) and
to weak data augmentation, and widen the band and strengthen the augmentation in stages.
Here the band-limited image is rendered back at full resolution (the crop's inverse
transform is Fourier-interpolated instead of the reference's bicubic resize), so the
input shape never changes: the band and the augmentation strength are arrays in the
curriculum state, applied to training batches inside the jitted step without
recompiling. The compute saving of smaller inputs — the paper's point — is therefore
not realised; the curriculum on the signal is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer, check_key, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState

# The reference's stages, for a 300-epoch schedule at 224 px (EfficientTrain's Table 1).
_STAGE_ENDS = (60, 120, 180, 240, 300)
_STAGE_BANDS = (160, 160, 160, 192, 224)


def low_frequency_crop(images: ArrayLike, band: ArrayLike) -> jax.Array:
    """Keeps the ``band × band`` lowest spatial frequencies of ``images [b, h, w, c]``.

    With ``F = fft2(x)`` over the two spatial axes and ``β = ⌊band/2⌋``, the frequencies
    ``k`` with ``k < β`` or ``k ≥ n − β`` on each axis (the four corners of the unshifted
    spectrum, as the reference's crop) are kept, the others set to 0, and
    ``Re(ifft2)`` is returned at the original size — the band-limited image of the
    reference's crop, Fourier-interpolated to full resolution. ``band ≥ min(h, w)`` keeps
    the image unchanged. ``band`` may be a traced scalar (no recompiles). Only the
    terms at the band's edge ``|k| = β`` differ from the reference, which takes the real
    part of the ``B × B`` image (its Nyquist terms) before resizing.

    Args:
      images: ``[b, h, w, c]``.
      band: scalar band width ``B`` (pixels of the cropped spectrum).

    Returns:
      ``[b, h, w, c]`` float32 band-limited images.

    Example:
      >>> from jaxlab.curriculum import low_frequency_crop
      >>> x = jnp.ones((1, 8, 8, 1)).at[0, 0, 0, 0].set(2.0)
      >>> y = low_frequency_crop(x, 8)
      >>> bool(jnp.allclose(y, x, atol=1e-5)), round(float(low_frequency_crop(x, 2).mean()), 4)
      (True, 1.0156)

    References:
      Wang, Yue, Ni, Song, Han, Huang, EfficientTrain: Exploring Generalized Curriculum
      Learning for Training Visual Backbones, ICCV 2023.
    """
    check_range("band", band, 1.0)
    x = jnp.asarray(images, jnp.float32)
    if x.ndim != 4:
        raise ValueError(f"images must be [b, h, w, c], got shape {x.shape}")
    h, w = x.shape[1], x.shape[2]
    half = jnp.asarray(band, jnp.int32) // 2

    def keep(n):
        k = jnp.arange(n)
        full = 2 * half >= n
        return (k < half) | (k >= n - half) | full

    mask = (keep(h)[:, None] & keep(w)[None, :]).astype(jnp.complex64)  # [h, w]
    spectrum = jnp.fft.fft2(x, axes=(1, 2))
    return jnp.real(jnp.fft.ifft2(spectrum * mask[None, :, :, None], axes=(1, 2)))


def _translate(image: jax.Array, dy: jax.Array, dx: jax.Array) -> jax.Array:
    """``image [h, w, c]`` shifted by ``(dy, dx)`` pixels, zero-filled."""
    h, w = image.shape[0], image.shape[1]
    rows, cols = jnp.arange(h) - dy, jnp.arange(w) - dx
    inside = ((rows >= 0) & (rows < h))[:, None] & ((cols >= 0) & (cols < w))[None, :]
    out = image[jnp.clip(rows, 0, h - 1)][:, jnp.clip(cols, 0, w - 1)]
    return jnp.where(inside[:, :, None], out, 0.0)


def rand_augment(
    images: ArrayLike, magnitude: ArrayLike, key: jax.Array, num_ops: int = 2
) -> jax.Array:
    """A small RandAugment for grey or colour images: ``num_ops`` random operations each.

    Operations (each drawn uniformly, strength ``m/10`` of its range, random sign):
    identity; horizontal and vertical translation by up to ``0.45·size·m/10`` pixels
    (zero fill); brightness ``x·(1 ± 0.9·m/10)``; contrast around the image mean
    ``μ + (x − μ)(1 ± 0.9·m/10)`` — the geometric and photometric subset of timm's
    RandAugment (``rand-m{m}``) that applies to single-channel images. Shapes are
    unchanged and ``magnitude`` may be traced. Hand-written: no maintained JAX library
    ships RandAugment.

    Args:
      images: ``[b, h, w, c]``.
      magnitude: scalar ``m ∈ [0, 10]``.
      key: PRNG key.
      num_ops: operations per image.

    Returns:
      ``[b, h, w, c]`` float32 augmented images.

    Example:
      >>> from jaxlab.curriculum.efficient_train import rand_augment
      >>> x = jnp.ones((2, 4, 4, 1))
      >>> bool(jnp.allclose(rand_augment(x, 0.0, jax.random.key(0)), x))
      True
    """
    check_integer("num_ops", num_ops, low=0)
    check_range("magnitude", magnitude, 0.0, 10.0)
    check_key("key", key)
    x = jnp.asarray(images, jnp.float32)
    if x.ndim != 4:
        raise ValueError(f"images must be [b, h, w, c], got shape {x.shape}")
    strength = jnp.asarray(magnitude, jnp.float32) / 10.0
    h, w = x.shape[1], x.shape[2]

    def one(image, k):
        def apply(img, kk):
            k_op, k_sign = jax.random.split(kk)
            op = jax.random.randint(k_op, (), 0, 5)
            sign = jnp.where(jax.random.bernoulli(k_sign), 1.0, -1.0)
            shift_y = jnp.round(sign * 0.45 * h * strength).astype(jnp.int32)
            shift_x = jnp.round(sign * 0.45 * w * strength).astype(jnp.int32)
            factor = 1.0 + sign * 0.9 * strength
            mean = jnp.mean(img)
            return jax.lax.switch(
                op,
                (
                    lambda: img,
                    lambda: _translate(img, jnp.int32(0), shift_x),
                    lambda: _translate(img, shift_y, jnp.int32(0)),
                    lambda: img * factor,
                    lambda: mean + (img - mean) * factor,
                ),
            ), None

        return jax.lax.scan(apply, image, jax.random.split(k, num_ops))[0]

    return jax.vmap(one)(x, jax.random.split(key, x.shape[0]))


def efficient_train_stage(epoch: int, grow_epochs: int, image_size: int) -> tuple[int, int]:
    """``(band, magnitude)`` at ``epoch`` (from 0): the reference's five stages, scaled.

    Stage ``j = ⌊e / ⌊grow/5⌋⌋`` (capped at 4) uses band ``⌊b_j/224 · size⌋`` with
    ``b = (160, 160, 160, 192, 224)`` and RandAugment magnitude ``2j + 1``.

    Example:
      >>> from jaxlab.curriculum.efficient_train import efficient_train_stage
      >>> [efficient_train_stage(e, 10, 28) for e in (0, 5, 7, 9)]
      [(20, 1), (20, 5), (24, 7), (28, 9)]
    """
    if grow_epochs < 1 or image_size < 1:
        raise ValueError(
            f"need grow_epochs >= 1 and image_size >= 1, got {grow_epochs}, {image_size}"
        )
    length = max(1, int(_STAGE_ENDS[0] / _STAGE_ENDS[-1] * grow_epochs))
    stage = min(epoch // length, len(_STAGE_ENDS) - 1)
    return int(_STAGE_BANDS[stage] / 224 * image_size), 2 * stage + 1


def efficient_train(grow_epochs: int | None = None, augment: bool = True) -> Curriculum:
    """EfficientTrain as a curriculum (vision-only; ``grow_epochs`` defaults to the run).

    ``data_curriculum`` sets this epoch's band and augmentation magnitude
    (:func:`efficient_train_stage`, the image size read from the first batch's shape);
    ``transform_inputs`` applies :func:`rand_augment` (when ``augment``) and then
    :func:`low_frequency_crop` to every training batch (validation and test images are
    untouched), as the reference's training transform.

    Example:
      >>> from jaxlab.curriculum import efficient_train
      >>> c = efficient_train(grow_epochs=10)
      >>> s = c.model_prepare(c.data_prepare(4, 2, jax.random.key(0)), None, 10)
      >>> s = c.data_curriculum(s, 0, None)
      >>> c.transform_inputs(jnp.ones((3, 8, 8, 1)), s, jax.random.key(1)).shape
      (3, 8, 8, 1)
    """
    if grow_epochs is not None and grow_epochs < 1:
        raise ValueError(f"grow_epochs must be >= 1, got {grow_epochs}")

    def data_prepare(num_samples, num_classes, key):
        del num_classes, key
        return CurriculumState(
            weights=np.ones(num_samples, np.float32),
            extra={"epoch": np.int32(0), "epochs": np.int32(1)},
        )

    def model_prepare(state, params, num_epochs):
        del params
        return state._replace(extra={**state.extra, "epochs": np.int32(num_epochs)})

    def data_curriculum(state, epoch, losses):
        del losses
        return state._replace(extra={**state.extra, "epoch": np.int32(epoch)})

    def transform_inputs(inputs, state, key):
        size = min(inputs.shape[1], inputs.shape[2])
        grow = grow_epochs or state.extra["epochs"]
        # The stage table as arrays: the epoch and the run length are traced values.
        length = jnp.maximum(1, (_STAGE_ENDS[0] * grow) // _STAGE_ENDS[-1])
        stage = jnp.minimum(state.extra["epoch"] // length, len(_STAGE_ENDS) - 1)
        band = (jnp.asarray(_STAGE_BANDS) * size // 224)[stage]
        x = inputs
        if augment:
            x = rand_augment(x, 2 * stage + 1, key)
        return low_frequency_crop(x, band)

    return Curriculum(
        name="efficient_train",
        data_prepare=data_prepare,
        model_prepare=model_prepare,
        data_curriculum=data_curriculum,
        transform_inputs=transform_inputs,
        vision_only=True,
    )
