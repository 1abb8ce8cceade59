"""fastnotebook's schema: versioned migrations plus two kinds of index that
are set up on demand.

The tables and fields are those Open Notebook's code reads and writes
(``notebook``, ``source``, ``source_insight``, ``source_embedding``, ``note``
and the ``reference`` / ``artifact`` relations), so the domain layer works on
an Open Notebook database as well as on fastnotebook's own.

- Migrations are applied in order, each in one transaction together with the
  version bump, so a failed migration leaves the previous version intact.
- Vector (HNSW) indexes need a fixed dimension in SurrealDB 2.3, and the
  dimension depends on the embedding model, so they are defined by
  ``ensure_vector_indexes(dimension, db)`` when a writer asks for them; the
  bulk pipeline records the dimension only (``record_vector_dimension``) and
  leaves search to the core's exact search unless told otherwise.
- Full-text (BM25) indexes cost about a millisecond for every distinct term a
  write adds (some 11 ms a chunk), so they are opt-in
  (``DatabaseSettings.full_text_search``, off by default) and defined by
  ``ensure_search_indexes``.

Every function takes the database it works on (``connection`` opens it and
calls ``migrate``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loguru import logger

from fastnotebook.errors import DatabaseOperationError, InvalidInputError

if TYPE_CHECKING:
    from fastnotebook.app.database.connection import Database

__all__ = [
    "COUNTED",
    "MIGRATIONS",
    "SEARCH_INDEXED_FIELDS",
    "TEXT_DIGEST",
    "TEXT_FIELDS",
    "VECTOR_CHANGES",
    "VECTOR_COUNTERS",
    "VECTOR_LANES",
    "VECTOR_ROWS",
    "VECTOR_TABLES",
    "VECTOR_TOKEN",
    "defines_only",
    "drop_vector_indexes",
    "ensure_search_indexes",
    "ensure_vector_indexes",
    "hnsw_nearest",
    "migrate",
    "record_vector_dimension",
    "schema_version",
    "vector_dimension",
    "vector_indexes_defined",
]

META = "fastnotebook_meta"


def _timestamps(table: str) -> str:
    # `created` keeps the first value it was given (or the time of creation);
    # `updated` is the time of the latest write.
    return f"""
DEFINE FIELD IF NOT EXISTS created ON TABLE {table} TYPE datetime
    DEFAULT time::now() VALUE $before OR $value;
DEFINE FIELD IF NOT EXISTS updated ON TABLE {table} TYPE datetime VALUE time::now();
"""


_CORE = f"""
DEFINE TABLE IF NOT EXISTS notebook SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS name ON TABLE notebook TYPE option<string>;
DEFINE FIELD IF NOT EXISTS description ON TABLE notebook TYPE option<string>;
DEFINE FIELD IF NOT EXISTS archived ON TABLE notebook TYPE option<bool> DEFAULT false;
{_timestamps("notebook")}

DEFINE TABLE IF NOT EXISTS source SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS asset ON TABLE source FLEXIBLE TYPE option<object>;
DEFINE FIELD IF NOT EXISTS title ON TABLE source TYPE option<string>;
DEFINE FIELD IF NOT EXISTS topics ON TABLE source TYPE option<array<string>>;
DEFINE FIELD IF NOT EXISTS full_text ON TABLE source TYPE option<string>;
{_timestamps("source")}

DEFINE TABLE IF NOT EXISTS source_insight SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS source ON TABLE source_insight TYPE record<source>;
DEFINE FIELD IF NOT EXISTS insight_type ON TABLE source_insight TYPE string;
DEFINE FIELD IF NOT EXISTS content ON TABLE source_insight TYPE string;
DEFINE FIELD IF NOT EXISTS embedding ON TABLE source_insight TYPE option<array<float>>;
{_timestamps("source_insight")}
DEFINE INDEX IF NOT EXISTS source_insight_by_source ON TABLE source_insight FIELDS source;

