"""Query parameters that arrive already encoded as CBOR, and responses
decoded as the SDK decodes them.

SurrealDB's RPC protocol carries a query and its parameters as CBOR, and the
SDK encodes them in pure Python, one call per number: for a batch of chunk
rows with 384-dimension vectors that is most of the cost of a write once
the engine's side is cheap. A parameter given as ``Encoded`` (the bytes of
one CBOR data item, made by the Rust core from the numpy array of vectors:
``fastnotebook._core.encode_chunk_rows``) is copied into the request as it
is; the other parameters, the query text and the envelope are encoded as
the SDK's own encoder encodes them (``encode_value``), and the request goes
through the SDK's own transport, so it reaches an embedded engine, a
WebSocket server and an HTTP server alike.

An embedded engine's response is decoded the other way (``decode_value``):
by the core, into the values the SDK's decoder gives.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from surrealdb.data.cbor import decode, encode
from surrealdb.data.types.record_id import RecordID

from fastnotebook._core import decode_cbor

__all__ = ["Encoded", "decode_value", "encode_value", "has_encoded", "query_request"]


@dataclass(frozen=True)
class Encoded:
    """One parameter's value as the bytes of a single CBOR data item."""

    data: bytes


def encode_value(value: Any) -> bytes:
    """``value`` (a record id, a string, a list...) as the SDK encodes it.

    The SDK's encoder costs some microseconds a call and a value, which is
    most of the time of a write's small parameters (a group's state rows:
    a thousand strings and ids). Strings, integers, lists, tuples, dicts,
    record ids and ``Encoded`` values are written here, with the same
    bytes; anything else (floats, None, booleans, UUIDs, datetimes...) is
    handed to the SDK's encoder.
    """
    parts: list[bytes] = []
    _encode_into(value, parts)
    return b"".join(parts)


# SurrealDB's tag of a record id (the SDK's ``constants.TAG_RECORD_ID``),
# followed by the head of its two-item array: [table, key].
_RECORD_ID = bytes([6 << 5 | 8, 4 << 5 | 2])
_INT_RANGE = 1 << 64  # wider integers are CBOR bignums: the SDK's encoder


def _encode_into(value: Any, parts: list[bytes]) -> None:
    kind = type(value)  # exact types: a subclass may be encoded otherwise
    if kind is str:
        data = value.encode("utf-8")
        parts.append(_head(3, len(data)))
        parts.append(data)
    elif kind is int and -_INT_RANGE <= value < _INT_RANGE:
        parts.append(_head(0, value) if value >= 0 else _head(1, -1 - value))
    elif kind is list or kind is tuple:
        parts.append(_head(4, len(value)))
        for item in value:
            _encode_into(item, parts)
    elif kind is dict:
        parts.append(_head(5, len(value)))
        for key, item in value.items():
            _encode_into(key, parts)
            _encode_into(item, parts)
    elif kind is RecordID:
        parts.append(_RECORD_ID)
        _encode_into(value.table_name, parts)
        _encode_into(value.id, parts)
    elif kind is Encoded:
        parts.append(value.data)
    else:
        parts.append(encode(value))


def decode_value(data: bytes) -> Any:
    """The one CBOR data item that is ``data`` (an engine's response), as the
    SDK's decoder gives it: read by the core (``_core.decode_cbor``, which
    builds record ids with the SDK's class and hands every other tagged
    item to the SDK's decoder), or by the SDK's decoder where the core
    leaves it (indefinite lengths, say)."""
    read = decode_cbor(data, RecordID, decode)
    return read[0] if read is not None else decode(data)


def has_encoded(params: dict[str, Any]) -> bool:
    return any(isinstance(v, Encoded) for v in params.values())


_SMALL_HEADS = [[bytes([major << 5 | n]) for n in range(24)] for major in range(8)]


def _head(major: int, length: int) -> bytes:
    """A CBOR head: major type and length (RFC 8949, 3.1)."""
    if length < 24:
        return _SMALL_HEADS[major][length]
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * size):
            return bytes([major << 5 | extra]) + length.to_bytes(size, "big")
    raise ValueError(f"length {length} does not fit a CBOR head")


class QueryRequest:
    """A ``query`` request already encoded, in the shape the SDK's transports
    send (they read ``id`` and ``WS_CBOR_DESCRIPTOR``)."""

    def __init__(self, sql: str, params: dict[str, Any]) -> None:
        self.id = str(uuid.uuid4())
        self.WS_CBOR_DESCRIPTOR = encode_value(
            {"id": self.id, "method": "query", "params": [sql, params]}
        )


def query_request(sql: str, params: dict[str, Any]) -> QueryRequest:
    return QueryRequest(sql, params)
