"""Content-type detection and chunking, a drop-in for ``open_notebook.utils.chunking``.

Same names, same results as Open Notebook's module, computed in Rust:

- ``detect_content_type()`` picks HTML, Markdown or plain text from the file
  extension, falling back to content heuristics;
- ``chunk_text()`` splits HTML on h1-h3 and Markdown on #-### headers (as
  langchain's header splitters), plain text with a recursive separator
  splitter, and splits oversized pieces again;
- ``chunk_texts()`` does the same for many texts at once, on all cores.

Two units, as the two versions of the original:

- ``"chars"`` (the default): 1500-character chunks with 225 overlap
  (Open Notebook ``d8006ff5``);
- ``"tokens"``: sizes in tokens (tiktoken ``o200k_base`` by default), 400 with
  ``int(400 * 0.15)`` overlap unless ``OPEN_NOTEBOOK_CHUNK_SIZE``,
  ``OPEN_NOTEBOOK_CHUNK_OVERLAP`` and ``OPEN_NOTEBOOK_MIN_CHUNK_SIZE`` say
  otherwise (validated as the original does), chunks under the minimum dropped
  when others remain (Open Notebook's current release).

Pick the unit per call (``unit=``), for the process
(``set_chunking_config(unit="tokens")``) or by the environment
(``FASTNOTEBOOK_CHUNK_UNIT``). The environment is read at import, as the
original reads it, and again by ``set_chunking_config(None)``; those rules
live in ``fastnotebook.chunking_config``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from enum import Enum
from typing import Any

from loguru import logger

from fastnotebook import _core
from fastnotebook import chunking_config as _sizing
from fastnotebook.chunking_config import (
    CHUNK_OVERLAP,
    CHUNK_SIZE,
    ChunkingConfig,
    Unit,
    get_chunking_config,
    set_chunking_config,
)

__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "HIGH_CONFIDENCE_THRESHOLD",
    "ChunkingConfig",
    "ContentType",
    "chunk_text",
    "chunk_texts",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
    "get_chunking_config",
    "set_chunking_config",
]

HIGH_CONFIDENCE_THRESHOLD: float = _core.HIGH_CONFIDENCE_THRESHOLD


class ContentType(Enum):
    """Content type for chunking strategy selection."""

    HTML = "html"
    MARKDOWN = "markdown"
    PLAIN = "plain"


def path_str(file_path: Any) -> str | None:
    """The path as ``pathlib.Path`` would read it; None where it would fail
    (shared with ``fastnotebook.open_notebook.chunking``)."""
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
        # `_value_` is what `.value` returns, without the descriptor's cost.
        return content_type._value_
    raise TypeError(
        f"content_type must be a ContentType or None, not {type(content_type).__name__}"
    )


def detect_content_type_from_extension(
    file_path: str | os.PathLike[str] | None,
) -> ContentType | None:
    """Content type from the file extension (case-insensitive), or None if the
    path is empty, has no extension, or one that is not recognised."""
    path = path_str(file_path)
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
    heuristics override a plain-text extension only with high confidence
    (``HIGH_CONFIDENCE_THRESHOLD``).

    >>> detect_content_type("anything", "page.html")
    <ContentType.HTML: 'html'>
    """
    chosen, from_extension, heuristic, confidence = _core.detect_content_type(
        _text_arg(text) if text else "", path_str(file_path)
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
    *,
    unit: Unit | None = None,
) -> list[str]:
    """Split text into chunks of at most the chunk size (a single indivisible
    piece aside), with the splitter suited to its content type.

    Empty or whitespace-only text gives ``[]``; text that fits in one chunk
    comes back whole and unchanged. The content type is ``content_type`` if
    given, else detected from ``file_path`` and the text (see
    ``detect_content_type``). ``unit`` overrides the configured unit
    ("chars" or "tokens", with that unit's default sizes).

    Raises ``TypeError`` when ``text`` is not a ``str`` or ``content_type``
    not a ``ContentType``, and ``ValueError`` (``MarkupRejectedError``) for
    HTML that Python's ``html.parser`` rejects.

    >>> chunk_text("Short enough to stay whole.")
    ['Short enough to stay whole.']
    >>> [len(c) for c in chunk_text("word " * 700)]
    [1499, 1499, 949]
    """
    if not text:
        return []
    # The common call (a str, a ContentType or None, the default sizes)
    # takes no helper's call: at ~0.1 us each they were half of the
    # wrapper's time. These are the helpers' first cases, inlined.
    if _sizing.current is None and (_sizing.environment.chars if unit is None else unit == "chars"):
        chosen_unit, sizes = "chars", _sizing.CHARS_ARGS
    else:
        chosen_unit, sizes = _sizing.effective_sizes(unit)
    chunks, split_as, length = _core.chunk_text(
        text if type(text) is str else _text_arg(text),
        content_type._value_
        if type(content_type) is ContentType
        else _content_type_arg(content_type),
        None if file_path is None else path_str(file_path),
        *sizes,
    )
    if split_as is not None:
        logger.debug("Chunking text with content type: {}", split_as)
        if chosen_unit == "chars":
            logger.debug("Created {} chunks from {} characters", len(chunks), length)
        else:
            # The exact count of a long text is not computed (it would cost a
            # pass of its own): the text is known to exceed the chunk size.
            logger.debug("Created {} chunks from over {} tokens", len(chunks), sizes[0])
    return chunks


def chunk_texts(
    texts: Sequence[str],
    content_types: Sequence[ContentType | None] | None = None,
    file_paths: Sequence[str | os.PathLike[str] | None] | None = None,
    *,
    unit: Unit | None = None,
) -> list[list[str]]:
    """``chunk_text`` for many texts at once; the result equals
    ``[chunk_text(t, ...) for t in texts]``.

    The calling thread and one pool thread for each other core
    (``RAYON_NUM_THREADS`` sets the total) chunk with the GIL released; the
    calling thread alone takes it, briefly, to build the result strings.

    >>> chunk_texts(["first text", "", "second text"])
    [['first text'], [], ['second text']]
    """
    texts = [t if t else "" for t in texts]
    for i, t in enumerate(texts):
        _text_arg(t, f"texts[{i}]")
    types = None if content_types is None else [_content_type_arg(c) for c in content_types]
    paths = None if file_paths is None else [path_str(p) for p in file_paths]
    return _core.chunk_texts(texts, types, paths, *_sizing.effective_sizes(unit)[1])
