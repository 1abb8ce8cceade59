"""The writer's journal of vector changes: a snapshot brought up to date from
it equals one read from the database, after first runs, re-embedding, records
deleted meanwhile and other writers; a gap or a torn record means a read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fastnotebook.ai import model_manager
from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    RecordID,
    open_database,
    replace_source_chunks,
    set_database,
    vector_cache,
)
from fastnotebook.app.database.vector_cache import (
    VectorSnapshot,
    cache_folder,
    drop_snapshot,
    read_snapshot,
    store_changes,
    vector_snapshot,
)
from fastnotebook.app.database.vector_journal import (
    JOURNAL,
    Delta,
    append_delta,
    chain,
    read_journal,
    split_tokens,
)
from fastnotebook.app.domain import Source
from fastnotebook.app.pipeline import EmbedOptions, embed, fake_model, ingest, stages, writer
from fastnotebook.app.pipeline.state import Settings
from fastnotebook.app.pipeline.writer import Finished, write_group
from helpers.pipeline import paragraph, write_corpus

DIM = 32


@pytest.fixture
def fake() -> Iterator[None]:
    model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": DIM})
    yield
    model_manager.reset()


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    settings = DatabaseSettings(
        DatabaseSettings.embedded_url(tmp_path / "data"), full_text_search=False
    )
    database = await open_database(settings)
    previous = set_database(database)
    yield database
    set_database(previous)
    await database.close()


def rows_by_id(snapshot: VectorSnapshot) -> dict[str, dict[str, bytes]]:
    """Each table's rows as {id: the vector's bytes}: equal snapshots hold
    the same vectors under the same ids, whatever their order."""
    return {
        table: {
            i.decode("utf-8", "surrogatepass"): np.asarray(data.matrix[n]).tobytes()
            for n, i in enumerate(data.ids)
        }
        for table, data in snapshot.tables.items()
    }


async def replayed(db: Database, monkeypatch: pytest.MonkeyPatch) -> VectorSnapshot | None:
    """The snapshot ``vector_snapshot`` gives without reading the vectors
    (None: it would have had to read them)."""
    vector_cache._snapshots.pop(db, None)

    async def no_read(*args: Any) -> VectorSnapshot:
        raise AssertionError("the vectors were read from the database")

    with monkeypatch.context() as patch:
        patch.setattr(vector_cache, "read_snapshot", no_read)
        return await vector_snapshot(db, DIM, read=False)


async def assert_replay_equals_a_read(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = await replayed(db, monkeypatch)
    assert snapshot is not None, "the journal did not lead to the current token"
    read = await read_snapshot(db, DIM)
    assert snapshot.token == read.token == (await store_changes(db)).token
    assert rows_by_id(snapshot) == rows_by_id(read)
    for table, data in snapshot.tables.items():
        expected = read.tables[table]
        order = {i: n for n, i in enumerate(expected.ids.tolist())}
        index = [order[i] for i in data.ids.tolist()]
        for part in ("norms", "codes", "scales", "errors"):
            assert np.array_equal(np.asarray(getattr(data, part)), getattr(expected, part)[index])


async def test_the_first_search_after_runs_reads_no_vector(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_corpus(tmp_path / "corpus")
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(batch_size=7), db)
    await assert_replay_equals_a_read(db, monkeypatch)
    folder = cache_folder(db)
    assert folder is not None and not (folder / JOURNAL).exists()  # saved, journal cleared

    # Re-embedding: the replaced chunks go, the new ones come, from the saved snapshot.
    paths[0].write_text("# Shorter\n\n" + paragraph("short", 1))
    paths[2].write_text(paragraph("longer", 1) * 9)
    await ingest([tmp_path / "corpus"], db)
    assert (await embed(EmbedOptions(batch_size=7), db)).embedded == 2
    # The run's end brought the saved snapshot up to date (and cleared the journal).
    assert not (folder / JOURNAL).exists()
    assert (await replayed(db, monkeypatch)) is not None
    await assert_replay_equals_a_read(db, monkeypatch)


async def test_transactions_in_flight_together_replay_to_the_stored_vectors(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Groups written two at a time, on both lanes, first into an empty
    store and then re-embedding half the records: the run's end brings the
    saved snapshot up to date from the journal, equal to a read."""
    paths = write_corpus(tmp_path / "corpus", documents=8)
    await ingest([tmp_path / "corpus"], db)
    active: set[int] = set()
    most = 0
    original = stages.execute

    async def overlapping(db: Database, prepared: Any, lane: int = 0) -> None:
        nonlocal most
        active.add(lane)
        most = max(most, len(active))
        await asyncio.sleep(0.02)
        await original(db, prepared, lane)
        active.discard(lane)

    monkeypatch.setattr(stages, "execute", overlapping)
    options = EmbedOptions(batch_size=2, write_rows=1)
    first = await embed(options, db)
    assert first.embedded == 8 and first.failed == 0 and most == 2
    folder = cache_folder(db)
    assert folder is not None and not (folder / JOURNAL).exists()  # replayed and saved
    await assert_replay_equals_a_read(db, monkeypatch)
    for path in paths[::2]:
        path.write_text(paragraph(path.stem, 2))
    await ingest([tmp_path / "corpus"], db)
    most = 0
    assert (await embed(options, db)).embedded == 4
    assert most == 2 and not (folder / JOURNAL).exists()
    await assert_replay_equals_a_read(db, monkeypatch)


