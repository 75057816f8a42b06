# Two set-up commands: `make serve` and `make test` (see README.md).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test lint bench browser wrk poppler ocr ocr-langs constraints

# Installs are pinned by constraints.txt (every package but sift, at the version tested).
# Serving needs sift and its dependencies only; the test tools come with `make test`.
$(BIN)/sift: pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e .
	touch $(BIN)/sift

$(BIN)/pytest: $(BIN)/sift
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(BIN)/pytest

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

# System packages go through ops/apt-install: no recommends, a bounded wait for a held apt or
# dpkg lock, and the reason said when they cannot be installed (then sift serves without them).
# The render engine drives the system's Chromium, with its fonts named (its recommends are not
# installed, and headless Chromium draws no text without a font): Liberation has the metrics of
# Arial, Times and Courier that pages are laid out for, DejaVu the scripts beyond Latin.
# Without Chromium, rendering answers "render engine not installed".
browser:
	@command -v chromium >/dev/null || ops/apt-install "rendering is off" chromium fonts-liberation fonts-dejavu-core || true

# OCR of scanned pages and images runs the system's Tesseract (English; add languages with
# their Debian packs, README "OCR"); without it a scan answers 422 hint `ocr` with the install line.
ocr:
	@command -v tesseract >/dev/null || ops/apt-install "OCR is off" tesseract-ocr tesseract-ocr-eng || true

serve: $(BIN)/sift browser ocr
	$(BIN)/sift serve

lint: $(BIN)/pytest
	$(BIN)/ruff check sift tests bench
	$(BIN)/ruff format --check sift tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# Coverage is of the test processes (the tests and the sift they run in them), not of their
# children. Two test processes share the cores: most tests wait on servers and children (more
# make the timing of the deadline tests flaky on two cores).
TEST_PROCS ?= 2
test: $(BIN)/pytest lint
	$(BIN)/pytest -q -n $(TEST_PROCS) --cov --cov-report=
	@echo "coverage of sift: $$($(BIN)/coverage report --format=total)%"

# The bench's load generator: wrk (C, epoll), so the load does not share Python's cores with sift.
wrk:
	@command -v wrk >/dev/null || ops/apt-install "the bench loads sift from Python" wrk || true

# The PDF rows' baseline: poppler's `pdftotext -layout`, the native tool sift's PDF text is
# measured against (without it those rows are skipped, and the run says so).
poppler:
	@command -v pdftotext >/dev/null || ops/apt-install "the bench skips its pdftotext rows" poppler-utils || true

# The OCR rows' other scripts: Russian and Simplified Chinese models, and a CJK font to set
# the generated Chinese pages in (without them those rows are absent, and the run says so).
ocr-langs:
	@[ -f /usr/share/tesseract-ocr/5/tessdata/rus.traineddata ] || ops/apt-install "the bench skips its Cyrillic OCR row" tesseract-ocr-rus || true
	@[ -f /usr/share/tesseract-ocr/5/tessdata/chi_sim.traineddata ] || ops/apt-install "the bench skips its CJK OCR row" tesseract-ocr-chi-sim || true
	@[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || ops/apt-install "the bench skips its CJK OCR row" fonts-wqy-microhei || true

# The bench extra holds baselines (markitdown for the office row). The data of the quality rows
# is read from ../shared/bench-data (beside the clone); the run names every row it could not
# measure, and why, at its end and in RESULTS.md.
bench: $(BIN)/pytest browser ocr ocr-langs wrk poppler
	$(BIN)/pip install -q -c constraints.txt -e '.[test,bench]'
	$(BIN)/python -m bench
