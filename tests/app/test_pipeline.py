"""fastnotebook.app.pipeline against the real embedded SurrealDB: reading files,
ingest, incremental and staged embedding, failures, interruption, search.

The fake zero-cost provider (``fastnotebook-fake``) stands in for the model
except where the model is the point (search by meaning uses the real default
model on a handful of short documents)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fastnotebook import embedding
from fastnotebook.ai import model_manager
from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    RecordID,
    migrate,
    open_database,
    repo_create,
    vector_dimension,
    vector_indexes_defined,
)
from fastnotebook.app.database.schema import MIGRATIONS, VECTOR_LANES, ensure_search_indexes
from fastnotebook.app.database.vector_cache import store_changes
from fastnotebook.app.domain import Note, Source, vector_search
from fastnotebook.app.pipeline import EmbedOptions, embed, fake_model, ingest, stages
from fastnotebook.app.pipeline.documents import discover, read_document, split_front_matter
from fastnotebook.app.pipeline.progress import Progress, StageClock, format_rate, table
from fastnotebook.app.pipeline.state import KINDS, TEXT_FIELD, Settings, chunking_fingerprint, plan
from fastnotebook.app.pipeline.writer import Finished, execute, prepare
from fastnotebook.chunking import (
    ContentType,
    chunk_texts,
    get_chunking_config,
    set_chunking_config,
)
from fastnotebook.errors import DatabaseOperationError
from helpers.pipeline import expected_chunks, paragraph, stored_chunks, write_corpus


async def rows(db: Database, table: str) -> int:
    return len(await db.query(f"SELECT VALUE id FROM {table};"))


@pytest.fixture
def fake() -> Iterator[None]:
    model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 32})
    yield
    model_manager.reset()


def patch_model(monkeypatch: pytest.MonkeyPatch, call: Any) -> None:
    """Make the fake model's calls go to ``call(texts)`` (async), which
    returns lists as an HTTP provider does: without ``aembed_matrix``, the
    model stage's only way to the model is ``aembed``."""

    async def aembed(self: Any, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await call(texts)  # type: ignore[no-any-return]

    monkeypatch.setattr(fake_model.FakeEmbeddingModel, "aembed", aembed)
    monkeypatch.delattr(fake_model.FakeEmbeddingModel, "aembed_matrix", raising=False)


def configure_fake(**config: Any) -> None:
    model_manager.configure_embedding_model(
        fake_model.FAKE_PROVIDER, config={"dimension": 32, **config}
    )


# --- reading files ------------------------------------------------------------


def test_front_matter_becomes_metadata() -> None:
    meta, body = split_front_matter("---\ntitle: T\ndate: 2024-01-02\nn: 3\n---\n# Body\n")
    assert meta == {"title": "T", "date": "2024-01-02", "n": 3} and body == "# Body\n"
    for text in ["---\n\nA thematic break above.", "---\n- a list\n---\ntext", "--- x\n---\n"]:
        assert split_front_matter(text) == (None, text)
    assert split_front_matter("---\n: bad: yaml: [\n---\nbody")[0] is None
    assert split_front_matter("no front matter") == (None, "no front matter")


def test_reading_documents(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ntitle: From front matter\ntopics: x, y\n---\nText\n")
    (tmp_path / "b.md").write_text("Intro\n\n# The Heading #\n\nmore")
    (tmp_path / "c.html").write_text("<title> A &amp; B </title><h1>Other</h1>")
    (tmp_path / "d.txt").write_bytes(b"caf\xe9 \xef\xbb\xbf")
    a, b, c, d = (read_document(tmp_path / n) for n in ["a.md", "b.md", "c.html", "d.txt"])
    assert (a.title, a.text, a.topics) == ("From front matter", "Text\n", ["x", "y"])
    assert a.metadata == {"title": "From front matter", "topics": "x, y"}
    assert (b.title, b.metadata) == ("The Heading", None)
    assert c.title == "A & B"
    # Not UTF-8: decoded with the detected encoding (bytes and all), with a warning.
    assert d.title == "d" and d.text == "café ï»¿" and d.size == 8
    assert d.warning == "not UTF-8: decoded as cp1252 (detected)"


def test_discovery_skips_unsupported_and_hidden_files(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "c", documents=3)
    (tmp_path / "c" / ".hidden").mkdir()
    (tmp_path / "c" / ".hidden" / "x.md").write_text("hidden")
    (tmp_path / "c" / "code.py").write_text("print(1)")
    found = discover([tmp_path / "c", paths[0], tmp_path / "missing"])
    assert found.files == sorted(
        [p.resolve() for p in paths] + [(tmp_path / "c/code.py").resolve()]
    )
    assert (found.unsupported, found.missing) == (1, [str(tmp_path / "missing")])


def test_fake_model_is_deterministic_and_can_fail() -> None:
    model = fake_model.FakeEmbeddingModel(config={"dimension": 100, "fail_every": 2})
    first = model.embed(["a", "b"])
    with pytest.raises(ConnectionError):
        model.embed(["a"])
    assert model.embed(["a", "b"]) == first
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0) and len(first[0]) == 100
    with pytest.raises(ValueError, match="refuses"):
        fake_model.FakeEmbeddingModel(config={"fail_on": "x"}).embed(["a", "xx"])


def test_summary_table_and_progress_line() -> None:
    text = table(["kind", "n"], [["sources", 1234], ["notes", 5]])
    assert text.splitlines() == [
        "kind         n",
        "-------  -----",
        "sources  1,234",
        "notes        5",
    ]
    progress = Progress("embed", "records", 10, 2_000_000, enabled=False)
    progress.advance(items=5, nbytes=1_000_000, chunks=7)
    line = progress.line()
    assert "5/10 records" in line and "1.0/2.0 MB" in line and "7 chunks" in line
    assert "ETA" in line
    assert format_rate(4_200, 1.0) == "4.2 kB/s" and format_rate(5e6, 2.0) == "2.50 MB/s"
    clock = StageClock()
    clock.add("model", 1.0)
    clock.add("chunk", 0.01)
    assert "model 1.00 s (50.0%)" in clock.breakdown(2.0) and "chunk 0.01" in clock.breakdown(2.0)


def test_overlapping_measures_of_a_stage_count_once(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    clock = StageClock()
    first, second = clock.measure("write"), clock.measure("write")
    first.__enter__()  # 0-3 and 1-5 overlap: busy 0-5
    now[0] = 1.0
    second.__enter__()
    now[0] = 3.0
    first.__exit__(None, None, None)
    now[0] = 5.0
    second.__exit__(None, None, None)
    now[0] = 7.0
    with clock.measure("write"):  # then 7-8
        now[0] = 8.0
    assert clock.seconds["write"] == 6.0


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_redraws_one_line_on_a_terminal_and_logs_lines_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    terminal = Terminal()
    bar = Progress("embed", "records", 4, 4_000_000, terminal)
    for _ in range(4):
        now[0] += 1.0
        bar.advance(items=1, nbytes=1_000_000, chunks=3)
    bar.close()
    drawn = terminal.getvalue()
    assert drawn.count("\r") == 5 and drawn.endswith("\n") and drawn.count("\n") == 1
    frames = drawn.rstrip("\n").split("\r")[1:]
    assert frames[0].startswith("[#####...............]  embed 1/4 records  1.0/4.0 MB")
    assert "1.00 MB/s" in frames[0] and "ETA 0:03" in frames[0]
    assert frames[-1].startswith("[####################]  embed 4/4 records  4.0/4.0 MB")
    assert "12 chunks" in frames[-1] and "ETA" not in frames[-1]

    log = io.StringIO()
    bar = Progress("ingest", "files", 50, 50, log)
    for _ in range(50):
        now[0] += 0.3
        bar.advance(items=1, nbytes=1)
    bar.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and len(lines) == 3  # every 5 s, then the last state
    assert lines[0].startswith("[######..............]  ingest 17/50 files")
    assert lines[-1].startswith("[####################]  ingest 50/50 files")

    quiet = Terminal()
    bar = Progress("embed", "records", 4, 4, quiet, enabled=False)
    bar.advance(items=4, nbytes=4)
    bar.close()
    assert quiet.getvalue() == ""


# --- ingest -----------------------------------------------------------------


async def test_ingest_creates_then_updates_sources(db: Database, tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus")
    report = await ingest([tmp_path / "corpus"], db)
    assert (report.files, report.created, report.unchanged, report.unsupported) == (6, 6, 0, 1)
    sources = {s.asset.file_path: s for s in await Source.get_all() if s.asset}
    doc0 = sources[str(paths[0].resolve())]
    assert doc0.title == "Document 0" and doc0.full_text is not None
    assert doc0.full_text.startswith("# Heading 0") and doc0.topics == ["a", "b"]
    assert await db.query(
        "SELECT VALUE metadata FROM $id", {"id": RecordID("source", doc0.id.split(":")[1])}
    ) == [{"title": "Document 0", "tags": ["a", "b"]}]
    assert sources[str(paths[1].resolve())].title == "Page 1"

    again = await ingest([tmp_path / "corpus"], db)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 6)
    paths[2].write_text("changed text")
    paths[0].write_text("no front matter any more")
    changed = await ingest([tmp_path / "corpus"], db)
    assert (changed.created, changed.updated, changed.unchanged) == (0, 2, 4)
    assert len(await Source.get_all()) == 6
    assert await db.query("SELECT VALUE metadata FROM source WHERE title = 'doc0'") == [None]


async def test_ingest_looks_up_known_sources_once_per_run(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_corpus(tmp_path / "corpus", documents=9)
    await repo_create("source", {"title": "elsewhere", "asset": {"file_path": "/x/y.md"}})
    await ingest([tmp_path / "corpus"], db, batch_files=2)
    lookups: list[str] = []
    original_query = db.query

    async def counting_query(sql: str, params: dict[str, Any] | None = None) -> Any:
        lookups.extend([sql] if "FROM source" in sql else [])
        return await original_query(sql, params)

    monkeypatch.setattr(db, "query", counting_query)
    (tmp_path / "corpus" / "doc4.html").write_text("<p>changed</p>")
    report = await ingest([tmp_path / "corpus"], db, batch_files=2)
    assert (report.updated, report.unchanged, report.created) == (1, 8, 0)
    assert len(lookups) == 1, lookups  # not one per batch of files
    assert len(await Source.get_all()) == 10


def track_batch_writes(
    db: Database, monkeypatch: pytest.MonkeyPatch, fail_at: int | None = None
) -> list[int]:
    """Make each ingest batch's transaction take a little longer, record
    how many were in flight when each began, and fail the ``fail_at``-th."""
    ingest_module = importlib.import_module("fastnotebook.app.pipeline.ingest")
    in_flight: list[int] = []
    running = [0]
    original = db.query_all

    async def query_all(sql: str, params: dict[str, Any] | None = None) -> Any:
        if sql != ingest_module._WRITE:
            return await original(sql, params)
        running[0] += 1
        in_flight.append(running[0])
        try:
            if len(in_flight) == fail_at:
                raise DatabaseOperationError("the batch could not be written")
            await asyncio.sleep(0.05)
            return await original(sql, params)
        finally:
            running[0] -= 1

    monkeypatch.setattr(db, "query_all", query_all)
    return in_flight


@pytest.mark.parametrize("full_text", [False, True])
async def test_ingest_writes_two_batches_at_once_where_the_table_allows(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_text: bool
) -> None:
    if full_text:
        # A full-text index: two transactions would write the same postings.
        await ensure_search_indexes(db)
    write_corpus(tmp_path / "corpus", documents=9)
    in_flight = track_batch_writes(db, monkeypatch)
    report = await ingest([tmp_path / "corpus"], db, batch_files=2)
    assert report.created == 9 and len(await Source.get_all()) == 9
    assert len(in_flight) == 5
    assert max(in_flight) == (1 if full_text else 2)


async def test_a_failed_ingest_batch_leaves_whole_batches(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_corpus(tmp_path / "corpus", documents=9)
    in_flight = track_batch_writes(db, monkeypatch, fail_at=2)
    with pytest.raises(DatabaseOperationError, match="could not be written"):
        await ingest([tmp_path / "corpus"], db, batch_files=2)
    # The batch in flight beside the failed one was written whole; no other began.
    assert len(in_flight) == 2
    assert len(await Source.get_all()) == 2
    monkeypatch.undo()
    report = await ingest([tmp_path / "corpus"], db, batch_files=2)
    assert (report.created, report.unchanged) == (7, 2)
    assert len(await Source.get_all()) == 9


# --- embed --------------------------------------------------------------------


async def _hnsw_indexes(db: Database) -> set[str]:
    found: set[str] = set()
    for vector_table in ("source_embedding", "source_insight", "note"):
        info = await db.query(f"INFO FOR TABLE {vector_table};")
        found |= {name for name in (info or {}).get("indexes", {}) if name.endswith("_hnsw")}
    return found


async def test_embed_defines_no_vector_index_unless_asked(
    db: Database, tmp_path: Path, fake: None
) -> None:
    """The HNSW indexes cost many times the write (docs/SCALING.md): a plain
    run records the dimension only, and exact search answers; --vector-index
    defines them, on a store already up to date too, and later plain runs
    keep them current."""
    write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(), db)
    assert await vector_dimension(db) == 32
    assert not await vector_indexes_defined(db) and await _hnsw_indexes(db) == set()
    [probe] = await db.query("SELECT VALUE embedding FROM source_embedding LIMIT 1;")
    exact = await vector_search(probe, 3, mode="exact")
    assert exact and exact[0]["similarity"] == pytest.approx(1.0, abs=1e-6)

    report = await embed(EmbedOptions(vector_index=True), db)
    assert report.embedded == 0
    assert await vector_indexes_defined(db)
    assert await _hnsw_indexes(db) == {
        "source_embedding_embedding_hnsw",
        "source_insight_embedding_hnsw",
        "note_embedding_hnsw",
    }
    (tmp_path / "corpus" / "new.md").write_text("# New\n\n" + paragraph("later", 2))
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(), db)
    ann = await vector_search(probe, 3, mode="ann")
    assert [h["id"] for h in ann][:1] == [h["id"] for h in exact][:1]


async def test_embed_is_incremental(db: Database, tmp_path: Path, fake: None) -> None:
    paths = write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    first = await embed(EmbedOptions(batch_size=7), db)
    expected = expected_chunks(paths)
    assert await stored_chunks(db) == expected
    total = sum(len(c) for c in expected.values())
    assert (first.counts["source"].embedded, first.counts["source"].chunks) == (6, total)
    assert first.failures == [] and not first.interrupted
    assert await vector_dimension(db) == 32

    second = await embed(EmbedOptions(batch_size=7), db)
    assert (second.embedded, second.counts["source"].unchanged) == (0, 6)

    paths[1].write_text("<h1>New</h1><p>" + paragraph("fresh", 1) * 3 + "</p>")
    await ingest([tmp_path / "corpus"], db)
    third = await embed(EmbedOptions(batch_size=7), db)
    assert (third.counts["source"].embedded, third.counts["source"].unchanged) == (1, 5)
    assert await stored_chunks(db) == expected_chunks(paths)


async def test_rebuild_all_embeds_everything_exactly_once(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    await embed(None, db)
    embedded: list[str] = []

    async def counting(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    patch_model(monkeypatch, counting)
    report = await embed(EmbedOptions(rebuild="all", batch_size=5), db)
    expected = expected_chunks(paths)
    assert sorted(embedded) == sorted(c for chunks in expected.values() for c in chunks)
    assert report.counts["source"].embedded == 6 and await stored_chunks(db) == expected
    embedded.clear()
    assert (await embed(None, db)).embedded == 0 and embedded == []


async def test_rebuild_existing_leaves_never_embedded_records(
    db: Database, tmp_path: Path, fake: None
) -> None:
    write_corpus(tmp_path / "corpus", documents=3)
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(kinds=("source",)), db)
    await repo_create("note", {"content": "a note nobody embedded"})
    report = await embed(EmbedOptions(rebuild="existing"), db)
    assert (report.counts["source"].embedded, report.counts["note"].embedded) == (3, 0)
    assert (await embed(None, db)).counts["note"].embedded == 1


async def test_notes_and_insights_get_the_originals_pooled_vector(db: Database, fake: None) -> None:
    short = Note(title="short", content="A short note.")
    long = Note(title="long", content="\n\n".join(paragraph("notes", n) for n in range(10)))
    for note in (short, long):
        await note.save()
    source = Source(title="S", full_text="source text")
    await source.save()
    insight = await source.add_insight("summary", paragraph("insight", 1) * 4)
    report = await embed(None, db)
    assert (report.counts["note"].embedded, report.counts["source_insight"].embedded) == (2, 1)
    for record_id, content in [
        (short.id, short.content),
        (long.id, long.content),
        (insight.id, insight.content),
    ]:
        assert record_id and content
        [stored] = await db.query(
            "SELECT VALUE embedding FROM $id", {"id": RecordID(*record_id.split(":"))}
        )
        # Open Notebook's embed_note / embed_insight: generate_embedding on Markdown.
        original = await embedding.generate_embedding(content, content_type=ContentType.MARKDOWN)
        assert np.allclose(stored, original, atol=1e-12), record_id


async def test_emptied_text_removes_vectors(db: Database, fake: None) -> None:
    text = paragraph("x", 1) * 5
    source = Source(title="S", full_text=text)
    await source.save()
    await embed(None, db)
    chunks = len(chunk_texts([text])[0])
    assert chunks > 1
    assert await rows(db, "source_embedding") == chunks
    source.full_text = "   "
    await source.save()
    report = await embed(None, db)
    assert report.counts["source"].embedded == 1
    assert await rows(db, "source_embedding") == 0
    assert (await embed(None, db)).embedded == 0


async def test_new_chunking_or_model_re_embeds_everything(
    db: Database, tmp_path: Path, fake: None
) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=3)
    await ingest([tmp_path / "corpus"], db)
    await embed(None, db)
    set_chunking_config(chunk_size=600, chunk_overlap=50)
    try:
        report = await embed(None, db)
        assert report.counts["source"].embedded == 3
        assert report.chunking == chunking_fingerprint(get_chunking_config())
        assert await stored_chunks(db) == expected_chunks(paths)
    finally:
        set_chunking_config(None)
    configure_fake(dimension=48)
    report = await embed(None, db)
    assert report.counts["source"].embedded == 3 and await vector_dimension(db) == 48
    dims = await db.query("SELECT VALUE array::len(embedding) FROM source_embedding")
    assert set(dims) == {48}
    configure_fake(dimension=16)
    with pytest.raises(Exception, match="re-embed sources, insights and notes together"):
        await embed(EmbedOptions(kinds=("source",)), db)


async def test_a_refused_text_fails_alone(db: Database, tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus")
    paths[3].write_text(paragraph("POISON", 1) * 4)
    await ingest([tmp_path / "corpus"], db)
    configure_fake(fail_on="POISON")
    try:
        report = await embed(EmbedOptions(batch_size=50), db)
        assert report.counts["source"].embedded == 5 and report.failed == 1
        [(_, message)] = report.failures
        assert "POISON" in message
        stored = await stored_chunks(db)
        assert str(paths[3].resolve()) not in stored and len(stored) == 5
        again = await embed(None, db)
        assert (again.counts["source"].unchanged, again.failed) == (5, 1)
    finally:
        model_manager.reset()


async def test_intermittent_failures_are_retried(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "EMBEDDING_RETRY_DELAY", 0)
    paths = write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    configure_fake(fail_every=2)
    try:
        report = await embed(EmbedOptions(batch_size=4), db)
    finally:
        model_manager.reset()
    assert report.failures == [] and report.counts["source"].embedded == 6
    assert await stored_chunks(db) == expected_chunks(paths)


async def test_a_provider_that_always_fails_is_reported_per_source(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "EMBEDDING_RETRY_DELAY", 0)
    write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    await repo_create("note", {"content": "a note"})
    configure_fake(always_fail=True)
    try:
        report = await embed(EmbedOptions(batch_size=8), db)
    finally:
        model_manager.reset()
    assert report.failed == 7 and report.embedded == 0
    assert {what.split(":")[0] for what, _ in report.failures} == {"source", "note"}
    assert len({what for what, _ in report.failures}) == 7
    assert all("down" in why for _, why in report.failures)
    assert await rows(db, "source_embedding") == 0


async def test_stopping_writes_whole_records_and_the_next_run_finishes(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    stop = asyncio.Event()
    calls = 0

    async def stop_after_three(texts: list[str]) -> list[list[float]]:
        nonlocal calls
        calls += 1
        if calls == 3:
            stop.set()  # as Ctrl-C during the third model call
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    patch_model(monkeypatch, stop_after_three)
    report = await embed(EmbedOptions(batch_size=5), db, stop=stop)
    assert report.interrupted and calls == 3
    expected = expected_chunks(paths)
    partial = await stored_chunks(db)
    assert 0 < len(partial) < 6
    assert all(expected[path] == chunks for path, chunks in partial.items())
    resumed = await embed(EmbedOptions(batch_size=5), db)
    assert resumed.counts["source"].embedded == 6 - len(partial)
    assert await stored_chunks(db) == expected


async def test_memory_is_bounded_by_the_queues(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(40):
        await Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1)).save()
    loads = 0
    original_query = db.query

    async def counting_query(sql: str, params: dict[str, Any] | None = None) -> Any:
        nonlocal loads
        loads += sql.startswith("SELECT id, full_text AS text")
        return await original_query(sql, params)

    seen: list[int] = []

    async def slow_model(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0.05)  # long enough for every stage upstream to fill up
        seen.append(loads)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    monkeypatch.setattr(db, "query", counting_query)
    patch_model(monkeypatch, slow_model)
    options = EmbedOptions(kinds=("source",), batch_size=1, read_items=1, queue_batches=1)
    report = await embed(options, db)
    assert report.counts["source"].embedded == 40
    # One record per model call: the reader stays a fixed few records ahead
    # (one in each queue, one in each stage), however many there are.
    lead = [loaded - call for call, loaded in enumerate(seen)]
    assert max(lead) <= 5 and lead[-10] == max(lead), seen


async def test_stages_overlap(db: Database, fake: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(12):
        await Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1)).save()
    intervals: dict[str, list[tuple[float, float]]] = {"model": [], "write": []}
    original_write = stages.execute

    async def slow_model(texts: list[str]) -> list[list[float]]:
        start = time.perf_counter()
        await asyncio.sleep(0.02)
        intervals["model"].append((start, time.perf_counter()))
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    async def timed_write(*args: Any) -> None:
        start = time.perf_counter()
        await original_write(*args)
        intervals["write"].append((start, time.perf_counter()))

    patch_model(monkeypatch, slow_model)
    monkeypatch.setattr(stages, "execute", timed_write)
    await embed(EmbedOptions(kinds=("source",), batch_size=1, read_items=2), db)
    overlapping = [
        (w, m)
        for w in intervals["write"]
        for m in intervals["model"]
        if w[0] < m[1] and m[0] < w[1]
    ]
    assert overlapping, "no write ran while the model worked"


@pytest.mark.parametrize("lanes", [1, 2])
async def test_the_next_group_is_encoded_while_transactions_run(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch, lanes: int
) -> None:
    """The write stage gathers and encodes the next group while transactions
    run; up to ``write_lanes`` of them at once, never two on one lane, and
    every record is written once."""
    for i in range(10):
        await Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1)).save()
    events: list[str] = []
    sizes: list[int] = []
    active: set[int] = set()
    most = 0
    original_prepare, original_execute = stages.prepare, stages.execute

    def prepare(group: list[Any], settings: Settings) -> Any:
        events.append("prepare")
        sizes.append(len(group))
        return original_prepare(group, settings)

    async def execute(db: Database, prepared: Any, lane: int = 0) -> None:
        nonlocal most
        assert lane not in active, "two transactions on one lane"
        active.add(lane)
        most = max(most, len(active))
        events.append("begin")
        await asyncio.sleep(0.05)
        await original_execute(db, prepared, lane)
        active.discard(lane)
        events.append("end")

    async def slow_model(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0.005)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    patch_model(monkeypatch, slow_model)
    monkeypatch.setattr(stages, "prepare", prepare)
    monkeypatch.setattr(stages, "execute", execute)
    options = EmbedOptions(kinds=("source",), batch_size=1, read_items=2, write_lanes=lanes)
    report = await embed(options, db)
    assert report.counts["source"].embedded == 10 and sum(sizes) == 10
    assert most == lanes
    if lanes == 1:
        assert [e for e in events if e != "prepare"] == ["begin", "end"] * len(sizes)
    assert any(e == "prepare" and events[i - 1] == "begin" for i, e in enumerate(events))
    # What finished while transactions ran went into the next group.
    assert max(sizes) > 1
    assert await rows(db, "embedding_state") == 10
    # Both lanes counted their own changes, and the rows are exact.
    changes = await store_changes(db)
    assert changes.rows == await rows(db, "source_embedding") > 0


