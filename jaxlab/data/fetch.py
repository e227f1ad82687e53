"""``jaxlab data fetch NAME``: the graph datasets, from their canonical public sources.

Each dataset is a list of files, each with the URL of its canonical copy (the authors'
repositories, pinned to a commit) and the SHA-256 of its bytes. :func:`fetch` downloads them
into ``<data_dir>/graphs/<name>/`` — the layout :mod:`jaxlab.data.graphs` reads, which is
the sources' own file format, so converting is moving each verified file into place. A file
is written to a temporary name beside its target and renamed only after its hash matches:
a failed or corrupt download leaves nothing behind.

Nothing downloads unless asked: by this function (the CLI command), or by a loader that
misses a file while ``$JAXLAB_ALLOW_DOWNLOAD=1`` (see :func:`jaxlab.data.paths.require_file`).
Tests, CI and ``jaxlab reproduce`` never set it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

ALLOW_ENV = "JAXLAB_ALLOW_DOWNLOAD"
CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: ``path`` under the data directory, its ``url`` and SHA-256."""

    path: str
    url: str
    sha256: str


class FetchError(Exception):
    """A user-facing fetch failure (the CLI prints it as one line)."""


class UnknownDatasetError(FetchError, ValueError):
    """``fetch`` was asked for a dataset it does not know."""


class ChecksumError(FetchError, ValueError):
    """A downloaded file's SHA-256 differs from the one recorded in the code."""


class DownloadError(FetchError, OSError):
    """A file could not be downloaded (network, HTTP status); names the URL."""


def _github(repo: str, commit: str, source: str, path: str, sha256: str) -> RemoteFile:
    return RemoteFile(path, f"https://raw.githubusercontent.com/{repo}/{commit}/{source}", sha256)


# Zügner & Günnemann's Metattack repository (MIT), which DeepRobust/Pro-GNN download from.
_META = ("danielzuegner/gnn-meta-attack", "982d900d05f19f0bd061b8d4988310bd7baa5f91")
_PROGNN = ("ChandlerBang/Pro-GNN", "90e11956bf8145dc2ff441fc9923bc95b535f289")
# The GADC authors' Metattack graphs (25/50/75 %); Pro-GNN publishes only rates up to 25 %.
_GADC = ("SongtaoLiu0823/GADC", "e919472f933fe7df7bac937d18eacbea14b2fa05")
_PLANETOID = ("kimiyoung/planetoid", "af6abf468a772cc055bec88c52e4d6f51b7c37e3")
_GEOM_GCN = ("graphdml-uiuc-jlu/geom-gcn", "f1fc0d14b3b019c562737240d06ec83b07d16a8f")

