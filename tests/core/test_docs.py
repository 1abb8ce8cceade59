"""The documentation stays true to the code: the figures are written by the
benchmark, the API and CLI references are generated from the code and
current, and every Python example in README.md and docs/ runs."""

from __future__ import annotations

import argparse
import doctest
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fastnotebook.bench import report
from fastnotebook.bench.methods import OPEN_NOTEBOOK_HEAD
from fastnotebook.bench.metrics import SizeStats
from fastnotebook.bench.records import HEADLINE_CASES, RecordResult, cases
from fastnotebook.bench.runner import (
    ChunkingResult,
    PoolingResult,
    Report,
    TokenResult,
)
from fastnotebook.bench.timing import Timing

ROOT = Path(__file__).resolve().parent
while not (ROOT / "pyproject.toml").is_file():
    ROOT = ROOT.parent


# --- figures written by the benchmark ------------------------------------------


def _chunking(method: str, unit: str, kind: str, mbs: float, ratio: float) -> ChunkingResult:
    return ChunkingResult(
        method=method,
        unit=unit,
        limit=1500 if unit == "chars" else 400,
        kind=kind,
        documents=3,
        megabytes=1.0,
        timing=Timing(mbs=[mbs * 0.9, mbs, mbs * 1.1], docs_per_s=[1.0], mbs_with_release=[mbs]),
        sizes=SizeStats(count=10, min=1, median=5.0, p95=9.0, max=10, over_limit=0),
        coverage=1.0,
        tiny_chunks=0,
        identical_to_original=1.0 if method == "fastnotebook" else None,
        ratio_to_original=ratio,
        ratio_with_release=ratio,
        ratio_to_token_pass=1.1 if method == "fastnotebook" and unit == "tokens" else None,
    )


def fake_report() -> Report:
    chunking = [
        _chunking("fastnotebook", "chars", "html", 200.0, 100.0),
        _chunking("original (langchain)", "chars", "html", 2.0, 1.0),
        _chunking("chonkie FastChunker", "chars", "html", 300.0, 150.0),
        _chunking("semchunk", "chars", "html", 10.0, 5.0),
        _chunking("fastnotebook", "tokens", "markdown", 80.0, 40.0),
        _chunking("original (langchain+tiktoken)", "tokens", "markdown", 2.0, 1.0),
        # fastnotebook's own row for Open Notebook's current contract: not a peer.
        _chunking(OPEN_NOTEBOOK_HEAD, "tokens", "markdown", 90.0, 45.0),
    ]
    tokens = [
        TokenResult(
            "fastnotebook token_count", "o200k_base", "html", Timing(mbs=[150.0]), 1.0, 10.0
        ),
        TokenResult(
            "fastnotebook token_count", "o200k_base", "plain", Timing(mbs=[120.0]), 1.0, 8.0
        ),
        TokenResult("tiktoken", "o200k_base", "html", Timing(mbs=[15.0]), None, 1.0),
        TokenResult("tiktoken", "o200k_base", "plain", Timing(mbs=[15.0]), None, 1.0),
    ]
    pooling = [
        PoolingResult("original (numpy, from lists)", "10 x 8 x 768 float lists", 100.0, 0.3, 1.0),
        PoolingResult(
            "fastnotebook mean_pool_embeddings (lists)", "10 x 8 x 768 float lists", 25.0, 1.2, 4.0
        ),
    ]
    records = [
        RecordResult(
            "markdown, 400 tokens", "fastnotebook chunk", 10, 2.0, 60.0, "50-70", 100, 30.0
        ),
        RecordResult(
            "markdown, 400 tokens", "fastnotebook chunk_many (all cores)", 10, 2.0, 110.0, "", 100
        ),
        RecordResult("markdown, 400 tokens", "slow peer", 10, 2.0, 1.0, "1-1", 90),
        RecordResult("markdown, 400 tokens", "fast peer", 10, 2.0, 2.0, "2-2", 95),
        # Not a headline case: only in the full table.
        RecordResult("json, 1000 chars", "fastnotebook chunk", 10, 2.0, 60.0, "50-70", 100, 5.0),
        RecordResult("json, 1000 chars", "peer", 10, 2.0, 12.0, "12-12", 100),
    ]
    return Report(
        corpus="fake corpus",
        environment={"cpu": "Test CPU", "cores": 2, "python": "3.11.7"},
        missing={},
        chunking=chunking,
        tokens=tokens,
        pooling=pooling,
        records=records,
    )


