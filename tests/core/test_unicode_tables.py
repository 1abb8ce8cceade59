"""The core's character classes are CPython's, code point for code point."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from fastnotebook import _core


def python_bits(cp: int) -> int:
    c = chr(cp)
    if 0xD800 <= cp <= 0xDFFF:
        return 0
    return (
        int(c.isspace())
        | int(c.isprintable()) << 1
        | int(c.isalnum() or c == "_") << 2
        | int(c.isdecimal()) << 3
        | int(unicodedata.category(c)[0] == "C") << 4
    )


def test_tables_were_generated_for_this_python() -> None:
    assert unicodedata.unidata_version == _core.UNICODE_VERSION, (
        "regenerate the tables with `python scripts/gen_unicode_tables.py`"
    )


# A test hook: built with the `test-hooks` cargo feature (`make build` enables
# it; release builds leave it out).
@pytest.mark.skipif(
    not hasattr(_core, "_char_class_bits"), reason="built without the test-hooks cargo feature"
)
def test_every_code_point_is_classified_like_cpython() -> None:
    ours = _core._char_class_bits(0, sys.maxunicode + 1)
    expected = bytes(python_bits(cp) for cp in range(sys.maxunicode + 1))
    if ours != expected:
        cp = next(i for i, (a, b) in enumerate(zip(ours, expected, strict=True)) if a != b)
        raise AssertionError(f"U+{cp:04X}: ours {ours[cp]:04b}, CPython {expected[cp]:04b}")
