"""Small pytree helpers shared by the diffusion losses and samplers."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

PyTree = Any


def expand_to(coef: jax.Array, leaf: jax.Array) -> jax.Array:
    """Appends singleton axes so ``coef`` ([...] leading shape) broadcasts against ``leaf``."""
    return jnp.reshape(coef, coef.shape + (1,) * (leaf.ndim - coef.ndim))


def apply_mask(tree: PyTree, mask: jax.Array | None) -> PyTree:
    """Zeroes the padded entries: ``mask`` is the leading shape of every leaf (1 = real)."""
    if mask is None:
        return tree
    return jax.tree.map(lambda x: x * expand_to(mask, x).astype(x.dtype), tree)


def check_mask(
    tree: PyTree, mask: jax.typing.ArrayLike | None, name: str = "mask"
) -> jax.Array | None:
    """Validates that ``mask`` is a prefix of every leaf's shape; returns it as an array."""
    if mask is None:
        return None
    mask = jnp.asarray(mask)
    for leaf in jax.tree.leaves(tree):
        if leaf.shape[: mask.ndim] != mask.shape:
            raise ValueError(
                f"{name} of shape {mask.shape} must be a prefix of every leaf's shape; "
                f"got a leaf of shape {leaf.shape}"
            )
    return mask


def check_sampling(schedule: Any, key: Any, fn: Any, fn_name: str) -> None:
    """The arguments every DDPM kernel shares: a ``Schedule``, a PRNG key, a callable."""
    from jaxlab._checks import check_key
    from jaxlab.diffusion.schedules import Schedule

    if not isinstance(schedule, Schedule):
        raise ValueError(
            f"schedule must be a Schedule (e.g. cosine_beta_schedule(T)), got "
            f"{type(schedule).__name__}"
        )
    check_key("key", key)
    if not callable(fn):
        raise ValueError(f"{fn_name} must be callable, got {type(fn).__name__}")


def normal_like(key: jax.Array, tree: PyTree) -> PyTree:
    """Standard normal noise with the structure, shapes and dtypes of ``tree``."""
    leaves, treedef = jax.tree.flatten(tree)
    keys = jax.random.split(key, len(leaves))
    noise = [jax.random.normal(k, x.shape, x.dtype) for k, x in zip(keys, leaves, strict=True)]
    return jax.tree.unflatten(treedef, noise)
