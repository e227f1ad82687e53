"""Doctests of the experiments (``pytest --doctest-modules experiments``).

Each file's examples run against the module imported under its package name,
``jaxlab_experiments.<paper>...`` (the name the examples and the registry import), so a
module is imported once, not a second time as ``experiments.<paper>...``. ``jax``, ``jnp``,
``np``, ``nn`` (``flax.linen``) and ``optax`` are in every example's namespace, and a
backend that does not start stops the run with a message first, as in ``jaxlab/conftest.py``.
"""

from __future__ import annotations

import importlib
import os
import pathlib

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _pytest.doctest import DoctestModule

from jaxlab.report import xla_env

ROOT = pathlib.Path(__file__).parent
PACKAGE = "jaxlab_experiments"


class _PackageDoctests(DoctestModule):
    """A :class:`DoctestModule` whose module comes from ``jaxlab_experiments``."""

    def _getobj(self):
        relative = self.path.relative_to(ROOT).with_suffix("")
        parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
        return importlib.import_module(".".join((PACKAGE, *parts)))


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: pathlib.Path, parent: pytest.Collector):
    collected = yield
    return [
        _PackageDoctests.from_parent(parent, path=file_path)
        if type(node) is DoctestModule and file_path.name != "conftest.py"
        else node
        for node in collected
    ]


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict) -> None:
    doctest_namespace.update(jax=jax, jnp=jnp, np=np, nn=nn, optax=optax)


def pytest_sessionstart(session: pytest.Session) -> None:
    problem = xla_env.startup_problem(os.environ)
    if problem:
        pytest.exit(problem, returncode=4)