async def test_insights_and_notes_are_written_alone(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group of insights or notes (whose events count its changes on the
    one shared row) never runs beside another transaction."""
    for i in range(6):
        source = Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1))
        await source.save()
        await Note(title=f"n{i}", content=paragraph(f"n{i}", 1)).save()
    active: list[str] = []
    overlaps: list[list[str]] = []
    original_execute = stages.execute

    async def execute(db: Database, prepared: Any, lane: int = 0) -> None:
        kind = "source" if "source_embedding" in prepared.sql else "pooled"
        active.append(kind)
        overlaps.append(list(active))
        await asyncio.sleep(0.03)
        await original_execute(db, prepared, lane)
        active.remove(kind)

    async def slow_model(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0.002)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    patch_model(monkeypatch, slow_model)
    monkeypatch.setattr(stages, "execute", execute)
    report = await embed(EmbedOptions(batch_size=1, read_items=2, write_rows=2), db)
    assert report.counts["source"].embedded == report.counts["note"].embedded == 6
    assert ["pooled"] in overlaps and ["source", "source"] in overlaps
    assert all(len(now) == 1 for now in overlaps if "pooled" in now), overlaps
    assert (await store_changes(db)).rows == await rows(db, "source_embedding") + 6


async def test_a_failed_transaction_stops_the_run_at_once(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error in a transaction (other than one the records are retried
    alone for) ends the run while the next group is still being gathered:
    no more model calls are made for it."""
    for k in range(3):
        text = "\n\n".join(paragraph(f"b{k}{i}", 1) for i in range(40))
        await Source(title=f"big{k}", full_text=text).save()
    failed = asyncio.Event()
    calls_after: list[int] = []

    async def slow_model(texts: list[str]) -> list[list[float]]:
        if failed.is_set():
            calls_after.append(len(texts))
        await asyncio.sleep(0.05)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    async def execute(db: Database, prepared: Any, lane: int = 0) -> None:
        failed.set()
        raise RuntimeError("boom")

    patch_model(monkeypatch, slow_model)
    monkeypatch.setattr(stages, "execute", execute)
    with pytest.raises(RuntimeError, match="boom"):
        await embed(EmbedOptions(kinds=("source",), batch_size=1, read_items=1), db)
    assert calls_after == []


async def test_a_vector_the_store_refuses_fails_its_record_alone(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):
        await Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1)).save()
    await Source(title="bad", full_text=paragraph("POISON", 1)).save()

    async def model(texts: list[str]) -> list[list[float]]:
        vectors = fake_model.hash_vectors(texts, 32).tolist()
        return [
            [float("nan")] * 32 if "POISON" in t else v for t, v in zip(texts, vectors, strict=True)
        ]

    patch_model(monkeypatch, model)
    report = await embed(EmbedOptions(kinds=("source",)), db)
    assert report.counts["source"].embedded == 4 and report.failed == 1
    [(_, message)] = report.failures
    assert "cannot encode the rows" in message and "non-finite" in message
    assert await rows(db, "embedding_state") == 4


