"""Input checks shared by the public graph kernels (one convention for the package).

* Arrays: wrong rank or shape → ``ValueError`` naming the argument. Integer and boolean
  features / adjacencies are promoted to float32 (never truncated); complex ones are
  refused.
* Static hyper-parameters (sizes, budgets, rates, λ, α, ε, t, K): out of range →
  ``ValueError`` naming the argument. A hyper-parameter that is traced under ``jit`` /
  ``vmap`` cannot be read and is NOT checked (each kernel's docstring says which ones may
  be traced); out-of-range traced values give a number, not an error.
* PRNG arguments are named ``key`` and must be a JAX key (``jax.random.key(seed)``).
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike


def is_concrete(value: object) -> bool:
    """False for a tracer (a value under ``jit``/``vmap``/``grad``), True otherwise."""
    return not isinstance(value, jax.core.Tracer)


def check_float(name: str, x: ArrayLike, ndim: int | None = None) -> jax.Array:
    """``x`` as a float array: ints and bools promoted to float32, complex refused."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_:
        x = x.astype(jnp.float32)
    elif not jnp.issubdtype(x.dtype, jnp.floating):
        raise ValueError(f"{name} must be a real (float or int) array, got dtype {x.dtype}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must have rank {ndim}, got shape {x.shape}")
    return x


def check_square(name: str, adj: ArrayLike) -> None:
    """``adj`` must be a square ``[n, n]`` matrix."""
    shape = np.shape(adj)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [n, n] matrix, got shape {shape}")


def check_int(name: str, value: object, minimum: int) -> None:
    """``value`` must be a Python/numpy int (not a bool) with ``value ≥ minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def check_range(name: str, value: object, low: float | None, high: float | None, *,
                low_open: bool = False, high_open: bool = False) -> None:
    """A concrete real ``value`` must lie in the interval; traced values pass unchecked."""
    if not is_concrete(value):
        return
    if np.ndim(value) != 0 or not isinstance(np.asarray(value).item(), numbers.Real):
        raise ValueError(f"{name} must be a real scalar, got {value!r}")
    v = float(np.asarray(value))
    ok = not np.isnan(v)
    if low is not None:
        ok &= v > low if low_open else v >= low
    if high is not None:
        ok &= v < high if high_open else v <= high
    if not ok:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}" \
                   f"{')' if high_open or high is None else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")


def check_key(name: str, key: object) -> None:
    """``key`` must be a JAX PRNG key (typed ``jax.random.key`` or a raw ``uint32[2]``)."""
    dtype = getattr(key, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return
    if dtype == jnp.uint32 and np.shape(key)[-1:] == (2,):
        return
    raise ValueError(f"{name} must be a JAX PRNG key (jax.random.key(seed)), got {key!r}")
