"""Host input to the devices: global batches prefetched on a thread, position checkpointed."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from jax.sharding import Mesh

from jaxlab.train.mesh import DATA_AXIS, put_batch

__all__ = ["DeviceStream", "device_batches"]


class DeviceStream:
    """Global batches from a grain loader (:func:`jaxlab.data.streaming.make_loader`),
    prefetched on a thread and placed over the mesh's ``data`` axis.

    ``next(stream)`` is the next global batch (arrays split over ``mesh``'s ``axis``);
    ``stream.state()`` is the loader position after the batch last taken, and
    ``stream.restore(state)`` continues from such a position (what :func:`jaxlab.train.fit`
    checkpoints). ``close()`` stops the thread and the loader's workers.

    Args:
      loader: a :func:`make_loader` loader (or any iterable whose iterator has
        ``get_state``/``set_state``).
      mesh: where the batches go; ``None`` keeps them as host arrays.
      axis: the mesh axis the rows are split over.
      prefetch: batches placed ahead of the one taken.
    """

    def __init__(
        self, loader: Any, mesh: Mesh | None = None, *, axis: str = DATA_AXIS, prefetch: int = 2
    ):
        if prefetch < 1:
            raise ValueError(f"prefetch must be >= 1, got {prefetch}")
        self._loader, self._mesh, self._axis, self._prefetch = loader, mesh, axis, prefetch
        self._iterator = iter(loader)
        self._state = self._iterator.get_state()
        self._start()

    @property
    def mesh(self) -> Mesh | None:
        """The mesh the batches are placed on."""
        return self._mesh

    def _start(self) -> None:
        self._ended: BaseException | None = None  # the end (or error) the thread handed over
        self._queue: queue.Queue = queue.Queue(maxsize=self._prefetch)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, daemon=True)
        self._thread.start()

    def _fill(self) -> None:
        while not self._stop.is_set():
            try:
                batch = next(self._iterator)
                item: Any = (self._place(batch), self._iterator.get_state())
            except StopIteration:
                item = StopIteration()
            except Exception as error:  # handed to the consumer, raised there
                item = error
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if isinstance(item, BaseException):
                return

    def _place(self, batch: Any) -> Any:
        if self._mesh is None:
            return batch
        return put_batch(batch, self._mesh, self._axis)

    def __iter__(self) -> DeviceStream:
        return self

    def __next__(self) -> Any:
        # after its end (or an error) the thread has stopped: every later call ends the same way
        item = self._ended if self._ended is not None else self._queue.get()
        if isinstance(item, BaseException):
            self._ended = item
            if isinstance(item, StopIteration):
                raise StopIteration
            raise item
        batch, self._state = item
        return batch

    def state(self) -> bytes:
        """The loader position after the last batch taken (bytes, JSON inside)."""
        return bytes(self._state)

    def restore(self, state: bytes) -> None:
        """Continues from a :meth:`state`: the next batch is the one read after it."""
        self._halt()
        self._iterator.set_state(state)
        self._state = state
        self._start()

    # grain's orbax handler (``jaxlab.train.Checkpointer``) saves and restores through these.
    def get_state(self) -> bytes:
        return self.state()

    def set_state(self, state: bytes) -> None:
        self.restore(state)

    def start_prefetch(self) -> None:
        """Prefetching restarts in :meth:`restore` already."""

    def _halt(self) -> None:
        self._stop.set()
        self._thread.join()

    def close(self) -> None:
        self._halt()
        close = getattr(self._iterator, "close", None)
        if close is not None:
            close()


def device_batches(
    batches: Iterable[Any], mesh: Mesh | None, *, axis: str = DATA_AXIS, prefetch: int = 2
) -> Iterator[Any]:
    """``batches`` (this process's rows of each global batch) as global arrays over
    ``axis``, placed ``prefetch`` batches ahead on a thread; for evaluation loops
    (:func:`jaxlab.data.streaming.eval_batches`), which need no position."""
    stream = DeviceStream(_Stateless(batches), mesh, axis=axis, prefetch=prefetch)
    try:
        yield from stream
    finally:
        stream.close()


class _Stateless:
    """An iterable seen as a loader whose position is never restored."""

    def __init__(self, batches: Iterable[Any]):
        self._batches = batches

    def __iter__(self) -> _Stateless:
        self._iterator = iter(self._batches)
        return self

    def __next__(self) -> Any:
        return next(self._iterator)

    def get_state(self) -> bytes:
        return b""

    def set_state(self, state: bytes) -> None:
        raise ValueError("device_batches streams cannot be restored")
