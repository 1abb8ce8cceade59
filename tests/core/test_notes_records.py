"""fastnotebook.notes: the records the extension builds (NoteLink, NoteChunk,
Edge) and the hashes, field by field against a slow Python reference
(``helpers.notes_reference``), on mini vaults, the benchmark's generated
vault, random link syntax and the real vault (``FASTNOTEBOOK_TEST_VAULT``)."""

from __future__ import annotations

import copy
import os
import pickle
import random
from pathlib import Path
from typing import Any

import pytest

from fastnotebook.bench.notes import write_generated_vault
from fastnotebook.notes import (
    Edge,
    LinkResolver,
    NoteChunk,
    NoteLink,
    NotesConfig,
    chunk_note,
    edges_for_note,
    edges_of_note,
    parse_note,
    read_vault,
)
from helpers.notes_reference import (
    RefChunk,
    RefEdge,
    RefLink,
    fields_of,
    reference_chunks,
    reference_edges,
    reference_hash,
    reference_links,
)
from helpers.vault import write_mini_vault

VAULT_ENV = "FASTNOTEBOOK_TEST_VAULT"
LINK_FIELDS = NoteLink.__match_args__
CHUNK_FIELDS = NoteChunk.__match_args__
EDGE_FIELDS = Edge.__match_args__

CONFIGS = {
    "default": NotesConfig(),
    "note-scope": NotesConfig(
        note_scope_references=True, hash_mode="body", normalisation="none", overlap=0
    ),
    "frontmatter": NotesConfig(hash_mode="frontmatter", overlap=120, encoding="cl100k_base"),
}


def assert_same_as_reference(root: Path, config: NotesConfig) -> int:
    """Every record of ``read_vault(root)`` against the reference; the number
    of records compared."""
    vault = read_vault(root, config)
    resolver = LinkResolver(vault.notes)
    compared = 0
    edges_total = 0
    for note in vault.notes:
        ref_links = reference_links(note.body, config)
        assert [fields_of(x, LINK_FIELDS) for x in note.links] == [
            fields_of(x, LINK_FIELDS) for x in ref_links
        ], note.path
        assert (note.hash, note.hash_fulltext) == reference_hash(note, config), note.path
        ref_chunks = reference_chunks(note, config, resolver.resolve)
        chunks = vault.chunks[note.id]
        assert [fields_of(c, CHUNK_FIELDS) for c in chunks] == [
            fields_of(c, CHUNK_FIELDS) for c in ref_chunks
        ], note.path
        ref_edges = reference_edges(note, ref_chunks, resolver, config)
        edges = edges_of_note(vault, note.id)
        assert [fields_of(e, EDGE_FIELDS) for e in edges] == [
            fields_of(e, EDGE_FIELDS) for e in ref_edges
        ], note.path
        # The same note parsed from its text (not its file's bytes).
        if not note.path.startswith("dup"):
            again = parse_note(note.path, note.raw, config)
            if again.id == note.id:
                assert again == note
        edges_total += len(edges)
        compared += len(note.links) + len(chunks) + len(edges) + 1
    assert edges_total == len(vault.edges)
    return compared


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_mini_vaults_match_the_reference(tmp_path: Path, seed: int, name: str) -> None:
    vault = write_mini_vault(tmp_path, seed=seed, extra_notes=10)
    assert assert_same_as_reference(vault.root, CONFIGS[name]) > 50


def test_generated_vault_matches_the_reference(tmp_path: Path) -> None:
    write_generated_vault(tmp_path, notes=40, seed=3)
    assert assert_same_as_reference(tmp_path, CONFIGS["default"]) > 1000


def test_real_vault_matches_the_reference() -> None:
    root = os.environ.get(VAULT_ENV)
    if not root or not Path(root).is_dir():
        pytest.skip(f"{VAULT_ENV} is not set to a vault folder")
    for config in CONFIGS.values():
        assert assert_same_as_reference(Path(root), config) > 1000


_URLS = [
    "note.md",
    "Note.MD",
    "./sub/n%C3%A4he.md",
    "../up/a%20b.md#Heading%201",
    "x.md#^block-1",
    "x.md#^",
    "x.md#",
    "<spaced name.md>",
    "<>",
    "<a.md",
    "%E2%82.md",
    "%ED%A0%80x.md",
    "%zz%4.md",
    "caf%C3%A9%.md",
    "é%41.md",
    "https://example.com/a.md",
    "mailto:x@y.md",
    "C:/notes/a.md",
    "#local",
    "image.PNG",
    "doc.pdf",
    "a.\u017fvg",
    "b.\u212aey.md",
    "\x1cpad.md\x1f",
    "\u00a0nbsp.md\u00a0",
    "folder/file.Md",
    "file.md.txt",
    "\ud800lone.md",
]
_WIKI = [
    "Target",
    "Target#Heading",
    "Target#^blk",
    "Target^blk",
    "Target|Shown",
    "Target\\|cell",
    "pic.JPG",
    "canvas.Canvas",
    "x.\u017fvg",
    " spaced ",
    "#only-heading",
    "a\ud800b",
    "",
]


