"""The repository functions of ``open_notebook.database.repository``, on the
shared connection (``get_database()``).

Differences from the original, all on purpose:

- Every value is a bound parameter. The original splices record ids into
  ``UPSERT``/``UPDATE``/``RELATE`` text; here ids are parsed and bound, and
  table and relation names must be plain identifiers.
- ``repo_query`` returns the last statement's result (the original returns the
  first; for one statement they agree) and raises ``DatabaseOperationError``
  when any statement fails, instead of returning the error text.
- Failures raise ``DatabaseOperationError`` rather than ``RuntimeError``.
- ``created``/``updated`` are kept by the schema, so the functions send
  datetimes only when the caller supplies them.
- ``repo_insert`` and ``repo_relate_many`` accept ``return_rows=False`` for
  bulk writes (``RETURN NONE``): decoding rows back is pure-Python work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from fastnotebook.app.database.connection import get_database
from fastnotebook.app.database.record_id import (
    RecordID,
    check_identifier,
    ensure_record_id,
    parse_record_ids,
    with_table_prefix,
)
from fastnotebook.errors import InvalidInputError

__all__ = [
    "repo_create",
    "repo_delete",
    "repo_insert",
    "repo_query",
    "repo_relate",
    "repo_relate_many",
    "repo_update",
    "repo_upsert",
]

Row = dict[str, Any]


def _rows(result: Any) -> list[Row]:
    if result is None:
        return []
    rows = result if isinstance(result, list) else [result]
    parsed: list[Row] = parse_record_ids(rows)
    return parsed


def _content(data: Mapping[str, Any]) -> dict[str, Any]:
    content = {k: v for k, v in data.items() if k != "id"}
    created = content.get("created")
    if isinstance(created, str):
        try:
            content["created"] = datetime.fromisoformat(created)
        except ValueError as e:
            raise InvalidInputError(f"invalid 'created' timestamp {created!r}") from e
    content.pop("updated", None)  # the schema sets it on every write
    return content


def _record_in(table: str, record_id: str | RecordID) -> RecordID:
    """``record_id`` as a record of ``table``: a bare id gets the prefix."""
    check_identifier(table)
    if isinstance(record_id, str):
        record_id = with_table_prefix(record_id, table)
    return ensure_record_id(record_id)


async def repo_query(query_str: str, vars: Mapping[str, Any] | None = None) -> list[Row]:
    """Run SurrealQL with bound ``vars``; the rows of its last statement, with
    record ids as strings."""
    db = await get_database()
    return _rows(await db.query(query_str, dict(vars or {})))


async def repo_create(table: str, data: Mapping[str, Any]) -> list[Row]:
    """Create one record (any ``id`` in ``data`` is ignored); the created row."""
    check_identifier(table)
    return await repo_query(
        f"CREATE {table} CONTENT $data;",
        {"data": _content(data)},
    )


async def repo_insert(
    table: str,
    data: Sequence[Mapping[str, Any]],
    ignore_duplicates: bool = False,
    return_rows: bool = True,
) -> list[Row]:
    """Insert many records in one statement. ``ignore_duplicates`` skips rows
    whose id exists; ``return_rows=False`` returns [] and saves decoding."""
    check_identifier(table)
    if not data:
        return []
    ignore = "IGNORE " if ignore_duplicates else ""
    output = "" if return_rows else " RETURN NONE"
    return await repo_query(
        f"INSERT {ignore}INTO {table} $data{output};",
        {"data": [dict(row) for row in data]},
    )


async def repo_upsert(
    table: str,
    id: str | RecordID | None,
    data: Mapping[str, Any],
    add_timestamp: bool = False,
) -> list[Row]:
    """Merge ``data`` into record ``id``, creating it if needed. ``id`` is a
    full record id (any table, as in the original) or a bare id of ``table``;
    None creates a record of ``table`` with a generated id.
    ``add_timestamp`` is accepted for compatibility: ``updated`` is always set."""
    content = _content(data)
    if id is None:
        check_identifier(table)
        return await repo_query(f"UPSERT {table} MERGE $data;", {"data": content})
    rid = ensure_record_id(id) if isinstance(id, RecordID) or ":" in id else _record_in(table, id)
    return await repo_query("UPSERT $id MERGE $data;", {"id": rid, "data": content})


async def repo_update(table: str, id: str | RecordID, data: Mapping[str, Any]) -> list[Row]:
    """Merge ``data`` into an existing record; [] if there is no such record."""
    return await repo_query(
        "UPDATE $id MERGE $data;", {"id": _record_in(table, id), "data": _content(data)}
    )


async def repo_delete(record_id: str | RecordID) -> list[Row]:
    """Delete a record; the deleted row ([] if there was none)."""
    return await repo_query("DELETE $id RETURN BEFORE;", {"id": ensure_record_id(record_id)})


async def repo_relate(
    source: str | RecordID,
    relationship: str,
    target: str | RecordID,
    data: Mapping[str, Any] | None = None,
) -> list[Row]:
    """Create the edge ``source -relationship-> target``; the edge row."""
    check_identifier(relationship, "relation name")
    return await repo_query(
        f"RELATE $source->{relationship}->$target CONTENT $data;",
        {
            "source": ensure_record_id(source),
            "target": ensure_record_id(target),
            "data": dict(data or {}),
        },
    )


async def repo_relate_many(
    relationship: str,
    pairs: Sequence[tuple[str | RecordID, str | RecordID]],
    return_rows: bool = False,
) -> list[Row]:
    """Create many ``in -relationship-> out`` edges in one statement."""
    check_identifier(relationship, "relation name")
    if not pairs:
        return []
    edges = [{"in": ensure_record_id(a), "out": ensure_record_id(b)} for a, b in pairs]
    output = "" if return_rows else " RETURN NONE"
    return await repo_query(
        f"INSERT RELATION INTO {relationship} $edges{output};", {"edges": edges}
    )
