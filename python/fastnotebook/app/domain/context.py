"""The records ``fastnotebook.context_builder.ContextBuilder`` loads by
default: notebooks, sources, insights and notes of the embedded SurrealDB."""

from __future__ import annotations

from collections.abc import Sequence

from fastnotebook.app.domain.notebook import Note, Notebook, Source, SourceInsight

__all__ = ["DatabaseRecords"]


class DatabaseRecords:
    """``ContextRecords`` over the application's database (the domain
    objects' own queries, a batch at a time)."""

    def source_record_id(self, source_id: str) -> str:
        return str(Source.record_id(source_id))

    def note_record_id(self, note_id: str) -> str:
        return str(Note.record_id(note_id))

    async def sources(self, ids: Sequence[str], *, full_text: bool) -> list[Source]:
        return await Source.get_many(ids, full_text=full_text)

    async def insights(self, source_ids: Sequence[str]) -> dict[str, list[SourceInsight]]:
        return await SourceInsight.for_sources(source_ids)

    async def notes(self, ids: Sequence[str]) -> list[Note]:
        return await Note.get_many(ids)

    async def notebook(self, notebook_id: str) -> Notebook:
        return await Notebook.get(notebook_id)
