"""Transfer-teacher curriculum (TTCL): SPL whose difficulty comes from a fixed teacher."""

from __future__ import annotations

import dataclasses

from jaxlab.curriculum.base import Curriculum
from jaxlab.curriculum.spl import spl


def ttcl(
    start_rate: float = 0.2,
    grow_epochs: int = 15,
    grow_fn: str = "linear",
    weighting: str = "hard",
    p: int = 2,
    t: float = 2.0,
) -> Curriculum:
    """Transfer-teacher curriculum: SPL's pacing and weights on a teacher's losses.

    The difficulty of each training sample is its loss under a teacher network trained
    beforehand (the reference loads a pre-trained teacher; our experiments train one on a
    held-out clean split) — computed once, so the ordering does not change during the
    run. The trainer passes the task's ``teacher_losses`` to ``data_curriculum``.

    Example:
      >>> from jaxlab.curriculum import ttcl
      >>> c = ttcl(start_rate=0.25, grow_epochs=4)
      >>> s = c.data_prepare(4, 2, jax.random.key(0))
      >>> c.data_curriculum(s, 0, np.array([0.3, 0.1, 0.9, 0.5])).weights.tolist()
      [1.0, 1.0, 0.0, 0.0]

    References:
      Weinshall, Cohen, Amir, Curriculum Learning by Transfer Learning: Theory and
      Experiments with Deep Networks, ICML 2018.
    """
    base = spl(start_rate, grow_epochs, grow_fn, weighting, p, t)
    return dataclasses.replace(base, name="ttcl", needs_losses=False, uses_teacher=True)
