"""Renders the data, trains the four arms (3 seeds batched with vmap) and scores their answers."""

from __future__ import annotations

import dataclasses
import os

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from jaxlab.audio import (
    FeatureConfig,
    WordTokenizer,
    audio_features,
    encode_example,
    key_weighted_score,
    make_instructions,
    num_frames,
    parse_key,
    parse_tempo,
    render_clip,
    sample_metadata,
    tempo_accuracy,
)
from jaxlab.audio.instructions import AUDIO
from jaxlab.nn import AudioLM, answer_loss, generate
from jaxlab.train import (
    Checkpointer,
    atomic_write_json,
    batch_runs,
    make_optimizer,
    mesh_from_config,
    optimizer_step,
    resumable,
    runs_sharding,
    segmented_scan_run,
    to_host,
)
from jaxlab.train.lifecycle import padded_runs
from jaxlab.train.mesh import RUNS_AXIS, replicated
from jaxlab.train.plan import PlanSpec, abstract

FEATURES = FeatureConfig()


def clip_metadata(config: ml_collections.ConfigDict) -> tuple[list, int, int]:
    """``(metadata of the train + test clips, samples and frames of the longest clip)``."""
    rng = np.random.default_rng(config.data_seed)
    total = config.num_train_clips + config.num_test_clips
    metas = [sample_metadata(rng, tuple(config.duration_range)) for _ in range(total)]
    max_samples = int(round(max(config.duration_range) * config.sample_rate))
    return metas, max_samples, num_frames(max_samples, FEATURES)


def make_clips(config: ml_collections.ConfigDict, workdir: str):
    """Metadata of train + test clips and their frozen features ``[clips, frames,
    features]`` with their valid frames ``[clips, frames]``, computed once per data setting
    and kept in ``workdir`` (:func:`jaxlab.train.resumable`: written by process 0,
    atomically, under a digest of the setting)."""
    metas, max_samples, frames = clip_metadata(config)
    total = len(metas)
    setting = [
        config.data_seed,
        total,
        list(config.duration_range),
        config.sample_rate,
        FEATURES._asdict(),
    ]

    def extract_all() -> dict[str, np.ndarray]:
        extract = jax.jit(audio_features)
        features = np.zeros((total, frames, FEATURES.num_features), np.float32)
        valid = np.zeros((total, frames), bool)
        chunk = 16
        for start in range(0, total, chunk):
            clips = [render_clip(m, config.sample_rate) for m in metas[start : start + chunk]]
            audio = np.zeros((len(clips), max_samples), np.float32)
            for i, clip in enumerate(clips):
                audio[i, : len(clip)] = clip
                valid[start + i, : num_frames(len(clip), FEATURES)] = True
            features[start : start + len(clips)] = np.asarray(extract(audio))
        return {"features": features, "valid": valid}

    saved = resumable(workdir, "llark_features", setting, extract_all)
    return metas, saved["features"], saved["valid"]


def standardize(features, valid, num_train):
    """z-scores with train statistics over valid frames; padding set to 0; a validity channel."""
    train = features[:num_train][valid[:num_train]]
    mean, std = train.mean(0), train.std(0) + 1e-6
    z = (features - mean) / std * valid[..., None]
    return np.concatenate([z, valid[..., None].astype(np.float32)], axis=-1).astype(np.float32)


def encode_split(tokenizer, instructions, num_audio, length):
    rows = [
        encode_example(tokenizer, i.question, i.answer, num_audio, length) for i in instructions
    ]
    prompts = [
        encode_example(tokenizer, i.question, None, num_audio, length)[0] for i in instructions
    ]
    return {
        "tokens": np.stack([r[0] for r in rows]),
        "mask": np.stack([r[1] for r in rows]),
        "prompt": np.stack(prompts),
        "prompt_length": np.array([r[2] for r in rows]),
        "clip": np.array([i.clip for i in instructions]),
    }


