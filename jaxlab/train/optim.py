"""Optimisers from configs and the one supervised step every experiment trains with.

An experiment names its optimiser in its config, never in ``train.py``::

    config.optimizer = ml_collections.ConfigDict(
        {"name": "adam", "learning_rate": 2e-3, "clip_global_norm": None})
    tx = make_optimizer(config.optimizer)
    step = optimizer_step(loss_fn, tx)             # (carry, batch) -> (carry, loss)
    (params, _), losses = scan_run(step, (params, tx.init(params)), batches)

``name`` is any optax optimiser (``"adam"``, ``"adamw"``, ``"sgd"``, ...) or an
``optax.contrib`` one written ``"contrib.prodigy"``; every other key but
``clip_global_norm`` is passed to it as a keyword. ``learning_rate`` may itself be a
schedule entry: ``{"name": "warmup_cosine_decay_schedule", "init_value": 0.0, ...}``
(any ``optax`` schedule, its keywords beside ``name``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import optax

Params = Any
Carry = tuple[Params, optax.OptState]

_EXTRA_KEYS = ("name", "clip_global_norm")


def _resolve(name: str, kind: str) -> Callable[..., Any]:
    module, attr = (
        (optax.contrib, name[len("contrib.") :]) if name.startswith("contrib.") else (optax, name)
    )
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"unknown optax {kind} {name!r}")
    return fn


def _to_dict(spec: Mapping[str, Any], what: str) -> dict[str, Any]:
    spec = dict(spec.to_dict() if hasattr(spec, "to_dict") else spec)
    if not isinstance(spec.get("name"), str):
        raise ValueError(f"{what} needs a 'name' (an optax function name), got {spec}")
    return spec


def make_schedule(spec: float | Mapping[str, Any]) -> float | optax.Schedule:
    """A constant learning rate (a positive float) or an optax schedule from its config entry.

    Raises:
      ValueError: a rate <= 0 or an unknown schedule name.
    """
    if not isinstance(spec, Mapping) and not hasattr(spec, "to_dict"):
        rate = float(spec)
        if not rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {spec}")
        return rate
    kwargs = _to_dict(spec, "a learning-rate schedule")  # type: ignore[arg-type]
    return _resolve(kwargs.pop("name"), "schedule")(**kwargs)


def make_optimizer(spec: Mapping[str, Any]) -> optax.GradientTransformation:
    """The optax optimiser a config entry names, with optional global-norm clipping.

    Args:
      spec: a mapping (or ``ConfigDict``) with ``name`` (an optax optimiser, or
        ``"contrib.<name>"``), ``learning_rate`` (a float > 0 or a schedule entry, see
        :func:`make_schedule`), optionally ``clip_global_norm`` (a float > 0 or ``None``:
        ``optax.clip_by_global_norm`` before the optimiser), and any other keyword of the
        optimiser (``weight_decay``, ``b1``, ``momentum``, ...).

    Raises:
      ValueError: no name, an unknown name, a learning rate <= 0, clipping <= 0, or a
        keyword the optimiser does not take.
    """
    kwargs = _to_dict(spec, "an optimiser")
    optimizer = _resolve(kwargs.pop("name"), "optimiser")
    clip = kwargs.pop("clip_global_norm", None)
    if "learning_rate" in kwargs:
        kwargs["learning_rate"] = make_schedule(kwargs["learning_rate"])
    try:
        tx = optimizer(**kwargs)
    except TypeError as err:
        raise ValueError(f"optimiser {spec['name']!r}: {err}") from None
    if clip is None:
        return tx
    if not float(clip) > 0:
        raise ValueError(f"clip_global_norm must be > 0 or None, got {clip}")
    return optax.chain(optax.clip_by_global_norm(float(clip)), tx)


def optimizer_step(
    loss_fn: Callable[[Params, Any], Any],
    optimizer: optax.GradientTransformation,
    *,
    has_aux: bool = False,
) -> Callable[[Carry, Any], tuple[Carry, Any]]:
    """One optimiser step on ``loss_fn(params, batch)``, in :func:`scan_run`'s step form.

    ``step((params, opt_state), batch) -> ((params', opt_state'), out)`` with
    ``out = loss`` (or ``(loss, aux)`` when ``has_aux``), ``g = ∇ loss(params, batch)``,
    ``(u, opt_state') = optimizer.update(g, opt_state, params)`` and
    ``params' = params + u``. Pure: use it under ``jit``, ``scan`` and ``vmap`` (a batch of
    runs vmaps the step over a leading run axis of the carry).
    """
    grad_fn = jax.value_and_grad(loss_fn, has_aux=has_aux)

    def step(carry: Carry, batch: Any) -> tuple[Carry, Any]:
        params, opt_state = carry
        out, grads = grad_fn(params, batch)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), out

    return step
