#!/usr/bin/env bash
# The core install (no extras) is enough for the kernel families and the training harness:
# installs `pip install .` into a scratch venv, imports jaxlab.nn/graph/robust/diffusion/train
# and the causal/audio/rl packages from another directory, checks that the optional packages
# are really absent, that calling an audio function names the extra that installs it, and
# that `jaxlab list` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --upgrade pip
"$tmp/venv/bin/python" -m pip install -q .
cd "$tmp"
"$tmp/venv/bin/python" - <<'PY'
import importlib.util

optional = ["librosa", "mir_eval", "rlax", "distrax", "causallearn", "networkx",
            "matplotlib", "sklearn", "rdkit"]
present = [name for name in optional if importlib.util.find_spec(name) is not None]
assert not present, f"the core install pulled optional packages: {present}"

import numpy as np

import jaxlab.audio
import jaxlab.causal
import jaxlab.diffusion
import jaxlab.graph
import jaxlab.nn
import jaxlab.rl
import jaxlab.robust
import jaxlab.train

try:
    jaxlab.audio.audio_features(np.zeros((1, 16000), np.float32))
except ImportError as error:
    assert "install jaxlab[audio]" in str(error), error
    print(f"audio without its extra: {error}")
else:
    raise AssertionError("audio_features ran without librosa")
PY
"$tmp/venv/bin/jaxlab" list > /dev/null  # the CLI and every experiment's metadata
echo "core-import-check: core-only install imports nn, graph, robust, diffusion, train," \
     "causal, audio, rl: ok ($((SECONDS - start)) s)"
