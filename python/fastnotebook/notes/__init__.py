"""Markdown note vaults (Obsidian, Logseq, Foam, Zettelkasten folders).

Parse notes (YAML front matter, wikilinks, embeds, Markdown links), chunk
bodies at block boundaries (code blocks and tables are never split), resolve
links across the vault and build the graph of edges; every chunk's ``text`` is
``note.body[char_start:char_end]`` and the chunks tile the body, so
``body_from_chunks`` gives it back. The rules: ``docs/notes-rules.md``.
"""

from __future__ import annotations

from fastnotebook.errors import NoteParseError
from fastnotebook.notes.chunk import body_from_chunks, chunk_note
from fastnotebook.notes.config import DEFAULT_SIZES, NotesConfig
from fastnotebook.notes.graph import (
    LinkResolver,
    edges_for_note,
    edges_of_note,
    read_vault,
    vault_files,
)
from fastnotebook.notes.model import (
    SCHEMA_NAMES,
    Edge,
    Note,
    NoteChunk,
    NoteError,
    NoteLink,
    VaultParse,
    json_schema,
)
from fastnotebook.notes.parse import (
    content_hash,
    normalise_for_hash,
    parse_note,
    path_slug,
    split_frontmatter,
)

__all__ = [
    "DEFAULT_SIZES",
    "SCHEMA_NAMES",
    "Edge",
    "LinkResolver",
    "Note",
    "NoteChunk",
    "NoteError",
    "NoteLink",
    "NoteParseError",
    "NotesConfig",
    "VaultParse",
    "body_from_chunks",
    "chunk_note",
    "content_hash",
    "edges_for_note",
    "edges_of_note",
    "json_schema",
    "normalise_for_hash",
    "parse_note",
    "path_slug",
    "read_vault",
    "split_frontmatter",
    "vault_files",
]

# --- vault-store: a vault in the database (fastnotebook.notes.store, export,
# audit, search, qdrant; they need the app extra, so they are imported on
# first use) -------------------------------------------------------------------
_STORED = {
    "import_vault": "store",
    "embed_missing": "store",
    "chunk_neighbours": "store",
    "backlinks": "store",
    "linked_notes": "store",
    "unresolved_links": "store",
    "note_edges": "store",
    "export_vault": "export",
    "audit_vault": "audit",
    "search_notes": "search",
    "qdrant_export": "qdrant",
}


def __getattr__(name: str) -> object:
    module = _STORED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
