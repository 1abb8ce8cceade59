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
original reads it, and again by ``set_chunking_config(None)``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Sequence
from enum import Enum
from typing import Any, Literal

from loguru import logger

from fastnotebook import _core, token_utils

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

CHUNK_SIZE: int = _core.CHUNK_SIZE  # characters
CHUNK_OVERLAP: int = _core.CHUNK_OVERLAP  # 15% of CHUNK_SIZE
HIGH_CONFIDENCE_THRESHOLD: float = _core.HIGH_CONFIDENCE_THRESHOLD
UNIT_ENV = "FASTNOTEBOOK_CHUNK_UNIT"

Unit = Literal["chars", "tokens"]


@dataclasses.dataclass(frozen=True)
class ChunkingConfig:
    """How ``chunk_text`` sizes chunks. ``None`` fields take the unit's
    defaults: 1500/225 characters, or for tokens the ``OPEN_NOTEBOOK_*``
    environment variables (as read at import or by
    ``set_chunking_config(None)``), else 400 tokens, 15% overlap, minimum 5,
    and the default encoding of ``fastnotebook.token_utils``."""

    unit: Unit = "chars"
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    min_chunk_size: int | None = None
    encoding: str | None = None

    def __post_init__(self) -> None:
        # Invalid values are refused here, when they are set, so that none
        # reaches a later chunk_text call (see check_chunk_sizes).
        check_unit(self.unit)
        check_chunk_sizes(self.chunk_size, self.chunk_overlap, self.min_chunk_size)
        if self.encoding is not None and self.encoding not in token_utils.ENCODINGS:
            raise ValueError(
                f"unknown encoding {self.encoding!r}; "
                f"choose one of {', '.join(token_utils.ENCODINGS)}"
            )

    def resolved(self) -> ChunkingConfig:
        """This configuration with every default filled in.

        An overlap left unset is 15% of the chunk size: for characters the
        default size's is ``CHUNK_OVERLAP`` (225 of 1500)."""
        if self.unit == "chars":
            if self.chunk_size is None:
                size = CHUNK_SIZE
                default_overlap = CHUNK_OVERLAP
            else:
                size = self.chunk_size
                default_overlap = int(size * 0.15)
            overlap = default_overlap if self.chunk_overlap is None else self.chunk_overlap
            check_chunk_sizes(size, overlap, None)
            return dataclasses.replace(self, chunk_size=size, chunk_overlap=overlap)
        size, overlap, minimum = _token_sizes_from_env(*_environment.token_sizes)
        if self.chunk_size is not None:
            size = self.chunk_size
            overlap = int(size * 0.15)
        overlap = overlap if self.chunk_overlap is None else self.chunk_overlap
        check_chunk_sizes(size, overlap, None)
        return dataclasses.replace(
            self,
            chunk_size=size,
            chunk_overlap=overlap,
            min_chunk_size=minimum if self.min_chunk_size is None else self.min_chunk_size,
            encoding=self.encoding or token_utils.get_default_encoding(),
        )


def check_unit(unit: object, name: str = "unit") -> None:
    """``ValueError`` unless ``unit`` is "chars" or "tokens"."""
    if unit not in ("chars", "tokens"):
        raise ValueError(f"{name} must be 'chars' or 'tokens', got {unit!r}")


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"Invalid {name} value: {value!r} (an integer is needed)")
    return value


def check_chunk_sizes(
    chunk_size: object,
    chunk_overlap: object,
    min_chunk_size: object,
    names: tuple[str, str, str] = ("chunk_size", "chunk_overlap", "min_chunk_size"),
) -> None:
    """The rules the ``OPEN_NOTEBOOK_*`` variables are held to, as errors:
    a chunk size above 0, an overlap neither negative nor as large as the
    chunk size, a minimum chunk size not negative (None: not set).

    The variables fall back to a default with a warning, as the original
    does; a value set in code or on the command line is refused instead."""
    size_name, overlap_name, minimum_name = names
    size = None if chunk_size is None else _check_int(size_name, chunk_size)
    if size is not None and size <= 0:
        raise ValueError(f"{size_name} ({size}) must be a positive integer")
    if chunk_overlap is not None:
        overlap = _check_int(overlap_name, chunk_overlap)
        if overlap < 0:
            raise ValueError(f"{overlap_name} ({overlap}) cannot be negative")
        if size is not None and overlap >= size:
            raise ValueError(f"{overlap_name} ({overlap}) cannot be >= chunk size ({size})")
    if min_chunk_size is not None:
        minimum = _check_int(minimum_name, min_chunk_size)
        if minimum < 0:
            raise ValueError(f"{minimum_name} ({minimum}) cannot be negative")


