"""Parsing one note: front matter, metadata, links, hashes."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import yaml

from fastnotebook import _core
from fastnotebook.errors import NoteParseError
from fastnotebook.notes.config import NotesConfig
from fastnotebook.notes.model import Note

__all__ = [
    "content_hash",
    "normalise_for_hash",
    "parse_note",
    "path_slug",
    "split_frontmatter",
]

_DEFAULT = NotesConfig()

#: Where parse_note keeps the chunk plan it computed (not a field: equality,
#: repr and dataclasses.replace ignore it; chunk_note recomputes without it).
PLAN_ATTRIBUTE = "_chunk_plan"

# The C loader when PyYAML was built with libyaml.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def split_frontmatter(raw: str) -> tuple[str, str]:
    """``(frontmatter_text, body)`` with ``frontmatter_text + body == raw``.

    Front matter is a ``---`` line at the very top (after an optional byte
    order mark) up to the next ``---`` or ``...`` line, both lines and their
    line ends included. Without a closing line there is no front matter (the
    ``---`` is a thematic break, as Obsidian shows it).
    """
    end = _core._notes_frontmatter_end(raw)
    return raw[:end], raw[end:]


def _yaml_text(frontmatter_text: str) -> str:
    text = frontmatter_text.removeprefix("\ufeff")
    lines = text.splitlines()
    return "\n".join(lines[1:-1])


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {_json_key(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_json_value(v) for v in value), key=str)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _json_key(key: Any) -> str:
    """A mapping key as JSON writes it (``null``, ``true``, ``1``, ISO dates)."""
    if isinstance(key, str):
        return key
    value = _json_value(key)
    return value if isinstance(value, str) else json.dumps(value)


def parse_frontmatter(path: str, frontmatter_text: str) -> dict[str, Any]:
    """The YAML of a front matter block as JSON-compatible values (dates as ISO
    strings); raises ``NoteParseError`` when it is not a YAML mapping."""
    if not frontmatter_text:
        return {}
    try:
        data = yaml.load(_yaml_text(frontmatter_text), Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise NoteParseError(path, f"malformed YAML front matter{where}: {problem}") from None
    except (ValueError, OverflowError, TypeError) as exc:  # e.g. an impossible date
        raise NoteParseError(path, f"malformed YAML front matter: {exc}") from None
    except RecursionError:
        raise NoteParseError(path, "YAML front matter nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise NoteParseError(
            path,
            f"front matter must be a YAML mapping of keys to values, not {type(data).__name__}",
        )
    result = _json_value(data)
    assert isinstance(result, dict)
    return result


_SLUG_BAD = re.compile(r"[^\w/.\-]+")
_DASHES = re.compile(r"-{2,}")


def path_slug(path: str) -> str:
    """A stable id from a vault-relative path: lower case, no ``.md``, runs of
    characters other than letters, digits, ``_ . - /`` replaced by ``-``."""
    stem = path[:-3] if path.lower().endswith(".md") else path
    stem = unicodedata.normalize("NFC", stem).casefold()
    parts = []
    for part in stem.split("/"):
        slug = _DASHES.sub("-", _SLUG_BAD.sub("-", part)).strip("-")
        parts.append(slug or "-")
    return "/".join(parts)


def _scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def _string_list(value: Any, *, tags: bool = False) -> tuple[str, ...]:
    if value is None:
        return ()
    items: list[Any]
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value) if tags else [value]
    elif isinstance(value, list):
        items = value
    else:
        items = [value]
    out: list[str] = []
    for item in items:
        text = _scalar_text(item)
        if text is None:
            continue
        if tags:
            text = text.lstrip("#")
        if text and text not in out:
            out.append(text)
    return tuple(out)


def normalise_for_hash(text: str, normalisation: str = "canonical") -> str:
    """The text that is hashed (never stored): ``\\r\\n`` -> ``\\n`` and trailing
    spaces and tabs of each line trimmed in both modes; ``canonical`` also
    reduces every run of blank lines to one. (``hash_fulltext`` is the exact
    bytes.)"""
    if normalisation not in ("canonical", "none"):
        raise ValueError(f"normalisation must be 'canonical' or 'none', got {normalisation!r}")
    return _core._notes_normalise(text, normalisation == "canonical")


def _digest(hash_mode: str, frontmatter: bytes | None, body: bytes | None) -> str:
    digest = hashlib.sha256()
    digest.update(hash_mode.encode())
    if frontmatter is not None:
        digest.update(b"\x00fm\x00")
        digest.update(frontmatter)
    if body is not None:
        digest.update(b"\x00body\x00")
        digest.update(body)
    return digest.hexdigest()


def _hash_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def content_hash(frontmatter_text: str, body: str, config: NotesConfig = _DEFAULT) -> str:
    """The change-detection hash of a note per ``config.hash_mode`` and
    ``config.normalisation`` (SHA-256, hex)."""
    mode = config.hash_mode
    fm = normalise_for_hash(frontmatter_text, config.normalisation) if mode != "body" else None
    text = normalise_for_hash(body, config.normalisation) if mode != "frontmatter" else None
    return _digest(
        mode,
        None if fm is None else _hash_bytes(fm),
        None if text is None else _hash_bytes(text),
    )


def _norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    path = posixpath.normpath(path) if path else path
    return path.removeprefix("./")


def parse_note(path: str, raw: str, config: NotesConfig = _DEFAULT) -> Note:
    """Parse one note (``path`` relative to the vault, ``/`` separators).

    Raises ``NoteParseError`` when the front matter is malformed YAML or not a
    mapping.
    """
    frontmatter_text, body = split_frontmatter(raw)
    return _parse(path, raw, frontmatter_text, body, config, None)


def parse_note_file(path: str, data: bytes, config: NotesConfig = _DEFAULT) -> Note | None:
    """``parse_note`` for the bytes of a note's file; ``None`` when they are
    not UTF-8. Reads the body from the bytes (no transcoding of the text) and
    hashes them as they are for ``hash_fulltext``."""
    split = _core._notes_split_data(data)
    if split is None:
        return None
    raw, frontmatter_text, body, offset = split
    return _parse(path, raw, frontmatter_text, body, config, (data, offset))


def _parse(
    path: str,
    raw: str,
    frontmatter_text: str,
    body: str,
    config: NotesConfig,
    data: tuple[bytes, int] | None,
) -> Note:
    path = _norm_path(path)
    meta = parse_frontmatter(path, frontmatter_text)
    note_id = _scalar_text(meta.get("id")) or path_slug(path)
    note_type = _scalar_text(meta.get("type"))
    # One pass of the core over the body: links, first H1, the text to hash
    # (UTF-8), and the chunk plan (kept for chunk_note with the same settings).
    limits = config.limits_for(note_type)
    mode = config.hash_mode
    links, h1, body_norm, plan = _core._notes_body(
        body,
        list(config.suggestion_headings),
        limits,
        config.overlap,
        config.encoding,
        None if mode == "frontmatter" else config.normalisation,
        *(data or ()),
    )
    title = _scalar_text(meta.get("title")) or h1
    if not title:
        stem = path.rsplit("/", 1)[-1]
        title = stem[:-3] if stem.lower().endswith(".md") else stem
    fm_norm = normalise_for_hash(frontmatter_text, config.normalisation) if mode != "body" else None
    tags = _string_list(meta.get("tags", meta.get("tag")), tags=True)
    aliases = _string_list(meta.get("aliases", meta.get("alias")))
    created = _scalar_text(meta.get("created"))
    updated = _scalar_text(meta.get("updated", meta.get("modified")))
    note = Note(
        id=note_id,
        path=path,
        raw=raw,
        frontmatter_text=frontmatter_text,
        body=body,
        frontmatter=meta,
        title=title,
        type=note_type,
        tags=tags,
        aliases=aliases,
        created=created,
        updated=updated,
        links=links,
        hash=_digest(mode, None if fm_norm is None else _hash_bytes(fm_norm), body_norm),
        hash_fulltext=hashlib.sha256(_hash_bytes(raw) if data is None else data[0]).hexdigest(),
    )
    object.__setattr__(note, PLAN_ATTRIBUTE, ((limits, config.overlap, config.encoding), plan))
    return note