async def test_a_record_whose_digest_row_is_missing_is_still_written(
    db: Database, fake: None
) -> None:
    """The writer asks the digest rows which records still exist, and the
    records themselves when a row is missing."""
    from fastnotebook.app.pipeline.writer import Finished, write_group

    source = Source(title="kept", full_text=paragraph("kept", 1))
    note = Note(content="kept")
    await source.save()
    await note.save()
    assert source.id and note.id
    await db.query("DELETE text_digest;")
    chunks = Finished(RecordID(*source.id.split(":")), "source", "h", 1, ["a"], [[1.0] * 32], 0)
    pooled = Finished(RecordID(*note.id.split(":")), "note", "h", 1, ["a"], [[1.0] * 32], 0)
    await write_group(db, [chunks], Settings("m", "c"))
    await write_group(db, [pooled], Settings("m", "c"))
    assert await rows(db, "source_embedding") == 1
    assert await db.query("SELECT VALUE embedding FROM $id;", {"id": pooled.id}) == [[1.0] * 32]
    assert await rows(db, "embedding_state") == 2


async def test_sources_deleted_meanwhile_are_not_resurrected(db: Database, fake: None) -> None:
    source = Source(title="gone", full_text=paragraph("gone", 1))
    await source.save()
    from fastnotebook.app.pipeline.state import Settings
    from fastnotebook.app.pipeline.writer import Finished, write_group

    assert source.id
    rid = RecordID("source", source.id.split(":")[1])
    await source.delete()
    item = Finished(rid, "source", "h", 1, ["chunk"], [[1.0] * 32], 0)
    await write_group(db, [item], Settings("m", "c"))
    assert await db.query("SELECT * FROM source_embedding") == []
    assert await db.query("SELECT * FROM embedding_state") == []


