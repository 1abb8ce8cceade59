"""A whole vault: reading, link resolution, edges."""

from __future__ import annotations

import gc
import hashlib
import os
import posixpath
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from fastnotebook import _core
from fastnotebook.errors import NoteParseError
from fastnotebook.notes.chunk import chunk_note
from fastnotebook.notes.config import NotesConfig
from fastnotebook.notes.model import Edge, Note, NoteChunk, NoteError, VaultParse
from fastnotebook.notes.parse import parse_note, parse_note_file

__all__ = ["LinkResolver", "edges_for_note", "edges_of_note", "read_vault", "vault_files"]

_DEFAULT = NotesConfig()


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip().casefold()


def _strip_md(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


class LinkResolver:
    """Resolves link targets to note ids as Obsidian does, case-insensitively.

    In order: the path relative to the linking note (Markdown links), the
    vault path (with or without ``.md``), the file name, the note id, an
    alias, the title, and a path suffix (``folder/Note``). Where several notes
    match one rule the shortest path wins (then the first in path order).
    """

    def __init__(self, notes: Iterable[Note]) -> None:
        ordered = sorted(notes, key=lambda n: (len(n.path), n.path))
        self._path: dict[str, str] = {}
        self._name: dict[str, str] = {}
        self._id: dict[str, str] = {}
        self._alias: dict[str, str] = {}
        self._title: dict[str, str] = {}
        self._suffix: dict[str, str] = {}
        self._cache: dict[tuple[str, str], str | None] = {}
        #: Every note id (a reference to one of these is resolved).
        self.ids: frozenset[str] = frozenset(note.id for note in ordered)
        for note in ordered:
            stem_path = _key(_strip_md(note.path))
            self._path.setdefault(stem_path, note.id)
            name = stem_path.rsplit("/", 1)[-1]
            self._name.setdefault(name, note.id)
            self._id.setdefault(_key(note.id), note.id)
            for alias in note.aliases:
                self._alias.setdefault(_key(alias), note.id)
            self._title.setdefault(_key(note.title), note.id)
            parts = stem_path.split("/")
            for k in range(1, len(parts) - 1):
                self._suffix.setdefault("/".join(parts[k:]), note.id)

    def resolve(self, target: str, source: Note | None = None) -> str | None:
        """The id of the note ``target`` names, ``None`` when there is none."""
        raw = target.replace("\\", "/").strip()
        base = posixpath.dirname(source.path) if source is not None and "/" in raw else ""
        key = (raw, base)
        if key in self._cache:
            return self._cache[key]
        found = self._resolve(raw, base)
        self._cache[key] = found
        return found

    def _resolve(self, raw: str, base: str) -> str | None:
        if not raw:
            return None
        if base or raw.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(base, raw))
            hit = self._path.get(_key(_strip_md(joined)))
            if hit is not None:
                return hit
        key = _key(_strip_md(raw.lstrip("/")))
        for table in (self._path, self._name, self._id, self._alias, self._title, self._suffix):
            hit = table.get(key)
            if hit is not None:
                return hit
        full = _key(raw)
        if full != key:
            for table in (self._id, self._alias, self._title):
                hit = table.get(full)
                if hit is not None:
                    return hit
        return None


def edges_for_note(
    note: Note,
    chunks: Sequence[NoteChunk],
    resolver: LinkResolver,
    config: NotesConfig = _DEFAULT,
) -> list[Edge]:
    """The edges one note owns: belongs_to, prev/next, chunk references (one
    per link outside suggestions, from the chunks' ``references``), backlinks
    (one per distinct resolved target), and note-scope references when
    configured. ``chunks`` come from ``chunk_note(note, resolve=resolver.resolve)``;
    a reference still naming a raw target is resolved here."""
    return _core._notes_edges(
        note.id,
        chunks,
        resolver.ids,
        lambda target: resolver.resolve(target, note),
        config.note_scope_references,
    )


def vault_files(root: str | os.PathLike[str]) -> list[str]:
    """The vault-relative paths (``/`` separators, sorted) of every ``*.md``
    file under ``root``, dot-folders (``.obsidian``, ``.git``, ``.trash``) skipped."""
    base = Path(root)
    if not base.is_dir():
        raise NotADirectoryError(f"vault folder not found: {root}")
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel_dir = Path(dirpath).relative_to(base).as_posix()
        for name in filenames:
            if name.startswith(".") or not name.lower().endswith(".md"):
                continue
            found.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    return sorted(found)


