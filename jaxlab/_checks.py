"""Input checks shared by the kernel packages (the "Bad input" convention of DESIGN.md).

Static arguments (shapes, ranks, dtypes, hyper-parameters known at trace time) are refused
with a ``ValueError`` that names the argument and what it got. A hyper-parameter that is a
tracer under ``jit`` cannot be inspected: these helpers then let it through unchecked (no
``TracerBoolConversionError``), and the kernel's docstring says so. Integers are promoted to
the default float dtype, never truncated. PRNG arguments are named ``key`` and must be JAX
keys (:func:`check_key`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

__all__ = [
    "as_float",
    "broadcast_as",
    "check_key",
    "check_callable",
    "check_integer",
    "check_type",
    "check_widths",
    "check_labels",
    "check_nonempty",
    "check_range",
    "check_rank",
    "check_square",
    "has_nan",
    "is_traced",
    "numpy_seed",
]


def is_traced(x: Any) -> bool:
    """True when ``x`` (or a leaf of it) is a JAX tracer, i.e. has no concrete value here."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(x))


def check_range(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Any:
    """Refuses a concrete scalar (or every entry of an array) outside ``[low, high]``.

    ``low_open`` / ``high_open`` make the bound strict. NaN is always refused. A traced
    ``value`` is returned unchecked.
    """
    if is_traced(value):
        return value
    arr = np.asarray(value)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number) and arr.dtype != bool:
        raise ValueError(f"{name} must be a number, got {value!r}")
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    interval = f"{left}{'-inf' if low is None else low}, {'inf' if high is None else high}{right}"
    bad = np.isnan(arr.astype(np.float64))
    if low is not None:
        bad |= arr <= low if low_open else arr < low
    if high is not None:
        bad |= arr >= high if high_open else arr > high
    if np.any(bad):
        shown = value if arr.ndim == 0 else arr[bad].ravel()[:3]
        raise ValueError(f"{name} must lie in {interval}, got {shown!r}")
    return value


def check_callable(name: str, fn: Any) -> Any:
    """Refuses a ``fn`` that is not callable (a model's ``apply``, a loss, a policy)."""
    if not callable(fn):
        raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    return fn


def check_type(name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    """Refuses a ``value`` that is not an instance of ``kind`` (a state NamedTuple, a module)."""
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ValueError(f"{name} must be a {want}, got {type(value).__name__}")
    return value


def check_integer(name: str, value: Any, low: int | None = None) -> int:
    """Refuses a non-integer (bool and float included) or one below ``low``; returns int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def check_widths(name: str, widths: Any) -> None:
    """Refuses a sequence of layer widths with an entry that is not an int >= 1."""
    for w in widths:
        check_integer(name, w, low=1)


def as_float(name: str, x: ArrayLike, ndim: int | tuple[int, ...] | None = None) -> jax.Array:
    """``x`` as a floating array: ints and bools promoted to the default float, complex refused.

    ``ndim`` (an int or a tuple of allowed ranks) checks the rank.
    """
    try:
        arr = jnp.asarray(x)
    except (TypeError, ValueError) as e:  # jnp.asarray(None) raises a ValueError
        raise ValueError(f"{name} must be an array of numbers, got {type(x).__name__}") from e
    if jnp.issubdtype(arr.dtype, jnp.complexfloating) or not (
        jnp.issubdtype(arr.dtype, jnp.number) or arr.dtype == jnp.bool_
    ):
        raise ValueError(f"{name} must be real-valued, got dtype {arr.dtype}")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    if ndim is not None:
        check_rank(name, arr, ndim)
    return arr


def check_rank(name: str, x: Any, ndim: int | tuple[int, ...]) -> None:
    """Refuses ``x`` whose rank is not ``ndim`` (or not one of a tuple of ranks)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    got = np.ndim(x)
    if got not in allowed:
        want = " or ".join(str(a) for a in allowed)
        raise ValueError(f"{name} must have rank {want}, got shape {np.shape(x)}")


def check_square(name: str, x: Any) -> None:
    """Refuses ``x`` that is not a square ``[n, n]`` matrix (an adjacency)."""
    shape = np.shape(x)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [n, n] matrix, got shape {shape}")


def check_nonempty(name: str, x: Any, axis: int | None = None) -> None:
    """Refuses ``x`` with no entries (along ``axis`` when given)."""
    size = np.size(x) if axis is None else np.shape(x)[axis]
    if size == 0:
        raise ValueError(f"{name} must not be empty, got shape {np.shape(x)}")


def check_labels(name: str, labels: ArrayLike, num_classes: int) -> jax.Array:
    """Integer labels in ``[0, num_classes)``; floats refused, the range checked if concrete."""
    check_integer("num_classes", num_classes, low=1)
    arr = jnp.asarray(labels)
    if not jnp.issubdtype(arr.dtype, jnp.integer):
        raise ValueError(f"{name} must be integer class labels, got dtype {arr.dtype}")
    if not is_traced(arr) and arr.size:
        host = np.asarray(arr)  # numpy: jnp reductions would be traced inside a jit
        if host.min() < 0 or host.max() >= num_classes:
            raise ValueError(
                f"{name} must lie in [0, {num_classes}), got values in [{host.min()}, {host.max()}]"
            )
    return arr


def broadcast_as(name: str, x: ArrayLike, shape: tuple[int, ...], dtype: Any = None) -> jax.Array:
    """``x`` broadcast to ``shape`` (optionally cast to ``dtype``); a ValueError naming
    ``name`` when the shapes do not broadcast."""
    arr = jnp.asarray(x) if dtype is None else jnp.asarray(x, dtype)
    try:
        return jnp.broadcast_to(arr, shape)
    except ValueError as e:
        raise ValueError(f"{name} of shape {arr.shape} does not broadcast to {shape}") from e


def has_nan(x: Any) -> bool:
    """True when a concrete ``x`` holds NaN (False when traced: the kernel yields NaN then)."""
    if is_traced(x):
        return False
    arr = np.asarray(x)
    return bool(np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any())


def check_key(name: str, key: Any) -> jax.Array:
    """Refuses anything but a JAX PRNG key (typed ``jax.random.key`` or a raw ``uint32[2]``)."""
    if isinstance(key, jax.Array) and jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    raw = isinstance(key, (jax.Array, np.ndarray)) and key.dtype == np.uint32
    if raw and key.shape[-1:] == (2,):
        return key
    raise ValueError(f"{name} must be a jax.random.key, got {type(key).__name__} {key!r:.40}")


def numpy_seed(name: str, key: Any) -> int:
    """The integer a concrete key was made from: ``numpy_seed(jax.random.key(s)) == s``.

    Host-side numpy kernels seed their generators with it, so a key reproduces the stream
    of the integer seed it is made from.
    """
    key = check_key(name, key)
    if is_traced(key):
        raise ValueError(f"{name} must be concrete: this kernel runs on the host, not under jit")
    typed = jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    data = np.asarray(jax.random.key_data(key) if typed else key).ravel()
    return (int(data[0]) << 32) | int(data[-1])