-- One row per chunk of a source's text, in reading order.
DEFINE TABLE IF NOT EXISTS source_embedding SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS source ON TABLE source_embedding TYPE record<source>;
DEFINE FIELD IF NOT EXISTS order ON TABLE source_embedding TYPE int;
DEFINE FIELD IF NOT EXISTS content ON TABLE source_embedding TYPE string;
DEFINE FIELD IF NOT EXISTS embedding ON TABLE source_embedding TYPE array<float>;
DEFINE INDEX IF NOT EXISTS source_embedding_by_source ON TABLE source_embedding FIELDS source;

DEFINE TABLE IF NOT EXISTS note SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS title ON TABLE note TYPE option<string>;
DEFINE FIELD IF NOT EXISTS note_type ON TABLE note TYPE option<string>
    ASSERT $value = NONE OR $value IN ["human", "ai"];
DEFINE FIELD IF NOT EXISTS content ON TABLE note TYPE option<string>;
DEFINE FIELD IF NOT EXISTS embedding ON TABLE note TYPE option<array<float>>;
{_timestamps("note")}

-- source -> notebook and note -> notebook memberships. Deleting either end
-- deletes the edge. A notebook's members are looked up by index: in SurrealDB
-- 2.3 that is several times faster than the graph traversal <-reference<-.
DEFINE TABLE IF NOT EXISTS reference TYPE RELATION IN source OUT notebook;
DEFINE INDEX IF NOT EXISTS reference_by_notebook ON TABLE reference FIELDS out;
DEFINE TABLE IF NOT EXISTS artifact TYPE RELATION IN note OUT notebook;
DEFINE INDEX IF NOT EXISTS artifact_by_notebook ON TABLE artifact FIELDS out;

-- A source's insights and chunks go with it.
DEFINE EVENT IF NOT EXISTS source_removed ON TABLE source WHEN $event = "DELETE" THEN {{
    DELETE source_insight WHERE source = $before.id;
    DELETE source_embedding WHERE source = $before.id;
}};
"""


def _forget_state_on_delete(table: str) -> str:
    return f"""
DEFINE EVENT IF NOT EXISTS {table}_embedding_state_removed ON TABLE {table}
    WHEN $event = "DELETE" THEN {{ DELETE type::thing("embedding_state", [$before.id]); }};
"""


# What the bulk pipeline (fastnotebook.app.pipeline) needs: a document's front
# matter, and what each record was last embedded from, so that unchanged
# records are skipped. A state row's id is `embedding_state:[<record id>]`;
# it is written in the same transaction as the vectors it describes.
_EMBEDDING_STATE = f"""
DEFINE FIELD IF NOT EXISTS metadata ON TABLE source FLEXIBLE TYPE option<object>;

DEFINE TABLE IF NOT EXISTS embedding_state SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS record ON TABLE embedding_state
    TYPE record<source | source_insight | note>;