@pytest.mark.parametrize("kind", ["source", "note"])
async def test_a_group_with_a_deleted_and_an_undigested_record_writes_exactly_the_live_ones(
    db: Database, fake: None, kind: str
) -> None:
    """One group: a record with its digest row, one whose digest row is
    missing (it exists), one deleted meanwhile. The first two get their
    vectors and state rows; the deleted one nothing."""
    from fastnotebook.app.pipeline.writer import write_group

    records = [
        Source(title=f"s{i}", full_text=paragraph(f"s{i}", 1))
        if kind == "source"
        else Note(content=f"n{i}")
        for i in range(3)
    ]
    for record in records:
        await record.save()
    ids = [RecordID(kind, str(r.id).split(":")[1]) for r in records]
    await db.query("DELETE type::thing('text_digest', [$id]);", {"id": ids[1]})
    await records[2].delete()
    group = [
        Finished(rid, kind, f"h{i}", 1, ["a"], [[i + 1.0] * 32], 0) for i, rid in enumerate(ids)
    ]
    await write_group(db, group, Settings("m", "c"))
    states = await db.query("SELECT VALUE record FROM embedding_state;")
    assert sorted(map(str, states)) == sorted(map(str, ids[:2]))
    if kind == "source":
        owners = await db.query("SELECT VALUE source FROM source_embedding;")
        assert sorted(map(str, owners)) == sorted(map(str, ids[:2]))
    else:
        vectors = await db.query("SELECT VALUE embedding FROM note WHERE embedding != NONE;")
        assert sorted(v[0] for v in vectors) == [1.0, 2.0]


