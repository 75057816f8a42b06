# Two set-up commands: `make serve` and `make test` (see README.md).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test lint bench

$(BIN)/sift: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/sift

serve: $(BIN)/sift
	$(BIN)/sift serve

lint: $(BIN)/sift
	$(BIN)/ruff check sift tests bench
	$(BIN)/ruff format --check sift tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

test: $(BIN)/sift lint
	$(BIN)/pytest -q

bench: $(BIN)/sift
	$(BIN)/python -m bench
