"""Query parameters that arrive already encoded as CBOR.

SurrealDB's RPC protocol carries a query and its parameters as CBOR, and the
SDK encodes them in pure Python, one call per number: for a batch of chunk
rows with 384-dimension vectors that is most of the cost of a write once
the engine's side is cheap. A parameter given as ``Encoded`` (the bytes of
one CBOR data item, made by the Rust core from the numpy array of vectors:
``fastnotebook._core.encode_chunk_rows``) is copied into the request as it
is; the other parameters, the query text and the envelope are encoded by the
SDK's own encoder, and the request goes through the SDK's own transport, so
it reaches an embedded engine, a WebSocket server and an HTTP server alike.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from surrealdb.data.cbor import encode

__all__ = ["Encoded", "encode_value", "has_encoded", "query_request"]


@dataclass(frozen=True)
class Encoded:
    """One parameter's value as the bytes of a single CBOR data item."""

    data: bytes


def encode_value(value: Any) -> bytes:
    """``value`` (a record id, a string, a list...) as the SDK encodes it."""
    return encode(value)


def has_encoded(params: dict[str, Any]) -> bool:
    return any(isinstance(v, Encoded) for v in params.values())


def _head(major: int, length: int) -> bytes:
    """A CBOR head: major type and length (RFC 8949, 3.1)."""
    if length < 24:
        return bytes([major << 5 | length])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * size):
            return bytes([major << 5 | extra]) + length.to_bytes(size, "big")
    raise ValueError(f"length {length} does not fit a CBOR head")


class QueryRequest:
    """A ``query`` request already encoded, in the shape the SDK's transports
    send (they read ``id`` and ``WS_CBOR_DESCRIPTOR``)."""

    def __init__(self, sql: str, params: dict[str, Any]) -> None:
        self.id = str(uuid.uuid4())
        parts = [_head(5, len(params))]
        for key, value in params.items():
            parts.append(encode(key))
            parts.append(value.data if isinstance(value, Encoded) else encode(value))
        self.WS_CBOR_DESCRIPTOR = b"".join(
            [
                _head(5, 3),
                encode("id"),
                encode(self.id),
                encode("method"),
                encode("query"),
                encode("params"),
                _head(4, 2),
                encode(sql),
                *parts,
            ]
        )


def query_request(sql: str, params: dict[str, Any]) -> QueryRequest:
    return QueryRequest(sql, params)
