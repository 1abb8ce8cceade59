"""Open Notebook's text preparation, rebuilt in plain Python from its documented
behaviour on the libraries it uses: the reference that fastnotebook's tests
and benchmarks compare against.

- ``chunk_text(..., unit="chars")``: the 1500/225-character version
  (lfnovo/open-notebook d8006ff5): langchain's header splitters for HTML and
  Markdown, the recursive character splitter for plain text and oversized
  pieces.
- ``chunk_text(..., unit="tokens")``: the current version: sizes in tokens
  (tiktoken length function), short-text rule and secondary split by token
  count, and the minimum-size rule.
- ``detect_content_type*``: the extension table and the regular-expression
  heuristics, with Python's ``re``.

Requires the ``reference`` extra (langchain-text-splitters, beautifulsoup4,
tiktoken, numpy).
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_text_splitters import (
    HTMLHeaderTextSplitter,
    MarkdownHeaderTextSplitter,
    RecursiveCharacterTextSplitter,
)

HTML, MARKDOWN, PLAIN = "html", "markdown", "plain"
SEPARATORS = ["\n\n", "\n", ". ", ", ", " ", ""]

_EXTENSIONS = {
    **dict.fromkeys([".html", ".htm", ".xhtml"], HTML),
    **dict.fromkeys([".md", ".markdown", ".mdown", ".mkd"], MARKDOWN),
    **dict.fromkeys(
        [
            ".txt",
            ".text",
            ".py",
            ".js",
            ".ts",
            ".java",
            ".c",
            ".cpp",
            ".go",
            ".rs",
            ".rb",
            ".php",
            ".sh",
            ".bash",
            ".zsh",
            ".sql",
            ".json",
            ".yaml",
            ".yml",
            ".xml",
            ".csv",
            ".tsv",
        ],
        PLAIN,
    ),
}


def detect_content_type_from_extension(file_path: Any) -> str | None:
    if not file_path:
        return None
    try:
        return _EXTENSIONS.get(Path(file_path).suffix.lower())
    except Exception:
        return None


def _html_score(text: str) -> float:
    score, indicators = 0.0, 0
    if re.search(r"<!DOCTYPE\s+html", text, re.IGNORECASE):
        score, indicators = score + 0.4, indicators + 1
    if re.search(r"<html[\s>]", text, re.IGNORECASE):
        score, indicators = score + 0.3, indicators + 1
    lowered = text.lower()
    for tag in ["<head", "<body", "<div", "<span", "<p>", "<table", "<form"]:
        if tag in lowered:
            score, indicators = score + 0.1, indicators + 1
            if indicators >= 5:
                break
    if re.search(r"<h[1-6][\s>]", text, re.IGNORECASE):
        score += 0.15
    if re.search(r"</\w+>", text):
        score += 0.1
    return min(score, 1.0)


def _markdown_score(text: str) -> float:
    score = 0.0
    headers = len(re.findall(r"^#{1,6}\s+.+", text, re.MULTILINE))
    score += 0.35 if headers >= 3 else 0.2 if headers >= 1 else 0.0
    links = len(re.findall(r"\[.+?\]\(.+?\)", text))
    score += 0.25 if links >= 2 else 0.15 if links == 1 else 0.0
    if re.search(r"^```", text, re.MULTILINE):
        score += 0.2
    if re.search(r"`[^`]+`", text):
        score += 0.1
    items = len(re.findall(r"^[\*\-\+]\s+", text, re.MULTILINE))
    items += len(re.findall(r"^\d+\.\s+", text, re.MULTILINE))
    score += 0.15 if items >= 3 else 0.08 if items >= 1 else 0.0
    if re.search(r"\*\*.+?\*\*|__.+?__", text):
        score += 0.1
    if re.search(r"^>\s+", text, re.MULTILINE):
        score += 0.1
    return min(score, 1.0)


def detect_content_type_from_heuristics(text: str) -> tuple[str, float]:
    if not text or len(text) < 10:
        return PLAIN, 0.5
    sample = text[:5000]
    html = _html_score(sample)
    if html >= 0.8:
        return HTML, html
    markdown = _markdown_score(sample)
    if markdown >= 0.8:
        return MARKDOWN, markdown
    if html > markdown and html > 0.3:
        return HTML, html
    if markdown > 0.3:
        return MARKDOWN, markdown
    return PLAIN, 0.6


def detect_content_type(text: str, file_path: Any = None) -> str:
    by_extension = detect_content_type_from_extension(file_path)
    heuristic, confidence = detect_content_type_from_heuristics(text)
    if by_extension is None:
        return heuristic
    if by_extension == PLAIN and confidence >= 0.8:
        return heuristic
    return by_extension


def _vocabulary_file(name: str) -> Path:
    """A ``.tiktoken`` vocabulary on this machine: in ``FASTNOTEBOOK_TIKTOKEN_DIR``,
    else the one the tiktoken-rs crate ships (in the cargo registry after a
    build of fastnotebook). Python tiktoken itself would download it."""
    folders = [os.environ.get("FASTNOTEBOOK_TIKTOKEN_DIR", "")]
    cargo = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    folders += sorted(glob.glob(str(cargo / "registry/src/*/tiktoken-rs-*/assets")), reverse=True)
    for folder in filter(None, folders):
        path = Path(folder) / f"{name}.tiktoken"
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no {name}.tiktoken vocabulary found offline: set FASTNOTEBOOK_TIKTOKEN_DIR to a folder "
        "holding it, or build fastnotebook once (cargo fetches tiktoken-rs, which ships it)"
    )


@functools.cache
def tiktoken_encoding(name: str = "o200k_base") -> Any:
    """Python tiktoken's encoding exactly as ``tiktoken.get_encoding`` builds it
    (pattern and special tokens from ``tiktoken_ext.openai_public``), with the
    vocabulary read from a local file after checking OpenAI's SHA-256."""
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    path = _vocabulary_file(name)

    def local_bpe(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if (
            expected_hash is not None
            and hashlib.sha256(path.read_bytes()).hexdigest() != expected_hash
        ):
            raise ValueError(f"{path} is not OpenAI's {blobpath}")
        ranks: dict[bytes, int] = tiktoken.load.load_tiktoken_bpe(str(path))
        return ranks

    # tiktoken's own constructor would download the file: run it with its
    # loader pointed at the local one.
    original = openai_public.load_tiktoken_bpe
    try:
        openai_public.load_tiktoken_bpe = local_bpe
        spec = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def token_counter(encoding: str = "o200k_base") -> Callable[[str], int]:
    enc = tiktoken_encoding(encoding)
    return lambda s: len(enc.encode(s, disallowed_special=()))


def chunk_text(
    text: str,
    content_type: str | None = None,
    file_path: Any = None,
    *,
    unit: str = "chars",
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    min_chunk_size: int = 5,
    encoding: str = "o200k_base",
) -> list[str]:
    """Open Notebook's ``chunk_text`` in the character or the token unit."""
    if unit == "chars":
        length: Callable[[str], int] = len
        size = 1500 if chunk_size is None else chunk_size
        overlap = 225 if chunk_overlap is None else chunk_overlap
    else:
        length = token_counter(encoding)
        size = 400 if chunk_size is None else chunk_size
        overlap = int(size * 0.15) if chunk_overlap is None else chunk_overlap
    if not text or not text.strip():
        return []
    if length(text) <= size:
        return [text]
    if content_type is None:
        content_type = detect_content_type(text, file_path)
    plain = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, length_function=length, separators=SEPARATORS
    )
    if content_type == HTML:
        headers = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]
        pieces = [d.page_content for d in HTMLHeaderTextSplitter(headers).split_text(text)]
    elif content_type == MARKDOWN:
        headers = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
        splitter = MarkdownHeaderTextSplitter(headers, strip_headers=False)
        pieces = [d.page_content for d in splitter.split_text(text)]
    else:
        pieces = plain.split_text(text)
    if content_type in (HTML, MARKDOWN):
        pieces = [
            sub
            for piece in pieces
            for sub in (plain.split_text(piece) if length(piece) > size else [piece])
        ]
    chunks = [c.strip() for c in pieces if c and c.strip()]
    if unit != "chars" and min_chunk_size > 0 and len(chunks) > 1:
        kept = [c for c in chunks if length(c) >= min_chunk_size]
        if kept:
            chunks = kept
    return chunks


