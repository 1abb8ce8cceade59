"""SurrealDB access for fastnotebook, a drop-in for ``open_notebook.database``.

By default the database is embedded (no server): SurrealDB runs in this
process and stores its files under ``FASTNOTEBOOK_DATA_DIR``; ``SURREAL_URL``
and the other ``SURREAL_*`` variables select a server as in Open Notebook
(see ``fastnotebook.app.database.settings``).

    from fastnotebook.app.database import repo_query
    rows = await repo_query("SELECT * FROM source WHERE title = $t", {"t": "x"})
"""

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
