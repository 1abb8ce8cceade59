"""The chunk record and the shared post-processing (``fastnotebook.chunk``)."""

from __future__ import annotations

import asyncio
import copy
import pickle

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langchain_text_splitters import RecursiveCharacterTextSplitter

from fastnotebook import Chunk, achunk_many, chunk, chunk_many
from fastnotebook.token_utils import token_count
from helpers.corpus import read, require_corpus, tiktoken_reference
from helpers.invariants import check_grapheme_cuts, check_records, grapheme_boundaries

TEXT = (
    "Intro line with words.\n\nSecond paragraph, é ü and 😀 in it.\n"
    "A line.\n\n...\n\nThe last paragraph has a few more words than the others."
)


def test_record_fields() -> None:
    chunks = chunk(TEXT, chunk_size=40, doc_id="doc")
    check_records(TEXT, chunks, max_size=40, length=len)
    c = chunks[1]
    assert isinstance(c, Chunk)
    assert c.id.startswith("doc:")
    assert c.headings == ()
    assert c.metadata == {}
    assert c.embed_text == c.text
    assert c.token_count == token_count(c.text)
    with pytest.raises(AttributeError):
        c.text = "x"  # type: ignore[misc]


def test_ids_are_deterministic_and_follow_the_options() -> None:
    a = chunk(TEXT, chunk_size=40, doc_id="d")
    assert [c.id for c in a] == [c.id for c in chunk(TEXT, chunk_size=40, doc_id="d")]
    assert a[0].id != chunk(TEXT, chunk_size=41, doc_id="d")[0].id
    assert [c.id.split(":")[1] for c in a] != [c.id for c in chunk(TEXT, chunk_size=40)] or True
    assert all(":" not in c.id for c in chunk(TEXT, chunk_size=40))


def test_units_tokens_and_callable() -> None:
    by_tokens = chunk(TEXT, chunk_size=12, unit="tokens")
    check_records(TEXT, by_tokens, max_size=12, length=token_count)
    words = chunk(TEXT, chunk_size=6, unit=lambda s: len(s.split()))
    check_records(TEXT, words, max_size=6, length=lambda s: len(s.split()))

    def broken(s: str) -> int:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        chunk(TEXT, chunk_size=6, unit=broken)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        chunk(TEXT, "nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="overlap"):
        chunk(TEXT, chunk_size=10, overlap=10)
    with pytest.raises(ValueError, match="max_size"):
        chunk(TEXT, chunk_size=10, max_size=5)
    with pytest.raises(ValueError, match="unit"):
        chunk(TEXT, unit="words")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="encoding"):
        chunk(TEXT, encoding="gpt2")
    with pytest.raises(ValueError, match="context_headers"):
        chunk(TEXT, context_headers="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tokens"):
        chunk(TEXT, "token", chunk_size=10)
    with pytest.raises(TypeError):
        chunk_many(TEXT)


def test_post_processors_drop_and_change_then_relink() -> None:
    base = chunk(TEXT, chunk_size=40, doc_id="d")

    def drop_first(c: Chunk, i: int, chunks: object) -> Chunk | None:
        return None if i == 0 else c

    def shout(c: Chunk, i: int, chunks: object) -> Chunk:
        return c.replace(text=c.text.upper(), metadata={"n": i})

    out = chunk(TEXT, chunk_size=40, doc_id="d", post_processors=[drop_first, shout])
    assert [c.text for c in out] == [c.text.upper() for c in base[1:]]
    assert [c.index for c in out] == list(range(len(out)))
    assert out[0].prev_id is None and out[0].next_id == out[1].id
    assert out[0].metadata == {"n": 0}
    assert out[0].id != base[1].id
    assert all(c.token_count == token_count(c.text) for c in out)
    with pytest.raises(TypeError, match="expected a Chunk"):
        chunk(TEXT, post_processors=[lambda c, i, cs: "x"])  # type: ignore[list-item, return-value]


