"""The matmul precision a kernel records in its traced program (``docs/precision.md``).

XLA:CPU multiplies float32 in full precision whatever is asked, so a dropped ``precision=``
argument changes nothing a CPU test can measure. What the GPU obeys is the precision each
``dot_general`` / ``conv_general_dilated`` records in the jaxpr; :func:`recorded_precisions`
reads it, so a test of a kernel's ``precision`` argument fails where the argument is lost.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.extend

#: The primitives whose precision a GPU obeys (TF32 unless ``HIGHEST``).
PRODUCTS = ("dot_general", "conv_general_dilated")
#: What a product traced with ``precision="highest"`` (or under
#: ``jax.default_matmul_precision("highest")``) records.
HIGHEST = (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)
#: What a product without a precision of its own records under ``"high"``.
HIGH = (jax.lax.Precision.HIGH, jax.lax.Precision.HIGH)


def _eqns(jaxpr: Any) -> Iterator[Any]:
    for eqn in jaxpr.eqns:
        yield eqn
        for param in eqn.params.values():
            for sub in param if isinstance(param, tuple | list) else (param,):
                if isinstance(sub, jax.extend.core.ClosedJaxpr):
                    yield from _eqns(sub.jaxpr)
                elif isinstance(sub, jax.extend.core.Jaxpr):
                    yield from _eqns(sub)


def recorded_precisions(fn: Callable[..., Any], *args: Any) -> list[Any]:
    """The ``precision`` of every matrix product and convolution in ``fn(*args)``'s jaxpr.

    Sub-programs (``jit``, ``scan``, ``while``, ``cond``, custom derivatives) included, in
    program order; raises if the program has no product (a test of nothing).
    """
    found = [
        eqn.params["precision"]
        for eqn in _eqns(jax.make_jaxpr(fn)(*args).jaxpr)
        if eqn.primitive.name in PRODUCTS
    ]
    if not found:
        raise AssertionError(f"{fn} traces no {' or '.join(PRODUCTS)}")
    return found


def assert_takes_precision(kernel: Callable[..., Any], *args: Any, count: int) -> None:
    """``kernel(*args, precision=...)`` passes its argument to each of its ``count`` products.

    ``precision="highest"`` wins over an ambient ``"default"`` scope; the default ``None``
    follows an ambient ``"high"`` scope (``docs/precision.md``).
    """
    with jax.default_matmul_precision("default"):
        given = recorded_precisions(functools.partial(kernel, precision="highest"), *args)
    with jax.default_matmul_precision("high"):
        ambient = recorded_precisions(kernel, *args)
    assert given == [HIGHEST] * count, given
    assert ambient == [HIGH] * count, ambient
