"""The paper presets' TFDS readers of slwi_stream, mc_ensemble_ood and curbench_text, on
mock data (``tfds.testing.mock_data``): shapes, splits, and the CIFAR-10-C stream protocol."""

import jax
import ml_collections
import numpy as np
import pytest

from jaxlab.data.streaming import datasets_read, mock_datasets
from jaxlab_experiments.curbench.curbench_text import config as text_config
from jaxlab_experiments.curbench.curbench_text import train as text_train
from jaxlab_experiments.mc_ensemble.mc_ensemble_ood import config as mc_config
from jaxlab_experiments.mc_ensemble.mc_ensemble_ood import train as mc_train
from jaxlab_experiments.slwi.slwi_stream import config as slwi_config
from jaxlab_experiments.slwi.slwi_stream import train as slwi_train


def test_cifar10_c_stream_visits_each_corruption_once_per_pass_without_repeats():
    k, n, b, per = 3, 20, 4, 5
    sets = np.arange(k * n, dtype=np.float32).reshape(k, n, 1, 1, 1) * np.ones((1, 1, 2, 2, 3))
    labels = np.arange(k * n, dtype=np.int32).reshape(k, n)
    config = ml_collections.ConfigDict(dict(batches_per_segment=per, batch_size=b, passes=2))
    images, ys = slwi_train._corrupted_stream(jax.random.key(0), sets, labels, config)
    images, ys = np.asarray(images), np.asarray(ys)
    assert images.shape == (2 * k * per, b, 2, 2, 3) and ys.shape == (2 * k * per, b)
    np.testing.assert_array_equal(images[..., 0, 0, 0], ys)  # image and label rows agree
    for p in range(2):
        kinds = []
        for seg in range(k):
            rows = ys[(p * k + seg) * per : (p * k + seg + 1) * per].ravel()
            kind = set(rows // n)
            assert len(kind) == 1 and len(set(rows)) == per * b  # one corruption, no repeats
            kinds += list(kind)
        assert sorted(kinds) == list(range(k))


def test_slwi_paper_stream_fits_cifar10_c_and_refuses_a_segment_larger_than_a_set():
    # CIFAR-10-C: 10,000 test images per corruption (TFDS cifar10_corrupted).
    c = slwi_config.get_config("paper")
    sets = jax.ShapeDtypeStruct((len(c.corruptions), 10_000, 32, 32, 3), np.float32)
    labels = jax.ShapeDtypeStruct((len(c.corruptions), 10_000), np.int32)
    key = jax.random.key(0)

    def stream(config):  # a new function per config (a traced config would hit the cache)
        return lambda k, sets, labels: slwi_train._corrupted_stream(k, sets, labels, config)

    images, ys = jax.eval_shape(stream(c), key, sets, labels)
    assert images.shape == (15 * c.batches_per_segment, 64, 32, 32, 3)
    assert c.batches_per_segment * c.batch_size <= 10_000 < (c.batches_per_segment + 1) * 64
    c.batches_per_segment += 1
    with pytest.raises(ValueError, match="10000"):
        jax.eval_shape(stream(c), key, sets, labels)


def test_slwi_paper_reads_cifar10_and_its_corruptions():
    c = slwi_config.dry_run(slwi_config.get_config("paper"), 8)
    datasets_read(clear=True)
    with mock_datasets(12):
        data = slwi_train._load(c)
    assert data["train"][0].shape == (12, 32, 32, 3)
    assert data["stream"][0].shape == (len(c.corruptions), 12, 32, 32, 3)
    read = {d["name"].split("/")[0] for d in datasets_read(clear=True)}
    assert read == set(c.datasets)


def test_mc_ensemble_paper_reads_id_and_ood_sets():
    c = mc_config.get_config("paper")
    datasets_read(clear=True)
    with mock_datasets(20):
        data = mc_train._tfds_data(c)
    assert data["train"][0].shape == (18, 32 * 32 * 3) and data["val"].shape == (2, 3072)
    assert data["test"].shape == (20, 3072) and data["test_labels"].shape == (20,)
    assert data["near"].shape == (20, 3072) and data["far"].shape == (20, 3072)
    assert data["train"][0].min() >= 0.0 and data["train"][0].max() <= 1.0
    assert {d["name"] for d in datasets_read(clear=True)} == set(c.datasets)


def test_curbench_text_paper_reads_glue_as_byte_windows():
    c = text_config.dry_run(text_config.get_config("paper"), 8)
    with mock_datasets(40):
        w = text_train.load_glue(c)
    assert w["train_x"].shape == (c.num_train, c.seq_len)
    assert w["val_x"].shape == (8, c.seq_len) and w["teacher_x"].shape == (8, c.seq_len)
    assert w["test_x"].shape[0] == 8 and w["train_x"].max() <= 256 and w["train_x"].min() >= 0
    assert set(np.unique(w["train_y"])) <= {0, 1}