def test_replace_keeps_the_header_and_pickle_round_trips() -> None:
    c = Chunk("body", 0, 4, embed_text="Head\n\nbody", headings=["Head"])
    r = c.replace(text="new body")
    assert r.embed_text == "Head\n\nnew body" and r.char_count == 8
    assert pickle.loads(pickle.dumps(r)) == r
    assert copy.copy(r) == r
    assert r.to_dict()["headings"] == ["Head"]
    with pytest.raises(TypeError, match="no field"):
        c.replace(colour="red")  # type: ignore[call-arg]


def test_surrogates_survive() -> None:
    text = "alpha \ud800 beta " * 30
    chunks = chunk(text, chunk_size=50)
    check_records(text, chunks, max_size=50, length=len)


def test_batch_equals_one_call_per_text_and_async() -> None:
    texts = [TEXT, "", "  ", TEXT * 5, "short one"]
    ids = ["a", None, "c", "d", "e"]
    many = chunk_many(texts, chunk_size=40, doc_ids=ids)
    assert many == [chunk(t, chunk_size=40, doc_id=i) for t, i in zip(texts, ids, strict=True)]
    assert asyncio.run(achunk_many(texts, chunk_size=40, doc_ids=ids)) == many
    tokens = chunk_many(texts, "token", chunk_size=8, overlap=2, unit="tokens")
    assert tokens == [chunk(t, "token", chunk_size=8, overlap=2, unit="tokens") for t in texts]


def langchain(text: str, size: int, overlap: int) -> list[str]:
    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)


def folded(text: str, chunks: list[str], size: int, overlap: int) -> list[str]:
    """LangChain's chunks with the documented rule for those without a letter
    or digit: into the previous chunk if the result fits, else in front of
    the next if that fits, else dropped."""
    spans = []
    at = end = 0
    for c in chunks:
        start = text.index(c, at)
        # Each chunk takes in at least one split past the previous one: a
        # match inside the previous chunk (a "." in its overlap) is not it.
        while start + len(c) <= end:
            start = text.index(c, start + 1)
        end = start + len(c)
        spans.append([start, end])
        # The next chunk shares at most `overlap` characters with this one,
        # and starts where it does when all of it is that overlap.
        at = max(start, start + len(c) - overlap)
    out: list[list[int]] = []
    pending: list[int] | None = None
    for span in spans:
        degenerate = not any(ch.isalnum() for ch in text[span[0] : span[1]])
        if pending is not None:
            p, pending = pending, None
            if span[1] - p[0] <= size:
                span = [p[0], span[1]]
                if degenerate:
                    pending = span
                else:
                    out.append(span)
                continue
        if not degenerate:
            out.append(span)
        elif out and span[1] - out[-1][0] <= size:
            out[-1][1] = span[1]
        else:
            pending = span
    return [text[a:b] for a, b in out]


@pytest.mark.parametrize(("size", "overlap"), [(200, 0), (500, 50), (1500, 225)])
def test_recursive_equals_langchain_on_the_corpus(size: int, overlap: int) -> None:
    compared = 0
    for path in require_corpus("txt")[:60] + require_corpus("md")[:60]:
        text = read(path)
        expected = langchain(text, size, overlap)
        got = chunk(text, chunk_size=size, overlap=overlap)
        check_records(text, got, max_size=size, length=len)
        assert [c.text for c in got] == folded(text, expected, size, overlap), path.name
        compared += expected == [c.text for c in got]
    # Most documents have no chunk without a letter or digit.
    assert compared > 60


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab c\n\n.é😀"), max_size=400),
    st.integers(4, 60),
    st.integers(0, 3),
)
# A first chunk that is all overlap: LangChain's second chunk starts with it.
@example("  a aaaa", 7, 3)
# A chunk of punctuation whose text also ends the previous chunk.
@example("aa. . aa", 4, 3)
def test_recursive_equals_langchain_on_generated_text(text: str, size: int, tenth: int) -> None:
    overlap = size * tenth // 10
    expected = langchain(text, size, overlap)
    got = chunk(text, chunk_size=size, overlap=overlap)
    check_records(text, got, max_size=size, length=len)
    assert [c.text for c in got] == folded(text, expected, size, overlap)


