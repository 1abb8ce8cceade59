"""Where chunks are cut (``fastnotebook.chunk``): between extended grapheme
clusters, and within the hard maximum by the chunk's own count."""

from __future__ import annotations

import html
import itertools
import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastnotebook import chunk
from fastnotebook.chunkers import html_text
from fastnotebook.token_utils import token_count
from helpers.invariants import check_grapheme_cuts, check_records, grapheme_boundaries

#: Pieces of text from many scripts: clusters of several code points (and
#: marks on their own, which cluster with whatever precedes them).
PIECES = [
    # Latin with combining marks
    "e\u0301",
    "a\u0308\u0304",
    "n\u0303",
    "\u0301",
    "word",
    "Z",
    # emoji: ZWJ sequences, a skin tone, a variation selector, flags
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f3f3\ufe0f\u200d\U0001f308",
    "\U0001f44d\U0001f3fd",
    "\U0001f1eb\U0001f1f7",
    "\U0001f1e9",
    "\u200d",
    # Devanagari: conjuncts and vowel signs
    "\u0915\u094d\u0937",
    "\u0939\u093f",
    "\u0928\u094d\u0926\u0940",
    "\u093f",
    "\u094d",
    # Thai: vowels and tone marks
    "\u0e20\u0e32",
    "\u0e44\u0e17",
    "\u0e22",
    "\u0e31",
    "\u0e48",
    "\u0e33",
    # Hangul: conjoining jamo and a syllable
    "\u1100\u1161\u11a8",
    "\u1112\u1161",
    "\u11ab",
    "\ud55c",
    # Hebrew with niqqud and cantillation marks
    "\u05d1\u05b0\u05bc",
    "\u05e8\u05b5",
    "\u05e9\u05c1",
    "\u05b4",
    "\u059e",
    "\u05ea",
    # separators
    " ",
    " ",
    "\n",
    "\n\n",
    "\r\n",
    ". ",
    ", ",
    "# ",
]

texts = st.lists(st.sampled_from(PIECES), max_size=160).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    texts,
    st.sampled_from(["recursive", "markdown", "sentence", "token"]),
    st.sampled_from(["chars", "tokens"]),
    st.integers(2, 40),
    st.integers(0, 3),
)
@example("\u05d1\u059e x", "token", "tokens", 2, 0)
@example("ab\u0301c", "recursive", "chars", 2, 0)
def test_cuts_fall_between_grapheme_clusters(
    text: str, strategy: str, unit: str, size: int, tenth: int
) -> None:
    if strategy == "token":
        unit = "tokens"
    length = len if unit == "chars" else token_count
    chunks = chunk(text, strategy, chunk_size=size, unit=unit, overlap=size * tenth // 10)  # type: ignore[arg-type]
    check_grapheme_cuts(text, chunks, max_size=size, length=length)
    if unit == "chars":
        # In characters, no chunk exceeds the size: the usual invariants too.
        check_records(text, chunks, max_size=size, length=length)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=4), st.integers(3, 40))
def test_html_cuts_fall_between_grapheme_clusters(paragraphs: list[str], size: int) -> None:
    document = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    chunks = chunk(document, "html", chunk_size=size)
    check_grapheme_cuts(html_text(document), chunks, max_size=size, length=len)


def hebrew_with_marks(words: int, seed: int = 0) -> str:
    """Pointed Hebrew words (letters with niqqud and cantillation marks), as in
    vim's ``mbyte.txt``."""
    rng = random.Random(seed)
    letters = [chr(c) for c in range(0x05D0, 0x05EB)]
    marks = [chr(c) for c in (*range(0x0591, 0x05BE), 0x05BF, 0x05C1, 0x05C2, 0x05C4, 0x05C5)]
    return " ".join(
        "".join(
            rng.choice(letters) + "".join(rng.choice(marks) for _ in range(rng.randint(0, 2)))
            for _ in range(rng.randint(1, 6))
        )
        for _ in range(words)
    )


def test_token_windows_keep_the_maximum_on_pointed_hebrew() -> None:
    """Windows of 400 tokens with an overlap of 40 used to start between a
    letter and its mark (``ב|֞``): the detached mark encodes differently and
    the chunk counted 401 tokens."""
    text = hebrew_with_marks(600)
    chunks = chunk(text, "token", chunk_size=400, unit="tokens", overlap=40)
    assert len(chunks) > 10
    counts = [token_count(c.text) for c in chunks]
    assert max(counts) <= 400, counts
    assert [c.token_count for c in chunks] == counts
    boundaries = grapheme_boundaries(text)
    assert all(c.start in boundaries and c.end in boundaries for c in chunks)
    # Nothing is lost: consecutive windows overlap or touch.
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert all(b.start <= a.end for a, b in itertools.pairwise(chunks))


def test_a_cluster_above_the_maximum_is_cut_inside() -> None:
    # One cluster of 13 code points (a letter and 12 marks) at 5 characters:
    # only it is cut inside, after as many characters as fit; the middle
    # piece, marks alone without a letter or digit, has no room in a
    # neighbour and is dropped (the shared rule for such pieces).
    text = "ab " + "e" + "\u0301" * 12 + "x cd"
    chunks = chunk(text, chunk_size=5)
    assert [(c.start, c.end) for c in chunks] == [(0, 2), (3, 8), (13, 17), (18, 20)]
    assert chunks[1].text == "e" + "\u0301" * 4
    check_grapheme_cuts(text, chunks, max_size=5, length=len)
