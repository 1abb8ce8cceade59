"""Non-str input to the drop-in functions, as docs/ROBUSTNESS.md ("Input
that is not a string") lists it: None gives what the original gives; other
types raise TypeError naming the argument where the original would return
garbage (bytes treated as text) or fail deep inside (AttributeError)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import fastnotebook as fn
from fastnotebook.bench import reference

NONE_AS_THE_ORIGINAL: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("chunk_text", fn.chunk_text, reference.chunk_text),
    (
        "detect_content_type",
        lambda x: fn.detect_content_type(x).value,
        reference.detect_content_type,
    ),
    (
        "detect_content_type_from_heuristics",
        lambda x: (lambda t: (t[0].value, t[1]))(fn.detect_content_type_from_heuristics(x)),
        reference.detect_content_type_from_heuristics,
    ),
    (
        "detect_content_type_from_extension",
        fn.detect_content_type_from_extension,
        reference.detect_content_type_from_extension,
    ),
    ("parse_thinking_content", fn.parse_thinking_content, reference.parse_thinking_content),
]


@pytest.mark.parametrize(("name", "ours", "original"), NONE_AS_THE_ORIGINAL)
def test_none_gives_what_the_original_gives(
    name: str, ours: Callable[[Any], Any], original: Callable[[Any], Any]
) -> None:
    assert ours(None) == original(None), name


@pytest.mark.parametrize("value", [b"bytes " * 400, 42, ["a"] * 3])
def test_other_types_raise_type_error(value: object) -> None:
    for call in (
        fn.chunk_text,
        fn.detect_content_type,
        fn.detect_content_type_from_heuristics,
        fn.token_count,
        fn.remove_non_ascii,
        fn.remove_non_printable,
    ):
        with pytest.raises(TypeError):
            call(value)  # type: ignore[arg-type]


def test_the_lenient_functions_of_the_original() -> None:
    # Every value is text to these, in the original as here.
    assert fn.parse_thinking_content(42) == reference.parse_thinking_content(42) == ("", "42")
    assert fn.clean_thinking_content(None) == ""
    assert fn.detect_content_type_from_extension(42) is None  # type: ignore[arg-type]
    assert fn.extract_text_content(None) == "None"
    with pytest.raises(TypeError):
        fn.remove_non_ascii(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        reference.remove_non_ascii(None)  # type: ignore[arg-type]