# --- text_utils ---------------------------------------------------------------

THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
THINK_NO_OPEN = re.compile(r"^(.*?)</think>", re.DOTALL)


def remove_non_ascii(text: str) -> str:
    return re.sub(r"[^\x00-\x7F]+", "", text)


def remove_non_printable(text: str) -> str:
    import unicodedata

    text = re.sub(r"[\u2000-\u200B\u202F\u205F\u3000]", " ", text)
    text = re.sub(r"[\u2028\u2029\r]", "\n", text)
    text = "".join(c for c in text if unicodedata.category(c)[0] != "C" or c in "\n\t")
    text = text.replace("\xa0", " ").strip()
    return re.sub(r"[^\w\s.,!?\-\n\t]", "", text, flags=re.UNICODE)


def parse_thinking_content(content: Any) -> tuple[str, str]:
    if not isinstance(content, str):
        return "", str(content) if content is not None else ""
    if len(content) > 100000:
        return "", content
    matches = THINK.findall(content)
    if matches:
        thinking = "\n\n".join(m.strip() for m in matches)
        cleaned = re.sub(r"\n\s*\n\s*\n", "\n\n", THINK.sub("", content)).strip()
        return thinking, cleaned
    malformed = THINK_NO_OPEN.match(content)
    if malformed:
        return malformed.group(1).strip(), content[malformed.end() :].strip()
    return "", content


# --- embedding ------------------------------------------------------------------


async def mean_pool(embeddings: list[list[float]]) -> list[float]:
    """The original's numpy mean pooling, from Python lists."""
    import numpy as np

    if not embeddings:
        raise ValueError("Cannot mean pool empty list of embeddings")
    if len(embeddings) == 1:
        arr = np.array(embeddings[0], dtype=np.float64)
        norm = np.linalg.norm(arr)
        return list((arr / norm if norm > 0 else arr).tolist())
    arr = np.array(embeddings, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"Expected 2D array, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    mean = np.mean(arr / np.where(norms > 0, norms, 1.0), axis=0)
    mean_norm = np.linalg.norm(mean)
    return list((mean / mean_norm if mean_norm > 0 else mean).tolist())