def _check_schedule(config: ml_collections.ConfigDict) -> None:
    """Raises ValueError when ``config.optimizer``'s schedule does not span ``num_steps``."""
    decay = config.optimizer.learning_rate.decay_steps
    if decay != config.num_steps:
        raise ValueError(
            f"optimizer.learning_rate.decay_steps ({decay}) must equal num_steps "
            f"({config.num_steps}); set it, and warmup_steps, with num_steps"
        )


def arm_optimizer(config: ml_collections.ConfigDict, trainable) -> optax.GradientTransformation:
    """``config.optimizer``, then the updates of frozen parameters zeroed (``trainable``: a
    0/1 pytree like the params; the projector-only arm)."""
    frozen = optax.stateless(
        lambda updates, _: jax.tree.map(lambda u, m: u * m, updates, trainable)
    )
    return optax.chain(make_optimizer(config.optimizer), frozen)


def make_step(model: AudioLM, config: ml_collections.ConfigDict):
    """One training step of one run: ``step(state, key, t, gate, trainable, data)`` ->
    ``(state', loss)`` with ``state = (params, opt_state)``.

    ``gate`` (0 or 1) multiplies the audio features (0: the text-only arm sees the same
    constant at every placeholder); ``trainable`` as in :func:`arm_optimizer`. Step ``t``'s
    batch of ``config.batch_size`` instructions is drawn with ``fold_in(key, t)``.
    """

    def step(state, key, t, gate, trainable, data):
        def loss_fn(p, batch):
            audio = data["audio"][batch["clip"]] * gate
            logits = model.apply(p, batch["tokens"], audio)
            return answer_loss(logits, batch["tokens"], batch["mask"])

        idx = jax.random.choice(
            jax.random.fold_in(key, t), data["tokens"].shape[0], (config.batch_size,), replace=False
        )
        batch = {k: data[k][idx] for k in ("tokens", "mask", "clip")}
        return optimizer_step(loss_fn, arm_optimizer(config, trainable))(state, batch)

    return step


def make_trainer(model: AudioLM, config: ml_collections.ConfigDict, mesh):
    """``train(workdir, keys, params, gate, trainable, data) -> (params, losses [T, R])``:
    ``config.num_steps`` steps of every run (leading axis of ``keys`` and ``params``), the
    runs split over ``mesh``'s ``runs`` axis, as one scan in ``config.segments`` pieces
    checkpointed in ``workdir`` (a killed arm resumes bit-identically).

    Raises:
      ValueError: ``config.optimizer``'s schedule does not span ``num_steps``.
    """
    _check_schedule(config)
    init = batch_runs(
        lambda p, trainable: (p, arm_optimizer(config, trainable).init(p)),
        in_axes=(0, None),
        mesh=mesh,
    )
    step = batch_runs(make_step(model, config), in_axes=(0, 0, None, None, None, None), mesh=mesh)

    def scan_step(carry, t):
        state, keys, shared = carry
        state, loss = step(state, keys, t, *shared)
        return (state, keys, shared), loss

    def train(workdir, keys, params, gate, trainable, data):
        shared = (jnp.asarray(gate, jnp.float32), trainable, data)
        ((params, _), _, _), losses = segmented_scan_run(
            scan_step,
            (init(params, trainable), keys, shared),
            length=config.num_steps,
            segments=config.segments,
            checkpointer=Checkpointer(workdir),
            mesh=mesh,
            carry_axes=(0, 0, None),
        )
        return params, losses

    return train


def make_generate(model: AudioLM):
    """Jitted greedy completion of a batch of prompts (one compile per batch shape)."""
    return jax.jit(
        lambda p, prompt, length, a: generate(p, model, prompt, length, a, jax.random.key(0))
    )


