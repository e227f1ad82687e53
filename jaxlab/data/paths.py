"""Where offline data lives: ``--data_dir``, ``$JAXLAB_DATA_DIR`` or ``../shared/data``."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "JAXLAB_DATA_DIR"


class DataNotFoundError(FileNotFoundError):
    """A data file the caller needs is not where jaxlab looked."""


def _candidates(data_dir: str | os.PathLike | None) -> list[Path]:
    if data_dir is not None:
        return [Path(data_dir)]
    if os.environ.get(ENV_VAR):
        return [Path(os.environ[ENV_VAR])]
    repo_root = Path(__file__).resolve().parents[2]
    return [Path.cwd().parent / "shared" / "data", repo_root.parent / "shared" / "data"]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """Returns the data directory: the argument, ``$JAXLAB_DATA_DIR``, or ``../shared/data``.

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
    """Returns ``<data_dir>/<relative>``, or raises naming the file and the directory."""
    root = resolve_data_dir(data_dir)
    path = root / relative
    if not path.exists():
        raise DataNotFoundError(f"missing data file {relative!s}: looked for {path}")
    return path
