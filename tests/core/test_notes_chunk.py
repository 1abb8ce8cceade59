"""fastnotebook.notes: block-aware chunking of note bodies."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastnotebook.notes import NoteChunk, NotesConfig, body_from_chunks, chunk_note, parse_note
from fastnotebook.token_utils import token_count
from helpers.invariants import check_spans_and_links
from helpers.vault import forbidden_cuts, random_body

CONFIG = NotesConfig()


def check_chunks(body: str, chunks: list[NoteChunk], config: NotesConfig = CONFIG) -> None:
    """Every rule a chunk list must keep, whatever the body: the records'
    (``check_spans_and_links``), then the notes' own."""
    assert body_from_chunks(chunks) == body
    check_spans_and_links(body, chunks)
    forbidden = forbidden_cuts(body)
    hard_max = config.limits_for(None)[2]
    for k, chunk in enumerate(chunks):
        assert chunk.id == f"{chunk.note_id}#c{k:02d}"
        assert chunk.char_start not in forbidden, f"chunk {k} starts inside code or a table"
        ov = chunk.metadata["overlap_start"]
        assert chunk.embed_text == body[ov : chunk.char_end]
        assert ov == chunk.char_start or ov not in forbidden, "overlap tears a block"
        if ov < chunk.char_start:
            assert token_count(body[ov : chunk.char_start]) <= config.overlap + 10
            assert ov >= chunks[k - 1].char_start
        if chunk.metadata.get("oversized"):
            assert chunk.token_count > hard_max
            assert chunk.metadata["block"] in ("code", "table", "paragraph", "list", "quote")
        else:
            assert chunk.token_count <= hard_max


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), blocks=st.integers(0, 40), crlf=st.booleans())
def test_generated_bodies_keep_every_rule(seed: int, blocks: int, crlf: bool) -> None:
    body = random_body(random.Random(seed), blocks)
    if crlf:
        body = body.replace("\n", "\r\n")
    note = parse_note("gen.md", "---\nsecret: FRONTMATTER_MARKER\n---\n" + body)
    chunks = chunk_note(note)
    check_chunks(note.body, chunks)
    assert all("FRONTMATTER_MARKER" not in c.embed_text for c in chunks)


def test_code_block_over_hard_max_is_one_flagged_chunk() -> None:
    code = "```python\n" + "".join(f"x_{k} = f({k})  # comment\n\n" for k in range(500)) + "```\n"
    body = "## Code\n\nShort intro.\n\n" + code + "\nAfter.\n"
    chunks = chunk_note(parse_note("c.md", body))
    check_chunks(body, chunks)
    holders = [c for c in chunks if "x_0 =" in c.text or "x_499 =" in c.text]
    assert len(holders) == 1
    assert code in holders[0].text
    assert holders[0].metadata == {
        "overlap_start": holders[0].metadata["overlap_start"],
        "oversized": True,
        "block": "code",
    }


def test_table_over_target_stays_whole() -> None:
    table = "| a | b |\n| --- | --- |\n" + "".join(f"| r{k} | value {k} |\n" for k in range(150))
    body = "Para before.\n\n" + table + "\nPara after.\n"
    chunks = chunk_note(parse_note("t.md", body))
    check_chunks(body, chunks)
    assert sum(1 for c in chunks if table in c.text) == 1


def test_list_group_stays_together_while_it_fits() -> None:
    para = "A paragraph of prose that fills some space in the note. " * 12
    items = "".join(f"- item {k} of a list that is short enough\n" for k in range(25))
    body = f"{para}\n\n{items}\n{para}\n"
    chunks = chunk_note(parse_note("l.md", body))
    check_chunks(body, chunks)
    assert sum(1 for c in chunks if items in c.text) == 1


def test_long_list_splits_between_items() -> None:
    items = "".join(f"- item {k} with words\n  continued line {k}\n" for k in range(300))
    chunks = chunk_note(parse_note("l.md", items))
    check_chunks(items, chunks)
    assert len(chunks) > 1
    assert all(c.text.startswith("- item") for c in chunks)


