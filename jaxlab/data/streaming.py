"""Paper-scale input: TFDS data sources streamed by grain, one shard per process.

The ``paper`` presets read the papers' own datasets by their TFDS names (``imagenet2012``,
``cifar10``, ``cifar10_corrupted``, ...; jaxlab's own builders register ``wikitext103``,
``planetoid_pubmed``, ``geom_qm9`` ... on import). Each read goes through
:func:`open_source` (``tfds.data_source``: array_record, random access, no TensorFlow), so
the harness can list the datasets a run read (``run.json``'s ``"datasets"``).

    source = open_source("imagenet2012", "train", data_dir=config.data_dir)
    loader = make_loader(source, ops, global_batch=1024, seed=0, workers=16)
    state, _ = fit(..., batches=DeviceStream(loader, mesh))   # jaxlab.train: the loader's
                                                              # position is checkpointed

:func:`make_loader` is a ``grain.DataLoader``: its ``IndexSampler`` shards the records by
JAX process (``ShardByJaxProcess``), shuffles them per epoch from the seed, and the decode
and augmentation ``operations`` run in ``workers`` worker processes. The harness's
:class:`jaxlab.train.DeviceStream` prefetches its batches to the devices as global arrays and
checkpoints its position.

:func:`eval_batches` walks a split once, in order, padded to whole global batches with a
``mask`` row weight, so evaluation can be split over ``data`` like training.

:func:`mock_datasets` (``tfds.testing.mock_data``) replaces every source with random
examples of the dataset's own features, which ``jaxlab run --dry-run`` and the tests use;
nothing is downloaded. A builder whose records random features cannot make (a molecule
whose mol block must parse) gives its own mock records
(``jaxlab.data.tfds_builders.MOCK_EXAMPLES``).

The in-memory path (:func:`jaxlab.data.batch_dataset`) stays for data that fits in memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import grain
import jax
import numpy as np
import tensorflow_datasets as tfds

__all__ = [
    "DatasetRead",
    "datasets_read",
    "eval_batches",
    "make_loader",
    "mock_datasets",
    "open_source",
    "prepare",
]

Example = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class DatasetRead:
    """One dataset a run opened: its TFDS ``name``, ``split`` and whether it was ``mock``."""

    name: str
    split: str
    mock: bool

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_READS: list[DatasetRead] = []
_MOCK = {"on": False}


def datasets_read(clear: bool = False) -> list[dict[str, Any]]:
    """The datasets :func:`open_source` opened in this process, in order, without repeats.

    ``clear=True`` also forgets them (the harness calls it once per run).
    """
    seen: list[dict[str, Any]] = []
    for read in _READS:
        if read.as_dict() not in seen:
            seen.append(read.as_dict())
    if clear:
        _READS.clear()
    return seen


def _mocking() -> bool:
    return _MOCK["on"]


@contextlib.contextmanager
def mock_datasets(num_examples: int = 16) -> Iterator[None]:
    """Every :func:`open_source` inside reads ``num_examples`` random examples of the
    dataset's own features (``tfds.testing.mock_data``); nothing is read from disk or
    downloaded. Used by ``jaxlab run --dry-run`` and the tests."""
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    with tfds.testing.mock_data(num_examples=num_examples):
        previous, _MOCK["on"] = _MOCK["on"], True
        try:
            yield
        finally:
            _MOCK["on"] = previous


def open_source(
    name: str,
    split: str,
    *,
    data_dir: str | os.PathLike | None = None,
    builder_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """``tfds.data_source(name, split)``, recorded for the run's ``run.json``; it never
    downloads (a dataset is prepared beforehand by ``jaxlab data fetch`` or ``tfds build``).

    Args:
      name: a TFDS name, with config and version if needed (``"cifar10"``,
        ``"cifar10_corrupted/gaussian_noise_5"``, ``"imagenet2012"``) or one of jaxlab's
        own builders (:mod:`jaxlab.data.tfds_builders`, registered here).
      split: a TFDS split (``"train"``, ``"validation[:1%]"``).
      data_dir: TFDS's data directory (default: TFDS's own, ``~/tensorflow_datasets``).
      builder_kwargs: passed to the builder (e.g. ``{"config": ...}``).

    Returns:
      A random-access source: ``len(source)`` records, ``source[i]`` a dict of numpy values.

    Raises:
      jaxlab.data.DataNotFoundError: the dataset is not prepared in ``data_dir``; the
        message names the command that prepares it (``jaxlab data fetch NAME`` or
        ``tfds build NAME``).
    """
    import jaxlab.data.tfds_builders  # noqa: F401  (registers jaxlab's own builders by name)
    from jaxlab.data.paths import DataNotFoundError

    kwargs = dict(builder_kwargs or {})
    try:
        source = tfds.data_source(
            name,
            split=split,
            data_dir=data_dir or None,
            builder_kwargs=kwargs or None,
            download=False,
        )
    except (
        AssertionError,
        FileNotFoundError,
        NotImplementedError,
        ValueError,
        tfds.core.DatasetNotFoundError,
    ) as e:  # NotImplementedError: no array_record files
        raise DataNotFoundError(
            f"TFDS dataset {name!r} (split {split!r}) is not prepared as array_record in "
            f"{data_dir or 'the TFDS data directory'}: {str(e).splitlines()[0] if str(e) else e}; "
            f"prepare it with `jaxlab data fetch {name.split('/')[0]}` (or `tfds build`)"
        ) from e
    _READS.append(DatasetRead(name, split, _mocking()))
    if _mocking():
        return _builder_mock(name, source)
    return source


class _MockRecords:
    """``len(source)`` records, record ``i`` being ``make(i)``; picklable (grain's worker
    processes read it) when ``make`` is."""

    def __init__(self, source: Any, make: Any):
        self.dataset_info = getattr(source, "dataset_info", None)
        self._len, self._make = len(source), make

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: int) -> dict[str, Any]:
        if not 0 <= index < self._len:
            raise IndexError(f"record {index} of {self._len}")
        return self._make(int(index))


def _builder_mock(name: str, source: Any) -> Any:
    """``source`` (a mock), or its records from the builder's own ``mock_example`` where
    ``jaxlab.data.tfds_builders.MOCK_EXAMPLES`` has one for ``name``'s builder."""
    from jaxlab.data.tfds_builders import MOCK_EXAMPLES

    builder, _, rest = name.partition("/")
    make = MOCK_EXAMPLES.get(builder.partition(":")[0])
    if make is None:
        return source
    config = rest.partition(":")[0] or None
    return _MockRecords(source, functools.partial(make, config=config))


