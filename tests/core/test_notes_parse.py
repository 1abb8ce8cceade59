"""fastnotebook.notes: front matter, metadata, links, hashes of one note."""

from __future__ import annotations

import time

import pytest

from fastnotebook.errors import NoteParseError
from fastnotebook.notes import (
    NotesConfig,
    content_hash,
    normalise_for_hash,
    parse_note,
    path_slug,
    split_frontmatter,
)


@pytest.mark.parametrize(
    ("raw", "fm_len"),
    [
        ("---\ntitle: x\n---\nbody\n", 17),
        ("---\r\ntitle: x\r\n---\r\nbody\r\n", 20),
        ("---\ntitle: x\n...\nbody", 17),
        ("\ufeff---\na: 1\n---\n", 14),
        ("---\nnever closed\n\nbody\n", 0),
        ("no front matter\n---\na: 1\n---\n", 0),
        ("----\na: 1\n---\n", 0),
        ("---\na: 1\n---", 12),
        ("", 0),
    ],
)
def test_split_frontmatter(raw: str, fm_len: int) -> None:
    fm, body = split_frontmatter(raw)
    assert fm + body == raw
    assert len(fm) == fm_len


def test_metadata_is_json_compatible() -> None:
    note = parse_note(
        "dir/My Note.md",
        "---\ntitle: T\ntype: Journal\ntags: ['#a', b, a]\naliases: One\n"
        "created: 2024-01-02\nupdated: 2024-03-04 05:06:07\nn: {x: [1, 2.5, null, yes]}\n"
        "when: 12:30:00\n---\n# Heading\nbody\n",
    )
    assert note.frontmatter["created"] == "2024-01-02"
    assert note.frontmatter["updated"] == "2024-03-04T05:06:07"
    assert note.frontmatter["n"] == {"x": [1, 2.5, None, True]}
    assert note.title == "T"
    assert note.type == "Journal"
    assert note.tags == ("a", "b")
    assert note.aliases == ("One",)
    assert (note.created, note.updated) == ("2024-01-02", "2024-03-04T05:06:07")
    assert note.id == "dir/my-note"
    keys = parse_note("k.md", "---\n1: a\nnull: b\nfalse: c\n2024-01-01: d\n---\n").frontmatter
    assert keys == {"1": "a", "null": "b", "false": "c", "2024-01-01": "d"}
    assert note.path == "dir/My Note.md"
    assert note.raw == note.frontmatter_text + note.body


def test_id_title_fallbacks() -> None:
    assert parse_note("a/B c.md", "---\nid: Z-1\n---\nx").id == "Z-1"
    assert parse_note("a/B c.md", "```\n# Not the title\n```\n# Real\n").title == "Real"
    assert parse_note("a/B c.md", "## Only h2\n").title == "B c"
    assert parse_note("a\\B.md", "x").path == "a/B.md"


def test_tags_from_a_string() -> None:
    note = parse_note("n.md", "---\ntags: '#one, two three'\n---\n")
    assert note.tags == ("one", "two", "three")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("---\ntitle: [unclosed\n---\nbody", "malformed YAML front matter at line 3"),
        ("---\n- a\n- b\n---\n", "must be a YAML mapping"),
        ("---\nkey: value\n  bad: indent\n---\n", "malformed YAML"),
        ("---\ncreated: 2024-13-45\n---\n", "malformed YAML"),
        ("---\n!!python/object:os.system x: 1\n---\n", "malformed YAML"),
        ("---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n", "YAML front matter"),
    ],
)
def test_malformed_front_matter_is_a_note_error(raw: str, fragment: str) -> None:
    with pytest.raises(NoteParseError) as info:
        parse_note("bad/x.md", raw)
    assert info.value.path == "bad/x.md"
    assert fragment in info.value.message
    assert str(info.value).startswith("bad/x.md: ")


def test_every_link_form() -> None:
    body = (
        "[[A]] [[B|shown]] [[C#Head]] [[D^blk]] [[E#^blk2]] ![[F]] [[G/H|x]]\n"
        "[t](Other%20Note.md) [u](<sub/Über note.md#Part 2>) ![e](Emb.md)\n"
        "[web](https://x.org/a.md) [anchor](#here) [[pic.png]] ![[clip.mp4]] [[#Self]]\n"
        "| [[T1\\|alias]] | cell |\n"
    )
    note = parse_note("n.md", body)
    got = [(ln.kind, ln.target, ln.heading, ln.block, ln.display) for ln in note.links]
    assert got == [
        ("wikilink", "A", None, None, None),
        ("wikilink", "B", None, None, "shown"),
        ("wikilink", "C", "Head", None, None),
        ("wikilink", "D", None, "blk", None),
        ("wikilink", "E", None, "blk2", None),
        ("embed", "F", None, None, None),
        ("wikilink", "G/H", None, None, "x"),
        ("markdown", "Other Note.md", None, None, "t"),
        ("markdown", "sub/Über note.md", "Part 2", None, "u"),
        ("embed", "Emb.md", None, None, "e"),
        ("wikilink", "T1", None, None, "alias"),
    ]
    for link in note.links:
        written = note.body[link.start : link.end]
        assert written.startswith(("[", "!["))
        assert written.endswith(("]]", ")"))