DEFINE FIELD IF NOT EXISTS kind ON TABLE embedding_state TYPE string;
DEFINE FIELD IF NOT EXISTS content_hash ON TABLE embedding_state TYPE string;
DEFINE FIELD IF NOT EXISTS model ON TABLE embedding_state TYPE string;
DEFINE FIELD IF NOT EXISTS chunking ON TABLE embedding_state TYPE string;
DEFINE FIELD IF NOT EXISTS epoch ON TABLE embedding_state TYPE int;
DEFINE FIELD IF NOT EXISTS chunks ON TABLE embedding_state TYPE int;
DEFINE FIELD IF NOT EXISTS embedded ON TABLE embedding_state TYPE datetime VALUE time::now();
DEFINE INDEX IF NOT EXISTS embedding_state_by_kind ON TABLE embedding_state FIELDS kind;
{_forget_state_on_delete("source")}
{_forget_state_on_delete("source_insight")}
{_forget_state_on_delete("note")}
"""

# Chunks are written in bulk, and their writers (the pipeline's writer and
# `replace_source_chunks`) send a record id, an int, a string and floats by
# construction. Typed fields on a SCHEMAFULL table made the engine check every
# number of every vector on its own (`embedding[*]`): 5 times the cost of
# writing the row (docs/SCALING.md). The rows and the index on `source` stay;
# Open Notebook's queries read the same fields.
_UNTYPED_CHUNKS = """
DEFINE TABLE OVERWRITE source_embedding SCHEMALESS;
REMOVE FIELD IF EXISTS embedding[*] ON TABLE source_embedding;
REMOVE FIELD IF EXISTS embedding ON TABLE source_embedding;
REMOVE FIELD IF EXISTS content ON TABLE source_embedding;
REMOVE FIELD IF EXISTS order ON TABLE source_embedding;
REMOVE FIELD IF EXISTS source ON TABLE source_embedding;
"""

# Tables whose `embedding` field holds model vectors.
VECTOR_TABLES = ("source_embedding", "source_insight", "note")

# A change counter of the stored vectors, for the exact-search cache
# (``fastnotebook.app.database.vector_cache``): every write that adds,
# removes or changes a vector gives it a new random token, in the writing
# transaction, whichever code writes (events, not the writers, keep it), and
# keeps `rows`, the number of stored vectors, exact.
VECTOR_CHANGES = f"{META}:vector_changes"

# The bulk writer's own counters, one per transaction it keeps in flight at
# once: two transactions that updated one row would conflict, so each
# updates its lane's (token and rows as above), and the store's vectors are
# as of all three tokens (``VECTOR_COUNTERS``, in this order). Events and
# every other writer keep using ``VECTOR_CHANGES``.
VECTOR_LANES = (f"{META}:vector_lane_1", f"{META}:vector_lane_2")
VECTOR_COUNTERS = (VECTOR_CHANGES, *VECTOR_LANES)

# The store's vector token, the counters' tokens joined with "|" (empty for a
# lane the store lacks; NONE without the main counter), and the number of
# stored vectors: SurrealQL expressions, so that every reader and the writer
# get the same strings.
VECTOR_TOKEN = "(IF {main}.token = NONE THEN NONE ELSE array::join([{parts}], '|') END)".format(
    main=VECTOR_CHANGES,
    parts=", ".join(f"<string> ({counter}.token ?? '')" for counter in VECTOR_COUNTERS),
)
VECTOR_ROWS = "math::sum([{}])".format(
    ", ".join(f"({counter}.rows ?? 0)" for counter in VECTOR_COUNTERS)
)

# A writer that updates the counter itself, once for its whole transaction,
# sets this parameter: the per-row events then stand aside (they were a
# quarter of the bulk writer's time). Every other writer is still counted.
COUNTED = "vector_changes_counted"


def _vectors_changed(
    table: str, define: str = "IF NOT EXISTS", unless: str = "", first: str = ""
) -> str:
    # UPDATE, not UPSERT: the migration creates the counter; a database
    # without one gets none from a write.
    return f"""
DEFINE EVENT {define} {table}_vectors_changed ON TABLE {table}
    WHEN {first}$before.embedding != $after.embedding{unless} THEN {{
        UPDATE {VECTOR_CHANGES} SET changes += 1, token = rand::uuid(),
            rows += (IF $after.embedding != NONE THEN 1 ELSE 0 END)
                - (IF $before.embedding != NONE THEN 1 ELSE 0 END)
        RETURN NONE;
    }};
"""


def _stored_vectors(table: str) -> str:
    return f"((SELECT count() FROM {table} WHERE embedding != NONE GROUP ALL)[0].count ?? 0)"


_VECTOR_CHANGES = "\n".join(_vectors_changed(table) for table in VECTOR_TABLES) + (
    f"UPSERT {VECTOR_CHANGES} SET changes = 0, token = rand::uuid(), rows = "
    + " + ".join(_stored_vectors(table) for table in VECTOR_TABLES)
    + " RETURN NONE;"
)


def _forget_staging_on_delete(table: str) -> str:
    return f"""