def answers(gen, params, split, audio, gate, batch_size, tokenizer) -> list[str]:
    """Greedy answers (text) of every prompt of ``split``; the last batch is padded."""
    texts = []
    n = len(split["prompt"])
    for start in range(0, n, batch_size):
        idx = np.minimum(np.arange(start, start + batch_size), n - 1)
        out = np.asarray(
            gen(
                params,
                split["prompt"][idx],
                split["prompt_length"][idx],
                audio[split["clip"][idx]] * gate,
            )
        )
        for row, i in zip(out, idx[: min(batch_size, n - start)], strict=False):
            texts.append(tokenizer.decode(row[split["prompt_length"][i] :]))
    return texts


def score(texts, instructions, metas) -> dict[str, float]:
    """Metrics per task from generated answers (answers that do not parse count as wrong).

    key / caption / mood: weighted key score of the key named in the answer; tempo /
    caption / slow_dance: tempo Acc1 and Acc2 of the BPM named; time_signature /
    instrument: exact answer; slow_dance: the yes/no verdict; mood: bright vs dark.
    """
    by_task: dict[str, list] = {}
    for text, ins in zip(texts, instructions, strict=True):
        by_task.setdefault(ins.task, []).append((text, metas[ins.clip], ins.answer))
    out = {}
    for task, rows in by_task.items():
        said, clips, refs = zip(*rows, strict=True)
        if task in ("key", "caption", "mood"):
            out[f"{task}_key_score"] = float(
                key_weighted_score([m.key for m in clips], [parse_key(t) for t in said]).mean()
            )
        if task in ("tempo", "caption", "slow_dance"):
            acc1, acc2 = tempo_accuracy(
                np.array([m.tempo_bpm for m in clips]), np.array([parse_tempo(t) for t in said])
            )
            out[f"{task}_tempo_acc1"] = float(acc1.mean())
            out[f"{task}_tempo_acc2"] = float(acc2.mean())
        if task in ("time_signature", "instrument"):
            out[f"{task}_accuracy"] = float(
                np.mean([t == r for t, r in zip(said, refs, strict=True)])
            )
        if task in ("slow_dance", "mood"):
            n_words = 1 if task == "slow_dance" else 3
            out[f"{task}_accuracy"] = float(
                np.mean(
                    [
                        t.replace(":", " ").split()[:n_words]
                        == r.replace(":", " ").split()[:n_words]
                        for t, r in zip(said, refs, strict=True)
                    ]
                )
            )
    return out


def probe(features, valid, metas, num_train, seed, c: float, max_iter: int) -> dict[str, float]:
    """Logistic-regression probe on time-pooled frozen features (mean and std over frames)."""
    count = valid.sum(1, keepdims=True)[..., None]
    mask = valid[..., None]
    mean = (features * mask).sum(1) / count[:, 0]
    std = np.sqrt((((features - mean[:, None]) ** 2) * mask).sum(1) / count[:, 0])
    x = (
        StandardScaler()
        .fit(np.concatenate([mean, std], 1)[:num_train])
        .transform(np.concatenate([mean, std], 1))
    )
    out = {}
    test = metas[num_train:]
    for name, labels in (
        ("key", [m.key for m in metas]),
        ("tempo", [int(m.tempo_bpm) for m in metas]),
    ):
        clf = LogisticRegression(max_iter=max_iter, C=c, random_state=seed)
        clf.fit(x[:num_train], labels[:num_train])
        pred = clf.predict(x[num_train:])
        if name == "key":
            out["key_score"] = float(key_weighted_score([m.key for m in test], list(pred)).mean())
        else:
            acc1, acc2 = tempo_accuracy(
                np.array([m.tempo_bpm for m in test]), pred.astype(np.float32)
            )
            out["tempo_acc1"], out["tempo_acc2"] = float(acc1.mean()), float(acc2.mean())
    return out