def tiktoken_windows(text: str, size: int, overlap: int) -> list[tuple[int, int, bytes]]:
    """tiktoken's sliding window: each window's bytes, and its span in code
    points widened to whole characters; a window inside the previous one's
    span (a character of several tokens) left out."""
    enc = tiktoken_reference("o200k_base")
    data = text.encode("utf-8", "surrogatepass")
    ids = enc.encode_ordinary(text)
    offsets = [0]
    for t in ids:
        offsets.append(offsets[-1] + len(enc.decode_single_token_bytes(t)))
    # Code point index of each UTF-8 byte offset, rounded down.
    char_at = []
    for i, ch in enumerate(text):
        char_at.extend([i] * len(ch.encode("utf-8", "surrogatepass")))
    char_at.append(len(text))

    def floor(b: int) -> int:
        return char_at[b]

    def ceil(b: int) -> int:
        return (
            char_at[b]
            if b == len(data) or b == 0 or char_at[b - 1] != char_at[b]
            else char_at[b] + 1
        )

    out: list[tuple[int, int, bytes]] = []
    first = 0
    while first < len(ids):
        last = min(first + size, len(ids))
        span = (floor(offsets[first]), ceil(offsets[last]))
        if not out or not (out[-1][0] <= span[0] and span[1] <= out[-1][1]):
            out.append((*span, data[offsets[first] : offsets[last]]))
        if last == len(ids):
            break
        first += size - overlap
    return out


def folded_windows(
    text: str, windows: list[tuple[int, int, bytes]], size: int
) -> list[tuple[int, int, bytes | None]]:
    """The shared post-processing's rule for windows without a letter or
    digit: into the previous window when the joined text still counts at most
    ``size`` tokens, else in front of the next one on the same condition,
    else dropped. A window that grew has no tiktoken bytes to compare."""

    def fits(start: int, end: int) -> bool:
        return token_count(text[start:end], "o200k_base") <= size

    out: list[tuple[int, int, bytes | None]] = []
    pending: tuple[int, int] | None = None
    for start, end, window in windows:
        degenerate = not any(ch.isalnum() for ch in text[start:end])
        item: tuple[int, int, bytes | None] = (start, end, window)
        if pending is not None:
            if fits(pending[0], end):
                item = (min(start, pending[0]), end, None)
            pending = None
            if degenerate and item[2] is None:
                pending = (item[0], item[1])
                continue
        if not degenerate:
            out.append(item)
        elif out and fits(out[-1][0], end):
            out[-1] = (out[-1][0], end, None)
        else:
            pending = (item[0], item[1])
    return out


def check_token_windows(text: str, size: int, overlap: int) -> None:
    got = chunk(text, "token", chunk_size=size, overlap=overlap, unit="tokens")
    expected = folded_windows(text, tiktoken_windows(text, size, overlap), size)
    boundaries = grapheme_boundaries(text)
    if not all(
        a in boundaries and b in boundaries and token_count(text[a:b]) <= size
        for a, b, _ in expected
    ):
        # A window cuts a grapheme cluster or counts more than the size on
        # its own: it moves (``test_chunk_boundaries.py`` checks the rule).
        check_grapheme_cuts(text, got, max_size=size, length=token_count)
        return
    assert [(c.start, c.end) for c in got] == [(a, b) for a, b, _ in expected]
    for c, (_, _, window) in zip(got, expected, strict=True):
        assert text[c.start : c.end] == c.text
        if window is not None and c.text.isascii():
            assert c.text.encode() == window


@pytest.mark.parametrize(("size", "overlap"), [(64, 0), (128, 32), (512, 64)])
def test_token_equals_a_tiktoken_window_on_the_corpus(size: int, overlap: int) -> None:
    for path in require_corpus("txt")[:40] + require_corpus("md")[:40]:
        check_token_windows(read(path), size, overlap)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(2, 40), st.integers(0, 1))
@example(text="0?&A:", size=2, half=0)  # a last window of punctuation folded into the previous
def test_token_equals_a_tiktoken_window_on_generated_text(text: str, size: int, half: int) -> None:
    check_token_windows(text, size, size // 2 * half)
