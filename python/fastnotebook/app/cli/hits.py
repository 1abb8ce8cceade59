"""What ``fastnotebook search`` prints: the ranked hits of an answer
(``fastnotebook.app.answers``' shape), as text or JSON."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # as typing's, without importing it (see search_route)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["counted", "hits_text", "render_answer"]


def render_answer(answer: dict[str, Any], query: str, k: int, *, as_json: bool) -> str:
    """The text ``search`` prints for ``answer``: the hits as JSON, or
    ranked under a count, with a pointer to ``notes search`` when there is
    none and the database holds a note vault."""
    if as_json:
        return json.dumps(answer["hits"], ensure_ascii=False, indent=2)
    text = hits_text(answer["hits"], answer["paths"], k=k)
    if not answer["hits"] and answer["vault"]:
        import shlex

        text += (
            f"\nthis database holds the note vault {answer['vault']}, which `notes search` "
            f"searches: fastnotebook notes search {shlex.quote(query)}"
        )
    return text


def hits_text(hits: Sequence[dict[str, Any]], paths: dict[str, str], k: int | None = None) -> str:
    """Ranked hits under a line that counts them as search -k does: by
    source (or note), each with its matching chunks."""
    if not hits:
        return "no hits"
    sources = sum(1 for hit in hits if str(hit["parent_id"]).startswith("source:"))
    chunks = sum(max(1, len(hit.get("matches") or [])) for hit in hits)
    found = [counted(sources, "source")] if sources else []
    if len(hits) > sources:
        found.append(counted(len(hits) - sources, "note"))
    head = f"{', '.join(found)} ({counted(chunks, 'chunk')})"
    if k is not None and len(hits) < k:
        head += f"; -k {k} asks for up to {k}: no other scored high enough"
    lines = [head]
    for rank, hit in enumerate(hits, 1):
        where = paths.get(str(hit["parent_id"])) or str(hit["id"])
        lines.append(
            f"{rank:>2}. {hit['similarity']:.3f}  {hit.get('title') or '(untitled)'}  [{where}]"
        )
        if hit.get("matches"):
            lines.append(f"      {_snippet(str(hit['matches'][0]))}")
            if len(hit["matches"]) > 1:
                lines.append(f"      (+ {counted(len(hit['matches']) - 1, 'more chunk')})")
    return "\n".join(lines)


def counted(n: int, noun: str) -> str:
    """``1 source``, ``2 sources``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
