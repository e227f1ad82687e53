"""The ``wikitext103`` TFDS builder on a tiny local fixture (no download) and under
``tfds.testing.mock_data``."""

import zipfile

import pytest
import tensorflow_datasets as tfds

import jaxlab.data.tfds_builders  # noqa: F401  (registers wikitext103)
from jaxlab.data.tfds_builders import wikitext103

LINES = {
    "wiki.train.tokens": [" ", " = Valkyria Chronicles III = ", "", " the <unk> war @-@ era "],
    "wiki.valid.tokens": [" = Homarus gammarus = ", " a lobster "],
    "wiki.test.tokens": [" = Robert Boulter = ", "", " an actor "],
}


def _write_folder(root):
    folder = root / wikitext103.FOLDER
    folder.mkdir(parents=True)
    for name, lines in LINES.items():
        (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return folder


def _prepare(tmp_path, manual):
    builder = wikitext103.Wikitext103(data_dir=str(tmp_path / "tfds"), file_format="array_record")
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=str(manual))
    )
    return builder


def test_builds_every_split_from_an_extracted_folder_in_order(tmp_path):
    _write_folder(tmp_path / "manual")
    _prepare(tmp_path, tmp_path / "manual")
    for split, name in wikitext103.SPLIT_FILES.items():
        source = tfds.data_source("wikitext103", split=split, data_dir=str(tmp_path / "tfds"))
        assert len(source) == len(LINES[name])
        rows = sorted((int(source[i]["line"]), source[i]["text"]) for i in range(len(source)))
        texts = [t.decode() if isinstance(t, bytes) else t for _, t in rows]
        assert texts == LINES[name]


def test_a_zip_with_another_checksum_is_refused(tmp_path):
    folder = _write_folder(tmp_path / "src")
    manual = tmp_path / "manual"
    manual.mkdir()
    with zipfile.ZipFile(manual / wikitext103.ZIP_NAME, "w") as archive:
        for path in folder.iterdir():
            archive.write(path, f"{wikitext103.FOLDER}/{path.name}")
    with pytest.raises(ValueError, match="SHA-256"):
        _prepare(tmp_path, manual)


def test_mock_data_gives_text_lines():
    with tfds.testing.mock_data(num_examples=5):
        source = tfds.data_source("wikitext103", split="train")
        assert len(source) == 5
        assert isinstance(source[0]["text"], str | bytes)


def test_sha256_of(tmp_path):
    path = tmp_path / "x"
    path.write_bytes(b"abc")
    assert wikitext103.sha256_of(path) == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def _blocks(lines, block, vocabulary=None):
    from jaxlab.data import wikitext

    source = [{"text": line} for line in lines]
    lengths, counts = wikitext.count_lines(source, count_words=True)
    vocabulary = vocabulary or wikitext.fairseq_vocabulary(counts)
    return wikitext.TokenBlocks(source, vocabulary, lengths, block), vocabulary


def test_fairseq_vocabulary_orders_by_count_and_pads_to_eight():
    from jaxlab.data import wikitext

    vocabulary = wikitext.fairseq_vocabulary({"b": 2, "a": 2, "c": 5, "<unk>": 9})
    assert vocabulary[:7] == ["<s>", "<pad>", "</s>", "<unk>", "c", "a", "b"]
    assert len(vocabulary) == 8 and vocabulary[7] == "madeupword0000"


def test_blocks_cover_the_token_stream_once_with_eos_per_line():
    from jaxlab.data import wikitext

    lines = ["a b", "", "c a b d", "b"]
    blocks, vocabulary = _blocks(lines, block=3)
    index = {w: i for i, w in enumerate(vocabulary)}
    stream = [
        index[w] if w != "</s>" else wikitext.EOS for line in lines for w in [*line.split(), "</s>"]
    ]
    assert blocks.num_tokens == len(stream) == 11 and len(blocks) == 4
    targets, inputs = [], []
    for i in range(len(blocks)):
        item = blocks[i]
        real = int(item["weights"].sum())
        targets += item["tokens"][1 : real + 1].tolist()
        inputs.append(int(item["tokens"][0]))
    assert targets == stream
    assert inputs == [wikitext.EOS, stream[2], stream[5], stream[8]]
    assert blocks[3]["weights"].tolist() == [1.0, 1.0, 0.0]


def test_unknown_words_map_to_unk():
    from jaxlab.data import wikitext

    blocks, _ = _blocks(["x y"], block=4, vocabulary=[*wikitext.SPECIALS, "x"])
    assert blocks[0]["tokens"][:4].tolist() == [wikitext.EOS, 4, wikitext.UNK, wikitext.EOS]
