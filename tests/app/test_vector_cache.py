"""Exact search through the database: the snapshot of the stored vectors
equals a numpy brute force over what the database holds; a snapshot is never
used once the database changed, whoever wrote; the on-disk cache is reused
by the next process only while it is current; the HNSW index finds the same
neighbours (recall@10) on real vectors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fastnotebook.ai import local_models, model_manager
from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    ensure_record_id,
    ensure_vector_indexes,
    hnsw_nearest,
    open_database,
    replace_source_chunks,
    repo_insert,
    set_database,
    set_embeddings,
    vector_cache,
)
from fastnotebook.app.database.vector_cache import (
    VectorSnapshot,
    _read_response,
    _read_whole,
    cache_folder,
    read_snapshot,
    store_changes,
    vector_snapshot,
)
from fastnotebook.app.domain import Note, Source, vector_search
from fastnotebook.chunking import chunk_text
from fastnotebook.embedding import generate_embeddings
from fastnotebook.errors import InvalidInputError
from helpers.corpus import require_corpus
from helpers.vectors import brute_force_top_k

DIM = 16


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    database = await open_database(DatabaseSettings("mem://", full_text_search=False))
    previous = set_database(database)
    yield database
    set_database(previous)
    await database.close()


async def stored(db: Database, table: str) -> tuple[list[str], np.ndarray]:
    """The ids and vectors the database holds, read directly."""
    rows = await db.query(f"SELECT id, embedding FROM {table} WHERE embedding != NONE;")
    ids = [str(r["id"]) for r in rows]
    return ids, np.asarray([r["embedding"] for r in rows], dtype=np.float32).reshape(-1, DIM)


async def seed(rng: np.random.Generator, sources: int = 6, chunks: int = 40) -> list[str]:
    ids = []
    for i in range(sources):
        source = Source(title=f"s{i}")
        await source.save()
        vectors = rng.standard_normal((chunks, DIM)).astype(np.float32)
        texts = [f"s{i} c{j}" for j in range(chunks)]
        await replace_source_chunks(source.id or "", texts, vectors.tolist())
        ids.append(source.id or "")
    notes = []
    for i in range(5):
        note = Note(title=f"n{i}", content=f"note {i}", note_type="human")
        await note.save()
        notes.append(note.id or "")
    await set_embeddings({n: rng.standard_normal(DIM).tolist() for n in notes})
    return ids


async def test_the_snapshot_equals_a_brute_force_over_the_database(db: Database) -> None:
    rng = np.random.default_rng(1)
    await seed(rng)
    snapshot = await vector_snapshot(db, DIM)
    assert snapshot is not None and snapshot.rows == 6 * 40 + 5
    for table in ("source_embedding", "note"):
        ids, matrix = await stored(db, table)
        for _ in range(5):
            query = rng.standard_normal(DIM).astype(np.float32)
            rows, scores = brute_force_top_k(matrix, query, 10)
            expected = [(ids[r], s) for r, s in zip(rows, scores, strict=True)]
            # Same ids, same score bits (the database's rows may come in
            # another order than the snapshot's: compare as sets of pairs).
            got = snapshot.tables[table].top_k(query, 10)
            assert sorted(got) == sorted(expected)
            assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


def same_snapshot(a: VectorSnapshot, b: VectorSnapshot) -> None:
    assert a.token == b.token and a.dimension == b.dimension
    for table in a.tables:
        x, y = a.tables[table], b.tables[table]
        assert x.ids.tolist() == y.ids.tolist()
        assert x.matrix.tobytes() == y.matrix.tobytes()
        assert x.norms.tobytes() == y.norms.tobytes()


def count_whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the one-transaction read note each call (its dimension)."""
    wholes: list[int] = []

    async def counted(db: Database, dimension: int) -> VectorSnapshot:
        wholes.append(dimension)
        return await _read_whole(db, dimension)

    monkeypatch.setattr(vector_cache, "_read_whole", counted)
    return wholes


