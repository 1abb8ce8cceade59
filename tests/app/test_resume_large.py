"""A large file's finished model batches survive a killed or interrupted
``embed`` (``fastnotebook.app.pipeline.staging``): the next run sends only
the remaining chunks to the model and stores exactly what an uninterrupted
run stores, and in between the file is absent from what search reads, never
half there."""

from __future__ import annotations

import asyncio
import io
import json
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fastnotebook.ai import model_manager
from fastnotebook.app.database import Database, DatabaseSettings, open_database
from fastnotebook.app.domain import Source
from fastnotebook.app.pipeline import EmbedOptions, embed, fake_model, ingest, stages
from fastnotebook.app.pipeline.progress import Progress
from fastnotebook.chunking import set_chunking_config
from helpers.cli import cli
from helpers.pipeline import expected_chunks, paragraph, stored_chunks, write_corpus

BATCH = 3  # chunks per model call: a record of more than 4 batches is staged


def write_large_corpus(folder: Path) -> tuple[list[Path], Path]:
    """A few small documents and one large text file (about 40 chunks)."""
    paths = write_corpus(folder, documents=3, paragraphs=2)
    large = folder / "large.txt"
    large.write_text("".join(paragraph("large", n) for n in range(80)))
    return [*paths, large], large


async def _rows(db: Database) -> dict[str, Any]:
    chunks = await db.query(
        "SELECT source.asset.file_path AS path, order, content, embedding FROM source_embedding "
        "ORDER BY path, order;"
    )
    states = await db.query(
        "SELECT record.asset.file_path AS path, kind, content_hash, model, chunking, epoch, "
        "chunks FROM embedding_state ORDER BY path;"
    )
    staged = await db.query(
        "SELECT record.asset.file_path AS path, start, width, vectors FROM embedding_staging;"
    )
    return {"chunks": chunks, "states": states, "staged": staged}


def stored_rows(data_dir: Path) -> dict[str, Any]:
    """Every chunk row (with its vector), state row and staging row of an
    on-disk database no process holds; records by their file's path."""

    async def read() -> dict[str, Any]:
        settings = DatabaseSettings(DatabaseSettings.embedded_url(data_dir), full_text_search=False)
        async with await open_database(settings) as db:
            return await _rows(db)

    return asyncio.run(read())


def staged_orders(staged: list[dict[str, Any]], path: str) -> set[int]:
    """The chunk indices of ``path`` that staging rows hold."""
    orders: set[int] = set()
    for row in staged:
        if row["path"] == path:
            orders.update(range(row["start"], row["start"] + len(row["vectors"]) // row["width"]))
    return orders


def logged_texts(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [text for line in log.read_text().splitlines() for text in json.loads(line)]


@pytest.mark.parametrize("fault", ["staged:4", "embedded:9", "staged:6:KILL:0.002"])
def test_a_run_killed_inside_a_large_file_embeds_only_its_remaining_batches(
    tmp_path: Path, fault: str
) -> None:
    paths, large = write_large_corpus(tmp_path / "corpus")
    expected = expected_chunks(paths)
    big = expected[str(large.resolve())]
    assert len(big) > 8 * BATCH
    log = tmp_path / "model.log"
    env = {
        "FASTNOTEBOOK_EMBEDDING_CONFIG": json.dumps(
            {"dimension": 16, "delay": 0.005, "log": str(log)}
        )
    }
    embed_args = ("embed", "--quiet", "--batch-size", str(BATCH), "--stage-after", "0")

    # What an uninterrupted run stores.
    reference = tmp_path / "reference"
    assert cli("ingest", str(tmp_path / "corpus"), "--quiet", data_dir=reference).returncode == 0
    assert cli(*embed_args, data_dir=reference, **env).returncode == 0
    whole = stored_rows(reference)
    assert sorted(logged_texts(log)) == sorted(c for chunks in expected.values() for c in chunks)
    assert whole["staged"] == []
    log.unlink()

    data = tmp_path / "data"
    assert cli("ingest", str(tmp_path / "corpus"), "--quiet", data_dir=data).returncode == 0
    killed = cli(*embed_args, data_dir=data, FASTNOTEBOOK_FAULT=fault, **env)
    assert killed.returncode == -signal.SIGKILL, (killed.stdout, killed.stderr)

    # In between, every record search reads is whole, and the large one absent.
    between = stored_rows(data)
    stored: dict[str, list[str]] = {}
    for row in between["chunks"]:
        stored.setdefault(row["path"], []).append(row["content"])
    assert str(large.resolve()) not in stored
    assert all(expected[path] == chunks for path, chunks in stored.items())
    kept = staged_orders(between["staged"], str(large.resolve()))
    assert BATCH <= len(kept) < len(big)
    log.unlink()

    resumed = cli(*embed_args, data_dir=data, **env)
    assert resumed.returncode == 0, resumed.stderr
    rerun = logged_texts(log)
    # The rerun sends the large file's chunks that no staging row holds, and
    # the other files not written before the kill; nothing else.
    remaining = [c for i, c in enumerate(big) if i not in kept]
    remaining += [
        c
        for path, chunks in expected.items()
        if path not in stored and path != str(large.resolve())
        for c in chunks
    ]
    assert sorted(rerun) == sorted(remaining)
    assert len(rerun) < sum(len(chunks) for chunks in expected.values())
    assert stored_rows(data) == whole


@pytest.fixture
def fake() -> Iterator[None]:
    model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 32})
    yield
    model_manager.reset()


class CountingModel:
    """The fake model's vectors; counts the texts, and can set ``stop``
    (as Ctrl-C) during a chosen call."""

    def __init__(
        self, stop: asyncio.Event | None = None, stop_at: int = 0, delay: float = 0.001
    ) -> None:
        self.texts: list[str] = []
        self.calls = 0
        self.stop, self.stop_at, self.delay = stop, stop_at, delay

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += texts
        if self.stop is not None and self.calls == self.stop_at:
            self.stop.set()
        await asyncio.sleep(self.delay)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]


