"""Data parameters (DCL): a learnable temperature per sample and per class."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import optax
from jax.typing import ArrayLike

from jaxlab._checks import check_labels, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState, masked_mean

_CLAMP = math.log(20.0)


def data_parameter_loss(logits: ArrayLike, labels: ArrayLike, log_sigma: ArrayLike) -> jax.Array:
    """Per-sample cross-entropy of temperature-scaled logits ``ℓ_i = CE(z_i / σ_i, y_i)``.

    Saxena et al. scale the logits ``z`` (``logits``) of sample ``i`` by its temperature
    ``σ_i = exp(log_sigma_i)`` (or the sum of a sample and a class temperature); a large
    ``σ_i`` flattens the softmax and lowers the sample's gradient (Eq. (2) of the paper).

    Args:
      logits: ``[b, C]``.
      labels: ``[b]`` integer labels.
      log_sigma: ``[b]`` log-temperatures.

    Returns:
      ``[b]`` per-sample losses.

    Example:
      >>> from jaxlab.curriculum import data_parameter_loss
      >>> z = jnp.array([[2.0, 0.0]])
      >>> float(data_parameter_loss(z, jnp.array([0]), jnp.zeros(1))[0]) < 0.2
      True

    References:
      Saxena, Tuzel, DeCoste, Data Parameters: A New Family of Parameters for Learning a
      Differentiable Curriculum, NeurIPS 2019.
    """
    if jnp.ndim(logits) != 2:
        raise ValueError(f"logits must be [b, C], got shape {jnp.shape(logits)}")
    check_labels("labels", labels, jnp.shape(logits)[-1])
    logits, log_sigma = jnp.asarray(logits), jnp.asarray(log_sigma)
    if logits.ndim != 2 or log_sigma.shape != logits.shape[:1]:
        raise ValueError(
            f"logits must be [b, C] and log_sigma [b], got {logits.shape}, {log_sigma.shape}"
        )
    scaled = logits / jnp.exp(log_sigma)[:, None]
    return optax.softmax_cross_entropy_with_integer_labels(scaled, jnp.asarray(labels))


def dcl(
    init_data_param: float = 1.0,
    lr_data_param: float = 0.1,
    wd_data_param: float = 0.0,
    init_class_param: float = 0.0,
    lr_class_param: float = 0.1,
    wd_class_param: float = 0.0,
    momentum: float = 0.9,
) -> Curriculum:
    """Data parameters as a curriculum (CurBench's DCL; defaults: the reference's).

    The model is trained on ``mean_i CE(z_i/σ_i, y_i)`` with ``σ_i = exp(d_i) + exp(c_{y_i})``
    (only the terms whose ``init_*`` is non-zero); the log-temperatures ``d`` (per sample)
    and ``c`` (per class) are learned by SGD with momentum on the same loss plus
    ``½·wd·Σ d²`` (sparse: only the batch's rows move), clipped to ``[log 1/20, log 20]``.

    Example:
      >>> from jaxlab.curriculum import dcl
      >>> dcl().name
      'dcl'
    """
    for name, value in (("lr_data_param", lr_data_param), ("lr_class_param", lr_class_param)):
        check_range(name, value, 0.0)
    for name, value in (("wd_data_param", wd_data_param), ("wd_class_param", wd_class_param)):
        check_range(name, value, 0.0)
    check_range("momentum", momentum, 0.0, 1.0, high_open=True)
    if not (init_data_param or init_class_param):
        return Curriculum(name="dcl")
    if init_data_param < 0 or init_class_param < 0:
        raise ValueError("init_data_param and init_class_param must be >= 0")

    def data_prepare(num_samples, num_classes, key):
        del key
        d = jnp.full(num_samples, math.log(init_data_param) if init_data_param else 0.0)
        c = jnp.full(num_classes, math.log(init_class_param) if init_class_param else 0.0)
        params = {"data": d, "class": c}
        return CurriculumState(
            weights=jnp.ones(num_samples, jnp.float32),
            params=params,
            opt_state=jax.tree.map(jnp.zeros_like, params),
        )

    def sigma_of(d_rows, c_rows):
        sigma = 0.0
        if init_data_param:
            sigma = sigma + jnp.exp(d_rows)
        if init_class_param:
            sigma = sigma + jnp.exp(c_rows)
        return sigma

    def curriculum_objective(rows, logits, labels, valid):
        sigma = sigma_of(rows["data"], rows["class"])
        ce = data_parameter_loss(logits, labels, jnp.log(sigma))
        reg = 0.0
        if init_data_param:
            reg = reg + 0.5 * wd_data_param * jnp.sum(valid * rows["data"] ** 2)
        if init_class_param:
            reg = reg + 0.5 * wd_class_param * jnp.sum(valid * rows["class"] ** 2)
        return masked_mean(ce, valid) + reg

    def loss_curriculum(losses, logits, labels, indices, state, ctx):
        del losses
        rows = {"data": state.params["data"][indices], "class": state.params["class"][labels]}
        loss = curriculum_objective(jax.lax.stop_gradient(rows), logits, labels, ctx.valid)
        # The temperatures' SGD step, with the model's logits held fixed (sparse momentum:
        # only rows of this batch move, as the reference's SparseSGD).
        g = jax.grad(curriculum_objective)(rows, jax.lax.stop_gradient(logits), labels, ctx.valid)
        params, moment = dict(state.params), dict(state.opt_state)
        for name, idx, lr in (("data", indices, lr_data_param), ("class", labels, lr_class_param)):
            # Scatter the batch's gradient (several rows may share a class).
            full_g = jnp.zeros_like(params[name]).at[idx].add(g[name])
            touched = jnp.zeros_like(params[name]).at[idx].add(ctx.valid.astype(jnp.float32))
            touched = touched > 0
            m = jnp.where(touched, momentum * moment[name] + full_g, moment[name])
            params[name] = jnp.where(
                touched, jnp.clip(params[name] - lr * m, -_CLAMP, _CLAMP), params[name]
            )
            moment[name] = m
        return loss, state._replace(params=params, opt_state=moment)

    return Curriculum(name="dcl", data_prepare=data_prepare, loss_curriculum=loss_curriculum)