async def test_the_journal_chains_writes_from_the_saved_snapshot(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_corpus(tmp_path / "corpus", documents=4)
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(), db)
    sources = await db.query("SELECT VALUE id FROM source ORDER BY id;")
    folder = cache_folder(db)
    assert folder is not None and not (folder / JOURNAL).exists()
    # Writes outside a run: each transaction appends its delta; the first
    # search replays them onto the saved snapshot.
    for n, source in enumerate(sources[:3]):
        rid = RecordID("source", str(source).split(":")[1])
        vectors = [[float(n + i + 1)] * DIM for i in range(n + 1)]
        item = Finished(rid, "source", f"h{n}", 1, [f"c{i}" for i in range(n + 1)], vectors, 1)
        await write_group(db, [item], Settings("m", "c"))
    assert len(read_journal(folder)) == 3
    await assert_replay_equals_a_read(db, monkeypatch)


@pytest.mark.parametrize("undigested", [False, True], ids=["digested", "one-undigested"])
async def test_a_record_deleted_meanwhile_is_left_out(
    db: Database, fake: None, monkeypatch: pytest.MonkeyPatch, undigested: bool
) -> None:
    """A group whose last record was deleted meanwhile (and, with
    ``undigested``, another whose digest row is missing, so that the writer
    looks it up itself): the journal holds exactly the rows written."""
    sources = [Source(title=f"s{i}", full_text=f"text {i}") for i in range(3 if undigested else 2)]
    for source in sources:
        await source.save()
    ids = [RecordID("source", str(s.id).split(":")[1]) for s in sources]
    if undigested:
        await db.query("DELETE type::thing('text_digest', [$id]);", {"id": ids[1]})
    await sources[-1].delete()
    vectors = [[float(i + 1)] * DIM for i in range(2)]
    group = [Finished(rid, "source", "h", 1, ["a", "b"], vectors, 0) for rid in ids]
    await write_group(db, group, Settings("m", "c"))
    snapshot = await replayed(db, monkeypatch)
    live = len(ids) - 1
    assert snapshot is not None and snapshot.tables["source_embedding"].rows == 2 * live
    await assert_replay_equals_a_read(db, monkeypatch)


async def test_another_writer_breaks_the_chain_and_the_vectors_are_read(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_corpus(tmp_path / "corpus", documents=3)
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(), db)
    [source] = await db.query("SELECT VALUE id FROM source LIMIT 1;")
    await replace_source_chunks(str(source), ["one", "two"], [[0.5] * DIM] * 2)
    assert await replayed(db, monkeypatch) is None
    snapshot = await vector_snapshot(db, DIM)  # read, then saved
    assert snapshot is not None
    assert rows_by_id(snapshot) == rows_by_id(await read_snapshot(db, DIM))
    # The writer's next transaction chains from the snapshot just saved.
    rid = RecordID("source", str(source).split(":")[1])
    item = Finished(rid, "source", "h2", 1, ["three"], [[0.25] * DIM], 1)
    await write_group(db, [item], Settings("m", "c"))
    await assert_replay_equals_a_read(db, monkeypatch)


