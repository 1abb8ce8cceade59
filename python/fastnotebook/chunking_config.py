"""How chunking is sized: ``ChunkingConfig``, the process-wide
configuration and the environment it reads.

- ``FASTNOTEBOOK_CHUNK_UNIT`` picks the unit ("chars" when unset);
- ``OPEN_NOTEBOOK_CHUNK_SIZE``, ``OPEN_NOTEBOOK_CHUNK_OVERLAP`` and
  ``OPEN_NOTEBOOK_MIN_CHUNK_SIZE`` size token chunks, validated as Open
  Notebook validates them (``chunk_size_from``, ``chunk_overlap_from``,
  ``min_chunk_size_from``: a bad value falls back to the default with a
  warning);
- a configuration set in code (``set_chunking_config``) wins over both.

The environment is read at import and again by ``set_chunking_config(None)``.
``effective_sizes`` gives ``_core``'s size arguments for a call (``CHARS_ARGS``:
those of the default sizing in characters, computed once); the drop-in
modules (``fastnotebook.chunking``, ``fastnotebook.open_notebook.chunking``)
use these rules and re-export the public ones.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from typing import Any, Literal

from loguru import logger

from fastnotebook import _core, token_utils

__all__ = [
    "CHARS_ARGS",
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "UNIT_ENV",
    "ChunkingConfig",
    "Environment",
    "SizeArgs",
    "Unit",
    "check_chunk_sizes",
    "check_unit",
    "chunk_overlap_from",
    "chunk_size_from",
    "effective_sizes",
    "get_chunking_config",
    "min_chunk_size_from",
    "set_chunking_config",
    "token_sizes_from_env",
]

CHUNK_SIZE: int = _core.CHUNK_SIZE  # characters
CHUNK_OVERLAP: int = _core.CHUNK_OVERLAP  # 15% of CHUNK_SIZE
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
        size, overlap, minimum = token_sizes_from_env(*environment.token_sizes)
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


def chunk_size_from(raw: str | None) -> int:
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


def chunk_overlap_from(raw: str | None, size: int) -> int:
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


def min_chunk_size_from(raw: str | None) -> int:
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
def token_sizes_from_env(
    size_raw: str | None, overlap_raw: str | None, minimum_raw: str | None
) -> tuple[int, int, int]:
    """The token sizes from ``OPEN_NOTEBOOK_*`` with the original's validation
    and messages; cached so that each is logged once per value, as the
    original logs them once at import."""
    size = chunk_size_from(size_raw)
    return size, chunk_overlap_from(overlap_raw, size), min_chunk_size_from(minimum_raw)


@dataclasses.dataclass(frozen=True)
class Environment:
    """The environment variables chunking reads, as raw strings (validated
    where they are used, so that a bad value never breaks the import)."""

    unit: str | None
    token_sizes: tuple[str | None, str | None, str | None]
    #: Whether the unit is characters (unset, blank or "chars"): then a call
    #: without a configuration or unit takes the constant default sizes.
    chars: bool

    @staticmethod
    def read() -> Environment:
        unit = os.environ.get(UNIT_ENV)
        return Environment(
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
environment = Environment.read()
_config_lock = threading.Lock()
current: ChunkingConfig | None = None


def get_chunking_config() -> ChunkingConfig:
    """The process-wide configuration: set in code, else the unit named by
    ``FASTNOTEBOOK_CHUNK_UNIT`` ("chars" when unset) with its defaults."""
    if current is not None:
        return current
    unit = (environment.unit or "").strip() or "chars"
    check_unit(unit, UNIT_ENV)
    return _UNIT_DEFAULTS[unit]


def set_chunking_config(config: ChunkingConfig | None = None, **changes: Any) -> None:
    """Set the process-wide configuration (a ``ChunkingConfig``, and/or field
    changes such as ``unit="tokens"``). ``set_chunking_config(None)`` goes
    back to the environment's, reading ``FASTNOTEBOOK_CHUNK_UNIT`` and
    ``OPEN_NOTEBOOK_*`` again (they are otherwise read once, at import)."""
    global current, environment
    with _config_lock:
        if config is None and not changes:
            environment = Environment.read()
            current = None
            return
        base = config or get_chunking_config()
        new = dataclasses.replace(base, **changes)
        new.resolved()  # validate now, not at the next chunk_text
        current = new


_UNIT_DEFAULTS: dict[str, ChunkingConfig] = {
    "chars": ChunkingConfig(unit="chars"),
    "tokens": ChunkingConfig(unit="tokens"),
}


#: ``_core``'s size arguments, in the order of its signature after the text,
#: content type and path: chunk_size, chunk_overlap, unit, encoding,
#: min_chunk_size. Passed by position: as keywords they made each call
#: about 0.35 us slower (``timeit`` of the core's call).
SizeArgs = tuple[int, int, str, str, int | None]


def effective_sizes(unit: str | None) -> tuple[str, SizeArgs]:
    """The unit and the core's size arguments for a call.

    This runs on every call, where a few microseconds are a tenth of the time
    of chunking a 10 kB document: the default character sizes are a constant,
    and other sizes are resolved once per configuration (and for tokens, per
    environment and default encoding).
    """
    config = current
    if unit is None:
        chosen = config if config is not None else get_chunking_config()
    elif config is not None and config.unit == unit:
        chosen = config
    else:
        chosen = _UNIT_DEFAULTS.get(unit) or ChunkingConfig(unit=unit)  # type: ignore[arg-type]
    if chosen is _UNIT_DEFAULTS["chars"]:
        return "chars", CHARS_ARGS
    if chosen.unit != "tokens":
        return _resolve(chosen, ())
    return _resolve(chosen, (*environment.token_sizes, token_utils.get_default_encoding()))


@functools.lru_cache(maxsize=64)
def _resolve(config: ChunkingConfig, env: tuple[str | None, ...]) -> tuple[str, SizeArgs]:
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


CHARS_ARGS = _resolve(_UNIT_DEFAULTS["chars"], ())[1]
