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
  a byte order mark are decoded as such. A file that is not valid UTF-8 is
  decoded with the encoding the caller names (``--encoding``), else with the
  one charset-normalizer detects (preferring the Windows code pages, cp1252
  first, among its best candidates), and the result says so in ``warning``; the
  invalid-UTF-8 share above then does not make it binary. When neither gives
  an encoding, bytes that are not UTF-8 become U+FFFD, also with a warning.
- NUL characters (U+0000) are removed, and the count reported: SurrealDB
  stores a string with NUL but cannot send it back ("to be serialized
  string contained a null byte"), so one such record made every read of
  its table fail. Every other character is kept.
"""

from __future__ import annotations

import codecs
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BinaryFileError",
    "SpecialFileError",
    "TextFile",
    "binary_reason",
    "check_encoding",
    "decode_text",
    "read_text_file",
    "special_kind",
    "text_file",
]

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
    #: Set when the file is not UTF-8: how it was decoded (for the summary).
    warning: str | None = None


def _bom_encoding(raw: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return encoding
    return None


def binary_reason(raw: bytes, count_invalid: bool = True) -> str | None:
    """Why ``raw`` is not text (e.g. "a PNG image"), or None if it is text.
    Unless ``count_invalid``, bytes that are not UTF-8 do not count (the
    file has a legacy encoding)."""
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
    invalid = 0
    if count_invalid:
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


def check_encoding(name: str) -> str:
    """``name`` if Python knows a text encoding by it; ``LookupError`` otherwise."""
    info = codecs.lookup(name)
    if not getattr(info, "_is_text_encoding", True):
        raise LookupError(f"{name} is not a text encoding")
    return name


_WINDOWS = tuple(f"cp125{n}" for n in range(9))


def _detect(raw: bytes) -> str | None:
    """The legacy encoding charset-normalizer finds for ``raw`` (its first
    64 KiB), or None. Short texts fit several code pages equally well, and
    its tie-break by language coherence often lands on a rare one (cp1006 or
    mac_cyrillic for plain French or Russian), so among the candidates with
    the least chaos cp1252 is taken first, then the first other Windows code
    page (cp1250-cp1258), and only then its own best."""
    from charset_normalizer import from_bytes

    matches = from_bytes(raw[:SAMPLE_BYTES])
    best = matches.best()
    if best is None:
        return None
    least = [name for m in matches if m.chaos == best.chaos for name in m.could_be_from_charset]
    windows = [name for name in least if name in _WINDOWS]
    if windows:
        return "cp1252" if "cp1252" in windows else windows[0]
    name = best.encoding
    return None if name in ("utf_8", "ascii") else name


def text_file(raw: bytes, encoding: str | None = None) -> TextFile:
    """The text of a file's bytes by the module's rule; ``BinaryFileError`` if
    it is not text. ``encoding`` is used for a file that is not UTF-8 (one
    with a byte order mark, or valid UTF-8, is always read as such)."""
    reason = binary_reason(raw, count_invalid=False)
    if reason is not None:
        raise BinaryFileError(f"not a text file: {reason}")
    warning = None
    used = _bom_encoding(raw) or "utf-8-sig"
    try:
        text = raw.decode(used, errors="strict" if used == "utf-8-sig" else "replace")
    except UnicodeDecodeError as e:
        if raw.startswith(codecs.BOM_UTF8):
            text = raw.decode(used, errors="replace")
        else:
            legacy = encoding or _detect(raw)
            if legacy is None:
                reason = binary_reason(raw)
                if reason is not None:
                    raise BinaryFileError(f"not a text file: {reason}") from None
                text = raw.decode(used, errors="replace")
                bad = text.count("\ufffd") - raw.count(_REPLACEMENT_UTF8)
                warning = (
                    f"not UTF-8 (byte {e.start}), no encoding detected: {bad} "
                    "bytes replaced by U+FFFD"
                )
            else:
                used = legacy
                text = raw.decode(legacy, errors="replace")
                how = "as --encoding says" if encoding else "detected"
                warning = f"not UTF-8: decoded as {legacy} ({how})"
    nul = text.count("\x00")
    if nul:
        text = text.replace("\x00", "")
    return TextFile(text, len(raw), nul, "utf-8" if used == "utf-8-sig" else used, warning)


def decode_text(raw: bytes, encoding: str | None = None) -> tuple[str, int, str]:
    """The text of ``raw`` (not binary: see ``binary_reason``) by the
    module's rule, the number of NUL characters removed, and the encoding
    used."""
    read = text_file(raw, encoding)
    return read.text, read.removed_nul, read.encoding


def read_text_file(path: Path, encoding: str | None = None) -> TextFile:
    """Read ``path`` by the module's rule; ``BinaryFileError`` if it is not
    text (``SpecialFileError`` if it is a FIFO, a device or a folder, refused
    without being opened: reading a FIFO waits forever), ``OSError`` if it
    cannot be read (a symlink loop included)."""
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        raise SpecialFileError(f"not a regular file: {special_kind(mode)}")
    return text_file(path.read_bytes(), encoding)


class SpecialFileError(BinaryFileError):
    """A path that is not a regular file (a FIFO, a socket, a device, a folder):
    skipped like a binary file, never opened."""


def special_kind(mode: int) -> str:
    """What a non-regular file is, from its ``st_mode``."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a special file"
