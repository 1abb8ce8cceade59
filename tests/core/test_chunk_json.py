"""The ``json`` strategy: every chunk is valid JSON, and the chunks rebuild the
document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastnotebook import chunk
from fastnotebook.token_utils import token_count
from helpers.corpus import read, require_corpus
from helpers.invariants import check_spans_and_links


def at_path(doc: Any, path: str) -> Any:
    """The value at a path of the form the strategy writes."""
    assert path.startswith("$")
    rest = path[1:]
    while rest:
        if rest.startswith("."):
            end = min([i for i in (rest.find(".", 1), rest.find("[", 1)) if i != -1] or [len(rest)])
            doc, rest = doc[rest[1:end]], rest[end:]
        elif rest.startswith('["'):
            key, end = json.JSONDecoder().raw_decode(rest, 1)
            doc, rest = doc[key], rest[end + 1 :]
        else:
            end = rest.index("]")
            doc, rest = doc[int(rest[1:end])], rest[end + 1 :]
    return doc


def check_json(source: str, size: int, unit: str = "chars") -> None:
    doc = json.loads(source)
    length = len if unit == "chars" else token_count
    chunks = chunk(source, "json", chunk_size=size, unit=unit)  # type: ignore[arg-type]
    # A part of a long string or a group of members is rebuilt from the
    # source, not sliced from it: their texts are checked below.
    check_spans_and_links(source, chunks, slices=False)
    parts: dict[str, str] = {}
    for c in chunks:
        value = json.loads(c.text)
        path = c.metadata["json_path"]
        target = at_path(doc, path)
        if "json_part" in c.metadata:
            part = next(iter(value.values())) if isinstance(value, dict) else value
            # A part of one character cannot be cut (documented): only it
            # may be over the size, with its key.
            assert length(c.text) <= size or len(part) <= 1, c
        else:
            assert length(c.text) <= size, c
        if "json_part" in c.metadata:
            parts[path] = parts.get(path, "") + (
                next(iter(value.values())) if isinstance(value, dict) else value
            )
        elif "json_members" in c.metadata:
            members = c.metadata["json_members"]
            if isinstance(target, dict):
                assert value == {k: target[k] for k in members}
            else:
                assert value == [target[i] for i in members]
        else:
            assert value == target
            assert source[c.start : c.end] == c.text
    for path, text in parts.items():
        assert text == at_path(doc, path)
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


def test_small_document_is_one_chunk_its_source() -> None:
    source = '{"a": [1, 2], "b": {"c": "d"}}'
    [c] = chunk(source, "json", chunk_size=100)
    assert c.text == source and c.metadata == {"json_path": "$"}


def test_groups_lists_and_long_strings() -> None:
    doc = {
        "name": "x",
        "items": [{"id": i, "text": "word " * (i * 7)} for i in range(8)],
        "long": 'a b\\n \u00e9 "q" ' * 40,
        "nested": {"a key": {"b": list(range(60))}},
    }
    for indent in (None, 2):
        source = json.dumps(doc, indent=indent, ensure_ascii=indent is None)
        for size in (40, 120, 400):
            check_json(source, size)
        check_json(source, 30, "tokens")
    paths = {c.metadata["json_path"] for c in chunk(json.dumps(doc), "json", chunk_size=120)}
    assert '$.nested["a key"].b' in paths and "$.items" in paths


def test_errors() -> None:
    with pytest.raises(ValueError, match="invalid JSON at line 1 column 7"):
        chunk('{"a": tru}', "json")
    with pytest.raises(ValueError, match="extra data"):
        chunk("[1] [2]", "json")
    with pytest.raises(ValueError, match="nested too deeply"):
        chunk("[" * 300 + "]" * 300, "json")
    with pytest.raises(ValueError, match="overlap"):
        chunk("[1]", "json", chunk_size=10, overlap=2)


def test_corpus_texts_as_json() -> None:
    for path in require_corpus("md")[:20]:
        text = read(path)
        doc = {"file": path.name, "paragraphs": text.split("\n\n"), "lines": text.splitlines()}
        check_json(json.dumps(doc, ensure_ascii=False), 500)


def test_a_bare_last_part_never_pushes_a_long_string_over_the_maximum() -> None:
    # The cut lands inside the last surrogate pair and moves to its end,
    # leaving `\"` alone: merged into the part before, it would be 101
    # characters; the cut moves back one escape instead.
    doc = [{"000000": "0\x1f\x1f\x1f\x07" + "\U00010000" * 5 + '"'}]
    check_json(json.dumps(doc), 100)
    parts = chunk(json.dumps(doc), "json", chunk_size=100)
    assert len(parts) == 2
    assert all(len(c.text) <= 100 for c in parts)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(40, 150), st.sampled_from([None, 1]))
def test_generated_json(doc: Any, size: int, indent: int | None) -> None:
    check_json(json.dumps(doc, indent=indent), size)
