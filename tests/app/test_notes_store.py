"""A note vault in the embedded database: import, export, audit, graph
queries, search and the Qdrant export, through the Python API.

The vault is the generated mini-vault (``helpers.vault``); the real vault
(``FASTNOTEBOOK_TEST_VAULT``) is tested in ``test_notes_cli.py``. The model is
the zero-cost ``fastnotebook-fake`` provider (hash vectors)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from fastnotebook.ai import model_manager
from fastnotebook.app.database import Database
from fastnotebook.app.pipeline import fake_model
from fastnotebook.app.vault.audit import audit_vault
from fastnotebook.app.vault.export import export_vault
from fastnotebook.app.vault.qdrant import (
    PAYLOAD_INDEXES,
    VECTOR_NAME,
    load_export,
    load_schemas,
    qdrant_export,
    read_points,
)
from fastnotebook.app.vault.search import search_notes
from fastnotebook.app.vault.store import (
    backlinks,
    chunk_neighbours,
    embed_missing,
    import_vault,
    linked_notes,
    note_edges,
    unresolved_links,
)
from fastnotebook.errors import InvalidInputError
from fastnotebook.notes import NotesConfig, edges_of_note, read_vault
from helpers.notes_store import assert_same_files, changed_keys, snapshot
from helpers.vault import write_mini_vault


@pytest.fixture
def fake() -> Iterator[None]:
    model_manager.configure_embedding_model(fake_model.FAKE_PROVIDER, config={"dimension": 24})
    yield
    model_manager.reset()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The mini-vault with two generated notes (the round trip test has all)."""
    write_mini_vault(tmp_path / "vault", extra_notes=2)
    return tmp_path / "vault"


def ids_by_path(root: Path) -> dict[str, str]:
    return {n.path: n.id for n in read_vault(root).notes}


def good_files(root: Path, broken: set[str]) -> dict[str, bytes]:
    """The mini-vault's files that must round-trip: all but the dot-folders'
    and those the parser rejects (``broken``, checked against the generator's list)."""
    mini = write_mini_vault(root.parent / "again")  # the same seed: the same files
    shutil.rmtree(root.parent / "again")
    assert mini.broken <= broken
    return {rel: data for rel, data in mini.files.items() if rel not in broken | mini.skipped}


async def test_round_trip_is_byte_identical_from_text_and_from_chunks(
    db: Database, tmp_path: Path, fake: None
) -> None:
    vault = tmp_path / "vault"
    write_mini_vault(vault)
    report = await import_vault(vault, db)
    assert all(e.path.startswith("broken/") and e.message for e in report.errors)
    mini_files = good_files(vault, {e.path for e in report.errors})
    assert report.added == report.notes == len(mini_files)
    assert report.missing_vectors == 0 and report.embedded > 0
    for from_chunks, name in ((False, "text"), (True, "chunks")):
        exported = await export_vault(tmp_path / name, db, from_chunks=from_chunks)
        assert exported.files == len(mini_files) and not exported.mismatches
        assert_same_files(mini_files, tmp_path / name)
    audit = await audit_vault(db)
    assert audit.ok, audit.violated
    assert audit.counts["notes"] == len(mini_files)
    assert audit.counts["belongs_to"] == audit.counts["chunks"] > len(mini_files)
    assert audit.counts["unresolved"] >= 1
    # A second import changes nothing.
    again = await import_vault(vault, db)
    assert (again.unchanged, again.added, again.changed, again.removed) == (report.notes, 0, 0, 0)
    assert again.chunks_written == again.embedded == 0


async def test_stored_rows_match_the_parse(db: Database, vault: Path, fake: None) -> None:
    await import_vault(vault, db)
    parsed = read_vault(vault)
    rows = await db.query("SELECT chunk_id, text, embed_text, embedding FROM vault_chunk;")
    stored = {r["chunk_id"]: r for r in rows}
    expected = {c.id: c for chunks in parsed.chunks.values() for c in chunks}
    assert sorted(stored) == sorted(expected)
    for chunk_id, chunk in expected.items():
        assert stored[chunk_id]["text"] == chunk.text
        assert stored[chunk_id]["embed_text"] == chunk.embed_text
        if chunk.embed_text.strip():
            vector = fake_model.hash_vectors([chunk.embed_text], 24)[0].tolist()
            assert stored[chunk_id]["embedding"] == pytest.approx(vector, abs=1e-6)
    for note in parsed.notes:
        edges = [
            (e.kind, e.source_id, e.target_id, e.scope, e.note_id, e.status)
            for e in await note_edges(note.id, db)
        ]
        assert edges == [
            (e.kind, e.source_id, e.target_id, e.scope, e.note_id, e.status)
            for e in edges_of_note(parsed, note.id)
        ]


