"""``wikitext103``: WikiText-103 (Merity et al. 2016, "Pointer Sentinel Mixture Models"),
the word-level version (``wikitext-103-v1``: tokenised text, rare words already ``<unk>``).

One example per line of ``wiki.{train,valid,test}.tokens``, in file order:
``{"text": the line without its newline, "line": its index in the file}``. Splits
``train`` (1,801,350 lines, about 103 M words), ``validation`` (3,760) and ``test``
(4,358). Empty lines are kept: a line-based language model (fairseq's
``language_modeling`` task) ends every line, empty or not, with an end-of-sentence token.

Source: ``https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip``,
190,229,076 bytes, SHA-256
``242ba0f20b329cfdf1ccc61e9e9e5b59becf189db7f7a81cd2a0e2fc31539590`` (the checksum that
Hugging Face ``datasets`` records for this URL in ``datasets/wikitext/dataset_infos.json``).
The download is checked against it. Without network, put the zip (or its extracted
``wikitext-103/`` folder) in TFDS's ``manual_dir``:
``tfds build wikitext103 --imports jaxlab.data.tfds_builders --file_format array_record
--manual_dir DIR`` (array_record: read by ``tfds.data_source`` without TensorFlow).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow_datasets as tfds

URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip"
SHA256 = "242ba0f20b329cfdf1ccc61e9e9e5b59becf189db7f7a81cd2a0e2fc31539590"
ZIP_NAME = "wikitext-103-v1.zip"
FOLDER = "wikitext-103"
SPLIT_FILES = {
    "train": "wiki.train.tokens",
    "validation": "wiki.valid.tokens",
    "test": "wiki.test.tokens",
}


def sha256_of(path: str | Path) -> str:
    """The hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Wikitext103(tfds.core.GeneratorBasedBuilder):
    """WikiText-103 (word level), one example per line (module docstring)."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Lines of wikitext-103-v1 with their index."}
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        f"Put {ZIP_NAME} (from {URL}, SHA-256 {SHA256}) or its extracted {FOLDER}/ folder "
        "in the manual directory."
    )

    def _info(self) -> tfds.core.DatasetInfo:
        return self.dataset_info_from_configs(
            description="WikiText-103 (word level), one example per line.",
            features=tfds.features.FeaturesDict(
                {
                    "text": tfds.features.Text(),
                    "line": tfds.features.Scalar(dtype=np.int64),
                }
            ),
            homepage="https://blog.einstein.ai/the-wikitext-long-term-dependency-language-"
            "modeling-dataset/",
            license="CC BY-SA 3.0 (Wikipedia text)",
            citation="@misc{merity2016pointer, title={Pointer Sentinel Mixture Models}, "
            "author={Merity, Stephen and Xiong, Caiming and Bradbury, James and Socher, "
            "Richard}, year={2016}, eprint={1609.07843}, archivePrefix={arXiv}}",
        )

    def _split_generators(self, dl_manager: tfds.download.DownloadManager) -> dict[str, Any]:
        folder = self._folder(dl_manager)
        return {
            split: self._generate_examples(folder / name) for split, name in SPLIT_FILES.items()
        }

    def _folder(self, dl_manager: tfds.download.DownloadManager) -> Path:
        """The extracted ``wikitext-103/`` folder: from the manual directory if it holds
        the zip or the folder, else downloaded; a zip must have the SHA-256 above."""
        manual = Path(dl_manager.manual_dir) if _exists(dl_manager) else None
        if manual is not None and (manual / FOLDER / SPLIT_FILES["train"]).exists():
            return manual / FOLDER
        if manual is not None and (manual / ZIP_NAME).exists():
            archive = manual / ZIP_NAME
        else:
            archive = Path(dl_manager.download(URL))
        found = sha256_of(archive)
        if found != SHA256:
            raise ValueError(f"{archive}: SHA-256 {found}, expected {SHA256} ({URL})")
        return Path(dl_manager.extract(archive)) / FOLDER

    def _generate_examples(self, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
        with open(path, encoding="utf-8") as f:
            for index, line in enumerate(f):
                yield index, {"text": line.rstrip("\n"), "line": index}


def _exists(dl_manager: tfds.download.DownloadManager) -> bool:
    try:
        return Path(dl_manager.manual_dir).exists()
    except (AssertionError, TypeError, ValueError):  # no manual_dir configured
        return False
