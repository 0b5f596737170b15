# Two commands do all set-up on a fresh machine:
#   make demo   installs into .venv and runs the quickstart on the embedded local model
#   make test   installs into .venv and runs the linters and the default test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/engine: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(BIN)/engine

install: $(BIN)/engine

demo: install
	$(BIN)/engine run examples/quickstart.toml --store .engine

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

.PHONY: install demo test
