# ruff: noqa: RUF001 (the test strings are confusable characters on purpose)
"""Token counts and ids against Python tiktoken 0.14.0, for o200k_base and cl100k_base.

The reference encodings are built as ``tiktoken.get_encoding`` builds them
(``tiktoken_ext.openai_public``: pattern, special tokens), from the vocabulary
files that the tiktoken-rs crate ships (checked against OpenAI's published
SHA-256), since tiktoken cannot download them here: see
``fastnotebook.bench.reference.tiktoken_encoding``.
"""

from __future__ import annotations

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastnotebook import _core
from fastnotebook.token_utils import ENCODINGS
from helpers.corpus import corpus_files, read, repository_texts, tiktoken_reference


@pytest.fixture(scope="session")
def reference() -> dict[str, tiktoken.Encoding]:
    return {name: tiktoken_reference(name) for name in ENCODINGS}


def assert_same(reference: dict[str, tiktoken.Encoding], text: str) -> None:
    for name in ENCODINGS:
        expected = reference[name].encode(text, disallowed_special=())
        assert _core.encode_ordinary(text, name) == expected, (name, text[:200])
        assert _core.token_count(text, name) == len(expected), (name, text[:200])


def assert_same_counts(reference: dict[str, tiktoken.Encoding], texts: list[str]) -> int:
    for name in ENCODINGS:
        enc = reference[name]
        expected = [len(enc.encode(t, disallowed_special=())) for t in texts]
        assert _core.token_counts(texts, name) == expected, name
        assert [_core.token_count(t, name) for t in texts] == expected, name
        for text, n in zip(texts, expected, strict=True):
            ids = _core.encode_ordinary(text, name)
            assert len(ids) == n and ids == enc.encode_ordinary(text), name
    return len(texts)


# ---------------------------------------------------------------- documents


@pytest.mark.parametrize("kind", ["html", "md", "txt"])
def test_corpus(reference: dict[str, tiktoken.Encoding], kind: str) -> None:
    files = corpus_files(kind)
    if not files:
        pytest.skip(f"shared corpus folder {kind!r} not found (set FASTNOTEBOOK_CORPUS)")
    assert assert_same_counts(reference, [read(p) for p in files]) == len(files)


def test_repository_texts(reference: dict[str, tiktoken.Encoding]) -> None:
    texts = [read(p) for p in repository_texts()]
    assert texts
    assert_same_counts(reference, texts)


# ---------------------------------------------------------------- edge cases

