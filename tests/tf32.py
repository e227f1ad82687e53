"""A pytest plugin that multiplies float32 on the CPU as an NVIDIA GPU does by default (TF32).

XLA:CPU computes every float32 matrix product and convolution in full float32, whatever
precision a program asks for, so a test that passes here may fail on a GPU, whose default
precision rounds each float32 operand to TF32 (10 mantissa bits) before the tensor-core
product (float32 accumulation). With this plugin,

    pytest -p tests.tf32 tests/ood/test_scores.py

lowers every ``dot_general`` and ``conv_general_dilated`` on the CPU the GPU's way: operands
of float32 products whose recorded precision is not ``HIGHEST`` (``None``, ``DEFAULT`` or
``HIGH``; a product traced under ``jax.default_matmul_precision("highest")`` records
``HIGHEST``) are rounded to TF32 (round to nearest), then multiplied in float32. A reference
test that compares at an explicit ``"highest"`` precision passes with the plugin; one that
compares at the backend's default fails as it may on the GPU (``docs/precision.md``). Every
such product is rounded, where XLA:GPU may multiply a small one in full float32: the plugin
fails a superset of the tests a GPU fails.

The plugin replaces two CPU lowering rules of ``jax._src`` (private JAX API, tested with jax
0.10); it fails, not silently, where those rules are not found.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax._src.lax import convolution as _conv
from jax._src.lax import lax as _lax

#: Mantissa bits a float32 has beyond TF32's 10.
_DROPPED_BITS = 23 - 10


def round_to_tf32(x: jax.Array) -> jax.Array:
    """``x`` (float32) rounded to the nearest TF32 value (ties away from zero), as float32."""
    bits = jax.lax.bitcast_convert_type(x, jnp.uint32)
    half = jnp.uint32(1 << (_DROPPED_BITS - 1))
    mask = jnp.uint32(~((1 << _DROPPED_BITS) - 1) & 0xFFFFFFFF)
    rounded = jax.lax.bitcast_convert_type((bits + half) & mask, jnp.float32)
    return jnp.where(jnp.isfinite(x), rounded, x)


def runs_in_tf32(precision: Any, *operands: Any) -> bool:
    """Whether a GPU multiplies these operands in TF32 at this recorded precision."""
    if not all(op.dtype == jnp.float32 for op in operands):
        return False
    highest = jax.lax.Precision.HIGHEST
    if precision is None:
        return True
    if isinstance(precision, tuple):
        return not all(p == highest for p in precision)
    return precision != highest


def _emulating(primitive: Any, lowering: Any) -> Any:
    """A CPU lowering of ``primitive`` that rounds TF32 operands, then lowers with ``lowering``."""

    def rule(ctx: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
        if not runs_in_tf32(params["precision"], *ctx.avals_in):
            return lowering(ctx, lhs, rhs, **params)
        highest = (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)
        rounded = mlir.lower_fun(
            lambda a, b: primitive.bind(
                round_to_tf32(a), round_to_tf32(b), **{**params, "precision": highest}
            ),
            multiple_results=False,
        )
        return rounded(ctx, lhs, rhs)

    return rule


def emulate_tf32() -> None:
    """Lowers this process's float32 products below ``HIGHEST`` on the CPU in TF32 (for good)."""
    for primitive in (_lax.dot_general_p, _conv.conv_general_dilated_p):
        mlir.register_lowering(
            primitive,
            _emulating(primitive, mlir._platform_specific_lowerings["cpu"][primitive].rule),
            platform="cpu",
        )


def pytest_configure(config: Any) -> None:
    """Turns the emulation on where pytest loads this module as a plugin (``-p tests.tf32``).

    Importing the module (``--doctest-modules`` does) changes nothing.
    """
    emulate_tf32()
