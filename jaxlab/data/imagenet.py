"""ImageNet-1k input in the DeiT recipe (Touvron et al. 2021, as timm implements it), as
per-example grain transforms that run in the loader's worker processes (numpy and PIL).

Training (:func:`deit_train_ops`), per image, in this order:

1. Inception random-resized crop: a box of area share ``U(0.08, 1)`` and aspect ratio
   ``exp(U(log 3/4, log 4/3))`` (10 tries, then the centre crop of the clamped ratio),
   resized to ``size × size`` (bicubic);
2. horizontal flip with probability 1/2;
3. RandAugment ``rand-m9-mstd0.5-inc1`` (:class:`RandAugment`): 2 operations drawn
   uniformly from 15, each applied with probability 1/2, magnitude ``N(9, 0.5²)`` clipped
   to ``[0, 10]``, the "increasing" variants of the colour operations;
4. scaling to ``[0, 1]`` and normalisation by the ImageNet mean and std;
5. random erasing with probability 0.25 (``mode="pixel"``): one box of area share
   ``U(0.02, 1/3)`` and log-uniform aspect ratio in ``[0.3, 1/0.3]``, filled with N(0, 1)
   noise per pixel and channel.

Mixup (α = 0.8) / CutMix (α = 1.0) with label smoothing 0.1 act on whole batches on the
device: :func:`mixup_cutmix`.

Evaluation (:func:`deit_eval_ops`): resize the shorter side to ``size / 0.875`` (256 for
224, bicubic), centre crop ``size × size``, normalise.

Every op returns ``{"image": float32 [size, size, 3], "label": int32}``.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

import grain
import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image, ImageEnhance, ImageOps

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "RandAugment",
    "deit_eval_ops",
    "deit_train_ops",
    "mixup_cutmix",
    "random_resized_crop_box",
    "synthetic_train_example",
]

#: Per-channel mean and standard deviation of ImageNet (RGB, on ``[0, 1]``).
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
#: The crop share of the evaluation resize (DeiT's ``crop_pct``).
EVAL_CROP_SHARE = 0.875


def _rgb(image: np.ndarray) -> Image.Image:
    image = np.asarray(image)
    if image.ndim == 2:
        image = image[..., None]
    if image.shape[-1] == 1:
        image = np.repeat(image, 3, axis=-1)
    return Image.fromarray(image[..., :3].astype(np.uint8), "RGB")


def _normalize(image: Image.Image) -> np.ndarray:
    return (np.asarray(image, np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD


def random_resized_crop_box(
    height: int,
    width: int,
    rng: np.random.Generator,
    scale: tuple[float, float] = (0.08, 1.0),
    ratio: tuple[float, float] = (3 / 4, 4 / 3),
) -> tuple[int, int, int, int]:
    """``(top, left, h, w)`` of an Inception crop: area share ``U(scale)``, aspect ratio
    ``w / h`` log-uniform in ``ratio``; after 10 failed tries, the centre crop with the
    aspect ratio clamped to ``ratio``."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(*log_ratio))
        w = int(round(math.sqrt(target * aspect)))
        h = int(round(math.sqrt(target / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w
    in_ratio = width / height
    if in_ratio < ratio[0]:
        w, h = width, int(round(width / ratio[0]))
    elif in_ratio > ratio[1]:
        h, w = height, int(round(height * ratio[1]))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


class RandAugment:
    """RandAugment as DeiT runs it (timm ``rand-m9-mstd0.5-inc1``) on a PIL image.

    ``num_ops`` operations drawn uniformly (with replacement) from :attr:`OPS`, each
    applied with probability ``prob`` at magnitude ``N(magnitude, magnitude_std²)`` clipped
    to ``[0, 10]``. Geometric operations pick bilinear or bicubic resampling at random and
    fill with the ImageNet mean colour; signed magnitudes get a random sign.
    """

    OPS = (
        "auto_contrast",
        "equalize",
        "invert",
        "rotate",
        "posterize",
        "solarize",
        "solarize_add",
        "color",
        "contrast",
        "brightness",
        "sharpness",
        "shear_x",
        "shear_y",
        "translate_x",
        "translate_y",
    )
    FILL = tuple(int(round(255 * m)) for m in IMAGENET_MEAN)

    def __init__(
        self,
        num_ops: int = 2,
        magnitude: float = 9.0,
        magnitude_std: float = 0.5,
        prob: float = 0.5,
    ):
        self.num_ops, self.magnitude = num_ops, magnitude
        self.magnitude_std, self.prob = magnitude_std, prob

    def __call__(self, image: Image.Image, rng: np.random.Generator) -> Image.Image:
        for name in rng.choice(self.OPS, self.num_ops):
            if rng.random() > self.prob:
                continue
            level = self.magnitude + self.magnitude_std * rng.standard_normal()
            image = self.apply(str(name), image, min(max(level, 0.0), 10.0) / 10.0, rng)
        return image

    def apply(
        self, name: str, image: Image.Image, level: float, rng: np.random.Generator
    ) -> Image.Image:
        """One operation at ``level`` (the magnitude over 10, in ``[0, 1]``)."""
        sign = 1.0 if rng.random() < 0.5 else -1.0
        resample = Image.Resampling.BILINEAR if rng.random() < 0.5 else Image.Resampling.BICUBIC
        width, height = image.size
        if name == "auto_contrast":
            return ImageOps.autocontrast(image)
        if name == "equalize":
            return ImageOps.equalize(image)
        if name == "invert":
            return ImageOps.invert(image)
        if name == "rotate":
            return image.rotate(sign * 30.0 * level, resample=resample, fillcolor=self.FILL)
        if name == "posterize":
            return ImageOps.posterize(image, max(4 - int(4 * level), 0) or 1)
        if name == "solarize":
            return ImageOps.solarize(image, 256 - int(256 * level))
        if name == "solarize_add":
            pixels = np.asarray(image, np.int32)
            added = np.clip(pixels + int(110 * level), 0, 255)
            return Image.fromarray(np.where(pixels < 128, added, pixels).astype(np.uint8))
        if name in ("color", "contrast", "brightness", "sharpness"):
            enhancer = {
                "color": ImageEnhance.Color,
                "contrast": ImageEnhance.Contrast,
                "brightness": ImageEnhance.Brightness,
                "sharpness": ImageEnhance.Sharpness,
            }[name]
            return enhancer(image).enhance(1.0 + sign * 0.9 * level)
        if name in ("shear_x", "shear_y"):
            s = sign * 0.3 * level
            matrix: tuple[float, ...] = (
                (1, s, 0, 0, 1, 0) if name == "shear_x" else (1, 0, 0, s, 1, 0)
            )
            return image.transform(
                image.size, Image.Transform.AFFINE, matrix, resample=resample, fillcolor=self.FILL
            )
        if name in ("translate_x", "translate_y"):
            shift = sign * 0.45 * level
            matrix = (
                (1, 0, shift * width, 0, 1, 0)
                if name == "translate_x"
                else (1, 0, 0, 0, 1, shift * height)
            )
            return image.transform(
                image.size, Image.Transform.AFFINE, matrix, resample=resample, fillcolor=self.FILL
            )
        raise ValueError(f"unknown RandAugment operation {name!r}")


def random_erase(
    image: np.ndarray,
    rng: np.random.Generator,
    prob: float = 0.25,
    area: tuple[float, float] = (0.02, 1 / 3),
    ratio: float = 0.3,
) -> np.ndarray:
    """With probability ``prob``, one box of ``image`` (normalised, ``[h, w, c]``) replaced by
    N(0, 1) noise: area share ``U(area)``, aspect ratio log-uniform in ``[ratio, 1/ratio]``
    (10 tries to fit)."""
    if rng.random() >= prob:
        return image
    height, width, channels = image.shape
    for _ in range(10):
        target = height * width * rng.uniform(*area)
        aspect = math.exp(rng.uniform(math.log(ratio), -math.log(ratio)))
        h = int(round(math.sqrt(target * aspect)))
        w = int(round(math.sqrt(target / aspect)))
        if 0 < h < height and 0 < w < width:
            top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
            image = image.copy()
            image[top : top + h, left : left + w] = rng.standard_normal((h, w, channels))
            return image
    return image


class DeitTrain(grain.transforms.RandomMap):
    """The per-example DeiT training transform (module docstring, steps 1-5)."""

    def __init__(self, size: int = 224, rand_augment: bool = True, erase_prob: float = 0.25):
        self.size, self.erase_prob = size, erase_prob
        self.rand_augment = RandAugment() if rand_augment else None

    def random_map(self, element: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        image = _rgb(element["image"])
        top, left, h, w = random_resized_crop_box(image.height, image.width, rng)
        image = image.resize(
            (self.size, self.size), Image.Resampling.BICUBIC, box=(left, top, left + w, top + h)
        )
        if rng.random() < 0.5:
            image = ImageOps.mirror(image)
        if self.rand_augment is not None:
            image = self.rand_augment(image, rng)
        pixels = random_erase(_normalize(image), rng, self.erase_prob)
        return {"image": pixels.astype(np.float32), "label": np.asarray(element["label"], np.int32)}


def synthetic_train_example(
    size: int = 224, source: tuple[int, int] = (375, 500), seed: int = 0
) -> Callable[[np.random.Generator], dict[str, Any]]:
    """The host work of one training example, for measuring its rate: ``example(rng)``
    decodes a JPEG of ``source`` (height, width; ImageNet's common 375 × 500) RGB noise with
    PIL and applies :class:`DeitTrain` (crop, flip, RandAugment, erasing) at ``size``."""
    noise = np.random.default_rng(seed).integers(0, 256, (*source, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noise).save(buffer, format="JPEG", quality=90)
    encoded, transform = buffer.getvalue(), DeitTrain(size)

    def example(rng: np.random.Generator) -> dict[str, Any]:
        image = np.asarray(Image.open(io.BytesIO(encoded)).convert("RGB"))
        return transform.random_map({"image": image, "label": 0}, rng)

    return example


class DeitEval(grain.transforms.Map):
    """Shorter side to ``size / 0.875`` (bicubic), centre crop ``size``, normalise."""

    def __init__(self, size: int = 224):
        self.size = size

    def map(self, element: dict[str, Any]) -> dict[str, Any]:
        image = _rgb(element["image"])
        short = int(math.floor(self.size / EVAL_CROP_SHARE))
        scale = short / min(image.width, image.height)
        width = max(self.size, int(round(image.width * scale)))
        height = max(self.size, int(round(image.height * scale)))
        image = image.resize((width, height), Image.Resampling.BICUBIC)
        left, top = (width - self.size) // 2, (height - self.size) // 2
        image = image.crop((left, top, left + self.size, top + self.size))
        return {"image": _normalize(image), "label": np.asarray(element["label"], np.int32)}


def deit_train_ops(
    size: int = 224, rand_augment: bool = True, erase_prob: float = 0.25
) -> list[Any]:
    """The grain operations of DeiT training (module docstring)."""
    return [DeitTrain(size, rand_augment, erase_prob)]


def deit_eval_ops(size: int = 224) -> list[Any]:
    """The grain operations of DeiT evaluation (module docstring)."""
    return [DeitEval(size)]


def mixup_cutmix(
    key: jax.Array,
    images: jax.Array,
    labels: jax.Array,
    num_classes: int,
    mixup_alpha: float = 0.8,
    cutmix_alpha: float = 1.0,
    switch_prob: float = 0.5,
    smoothing: float = 0.1,
) -> tuple[jax.Array, jax.Array]:
    """Batch-level Mixup or CutMix (timm ``Mixup``, ``mode="batch"``, as DeiT uses it).

    With probability ``switch_prob`` CutMix, else Mixup; λ ~ Beta(α, α) of the chosen one.
    Each image is mixed with the image at the mirrored batch position (``images[::-1]``):
    Mixup ``λ x + (1 − λ) x'``; CutMix pastes a box of side share ``√(1 − λ)`` (clipped at
    the border) from ``x'`` and sets λ to the share of ``x`` left. The targets are
    ``λ ỹ + (1 − λ) ỹ'`` with label-smoothed one-hots
    ``ỹ = (1 − smoothing) onehot + smoothing / num_classes``.

    Returns ``(images, targets [batch, num_classes])``.
    """
    k_switch, k_mix, k_cut, k_y, k_x = jax.random.split(key, 5)
    use_cutmix = jax.random.uniform(k_switch) < switch_prob
    lam_mix = jax.random.beta(k_mix, mixup_alpha, mixup_alpha)
    lam_cut = jax.random.beta(k_cut, cutmix_alpha, cutmix_alpha)
    height, width = images.shape[1], images.shape[2]
    cut = jnp.sqrt(1.0 - lam_cut)
    cut_h, cut_w = (cut * height).astype(jnp.int32), (cut * width).astype(jnp.int32)
    cy = jax.random.randint(k_y, (), 0, height)
    cx = jax.random.randint(k_x, (), 0, width)
    y0, y1 = jnp.clip(cy - cut_h // 2, 0, height), jnp.clip(cy + cut_h // 2, 0, height)
    x0, x1 = jnp.clip(cx - cut_w // 2, 0, width), jnp.clip(cx + cut_w // 2, 0, width)
    rows = jnp.arange(height)[:, None]
    cols = jnp.arange(width)[None, :]
    box = (rows >= y0) & (rows < y1) & (cols >= x0) & (cols < x1)
    lam_cut = 1.0 - (y1 - y0) * (x1 - x0) / (height * width)
    other = images[::-1]
    cutmixed = jnp.where(box[None, :, :, None], other, images)
    mixed = lam_mix * images + (1.0 - lam_mix) * other
    images = jnp.where(use_cutmix, cutmixed, mixed)
    lam = jnp.where(use_cutmix, lam_cut, lam_mix)
    onehot = jax.nn.one_hot(labels, num_classes)
    smooth = onehot * (1.0 - smoothing) + smoothing / num_classes
    return images, lam * smooth + (1.0 - lam) * smooth[::-1]
