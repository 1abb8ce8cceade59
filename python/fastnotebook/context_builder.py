"""What reaches the language model: ``ContextBuilder``, a drop-in for
``open_notebook.utils.context_builder``.

The builder collects a notebook's (or one source's) sources, insights and
notes as ``ContextItem``s, removes duplicate ids (the first wins), orders
them by priority (stable: equal priorities keep their order) and, given a
``max_tokens`` budget, drops items from the lowest-priority end until the
rest fits. Per source, the inclusion level is matched by substring: "not in"
leaves it out, "full content" adds its full text, "insights" adds its
insights as items of their own; per note, "full content" adds all of it,
anything else but "not in" its first 100 characters.

Same API and output as the original, computed differently:

- Records are loaded a batch at a time (the sources, their insights, the
  notes: a few round trips per notebook) instead of two or three queries per
  source, and a source's full text is loaded only when it is asked for.
- The token counts of all the builder's items are computed in one batched
  call (``token_utils.token_counts``, in Rust on all cores), after duplicates
  are removed.

Behaviour that differs, each where the original contradicts itself:

- A source level such as "not in context" excludes the source; the original
  only excludes the exact string "not in" (its notes already match substrings).
- ``max_tokens``, ``include_insights`` and ``include_notes`` fall back to the
  ``context_config``'s values when not passed; the original ignored the
  config's and used its own defaults.
- A missing notebook raises ``NotFoundError`` and a malformed notebook id
  ``InvalidInputError`` (the original wraps both in ``DatabaseOperationError``);
  database failures raise ``DatabaseOperationError``. A missing or malformed
  source or note id is logged and skipped, as in the original.
- Bare notebook ids get the ``notebook:`` prefix, as source and note ids do.
- Without a notebook, the sources and notes named in the config are still
  added (the original ignored them, so ``build_mixed_context`` without a
  notebook returned nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal, Protocol

from loguru import logger

from fastnotebook.errors import InvalidInputError
from fastnotebook.token_utils import token_count, token_counts

__all__ = [
    "ContextBuilder",
    "ContextConfig",
    "ContextItem",
    "ContextRecords",
    "build_mixed_context",
    "build_notebook_context",
    "build_source_context",
    "default_records",
    "set_default_records",
]

ContextSize = Literal["short", "long"]


class SourceRecord(Protocol):
    """A loaded source, as the builder reads it."""

    @property
    def id(self) -> str | None: ...

    def context(self, context_size: ContextSize, insights: Any) -> dict[str, Any]:
        """Its context item's content at ``context_size``, with ``insights``
        (its own, as ``ContextRecords.insights`` loaded them)."""
        ...


class InsightRecord(Protocol):
    """A loaded insight of a source."""

    @property
    def id(self) -> str | None: ...
    @property
    def insight_type(self) -> str: ...
    @property
    def content(self) -> str: ...


class NoteRecord(Protocol):
    """A loaded note."""

    @property
    def id(self) -> str | None: ...

    def get_context(self, context_size: ContextSize = "short") -> dict[str, Any]:
        """Its context item's content at ``context_size``."""
        ...


class NotebookRecord(Protocol):
    """A loaded notebook."""

    async def get_sources(self) -> Sequence[SourceRecord]:
        """Its sources (without their full text)."""
        ...

    async def get_notes(self, include_content: bool = False) -> Sequence[NoteRecord]:
        """Its notes."""
        ...


class ContextRecords(Protocol):
    """Where a ``ContextBuilder`` loads notebooks, sources, insights and notes
    from (``records=``; by default, ``default_records()``)."""

    def source_record_id(self, source_id: str) -> str:
        """The full record id of a source id; ``InvalidInputError`` if malformed."""
        ...

    def note_record_id(self, note_id: str) -> str:
        """The full record id of a note id; ``InvalidInputError`` if malformed."""
        ...

    async def sources(self, ids: Sequence[str], *, full_text: bool) -> Sequence[SourceRecord]:
        """The sources of those ids that exist."""
        ...

    async def insights(self, source_ids: Sequence[str]) -> Mapping[str, Sequence[InsightRecord]]:
        """The insights of each of the sources, by source id."""
        ...

    async def notes(self, ids: Sequence[str]) -> Sequence[NoteRecord]:
        """The notes of those ids that exist."""
        ...

    async def notebook(self, notebook_id: str) -> NotebookRecord:
        """The notebook; ``NotFoundError`` if there is none."""
        ...


