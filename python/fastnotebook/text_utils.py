"""Text cleaning, a drop-in for ``open_notebook.utils.text_utils``.

The string transforms run in Rust, with results identical to the original's
regular expressions on every input (lone surrogates included).
"""

from __future__ import annotations

import re
from typing import Any

from fastnotebook import _core

__all__ = [
    "THINK_PATTERN",
    "THINK_PATTERN_NO_OPEN",
    "clean_thinking_content",
    "extract_text_content",
    "parse_thinking_content",
    "remove_non_ascii",
    "remove_non_printable",
]

# The original's patterns, kept for code that imports them; the functions
# below do not use them.
THINK_PATTERN = re.compile(r"<think>(.*?)</think>", re.DOTALL)
THINK_PATTERN_NO_OPEN = re.compile(r"^(.*?)</think>", re.DOTALL)


def remove_non_ascii(text: str) -> str:
    """Remove non-ASCII characters from text.

    >>> remove_non_ascii("café ok")
    'caf ok'
    """
    return _core.remove_non_ascii(text)


def remove_non_printable(text: str) -> str:
    """Remove non-printable characters from text: unusual spaces become spaces,
    unusual line breaks newlines, control characters go, and only letters,
    digits, whitespace and ``.,!?-`` are kept."""
    return _core.remove_non_printable(text)


def parse_thinking_content(content: str) -> tuple[str, str]:
    """Split a model answer into ``(thinking, cleaned)``.

    Well-formed ``<think>...</think>`` blocks are collected (joined by a blank
    line) and removed; output whose opening tag is missing (``...</think>``)
    counts as thinking up to the first closing tag. Non-str content gives
    ``("", str(content))``, None ``("", "")``; content longer than 100,000
    characters is returned as it is.

    >>> parse_thinking_content("<think>plan</think>The answer.")
    ('plan', 'The answer.')
    """
    if not isinstance(content, str):
        return "", str(content) if content is not None else ""
    parsed = _core.parse_thinking_content(content)
    return ("", content) if parsed is None else parsed


def clean_thinking_content(content: str) -> str:
    """The answer with its thinking removed (the second half of
    ``parse_thinking_content``).

    >>> clean_thinking_content("<think>plan</think>The answer.")
    'The answer.'
    """
    return parse_thinking_content(content)[1]


def extract_text_content(content: Any) -> str:
    """Text of a model answer: a string as is; a list of parts (strings, or
    dicts with a ``"text"`` key) concatenated; anything else ``str()``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and "text" in part:
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return str(content)