def test_links_match_the_reference_on_random_syntax() -> None:
    rng = random.Random(11)
    config = NotesConfig()
    for _ in range(300):
        parts = []
        for _ in range(rng.randint(1, 12)):
            r = rng.random()
            if r < 0.4:
                bang = "!" if rng.random() < 0.3 else ""
                parts.append(f"{bang}[t{rng.randint(0, 9)}]({rng.choice(_URLS)})")
            elif r < 0.7:
                parts.append(f"{'!' if rng.random() < 0.3 else ''}[[{rng.choice(_WIKI)}]]")
            elif r < 0.8:
                parts.append("\n## Possible connections\n")
            elif r < 0.9:
                parts.append("`[[code]]` ü 🙂")
            else:
                parts.append("\n\n```\n[[fenced]]\n```\n")
        body = " ".join(parts)
        note = parse_note("n.md", body, config)
        got = [fields_of(x, LINK_FIELDS) for x in note.links]
        assert got == [fields_of(x, LINK_FIELDS) for x in reference_links(body, config)], body


def test_records_behave_as_frozen_dataclasses() -> None:
    values: tuple[Any, ...] = ("references", "a#c00", "b", "chunk", "a", "ok")
    edge = Edge(*values)
    ref = RefEdge(*values)
    assert edge == Edge(**dict(zip(EDGE_FIELDS, values, strict=True)))
    assert edge != Edge("references", "a#c00", "b", "chunk", "a", "unresolved")
    assert edge != ref and edge != values
    assert hash(edge) == hash(values)
    assert repr(edge) == repr(ref).replace("RefEdge(", "Edge(")
    assert pickle.loads(pickle.dumps(edge)) == edge
    assert copy.copy(edge) == edge and copy.deepcopy(edge) == edge
    with pytest.raises(AttributeError):
        edge.kind = "prev"  # type: ignore[misc]
    match edge:
        case Edge(kind, source_id, target_id):
            assert (kind, source_id, target_id) == values[:3]
    link = NoteLink("wikilink", "T", None, None, "shown", 3, 12, False)
    assert repr(link) == repr(RefLink("wikilink", "T", None, None, "shown", 3, 12, False)).replace(
        "RefLink(", "NoteLink("
    )
    assert pickle.loads(pickle.dumps((link, link))) == (link, link)
    chunk_values = dict(
        note_id="n",
        id="n#c00",
        index=0,
        text="x",
        char_start=0,
        char_end=1,
        start_line=1,
        end_line=1,
        section_title=None,
        section_path=(),
        prev_id=None,
        next_id=None,
        token_count=1,
        char_count=1,
        embed_text="x",
        wikilinks=(),
        references=({"kind": "wikilink", "target_id": "m"},),
    )
    chunk = NoteChunk(**chunk_values)  # type: ignore[arg-type]
    assert chunk.metadata == {} and chunk.metadata is not NoteChunk(**chunk_values).metadata  # type: ignore[arg-type]
    assert repr(chunk) == repr(RefChunk(**chunk_values)).replace("RefChunk(", "NoteChunk(")  # type: ignore[arg-type]
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    with pytest.raises(TypeError):
        hash(chunk)  # a dict field, as with the dataclass


def test_public_chunk_and_edge_functions_match_the_reference(tmp_path: Path) -> None:
    vault = write_mini_vault(tmp_path, seed=5, extra_notes=6)
    parsed = read_vault(vault.root)
    resolver = LinkResolver(parsed.notes)
    config = NotesConfig()
    for note in parsed.notes:
        # Without a resolver: raw targets in the chunks, resolved by edges_for_note.
        chunks = chunk_note(note, config)
        ref_chunks = reference_chunks(note, config)
        assert [fields_of(c, CHUNK_FIELDS) for c in chunks] == [
            fields_of(c, CHUNK_FIELDS) for c in ref_chunks
        ]
        edges = edges_for_note(note, chunks, resolver, config)
        ref_edges = reference_edges(note, ref_chunks, resolver, config)
        assert [fields_of(e, EDGE_FIELDS) for e in edges] == [
            fields_of(e, EDGE_FIELDS) for e in ref_edges
        ]
