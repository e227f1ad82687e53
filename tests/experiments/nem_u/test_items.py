"""The paper preset's Fashion-MNIST items: records read by index from the TFDS source are the
whole split's items at those indices."""

import numpy as np

from jaxlab.data import streaming
from jaxlab_experiments.nem_u.nem_explanations import config as nem_config
from jaxlab_experiments.nem_u.nem_explanations.train import load_items


def test_tfds_take_reads_the_records_of_the_whole_split_at_those_indices():
    config = nem_config.get_config("paper")
    with streaming.mock_datasets(num_examples=50):
        items = load_items(config, "train")
        source = streaming.open_source("fashion_mnist", "train")
        whole = np.stack([np.asarray(source[i]["image"]) for i in range(len(source))])
        ids = np.random.default_rng(0).choice(items.size, 8, replace=False)
        taken = items.take(ids)
    assert items.size == 50
    expected = whole.reshape(50, 28, 28, 1).astype(np.float32) / 255.0
    assert taken.dtype == np.float32
    np.testing.assert_array_equal(taken, expected[ids])