async def test_the_writer_counts_its_vector_changes_once_and_exactly(
    db: Database, tmp_path: Path, fake: None
) -> None:
    """The pipeline's writer updates the vector change counter itself (the
    per-row events stand aside for it): a new token for every write, and a
    row count equal to the stored vectors after inserts, re-embedding, a
    record deleted meanwhile, and another writer's write after it."""
    from fastnotebook.app.database import replace_source_chunks
    from fastnotebook.app.database.vector_cache import store_changes
    from fastnotebook.app.pipeline.state import Settings
    from fastnotebook.app.pipeline.writer import Finished, execute, prepare, write_group

    async def stored_vectors() -> int:
        counts = await db.query_all(
            "RETURN count(SELECT id FROM source_embedding WHERE embedding != NONE);"
            "RETURN count(SELECT id FROM source_insight WHERE embedding != NONE);"
            "RETURN count(SELECT id FROM note WHERE embedding != NONE);"
        )
        return sum(int(c) for c in counts)

    tokens = [(await store_changes(db)).token]

    async def check() -> None:
        changes = await store_changes(db)
        assert changes.token not in tokens
        tokens.append(changes.token)
        assert changes.rows == await stored_vectors()

    paths = write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(), db)
    await check()
    paths[0].write_text("# Shorter\n\n" + paragraph("short", 1))
    await ingest([tmp_path / "corpus"], db)
    assert (await embed(EmbedOptions(), db)).embedded == 1
    await check()

    kept = Source(title="kept", full_text="x")
    gone = Source(title="gone", full_text="y")
    await kept.save()
    await gone.save()
    assert kept.id and gone.id
    ids = [RecordID("source", s.split(":")[1]) for s in (kept.id, gone.id)]
    await gone.delete()
    group = [Finished(rid, "source", "h", 1, ["a", "b"], [[1.0] * 32] * 2, 0) for rid in ids]
    await write_group(db, group, Settings("m", "c"))
    await check()

    # A writer that does not count itself is counted by the events.
    await replace_source_chunks(kept.id, ["one", "two", "three"], [[0.5] * 32] * 3)
    await check()
    # The second lane counts as the first.
    item = Finished(ids[0], "source", "h2", 1, ["c"], [[2.0] * 32], 0)
    await execute(db, prepare([item], Settings("m", "c")), 1)
    await check()


