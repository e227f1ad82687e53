import numpy as np
import pytest

from jaxlab.data import batch_dataset


def _arrays(n=10):
    return {"x": np.arange(n) * 10, "y": np.arange(n)}


def test_each_epoch_is_a_permutation_and_order_is_seeded():
    ds = batch_dataset(_arrays(10), batch_size=5, seed=3)
    epoch0 = np.concatenate([ds[0]["y"], ds[1]["y"]])
    epoch1 = np.concatenate([ds[2]["y"], ds[3]["y"]])
    assert sorted(epoch0) == list(range(10)) and sorted(epoch1) == list(range(10))
    assert not np.array_equal(epoch0, epoch1)
    np.testing.assert_array_equal(ds[0]["x"], ds[0]["y"] * 10)
    again = batch_dataset(_arrays(10), batch_size=5, seed=3)
    np.testing.assert_array_equal(again[7]["y"], ds[7]["y"])
    other = batch_dataset(_arrays(10), batch_size=5, seed=4)
    assert not all(np.array_equal(other[i]["y"], ds[i]["y"]) for i in range(4))


def test_processes_read_disjoint_halves_of_the_global_batch():
    full = batch_dataset(_arrays(16), batch_size=8, seed=0, process_index=0, process_count=1)
    halves = [
        batch_dataset(_arrays(16), 8, seed=0, process_index=i, process_count=2) for i in (0, 1)
    ]
    for step in range(5):
        joined = np.concatenate([h[step]["y"] for h in halves])
        np.testing.assert_array_equal(joined, full[step]["y"])


def test_bad_inputs():
    with pytest.raises(ValueError, match="equal lengths"):
        batch_dataset({"x": np.zeros(3), "y": np.zeros(4)}, 2, 0)
    with pytest.raises(ValueError, match="empty"):
        batch_dataset({"x": np.zeros(0)}, 2, 0)
    with pytest.raises(ValueError, match="multiple of the process count"):
        batch_dataset(_arrays(), 3, 0, process_index=0, process_count=2)
