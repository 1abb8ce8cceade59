"""A note vault in the embedded SurrealDB: import (``store``), export,
audit, search and the Qdrant export (``qdrant``).

Parsing, chunking and the graph of a vault are the library's
(``fastnotebook.notes``); this package keeps them in the database. Its
functions take the current database (``set_database``) or a ``db=`` argument.
"""

from __future__ import annotations

from fastnotebook.app.vault.audit import audit_vault
from fastnotebook.app.vault.export import export_vault
from fastnotebook.app.vault.qdrant import qdrant_export
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

__all__ = [
    "audit_vault",
    "backlinks",
    "chunk_neighbours",
    "embed_missing",
    "export_vault",
    "import_vault",
    "linked_notes",
    "note_edges",
    "qdrant_export",
    "search_notes",
    "unresolved_links",
]
