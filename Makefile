# Two set-up commands: `make serve` and `make test` (see README.md).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test lint bench browser

$(BIN)/sift: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/sift

# The render engine drives the system's Chromium: installed when missing and sift runs as
# root; otherwise sift serves without it (rendering answers "render engine not installed").
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && \
		apt-get update -q && apt-get install -y -q chromium; } || \
		echo "chromium not installed (apt-get install chromium): rendering is off"

serve: $(BIN)/sift browser
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