#: The entry point group naming a zero-argument callable that returns the
#: default records (the application declares its database there).
RECORDS_ENTRY_POINTS = "fastnotebook.context_records"

_default_records: ContextRecords | None = None


def set_default_records(records: ContextRecords | None) -> None:
    """Make ``records`` what builders created without ``records=`` load from
    (``None``: look them up again, see ``default_records``)."""
    global _default_records
    _default_records = records


def default_records() -> ContextRecords:
    """What builders load from when not given ``records=``: the records set by
    ``set_default_records`` (importing ``fastnotebook.app.domain`` sets its
    database's), else those the installed ``fastnotebook.context_records``
    entry point makes (the application's database, with the ``app`` extra).
    Raises ``ImportError`` when there are none."""
    global _default_records
    if _default_records is not None:
        return _default_records
    found = sorted(entry_points(group=RECORDS_ENTRY_POINTS), key=lambda ep: ep.name)
    try:
        if not found:
            raise ImportError(f"no {RECORDS_ENTRY_POINTS} entry point is installed")
        records: ContextRecords = found[0].load()()
    except ImportError as e:
        raise ImportError(
            f"ContextBuilder loads notebooks from the database, which needs the app extra "
            f"(pip install 'fastnotebook[app]'): {e}"
        ) from e
    _default_records = records
    return records


ItemType = Literal["source", "note", "insight"]
DEFAULT_PRIORITY_WEIGHTS = {"source": 100, "note": 50, "insight": 75}


@dataclass
class ContextItem:
    """One item of the context; ``token_count`` is counted from
    ``str(content)`` when not given."""

    id: str
    type: ItemType
    content: dict[str, Any]
    priority: int = 0
    token_count: int | None = None

    def __post_init__(self) -> None:
        if self.token_count is None:
            self.token_count = token_count(str(self.content))


@dataclass
class ContextConfig:
    """What to include. ``sources``/``notes`` map ids to inclusion levels;
    empty means "everything in the notebook" (sources with insights, notes
    in full)."""

    sources: dict[str, str] | None = None
    notes: dict[str, str] | None = None
    include_insights: bool = True
    include_notes: bool = True
    max_tokens: int | None = None
    priority_weights: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if self.sources is None:
            self.sources = {}
        if self.notes is None:
            self.notes = {}
        if self.priority_weights is None:
            self.priority_weights = dict(DEFAULT_PRIORITY_WEIGHTS)


def _given(kwargs: Mapping[str, Any], key: str, fallback: Any) -> Any:
    value = kwargs.get(key)
    return fallback if value is None else value


