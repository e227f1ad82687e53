"""Curriculum by smoothing (CBS): Gaussian-blurred feature maps, the blur annealed."""

from __future__ import annotations

from jaxlab._checks import check_integer, check_range
from jaxlab.curriculum.base import Curriculum, CurriculumState


def cbs_sigma(
    epoch: int, start_std: float = 1.0, grow_factor: float = 0.9, grow_interval: int = 5
) -> float:
    """The smoothing width at ``epoch`` (from 0): ``σ_e = σ₀ · γ^{⌊e / interval⌋}``.

    Example:
      >>> from jaxlab.curriculum.cbs import cbs_sigma
      >>> round(cbs_sigma(10, 1.0, 0.5, 5), 3)
      0.25
    """
    check_integer("epoch", epoch, low=0)
    check_range("start_std", start_std, 0.0, low_open=True)
    check_range("grow_factor", grow_factor, 0.0, 1.0, low_open=True)
    check_integer("grow_interval", grow_interval, low=1)
    return start_std * grow_factor ** (epoch // grow_interval)


def cbs(start_std: float = 1.0, grow_factor: float = 0.9, grow_interval: int = 5) -> Curriculum:
    """CBS as a model curriculum: ``model_curriculum`` returns ``{"sigma": σ_e}``.

    The model must smooth every conv layer's output with a Gaussian of width ``sigma``
    (``jaxlab.nn.lenet.LeNet`` does, through ``gaussian_blur``); σ is an array argument
    of the step, so annealing it does not recompile. Vision-only, as in CurBench.
    Defaults: the reference's (kernel 3, σ₀ = 1, ×0.9 every 5 epochs).

    Example:
      >>> from jaxlab.curriculum import cbs
      >>> c = cbs()
      >>> s = c.data_prepare(2, 2, jax.random.key(0))
      >>> c.model_curriculum(s, 5)
      {'sigma': 0.9}

    References:
      Sinha, Garg, Larochelle, Curriculum By Smoothing, NeurIPS 2020.
    """
    cbs_sigma(0, start_std, grow_factor, grow_interval)

    def model_curriculum(state: CurriculumState, epoch: int) -> dict:
        del state
        return {"sigma": cbs_sigma(epoch, start_std, grow_factor, grow_interval)}

    return Curriculum(name="cbs", model_curriculum=model_curriculum, vision_only=True)
