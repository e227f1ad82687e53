"""The shared CurBench loop: settings, scaled schedules, teacher inputs, resumable runs."""

import flax.linen as nn
import jax
import numpy as np
import pytest

from jaxlab.curriculum import EpochInputs
from jaxlab.train.curbench import noisy_or_imbalanced, run_curbench, scaled_curriculum
from jaxlab.train.curriculum import CurriculumData


def test_scaled_schedules_match_the_reference_at_200_epochs():
    c = scaled_curriculum("lgl", 200, 1e-3)
    s = c.data_prepare(10, 10, jax.random.key(0))
    labels = np.arange(10)
    counts = []
    for e in (0, 19, 20, 40):
        s = c.data_curriculum(s, e, EpochInputs(labels))
        counts.append(int(s.extra["classes"].sum()))
    assert counts == [4, 4, 7, 10]
    short = scaled_curriculum("lgl", 10, 1e-3)  # 20 of 200 epochs -> 1 of 10
    s = short.data_prepare(10, 10, jax.random.key(0))
    assert [int(short.data_curriculum(s, e, EpochInputs(labels)).extra["classes"].sum())
            for e in (0, 1, 2)] == [4, 7, 10]


def test_settings():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(500, 3)), rng.integers(0, 5, 500)
    data = CurriculumData(x, y, x[:10], y[:10], x[:10], y[:10], 5)
    noisy = noisy_or_imbalanced(data, "noise", [0, 1], noise_rate=0.4)
    assert noisy.train_labels.shape == (2, 500)
    assert 0.3 < np.mean(noisy.train_labels[0] != y) < 0.5
    assert not np.array_equal(noisy.train_labels[0], noisy.train_labels[1])
    imb = noisy_or_imbalanced(data, "imbalance", [0], imbalance_ratio=20.0)
    counts = np.bincount(imb.train_labels, minlength=5)
    assert len(imb.train_inputs) == len(imb.train_labels) and counts[0] > 3 * counts[4]
    with pytest.raises(ValueError, match="setting"):
        noisy_or_imbalanced(data, "shift", [0])


class _Lin(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(3)(x)


@pytest.mark.slow
def test_runs_resume_and_teacher(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 1)
    data = CurriculumData(x[:60], y[:60], x[60:], y[60:], x[60:], y[60:], 3)
    m = _Lin()
    init = lambda k: m.init(k, x[:1])["params"]
    apply = lambda p, z, a: m.apply({"params": p}, z)
    calls = []

    def teacher():
        from jaxlab.train.curbench import train_teacher
        calls.append(1)
        return train_teacher(data, init, apply, 0, 1, 20, 1e-2)

    curricula = {"baseline": scaled_curriculum("baseline", 2, 1e-2),
                 "ttcl": scaled_curriculum("ttcl", 2, 1e-2)}
    kw = dict(seeds=[0], num_epochs=2, batch_size=20, lr=1e-2, workdir=str(tmp_path),
              teacher=teacher, chunk_steps=2, verbose=False)
    runs = run_curbench(curricula, ["standard", "noise"],
                        lambda s: noisy_or_imbalanced(data, s, [0]), init, apply, **kw)
    assert set(runs) == {"standard", "noise"} and set(runs["noise"]) == {"baseline", "ttcl"}
    assert len(calls) == 1
    again = run_curbench(curricula, ["standard", "noise"], None, init, apply, **kw)
    assert again == runs and len(calls) == 1  # every run read back from the workdir
    assert (tmp_path / "checkpoints" / "noise__ttcl").is_dir()
