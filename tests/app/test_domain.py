"""fastnotebook.app.domain against the real embedded SurrealDB: models, their
relations, and text and vector search."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from fastnotebook.ai import local_models, model_manager
from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    ensure_record_id,
    open_database,
    replace_source_chunks,
    repo_insert,
    repo_query,
    set_database,
    set_embeddings,
)
from fastnotebook.app.domain import (
    Note,
    Notebook,
    Source,
    SourceInsight,
    text_search,
    vector_search,
)
from fastnotebook.embedding import generate_embeddings
from fastnotebook.errors import DatabaseOperationError, InvalidInputError, NotFoundError


async def fresh_database(full_text_search: bool = False) -> Database:
    return await open_database(DatabaseSettings("mem://", full_text_search=full_text_search))


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    database = await fresh_database()
    previous = set_database(database)
    yield database
    set_database(previous)
    await database.close()


@pytest.fixture
async def search_db() -> AsyncIterator[Database]:
    database = await fresh_database(full_text_search=True)
    previous = set_database(database)
    yield database
    set_database(previous)
    await database.close()


async def test_notebook_lifecycle(db: Database) -> None:
    notebook = Notebook(name="Research", description="papers")
    await notebook.save()
    assert notebook.id and notebook.id.startswith("notebook:")
    assert notebook.created and notebook.updated
    loaded = await Notebook.get(notebook.id)
    assert loaded == notebook
    assert await Notebook.get(notebook.id.split(":", 1)[1]) == notebook  # bare id

    created, first_update = notebook.created, notebook.updated
    notebook.description = "papers and notes"
    await notebook.save()
    assert notebook.created == created and notebook.updated and notebook.updated > first_update
    assert (await Notebook.get(notebook.id)).description == "papers and notes"

    assert await notebook.delete() is True
    assert await notebook.delete() is False
    with pytest.raises(NotFoundError):
        await Notebook.get(notebook.id)
    with pytest.raises(NotFoundError):
        await notebook.save()


async def test_invalid_models_and_ids(db: Database) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        Notebook(name="  ", description="")
    with pytest.raises(InvalidInputError, match="empty"):
        Note(content=" ")
    for bad in ["", " ", "notebook:"]:
        with pytest.raises(InvalidInputError):
            await Notebook.get(bad)
    with pytest.raises(NotFoundError):  # prefixed: the id "bad table:x", which does not exist
        await Notebook.get("bad table:x")
    with pytest.raises(InvalidInputError, match="not a notebook id"):
        Notebook.record_id(ensure_record_id("source:abc"))
    with pytest.raises(InvalidInputError):
        await Note().delete()
    with pytest.raises(InvalidInputError):
        await Notebook.get_all(order_by="name; DELETE notebook")


async def test_get_all_orders_by_a_field(db: Database) -> None:
    for name in ["b", "c", "a"]:
        await Notebook(name=name).save()
    assert [n.name for n in await Notebook.get_all(order_by="name")] == ["a", "b", "c"]
    assert [n.name for n in await Notebook.get_all(order_by="name desc")] == ["c", "b", "a"]


async def test_sources_insights_and_notes_of_a_notebook(db: Database) -> None:
    notebook = Notebook(name="N")
    await notebook.save()
    assert notebook.id
    sources = []
    for i in range(3):
        source = Source(title=f"S{i}", full_text=f"text {i}", topics=["t"])
        await source.save()
        await source.add_to_notebook(notebook.id)
        sources.append(source)
    await sources[1].add_to_notebook(notebook.id)  # a second edge: still listed once
    await sources[0].save()  # now the most recently updated
    first = await sources[0].add_insight("summary", "first insight")
    second = await sources[0].add_insight("ideas", "second insight")
    with pytest.raises(InvalidInputError):
        await sources[0].add_insight("", "x")

    listed = await notebook.get_sources()
    assert [s.title for s in listed] == ["S0", "S2", "S1"]
    assert all(s.full_text is None for s in listed)  # not loaded for listings

    assert [i.content for i in await sources[0].get_insights()] == [
        "first insight",
        "second insight",
    ]
    assert await sources[1].get_insights() == []
    assert (await first.get_source()).id == sources[0].id

    short = await sources[0].get_context()
    assert set(short) == {"id", "title", "insights"}
    assert short["insights"][0] == first.model_dump()
    long = await sources[0].get_context("long")
    assert long["full_text"] == "text 0" and long["insights"][1] == second.model_dump()

    note = Note(title="Idea", content="x" * 150, note_type="human")
    await note.save()
    await note.add_to_notebook(notebook.id)
    [listed_note] = await notebook.get_notes()
    assert listed_note.content is None  # as the original: listings omit content
    [full_note] = await notebook.get_notes(include_content=True)
    assert full_note.get_context("long")["content"] == "x" * 150
    assert full_note.get_context()["content"] == "x" * 100


async def test_batch_loading_keeps_order_and_skips_missing(db: Database) -> None:
    ids = []
    for title in ["a", "b", "c"]:
        source = Source(title=title, full_text=title * 3)
        await source.save()
        ids.append(source.id or "")
    wanted = [ids[2], "source:missing", ids[0].split(":", 1)[1], ids[2]]
    loaded = await Source.get_many(wanted, full_text=False)
    assert [s.title for s in loaded] == ["c", "a"] and loaded[0].full_text is None
    assert [s.full_text for s in await Source.get_many(ids)] == ["aaa", "bbb", "ccc"]
    await Source(id=ids[0], title="a").add_insight("t", "x")
    grouped = await SourceInsight.for_sources([ids[0], ids[1]])
    assert [len(grouped[i]) for i in ids[:2]] == [1, 0]
    note = Note(content="n")
    await note.save()
    assert [n.id for n in await Note.get_many([note.id or "", "note:nope"])] == [note.id]


async def test_deleting_a_source_deletes_its_insights_and_chunks(db: Database) -> None:
    source = Source(title="gone")
    await source.save()
    await source.add_insight("summary", "s")
    await replace_source_chunks(source.id or "", ["chunk"], [[1.0, 0.0]])
    assert await source.delete()
    for table in ["source_insight", "source_embedding"]:
        assert await repo_query(f"SELECT id FROM {table}") == []


async def test_database_failures_are_not_reported_as_missing(db: Database) -> None:
    notebook = Notebook(name="N")
    await notebook.save()
    await db.close()
    with pytest.raises(DatabaseOperationError):
        await Notebook.get(notebook.id or "")
    with pytest.raises(DatabaseOperationError):
        await Notebook(name="M").save()


async def test_rows_that_do_not_fit_the_model_are_database_errors(db: Database) -> None:
    await db.query("CREATE note:odd SET note_type = 'ai', title = 'x'")
    await db.query("REMOVE FIELD note_type ON note; DEFINE FIELD note_type ON note TYPE string")
    await db.query("UPDATE note:odd SET note_type = 'robot'")
    with pytest.raises(DatabaseOperationError, match="does not fit Note"):
        await Note.get("note:odd")


# --- search -----------------------------------------------------------------


async def seed_searchable() -> tuple[Source, Source, SourceInsight, Note]:
    cats = Source(title="Feline behaviour", full_text="Cats purr when they are content.")
    space = Source(title="Space travel", full_text="Rockets carry astronauts to orbit.")
    for source in (cats, space):
        await source.save()
    insight = await cats.add_insight("summary", "Purring signals a relaxed cat")
    note = Note(title="Launch notes", content="The rocket launch was delayed by weather")
    await note.save()
    return cats, space, insight, note


async def test_text_search_ranks_hits_from_every_kind(search_db: Database) -> None:
    cats, space, insight, note = await seed_searchable()
    await replace_source_chunks(space.id or "", ["Astronauts train for years"], [[1.0, 0.0]])
    hits = await text_search("cat", 10)  # stemmed: "Cats" and "cat" match
    assert {h["id"] for h in hits} == {cats.id, insight.id}
    assert all(h["matches"] and "`" in h["matches"][0] for h in hits)
    assert [h["relevance"] for h in hits] == sorted((h["relevance"] for h in hits), reverse=True)
    [chunk_hit] = await text_search("train", 10)
    assert chunk_hit["id"] == space.id and chunk_hit["title"] == "Space travel"
    assert {h["id"] for h in await text_search("launch", 10)} == {note.id}
    assert await text_search("launch", 10, note=False) == []
    assert await text_search("cat", 10, source=False) == []
    assert len(await text_search("cat", 1)) == 1
    [insight_hit] = [h for h in hits if h["id"] == insight.id]
    assert (
        insight_hit["parent_id"] == cats.id and insight_hit["title"] == "summary - Feline behaviour"
    )
    with pytest.raises(InvalidInputError):
        await text_search(" ", 5)
    with pytest.raises(InvalidInputError):
        await text_search("x", 0)
    with pytest.raises(InvalidInputError):
        await text_search("x", 5, source=False, note=False)


async def test_text_search_without_indexes_says_what_is_missing(db: Database) -> None:
    await seed_searchable()
    with pytest.raises(DatabaseOperationError, match="full-text indexes"):
        await text_search("purr", 5)


@pytest.fixture
def static_model() -> Iterator[None]:
    """The fast offline 64-dimension model, for real embeddings."""
    model_manager.configure_embedding_model(local_models.STATIC_PROVIDER, "test")
    yield
    model_manager.reset()


async def embed_searchable() -> tuple[Source, Source, SourceInsight, Note]:
    cats, space, insight, note = await seed_searchable()
    chunks = {
        cats.id or "": ["Cats purr when they are content.", "Kittens sleep most of the day."],
        space.id or "": ["Rockets carry astronauts to orbit.", "The station circles Earth."],
    }
    for source_id, texts in chunks.items():
        await replace_source_chunks(source_id, texts, await generate_embeddings(texts))
    vectors = await generate_embeddings([insight.content, note.content or ""])
    await set_embeddings({insight.id or "": vectors[0], note.id or "": vectors[1]})
    return cats, space, insight, note


async def test_vector_search_ranks_by_similarity(db: Database, static_model: None) -> None:
    cats, space, insight, note = await embed_searchable()
    hits = await vector_search("rocket launch into orbit", 10, minimum_score=-1.0)
    assert {h["id"] for h in hits} == {cats.id, space.id, insight.id, note.id}
    scores = [h["similarity"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert hits[0]["id"] in {space.id, note.id}
    [space_hit] = [h for h in hits if h["id"] == space.id]
    assert len(space_hit["matches"]) == 2 and space_hit["parent_id"] == space.id
    only_notes = await vector_search("rocket launch", 10, source=False, minimum_score=-1.0)
    assert [h["id"] for h in only_notes] == [note.id]
    assert len(await vector_search("cats", 2, minimum_score=-1.0)) == 2
    cutoff = scores[1]
    assert [
        h["id"] for h in await vector_search("rocket launch into orbit", 10, minimum_score=cutoff)
    ] == [h["id"] for h in hits[:2]]


async def test_vector_search_with_a_vector_and_without_an_index(db: Database) -> None:
    # Vectors written directly, as another application would: no index exists,
    # so the search scans the vectors of the query's size.
    source = Source(title="raw")
    await source.save()
    rows = [
        {"source": ensure_record_id(source.id or ""), "order": i, "content": c, "embedding": v}
        for i, (c, v) in enumerate([("east", [1.0, 0.0]), ("north", [0.0, 1.0])])
    ]
    await repo_insert("source_embedding", rows, return_rows=False)
    [hit] = await vector_search([1.0, 0.1], 5, minimum_score=0.5)
    assert hit["id"] == source.id and hit["matches"] == ["east"]
    assert hit["similarity"] == pytest.approx(1 / (1.01**0.5))
    with pytest.raises(InvalidInputError):
        await vector_search([], 5)
    with pytest.raises(InvalidInputError):
        await vector_search("", 5)


async def test_vector_search_rejects_a_query_of_another_dimension(
    db: Database, static_model: None
) -> None:
    await embed_searchable()
    with pytest.raises(InvalidInputError, match="dimension 3"):
        await vector_search([1.0, 0.0, 0.0], 5)