EDGE_CASES = [
    "",
    " ",
    "hello world",
    "Hello World HELLO WORLD hELLO camelCaseWord XMLHttpRequest",
    # Special tokens are ordinary text with disallowed_special=().
    "<|endoftext|>",
    "<|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>c<|endofprompt|>",
    "x<|endoftext|>y <|endoftext|>\n<|endoftext|><|endoftext|>",
    # Contractions, case-insensitive as the regex crate folds them.
    "don't I'll we've they're she's he'd I'm",
    "DON'T I'LL WE'VE THEY'RE SHE'S HE'D I'M",
    "it'S it'ſ IT'ſ 'ſ 'S 's 'K 'K 'k 'T 'Re 'rE 'LL 'lL 'VE 'vE 'M 'D 'x",
    "ſ'ſ'ſ ǅ'S ǅemal A'B'C '' ''' 's's's",
    # Digits.
    "1 12 123 1234 12345 1234567890 3.14159 1,000,000 ٣٤٥ ⅷ ½ ²³ 𝟙𝟚𝟛",
    # Whitespace runs mixing line breaks and Unicode spaces.
    "a \r\n\t\u00a0\u3000\u2028 b",
    "\u00a0\u00a0x \u3000\u3000y\u2028\u2029z\u0085w\x0b\x0cv",
    "line\n\n\n  indented\r\n\r\n\ttab\n \n \n",
    "trailing spaces   ",
    "trailing newline\n",
    "   \n   ",
    "\n\n\n",
    "\r",
    # Punctuation and paths.
    "((((x)))) !!!\n\n/// a/b//c\n/ !\r\n/",
    "https://example.com/path/to?q=1&r=2#frag",
    "foo.bar_baz-qux::quux->corge",
    # Emoji, CJK, other scripts, combining marks.
    "😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷🇩🇪 ❤️",
    "中文字符串测试。日本語のテキスト、カタカナ。한국어 텍스트",
    "中A 中a Aa 中Ａ ＡＢＣａｂｃ",
    "Ελληνικά ΚΕΊΜΕΝΟ Кириллица ТЕКСТ עברית العربية हिन्दी ไทย",
    "e\u0301 \u0301e \u0301\u0302x A\u0308\u0308 !\u0301 \u0301 AB\u0301CD a\u0301B\u0301c",
    "ǅ Ǆ ǆ ᾈ ᾀ ʰʱ Aʰ aʰ ʰA 々〆 ªº",
    # Unicode 16.0 letters (letters to tiktoken 0.14.0) and 17.0 ones (not yet).
    "\u1c89\U00010d50\U00016100 \U00010940\U0001e6c0\U000323b0",
    "\ufffd\x00\x01\x7f\x80\x9f\u00ad\ue000\U0010ffff",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(reference: dict[str, tiktoken.Encoding], text: str) -> None:
    assert_same(reference, text)


@pytest.mark.parametrize(
    "text",
    [
        "\ud800",
        "a\udc00b",
        "\ud83d\ude00",  # a surrogate pair, joined as tiktoken joins it
        "x\ud83dy\ude00z",
        "\udcff" * 5 + "abc",
        "é\ud800中\U0001f600",
    ],
)
def test_surrogates(reference: dict[str, tiktoken.Encoding], text: str) -> None:
    assert_same(reference, text)
    assert _core.token_counts([text, text], "o200k_base") == [_core.token_count(text)] * 2


@pytest.mark.parametrize(
    "unit",
    ["a", "ab", " ", "\n", "\r\n", "\t", " \n", "1", "12345", "中", "😀", "!", "'s", "\u0301", "/"],
)
def test_long_runs(reference: dict[str, tiktoken.Encoding], unit: str) -> None:
    for n in (1, 2, 3, 7, 64, 1000, 20_000 // len(unit)):
        assert_same(reference, unit * n)
        assert_same(reference, "x " + unit * n + " y")


def test_where_tiktoken_gives_up(reference: dict[str, tiktoken.Encoding]) -> None:
    """A whitespace run of about a million characters that reaches the pattern's
    `\\s+(?!\\S)` overflows fancy-regex's backtracking stack: tiktoken raises
    ValueError. We count what the pattern defines: the run less its last space is
    one piece (as `\\s++$` makes it when the run ends the text), then " x"."""
    n = 1_000_100
    enc = reference["cl100k_base"]
    with pytest.raises(ValueError, match="backtracking"):
        enc.encode(" " * n + "x", disallowed_special=())
    expected = len(enc.encode(" " * (n - 1), disallowed_special=())) + len(enc.encode(" x"))
    assert _core.token_count(" " * n + "x", "cl100k_base") == expected
    ids = _core.encode_ordinary(" " * n + "x", "cl100k_base")
    assert ids == enc.encode(" " * (n - 1), disallowed_special=()) + enc.encode(" x")
    # Just below the limit both agree.
    assert_same(reference, " " * 999_998 + "x")


# ---------------------------------------------------------------- generated

# Every class the patterns tell apart, and the characters their special cases name.
ALPHABET = (
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2028\u2029\u3000"
    "aAbBzZsStTrReEvVmMlLdDkK'’/\\.,;:!?-_()[]{}<>|\"#$%&*+=@^`~"
    "0123456789٣⅛½²"
    "ſKǅǈʰˢ々〆ªºàÀßÿΩωЖж中文字가あア"
    "\u0301\u0302\u0308\u0903\u20dd\u064b"
    "😀👍\u200d\ufe0f\ufffd\x00\x7f\xad\U0010ffff\u1c89\U00010940"
    "\ud800\udc00\ud83d\ude00"
)

any_char = st.characters(exclude_categories=())  # all planes, surrogates included
texts = st.one_of(
    st.text(any_char, max_size=60),
    st.text(st.sampled_from(ALPHABET), max_size=60),
    st.lists(
        st.tuples(st.one_of(st.sampled_from(ALPHABET), any_char), st.integers(1, 12)),
        max_size=12,
    ).map(lambda runs: "".join(c * n for c, n in runs)),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_generated_text(reference: dict[str, tiktoken.Encoding], text: str) -> None:
    assert_same(reference, text)


@settings(max_examples=100, deadline=None)
@given(batch=st.lists(texts, max_size=20))
def test_generated_batches(reference: dict[str, tiktoken.Encoding], batch: list[str]) -> None:
    for name in ENCODINGS:
        enc = reference[name]
        expected = [len(enc.encode(t, disallowed_special=())) for t in batch]
        assert _core.token_counts(batch, name) == expected


# Words of ASCII letters read eight bytes at a time: runs of every length
# around 8 and 16, ending in every kind of byte (a letter of the other case,
# a contraction, non-ASCII letters and marks that continue the word, the end
# of the text), and after a space or punctuation prefix.
WORD_ENDS = ["", " ", "'s", "'LL", "’s", "é", "É", "\u0301", "ſ", "中", "1", ".", "\n", "A", "z"]
words = st.tuples(
    st.sampled_from(["", " ", ".", "\n", "\t", "é"]),
    st.text(st.sampled_from("ABCXYZ"), max_size=3),
    st.integers(0, 26),
    st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    st.sampled_from(WORD_ENDS),
).map(lambda w: w[0] + w[1] + w[3].lower() * w[2] + w[4])


@settings(max_examples=800, deadline=None)
@given(parts=st.lists(words, min_size=1, max_size=12))
def test_ascii_word_runs(reference: dict[str, tiktoken.Encoding], parts: list[str]) -> None:
    assert_same(reference, "".join(parts))
    # The same word at the end of the text, where fewer than 8 bytes remain.
    assert_same(reference, parts[0])


def test_piece_cache_hits_evictions_and_misses(reference: dict[str, tiktoken.Encoding]) -> None:
    """Pieces that are not tokens are counted once and then read from a
    per-thread cache: counts are the same on the first use (miss), on reuse
    (hit), and after more distinct pieces than the cache has slots have
    evicted them."""
    letters = "qxzjvkwy"
    rare = [" " + "".join(letters[(i >> (3 * k)) & 7] for k in range(6)) for i in range(40_000)]
    text = "".join(rare)
    first = [_core.token_count(w) for w in rare[:200]]
    assert _core.token_count(text) == len(reference["o200k_base"].encode(text))
    again = [_core.token_count(w) for w in rare[:200]]
    expected = [len(reference["o200k_base"].encode(w)) for w in rare[:200]]
    assert first == again == expected
    assert _core.token_count(text, "cl100k_base") == len(reference["cl100k_base"].encode(text))


# ---------------------------------------------------------------- Unicode data

CLASSES = {
    1: r"\p{L}",
    2: r"\p{N}",
    4: r"\s",
    8: r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    16: r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
}


# A test hook: built with the `test-hooks` cargo feature (`make build` enables
# it; release builds leave it out).
@pytest.mark.skipif(
    not hasattr(_core, "_token_char_classes"), reason="built without the test-hooks cargo feature"
)
def test_character_classes_are_tiktokens() -> None:
    """Every code point's classes equal those tiktoken's own regex engine matches.

    An encoding whose pattern is one class and whose vocabulary is the 256 bytes
    returns exactly the characters of the class (unmatched text is dropped).
    """
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    text = "".join(map(chr, cps))
    byte_ranks = {bytes([b]): b for b in range(256)}
    ours = _core._token_char_classes(0, 0x110000)
    for bit, pattern in CLASSES.items():
        probe = tiktoken.Encoding(
            f"probe{bit}", pat_str=pattern, mergeable_ranks=byte_ranks, special_tokens={}
        )
        matched = set(bytes(probe.encode_ordinary(text)).decode("utf-8"))
        wrong = [f"U+{c:04X}" for c in cps if (chr(c) in matched) != bool(ours[c] & bit)]
        assert not wrong, (pattern, wrong[:20], len(wrong))
    # Unicode 16.0 letters, and none of 17.0: the version tiktoken 0.14.0 has.
    assert all(ours[c] & 1 for c in (0x1C89, 0x10D50, 0x16100))
    assert not any(ours[c] for c in (0x10940, 0x1E6C0, 0x323B0))


# ---------------------------------------------------------------- API


def test_defaults_and_errors() -> None:
    assert _core.token_count("hello world") == _core.token_count("hello world", "o200k_base") == 2
    assert _core.encode_ordinary("hello world", "cl100k_base") == [15339, 1917]
    assert _core.token_counts([]) == []
    with pytest.raises(ValueError, match="o200k_base, cl100k_base"):
        _core.token_count("x", "gpt2")
    with pytest.raises(ValueError, match="o200k_base"):
        _core.token_counts(["x"], "p50k_base")
    with pytest.raises(ValueError):
        _core.encode_ordinary("x", "")
    for bad in (b"x", None, 1, ["x"]):
        with pytest.raises(TypeError):
            _core.token_count(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            _core.encode_ordinary(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _core.token_counts("abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _core.token_counts(["a", 1])  # type: ignore[list-item]
