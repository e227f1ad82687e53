"""``jaxlab.data.streaming``: loaders shard over processes disjointly, evaluation covers every
record once with its mask, and every dataset a run opens is recorded."""

from __future__ import annotations

import grain
import jax
import numpy as np
import pytest

from jaxlab.data import streaming
from jaxlab.data.paths import DataNotFoundError


def _source(n: int) -> list[dict[str, np.ndarray]]:
    return [{"id": np.int64(i), "x": np.full(3, i, np.float32)} for i in range(n)]


@pytest.fixture
def processes(monkeypatch):
    """``as_process(index, count)``: jax (and grain, which asks jax) see that process."""

    def as_process(index: int, count: int) -> None:
        monkeypatch.setattr(jax, "process_index", lambda: index)
        monkeypatch.setattr(jax, "process_count", lambda: count)

    return as_process


def _ids(batches) -> list[np.ndarray]:
    return [np.asarray(batch["id"]) for batch in batches]


def test_one_epoch_reads_every_record_once_shuffled_by_the_seed():
    loader = streaming.make_loader(_source(40), [], global_batch=8, seed=1, num_epochs=1)
    ids = _ids(loader)
    assert [len(b) for b in ids] == [8] * 5
    np.testing.assert_array_equal(np.sort(np.concatenate(ids)), np.arange(40))
    assert not np.array_equal(np.concatenate(ids), np.arange(40))
    again = _ids(streaming.make_loader(_source(40), [], global_batch=8, seed=1, num_epochs=1))
    np.testing.assert_array_equal(np.concatenate(ids), np.concatenate(again))
    other = _ids(streaming.make_loader(_source(40), [], global_batch=8, seed=2, num_epochs=1))
    assert not np.array_equal(np.concatenate(ids), np.concatenate(other))


def test_operations_run_on_every_example():
    class Double(grain.transforms.Map):
        def map(self, example):
            return {**example, "x": 2 * example["x"]}

    batch = next(iter(streaming.make_loader(_source(16), [Double()], global_batch=4, seed=0)))
    np.testing.assert_array_equal(batch["x"], 2 * np.repeat(batch["id"][:, None], 3, 1))


def test_two_processes_read_disjoint_shards_that_cover_the_records(processes):
    per_process = []
    for index in range(2):
        processes(index, 2)
        loader = streaming.make_loader(_source(40), [], global_batch=8, seed=1, num_epochs=1)
        ids = _ids(loader)
        assert [len(b) for b in ids] == [4] * 5  # the local half of each global batch
        per_process.append(np.concatenate(ids))
    assert not set(per_process[0]) & set(per_process[1])
    np.testing.assert_array_equal(np.sort(np.concatenate(per_process)), np.arange(40))


def _reference_eval(n: int, global_batch: int, count: int, max_batches=None):
    """numpy: process p's contiguous share of ceil(n / count) ids, padded with its first id
    (or id 0 when the share is empty) to whole local batches, the same count everywhere."""
    local = global_batch // count
    share = -(-n // count)
    steps = -(-share // local)
    if max_batches is not None:
        steps = min(steps, max_batches)
    out = []
    for p in range(count):
        ids = np.arange(min(p * share, n), min((p + 1) * share, n))
        real = np.ones(len(ids), np.float32)
        pad = steps * local - len(ids)
        if pad > 0:
            ids = np.concatenate([ids, np.full(pad, ids[0] if len(ids) else 0)])
            real = np.concatenate([real, np.zeros(pad, np.float32)])
        out.append(
            (
                ids[: steps * local].reshape(steps, local),
                real[: steps * local].reshape(steps, local),
            )
        )
    return out


@pytest.mark.parametrize(
    "n, global_batch, count", [(21, 8, 1), (16, 8, 1), (21, 8, 2), (3, 8, 4), (40, 4, 2)]
)
def test_eval_batches_cover_every_record_once_with_its_mask(processes, n, global_batch, count):
    reference = _reference_eval(n, global_batch, count)
    seen = []
    for index in range(count):
        processes(index, count)
        batches = list(streaming.eval_batches(_source(n), [], global_batch=global_batch))
        ids, masks = reference[index]
        assert len(batches) == len(ids)  # every process takes the same number of steps
        np.testing.assert_array_equal([b["id"] for b in batches], ids)
        np.testing.assert_array_equal([b["mask"] for b in batches], masks)
        for b in batches:
            assert b["mask"].dtype == np.float32
            np.testing.assert_array_equal(b["x"][:, 0], b["id"])
            seen += list(b["id"][b["mask"] == 1])
    assert sorted(seen) == list(range(n))  # every record once, padding masked out


def test_eval_batches_stop_after_max_batches():
    batches = list(streaming.eval_batches(_source(40), [], global_batch=8, max_batches=2))
    assert len(batches) == 2
    np.testing.assert_array_equal(np.concatenate([b["id"] for b in batches]), np.arange(16))


def test_a_masked_mean_over_eval_batches_is_the_mean_over_the_records():
    batches = streaming.eval_batches(_source(21), [], global_batch=8)
    total = weight = 0.0
    for b in batches:
        total += float(np.sum(b["mask"] * b["x"][:, 0]))
        weight += float(np.sum(b["mask"]))
    assert total / weight == pytest.approx(np.mean(np.arange(21)))


def test_bad_loader_and_eval_arguments_are_clear_errors(processes):
    with pytest.raises(ValueError, match="global_batch must be a positive multiple"):
        streaming.make_loader(_source(16), [], global_batch=0, seed=0)
    with pytest.raises(ValueError, match="fewer than one local batch of 8"):
        streaming.make_loader(_source(5), [], global_batch=8, seed=0)
    with pytest.raises(ValueError, match="the evaluation split is empty"):
        list(streaming.eval_batches([], [], global_batch=8))
    with pytest.raises(ValueError, match="num_examples must be >= 1"):
        with streaming.mock_datasets(0):
            pass
    processes(0, 2)
    with pytest.raises(ValueError, match="process count 2, got 5"):
        streaming.make_loader(_source(16), [], global_batch=5, seed=0)
    with pytest.raises(ValueError, match="process count 2, got 3"):
        list(streaming.eval_batches(_source(16), [], global_batch=3))
    with pytest.raises(ValueError, match="each of the 2 process shards holds 3 records"):
        streaming.make_loader(_source(7), [], global_batch=8, seed=0)


def test_open_source_of_a_missing_dataset_names_the_command(tmp_path):
    streaming.datasets_read(clear=True)  # reads of earlier tests in this process
    with pytest.raises(DataNotFoundError, match="jaxlab data fetch mnist"):
        streaming.open_source("mnist", "train", data_dir=tmp_path)
    assert streaming.datasets_read(clear=True) == []


def test_mock_datasets_records_every_dataset_read_once_in_order():
    streaming.datasets_read(clear=True)
    with streaming.mock_datasets(6):
        train = streaming.open_source("mnist", "train")
        test = streaming.open_source("mnist", "test")
        streaming.open_source("mnist", "train")
    assert len(train) == 6 and len(test) == 6
    example = train[0]
    assert example["image"].shape == (28, 28, 1) and example["image"].dtype == np.uint8
    assert streaming.datasets_read() == [
        {"name": "mnist", "split": "train", "mock": True},
        {"name": "mnist", "split": "test", "mock": True},
    ]
    assert streaming.datasets_read(clear=True) and streaming.datasets_read() == []
    batch = next(iter(streaming.make_loader(train, [], global_batch=2, seed=0)))
    assert batch["image"].shape == (2, 28, 28, 1)