def _chunk_size_from(raw: str | None) -> int:
    if not raw:
        return 400
    try:
        size = int(raw)
    except ValueError:
        logger.warning(f"Invalid OPEN_NOTEBOOK_CHUNK_SIZE value: '{raw}'. Using default: 400")
        return 400
    if size < 100:
        logger.warning(
            f"OPEN_NOTEBOOK_CHUNK_SIZE ({size}) is too small. Using minimum value of 100."
        )
        return 100
    if size > 8192:
        logger.warning(
            f"OPEN_NOTEBOOK_CHUNK_SIZE ({size}) is very large. "
            f"This may cause issues with some embedding models."
        )
    logger.info(f"Using custom chunk size: {size} tokens")
    return size


def _chunk_overlap_from(raw: str | None, size: int) -> int:
    if not raw:
        return int(size * 0.15)
    try:
        overlap = int(raw)
    except ValueError:
        logger.warning(
            f"Invalid OPEN_NOTEBOOK_CHUNK_OVERLAP value: '{raw}'. Using default: 15% of chunk size"
        )
        return int(size * 0.15)
    if overlap < 0:
        logger.warning(f"OPEN_NOTEBOOK_CHUNK_OVERLAP ({overlap}) cannot be negative. Using 0.")
        return 0
    if overlap >= size:
        logger.warning(
            f"OPEN_NOTEBOOK_CHUNK_OVERLAP ({overlap}) cannot be >= chunk size ({size}). "
            f"Using 15% of chunk size: {int(size * 0.15)}"
        )
        return int(size * 0.15)
    logger.info(f"Using custom chunk overlap: {overlap} tokens")
    return overlap


def _min_chunk_size_from(raw: str | None) -> int:
    if raw is None:
        return 5
    try:
        value = int(raw)
    except ValueError:
        logger.warning(f"Invalid OPEN_NOTEBOOK_MIN_CHUNK_SIZE value: '{raw}'. Using default: 5")
        return 5
    if value < 0:
        logger.warning(f"OPEN_NOTEBOOK_MIN_CHUNK_SIZE ({value}) cannot be negative. Using 0.")
        return 0
    return value


@functools.cache
def _token_sizes_from_env(
    size_raw: str | None, overlap_raw: str | None, minimum_raw: str | None
) -> tuple[int, int, int]:
    """The token sizes from ``OPEN_NOTEBOOK_*`` with the original's validation
    and messages; cached so that each is logged once per value, as the
    original logs them once at import."""
    size = _chunk_size_from(size_raw)
    return size, _chunk_overlap_from(overlap_raw, size), _min_chunk_size_from(minimum_raw)


@dataclasses.dataclass(frozen=True)
class _Environment:
    """The environment variables chunking reads, as raw strings (validated
    where they are used, so that a bad value never breaks the import)."""

    unit: str | None
    token_sizes: tuple[str | None, str | None, str | None]
    #: Whether the unit is characters (unset, blank or "chars"): then a call
    #: without a configuration or unit takes the constant default sizes.
    chars: bool

    @staticmethod
    def read() -> _Environment:
        unit = os.environ.get(UNIT_ENV)
        return _Environment(
            unit,
            (
                os.environ.get("OPEN_NOTEBOOK_CHUNK_SIZE"),
                os.environ.get("OPEN_NOTEBOOK_CHUNK_OVERLAP"),
                os.environ.get("OPEN_NOTEBOOK_MIN_CHUNK_SIZE"),
            ),
            (unit or "").strip() in ("", "chars"),
        )


# Read at import, as the original reads its sizes, and again by
# `set_chunking_config(None)`: a lookup costs more than the rest of a call
# on a short text.
_environment = _Environment.read()
_config_lock = threading.Lock()
_config: ChunkingConfig | None = None


