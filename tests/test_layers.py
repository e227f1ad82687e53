"""Layers (DESIGN.md): kernels ← data ← train ← trainers ← experiments ← report / cli. Each
layer imports only the layers below it, and the harness no kernel: the kernel packages
import nothing of the data loaders, the harness, the paper trainers, the report, the CLI or
the experiments; the data loaders nothing of the harness (data ↛ train); the harness
(``jaxlab.train``) no kernel package, no paper trainer and nothing of the report; the paper
trainers (``jaxlab.trainers``) nothing of the experiments, the report or the CLI; an experiment's
code (``train.py``, its trainer modules) nothing of the report or the CLI, and no paper's
experiments import another paper's.

An experiment's declarations, its ``__init__.py`` (the ``Paper``/``Experiment`` records) and
its ``config.py`` (``base_config``, ``PaperSetting``, the seed power analysis), are written
with the report's record types, so those two files may import ``jaxlab.report``."""

import ast
import pathlib

import pytest

import jaxlab

ROOT = pathlib.Path(jaxlab.__file__).parent
EXPERIMENTS = ROOT.parent / "experiments"
NOT_KERNELS = {"train", "trainers", "data", "report", "cli"}
EXPERIMENT_PACKAGES = ("experiments", "jaxlab_experiments")
TRAINERS = "jaxlab.trainers"
HIGHER = {
    "kernels": (
        "jaxlab.data",
        "jaxlab.train",
        TRAINERS,
        "jaxlab.report",
        "jaxlab.cli",
        *EXPERIMENT_PACKAGES,
    ),
    "data": ("jaxlab.train", TRAINERS, "jaxlab.report", "jaxlab.cli", *EXPERIMENT_PACKAGES),
    "train": (TRAINERS, "jaxlab.report", "jaxlab.cli", *EXPERIMENT_PACKAGES),
    "trainers": ("jaxlab.report", "jaxlab.cli", *EXPERIMENT_PACKAGES),
    "experiment code": ("jaxlab.report", "jaxlab.cli"),
    "experiment declarations": ("jaxlab.cli",),
}
KERNEL_PACKAGES = sorted(
    p.name
    for p in ROOT.iterdir()
    if p.is_dir() and (p / "__init__.py").exists() and p.name not in NOT_KERNELS
)
DECLARATIONS = ("__init__.py", "config.py")