async def test_without_its_lane_the_writer_is_counted_by_the_events(db: Database) -> None:
    """A store that lost a lane's row still sees every write of that lane
    change its token (the events count it)."""
    source = Source(title="s", full_text="x")
    await source.save()
    assert source.id
    rid = RecordID("source", source.id.split(":")[1])
    await db.query(f"DELETE {VECTOR_LANES[1]};")
    before = (await store_changes(db)).token
    item = Finished(rid, "source", "h", 1, ["a", "b"], [[1.0] * 32] * 2, 0)
    await execute(db, prepare([item], Settings("m", "c")), 1)
    after = await store_changes(db)
    assert after.token != before
    assert after.token and after.token.split("|")[0] != (before or "").split("|")[0]


async def test_deleting_a_record_forgets_its_state(db: Database, fake: None) -> None:
    note = Note(content="note")
    await note.save()
    await embed(None, db)
    assert len(await db.query("SELECT * FROM embedding_state")) == 1
    await note.delete()
    assert await db.query("SELECT * FROM embedding_state") == []


# --- search by meaning, with the real default model ----------------------------

TOPICS = {
    "baking.md": "# Baking bread\n\nMix flour, water, salt and yeast into a dough, knead it, "
    "let it rise for two hours and bake the loaf in a hot oven until the crust is brown.",
    "orbits.md": "# Planetary orbits\n\nThe planets travel around the sun on elliptical paths; "
    "gravity keeps each one on its course and the outer planets take longer per revolution.",
    "guitar.txt": "Tuning a guitar: turn the pegs until each string sounds the right pitch, "
    "starting from the low E string, and check every string again with a tuner.",
    "taxes.html": "<h1>Filing taxes</h1><p>Collect your income statements and receipts, fill "
    "in the annual return form and send it to the revenue office before the deadline.</p>",
    "sleep.md": "# Sleep\n\nAdults need seven to nine hours of rest each night; a regular "
    "bedtime and a dark, quiet bedroom help people fall asleep.",
}
PARAPHRASES = {
    "how do I make a loaf at home": "baking.md",
    "why do worlds circle the star": "orbits.md",
    "get the strings of my instrument in tune": "guitar.txt",
    "paperwork for the yearly income declaration": "taxes.html",
    "how many hours of rest do grown-ups need at night": "sleep.md",
}


