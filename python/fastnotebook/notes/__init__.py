"""Markdown note vaults (Obsidian, Logseq, Foam, Zettelkasten folders).

Parse notes (YAML front matter, wikilinks, embeds, Markdown links), chunk
bodies at block boundaries (code blocks and tables are never split), resolve
links across the vault and build the graph of edges; every chunk's ``text`` is
``note.body[char_start:char_end]`` and the chunks tile the body, so
``body_from_chunks`` gives it back. The rules: ``docs/notes-rules.md``.

A vault kept in the database (import, export, audit, search, the Qdrant
export) is the application's: ``fastnotebook.app.vault``.
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
