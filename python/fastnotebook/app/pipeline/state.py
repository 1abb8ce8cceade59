"""Which records need embedding: the incremental part of the pipeline.

Every embedded record (source, insight, note) has an ``embedding_state`` row,
written in the same transaction as its vectors: the SHA-256 of the text that
was embedded, the model, the chunking settings, and the rebuild epoch of its
kind. A record is up to date when all four still match, so an unchanged
record is never embedded twice, and a run killed at any point leaves every
record either up to date or due.

The hashes of the current texts are computed by the database
(``crypto::sha256``), so planning never transfers the texts themselves; its
events keep them in ``text_digest`` (see the schema), so planning reads those
small rows, not the texts. Where a kind's digests are not all there (a
database whose text changed before the digests existed cannot have that:
the migration that adds them computes them), the hashes are computed from
the texts, as before.

``--rebuild`` raises the epoch of the kinds it covers, in one write: every
existing state becomes due, and a run that is interrupted is finished by the
next plain ``embed`` rather than started over.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal, NamedTuple

from fastnotebook.app.database import Database, RecordID
from fastnotebook.app.database.schema import TEXT_DIGEST, TEXT_FIELDS
from fastnotebook.chunking import ChunkingConfig

__all__ = [
    "KINDS",
    "LABELS",
    "Item",
    "Plan",
    "Settings",
    "bump_epochs",
    "chunking_fingerprint",
    "epochs",
    "plan",
    "state_id",
]

Kind = Literal["source", "source_insight", "note"]
KINDS: tuple[Kind, ...] = ("source", "source_insight", "note")
LABELS: dict[str, str] = {"source": "sources", "source_insight": "insights", "note": "notes"}
TEXT_FIELD: dict[str, str] = TEXT_FIELDS
EPOCHS = "fastnotebook_meta:embedding_epochs"
Rebuild = Literal["existing", "all"]


@dataclass(frozen=True)
class Settings:
    """What, besides the text, determines a record's vectors."""

    model: str  # "provider/model name"
    chunking: str  # chunking_fingerprint()


def chunking_fingerprint(config: ChunkingConfig) -> str:
    """The resolved chunking configuration as a short stable string."""
    c = config.resolved()
    text = f"{c.unit} {c.chunk_size}/{c.chunk_overlap}"
    if c.unit == "tokens":
        text += f" min {c.min_chunk_size} {c.encoding}"
    return text


def state_id(record: RecordID) -> RecordID:
    """The id of a record's state row (see the schema's ``embedding_state``)."""
    return RecordID("embedding_state", [record])


@dataclass(frozen=True)
class Item:
    """A record to embed: its id and the size of its text in bytes."""

    id: RecordID
    kind: Kind
    size: int


@dataclass
class Plan:
    """The records to embed, by kind, and how many were already up to date."""

    due: dict[str, list[Item]]
    unchanged: dict[str, int]

    @property
    def items(self) -> int:
        return sum(len(v) for v in self.due.values())

    @property
    def bytes(self) -> int:
        return sum(i.size for v in self.due.values() for i in v)


async def epochs(db: Database) -> dict[str, int]:
    """The current rebuild epoch of each kind (0 before any rebuild)."""
    row = await db.query(f"SELECT * FROM ONLY {EPOCHS};")
    row = row if isinstance(row, dict) else {}
    return {kind: int(row.get(kind) or 0) for kind in KINDS}


async def bump_epochs(db: Database, kinds: tuple[Kind, ...]) -> None:
    """Make every existing state of ``kinds`` due (one write)."""
    sets = ", ".join(f"{kind} = ({kind} ?? 0) + 1" for kind in kinds)
    await db.query(f"UPSERT {EPOCHS} SET {sets} RETURN NONE;")


class _Text(NamedTuple):
    """A record's text as planning sees it."""

    id: RecordID
    hash: str  # SHA-256, hex
    size: int  # bytes
    has_text: bool  # more than whitespace