async def test_graph_queries(db: Database, vault: Path, fake: None) -> None:
    await import_vault(vault, db)
    ids = ids_by_path(vault)
    index, concept, sub = ids["Index.md"], ids["Concept A.md"], ids["folder/Sub Note.md"]
    assert concept == "concept-a-id"
    # Neighbours follow the prev/next edges.
    first = f"{concept}#c00"
    neighbours = await chunk_neighbours(first, db)
    assert neighbours == {"prev": None, "next": f"{concept}#c01"}
    assert await chunk_neighbours(f"{concept}#c01", db) == {
        "prev": first,
        "next": f"{concept}#c02",
    }
    # Index, Sub Note and the unicode note link to Concept A; Concept A links back.
    linking = await backlinks(concept, db)
    unicode_note = next(i for p, i in ids.items() if p.startswith("folder/nested/deep/"))
    assert {index, sub, unicode_note} <= set(linking)
    assert index in await linked_notes(concept, db) and concept in await linked_notes(index, db)
    # Links under a suggestions heading make no edges: "Suggested Only" and
    # "Nowhere To Be Found" are missing notes but no unresolved links.
    unresolved = await unresolved_links(db)
    targets = {(e.note_id, e.target_id) for e in unresolved}
    assert (index, "Missing Note") in targets
    assert all(e.target_id not in ("Suggested Only", "Nowhere To Be Found") for e in unresolved)
    assert all(e.status == "unresolved" and e.kind == "references" for e in unresolved)


async def test_an_unresolved_link_resolves_when_its_note_appears(
    db: Database, vault: Path, fake: None
) -> None:
    await import_vault(vault, db)
    index = ids_by_path(vault)["Index.md"]
    assert "Missing Note" in {e.target_id for e in await unresolved_links(db)}
    (vault / "Missing Note.md").write_text("Now it exists. Back to [[Index]].\n")
    report = await import_vault(vault, db)
    missing_id = ids_by_path(vault)["Missing Note.md"]
    assert report.added == 1
    assert "Missing Note" not in {e.target_id for e in await unresolved_links(db)}
    assert index in await backlinks(missing_id, db)
    assert missing_id in await linked_notes(index, db)
    assert (await audit_vault(db)).ok


async def test_incremental_edit_rename_delete_change_exactly_the_right_rows(
    db: Database, vault: Path, tmp_path: Path, fake: None
) -> None:
    await import_vault(vault, db)
    ids = ids_by_path(vault)
    before = await snapshot(db)

    # Edit one paragraph of a note nobody links to by content: only its rows change.
    journal = vault / "journal/2024-01-01.md"
    journal.write_bytes(journal.read_bytes() + b"\nOne more line at the end.\n")
    edited = await import_vault(vault, db)
    after = await snapshot(db)
    jid = ids["journal/2024-01-01.md"]
    assert edited.written_ids == [jid] and edited.changed == 1
    assert {c.split("#")[0] for c in changed_keys(before["chunks"], after["chunks"])} == {jid}
    assert changed_keys(before["edges"], after["edges"]) <= {jid}
    assert changed_keys(before["notes"], after["notes"]) == {jid}
    # Unchanged chunks keep their vectors: only the changed text was embedded.
    assert edited.embedded <= 2 and edited.reused >= 1

    # Rename a note linked by name: its id (a slug of the path) changes, the
    # links to it by file name break, so their owners are rewritten too.
    before = after
    sub_old = ids["folder/Sub Note.md"]
    (vault / "folder/Sub Note.md").rename(vault / "folder/Renamed.md")
    renamed = await import_vault(vault, db)
    after = await snapshot(db)
    new_ids = ids_by_path(vault)
    sub_new = new_ids["folder/Renamed.md"]
    parsed = read_vault(vault)
    owners = {
        e.note_id
        for e in parsed.edges
        if e.target_id in ("Sub Note", "folder/Sub Note.md", sub_new) and e.note_id != sub_new
    } | {e.source_id for e in parsed.edges if e.kind == "backlink" and e.target_id == sub_new}
    assert renamed.removed_ids == [sub_old]
    assert set(renamed.written_ids) == {sub_new} | (
        changed_keys(before["edges"], after["edges"]) - {sub_old, sub_new}
    )
    assert sub_old not in after["notes"] and sub_new in after["notes"]
    assert not [c for c in after["chunks"] if c.startswith(sub_old + "#")]
    assert sub_old not in after["edges"]
    changed_notes = changed_keys(before["notes"], after["notes"])
    assert changed_notes == {sub_old, sub_new}
    assert changed_keys(before["edges"], after["edges"]) - {sub_old, sub_new} <= owners | {
        e.note_id for e in parsed.edges if e.target_id == sub_new
    }
    # Content of a renamed file is reused: no vector was recomputed.
    assert renamed.embedded == 0 and renamed.reused > 0
    assert (await audit_vault(db)).ok

    # Delete a note: its note row, chunks and edges go; links to it turn unresolved.
    before = after
    (vault / "beta.md").unlink()
    deleted = await import_vault(vault, db)
    after = await snapshot(db)
    beta = ids["beta.md"]
    assert deleted.removed_ids == [beta]
    assert beta not in after["notes"] and beta not in after["edges"]
    assert not [c for c in after["chunks"] if c.startswith(beta + "#")]
    assert ("beta note" in {e.target_id for e in await unresolved_links(db)}) == any(
        "[[beta note]]" in p.read_text(encoding="utf-8")
        for p in vault.rglob("*.md")
        if not p.relative_to(vault).parts[0].startswith((".", "broken"))
    )
    assert (await audit_vault(db)).ok
    out = tmp_path / "out"
    await export_vault(out, db)
    assert not (out / "beta.md").exists() and (out / "folder/Renamed.md").exists()


