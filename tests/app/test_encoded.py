"""fastnotebook.app.database.encoded: parameters written as the SDK's own
CBOR encoder writes them, byte for byte, and responses read into the values
its decoder gives."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from surrealdb.data.cbor import decode, encode
from surrealdb.data.types.table import Table
from surrealdb.request_message.message import RequestMessage
from surrealdb.request_message.methods import RequestMethod

from fastnotebook.app.database import Database, RecordID
from fastnotebook.app.database.encoded import Encoded, decode_value, encode_value, query_request

# Around every boundary of a CBOR head and of the SDK's bignums.
_EDGES = [
    sign * (base + delta)
    for base in (0, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, 2**64, 2**70)
    for delta in (-1, 0, 1)
    for sign in (1, -1)
]
_scalars = st.one_of(
    st.text(),
    st.integers(),
    st.sampled_from(_EDGES),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.uuids(),
    st.datetimes(timezones=st.just(datetime.UTC)),
)
_keys = st.one_of(st.text(max_size=8), st.integers(), st.lists(st.integers(), max_size=2))
_record_ids = st.builds(RecordID, st.text(min_size=1, max_size=10), _keys)
_values = st.recursive(
    st.one_of(_scalars, _record_ids),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
        st.builds(RecordID, st.text(min_size=1, max_size=6), st.lists(inner, max_size=2)),
    ),
    max_leaves=20,
)


@given(_values)
def test_a_value_is_encoded_as_the_sdk_encodes_it(value: Any) -> None:
    assert encode_value(value) == encode(value)


@pytest.mark.parametrize("number", _EDGES)
def test_an_integer_at_a_boundary_is_encoded_as_the_sdk_encodes_it(number: int) -> None:
    assert encode_value(number) == encode(number)
    assert encode_value([number, -number]) == encode([number, -number])


def test_a_string_that_is_not_unicode_fails_as_it_does_in_the_sdk() -> None:
    for value in ("\ud800", ["ok", {"k": "a\udfffb"}], RecordID("source", "\udc80")):
        with pytest.raises(UnicodeEncodeError):
            encode(value)
        with pytest.raises(UnicodeEncodeError):
            encode_value(value)


def test_a_type_the_sdk_cannot_encode_fails_as_it_does_there() -> None:
    with pytest.raises(BufferError, match="no encoder"):
        encode_value([object()])


def test_encoded_values_are_copied_where_they_stand() -> None:
    inner = encode({"a": [1.5, None]})
    value = {"rows": [Encoded(inner), "x"], "n": 2}
    assert encode_value(value) == encode({"rows": [{"a": [1.5, None]}, "x"], "n": 2})


def test_a_query_request_is_the_sdk_s_query_message() -> None:
    params = {
        "ids": [RecordID("source", "a1"), RecordID("source", 7)],
        "states": [{"id": RecordID("embedding_state", [RecordID("note", "é")]), "epoch": 3}],
        "token": uuid.uuid4(),
        "rows": Encoded(encode([1, 2])),
    }
    request = query_request("RETURN $ids;", params)
    plain = {**params, "rows": [1, 2]}
    message = {"id": request.id, "method": "query", "params": ["RETURN $ids;", plain]}
    assert encode(message) == request.WS_CBOR_DESCRIPTOR
    assert decode(request.WS_CBOR_DESCRIPTOR) == message
    # The bytes the SDK's own query message carries.
    sdk = RequestMessage(RequestMethod.QUERY, query="RETURN $ids;", params=plain)
    sdk.id = request.id
    assert sdk.WS_CBOR_DESCRIPTOR == request.WS_CBOR_DESCRIPTOR


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, RecordID):
        return _same(a.table_name, b.table_name) and _same(a.id, b.id)
    return bool(a == b)


_responses = st.recursive(
    st.one_of(_scalars, _record_ids, st.decimals(allow_nan=False), st.builds(Table, st.text())),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), inner, max_size=4),
        st.builds(RecordID, st.text(min_size=1, max_size=6), st.lists(inner, max_size=2)),
    ),
    max_leaves=20,
)


@given(_responses)
def test_a_response_is_decoded_as_the_sdk_decodes_it(value: Any) -> None:
    data = encode(value)
    assert _same(decode_value(data), decode(data))


@pytest.mark.parametrize(
    "data",
    [
        b"\x9f\x01\x02\xff",  # an indefinite-length array
        b"\x82\xf7\x01",  # undefined
        b"\xa1\x82\x01\x02\x03",  # a map key that is an array
        b"\xc8\x83\x61a\x61b\x01",  # a record id of three items
        b"\xc8\x62st",  # a record id that is a string
    ],
)
def test_what_the_core_leaves_is_decoded_by_the_sdk(data: bytes) -> None:
    assert _same(decode_value(data), decode(data))


def test_malformed_responses_fail_as_they_do_in_the_sdk() -> None:
    # Truncated, invalid UTF-8, a head cut short, NONE of a value.
    for data in (b"\x82\x01", b"\x62\xff\xfe", b"\x19\x01", b"\xc6\x82\x01\x02"):
        with pytest.raises(Exception) as sdk:
            decode(data)
        with pytest.raises(type(sdk.value)):
            decode_value(data)


def test_deep_nesting_is_left_to_the_sdk() -> None:
    data = b"\x81" * 300 + b"\x01"
    assert _same(decode_value(data), decode(data))


async def test_the_engine_s_values_come_back_as_the_sdk_gives_them(db: Database) -> None:
    sql = (
        "RETURN [1, -2, 9223372036854775807, 1.5, 'é', NONE, NULL, true, <bytes> 'ab', "
        "d'2026-12-06T05:00:00.123456789Z', u'0190fc21-6b1f-7d3c-9a4e-3b1c2d3e4f50', "
        "1.25dec, 3d12h, source:a, source:[1, 'x', { k: note:n }], type::table('source'), "
        "(1.5, 2.5), 1..4, { nested: [{ deeper: NONE }] }];"
    )
    data = await db.query_response_bytes(sql)
    assert data is not None
    assert _same(await db.query_all(sql), [s["result"] for s in decode(data)["result"]])
