"""CurBench text: every text curriculum on a GLUE task read from TFDS (paper), or on which
Shakespeare play a window of speech comes from (quick, smoke).

Config in, metrics out: the windows are read and hashed into character n-grams, the model is
defined, and the curriculum trainer's benchmark (:func:`jaxlab.trainers.curriculum.run_benchmark`)
runs every (setting, method), resumable per run under ``<workdir>/runs``.
"""

from __future__ import annotations

import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from jaxlab.data.streaming import open_source
from jaxlab.data.text import char_vocabulary, encode, load_plays
from jaxlab.train.plan import PlanSpec
from jaxlab.trainers.curriculum import CurriculumData, run_benchmark

from ..plan import plan_spec

# A speaker tag: "Ham.", "First Citizen.", "P. King." on a line of its own.
_SPEAKER = re.compile(r"^[A-Z][A-Za-z .']{0,24}\.$")


def speech(text: str) -> str:
    """The spoken lines of a play, joined by spaces: blocks opened by a speaker tag, without
    the tag and without bracketed stage directions."""
    lines = []
    for block in text.split("\n\n"):
        rows = [r.strip() for r in block.strip().split("\n")]
        if len(rows) >= 2 and _SPEAKER.match(rows[0]):
            lines += [r for r in rows[1:] if r and not r.startswith("[")]
    return " ".join(lines)


def load_windows(config) -> dict[str, np.ndarray]:
    """Balanced, disjoint windows ``[n, seq_len]`` of character ids per split; labels = play."""
    texts = [speech(load_plays((play,))) for play in config.plays]
    vocabulary = char_vocabulary("".join(texts))
    sizes = (config.num_train, config.num_val, config.num_test, config.num_teacher)
    parts: dict[str, list] = {k: [] for k in ("train", "val", "test", "teacher")}
    rng = np.random.default_rng(2024)
    for label, text in enumerate(texts):
        ids = encode(text, vocabulary)
        n = len(ids) // config.seq_len
        if n < sum(sizes):
            raise ValueError(f"{config.plays[label]} has {n} windows, need {sum(sizes)}")
        windows = ids[: n * config.seq_len].reshape(n, config.seq_len)[rng.permutation(n)]
        start = 0
        for key, size in zip(parts, sizes, strict=True):
            parts[key].append((windows[start : start + size], np.full(size, label, np.int32)))
            start += size
    out = {"vocab_size": np.int32(len(vocabulary))}
    for key, chunks in parts.items():
        out[f"{key}_x"] = np.concatenate([c[0] for c in chunks])
        out[f"{key}_y"] = np.concatenate([c[1] for c in chunks])
    return out


#: GLUE's classification tasks: the text features of an example (CurBench's
#: ``task_text_field_map``, the TFDS ``glue/<task>`` feature names) and the classes.
GLUE_TASKS = {
    "cola": (("sentence",), 2),
    "sst2": (("sentence",), 2),
    "mrpc": (("sentence1", "sentence2"), 2),
    "qqp": (("question1", "question2"), 2),
    "mnli": (("premise", "hypothesis"), 3),
    "qnli": (("question", "sentence"), 2),
    "rte": (("sentence1", "sentence2"), 2),
    "wnli": (("sentence1", "sentence2"), 2),
}


