"""CurBench's benchmark over the curriculum trainer: settings, scaled schedules, teacher
inputs, resumable runs, the cost timing, the config-driven benchmark."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.curriculum import EpochInputs
from jaxlab.trainers.curriculum import (
    CurriculumData,
    CurriculumTrainer,
    benchmark_setting,
    epoch_cost_ratios,
    run_benchmark_grid,
    scaled_curriculum,
    train_teacher,
)

# The reference's schedules (CurBench's defaults), in epochs of its 200-epoch runs.
REFERENCE_SCHEDULES = {
    "cbs": {"grow_interval": 5},
    "dihcl": {"warm_epochs": 50},
    "mcl": {"schedule_epochs": 20, "warm_epochs": 5},
    "lgl": {"grow_interval": 20},
    "adaptive_cl": {"pace_r": 15, "inv": 20},
}

_REF = (REFERENCE_SCHEDULES, 200)  # the reference's schedules, for 200-epoch runs


def _adam(lr):
    """The optimiser entry of a config (``jaxlab.train.make_optimizer``)."""
    return {"name": "adam", "learning_rate": lr}


def test_scaled_schedules_match_the_reference_at_200_epochs():
    c = scaled_curriculum("lgl", 200, 1e-3, 0.2, 0.5, *_REF)
    s = c.data_prepare(10, 10, jax.random.key(0))
    labels = np.arange(10)
    counts = []
    for e in (0, 19, 20, 40):
        s = c.data_curriculum(s, e, EpochInputs(labels))
        counts.append(int(s.extra["classes"].sum()))
    assert counts == [4, 4, 7, 10]
    short = scaled_curriculum("lgl", 10, 1e-3, 0.2, 0.5, *_REF)  # 20 of 200 epochs -> 1 of 10
    s = short.data_prepare(10, 10, jax.random.key(0))
    assert [
        int(short.data_curriculum(s, e, EpochInputs(labels)).extra["classes"].sum())
        for e in (0, 1, 2)
    ] == [4, 7, 10]


def test_settings():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(500, 3)), rng.integers(0, 5, 500)
    data = CurriculumData(x, y, x[:10], y[:10], x[:10], y[:10], 5)
    noisy = benchmark_setting(data, "noise", [0, 1], noise_rate=0.4)
    assert noisy.train_labels.shape == (2, 500)
    assert 0.3 < np.mean(noisy.train_labels[0] != y) < 0.5
    assert not np.array_equal(noisy.train_labels[0], noisy.train_labels[1])
    imb = benchmark_setting(data, "imbalance", [0], imbalance_ratio=20.0)
    counts = np.bincount(imb.train_labels, minlength=5)
    assert len(imb.train_inputs) == len(imb.train_labels) and counts[0] > 3 * counts[4]
    with pytest.raises(ValueError, match="setting"):
        benchmark_setting(data, "shift", [0])
    with pytest.raises(ValueError, match="noise_rate"):  # no silent default rate
        benchmark_setting(data, "noise", [0])


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
        calls.append(1)
        return train_teacher(data, init, apply, 0, 1, 20, _adam(1e-2), 500, "map")

    curricula = {
        "baseline": scaled_curriculum("baseline", 2, 1e-2, 0.2, 0.5, *_REF),
        "ttcl": scaled_curriculum("ttcl", 2, 1e-2, 0.2, 0.5, *_REF),
    }
    kw = dict(
        seeds=[0],
        num_epochs=2,
        batch_size=20,
        optimizer=_adam(1e-2),
        workdir=str(tmp_path),
        seed_batching="map",
        eval_batch_size=500,
        teacher=teacher,
        chunk_steps=2,
        verbose=False,
    )
    runs = run_benchmark_grid(
        curricula,
        ["standard", "noise"],
        lambda s: benchmark_setting(data, s, [0], noise_rate=0.4),
        init,
        apply,
        **kw,
    )
    assert set(runs) == {"standard", "noise"} and set(runs["noise"]) == {"baseline", "ttcl"}
    assert len(calls) == 1
    unused = lambda s: pytest.fail("a finished run is read back, its data never made")  # noqa: E731
    again = run_benchmark_grid(curricula, ["standard", "noise"], unused, init, apply, **kw)
    assert again == runs and len(calls) == 1  # every run read back from the workdir
    [checkpoints] = (tmp_path / "checkpoints").glob("noise__ttcl-*")
    assert (tmp_path / "runs" / f"{checkpoints.name}.json").is_file()
    # Another number of epochs is another run: nothing of the first is read back.
    made = []
    longer = run_benchmark_grid(
        {"baseline": curricula["baseline"]},
        ["standard"],
        lambda s: made.append(s) or benchmark_setting(data, s, [0]),
        init,
        apply,
        **{**kw, "num_epochs": 3},
    )
    assert made == ["standard"] and longer["standard"] != runs["standard"]


def test_epoch_cost_ratios_are_per_seed_and_see_extra_work():
    """A model whose forward pass adds 200 [64, 64] matmuls per batch costs clearly more
    than the bare linear model; one ratio per seed, none for the baseline."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 64)).astype(np.float32)
    y = rng.integers(0, 3, 400).astype(np.int32)
    data = CurriculumData(x, y, x[:10], y[:10], x[:10], y[:10], 3)
    m = nn.Dense(3)
    init = lambda k: m.init(k, x[:1])["params"]
    mix = jnp.asarray(np.linalg.qr(rng.normal(size=(64, 64)))[0], jnp.float32)

    def heavy(p, z, a):
        z = jax.lax.fori_loop(0, 200, lambda _, h: jnp.tanh(h @ mix), z)
        return m.apply({"params": p}, z)

    base = scaled_curriculum("baseline", 1, 1e-2, 0.2, 0.5, *_REF)
    trainers = {
        "baseline": CurriculumTrainer(
            base,
            init,
            lambda p, z, a: m.apply({"params": p}, z),
            batch_size=50,
            optimizer=_adam(1e-2),
        ),
        "heavy": CurriculumTrainer(base, init, heavy, batch_size=50, optimizer=_adam(1e-2)),
    }
    ratios = epoch_cost_ratios(trainers, data, seeds=[0, 1, 2], num_epochs=1, k=3)
    assert set(ratios) == {"heavy"} and len(ratios["heavy"]) == 3
    assert all(r > 1.5 for r in ratios["heavy"])
    with pytest.raises(ValueError, match="baseline"):
        epoch_cost_ratios({"heavy": trainers["heavy"]}, data, seeds=[0], num_epochs=1, k=1)
