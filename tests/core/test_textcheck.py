"""The rule for what a file holds (fastnotebook.textcheck)."""

from __future__ import annotations

import codecs
import gzip
import io
import zipfile
from pathlib import Path

import pytest

from fastnotebook.textcheck import (
    BinaryFileError,
    binary_reason,
    decode_text,
    read_text_file,
)


def zipped() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", "hello")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\x7fELF\x02\x01\x01" + bytes(64), "an ELF executable"),
        (b"\x89PNG\r\n\x1a\n" + bytes(32), "a PNG image"),
        (b"%PDF-1.7\n%text-like body\n", "a PDF document"),
        (zipped(), "a ZIP archive"),
        (gzip.compress(b"text inside"), "a gzip archive"),
        (b"SQLite format 3\x00" + bytes(100), "an SQLite database"),
        (b"some words" + bytes(40), "40 NUL bytes in its first 50 bytes"),
        (bytes(range(128, 256)) * 4, "of its first 512 bytes are not UTF-8 text"),
        (b"\x01\x02\x03\x04\x05\x06\x07\x08 text", "of its first 13 bytes are not UTF-8 text"),
    ],
)
def test_binary_content_is_recognised_whatever_the_extension(raw: bytes, reason: str) -> None:
    found = binary_reason(raw)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"# Title\n\nPlain words.\n",
        "caf\u00e9 cr\u00e8me".encode("latin-1"),  # two bytes that are not UTF-8
        b"a stray NUL\x00 in a text file\x00 twice",
        "\u00e9\u00e8 \u65e5\u672c \U0001f600".encode() * 100,
        codecs.BOM_UTF16_LE + "wide text".encode("utf-16-le"),
        b"tab\tform\x0cfeed\r\nlines",
        # A cut multi-byte character at the end of the 64 KiB sample.
        b"x" * 65535 + "\u00e9".encode(),
    ],
)
def test_text_is_text(raw: bytes) -> None:
    assert binary_reason(raw) is None


def test_decoding_removes_nul_and_replaces_bad_bytes() -> None:
    assert decode_text(b"a\x00b\x00c") == ("abc", 2, "utf-8")
    assert decode_text(b"\xef\xbb\xbfcaf\xe9") == ("caf\ufffd", 0, "utf-8")
    text, nul, encoding = decode_text(codecs.BOM_UTF16_BE + "h\x00i".encode("utf-16-be"))
    assert (text, nul, encoding) == ("hi", 1, "utf-16")


def test_reading_a_file(tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_bytes(b"# T\n\nx\x00y")
    read = read_text_file(good)
    assert (read.text, read.size, read.removed_nul) == ("# T\n\nxy", 8, 1)
    binary = tmp_path / "renamed.md"
    binary.write_bytes(b"\x7fELF" + bytes(100))
    with pytest.raises(BinaryFileError, match="not a text file: an ELF executable"):
        read_text_file(binary)
    with pytest.raises(OSError):
        read_text_file(tmp_path / "missing.md")
