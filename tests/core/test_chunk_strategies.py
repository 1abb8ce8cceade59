"""What every strategy of ``fastnotebook.chunk`` keeps: batch equals one call per
text, ids are deterministic, the records' invariants on generated text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastnotebook import chunk, chunk_many
from fastnotebook.chunkers import STRATEGIES, html_text
from fastnotebook.token_utils import token_count
from helpers.corpus import read, require_corpus
from helpers.invariants import check_records

TEXT_STRATEGIES = ["recursive", "markdown", "sentence"]


def test_every_strategy_is_listed() -> None:
    assert set(STRATEGIES) == {
        "recursive",
        "token",
        "markdown",
        "sentence",
        "json",
        "html",
        "semantic",
        "semantic_double_pass",
    }


def corpus_for(strategy: str) -> list[str]:
    kind = {"html": "html", "markdown": "md"}.get(strategy, "txt")
    texts = [read(p) for p in require_corpus(kind)[:30]]
    if strategy == "json":
        return [json.dumps({"text": t.split("\n\n")}, ensure_ascii=False) for t in texts]
    return texts


@pytest.mark.parametrize("strategy", ["recursive", "token", "markdown", "sentence", "json", "html"])
def test_batch_equals_one_call_per_text_and_ids_are_deterministic(strategy: str) -> None:
    texts = corpus_for(strategy)
    unit = "tokens" if strategy == "token" else "chars"
    ids = [f"doc{i}" for i in range(len(texts))]
    many = chunk_many(texts, strategy, chunk_size=300, unit=unit, doc_ids=ids)  # type: ignore[arg-type]
    one = [
        chunk(t, strategy, chunk_size=300, unit=unit, doc_id=i)  # type: ignore[arg-type]
        for t, i in zip(texts, ids, strict=True)
    ]
    assert many == one
    again = chunk_many(texts, strategy, chunk_size=300, unit=unit, doc_ids=ids)  # type: ignore[arg-type]
    assert [[c.id for c in cs] for cs in again] == [[c.id for c in cs] for cs in many]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab c.!?\n#|`-é😀。"), max_size=300),
    st.sampled_from(TEXT_STRATEGIES),
    st.integers(8, 80),
    st.integers(0, 3),
    st.booleans(),
)
def test_generated_text(text: str, strategy: str, size: int, quarter: int, tokens: bool) -> None:
    overlap = size * quarter // 4
    unit = "tokens" if tokens else "chars"
    chunks = chunk(text, strategy, chunk_size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
    covered_from = 0
    if strategy == "markdown" and text.startswith("---"):
        covered_from = min((c.start for c in chunks), default=len(text))
    check_records(
        text,
        chunks,
        max_size=size,
        length=token_count if tokens else len,
        covered_from=covered_from,
    )


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<h1>A</h1>",
                "<h2>B</h2>",
                "<p>text here.</p>",
                "<div>x y</div>",
                "<h3>C</h3>",
                "plain",
            ]
        ),
        max_size=20,
    ),
    st.integers(5, 60),
)
def test_generated_html(parts: list[str], size: int) -> None:
    html = "<html><body>" + "".join(parts) + "</body></html>"
    check_records(html_text(html), chunk(html, "html", chunk_size=size), max_size=size, length=len)
