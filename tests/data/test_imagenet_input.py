"""DeiT's ImageNet input ops (jaxlab.data.imagenet): shapes, normalisation, the crop box,
RandAugment's operations, and Mixup/CutMix targets."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image

from jaxlab.data import imagenet


def _example(height=40, width=30, label=7, seed=0):
    rng = np.random.default_rng(seed)
    return {"image": rng.integers(0, 256, (height, width, 3), dtype=np.uint8), "label": label}


def test_train_op_gives_a_normalised_crop_of_the_size():
    (op,) = imagenet.deit_train_ops(size=32)
    out = op.random_map(_example(), np.random.default_rng(0))
    assert out["image"].shape == (32, 32, 3) and out["image"].dtype == np.float32
    assert out["label"] == 7
    assert np.isfinite(out["image"]).all()


def test_train_op_is_a_function_of_its_rng():
    (op,) = imagenet.deit_train_ops(size=16)
    a = op.random_map(_example(), np.random.default_rng(3))["image"]
    b = op.random_map(_example(), np.random.default_rng(3))["image"]
    np.testing.assert_array_equal(a, b)


def test_eval_op_resizes_the_shorter_side_and_centre_crops():
    (op,) = imagenet.deit_eval_ops(size=224)
    flat = {"image": np.full((100, 300, 3), 255, np.uint8), "label": 1}
    out = op.map(flat)
    assert out["image"].shape == (224, 224, 3)
    np.testing.assert_allclose(
        out["image"][0, 0], (1 - imagenet.IMAGENET_MEAN) / imagenet.IMAGENET_STD, rtol=1e-5
    )


def test_grey_images_get_three_channels():
    (op,) = imagenet.deit_eval_ops(size=8)
    assert op.map({"image": np.zeros((10, 12, 1), np.uint8), "label": 0})["image"].shape == (
        8,
        8,
        3,
    )


@pytest.mark.parametrize("seed", range(20))
def test_crop_box_lies_inside_the_image(seed):
    top, left, h, w = imagenet.random_resized_crop_box(37, 91, np.random.default_rng(seed))
    assert 0 <= top and 0 <= left and top + h <= 37 and left + w <= 91 and h > 0 and w > 0


@pytest.mark.parametrize("name", imagenet.RandAugment.OPS)
def test_every_rand_augment_op_keeps_size_and_mode(name):
    image = Image.fromarray(_example()["image"])
    out = imagenet.RandAugment().apply(name, image, 0.9, np.random.default_rng(0))
    assert out.size == image.size and out.mode == "RGB"


def test_mixup_cutmix_targets_are_distributions_with_smoothing():
    images = jnp.arange(4 * 8 * 8 * 3, dtype=jnp.float32).reshape(4, 8, 8, 3)
    labels = jnp.array([0, 1, 2, 3])
    for seed in range(6):
        mixed, targets = imagenet.mixup_cutmix(jax.random.key(seed), images, labels, 10)
        assert mixed.shape == images.shape
        np.testing.assert_allclose(targets.sum(-1), 1.0, rtol=1e-6)
        assert float(targets.min()) >= 0.1 / 10 - 1e-7


def test_cutmix_target_weight_is_the_pasted_area():
    images = jnp.stack([jnp.zeros((16, 16, 1)), jnp.ones((16, 16, 1))])
    labels = jnp.array([0, 1])
    for seed in range(10):
        mixed, targets = imagenet.mixup_cutmix(
            jax.random.key(seed), images, labels, 2, switch_prob=1.0, smoothing=0.0
        )
        # image 0 holds zeros outside the box and ones (from image 1) inside it
        np.testing.assert_allclose(float(targets[0, 1]), float(mixed[0].mean()), atol=1e-6)
