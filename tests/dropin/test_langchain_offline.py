"""fastnotebook.langchain's token classes offline: tiktoken gets the
vocabularies built into the extension and downloads nothing; the splits are
LangChain's (its classes run on the reference encodings)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import langchain_text_splitters as lc
import pytest
import tiktoken
import tiktoken.registry

from fastnotebook import langchain as fl
from helpers.corpus import tiktoken_reference

TEXT = (
    "# Title\n\nSome text here, with words that split into several tokens: "
    "unbelievably, antidisestablishmentarianism. Café, naïve, 😀 and ב֞.\n\n"
    "def f(x):\n    return x\n\n"
) * 20


def _splits() -> list[tuple[str, Any, dict[str, Any]]]:
    """(class, constructor, keyword arguments) of the token classes."""
    return [
        ("TokenTextSplitter", "init", {"encoding_name": "o200k_base"}),
        ("TokenTextSplitter", "init", {"model_name": "gpt-4"}),
        ("TokenTextSplitter", "from_tiktoken_encoder", {"encoding_name": "cl100k_base"}),
        ("RecursiveCharacterTextSplitter", "from_tiktoken_encoder", {"model_name": "gpt-4o"}),
        ("CharacterTextSplitter", "from_tiktoken_encoder", {"encoding_name": "o200k_base"}),
        ("MarkdownTextSplitter", "from_tiktoken_encoder", {"encoding_name": "cl100k_base"}),
    ]


def _split(module: Any, name: str, how: str, kwargs: dict[str, Any]) -> list[str]:
    cls = getattr(module, name)
    sizes = {"chunk_size": 60, "chunk_overlap": 10}
    if how == "init":
        splitter = cls(**kwargs, **sizes)
    else:
        splitter = cls.from_tiktoken_encoder(**kwargs, **sizes)
    chunks: list[str] = splitter.split_text(TEXT)
    return chunks


@pytest.fixture
def expected() -> list[list[str]]:
    """LangChain's own classes on the reference encodings."""
    for name in ("o200k_base", "cl100k_base"):
        tiktoken.registry.ENCODINGS.setdefault(name, tiktoken_reference(name))
    return [_split(lc, *split) for split in _splits()]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No encoding loaded, an empty tiktoken cache and no network."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network blocked by the test")

    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield
    assert not any(tmp_path.iterdir()), "tiktoken wrote to its cache"


def test_token_classes_split_offline_as_langchain(expected: list[list[str]], offline: None) -> None:
    got = [_split(fl, *split) for split in _splits()]
    assert got == expected
    # tiktoken's registry holds the built-in vocabularies: the same encodings.
    for name in ("o200k_base", "cl100k_base"):
        ours, reference = tiktoken.get_encoding(name), tiktoken_reference(name)
        assert ours._mergeable_ranks == reference._mergeable_ranks
        assert ours._pat_str == reference._pat_str
        assert ours._special_tokens == reference._special_tokens


def test_other_encodings_are_left_to_tiktoken(offline: None) -> None:
    # gpt2 is not built in: tiktoken tries to download it, and fails offline.
    with pytest.raises(OSError):
        fl.TokenTextSplitter(encoding_name="gpt2")
