# fastnotebook -- run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RUST_SOURCES := $(shell find rust -name '*.rs') Cargo.toml Cargo.lock pyproject.toml

.PHONY: help setup build test test-rust test-python lint format demo bench docs fuzz clean

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV)/.setup: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip "maturin>=1.9,<2"
	touch $@

# maturin develop installs into the active virtualenv (VIRTUAL_ENV, CONDA_PREFIX):
# point it at this one whatever the caller has active.
IN_VENV := env -u CONDA_PREFIX VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH

$(VENV)/.built: $(VENV)/.setup $(RUST_SOURCES)
	# test-hooks: the functions only the tests call (release builds leave them out).
	$(IN_VENV) maturin develop --release --quiet --extras dev,app,local,bench,langchain,ray,qdrant --features test-hooks
	touch $@

setup: $(VENV)/.setup ## Create the virtualenv
build: $(VENV)/.built ## Build the extension (release) into the virtualenv

test: build lint test-rust test-python ## Set up, build, lint, run all tests

test-rust: ## Rust unit and property tests
	cargo test --quiet --all-targets --all-features

test-python: build ## Python tests (parity against the references), benchmarks once each as tests
	$(PY) -m pytest -q
	$(PY) -m pytest benches --benchmark-disable -q

lint: build ## rustfmt, clippy, ruff, mypy, stubtest
	cargo fmt --check
	cargo clippy --quiet --all-targets --all-features -- -D warnings
	cargo clippy --quiet --lib --no-default-features -- -D warnings  # the core without pyo3
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

BENCH_OUT ?= docs/perf

# The pipeline runs first so that `fastnotebook bench --docs`, last, puts its
# shares in the README's table too.
bench: build ## Benchmarks against the references, same run (figures: docs/perf, README, docs/performance.md)
	$(PY) benches/bench_pipeline.py --full-text-mb 0.25 --out $(BENCH_OUT) --docs docs/performance.md
	$(PY) benches/bench_concurrency.py --out $(BENCH_OUT) --docs docs/performance.md
	$(PY) benches/bench_notes_import.py --out $(BENCH_OUT)
	$(PY) benches/bench_chunking.py
	$(PY) benches/bench_tokens.py
	$(PY) benches/bench_string_floor.py --langchain
	$(PY) benches/bench_pooling_floor.py
	$(PY) benches/bench_machine_state.py
	$(PY) benches/bench_text_utils.py
	$(PY) benches/bench_context.py
	$(PY) benches/bench_ray_scaling.py --docs docs/SCALING.md
	$(PY) benches/bench_search.py --docs docs/performance.md --scaling docs/SCALING.md
	$(PY) -m fastnotebook bench --out $(BENCH_OUT) --docs .
	# pytest-benchmark: each hot path beside its reference (saved in .benchmarks;
	# compare a later run with `pytest benches --benchmark-only --benchmark-compare`).
	$(PY) -m pytest benches --benchmark-only --benchmark-autosave -q

docs: build ## Regenerate docs/api.md (docstrings), docs/cli.md's reference (argument parser) and docs/ARCHITECTURE.md's drawing (import graph)
	$(PY) scripts/gen_api_docs.py
	$(PY) scripts/gen_cli_docs.py
	$(PY) scripts/gen_architecture.py

FUZZ_SECONDS ?= 60
FUZZ_TARGETS := detect recursive markdown html chunk_chars chunk_tokens tokens pooling cleaning transcode notes
# libFuzzer needs unstable compiler flags: the stable toolchain accepts them
# with RUSTC_BOOTSTRAP=1 (no nightly needed). Overflow checks are on (-a).
# Inputs up to 4 KB (1 KB for tokens, whose oracles are quadratic).
FUZZ_ENV := RUSTC_BOOTSTRAP=1

fuzz: ## Run every fuzz target for FUZZ_SECONDS (default 60) each; stop at a finding
	command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
	$(PYTHON) fuzz/seeds.py
	cd fuzz && $(FUZZ_ENV) cargo fuzz build -a
	mkdir -p fuzz/logs
	set -o pipefail; for t in $(FUZZ_TARGETS); do \
	  echo "== $$t ($(FUZZ_SECONDS)s)"; \
	  len=4096; [ $$t = tokens ] && len=1024; \
	  (cd fuzz && $(FUZZ_ENV) cargo fuzz run -a $$t -- -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=$$len -timeout=20 -rss_limit_mb=4096 -print_final_stats=1) \
	    > fuzz/logs/$$t.log 2>&1 || { tail -40 fuzz/logs/$$t.log; exit 1; }; \
	  grep -E "stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" fuzz/logs/$$t.log; \
	done
	@echo "every target ran $(FUZZ_SECONDS)s without a finding (logs: fuzz/logs)"

clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf $(VENV)