async def _texts(db: Database, kinds: tuple[Kind, ...]) -> dict[str, list[_Text]]:
    """Every record of ``kinds``: from the digest rows for a kind that has
    one for every record, else computed from the texts."""
    # One statement: one transaction, so the digests and the counts agree.
    # Every digest in one scan of the table, as arrays: a third cheaper for
    # the engine than the kind index and objects when most rows are asked
    # for (a digest row is small).
    counts = ", ".join(
        f"{kind}: (SELECT count() FROM {kind} GROUP ALL)[0].count ?? 0" for kind in kinds
    )
    found = await db.query(
        f"RETURN {{ digests: (SELECT VALUE [kind, record, hash, size, has_text] "
        f"FROM {TEXT_DIGEST}), counts: {{ {counts} }} }};"
    )
    found = found if isinstance(found, dict) else {}
    by_kind: dict[str, list[_Text]] = {kind: [] for kind in kinds}
    for kind, *row in found.get("digests") or []:
        if kind in by_kind:
            by_kind[kind].append(_Text(*row))
    totals = found.get("counts") or {}
    for kind in kinds:
        if len(by_kind[kind]) != totals.get(kind):
            by_kind[kind] = await _computed(db, kind)
    return by_kind


class _State(NamedTuple):
    """What a record was last embedded from (its ``embedding_state`` row)."""

    content_hash: str
    model: str
    chunking: str
    epoch: int


async def _states(db: Database, kinds: tuple[Kind, ...]) -> dict[str, dict[str, _State]]:
    """The state rows of ``kinds`` by record (as ``str``), in one scan."""
    rows = await db.query(
        "SELECT VALUE [kind, record, content_hash, model, chunking, epoch] FROM embedding_state;"
    )
    by_kind: dict[str, dict[str, _State]] = {kind: {} for kind in kinds}
    for kind, record, *state in rows or []:
        if kind in by_kind:
            by_kind[kind][str(record)] = _State(*state)
    return by_kind


async def _computed(db: Database, kind: Kind) -> list[_Text]:
    """Every record of ``kind`` with its text's hash computed by the engine."""
    field = TEXT_FIELD[kind]
    rows = await db.query(
        f"SELECT VALUE [id, crypto::sha256({field} ?? ''), "
        f"bytes::len(<bytes> ({field} ?? '')), string::trim({field} ?? '') != ''] FROM {kind};"
    )
    return [_Text(*row) for row in rows or []]


async def _embedded_without_state(db: Database, kind: Kind) -> set[str]:
    """Records with vectors written by something else (Open Notebook itself)."""
    if kind == "source":
        query = "RETURN array::distinct(SELECT VALUE source FROM source_embedding);"
    else:
        query = f"SELECT VALUE id FROM {kind} WHERE embedding != NONE;"
    return {str(rid) for rid in await db.query(query) or []}


async def plan(
    db: Database, kinds: tuple[Kind, ...], settings: Settings, rebuild: Rebuild | None
) -> Plan:
    """The records of ``kinds`` whose text, settings or epoch changed since
    they were embedded (with ``rebuild="existing"``: only records that already
    had vectors). A record that lost its text is due too: its vectors go."""
    current = await epochs(db)
    result = Plan(due={}, unchanged={})
    # Two reads at once: the embedded engine answers them on two cores.
    texts, states_by_kind = await asyncio.gather(_texts(db, kinds), _states(db, kinds))
    for kind in kinds:
        states = states_by_kind[kind]
        existing = await _embedded_without_state(db, kind) if rebuild == "existing" else set()
        due: list[Item] = []
        unchanged = 0
        for text in texts[kind]:
            key = str(text.id)
            state = states.get(key)
            if state is None:
                wanted = text.has_text and (rebuild != "existing" or key in existing)
            else:
                wanted = (
                    state.content_hash != text.hash
                    or state.model != settings.model
                    or state.chunking != settings.chunking
                    or int(state.epoch) < current[kind]
                )
                unchanged += not wanted
            if wanted:
                due.append(Item(text.id, kind, int(text.size)))
        result.due[kind] = due
        result.unchanged[kind] = unchanged
    return result
