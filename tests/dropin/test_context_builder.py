"""ContextBuilder against the real embedded SurrealDB: inclusion levels,
budgets, duplicates, bad ids, failures; and its parts without a database."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from fastnotebook import context_builder
from fastnotebook.app.database import Database
from fastnotebook.app.domain import Note, Notebook, Source
from fastnotebook.context_builder import (
    ContextBuilder,
    ContextConfig,
    ContextItem,
    build_mixed_context,
    build_notebook_context,
    build_source_context,
)
from fastnotebook.errors import DatabaseOperationError, InvalidInputError, NotFoundError
from fastnotebook.token_utils import token_count
from helpers.notebooks import seed


def tokens(content: dict[str, Any]) -> int:
    return token_count(str(content))


def item_ids(context: dict[str, Any], kind: str) -> list[str]:
    return [c["id"] for c in context[kind]]


# --- items and config, no database ------------------------------------------


def test_context_item_counts_its_content() -> None:
    content = {"id": "note:a", "title": "T", "content": "some text <|endoftext|>"}
    assert ContextItem("note:a", "note", content).token_count == tokens(content)
    assert ContextItem("note:a", "note", content, token_count=7).token_count == 7


def test_context_config_defaults() -> None:
    config = ContextConfig()
    assert (config.sources, config.notes) == ({}, {})
    assert config.priority_weights == {"source": 100, "note": 50, "insight": 75}
    assert config.include_insights and config.include_notes and config.max_tokens is None


def make_items(spec: list[tuple[str, int, int]]) -> list[ContextItem]:
    return [
        ContextItem(item_id, "note", {"id": item_id}, priority=p, token_count=t)
        for item_id, p, t in spec
    ]


def test_prioritize_is_stable_and_truncation_drops_from_the_end() -> None:
    builder = ContextBuilder()
    builder.items = make_items([("a", 1, 5), ("b", 3, 5), ("c", 1, 5), ("d", 3, 5), ("e", 2, 5)])
    builder.prioritize()
    assert [i.id for i in builder.items] == ["b", "d", "e", "a", "c"]
    builder.truncate_to_fit(25)
    assert len(builder.items) == 5
    builder.truncate_to_fit(11)
    assert [i.id for i in builder.items] == ["b", "d"]
    builder.truncate_to_fit(0)  # no budget: nothing dropped
    assert len(builder.items) == 2


def test_remove_duplicates_keeps_the_first() -> None:
    builder = ContextBuilder()
    builder.items = make_items([("a", 1, 1), ("b", 2, 2), ("a", 3, 3)])
    builder.remove_duplicates()
    assert [(i.id, i.priority) for i in builder.items] == [("a", 1), ("b", 2)]


def test_kwargs_override_the_config_and_fall_back_to_it() -> None:
    config = ContextConfig(include_notes=False, max_tokens=500)
    builder = ContextBuilder(notebook_id="n", context_config=config)
    assert (builder.include_notes, builder.max_tokens) == (False, 500)
    builder = ContextBuilder(context_config=config, include_notes=True, max_tokens=9)
    assert (builder.include_notes, builder.max_tokens) == (True, 9)
    assert ContextBuilder(max_tokens=3).context_config.max_tokens == 3


# --- whole notebooks ---------------------------------------------------------


async def test_default_notebook_context(db: Database) -> None:
    made = await seed()
    context = await build_notebook_context(made.id)
    by_update = list(reversed(made.sources))  # most recently updated first
    assert item_ids(context, "sources") == [s.id for s in by_update]
    assert item_ids(context, "insights") == [
        i.id for s in by_update for i in made.insights[s.id or ""]
    ]
    assert sorted(item_ids(context, "notes")) == sorted(n.id for n in made.notes)
    first = context["sources"][0]
    assert set(first) == {"id", "title", "insights"}  # short: no full text
    assert first["insights"] == [i.model_dump() for i in made.insights[by_update[0].id or ""]]
    assert context["notes"][0]["content"].startswith("Note ")  # notes in full
    assert set(context["insights"][0]) == {"id", "source_id", "insight_type", "content"}

    everything = context["sources"] + context["insights"] + context["notes"]
    assert context["total_tokens"] == sum(tokens(c) for c in everything)
    assert context["total_items"] == len(everything) == 12 + 36 + 5
    assert context["notebook_id"] == made.id
    assert context["metadata"] == {
        "source_count": 12,
        "note_count": 5,
        "insight_count": 36,
        "config": {"include_insights": True, "include_notes": True, "max_tokens": None},
    }


async def test_every_inclusion_level(db: Database) -> None:
    made = await seed(sources=5, notes=4)
    s, n = made.sources, made.notes
    config = ContextConfig(
        sources={
            s[0].id or "": "insights",
            s[1].id or "": "full content",
            s[2].id or "": "not in context",
            s[3].id or "": "not in",
            (s[4].id or "").split(":", 1)[1]: "summary only",  # unknown: short, no insights
        },
        notes={
            n[0].id or "": "full content",
            n[1].id or "": "not in context",
            (n[2].id or "").split(":", 1)[1]: "short",
        },
    )
    context = await ContextBuilder(notebook_id=made.id, context_config=config).build()
    assert item_ids(context, "sources") == [s[0].id, s[1].id, s[4].id]
    short, full, unknown = context["sources"]
    assert "full_text" not in short and full["full_text"] == s[1].full_text
    assert "full_text" not in unknown
    assert full["insights"] and len(full["insights"]) == 3  # the source's context has them
    assert item_ids(context, "insights") == [i.id for i in made.insights[s[0].id or ""]]
    assert item_ids(context, "notes") == [n[0].id, n[2].id]
    assert context["notes"][0]["content"] == n[0].content
    assert context["notes"][1]["content"] == (n[2].content or "")[:100]


async def test_insights_and_notes_can_be_left_out(db: Database) -> None:
    made = await seed(sources=3, notes=2)
    no_insights = await ContextBuilder(notebook_id=made.id, include_insights=False).build()
    assert no_insights["insights"] == [] and len(no_insights["sources"]) == 3
    assert no_insights["sources"][0]["insights"]  # still part of each source
    no_notes = await build_notebook_context(made.id, ContextConfig(include_notes=False))
    assert no_notes["notes"] == [] and no_notes["metadata"]["config"]["include_notes"] is False
    config = ContextConfig(notes={made.notes[0].id or "": "full content"})
    assert (
        await ContextBuilder(
            notebook_id=made.id, context_config=config, include_notes=False
        ).build()
    )["notes"] == []


def expected_prefix(context_items: list[dict[str, Any]], budget: int) -> int:
    """How many of the prioritised items truncation keeps: it drops from the
    end while the total is over the budget."""
    counts = [tokens(c) for c in context_items]
    kept, total = len(counts), sum(counts)
    while total > budget and kept:
        kept -= 1
        total -= counts[kept]
    return kept


@pytest.mark.parametrize("cut_in", ["sources", "insights", "notes"])
async def test_budgets_that_cut_inside_each_priority_class(db: Database, cut_in: str) -> None:
    made = await seed(sources=6, insights=2, notes=4)
    full = await build_notebook_context(made.id)
    ordered = full["sources"] + full["insights"] + full["notes"]  # priority order
    counts = [tokens(c) for c in ordered]
    start = {"sources": 0, "insights": 6, "notes": 18}[cut_in]
    # Room for the classes before, and for half of this class's first item more.
    budget = sum(counts[: start + 2]) + counts[start + 2] // 2
    context = await build_notebook_context(made.id, max_tokens=budget)
    kept = expected_prefix(ordered, budget)
    assert kept == start + 2
    assert context["sources"] + context["insights"] + context["notes"] == ordered[:kept]
    assert context["total_tokens"] == sum(counts[:kept]) <= budget
    assert context["metadata"]["config"]["max_tokens"] == budget
    everything = await build_notebook_context(made.id, max_tokens=sum(counts))
    assert everything["total_items"] == len(ordered)


async def test_priority_weights_reorder_the_classes(db: Database) -> None:
    made = await seed(sources=2, insights=1, notes=2)
    weights = {"source": 10, "insight": 5, "note": 99}
    config = ContextConfig(priority_weights=weights)
    context = await build_notebook_context(made.id, config)
    note_tokens = sum(tokens(c) for c in context["notes"])
    cut = await build_notebook_context(made.id, config, max_tokens=note_tokens)
    assert len(cut["notes"]) == 2 and cut["sources"] == cut["insights"] == []


async def test_duplicates_across_sources_and_notes(db: Database) -> None:
    made = await seed(sources=3, insights=2, notes=2)
    s, n = made.sources[0], made.notes[0]
    bare_source, bare_note = (s.id or "").split(":", 1)[1], (n.id or "").split(":", 1)[1]
    config = ContextConfig(
        sources={s.id or "": "insights", bare_source: "full content"},
        notes={n.id or "": "full content", bare_note: "full content"},
    )
    context = await ContextBuilder(
        source_id=bare_source, notebook_id=made.id, context_config=config
    ).build()
    assert item_ids(context, "sources") == [s.id]
    assert "full_text" not in context["sources"][0]  # the first of the duplicates wins
    assert item_ids(context, "insights") == [i.id for i in made.insights[s.id or ""]]
    assert item_ids(context, "notes") == [n.id]
    assert context["total_items"] == 1 + 2 + 1
    mixed = await build_mixed_context([s.id or "", bare_source], [n.id or "", bare_note], made.id)
    assert mixed["total_items"] == 4


async def test_missing_and_malformed_ids_are_skipped(db: Database) -> None:
    made = await seed(sources=2, insights=1, notes=1)
    good_source, good_note = made.sources[0].id or "", made.notes[0].id or ""
    config = ContextConfig(
        sources={
            "source:missing": "insights",
            "": "insights",
            "source:": "full content",
            "note:abc": "insights",  # becomes the source id "note:abc": missing
            (made.other_notebook.id or ""): "insights",
            good_source: "insights",
        },
        notes={"note:missing": "full content", "note:": "full content", good_note: "full content"},
    )
    context = await build_notebook_context(made.id, config)
    assert item_ids(context, "sources") == [good_source]
    assert item_ids(context, "notes") == [good_note]
    assert (await build_source_context("source:missing"))["total_items"] == 0


async def test_unknown_and_malformed_notebooks(db: Database) -> None:
    await seed(sources=1, notes=0)
    with pytest.raises(NotFoundError):
        await build_notebook_context("notebook:missing")
    with pytest.raises(NotFoundError):
        await build_notebook_context("missing")
    with pytest.raises(InvalidInputError):
        await build_notebook_context("notebook:")


async def test_bare_notebook_ids_get_the_prefix(db: Database) -> None:
    made = await seed(sources=2, notes=1)
    bare = await build_notebook_context(made.id.split(":", 1)[1])
    assert bare["total_items"] == (await build_notebook_context(made.id))["total_items"]


HOSTILE = [
    "x; DELETE source; --",
    "⟨x⟩; REMOVE TABLE source",
    "x`; DELETE note WHERE true; --",
    "a:b:c) OR true; DELETE source_insight",
]


async def test_ids_that_try_to_inject_surrealql(db: Database) -> None:
    made = await seed(sources=2, insights=2, notes=2)
    before = await build_notebook_context(made.id)
    config = ContextConfig(
        sources={h: "insights" for h in HOSTILE} | {f"source:{h}": "full content" for h in HOSTILE},
        notes={h: "full content" for h in HOSTILE},
    )
    injected = await ContextBuilder(notebook_id=made.id, context_config=config).build()
    assert injected["total_items"] == 0
    for hostile in HOSTILE:
        with pytest.raises(NotFoundError):
            await build_notebook_context(hostile)
        assert (await build_source_context(hostile))["total_items"] == 0
    after = await build_notebook_context(made.id)
    assert after == before


async def test_a_closed_database_is_a_database_error(db: Database) -> None:
    made = await seed(sources=1, notes=1)
    await db.close()
    with pytest.raises(DatabaseOperationError, match="closed"):
        await build_notebook_context(made.id)
    with pytest.raises(DatabaseOperationError):
        await build_source_context(made.sources[0].id or "")


async def test_tokens_are_counted_in_one_batched_call(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await seed(sources=4, insights=2, notes=3)
    calls: list[int] = []
    real = context_builder.token_counts

    def counting(texts: list[str]) -> list[int]:
        calls.append(len(texts))
        return real(texts)

    def single(text: str) -> int:
        raise AssertionError("the builder must not count items one by one")

    monkeypatch.setattr(context_builder, "token_counts", counting)
    monkeypatch.setattr(context_builder, "token_count", single)
    source = made.sources[0].id or ""
    context = await ContextBuilder(source_id=source, notebook_id=made.id).build()
    assert calls == [4 + 8 + 3]  # duplicates (the source and its insights) not counted
    assert context["total_items"] == 15


async def test_single_source_context(db: Database) -> None:
    made = await seed(sources=2, insights=3, notes=1)
    source = made.sources[1]
    context = await build_source_context(source.id or "")
    assert item_ids(context, "sources") == [source.id]
    assert len(context["insights"]) == 3 and "notebook_id" not in context
    assert (await build_source_context(source.id or "", include_insights=False))["insights"] == []
    budget = tokens(context["sources"][0]) + 1
    assert (await build_source_context(source.id or "", max_tokens=budget))["total_items"] == 1


async def test_mixed_context_with_and_without_a_notebook(db: Database) -> None:
    made = await seed(sources=3, insights=1, notes=2)
    sources = [s.id or "" for s in made.sources[:2]]
    notes = [made.notes[1].id or ""]
    with_notebook = await build_mixed_context(sources, notes, made.id)
    without = await build_mixed_context(sources, notes)
    assert item_ids(with_notebook, "sources") == sources == item_ids(without, "sources")
    assert item_ids(with_notebook, "notes") == notes == item_ids(without, "notes")
    assert with_notebook["notebook_id"] == made.id and "notebook_id" not in without


async def test_subclasses_can_add_items_in_the_hook(db: Database) -> None:
    made = await seed(sources=1, insights=0, notes=0)

    class Extra(ContextBuilder):
        async def _process_custom_params(self) -> None:
            await super()._process_custom_params()
            content = {"id": "note:extra", "content": self.params["custom_text"]}
            self.add_item(ContextItem("note:extra", "note", content, priority=500))

    context = await Extra(notebook_id=made.id, custom_text="pinned").build()
    assert item_ids(context, "notes") == ["note:extra"]
    assert context["total_tokens"] == sum(
        tokens(c) for c in itertools.chain(context["sources"], context["notes"])
    )


# --- against the original's algorithm ----------------------------------------


async def one_by_one(
    notebook_id: str, config: ContextConfig, max_tokens: int | None = None
) -> dict[str, Any]:
    """The original's algorithm, one record and one count at a time, with the
    single-record API: what the batched builder must reproduce."""
    weights = config.priority_weights or {}
    items: list[tuple[str, str, dict[str, Any], int]] = []

    async def add_source(source_id: str, level: str) -> None:
        if "not in" in level:
            return
        try:
            source = await Source.get(source_id)
        except (NotFoundError, InvalidInputError):
            return
        size = "long" if "full content" in level else "short"
        items.append((source.id or "", "source", await source.get_context(size), weights["source"]))
        if config.include_insights and "insights" in level:
            for insight in await source.get_insights():
                content = {
                    "id": insight.id,
                    "source_id": source.id,
                    "insight_type": insight.insight_type,
                    "content": insight.content,
                }
                items.append((insight.id or "", "insight", content, weights["insight"]))

    async def add_note(note_id: str, level: str) -> None:
        if "not in" in level:
            return
        try:
            note = await Note.get(note_id)
        except (NotFoundError, InvalidInputError):
            return
        size = "long" if "full content" in level else "short"
        items.append((note.id or "", "note", note.get_context(size), weights["note"]))

    notebook = await Notebook.get(notebook_id)
    for source_id, level in (config.sources or {}).items():
        await add_source(source_id, level)
    if not config.sources:
        for source in await notebook.get_sources():
            await add_source(source.id or "", "insights")
    if config.include_notes:
        for note_id, level in (config.notes or {}).items():
            await add_note(note_id, level)
        if not config.notes:
            for note in await notebook.get_notes():
                await add_note(note.id or "", "full content")

    first = {item[0]: item for item in items[::-1]}  # the first of each id
    unique = [first[i] for i in dict.fromkeys(item[0] for item in items)]
    unique.sort(key=lambda item: item[3], reverse=True)
    counted = [(item, tokens(item[2])) for item in unique]
    if max_tokens:
        while sum(c for _, c in counted) > max_tokens:
            counted.pop()
    kinds = {"source": "sources", "note": "notes", "insight": "insights"}
    out: dict[str, Any] = {kind: [] for kind in kinds.values()}
    for (_, kind, content, _), _ in counted:
        out[kinds[kind]].append(content)
    out["total_tokens"] = sum(c for _, c in counted)
    out["total_items"] = len(counted)
    return out


async def test_batched_builds_equal_the_one_by_one_algorithm(db: Database) -> None:
    made = await seed(sources=80, insights=4, notes=15)
    rng = random.Random(3)
    choices = ["insights", "full content", "not in context", "summary", "not in"]
    ids = [s.id or "" for s in made.sources]
    bare = [i.split(":", 1)[1] if rng.random() < 0.3 else i for i in ids]
    configs = [
        ContextConfig(),
        ContextConfig(
            sources={i: rng.choice(choices) for i in bare} | {"source:missing": "insights"},
            notes={n.id or "": rng.choice(["full content", "short", "not in"]) for n in made.notes},
        ),
        ContextConfig(
            sources={i: "full content" for i in rng.sample(ids, 20)},
            include_insights=False,
            priority_weights={"source": 1, "insight": 1, "note": 1},
        ),
        ContextConfig(include_notes=False),
    ]
    for config in configs:
        expected = await one_by_one(made.id, config)
        for budget in (None, expected["total_tokens"] // 3):
            built = await build_notebook_context(made.id, config, max_tokens=budget)
            reference = await one_by_one(made.id, config, budget)
            assert {k: built[k] for k in reference} == reference
