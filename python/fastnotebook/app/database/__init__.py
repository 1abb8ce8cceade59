"""SurrealDB access for fastnotebook, a drop-in for ``open_notebook.database``.

By default the database is embedded (no server): SurrealDB runs in this
process and stores its files under ``FASTNOTEBOOK_DATA_DIR``; ``SURREAL_URL``
and the other ``SURREAL_*`` variables select a server as in Open Notebook
(see ``fastnotebook.app.database.settings``).

    from fastnotebook.app.database import repo_query
    rows = await repo_query("SELECT * FROM source WHERE title = $t", {"t": "x"})
"""

from fastnotebook._lazy import lazy_exports

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from fastnotebook.app.database.connection import (
        Database,
        close_database,
        get_database,
        open_database,
        query_isolated,
        set_database,
    )
    from fastnotebook.app.database.record_id import (
        RecordID,
        ensure_record_id,
        parse_record_ids,
        record_id_string,
        with_table_prefix,
    )
    from fastnotebook.app.database.repository import (
        repo_create,
        repo_delete,
        repo_insert,
        repo_query,
        repo_relate,
        repo_relate_many,
        repo_update,
        repo_upsert,
    )
    from fastnotebook.app.database.schema import (
        drop_vector_indexes,
        ensure_search_indexes,
        ensure_vector_indexes,
        hnsw_nearest,
        migrate,
        record_vector_dimension,
        schema_version,
        vector_dimension,
        vector_indexes_defined,
    )
    from fastnotebook.app.database.settings import DatabaseSettings, default_data_dir
    from fastnotebook.app.database.vectors import replace_source_chunks, set_embeddings

__all__ = [
    "Database",
    "DatabaseSettings",
    "RecordID",
    "close_database",
    "default_data_dir",
    "drop_vector_indexes",
    "ensure_record_id",
    "ensure_search_indexes",
    "ensure_vector_indexes",
    "get_database",
    "hnsw_nearest",
    "migrate",
    "open_database",
    "parse_record_ids",
    "query_isolated",
    "record_id_string",
    "record_vector_dimension",
    "replace_source_chunks",
    "repo_create",
    "repo_delete",
    "repo_insert",
    "repo_query",
    "repo_relate",
    "repo_relate_many",
    "repo_update",
    "repo_upsert",
    "schema_version",
    "set_database",
    "set_embeddings",
    "vector_dimension",
    "vector_indexes_defined",
    "with_table_prefix",
]

if not TYPE_CHECKING:  # checkers see the imports above, not a __getattr__
    # Imported on first use (``fastnotebook._lazy``): the connection imports the
    # SurrealDB SDK (half a second), which the settings and the holder's address
    # (``fastnotebook search`` asking ``serve``) do not need.
    _FROM = {
        "connection": (
            "Database",
            "close_database",
            "get_database",
            "open_database",
            "query_isolated",
            "set_database",
        ),
        "record_id": (
            "RecordID",
            "ensure_record_id",
            "parse_record_ids",
            "record_id_string",
            "with_table_prefix",
        ),
        "repository": (
            "repo_create",
            "repo_delete",
            "repo_insert",
            "repo_query",
            "repo_relate",
            "repo_relate_many",
            "repo_update",
            "repo_upsert",
        ),
        "schema": (
            "drop_vector_indexes",
            "ensure_search_indexes",
            "ensure_vector_indexes",
            "hnsw_nearest",
            "migrate",
            "record_vector_dimension",
            "schema_version",
            "vector_dimension",
            "vector_indexes_defined",
        ),
        "settings": (
            "DatabaseSettings",
            "default_data_dir",
        ),
        "vectors": (
            "replace_source_chunks",
            "set_embeddings",
        ),
    }
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {name: f"{__name__}.{module}" for module, names in _FROM.items() for name in names},
    )
