"""TTCL: SPL's selection on the teacher's losses, which the trainer passes in."""

import jax
import numpy as np

from jaxlab.curriculum import spl_weights, ttcl


def test_ttcl_selects_by_teacher_losses():
    teacher = np.array([0.5, 0.1, 2.0, 0.3, 0.9, 0.05], np.float32)
    c = ttcl(start_rate=0.2, grow_epochs=4)
    assert c.uses_teacher and not c.needs_losses
    state = c.data_prepare(6, 2, jax.random.key(0))
    for epoch in range(4):
        rate = min(1.0, 0.2 + 0.8 * (epoch + 1) / 4)
        w = c.data_curriculum(state, epoch, teacher).weights
        np.testing.assert_array_equal(w, spl_weights(teacher, rate))
    assert c.data_curriculum(state, 0, teacher).weights.tolist() == [0, 1, 0, 1, 0, 1]