async def test_a_file_that_breaks_keeps_its_previous_version(
    db: Database, vault: Path, fake: None
) -> None:
    await import_vault(vault, db)
    ids = ids_by_path(vault)
    raw = (vault / "journal/2024-01-01.md").read_bytes()
    (vault / "journal/2024-01-01.md").write_text("---\ntitle: [broken\n---\nBody\n")
    report = await import_vault(vault, db)
    assert "journal/2024-01-01.md" in {e.path for e in report.errors}
    assert report.removed == 0
    stored = await db.query(
        "SELECT VALUE raw FROM ONLY vault_note WHERE note_id = $id LIMIT 1;",
        {"id": ids["journal/2024-01-01.md"]},
    )
    assert stored.encode() == raw


async def test_no_embed_then_embed_fills_every_missing_vector(
    db: Database, vault: Path, fake: None
) -> None:
    report = await import_vault(vault, db, embed=False)
    assert report.embedded == 0 and report.missing_vectors > 0
    audit = await audit_vault(db)
    assert audit.ok and audit.counts["vectors"] == 0
    done, due = await embed_missing(db)
    assert done == due == report.missing_vectors
    assert (await audit_vault(db)).counts["missing_vectors"] == 0
    # Without embedding, an edited note keeps the vectors of its unchanged chunks.
    journal = vault / "journal/2024-01-01.md"
    journal.write_bytes(journal.read_bytes() + b"\nOne more line.\n")
    edited = await import_vault(vault, db, embed=False)
    assert edited.changed == 1 and edited.reused >= 1
    assert edited.missing_vectors == 1
    # An import with embedding after --no-embed embeds what is missing, and
    # a model change re-embeds everything with the new model.
    model_manager.configure_embedding_model(
        fake_model.FAKE_PROVIDER, config={"dimension": 24, "seed": 1}
    )
    again = await import_vault(vault, db)
    assert again.unchanged == again.notes and again.embedded == due
    assert again.missing_vectors == 0


async def test_a_corrupted_store_is_caught_and_repaired(
    db: Database, vault: Path, fake: None
) -> None:
    await import_vault(vault, db)
    concept = ids_by_path(vault)["Concept A.md"]
    # An edge lost: the counts and invariants say so; a plain import repairs it.
    await db.query(
        "DELETE (SELECT VALUE id FROM vault_edge WHERE note_id = $id AND kind = 'next' LIMIT 1);",
        {"id": concept},
    )
    audit = await audit_vault(db)
    assert not audit.ok
    assert [i.name for i in audit.violated] == ["next == sum(max(chunks_in_note - 1, 0))"]
    repaired = await import_vault(vault, db)
    assert repaired.repaired == 1 and repaired.written_ids == [concept]
    assert (await audit_vault(db)).ok
    # A chunk's text changed behind the store's back: only --rewrite repairs it.
    await db.query(
        "UPDATE vault_chunk SET text = 'tampered' WHERE chunk_id = $id;", {"id": f"{concept}#c01"}
    )
    audit = await audit_vault(db)
    assert [i.name for i in audit.violated] == ["notes whose chunks do not rebuild the body"]
    assert "Concept A.md" in audit.violated[0].detail
    assert (await import_vault(vault, db)).unchanged == audit.counts["notes"]
    rewritten = await import_vault(vault, db, rewrite=True)
    assert rewritten.repaired == rewritten.notes
    assert (await audit_vault(db)).ok


