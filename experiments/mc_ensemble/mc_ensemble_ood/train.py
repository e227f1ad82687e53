"""MC Ensemble vs naive Deep Ensemble vs a wider single model, OOD detection.

Digits 0..4 against digits 5..9 and Fashion-MNIST + noise (quick, smoke), or CIFAR-10
against CIFAR-100 (near) and SVHN (far), read from TFDS (paper).

Every member is the same MLP encoder (features = its last hidden layer) with a linear CE head
and a contrastive projection head. Per seed: 3 naive members (CE) and 3 MC members (CE,
SupCon, SimCLR), all trained in one program vmapped over seeds × members (the task is an
argument, so the three losses share one compiled step); then a linear probe on frozen
features for every member. Scores: KNN on L2-normalised features, standardised per member on
held-out ID data and averaged.
"""

from __future__ import annotations

import functools
import itertools
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from sklearn.datasets import load_digits

from jaxlab.data import image_ops, load_images
from jaxlab.data.streaming import open_source
from jaxlab.nn.contrastive import simclr_loss, supcon_loss
from jaxlab.ood import (
    affine_coupling_r2,
    auroc,
    ensemble_score,
    fpr_at_tpr,
    knn_score,
    linear_cka,
    loss_barrier,
    weight_match_mlp,
)
from jaxlab.train import (
    Checkpointer,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    runs_sharding,
    scan_run,
    segmented_scan_run,
)
from jaxlab.train.lifecycle import padded_runs, run_lanes
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract

CE, SUPCON, SIMCLR = 0, 1, 2
#: Training images of each TFDS ID set (for plans made without the data).
ID_TRAIN_SIZES = {"cifar10": 50000, "cifar100": 50000}
NAIVE_TASKS, MC_TASKS = (CE, CE, CE), (CE, SUPCON, SIMCLR)


def _data(config):
    """ID train / val / test, near- and far-OOD inputs as flat ``[n, d]`` pixels in [0, 1]:
    digits 0..4 vs 5..9 and Fashion-MNIST + noise (quick, smoke), or TFDS CIFAR-10 vs
    ``config.near_sets`` and ``config.far_sets`` (:func:`_tfds_data`)."""
    if config.id_set != "digits":
        return _tfds_data(config)
    x, y = load_digits(return_X_y=True)
    x, y = (x / 16.0).astype(np.float32), y.astype(np.int32)
    rng = np.random.default_rng(config.data_seed)
    ind = rng.permutation(np.flatnonzero(y < config.num_classes))
    n = len(ind)
    train_end, val_end = config.split_fractions
    train, val, test = np.split(ind, [int(train_end * n), int(val_end * n)])
    near = np.flatnonzero(y >= config.num_classes)
    fashion = load_images("fashion_mnist", "test", config.data_dir or None)[0][..., 0]
    fashion = fashion[rng.permutation(len(fashion))[: config.num_far]]
    fashion = np.asarray(
        jax.image.resize(fashion, (len(fashion), 8, 8), "linear", antialias=True)
    ).reshape(len(fashion), 64)
    noise = rng.uniform(0.0, 1.0, (config.num_far, 64)).astype(np.float32)
    return {
        "train": (x[train], y[train]),
        "val": x[val],
        "test": x[test],
        "near": x[near],
        "test_labels": y[test],
        "far": np.concatenate([fashion, noise]),
    }


def _tfds_data(config):
    """``config.id_set``'s training split (cut by ``split_fractions[0]`` into train and val
    after a ``data_seed`` permutation) and test split; each OOD set's test split, resized
    to the ID image size (:class:`jaxlab.data.image_ops.Resize`), the first ``num_far``
    images of each. Pixels in [0, 1] (the augmentation clips there), flattened."""
    shape = tuple(config.image_shape)
    unit = ((0.0,) * shape[-1], (1.0,) * shape[-1])  # decode only: pixels in [0, 1]

    def read(name, split, limit=None, label=True):
        ops = image_ops.eval_ops(
            name,
            size=shape[0],
            channels=shape[-1],
            stats=unit,
            label_key="label" if label else None,
        )
        arrays = image_ops.to_arrays(
            open_source(name, split, data_dir=config.data_dir or None), ops, limit=limit
        )
        flat = arrays["image"].reshape(len(arrays["image"]), -1)
        return flat, arrays.get("label")

    x, y = read(config.id_set, "train")
    rng = np.random.default_rng(config.data_seed)
    ind = rng.permutation(len(x))
    train, val = np.split(ind, [int(config.split_fractions[0] * len(x))])
    x_test, y_test = read(config.id_set, "test")
    near = np.concatenate([read(n, "test", config.num_far, False)[0] for n in config.near_sets])
    far = np.concatenate([read(n, "test", config.num_far, False)[0] for n in config.far_sets])
    return {
        "train": (x[train], y[train]),
        "val": x[val],
        "test": x_test,
        "near": near,
        "test_labels": y_test,
        "far": far,
    }


