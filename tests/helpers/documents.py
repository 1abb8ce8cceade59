"""Hypothesis documents built from what trips chunkers: separators, markup,
whitespace of every kind, lone surrogates, words and very long words."""

from __future__ import annotations

from hypothesis import strategies as st

_atoms = st.sampled_from(
    [
        "# ",
        "## ",
        "### ",
        "#### ",
        "#",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        " ",
        "  ",
        ". ",
        ", ",
        "```",
        "```py",
        "~~~",
        "- ",
        "* ",
        "1. ",
        "> ",
        "[a](b)",
        "`c`",
        "**b**",
        "__u__",
        "<p>",
        "</p>",
        "<h1>",
        "&amp;",
        "\u00a0",
        "\u3000",
        "\u200b",
        "\x00",
        "\x0b",
        "\x1c",
        "\u2028",
        "\u0085",
        "é",
        "☃",
        "𝄞",
        "日本語",
        "\ud800",
        "\udfff",
    ]
)
_words = st.text(
    alphabet=st.characters(
        codec=None, categories=["L", "N", "P", "S", "Z"], exclude_characters="\r"
    ),
    min_size=1,
    max_size=12,
)
_long_word = st.integers(1, 3000).map(lambda n: "x" * n)
documents = st.lists(st.one_of(_atoms, _words, _words, _long_word), min_size=1, max_size=400).map(
    "".join
)