def instructions_and_model(config: ml_collections.ConfigDict, metas: list, frames: int):
    """``(train, test, seen-phrasing instructions, tokenizer, sequence length, model)``."""
    n_train = config.num_train_clips
    rng = np.random.default_rng(config.data_seed + 1)
    train_ins = make_instructions(
        metas[:n_train], config.tasks, config.held_out_phrasings, "train", rng
    )
    test_clips = metas[n_train:]
    test_ins = [
        dataclass_shift(i, n_train)
        for i in make_instructions(test_clips, config.tasks, config.held_out_phrasings, "test", rng)
    ]
    seen_ins = [
        dataclass_shift(i, n_train)
        for i in make_instructions(
            test_clips, ("key", "tempo"), config.held_out_phrasings, "train", rng
        )
    ]
    tokenizer = WordTokenizer.fit([i.question + " " + i.answer for i in train_ins])
    lengths = [len(tokenizer.encode(i.question + " " + i.answer)) for i in train_ins + test_ins]
    length = frames + 5 + max(lengths) + 2
    model = AudioLM(
        vocab_size=len(tokenizer),
        audio_token_id=tokenizer.id(AUDIO),
        max_len=length,
        dim=config.dim,
        depth=config.depth,
        num_heads=config.num_heads,
        mlp_dim=config.mlp_dim,
    )
    return train_ins, test_ins, seen_ins, tokenizer, length, model


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict[str, list[float]]:
    metas, raw, valid = make_clips(config, workdir)
    n_train = config.num_train_clips
    audio = standardize(raw, valid, n_train)
    frames = audio.shape[1]
    train_ins, test_ins, seen_ins, tokenizer, length, model = instructions_and_model(
        config, metas, frames
    )
    train = encode_split(tokenizer, train_ins, frames, length)
    data = {
        "audio": jnp.asarray(audio),
        "tokens": jnp.asarray(train["tokens"]),
        "mask": jnp.asarray(train["mask"]),
        "clip": jnp.asarray(train["clip"]),
    }

    seeds = [config.seed + s for s in range(config.num_seeds)]
    mesh = mesh_from_config(config, RUNS_AXIS)
    lanes = padded_runs(len(seeds), mesh)
    # one run per lane: the seeds, then copies of the first seed's run up to the devices
    keys = jnp.stack([jax.random.key(s) for s in seeds + seeds[:1] * (lanes - len(seeds))])
    init = jax.vmap(lambda k: model.init(k, train["tokens"][:1], audio[:1]))(keys)
    everything = jax.tree.map(lambda x: jnp.ones((), x.dtype), init)
    projector_only = {
        "params": {
            name: jax.tree.map(
                lambda x, on=float(name == "projector"): jnp.full((), on, x.dtype), v
            )
            for name, v in init["params"].items()
        }
    }
    train_lm = make_trainer(model, config, mesh)
    text_keys = jax.vmap(lambda k: jax.random.fold_in(k, 1))(keys)
    arms = {}
    arms["full"], _ = train_lm(os.path.join(workdir, "full"), keys, init, 1.0, everything, data)
    arms["text"], _ = train_lm(
        os.path.join(workdir, "text"), text_keys, init, 0.0, everything, data
    )
    # the same step: LM frozen by the update mask, projector trained (ablation)
    arms["projector"], _ = train_lm(
        os.path.join(workdir, "projector"), keys, arms["text"], 1.0, projector_only, data
    )
    gates = {"full": 1.0, "text": 0.0, "projector": 1.0}

    test = encode_split(tokenizer, test_ins, frames, length)
    seen = encode_split(tokenizer, seen_ins, frames, length)
    gen = make_generate(model)
    results: dict[str, list[float]] = {}
    examples = {}
    for arm, params in arms.items():
        params = to_host(params)  # host copies: picking a run is then no collective
        for s in range(len(seeds)):
            p = jax.tree.map(lambda x, s=s: x[s], params)
            texts = answers(gen, p, test, audio, gates[arm], config.eval_batch_size, tokenizer)
            metrics = score(texts, test_ins, metas)
            seen_metrics = score(
                answers(gen, p, seen, audio, gates[arm], config.eval_batch_size, tokenizer),
                seen_ins,
                metas,
            )
            metrics.update({f"{k}_seen_phrasing": v for k, v in seen_metrics.items()})
            for name, value in metrics.items():
                results.setdefault(f"{_rename(name)}_{arm}", []).append(value)
            if s == 0:
                examples[arm] = [
                    (i.question, t, i.answer)
                    for i, t in list(zip(test_ins, texts, strict=True))[: len(config.tasks)]
                ]
    probe_metrics = probe(
        raw, valid, metas, n_train, config.seed, config.probe_c, config.probe_max_iter
    )
    for name, value in probe_metrics.items():
        results[f"{name}_probe"] = [value] * len(seeds)
    results["key_score_gap_to_probe"] = [
        p - f for p, f in zip(results["key_score_probe"], results["key_score_full"], strict=True)
    ]
    atomic_write_json(os.path.join(workdir, "llark_examples.json"), examples)
    return results