PIPELINE = {
    "pipeline, default model (sample)": {
        "documents": 4,
        "chunks": 50,
        "bytes": 250_000,
        "embed_seconds": 10.0,
        "peak_mb": 900.0,
        "embed_stages": {"model": 9.9, "write": 0.5, "chunk": 0.001},
    }
}


def test_headline_rows_compare_with_the_original_and_the_fastest_peer() -> None:
    rows = report.headline_rows(fake_report(), PIPELINE)
    by_task = {row[0]: row for row in rows}
    html = by_task["chunk_text, HTML, 1500 characters"]
    assert html == [
        "chunk_text, HTML, 1500 characters",
        "200 MB/s",
        "2.0 MB/s",
        "100.0x",
        "chonkie FastChunker: 300 MB/s (0.7x)",
        "100%",
        "-",
    ]
    markdown = by_task["chunk_text, Markdown, 400 tokens"]
    assert markdown[1:5] == ["80 MB/s", "2.0 MB/s", "40.0x", "-"]
    # Chunking in tokens against one token_count pass over the same documents.
    assert markdown[6] == "1.10x"
    assert all(len(row) == len(report.HEADLINE_HEADER) for row in rows)
    tokens = by_task["token_count, o200k_base (HTML, Markdown, plain text)"]
    assert tokens[1:4] == ["120-150 MB/s", "tiktoken 15.0-15.0 MB/s", "8.0-10.0x"]
    pooling = by_task["mean_pool_embeddings, lists of floats (10 x 8 x 768 float lists)"]
    assert pooling[1:4] == ["1.20 GB/s", "original (numpy, from lists): 0.30 GB/s", "4.0x"]
    bulk = by_task["bulk embedding, default model (50 chunks)"]
    assert bulk[1] == (
        "share of wall time (the parts overlap): model 99.0%, database 5.0%, fastnotebook 0.01%"
    )
    # Content types the run did not measure get no row.
    assert not any(task.startswith("chunk_text, plain text") for task in by_task)
    records = by_task["chunk records, markdown, 400 tokens"]
    assert records[1:5] == ["60 MB/s", "-", "-", "fast peer: 2.0 MB/s (30.0x)"]
    assert not any(task.startswith("chunk records, json") for task in by_task)


def test_the_headline_record_cases_are_cases_of_the_benchmark() -> None:
    assert set(HEADLINE_CASES) <= {case.name for case in cases()}


def test_chunking_rows_give_the_token_pass_ratio_of_our_rows_in_tokens() -> None:
    rows = report.chunking_rows(fake_report().chunking)
    column = report.CHUNKING_HEADER.index("time vs one token_count pass")
    assert all(len(row) == len(report.CHUNKING_HEADER) for row in rows)
    ratios = {(row[1], row[2]): row[column] for row in rows}
    assert ratios["fastnotebook", "tokens"] == "1.10x"
    assert ratios["fastnotebook", "chars"] == "-"
    assert ratios["original (langchain+tiktoken)", "tokens"] == "-"


def test_replace_between_markers_keeps_the_rest() -> None:
    text = f"intro\n{report.BEGIN_MARKER}\nold figures\n{report.END_MARKER}\noutro\n"
    new = report.replace_between_markers(text, "new figures")
    assert new == f"intro\n{report.BEGIN_MARKER}\nnew figures\n{report.END_MARKER}\noutro\n"
    assert report.replace_between_markers(new, "new figures") == new


