"""The code hash covers the installed package versions and the data files a config reads."""

import hashlib
import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import ml_collections
import pytest

import jaxlab
from jaxlab.report import codehash, registry

MODULE = "jaxlab_experiments.multimax.multimax_tradeoff"


def _config(data_dir: str, datasets: tuple[str, ...]) -> ml_collections.ConfigDict:
    return ml_collections.ConfigDict({"data_dir": data_dir, "datasets": datasets})


def test_package_versions_are_jaxlabs_requirements():
    versions = dict(codehash.package_versions())
    assert versions["numpy"] == importlib.metadata.version("numpy")
    assert versions["scipy"] == importlib.metadata.version("scipy")
    assert "jaxlab" not in versions
    assert versions["jaxlib"] == importlib.metadata.version("jaxlib")  # XLA's numerics


def test_a_package_version_changes_the_hash(monkeypatch):
    base = codehash.code_hash(MODULE)
    bumped = tuple((n, v + ".post1" if n == "numpy" else v) for n, v in codehash.package_versions())
    monkeypatch.setattr(codehash, "package_versions", lambda: bumped)
    assert codehash.code_hash(MODULE) != base


def test_data_files_change_the_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    folder = tmp_path / "graphs"
    folder.mkdir()
    (folder / "cora.npz").write_bytes(b"12345")
    config = _config(str(tmp_path), ("graphs", "generated"))
    base = codehash.code_hash(MODULE, config)
    assert base == codehash.code_hash(MODULE, config)
    assert base != codehash.code_hash(MODULE)
    listing = codehash.data_listing(("graphs", "generated"), str(tmp_path))
    assert listing[0] == "generated"
    assert listing[1] == f"graphs/cora.npz 5 {hashlib.sha256(b'12345').hexdigest()}"
    (folder / "cora.npz").write_bytes(b"123456")  # a new size
    assert codehash.code_hash(MODULE, config) != base
    grown = codehash.code_hash(MODULE, config)
    (folder / "cora.npz").write_bytes(b"654321")  # same size, other content
    os.utime(folder / "cora.npz", ns=(1, 1))
    assert codehash.code_hash(MODULE, config) != grown
    (folder / "citeseer.npz").write_bytes(b"1")  # a new file
    assert len(codehash.data_listing(("graphs",), str(tmp_path))) == 2


def test_a_local_dataset_name_lists_the_files_it_reads(tmp_path, monkeypatch):
    """``prognn_files`` names no folder: it reads ``<data_dir>/graphs/prognn``."""
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    folder = tmp_path / "graphs" / "prognn"
    folder.mkdir(parents=True)
    (folder / "cora.npz").write_bytes(b"abc")
    listing = codehash.data_listing(("prognn_files", "geom_gcn_files"), str(tmp_path))
    assert listing == [
        "geom_gcn_files",  # no graphs/geom-gcn here: enters by its name
        f"prognn_files/cora.npz 3 {hashlib.sha256(b'abc').hexdigest()}",
    ]


def _tree(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_module_closure_follows_every_import_statement(tmp_path):
    root = tmp_path / "jaxlab"
    _tree(
        root,
        {
            "__init__.py": "",
            "graph/__init__.py": "from .attack import attack\n",
            "graph/attack.py": "def attack():\n    from ..nn import layers\n",
            "nn/__init__.py": "",
            "nn/layers.py": "import numpy\n",
            "nn/unused.py": "",
            "train/__init__.py": "",
            "train/loop.py": "from jaxlab.train import fit\n",  # a name, not a module
        },
    )
    experiment = tmp_path / "train.py"
    experiment.write_text("import os\nfrom jaxlab.graph import attack\nimport jaxlab.train.loop\n")
    names = {p.relative_to(root).as_posix() for p in codehash.module_closure([experiment], root)}
    assert names == {
        "__init__.py",
        "graph/__init__.py",
        "graph/attack.py",  # `from jaxlab.graph import attack` and `from .attack import`
        "nn/__init__.py",  # `from ..nn import layers` inside a function, resolved
        "nn/layers.py",
        "train/__init__.py",
        "train/loop.py",
    }


def test_a_module_outside_the_closure_leaves_the_hash(tmp_path, monkeypatch):
    root = tmp_path / "jaxlab"
    _tree(
        root,
        {
            "__init__.py": "",
            "report/__init__.py": "",
            "report/runner.py": "from jaxlab.report import codehash\n",
            "report/codehash.py": "",
            "nn/__init__.py": "",
            "graph/__init__.py": "",
        },
    )
    experiment = tmp_path / "train.py"
    experiment.write_text("from jaxlab import nn\n")
    monkeypatch.setattr(codehash, "_jaxlab_root", lambda: root)

    def digest() -> str:
        codehash._source.cache_clear()  # a module's source is read once per process
        return codehash.modules_hash([experiment])

    base = digest()
    for unrun in ("graph/__init__.py", "report/codehash.py"):  # the runner's file only
        (root / unrun).write_text("x = 1\n")
        assert digest() == base, unrun
    for run in ("nn/__init__.py", "report/runner.py", "__init__.py"):
        (root / run).write_text((root / run).read_text() + "y = 2\n")
        assert digest() != base, run
        base = digest()


# The modules an experiment's files import when loaded, read from `sys.modules` in a fresh
# process: the static closure must hold every one (it also holds imports inside functions).
_IMPORTED = """
import importlib, json, sys
for suffix in ("", ".config", ".train"):
    importlib.import_module(sys.argv[1] + suffix)
print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items()
                        if n.split(".")[0] == "jaxlab" and getattr(m, "__file__", None))))
"""


@pytest.mark.parametrize("name", ["gadc_adaptive", "multimax_vit", "icl_nonlinear"])
def test_the_closure_holds_every_module_an_experiment_imports(name):
    experiment = registry.discover()[name]
    output = subprocess.run(
        [sys.executable, "-c", _IMPORTED, experiment.module],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    ).stdout
    imported = {Path(f).resolve() for f in json.loads(output.splitlines()[-1])}
    folder = Path(importlib.import_module(experiment.module).__path__[0])
    files = [*folder.rglob("*.py"), *folder.parent.glob("*.py")]
    closure = {p.resolve() for p in codehash.module_closure(files)}
    assert imported, "nothing of jaxlab imported"
    assert imported <= closure, sorted(str(p) for p in imported - closure)
    assert len(closure) < len(list(Path(jaxlab.__file__).parent.rglob("*.py")))