async def test_a_torn_or_missing_journal_means_a_read(
    db: Database, tmp_path: Path, fake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_corpus(tmp_path / "corpus", documents=3)
    await ingest([tmp_path / "corpus"], db)
    await embed(EmbedOptions(batch_size=3), db)
    for n, source in enumerate(await db.query("SELECT VALUE id FROM source;")):
        rid = RecordID("source", str(source).split(":")[1])
        item = Finished(rid, "source", f"h{n}", 1, ["one", "two"], [[n + 0.5] * DIM] * 2, 1)
        await write_group(db, [item], Settings("m", "c"))
    folder = cache_folder(db)
    assert folder is not None
    journal = folder / JOURNAL
    data = journal.read_bytes()
    journal.write_bytes(data[:-5])  # a crash in the middle of the last append
    assert len(read_journal(folder)) == len(read_journal_all(data)) - 1 == 2
    assert await replayed(db, monkeypatch) is None
    drop_snapshot(db)  # the cache folder, journal included, is gone
    assert await replayed(db, monkeypatch) is None
    snapshot = await vector_snapshot(db, DIM)
    assert snapshot is not None
    assert rows_by_id(snapshot) == rows_by_id(await read_snapshot(db, DIM))


def read_journal_all(data: bytes) -> list[Delta]:
    from fastnotebook.app.database.vector_journal import _records

    return list(_records(data))


def delta(before: str, lane: int, next_: str, rows_before: int = 1) -> Delta:
    """A delta without rows from the tokens ``before`` ("main|lane 1|lane 2")."""
    empty = np.zeros((0, 2), dtype=np.float32)
    return Delta(split_tokens(before), lane, next_, rows_before, "source_embedding", [], [], empty)


def test_chain_follows_each_lane_from_the_saved_tokens() -> None:
    a, b, c = delta("m|a0|b0", 1, "a1"), delta("m|a1|b0", 1, "a2"), delta("m|a2|b0", 2, "b1")
    assert chain([a, b, c], "m|a2|b1", "m|a0|b0") == (False, [a, b, c])
    assert chain([a, b, c], "m|a2|b1", "m|a1|b0") == (False, [b, c])
    assert chain([a, b, c], "m|a0|b0", "m|a0|b0") == (False, [])
    # A transaction that committed after the token was read stays out.
    assert chain([a, b, c], "m|a1|b0", "m|a0|b0") == (False, [a])
    assert chain([a, c], "m|a2|b1", "m|a0|b0") is None  # a gap
    assert chain([a, b, c], "n|a2|b1", "m|a0|b0") is None  # another writer came last
    assert chain([a, b, c], "m|a2|b9", "m|a0|b0") is None  # a lost append


def test_transactions_in_flight_together_chain_in_either_order() -> None:
    # Both saw the same tokens; each advanced its own lane.
    first, second = delta("m|a0|b0", 1, "a1"), delta("m|a0|b0", 2, "b1")
    then = delta("m|a1|b1", 1, "a2")
    for journal in ([first, second, then], [second, first, then]):
        assert chain(journal, "m|a2|b1", "m|a0|b0") == (False, journal)


def test_a_transaction_that_began_after_another_committed_comes_after_it() -> None:
    # `later` saw lane 1 at a1: it began after `first` committed, and may
    # remove what `first` added, even if its append came first.
    first, later = delta("m|a0|b0", 1, "a1"), delta("m|a1|b0", 2, "b1")
    assert chain([later, first], "m|a1|b1", "m|a0|b0") == (False, [first, later])
    assert chain([later], "m|a0|b1", "m|a0|b0") is None


def test_chain_starts_from_an_empty_store() -> None:
    first = delta("m|a0|b0", 1, "a1", rows_before=0)
    second = delta("m|a0|b0", 2, "b1", rows_before=0)
    then = delta("m|a1|b1", 1, "a2")
    assert chain([first, second, then], "m|a2|b1", None) == (True, [first, second, then])
    assert chain([first, then], "m|a2|b1", None) is None  # the second was never appended
    assert chain([delta("m|a0|b0", 1, "a1")], "m|a1|b0", None) is None  # not from empty
    # A token of another shape (an older format) is never followed.
    assert chain([delta("m", 0, "n", rows_before=0)], "m|a0|b0", None) is None


def test_a_delta_survives_the_round_trip(tmp_path: Path) -> None:
    added = np.asarray(np.arange(6).reshape(2, 3) / 7, dtype=np.float32)
    before = ("m", "p", "q")
    written = Delta(before, 1, "n", 4, "source_embedding", ["a:⟨é⟩"], ["x:1", "x:2"], added)
    append_delta(tmp_path, written)
    append_delta(tmp_path, delta("m|n|q", 1, "o"))
    first, second = read_journal(tmp_path)
    assert (first.before, first.prev, first.next, first.rows_before) == (before, "p", "n", 4)
    assert (first.removed, first.added_ids) == (["a:⟨é⟩"], ["x:1", "x:2"])
    assert np.array_equal(first.added, added) and second.next == "o"


def test_a_record_with_a_lane_out_of_range_ends_the_journal(tmp_path: Path) -> None:
    append_delta(tmp_path, delta("m|a|b", 1, "c"))
    append_delta(tmp_path, delta("m|c|b", 3, "d"))
    append_delta(tmp_path, delta("m|c|b", 2, "e"))
    assert [d.next for d in read_journal(tmp_path)] == ["c"]


@pytest.mark.parametrize(
    "key",
    [
        "0123456789abcdef0123",
        "01234567890123456789",
        "abcdefabcdefabcdefab",
        "00000000000000000000",
    ],
)
def test_a_chunk_id_is_the_string_of_its_record_id(key: str) -> None:
    # The journal names rows as the database does: all-digit keys escaped.
    assert writer._chunk_id(key) == str(RecordID("source_embedding", key))
    assert all(
        writer._chunk_id(k) == str(RecordID("source_embedding", k)) for k in writer._chunk_keys(500)
    )
