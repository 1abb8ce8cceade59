"""The records of a parsed vault: notes, links, chunks, edges, errors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

# NoteLink, NoteChunk and Edge come by the thousand per vault: frozen classes
# of the extension, built there (attributes, equality, hash, repr and
# pickling as frozen dataclasses of these fields).
from fastnotebook._core import Edge, NoteChunk, NoteLink

__all__ = [
    "SCHEMA_NAMES",
    "Edge",
    "LinkKind",
    "Note",
    "NoteChunk",
    "NoteError",
    "NoteLink",
    "VaultParse",
    "json_schema",
]

LinkKind = Literal["wikilink", "embed", "markdown"]
EdgeKind = Literal["belongs_to", "prev", "next", "references", "backlink"]


@dataclass(frozen=True)
class Note:
    """One Markdown file of a vault. ``raw == frontmatter_text + body``."""

    id: str
    path: str
    raw: str
    frontmatter_text: str
    body: str
    frontmatter: dict[str, Any]
    title: str
    type: str | None
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    created: str | None
    updated: str | None
    links: tuple[NoteLink, ...]
    hash: str
    hash_fulltext: str


@dataclass(frozen=True)
class NoteError:
    """A file of the vault that could not be read or parsed (reported, skipped)."""

    path: str
    message: str


@dataclass
class VaultParse:
    """A whole vault: notes sorted by path, chunks by note id, every edge,
    errors, and warnings (notes read from a file that is not UTF-8)."""

    notes: list[Note]
    chunks: dict[str, list[NoteChunk]]
    edges: list[Edge]
    errors: list[NoteError]
    warnings: list[NoteError] = field(default_factory=list)


SCHEMA_NAMES = ("chunk_point", "note_point", "edge")


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) shipped for a Qdrant payload:
    ``"chunk_point"``, ``"note_point"`` or ``"edge"``."""
    if name not in SCHEMA_NAMES:
        raise ValueError(f"unknown schema {name!r}; choose one of {', '.join(SCHEMA_NAMES)}")
    text = (
        resources.files("fastnotebook.notes")
        .joinpath(f"schemas/{name}.schema.json")
        .read_text("utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema
