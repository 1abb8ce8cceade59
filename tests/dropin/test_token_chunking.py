"""Token-sized chunking equals Open Notebook's current pipeline (langchain with
a tiktoken length function), and its configuration behaves as the original's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loguru import logger

from fastnotebook import chunking, chunking_config, token_utils
from fastnotebook.bench import reference
from fastnotebook.chunking import ChunkingConfig, ContentType, chunk_text, chunk_texts
from helpers.corpus import KINDS, read, repository_texts, require_corpus, tiktoken_reference
from helpers.documents import documents

CT = {"html": ContentType.HTML, "markdown": ContentType.MARKDOWN, "plain": ContentType.PLAIN}


@pytest.fixture(autouse=True)
def clean_config(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "OPEN_NOTEBOOK_CHUNK_SIZE",
        "OPEN_NOTEBOOK_CHUNK_OVERLAP",
        "OPEN_NOTEBOOK_MIN_CHUNK_SIZE",
        "FASTNOTEBOOK_CHUNK_UNIT",
        "FASTNOTEBOOK_ENCODING",
    ):
        monkeypatch.delenv(name, raising=False)
    chunking.set_chunking_config(None)
    chunking_config.token_sizes_from_env.cache_clear()
    yield
    # The environment as it was before the test, then the configuration read
    # from it: read before the undo, a test's variables would outlive it.
    monkeypatch.undo()
    chunking.set_chunking_config(None)
    chunking_config.token_sizes_from_env.cache_clear()


@pytest.fixture(scope="module", autouse=True)
def tiktoken_available() -> None:
    tiktoken_reference("o200k_base")


@pytest.mark.parametrize("kind", ["html", "md", "txt"])
def test_corpus_token_chunks_match_the_original(kind: str) -> None:
    for path in require_corpus(kind):
        text = read(path)
        expected = reference.chunk_text(text, KINDS[kind], unit="tokens")
        assert chunk_text(text, CT[KINDS[kind]], unit="tokens") == expected, path.name


def test_repository_files_match_in_tokens() -> None:
    for path in repository_texts():
        text = read(path)
        for kind in ("markdown", "plain"):
            expected = reference.chunk_text(text, kind, unit="tokens", chunk_size=100)
            chunking.set_chunking_config(unit="tokens", chunk_size=100)
            assert chunk_text(text, CT[kind]) == expected, path.name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from(["markdown", "plain", None]), st.sampled_from([100, 137, 400]))
def test_generated_documents_match_in_tokens(text: str, kind: str | None, size: int) -> None:
    expected = reference.chunk_text(text, kind, unit="tokens", chunk_size=size)
    chunking.set_chunking_config(unit="tokens", chunk_size=size)
    assert chunk_text(text, None if kind is None else CT[kind]) == expected


def test_surrogates_are_counted_as_tiktoken_counts_them() -> None:
    text = "caf\udce9 \ud83d\ude00 " * 600 + "\ud800 lone " * 300
    expected = reference.chunk_text(text, "plain", unit="tokens")
    assert chunk_text(text, ContentType.PLAIN, unit="tokens") == expected


def test_minimum_size_drops_tiny_chunks_unless_none_would_remain() -> None:
    text = "word " * 600 + "\n\n" + "." + "\n\n" + "word " * 600
    with_min = chunk_text(text, ContentType.PLAIN, unit="tokens")
    assert "." not in with_min
    assert with_min == reference.chunk_text(text, "plain", unit="tokens")
    chunking.set_chunking_config(unit="tokens", min_chunk_size=0)
    assert "." in chunk_text(text, ContentType.PLAIN)


def test_environment_sizes_are_validated_as_the_original(monkeypatch: pytest.MonkeyPatch) -> None:
    messages: list[str] = []
    sink = logger.add(lambda m: messages.append(m.record["message"]), level="INFO")
    try:
        cases = [
            ({"OPEN_NOTEBOOK_CHUNK_SIZE": "50"}, (100, 15, 5), "is too small"),
            ({"OPEN_NOTEBOOK_CHUNK_SIZE": "9000"}, (9000, 1350, 5), "is very large"),
            ({"OPEN_NOTEBOOK_CHUNK_SIZE": "abc"}, (400, 60, 5), "Invalid OPEN_NOTEBOOK_CHUNK_SIZE"),
            ({"OPEN_NOTEBOOK_CHUNK_OVERLAP": "-3"}, (400, 0, 5), "cannot be negative"),
            ({"OPEN_NOTEBOOK_CHUNK_OVERLAP": "400"}, (400, 60, 5), "cannot be >= chunk size"),
            (
                {"OPEN_NOTEBOOK_CHUNK_OVERLAP": "x"},
                (400, 60, 5),
                "Invalid OPEN_NOTEBOOK_CHUNK_OVERLAP",
            ),
            ({"OPEN_NOTEBOOK_MIN_CHUNK_SIZE": "-1"}, (400, 60, 0), "cannot be negative"),
            (
                {"OPEN_NOTEBOOK_MIN_CHUNK_SIZE": ""},
                (400, 60, 5),
                "Invalid OPEN_NOTEBOOK_MIN_CHUNK_SIZE",
            ),
            (
                {"OPEN_NOTEBOOK_CHUNK_SIZE": "200", "OPEN_NOTEBOOK_CHUNK_OVERLAP": "20"},
                (200, 20, 5),
                None,
            ),
        ]
        for env, sizes, message in cases:
            for name in (
                "OPEN_NOTEBOOK_CHUNK_SIZE",
                "OPEN_NOTEBOOK_CHUNK_OVERLAP",
                "OPEN_NOTEBOOK_MIN_CHUNK_SIZE",
            ):
                monkeypatch.delenv(name, raising=False)
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            chunking.set_chunking_config(None)  # reads the environment again
            messages.clear()
            config = ChunkingConfig(unit="tokens").resolved()
            assert (config.chunk_size, config.chunk_overlap, config.min_chunk_size) == sizes, env
            if message:
                assert any(message in m for m in messages), (env, messages)
    finally:
        logger.remove(sink)


def test_environment_sizes_apply_to_token_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPEN_NOTEBOOK_CHUNK_SIZE", "120")
    monkeypatch.setenv("FASTNOTEBOOK_CHUNK_UNIT", "tokens")
    text = "A sentence of a few tokens. " * 300
    # The environment is read at import and when going back to it.
    assert chunk_text(text, ContentType.PLAIN) == reference.chunk_text(text, "plain")
    chunking.set_chunking_config(None)
    expected = reference.chunk_text(text, "plain", unit="tokens", chunk_size=120)
    assert chunk_text(text, ContentType.PLAIN) == expected
    # The character unit ignores them.
    assert chunk_text(text, ContentType.PLAIN, unit="chars") == reference.chunk_text(text, "plain")


def test_unit_selection() -> None:
    text = "token " * 2000
    chars = chunk_text(text, ContentType.PLAIN)
    tokens = chunk_text(text, ContentType.PLAIN, unit="tokens")
    assert chars != tokens
    assert chunking.get_chunking_config().unit == "chars"
    chunking.set_chunking_config(unit="tokens")
    assert chunk_text(text, ContentType.PLAIN) == tokens
    assert chunk_texts([text, "short"]) == [tokens, ["short"]]
    chunking.set_chunking_config(None)
    assert chunk_text(text, ContentType.PLAIN) == chars
    with pytest.raises(ValueError, match="unit must be"):
        chunking.set_chunking_config(unit="words")
    with pytest.raises(ValueError, match="unknown encoding"):
        chunking.set_chunking_config(unit="tokens", encoding="gpt2")


def test_encoding_choice_follows_token_utils(monkeypatch: pytest.MonkeyPatch) -> None:
    # The two encodings chunk it differently (Cyrillic costs more tokens in cl100k).
    text = "Привет, как дела? Всё хорошо. " * 300
    monkeypatch.setenv("FASTNOTEBOOK_ENCODING", "cl100k_base")
    chunking.set_chunking_config(unit="tokens")
    expected = reference.chunk_text(text, "plain", unit="tokens", encoding="cl100k_base")
    assert expected != reference.chunk_text(text, "plain", unit="tokens")
    assert chunk_text(text, ContentType.PLAIN) == expected


def test_default_encoding_set_in_code_applies_at_once() -> None:
    # The two encodings chunk it differently (Cyrillic costs more tokens in cl100k).
    text = "Привет, как дела? Всё хорошо. " * 300
    o200k = reference.chunk_text(text, "plain", unit="tokens")
    cl100k = reference.chunk_text(text, "plain", unit="tokens", encoding="cl100k_base")
    assert o200k != cl100k
    assert chunk_text(text, ContentType.PLAIN, unit="tokens") == o200k
    token_utils.set_default_encoding("cl100k_base")
    try:
        assert chunk_text(text, ContentType.PLAIN, unit="tokens") == cl100k
    finally:
        token_utils.set_default_encoding(None)
    assert chunk_text(text, ContentType.PLAIN, unit="tokens") == o200k


def test_an_explicit_unit_needs_no_valid_unit_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FASTNOTEBOOK_CHUNK_UNIT", "words")
    chunking.set_chunking_config(None)
    text = "word " * 400
    with pytest.raises(ValueError, match="FASTNOTEBOOK_CHUNK_UNIT must be"):
        chunk_text(text, ContentType.PLAIN)
    assert chunk_text(text, ContentType.PLAIN, unit="chars") == reference.chunk_text(text, "plain")