async def test_search_finds_the_document_for_paraphrased_queries(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(model_manager.PROVIDER_ENV, raising=False)
    model_manager.reset()  # the offline default model
    folder = tmp_path / "topics"
    folder.mkdir()
    for name, text in TOPICS.items():
        (folder / name).write_text(text)
    await ingest([folder], db)
    report = await embed(None, db)
    assert report.counts["source"].embedded == len(TOPICS)
    assert report.model.startswith("fastnotebook-onnx/")
    titles = {s.id: Path(s.asset.file_path).name for s in await Source.get_all() if s.asset}
    for query, expected in PARAPHRASES.items():
        hits = await vector_search(query, 3)
        best = titles[hits[0]["parent_id"]]
        assert best == expected, (query, hits[0])


# --- what planning reads: the texts' digests -----------------------------------


async def digests(db: Database, kind: str) -> dict[str, tuple[str, int, bool]]:
    """The digest rows of ``kind``, as planning reads them."""
    rows = await db.query(
        "SELECT record, hash, size, has_text FROM text_digest WHERE kind = $kind;", {"kind": kind}
    )
    return {str(r["record"]): (r["hash"], r["size"], r["has_text"]) for r in rows}


async def digests_of_texts(db: Database, kind: str) -> dict[str, tuple[str, int, bool]]:
    """The same, computed here from the stored texts."""
    rows = await db.query(f"SELECT id, {TEXT_FIELD[kind]} AS text FROM {kind};")
    found = {}
    for row in rows:
        data = (row["text"] or "").encode("utf-8")
        found[str(row["id"])] = (hashlib.sha256(data).hexdigest(), len(data), bool(data.strip()))
    return found


async def assert_digests_current(db: Database) -> None:
    for kind in KINDS:
        assert await digests(db, kind) == await digests_of_texts(db, kind), kind


async def test_text_digests_follow_every_write_of_a_text(db: Database) -> None:
    source = Source(title="s", full_text="first text")
    await source.save()
    note = Note(title="n", content="a note")
    await note.save()
    insight = await source.add_insight("summary", "an insight")
    await assert_digests_current(db)

    assert source.id and note.id and insight.id
    source_id, note_id = RecordID(*source.id.split(":")), RecordID(*note.id.split(":"))
    await db.query("UPDATE $id SET full_text = 'second text';", {"id": source_id})
    await db.query("UPDATE $id SET title = 'renamed';", {"id": source_id})
    await db.query("UPDATE $id SET content = '  ';", {"id": note_id})
    await db.query("CREATE source:untitled SET title = 'no text yet';")
    await assert_digests_current(db)
    assert (await digests(db, "note"))[note.id][2] is False  # whitespace only
    await db.query("UPDATE $id SET full_text = NONE;", {"id": source_id})
    await db.query("UPDATE source:untitled SET full_text = 'text at last';")
    await assert_digests_current(db)

    await note.delete()
    await db.query("DELETE source:untitled;")
    await assert_digests_current(db)
    assert await digests(db, "note") == {}


async def test_planning_reads_the_texts_when_a_digest_is_missing(db: Database) -> None:
    source = Source(title="s", full_text="some text")
    await source.save()
    assert source.id
    await db.query("DELETE text_digest;")
    settings = Settings("m", "c")
    due = await plan(db, ("source",), settings, None)
    assert [(str(i.id), i.size) for i in due.due["source"]] == [(source.id, len("some text"))]


async def test_planning_from_the_digests_equals_planning_from_the_texts(db: Database) -> None:
    """Every kind, texts of several sizes, one without text, one of
    whitespace only, one up to date: the plan read from the digest rows is
    the plan computed from the texts, in the same order."""
    await db.query_all(
        "CREATE source:b SET full_text = 'été ' + string::repeat('x', 3000);"
        "CREATE source:a SET full_text = 'a';"
        "CREATE source:c;"
        "CREATE source:d SET full_text = 'up to date';"
        "CREATE note:n1 SET content = '  ';"
        "CREATE note:n2 SET content = 'note';"
        "CREATE source_insight:i SET source = source:a, insight_type = 't', content = 'insight';"
    )
    settings = Settings("m", "c")
    await db.query(
        "CREATE embedding_state:[source:d] SET record = source:d, kind = 'source', "
        "content_hash = crypto::sha256('up to date'), model = 'm', chunking = 'c', epoch = 0, "
        "chunks = 1;"
    )
    from_digests = await plan(db, KINDS, settings, None)
    # The digests are what planning reads: one that disagrees with its text wins.
    await db.query("UPDATE type::thing('text_digest', [source:d]) SET hash = 'stale';")
    stale = await plan(db, ("source",), settings, None)
    assert [str(i.id) for i in stale.due["source"]] == ["source:a", "source:b", "source:d"]
    await db.query("DELETE text_digest;")
    assert await plan(db, KINDS, settings, None) == from_digests
    assert [str(i.id) for i in from_digests.due["source"]] == ["source:a", "source:b"]
    assert from_digests.unchanged == {"source": 1, "source_insight": 0, "note": 0}
    assert [str(i.id) for i in from_digests.due["note"]] == ["note:n2"]
    assert from_digests.due["source"][1].size == len("été ".encode()) + 3000


async def test_the_migration_computes_the_digests_of_existing_records() -> None:
    database = await Database(DatabaseSettings("mem://", auto_migrate=False)).open()
    try:
        digests_at = next(n for n, m in enumerate(MIGRATIONS) if "TABLE IF NOT EXISTS text_d" in m)
        for version, migration in enumerate(MIGRATIONS[:digests_at], 1):
            await database.query_all(
                f"{migration}\nUPSERT fastnotebook_meta:schema SET version = {version};"
            )
        await database.query_all(
            "CREATE source:one SET full_text = 'one'; CREATE source:two;"
            "CREATE note:three SET content = 'three';"
            "CREATE source_insight:four SET source = source:one, insight_type = 't', content = '';"
        )
        assert await digests(database, "source") == {}
        assert await migrate(database) == len(MIGRATIONS)
        await assert_digests_current(database)
        assert len(await digests(database, "source")) == 2
    finally:
        await database.close()


# --- vectors from in-process models ---------------------------------------------


async def test_in_process_models_hand_over_arrays_with_the_same_vectors(
    tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fake model (as the local ones) is called through ``aembed_matrix``;
    the stored vectors are bit for bit those of the list route (``aembed``),
    which HTTP providers take."""
    write_corpus(tmp_path / "corpus")
    calls: list[int] = []
    matrix_call = fake_model.FakeEmbeddingModel.aembed_matrix

    async def counted(self: Any, texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return await matrix_call(self, texts)

    async def stored(route: str) -> dict[tuple[str, int], bytes]:
        async with await open_database(DatabaseSettings("mem://")) as database:
            await ingest([tmp_path / "corpus"], database)
            await embed(EmbedOptions(batch_size=7), database)
            rows = await database.query(
                "SELECT source.asset.file_path AS path, order, embedding FROM source_embedding;"
            )
        assert rows, route
        return {
            (r["path"], r["order"]): np.asarray(r["embedding"], dtype=np.float64).tobytes()
            for r in rows
        }

    with monkeypatch.context() as patch:
        patch.setattr(fake_model.FakeEmbeddingModel, "aembed_matrix", counted)
        arrays = await stored("arrays")
    assert calls and sum(calls) == len(arrays)
    with monkeypatch.context() as patch:
        patch.delattr(fake_model.FakeEmbeddingModel, "aembed_matrix")
        lists = await stored("lists")
    assert arrays == lists
