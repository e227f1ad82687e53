"""Doctests (``pytest --doctest-modules jaxlab``): the names every docstring example may use.

``jax``, ``jnp``, ``np``, ``nn`` (``flax.linen``) and ``optax`` are in the namespace of every
example, as in optax's doctests; anything else is imported inside the example.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict) -> None:
    doctest_namespace.update(jax=jax, jnp=jnp, np=np, nn=nn, optax=optax)
