"""``ContextBuilder`` loads through the ``ContextRecords`` it is given (no
database): records held in memory here."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from fastnotebook import context_builder
from fastnotebook.context_builder import ContextBuilder, ContextConfig, ContextSize
from fastnotebook.errors import InvalidInputError, NotFoundError


@dataclass
class Insight:
    id: str | None
    insight_type: str
    content: str


@dataclass
class Source:
    id: str | None
    title: str
    full_text: str

    def context(self, context_size: ContextSize, insights: Any) -> dict[str, Any]:
        out = {"id": self.id, "title": self.title, "insights": [i.content for i in insights]}
        if context_size == "long":
            out["full_text"] = self.full_text
        return out


@dataclass
class Note:
    id: str | None
    content: str

    def get_context(self, context_size: ContextSize = "short") -> dict[str, Any]:
        text = self.content if context_size == "long" else self.content[:100]
        return {"id": self.id, "content": text}


@dataclass
class Notebook:
    sources: list[Source]
    notes: list[Note]

    async def get_sources(self) -> list[Source]:
        return self.sources

    async def get_notes(self, include_content: bool = False) -> list[Note]:
        return self.notes


@dataclass
class MemoryRecords:
    sources_by_id: dict[str, Source]
    insights_by_source: dict[str, list[Insight]]
    notes_by_id: dict[str, Note]
    notebooks: dict[str, Notebook]
    calls: list[str] = field(default_factory=list)

    @staticmethod
    def _record_id(table: str, given: str) -> str:
        if not given or " " in given:
            raise InvalidInputError(f"malformed id {given!r}")
        return given if given.startswith(f"{table}:") else f"{table}:{given}"

    def source_record_id(self, source_id: str) -> str:
        return self._record_id("source", source_id)

    def note_record_id(self, note_id: str) -> str:
        return self._record_id("note", note_id)

    async def sources(self, ids: Sequence[str], *, full_text: bool) -> list[Source]:
        self.calls.append(f"sources full_text={full_text}")
        return [self.sources_by_id[i] for i in ids if i in self.sources_by_id]

    async def insights(self, source_ids: Sequence[str]) -> dict[str, list[Insight]]:
        self.calls.append("insights")
        return {i: self.insights_by_source.get(i, []) for i in source_ids}

    async def notes(self, ids: Sequence[str]) -> list[Note]:
        self.calls.append("notes")
        return [self.notes_by_id[i] for i in ids if i in self.notes_by_id]

    async def notebook(self, notebook_id: str) -> Notebook:
        self.calls.append("notebook")
        try:
            return self.notebooks[notebook_id]
        except KeyError:
            raise NotFoundError(f"notebook {notebook_id} not found") from None


def memory() -> MemoryRecords:
    a = Source("source:a", "A", "all of A")
    b = Source("source:b", "B", "all of B")
    n = Note("note:n", "x" * 150)
    return MemoryRecords(
        sources_by_id={"source:a": a, "source:b": b},
        insights_by_source={"source:a": [Insight("source_insight:1", "summary", "A in short")]},
        notes_by_id={"note:n": n},
        notebooks={"notebook:1": Notebook([a, b], [n])},
    )


def test_a_notebook_is_loaded_through_the_records_given() -> None:
    records = memory()
    context = asyncio.run(ContextBuilder(notebook_id="notebook:1", records=records).build())
    assert [s["id"] for s in context["sources"]] == ["source:a", "source:b"]
    assert [i["id"] for i in context["insights"]] == ["source_insight:1"]
    assert context["notes"] == [{"id": "note:n", "content": "x" * 150}]
    assert context["notebook_id"] == "notebook:1"
    assert records.calls == ["notebook", "insights"]


def test_levels_choose_what_is_loaded_and_bad_ids_are_skipped() -> None:
    records = memory()
    config = ContextConfig(
        sources={"a": "full content", "b": "not in context", "bad id": "insights"},
        notes={"n": "summary", "missing": "full content"},
    )
    context = asyncio.run(ContextBuilder(context_config=config, records=records).build())
    assert context["sources"] == [
        {"id": "source:a", "title": "A", "insights": ["A in short"], "full_text": "all of A"}
    ]
    assert context["notes"] == [{"id": "note:n", "content": "x" * 100}]
    with pytest.raises(NotFoundError):
        asyncio.run(ContextBuilder(notebook_id="notebook:2", records=records).build())


def test_the_default_records_are_the_ones_set() -> None:
    records = memory()
    before = context_builder._default_records
    context_builder.set_default_records(records)
    try:
        assert context_builder.default_records() is records
        context = asyncio.run(context_builder.build_source_context("a"))
        assert [s["id"] for s in context["sources"]] == ["source:a"]
    finally:
        context_builder.set_default_records(before)
