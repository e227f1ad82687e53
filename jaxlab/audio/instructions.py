"""Instruction data from music metadata (LLark's three families) and a small word tokenizer.

LLark asks a text-only LLM to turn each track's metadata into question–answer pairs phrased as
if the audio were heard: music understanding (tempo, key, time signature, instruments),
captioning, and reasoning. Here fixed templates stand in for the LLM, so answers are exact
and parseable (``parse_key``, ``parse_tempo``). Each task has several phrasings of the
question; the last ``held_out`` phrasings of each task are kept for evaluation only.

The tokenizer is word level with single-digit numbers (so tempi are spelt digit by digit)
and the marker tokens LLark adds: ``<audio_start>``, ``<audio>`` (a placeholder that one
projected frame replaces) and ``<audio_end>``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

import numpy as np

from jaxlab._checks import check_integer
from jaxlab.audio.render import ClipMetadata

PAD, BOS, EOS, UNK, AUDIO_START, AUDIO, AUDIO_END, SEP = (
    "<pad>",
    "<bos>",
    "<eos>",
    "<unk>",
    "<audio_start>",
    "<audio>",
    "<audio_end>",
    "<sep>",
)
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK, AUDIO_START, AUDIO, AUDIO_END, SEP)

_INSTRUMENT_WORDS = {
    "organ": "an organ",
    "synth": "a sawtooth synthesizer",
    "plucked": "a plucked string instrument",
}
_DRUM_WORDS = {
    "rock": "a rock beat",
    "four_on_the_floor": "a four-on-the-floor dance beat",
    "waltz": "a waltz beat",
    "sparse": "a sparse kick drum",
}

# task -> question phrasings; the last ones are held out from training.
QUESTIONS = {
    "key": (
        "What key is this song in?",
        "Which key is the music in?",
        "Can you tell me the key of this track?",
        "What is the tonal center and mode here?",
        "Name the key of this piece.",
    ),
    "tempo": (
        "How fast is this song?",
        "What is the tempo of this track?",
        "How many beats per minute does this music have?",
        "What BPM is this piece?",
        "Estimate the speed of this music.",
    ),
    "time_signature": (
        "What is the time signature?",
        "How many beats are in each bar?",
        "Is this in three or four?",
        "What meter does this piece use?",
    ),
    "instrument": (
        "Which instrument plays the chords?",
        "What instrument do you hear?",
        "What is playing the harmony?",
        "Identify the main instrument.",
    ),
    "caption": (
        "Describe this track.",
        "Write a short caption for this music.",
        "Give a brief description of what you hear.",
        "Summarize this clip.",
    ),
    "slow_dance": (
        "Would this suit a slow dance?",
        "Could a couple slow dance to this?",
        "Is this a good song for a slow dance?",
        "Would you slow dance to this?",
    ),
    "mood": (
        "Does this sound happy or sad?",
        "Is the mood bright or dark?",
        "What mood does this music convey?",
        "Would this cheer someone up?",
    ),
}
FAMILIES = {
    "key": "understanding",
    "tempo": "understanding",
    "time_signature": "understanding",
    "instrument": "understanding",
    "caption": "captioning",
    "slow_dance": "reasoning",
    "mood": "reasoning",
}


def answer(meta: ClipMetadata, task: str) -> str:
    """The exact answer of ``task`` for a clip, phrased as if heard.

    Reasoning answers are derived from tempo and mode: a slow dance needs ≤ 100 BPM and a
    waltz or four-beat bar; the mood is bright in major and dark in minor.
    """
    bpm = int(round(meta.tempo_bpm))
    if task == "key":
        return f"It is in {meta.key}."
    if task == "tempo":
        return f"It moves at about {bpm} BPM."
    if task == "time_signature":
        return f"It is in {meta.beats_per_bar}/4 time."
    if task == "instrument":
        return f"The chords are played by {_INSTRUMENT_WORDS[meta.instrument]}."
    if task == "caption":
        pace = "slow" if bpm < 90 else "moderate" if bpm < 130 else "fast"
        return (
            f"A {pace} piece in {meta.key} at about {bpm} BPM, with "
            f"{_INSTRUMENT_WORDS[meta.instrument]} over {_DRUM_WORDS[meta.drums]}."
        )
    if task == "slow_dance":
        if bpm <= 100:
            return f"Yes: at about {bpm} BPM it is slow enough for a slow dance."
        return f"No: at about {bpm} BPM it is too fast for a slow dance."
    if task == "mood":
        if meta.mode == "major":
            return f"It sounds bright and happy, as it is in {meta.key}."
        return f"It sounds dark and sad, as it is in {meta.key}."
    raise ValueError(f"unknown task {task!r}; tasks: {tuple(QUESTIONS)}")


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One question–answer pair about one clip."""

    clip: int
    task: str
    question: str
    answer: str
    held_out_phrasing: bool


