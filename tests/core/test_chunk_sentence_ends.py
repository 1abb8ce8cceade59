"""The ``recursive`` strategy's ``keep_separator`` and ``SENTENCE_SEPARATORS``
(docs/strategies.md, "Sentence ends"): a separator kept at the end of the
piece before it, LangChain's ``keep_separator="end"``; the default unchanged."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastnotebook import chunk, chunk_many
from fastnotebook.bench import quality
from fastnotebook.chunkers import SENTENCE_SEPARATORS
from fastnotebook.token_utils import token_count
from helpers.invariants import check_records

TEXT = (
    "The river rose in the night. Nobody in the village heard it? The dog did! "
    "By morning the fields were a lake.\n\n"
    "A second paragraph follows here. It has two sentences and a few more words.\n"
    "A line of its own without an end"
)


def sentence_ends(text: str, size: int, unit: str = "chars") -> list[str]:
    chunks = chunk(
        text,
        "recursive",
        chunk_size=size,
        unit=unit,  # type: ignore[arg-type]
        separators=SENTENCE_SEPARATORS,
        keep_separator="end",
    )
    return [c.text for c in chunks]


def test_a_sentence_keeps_its_punctuation() -> None:
    assert sentence_ends(TEXT, 70) == [
        "The river rose in the night.",
        "Nobody in the village heard it?",
        "The dog did! By morning the fields were a lake.",
        "A second paragraph follows here.",
        "It has two sentences and a few more words.",
        "A line of its own without an end",
    ]
    # Kept at the start, as LangChain's default, the punctuation opens the
    # next chunk instead.
    starts = chunk(TEXT, "recursive", chunk_size=70, separators=SENTENCE_SEPARATORS)
    assert [c.text for c in starts][:3] == [
        "The river rose in the night",
        ". Nobody in the village heard it",
        "? The dog did! By morning the fields were a lake.",
    ]


def test_chunks_are_langchains_with_keep_separator_end() -> None:
    lc = pytest.importorskip("langchain_text_splitters")
    text = (TEXT + " ") * 40
    for size in (40, 90, 300):
        splitter = lc.RecursiveCharacterTextSplitter(
            chunk_size=size,
            chunk_overlap=0,
            separators=list(SENTENCE_SEPARATORS),
            keep_separator="end",
        )
        assert sentence_ends(text, size) == splitter.split_text(text)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Alpha", "beta", "gamma.", "delta?", "epsilon!", "\n", "\n\n", "ζ"]),
        max_size=120,
    ).map(" ".join),
    st.integers(8, 80),
)
def test_records_hold_the_invariants(text: str, size: int) -> None:
    chunks = chunk(
        text, "recursive", chunk_size=size, separators=SENTENCE_SEPARATORS, keep_separator="end"
    )
    check_records(text, chunks, max_size=size, length=len)
    for c in chunks:
        assert not re.match(r"[.?!]", c.text)  # no chunk opens with the previous one's end


def test_tokens_and_batches() -> None:
    texts = [TEXT * 5, "Short. Text."]
    many = chunk_many(
        texts,
        "recursive",
        chunk_size=30,
        unit="tokens",
        separators=SENTENCE_SEPARATORS,
        keep_separator="end",
    )
    one = [
        chunk(
            t,
            "recursive",
            chunk_size=30,
            unit="tokens",
            separators=SENTENCE_SEPARATORS,
            keep_separator="end",
        )
        for t in texts
    ]
    assert many == one
    assert all(token_count(c.text) <= 30 for c in many[0])


def test_the_default_and_its_ids_are_unchanged() -> None:
    plain = chunk(TEXT, "recursive", chunk_size=70)
    assert chunk(TEXT, "recursive", chunk_size=70, keep_separator="start") == plain
    ends = chunk(TEXT, "recursive", chunk_size=70, keep_separator="end")
    # Whitespace separators are stripped either way: the same texts, other ids.
    assert [c.text for c in ends] == [c.text for c in plain]
    assert [c.id for c in ends] != [c.id for c in plain]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"keep_separator": "middle"}, "keep_separator must be 'start' or 'end'"),
        ({"keep_separator": "end", "strategy": "markdown"}, "'recursive' strategy only"),
        ({"keep_separator": "end", "strategy": "sentence"}, "'recursive' strategy only"),
    ],
)
def test_mistakes(options: dict[str, str], message: str) -> None:
    strategy = options.pop("strategy", "recursive")
    with pytest.raises(ValueError, match=message):
        chunk(TEXT, strategy, **options)  # type: ignore[arg-type]


def test_the_evaluation_names_the_preset() -> None:
    config = quality.parse("recursive,separators=sentences")
    assert config.name == "fastnotebook recursive default"
    sized = quality.grid([config], sizes=[200], overlaps=[0])[0]
    assert sized.name == "fastnotebook recursive 200 tokens, separators=sentences"
    spans = sized.splitter()(TEXT)
    expected = [(c.start, c.end) for c in chunk(TEXT, "recursive", chunk_size=200, unit="tokens",
                                                encoding="cl100k_base",
                                                separators=SENTENCE_SEPARATORS,
                                                keep_separator="end")]  # fmt: skip
    assert spans == expected
    for bad in ("markdown,separators=sentences", "recursive,separators=words"):
        with pytest.raises(ValueError, match="separators=sentences"):
            quality.parse(bad)
