"""The code and inputs a result was computed from, as one SHA-256, so a saved result is
never stale.

``code_hash(module, config)`` covers, for the experiment package ``module``:

- every file of the experiment's folder, recursively (``__pycache__`` and ``.pyc`` aside);
- the ``.py`` files directly in its paper's folder (the ``Paper`` record, a trainer shared by
  that paper's experiments);
- the modules of the installed ``jaxlab`` package that it runs: those its ``.py`` files
  import, transitively, with the ``__init__.py`` of every package on the way
  (``module_closure``), and ``jaxlab.report.runner``, which makes each seed's config. The
  imports are read from the source (every ``import`` statement, at any depth, relative
  ones resolved), so a kernel the experiment does not import leaves its hash alone, and
  so do the report's own modules (this one, the verdicts, the tables);
- the installed version of every package ``jaxlab`` requires, extras included, and of
  ``NUMERICS_PACKAGES`` (``jaxlib`` and the accelerator plugins, which set XLA's numerics)
  (``importlib.metadata``; a package not installed enters as absent);
- with a ``config``: the data it reads, as a listing of the files under each name of
  ``config.datasets`` — each file's path, size and SHA-256 checksum — in the folder a
  local name reads (``jaxlab.data.prerequisites.LOCAL_FOLDERS``: the graphs of the data
  directory, the Fashion-MNIST IDX files), else under that name in the data directory
  (``jaxlab.data.paths``) and in TFDS's (``$TFDS_DATA_DIR`` or ``~/tensorflow_datasets``).
  A file's checksum is read once per process for its path, size and modification time.
  A name with no folder (``"generated"``, a pip package's data) enters by its name; its
  package's version is covered above.

Each file enters, in sorted order of its path relative to its root, as that path and the
SHA-256 of its content, so an edit, a new file, a deletion or a rename changes the hash.
A ``jaxlab`` module's content and imports, and the package versions, are read once per
process (a running process keeps the code it imported); the experiment's files and the
data on every call. The runner saves the
hash beside each result and reuses a result only when the hash and the config both match.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.metadata
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Packages outside jaxlab's requirements that decide XLA's numerics.
NUMERICS_PACKAGES = ("jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt", "libtpu")


def _digest(root: Path, files: Iterable[Path]) -> str:
    total = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        total.update(path.relative_to(root).as_posix().encode() + b"\0")
        total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def _folder_files(folder: Path) -> list[Path]:
    return [
        p
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]


#: The module that runs every experiment: it makes each seed's config, so it is part of
#: what computed a result.
RUNNER_MODULE = "jaxlab.report.runner"


def _jaxlab_root() -> Path:
    init = importlib.import_module("jaxlab").__file__
    assert init is not None, "jaxlab is a regular package: it has an __init__.py"
    return Path(init).parent


def _imported_names(tree: ast.AST, package: str) -> set[str]:
    """The dotted names every ``import`` statement of ``tree`` (at any depth) may import,
    relative ones resolved against ``package``: ``from a import b`` names ``a`` and
    ``a.b`` (``b`` may be a module)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _package_of(path: Path, root: Path, package: str) -> str:
    """The dotted package that holds ``path`` (a file under ``root``, the folder of
    ``package``)."""
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1])


@functools.cache
def _source(path: Path, root: Path, package: str) -> tuple[frozenset[str], str]:
    """(the names it imports, its SHA-256) of a ``.py`` file, read once per process."""
    data = path.read_bytes()
    names = _imported_names(ast.parse(data, filename=str(path)), _package_of(path, root, package))
    return frozenset(names), hashlib.sha256(data).hexdigest()


def _module_file(name: str, root: Path, package: str) -> Path | None:
    """The file of module ``name`` of ``package`` (whose folder is ``root``), or ``None``
    when ``name`` is no such module (another package, or a function of a module)."""
    parts = name.split(".")
    if parts[0] != package:
        return None
    path = root.joinpath(*parts[1:])
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_closure(
    files: Iterable[Path], root: Path | None = None, package: str = "jaxlab"
) -> list[Path]:
    """The files of ``package``'s modules that ``files`` import, transitively, sorted.

    Read from the source with ``ast``: every ``import`` and ``from … import`` statement,
    also those inside functions; importing ``a.b.c`` imports ``a/__init__.py`` and
    ``a/b/__init__.py`` too. A file of ``package`` in ``files`` is not in the answer unless
    it is imported. ``root`` is ``package``'s folder (the installed ``jaxlab``'s by default).

    Raises:
      SyntaxError: a file that does not parse.
    """
    root = _jaxlab_root() if root is None else Path(root)
    found: set[Path] = set()
    todo = list(files)
    while todo:
        path = todo.pop()
        if path.suffix != ".py":
            continue
        if path.is_relative_to(root):
            names, _ = _source(path, root, package)
        else:
            names = frozenset(_imported_names(ast.parse(path.read_bytes()), ""))
        for name in names:
            parts = name.split(".")
            for end in range(1, len(parts) + 1):
                module = _module_file(".".join(parts[:end]), root, package)
                if module is not None and module not in found:
                    found.add(module)
                    todo.append(module)
    return sorted(found)