def read_vault(
    root: str | os.PathLike[str], config: NotesConfig = _DEFAULT, encoding: str | None = None
) -> VaultParse:
    """Parse, chunk and link every note of a vault folder.

    A file that is not UTF-8 is decoded by ``ingest``'s rule
    (``fastnotebook.textcheck.text_file``: ``encoding``, else the one
    detected) and named in ``warnings``. A file that cannot be read (a
    symlink loop, a FIFO), is not text, or whose front matter is malformed
    becomes a ``NoteError`` (the others are unaffected); so does a second
    note claiming a front matter ``id`` already taken. Notes are sorted by path.
    """
    # The records of a vault hold no reference cycles: the cyclic garbage
    # collector, which would otherwise scan the growing result again and
    # again while it is built, is paused (and restored as it was).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read_vault(Path(root), config, encoding)
    finally:
        if collecting:
            gc.enable()


def _read_vault(base: Path, config: NotesConfig, encoding: str | None) -> VaultParse:
    from fastnotebook.textcheck import BinaryFileError, special_kind, text_file

    notes: list[Note] = []
    errors: list[NoteError] = []
    warnings: list[NoteError] = []
    claimed: dict[str, str] = {}
    for rel in vault_files(base):
        try:
            mode = (base / rel).stat().st_mode
            if not stat.S_ISREG(mode):
                # Never opened: reading a FIFO waits forever.
                errors.append(NoteError(rel, f"not a regular file: {special_kind(mode)}"))
                continue
            data = (base / rel).read_bytes()
        except OSError as exc:
            errors.append(NoteError(rel, f"cannot read the file: {exc.strerror or exc}"))
            continue
        try:
            note = parse_note_file(rel, data, config)
            if note is None:
                read = text_file(data, encoding)
                note = parse_note(rel, read.text, config)
                warnings.append(NoteError(rel, read.warning or "not UTF-8"))
        except NoteParseError as exc:
            errors.append(NoteError(rel, exc.message))
            continue
        except BinaryFileError as exc:
            errors.append(NoteError(rel, str(exc)))
            continue
        notes.append(note)
    # Ids: explicit front matter ids first, then slugs; a slug that collides
    # gets a suffix from its path's hash, a duplicate explicit id is an error.
    unique: list[Note] = []
    explicit = [n for n in notes if _has_explicit_id(n)]
    for note in explicit:
        key = note.id.casefold()
        if key in claimed:
            errors.append(
                NoteError(note.path, f"duplicate note id {note.id!r} (also {claimed[key]})")
            )
            continue
        claimed[key] = note.path
        unique.append(note)
    for note in notes:
        if _has_explicit_id(note):
            continue
        key = note.id.casefold()
        if key in claimed:
            digest = hashlib.sha1(note.path.encode()).hexdigest()[:8]
            note = _with_id(note, f"{note.id}-{digest}")
            key = note.id.casefold()
        claimed[key] = note.path
        unique.append(note)
    unique.sort(key=lambda n: n.path)
    resolver = LinkResolver(unique)
    chunks: dict[str, list[NoteChunk]] = {}
    edges: list[Edge] = []
    for note in unique:
        note_chunks = chunk_note(note, config, resolve=resolver.resolve)
        chunks[note.id] = note_chunks
        edges.extend(edges_for_note(note, note_chunks, resolver, config))
    errors.sort(key=lambda e: e.path)
    return VaultParse(
        notes=unique,
        chunks=chunks,
        edges=edges,
        errors=errors,
        warnings=sorted(warnings, key=lambda e: e.path),
    )


def _has_explicit_id(note: Note) -> bool:
    value = note.frontmatter.get("id")
    return value is not None and not isinstance(value, dict | list) and bool(str(value).strip())


def _with_id(note: Note, new_id: str) -> Note:
    from dataclasses import replace

    return replace(note, id=new_id)


def edges_of_note(vault: VaultParse, note_id: str) -> list[Edge]:
    """The edges owned by one note (``edge.note_id == note_id``)."""
    index = vault.__dict__.get("_edges_by_note")
    if index is None or index[0] is not vault.edges or index[1] != len(vault.edges):
        by_note: dict[str, list[Edge]] = {}
        for edge in vault.edges:
            by_note.setdefault(edge.note_id, []).append(edge)
        index = (vault.edges, len(vault.edges), by_note)
        vault.__dict__["_edges_by_note"] = index
    return list(index[2].get(note_id, []))