def use_model(monkeypatch: pytest.MonkeyPatch, model: CountingModel) -> None:
    async def aembed(self: Any, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await model(texts)

    monkeypatch.setattr(fake_model.FakeEmbeddingModel, "aembed", aembed)
    monkeypatch.delattr(fake_model.FakeEmbeddingModel, "aembed_matrix", raising=False)


async def staging_rows(db: Database) -> int:
    return len(await db.query("SELECT VALUE id FROM embedding_staging;"))


@pytest.mark.parametrize("stage_after", [0, 60])
async def test_ctrl_c_inside_a_large_file_keeps_its_batches(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch, stage_after: float
) -> None:
    """Also before ``stage_after`` (60 s here): a stop stages what the
    record has finished."""
    paths, large = write_large_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    expected = expected_chunks(paths)
    stop = asyncio.Event()
    first = CountingModel(stop, stop_at=6)
    use_model(monkeypatch, first)
    options = EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=stage_after)
    report = await embed(options, db, stop=stop)
    assert report.interrupted
    assert str(large.resolve()) not in await stored_chunks(db)
    assert await staging_rows(db) > 0
    second = CountingModel()
    use_model(monkeypatch, second)
    await embed(options, db)
    # Each chunk went to the model once over the two runs (the batches in
    # flight at the stop were finished and kept).
    assert sorted(first.texts + second.texts) == sorted(
        c for chunks in expected.values() for c in chunks
    )
    assert await stored_chunks(db) == expected
    assert await staging_rows(db) == 0


@pytest.mark.parametrize("change", ["text", "chunking", "model"])
async def test_staged_batches_of_another_text_or_settings_are_not_used(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    _, large = write_large_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    stop = asyncio.Event()
    use_model(monkeypatch, CountingModel(stop, stop_at=5))
    options = EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=0)
    await embed(options, db, stop=stop)
    assert await staging_rows(db) > 0
    if change == "text":
        large.write_text(large.read_text().replace("large", "grand"))
        await ingest([tmp_path / "corpus"], db)
    elif change == "chunking":
        set_chunking_config(chunk_size=600, chunk_overlap=50)
    else:  # the same dimension, another model identity
        model_manager.configure_embedding_model(
            fake_model.FAKE_PROVIDER, config={"dimension": 32, "delay": 0}
        )
    try:
        second = CountingModel()
        use_model(monkeypatch, second)
        await embed(options, db)
        big = expected_chunks([large])[str(large.resolve())]
        assert all(second.texts.count(c) >= big.count(c) for c in big)
        assert (await stored_chunks(db))[str(large.resolve())] == big
        assert await staging_rows(db) == 0
    finally:
        set_chunking_config(None)


