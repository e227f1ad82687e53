"""Bad input, one row per argument of every public ``jaxlab.curriculum`` kernel (the table
convention of ``tests/test_bad_inputs.py``, whose meta-tests check that every public
kernel and argument has a row), and a second table for the curriculum trainer
``jaxlab.trainers.curriculum`` with its own meta-test."""

from __future__ import annotations

import inspect

import flax.linen as nn
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from jaxlab import curriculum as cl
from jaxlab.curriculum.mw_net import init_weight_net
from jaxlab.trainers import curriculum as ct
from tests.bad_inputs import KEY, NAN, Case, case_id, check

LOGITS = jnp.zeros((4, 3))
LABELS = jnp.array([0, 1, 2, 0])
LOSSES = jnp.array([0.3, 0.1, 0.9, 0.5])
SQ = lambda p, x, y: (p * x - y) ** 2  # noqa: E731  per-sample losses of a scalar model
XB, YB = jnp.ones(4), jnp.zeros(4)
CTX = cl.StepContext(
    params=1.0,
    loss_fn=SQ,
    apply_fn=lambda p, x: x,
    inputs=XB,
    valid=jnp.ones(4, bool),
    meta_inputs=XB,
    meta_labels=YB,
    lr=0.1,
    step=jnp.int32(0),
    key=KEY,
)
STATE = cl.CurriculumState(weights=np.ones(4, np.float32))