async def test_a_paged_read_equals_the_read_in_one_transaction(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of a few rows, continued by key range after string and integer
    ids, give the one-transaction snapshot id for id and bit for bit; an id
    that a range cannot continue from reads in one transaction."""
    await seed(np.random.default_rng(8), sources=3, chunks=7)
    await db.query_all(
        "CREATE note:5 SET title = 'int', embedding = $v;"
        "CREATE note:⟨123⟩ SET title = 'digits', embedding = $v;"
        "CREATE note:ab_c SET title = 'plain', embedding = $v;"
        "CREATE note SET title = 'no vector';",
        {"v": [0.5] * DIM},
    )
    whole = await _read_whole(db, DIM)
    assert whole.rows == 3 * 7 + 5 + 3
    pages: list[str] = []
    read_page = vector_cache._read_page

    async def counted(db: Database, sql: str, dimension: int) -> Any:
        pages.append(sql)
        return await read_page(db, sql, dimension)

    monkeypatch.setattr(vector_cache, "_read_page", counted)
    wholes = count_whole_reads(monkeypatch)
    for size in (1, 2, 3, 7, 100):
        monkeypatch.setattr(vector_cache, "PAGE_ROWS", size)
        pages.clear()
        same_snapshot(await read_snapshot(db, DIM), whole)
        assert len(pages) >= (3 * 7) // size  # paged, not one read
    assert wholes == []
    # An array id cannot start a range: a page that ends on it stops the
    # paging (it sorts after every string), and the read is the whole one.
    monkeypatch.setattr(vector_cache, "PAGE_ROWS", 1)
    await db.query_all("CREATE note:[1, 'x'] SET embedding = $v;", {"v": [0.25] * DIM})
    same_snapshot(await read_snapshot(db, DIM), await _read_whole(db, DIM))
    assert wholes == [DIM]


async def test_a_paged_read_that_meets_a_change_reads_again(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vector written between two pages changes the token: the read
    starts again and the snapshot is the store after the change, never a
    mix; a store that keeps changing is read in one transaction."""
    ids = await seed(np.random.default_rng(9), sources=2, chunks=5)
    monkeypatch.setattr(vector_cache, "PAGE_ROWS", 2)
    read_page = vector_cache._read_page
    writes = 0

    async def writing(db: Database, sql: str, dimension: int) -> Any:
        nonlocal writes
        if writes < limit:
            writes += 1
            await replace_source_chunks(ids[0], [f"new {writes}"], [[float(writes)] * DIM])
        return await read_page(db, sql, dimension)

    monkeypatch.setattr(vector_cache, "_read_page", writing)
    limit = 1
    snapshot = await read_snapshot(db, DIM)
    same_snapshot(snapshot, await _read_whole(db, DIM))
    assert snapshot.rows == 1 + 5 + 5 and writes == 1  # the new chunk, the other source, notes
    # Changed during every try: the one-transaction read.
    limit, writes = 100, 0
    wholes = count_whole_reads(monkeypatch)
    snapshot = await read_snapshot(db, DIM)
    assert wholes == [DIM] and writes >= vector_cache._PAGED_TRIES
    monkeypatch.setattr(vector_cache, "_read_page", read_page)
    same_snapshot(snapshot, await _read_whole(db, DIM))


async def test_the_core_reads_the_response_as_the_sdk_does(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedded engine's response is read by the core; the snapshot is
    the one the SDK's decoder gives, id for id and bit for bit, and a
    response the core cannot read (an error) goes through the SDK."""
    await seed(np.random.default_rng(4), sources=3, chunks=12)
    # Ids of several shapes, and numbers the engine sends as integers.
    await db.query_all(
        "CREATE note:⟨odd id⟩ SET title = 'a', embedding = $v;"
        "CREATE note:[1, 'x'] SET title = 'b', embedding = $w;",
        {"v": [1, 0, -2] + [0.25] * (DIM - 3), "w": [0.5] * DIM},
    )
    fast = await read_snapshot(db, DIM)
    assert await db.query_response_bytes("RETURN 1;") is not None

    async def no_bytes(*args: object) -> None:
        return None

    monkeypatch.setattr(Database, "query_response_bytes", no_bytes)
    slow = await read_snapshot(db, DIM)
    assert fast.token == slow.token
    for table in fast.tables:
        a, b = fast.tables[table], slow.tables[table]
        assert a.ids.tolist() == b.ids.tolist()
        assert a.matrix.tobytes() == b.matrix.tobytes()
    assert b"note:[1, 'x']" in fast.tables["note"].ids.tolist()
    monkeypatch.undo()
    failed = await db.query_response_bytes("SELECT VALUE token FROM ONLY 1; THROW 'boom';")
    assert failed is not None and _read_response(failed, DIM) is None
    assert _read_response(b"\xff", DIM) is None


async def test_exact_search_returns_the_brute_force_best(db: Database) -> None:
    rng = np.random.default_rng(2)
    await seed(rng)
    ids, matrix = await stored(db, "source_embedding")
    owners = {
        str(r["id"]): str(r["source"])
        for r in await db.query("SELECT id, source FROM source_embedding;")
    }
    for _ in range(5):
        query = rng.standard_normal(DIM).astype(np.float32)
        rows, scores = brute_force_top_k(matrix, query, 4)
        [hit] = await vector_search(query.tolist(), 1, note=False, minimum_score=-1.0, mode="exact")
        assert hit["id"] == owners[ids[rows[0]]]
        assert hit["similarity"] == scores[0]
        both = await vector_search(query.tolist(), 3, minimum_score=-1.0, mode="exact")
        ann = await vector_search(query.tolist(), 3, minimum_score=-1.0, mode="ann")
        assert both[0]["id"] == ann[0]["id"]
        assert both[0]["similarity"] == pytest.approx(ann[0]["similarity"], abs=1e-6)
    with pytest.raises(InvalidInputError, match="mode"):
        await vector_search([1.0] * DIM, 1, mode="fast")  # type: ignore[arg-type]


async def test_any_write_makes_the_snapshot_stale(db: Database) -> None:
    rng = np.random.default_rng(3)
    sources = await seed(rng, sources=3, chunks=10)
    first = await vector_snapshot(db, DIM)
    assert first is not None
    assert await vector_snapshot(db, DIM, read=False) is first  # current: kept

    async def best(query: np.ndarray) -> dict[str, object]:
        hits = await vector_search(query.tolist(), 1, minimum_score=-1.0, mode="exact")
        return hits[0]

    # The pipeline's and the domain's writers.
    target = rng.standard_normal(DIM).astype(np.float32)
    late = Source(title="late")
    await late.save()
    await replace_source_chunks(late.id or "", ["late chunk"], [target.tolist()])
    assert await vector_snapshot(db, DIM, read=False) is None  # stale: not used
    assert (await best(target))["id"] == late.id
    # A row written straight into the table, as another program would.
    direct = rng.standard_normal(DIM).astype(np.float32)
    await repo_insert(
        "source_embedding",
        [
            {
                "source": ensure_record_id(sources[0]),
                "order": 99,
                "content": "direct",
                "embedding": direct.tolist(),
            }
        ],
        return_rows=False,
    )
    hit = await best(direct)
    assert hit["id"] == sources[0] and hit["matches"][0] == "direct"
    # A deleted source's chunks are gone from the results.
    await late.delete()
    assert (await best(target))["id"] != late.id
    # A note's vector changed in place.
    note = Note(title="moving", content="x", note_type="human")
    await note.save()
    await set_embeddings({note.id or "": (-target).tolist()})
    await set_embeddings({note.id or "": target.tolist()})
    assert (await best(target))["id"] == note.id
    changes = await store_changes(db)
    assert changes.rows == 3 * 10 + 5 + 1 + 1


async def test_the_cache_beside_the_database_is_reused_only_while_current(
    tmp_path: Path,
) -> None:
    settings = DatabaseSettings(DatabaseSettings.embedded_url(tmp_path), full_text_search=False)
    rng = np.random.default_rng(4)
    query = rng.standard_normal(DIM).astype(np.float32)

    async def session(write: bool) -> tuple[str, list[dict[str, object]]]:
        db = await open_database(settings)
        previous = set_database(db)
        try:
            if write:
                await seed(rng, sources=2, chunks=5)
            hits = await vector_search(query.tolist(), 3, minimum_score=-1.0, mode="exact")
            return str((await store_changes(db)).token), hits
        finally:
            set_database(previous)
            await db.close()

    token, hits = await session(write=True)
    folder = tmp_path.resolve() / "surrealdb.vectors"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["token"] == token and manifest["rows"]["source_embedding"] == 10
    # The next process uses the file: it must not read the vectors again.
    before = sorted(p.name for p in folder.iterdir())
    again_token, again = await session(write=False)
    assert (again_token, again) == (token, hits)
    assert sorted(p.name for p in folder.iterdir()) == before
    # A process that writes leaves the file stale: the next search reads again.
    newer_token, newer = await session(write=True)
    assert newer_token != token
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["token"] == newer_token and manifest["rows"]["source_embedding"] == 20
    # A damaged cache is ignored and replaced.
    (folder / "manifest.json").write_text("{not json")
    assert (await session(write=False))[1] == newer


def test_cache_folder_only_for_on_disk_databases(tmp_path: Path) -> None:
    on_disk = Database(DatabaseSettings(DatabaseSettings.embedded_url(tmp_path)))
    assert cache_folder(on_disk) == tmp_path.resolve() / "surrealdb.vectors"
    assert cache_folder(Database(DatabaseSettings("mem://"))) is None
    assert cache_folder(Database(DatabaseSettings("ws://localhost:8000"))) is None


async def _hnsw_recall_at_10(
    sources: list[tuple[list[str], list[list[float]]]], queries: list[list[float]]
) -> float:
    """Store ``sources`` in a new database, build the HNSW index after the
    load (as `embed --vector-index` does) and return the mean recall@10 of
    the ann mode's condition against exact search. A returned row whose
    exact score ties the 10th best counts (duplicate chunks tie)."""
    db = await open_database(DatabaseSettings("mem://", full_text_search=False))
    previous = set_database(db)
    try:
        for chunks, vectors in sources:
            source = Source(title="doc")
            await source.save()
            await replace_source_chunks(source.id or "", chunks, vectors)
        dimension = len(queries[0])
        await ensure_vector_indexes(dimension, db)
        snapshot = await vector_snapshot(db, dimension)
        assert snapshot is not None and snapshot.rows >= 250
        table = snapshot.tables["source_embedding"]
        recalls = []
        for vector in queries:
            query = np.asarray(vector, dtype=np.float32)
            scores = dict(table.top_k(query, table.rows))
            tenth = sorted(scores.values(), reverse=True)[9]
            rows = await db.query(
                f"SELECT id FROM source_embedding WHERE {hnsw_nearest(10)};", {"query": vector}
            )
            found = {str(r["id"]) for r in rows}
            recalls.append(sum(scores[i] >= tenth for i in found) / 10)
        return sum(recalls) / len(recalls)
    finally:
        set_database(previous)
        await db.close()


async def test_hnsw_recall_at_10_on_real_vectors() -> None:
    files = require_corpus("md")[:60]
    # The default offline model (all-MiniLM-L6-v2): real vectors, as users have them.
    model_manager.configure_embedding_model(
        local_models.ONNX_PROVIDER, local_models.ONNX_MODEL_NAME
    )
    try:
        sources = []
        for path in files:
            text = path.read_text(encoding="utf-8", errors="replace")
            chunks = [c for c in chunk_text(text, file_path=path) if c.strip()][:15]
            if chunks:
                sources.append((chunks, await generate_embeddings(chunks)))
        queries = [vectors[-1] for _, vectors in sources[::2]][:30]
    finally:
        model_manager.reset()
    # An index build depends on the insertion order (the rows' random ids):
    # one build's recall varies by a few points, so the mode is judged by
    # the mean of three builds.
    builds = [await _hnsw_recall_at_10(sources, queries) for _ in range(3)]
    assert sum(builds) / len(builds) >= 0.95, f"recall@10 of 3 builds: {builds}"
