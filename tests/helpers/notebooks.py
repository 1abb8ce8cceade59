"""A seeded notebook in the current database: sources with insights and full
texts, notes, and a second notebook whose records must never appear."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastnotebook.app.domain import Note, Notebook, Source, SourceInsight


@dataclass
class Seeded:
    notebook: Notebook
    sources: list[Source]
    insights: dict[str, list[SourceInsight]]
    notes: list[Note]
    other_notebook: Notebook = field(default_factory=lambda: Notebook(name="other"))

    @property
    def id(self) -> str:
        return self.notebook.id or ""


async def seed(sources: int = 12, insights: int = 3, notes: int = 5) -> Seeded:
    """A notebook with sources (each with insights and a full text), notes,
    and a second notebook whose records must never appear."""
    notebook = Notebook(name="Research", description="seeded")
    other = Notebook(name="Other")
    await notebook.save()
    await other.save()
    made = Seeded(notebook, [], {}, [], other)
    for i in range(sources):
        source = Source(title=f"Source {i}", full_text=f"Full text of source {i}. " * (5 + i))
        await source.save()
        await source.add_to_notebook(made.id)
        made.sources.append(source)
        made.insights[source.id or ""] = [
            await source.add_insight(f"type{j}", f"Insight {j} of source {i}: " + "idea " * (j + 2))
            for j in range(insights)
        ]
    for i in range(notes):
        note = Note(title=f"Note {i}", content=f"Note {i} says " + "thought " * (20 + i))
        await note.save()
        await note.add_to_notebook(made.id)
        made.notes.append(note)
    stranger = Source(title="Stranger", full_text="not in this notebook")
    await stranger.save()
    await stranger.add_to_notebook(other.id or "")
    return made
