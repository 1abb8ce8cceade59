"""Finding and reading the files ``fastnotebook ingest`` turns into sources.

A file is taken when the chunker knows its extension (``.md``, ``.html``,
``.txt``, source code, ...); the rest are counted and skipped. A symlink
loop, a broken symlink and a special file (FIFO, socket, device) are skipped
with the reason, never opened; a folder that cannot be listed is a failure
named with the reason, and the other paths are still taken. A file's
content then decides: a binary file is skipped with the reason, text is
decoded (UTF-8, else the encoding given or detected, with a warning) and
NUL characters removed (``fastnotebook.textcheck``: the database stores
Unicode text, a lone surrogate cannot be sent to it and a NUL cannot be read
back from it).
YAML front matter at the top of a
Markdown file becomes the source's metadata and is kept out of its text, so
it is neither embedded nor shown as content.
"""

from __future__ import annotations

import html
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import yaml

from fastnotebook.chunking import ContentType, detect_content_type_from_extension
from fastnotebook.textcheck import read_text_file, special_kind

__all__ = ["Discovery", "Document", "discover", "read_document", "split_front_matter"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_MARKDOWN_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.S | re.I)
_HTML_H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.S | re.I)
_TAGS = re.compile(r"<[^>]+>")


@dataclass
class Discovery:
    """The supported files under the given paths, in a stable order, and what was left out."""

    files: list[Path] = field(default_factory=list)
    unsupported: int = 0
    missing: list[str] = field(default_factory=list)
    #: Paths that are not files to read (symlink loops, broken links, FIFOs): (path, reason).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: Folders that could not be listed: (path, reason).
    failures: list[tuple[str, str]] = field(default_factory=list)


def _walk(folder: Path, failures: list[tuple[str, str]]) -> Iterator[Path]:
    """Files under ``folder``, sorted, without hidden files and folders (.git
    and the like); folders that cannot be listed go to ``failures``."""

    def unlisted(error: OSError) -> None:
        failures.append((str(error.filename), f"cannot list the folder: {error.strerror}"))

    for root, dirs, files in os.walk(folder, onerror=unlisted):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name


def discover(paths: Iterable[str | Path]) -> Discovery:
    """Expand files and folders (recursively) into the files to ingest, each once."""
    found = Discovery()
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            candidates: Iterable[Path] = _walk(path, found.failures)
        elif os.path.lexists(path):  # a file, or a link that leads nowhere
            candidates = [path]
        else:
            found.missing.append(str(raw))
            continue
        for candidate in candidates:
            resolved, reason = _regular_file(candidate)
            if resolved is None:
                if detect_content_type_from_extension(candidate) is None:
                    found.unsupported += 1
                else:
                    found.skipped.append((str(candidate.absolute()), reason))
                continue
            if resolved in seen:
                continue
            seen.add(resolved)
            if detect_content_type_from_extension(resolved) is None:
                found.unsupported += 1
            else:
                found.files.append(resolved)
    return found


def _regular_file(path: Path) -> tuple[Path | None, str]:
    """(the resolved path, "") of a regular file, or (None, why it is not one)."""
    try:
        resolved = path.resolve(strict=True)
        mode = resolved.stat().st_mode
    except RuntimeError:  # Python 3.11 reports a symlink loop so
        return None, "a symlink loop"
    except OSError as e:
        if path.is_symlink():
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return None, f"a broken symlink (to {target}: {e.strerror or e})"
        return None, f"cannot be opened: {e.strerror or e}"
    if not stat.S_ISREG(mode):
        return None, f"not a regular file: {special_kind(mode)}"
    return resolved, ""


def _plain(value: Any) -> Any:
    """Front matter values as JSON-like data the database stores as given."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def split_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """(metadata, body) when ``text`` opens with a YAML mapping between ``---``
    lines; otherwise (None, text): a leading ``---`` may be a thematic break."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None, text
    if not isinstance(data, dict):
        return None, text
    return _plain(data), text[match.end() :]


def _clean(fragment: str) -> str:
    return " ".join(html.unescape(_TAGS.sub(" ", fragment)).split())


def _title(path: Path, kind: ContentType, text: str, metadata: dict[str, Any] | None) -> str:
    """The front matter's title, else the document's own (Markdown ``#``,
    HTML ``<title>`` or ``<h1>``), else the file name without its extension."""
    if metadata and isinstance(metadata.get("title"), str) and metadata["title"].strip():
        return str(metadata["title"]).strip()
    head = text[:20000]
    if kind is ContentType.MARKDOWN and (match := _MARKDOWN_H1.search(head)):
        return match.group(1).strip()
    if kind is ContentType.HTML:
        for pattern in (_HTML_TITLE, _HTML_H1):
            match = pattern.search(head)
            if match and _clean(match.group(1)):
                return _clean(match.group(1))
    return path.stem


def _topics(metadata: dict[str, Any] | None) -> list[str]:
    raw = (metadata or {}).get("topics", (metadata or {}).get("tags"))
    if isinstance(raw, str):
        raw = [t for t in re.split(r"[,\s]+", raw) if t]
    return [str(t) for t in raw] if isinstance(raw, list) else []


@dataclass(frozen=True)
class Document:
    """One file as a source: its text without front matter, and what describes it."""

    path: Path
    title: str
    text: str
    metadata: dict[str, Any] | None
    topics: list[str]
    size: int  # bytes read
    mtime_ns: int = 0  # the file's modification time when read
    removed_nul: int = 0  # NUL characters removed from the file's text
    #: Set when the file is not UTF-8: the encoding it was decoded with, and how chosen.
    warning: str | None = None


def read_document(path: Path, encoding: str | None = None) -> Document:
    """Read and decode one file, splitting off Markdown front matter.
    ``textcheck.BinaryFileError`` (a ``ValueError``) if it is not text;
    ``encoding`` is used for a file that is not UTF-8 (else it is detected)."""
    mtime_ns = path.stat().st_mtime_ns
    read = read_text_file(path, encoding)
    text = read.text
    kind = detect_content_type_from_extension(path) or ContentType.PLAIN
    metadata = None
    if kind is ContentType.MARKDOWN:
        metadata, text = split_front_matter(text)
    return Document(
        path=path,
        title=_title(path, kind, text, metadata),
        text=text,
        metadata=metadata,
        topics=_topics(metadata),
        size=read.size,
        mtime_ns=mtime_ns,
        removed_nul=read.removed_nul,
        warning=read.warning,
    )
