"""Mujkanovic et al.'s splits: sizes, stratification, disjointness, determinism."""

import numpy as np
import pytest

from jaxlab.data.robust_splits import SPLIT_SEEDS, mujkanovic_splits, stratified_split


def test_splits_are_stratified_disjoint_and_fixed():
    labels = np.repeat(np.arange(4), [100, 60, 30, 10])
    splits = mujkanovic_splits(labels)
    assert len(splits) == len(SPLIT_SEEDS) == 5
    for train, val, test in splits:
        assert len(train) == 20 and len(val) == 20 and len(test) == 160
        assert len(np.unique(np.concatenate([train, val, test]))) == 200
        np.testing.assert_array_equal(np.bincount(labels[train]), [10, 6, 3, 1])
    again = mujkanovic_splits(labels)
    for a, b in zip(splits, again, strict=True):
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(u, v)
    assert not np.array_equal(splits[0][0], splits[1][0])


def test_bad_inputs():
    with pytest.raises(ValueError, match="labels"):
        stratified_split(np.zeros((3, 3)), 0)
    with pytest.raises(ValueError, match="train"):
        stratified_split(np.zeros(10), 0, train=0.6, val=0.5)