def prepare(name: str, *, data_dir: str | os.PathLike | None = None) -> str:
    """Downloads (where the builder can) and prepares TFDS dataset ``name`` as array_record
    in ``data_dir`` (TFDS's default when ``None``), what ``jaxlab data fetch NAME`` runs for
    a TFDS dataset; returns the folder it wrote. Never called by tests, CI or ``reproduce``.

    Raises:
      jaxlab.data.DataNotFoundError: a builder that needs manual files (``imagenet2012``)
        and did not find them; the message is TFDS's first line.
    """
    import jaxlab.data.tfds_builders  # noqa: F401  (registers jaxlab's own builders by name)
    from jaxlab.data.paths import DataNotFoundError

    builder = tfds.builder(name, data_dir=data_dir or None, file_format="array_record")
    try:
        builder.download_and_prepare()
    except (AssertionError, FileNotFoundError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise DataNotFoundError(f"cannot prepare {name}: {first}") from error
    return str(builder.data_dir)


def make_loader(
    source: Any,
    operations: Sequence[Any],
    *,
    global_batch: int,
    seed: int,
    workers: int = 0,
    shuffle: bool = True,
    num_epochs: int | None = None,
) -> grain.DataLoader:
    """A grain loader of this process's rows of each global batch of ``source``.

    Args:
      source: a random-access source (:func:`open_source`).
      operations: per-example grain transforms (decoding, augmentation; a
        ``grain.transforms.RandomMap`` gets a per-example rng from ``seed``).
      global_batch: rows per step over all processes; each process batches
        ``global_batch // jax.process_count()`` of its own records.
      seed: shuffle and augmentation seed.
      workers: worker processes for the operations (0: in this process).
      shuffle: shuffle the records anew every epoch.
      num_epochs: ``None`` repeats forever.

    Raises:
      ValueError: a batch that does not split over the processes, or a shard with fewer
        records than one local batch.
    """
    count = jax.process_count()
    if global_batch < 1 or global_batch % count:
        raise ValueError(
            f"global_batch must be a positive multiple of the process count "
            f"{count}, got {global_batch}"
        )
    local = global_batch // count
    if len(source) // count < local:
        raise ValueError(
            f"each of the {count} process shards holds {len(source) // count} "
            f"records, fewer than one local batch of {local}"
        )
    if workers:
        _absl_flags_parsed()
    sampler = grain.samplers.IndexSampler(
        num_records=len(source),
        shard_options=grain.sharding.ShardByJaxProcess(drop_remainder=True),
        shuffle=shuffle,
        num_epochs=num_epochs,
        seed=seed,
    )
    return grain.DataLoader(
        data_source=source,
        sampler=sampler,
        operations=[*operations, grain.transforms.Batch(local, drop_remainder=True)],
        worker_count=workers,
    )


def eval_batches(
    source: Any,
    operations: Sequence[Any],
    *,
    global_batch: int,
    max_batches: int | None = None,
    workers: int = 0,
) -> Iterator[dict[str, Any]]:
    """The whole split once, in order: this process's rows of each global batch.

    Each process reads its own contiguous share of the records; the last batch is padded
    with copies of a real row, and every batch carries ``mask`` (``[rows]`` float32,
    1 for a real example, 0 for padding), so a metric is ``sum(mask * value) / sum(mask)``
    summed over batches (and over processes by the jitted reduction).

    Args:
      source: a random-access source.
      operations: per-example transforms (no augmentation: evaluation is deterministic).
      global_batch: rows per batch over all processes.
      max_batches: stop after this many batches (a dry run's "one batch").
      workers: worker processes for the operations.
    """
    count, index = jax.process_count(), jax.process_index()
    if global_batch < 1 or global_batch % count:
        raise ValueError(
            f"global_batch must be a positive multiple of the process count "
            f"{count}, got {global_batch}"
        )
    local = global_batch // count
    n = len(source)
    if n == 0:
        raise ValueError("the evaluation split is empty")
    per_process = -(-n // count)
    steps = -(-per_process // local)
    if max_batches is not None:
        steps = min(steps, max_batches)
    begin = min(index * per_process, n)
    mine = np.arange(begin, min(begin + per_process, n))

    def pad_to(ids: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        real = np.ones(len(ids), np.float32)
        if len(ids) < size:
            filler = ids[:1] if len(ids) else np.zeros(1, np.int64)
            ids = np.concatenate([ids, np.repeat(filler, size - len(ids))])
            real = np.concatenate([real, np.zeros(size - len(real), np.float32)])
        return ids, real

    ids, real = pad_to(mine[: steps * local], steps * local)
    masks = real.reshape(steps, local)
    dataset = grain.MapDataset.source(_Subset(source, ids)).seed(0)
    dataset = grain.experimental.apply_transformations(dataset, list(operations))
    dataset = dataset.batch(local, drop_remainder=True)
    iterable: Any = dataset.to_iter_dataset()
    if workers:
        _absl_flags_parsed()
        iterable = iterable.mp_prefetch(grain.MultiprocessingOptions(num_workers=workers))
    for step, batch in enumerate(iterable):
        if step >= steps:
            break
        yield dict(batch, mask=masks[step])


def _absl_flags_parsed() -> None:
    """grain's worker processes read absl flags, which a program without ``absl.app``
    (``jaxlab run``) never parses: mark them parsed (their defaults) before starting them."""
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


class _Subset:
    """``source`` seen through the record ids ``ids`` (a random-access source)."""

    def __init__(self, source: Any, ids: np.ndarray):
        self._source, self._ids = source, ids

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i: int) -> Any:
        return self._source[int(self._ids[i])]