def imported_modules(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in the file (relative ones resolved
    against its package under ``root``, the top package's folder)."""
    package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            # `from jaxlab import train` imports jaxlab.train
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
            found.append((node.lineno, module))
    return found


def within(name: str, prefixes) -> bool:
    return any(name == f or name.startswith(f + ".") for f in prefixes)


def forbidden(name: str) -> bool:
    """A module no kernel may import."""
    return within(name, HIGHER["kernels"])


def violations(paths, prefixes, root: pathlib.Path = ROOT) -> list[str]:
    return [
        f"{path.relative_to(root.parent)}:{line}: {name}"
        for path in sorted(paths)
        for line, name in imported_modules(path, root)
        if within(name, prefixes)
    ]


def test_kernel_packages_are_found():
    assert {"nn", "graph", "robust", "optim", "diffusion", "chem"} <= set(KERNEL_PACKAGES)


@pytest.mark.parametrize("package", KERNEL_PACKAGES)
def test_kernels_do_not_import_harness_data_report_or_experiments(package):
    bad = violations((ROOT / package).rglob("*.py"), HIGHER["kernels"])
    assert not bad, "kernel modules import a higher layer:\n" + "\n".join(bad)


def test_the_top_level_modules_are_kernels():
    """``jaxlab/_checks.py``, ``jaxlab/_optional.py``: shared by every layer."""
    paths = [p for p in ROOT.glob("*.py") if p.name not in ("cli.py", "conftest.py")]
    assert {"_checks.py", "_optional.py"} <= {p.name for p in paths}
    bad = violations(paths, HIGHER["kernels"])
    assert not bad, "top-level modules import a higher layer:\n" + "\n".join(bad)


def test_data_does_not_import_the_harness_report_or_experiments():
    bad = violations((ROOT / "data").rglob("*.py"), HIGHER["data"])
    assert not bad, "jaxlab.data imports a higher layer:\n" + "\n".join(bad)


def test_train_does_not_import_the_trainers_report_cli_or_experiments():
    bad = violations((ROOT / "train").rglob("*.py"), HIGHER["train"])
    assert not bad, "jaxlab.train imports a higher layer:\n" + "\n".join(bad)


def test_train_imports_no_kernel_package():
    kernels = [f"jaxlab.{package}" for package in KERNEL_PACKAGES]
    bad = violations((ROOT / "train").rglob("*.py"), kernels)
    assert not bad, "jaxlab.train imports a kernel package:\n" + "\n".join(bad)


def test_the_trainers_do_not_import_the_report_cli_or_experiments():
    paths = list((ROOT / "trainers").rglob("*.py"))
    assert {"curriculum.py", "rl.py", "gadc.py", "byzantine.py"} <= {p.name for p in paths}
    bad = violations(paths, HIGHER["trainers"])
    assert not bad, "jaxlab.trainers imports a higher layer:\n" + "\n".join(bad)


def _experiment_files():
    """The experiments' modules; ``conftest.py`` is pytest's configuration of their doctests
    (it checks the backend with ``jaxlab.report.xla_env``), not experiment code."""
    return sorted(
        p
        for p in EXPERIMENTS.rglob("*.py")
        if "__pycache__" not in p.parts and p.name != "conftest.py"
    )


def test_experiment_code_does_not_import_the_report_or_cli():
    code = [p for p in _experiment_files() if p.name not in DECLARATIONS]
    declarations = [p for p in _experiment_files() if p.name in DECLARATIONS]
    assert any(p.name == "train.py" for p in code)
    bad = violations(code, HIGHER["experiment code"], EXPERIMENTS) + violations(
        declarations, HIGHER["experiment declarations"], EXPERIMENTS
    )
    assert not bad, "experiment code imports the report or the CLI:\n" + "\n".join(bad)


def _paper(name: str) -> str | None:
    """The paper folder a module name is in (``experiments.<paper>...``)."""
    for package in EXPERIMENT_PACKAGES:
        if name.startswith(package + "."):
            return name.split(".")[1]
    return None


def test_no_paper_imports_another_paper():
    bad = []
    for path in _experiment_files():
        parts = path.relative_to(EXPERIMENTS).parts
        if len(parts) < 2:
            continue
        for line, name in imported_modules(path, EXPERIMENTS):
            other = _paper(name)
            if other is not None and other != parts[0]:
                bad.append(f"experiments/{'/'.join(parts)}:{line}: {name}")
    assert not bad, "a paper's experiments import another paper:\n" + "\n".join(bad)


def test_the_walker_catches_every_import_form(tmp_path):
    pkg = tmp_path / "jaxlab" / "nn"
    pkg.mkdir(parents=True)
    source = (
        "import jaxlab.train.runs\nfrom jaxlab import data\nfrom ..report import x\n"
        "from experiments.foo import bar\nimport numpy\nfrom . import sparse\n"
    )
    (pkg / "bad.py").write_text(source)
    names = [n for _, n in imported_modules(pkg / "bad.py", tmp_path / "jaxlab")]
    assert [n for n in names if forbidden(n)] == [
        "jaxlab.train.runs",
        "jaxlab.data",
        "jaxlab.report.x",
        "jaxlab.report",
        "experiments.foo.bar",
        "experiments.foo",
    ]
    assert "jaxlab.nn.sparse" in names and "numpy" in names


def test_the_walker_resolves_a_papers_relative_imports(tmp_path):
    """``from ...other import x`` in ``experiments/a/exp/train.py`` is paper ``other``."""
    exp = tmp_path / "experiments" / "a" / "exp"
    exp.mkdir(parents=True)
    (exp / "train.py").write_text(
        "from ...other.trainer import x\nfrom ..trainer import y\n"
        "from jaxlab_experiments.b import z\n"
    )
    names = [n for _, n in imported_modules(exp / "train.py", tmp_path / "experiments")]
    assert {_paper(n) for n in names} == {"other", "a", "b"}
