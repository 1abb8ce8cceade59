"""The ``markdown`` strategy against markdown-it-py's block structure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from fastnotebook import chunk
from fastnotebook.token_utils import token_count
from helpers.corpus import read, require_corpus
from helpers.invariants import check_records

PARSER = MarkdownIt("commonmark").enable("table")


def line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def front_matter_end(text: str) -> int:
    """Where the body starts after YAML front matter (0 without)."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return 0
    at = len(lines[0]) + 1
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            return min(at + len(line) + 1, len(text))
        at += len(line) + 1
    return 0


def reference(text: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]], int]:
    """markdown-it-py's top-level headings (line, level, text) and the code
    point spans of its fences and tables, and where the body starts."""
    body_at = front_matter_end(text)
    body = text[body_at:]
    first_line = text.count("\n", 0, body_at)
    starts = line_starts(text)
    headings = []
    blocks = []
    tokens = PARSER.parse(body)
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None:
            continue
        if tok.type == "heading_open":
            headings.append((first_line + tok.map[0], int(tok.tag[1]), tokens[i + 1].content))
        elif tok.type in ("fence", "table_open"):
            a, b = first_line + tok.map[0], first_line + tok.map[1]
            start = starts[a]
            end = starts[b] if b < len(starts) else len(text)
            span = text[start:end]
            lead = len(span) - len(span.lstrip())
            blocks.append((start + lead, start + len(span.rstrip())))
    return headings, blocks, body_at


def path_at(headings: list[tuple[int, int, str]], line: int) -> tuple[str, ...]:
    path: list[tuple[int, str]] = []
    for at, level, title in headings:
        if at > line:
            break
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))
    return tuple(t for _, t in path)


