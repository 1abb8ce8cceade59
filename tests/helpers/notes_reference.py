"""A slow reference for the records of ``fastnotebook.notes``: the links,
chunks, edges and hashes of a note built in plain Python from the core's
scan rows and chunk plan (test hooks), as the Python side built them before
the extension made the records. The tests compare every field of the
extension's records with these."""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from fastnotebook import _core
from fastnotebook.notes import LinkResolver, Note, NotesConfig, normalise_for_hash

__all__ = [
    "RefChunk",
    "RefEdge",
    "RefLink",
    "fields_of",
    "reference_chunks",
    "reference_edges",
    "reference_hash",
    "reference_links",
]


@dataclass(frozen=True)
class RefLink:
    kind: str
    target: str
    heading: str | None
    block: str | None
    display: str | None
    start: int
    end: int
    in_suggestions: bool


@dataclass(frozen=True)
class RefChunk:
    note_id: str
    id: str
    index: int
    text: str
    char_start: int
    char_end: int
    start_line: int
    end_line: int
    section_title: str | None
    section_path: tuple[str, ...]
    prev_id: str | None
    next_id: str | None
    token_count: int
    char_count: int
    embed_text: str
    wikilinks: tuple[str, ...]
    references: tuple[dict[str, str], ...]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RefEdge:
    kind: str
    source_id: str
    target_id: str
    scope: str
    note_id: str
    status: str


def fields_of(record: object, names: Sequence[str]) -> tuple[tuple[str, str, object], ...]:
    """(name, type name, value) of each field: equal only when values and
    their types are."""
    return tuple((n, type(getattr(record, n)).__name__, getattr(record, n)) for n in names)


