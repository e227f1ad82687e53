"""Word-level language-model input from a line dataset (``wikitext103``), as fairseq's
``language_modeling`` task prepares it.

- Tokens: each line split on whitespace, then an end-of-sentence token ``</s>`` (every
  line, empty ones too), as ``fairseq-preprocess --only-source`` binarises it.
- Vocabulary (:func:`fairseq_vocabulary`): ``<s>, <pad>, </s>, <unk>`` first, then every
  word of the training split by decreasing count (ties by the word), padded with
  ``madeupwordNNNN`` entries to a multiple of 8 (267,744 entries on WikiText-103); a word
  outside it is ``<unk>``.
- Samples (:class:`TokenBlocks`): the split's token stream cut into consecutive blocks of
  ``block`` tokens (``--sample-break-mode none --tokens-per-sample block``); block ``i``
  predicts tokens ``[i·block, (i+1)·block)`` from the token before each of them (``</s>``
  before the first), so a record is ``block + 1`` tokens plus a weight per target (0 for
  the padding of the last, shorter block).

:class:`TokenBlocks` is a random-access source over the line source: it holds the line
offsets and the vocabulary and reads only the lines a block spans, so grain loaders
(:func:`jaxlab.data.streaming.make_loader`, :func:`~jaxlab.data.streaming.eval_batches`)
stream it.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "BOS",
    "EOS",
    "PAD",
    "SPECIALS",
    "UNK",
    "TokenBlocks",
    "count_lines",
    "fairseq_vocabulary",
    "synthetic_block_example",
]

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
BOS, PAD, EOS, UNK = range(4)


def _text(example: Mapping[str, Any]) -> str:
    text = example["text"]
    return text.decode("utf-8") if isinstance(text, bytes) else str(text)


def _lines(source: Any, chunk: int = 4096) -> Iterator[str]:
    """The lines of ``source`` in record order (batched reads where the source has them)."""
    many = getattr(source, "__getitems__", None)
    for start in range(0, len(source), chunk):
        ids = list(range(start, min(start + chunk, len(source))))
        examples = None
        if many is not None:
            try:
                examples = many(ids)
            except TypeError:  # a source without batched reads (TFDS's mock source)
                many = None
        if examples is None:
            examples = [source[i] for i in ids]
        yield from (_text(e) for e in examples)


def count_lines(
    source: Any, count_words: bool = False
) -> tuple[np.ndarray, collections.Counter | None]:
    """One pass over ``source``: tokens per line (words + ``</s>``), and the word counts
    when ``count_words``."""
    counts: collections.Counter | None = collections.Counter() if count_words else None
    lengths = np.empty(len(source), np.int64)
    for i, line in enumerate(_lines(source)):
        words = line.split()
        lengths[i] = len(words) + 1
        if counts is not None:
            counts.update(words)
    return lengths, counts


def fairseq_vocabulary(counts: Mapping[str, int], multiple: int = 8) -> list[str]:
    """The token list (module docstring): specials, words by decreasing count, padding."""
    words = sorted((w for w in counts if w not in SPECIALS), key=lambda w: (-counts[w], w))
    vocabulary = [*SPECIALS, *words]
    pad = -len(vocabulary) % multiple
    return vocabulary + [f"madeupword{i:04d}" for i in range(pad)]


class TokenBlocks:
    """Consecutive ``block``-token samples of a line source (module docstring).

    ``blocks[i]`` is ``{"tokens": int32 [block + 1], "weights": float32 [block]}``: inputs
    ``tokens[:-1]``, targets ``tokens[1:]``, ``weights`` 1 on real targets.

    Args:
      source: random-access line records with ``"text"``.
      vocabulary: the token list (:func:`fairseq_vocabulary`).
      lengths: tokens per line (:func:`count_lines`).
      block: tokens per sample.
    """

    def __init__(self, source: Any, vocabulary: Sequence[str], lengths: np.ndarray, block: int):
        if block < 1:
            raise ValueError(f"block must be >= 1, got {block}")
        if len(lengths) != len(source):
            raise ValueError(f"{len(lengths)} line lengths for {len(source)} lines")
        self._source, self._block = source, block
        self._index = {word: i for i, word in enumerate(vocabulary)}
        self._offsets = np.concatenate([[0], np.cumsum(lengths)])

    @property
    def num_tokens(self) -> int:
        """Tokens in the split (each line's words and its ``</s>``)."""
        return int(self._offsets[-1])

    def __len__(self) -> int:
        return -(-self.num_tokens // self._block)

    def encode(self, line: str) -> list[int]:
        """A line's token ids, ``</s>`` last."""
        return [self._index.get(word, UNK) for word in line.split()] + [EOS]

    def __getitem__(self, i: int) -> dict[str, np.ndarray]:
        i = int(i)
        if not 0 <= i < len(self):
            raise IndexError(f"block {i} of {len(self)}")
        begin, stop = max(i * self._block - 1, 0), min((i + 1) * self._block, self.num_tokens)
        first = int(np.searchsorted(self._offsets, begin, side="right")) - 1
        ids: list[int] = []
        line = first
        while self._offsets[line] < stop:
            ids.extend(self.encode(_text(self._source[line])))
            line += 1
        base = int(self._offsets[first])
        tokens = ids[begin - base : stop - base]
        if i == 0:
            tokens = [EOS, *tokens]
        out = np.full(self._block + 1, PAD, np.int32)
        out[: len(tokens)] = tokens
        weights = np.zeros(self._block, np.float32)
        weights[: len(tokens) - 1] = 1.0
        return {"tokens": out, "weights": weights}


def synthetic_block_example(
    block: int, vocabulary_size: int = 267_744, line_words: int = 100, seed: int = 0
) -> Callable[[np.random.Generator], dict[str, np.ndarray]]:
    """The host work of one training sample, for measuring its rate: ``example(rng)`` reads
    a random block of :class:`TokenBlocks` over synthetic lines of ``line_words`` words
    drawn from a vocabulary of ``vocabulary_size`` words (WikiText-103's by default),
    splitting and looking up the words of every line it spans."""
    words = [f"w{i}" for i in range(vocabulary_size - len(SPECIALS))]
    rng = np.random.default_rng(seed)
    lines = [
        {"text": " ".join(words[j] for j in rng.integers(0, len(words), line_words))}
        for _ in range(4 * (block // line_words + 2))
    ]
    lengths, _ = count_lines(lines)
    blocks = TokenBlocks(lines, [*SPECIALS, *words], lengths, block)

    def example(rng: np.random.Generator) -> dict[str, np.ndarray]:
        return blocks[int(rng.integers(0, len(blocks)))]

    return example