def make_instructions(
    metas: Sequence[ClipMetadata],
    tasks: Sequence[str] = tuple(QUESTIONS),
    held_out: int = 1,
    split: str = "train",
    rng: np.random.Generator | None = None,
) -> list[Instruction]:
    """One instruction per clip and task with a phrasing drawn from the split's phrasings.

    Args:
      metas: the clips' metadata (``clip`` indexes it).
      tasks: tasks to generate (keys of ``QUESTIONS``).
      held_out: the last ``held_out`` phrasings of each task are used only when
        ``split != "train"`` (then only those are used).
      split: ``"train"`` or an evaluation split.
      rng: draws the phrasing; defaults to ``default_rng(0)``.

    Returns:
      ``len(metas) * len(tasks)`` instructions.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    if isinstance(tasks, str):
        raise ValueError(f"tasks must be a sequence of task names, not the string {tasks!r}")
    unknown = [t for t in tasks if t not in QUESTIONS]
    if unknown:
        raise ValueError(f"tasks must be among {tuple(QUESTIONS)}, got {unknown}")
    if not isinstance(split, str):
        raise ValueError(f"split must be a string such as 'train', got {split!r}")
    if any(not isinstance(m, ClipMetadata) for m in metas):
        raise ValueError("metas must be a sequence of ClipMetadata")
    out = []
    for i, meta in enumerate(metas):
        for task in tasks:
            phrasings = QUESTIONS[task]
            if not 0 <= held_out < len(phrasings):
                raise ValueError(f"held_out must be in [0, {len(phrasings)}), got {held_out}")
            pool = (
                phrasings[: len(phrasings) - held_out]
                if split == "train" or not held_out
                else phrasings[len(phrasings) - held_out :]
            )
            question = pool[int(rng.integers(len(pool)))]
            out.append(
                Instruction(
                    i, task, question, answer(meta, task), split != "train" and held_out > 0
                )
            )
    return out


_WORDS = re.compile(r"<[a-z_]+>|[A-Za-z]+#?|\d|[^\sA-Za-z\d]")


class WordTokenizer:
    """Word-level tokenizer (digits and punctuation split off) with LLark's marker tokens.

    Args:
      vocabulary: the tokens; ``SPECIAL_TOKENS`` first (ids 0–7).

    Example:
      >>> from jaxlab.audio.instructions import WordTokenizer
      >>> tok = WordTokenizer.fit(["It is in C# minor at 96 BPM."])
      >>> tok.decode(tok.encode("It is in C# minor at 96 BPM."))
      'It is in C# minor at 96 BPM.'
    """

    def __init__(self, vocabulary: Sequence[str]):
        if (
            isinstance(vocabulary, str)
            or tuple(vocabulary[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS
        ):
            raise ValueError("vocabulary must start with SPECIAL_TOKENS")
        if len(set(vocabulary)) != len(vocabulary):
            raise ValueError("vocabulary must not repeat a token")
        self.vocabulary = tuple(vocabulary)
        self.ids = {t: i for i, t in enumerate(self.vocabulary)}

    @classmethod
    def fit(cls, texts: Iterable[str]) -> WordTokenizer:
        """The vocabulary of ``texts`` (sorted; digits always included) after the specials."""
        words = {w for text in texts for w in _WORDS.findall(text)} | set("0123456789")
        return cls(SPECIAL_TOKENS + tuple(sorted(words - set(SPECIAL_TOKENS))))

    def __len__(self) -> int:
        return len(self.vocabulary)

    def id(self, token: str) -> int:
        return self.ids[token]

    def encode(self, text: str) -> list[int]:
        """Token ids; unknown words map to ``<unk>``."""
        unk = self.ids[UNK]
        return [self.ids.get(w, unk) for w in _WORDS.findall(text)]

    def decode(self, ids: Iterable[int], stop_at_eos: bool = True) -> str:
        """Text of ``ids`` (special tokens dropped; stops at ``<eos>``)."""
        out = ""
        previous = ""
        for i in ids:
            i = int(i)
            token = self.vocabulary[i] if 0 <= i < len(self.vocabulary) else UNK
            if token == EOS and stop_at_eos:
                break
            if token in SPECIAL_TOKENS:
                continue
            glue = (
                not out
                or token in ".,?!:;/)"
                or previous in "/(-"
                or token == "-"
                or (token.isdigit() and previous.isdigit())
            )
            out += token if glue else " " + token
            previous = token
        return out


def encode_example(
    tokenizer: WordTokenizer, question: str, answer_text: str | None, num_audio: int, length: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """``<bos> <audio_start> <audio>×F <audio_end> question <sep> answer <eos>``, padded.

    Args:
      tokenizer: a ``WordTokenizer``.
      question: the instruction.
      answer_text: the response, or None for a prompt to complete.
      num_audio: placeholder tokens (audio frames); 0 for no audio block at all.
      length: the context length; the sequence is padded with ``<pad>`` to it.

    Returns:
      ``(tokens int32 [length], loss_mask float32 [length], prompt_length)``; the mask is 1
      on the answer tokens and ``<eos>``.

    Raises:
      ValueError: the example is longer than ``length`` (a prompt beyond the context).
    """
    if not isinstance(tokenizer, WordTokenizer):
        raise ValueError(f"tokenizer must be a WordTokenizer, got {type(tokenizer).__name__}")
    check_integer("num_audio", num_audio, low=0)
    check_integer("length", length, low=1)
    for name, text in (("question", question), ("answer_text", answer_text)):
        if not isinstance(text, str) and not (name == "answer_text" and text is None):
            raise ValueError(f"{name} must be a string, got {type(text).__name__}")
    t = tokenizer.ids
    prompt = [t[BOS]]
    if num_audio:
        prompt += [t[AUDIO_START]] + [t[AUDIO]] * num_audio + [t[AUDIO_END]]
    prompt += tokenizer.encode(question) + [t[SEP]]
    reply = [] if answer_text is None else tokenizer.encode(answer_text) + [t[EOS]]
    total = len(prompt) + len(reply)
    if total > length:
        raise ValueError(
            f"example of {total} tokens (prompt {len(prompt)}) exceeds the context length {length}"
        )
    tokens = np.full(length, t[PAD], np.int32)
    tokens[:total] = prompt + reply
    mask = np.zeros(length, np.float32)
    mask[len(prompt) : total] = 1.0
    return tokens, mask, len(prompt)