_PROGNN_SHA = {
    "cora.npz": "398a5c8f949a4f2a3c8fb248f777d2756c654de714762d6a18c04eaa19a96271",
    "citeseer.npz": "36e9a5bbe84eaa0c3c6b226f8b27450bb79246a5df22c375b3bacddb856efa8e",
    "cora_prognn_splits.json": "40a3e7e4025c349095d425c597a9db53b2ddd2437f0d5ccf7b46417d912f1db0",
    "citeseer_prognn_splits.json": "12ab5787371b8826691d0c6f33ba7c250dff2754a0f571578bc83920594bb9a3",
    "cora_meta_adj_0.25.npz": "ffd031e654008271b87975db5270377f86d492b4df82ab20ecb155320ca58b9a",
    "cora_meta_adj_0.5.npz": "69effb89d647a184561f3b962912d4d53375da9c6071f41c1bee73d003f4312a",
    "cora_meta_adj_0.75.npz": "798b54e0a7b7db5bab78276211c1288299fc80c6d17caef179d89863078545ab",
    "citeseer_meta_adj_0.25.npz": "b99743ead0978dd09bd7c59ad686b80ab27704be83fee8c953ac41078b7ee140",
    "citeseer_meta_adj_0.5.npz": "c46a38d0546614888580a4063006519ee1529f4b85e0e0ce876116591d339f62",
    "citeseer_meta_adj_0.75.npz": "379d5e37edd72dbae55b3e0925e93415892b19fea63d3d830e94aec2eb6e4e3a",
    # Pubmed in the Pro-GNN setting: the Planetoid graph (connected: its LCC is every node)
    # with Pro-GNN's 10/10/80 split and Metattack graphs, as the GADC repository ships them
    # (SHA-256 of the git blobs at the pinned commit).
    "pubmed_prognn_splits.json": "5ce8bebe79754193a8cb4c7e656fb8db14f91d3213355d25cf199e3caf221e82",
    "pubmed_meta_adj_0.25.npz": "e5ad8c476cf84b4b6a0841d2ff6ecdb8262cacdac4d033a7a14b06d676662fa7",
    "pubmed_meta_adj_0.5.npz": "90ef1a96188058997707376d6ddbf522d866bcf5986838b2cc2a52bd899d4702",
    "pubmed_meta_adj_0.75.npz": "c6a60e85e976d592c9574349f1605b282ed094d33a8f63958d4decc837129190",
}
_PLANETOID_SHA = {
    "cora.allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
    "cora.ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
    "cora.graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
    "cora.test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
    "cora.tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
    "cora.ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
    "cora.x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
    "cora.y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
    "citeseer.allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
    "citeseer.ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
    "citeseer.graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
    "citeseer.test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
    "citeseer.tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
    "citeseer.ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
    "citeseer.x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
    "citeseer.y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
    # Pubmed: the SHA-256 of the git blobs at the pinned commit; ``allx`` (the one blob too
    # large for our snapshot of the repository) as published with the other seven, which
    # match our own hashes of the blobs.
    "pubmed.allx": "508e538e2abdccdd54c4d3e9f49d638b4af7107d85845f66ddea5a5152658b7e",
    "pubmed.ally": "0c37bbe3b5014ec365e9d393cf4791925e5ed94fb194305d74f064a8d7b50f0e",
    "pubmed.graph": "5b89f0036ca22909471f1e6558eb42fa06e0c730a577bde5b058b40638f81dc9",
    "pubmed.test.index": "b101d421688bbaecbd82e8a18f1e282378d6830f3a37666f28ebc47f844341b5",
    "pubmed.tx": "4eb5f5d0f30f26497eb0ac6ac9719d09c67e284f1ed0385c93f3ef27a671da3d",
    "pubmed.ty": "ee2e0d4819d9fbcc403689c3bf2e49face401b605932f093bc58ab6461130fdd",
    "pubmed.x": "fbe9cb5c47200d1b7769a26e579be3b7130b556831f9d850e77c4c74f2599b33",
    "pubmed.y": "e6c807633307a07ed659249006536a147c7999c797f11a2560752990181b41b3",
}
_GEOM_GCN_SHA = {
    "cornell/out1_graph_edges.txt": "c4522a00cc40873c8a04a3a07c49e24a48a507eb284ac9c9f2d3e0590351bbb7",
    "cornell/out1_node_feature_label.txt": "cf5a3ca346cdd1210b8342e22517fcbbdae658065b7a3145f59350e50e6236a3",
    "texas/out1_graph_edges.txt": "0fe85183243a78cbee9b85a684f8240963d04d1020d10e9cd2b8cfb25e33b476",
    "texas/out1_node_feature_label.txt": "cf5a3ca346cdd1210b8342e22517fcbbdae658065b7a3145f59350e50e6236a3",
    "wisconsin/out1_graph_edges.txt": "ebd213511c88fce1eda450c2f920600c4b8cbb38f02384856bcc47c6ec1807ae",
    "wisconsin/out1_node_feature_label.txt": "a32b0aa38d42f0d36841e8a8cb646d197f0ff33a182ac75a2b4476aeed3c7e4b",
    "film/out1_graph_edges.txt": "997cdce67ea9c29257d3ffe796328391931901cf823830affa453178b60e2c3e",
    "film/out1_node_feature_label.txt": "1d5cdd094f8b91e770f6decfca85b35cf42f75d1efb51055fd6af16e11820ff8",
}


def _prognn_files() -> tuple[RemoteFile, ...]:
    files = []
    for name, sha in _PROGNN_SHA.items():
        if "meta_adj" in name:
            repo, source = _GADC, f"Non-Adaptive_Adversarial_Attack/meta_adj/{name}"
            path = f"graphs/prognn/meta_adj/{name}"
        elif name.startswith("pubmed"):  # from the GADC repository, beside its Metattack graphs
            repo, path = _GADC, f"graphs/prognn/{name}"
            source = f"Non-Adaptive_Adversarial_Attack/attack_data/{name}"
        elif name.endswith(".json"):
            repo, source, path = _PROGNN, f"splits/{name}", f"graphs/prognn/{name}"
        else:
            repo, source, path = _META, f"data/{name}", f"graphs/prognn/{name}"
        files.append(_github(*repo, source, path, sha))
    return tuple(files)


