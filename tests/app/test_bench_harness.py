"""`fastnotebook bench` runs every code path on a tiny corpus."""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

import pytest

from fastnotebook.app.cli import main
from fastnotebook.bench import corpus, report, runner
from fastnotebook.bench import timing as bench_timing
from fastnotebook.bench.methods import chunking_methods

HTML = (
    "<html><body><h1>Title</h1>"
    + "<p>Some words here. " * 200
    + "</p><h2>B</h2><p>end</p></body></html>"
)
MARKDOWN = (
    "# Title\n\n" + "A line of markdown text with `code` and [a](b).\n" * 80 + "## Two\n\nend\n"
)
PLAIN = "Plain words in sentences. " * 300


@pytest.fixture(autouse=True)
def _single_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each job once per timing: these tests check what is measured, not how
    steadily."""
    monkeypatch.setattr(bench_timing, "MIN_TIMING_SECONDS", 0.0)


def tiny_corpus(folder: Path) -> Path:
    folder.mkdir()
    (folder / "page.html").write_text(HTML)
    (folder / "notes.md").write_text(MARKDOWN)
    (folder / "sub").mkdir()
    (folder / "sub" / "text.txt").write_text(PLAIN)
    (folder / "ignored.bin").write_bytes(b"\x00\x01")
    return folder


def test_a_timing_repeats_a_short_job_up_to_the_minimum_time() -> None:
    calls: list[str] = []

    def short() -> None:
        calls.append("short")
        time.sleep(0.001)

    def long() -> None:
        calls.append("long")
        time.sleep(0.03)

    timings = bench_timing.time_rounds(
        {"short": short, "long": long}, size=1_000_000, count=4, repeats=2, min_seconds=0.02
    )
    assert calls.count("long") == 2
    # At most ~20 runs of 1 ms fit in 20 ms; sleeping may take longer.
    assert 4 <= calls.count("short") <= 2 * 21
    for name, per_run in (("short", 0.001), ("long", 0.03)):
        timing = timings[name]
        # Every run lasts at least its sleep: at most 1 MB per `per_run` seconds.
        assert all(0 < mbs <= 1.0 / per_run for mbs in timing.mbs)
        assert all(
            docs == pytest.approx(4 * mbs)
            for docs, mbs in zip(timing.docs_per_s, timing.mbs, strict=True)
        )


class SlowToRelease:
    """A result whose release takes 30 ms."""

    def __del__(self) -> None:
        time.sleep(0.03)


def test_a_timing_covers_the_call_and_times_the_release_apart() -> None:
    def job() -> SlowToRelease:
        time.sleep(0.005)
        return SlowToRelease()

    timing = bench_timing.time_rounds(
        {"job": job}, size=1_000_000, count=1, repeats=2, min_seconds=0
    )["job"]
    # Seconds of each round (1 MB a call): the 5 ms call is covered, and the
    # 30 ms release is timed apart, on top of it. No upper bound on the call
    # itself: a loaded machine may sleep far longer than asked.
    calls = [1 / mbs for mbs in timing.mbs]
    with_release = [1 / mbs for mbs in timing.mbs_with_release]
    assert all(call >= 0.005 for call in calls)
    assert all(both - call >= 0.029 for call, both in zip(calls, with_release, strict=True))


def test_a_self_timed_job_reports_its_own_times() -> None:
    runs: list[int] = []

    def pair() -> bench_timing.RunTimes:
        runs.append(1)
        return 0.5, 0.5

    timing = bench_timing.time_rounds(
        {"pair": bench_timing.SelfTimed(pair)}, size=1_000_000, count=1, repeats=3, min_seconds=1.5
    )["pair"]
    # Two runs reach 1.5 s of reported time; nothing is slept.
    assert len(runs) == 3 * 2
    assert timing.mbs == [2.0, 2.0, 2.0]
    assert timing.mbs_with_release == [1.0, 1.0, 1.0]


def test_the_collector_is_off_during_a_timing_only() -> None:
    seen: list[bool] = []
    bench_timing.time_rounds({"job": lambda: seen.append(gc.isenabled())}, 1, 1, 2, min_seconds=0)
    assert seen == [False, False]
    assert gc.isenabled()


def test_corpus_loading(tmp_path: Path) -> None:
    docs = corpus.load(tiny_corpus(tmp_path / "c"))
    assert sorted(d.kind for d in docs.documents) == ["html", "markdown", "plain"]


def test_run_covers_every_section(tmp_path: Path) -> None:
    docs = corpus.load(tiny_corpus(tmp_path / "c"))
    result = runner.run(docs, tmp_path / "out", repeats=1, memory=False, pooling_documents=2)
    available = [m for m in chunking_methods() if m.missing() is None]
    assert len(result.chunking) == 3 * len(available)
    ours = [r for r in result.chunking if r.method == "fastnotebook"]
    assert ours and all(r.identical_to_original == 1.0 for r in ours)
    assert all(r.ratio_to_original and r.ratio_with_release for r in ours)
    assert all(r.timing.median > 0 and r.sizes.count > 0 for r in result.chunking)
    assert {r.encoding for r in result.tokens} == {"o200k_base", "cl100k_base"}
    assert all(r.identical_to_tiktoken in (None, 1.0) for r in result.tokens)
    assert len(result.pooling) == 5
    saved = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert saved["environment"]["packages"]["fastnotebook"]
    assert "Chunking" in report.markdown(result)
    # Every chunk-record case, ours single and batch beside its peers.
    cases = {r.case for r in result.records}
    assert len(cases) == 10
    semantic = [r for r in result.records if r.case.startswith("semantic")]
    assert len(semantic) == 3 and all(r.embedding_share for r in semantic)
    for case in cases - {semantic[0].case}:
        rows = [r for r in result.records if r.case == case]
        ours = [r for r in rows if r.method.startswith("fastnotebook")]
        assert len(ours) == 2 and len(rows) > 2
        assert all(r.mbs > 0 and r.chunks > 0 for r in rows)
        assert ours[0].chunks == ours[1].chunks
        assert all(r.ratio_to_fastest_peer for r in ours)
    assert "Chunk records" in report.markdown(result)
    # Note vaults: the generated one always (the real one when the variable is set).
    assert result.notes[0].vault.startswith("generated")
    assert all(r.mbs > 0 and r.chunks > r.notes > 0 and r.edges > 0 for r in result.notes)
    assert "Note vaults" in report.markdown(result)
    plots = report.plot(result, tmp_path / "out")
    assert all(p.stat().st_size > 1000 for p in plots)


def test_memory_is_measured_in_a_fresh_process(tmp_path: Path) -> None:
    docs = corpus.load(tiny_corpus(tmp_path / "c"))
    method = next(m for m in chunking_methods() if m.family == "fastnotebook")
    results = runner.bench_chunking(docs, 1, [method])
    runner.measure_memory(results, docs, tmp_path)
    assert all(r.peak_memory_mb is not None and r.peak_memory_mb >= 0 for r in results)


def test_memory_probe_sees_the_chunks_of_a_large_document(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "small.txt").write_text("warm up " * 400, encoding="utf-8")
    (folder / "large.txt").write_text("word " * 4_000_000, encoding="utf-8")  # 20 MB
    docs = corpus.load(folder)
    method = next(m for m in chunking_methods() if m.family == "fastnotebook" and m.unit == "chars")
    results = runner.bench_chunking(docs, 1, [method])
    runner.measure_memory(results, docs, tmp_path)
    # The chunks of 20 MB (with their overlap) are over 20 MB of str objects.
    assert results[0].peak_memory_mb is not None and results[0].peak_memory_mb > 15


def test_command_line_names_missing_report_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(report, "missing_output_libraries", lambda: ["matplotlib"])
    code = main(["bench", "--corpus", str(tiny_corpus(tmp_path / "c")), "--out", str(tmp_path)])
    assert code == 1  # a missing optional part is a failure, not a mistake in the command
    err = capsys.readouterr().err
    assert err == "fastnotebook bench: needs matplotlib: pip install 'fastnotebook[bench]'\n"
    assert not (tmp_path / "bench.json").exists()


def test_command_line(tmp_path: Path, capsys: object) -> None:
    folder = tiny_corpus(tmp_path / "c")
    out = tmp_path / "out"
    code = main(
        [
            "bench",
            "--corpus",
            str(folder),
            "--out",
            str(out),
            "--repeats",
            "1",
            "--no-memory",
            "--pooling-documents",
            "2",
        ]
    )
    assert code == 0
    assert {p.name for p in out.iterdir()} >= {
        "bench.json",
        "bench.md",
        "throughput.png",
        "sizes.png",
    }


def test_the_open_notebook_head_row_is_compared_with_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastnotebook.bench import methods
    from fastnotebook.open_notebook import chunking as head

    for name, value in (("CHUNK_SIZE", 400), ("CHUNK_OVERLAP", 60), ("MIN_CHUNK_SIZE", 5)):
        monkeypatch.setattr(head, name, value)
    docs = corpus.load(tiny_corpus(tmp_path / "c"))
    chosen = [
        m
        for m in chunking_methods()
        if m.name in (methods.OPEN_NOTEBOOK_HEAD, "original (langchain+tiktoken)")
    ]
    assert [m.missing() for m in chosen] == [None, None]
    results = runner.bench_chunking(docs, 1, chosen)
    rows = [r for r in results if r.method == methods.OPEN_NOTEBOOK_HEAD]
    assert sorted(r.kind for r in rows) == ["html", "markdown", "plain"]
    for row in rows:
        assert (row.unit, row.limit) == ("tokens", 400)
        assert row.identical_to_original == 1.0
        assert row.ratio_to_original is not None and row.ratio_to_original > 0
        assert row.sizes.max <= 400

    # Under other sizes the row would not be the release's: it is not run.
    monkeypatch.setattr(head, "CHUNK_SIZE", 300)
    row_method = next(m for m in chunking_methods() if m.name == methods.OPEN_NOTEBOOK_HEAD)
    assert "not the release's (400, 60, 5)" in (row_method.missing() or "")


def test_corpus_of_one_content_type(tmp_path: Path) -> None:
    folder = tmp_path / "md-only"
    folder.mkdir()
    (folder / "notes.md").write_text(MARKDOWN)
    docs = corpus.load(folder)
    assert [d.kind for d in docs.documents] == ["markdown"]
    method = next(m for m in chunking_methods() if m.family == "fastnotebook")
    results = runner.bench_chunking(docs, 1, [method])
    assert [r.kind for r in results] == ["markdown"]


@pytest.mark.parametrize("case", ["empty", "other files", "missing"])
def test_command_line_unusable_corpus_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    folder = tmp_path / "corpus"
    if case != "missing":
        folder.mkdir()
    if case == "other files":
        (folder / "data.json").write_text("{}")
        (folder / "sub").mkdir()
        (folder / "sub" / "page.pdf").write_bytes(b"%PDF-1.7")
    code = main(["bench", "--corpus", str(folder), "--out", str(tmp_path / "out")])
    assert code == 1
    err = capsys.readouterr().err
    expected = (
        f"corpus folder not found: {folder}"
        if case == "missing"
        else f"no .html, .md or .txt files under {folder}"
    )
    assert err == f"fastnotebook bench: {expected}\n"
    assert not (tmp_path / "out" / "bench.json").exists()
