"""The five-hook curriculum protocol of CurBench, as a dataclass of pure functions.

CurBench (Zhou et al., ICML 2024) writes every curriculum as five hooks that one trainer
calls at fixed points:

1. ``data_prepare(num_samples, num_classes, key) -> CurriculumState`` — once, before
   training: the curriculum's state (per-sample weights, learnable curriculum parameters,
   running statistics), all arrays of static shape.
2. ``model_prepare(state, params, num_epochs) -> CurriculumState`` — once, with the
   model's initial parameters and the run length (ScreenerNet and DDS copy the model
   into their scoring network here).
3. ``data_curriculum(state, epoch, losses) -> CurriculumState`` — once per epoch, on the
   host: sets ``state.weights`` (``[N]``, ``0`` leaves a sample out of this epoch, other
   values reweight it). ``losses`` is the current model's per-sample training loss
   ``[N]`` when ``needs_losses`` is set (SPL ranks by it), a teacher's when
   ``uses_teacher`` is set (TTCL), else ``None``. A curriculum with ``epoch_inputs`` set
   gets an :class:`EpochInputs` instead (labels, the model's and the teacher's losses and
   logits: MCL, LGL, C2F, Adaptive CL). A data curriculum may also change the inputs of
   the training batches (EfficientTrain's low-frequency cropping and augmentation) with
   the optional ``transform_inputs(inputs, state, key) -> inputs``, applied inside the
   jitted step to training batches only, its strength read from the state.
4. ``model_curriculum(state, epoch) -> dict`` — once per epoch: arguments of the model for
   this epoch (CBS's smoothing width); ``{}`` for most methods.
5. ``loss_curriculum(losses, logits, labels, indices, state, ctx) -> (loss, state)`` —
   inside the jitted train step, on the PER-SAMPLE loss ``losses [b]``: the scalar to
   differentiate with respect to the model parameters, and the curriculum state after
   this step (learned curricula such as DCL or MW-Net update their parameters here, with
   the model parameters held fixed).

Compared with the reference's ``loss_curriculum(outputs, labels, indices)`` our hook also
receives the per-sample losses, the curriculum state and a :class:`StepContext` (the
model's parameters and loss function, the batch and a held-out meta batch), and returns
the new state: JAX has no hidden mutable state, and the meta-gradient methods (LRE,
MW-Net, DDS) take their look-ahead step as a ``grad`` through an inner update of the
parameters in the context instead of a copied model.

Shapes never change between epochs: a curriculum changes weights and masks, not array
shapes, so the jitted step compiles once per run. The data curricula run on the host in
plain numpy (a data-dependent selection), only the numeric step is jitted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxlab._checks import check_integer


class CurriculumState(NamedTuple):
    """The state a curriculum carries through a run (every leaf an array).

    Attributes:
      weights: ``[N]`` per-sample weights of the current epoch (``0``: left out).
      params: learnable curriculum parameters (DCL's data parameters, MW-Net's weighting
        network), ``()`` when there are none.
      opt_state: the optax state of ``params``.
      extra: other state (running statistics, scores), a dict of arrays.
    """

    weights: Any
    params: Any = ()
    opt_state: Any = ()
    extra: Any = ()


class EpochInputs(NamedTuple):
    """What ``data_curriculum`` receives when the curriculum sets ``epoch_inputs``.

    Attributes:
      labels: ``[N]`` this run's training labels (noisy in the noise setting).
      losses: ``[N]`` the current model's per-sample training losses (``needs_losses``),
        else ``None``.
      logits: ``[N, C]`` the current model's logits on the training set (``needs_losses``),
        else ``None``.
      teacher_losses: ``[N]`` a fixed teacher's losses (``uses_teacher``), else ``None``.
      teacher_logits: ``[N, C]`` the teacher's logits (``uses_teacher``, when the task
        provides them), else ``None``.
    """

    labels: np.ndarray
    losses: np.ndarray | None = None
    logits: np.ndarray | None = None
    teacher_losses: np.ndarray | None = None
    teacher_logits: np.ndarray | None = None


class StepContext(NamedTuple):
    """What the train step tells ``loss_curriculum`` besides the batch's losses.

    Attributes:
      params: the model parameters before this step (a pytree).
      loss_fn: ``(params, inputs, labels) -> [b]`` per-sample losses of the model.
      apply_fn: ``(params, inputs) -> [b, C]`` the model's logits (scoring networks that
        copy the model use it).
      inputs: ``[b, ...]`` the batch's inputs.
      valid: ``[b]`` boolean, ``False`` at padding positions of the last batch.
      meta_inputs: ``[m, ...]`` a batch of the held-out meta set (meta-gradient methods),
        or the training batch when the curriculum uses none.
      meta_labels: ``[m]`` its labels.
      lr: the model's learning rate (the look-ahead step size).
      step: the global step (int32 scalar).
      key: a PRNG key for this step.
    """

    params: Any
    loss_fn: Callable[[Any, jax.Array, jax.Array], jax.Array]
    apply_fn: Callable[[Any, jax.Array], jax.Array]
    inputs: jax.Array
    valid: jax.Array
    meta_inputs: jax.Array
    meta_labels: jax.Array
    lr: float
    step: jax.Array
    key: jax.Array


def masked_mean(values: ArrayLike, valid: ArrayLike) -> jax.Array:
    """Mean of ``values [b]`` over the positions where ``valid [b]`` is true (0 if none)."""
    if jnp.shape(valid) != jnp.shape(values):
        raise ValueError(
            f"valid must have the shape of values {jnp.shape(values)}, got {jnp.shape(valid)}"
        )
    values, valid = jnp.asarray(values), jnp.asarray(valid, values.dtype)
    return jnp.sum(values * valid) / jnp.maximum(jnp.sum(valid), 1.0)


def check_weights(weights: ArrayLike, num_samples: int, name: str = "weights") -> np.ndarray:
    """Validates host-side curriculum weights: shape ``[num_samples]``, finite, ≥ 0, not all 0.

    Raises:
      ValueError: wrong length, negative or non-finite entries, or no sample selected.
    """
    check_integer("num_samples", num_samples, low=1)
    w = np.asarray(weights, dtype=np.float32)
    if w.shape != (num_samples,):
        raise ValueError(f"{name} must have shape ({num_samples},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite")
    if np.any(w < 0):
        raise ValueError(f"{name} must be >= 0, got min {w.min()}")
    if not np.any(w > 0):
        raise ValueError(f"{name} selects no sample (all weights are 0)")
    return w


def _data_prepare(num_samples: int, num_classes: int, key: jax.Array) -> CurriculumState:
    del num_classes, key
    return CurriculumState(weights=np.ones(num_samples, np.float32))


def _model_prepare(state: CurriculumState, params: Any, num_epochs: int) -> CurriculumState:
    del params, num_epochs
    return state


def _data_curriculum(state: CurriculumState, epoch: int, losses) -> CurriculumState:
    del epoch, losses
    return state


def _model_curriculum(state: CurriculumState, epoch: int) -> dict:
    del state, epoch
    return {}


def weighted_loss(losses, logits, labels, indices, state: CurriculumState, ctx: StepContext):
    """The default loss hook: ``mean_i w[indices_i] · ℓ_i`` over the batch's valid rows."""
    index_dtype = jnp.asarray(indices).dtype
    if jnp.shape(losses) != jnp.shape(indices) or not jnp.issubdtype(index_dtype, jnp.integer):
        raise ValueError(
            f"losses [b] and integer indices [b] must match, got "
            f"{jnp.shape(losses)}, {index_dtype} {jnp.shape(indices)}"
        )
    del logits, labels
    w = jnp.take(jnp.asarray(state.weights), indices)
    return masked_mean(w * losses, ctx.valid), state