def modules_hash(files: Iterable[Path]) -> str:
    """SHA-256 over the ``jaxlab`` modules that ``files`` run: ``module_closure`` of
    ``files`` and of ``RUNNER_MODULE``'s file itself (each module read once per process)."""
    root = _jaxlab_root()
    runner = _module_file(RUNNER_MODULE, root, "jaxlab")
    assert runner is not None, RUNNER_MODULE
    modules = set(module_closure(files, root)) | {runner}
    total = hashlib.sha256()
    for path in sorted(modules, key=lambda p: p.relative_to(root).as_posix()):
        total.update(path.relative_to(root).as_posix().encode() + b"\0")
        total.update(bytes.fromhex(_source(path, root, "jaxlab")[1]))
    return total.hexdigest()


def _requirement_names(distribution: str = "jaxlab") -> list[str]:
    """The names of the packages ``distribution`` requires, extras included, sorted."""
    try:
        requires = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    names = {re.split(r"[\s<>=!~;\[(]", line.strip(), maxsplit=1)[0] for line in requires}
    return sorted(n for n in names if n and n != distribution)


@functools.cache
def package_versions() -> tuple[tuple[str, str], ...]:
    """(name, installed version or ``"absent"``) of every package ``jaxlab`` requires and
    of ``NUMERICS_PACKAGES`` (once per process)."""
    versions = []
    for name in sorted(set(_requirement_names()) | set(NUMERICS_PACKAGES)):
        try:
            versions.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            versions.append((name, "absent"))
    return tuple(versions)


def _data_roots(data_dir: str) -> list[Path]:
    from jaxlab.data import paths

    roots = []
    try:
        roots.append(paths.resolve_data_dir(data_dir or None))
    except paths.DataNotFoundError:
        pass
    roots.append(Path(os.environ.get("TFDS_DATA_DIR", Path.home() / "tensorflow_datasets")))
    return roots


@functools.cache
def _checksum(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file's content, read once per (path, size, modification time)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_lines(label: str, folder: Path) -> list[str]:
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        info = path.stat()
        checksum = _checksum(str(path), info.st_size, info.st_mtime_ns)
        lines.append(f"{label}/{path.relative_to(folder).as_posix()} {info.st_size} {checksum}")
    return lines


def _folders(name: str, data_dir: str) -> list[tuple[str, Path]]:
    """(label, folder) of each folder that holds dataset ``name``: its local folder
    (``prerequisites.LOCAL_FOLDERS``), else ``<root>/<name>`` (``_`` also read as ``-``)
    under the data directory and TFDS's."""
    from jaxlab.data import prerequisites

    if name in prerequisites.LOCAL_FOLDERS:
        folder = prerequisites.LOCAL_FOLDERS[name](data_dir or None)
        return [(name, folder)] if folder is not None and folder.is_dir() else []
    found = []
    for root in _data_roots(data_dir):
        for folder in sorted({root / name, root / name.replace("_", "-")}):
            if folder.is_dir():
                found.append((folder.relative_to(root).as_posix(), folder))
    return found


def data_listing(datasets: Iterable[str], data_dir: str = "") -> list[str]:
    """One line per dataset name and per file found under it: ``name`` alone when no
    folder holds it, else ``label/relative/path size sha256`` (the label is the dataset's
    name for a local folder, its folder's path under the data root otherwise)."""
    lines = []
    for name in sorted(set(datasets)):
        folders = _folders(name, data_dir)
        for label, folder in folders:
            lines.extend(_file_lines(label, folder))
        if not folders:
            lines.append(name)
    return lines


PARTS = ("experiment", "jaxlab", "packages", "data")


def code_parts(module: str, config: Any = None) -> dict[str, str]:
    """The parts of ``code_hash``, each a SHA-256 (see the module docstring): the
    experiment's folder and its paper's ``.py`` files (``"experiment"``), the ``jaxlab``
    modules they run (``"jaxlab"``), the installed versions (``"packages"``) and, given its
    ``config``, the data listing (``"data"``; the hash of nothing without a config)."""
    folder = Path(importlib.import_module(module).__path__[0])
    paper = folder.parent
    files = _folder_files(folder)
    paper_files = list(paper.glob("*.py"))
    experiment = hashlib.sha256()
    experiment.update(_digest(folder, files).encode())
    experiment.update(_digest(paper, paper_files).encode())
    packages = hashlib.sha256()
    for name, version in package_versions():
        packages.update(f"{name}=={version}\n".encode())
    data = hashlib.sha256()
    if config is not None:
        datasets = tuple(config.get("datasets", ()) or ())
        for line in data_listing(datasets, str(config.get("data_dir", "") or "")):
            data.update(line.encode() + b"\n")
    return {
        "experiment": experiment.hexdigest(),
        "jaxlab": modules_hash([*files, *paper_files]),
        "packages": packages.hexdigest(),
        "data": data.hexdigest(),
    }


def code_hash(module: str, config: Any = None) -> str:
    """SHA-256 over the experiment package ``module``'s code, the ``jaxlab`` modules it
    runs, the installed
    versions of ``jaxlab``'s requirements and (given its ``config``) the data files it
    reads: the parts of ``code_parts``, in the order of ``PARTS``."""
    parts = code_parts(module, config)
    return hashlib.sha256("".join(parts[name] for name in PARTS).encode()).hexdigest()


def changed_parts(saved: dict[str, str], current: dict[str, str]) -> list[str]:
    """The names in ``PARTS`` whose hash differs between ``saved`` and ``current`` (a part
    missing from ``saved`` counts as changed)."""
    return [name for name in PARTS if saved.get(name) != current[name]]