_ATTACHMENT_EXT = frozenset(
    [
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "svg",
        "webp",
        "avif",
        "tif",
        "tiff",
        "ico",
        "heic",
        "pdf",
        "mp3",
        "mp4",
        "m4a",
        "m4v",
        "webm",
        "ogg",
        "ogv",
        "wav",
        "flac",
        "mov",
        "mkv",
        "avi",
        "3gp",
        "canvas",
        "base",
        "excalidraw",
        "zip",
        "csv",
        "json",
        "txt",
        "html",
        "htm",
        "css",
        "js",
    ]
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_KINDS = ("wikilink", "embed", "markdown", "embed")


def _is_attachment(target: str) -> bool:
    name = target.rsplit("/", 1)[-1]
    if "." not in name:
        return False
    return name.rsplit(".", 1)[1].casefold() in _ATTACHMENT_EXT


def _markdown_target(raw_target: str) -> tuple[str, str | None, str | None] | None:
    target = raw_target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if not target or target.startswith("#") or _SCHEME.match(target):
        return None
    fragment: str | None = None
    if "#" in target:
        target, fragment = target.split("#", 1)
    target = unquote(target)
    if not target.lower().endswith(".md"):
        return None
    heading = block = None
    if fragment:
        fragment = unquote(fragment)
        if fragment.startswith("^"):
            block = fragment[1:] or None
        else:
            heading = fragment
    return target, heading, block


def reference_links(body: str, config: NotesConfig) -> tuple[RefLink, ...]:
    links: list[RefLink] = []
    rows = _core._notes_link_rows(body, list(config.suggestion_headings))
    for code, start, end, target, heading, block, display, in_sugg in rows:
        if code >= 2:
            parsed = _markdown_target(target)
            if parsed is None:
                continue
            target, heading, block = parsed
        if not target or _is_attachment(target):
            continue
        links.append(RefLink(_KINDS[code], target, heading, block, display, start, end, in_sugg))
    return tuple(links)


def reference_hash(note: Note, config: NotesConfig) -> tuple[str, str]:
    """(hash, hash_fulltext) of a note."""
    mode = config.hash_mode
    digest = hashlib.sha256()
    digest.update(mode.encode())
    if mode != "body":
        fm = normalise_for_hash(note.frontmatter_text, config.normalisation)
        digest.update(b"\x00fm\x00")
        digest.update(fm.encode("utf-8", "surrogatepass"))
    if mode != "frontmatter":
        body = normalise_for_hash(note.body, config.normalisation)
        digest.update(b"\x00body\x00")
        digest.update(body.encode("utf-8", "surrogatepass"))
    full = hashlib.sha256(note.raw.encode("utf-8", "surrogatepass")).hexdigest()
    return digest.hexdigest(), full


def reference_chunks(
    note: Note,
    config: NotesConfig,
    resolve: Callable[[str, Note], str | None] | None = None,
) -> list[RefChunk]:
    body = note.body
    limits = config.limits_for(note.type)
    plan = _core._notes_chunk(body, limits, config.overlap, config.encoding)
    rows = _core._notes_plan_rows(plan)
    links = reference_links(body, config)
    link_starts = [link.start for link in links]
    resolved: dict[str, str] = {}
    ids = [f"{note.id}#c{k:02d}" for k in range(len(rows))]
    last = len(rows) - 1
    chunks: list[RefChunk] = []
    for k, row in enumerate(rows):
        start, end, ov, tokens, first_line, last_line, path, own, oversized, block = row
        lo = bisect.bisect_left(link_starts, start)
        hi = bisect.bisect_left(link_starts, end)
        wikilinks: list[str] = []
        references: list[dict[str, str]] = []
        for link in links[lo:hi]:
            target = resolved.get(link.target)
            if target is None:
                target = (resolve(link.target, note) if resolve else None) or link.target
                resolved[link.target] = target
            if target not in wikilinks:
                wikilinks.append(target)
            if not link.in_suggestions:
                references.append({"kind": link.kind, "target_id": target})
        metadata: dict[str, Any] = {"overlap_start": ov}
        if oversized:
            metadata["oversized"] = True
            metadata["block"] = block
        elif own:
            metadata["block"] = "quote"
        chunks.append(
            RefChunk(
                note_id=note.id,
                id=ids[k],
                index=k,
                text=body[start:end],
                char_start=start,
                char_end=end,
                start_line=first_line,
                end_line=last_line,
                section_title=path[-1] if path else None,
                section_path=tuple(path),
                prev_id=ids[k - 1] if k > 0 else None,
                next_id=ids[k + 1] if k < last else None,
                token_count=tokens,
                char_count=end - start,
                embed_text=body[ov:end],
                wikilinks=tuple(wikilinks),
                references=tuple(references),
                metadata=metadata,
            )
        )
    return chunks


def reference_edges(
    note: Note, chunks: Sequence[Any], resolver: LinkResolver, config: NotesConfig
) -> list[RefEdge]:
    edges: list[RefEdge] = []
    nid = note.id
    known = resolver.ids
    for chunk in chunks:
        edges.append(RefEdge("belongs_to", chunk.id, nid, "chunk", nid, "ok"))
    for k, chunk in enumerate(chunks):
        if k > 0:
            edges.append(RefEdge("prev", chunk.id, chunks[k - 1].id, "chunk", nid, "ok"))
        if k + 1 < len(chunks):
            edges.append(RefEdge("next", chunk.id, chunks[k + 1].id, "chunk", nid, "ok"))
    targets: dict[str, str] = {}
    for chunk in chunks:
        for ref in chunk.references:
            target = ref["target_id"]
            status = "ok"
            if target not in known:
                resolved = resolver.resolve(target, note)
                if resolved is None:
                    status = "unresolved"
                else:
                    target = resolved
            edges.append(RefEdge("references", chunk.id, target, "chunk", nid, status))
            targets.setdefault(target, status)
    for target, status in targets.items():
        if status == "ok":
            edges.append(RefEdge("backlink", target, nid, "note", nid, "ok"))
    if config.note_scope_references:
        for target, status in targets.items():
            edges.append(RefEdge("references", nid, target, "note", nid, status))
    return edges
