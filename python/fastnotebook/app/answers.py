"""What ``search`` answers, the same from the command line and the HTTP API.

``search_answer`` runs the vector search and gathers what the command line
prints with the hits: the files of the sources among them, and the note
vault the database holds (whose notes ``notes search`` finds). The answer is
plain JSON (record ids as strings), so that ``fastnotebook search`` prints
the same whether it searched itself or asked the process that holds the
database (``fastnotebook.app.database.holder``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fastnotebook.app.database import Database, RecordID, ensure_record_id
from fastnotebook.app.domain.search import SearchMode, vector_search

__all__ = ["search_answer", "source_paths"]


async def search_answer(
    db: Database, query: str, k: int, minimum_score: float, mode: SearchMode
) -> dict[str, Any]:
    """``{"hits", "paths", "vault"}``: the ranked hits, the file path of each
    source among them (by id), and when there is no hit the stored vault's
    folder (or None), which the command line then points to."""
    hits = await vector_search(query, k, minimum_score=minimum_score, mode=mode)
    vault = None
    if not hits:
        # Imported here: the vault's store is a large import, needed only now.
        from fastnotebook.app.vault.store import stored_vault_root

        vault = await stored_vault_root(db)
    return {
        "hits": json.loads(json.dumps(hits, default=str)),
        "paths": await source_paths(db, hits),
        "vault": vault,
    }


async def source_paths(db: Database, hits: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The file paths of the sources among ``hits``, by source id."""
    ids: list[RecordID] = [
        ensure_record_id(str(h["parent_id"]))
        for h in hits
        if str(h["parent_id"]).startswith("source:")
    ]
    if not ids:
        return {}
    rows = await db.query("SELECT id, asset.file_path AS path FROM $ids;", {"ids": ids})
    return {str(row["id"]): row["path"] for row in rows or [] if row.get("path")}
