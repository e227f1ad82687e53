"""The code a result was computed by, as one SHA-256, so a saved result is never stale.

``code_hash(module)`` covers, for the experiment package ``module``:

- every file of the experiment's folder, recursively (``__pycache__`` and ``.pyc`` aside);
- the ``.py`` files directly in its paper's folder (the ``Paper`` record, a trainer shared by
  that paper's experiments);
- every ``.py`` file of the installed ``jaxlab`` package.

Each file enters, in sorted order of its path relative to its root, as that path and the
SHA-256 of its content, so an edit, a new file, a deletion or a rename changes the hash.
The ``jaxlab`` part is computed once per process (a running process keeps the code it
imported); the experiment's part on every call. The runner saves the hash beside each result
and reuses a result only when the hash and the config both match.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from collections.abc import Iterable
from pathlib import Path


def _digest(root: Path, files: Iterable[Path]) -> str:
    total = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        total.update(path.relative_to(root).as_posix().encode() + b"\0")
        total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def _folder_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]


@functools.cache
def jaxlab_hash() -> str:
    """SHA-256 over the installed ``jaxlab`` package's ``.py`` files (once per process)."""
    root = Path(importlib.import_module("jaxlab").__file__).parent
    return _digest(root, (p for p in root.rglob("*.py") if "__pycache__" not in p.parts))


def code_hash(module: str) -> str:
    """SHA-256 over the experiment package ``module``'s code and ``jaxlab``'s (see above)."""
    folder = Path(importlib.import_module(module).__path__[0])
    paper = folder.parent
    total = hashlib.sha256()
    total.update(_digest(folder, _folder_files(folder)).encode())
    total.update(_digest(paper, paper.glob("*.py")).encode())
    total.update(jaxlab_hash().encode())
    return total.hexdigest()
