"""The ``sentence`` strategy."""

from __future__ import annotations

import itertools

import pytest

from fastnotebook import chunk
from fastnotebook.token_utils import token_count
from helpers.corpus import read, require_corpus
from helpers.invariants import check_records

TEXT = (
    'Dr. Watson arrived at 3.15 p.m. with Mr. Holmes. "Was it raining?" he asked. '
    "It was! The rain (heavy, cold.) fell all night... and then stopped. "
    "東京は晴れです。明日は雨\uff01Fine. e.g. this stays in one sentence. "
    "J. R. R. Tolkien wrote it."
)


def test_sentences_are_packed_whole() -> None:
    chunks = chunk(TEXT, "sentence", chunk_size=60)
    check_records(TEXT, chunks, max_size=60, length=len)
    assert [c.text for c in chunks] == [
        "Dr. Watson arrived at 3.15 p.m. with Mr. Holmes.",
        '"Was it raining?" he asked. It was!',
        "The rain (heavy, cold.) fell all night... and then stopped.",
        "東京は晴れです。明日は雨\uff01Fine. e.g. this stays in one sentence.",
        "J. R. R. Tolkien wrote it.",
    ]


def test_overlap_is_whole_sentences_within_the_budget() -> None:
    chunks = chunk(TEXT, "sentence", chunk_size=80, overlap=30)
    check_records(TEXT, chunks, max_size=80, length=len)
    shared = 0
    for a, b in itertools.pairwise(chunks):
        if b.start < a.end:
            shared += 1
            assert a.text.endswith(TEXT[b.start : a.end])
            assert len(TEXT[b.start : a.end]) <= 30
    assert shared >= 2


@pytest.mark.parametrize(
    ("size", "overlap", "unit"), [(300, 0, "chars"), (1000, 150, "chars"), (128, 32, "tokens")]
)
def test_sentence_corpus(size: int, overlap: int, unit: str) -> None:
    length = len if unit == "chars" else token_count
    for path in require_corpus("txt")[:80] + require_corpus("md")[:40]:
        text = read(path)
        chunks = chunk(text, "sentence", chunk_size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
        check_records(text, chunks, max_size=size, length=length)
