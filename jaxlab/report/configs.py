"""Command-line overrides of ``ml_collections.ConfigDict``s: ``--config.lr=0.1``."""

from __future__ import annotations

import ast
from collections.abc import Iterable

import ml_collections


def _leaf_keys(config: ml_collections.ConfigDict, prefix: str = "") -> list[str]:
    keys = []
    for key, value in config.items():
        if isinstance(value, ml_collections.ConfigDict):
            keys.extend(_leaf_keys(value, f"{prefix}{key}."))
        else:
            keys.append(f"{prefix}{key}")
    return keys


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def apply_overrides(
    config: ml_collections.ConfigDict, overrides: Iterable[str]
) -> ml_collections.ConfigDict:
    """Applies ``KEY=VALUE`` overrides (dotted keys) to a copy of ``config``.

    Values are Python literals (``0.1``, ``(1, 2)``, ``'adam'``) or bare strings.

    Raises:
      KeyError: an unknown key; the message lists the valid ones.
      ValueError: a malformed override or a value of the wrong type.
    """
    config = ml_collections.ConfigDict(config.to_dict(), type_safe=True)
    valid = _leaf_keys(config)
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"config override {item!r} is not KEY=VALUE")
        key, text = item.split("=", 1)
        if key not in valid:
            raise KeyError(f"unknown config key {key!r}; valid keys: {', '.join(valid)}")
        *parents, leaf = key.split(".")
        node = config
        for parent in parents:
            node = node[parent]
        value = _parse_value(text)
        old = node[leaf]
        if isinstance(old, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(old, tuple) and isinstance(value, list):
            value = tuple(value)
        try:
            node[leaf] = value
        except TypeError as error:
            raise ValueError(f"config key {key!r}: {error}") from error
    return config
