# Two set-up commands: `make serve` and `make test` (see README.md).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test lint bench browser wrk ocr constraints

# Installs are pinned by constraints.txt (every package but sift, at the version tested).
$(BIN)/sift: pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(BIN)/sift

# After a change to the dependencies of pyproject.toml: resolve them afresh in a throwaway
# venv and pin what was installed.
constraints:
	rm -rf .venv-constraints
	$(PY) -m venv .venv-constraints
	.venv-constraints/bin/pip install -q --upgrade pip
	.venv-constraints/bin/pip install -q -e '.[test]'
	{ echo '# Every package a `make` install takes, at the version tested; `make constraints`'; \
	  echo "# makes it again after pyproject.toml's dependencies change."; \
	  .venv-constraints/bin/pip freeze --exclude-editable; } > constraints.txt
	rm -rf .venv-constraints

# The render engine drives the system's Chromium: installed when missing and sift runs as
# root; otherwise sift serves without it (rendering answers "render engine not installed").
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && \
		apt-get update -q && apt-get install -y -q chromium; } || \
		echo "chromium not installed (apt-get install chromium): rendering is off"

# OCR of scanned pages and images runs the system's Tesseract (English; add languages with
# their Debian packs, README "OCR"): installed when missing and sift runs as root; otherwise a
# scan answers 422 hint `ocr` with this install line.
ocr:
	@command -v tesseract >/dev/null || { [ "$$(id -u)" = 0 ] && \
		apt-get update -q && apt-get install -y -q tesseract-ocr tesseract-ocr-eng; } || \
		echo "tesseract not installed (apt-get install tesseract-ocr): OCR is off"

serve: $(BIN)/sift browser ocr
	$(BIN)/sift serve

lint: $(BIN)/sift
	$(BIN)/ruff check sift tests bench
	$(BIN)/ruff format --check sift tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# Coverage is of the test processes (the tests and the sift they run in them), not of their
# children. Two test processes share the cores: most tests wait on servers and children (more
# make the timing of the deadline tests flaky on two cores).
TEST_PROCS ?= 2
test: $(BIN)/sift lint
	$(BIN)/pytest -q -n $(TEST_PROCS) --cov --cov-report=
	@echo "coverage of sift: $$($(BIN)/coverage report --format=total)%"

# The bench's load generator: wrk (C, epoll), so the load does not share Python's cores with sift.
wrk:
	@command -v wrk >/dev/null || { [ "$$(id -u)" = 0 ] && \
		apt-get update -q && apt-get install -y -q wrk; } || \
		echo "wrk not installed (apt-get install wrk): the bench's load comes from Python"

# The bench extra holds baselines (markitdown for the office row).
bench: $(BIN)/sift browser wrk
	$(BIN)/pip install -q -c constraints.txt -e '.[test,bench]'
	$(BIN)/python -m bench