async def test_one_vault_per_database(db: Database, vault: Path, tmp_path: Path) -> None:
    await import_vault(vault, db, embed=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nText.\n")
    with pytest.raises(InvalidInputError, match="holds the vault"):
        await import_vault(other, db, embed=False)
    report = await import_vault(other, db, embed=False, replace=True)
    assert report.added == 1 and report.removed == len(ids_by_path(vault))
    assert (await audit_vault(db)).counts["notes"] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidInputError, match=r"no Markdown notes"):
        await import_vault(empty, db, embed=False)
    with pytest.raises(InvalidInputError, match="is a file"):
        await import_vault(other / "a.md", db, embed=False)


async def test_hash_mode_decides_what_counts_as_changed(db: Database, tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "n.md").write_text("---\ntitle: One\n---\nBody text.\n")
    config = NotesConfig(hash_mode="body")
    await import_vault(root, db, config=config, embed=False)
    (root / "n.md").write_text("---\ntitle: Two\n---\nBody text.\n")
    report = await import_vault(root, db, config=config, embed=False)
    # The body did not change: rewritten (the bytes must round-trip), not "changed".
    assert (report.changed, report.rewritten) == (0, 1)
    (root / "n.md").write_text("---\ntitle: Two\n---\nBody text.   \n\n\n")
    assert (await import_vault(root, db, config=config, embed=False)).changed == 0
    (root / "n.md").write_text("---\ntitle: Two\n---\nOther text.\n")
    assert (await import_vault(root, db, config=config, embed=False)).changed == 1
    # Other settings rewrite every note.
    resized = await import_vault(root, db, config=NotesConfig(overlap=0), embed=False)
    assert resized.rewritten + resized.changed == 1


async def test_search_returns_note_section_and_neighbours(
    db: Database, vault: Path, fake: None
) -> None:
    await import_vault(vault, db)
    parsed = read_vault(vault)
    concept = next(c for c in parsed.chunks["concept-a-id"] if c.index == 1)
    vector = fake_model.hash_vectors([concept.embed_text], 24)[0].tolist()
    hits = await search_notes(vector, 3, db)
    assert len(hits) == 3
    top = hits[0]
    assert top.chunk_id == concept.id and top.score == pytest.approx(1.0, abs=1e-5)
    assert top.note_id == "concept-a-id" and top.path == "Concept A.md"
    assert top.title == "Concept A" and top.text == concept.text
    assert top.section_path == list(concept.section_path)
    assert top.neighbours == {"prev": concept.prev_id, "next": concept.next_id}
    # A text query is embedded by the configured model.
    every = [c for chunks in parsed.chunks.values() for c in chunks]
    short = min(
        (
            c
            for c in every
            if len(c.embed_text) > 20
            and c.embed_text == c.embed_text.strip()
            and sum(o.embed_text == c.embed_text for o in every) == 1
        ),
        key=lambda c: len(c.embed_text),
    )
    assert (await search_notes(short.embed_text, 1, db))[0].chunk_id == short.id
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert not top.linked
    # One hop on the graph: the notes the hit links to and those linking to its note.
    index_id = ids_by_path(vault)["Index.md"]
    first = next(
        c
        for c in parsed.chunks[index_id]
        if any(r["target_id"] == "concept-a-id" for r in c.references)
    )
    vector = fake_model.hash_vectors([first.embed_text], 24)[0].tolist()
    expanded = await search_notes(vector, 1, db, expand_links=True)
    assert expanded[0].chunk_id == first.id
    linked = {(n.note_id, n.direction) for n in expanded[0].linked}
    assert ("concept-a-id", "out") in linked and ("concept-a-id", "in") in linked
    with pytest.raises(InvalidInputError, match="positive"):
        await search_notes("x", 0, db)
    with pytest.raises(InvalidInputError, match="dimension"):
        await search_notes([1.0, 0.0], 1, db)


