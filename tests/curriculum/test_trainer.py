"""The curriculum trainer: one compile per run, bad curricula rejected, resumable after a
kill, and a weighted run equal to an independent numpy reference."""

import dataclasses

import flax.linen as nn
import jax
import numpy as np
import pytest

from jaxlab import curriculum as cl
from jaxlab.train.checkpoint import Checkpointer
from jaxlab.train.mesh import make_mesh
from jaxlab.trainers.curriculum import CurriculumData, CurriculumTrainer

N, D, C = 120, 4, 3


def _adam(lr):
    """The optimiser entry of a config (``jaxlab.train.make_optimizer``)."""
    return {"name": "adam", "learning_rate": lr}


class _Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(C)(nn.tanh(nn.Dense(8)(x)))


_MODEL = _Mlp()


def _init(key):
    return _MODEL.init(key, np.zeros((1, D), np.float32))["params"]


def _apply(params, x, model_args):
    del model_args
    return _MODEL.apply({"params": params}, x)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N + 40, D)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 1).astype(np.int32)
    return CurriculumData(x[:N], y[:N], x[N : N + 20], y[N : N + 20], x[N + 20 :], y[N + 20 :], C)


def test_spl_changes_subsets_without_recompiling(data):
    trainer = CurriculumTrainer(
        cl.spl(start_rate=0.2, grow_epochs=3),
        _init,
        _apply,
        batch_size=16,
        optimizer=_adam(1e-2),
        max_traces=1,
    )
    result = trainer.run(data, seeds=[0, 1], num_epochs=4)
    assert np.shape(result["test_acc"]) == (2,)
    assert np.shape(result["val_acc"]) == (4, 2)
    # The test accuracy belongs to the best-validation parameters: both within [0, 1].
    assert all(0.0 <= a <= 1.0 for a in result["test_acc"])


def test_baseline_learns_and_map_equals_vmap(data):
    results = [
        CurriculumTrainer(
            cl.baseline(), _init, _apply, batch_size=16, optimizer=_adam(3e-2), seed_batching=m
        ).run(data, seeds=[0, 1], num_epochs=3)
        for m in ("map", "vmap")
    ]
    np.testing.assert_allclose(results[0]["val_acc"], results[1]["val_acc"], atol=0.051)
    assert max(results[0]["best_val_acc"]) > 0.6


@pytest.mark.devices(8)
@pytest.mark.parametrize("runs,seeds", [(4, [0, 1, 2, 3]), (8, [0, 1, 2])])
def test_seeds_split_over_a_mesh_match_one_device(data, runs, seeds):
    """The seeds of a run split over a ``runs`` mesh axis (padded to it when they do not
    divide it) train exactly as on the default device."""
    make = lambda mesh: CurriculumTrainer(
        cl.dcl(), _init, _apply, batch_size=16, optimizer=_adam(1e-2), mesh=mesh
    )
    one = make(None).run(data, seeds=seeds, num_epochs=2)
    split = make(make_mesh({"runs": runs})).run(data, seeds=seeds, num_epochs=2)
    np.testing.assert_allclose(split["val_acc"], one["val_acc"], atol=1e-6)
    np.testing.assert_allclose(split["test_acc"], one["test_acc"], atol=1e-6)


@pytest.mark.parametrize(
    "weights,match", [(np.ones(N - 1), "shape"), (-np.ones(N), ">= 0"), (np.zeros(N), "no sample")]
)
def test_bad_curriculum_weights_are_errors(data, weights, match):
    bad = dataclasses.replace(
        cl.baseline(),
        name="bad",
        data_curriculum=lambda state, epoch, losses: state._replace(weights=weights),
    )
    with pytest.raises(ValueError, match=match):
        CurriculumTrainer(bad, _init, _apply, batch_size=16, optimizer=_adam(1e-2)).run(
            data, seeds=[0], num_epochs=1
        )


def test_vision_only_curriculum_refuses_vectors(data):
    vision = dataclasses.replace(cl.baseline(), name="cbs_like", vision_only=True)
    with pytest.raises(ValueError, match="vision-only"):
        CurriculumTrainer(vision, _init, _apply, batch_size=16, optimizer=_adam(1e-2)).run(
            data, seeds=[0], num_epochs=1
        )


def test_resume_from_workdir_matches_uninterrupted(data, tmp_path):
    make = lambda: CurriculumTrainer(cl.dcl(), _init, _apply, batch_size=32, optimizer=_adam(1e-2))
    full = make().run(data, seeds=[3], num_epochs=2)
    make().run(data, seeds=[3], num_epochs=2, workdir=str(tmp_path), stop_after=1)
    resumed = make().run(data, seeds=[3], num_epochs=2, workdir=str(tmp_path))
    np.testing.assert_allclose(resumed["val_acc"], full["val_acc"])
    np.testing.assert_allclose(resumed["test_acc"], full["test_acc"])


