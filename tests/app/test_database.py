"""fastnotebook.app.database against the real embedded SurrealDB: settings,
record ids, the repository, migrations, vector writes, failures."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastnotebook.app.database import (
    Database,
    DatabaseSettings,
    RecordID,
    close_database,
    ensure_record_id,
    ensure_vector_indexes,
    get_database,
    migrate,
    open_database,
    parse_record_ids,
    record_id_string,
    replace_source_chunks,
    repo_create,
    repo_delete,
    repo_insert,
    repo_query,
    repo_relate,
    repo_relate_many,
    repo_update,
    repo_upsert,
    schema_version,
    set_database,
    set_embeddings,
    vector_dimension,
    with_table_prefix,
)
from fastnotebook.app.database.schema import MIGRATIONS
from fastnotebook.app.database.settings import default_data_dir
from fastnotebook.errors import (
    ConfigurationError,
    DatabaseOperationError,
    InvalidInputError,
    NotFoundError,
)

# --- settings ---------------------------------------------------------------


def test_default_settings_are_an_embedded_database_in_the_data_dir(tmp_path: Path) -> None:
    settings = DatabaseSettings.from_env({"FASTNOTEBOOK_DATA_DIR": str(tmp_path)})
    assert settings.embedded and settings.migrate_on_open
    assert not settings.full_text_search  # BM25 is opt-in: FASTNOTEBOOK_FULL_TEXT_SEARCH=1
    assert DatabaseSettings.from_env({"FASTNOTEBOOK_FULL_TEXT_SEARCH": "1"}).full_text_search
    assert settings.url == f"surrealkv://{tmp_path.resolve()}/surrealdb"
    assert settings.local_path == tmp_path.resolve() / "surrealdb"
    assert (settings.namespace, settings.database) == ("open_notebook", "open_notebook")
    assert settings.username is None


def test_default_data_dir_follows_xdg(tmp_path: Path) -> None:
    assert default_data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "fastnotebook"
    assert default_data_dir({"FASTNOTEBOOK_DATA_DIR": "~/x"}) == Path.home() / "x"


def test_server_settings_come_from_open_notebooks_variables() -> None:
    settings = DatabaseSettings.from_env(
        {
            "SURREAL_URL": "ws://127.0.0.1:8000/rpc",
            "SURREAL_USER": "root",
            "SURREAL_PASS": "secret",
            "SURREAL_NAMESPACE": "ns",
            "SURREAL_DATABASE": "db",
            "FASTNOTEBOOK_FULL_TEXT_SEARCH": "off",
        }
    )
    assert not settings.embedded and not settings.migrate_on_open
    assert (settings.username, settings.password) == ("root", "secret")
    assert (settings.namespace, settings.database) == ("ns", "db")
    assert not settings.full_text_search and "secret" not in repr(settings)
    forced = DatabaseSettings.from_env({"SURREAL_URL": "mem://", "FASTNOTEBOOK_AUTO_MIGRATE": "0"})
    assert forced.embedded and not forced.migrate_on_open


@pytest.mark.parametrize(
    "env",
    [
        {"SURREAL_URL": "postgres://x"},
        {"SURREAL_URL": "localhost:8000"},
        {"FASTNOTEBOOK_FULL_TEXT_SEARCH": "maybe"},
    ],
)
def test_unusable_settings_are_configuration_errors(env: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        DatabaseSettings.from_env(env)


# --- record ids -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "table", "key"),
    [
        ("source:abc", "source", "abc"),
        ("source:42", "source", 42),
        ("source:⟨42⟩", "source", "42"),
        ("note:⟨a b⟩", "note", "a b"),
        ("note:`x`", "note", "x"),
        ("source:note:abc", "source", "note:abc"),
        ("source:x; DELETE source", "source", "x; DELETE source"),
    ],
)
def test_record_ids_parse_as_surrealdb_writes_them(text: str, table: str, key: object) -> None:
    rid = ensure_record_id(text)
    assert (rid.table_name, rid.id) == (table, key)


@pytest.mark.parametrize("bad", ["", "abc", "source:", ":abc", "bad table:x", "x;y:z", "⟨s⟩:x"])
def test_malformed_record_ids_are_invalid_input(bad: str) -> None:
    with pytest.raises(InvalidInputError):
        ensure_record_id(bad)


@given(
    st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True),
    st.one_of(st.text(min_size=1, max_size=20), st.integers(-(2**40), 2**40)),
)
def test_record_id_strings_round_trip(table: str, key: str | int) -> None:
    rid = RecordID(table, key)
    assert ensure_record_id(str(rid)) == rid
    assert record_id_string(str(rid)) == str(rid)


def test_prefix_and_parse_helpers() -> None:
    assert with_table_prefix("abc", "source") == "source:abc"
    assert with_table_prefix("source:abc", "source") == "source:abc"
    nested = {"a": [RecordID("t", "x"), {"b": RecordID("t", 1)}], "c": 3}
    assert parse_record_ids(nested) == {"a": ["t:x", {"b": "t:1"}], "c": 3}


# --- the repository ---------------------------------------------------------


async def test_repository_round_trip(db: Database) -> None:
    [notebook] = await repo_create("notebook", {"id": "ignored", "name": "N", "description": "d"})
    assert notebook["id"].startswith("notebook:") and notebook["id"] != "notebook:ignored"
    assert notebook["created"] and notebook["updated"]
    sources = await repo_insert("source", [{"title": f"s{i}"} for i in range(3)])
    assert sorted(s["title"] for s in sources) == ["s0", "s1", "s2"]
    assert await repo_insert("source", [{"title": "quiet"}], return_rows=False) == []

    [updated] = await repo_update("notebook", notebook["id"].split(":", 1)[1], {"name": "M"})
    assert updated["name"] == "M" and updated["created"] == notebook["created"]
    assert await repo_update("notebook", "missing", {"name": "x"}) == []

    [upserted] = await repo_upsert("notebook", "notebook:fixed", {"name": "U"})
    assert upserted["id"] == "notebook:fixed"
    [again] = await repo_upsert("notebook", "fixed", {"description": "more"})
    assert (again["name"], again["description"]) == ("U", "more")

    [edge] = await repo_relate(sources[0]["id"], "reference", notebook["id"], {"note": "x"})
    assert (edge["in"], edge["out"]) == (sources[0]["id"], notebook["id"])
    await repo_relate_many("reference", [(s["id"], "notebook:fixed") for s in sources])
    linked = await repo_query("SELECT VALUE <-reference<-source FROM ONLY $nb", {"nb": "x"})
    assert linked == []  # a string is not a record id: nothing is spliced
    rows = await repo_query(
        "SELECT VALUE <-reference<-source FROM ONLY $nb", {"nb": ensure_record_id("notebook:fixed")}
    )
    assert sorted(rows) == sorted(s["id"] for s in sources)

    [deleted] = await repo_delete(notebook["id"])
    assert deleted["name"] == "M"
    assert await repo_delete(notebook["id"]) == []
    assert (
        await repo_query(
            "SELECT * FROM reference WHERE out = $nb", {"nb": RecordID("notebook", "x")}
        )
        == []
    )


async def test_insert_ignoring_duplicates(db: Database) -> None:
    await repo_insert("notebook", [{"id": RecordID("notebook", "a"), "name": "A"}])
    with pytest.raises(DatabaseOperationError, match="already exists"):
        await repo_insert("notebook", [{"id": RecordID("notebook", "a"), "name": "B"}])
    await repo_insert(
        "notebook", [{"id": RecordID("notebook", "a"), "name": "C"}], ignore_duplicates=True
    )
    assert [r["name"] for r in await repo_query("SELECT name FROM notebook")] == ["A"]


async def test_ids_and_names_never_become_surrealql(db: Database) -> None:
    await repo_create("source", {"title": "keep me"})
    for hostile in ["x; DELETE source", "x`; DELETE source; --", "⟨x⟩; DELETE source"]:
        assert await repo_update("source", hostile, {"title": "changed"}) == []
        assert await repo_delete(f"source:{hostile}") == []
        await repo_upsert("source", hostile, {"title": "new"})
    titles = sorted(r["title"] for r in await repo_query("SELECT title FROM source"))
    assert titles == ["keep me", "new", "new", "new"]
    for table in ["source; DELETE source", "source WHERE true", ""]:
        with pytest.raises(InvalidInputError):
            await repo_create(table, {"title": "x"})
    with pytest.raises(InvalidInputError):
        await repo_relate("source:a", "reference->source", "notebook:b")


async def test_failed_statements_raise_with_their_own_message(db: Database) -> None:
    with pytest.raises(DatabaseOperationError, match="Parse error"):
        await repo_query("SELEC * FROM source")
    with pytest.raises(DatabaseOperationError, match="boom"):
        await db.query_all(
            "BEGIN TRANSACTION; CREATE source SET title = 'x'; THROW 'boom'; "
            "CREATE source SET title = 'y'; COMMIT TRANSACTION;"
        )
    assert await repo_query("SELECT * FROM source") == []
    with pytest.raises(DatabaseOperationError, match="expected a option<string>"):
        await repo_create("source", {"title": 5})


async def test_multi_statement_results_and_concurrent_queries(db: Database) -> None:
    assert await db.query_all("RETURN 1; RETURN 2;") == [1, 2]
    assert await db.query("LET $x = 20; RETURN $x + $y;", {"y": 1}) == 21
    results = await asyncio.gather(*(db.query("RETURN $n * 2", {"n": n}) for n in range(50)))
    assert results == [n * 2 for n in range(50)]


async def test_a_closed_database_refuses_queries() -> None:
    database = await Database(DatabaseSettings("mem://")).open()
    await database.close()
    assert not database.is_open
    with pytest.raises(DatabaseOperationError, match="closed"):
        await database.query("RETURN 1")
    with pytest.raises(DatabaseOperationError, match="closed"):
        await database.open()
    previous = set_database(database)
    try:
        with pytest.raises(DatabaseOperationError, match="closed"):
            await repo_query("RETURN 1")
    finally:
        set_database(previous)
    with pytest.raises(DatabaseOperationError, match="not open"):
        await Database(DatabaseSettings("mem://")).query("RETURN 1")


async def test_an_unreachable_server_is_a_database_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    settings = DatabaseSettings(f"ws://127.0.0.1:{port}/rpc", username="root", password="x")
    with pytest.raises(DatabaseOperationError, match="cannot open"):
        await Database(settings).open()


async def test_embedded_database_persists_across_reopen(tmp_path: Path) -> None:
    settings = DatabaseSettings(DatabaseSettings.embedded_url(tmp_path / "data"))
    async with await open_database(settings) as first:
        assert await schema_version(first) == len(MIGRATIONS)
        await first.query("CREATE notebook:kept SET name = 'persisted'")
    assert (tmp_path / "data" / "surrealdb").is_dir()
    async with await open_database(settings) as second:
        assert await second.query("SELECT VALUE name FROM notebook:kept") == ["persisted"]
        assert await migrate(second) == len(MIGRATIONS)


@pytest.mark.skipif(sys.platform == "win32", reason="the store lock uses flock")
async def test_an_on_disk_database_is_locked_to_one_opener(tmp_path: Path) -> None:
    settings = DatabaseSettings(DatabaseSettings.embedded_url(tmp_path))
    first = await Database(settings).open()
    with pytest.raises(
        DatabaseOperationError, match=rf"in use by another process \(pid {os.getpid()}\)"
    ):
        await Database(settings).open()
    await first.close()
    async with Database(settings) as second:
        assert await second.query("RETURN 1") == 1


async def test_signing_in_is_skipped_for_embedded_databases() -> None:
    settings = DatabaseSettings("mem://", username="root", password="root")
    async with Database(settings) as database:
        assert await database.query("RETURN 1") == 1


async def test_get_database_opens_the_environments_database_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SURREAL_URL", raising=False)
    monkeypatch.setenv("FASTNOTEBOOK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FASTNOTEBOOK_FULL_TEXT_SEARCH", "0")
    previous = set_database(None)
    try:
        first, second = await asyncio.gather(get_database(), get_database())
        assert first is second and first.settings.local_path == tmp_path.resolve() / "surrealdb"
        assert await schema_version(first) == len(MIGRATIONS)
        await close_database()
        assert not first.is_open
    finally:
        set_database(previous)


async def test_a_newer_schema_is_refused(db: Database) -> None:
    await db.query("UPSERT fastnotebook_meta:schema SET version = 999")
    with pytest.raises(DatabaseOperationError, match="newer"):
        await migrate(db)


# --- vectors ----------------------------------------------------------------


async def test_replacing_a_sources_chunks(db: Database) -> None:
    [source] = await repo_create("source", {"title": "S"})
    assert await vector_dimension(db) is None
    await replace_source_chunks(source["id"], ["a", "b", "c"], [[1.0, 0.0, 0.0]] * 3)
    assert await vector_dimension(db) == 3
    written = await replace_source_chunks(source["id"], ["x", "y"], [[0, 1, 0], [0, 0, 1]])
    assert written == 2
    rows = await repo_query(
        "SELECT order, content FROM source_embedding WHERE source = $s ORDER BY order",
        {"s": ensure_record_id(source["id"])},
    )
    assert rows == [{"order": 0, "content": "x"}, {"order": 1, "content": "y"}]
    # A failing replacement leaves the previous chunks in place.
    with pytest.raises(InvalidInputError, match="dimension"):
        await replace_source_chunks(source["id"], ["z"], [[1.0, 2.0]])
    with pytest.raises(InvalidInputError, match="numbers"):
        await replace_source_chunks(source["id"], ["z"], [["one", 0, 0]])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="content"):
        await replace_source_chunks(source["id"], ["z", None], [[1, 0, 0]] * 2)  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="non-finite"):
        await replace_source_chunks(source["id"], ["z"], [[float("nan"), 0, 0]])
    assert len(await repo_query("SELECT id FROM source_embedding")) == 2
    with pytest.raises(InvalidInputError, match="2 chunks but 1"):
        await replace_source_chunks(source["id"], ["a", "b"], [[1, 0, 0]])
    with pytest.raises(NotFoundError):
        await replace_source_chunks("source:missing", ["a"], [[1, 0, 0]])
    with pytest.raises(InvalidInputError):
        await replace_source_chunks("note:x", ["a"], [[1, 0, 0]])
    await replace_source_chunks(source["id"], [], [])
    assert await repo_query("SELECT id FROM source_embedding") == []


async def test_vector_indexes_keep_one_dimension(db: Database) -> None:
    await ensure_vector_indexes(4, db)
    await ensure_vector_indexes(4, db)
    with pytest.raises(InvalidInputError, match="dimension 4, not 8"):
        await ensure_vector_indexes(8, db)
    with pytest.raises(InvalidInputError):
        await ensure_vector_indexes(0, db)
    [note] = await repo_create("note", {"content": "n"})
    await set_embeddings({note["id"]: [0.5, 0.5, 0.5, 0.5]})
    assert await repo_query(
        "SELECT VALUE embedding FROM $n", {"n": ensure_record_id(note["id"])}
    ) == [[0.5] * 4]
    with pytest.raises(InvalidInputError):
        await set_embeddings({"source:x": [1.0] * 4})


def test_the_shared_database_serves_several_event_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As Open Notebook's source chat does: each build in a fresh event loop.
    monkeypatch.delenv("SURREAL_URL", raising=False)
    monkeypatch.setenv("FASTNOTEBOOK_DATA_DIR", str(tmp_path))
    previous = set_database(None)

    async def create_and_count() -> int:
        first, second = await asyncio.gather(get_database(), get_database())
        assert first is second
        await repo_create("notebook", {"name": "x"})
        return len(await repo_query("SELECT id FROM notebook"))

    try:
        assert [asyncio.run(create_and_count()) for _ in range(3)] == [1, 2, 3]
    finally:
        asyncio.run(close_database())
        set_database(previous)


async def test_encoded_parameters_reach_the_engine_as_the_sdk_would_send_them(db: Database) -> None:
    from fastnotebook._core import encode_chunk_rows
    from fastnotebook.app.database.encoded import Encoded, encode_value

    source = RecordID("source", "enc")
    vectors = np.array([[0.1, -2.5, 1e-30], [3.0, 0.0, -0.0]], dtype=np.float32)
    wide = np.array([[0.1, 1 / 3, 2.0]])  # float64 values that float32 cannot hold
    texts = ["a", "é\U0001f600"]
    for matrix in (vectors, wide):
        rows = texts[: len(matrix)]
        data = encode_chunk_rows([encode_value(source)], [len(rows)], rows, matrix)
        sdk = [
            {"source": source, "order": i, "content": t, "embedding": v.tolist()}
            for i, (t, v) in enumerate(zip(rows, matrix.astype(np.float64), strict=True))
        ]
        sent = await db.query("RETURN $rows;", {"rows": Encoded(data), "other": [1, "x"]})
        assert sent == await db.query("RETURN $rows;", {"rows": sdk})
        assert sent == sdk
    with pytest.raises(ValueError, match="non-finite"):
        encode_chunk_rows([encode_value(source)], [1], ["a"], np.array([[np.inf]]))
    with pytest.raises(TypeError, match="float32 or float64"):
        encode_chunk_rows([encode_value(source)], [1], ["a"], np.array([[1]]))


async def test_encoded_parameters_go_through_a_websocket_server_as_cbor() -> None:
    """The same request reaches a ``ws://`` server (here a stand-in that
    answers every request with its parameters)."""
    import websockets
    from surrealdb.data.cbor import decode, encode

    from fastnotebook._core import encode_chunk_rows
    from fastnotebook.app.database.encoded import Encoded, encode_value

    received: list[dict[str, object]] = []

    async def serve(socket: websockets.ServerConnection) -> None:
        async for message in socket:
            request = decode(message)
            received.append(request)
            params = request.get("params") or [None, None]
            result = params[1] if request["method"] == "query" else None
            statement = {"status": "OK", "result": result, "time": "1ms"}
            answer = [statement] if request["method"] == "query" else None
            await socket.send(encode({"id": request["id"], "result": answer}))

    source = RecordID("source", "ws")
    matrix = np.array([[0.25, -1.0]], dtype=np.float32)
    data = encode_chunk_rows([encode_value(source)], [1], ["text"], matrix)
    async with websockets.serve(serve, "127.0.0.1", 0, subprotocols=["cbor"]) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with Database(DatabaseSettings(f"ws://127.0.0.1:{port}")) as remote:
            echoed = await remote.query("RETURN $rows;", {"rows": Encoded(data), "n": 1})
    row = {"source": source, "order": 0, "content": "text", "embedding": [0.25, -1.0]}
    assert echoed == {"rows": [row], "n": 1}
    assert received[-1]["params"] == ["RETURN $rows;", {"rows": [row], "n": 1}]
