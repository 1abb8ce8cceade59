"""ChunkingConfig and set_chunking_config refuse a bad value when it is set,
with the rules (and wording) the OPEN_NOTEBOOK_* variables are held to, so
that no bad value reaches a later chunk_text call."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fastnotebook import chunking
from fastnotebook.chunking import ChunkingConfig, chunk_text, set_chunking_config


@pytest.fixture(autouse=True)
def environment_config() -> Iterator[None]:
    set_chunking_config(None)
    yield
    set_chunking_config(None)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"unit": "words"}, "unit must be 'chars' or 'tokens', got 'words'"),
        ({"chunk_size": 0}, r"chunk_size \(0\) must be a positive integer"),
        ({"unit": "tokens", "chunk_size": -1}, r"chunk_size \(-1\) must be a positive integer"),
        ({"chunk_size": 2.5}, "Invalid chunk_size value: 2.5"),
        ({"chunk_size": True}, "Invalid chunk_size value: True"),
        ({"chunk_overlap": -3}, r"chunk_overlap \(-3\) cannot be negative"),
        (
            {"chunk_size": 100, "chunk_overlap": 100},
            r"chunk_overlap \(100\) cannot be >= chunk size \(100\)",
        ),
        ({"min_chunk_size": -1}, r"min_chunk_size \(-1\) cannot be negative"),
        ({"unit": "tokens", "encoding": "gpt2"}, "unknown encoding 'gpt2'"),
        ({"encoding": "gpt2"}, "unknown encoding 'gpt2'"),
    ],
)
def test_bad_values_are_refused_when_set(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChunkingConfig(**fields)  # type: ignore[arg-type]
    before = chunking.get_chunking_config()
    with pytest.raises(ValueError, match=message):
        set_chunking_config(**fields)
    assert chunking.get_chunking_config() == before
    assert chunk_text("word " * 1000)  # still chunks with the previous configuration


def test_an_overlap_is_checked_against_the_size_it_meets() -> None:
    # The default sizes: 1500 characters, 400 tokens.
    with pytest.raises(
        ValueError, match=r"chunk_overlap \(1500\) cannot be >= chunk size \(1500\)"
    ):
        ChunkingConfig(chunk_overlap=1500).resolved()
    with pytest.raises(ValueError, match=r"chunk_overlap \(400\) cannot be >= chunk size \(400\)"):
        set_chunking_config(unit="tokens", chunk_overlap=400)
    base = ChunkingConfig(chunk_size=1000, chunk_overlap=200)
    with pytest.raises(ValueError, match="cannot be >= chunk size"):
        set_chunking_config(base, chunk_size=200)


def test_an_unset_overlap_is_fifteen_percent_of_the_size() -> None:
    assert ChunkingConfig().resolved().chunk_overlap == 225
    assert ChunkingConfig(chunk_size=100).resolved().chunk_overlap == 15
    assert ChunkingConfig(unit="tokens", chunk_size=200).resolved().chunk_overlap == 30
    set_chunking_config(chunk_size=100)
    chunks = chunk_text(" ".join(f"w{i}" for i in range(200)))
    assert max(map(len, chunks)) <= 100


def test_good_values_are_accepted() -> None:
    set_chunking_config(unit="tokens", chunk_size=120, chunk_overlap=0, min_chunk_size=0)
    assert chunking.get_chunking_config().resolved().chunk_size == 120
    set_chunking_config(ChunkingConfig(unit="chars", chunk_size=600, chunk_overlap=50))
    assert chunking.get_chunking_config().chunk_overlap == 50
