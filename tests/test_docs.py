"""The documentation stays true to the code: the figures are written by the
benchmark, the API and CLI references are generated from the code and
current, and every Python example in README.md and docs/ runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastnotebook.bench import report
from fastnotebook.bench.metrics import SizeStats
from fastnotebook.bench.runner import (
    ChunkingResult,
    PoolingResult,
    Report,
    Timing,
    TokenResult,
)

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
    )


def fake_report() -> Report:
    chunking = [
        _chunking("fastnotebook", "chars", "html", 200.0, 100.0),
        _chunking("original (langchain)", "chars", "html", 2.0, 1.0),
        _chunking("chonkie FastChunker", "chars", "html", 300.0, 150.0),
        _chunking("semchunk", "chars", "html", 10.0, 5.0),
        _chunking("fastnotebook", "tokens", "markdown", 80.0, 40.0),
        _chunking("original (langchain+tiktoken)", "tokens", "markdown", 2.0, 1.0),
    ]
    tokens = [
        TokenResult("fastnotebook token_count", "o200k_base", "html", Timing(mbs=[150.0]), 1.0, 10.0),
        TokenResult("fastnotebook token_count", "o200k_base", "plain", Timing(mbs=[120.0]), 1.0, 8.0),
        TokenResult("tiktoken", "o200k_base", "html", Timing(mbs=[15.0]), None, 1.0),
        TokenResult("tiktoken", "o200k_base", "plain", Timing(mbs=[15.0]), None, 1.0),
    ]
    pooling = [
        PoolingResult("original (numpy, from lists)", "10 x 8 x 768 float lists", 100.0, 0.3, 1.0),
        PoolingResult(
            "fastnotebook mean_pool_embeddings (lists)", "10 x 8 x 768 float lists", 25.0, 1.2, 4.0
        ),
    ]
    return Report(
        corpus="fake corpus",
        environment={"cpu": "Test CPU", "cores": 2, "python": "3.11.7"},
        missing={},
        chunking=chunking,
        tokens=tokens,
        pooling=pooling,
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
    ]
    markdown = by_task["chunk_text, Markdown, 400 tokens"]
    assert markdown[1:5] == ["80 MB/s", "2.0 MB/s", "40.0x", "-"]
    tokens = by_task["token_count, o200k_base (HTML, Markdown, plain text)"]
    assert tokens[1:4] == ["120-150 MB/s", "tiktoken 15.0-15.0 MB/s", "8.0-10.0x"]
    pooling = by_task["mean_pool_embeddings, lists of floats (10 x 8 x 768 float lists)"]
    assert pooling[1:4] == ["1.20 GB/s", "original (numpy, from lists): 0.30 GB/s", "4.0x"]
    bulk = by_task["bulk embedding, default model (50 chunks)"]
    assert bulk[1] == "share of wall time: model 99.0%, database 5.0%, fastnotebook 0.01%"
    # Content types the run did not measure get no row.
    assert not any(task.startswith("chunk_text, plain text") for task in by_task)


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
