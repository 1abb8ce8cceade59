"""Text cleaning, as ``open_notebook.utils.text_utils`` of Open Notebook's
current release (the same module as in the 2025 release that
``fastnotebook.text_utils`` follows): the transforms run in Rust, with results
identical to the original's regular expressions.
"""

from __future__ import annotations

from fastnotebook.text_utils import (
    THINK_PATTERN,
    THINK_PATTERN_NO_OPEN,
    clean_thinking_content,
    extract_text_content,
    parse_thinking_content,
    remove_non_ascii,
    remove_non_printable,
)

__all__ = [
    "THINK_PATTERN",
    "THINK_PATTERN_NO_OPEN",
    "clean_thinking_content",
    "extract_text_content",
    "parse_thinking_content",
    "remove_non_ascii",
    "remove_non_printable",
]
