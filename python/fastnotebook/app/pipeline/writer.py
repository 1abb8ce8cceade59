"""The pipeline's database writes: each a single transaction with ``RETURN NONE``.

A group of finished records is written at once: for sources, their old
chunks are deleted and the new ones inserted; for insights and notes, the
pooled vector is set on the record; and for each record its state row (see
``fastnotebook.app.pipeline.state``) is written alongside. One transaction per
group means a record is always either entirely old (old chunks, old state)
or entirely new, whatever kills the process, and many records share one
round trip. Records deleted while the run was working are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastnotebook.app.database import Database, RecordID
from fastnotebook.app.pipeline.state import Kind, Settings, state_id

__all__ = ["Finished", "write_group"]


@dataclass
class Finished:
    """A record ready to be written: its chunks and their vectors (sources),
    or its one vector (insights and notes; None when its text is empty)."""

    id: RecordID
    kind: Kind
    content_hash: str
    size: int
    chunks: list[str]
    vectors: list[list[float]]
    epoch: int
    path: str | None = None  # a source's file, for the failure report

    @property
    def rows(self) -> int:
        return max(1, len(self.chunks))


_SOURCES = """
BEGIN TRANSACTION;
LET $live = array::filter($ids, |$id| record::exists($id));
DELETE source_embedding WHERE source IN $live RETURN NONE;
INSERT INTO source_embedding (SELECT * FROM $rows WHERE source IN $live) RETURN NONE;
INSERT INTO embedding_state (SELECT * FROM $states WHERE record IN $live)
    ON DUPLICATE KEY UPDATE content_hash = $input.content_hash, model = $input.model,
    chunking = $input.chunking, epoch = $input.epoch, chunks = $input.chunks RETURN NONE;
COMMIT TRANSACTION;
"""

_POOLED = """
BEGIN TRANSACTION;
LET $live = array::filter($ids, |$id| record::exists($id));
FOR $row IN $rows { UPDATE $row.id SET embedding = $row.embedding ?? NONE RETURN NONE; };
INSERT INTO embedding_state (SELECT * FROM $states WHERE record IN $live)
    ON DUPLICATE KEY UPDATE content_hash = $input.content_hash, model = $input.model,
    chunking = $input.chunking, epoch = $input.epoch, chunks = $input.chunks RETURN NONE;
COMMIT TRANSACTION;
"""


def _state(item: Finished, settings: Settings) -> dict[str, Any]:
    return {
        "id": state_id(item.id),
        "record": item.id,
        "kind": item.kind,
        "content_hash": item.content_hash,
        "model": settings.model,
        "chunking": settings.chunking,
        "epoch": item.epoch,
        "chunks": len(item.chunks),
    }


def statement(group: Sequence[Finished], settings: Settings) -> tuple[str, dict[str, Any]]:
    """The transaction that writes ``group`` (records of one kind) and its parameters."""
    kind = group[0].kind
    ids = [item.id for item in group]
    states = [_state(item, settings) for item in group]
    if kind == "source":
        rows = [
            {"source": item.id, "order": i, "content": text, "embedding": vector}
            for item in group
            for i, (text, vector) in enumerate(zip(item.chunks, item.vectors, strict=True))
        ]
        return _SOURCES, {"ids": ids, "rows": rows, "states": states}
    rows = [
        {"id": item.id, "embedding": item.vectors[0] if item.vectors else None} for item in group
    ]
    return _POOLED, {"ids": ids, "rows": rows, "states": states}


async def write_group(db: Database, group: Sequence[Finished], settings: Settings) -> None:
    """Write ``group`` in one transaction."""
    sql, params = statement(group, settings)
    await db.query_all(sql, params)