@pytest.mark.parametrize(
    "text",
    [
        "no markers at all",
        f"{report.BEGIN_MARKER} only the beginning",
        f"{report.END_MARKER} before {report.BEGIN_MARKER}",
        f"{report.BEGIN_MARKER}{report.BEGIN_MARKER}{report.END_MARKER}",
    ],
)
def test_replace_between_markers_refuses_bad_markers(text: str) -> None:
    with pytest.raises(ValueError, match="bench"):
        report.replace_between_markers(text, "figures")


def test_write_docs_rewrites_readme_and_performance_page(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    markers = f"{report.BEGIN_MARKER}\nstale\n{report.END_MARKER}"
    (tmp_path / "README.md").write_text(f"# title\n\n{markers}\n\nmore\n")
    (tmp_path / "docs" / "performance.md").write_text(f"# perf\n{markers}\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "pipeline.json").write_text(json.dumps(PIPELINE))
    written = report.write_docs(fake_report(), tmp_path, out, commit="abc1234", date="2026-12-02")
    assert written == [tmp_path / "README.md", tmp_path / "docs" / "performance.md"]
    readme = (tmp_path / "README.md").read_text()
    assert "stale" not in readme
    assert readme.startswith("# title\n\n") and readme.endswith("\n\nmore\n")
    assert "| chunk_text, HTML, 1500 characters | 200 MB/s | 2.0 MB/s | 100.0x |" in readme
    stamp = "Measured 2026-12-02, commit abc1234, on Test CPU (2 cores), Python 3.11.7"
    assert stamp in readme
    figure = f"{report.FIGURE_BEGIN}x{report.FIGURE_END}"
    (tmp_path / "README.md").write_text(f"It chunks {figure}.\n{markers}\n")
    report.write_docs(fake_report(), tmp_path, out, commit="abc1234", date="2026-12-02")
    assert (
        (tmp_path / "README.md")
        .read_text()
        .startswith(
            f"It chunks {report.FIGURE_BEGIN}100x faster than the original on HTML"
            f"{report.FIGURE_END}.\n"
        )
    )
    performance = (tmp_path / "docs" / "performance.md").read_text()
    assert stamp in performance
    for title in ("### Headline", "### Chunking", "### Token counting", "### Mean pooling"):
        assert title in performance
    assert "| pipeline, default model (sample) | 4 | 50 | 0.25 | 10.0 | 900 |" in performance


def test_write_docs_needs_the_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"README\.md"):
        report.write_docs(fake_report(), tmp_path, tmp_path)


def test_the_repository_documents_carry_the_markers() -> None:
    for path in (ROOT / "README.md", ROOT / "docs" / "performance.md"):
        text = path.read_text(encoding="utf-8")
        # Raises when the markers are missing or broken.
        report.replace_between_markers(text, "figures")


# --- generated references are current --------------------------------------------


def _script(name: str) -> Any:
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_current() -> None:
    gen = _script("gen_api_docs")
    current = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert current == gen.updated(current), "docs/api.md: run python scripts/gen_api_docs.py"


def test_api_reference_covers_every_public_name() -> None:
    import fastnotebook

    gen = _script("gen_api_docs")
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    reference = text[text.index(gen.MARKER) :]
    names = list(fastnotebook.__all__)
    for module_name in gen.MODULES:
        if gen.importable(module_name):
            names += importlib.import_module(module_name).__all__
    for name in names:
        assert f"`{name}" in reference or f"{name}`" in reference, name


def test_cli_reference_is_current() -> None:
    gen = _script("gen_cli_docs")
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == gen.replace_section(current, gen.render()), (
        "docs/cli.md: run python scripts/gen_cli_docs.py"
    )


def test_cli_reference_lists_every_command_and_option() -> None:
    gen = _script("gen_cli_docs")
    parser = gen.build_parser()
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, sub in gen.subcommands(parser).items():
        assert f"### fastnotebook {name}" in text
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert f"`{option}`" in text, (name, option)


def test_generated_sections_are_refused_without_markers() -> None:
    gen = _script("gen_cli_docs")
    with pytest.raises(ValueError, match="cli:begin"):
        gen.replace_section("no markers here", "section")
    api = _script("gen_api_docs")
    with pytest.raises(ValueError, match="api:begin"):
        api.updated("no marker here")


# --- every example runs -----------------------------------------------------------

FENCE = re.compile(r"^```(\w*)\s*$")
SKIP = re.compile(r"<!--\s*skip-test:")


def code_blocks(path: Path, language: str) -> list[tuple[int, str, bool]]:
    """(line, code, skipped) of each fenced block in ``language``; a block is
    skipped when the line before its fence is a ``<!-- skip-test: ... -->``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start = i
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if match.group(1) == language:
            skipped = start > 0 and bool(SKIP.search(lines[start - 1]))
            blocks.append((start + 1, "\n".join(lines[start + 1 : end]) + "\n", skipped))
        i = end + 1
    return blocks


#: The documents with Python examples to run (the others have none).
DOCUMENTS = [
    path
    for path in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    if any(not skipped for _, _, skipped in code_blocks(path, "python"))
]

# Ends with os._exit once the output is flushed, as the fastnotebook command
# does: the embedded database's native module may abort the interpreter's
# shutdown ("panic in a function that cannot unwind", docs/ROBUSTNESS.md),
# after every block has run.
RUNNER = """
import json, os, sys, traceback
blocks = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
for line, code in blocks:
    try:
        exec(compile(code, f"{sys.argv[1]}:{line}", "exec"), namespace)
    except BaseException:
        traceback.print_exc()
        sys.stderr.write(f"the block at {sys.argv[1]}:{line} failed\\n")
        sys.stderr.flush()
        os._exit(1)
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(path: Path, tmp_path: Path) -> None:
    """Each document's Python blocks run in order, in one namespace, in a
    fresh interpreter with its own database folder."""
    blocks = code_blocks(path, "python")
    runnable = [(line, code) for line, code, skipped in blocks if not skipped]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SURREAL_", "FASTNOTEBOOK_"))}
    env["FASTNOTEBOOK_DATA_DIR"] = str(tmp_path / "data")
    env.pop("OPEN_NOTEBOOK_CHUNK_SIZE", None)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path.relative_to(ROOT))],
        input=json.dumps(runnable),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_readme_and_docs_have_examples() -> None:
    """The pages meant to show code do (so that the test above is not empty)."""
    assert {ROOT / "README.md", ROOT / "docs" / "api.md"} <= set(DOCUMENTS)


def test_api_reference_doctests_pass() -> None:
    """The ``>>>`` examples of the docstrings, as docs/api.md shows them, run
    in their module's namespace."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    module = "fastnotebook"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    examples = 0
    for chunk in re.split(r"(?m)^(?=### `fastnotebook)", text):
        heading = re.match(r"### `(fastnotebook[\w.]*)`", chunk)
        if heading:
            module = heading.group(1)
        globs = dict(vars(importlib.import_module(module)))
        for match in re.finditer(r"```pycon\n(.*?)```", chunk, re.DOTALL):
            test = parser.get_doctest(match.group(1), globs, module, "docs/api.md", 0)
            examples += len(test.examples)
            runner.run(test)
    assert examples >= 10
    assert runner.failures == 0, f"{runner.failures} doctest examples in docs/api.md failed"


def test_code_blocks_finds_and_skips() -> None:
    path = ROOT / "docs" / "api.md"
    blocks = code_blocks(path, "python")
    assert any(skipped for _, _, skipped in blocks)
    assert any("configure_embedding_model" in code for _, code, skipped in blocks if skipped)