class ContextBuilder:
    """Builds the context of a source and/or a notebook.

    Keyword arguments: ``source_id``, ``notebook_id``, ``include_insights``,
    ``include_notes``, ``context_config`` (a ``ContextConfig``),
    ``max_tokens``, ``records`` (a ``ContextRecords`` to load from instead of
    ``default_records()``); any others are kept in ``params`` for subclasses
    (``_process_custom_params`` sees them).
    """

    def __init__(self, **kwargs: Any) -> None:
        self.params = kwargs
        self.source_id: str | None = kwargs.get("source_id")
        self.notebook_id: str | None = kwargs.get("notebook_id")
        self._given_records: ContextRecords | None = kwargs.get("records")
        config: ContextConfig | None = kwargs.get("context_config")
        if config is None:
            config = ContextConfig(
                include_insights=_given(kwargs, "include_insights", True),
                include_notes=_given(kwargs, "include_notes", True),
                max_tokens=kwargs.get("max_tokens"),
            )
        self.context_config = config
        self.include_insights: bool = _given(kwargs, "include_insights", config.include_insights)
        self.include_notes: bool = _given(kwargs, "include_notes", config.include_notes)
        self.max_tokens: int | None = _given(kwargs, "max_tokens", config.max_tokens)
        self.items: list[ContextItem] = []
        self._uncounted: list[ContextItem] = []
        logger.debug("ContextBuilder initialized with params: {}", list(kwargs))

    async def build(self) -> dict[str, Any]:
        """Collect, deduplicate, count, prioritise, fit the budget, format."""
        self.items = []
        self._uncounted = []
        if self.source_id:
            await self._add_source_context(self.source_id)
        if self.notebook_id:
            await self._add_notebook_context(self.notebook_id)
        else:
            await self._add_configured_items()
        await self._process_custom_params()
        self.remove_duplicates()
        self._count_tokens()
        self.prioritize()
        if self.max_tokens:
            self.truncate_to_fit(self.max_tokens)
        return self._format_response()

    def _records(self) -> ContextRecords:
        """Where this builder loads from (looked up when it first loads: items
        added by hand need no database)."""
        if self._given_records is None:
            self._given_records = default_records()
        return self._given_records

    def _weight(self, item_type: ItemType) -> int:
        return (self.context_config.priority_weights or {}).get(
            item_type, DEFAULT_PRIORITY_WEIGHTS[item_type]
        )

    def _add_uncounted(self, item_id: str, kind: ItemType, content: dict[str, Any]) -> None:
        """Add an item whose tokens ``_count_tokens`` counts later, in one batch."""
        item = ContextItem(item_id, kind, content, priority=self._weight(kind), token_count=0)
        self._uncounted.append(item)
        self.add_item(item)

    def _count_tokens(self) -> None:
        """Count the builder's own items still present, in one batched call."""
        present = {id(item) for item in self.items}
        todo = [item for item in self._uncounted if id(item) in present]
        for item, count in zip(
            todo, token_counts([str(item.content) for item in todo]), strict=True
        ):
            item.token_count = count
        self._uncounted = []

    async def _add_source_context(self, source_id: str, inclusion_level: str = "insights") -> None:
        """Add one source (and its insights, by the level)."""
        await self._add_sources_context({source_id: inclusion_level})

    async def _add_sources_context(self, levels: Mapping[str, str]) -> None:
        """Add sources by id -> inclusion level, in that order, loading them in
        batches. Missing and malformed ids are logged and skipped."""
        records = self._records()
        wanted: list[tuple[str, str]] = []
        for source_id, level in levels.items():
            if "not in" in level:
                continue
            try:
                wanted.append((records.source_record_id(source_id), level))
            except InvalidInputError as e:
                logger.warning("Source {} skipped: {}", source_id, e)
        full = [rid for rid, level in wanted if "full content" in level]
        short = [rid for rid, level in wanted if "full content" not in level]
        loaded = {
            "long": {s.id: s for s in await records.sources(full, full_text=True)},
            "short": {s.id: s for s in await records.sources(short, full_text=False)},
        }
        entries: list[tuple[SourceRecord, str]] = []
        for rid, level in wanted:
            source = loaded["long" if "full content" in level else "short"].get(rid)
            if source is None:
                logger.warning("Source {} not found", rid)
            else:
                entries.append((source, level))
        await self._add_loaded_sources(entries)

    async def _add_loaded_sources(self, entries: Sequence[tuple[SourceRecord, str]]) -> None:
        insights = await self._records().insights([s.id for s, _ in entries if s.id])
        for source, level in entries:
            source_insights = insights.get(str(source.id), [])
            size: ContextSize = "long" if "full content" in level else "short"
            self._add_uncounted(source.id or "", "source", source.context(size, source_insights))
            if self.include_insights and "insights" in level:
                for insight in source_insights:
                    content = {
                        "id": insight.id,
                        "source_id": source.id,
                        "insight_type": insight.insight_type,
                        "content": insight.content,
                    }
                    self._add_uncounted(insight.id or "", "insight", content)

    async def _add_notebook_context(self, notebook_id: str) -> None:
        """Add the notebook's sources and notes as the config says (all of
        them by default). ``NotFoundError`` if there is no such notebook."""
        notebook = await self._records().notebook(notebook_id)
        if self.context_config.sources:
            await self._add_sources_context(self.context_config.sources)
        else:
            sources = await notebook.get_sources()
            await self._add_loaded_sources([(source, "insights") for source in sources])
        if not self.include_notes:
            return
        if self.context_config.notes:
            await self._add_notes_context(self.context_config.notes)
        else:
            notes = await notebook.get_notes(include_content=True)
            self._add_loaded_notes((note, "full content") for note in notes)

    async def _add_configured_items(self) -> None:
        """Without a notebook, the sources and notes the config names."""
        if self.context_config.sources:
            await self._add_sources_context(self.context_config.sources)
        if self.include_notes and self.context_config.notes:
            await self._add_notes_context(self.context_config.notes)

    async def _add_note_context(self, note_id: str, inclusion_level: str = "full content") -> None:
        """Add one note."""
        await self._add_notes_context({note_id: inclusion_level})

    async def _add_notes_context(self, levels: Mapping[str, str]) -> None:
        """Add notes by id -> inclusion level, in that order, in one query.
        Missing and malformed ids are logged and skipped."""
        records = self._records()
        wanted: list[tuple[str, str]] = []
        for note_id, level in levels.items():
            if "not in" in level:
                continue
            try:
                wanted.append((records.note_record_id(note_id), level))
            except InvalidInputError as e:
                logger.warning("Note {} skipped: {}", note_id, e)
        loaded = {note.id: note for note in await records.notes([rid for rid, _ in wanted])}
        entries: list[tuple[NoteRecord, str]] = []
        for rid, level in wanted:
            note = loaded.get(rid)
            if note is None:
                logger.warning("Note {} not found", rid)
            else:
                entries.append((note, level))
        self._add_loaded_notes(entries)

    def _add_loaded_notes(self, entries: Iterable[tuple[NoteRecord, str]]) -> None:
        for note, level in entries:
            size: ContextSize = "long" if "full content" in level else "short"
            self._add_uncounted(note.id or "", "note", note.get_context(context_size=size))

    async def _process_custom_params(self) -> None:
        """Hook for subclasses: runs after the sources and notes are added,
        before deduplication; ``custom_*`` parameters are logged here."""
        for key, value in self.params.items():
            if key.startswith("custom_"):
                logger.debug("Processing custom parameter: {}={}", key, value)

    def add_item(self, item: ContextItem) -> None:
        """Append an item (counted already, or by ``build``)."""
        self.items.append(item)

    def prioritize(self) -> None:
        """Highest priority first; equal priorities keep their order."""
        self.items.sort(key=lambda x: x.priority, reverse=True)

    def truncate_to_fit(self, max_tokens: int) -> None:
        """Drop items from the end (the lowest priority) while the total is
        over ``max_tokens``."""
        if not max_tokens:
            return
        total = sum(item.token_count or 0 for item in self.items)
        if total <= max_tokens:
            return
        removed = 0
        while total > max_tokens and self.items:
            total -= self.items.pop().token_count or 0
            removed += 1
        logger.info("Removed {} items to fit {} tokens; {} left", removed, max_tokens, total)

    def remove_duplicates(self) -> None:
        """Keep the first item of each id."""
        seen: set[str] = set()
        unique: list[ContextItem] = []
        for item in self.items:
            if item.id not in seen:
                seen.add(item.id)
                unique.append(item)
        if len(unique) < len(self.items):
            logger.debug("Removed {} duplicate items", len(self.items) - len(unique))
        self.items = unique

    def _format_response(self) -> dict[str, Any]:
        grouped: dict[str, list[dict[str, Any]]] = {"source": [], "note": [], "insight": []}
        for item in self.items:
            grouped[item.type].append(item.content)
        total_tokens = sum(item.token_count or 0 for item in self.items)
        response: dict[str, Any] = {
            "sources": grouped["source"],
            "notes": grouped["note"],
            "insights": grouped["insight"],
            "total_tokens": total_tokens,
            "total_items": len(self.items),
            "metadata": {
                "source_count": len(grouped["source"]),
                "note_count": len(grouped["note"]),
                "insight_count": len(grouped["insight"]),
                "config": {
                    "include_insights": self.include_insights,
                    "include_notes": self.include_notes,
                    "max_tokens": self.max_tokens,
                },
            },
        }
        if self.notebook_id:
            response["notebook_id"] = self.notebook_id
        logger.info("Built context with {} items, {} tokens", len(self.items), total_tokens)
        return response


async def build_notebook_context(
    notebook_id: str,
    context_config: ContextConfig | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The context of a notebook."""
    builder = ContextBuilder(
        notebook_id=notebook_id, context_config=context_config, max_tokens=max_tokens
    )
    return await builder.build()


async def build_source_context(
    source_id: str, include_insights: bool = True, max_tokens: int | None = None
) -> dict[str, Any]:
    """The context of one source (with its insights unless told otherwise)."""
    builder = ContextBuilder(
        source_id=source_id, include_insights=include_insights, max_tokens=max_tokens
    )
    return await builder.build()


async def build_mixed_context(
    source_ids: list[str] | None = None,
    note_ids: list[str] | None = None,
    notebook_id: str | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The context of chosen sources (with insights) and notes (in full) of a
    notebook."""
    context_config = ContextConfig(max_tokens=max_tokens)
    if source_ids:
        context_config.sources = {sid: "insights" for sid in source_ids}
    if note_ids:
        context_config.notes = {nid: "full content" for nid in note_ids}
    builder = ContextBuilder(
        notebook_id=notebook_id, context_config=context_config, max_tokens=max_tokens
    )
    return await builder.build()
