"""Aggregators by name: ``make_aggregator("cwtm", "ctma", m, f)`` → ``agg(x, key)``."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax

from jaxlab.robust import aggregators, meta

BASES = ("mean", "cwmed", "cwtm", "gm", "krum")
METAS = ("plain", "nnm", "bucketing", "ctma")

KeyedAggregator = Callable[[jax.Array, jax.Array], jax.Array]


def base_aggregator(name: str, num_byzantine: int, gm_iters: int = 3, gm_smoothing: float = 0.1):
    """The base rule ``name`` ∈ BASES as a one-argument callable ``[m, d] -> [d]``."""
    rules = {
        "mean": aggregators.mean,
        "cwmed": aggregators.coordinate_median,
        "cwtm": functools.partial(aggregators.trimmed_mean, num_byzantine=num_byzantine),
        "gm": functools.partial(
            aggregators.geometric_median, num_iters=gm_iters, smoothing=gm_smoothing
        ),
        "krum": functools.partial(aggregators.krum, num_byzantine=num_byzantine),
    }
    if name not in rules:
        raise ValueError(f"unknown base aggregator {name!r}; valid: {list(rules)}")
    return rules[name]


def default_bucket_size(num_workers: int, num_byzantine: int) -> int:
    """``s = ⌊m / (2f)⌋`` (at least 1), the reference code's choice (1 at m = 17, f = 8)."""
    return max(1, num_workers // (2 * num_byzantine)) if num_byzantine else 1


def make_aggregator(
    base: str,
    meta_name: str,
    num_workers: int,
    num_byzantine: int,
    *,
    bucket_size: int | None = None,
    gm_iters: int = 3,
    gm_smoothing: float = 0.1,
) -> KeyedAggregator:
    """``meta_name`` ∈ METAS wrapped around the base rule ``base`` ∈ BASES.

    Returns ``agg(x, key)``: the key is used by bucketing only. With bucketing the base
    sees ``⌈m / s⌉`` bucket means and tolerates ``min(f, ⌊(⌈m/s⌉ − 1) / 2⌋)`` bad ones.
    """
    if meta_name not in METAS:
        raise ValueError(f"unknown meta-aggregator {meta_name!r}; valid: {list(METAS)}")
    f = num_byzantine
    if meta_name == "bucketing":
        s = default_bucket_size(num_workers, f) if bucket_size is None else bucket_size
        num_buckets = math.ceil(num_workers / s)
        inner = base_aggregator(base, min(f, (num_buckets - 1) // 2), gm_iters, gm_smoothing)
        return lambda x, key: meta.bucketing(x, s, inner, key)
    rule = base_aggregator(base, f, gm_iters, gm_smoothing)
    if meta_name == "plain":
        return lambda x, key: rule(x)
    if meta_name == "nnm":
        return lambda x, key: meta.nnm(x, f, rule)
    return lambda x, key: meta.ctma(x, f, rule)