def get_chunking_config() -> ChunkingConfig:
    """The process-wide configuration: set in code, else the unit named by
    ``FASTNOTEBOOK_CHUNK_UNIT`` ("chars" when unset) with its defaults."""
    if _config is not None:
        return _config
    unit = (_environment.unit or "").strip() or "chars"
    check_unit(unit, UNIT_ENV)
    return _UNIT_DEFAULTS[unit]


def set_chunking_config(config: ChunkingConfig | None = None, **changes: Any) -> None:
    """Set the process-wide configuration (a ``ChunkingConfig``, and/or field
    changes such as ``unit="tokens"``). ``set_chunking_config(None)`` goes
    back to the environment's, reading ``FASTNOTEBOOK_CHUNK_UNIT`` and
    ``OPEN_NOTEBOOK_*`` again (they are otherwise read once, at import)."""
    global _config, _environment
    with _config_lock:
        if config is None and not changes:
            _environment = _Environment.read()
            _config = None
            return
        base = config or get_chunking_config()
        new = dataclasses.replace(base, **changes)
        new.resolved()  # validate now, not at the next chunk_text
        _config = new


_UNIT_DEFAULTS: dict[str, ChunkingConfig] = {
    "chars": ChunkingConfig(unit="chars"),
    "tokens": ChunkingConfig(unit="tokens"),
}


#: ``_core``'s size arguments, in the order of its signature after the text,
#: content type and path: chunk_size, chunk_overlap, unit, encoding,
#: min_chunk_size. Passed by position: as keywords they made each call
#: about 0.35 us slower (``timeit`` of the core's call).
_SizeArgs = tuple[int, int, str, str, int | None]


def _effective(unit: str | None) -> tuple[str, _SizeArgs]:
    """The unit and the core's size arguments for a call.

    This runs on every call, where a few microseconds are a tenth of the time
    of chunking a 10 kB document: the default character sizes are a constant,
    and other sizes are resolved once per configuration (and for tokens, per
    environment and default encoding).
    """
    config = _config
    if unit is None:
        chosen = config if config is not None else get_chunking_config()
    elif config is not None and config.unit == unit:
        chosen = config
    else:
        chosen = _UNIT_DEFAULTS.get(unit) or ChunkingConfig(unit=unit)  # type: ignore[arg-type]
    if chosen is _UNIT_DEFAULTS["chars"]:
        return "chars", _CHARS_ARGS
    if chosen.unit != "tokens":
        return _resolve(chosen, ())
    return _resolve(chosen, (*_environment.token_sizes, token_utils.get_default_encoding()))


@functools.lru_cache(maxsize=64)
def _resolve(config: ChunkingConfig, env: tuple[str | None, ...]) -> tuple[str, _SizeArgs]:
    """``_core``'s arguments for a configuration; ``env`` is what
    ``resolved()`` reads besides it (nothing for characters)."""
    resolved = config.resolved()
    size, overlap = resolved.chunk_size, resolved.chunk_overlap
    if size is None or overlap is None:  # resolved() fills both in
        raise AssertionError(f"unresolved chunk sizes in {resolved!r}")
    return resolved.unit, (
        size,
        overlap,
        resolved.unit,
        resolved.encoding or "o200k_base",
        resolved.min_chunk_size if resolved.unit == "tokens" else None,
    )


_CHARS_ARGS = _resolve(_UNIT_DEFAULTS["chars"], ())[1]


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
    heuristics override a plain-text extension only with high confidence
    (``HIGH_CONFIDENCE_THRESHOLD``).

    >>> detect_content_type("anything", "page.html")
    <ContentType.HTML: 'html'>
    """
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
    if _config is None and (_environment.chars if unit is None else unit == "chars"):
        chosen_unit, sizes = "chars", _CHARS_ARGS
    else:
        chosen_unit, sizes = _effective(unit)
    chunks, split_as, length = _core.chunk_text(
        text if type(text) is str else _text_arg(text),
        content_type._value_
        if type(content_type) is ContentType
        else _content_type_arg(content_type),
        None if file_path is None else _path_str(file_path),
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
    paths = None if file_paths is None else [_path_str(p) for p in file_paths]
    return _core.chunk_texts(texts, types, paths, *_effective(unit)[1])
