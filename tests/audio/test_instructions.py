"""Instruction templates: exact, parseable answers; held-out phrasings; the tokenizer."""

import numpy as np

from jaxlab.audio import (
    QUESTIONS,
    WordTokenizer,
    make_instructions,
    parse_key,
    parse_tempo,
    sample_metadata,
)


def test_answers_parse_back_to_the_metadata():
    rng = np.random.default_rng(0)
    metas = [sample_metadata(rng) for _ in range(20)]
    for ins in make_instructions(metas):
        meta = metas[ins.clip]
        if ins.task in ("key", "caption", "mood"):
            assert parse_key(ins.answer) == meta.key
        if ins.task in ("tempo", "caption", "slow_dance"):
            assert parse_tempo(ins.answer) == meta.tempo_bpm
        if ins.task == "slow_dance":
            assert ins.answer.startswith("Yes") == (meta.tempo_bpm <= 100)


def test_held_out_phrasings_are_disjoint():
    metas = [sample_metadata(np.random.default_rng(i)) for i in range(30)]
    train = make_instructions(metas, split="train")
    test = make_instructions(metas, split="test")
    for task, phrasings in QUESTIONS.items():
        seen = {i.question for i in train if i.task == task}
        held = {i.question for i in test if i.task == task}
        assert held == {phrasings[-1]} and phrasings[-1] not in seen
        assert all(i.held_out_phrasing for i in test)


def test_tokenizer_round_trip_and_unknown_words():
    metas = [sample_metadata(np.random.default_rng(i)) for i in range(10)]
    instructions = make_instructions(metas)
    tok = WordTokenizer.fit([i.question + " " + i.answer for i in instructions])
    for ins in instructions:
        assert tok.decode(tok.encode(ins.answer)) == ins.answer
    assert tok.decode(tok.encode("a zebra plays")) == "a plays"  # <unk> is dropped
    assert tok.encode("zebra") == [tok.id("<unk>")]
    assert tok.decode(tok.encode("It is 96") + [tok.id("<eos>"), tok.id("7")]) == "It is 96"