def _init_member(key, widths, num_classes, proj_dim, in_dim=64):
    sizes = (in_dim, *widths)
    keys = jax.random.split(key, len(sizes) + 2)

    def dense(k, n_in, n_out):
        return (jax.random.normal(k, (n_in, n_out)) * jnp.sqrt(2.0 / n_in), jnp.zeros(n_out))

    encoder = [dense(k, a, b) for k, a, b in zip(keys, sizes[:-1], sizes[1:], strict=False)]
    head = dense(keys[-2], widths[-1], num_classes)
    k1, k2 = jax.random.split(keys[-1])
    proj = [dense(k1, widths[-1], widths[-1]), dense(k2, widths[-1], proj_dim)]
    return {"encoder": encoder, "head": head, "proj": proj}


def _features(encoder, x):
    h = x
    for w, b in encoder:
        h = jax.nn.relu(h @ w + b[None])
    return h


def _augment(key, x, noise_std, max_shift, shape=(8, 8)):
    """Random cyclic shifts by up to ``max_shift`` pixels and Gaussian pixel noise, clipped
    to [0, 1], of flat images of ``shape``."""
    k_shift, k_noise = jax.random.split(key)
    shifts = jax.random.randint(k_shift, (x.shape[0], 2), -max_shift, max_shift + 1)
    imgs = x.reshape(-1, *shape)
    imgs = jax.vmap(lambda im, s: jnp.roll(im, s, axis=(0, 1)))(imgs, shifts)
    imgs = imgs + noise_std * jax.random.normal(k_noise, imgs.shape)
    return jnp.clip(imgs, 0.0, 1.0).reshape(x.shape)


def _member_init(key, task, config):
    """A member's training carry: ``((params, optimiser state), run key, task)``."""
    k_init, k_run = jax.random.split(key)
    params = _init_member(
        k_init,
        tuple(config.hidden),
        config.num_classes,
        config.proj_dim,
        int(np.prod(config.image_shape)),
    )
    return (params, make_optimizer(config.optimizer).init(params)), k_run, task


def _member_step(x, y, config):
    """``step(carry, t)`` of one member (carry: :func:`_member_init`): a minibatch of the ID
    training set in two augmented views, one optimiser step on the loss its task selects
    (CE, SupCon or SimCLR)."""
    opt = make_optimizer(config.optimizer)

    def loss_fn(params, batch):
        xb, yb, key, task = batch
        k1, k2 = jax.random.split(key)
        shape = tuple(config.image_shape)
        v1 = _augment(k1, xb, config.noise_std, config.max_shift, shape)
        v2 = _augment(k2, xb, config.noise_std, config.max_shift, shape)
        f1, f2 = _features(params["encoder"], v1), _features(params["encoder"], v2)
        w, b = params["head"]
        ce = optax.softmax_cross_entropy_with_integer_labels(f1 @ w + b[None], yb).mean()

        def project(f):
            (w1, b1), (w2, b2) = params["proj"]
            return jax.nn.relu(f @ w1 + b1[None]) @ w2 + b2[None]

        z1, z2 = project(f1), project(f2)
        sup = supcon_loss(jnp.concatenate([z1, z2]), jnp.concatenate([yb, yb]), config.temperature)
        sim = simclr_loss(z1, z2, config.temperature)
        return jnp.where(task == CE, ce, jnp.where(task == SUPCON, sup, sim))

    update = optimizer_step(loss_fn, opt)

    def step(carry, t):
        state, k_run, task = carry
        key = jax.random.fold_in(k_run, t)
        idx = jax.random.randint(key, (config.batch_size,), 0, x.shape[0])
        state, loss = update(state, (x[idx], y[idx], jax.random.fold_in(key, 1), task))
        return (state, k_run, task), loss

    return step


