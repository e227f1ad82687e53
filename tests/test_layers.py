"""Layers: the kernel packages import nothing from the harness, the data loaders, the report
or the experiments (DESIGN.md, "Kernels")."""

import ast
import pathlib

import pytest

import jaxlab

ROOT = pathlib.Path(jaxlab.__file__).parent
NOT_KERNELS = {"train", "data", "report", "cli"}
FORBIDDEN = ("jaxlab.train", "jaxlab.data", "jaxlab.report", "experiments")
KERNEL_PACKAGES = sorted(
    p.name for p in ROOT.iterdir()
    if p.is_dir() and (p / "__init__.py").exists() and p.name not in NOT_KERNELS
)


def imported_modules(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in the file (relative ones resolved
    against its package under ``root``, the ``jaxlab`` folder)."""
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


def forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_kernel_packages_are_found():
    assert {"nn", "graph", "robust", "optim", "diffusion", "chem"} <= set(KERNEL_PACKAGES)


@pytest.mark.parametrize("package", KERNEL_PACKAGES)
def test_kernels_do_not_import_harness_data_report_or_experiments(package):
    bad = [f"{path.relative_to(ROOT.parent)}:{line}: {name}"
           for path in sorted((ROOT / package).rglob("*.py"))
           for line, name in imported_modules(path) if forbidden(name)]
    assert not bad, "kernel modules import a higher layer:\n" + "\n".join(bad)


def test_the_walker_catches_every_import_form(tmp_path):
    pkg = tmp_path / "jaxlab" / "nn"
    pkg.mkdir(parents=True)
    source = ("import jaxlab.train.runs\nfrom jaxlab import data\nfrom ..report import x\n"
              "from experiments.foo import bar\nimport numpy\nfrom . import sparse\n")
    (pkg / "bad.py").write_text(source)
    names = [n for _, n in imported_modules(pkg / "bad.py", tmp_path / "jaxlab")]
    assert [n for n in names if forbidden(n)] == [
        "jaxlab.train.runs", "jaxlab.data", "jaxlab.report.x", "jaxlab.report",
        "experiments.foo.bar", "experiments.foo"]
    assert "jaxlab.nn.sparse" in names and "numpy" in names
