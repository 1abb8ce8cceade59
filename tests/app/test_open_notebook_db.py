"""``embed`` on a database created by Open Notebook's own migrations (from the
checkout ``FASTNOTEBOOK_OPEN_NOTEBOOK_SRC`` names; skipped without it): the
chunk rows it writes pass Open Notebook's typed schema and its own
``fn::vector_search`` finds them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from fastnotebook.ai import model_manager
from fastnotebook.app.database import Database, DatabaseSettings, open_database, open_notebook_db
from fastnotebook.app.pipeline import EmbedOptions, embed, fake_model
from fastnotebook.chunking import chunk_texts
from helpers.open_notebook import open_notebook_src

DIMENSION = 32


@pytest.fixture
def fake() -> Iterator[None]:
    model_manager.configure_embedding_model(
        fake_model.FAKE_PROVIDER, config={"dimension": DIMENSION}
    )
    yield
    model_manager.reset()


@pytest.fixture
async def on_db() -> AsyncIterator[Database]:
    src = open_notebook_src()
    # As a server database: fastnotebook's own migrations are not applied.
    db = await open_database(DatabaseSettings("mem://", auto_migrate=False))
    await open_notebook_db.apply_migrations(db, src)
    yield db
    await db.close()


def _document(n: int) -> str:
    return f"# Part {n}\n\n" + "\n\n".join(
        f"Paragraph {n}.{i} about topic {n * 7 + i}: " + "words of the text " * 30
        for i in range(12)
    )


async def test_embed_writes_chunks_open_notebooks_vector_search_returns(
    on_db: Database, fake: None
) -> None:
    info = await on_db.query("INFO FOR TABLE source_embedding;")
    assert "embedding[*]" in info["fields"]  # Open Notebook's typed table, kept as it is
    documents = [(f"/docs/d{n}.md", _document(n)) for n in range(4)]
    ids = await open_notebook_db.add_sources(on_db, documents)
    # Chunks Open Notebook wrote before, to be replaced.
    await on_db.query(
        "CREATE source_embedding SET source = $s, order = 0, content = 'old', embedding = $v;",
        {"s": ids[0], "v": [1.0] * DIMENSION},
    )

    report = await embed(EmbedOptions(kinds=("source",)), on_db)

    assert report.failures == []
    expected = chunk_texts([t for _, t in documents], file_paths=[p for p, _ in documents])
    assert report.counts["source"].chunks == sum(len(c) for c in expected) > 4
    for rid, chunks in zip(ids, expected, strict=True):
        stored = await on_db.query(
            "SELECT order, content FROM source_embedding WHERE source = $s ORDER BY order;",
            {"s": rid},
        )
        assert [r["content"] for r in stored] == chunks
    # Open Notebook's own search finds each chunk by its own vector, best.
    for rid, chunks in zip(ids, expected, strict=True):
        vector = fake_model.hash_vectors([chunks[1]], DIMENSION)[0].tolist()
        hits = await open_notebook_db.vector_search(on_db, vector, 3)
        # (Its final ORDER BY does not order its grouped rows: take the best.)
        best = max(hits, key=lambda h: h["similarity"])
        assert best["id"] == rid and chunks[1] in best["matches"]
        assert best["similarity"] == pytest.approx(1.0)
    # Its BM25 index on chunk content is live and sees the new chunks.
    found = await on_db.query(
        "SELECT VALUE source FROM source_embedding WHERE content @1@ 'topic';"
    )
    assert {str(r) for r in found} == {str(r) for r in ids}
    # Incremental by hash here too.
    again = await embed(EmbedOptions(kinds=("source",)), on_db)
    assert again.counts["source"].embedded == 0 and again.counts["source"].unchanged == 4
