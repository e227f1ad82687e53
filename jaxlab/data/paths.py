"""Where offline data lives: ``--data_dir``, ``$JAXLAB_DATA_DIR``, ``../shared/data`` or the
cache ``jaxlab data fetch`` fills (``~/.cache/jaxlab``)."""

from __future__ import annotations

import os
from pathlib import Path

from jaxlab.data import fetch

ENV_VAR = "JAXLAB_DATA_DIR"


class DataNotFoundError(FileNotFoundError):
    """A data file the caller needs is not where jaxlab looked."""


def _candidates(data_dir: str | os.PathLike | None) -> list[Path]:
    if data_dir is not None:
        return [Path(data_dir)]
    if os.environ.get(ENV_VAR):
        return [Path(os.environ[ENV_VAR])]
    repo_root = Path(__file__).resolve().parents[2]
    return [
        Path.cwd().parent / "shared" / "data",
        repo_root.parent / "shared" / "data",
        fetch.default_data_dir(),
    ]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: the argument, ``$JAXLAB_DATA_DIR``, ``../shared/data`` or the cache.

    Raises:
      DataNotFoundError: no candidate directory exists; the message lists where it looked.
    """
    candidates = _candidates(data_dir)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise DataNotFoundError(
        f"no data directory found (looked in: {looked}); pass --data_dir or set ${ENV_VAR}"
    )


def require_file(relative: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> Path:
    """Returns ``<data_dir>/<relative>``, or raises naming the file and the directory.

    A file that ``jaxlab data fetch`` provides is downloaded (into the data directory, or
    the cache when none exists) only when ``$JAXLAB_ALLOW_DOWNLOAD=1``; otherwise the error
    names the command.
    """
    dataset = fetch.dataset_of(relative)
    download = dataset is not None and fetch.download_allowed()
    remedy = (
        ""
        if dataset is None
        else (f"; run `jaxlab data fetch {dataset}` (or set ${fetch.ALLOW_ENV}=1)")
    )
    try:
        root = resolve_data_dir(data_dir)
    except DataNotFoundError as error:
        if not download:
            raise DataNotFoundError(f"{error}{remedy}") from None
        root = _candidates(data_dir)[-1]
    path = root / relative
    if not path.exists() and download and dataset is not None:
        fetch.fetch(dataset, root)
    if not path.exists():
        raise DataNotFoundError(f"missing data file {relative!s}: looked for {path}{remedy}")
    return path
