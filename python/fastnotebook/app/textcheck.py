"""Whether a file holds text, and the text a source may store.

``ingest`` and ``chunk`` read files through ``read_text_file``, which applies
one rule (docs/ROBUSTNESS.md, "Bad files"):

- A file is binary, and skipped with the reason, when it starts with a known
  magic number (ELF, PNG, JPEG, GIF, PDF, ZIP and the formats built on it,
  gzip, bzip2, xz, 7z, zstd, SQLite, WebAssembly, Java class, Mach-O, media
  containers), when its first 64 KiB hold NUL bytes that make up more than
  1% of them, or bytes that are neither UTF-8 text nor tab, newline,
  carriage return or form feed (NUL included) that make up more than 10%
  of them -- in both cases at least 8 such bytes. Detection looks at the
  content, never at the extension. A few stray NUL bytes in a text file, or
  a few Latin-1 letters, do not make it binary: NUL is removed and the
  letters replaced (below).
- Text is UTF-8 (a byte order mark is dropped); UTF-16 and UTF-32 files with
  a byte order mark are decoded as such. Bytes that are not UTF-8 become
  U+FFFD, so a Latin-1 file with a few accented letters is still text.
- NUL characters (U+0000) are removed, and the count reported: SurrealDB
  stores a string with NUL but cannot send it back ("to be serialized
  string contained a null byte"), so one such record made every read of
  its table fail. Every other character is kept.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BinaryFileError", "TextFile", "binary_reason", "decode_text", "read_text_file"]

SAMPLE_BYTES = 65536
MINIMUM_BAD_BYTES = 8
NUL_SHARE = 0.01
NOT_TEXT_SHARE = 0.10

# (prefix, name): the first bytes of formats that are never text.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x7fELF", "an ELF executable"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or a format built on it: docx, xlsx, epub, jar)"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BZh91AY&SY", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"\x28\xb5\x2f\xfd", "a zstd archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x00asm", "a WebAssembly module"),
    (b"\xca\xfe\xba\xbe", "a Java class or Mach-O universal binary"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O executable"),
    (b"\xce\xfa\xed\xfe", "a Mach-O executable"),
    (b"RIFF", "a RIFF file (WAV, AVI, WebP)"),
    (b"OggS", "an Ogg media file"),
    (b"fLaC", "a FLAC audio file"),
    (b"ID3", "an MP3 audio file"),
)

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

# The C0 control bytes but NUL and those text files use (tab, newline,
# carriage return, form feed): they count as not text.
_CONTROLS = bytes(b for b in range(1, 32) if b not in b"\t\n\r\f")
_REPLACEMENT_UTF8 = "\ufffd".encode()


class BinaryFileError(ValueError):
    """A file that is not text (see the module for the rule)."""


@dataclass(frozen=True)
class TextFile:
    """A file's text after the rule, and what the rule changed."""

    text: str
    size: int  # bytes read
    removed_nul: int  # NUL characters removed
    encoding: str


def _bom_encoding(raw: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return encoding
    return None


def binary_reason(raw: bytes) -> str | None:
    """Why ``raw`` is not text (e.g. "a PNG image"), or None if it is text."""
    for prefix, name in _MAGIC:
        if raw.startswith(prefix):
            return name
    if _bom_encoding(raw) is not None:
        return None
    sample = raw[:SAMPLE_BYTES]
    if not sample:
        return None
    nul = sample.count(0)
    if nul >= MINIMUM_BAD_BYTES and nul > NUL_SHARE * len(sample):
        return f"{nul} NUL bytes in its first {len(sample):,} bytes"
    # A cut at the sample's end may split a character: decode what is whole.
    text = sample.decode("utf-8", errors="replace")
    if len(sample) == SAMPLE_BYTES:
        text = text.rstrip("\ufffd")
    invalid = text.count("\ufffd") - sample.count(_REPLACEMENT_UTF8)
    controls = len(sample) - len(sample.translate(None, _CONTROLS))
    bad = max(invalid, 0) + controls + nul
    if bad >= MINIMUM_BAD_BYTES and bad > NOT_TEXT_SHARE * len(sample):
        share = 100 * bad / len(sample)
        return f"{share:.0f}% of its first {len(sample):,} bytes are not UTF-8 text"
    return None


def decode_text(raw: bytes) -> tuple[str, int, str]:
    """The text of ``raw`` (not binary: see ``binary_reason``), the number of
    NUL characters removed, and the encoding used."""
    encoding = _bom_encoding(raw) or "utf-8-sig"
    text = raw.decode(encoding, errors="replace")
    nul = text.count("\x00")
    if nul:
        text = text.replace("\x00", "")
    return text, nul, "utf-8" if encoding == "utf-8-sig" else encoding


def read_text_file(path: Path) -> TextFile:
    """Read ``path`` by the module's rule; ``BinaryFileError`` if it is not
    text, ``OSError`` if it cannot be read."""
    raw = path.read_bytes()
    reason = binary_reason(raw)
    if reason is not None:
        raise BinaryFileError(f"not a text file: {reason}")
    text, nul, encoding = decode_text(raw)
    return TextFile(text, len(raw), nul, encoding)