def _train_member(key, task, x, y, config):
    """One member's whole run (a lax.scan); ``task`` selects CE, SupCon or SimCLR."""
    ((params, _), _, _), _ = scan_run(
        _member_step(x, y, config), _member_init(key, task, config), length=config.train_steps
    )
    return params


def _train_members(keys, tasks, x, y, config, mesh, workdir):
    """Every member's run (``keys``, ``tasks``: [runs]) as one vmapped step, in
    ``config.segments`` checkpointed pieces under ``workdir`` (a killed run resumes
    bit-identically); the runs split over the mesh's ``runs`` axis, padded to it with
    copies of run 0 (dropped). Returns the members' parameters, [runs, ...]."""
    n = keys.shape[0]
    lanes = run_lanes(n, mesh)
    carry = batch_runs(lambda k, t: _member_init(k, t, config), mesh=mesh)(
        keys[lanes], tasks[lanes]
    )
    ((params, _), _, _), _ = segmented_scan_run(
        jax.vmap(_member_step(x, y, config), in_axes=(0, None)),
        carry,
        length=config.train_steps,
        segments=config.segments,
        checkpointer=Checkpointer(workdir),
        mesh=mesh,
    )
    return jax.tree.map(lambda a: a[:n], params)


def _fit_probe(features, y, num_classes, steps, optimizer):
    """Linear probe on frozen features (full-batch cross-entropy, ``optimizer`` a config
    entry for :func:`jaxlab.train.make_optimizer`)."""
    w0 = (jnp.zeros((features.shape[1], num_classes)), jnp.zeros(num_classes))
    opt = make_optimizer(optimizer)
    step = optimizer_step(
        lambda p, _: optax.softmax_cross_entropy_with_integer_labels(
            features @ p[0] + p[1][None], y
        ).mean(),
        opt,
    )
    (p, _), _ = scan_run(step, (w0, opt.init(w0)), length=steps)
    return p


def _ce_loss(mlp, x, y):
    h = x
    for w, b in mlp[:-1]:
        h = jax.nn.relu(h @ w + b[None])
    w, b = mlp[-1]
    return optax.softmax_cross_entropy_with_integer_labels(h @ w + b[None], y).mean()


def _ood_metrics(s_id, s_near, s_far):
    return {
        "fpr95_near": 100.0 * fpr_at_tpr(s_id, s_near),
        "fpr95_far": 100.0 * fpr_at_tpr(s_id, s_far),
        "auroc_near": 100.0 * auroc(s_id, s_near),
        "auroc_far": 100.0 * auroc(s_id, s_far),
    }


def _evaluate(members, probes, wide, inputs, y_test, k, num_members):
    """OOD metrics of the naive ensemble, MC Ensemble and the wide model, per seed."""

    def knn_all(encoders):
        feats = {s: jax.vmap(_features, in_axes=(0, None))(encoders, x) for s, x in inputs.items()}
        scores = {
            s: jax.vmap(lambda f, b: knn_score(f, b, k))(feats[s], feats["train"])
            for s in ("val", "test", "near", "far")
        }
        return feats, scores

    feats, scores = knn_all(members["encoder"])
    _, wide_scores = knn_all(wide["encoder"])
    seeds = scores["val"].shape[0] // num_members
    per_seed = {s: v.reshape(seeds, num_members, -1) for s, v in scores.items()}
    out = {}
    for name, rows in (("naive", slice(0, 3)), ("mc", slice(3, 6))):
        ens = {
            s: jax.vmap(ensemble_score)(per_seed[s][:, rows], per_seed["val"][:, rows])
            for s in ("test", "near", "far")
        }
        for key, v in jax.vmap(_ood_metrics)(ens["test"], ens["near"], ens["far"]).items():
            out[f"{name}_{key}"] = v
    ens = {
        s: jax.vmap(ensemble_score)(wide_scores[s][:, None], wide_scores["val"][:, None])
        for s in ("test", "near", "far")
    }
    for key, v in jax.vmap(_ood_metrics)(ens["test"], ens["near"], ens["far"]).items():
        out[f"wide_{key}"] = v
    logits = jnp.einsum("mnd,mdc->mnc", feats["test"], probes[0]) + probes[1][:, None, :]
    accuracy = 100.0 * jnp.mean(logits.argmax(-1) == y_test[None, :], axis=-1)
    out["probe_accuracy"] = accuracy.reshape(seeds, num_members)
    return out, feats["test"]


