"""Doctests (``pytest --doctest-modules jaxlab``): the names every docstring example may use.

``jax``, ``jnp``, ``np``, ``nn`` (``flax.linen``) and ``optax`` are in the namespace of every
example, as in optax's doctests; anything else is imported inside the example. A backend
that does not start (``jaxlab.report.xla_env``) stops the run with a message first.
"""

import os

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxlab.report import xla_env


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict) -> None:
    doctest_namespace.update(jax=jax, jnp=jnp, np=np, nn=nn, optax=optax)


def pytest_sessionstart(session: pytest.Session) -> None:
    problem = xla_env.startup_problem(os.environ)
    if problem:
        pytest.exit(problem, returncode=4)
