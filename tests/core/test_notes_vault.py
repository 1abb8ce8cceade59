"""fastnotebook.notes: whole vaults -- reading, link resolution, edges, and the
real-vault fixture (``FASTNOTEBOOK_TEST_VAULT``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from fastnotebook.notes import (
    SCHEMA_NAMES,
    Edge,
    LinkResolver,
    NotesConfig,
    VaultParse,
    body_from_chunks,
    chunk_note,
    edges_for_note,
    edges_of_note,
    json_schema,
    parse_note,
    read_vault,
)
from fastnotebook.token_utils import token_count
from helpers.vault import MiniVault, forbidden_cuts, write_mini_vault

VAULT_ENV = "FASTNOTEBOOK_TEST_VAULT"
CONFIG = NotesConfig()


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> tuple[MiniVault, VaultParse]:
    vault = write_mini_vault(tmp_path_factory.mktemp("vault"), seed=7, extra_notes=8)
    return vault, read_vault(vault.root)


def check_invariants(vault: VaultParse, config: NotesConfig = CONFIG) -> None:
    """The audit formulas of the issue, and the chunk rules, over a vault."""
    kinds = Counter((e.kind, e.scope) for e in vault.edges)
    all_chunks = [c for cs in vault.chunks.values() for c in cs]
    assert kinds["belongs_to", "chunk"] == len(all_chunks)
    expected_steps = sum(max(len(cs) - 1, 0) for cs in vault.chunks.values())
    assert kinds["prev", "chunk"] == kinds["next", "chunk"] == expected_steps
    assert kinds["references", "chunk"] == sum(len(c.references) for c in all_chunks)
    links_outside = sum(sum(1 for ln in n.links if not ln.in_suggestions) for n in vault.notes)
    notes_with_chunks = {n.id for n in vault.notes if vault.chunks[n.id]}
    assert kinds["references", "chunk"] == sum(
        sum(1 for ln in n.links if not ln.in_suggestions)
        for n in vault.notes
        if n.id in notes_with_chunks
    )
    assert kinds["references", "chunk"] <= links_outside
    resolver = LinkResolver(vault.notes)
    distinct_resolved = sum(
        len(
            {
                resolver.resolve(ln.target, n)
                for ln in n.links
                if not ln.in_suggestions and resolver.resolve(ln.target, n) is not None
            }
        )
        for n in vault.notes
    )
    assert kinds["backlink", "note"] == distinct_resolved
    ids = {n.id for n in vault.notes}
    chunk_ids = {c.id for c in all_chunks}
    assert len(ids) == len(vault.notes)
    assert len(chunk_ids) == len(all_chunks)
    for edge in vault.edges:
        assert edge.note_id in ids
        if edge.status == "ok" and edge.kind in ("references", "backlink"):
            assert edge.target_id in ids
        if edge.kind in ("belongs_to", "prev", "next", "references") and edge.scope == "chunk":
            assert edge.source_id in chunk_ids
    # Each note's edges are exactly those it owns; together, all of them.
    owned = sum(len(edges_of_note(vault, n.id)) for n in vault.notes)
    assert owned == len(vault.edges)
    for note in vault.notes:
        chunks = vault.chunks[note.id]
        assert body_from_chunks(chunks) == note.body
        forbidden = forbidden_cuts(note.body)
        hard_max = config.limits_for(note.type)[2]
        for chunk in chunks:
            assert chunk.text == note.body[chunk.char_start : chunk.char_end]
            assert chunk.char_start not in forbidden
            if note.frontmatter_text.strip():
                assert note.frontmatter_text not in chunk.embed_text
            if not chunk.metadata.get("oversized"):
                assert chunk.token_count <= hard_max


def test_mini_vault_files_and_errors(mini: tuple[MiniVault, VaultParse]) -> None:
    vault, parsed = mini
    assert sorted(n.path for n in parsed.notes) == sorted(vault.good)
    assert {e.path for e in parsed.errors} == vault.broken
    for error in parsed.errors:
        assert error.message
    for note in parsed.notes:
        assert note.raw.encode() == vault.files[note.path], note.path
        assert note.frontmatter_text + note.body == note.raw
    by_path = {n.path: n for n in parsed.notes}
    for path, note_id in vault.explicit_ids.items():
        assert by_path[path].id == note_id
    assert "\r\n" in by_path["folder/Sub Note.md"].raw
    assert by_path["Index.md"].frontmatter["nested"] == {"a": 1, "b": ["x", "y"]}


def test_mini_vault_invariants(mini: tuple[MiniVault, VaultParse]) -> None:
    _, parsed = mini
    check_invariants(parsed)


def test_link_resolution(mini: tuple[MiniVault, VaultParse]) -> None:
    _, parsed = mini
    resolver = LinkResolver(parsed.notes)
    sub = next(n for n in parsed.notes if n.path == "folder/Sub Note.md")
    cases = {
        "Concept A": "concept-a-id",  # file name
        "concept a": "concept-a-id",  # case-insensitive
        "ALPHA": "concept-a-id",  # alias
        "The First": "concept-a-id",  # alias with a space
        "concept-a-id": "concept-a-id",  # id
        "beta note": "beta note",  # id with a space
        "Vault index": "index",  # title
        "Home": "index",  # alias
        "folder/Sub Note": "folder/sub-note",  # path
        "folder/Sub Note.md": "folder/sub-note",  # path with extension
        "deep/Déjà vu \u2013 ünïcode": "folder/nested/deep/déjà-vu-ünïcode",  # path suffix
        "Missing Note": None,
    }
    for target, expected in cases.items():
        assert resolver.resolve(target) == expected, target
    assert resolver.resolve("../Index.md", sub) == "index"  # relative Markdown link


def test_edges_of_the_index(mini: tuple[MiniVault, VaultParse]) -> None:
    _, parsed = mini
    edges = edges_of_note(parsed, "index")
    refs = [e for e in edges if e.kind == "references"]
    assert Counter(e.target_id for e in refs) == Counter(
        {
            "concept-a-id": 6,
            "folder/sub-note": 2,
            "Missing Note": 1,
            "folder/nested/deep/déjà-vu-ünïcode": 1,
        }
    )
    assert {e.status for e in refs if e.target_id == "Missing Note"} == {"unresolved"}
    backlinks = sorted(e.source_id for e in edges if e.kind == "backlink")
    assert backlinks == sorted(
        ["concept-a-id", "folder/sub-note", "folder/nested/deep/déjà-vu-ünïcode"]
    )
    # The suggestions section adds no edges: "Suggested Only" appears nowhere.
    assert all(e.target_id != "Suggested Only" for e in parsed.edges)
    assert all(isinstance(e, Edge) and e.note_id == "index" for e in edges)


def test_edges_for_note_resolves_raw_references(mini: tuple[MiniVault, VaultParse]) -> None:
    _, parsed = mini
    note = next(n for n in parsed.notes if n.id == "index")
    raw_chunks = chunk_note(note)  # no resolver: references name the raw targets
    assert {"kind": "wikilink", "target_id": "Concept A"} in raw_chunks[0].references
    resolver = LinkResolver(parsed.notes)
    assert edges_for_note(note, raw_chunks, resolver) == edges_of_note(parsed, "index")


def test_note_scope_references_behind_a_flag(tmp_path: Path) -> None:
    vault = write_mini_vault(tmp_path, seed=1, extra_notes=0)
    off = read_vault(vault.root)
    on = read_vault(vault.root, NotesConfig(note_scope_references=True))
    assert not [e for e in off.edges if e.scope == "note" and e.kind == "references"]
    note_refs = [e for e in on.edges if e.scope == "note" and e.kind == "references"]
    index_refs = {e.target_id: e.status for e in note_refs if e.source_id == "index"}
    assert index_refs == {
        "concept-a-id": "ok",
        "folder/sub-note": "ok",
        "Missing Note": "unresolved",
        "folder/nested/deep/déjà-vu-ünïcode": "ok",
    }
    assert len(on.edges) == len(off.edges) + len(note_refs)


def test_unresolved_link_resolves_when_the_target_appears(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Link to [[Later]].\n")
    before = read_vault(tmp_path)
    assert [e.status for e in before.edges if e.kind == "references"] == ["unresolved"]
    (tmp_path / "Later.md").write_text("Here now.\n")
    after = read_vault(tmp_path)
    refs = [e for e in after.edges if e.kind == "references"]
    assert [(e.target_id, e.status) for e in refs] == [("later", "ok")]
    assert edges_of_note(after, "a") != edges_of_note(before, "a")
    assert edges_of_note(after, "later") == [e for e in after.edges if e.note_id == "later"]


def test_slug_collisions_get_distinct_ids(tmp_path: Path) -> None:
    (tmp_path / "A B.md").write_text("one\n")
    (tmp_path / "a-b.md").write_text("two\n")
    parsed = read_vault(tmp_path)
    assert len({n.id for n in parsed.notes}) == 2
    assert parsed.errors == []


def test_missing_vault_folder(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="vault folder not found"):
        read_vault(tmp_path / "nope")


def test_schemas_ship_and_match_the_records(mini: tuple[MiniVault, VaultParse]) -> None:
    _, parsed = mini
    for name in SCHEMA_NAMES:
        schema = json_schema(name)
        assert schema["type"] == "object"
        assert set(schema["required"]) <= set(schema["properties"])
    edge_schema = json_schema("edge")
    assert set(edge_schema["required"]) == set(Edge.__match_args__)
    for edge in parsed.edges:
        assert edge.kind in edge_schema["properties"]["kind"]["enum"]
        assert edge.scope in edge_schema["properties"]["scope"]["enum"]
        assert edge.status in edge_schema["properties"]["status"]["enum"]
    with pytest.raises(ValueError, match="unknown schema"):
        json_schema("chunk")
    # The files are package data, next to the module.
    folder = Path(__file__).parents[2] / "python/fastnotebook/notes/schemas"
    assert sorted(p.name for p in folder.glob("*.json")) == sorted(
        f"{n}.schema.json" for n in SCHEMA_NAMES
    )
    json.loads((folder / "edge.schema.json").read_text())


def test_parse_is_deterministic(mini: tuple[MiniVault, VaultParse]) -> None:
    vault, parsed = mini
    again = read_vault(vault.root)
    assert again.notes == parsed.notes
    assert again.edges == parsed.edges
    assert again.chunks == parsed.chunks


def real_vault() -> Path:
    value = os.environ.get(VAULT_ENV)
    if not value:
        pytest.skip(f"{VAULT_ENV} is not set: no real vault to test against")
    path = Path(value)
    if not path.is_dir():
        pytest.skip(f"{VAULT_ENV}={value} is not a folder")
    return path


def test_real_vault_round_trip_and_invariants() -> None:
    root = real_vault()
    parsed = read_vault(root)
    assert parsed.notes, "the real vault has no notes"
    for note in parsed.notes:
        assert note.raw.encode() == (root / note.path).read_bytes()
    check_invariants(parsed)
    for chunks in parsed.chunks.values():
        for chunk in chunks:
            assert chunk.token_count == token_count(chunk.text)


def test_real_vault_notes_parse_alone() -> None:
    root = real_vault()
    parsed = read_vault(root)
    for note in parsed.notes[:50]:
        again = parse_note(note.path, note.raw)
        assert again == note or again.id != note.id  # ids may be de-duplicated by the vault
