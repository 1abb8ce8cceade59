"""Content-type detection and chunking, a drop-in for ``open_notebook.utils.chunking``.

Same names, same results as Open Notebook's module (the 1500/225-character
version), computed in Rust:

- ``detect_content_type()`` picks HTML, Markdown or plain text from the file
  extension, falling back to content heuristics;
- ``chunk_text()`` splits HTML on h1-h3 and Markdown on #-### headers (as
  langchain's header splitters), plain text with a recursive separator
  splitter, and splits oversized pieces again;
- ``chunk_texts()`` does the same for many texts at once, on all cores.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from enum import Enum
from typing import Any

from loguru import logger

from fastnotebook import _core

__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "HIGH_CONFIDENCE_THRESHOLD",
    "ContentType",
    "chunk_text",
    "chunk_texts",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
]

CHUNK_SIZE: int = _core.CHUNK_SIZE  # characters
CHUNK_OVERLAP: int = _core.CHUNK_OVERLAP  # 15% of CHUNK_SIZE
HIGH_CONFIDENCE_THRESHOLD: float = _core.HIGH_CONFIDENCE_THRESHOLD


class ContentType(Enum):
    """Content type for chunking strategy selection."""

    HTML = "html"
    MARKDOWN = "markdown"
    PLAIN = "plain"


def _path_str(file_path: Any) -> str | None:
    """The path as ``pathlib.Path`` would read it; None where it would fail."""
    if not file_path:
        return None
    if isinstance(file_path, os.PathLike):
        file_path = os.fspath(file_path)
    return file_path if isinstance(file_path, str) else None


def _text_arg(text: Any, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, not {type(text).__name__}")
    return text


def _content_type_arg(content_type: Any) -> str | None:
    if content_type is None:
        return None
    if isinstance(content_type, ContentType):
        return content_type.value
    raise TypeError(
        f"content_type must be a ContentType or None, not {type(content_type).__name__}"
    )


def detect_content_type_from_extension(
    file_path: str | os.PathLike[str] | None,
) -> ContentType | None:
    """Content type from the file extension (case-insensitive), or None if the
    path is empty, has no extension, or one that is not recognised."""
    path = _path_str(file_path)
    if path is None:
        return None
    found = _core.detect_content_type_from_extension(path)
    return None if found is None else ContentType(found)


def detect_content_type_from_heuristics(text: str) -> tuple[ContentType, float]:
    """Content type and a 0.0-1.0 confidence from the first 5000 characters."""
    if not text:
        return ContentType.PLAIN, 0.5
    name, confidence = _core.detect_content_type_from_heuristics(_text_arg(text))
    return ContentType(name), confidence


def detect_content_type(text: str, file_path: str | os.PathLike[str] | None = None) -> ContentType:
    """Content type from the file extension, else from the heuristics; the
    heuristics override a plain-text extension only with high confidence."""
    chosen, from_extension, heuristic, confidence = _core.detect_content_type(
        _text_arg(text) if text else "", _path_str(file_path)
    )
    if from_extension is None:
        logger.debug(
            f"No file extension, using heuristics: {heuristic} (confidence: {confidence:.2f})"
        )
    elif chosen != from_extension:
        logger.debug(
            f"Extension suggests plain, but heuristics override with {heuristic} "
            f"(confidence: {confidence:.2f})"
        )
    else:
        logger.debug(f"Using extension-based content type: {from_extension}")
    return ContentType(chosen)


def chunk_text(
    text: str,
    content_type: ContentType | None = None,
    file_path: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Split text into chunks of at most ``CHUNK_SIZE`` characters (a single
    indivisible piece aside), with the splitter suited to its content type.

    Empty or whitespace-only text gives ``[]``; text of at most ``CHUNK_SIZE``
    characters comes back whole and unchanged.
    """
    if not text:
        return []
    chunks, split_as = _core.chunk_text(
        _text_arg(text), _content_type_arg(content_type), _path_str(file_path)
    )
    if split_as is not None:
        logger.debug(f"Chunking text with content type: {split_as}")
        logger.debug(f"Created {len(chunks)} chunks from {len(text)} characters")
    return chunks


def chunk_texts(
    texts: Sequence[str],
    content_types: Sequence[ContentType | None] | None = None,
    file_paths: Sequence[str | os.PathLike[str] | None] | None = None,
) -> list[list[str]]:
    """``chunk_text`` for many texts at once, spread over all cores with the
    GIL released; the result equals ``[chunk_text(t, ...) for t in texts]``."""
    texts = [t if t else "" for t in texts]
    for t in texts:
        _text_arg(t, "texts[i]")
    types = None if content_types is None else [_content_type_arg(c) for c in content_types]
    paths = None if file_paths is None else [_path_str(p) for p in file_paths]
    return _core.chunk_texts(texts, types, paths)