DEFINE EVENT IF NOT EXISTS {table}_embedding_staging_removed ON TABLE {table}
    WHEN $event = "DELETE" THEN {{ DELETE embedding_staging WHERE record = $before.id; }};
"""


# The finished model batches of a large record whose embedding is still in
# progress (``fastnotebook.app.pipeline.staging``): one row per batch, its
# vectors flattened, keyed by the record and what its vectors depend on. They
# are moved into the record's own rows, and deleted, by the transaction that
# writes the whole record; search never reads them.
_EMBEDDING_STAGING = f"""
DEFINE TABLE IF NOT EXISTS embedding_staging SCHEMALESS;
DEFINE INDEX IF NOT EXISTS embedding_staging_by_record ON TABLE embedding_staging FIELDS record;
{_forget_staging_on_delete("source")}
{_forget_staging_on_delete("source_insight")}
{_forget_staging_on_delete("note")}
"""

_WRITERS_COUNT_THEMSELVES = "\n".join(
    _vectors_changed(table, "OVERWRITE", f" AND !${COUNTED}") for table in VECTOR_TABLES
)

# The same events, the writer's parameter tested first: the engine stops at
# it, where comparing the two vectors cost a quarter of the bulk writer's
# time (docs/performance.md, "The write path").
_COUNTED_FIRST = "\n".join(
    _vectors_changed(table, "OVERWRITE", first=f"!${COUNTED} AND ") for table in VECTOR_TABLES
)

# What planning an embed run needs of each record's text
# (``fastnotebook.app.pipeline.state.plan``): its SHA-256, its size in bytes
# and whether it holds more than whitespace. Events keep one row per record,
# `text_digest:[<record id>]`, in the transaction that writes the text,
# whoever writes it; the migration computes the rows of the records that
# exist. A plan then reads these small rows instead of every text (a
# record is stored whole, so even `SELECT id` reads its text).
TEXT_DIGEST = "text_digest"
# The field that holds each embedded table's text.
TEXT_FIELDS = {"source": "full_text", "source_insight": "content", "note": "content"}


def _digest(table: str, field: str, record: str) -> list[tuple[str, str]]:
    """The digest row's fields of ``record`` (``$after.``, or ``""`` in a
    SELECT over ``table``) as (name, expression) pairs."""
    text = f"({record}{field} ?? '')"
    return [
        ("record", f"{record}id"),
        ("kind", f"'{table}'"),
        ("hash", f"crypto::sha256({text})"),
        ("size", f"bytes::len(<bytes> {text})"),
        ("has_text", f"string::trim({text}) != ''"),
    ]


def _keep_digest(table: str, field: str) -> str:
    content = ", ".join(f"{name}: {value}" for name, value in _digest(table, field, "$after."))
    selected = ", ".join(f"{value} AS {name}" for name, value in _digest(table, field, ""))
    return f"""
DEFINE EVENT IF NOT EXISTS {table}_text_digest ON TABLE {table}
    WHEN $event != "UPDATE" OR $before.{field} != $after.{field} THEN {{
        IF $event = "DELETE" {{
            DELETE type::thing("{TEXT_DIGEST}", [$before.id]);
        }} ELSE {{
            UPSERT type::thing("{TEXT_DIGEST}", [$after.id]) CONTENT {{ {content} }};
        }};
    }};
INSERT INTO {TEXT_DIGEST}
    (SELECT type::thing("{TEXT_DIGEST}", [id]) AS id, {selected} FROM {table}) RETURN NONE;
