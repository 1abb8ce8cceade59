"""Notebooks, sources, insights and notes, as in ``open_notebook.domain.notebook``.

A notebook holds sources (``source -reference-> notebook``) and notes
(``note -artifact-> notebook``); a source has insights (``source_insight``
records pointing at it) and chunks (``source_embedding``).

Besides the original's methods, the classes can load many records in one
round trip (``Source.get_many``, ``Note.get_many``,
``SourceInsight.for_sources``): the context builder uses them instead of one
query per record. Not carried over: the background-job hooks (embedding on
save, ``vectorize``, processing status), which belong to the application,
and the deletion of a source's uploaded file (a fastnotebook source may point
at a file the user still wants).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, Field, field_validator

from fastnotebook.app.database.record_id import RecordID
from fastnotebook.app.database.repository import repo_query
from fastnotebook.app.domain.base import ObjectModel
from fastnotebook.errors import InvalidInputError, NotFoundError

__all__ = ["Asset", "ContextSize", "Note", "Notebook", "Source", "SourceInsight"]

ContextSize = Literal["short", "long"]


def _unique(ids: Iterable[RecordID]) -> list[RecordID]:
    seen: dict[str, RecordID] = {}
    for rid in ids:
        seen.setdefault(str(rid), rid)
    return list(seen.values())


class Notebook(ObjectModel):
    table_name: ClassVar[str] = "notebook"
    name: str
    description: str = ""
    archived: bool | None = False

    @field_validator("name")
    @classmethod
    def name_must_not_be_empty(cls, v: str) -> str:
        if not v.strip():
            raise InvalidInputError("Notebook name cannot be empty")
        return v

    async def get_sources(self) -> list[Source]:
        """The notebook's sources without their full text, most recently
        updated first."""
        rows = await repo_query(
            "SELECT * OMIT full_text FROM array::distinct("
            "(SELECT VALUE in FROM reference WHERE out = $id)) ORDER BY updated DESC;",
            {"id": self._own_id()},
        )
        return [Source.from_row(row) for row in rows]

    async def get_notes(self, include_content: bool = False) -> list[Note]:
        """The notebook's notes, most recently updated first; without their
        content (as the original) unless ``include_content``."""
        omit = "embedding" if include_content else "content, embedding"
        rows = await repo_query(
            f"SELECT * OMIT {omit} FROM array::distinct("
            "(SELECT VALUE in FROM artifact WHERE out = $id)) ORDER BY updated DESC;",
            {"id": self._own_id()},
        )
        return [Note.from_row(row) for row in rows]

    def _own_id(self) -> RecordID:
        if self.id is None:
            raise InvalidInputError("the notebook has not been saved")
        return self.record_id(self.id)


class Asset(BaseModel):
    file_path: str | None = None
    url: str | None = None


class SourceInsight(ObjectModel):
    table_name: ClassVar[str] = "source_insight"
    insight_type: str
    content: str

    async def get_source(self) -> Source:
        """The source this insight was derived from."""
        rows = await repo_query(
            "SELECT VALUE source FROM $id;", {"id": self.record_id(self.id or "")}
        )
        if not rows:
            raise NotFoundError(f"insight {self.id} not found")
        return await Source.get(str(rows[0]))

    @classmethod
    async def for_sources(cls, source_ids: Sequence[str | RecordID]) -> dict[str, list[Self]]:
        """The insights of many sources in one round trip, by source id, each
        list in creation order. Sources without insights map to []."""
        ids = _unique(Source.record_id(s) for s in source_ids)
        if not ids:
            return {}
        rows = await repo_query(
            "RETURN array::flatten(array::map($ids, |$s| (SELECT * OMIT embedding "
            "FROM source_insight WHERE source = $s ORDER BY created, id)));",
            {"ids": ids},
        )
        found: dict[str, list[Self]] = {str(rid): [] for rid in ids}
        for row in rows:
            found[str(row["source"])].append(cls.from_row(row))
        return found


class Source(ObjectModel):
    table_name: ClassVar[str] = "source"
    asset: Asset | None = None
    title: str | None = None
    topics: list[str] | None = Field(default_factory=list)
    full_text: str | None = None

    @classmethod
    async def get_many(cls, ids: Sequence[str | RecordID], full_text: bool = True) -> list[Self]:
        """The existing sources among ``ids`` (bare or prefixed), in the order
        given, once each; with their full text unless ``full_text`` is False."""
        rids = _unique(cls.record_id(i) for i in ids)
        if not rids:
            return []
        omit = "" if full_text else " OMIT full_text"
        rows = await repo_query(f"SELECT *{omit} FROM $ids;", {"ids": rids})
        by_id = {str(row["id"]): cls.from_row(row) for row in rows}
        return [by_id[str(rid)] for rid in rids if str(rid) in by_id]

    def context(
        self, context_size: ContextSize, insights: Sequence[SourceInsight]
    ) -> dict[str, Any]:
        """``get_context`` with the insights already loaded."""
        dumped = [insight.model_dump() for insight in insights]
        if context_size == "long":
            return {
                "id": self.id,
                "title": self.title,
                "insights": dumped,
                "full_text": self.full_text,
            }
        return {"id": self.id, "title": self.title, "insights": dumped}

    async def get_context(self, context_size: ContextSize = "short") -> dict[str, Any]:
        """id, title and insights; with ``"long"`` also the full text."""
        return self.context(context_size, await self.get_insights())

    async def get_insights(self) -> list[SourceInsight]:
        """The source's insights in creation order."""
        if self.id is None:
            return []
        return (await SourceInsight.for_sources([self.id]))[str(self.record_id(self.id))]

    async def add_insight(self, insight_type: str, content: str) -> SourceInsight:
        """Create an insight of this source (without an embedding)."""
        if not insight_type or not content:
            raise InvalidInputError("Insight type and content must be provided")
        if self.id is None:
            raise InvalidInputError("the source has not been saved")
        rows = await repo_query(
            "CREATE source_insight CONTENT {source: $source, insight_type: $type, "
            "content: $content} RETURN AFTER;",
            {"source": self.record_id(self.id), "type": insight_type, "content": content},
        )
        return SourceInsight.from_row(rows[0])

    async def add_to_notebook(self, notebook_id: str) -> list[dict[str, Any]]:
        if not notebook_id:
            raise InvalidInputError("Notebook ID must be provided")
        return await self.relate("reference", str(Notebook.record_id(notebook_id)))


