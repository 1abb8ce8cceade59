"""Token counting, a drop-in for ``open_notebook.utils.token_utils``.

Counts are exactly Python tiktoken's ``len(enc.encode(text, disallowed_special=()))``
(special-token text such as ``<|endoftext|>`` counts as ordinary text), computed
by a BPE in Rust over the vocabularies tiktoken-rs ships: no network, ever.

The encoding is ``o200k_base`` by default -- what the original's code counts
with (its docs say cl100k_base; the code is the contract). ``cl100k_base`` can
be chosen per call (``encoding=``), for the process
(``set_default_encoding``) or by the environment (``FASTNOTEBOOK_ENCODING``).
A ``str`` with lone surrogates is counted as tiktoken counts it: surrogate
pairs joined, lone surrogates as U+FFFD.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from fastnotebook import _core

__all__ = [
    "ENCODINGS",
    "get_default_encoding",
    "set_default_encoding",
    "token_cost",
    "token_count",
    "token_counts",
]

ENCODINGS: tuple[str, ...] = _core.ENCODINGS  # the core's, default first
ENCODING_ENV = "FASTNOTEBOOK_ENCODING"

_lock = threading.Lock()
_default: str | None = None


def _checked(encoding: str) -> str:
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; choose one of {', '.join(ENCODINGS)}")
    return encoding


def get_default_encoding() -> str:
    """The encoding used when none is given: set in code, else
    ``FASTNOTEBOOK_ENCODING``, else ``o200k_base``."""
    if _default is not None:
        return _default
    return _checked(os.environ.get(ENCODING_ENV, "").strip() or ENCODINGS[0])


def set_default_encoding(encoding: str | None) -> None:
    """Set the process-wide default encoding (None: back to the environment)."""
    global _default
    with _lock:
        _default = None if encoding is None else _checked(encoding)


def token_count(input_string: str, encoding: str | None = None) -> int:
    """The number of tokens in a string, as tiktoken counts them.

    ``encoding`` is ``"o200k_base"`` or ``"cl100k_base"`` (default: see
    ``get_default_encoding``); any other raises ``ValueError``.

    >>> token_count("Hello world")
    2
    """
    return _core.token_count(input_string, _checked(encoding or get_default_encoding()))


def token_counts(texts: Sequence[str], encoding: str | None = None) -> list[int]:
    """``token_count`` for many strings at once, on all cores (GIL released).

    >>> token_counts(["Hello world", "", "Wie geht's?"])
    [2, 0, 4]
    """
    return _core.token_counts(list(texts), _checked(encoding or get_default_encoding()))


def token_cost(token_count: int, cost_per_million: float = 0.150) -> float:
    """The cost of ``token_count`` tokens at ``cost_per_million`` per million.

    >>> token_cost(2000, cost_per_million=0.15)
    0.0003
    """
    return cost_per_million * (token_count / 1_000_000)