def test_no_links_in_code() -> None:
    body = (
        "`[[span]]` and ``[[double `tick` span]]``\n\n"
        "```\n[[fenced]]\n[x](fenced.md)\n```\n\n"
        "  ~~~~python\n  [[indented fence]]\n  ~~~\n  still [[inside]]\n  ~~~~\n\n"
        "> ```\n> [[quoted fence]]\n> ```\n\n"
        "[[real]] and ` unmatched [[also real]]\n"
    )
    note = parse_note("n.md", body)
    assert [ln.target for ln in note.links] == ["real", "also real"]


def test_offsets_are_code_points() -> None:
    body = "Ünïcødé 東京 🙂 [[Zürich]] then [x](a%C3%A9.md)\n"
    note = parse_note("n.md", "---\na: é\n---\n" + body)
    first, second = note.links
    assert note.body[first.start : first.end] == "[[Zürich]]"
    assert note.body[second.start : second.end] == "[x](a%C3%A9.md)"
    assert second.target == "aé.md"


def test_suggestion_sections() -> None:
    body = (
        "Text [[a]]\n\n## Mögliche Verbindungen\n\n- [[b]]\n\n### Deeper\n[[c]]\n\n"
        "## Next\n[[d]]\n\n# possible CONNECTIONS:\n[[e]]\n"
    )
    note = parse_note("n.md", body)
    assert [(ln.target, ln.in_suggestions) for ln in note.links] == [
        ("a", False),
        ("b", True),
        ("c", True),
        ("d", False),
        ("e", True),
    ]
    custom = NotesConfig(suggestion_headings=("Next",))
    flags = [ln.in_suggestions for ln in parse_note("n.md", body, custom).links]
    assert flags == [False, False, False, True, False]


def test_hash_normalisation() -> None:
    lf = "---\na: 1\n---\nline one  \n\n\n\nline two\n"
    crlf = lf.replace("\n", "\r\n")
    collapsed = "---\na: 1\n---\nline one\n\nline two\n"
    canonical = NotesConfig()
    none = NotesConfig(normalisation="none")

    def h(raw: str, config: NotesConfig) -> str:
        return parse_note("n.md", raw, config).hash

    assert h(lf, canonical) == h(crlf, canonical) == h(collapsed, canonical)
    assert h(lf, none) == h(crlf, none) != h(collapsed, none)
    assert parse_note("n.md", lf).hash_fulltext != parse_note("n.md", crlf).hash_fulltext
    assert normalise_for_hash("a \r\n\r\n\r\nb\t", "canonical") == "a\n\nb"
    assert normalise_for_hash("a \r\n\r\n\r\nb\t", "none") == "a\n\n\nb"
    with pytest.raises(ValueError, match="normalisation"):
        normalise_for_hash("x", "strict")


def test_hash_modes() -> None:
    body_only = NotesConfig(hash_mode="body")
    fm_only = NotesConfig(hash_mode="frontmatter")
    both = NotesConfig()
    a = ("---\na: 1\n---\n", "body\n")
    b = ("---\na: 2\n---\n", "body\n")
    c = ("---\na: 1\n---\n", "other body\n")
    assert content_hash(*a, body_only) == content_hash(*b, body_only)
    assert content_hash(*a, body_only) != content_hash(*c, body_only)
    assert content_hash(*a, fm_only) != content_hash(*b, fm_only)
    assert content_hash(*a, fm_only) == content_hash(*c, fm_only)
    assert len({content_hash(*x, both) for x in (a, b, c)}) == 3
    assert len({content_hash(*a, cfg) for cfg in (body_only, fm_only, both)}) == 3
    for cfg in (body_only, fm_only, both, NotesConfig(normalisation="none")):
        for fm, body in (a, b, c):
            assert parse_note("n.md", fm + body, cfg).hash == content_hash(fm, body, cfg)


def test_path_slug() -> None:
    assert path_slug("Folder/Déjà Vu \u2013 Ünïcode!.md") == "folder/déjà-vu-ünïcode"
    assert path_slug("a/#hash tag.md") == "a/hash-tag"
    assert path_slug("x.MD") == "x"


def test_config_is_validated() -> None:
    with pytest.raises(ValueError, match="default"):
        NotesConfig(sizes={"task": (1, 2, 3, 1)})
    with pytest.raises(ValueError, match="target_max"):
        NotesConfig(sizes={"default": (300, 200, 700, 100)})
    with pytest.raises(ValueError, match="hash_mode"):
        NotesConfig(hash_mode="all")  # type: ignore[arg-type]
    assert NotesConfig().limits_for("Concept") == (250, 350, 650, 100)
    assert NotesConfig().limits_for("unknown") == NotesConfig().limits_for(None)


@pytest.mark.parametrize(
    "body",
    [
        "[[" * 100_000,
        "`" * 100_000,
        "` a " * 50_000,
        "[a](" * 30_000,
        "![[x|" * 30_000,
        "".join("  " * d + "- item\n" for d in range(300)) * 20,
        "> " * 50_000,
        "[" + "x" * 200_000,
    ],
    ids=["brackets", "backticks", "spans", "mdlinks", "embeds", "nested-lists", "quotes", "long"],
)
def test_hostile_bodies_are_fast(body: str) -> None:
    started = time.perf_counter()
    note = parse_note("hostile.md", body)
    assert time.perf_counter() - started < 2.0
    assert note.body == body