def test_bad_arguments(data):
    with pytest.raises(ValueError, match="batch_size"):
        CurriculumTrainer(cl.baseline(), _init, _apply, batch_size=0, optimizer=_adam(1e-2))
    with pytest.raises(ValueError, match="train_labels"):
        CurriculumTrainer(cl.baseline(), _init, _apply, batch_size=16, optimizer=_adam(1e-2)).run(
            data._replace(train_labels=np.zeros((3, N), np.int32)), seeds=[0, 1], num_epochs=1
        )


class _Cnn(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(4, (3, 3))(x))
        return nn.Dense(C)(x.mean(axis=(1, 2)))


@pytest.mark.parametrize("name", ["mcl", "lgl", "c2f", "adaptive_cl", "efficient_train"])
def test_new_curricula_run_without_recompiling(name):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(N + 40, 6, 6, 1)).astype(np.float32)
    y = (x[:, :3].mean(axis=(1, 2, 3)) > 0).astype(np.int32) + (x[:, 0, 0, 0] > 1)
    teacher_logits = np.eye(C, dtype=np.float32)[y[:N]] * 2.0
    teacher_losses = np.full(N, 0.2, np.float32)
    data = CurriculumData(
        x[:N],
        y[:N],
        x[N : N + 20],
        y[N : N + 20],
        x[N + 20 :],
        y[N + 20 :],
        C,
        teacher_losses,
        teacher_logits,
    )
    model = _Cnn()
    kwargs = {
        "mcl": {"schedule_epochs": 1, "warm_epochs": 1},
        "lgl": {"grow_interval": 1},
        "c2f": {"max_clusters": 2},
        "adaptive_cl": {"pace_r": 1, "inv": 1},
    }.get(name, {})
    trainer = CurriculumTrainer(
        cl.get_curriculum(name, **kwargs),
        lambda k: model.init(k, x[:1])["params"],
        lambda p, z, a: model.apply({"params": p}, z),
        batch_size=16,
        optimizer=_adam(1e-2),
        max_traces=1,
    )
    result = trainer.run(data, seeds=[0, 1], num_epochs=3)
    assert np.shape(result["val_acc"]) == (3, 2)
    if name in ("c2f", "adaptive_cl"):
        with pytest.raises(ValueError, match="teacher"):
            trainer.run(data._replace(teacher_logits=None), seeds=[0], num_epochs=1)


@pytest.mark.slow
def test_mid_epoch_resume_keeps_the_curriculum_state(data, tmp_path):
    # DIHCL: the loss hook updates the hardness in the state, the epoch's subset is sampled
    # from it; 8 steps per epoch in chunks of 3 (the last chunk padded).
    make = lambda: CurriculumTrainer(
        cl.dihcl(warm_epochs=1, bottom_size=0.5),
        _init,
        _apply,
        batch_size=16,
        optimizer=_adam(1e-2),
        chunk_steps=3,
        max_traces=1,
    )
    full = make().run(data, seeds=[3, 4], num_epochs=3)
    whole = CurriculumTrainer(
        cl.dihcl(warm_epochs=1, bottom_size=0.5),
        _init,
        _apply,
        batch_size=16,
        optimizer=_adam(1e-2),
    ).run(data, seeds=[3, 4], num_epochs=3)
    np.testing.assert_allclose(full["val_acc"], whole["val_acc"])  # chunking changes nothing
    for stop in (4, 4):  # killed inside epoch 2, then inside epoch 3; resumed to the end
        make().run(data, seeds=[3, 4], num_epochs=3, workdir=str(tmp_path), stop_after_chunks=stop)
    resumed = make().run(data, seeds=[3, 4], num_epochs=3, workdir=str(tmp_path))
    np.testing.assert_allclose(resumed["val_acc"], full["val_acc"])
    np.testing.assert_allclose(resumed["test_acc"], full["test_acc"])
    with pytest.raises(ValueError, match="chunk_steps"):
        CurriculumTrainer(
            cl.baseline(), _init, _apply, batch_size=16, optimizer=_adam(1e-2), chunk_steps=0
        )