async def test_qdrant_export_validates_and_loads_into_qdrant(
    db: Database, vault: Path, tmp_path: Path, fake: None
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("qdrant_client")
    from qdrant_client import QdrantClient, models

    await import_vault(vault, db)
    audit = await audit_vault(db)
    out = tmp_path / "qdrant"
    report = await qdrant_export(out, db)
    assert report.validated and report.dimension == 24
    assert report.counts == {
        "chunks": audit.counts["chunks"],
        "notes": audit.counts["notes"],
        "edges": audit.counts["edges"],
    }
    schemas = load_schemas()
    for stem in ("chunks", "notes", "edges"):
        validator = jsonschema.Draft202012Validator(schemas[stem])
        for point in read_points(out / f"{stem}.jsonl"):
            validator.validate(point["payload"])
    chunk = next(iter(read_points(out / "chunks.jsonl")))
    payload = chunk["payload"]
    for key in (
        "note_id",
        "note_title",
        "path",
        "type",
        "tags",
        "chunk_index",
        "char_start",
        "char_end",
        "section_title",
        "section_path",
        "neighbors",
        "wikilinks",
        "references",
        "text",
    ):
        assert key in payload, key
    note = next(p for p in read_points(out / "notes.jsonl") if p["payload"]["path"] == "Index.md")
    raw = (vault / "Index.md").read_bytes()
    assert note["payload"]["fulltext"].encode() == raw
    assert note["payload"]["hash_fulltext"] == hashlib.sha256(raw).hexdigest()
    assert len(note["vector"]) == 24

    class Recording(QdrantClient):
        """Local mode accepts payload indexes but keeps none: record the calls."""

        indexes: ClassVar[list[tuple[str, str, str]]] = []

        def create_payload_index(  # type: ignore[override]
            self, collection_name: str, field_name: str, field_schema: str
        ) -> None:
            self.indexes.append((collection_name, field_name, str(field_schema)))

    client = Recording(":memory:")
    loaded = load_export(client, out, prefix="v")
    assert loaded == {
        "v_chunks": report.counts["chunks"],
        "v_notes": report.counts["notes"],
        "v_edges": report.counts["edges"],
    }
    assert sorted(client.indexes) == sorted(
        (f"v_{stem}", name, kind) for stem, pairs in PAYLOAD_INDEXES.items() for name, kind in pairs
    )
    assert {name for _, name, _ in client.indexes} == {
        "kind",
        "scope",
        "source_id",
        "target_id",
        "note_id",
        "chunk_index",
    }
    # A filtered vector search: the chunks of one note only.
    query = fake_model.hash_vectors([payload["text"]], 24)[0].tolist()
    found = client.query_points(
        "v_chunks",
        query=query,
        using=VECTOR_NAME,
        query_filter=models.Filter(
            must=[
                models.FieldCondition(key="note_id", match=models.MatchValue(value="concept-a-id"))
            ]
        ),
        limit=5,
    ).points
    assert found and all((p.payload or {})["note_id"] == "concept-a-id" for p in found)
    nexts = client.count(
        "v_edges",
        count_filter=models.Filter(
            must=[models.FieldCondition(key="kind", match=models.MatchValue(value="next"))]
        ),
    ).count
    assert nexts == audit.counts["next"]


TOPICS = {
    "Sleep.md": "# Sleep\n\nAdults need seven to nine hours of sleep every night. A dark, cool "
    "bedroom and a regular bedtime help you fall asleep.\n",
    "Pasta.md": "# Cooking pasta\n\nBoil plenty of salted water, add the spaghetti and cook it "
    "until al dente. Drain and toss with the sauce.\n",
    "Bicycle.md": "# Bicycle repair\n\nTo fix a flat tyre, remove the wheel, take out the inner "
    "tube, find the puncture and patch it.\n",
    "Garden.md": "# Tomatoes\n\nPlant tomato seedlings in full sun, water them deeply and tie "
    "the stems to stakes as they grow.\n",
}
QUERIES = {
    "how many hours should a grown-up sleep": "Sleep.md",
    "cooking spaghetti in boiling water": "Pasta.md",
    "patching a punctured bike tube": "Bicycle.md",
    "growing tomato plants": "Garden.md",
}


async def test_search_with_the_static_model_finds_the_note_by_meaning(
    db: Database, tmp_path: Path
) -> None:
    pytest.importorskip("static_model")
    for name, text in TOPICS.items():
        (tmp_path / name).write_text(text)
    model_manager.configure_embedding_model("fastnotebook-static")
    try:
        report = await import_vault(tmp_path, db)
        assert report.model is not None and report.model.startswith("fastnotebook-static/")
        for query, expected in QUERIES.items():
            hits = await search_notes(query, 2, db)
            assert hits[0].path == expected, (query, hits[0])
    finally:
        model_manager.reset()