CASES = [
    Case("curriculum.adaptive_pace", "q", lambda: cl.adaptive_pace(1, 0.1, 0.5, 15)),
    Case("curriculum.adaptive_pace", "r", lambda: cl.adaptive_pace(1, 0.1, 2.5, 0)),
    Case("curriculum.adaptive_pace", "p", lambda: cl.adaptive_pace(1, 1.5, 2.5, 15)),
    Case("curriculum.adaptive_cl", "pace_p", lambda: cl.adaptive_cl(pace_p=0.0)),
    Case("curriculum.adaptive_cl", "alpha", lambda: cl.adaptive_cl(alpha=1.5)),
    Case(
        "curriculum.teacher_kl", "teacher_logits", lambda: cl.teacher_kl(LOGITS, jnp.zeros((4, 2)))
    ),
    Case(
        "curriculum.affinity_clustering",
        "max_clusters",
        lambda: cl.affinity_clustering(np.ones((3, 3)) - np.eye(3), 0),
    ),
    Case(
        "curriculum.affinity_clustering",
        "distances",
        lambda: cl.affinity_clustering(np.ones((3, 2)), 2),
    ),
    Case("curriculum.c2f", "max_clusters", lambda: cl.c2f(max_clusters=0)),
    Case("curriculum.cbs", "start_std", lambda: cl.cbs(start_std=0.0)),
    Case("curriculum.cbs_sigma", "grow_factor", lambda: cl.cbs_sigma(1, grow_factor=1.5)),
    Case("curriculum.cbs_sigma", "grow_interval", lambda: cl.cbs_sigma(1, grow_interval=0)),
    Case("curriculum.cbs_sigma", "epoch", lambda: cl.cbs_sigma(-1)),
    Case("curriculum.check_weights", "weights", lambda: cl.check_weights(np.zeros(4), 4)),
    Case("curriculum.check_weights", "num_samples", lambda: cl.check_weights(np.ones(4), 0)),
    Case(
        "curriculum.coarse_cross_entropy",
        "clusters",
        lambda: cl.coarse_cross_entropy(LOGITS, LABELS, jnp.array([0, 1])),
    ),
    Case(
        "curriculum.coarse_cross_entropy",
        "labels",
        lambda: cl.coarse_cross_entropy(LOGITS, LABELS + 5, jnp.array([0, 0, 1])),
    ),
    Case(
        "curriculum.confusion_distances",
        "num_classes",
        lambda: cl.confusion_distances(LABELS, LABELS, 0),
    ),
    Case(
        "curriculum.confusion_distances",
        "predictions",
        lambda: cl.confusion_distances(LABELS, LABELS + 3, 3),
    ),
    Case(
        "curriculum.data_parameter_loss",
        "log_sigma",
        lambda: cl.data_parameter_loss(LOGITS, LABELS, jnp.zeros(3)),
    ),
    Case(
        "curriculum.data_parameter_loss",
        "labels",
        lambda: cl.data_parameter_loss(LOGITS, LABELS * 1.0, jnp.zeros(4)),
    ),
    Case("curriculum.dcl", "lr_data_param", lambda: cl.dcl(lr_data_param=-0.1)),
    Case("curriculum.dcl", "momentum", lambda: cl.dcl(momentum=1.5)),
    Case("curriculum.dds", "eps", lambda: cl.dds(eps=0.0)),
    Case("curriculum.dds", "lr", lambda: cl.dds(lr=-1.0)),
    Case("curriculum.dds_reward", "eps", lambda: cl.dds_reward(1.0, SQ, XB, YB, XB, YB, eps=-1.0)),
    Case(
        "curriculum.dds_reward",
        "loss_fn",
        lambda: cl.dds_reward(1.0, None, XB, YB, XB, YB, eps=0.1),
    ),
    Case(
        "curriculum.dih_update",
        "discount",
        lambda: cl.dih_update(
            jnp.zeros(3), jnp.ones(1), jnp.array([1]), jnp.array([True]), 1.5, 1.0
        ),
    ),
    Case(
        "curriculum.dih_update",
        "indices",
        lambda: cl.dih_update(
            jnp.zeros(3), jnp.ones(1), jnp.array([7]), jnp.array([True]), 0.5, 1.0
        ),
    ),
    Case(
        "curriculum.dih_update",
        "lr",
        lambda: cl.dih_update(
            jnp.zeros(3), jnp.ones(1), jnp.array([1]), jnp.array([True]), 0.5, -1.0
        ),
    ),
    Case("curriculum.dihcl", "warm_epochs", lambda: cl.dihcl(warm_epochs=-1)),
    Case("curriculum.dihcl", "bottom_size", lambda: cl.dihcl(bottom_size=1.5)),
    Case("curriculum.efficient_train", "grow_epochs", lambda: cl.efficient_train(grow_epochs=0)),
    Case("curriculum.get_curriculum", "name", lambda: cl.get_curriculum("bogus")),
    Case("curriculum.imbalance", "ratio", lambda: cl.imbalance(LABELS, 0.5, 3, KEY)),
    Case("curriculum.imbalance", "labels", lambda: cl.imbalance(LABELS + 3, 2.0, 3, KEY)),
    Case("curriculum.imbalance", "key", lambda: cl.imbalance(LABELS, 2.0, 3, 0)),
    Case(
        "curriculum.noisy_labels",
        "labels",
        lambda: cl.noisy_labels(jnp.array([0, 5, 7, -1]), 0.0, 3, KEY),
    ),
    Case(
        "curriculum.noisy_labels",
        "labels",
        lambda: cl.noisy_labels(jnp.array([0.0, 1.0]), 0.0, 3, KEY),
    ),
    Case("curriculum.noisy_labels", "p", lambda: cl.noisy_labels(LABELS, 1.0, 3, KEY)),
    Case("curriculum.noisy_labels", "num_classes", lambda: cl.noisy_labels(LABELS, 0.1, 1, KEY)),
    Case("curriculum.noisy_labels", "key", lambda: cl.noisy_labels(LABELS, 0.1, 3, 7)),
    Case("curriculum.lambertw", "iterations", lambda: cl.lambertw(1.0, iterations=-1)),
    Case("curriculum.lambertw", "x", lambda: cl.lambertw(jnp.array([NAN, 1.0])), "nan"),
    Case("curriculum.lgl", "start_rate", lambda: cl.lgl(start_rate=-0.1)),
    Case("curriculum.lgl", "strategy", lambda: cl.lgl(strategy="bogus")),
    Case(
        "curriculum.lgl_loss", "class_mask", lambda: cl.lgl_loss(LOGITS, LABELS, jnp.ones(2, bool))
    ),
    Case(
        "curriculum.lgl_loss", "labels", lambda: cl.lgl_loss(LOGITS, LABELS + 3, jnp.ones(3, bool))
    ),
    Case(
        "curriculum.lookahead_params",
        "lr",
        lambda: cl.lookahead_params(1.0, SQ, XB, YB, jnp.ones(4), -0.1),
    ),
    Case(
        "curriculum.lookahead_params",
        "weights",
        lambda: cl.lookahead_params(1.0, SQ, XB, YB, jnp.ones(3), 0.1),
    ),
    Case(
        "curriculum.lookahead_meta_loss",
        "loss_fn",
        lambda: cl.lookahead_meta_loss(jnp.ones(4), 1.0, None, XB, YB, XB, YB, 0.1),
    ),
    Case(
        "curriculum.lookahead_meta_loss",
        "lr",
        lambda: cl.lookahead_meta_loss(jnp.ones(4), 1.0, SQ, XB, YB, XB, YB, -0.1),
    ),
    Case(
        "curriculum.low_frequency_crop",
        "images",
        lambda: cl.low_frequency_crop(jnp.ones((4, 4)), 2),
    ),
    Case(
        "curriculum.low_frequency_crop",
        "band",
        lambda: cl.low_frequency_crop(jnp.ones((1, 4, 4, 1)), -1),
    ),
    Case("curriculum.lre_weights", "lr", lambda: cl.lre_weights(1.0, SQ, XB, YB, XB, YB, lr=-1.0)),
    Case(
        "curriculum.lre_weights",
        "valid",
        lambda: cl.lre_weights(1.0, SQ, XB, YB, XB, YB, lr=0.1, valid=jnp.ones(3, bool)),
    ),
    Case("curriculum.masked_mean", "valid", lambda: cl.masked_mean(LOSSES, jnp.ones(3))),
    Case(
        "curriculum.masked_mean",
        "values",
        lambda: cl.masked_mean(LOSSES.at[0].set(NAN), jnp.ones(4)),
        "nan",
    ),
    Case("curriculum.mcl", "schedule_epochs", lambda: cl.mcl(schedule_epochs=0)),
    Case("curriculum.mcl", "initial_size", lambda: cl.mcl(initial_size=1.5)),
    Case("curriculum.mcl_centrality", "features", lambda: cl.mcl_centrality(np.ones(3))),
    Case(
        "curriculum.mcl_centrality", "beta", lambda: cl.mcl_centrality(np.ones((3, 2)), beta=-1.0)
    ),
    Case("curriculum.mcl_sample", "size", lambda: cl.mcl_sample(LOSSES, LOSSES, 9, 1.0, KEY)),
    Case("curriculum.mcl_sample", "key", lambda: cl.mcl_sample(LOSSES, LOSSES, 1, 1.0, 3)),
    Case("curriculum.mcl_sample", "lam", lambda: cl.mcl_sample(LOSSES, LOSSES, 1, -1.0, KEY)),
    Case(
        "curriculum.mcl_sample",
        "losses",
        lambda: cl.mcl_sample(LOSSES.at[0].set(NAN), LOSSES, 1, 1.0, KEY),
    ),
    Case("curriculum.mw_net", "hidden", lambda: cl.mw_net(hidden=0)),
    Case("curriculum.mw_net", "lr", lambda: cl.mw_net(lr=0.0)),
    Case(
        "curriculum.mw_net_meta_loss",
        "lr",
        lambda: cl.mw_net_meta_loss(
            init_weight_net(KEY, 4), 1.0, SQ, XB, YB, XB, YB, -1.0, jnp.ones(4, bool)
        ),
    ),
    Case(
        "curriculum.mw_net_meta_loss",
        "valid",
        lambda: cl.mw_net_meta_loss(
            init_weight_net(KEY, 4), 1.0, SQ, XB, YB, XB, YB, 0.1, jnp.ones(3, bool)
        ),
    ),
    Case("curriculum.pacing", "start_rate", lambda: cl.pacing(1, 0.0, 10)),
    Case("curriculum.pacing", "grow_epochs", lambda: cl.pacing(1, 0.2, 0)),
    Case("curriculum.pacing", "kind", lambda: cl.pacing(1, 0.2, 10, kind="bogus")),
    Case("curriculum.pacing", "p", lambda: cl.pacing(1, 0.2, 10, kind="root", p=0)),
    Case("curriculum.pacing", "epoch", lambda: cl.pacing(-1, 0.2, 10)),
    Case("curriculum.rand_augment", "images", lambda: cl.rand_augment(jnp.ones((4, 4)), 5.0, KEY)),
    Case(
        "curriculum.rand_augment",
        "num_ops",
        lambda: cl.rand_augment(jnp.ones((1, 4, 4, 1)), 5.0, KEY, num_ops=-1),
    ),
    Case(
        "curriculum.rand_augment",
        "magnitude",
        lambda: cl.rand_augment(jnp.ones((1, 4, 4, 1)), 11.0, KEY),
    ),
    Case("curriculum.rand_augment", "key", lambda: cl.rand_augment(jnp.ones((1, 4, 4, 1)), 5.0, 0)),
    Case(
        "curriculum.screener_loss",
        "margin",
        lambda: cl.screener_loss(jnp.ones(4) * 0.5, LOSSES, -1.0),
    ),
    Case(
        "curriculum.screener_loss",
        "losses",
        lambda: cl.screener_loss(jnp.ones(4) * 0.5, LOSSES[:3], 1.0),
    ),
    Case("curriculum.screener_net", "margin", lambda: cl.screener_net(margin=-1.0)),
    Case("curriculum.spl", "start_rate", lambda: cl.spl(start_rate=0.0)),
    Case("curriculum.spl", "weighting", lambda: cl.spl(weighting="bogus")),
    Case("curriculum.spl_weights", "rate", lambda: cl.spl_weights(LOSSES, 0.0)),
    Case("curriculum.spl_weights", "losses", lambda: cl.spl_weights(LOSSES.at[1].set(NAN), 0.5)),
    Case("curriculum.spl_weights", "t", lambda: cl.spl_weights(LOSSES, 0.5, "polynomial", 1.0)),
    Case("curriculum.spl_weights", "weighting", lambda: cl.spl_weights(LOSSES, 0.5, "cubic")),
    Case("curriculum.superloss", "lam", lambda: cl.superloss(lam=0.0)),
    Case("curriculum.superloss", "fac", lambda: cl.superloss(fac=1.5)),
    Case("curriculum.superloss_sigma", "lam", lambda: cl.superloss_sigma(LOSSES, 0.0, 0.0)),
    Case(
        "curriculum.superloss_sigma",
        "losses",
        lambda: cl.superloss_sigma(LOSSES.at[0].set(NAN), 0.0, 1.0),
        "nan",
    ),
    Case("curriculum.ttcl", "grow_epochs", lambda: cl.ttcl(grow_epochs=0)),
    Case("curriculum.ttcl", "grow_fn", lambda: cl.ttcl(grow_fn="bogus")),
    Case(
        "curriculum.weight_net",
        "losses",
        lambda: cl.weight_net(init_weight_net(KEY, 4), jnp.ones((2, 2))),
    ),
    Case(
        "curriculum.weighted_loss",
        "indices",
        lambda: cl.weighted_loss(LOSSES, LOGITS, LABELS, jnp.zeros(4), STATE, CTX),
    ),
    Case(
        "curriculum.weighted_loss",
        "losses",
        lambda: cl.weighted_loss(LOSSES[:2], LOGITS, LABELS, jnp.arange(4), STATE, CTX),
    ),
    Case("curriculum.adaptive_cl", "pace_q", lambda: cl.adaptive_cl(pace_q=0.5)),
    Case("curriculum.adaptive_cl", "pace_r", lambda: cl.adaptive_cl(pace_r=0)),
    Case("curriculum.adaptive_cl", "inv", lambda: cl.adaptive_cl(inv=0)),
    Case("curriculum.adaptive_cl", "gamma", lambda: cl.adaptive_cl(gamma=-1.0)),
    Case("curriculum.adaptive_cl", "gamma_decay", lambda: cl.adaptive_cl(gamma_decay=-1.0)),
    Case("curriculum.adaptive_cl", "bottom_gamma", lambda: cl.adaptive_cl(bottom_gamma=-1.0)),
    Case("curriculum.adaptive_pace", "epoch", lambda: cl.adaptive_pace(-1, 0.1, 2.5, 15)),
    Case("curriculum.cbs", "grow_factor", lambda: cl.cbs(grow_factor=0.0)),
    Case("curriculum.cbs", "grow_interval", lambda: cl.cbs(grow_interval=0)),
    Case("curriculum.cbs_sigma", "start_std", lambda: cl.cbs_sigma(1, start_std=-1.0)),
    Case(
        "curriculum.coarse_cross_entropy",
        "logits",
        lambda: cl.coarse_cross_entropy(jnp.ones(3), LABELS, jnp.array([0, 0, 1])),
    ),
    Case(
        "curriculum.confusion_distances",
        "labels",
        lambda: cl.confusion_distances(LABELS - 1, LABELS, 3),
    ),
    Case(
        "curriculum.data_parameter_loss",
        "logits",
        lambda: cl.data_parameter_loss(jnp.ones(4), LABELS, jnp.zeros(4)),
    ),
    Case("curriculum.dcl", "init_data_param", lambda: cl.dcl(init_data_param=-1.0)),
    Case("curriculum.dcl", "wd_data_param", lambda: cl.dcl(wd_data_param=-1.0)),
    Case("curriculum.dcl", "init_class_param", lambda: cl.dcl(init_class_param=-1.0)),
    Case("curriculum.dcl", "lr_class_param", lambda: cl.dcl(lr_class_param=-1.0)),
    Case("curriculum.dcl", "wd_class_param", lambda: cl.dcl(wd_class_param=-1.0)),
    Case(
        "curriculum.dih_update",
        "valid",
        lambda: cl.dih_update(
            jnp.zeros(3), jnp.ones(1), jnp.array([1]), jnp.array([True, True]), 0.5, 1.0
        ),
    ),
    Case(
        "curriculum.dih_update",
        "losses",
        lambda: cl.dih_update(
            jnp.zeros(3), jnp.ones(2), jnp.array([1]), jnp.array([True]), 0.5, 1.0
        ),
    ),
    Case(
        "curriculum.dih_update",
        "dih",
        lambda: cl.dih_update(
            jnp.zeros((3, 1)), jnp.ones(1), jnp.array([1]), jnp.array([True]), 0.5, 1.0
        ),
    ),
    Case("curriculum.dihcl", "discount", lambda: cl.dihcl(discount=1.5)),
    Case("curriculum.dihcl", "decay_rate", lambda: cl.dihcl(decay_rate=-0.5)),
    Case("curriculum.imbalance", "num_classes", lambda: cl.imbalance(LABELS, 2.0, 1, KEY)),
    Case("curriculum.lgl", "grow_rate", lambda: cl.lgl(grow_rate=-1.0)),
    Case("curriculum.lgl", "grow_interval", lambda: cl.lgl(grow_interval=0)),
    Case(
        "curriculum.lgl_loss", "logits", lambda: cl.lgl_loss(jnp.ones(4), LABELS, jnp.ones(3, bool))
    ),
    Case(
        "curriculum.lookahead_params",
        "loss_fn",
        lambda: cl.lookahead_params(1.0, None, XB, YB, jnp.ones(4), 0.1),
    ),
    Case(
        "curriculum.lookahead_meta_loss",
        "weights",
        lambda: cl.lookahead_meta_loss(jnp.ones(3), 1.0, SQ, XB, YB, XB, YB, 0.1),
    ),
    Case(
        "curriculum.lre_weights",
        "loss_fn",
        lambda: cl.lre_weights(1.0, None, XB, YB, XB, YB, lr=0.1),
    ),
    Case("curriculum.mcl", "warm_epochs", lambda: cl.mcl(warm_epochs=-1)),
    Case("curriculum.mcl", "lam", lambda: cl.mcl(lam=-1.0)),
    Case("curriculum.mcl", "min_lam", lambda: cl.mcl(min_lam=-1.0)),
    Case("curriculum.mcl", "gamma", lambda: cl.mcl(gamma=1.0)),
    Case("curriculum.mcl", "alpha", lambda: cl.mcl(alpha=0.0)),
    Case("curriculum.mcl", "beta", lambda: cl.mcl(beta=-1.0)),
    Case("curriculum.mcl", "feature_gamma", lambda: cl.mcl(feature_gamma=-1.0)),
    Case(
        "curriculum.mcl_centrality", "alpha", lambda: cl.mcl_centrality(np.ones((3, 2)), alpha=0.0)
    ),
    Case(
        "curriculum.mcl_centrality", "gamma", lambda: cl.mcl_centrality(np.ones((3, 2)), gamma=-1.0)
    ),
    Case(
        "curriculum.mcl_sample",
        "centrality",
        lambda: cl.mcl_sample(LOSSES, LOSSES.at[0].set(NAN), 1, 1.0, KEY),
    ),
    Case("curriculum.mw_net", "weight_decay", lambda: cl.mw_net(weight_decay=-1.0)),
    Case(
        "curriculum.mw_net_meta_loss",
        "loss_fn",
        lambda: cl.mw_net_meta_loss(
            init_weight_net(KEY, 4), 1.0, None, XB, YB, XB, YB, 0.1, jnp.ones(4, bool)
        ),
    ),
    Case("curriculum.screener_loss", "weights", lambda: cl.screener_loss(jnp.ones(3), LOSSES, 1.0)),
    Case("curriculum.screener_net", "lr", lambda: cl.screener_net(lr=0.0)),
    Case("curriculum.spl", "grow_epochs", lambda: cl.spl(grow_epochs=0)),
    Case("curriculum.spl", "grow_fn", lambda: cl.spl(grow_fn="cubic")),
    Case("curriculum.spl", "p", lambda: cl.spl(grow_fn="root", p=0)),
    Case("curriculum.spl", "t", lambda: cl.spl(weighting="polynomial", t=1.0)),
    Case("curriculum.superloss", "tau", lambda: cl.superloss(tau=NAN)),
    Case("curriculum.superloss_sigma", "tau", lambda: cl.superloss_sigma(LOSSES, NAN, 1.0)),
    Case("curriculum.teacher_kl", "logits", lambda: cl.teacher_kl(jnp.ones(3), jnp.ones(3))),
    Case("curriculum.ttcl", "start_rate", lambda: cl.ttcl(start_rate=1.5)),
    Case("curriculum.ttcl", "weighting", lambda: cl.ttcl(weighting="bogus")),
    Case("curriculum.ttcl", "p", lambda: cl.ttcl(grow_fn="root", p=0)),
    Case("curriculum.ttcl", "t", lambda: cl.ttcl(weighting="polynomial", t=0.5)),
    Case("curriculum.weight_net", "params", lambda: cl.weight_net(None, LOSSES)),
    Case(
        "curriculum.mw_net_meta_loss",
        "vparams",
        lambda: cl.mw_net_meta_loss(None, 1.0, SQ, XB, YB, XB, YB, 0.1, jnp.ones(4, bool)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bad_input(case: Case) -> None:
    check(case)


# ---------------------------------------------------------------- the curriculum trainer
# ``jaxlab.trainers.curriculum`` (the trainer the curricula run in): one row per argument of
# each public function and class of its ``__all__``; checked by the meta-test below.

_DENSE = nn.Dense(3)
INIT = lambda key: _DENSE.init(key, jnp.zeros((1, 2)))["params"]  # noqa: E731
APPLY = lambda params, x, model_args: _DENSE.apply({"params": params}, x)  # noqa: E731
OPT = {"name": "adam", "learning_rate": 1e-2}
_X = np.zeros((6, 2), np.float32)
_Y = np.zeros(6, np.int32)
DATA = ct.CurriculumData(_X, _Y, _X, _Y, _X, _Y, 3)
TRAINER = ct.CurriculumTrainer(cl.baseline(), INIT, APPLY, batch_size=2, optimizer=OPT)
SCHEDULES = {"lgl": {"grow_interval": 20}}
RESULT = {"test_acc": [0.5], "best_val_acc": [0.5], "val_acc": [[0.5]], "epoch_time_s": [1.0]}
CONFIG = ml_collections.ConfigDict(
    {
        "seed": 0,
        "num_seeds": 1,
        "methods": ("baseline",),
        "settings": ("standard",),
        "num_epochs": 1,
        "batch_size": 2,
        "optimizer": OPT,
        "eval_batch_size": 6,
        "spl_start_rate": 0.2,
        "grow_fraction": 0.5,
        "reference_schedules": SCHEDULES,
        "reference_epochs": 200,
        "seed_batching": "map",
        "chunk_steps": None,
        "meta_methods": (),
        "timing_repeats": 1,
    }
)


def _trainer(**overrides):
    kwargs = dict(
        curriculum=cl.baseline(), init_fn=INIT, apply_fn=APPLY, batch_size=2, optimizer=OPT
    )
    return ct.CurriculumTrainer(**{**kwargs, **overrides})


def _scaled(**overrides):
    kwargs = dict(
        name="lgl",
        num_epochs=10,
        lr=1e-3,
        spl_start_rate=0.2,
        grow_fraction=0.5,
        schedules=SCHEDULES,
        reference_epochs=200,
    )
    return ct.scaled_curriculum(**{**kwargs, **overrides})


def _setting(**overrides):
    kwargs = dict(data=DATA, setting="noise", seeds=[0], noise_rate=0.4)
    return ct.benchmark_setting(**{**kwargs, **overrides})


def _costs(**overrides):
    kwargs = dict(trainers={"baseline": TRAINER}, data=DATA, seeds=[0], num_epochs=1, k=1)
    return ct.epoch_cost_ratios(**{**kwargs, **overrides})


def _teacher(**overrides):
    kwargs = dict(
        teacher_data=DATA,
        init_fn=INIT,
        apply_fn=APPLY,
        seed=0,
        num_epochs=1,
        batch_size=2,
        optimizer=OPT,
        eval_batch_size=6,
        seed_batching="map",
    )
    return ct.train_teacher(**{**kwargs, **overrides})


def _grid(tmp="/nonexistent/curbench-bad-input", **overrides):
    kwargs = dict(
        curricula={"baseline": cl.baseline()},
        settings=["standard"],
        make_data=lambda setting: DATA,
        init_fn=INIT,
        apply_fn=APPLY,
        seeds=[0],
        num_epochs=1,
        batch_size=2,
        optimizer=OPT,
        workdir=tmp,
        seed_batching="map",
        eval_batch_size=6,
        teacher=None,
        chunk_steps=None,
        mesh=None,
        verbose=False,
    )
    return ct.run_benchmark_grid(**{**kwargs, **overrides})


def _benchmark(**overrides):
    kwargs = dict(
        config=CONFIG,
        data=DATA,
        init_fn=INIT,
        apply_fn=APPLY,
        workdir="/nonexistent/curbench-bad-input",
        teacher_data=None,
    )
    return ct.run_benchmark(**{**kwargs, **overrides})


T = "train.curriculum."
TRAINER_CASES = [
    Case(T + "CurriculumTrainer", "curriculum", lambda: _trainer(curriculum="spl")),
    Case(T + "CurriculumTrainer", "init_fn", lambda: _trainer(init_fn=None)),
    Case(T + "CurriculumTrainer", "apply_fn", lambda: _trainer(apply_fn=None)),
    Case(T + "CurriculumTrainer", "batch_size", lambda: _trainer(batch_size=0)),
    Case(T + "CurriculumTrainer", "optimizer", lambda: _trainer(optimizer={"name": "adam"})),
    Case(T + "CurriculumTrainer", "seed_batching", lambda: _trainer(seed_batching="pmap")),
    Case(T + "CurriculumTrainer", "eval_batch_size", lambda: _trainer(eval_batch_size=0)),
    Case(T + "CurriculumTrainer", "max_traces", lambda: _trainer(max_traces=0)),
    Case(T + "CurriculumTrainer", "chunk_steps", lambda: _trainer(chunk_steps=0)),
    Case(T + "CurriculumTrainer", "mesh", lambda: _trainer(mesh="runs")),
    Case(T + "CurriculumTrainer.run", "data", lambda: TRAINER.run(None, [0], 1)),
    Case(T + "CurriculumTrainer.run", "seeds", lambda: TRAINER.run(DATA, [], 1)),
    Case(T + "CurriculumTrainer.run", "num_epochs", lambda: TRAINER.run(DATA, [0], 0)),
    Case(
        T + "CurriculumTrainer.run", "stop_after", lambda: TRAINER.run(DATA, [0], 1, stop_after=0)
    ),
    Case(
        T + "CurriculumTrainer.run",
        "stop_after_chunks",
        lambda: TRAINER.run(DATA, [0], 1, stop_after_chunks=-1),
    ),
    Case(
        T + "CurriculumTrainer.run",
        "train_labels",
        lambda: TRAINER.run(DATA._replace(train_labels=np.zeros((3, 6), np.int32)), [0, 1], 1),
    ),
    Case(T + "CurriculumTrainer.epoch_program", "seed", lambda: TRAINER.epoch_program(DATA, -1, 1)),
    Case(T + "benchmark_setting", "data", lambda: _setting(data=None)),
    Case(T + "benchmark_setting", "setting", lambda: _setting(setting="shift")),
    Case(T + "benchmark_setting", "seeds", lambda: _setting(seeds=[])),
    Case(T + "benchmark_setting", "noise_rate", lambda: _setting(noise_rate=1.5)),
    Case(T + "benchmark_setting", "noise_rate", lambda: _setting(noise_rate=None)),
    Case(
        T + "benchmark_setting",
        "imbalance_ratio",
        lambda: _setting(setting="imbalance", noise_rate=None, imbalance_ratio=0.5),
    ),
    Case(
        T + "benchmark_setting",
        "imbalance_ratio",
        lambda: _setting(setting="imbalance", noise_rate=None),
    ),
    Case(T + "benchmark_setting", "imbalance_seed", lambda: _setting(imbalance_seed=-1)),
    Case(T + "curriculum_from_config", "name", lambda: ct.curriculum_from_config("x", CONFIG)),
    Case(T + "curriculum_from_config", "config", lambda: ct.curriculum_from_config("spl", {})),
    Case(T + "epoch_cost_ratios", "trainers", lambda: _costs(trainers={"baseline": "x"})),
    Case(T + "epoch_cost_ratios", "data", lambda: _costs(data=None)),
    Case(T + "epoch_cost_ratios", "seeds", lambda: _costs(seeds=[])),
    Case(T + "epoch_cost_ratios", "num_epochs", lambda: _costs(num_epochs=0)),
    Case(T + "epoch_cost_ratios", "k", lambda: _costs(k=0)),
    Case(T + "epoch_cost_ratios", "baseline", lambda: _costs(baseline="none")),
    Case(T + "run_benchmark", "config", lambda: _benchmark(config={})),
    Case(T + "run_benchmark", "data", lambda: _benchmark(data=None)),
    Case(T + "run_benchmark", "init_fn", lambda: _benchmark(init_fn=None)),
    Case(T + "run_benchmark", "apply_fn", lambda: _benchmark(apply_fn=None)),
    Case(T + "run_benchmark", "workdir", lambda: _benchmark(workdir=None)),
    Case(T + "run_benchmark", "teacher_data", lambda: _benchmark(teacher_data="x")),
    Case(T + "run_benchmark_grid", "curricula", lambda: _grid(curricula={})),
    Case(T + "run_benchmark_grid", "settings", lambda: _grid(settings="standard")),
    Case(T + "run_benchmark_grid", "make_data", lambda: _grid(make_data=None)),
    Case(T + "run_benchmark_grid", "init_fn", lambda: _grid(init_fn=None)),
    Case(T + "run_benchmark_grid", "apply_fn", lambda: _grid(apply_fn=None)),
    Case(T + "run_benchmark_grid", "seeds", lambda: _grid(seeds=[-1])),
    Case(T + "run_benchmark_grid", "num_epochs", lambda: _grid(num_epochs=0)),
    Case(T + "run_benchmark_grid", "batch_size", lambda: _grid(batch_size=0)),
    Case(T + "run_benchmark_grid", "optimizer", lambda: _grid(optimizer={})),
    Case(T + "run_benchmark_grid", "workdir", lambda: _grid(workdir=None)),
    Case(T + "run_benchmark_grid", "seed_batching", lambda: _grid(seed_batching="pmap")),
    Case(T + "run_benchmark_grid", "eval_batch_size", lambda: _grid(eval_batch_size=0)),
    Case(T + "run_benchmark_grid", "teacher", lambda: _grid(teacher="x")),
    Case(T + "run_benchmark_grid", "chunk_steps", lambda: _grid(chunk_steps=0)),
    Case(T + "run_benchmark_grid", "mesh", lambda: _grid(mesh="runs")),
    Case(T + "scaled_curriculum", "name", lambda: _scaled(name="bogus")),
    Case(T + "scaled_curriculum", "num_epochs", lambda: _scaled(num_epochs=0)),
    Case(T + "scaled_curriculum", "lr", lambda: _scaled(lr=0.0)),
    Case(T + "scaled_curriculum", "spl_start_rate", lambda: _scaled(spl_start_rate=1.5)),
    Case(T + "scaled_curriculum", "grow_fraction", lambda: _scaled(grow_fraction=NAN)),
    Case(T + "scaled_curriculum", "schedules", lambda: _scaled(schedules=None)),
    Case(T + "scaled_curriculum", "schedules", lambda: _scaled(schedules={"lgl": {"inv": 0}})),
    Case(T + "scaled_curriculum", "reference_epochs", lambda: _scaled(reference_epochs=0)),
    Case(T + "summarize_runs", "runs", lambda: ct.summarize_runs({})),
    Case(
        T + "summarize_runs",
        "baseline",
        lambda: ct.summarize_runs({"standard": {"baseline": RESULT}}, baseline="none"),
    ),
    Case(T + "train_teacher", "teacher_data", lambda: _teacher(teacher_data=None)),
    Case(T + "train_teacher", "init_fn", lambda: _teacher(init_fn=None)),
    Case(T + "train_teacher", "apply_fn", lambda: _teacher(apply_fn=None)),
    Case(T + "train_teacher", "seed", lambda: _teacher(seed=-1)),
    Case(T + "train_teacher", "num_epochs", lambda: _teacher(num_epochs=0)),
    Case(T + "train_teacher", "batch_size", lambda: _teacher(batch_size=0)),
    Case(T + "train_teacher", "optimizer", lambda: _teacher(optimizer={"name": "sgd"})),
    Case(T + "train_teacher", "eval_batch_size", lambda: _teacher(eval_batch_size=0)),
    Case(T + "train_teacher", "seed_batching", lambda: _teacher(seed_batching="pmap")),
    Case(T + "with_teacher", "trainer", lambda: ct.with_teacher(None, {}, DATA)),
    Case(T + "with_teacher", "params", lambda: ct.with_teacher(TRAINER, None, DATA)),
    Case(T + "with_teacher", "data", lambda: ct.with_teacher(TRAINER, {}, None)),
]

# Public names of jaxlab.trainers.curriculum without a bad value to feed, by reason.
TRAINER_EXEMPT = {
    "CurriculumData": "task NamedTuple (checked by the functions that take it)",
    "TrainCarry": "state NamedTuple built by the trainer",
    "run_benchmark_grid:verbose": "a bool flag: both values are valid",
}


@pytest.mark.parametrize("case", TRAINER_CASES, ids=case_id)
def test_trainer_bad_input(case: Case) -> None:
    check(case)


def test_every_public_trainer_argument_has_a_row() -> None:
    covered = {(case.kernel.removeprefix(T), case.arg) for case in TRAINER_CASES}
    missing = []
    for name in ct.__all__:
        obj = getattr(ct, name)
        if name in TRAINER_EXEMPT or not callable(obj):
            continue
        for arg in inspect.signature(obj).parameters:
            if (name, arg) not in covered and f"{name}:{arg}" not in TRAINER_EXEMPT:
                missing.append(f"{name}:{arg}")
    assert not missing, f"trainer arguments without a bad-input row or a reason: {missing}"