def _softmax(z):
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def test_weighted_subset_run_matches_a_numpy_reference(data):
    """A linear softmax classifier under fixed curriculum weights (40 samples left out, the
    odd ones weighted 2), plain SGD, 2 epochs: every step is ``θ ← θ − η ∇_θ (1/m) Σ_i w_i
    ℓ_i`` over the ``m`` valid rows of the batch, with ``∇_W ℓ_i = x_i (p_i − e_{y_i})ᵀ``,
    written here in float64 numpy. The batch order is the trainer's documented plan (the
    kept samples permuted by ``default_rng([seed, 2, epoch])``, padded to whole batches);
    the validation accuracies, the best-validation parameters and their test accuracy
    match."""
    # At float32 precision (docs/precision.md): GPU TF32 products miss the reference by ~1e-3.
    with jax.default_matmul_precision("highest"):
        seed, lr, b, epochs = 5, 0.5, 16, 2
        w = np.ones(N, np.float32)
        w[:40] = 0.0
        w[1::2] *= 2.0
        fixed = dataclasses.replace(
            cl.baseline(),
            name="fixed_weights",
            data_curriculum=lambda state, epoch, losses: state._replace(weights=w),
        )
        dense = nn.Dense(C)
        init = lambda key: dense.init(key, np.zeros((1, D), np.float32))["params"]  # noqa: E731
        apply = lambda p, x, a: dense.apply({"params": p}, x)  # noqa: E731
        result = CurriculumTrainer(
            fixed, init, apply, batch_size=b, optimizer={"name": "sgd", "learning_rate": lr}
        ).run(data, seeds=[seed], num_epochs=epochs, return_params=True)

        p0 = init(jax.random.split(jax.random.key(seed), 3)[0])  # the trainer's model key
        kernel, bias = np.asarray(p0["kernel"], np.float64), np.asarray(p0["bias"], np.float64)
        x, y = np.asarray(data.train_inputs, np.float64), np.asarray(data.train_labels)
        accuracy = lambda k, c, xs, ys: float(np.mean((xs @ k + c).argmax(-1) == ys))  # noqa: E731
        best, best_val, vals = None, -1.0, []
        for epoch in range(epochs):
            order = np.random.default_rng([seed, 2, epoch]).permutation(np.flatnonzero(w > 0))
            for start in range(0, len(order), b):
                rows = order[start : start + b]
                p = _softmax(x[rows] @ kernel + bias)
                p[np.arange(len(rows)), y[rows]] -= 1.0
                g = w[rows, None] * p / len(rows)
                kernel, bias = kernel - lr * x[rows].T @ g, bias - lr * g.sum(0)
            vals.append(accuracy(kernel, bias, data.val_inputs, data.val_labels))
            if vals[-1] > best_val:
                best, best_val = (kernel.copy(), bias.copy()), vals[-1]
        np.testing.assert_allclose(np.asarray(result["val_acc"])[:, 0], vals)
        params = result["params"]
        np.testing.assert_allclose(np.asarray(params["kernel"][0]), best[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(params["bias"][0]), best[1], rtol=1e-4, atol=1e-5)
        assert result["test_acc"] == [accuracy(*best, data.test_inputs, data.test_labels)]


class _Killed(Exception):
    """Stands for the process dying right after a checkpoint was written."""


def test_run_killed_after_a_checkpoint_resumes_bit_identical(data, tmp_path, monkeypatch):
    """DCL (its loss hook learns per-sample data parameters: curriculum state that moves
    every step), 8 steps per epoch in chunks of 3: a run killed after its 2nd checkpoint
    (mid-epoch 1), resumed and killed again after 3 more (mid-epoch 2), then resumed to the
    end, equals the uninterrupted run exactly: accuracies and parameters."""
    make = lambda: CurriculumTrainer(  # noqa: E731
        cl.dcl(), _init, _apply, batch_size=16, optimizer=_adam(1e-2), chunk_steps=3
    )
    seeds, epochs = [3, 4], 2
    full = make().run(data, seeds=seeds, num_epochs=epochs, return_params=True)
    save = Checkpointer.save
    for kill_after in (2, 3):
        saves = []

        def dying_save(self, *args, _saves=saves, _after=kill_after, **kwargs):
            save(self, *args, **kwargs)
            self.wait()
            _saves.append(args[0])
            if len(_saves) == _after:
                raise _Killed(args[0])

        monkeypatch.setattr(Checkpointer, "save", dying_save)
        with pytest.raises(_Killed):
            make().run(data, seeds=seeds, num_epochs=epochs, workdir=str(tmp_path))
    monkeypatch.setattr(Checkpointer, "save", save)
    assert saves == [3, 4, 5]  # the second life started after the first one's 2 chunks
    resumed = make().run(
        data, seeds=seeds, num_epochs=epochs, workdir=str(tmp_path), return_params=True
    )
    np.testing.assert_array_equal(resumed["val_acc"], full["val_acc"])
    np.testing.assert_array_equal(resumed["test_acc"], full["test_acc"])
    jax.tree.map(np.testing.assert_array_equal, resumed["params"], full["params"])