def test_sections_and_paths() -> None:
    para = "Words that make a paragraph long enough to stand on its own here. " * 30
    body = f"# Title\n\n{para}\n\n## Alpha\n\n{para}\n\n### Beta\n\n{para}\n\n## Gamma\n\nshort\n"
    chunks = chunk_note(parse_note("s.md", body))
    check_chunks(body, chunks)
    assert [c.section_path for c in chunks] == [
        ("Title",),
        ("Title", "Alpha"),
        ("Title", "Alpha", "Beta"),
        ("Title", "Gamma"),
    ]
    assert chunks[2].section_title == "Beta"


def test_small_pieces_merge_within_a_section() -> None:
    body = "## One\n\nTiny a.\n\nTiny b.\n\nTiny c.\n\n## Two\n\nTiny d.\n"
    chunks = chunk_note(parse_note("m.md", body))
    check_chunks(body, chunks)
    assert [c.text for c in chunks] == [
        "## One\n\nTiny a.\n\nTiny b.\n\nTiny c.\n\n",
        "## Two\n\nTiny d.\n",
    ]


def test_callout_of_two_lines_is_its_own_chunk() -> None:
    body = "Para one.\n\n> [!warning] Careful\n> This is the callout.\n\nPara two.\n"
    chunks = chunk_note(parse_note("q.md", body))
    check_chunks(body, chunks)
    assert [c.text.split("\n")[0] for c in chunks] == [
        "Para one.",
        "> [!warning] Careful",
        "Para two.",
    ]
    assert chunks[1].metadata["block"] == "quote"


def test_sizes_by_note_type() -> None:
    para = "\n\n".join(
        f"Sentence number {k} of the paragraph goes on for a while with words. " * 6
        for k in range(40)
    )
    small = NotesConfig(sizes={"default": (250, 400, 700, 100), "task": (60, 90, 200, 20)})
    task = chunk_note(parse_note("a.md", "---\ntype: Task\n---\n" + para), small)
    default = chunk_note(parse_note("b.md", para), small)
    assert max(c.token_count for c in task) <= 200
    assert len(task) > len(default)
    check_chunks(para, task, NotesConfig(sizes={"default": (60, 90, 200, 20)}))


def test_overlap_is_zero_when_disabled() -> None:
    body = random_body(random.Random(3), 30)
    chunks = chunk_note(parse_note("o.md", body), NotesConfig(overlap=0))
    assert all(c.embed_text == c.text for c in chunks)
    with_overlap = chunk_note(parse_note("o.md", body))
    assert any(c.embed_text != c.text for c in with_overlap)


def test_chunk_links_and_references() -> None:
    body = "Intro [[A]] and [[A|again]] and [[Missing]].\n\n## Possible connections\n\n- [[B]]\n"
    note = parse_note("r.md", body)

    def resolve(target: str, _note: object) -> str | None:
        return {"A": "id-a", "B": "id-b"}.get(target)

    chunks = chunk_note(note, resolve=resolve)
    wikilinks = [w for c in chunks for w in c.wikilinks]
    references = [r for c in chunks for r in c.references]
    assert wikilinks == ["id-a", "Missing", "id-b"]
    assert references == [
        {"kind": "wikilink", "target_id": "id-a"},
        {"kind": "wikilink", "target_id": "id-a"},
        {"kind": "wikilink", "target_id": "Missing"},
    ]


def test_empty_and_blank_bodies() -> None:
    assert chunk_note(parse_note("e.md", "")) == []
    chunks = chunk_note(parse_note("e.md", "---\na: 1\n---\n\n\n"))
    assert body_from_chunks(chunks) == "\n\n"


def test_body_from_chunks_rejects_gaps() -> None:
    chunks = chunk_note(parse_note("g.md", random_body(random.Random(1), 30)))
    assert len(chunks) > 2
    with pytest.raises(ValueError, match="do not tile"):
        body_from_chunks([chunks[0], chunks[2]])
    assert body_from_chunks(list(reversed(chunks))) == body_from_chunks(chunks)