class Note(ObjectModel):
    table_name: ClassVar[str] = "note"
    title: str | None = None
    note_type: Literal["human", "ai"] | None = None
    content: str | None = None

    @field_validator("content")
    @classmethod
    def content_must_not_be_empty(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise InvalidInputError("Note content cannot be empty")
        return v

    @classmethod
    async def get_many(cls, ids: Sequence[str | RecordID]) -> list[Self]:
        """The existing notes among ``ids`` (bare or prefixed), in the order
        given, once each."""
        rids = _unique(cls.record_id(i) for i in ids)
        if not rids:
            return []
        rows = await repo_query("SELECT * OMIT embedding FROM $ids;", {"ids": rids})
        by_id = {str(row["id"]): cls.from_row(row) for row in rows}
        return [by_id[str(rid)] for rid in rids if str(rid) in by_id]

    async def add_to_notebook(self, notebook_id: str) -> list[dict[str, Any]]:
        if not notebook_id:
            raise InvalidInputError("Notebook ID must be provided")
        return await self.relate("artifact", str(Notebook.record_id(notebook_id)))

    def get_context(self, context_size: ContextSize = "short") -> dict[str, Any]:
        """id, title and content; ``"short"`` keeps the first 100 characters."""
        if context_size == "long":
            return {"id": self.id, "title": self.title, "content": self.content}
        return {
            "id": self.id,
            "title": self.title,
            "content": self.content[:100] if self.content else None,
        }
