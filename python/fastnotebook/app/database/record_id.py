"""Record ids: strings at the API, ``RecordID`` values in queries.

Ids travel into queries only as bound parameters (``RecordID`` values), never
spliced into SurrealQL text, so an id such as ``source:x; REMOVE TABLE source``
is just the id of a record that does not exist. Table names, which SurrealQL
cannot bind, are checked against the identifier grammar before use.
"""

from __future__ import annotations

import re
from typing import Any

from surrealdb import RecordID

from fastnotebook.errors import InvalidInputError

__all__ = [
    "RecordID",
    "check_identifier",
    "ensure_record_id",
    "parse_record_ids",
    "record_id_string",
    "with_table_prefix",
]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INTEGER = re.compile(r"-?[0-9]+")


def check_identifier(name: str, kind: str = "table name") -> str:
    """``name`` if it is a plain SurrealQL identifier, else ``InvalidInputError``."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise InvalidInputError(f"invalid {kind} {name!r}")
    return name


def ensure_record_id(value: str | RecordID) -> RecordID:
    """Parse ``table:id`` as SurrealDB writes it: ``⟨...⟩`` or backquotes
    delimit any string, an unquoted integer is an integer id, anything else
    after the first colon is a string id (so ``str(record_id)`` always parses
    back to the same record). Raises ``InvalidInputError`` when there is no
    colon, the table is not an identifier, or the id is empty."""
    if isinstance(value, RecordID):
        return value
    if not isinstance(value, str):
        raise InvalidInputError(f"a record id must be a string, not {type(value).__name__}")
    table, colon, key = value.strip().partition(":")
    if not colon:
        raise InvalidInputError(f"invalid record id {value!r}: expected 'table:id'")
    check_identifier(table)
    if len(key) >= 2 and key[0] == "⟨" and key[-1] == "⟩":
        return RecordID(table, key[1:-1].replace("\\⟩", "⟩"))
    if len(key) >= 2 and key[0] == "`" and key[-1] == "`":
        return RecordID(table, key[1:-1].replace("\\`", "`"))
    if not key:
        raise InvalidInputError(f"invalid record id {value!r}: the id after ':' is empty")
    if _INTEGER.fullmatch(key):
        return RecordID(table, int(key))
    return RecordID(table, key)


def record_id_string(value: str | RecordID) -> str:
    """The canonical string form of a record id (as SurrealDB prints it)."""
    return str(ensure_record_id(value))


def with_table_prefix(value: str, table: str) -> str:
    """``value`` with ``table:`` in front unless it already starts with it, as
    Open Notebook accepts bare ids from its UI."""
    prefix = f"{table}:"
    return value if value.startswith(prefix) else prefix + value


def parse_record_ids(obj: Any) -> Any:
    """``obj`` with every ``RecordID`` inside it (dicts, lists) made a string."""
    if isinstance(obj, dict):
        return {k: parse_record_ids(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [parse_record_ids(item) for item in obj]
    if isinstance(obj, RecordID):
        return str(obj)
    return obj