DATASETS: dict[str, tuple[RemoteFile, ...]] = {
    "prognn": _prognn_files(),
    "planetoid": tuple(
        _github(*_PLANETOID, f"data/ind.{n}", f"graphs/planetoid/ind.{n}", s)
        for n, s in _PLANETOID_SHA.items()
    ),
    "geom-gcn": tuple(
        _github(*_GEOM_GCN, f"new_data/{n}", f"graphs/geom-gcn/{n}", s)
        for n, s in _GEOM_GCN_SHA.items()
    ),
}


def available() -> list[str]:
    """The names :func:`fetch` accepts, sorted."""
    return sorted(DATASETS)


def default_data_dir() -> Path:
    """``$XDG_CACHE_HOME/jaxlab``, by default ``~/.cache/jaxlab``."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "jaxlab"


def download_allowed() -> bool:
    """Whether loaders may download a missing file (``$JAXLAB_ALLOW_DOWNLOAD=1``)."""
    return os.environ.get(ALLOW_ENV, "") == "1"


def dataset_of(relative: str | os.PathLike) -> str | None:
    """The dataset that provides ``relative`` (a path under the data directory), if any."""
    relative = Path(relative).as_posix()
    for name, files in DATASETS.items():
        if any(f.path == relative for f in files):
            return name
    return None


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url: str, target: Path, sha256: str, timeout: float) -> None:
    """Streams ``url`` to a temporary file beside ``target``; renames it only if it verifies."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    tmp = tempfile.NamedTemporaryFile(
        dir=target.parent, prefix=f".{target.name}.", suffix=".part", delete=False
    )
    try:
        with tmp, urllib.request.urlopen(url, timeout=timeout) as response:
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                tmp.write(chunk)
        if digest.hexdigest() != sha256:
            raise ChecksumError(
                f"SHA-256 mismatch for {url}: expected {sha256}, got {digest.hexdigest()}; "
                f"{target} was not written"
            )
        os.replace(tmp.name, target)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        raise DownloadError(f"could not download {url}: {error}") from error
    finally:
        Path(tmp.name).unlink(missing_ok=True)


def download_files(
    files: Iterable[RemoteFile],
    root: str | os.PathLike,
    *,
    mirror: str | None = None,
    timeout: float = 60.0,
) -> list[Path]:
    """Places each file at ``root / file.path``, downloading those absent or not matching.

    Args:
      files: what to get.
      root: the data directory.
      mirror: a base URL serving the data-directory layout (``<mirror>/<file.path>``) instead
        of each file's canonical URL, e.g. an institute's copy.
      timeout: seconds a connection may stall.

    Returns:
      The local paths, in the order of ``files``.

    Raises:
      ChecksumError: a download's hash differs from the recorded one (nothing written).
      DownloadError: the server could not be reached or answered with an error.
    """
    paths = []
    for file in files:
        target = Path(root) / file.path
        if not (target.is_file() and sha256_of(target) == file.sha256):
            url = file.url if mirror is None else f"{mirror.rstrip('/')}/{file.path}"
            _download(url, target, file.sha256, timeout)
        paths.append(target)
    return paths


def fetch(
    name: str, data_dir: str | os.PathLike | None = None, *, mirror: str | None = None
) -> Path:
    """Downloads dataset ``name`` into ``data_dir`` (default :func:`default_data_dir`).

    Files already present with the recorded hash are kept; the rest are downloaded and
    verified. Point the loaders at the result with ``--data_dir`` / ``$JAXLAB_DATA_DIR``
    (``~/.cache/jaxlab`` is also where they look by default).

    Args:
      name: one of :func:`available`.
      data_dir: the data directory to fill.
      mirror: see :func:`download_files`.

    Returns:
      ``<data_dir>/graphs/<name>``, the dataset's folder.

    Raises:
      ValueError: an unknown ``name`` (the message lists the valid ones).
      ChecksumError, DownloadError: see :func:`download_files`.
    """
    if name not in DATASETS:
        raise UnknownDatasetError(f"unknown dataset {name!r}; available: {', '.join(available())}")
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    download_files(DATASETS[name], root, mirror=mirror)
    return root / "graphs" / name


__all__ = [
    "ALLOW_ENV",
    "DATASETS",
    "ChecksumError",
    "DownloadError",
    "FetchError",
    "RemoteFile",
    "UnknownDatasetError",
    "available",
    "dataset_of",
    "default_data_dir",
    "download_allowed",
    "download_files",
    "fetch",
    "sha256_of",
]
