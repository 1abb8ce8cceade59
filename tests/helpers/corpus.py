"""The shared corpus, the repository's own texts and the tiktoken reference."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tiktoken

ROOT = Path(__file__).resolve().parents[2]

CORPUS = Path(os.environ.get("FASTNOTEBOOK_CORPUS", ROOT.parent / "shared" / "corpus"))
KINDS = {"html": "html", "md": "markdown", "txt": "plain"}


def corpus_files(kind: str) -> list[Path]:
    """The shared corpus documents of one kind (html, md, txt); [] if absent."""
    folder = CORPUS / kind
    return sorted(folder.iterdir()) if folder.is_dir() else []


def require_corpus(kind: str) -> list[Path]:
    files = corpus_files(kind)
    if not files:
        pytest.skip(f"shared corpus not found at {CORPUS / kind} (set FASTNOTEBOOK_CORPUS)")
    return files


def tiktoken_reference(name: str) -> tiktoken.Encoding:
    """Python tiktoken with the vocabulary the tiktoken-rs crate ships. Without
    those files (no cargo build yet) the test is skipped, except under CI,
    where a build always precedes the tests and a missing file is a failure."""
    from fastnotebook.bench.reference import tiktoken_encoding

    try:
        return tiktoken_encoding(name)
    except FileNotFoundError as err:
        if os.environ.get("CI"):
            pytest.fail(str(err))
        pytest.skip(str(err))


def repository_texts() -> list[Path]:
    """The repository's own text files: docs, sources, configuration."""
    suffixes = {".md", ".py", ".rs", ".toml", ".txt", ".pyi", ".yml", ".yaml", ".json"}
    skip = {".git", ".venv", "target", "__pycache__", ".hypothesis", "node_modules"}
    found = []
    for path in ROOT.rglob("*"):
        if path.is_file() and path.suffix in suffixes and not skip & set(path.parts):
            found.append(path)
    return sorted(found)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="surrogateescape")