def _utf8(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


def load_glue(config) -> dict[str, np.ndarray]:
    """TFDS ``glue/<config.task>`` as byte windows ``[n, seq_len]`` (the UTF-8 bytes of the
    example's text fields joined by a 0x1f separator, shifted by one so 0 pads) and labels:
    ``num_train`` / ``num_val`` / ``num_teacher`` disjoint examples of the training split (a
    fixed permutation), and the validation split as the test set (GLUE's test labels are
    hidden), as in CurBench."""
    # TFDS's catalog does not register GLUE by itself here (its text package does not import
    # without TensorFlow); importing the builder's module does.
    import tensorflow_datasets.text.glue  # noqa: F401

    fields, _ = GLUE_TASKS[config.task]
    name = f"glue/{config.task}"

    def windows(source, ids) -> tuple[np.ndarray, np.ndarray]:
        x = np.zeros((len(ids), config.seq_len), np.int32)
        y = np.zeros(len(ids), np.int32)
        for row, i in enumerate(ids):
            example = source[int(i)]
            text = b"\x1f".join(_utf8(example[f]) for f in fields)[: config.seq_len]
            x[row, : len(text)] = np.frombuffer(text, np.uint8).astype(np.int32) + 1
            y[row] = int(example["label"])
        return x, y

    train = open_source(name, "train", data_dir=config.data_dir or None)
    test = open_source(name, "validation", data_dir=config.data_dir or None)
    order = np.random.default_rng(2024).permutation(len(train))
    sizes = (config.num_train, config.num_val, config.num_teacher)
    if sum(sizes) > len(order):
        raise ValueError(f"{name} has {len(order)} training examples, need {sum(sizes)}")
    out = {"vocab_size": np.int32(257)}
    start = 0
    for key, size in zip(("train", "val", "teacher"), sizes, strict=True):
        out[f"{key}_x"], out[f"{key}_y"] = windows(train, order[start : start + size])
        start += size
    n_test = len(test) if not config.num_test else min(config.num_test, len(test))
    out["test_x"], out["test_y"] = windows(test, np.arange(n_test))
    return out


def _num_classes(config) -> int:
    return GLUE_TASKS[config.task][1] if config.task else len(config.plays)


def char_ngrams(windows: np.ndarray, orders: tuple[int, ...], buckets: int) -> np.ndarray:
    """Hashed character n-grams of every window: ``[n, L] -> [n, Σ_k (L − k + 1)]`` bucket
    ids (a polynomial hash of each n-gram's character ids, modulo ``buckets``)."""
    out = []
    for k in orders:
        width = windows.shape[1] - k + 1
        h = np.zeros((windows.shape[0], width), np.int64)
        for j in range(k):
            h = h * 131 + windows[:, j : j + width]
        out.append((h * 2654435761 + k) % buckets)
    return np.concatenate(out, axis=1).astype(np.int32)


class NgramBag(nn.Module):
    """A fastText-style character classifier: the mean embedding of the window's hashed
    character n-grams, then a linear layer. Input ``[b, P]`` bucket ids, output
    ``[b, num_classes]``."""

    buckets: int
    num_classes: int
    embed_dim: int = 32

    @nn.compact
    def __call__(self, ngrams: jax.Array) -> jax.Array:
        h = nn.Embed(self.buckets, self.embed_dim)(ngrams).mean(axis=1)
        return nn.Dense(self.num_classes)(h)


def _model(config, num_ngrams: int) -> tuple:
    """``(init_fn, apply_fn)`` of the n-gram bag on windows of ``num_ngrams`` bucket ids."""
    model = NgramBag(config.buckets, _num_classes(config), config.embed_dim)

    def init_fn(key):
        return model.init(key, jnp.zeros((1, num_ngrams), jnp.int32))["params"]

    def apply_fn(params, x, model_args):
        del model_args
        return model.apply({"params": params}, x)

    return init_fn, apply_fn


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str) -> dict:
    w = load_glue(config) if config.task else load_windows(config)
    for split in ("train", "val", "test", "teacher"):
        w[f"{split}_x"] = char_ngrams(w[f"{split}_x"], tuple(config.ngram_orders), config.buckets)
    init_fn, apply_fn = _model(config, w["train_x"].shape[1])
    data = CurriculumData(
        w["train_x"],
        w["train_y"],
        w["val_x"],
        w["val_y"],
        w["test_x"],
        w["test_y"],
        _num_classes(config),
    )
    # The teacher of TTCL and Adaptive CL: a baseline model on a disjoint clean split.
    teacher_data = data._replace(
        train_inputs=w["teacher_x"],
        train_labels=w["teacher_y"],
        test_inputs=w["val_x"],
        test_labels=w["val_y"],
    )
    return run_benchmark(config, data, init_fn, apply_fn, workdir, teacher_data=teacher_data)


def plan_program(config: ml_collections.ConfigDict, mesh) -> PlanSpec:
    """For ``jaxlab plan``: one meta-gradient training step of every seed, split over
    ``runs`` (``experiments/curbench/plan.py``)."""
    num_ngrams = sum(config.seq_len - k + 1 for k in config.ngram_orders)
    init_fn, apply_fn = _model(config, num_ngrams)
    # num_train windows per play, or num_train GLUE examples
    rows = config.num_train * (1 if config.task else len(config.plays))
    windows = jax.ShapeDtypeStruct((rows, num_ngrams), jnp.int32)
    return plan_spec(config, mesh, init_fn, apply_fn, windows, _num_classes(config))