@dataclasses.dataclass(frozen=True)
class Curriculum:
    """A curriculum: a name and the five hooks (defaults: the no-op baseline).

    Attributes:
      name: short name (``"spl"``, ``"mw_net"``).
      data_prepare, model_prepare, data_curriculum, model_curriculum, loss_curriculum:
        the hooks (see the module docstring for their signatures).
      needs_losses: ``data_curriculum`` wants the model's per-sample training losses.
      uses_teacher: ``data_curriculum`` wants a teacher's per-sample losses (the task's
        ``teacher_losses``).
      meta_fraction: fraction of the training set held out as the meta set (LRE,
        MW-Net, DDS: 0.1 in the reference); ``0`` for none.
      vision_only: the paper applies the method to images only (CBS, LGL, C2F,
        EfficientTrain); trainers of other domains refuse it.
      epoch_inputs: ``data_curriculum`` receives an :class:`EpochInputs` (labels, the
        model's losses and logits, the teacher's) instead of the bare losses.
      transform_inputs: ``(inputs [b, ...], state, key) -> inputs [b, ...]`` applied to
        each training batch inside the jitted step (same shape), or ``None``.

    Example:
      >>> from jaxlab.curriculum import baseline
      >>> c = baseline()
      >>> s = c.data_prepare(4, 2, jax.random.key(0))
      >>> s.weights.tolist()
      [1.0, 1.0, 1.0, 1.0]
    """

    name: str
    data_prepare: Callable[..., CurriculumState] = _data_prepare
    model_prepare: Callable[..., CurriculumState] = _model_prepare
    data_curriculum: Callable[..., CurriculumState] = _data_curriculum
    model_curriculum: Callable[..., dict] = _model_curriculum
    loss_curriculum: Callable[..., tuple[jax.Array, CurriculumState]] = weighted_loss
    needs_losses: bool = False
    uses_teacher: bool = False
    meta_fraction: float = 0.0
    vision_only: bool = False
    epoch_inputs: bool = False
    transform_inputs: Callable[..., jax.Array] | None = None


def baseline() -> Curriculum:
    """The no-op curriculum: every sample, weight 1, the plain mean loss.

    Example:
      >>> from jaxlab.curriculum import baseline
      >>> baseline().name
      'baseline'
    """
    return Curriculum(name="baseline")