"""


_TEXT_DIGESTS = f"""
DEFINE TABLE IF NOT EXISTS {TEXT_DIGEST} SCHEMALESS;
DEFINE INDEX IF NOT EXISTS {TEXT_DIGEST}_by_kind ON TABLE {TEXT_DIGEST} FIELDS kind;
""" + "".join(_keep_digest(table, field) for table, field in TEXT_FIELDS.items())

_VECTOR_LANES = "\n".join(
    f"UPSERT {lane} SET changes = 0, token = rand::uuid(), rows = 0 RETURN NONE;"
    for lane in VECTOR_LANES
)

# Migration n (1-based) is MIGRATIONS[n - 1]. Append only.
MIGRATIONS: tuple[str, ...] = (
    _CORE,
    _EMBEDDING_STATE,
    _UNTYPED_CHUNKS,
    _VECTOR_CHANGES,
    _EMBEDDING_STAGING,
    _WRITERS_COUNT_THEMSELVES,
    _COUNTED_FIRST,
    _TEXT_DIGESTS,
    _VECTOR_LANES,
)


# (table, field) pairs that text_search looks in.
SEARCH_INDEXED_FIELDS = (
    ("source", "title"),
    ("source", "full_text"),
    ("source_embedding", "content"),
    ("source_insight", "content"),
    ("note", "title"),
    ("note", "content"),
)
ANALYZER = "fastnotebook_text"


async def schema_version(db: Database) -> int:
    """The number of migrations applied to the database (0 for a new one)."""
    version = await db.query(f"RETURN (SELECT VALUE version FROM ONLY {META}:schema) ?? 0;")
    return int(version or 0)


async def migrate(db: Database) -> int:
    """Apply the migrations the database lacks, then the full-text indexes if
    the settings ask for them. Returns the schema version."""
    current = await schema_version(db)
    if current > len(MIGRATIONS):
        raise DatabaseOperationError(
            f"the database schema is version {current}, newer than this fastnotebook "
            f"({len(MIGRATIONS)}): upgrade fastnotebook"
        )
    for version in range(current + 1, len(MIGRATIONS) + 1):
        logger.info("Applying database migration {}", version)
        await db.query_all(
            f"BEGIN TRANSACTION;\n{MIGRATIONS[version - 1]}\n"
            f"UPSERT {META}:schema SET version = $version RETURN NONE;\nCOMMIT TRANSACTION;",
            {"version": version},
        )
    if db.settings.full_text_search:
        await ensure_search_indexes(db)
    return len(MIGRATIONS)


async def defines_only(
    db: Database, table: str, indexes: set[str], events: set[str], fields: bool = True
) -> bool:
    """Whether ``table`` has no index or event but those named, no field
    unless ``fields``, and no table or live query built on it: what
    transactions in flight together may need of a table they write, each
    its own rows (a full-text or vector index, or an event of someone
    else's, could make them conflict). False if the table cannot be read."""
    try:
        info = await db.query(f"INFO FOR TABLE {table};")
    except DatabaseOperationError:
        return False
    info = info if isinstance(info, dict) else {}
    return (
        set(info.get("indexes") or {}) <= indexes
        and set(info.get("events") or {}) <= events
        and (fields or not info.get("fields"))
        and not (info.get("tables") or info.get("lives"))
    )


async def ensure_search_indexes(db: Database) -> None:
    """Define the analyzer and BM25 indexes ``text_search`` uses (idempotent)."""
    statements = [
        f"DEFINE ANALYZER IF NOT EXISTS {ANALYZER} TOKENIZERS blank, class, camel, punct "
        "FILTERS lowercase, ascii, snowball(english);"
    ]
    statements += [
        f"DEFINE INDEX IF NOT EXISTS {table}_{field}_search ON TABLE {table} FIELDS {field} "
        f"SEARCH ANALYZER {ANALYZER} BM25 HIGHLIGHTS;"
        for table, field in SEARCH_INDEXED_FIELDS
    ]
    await db.query_all("\n".join(statements))


async def vector_dimension(db: Database) -> int | None:
    """The dimension of the stored vectors (recorded with or without
    indexes), or None before any are written."""
    dimension = await db.query(f"RETURN (SELECT VALUE dimension FROM ONLY {META}:vectors);")
    return None if dimension is None else int(dimension)


async def vector_indexes_defined(db: Database) -> bool:
    """Whether the HNSW indexes are defined (a dimension recorded before
    ``indexed`` existed came with its indexes)."""
    row = await db.query(f"SELECT dimension, indexed FROM ONLY {META}:vectors;")
    return (
        isinstance(row, dict)
        and row.get("dimension") is not None
        and row.get("indexed") is not False
    )


def _check_dimension(dimension: int, existing: int | None) -> None:
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
        raise InvalidInputError(f"invalid embedding dimension {dimension!r}")
    if existing is not None and existing != dimension:
        raise InvalidInputError(
            f"the stored vectors have dimension {existing}, not {dimension}: "
            "embeddings of different models cannot be mixed"
        )


async def record_vector_dimension(dimension: int, db: Database) -> None:
    """Record the dimension of the vectors about to be written, without
    defining indexes (``ensure_vector_indexes`` may follow at any time).
    ``InvalidInputError`` if another dimension is recorded."""
    existing = await vector_dimension(db)
    _check_dimension(dimension, existing)
    if existing is None:
        await db.query(
            f"UPSERT {META}:vectors SET dimension = $dimension, indexed = false RETURN NONE;",
            {"dimension": dimension},
        )


def hnsw_nearest(k: int, query: str = "$query") -> str:
    """The condition that asks an HNSW index for the ``k`` nearest vectors
    of ``embedding`` to ``query``.

    The search effort (ef) is kept small on purpose: with the embedded
    engine (surrealdb 2.0.0), a larger ef finds *fewer* of the exact
    nearest neighbours, whether or not the extra candidates are re-ranked
    (recall@10 on MiniLM vectors of real documents, 6-8 index builds:
    ef 16 0.96-1.00, ef 40 0.94-0.99, ef 100 0.89-0.98; docs/SCALING.md).
    """
    return f"embedding <|{k},{max(16, k)}|> {query}"


async def ensure_vector_indexes(dimension: int, db: Database) -> None:
    """Define HNSW (cosine) indexes of ``dimension`` on every vector field, once.

    Building them costs about as much after a load as during it (each vector
    joins the graph either way), about 10 ms a vector at a few thousand on
    the embedded engine, many times the write itself: docs/SCALING.md.

    Raises ``InvalidInputError`` if the stored vectors have another
    dimension: vectors of two models cannot share an index (re-embed
    everything instead).
    """
    existing = await vector_dimension(db)
    _check_dimension(dimension, existing)
    if existing == dimension and await vector_indexes_defined(db):
        return
    indexes = "\n".join(
        f"DEFINE INDEX IF NOT EXISTS {table}_embedding_hnsw ON TABLE {table} FIELDS embedding "
        f"HNSW DIMENSION {dimension} DIST COSINE;"
        for table in VECTOR_TABLES
    )
    await db.query_all(
        f"BEGIN TRANSACTION;\n{indexes}\n"
        f"UPSERT {META}:vectors SET dimension = $dimension, indexed = true RETURN NONE;\n"
        "COMMIT TRANSACTION;",
        {"dimension": dimension},
    )
    logger.info("Defined {}-dimension vector indexes", dimension)


async def drop_vector_indexes(db: Database) -> None:
    """Remove the vector indexes (and their recorded dimension), so that
    vectors of a model with another dimension can be indexed: re-embed every
    record, then ``ensure_vector_indexes`` with the new dimension. Until then
    ``vector_search`` scans the vectors of the query's dimension."""
    removals = "\n".join(
        f"REMOVE INDEX IF EXISTS {table}_embedding_hnsw ON TABLE {table};"
        for table in VECTOR_TABLES
    )
    await db.query_all(
        f"BEGIN TRANSACTION;\n{removals}\nDELETE {META}:vectors RETURN NONE;\nCOMMIT TRANSACTION;"
    )
    logger.info("Removed the vector indexes")