async def test_small_records_are_never_staged(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_corpus(tmp_path / "corpus", documents=4, paragraphs=3)
    await ingest([tmp_path / "corpus"], db)

    async def refuse(*args: Any) -> None:
        raise AssertionError("a small record was staged")

    monkeypatch.setattr(stages.staging, "save_batch", refuse)
    report = await embed(EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=0), db)
    assert report.counts["source"].embedded == 4
    assert await stored_chunks(db) == expected_chunks(paths)


async def test_deleting_a_record_deletes_its_staged_batches(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = Source(title="large", full_text="".join(paragraph("large", n) for n in range(80)))
    await source.save()
    stop = asyncio.Event()
    use_model(monkeypatch, CountingModel(stop, stop_at=4))
    await embed(EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=0), db, stop=stop)
    assert await staging_rows(db) > 0
    await source.delete()
    assert await staging_rows(db) == 0


async def test_the_progress_line_shows_the_large_files_batches(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, large = write_large_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    total = -(-len(expected_chunks([large])[str(large.resolve())]) // BATCH)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    async def slow(texts: list[str]) -> list[list[float]]:
        await asyncio.sleep(0.06)
        return fake_model.hash_vectors(texts, 32).tolist()  # type: ignore[no-any-return]

    use_model(monkeypatch, CountingModel())
    monkeypatch.setattr(CountingModel, "__call__", lambda self, texts: slow(texts))
    out = Terminal()
    await embed(
        EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=0),
        db,
        progress=True,
        stream=out,
    )
    shown = [int(n) for n in re.findall(rf"large\.txt (\d+)/{total} batches", out.getvalue())]
    assert shown and shown == sorted(shown) and 0 < shown[-1] < total


def test_progress_shows_a_file_until_its_batches_are_done() -> None:
    bar = Progress("embed", "records", 2, 100, io.StringIO(), enabled=False)
    bar.show_file("big.txt", 3, 10)
    assert "big.txt 3/10 batches" in bar.line()
    bar.show_file("other.md", 1, 5)
    assert "big.txt 3/10 batches (+1 more)" in bar.line()
    bar.show_file("big.txt", 10, 10)
    assert "other.md 1/5 batches" in bar.line() and "big.txt" not in bar.line()
    bar.show_file("other.md", 0, 0)
    assert "batches" not in bar.line()


async def test_a_large_record_is_staged_only_after_stage_after_seconds_in_the_model(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before ``stage_after`` no staging write; the first one then keeps
    every chunk finished so far, and later ones what came since."""
    write_large_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    stop = asyncio.Event()
    # The stage's clock moves one second per model call, staging starts
    # after 3.5: the first write comes after four batches of the record and
    # holds them all; stop during the tenth call.
    model = CountingModel(stop, stop_at=10)
    use_model(monkeypatch, model)
    clock = SimpleNamespace(monotonic=lambda: float(model.calls), perf_counter=time.perf_counter)
    monkeypatch.setattr(stages, "time", clock)
    options = EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=3.5)
    saved: list[tuple[int, int]] = []
    save_batch = stages.staging.save_batch

    async def recording(db: Database, record: Any, key: str, start: int, vectors: Any) -> None:
        saved.append((start, len(vectors)))
        await save_batch(db, record, key, start, vectors)

    monkeypatch.setattr(stages.staging, "save_batch", recording)
    await embed(options, db, stop=stop)
    assert saved[0][0] == 0
    assert saved[0][1] >= 3 * BATCH  # the batches before the threshold, in one write
    assert all(rows <= BATCH for _, rows in saved[1:])  # then batch by batch
    rows = await db.query("SELECT start, width, vectors FROM embedding_staging;")
    kept = sorted(
        row["start"] + n for row in rows for n in range(len(row["vectors"]) // row["width"])
    )
    assert kept == list(range(len(kept)))  # every finished chunk, none twice
    assert len(kept) >= 6 * BATCH


async def test_a_large_record_finished_within_stage_after_is_never_staged(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, _ = write_large_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)

    async def refuse(*args: Any) -> None:
        raise AssertionError("a record finished within stage_after was staged")

    monkeypatch.setattr(stages.staging, "save_batch", refuse)
    options = EmbedOptions(kinds=("source",), batch_size=BATCH, stage_after=60)
    report = await embed(options, db)
    assert report.failed == 0
    assert await stored_chunks(db) == expected_chunks(paths)
