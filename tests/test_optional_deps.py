"""Optional dependencies import lazily and name the extra that installs them when missing."""

import subprocess
import sys

import numpy as np
import pytest

from jaxlab._optional import MissingExtraError, import_optional, lazy_import

FAKE = "jaxlab_test_not_installed_pkg"


def test_lazy_import_defers_the_error_to_first_use():
    fake = lazy_import(FAKE, extra="audio")  # binding a missing package is fine
    with pytest.raises(MissingExtraError, match=r"install jaxlab\[audio\]"):
        fake.anything()


def test_import_optional_names_the_extra_for_a_missing_submodule():
    with pytest.raises(MissingExtraError, match=rf"{FAKE} is not installed.*jaxlab\[causal\]"):
        import_optional(f"{FAKE}.sub.module", extra="causal")


def test_missing_extra_is_an_import_error():
    assert issubclass(MissingExtraError, ImportError)


def test_a_broken_installed_package_is_not_reported_as_a_missing_extra(tmp_path, monkeypatch):
    # An installed package whose own dependency is missing: the real error surfaces.
    (tmp_path / "jaxlab_test_broken_pkg.py").write_text(f"import {FAKE}_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as info:
        import_optional("jaxlab_test_broken_pkg", extra="rl")
    assert not isinstance(info.value, MissingExtraError)
    assert info.value.name == f"{FAKE}_dependency"


def test_lazy_module_forwards_attributes_of_an_installed_package():
    lazy_np = lazy_import("numpy", extra="core")
    np.testing.assert_array_equal(lazy_np.arange(3), np.arange(3))


def test_lazy_module_does_not_import_on_dunder_lookups():
    fake = lazy_import(FAKE, extra="plots")
    assert not hasattr(fake, "__wrapped__")  # doctest/inspect probing stays silent
    assert "jaxlab[plots]" in repr(fake)


# Each call needs one optional package; all are hidden (None in sys.modules) in one fresh
# interpreter, where the families must still import.
CALLS = {
    "audio": "import jaxlab.audio as m; m.audio_features(np.zeros((1, 16000), np.float32), "
    "m.FeatureConfig(n_mels=17))",
    "rl": "import jaxlab.rl as m; m.lambda_returns(np.ones(3), np.ones(3), np.ones(3), 0.9)",
    "causal (networkx)": "import jaxlab.causal as m; m.as_digraph(np.zeros((2, 2)))",
    "causal (causal-learn)": "from jaxlab.causal import baselines; "
    "baselines.pc_adjacency(2, lambda *a: True)",
}
HIDDEN = ("librosa", "rlax", "distrax", "networkx", "causallearn")


def test_families_import_without_their_extras_and_fail_at_the_call():
    lines = ["import sys", *(f"sys.modules[{p!r}] = None" for p in HIDDEN), "import numpy as np"]
    for label, call in CALLS.items():
        lines += [
            "try:",
            f"    {call}",
            f"    print({label!r}, 'no error')",
            "except ImportError as error:",
            f"    print({label!r}, error)",
        ]
    out = subprocess.run(
        [sys.executable, "-c", "\n".join(lines)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout.splitlines()
    assert len(out) == len(CALLS), out
    for line, label in zip(out, CALLS, strict=True):
        extra = label.split()[0]
        assert line.startswith(label) and f"install jaxlab[{extra}]" in line, line
