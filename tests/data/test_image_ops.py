"""jaxlab.data.image_ops against numpy (and jax.image.resize) references."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.data import image_ops


def _record(h=6, w=5, c=3, seed=0):
    rng = np.random.default_rng(seed)
    return {"image": rng.integers(0, 256, (h, w, c), dtype=np.uint8), "label": 7, "id": b"x"}


def test_decode_scales_to_unit_interval_and_drops_other_features():
    rec = _record()
    out = image_ops.Decode().map(rec)
    assert set(out) == {"image", "label"}
    np.testing.assert_array_equal(out["image"], rec["image"].astype(np.float32) / 255.0)
    assert out["image"].dtype == np.float32 and out["label"] == 7
    grey = image_ops.Decode(label_key=None).map({"image": np.zeros((4, 4), np.uint8)})
    assert set(grey) == {"image"} and grey["image"].shape == (4, 4, 1)


def test_normalize_per_channel():
    x = np.random.default_rng(1).random((4, 4, 3), dtype=np.float32)
    mean, std = image_ops.STATS["cifar10"]
    out = image_ops.Normalize(mean, std).map({"image": x})["image"]
    np.testing.assert_allclose(out, (x - np.array(mean)) / np.array(std), rtol=1e-6)


def test_random_crop_is_a_window_of_the_zero_padded_image():
    x = np.arange(6 * 5 * 1, dtype=np.float32).reshape(6, 5, 1) + 1
    padded = np.pad(x, ((2, 2), (2, 2), (0, 0)))
    windows = {(t, left): padded[t : t + 6, left : left + 5] for t in range(5) for left in range(5)}
    seen = set()
    for seed in range(60):
        out = image_ops.RandomCrop(2).random_map({"image": x}, np.random.default_rng(seed))
        assert out["image"].shape == x.shape
        match = [k for k, v in windows.items() if np.array_equal(v, out["image"])]
        assert match
        seen.add(match[0])
    assert len(seen) > 10  # offsets are drawn, not fixed
    same = image_ops.RandomCrop(0).random_map({"image": x}, np.random.default_rng(0))
    np.testing.assert_array_equal(same["image"], x)


def test_random_flip_mirrors_about_half_the_time():
    x = np.random.default_rng(2).random((4, 5, 3)).astype(np.float32)
    flips = 0
    for seed in range(200):
        out = image_ops.RandomFlip().random_map({"image": x}, np.random.default_rng(seed))
        if np.array_equal(out["image"], x[:, ::-1]):
            flips += 1
        else:
            np.testing.assert_array_equal(out["image"], x)
    assert 70 < flips < 130


@pytest.mark.parametrize(
    "shape,size",
    [((8, 8, 3), (32, 32)), ((28, 28, 1), (32, 32)), ((5, 7, 3), (5, 7)), ((6, 9, 2), (4, 13))],
)
def test_resize_matches_jax_linear_without_antialias(shape, size):
    x = np.random.default_rng(3).random(shape).astype(np.float32)
    want = jax.image.resize(jnp.asarray(x), (*size, shape[-1]), "linear", antialias=False)
    np.testing.assert_allclose(image_ops.resize_bilinear(x, size), np.asarray(want), atol=1e-5)


def test_resize_op_tiles_grey_to_rgb():
    x = np.random.default_rng(4).random((28, 28, 1)).astype(np.float32)
    out = image_ops.Resize(32, channels=3).map({"image": x})["image"]
    assert out.shape == (32, 32, 3)
    np.testing.assert_array_equal(out[..., 0], out[..., 2])


def test_train_and_eval_ops_through_a_grain_source():
    records = [_record(32, 32, 3, seed=s) for s in range(5)]
    ev = image_ops.to_arrays(records, image_ops.eval_ops("cifar10"))
    mean, std = image_ops.STATS["cifar10"]
    want = np.stack(
        [
            (r["image"] / np.float32(255) - np.array(mean, np.float32)) / np.array(std, np.float32)
            for r in records
        ]
    )
    np.testing.assert_allclose(ev["image"], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ev["label"], [7] * 5)
    ops = image_ops.train_ops("cifar10", crop_padding=4, flip=True)
    a = image_ops.to_arrays(records, ops, seed=3)
    b = image_ops.to_arrays(records, ops, seed=3)
    np.testing.assert_array_equal(a["image"], b["image"])  # reproducible from the seed
    assert a["image"].shape == (5, 32, 32, 3)
    small = image_ops.to_arrays(records, image_ops.eval_ops("cifar10", size=16), limit=2)
    assert small["image"].shape == (2, 16, 16, 3)
    with pytest.raises(ValueError):
        image_ops.train_ops("imagenet_nonexistent")


def test_random_crop_flip_in_jax_is_a_flipped_or_plain_window():
    x = np.random.default_rng(5).random((3, 4, 6, 5, 2)).astype(np.float32)
    out = np.asarray(
        jax.jit(image_ops.random_crop_flip, static_argnums=(2, 3))(
            jax.random.key(0), jnp.asarray(x), 2, True
        )
    )
    assert out.shape == x.shape
    flipped = 0
    for i in np.ndindex(3, 4):
        padded = np.pad(x[i], ((2, 2), (2, 2), (0, 0)))
        windows = [padded[t : t + 6, left : left + 5] for t in range(5) for left in range(5)]
        plain = any(np.array_equal(out[i], v) for v in windows)
        mirror = any(np.array_equal(out[i], v[:, ::-1]) for v in windows)
        assert plain or mirror
        flipped += mirror and not plain
    assert 0 < flipped < 12
    same = image_ops.random_crop_flip(jax.random.key(1), jnp.asarray(x), 0, False)
    np.testing.assert_array_equal(np.asarray(same), x)
