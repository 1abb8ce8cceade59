"""Content-type detection and token-sized chunking, as
``open_notebook.utils.chunking`` of Open Notebook's current release.

Chunks are counted in ``o200k_base`` tokens: ``CHUNK_SIZE`` (400),
``CHUNK_OVERLAP`` (15% of it) and ``MIN_CHUNK_SIZE`` (5; smaller chunks are
dropped when others remain) are read from ``OPEN_NOTEBOOK_CHUNK_SIZE``,
``OPEN_NOTEBOOK_CHUNK_OVERLAP`` and ``OPEN_NOTEBOOK_MIN_CHUNK_SIZE`` at import,
validated and clamped as the original does (with its warnings). ``chunk_text``
reads the three constants at each call, so that code patching them is obeyed.

HTML is split on h1-h3, Markdown on #-### (headers kept), plain text with the
recursive separator splitter (paragraphs, lines, sentences, clauses, words,
characters); oversized header sections are split again. All of it runs in
Rust, with the same chunks as the original's langchain splitters.
"""

from __future__ import annotations

import os
from typing import Any

from loguru import logger

from fastnotebook import _core
from fastnotebook.chunking import (
    ContentType,
    detect_content_type,
    detect_content_type_from_extension,
    detect_content_type_from_heuristics,
    path_str,
)
from fastnotebook.chunking_config import (
    chunk_overlap_from,
    chunk_size_from,
    min_chunk_size_from,
)
from fastnotebook.open_notebook.token_utils import ENCODING, token_count

__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "HIGH_CONFIDENCE_THRESHOLD",
    "MIN_CHUNK_SIZE",
    "ContentType",
    "chunk_text",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
    "token_count",
]


def _get_chunk_size() -> int:
    """``OPEN_NOTEBOOK_CHUNK_SIZE`` (tokens): 400 when unset or invalid, at
    least 100, with a warning above 8192."""
    return chunk_size_from(os.getenv("OPEN_NOTEBOOK_CHUNK_SIZE"))


def _get_chunk_overlap(chunk_size: int) -> int:
    """``OPEN_NOTEBOOK_CHUNK_OVERLAP`` (tokens): 15% of ``chunk_size`` when
    unset, invalid or not below ``chunk_size``; 0 when negative."""
    return chunk_overlap_from(os.getenv("OPEN_NOTEBOOK_CHUNK_OVERLAP"), chunk_size)


def _get_min_chunk_size() -> int:
    """``OPEN_NOTEBOOK_MIN_CHUNK_SIZE`` (tokens): 5 when unset or invalid, 0
    when negative."""
    return min_chunk_size_from(os.getenv("OPEN_NOTEBOOK_MIN_CHUNK_SIZE"))


CHUNK_SIZE = _get_chunk_size()
CHUNK_OVERLAP = _get_chunk_overlap(CHUNK_SIZE)
MIN_CHUNK_SIZE = _get_min_chunk_size()
HIGH_CONFIDENCE_THRESHOLD = 0.8  # heuristics override a plain-text extension from here

logger.debug(
    f"Chunking configuration: CHUNK_SIZE={CHUNK_SIZE}, "
    f"CHUNK_OVERLAP={CHUNK_OVERLAP}, MIN_CHUNK_SIZE={MIN_CHUNK_SIZE}"
)

_EXTENSION_TO_CONTENT_TYPE: dict[str, ContentType] = {
    **dict.fromkeys([".html", ".htm", ".xhtml"], ContentType.HTML),
    **dict.fromkeys([".md", ".markdown", ".mdown", ".mkd"], ContentType.MARKDOWN),
    **dict.fromkeys(
        [
            ".txt",
            ".text",
            ".py",
            ".js",
            ".ts",
            ".java",
            ".c",
            ".cpp",
            ".go",
            ".rs",
            ".rb",
            ".php",
            ".sh",
            ".bash",
            ".zsh",
            ".sql",
            ".json",
            ".yaml",
            ".yml",
            ".xml",
            ".csv",
            ".tsv",
        ],
        ContentType.PLAIN,
    ),
}


def _content_type_value(content_type: Any) -> str | None:
    # The common case first, without the enum's `value` property.
    if type(content_type) is ContentType:
        return content_type._value_
    if content_type is None:
        return None
    if isinstance(content_type, ContentType):
        return content_type.value
    raise TypeError(
        f"content_type must be a ContentType or None, not {type(content_type).__name__}"
    )


def chunk_text(
    text: str,
    content_type: ContentType | None = None,
    file_path: str | None = None,
) -> list[str]:
    """Split text into chunks of at most ``CHUNK_SIZE`` tokens (a single
    indivisible piece aside) with the splitter suited to its content type.

    Empty or whitespace-only text gives ``[]``; text of at most ``CHUNK_SIZE``
    tokens comes back whole and unchanged. Otherwise chunks are stripped, empty
    ones dropped, and when there are several, those under ``MIN_CHUNK_SIZE``
    tokens are dropped unless none would remain. The content type is detected
    (``detect_content_type``) when not given.
    """
    if not text:
        return []
    # Whitespace-only text is told in Rust (its `strip` is Python's), as the
    # text's first step: `text.strip()` here copied every text with
    # whitespace at either end, a few percent of a token_count pass. Other
    # types keep the original's check, and its errors.
    if type(text) is not str and not text.strip():
        return []
    chunks, split_as, _ = _core.chunk_text(
        text,
        _content_type_value(content_type),
        path_str(file_path),
        CHUNK_SIZE,
        CHUNK_OVERLAP,
        "tokens",
        ENCODING,
        MIN_CHUNK_SIZE,
    )
    if split_as is not None:
        logger.debug("Chunking text with content type: {}", split_as)
        logger.debug("Created {} chunks from over {} tokens", len(chunks), CHUNK_SIZE)
    return chunks