@functools.partial(jax.jit, static_argnums=7)
@functools.partial(jax.vmap, in_axes=(0, 0, 0, 0, 0, None, None, None))
def _pair_program(mlp_a, mlp_b, mlp_b_aligned, f_a, f_b, x, y, num_points):
    """Per member pair: coupling proxy, CKA, weight-matched and raw barriers."""

    def loss(m):
        return _ce_loss(m, x, y)

    return jnp.stack(
        [
            affine_coupling_r2(f_a, f_b),
            linear_cka(f_a, f_b),
            loss_barrier(loss, mlp_a, mlp_b_aligned, num_points).barrier,
            loss_barrier(loss, mlp_a, mlp_b, num_points).barrier,
        ]
    )


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    """Trains every seed's 6 members (+ the wide model) and evaluates OOD detection.

    The members' and the wide models' training keep checkpoints under ``workdir``."""
    data = _data(config)
    x_tr, y_tr = (jnp.asarray(a) for a in data["train"])
    seeds = np.arange(config.seed, config.seed + config.num_seeds)
    tasks = np.asarray(NAIVE_TASKS + MC_TASKS)  # members 0-2 naive, 3-5 MC
    m = len(tasks)
    member_keys = jnp.stack(
        [jax.random.fold_in(jax.random.key(int(s)), j) for s in seeds for j in range(m)]
    )
    member_tasks = jnp.asarray(np.tile(tasks, len(seeds)))
    # Members, wide models and probes are independent runs split over the runs axis.
    mesh = mesh_from_config(config, RUNS_AXIS)
    members = _train_members(
        member_keys, member_tasks, x_tr, y_tr, config, mesh, os.path.join(workdir, "members")
    )
    wide_config = ml_collections.ConfigDict(config.to_dict())
    wide_config.hidden = tuple(config.wide_factor * h for h in config.hidden)
    wide_keys = jnp.stack([jax.random.fold_in(jax.random.key(int(s)), 99) for s in seeds])
    wide = _train_members(
        wide_keys,
        jnp.full(len(seeds), CE),
        x_tr,
        y_tr,
        wide_config,
        mesh,
        os.path.join(workdir, "wide"),
    )
    probes = batch_runs(
        lambda enc, x, y: _fit_probe(
            _features(enc, x), y, config.num_classes, config.probe_steps, config.probe_optimizer
        ),
        in_axes=(0, None, None),
        mesh=mesh,
    )(members["encoder"], x_tr, y_tr)

    inputs = {
        s: jnp.asarray(data[s][0] if s == "train" else data[s])
        for s in ("train", "val", "test", "near", "far")
    }
    if config.knn_bank:  # the KNN bank (and the barrier's loss): the first training rows
        inputs["train"] = inputs["train"][: config.knn_bank]
        x_tr, y_tr = x_tr[: config.knn_bank], y_tr[: config.knn_bank]
    evaluate = jax.jit(_evaluate, static_argnums=(5, 6))
    metrics, test_feats = evaluate(
        members, probes, wide, inputs, jnp.asarray(data["test_labels"]), config.knn_k, m
    )
    results: dict[str, list[float]] = {
        k: np.asarray(v).tolist() for k, v in metrics.items() if k != "probe_accuracy"
    }
    accuracy = np.asarray(metrics["probe_accuracy"])
    for name, j in (("ce", 3), ("supcon", 4), ("simclr", 5)):
        results[f"{name}_probe_accuracy"] = accuracy[:, j].tolist()

    # Member pairs: encoder + a linear head (the CE member's own, a probe for contrastive
    # members) share one loss, CE on ID train; B is weight-matched to A on the host.
    host = jax.device_get((members, probes, test_feats))
    (members_h, probes_h, feats_h) = host

    def mlp(j):
        enc = [(w[j], b[j]) for w, b in members_h["encoder"]]
        head = members_h["head"] if tasks[j % m] == CE else probes_h
        return enc + [(head[0][j], head[1][j])]

    pairs, groups = [], []
    for i in range(len(seeds)):
        for name, rows in (("naive", (0, 1, 2)), ("mc", (3, 4, 5))):
            for a, b in itertools.combinations(rows, 2):
                pairs.append((i * m + a, i * m + b))
                groups.append((i, name))
    stack = lambda trees: jax.tree.map(lambda *x: jnp.asarray(np.stack(x), jnp.float32), *trees)  # noqa: E731
    mlps_a = stack([mlp(a) for a, _ in pairs])
    mlps_b = stack([mlp(b) for _, b in pairs])
    aligned = stack([weight_match_mlp(mlp(a), mlp(b), key=jax.random.key(0)) for a, b in pairs])
    f_a = jnp.asarray(np.stack([feats_h[a] for a, _ in pairs]))
    f_b = jnp.asarray(np.stack([feats_h[b] for _, b in pairs]))
    stats = np.asarray(
        _pair_program(mlps_a, mlps_b, aligned, f_a, f_b, x_tr, y_tr, config.barrier_points)
    )
    for name in ("naive", "mc"):
        for col, key in enumerate(("coupling", "cka", "barrier", "barrier_raw")):
            results[f"{name}_{key}"] = [
                float(np.mean([stats[p, col] for p, g in enumerate(groups) if g == (i, name)]))
                for i in range(len(seeds))
            ]
    return results


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one step of every member's training (seeds × 6 members, the
    program of :func:`train_and_evaluate`'s ``train``), members split over ``runs``, the ID
    training set replicated. A call is the whole training (its step scan counted at its
    trip count). The evaluation (:func:`_evaluate`: KNN scores of every member and wide
    model on the val, test and OOD sets, the probes' accuracy; once per preset, replicated)
    is a program of its own; the wide model's and the probes' training are not planned."""
    members = config.num_seeds * len(NAIVE_TASKS + MC_TASKS)
    lanes = padded_runs(members, mesh)
    split = runs_sharding(mesh)
    rep = replicated(mesh)
    n_id = (
        int(np.sum(load_digits().target < config.num_classes))
        if config.id_set == "digits"
        else ID_TRAIN_SIZES[config.id_set]
    )
    n_train = int(config.split_fractions[0] * n_id)
    dim = int(np.prod(config.image_shape))
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    args = (
        abstract(keys, split),
        jax.ShapeDtypeStruct((lanes,), jnp.int32, sharding=split),
        jax.ShapeDtypeStruct((n_train, dim), jnp.float32, sharding=rep),
        jax.ShapeDtypeStruct((n_train,), jnp.int32, sharding=rep),
    )
    train = jax.vmap(
        lambda k, t, x, y: _train_member(k, t, x, y, config), in_axes=(0, 0, None, None)
    )
    if config.id_set == "digits":
        n_test = n_id - int(config.split_fractions[1] * n_id)
        near, far = int(np.sum(load_digits().target >= config.num_classes)), 2 * config.num_far
    else:
        n_test = 10_000  # the CIFAR test splits
        near, far = config.num_far * len(config.near_sets), config.num_far * len(config.far_sets)
    rows = {
        "train": config.knn_bank or n_train,
        "val": n_id - n_train - (n_test if config.id_set == "digits" else 0),
        "test": n_test,
        "near": near,
        "far": far,
    }
    wide_config = ml_collections.ConfigDict(config.to_dict())
    wide_config.hidden = tuple(config.wide_factor * h for h in config.hidden)

    def params(cfg, count):
        ks = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), count))
        return jax.eval_shape(jax.vmap(lambda k: _member_init(k, CE, cfg)[0][0]), ks)

    features = config.hidden[-1]
    probes = (
        jax.ShapeDtypeStruct((members, features, config.num_classes), jnp.float32),
        jax.ShapeDtypeStruct((members, config.num_classes), jnp.float32),
    )
    evaluation = PlanSpec(
        fn=lambda m, p, w, inputs, y: _evaluate(
            m, p, w, inputs, y, config.knn_k, len(NAIVE_TASKS + MC_TASKS)
        ),
        abstract_args=abstract(
            (
                params(config, members),
                probes,
                params(wide_config, config.num_seeds),
                {s: jax.ShapeDtypeStruct((r, dim), jnp.float32) for s, r in rows.items()},
                jax.ShapeDtypeStruct((n_test,), jnp.int32),
            ),
            rep,
        ),
        steps_per_run=1,
        num_runs=1,
        note="KNN OOD scores of every member and wide model, probe accuracy",
        name="eval",
    )
    return PlanSpec(
        fn=train,
        abstract_args=args,
        steps_per_run=1,
        num_runs=members,
        runs_per_call=members,
        note=f"the {config.train_steps} Adam steps (two augmented views, CE/SupCon/SimCLR) "
        "of every member; wide model and probe training not planned",
        programs=(evaluation,),
    )
