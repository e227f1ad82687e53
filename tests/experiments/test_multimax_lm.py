"""The Shakespeare loader and a smoke run of multimax_lm's quick preset, shrunk."""

import math

import numpy as np
import pytest

from jaxlab.data import text
from jaxlab.report.registry import get_experiment


def test_split_by_play_and_encoding():
    train, val = text.shakespeare_splits(("macbeth",))
    macbeth = text.load_plays(("macbeth",))
    assert val == macbeth and macbeth not in train
    assert len(train) > 3_000_000
    vocab = text.char_vocabulary(train)
    assert vocab[0] == text.UNKNOWN_CHAR and len(set(vocab)) == len(vocab)
    ids = text.encode("Macbeth\u2603", vocab)
    assert "".join(vocab[i] for i in ids[:-1]) == "Macbeth" and ids[-1] == 0
    w = text.windows(np.arange(10), 3)
    np.testing.assert_array_equal(w, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    with pytest.raises(ValueError, match="unknown"):
        text.load_plays(("sonnets",))
    with pytest.raises(ValueError, match="length"):
        text.windows(np.arange(3), 5)


def test_quick_preset_smoke(tmp_path):
    experiment = get_experiment("multimax_lm")
    config = experiment.get_config("quick")
    assert config.num_seeds >= 3
    config.num_steps, config.warmup_steps, config.seq_len = 3, 1, 16
    config.dim, config.mlp_dim, config.eval_windows = 16, 32, 8
    config.depth, config.num_heads = 1, 2
    results = experiment.train_and_evaluate(config, str(tmp_path))
    for normalizer in ("softmax", "multimax"):
        ppl = results[f"val_perplexity_{normalizer}"]
        assert math.isfinite(ppl) and 1.0 < ppl < 500.0
