"""A run's directory: created only when needed, locked while in use, left clean on failure.

``claimed(path)`` is the one way the runner and the CLI take a directory (a ``jaxlab run``
workdir, a ``reproduce --out``): it creates the missing folders, takes the directory's lock
and, on the way out, releases the lock and removes the folders it created that stayed
empty, so a run that failed before writing anything leaves nothing behind.

The lock is ``<dir>/jaxlab.lock``, created atomically (``os.open`` with ``O_CREAT |
O_EXCL``) and holding ``{"pid", "host"}`` of the run. A second run into the same directory
finds it and stops with :class:`WorkdirLocked`, naming the process. A lock whose process no
longer runs on this host (a SIGKILL, a crash) is stale and taken over with a warning; a
lock of another host cannot be checked from here, so the message says to delete it when no
run uses it. Two runs taking over the same stale lock at the same instant are the one case
left to chance: the file is removed only while it still holds the stale content.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = "jaxlab.lock"


class WorkdirError(Exception):
    """A directory the run cannot use; the message names it and the remedy."""


class WorkdirLocked(WorkdirError):
    """The directory is in use by another run."""


def make_dirs(path: str | os.PathLike) -> list[Path]:
    """Creates ``path`` and its missing parents; returns the folders created, deepest first.

    Raises:
      WorkdirError: ``path`` cannot be created (under a file, read-only, no permission).
    """
    path = Path(path).absolute()
    missing = [p for p in (path, *path.parents) if not p.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WorkdirError(
            f"cannot create the directory {path}: {error.strerror or error}; "
            "choose another directory"
        ) from error
    return missing


def remove_empty(folders: list[Path]) -> None:
    """Removes each of ``folders`` (deepest first) that is empty."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (a process of another user counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


class WorkdirLock:
    """The lock file of ``directory``; a context manager (``with WorkdirLock(d): ...``).

    Raises (on entry):
      WorkdirLocked: a live run holds the lock, or it cannot be read.
      WorkdirError: the lock file cannot be written (a read-only directory).
    """

    def __init__(self, directory: str | os.PathLike):
        self.path = Path(directory).absolute() / LOCK_NAME
        self._content: str | None = None

    def acquire(self) -> None:
        mine = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
        for _ in range(3):  # the holder may release, or a stale lock be removed, in between
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self._take_over_if_stale()
                continue
            except OSError as error:
                raise WorkdirError(
                    f"cannot write the lock file {self.path}: {error.strerror or error}; "
                    "choose another directory"
                ) from error
            with os.fdopen(fd, "w") as file:
                file.write(mine)
            self._content = mine
            return
        raise WorkdirLocked(
            f"{self.path.parent} is in use by another run ({self.path}); "
            "wait for it to finish, or choose another directory"
        )

    def _take_over_if_stale(self) -> None:
        text = _read(self.path)
        if text is None:  # released meanwhile
            return
        where = self.path.parent
        try:
            holder = json.loads(text)
            pid, host = int(holder["pid"]), str(holder["host"])
        except (ValueError, KeyError, TypeError):
            raise WorkdirLocked(
                f"{where} has an unreadable lock file {self.path}; if no run uses {where}, "
                "delete that file, or choose another directory"
            ) from None
        if host != socket.gethostname():
            raise WorkdirLocked(
                f"{where} is locked by process {pid} on host {host} ({self.path}); if no run "
                "uses it any more, delete that file, or choose another directory"
            )
        if _alive(pid):
            raise WorkdirLocked(
                f"{where} is in use by process {pid} on this host; wait for that run to "
                f"finish, or choose another directory (if process {pid} is no jaxlab run, "
                f"delete {self.path})"
            )
        print(
            f"jaxlab: warning: taking over the stale lock {self.path} of process {pid}, "
            "which no longer runs",
            file=sys.stderr,
        )
        if _read(self.path) == text:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def release(self) -> None:
        """Removes the lock file, if it is still this run's."""
        if self._content is not None and _read(self.path) == self._content:
            self.path.unlink()
        self._content = None

    def __enter__(self) -> WorkdirLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()


@contextlib.contextmanager
def claimed(directory: str | os.PathLike, lock: bool = True) -> Iterator[Path]:
    """Creates ``directory`` and holds its lock (unless ``lock=False``) for the ``with`` block.

    On exit, folders this call created that are still empty are removed again.

    Raises:
      WorkdirError: the directory cannot be created or written.
      WorkdirLocked: another run uses it.
    """
    created = make_dirs(directory)
    try:
        if lock:
            with WorkdirLock(directory):
                yield Path(directory)
        else:
            yield Path(directory)
    finally:
        remove_empty(created)
