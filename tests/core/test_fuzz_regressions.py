"""The inputs kept from fuzz and property-test findings, replayed through the
Python API. (``cargo test`` replays the same files through the fuzz targets'
own checks: ``fuzz_regression_inputs`` in ``rust/proptests.rs``.)

Each file is named after what it found; its folder is the fuzz target, whose
input format says where the text starts (``fuzz/src/invariants.rs``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fastnotebook import _core
from fastnotebook.chunking import ContentType, chunk_text
from fastnotebook.token_utils import token_count
from helpers.invariants import fits_as_pieces

HERE = Path(__file__).resolve().parent.parent / "regressions"
# Parameter bytes before the text, by target (None: not text).
TEXT_AFTER = {
    "detect": 1,
    "recursive": 8,
    "markdown": 1,
    "html": 0,
    "chunk_chars": 6,
    "chunk_tokens": 6,
    "tokens": 0,
    "cleaning": 0,
    "pooling": None,
    "transcode": None,
}
INPUTS = sorted(p for p in HERE.glob("*/*") if p.is_file())


def text_of(path: Path) -> str:
    skip = TEXT_AFTER[path.parent.name]
    data = path.read_bytes()
    if skip is None:
        # Code units, three bytes each, as the transcode target reads them;
        # Python strings hold no code point past U+10FFFF.
        units = [
            int.from_bytes(data[i : i + 2] + bytes([data[i + 2] & 0x1F]), "little")
            ^ (0xD800 if data[i + 2] & 0x80 else 0)
            for i in range(0, len(data) - 2, 3)
        ]
        return "".join(chr(u) for u in units if u <= 0x10FFFF)
    return data[skip:].decode("utf-8", errors="replace")


def test_there_are_regression_inputs() -> None:
    assert INPUTS, f"no regression input under {HERE}"


@pytest.mark.parametrize("path", INPUTS, ids=[f"{p.parent.name}/{p.name}" for p in INPUTS])
def test_regression_input_through_the_python_api(path: Path) -> None:
    text = text_of(path)
    for ct in (None, *ContentType):
        for unit in ("chars", "tokens"):
            for size in (1, 2, 7):
                try:
                    chunks, _, length = _core.chunk_text(
                        text, ct and ct.value, None, size, 0, unit=unit
                    )
                except (_core.MarkupRejectedError, _core.UnsupportedTextError):
                    assert ct is ContentType.HTML or ct is None
                    continue
                for c in chunks:
                    assert c
                    if length > size:
                        assert c == c.strip()
                        if unit == "chars":
                            assert len(c) <= size
                        elif ct is ContentType.PLAIN:
                            n = token_count(c)
                            assert n <= size or len(c) == 1 or fits_as_pieces(c, size, text)
                if ct is ContentType.PLAIN:
                    assert all(c in text for c in chunks)
        assert chunk_text(text, ct) is not None