def _rename(name: str) -> str:
    """``key_key_score`` → ``key_score``; ``tempo_tempo_acc1`` → ``tempo_acc1``."""
    return name.replace("key_key_", "key_").replace("tempo_tempo_", "tempo_")


def dataclass_shift(ins, offset):
    """The instruction with its clip index moved by ``offset`` (test clips follow train)."""
    return dataclasses.replace(ins, clip=ins.clip + offset)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one AdamW step of every seed of an arm (the step of
    :func:`make_trainer`'s scan), seeds split over ``runs``, the features and tokens
    replicated.

    The clips' metadata and instructions are built (host, cheap); the audio is not rendered:
    the features are an abstract ``[clips, frames, features + 1]`` array. Three arms train
    in turn (runs = 3 × seeds); generation and the probe are not planned.
    """
    metas, _, frames = clip_metadata(config)
    train_ins, _, _, _, length, model = instructions_and_model(config, metas, frames)
    lanes = padded_runs(config.num_seeds, mesh)
    split = runs_sharding(mesh)
    rep = replicated(mesh)
    n, f = len(train_ins), FEATURES.num_features + 1
    data = {
        "audio": jax.ShapeDtypeStruct((len(metas), frames, f), jnp.float32),
        "tokens": jax.ShapeDtypeStruct((n, length), jnp.int32),
        "mask": jax.ShapeDtypeStruct((n, length), jnp.float32),
        "clip": jax.ShapeDtypeStruct((n,), jnp.int32),
    }
    keys = jax.eval_shape(lambda: jax.random.split(jax.random.key(0), lanes))
    init = jax.eval_shape(
        jax.vmap(
            lambda k: model.init(k, jnp.zeros((1, length), jnp.int32), jnp.zeros((1, frames, f)))
        ),
        keys,
    )
    ones = jax.tree.map(lambda x: jax.ShapeDtypeStruct((), x.dtype), init)
    state = jax.eval_shape(jax.vmap(lambda p: (p, arm_optimizer(config, ones).init(p))), init)
    scalar = jax.ShapeDtypeStruct((), jnp.int32), jax.ShapeDtypeStruct((), jnp.float32)
    step = batch_runs(make_step(model, config), in_axes=(0, 0, None, None, None, None))
    return PlanSpec(
        fn=step,
        abstract_args=(
            abstract(state, split),
            abstract(keys, split),
            *abstract(scalar, rep),
            abstract(ones, rep),
            abstract(data, rep),
        ),
        steps_per_run=config.num_steps,
        num_runs=3 * config.num_seeds,
        runs_per_call=config.num_seeds,
        note=f"one AdamW step of every seed's AudioLM (dim {config.dim}, depth "
        f"{config.depth}, {length} tokens, batch {config.batch_size}); generation and probe "
        "not planned",
    )
