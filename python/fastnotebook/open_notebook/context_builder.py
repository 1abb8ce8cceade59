"""Context building for chat, as ``open_notebook.utils.context_builder`` of
Open Notebook's current release.

- ``build_notebook_context(notebook, context_config)`` (behind
  ``POST /api/chat/context``): the notebook's sources and notes as chosen by
  the inclusion config ("not in context" skips an item, "insights" takes a
  source's short context, "full content" the long one; without a config every
  source and note, short), returned with the concatenated ``str()`` of every
  included context.
- ``build_source_context(source_id, max_tokens)`` (the source chat): one
  source's short context and its insights, insights dropped from the end until
  the ``o200k_base`` token total fits ``max_tokens``.

The records come from the application: ``Source``, ``Note``, ``Notebook`` and
``SourceInsight`` are ``open_notebook.domain.notebook``'s, and
``NotFoundError``/``DatabaseOperationError`` ``open_notebook.exceptions``'.
They are module attributes imported on first use (so that this module imports
without the application), and read at each call, so that code patching
``<this module>.Source`` (or ``Source.get``) is obeyed.
"""

from __future__ import annotations

from typing import Any

from loguru import logger

from fastnotebook import _core
from fastnotebook.open_notebook._app import app_module
from fastnotebook.open_notebook.token_utils import ENCODING, token_count

# The application's names (Source, Note, Notebook, SourceInsight,
# NotFoundError, DatabaseOperationError) are attributes too, but not in
# __all__: a star import would import the application.
__all__ = [
    "build_notebook_context",
    "build_source_context",
    "token_count",
]

#: The application's names this module exposes, and where they live.
_APP_NAMES: dict[str, str] = {
    "Note": "open_notebook.domain.notebook",
    "Notebook": "open_notebook.domain.notebook",
    "Source": "open_notebook.domain.notebook",
    "SourceInsight": "open_notebook.domain.notebook",
    "DatabaseOperationError": "open_notebook.exceptions",
    "NotFoundError": "open_notebook.exceptions",
}


def _app(name: str) -> Any:
    """The application's object ``name``: this module's attribute if it is
    set (imported before, or patched), else imported and kept here."""
    found = globals().get(name)
    if found is None:
        found = getattr(app_module(_APP_NAMES[name], __name__), name)
        globals()[name] = found
    return found


def __getattr__(name: str) -> Any:
    if name in _APP_NAMES:
        return _app(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_APP_NAMES})


def _ensure_prefix(table: str, record_id: str) -> str:
    """``record_id`` with its table prefix (``table:id``)."""
    prefix = f"{table}:"
    return record_id if record_id.startswith(prefix) else f"{prefix}{record_id}"


async def build_notebook_context(
    notebook: Any,
    context_config: dict[str, Any] | None,
) -> tuple[dict[str, list[Any]], str]:
    """The notebook's source and note contexts, chosen by ``context_config``.

    With a config, an entry whose status contains "not in" is skipped;
    "insights" includes a source's short context and "full content" its long
    one (notes: "full content" only). Without one (or an empty one), every
    source (with its insights, fetched in one query) and every note is
    included with its short context. A failing item is logged and skipped.

    Returns ``({"sources": [...], "notes": [...]}, total_content)``, the
    second the concatenated ``str()`` of every included context.
    """
    context_data: dict[str, list[Any]] = {"sources": [], "notes": []}
    total_content = ""

    if context_config:
        source_cls = _app("Source")
        for source_id, status in context_config.get("sources", {}).items():
            if "not in" in status:
                continue
            try:
                try:
                    source = await source_cls.get(_ensure_prefix("source", source_id))
                except Exception:
                    continue
                size = (
                    "short"
                    if "insights" in status
                    else "long"
                    if "full content" in status
                    else None
                )
                if size is not None:
                    source_context = await source.get_context(context_size=size)
                    context_data["sources"].append(source_context)
                    total_content += str(source_context)
            except Exception as e:
                logger.warning(f"Error processing source {source_id}: {e!s}")

        note_cls = _app("Note")
        for note_id, status in context_config.get("notes", {}).items():
            if "not in" in status:
                continue
            try:
                note = await note_cls.get(_ensure_prefix("note", note_id))
                if not note:
                    continue
                if "full content" in status:
                    note_context = note.get_context(context_size="long")
                    context_data["notes"].append(note_context)
                    total_content += str(note_context)
            except Exception as e:
                logger.warning(f"Error processing note {note_id}: {e!s}")
        return context_data, total_content

    sources = await notebook.get_sources()
    try:
        insights_by_source = await _app("SourceInsight").get_for_sources(
            [source.id for source in sources if source.id]
        )
    except Exception as e:
        # One failed query must not fail the whole context: no insights then.
        logger.warning(f"Error batch-fetching source insights: {e!s}")
        insights_by_source = {}
    for source in sources:
        try:
            source_context = await source.get_context(
                context_size="short", insights=insights_by_source.get(source.id or "", [])
            )
            context_data["sources"].append(source_context)
            total_content += str(source_context)
        except Exception as e:
            logger.warning(f"Error processing source {source.id}: {e!s}")

    for note in await notebook.get_notes():
        try:
            note_context = note.get_context(context_size="short")
            context_data["notes"].append(note_context)
            total_content += str(note_context)
        except Exception as e:
            logger.warning(f"Error processing note {note.id}: {e!s}")
    return context_data, total_content


async def build_source_context(source_id: str, max_tokens: int | None = None) -> dict[str, Any]:
    """One source's short context and its insights, for the source chat.

    With ``max_tokens``, insights are dropped from the last until the total
    fits (the source itself only if it alone exceeds the budget). A missing
    source gives an empty context. Returns ``sources``, ``notes`` (always
    empty), ``insights``, ``total_tokens``, ``total_items`` and the counts in
    ``metadata``; any failure is raised as the application's
    ``DatabaseOperationError``.
    """
    database_error = _app("DatabaseOperationError")
    try:
        not_found = _app("NotFoundError")
        sources: list[Any] = []
        insights: list[dict[str, Any]] = []
        items: list[str] = []

        try:
            source = await _app("Source").get(_ensure_prefix("source", source_id))
        except not_found:
            source = None

        if source:
            source_context = await source.get_context(context_size="short")
            sources.append(source_context)
            items.append(str(source_context))
            for insight in await source.get_insights():
                insight_content = {
                    "id": insight.id,
                    "source_id": source.id,
                    "insight_type": insight.insight_type,
                    "content": insight.content,
                }
                insights.append(insight_content)
                items.append(str(insight_content))
        else:
            logger.warning(f"Source {source_id} not found")

        item_tokens = _core.token_counts(items, ENCODING)
        total_tokens = sum(item_tokens)
        if max_tokens:
            while total_tokens > max_tokens and item_tokens:
                total_tokens -= item_tokens.pop()
                if insights:
                    insights.pop()
                else:
                    sources.pop()

        total_items = len(sources) + len(insights)
        logger.info(f"Built context with {total_items} items, {total_tokens} tokens")
        return {
            "sources": sources,
            "notes": [],
            "insights": insights,
            "total_tokens": total_tokens,
            "total_items": total_items,
            "metadata": {
                "source_count": len(sources),
                "note_count": 0,
                "insight_count": len(insights),
            },
        }
    except Exception as e:
        logger.error(f"Error building context: {e!s}")
        raise database_error(f"Failed to build context: {e!s}") from e
