"""Numerics a run names in its config, never a backend's default.

Every experiment config carries three fields (``jaxlab.report.base_config``):

- ``matmul_precision``: the precision of float32 matrix products and convolutions, one of
  :data:`MATMUL_PRECISIONS`. ``"highest"`` is full float32 on every backend; ``"high"``
  is TF32-like (3 bf16 passes on a TPU, TF32 on an NVIDIA GPU); ``"default"`` is the
  backend's cheapest (a GPU's TF32, a TPU's one bf16 pass; the CPU computes full float32
  whatever is asked). Smoke and quick presets use ``"highest"``, so CPU and GPU results
  agree; a paper preset names the paper's choice.
- ``compute_dtype``: the dtype of activations and matrix-product inputs in the models of
  the preset (``"float32"``, ``"bfloat16"`` or ``"float16"``).
- ``param_dtype``: the dtype of the parameters and the optimiser state (the master
  weights), ``"float32"`` in every preset.

The registry runs ``train_and_evaluate`` inside :func:`numerics_scope`, so every program a
run traces multiplies at the config's ``matmul_precision``; a model reads its dtypes with
:func:`compute_dtype` and :func:`param_dtype`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp

#: The accepted ``matmul_precision`` names (``jax.default_matmul_precision``'s).
MATMUL_PRECISIONS = ("default", "high", "highest")
#: The accepted ``compute_dtype`` / ``param_dtype`` names.
DTYPES = ("float32", "bfloat16", "float16")


def check_numerics(config: Any) -> None:
    """Checks the config's ``matmul_precision``, ``compute_dtype`` and ``param_dtype``.

    Raises:
      ValueError: a name outside :data:`MATMUL_PRECISIONS` / :data:`DTYPES`, or a
        ``param_dtype`` other than float32 (master weights stay float32).
    """
    if config.matmul_precision not in MATMUL_PRECISIONS:
        raise ValueError(
            f"config.matmul_precision must be one of {MATMUL_PRECISIONS}, "
            f"got {config.matmul_precision!r}"
        )
    for field in ("compute_dtype", "param_dtype"):
        if getattr(config, field) not in DTYPES:
            raise ValueError(
                f"config.{field} must be one of {DTYPES}, got {getattr(config, field)!r}"
            )
    if config.param_dtype != "float32":
        raise ValueError(
            f"config.param_dtype must be 'float32' (master weights), got {config.param_dtype!r}"
        )


def compute_dtype(config: Any) -> jnp.dtype:
    """The config's ``compute_dtype`` as a NumPy dtype (``jnp.bfloat16`` …)."""
    check_numerics(config)
    return jnp.dtype(config.compute_dtype)


def param_dtype(config: Any) -> jnp.dtype:
    """The config's ``param_dtype`` as a NumPy dtype (always float32)."""
    check_numerics(config)
    return jnp.dtype(config.param_dtype)


@contextlib.contextmanager
def numerics_scope(config: Any) -> Iterator[None]:
    """Traces everything inside at the config's ``matmul_precision``.

    A config without the field (a user's own ``ConfigDict``) runs at ``"highest"``.

    Raises:
      ValueError: an unknown precision or dtype name.
    """
    if "matmul_precision" not in config:
        with jax.default_matmul_precision("highest"):
            yield
        return
    check_numerics(config)
    with jax.default_matmul_precision(config.matmul_precision):
        yield