def check_markdown(text: str, size: int, overlap: int, unit: str = "chars") -> int:
    length = len if unit == "chars" else token_count
    chunks = chunk(text, "markdown", chunk_size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
    headings, blocks, body_at = reference(text)
    check_records(text, chunks, max_size=size, length=length, covered_from=body_at)
    mismatches = 0

    def moved_cut(i: int, j: int) -> bool:
        """Whether chunks i and j share a cut that the rule for small chunks
        moved into a block: both under the same headings, at least a tenth of
        the size."""
        if not (0 <= i < j < len(chunks)):
            return False
        a, b = chunks[i], chunks[j]
        return (
            (b.start <= a.end or not text[a.end : b.start].strip())
            and a.headings == b.headings
            and min(length(a.text), length(b.text)) >= size // 10
        )

    for k, c in enumerate(chunks):
        assert c.start >= body_at
        if overlap == 0:
            # The path where its own text starts: at its first letter or
            # digit (a run without any, folded into its front, does not count).
            first = c.start + next(i for i, ch in enumerate(c.text) if ch.isalnum())
            expected = path_at(headings, text.count("\n", 0, first))
            mismatches += c.headings != expected
        for a, b in blocks:
            if length(text[a:b]) > size:
                continue
            assert not a < c.start < b or moved_cut(k - 1, k), ("starts inside", text[a:b][:80], c)
            if overlap == 0:
                assert not a < c.end < b or moved_cut(k, k + 1), ("ends inside", text[a:b][:80], c)
    return mismatches


@pytest.mark.parametrize(
    ("size", "overlap", "unit"),
    [(400, 0, "chars"), (1500, 0, "chars"), (128, 0, "tokens"), (600, 80, "chars")],
)
def test_markdown_corpus(size: int, overlap: int, unit: str) -> None:
    files = require_corpus("md")
    mismatched = [p.name for p in files if check_markdown(read(p), size, overlap, unit)]
    assert not mismatched, mismatched


def test_heading_paths_on_level_jumps_and_closing_sections() -> None:
    text = "# A\n\na\n\n### C\n\nc\n\n## B\n\nb\n\n# D\n\nd\n"
    chunks = chunk(text, "markdown", chunk_size=8)
    assert [(c.headings, c.text) for c in chunks] == [
        (("A",), "# A\n\na"),
        (("A", "C"), "### C\n\nc"),
        (("A", "B"), "## B\n\nb"),
        (("D",), "# D\n\nd"),
    ]


def test_sections_merge_bottom_up_to_the_size() -> None:
    text = "# A\n\nintro\n\n## B\n\nbee\n\n## C\n\ncee\n\n# D\n\n" + "long words " * 20
    chunks = chunk(text, "markdown", chunk_size=60)
    assert chunks[0].text == "# A\n\nintro\n\n## B\n\nbee\n\n## C\n\ncee"
    assert chunks[0].headings == ("A",)
    assert all(c.headings == ("D",) for c in chunks[1:])


def test_fences_and_tables_stay_whole_and_hashes_in_code_are_not_headings() -> None:
    fence = "```\n# not a heading\n" + "code line\n" * 8 + "```"
    table = "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 8
    text = f"# Real\n\nintro\n\n{fence}\n\n{table}\nafter"
    chunks = chunk(text, "markdown", chunk_size=60, max_size=120)
    assert fence in [c.text for c in chunks]
    assert table.strip() in [c.text for c in chunks]
    assert all(c.headings == ("Real",) for c in chunks)
    # Longer than the hard maximum: cut between lines.
    long = chunk(text, "markdown", chunk_size=40)
    assert all(len(c.text) <= 40 for c in long)
    assert "```\n# not a heading" in [c.text for c in long][1]


def test_front_matter_is_metadata_not_content() -> None:
    text = (
        "---\ntitle: \"Guide: one\"\ntags: [rag, 'chunks']\ncount: 3\nratio: 0.5\n"
        "draft: false\nnothing: ~\nauthors:\n  - name: Ann\n    role: lead\n  - Bob\n"
        "about: |\n  two\n  lines\n---\n# Title\n\nBody text.\n"
    )
    chunks = chunk(text, "markdown", chunk_size=100)
    assert [c.text for c in chunks] == ["# Title\n\nBody text."]
    assert chunks[0].metadata["front_matter"] == {
        "title": "Guide: one",
        "tags": ["rag", "chunks"],
        "count": 3,
        "ratio": 0.5,
        "draft": False,
        "nothing": None,
        "authors": [{"name": "Ann", "role": "lead"}, "Bob"],
        "about": "two\nlines\n",
    }


def test_context_headers() -> None:
    text = "# A\n\nintro words here\n\n## B\n\nbody text\n"

    def last(mode: str) -> str:
        c = chunk(text, "markdown", chunk_size=20, context_headers=mode)[-1]  # type: ignore[arg-type]
        assert c.headings == ("A", "B") and c.text == "## B\n\nbody text"
        return c.embed_text

    assert last("breadcrumb") == "A > B\n\n## B\n\nbody text"
    assert last("full") == "# A\n## B\n\n## B\n\nbody text"
    assert last("parent") == "B\n\n## B\n\nbody text"
    [whole] = chunk(text, "markdown", chunk_size=100)
    assert whole.embed_text == whole.text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "# H1",
                "## H2",
                "### H3",
                "text words",
                "```",
                "| a | b |",
                "|---|---|",
                "",
                "Title",
                "===",
                "- item",
                "    code",
                "---",
            ]
        ),
        max_size=40,
    ),
    st.integers(5, 80),
    st.integers(0, 2),
)
def test_markdown_generated(lines: list[str], size: int, third: int) -> None:
    check_markdown("\n".join(lines), size, size * third // 3 if third < 2 else 0)


INSTALL = (
    "Download the latest release for your system from the project page, check its "
    "signature against the published key, and unpack the archive into a folder that "
    "your user can write to."
)
USE = (
    "Open a terminal in the folder that holds your notes and run the indexer on it; "
    "the first run reads every file, later runs only the files that changed."
)


INTRO = "# Tool\n\nTool indexes notes."


def short_readme() -> str:
    """A README whose sections are each a paragraph just under 400 tokens: at
    400 tokens, the headings and the paragraphs' last word used to be chunks
    of their own (``## Install``, ``## Use``, ``it.``)."""

    def words(sentence: str, n: int) -> str:
        pool = sentence.split(" ")
        return " ".join(pool[i % len(pool)] for i in range(n))

    return f"{INTRO}\n\n## Install\n\n{words(INSTALL, 363)}\n\n## Use\n\n{words(USE, 351)} it.\n"


def test_no_heading_alone_or_tiny_chunk_when_a_neighbour_takes_it() -> None:
    text = short_readme()
    chunks = chunk(text, "markdown", chunk_size=400, unit="tokens")
    check_records(text, chunks, max_size=400, length=token_count)
    texts = [c.text for c in chunks]
    assert not {"## Install", "## Use", "it."} & set(texts), texts
    # Each heading starts the chunk of its text; below a tenth of the size
    # is only the introduction, the one chunk under its headings.
    assert any(t.startswith("## Install\n\nDownload") for t in texts)
    assert any(t.startswith("## Use\n\nOpen") for t in texts)
    assert [c.text for c in chunks if c.token_count < 40] == [INTRO]
    assert [c.headings for c in chunks if c.text.endswith("it.")] == [("Tool", "Use")]


def test_min_chunk_size() -> None:
    text = short_readme()
    kept = chunk(text, "markdown", chunk_size=400, unit="tokens", min_chunk_size=0)
    check_records(text, kept, max_size=400, length=token_count)
    # Without a minimum only the headings alone join their text: the last
    # words of the paragraph under them are a small chunk.
    assert not {"## Install", "## Use"} & {c.text for c in kept}
    assert kept[-1].text.endswith("it.") and kept[-1].token_count < 40
    larger = chunk(text, "markdown", chunk_size=400, unit="tokens", min_chunk_size=120)
    check_records(text, larger, max_size=400, length=token_count)
    assert [c.text for c in larger if c.token_count < 120] == [INTRO]
    with pytest.raises(ValueError, match="min_chunk_size"):
        chunk(text, "markdown", chunk_size=400, min_chunk_size=401)
    with pytest.raises(ValueError, match="min_chunk_size is an option of the 'markdown'"):
        chunk(text, "recursive", chunk_size=400, min_chunk_size=10)
