"""``openai_wire``: esperanto's OpenAI-style embedding calls with the same
requests and vectors, checked against esperanto itself. The requests go to
an httpx ``MockTransport`` that records them and answers with bodies of the
shapes providers send (or do not)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
import pytest
from esperanto.providers.embedding.openai import OpenAIEmbeddingModel
from esperanto.providers.embedding.openai_compatible import OpenAICompatibleEmbeddingModel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastnotebook._core import embedding_rows, normalize_embedding_inputs
from fastnotebook.app.pipeline import openai_wire
from fastnotebook.app.pipeline.provider import Provider, RetryPolicy, _model_call
from helpers.corpus import require_corpus

_ESPERANTO = OpenAICompatibleEmbeddingModel(model_name="m", base_url="http://127.0.0.1:9/v1")


def esperanto_clean(text: str) -> str:
    return _ESPERANTO._clean_text(text)  # type: ignore[no-any-return]


# --- the texts ------------------------------------------------------------------


def test_normalized_texts_equal_esperanto_on_the_corpus() -> None:
    texts = [
        p.read_text(encoding="utf-8")
        for kind in ("md", "txt", "html")
        for p in require_corpus(kind)
    ]
    pieces = [t[i : i + 1500] for t in texts for i in range(0, len(t), 1500)]
    assert normalize_embedding_inputs(pieces) == [esperanto_clean(p) for p in pieces]


def test_normalized_texts_equal_esperanto_for_every_code_point() -> None:
    # Each code point alone, doubled, around spaces and before "." and ",".
    chars = [chr(cp) for cp in range(sys.maxunicode + 1)]
    texts = [
        "".join(f"{c}x {c}{c}. {c},{c}" for c in chars[i : i + 4096])
        for i in range(0, len(chars), 4096)
    ]
    assert normalize_embedding_inputs(texts) == [esperanto_clean(t) for t in texts]


_PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\x0b",
        "\x1c",
        "\x85",
        "\xa0",
        "\u2003",
        "\u3000",
        "\u200b",
        ".",
        "..",
        ",",
        "a",
        "é",
        "漢",
        "😀",
        "\ud800",
        "\udfff",
        "x.y",
    ]
)


@given(st.lists(st.lists(_PIECES, max_size=30).map("".join), max_size=8))
def test_normalized_texts_equal_esperanto(texts: list[str]) -> None:
    assert normalize_embedding_inputs(texts) == [esperanto_clean(t) for t in texts]


# --- the response ---------------------------------------------------------------


def python_rows(body: bytes) -> Any:
    """What esperanto makes of a response: its float lists, or the error."""
    try:
        from esperanto.utils.embedding import validate_and_decode_embedding

        data = json.loads(body)["data"]
        return [
            validate_and_decode_embedding(i, item.get("embedding")) for i, item in enumerate(data)
        ]
    except Exception as error:
        return type(error)


def response(rows: list[list[Any]], **extra: Any) -> bytes:
    data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
    return json.dumps({"object": "list", "data": data, "model": "m", **extra}).encode()


_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(st.lists(_FLOATS, min_size=3, max_size=3), min_size=1, max_size=5))
def test_rows_are_the_floats_python_reads(rows: list[list[float]]) -> None:
    body = response(rows)
    matrix = embedding_rows(body)
    assert matrix is not None and matrix.dtype == np.float64
    assert matrix.tobytes() == np.array(python_rows(body), dtype=np.float64).tobytes()


@given(
    st.lists(_FLOATS, min_size=1, max_size=20), st.sampled_from(["%.10f", "%.17g", "%.3e", "%r"])
)
def test_numbers_as_providers_format_them(values: list[float], style: str) -> None:
    text = ", ".join(style % v if style != "%r" else repr(v) for v in values)
    body = b'{"data": [{"embedding": [' + text.encode() + b"]}]}"
    expected = python_rows(body)
    matrix = embedding_rows(body)
    if matrix is None:
        # Left to Python: infinities, and numbers longer than any provider writes.
        long = any(len(token.strip()) > 64 for token in text.split(","))
        assert long or not isinstance(expected, list) or not all(map(math.isfinite, expected[0]))
    else:
        assert matrix.tobytes() == np.array(expected, dtype=np.float64).tobytes()


@given(
    st.integers(0, 80),
    st.integers(1, 9),
    st.sampled_from([0, 1, 60, 308, 400, 65535, 65536, 65600, 655360]),
    st.sampled_from(["", "-"]),
)
def test_long_numbers_agree_with_python(zeros: int, digit: int, exponent: int, sign: str) -> None:
    # Leading zeros against a large exponent: where a parser that stops
    # reading an exponent early would give a finite wrong value.
    for text in (
        f"{sign}0.{'0' * zeros}{digit}e{exponent}",
        f"{sign}0.{'0' * zeros}{digit}e-{exponent}",
    ):
        body = b'{"data": [{"embedding": [' + text.encode() + b"]}]}"
        matrix = embedding_rows(body)
        if matrix is not None:
            assert matrix.tobytes() == np.array(python_rows(body), dtype=np.float64).tobytes(), text


_JSON = st.recursive(
    st.none() | st.booleans() | _FLOATS | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=4,
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    """A response of the usual shape with extra members, or anything."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.dictionaries(st.sampled_from(["data", "model"]), _JSON, max_size=2))
    width = draw(st.integers(1, 3))
    item = st.fixed_dictionaries(
        {"embedding": st.lists(_FLOATS | st.integers(), min_size=width, max_size=width)},
        optional={"index": st.integers(), "x": _JSON},
    )
    data = draw(st.lists(item, min_size=1, max_size=3))
    return draw(st.fixed_dictionaries({"data": st.just(data)}, optional={"usage": _JSON}))


# The first draw builds hypothesis's character tables.
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_never_disagrees_with_python(document: dict[str, Any], data: st.DataObject) -> None:
    body = json.dumps(document).encode()
    if data.draw(st.booleans()) and body:
        # A byte changed, dropped or added somewhere.
        at = data.draw(st.integers(0, len(body) - 1))
        byte = bytes([data.draw(st.integers(0, 255))])
        body = data.draw(
            st.sampled_from(
                [
                    body[:at] + byte + body[at + 1 :],
                    body[:at] + body[at + 1 :],
                    body[:at] + byte + body[at:],
                ]
            )
        )
    matrix = embedding_rows(body)
    if matrix is not None:
        # Bits, so that 0.0 and -0.0 differ.
        assert matrix.tobytes() == np.array(python_rows(body), dtype=np.float64).tobytes()


# --- the calls --------------------------------------------------------------------


class Recorder:
    """A ``MockTransport`` handler: records every request, answers each
    with the next body of ``bodies`` (the vectors of the request's texts by
    default)."""

    def __init__(self, bodies: list[bytes] | None = None) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.bodies = list(bodies or [])

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((str(request.url), dict(request.headers), request.content))
        if self.bodies:
            return httpx.Response(200, content=self.bodies.pop(0))
        texts = json.loads(request.content)["input"]
        return httpx.Response(
            200, content=response([[len(t) / 7, -1 / (1 + len(t)), 0.1] for t in texts])
        )


def model(kind: type, handler: Callable[[httpx.Request], httpx.Response], **config: Any) -> Any:
    made = kind(
        model_name="text-embedding-3-small",
        api_key="key",
        base_url="http://provider.test/v1",
        config=config,
    )
    made.async_client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return made


async def both(
    kind: type, texts: list[str], bodies: list[bytes] | None = None, **config: Any
) -> tuple[Any, Any]:
    """(esperanto's outcome, ours, each with the requests sent)."""
    outcomes = []
    for call in (lambda m: m.aembed(texts), lambda m: openai_wire.aembed_matrix(m, texts)):
        recorder = Recorder(bodies)
        try:
            vectors = await call(model(kind, recorder, **config))
            # float.hex, so that 0.0 and -0.0 differ.
            result: Any = [[float(v).hex() for v in row] for row in vectors]
        except Exception as error:
            result = (type(error), str(error))
        outcomes.append((result, recorder.requests))
    return outcomes[0], outcomes[1]


TEXTS = ["First  text ..  with spaces .", "second\n\ntext", "  ", "é , ü", "\u2003third"]


@pytest.mark.parametrize("kind", [OpenAICompatibleEmbeddingModel, OpenAIEmbeddingModel])
@pytest.mark.parametrize("config", [{}, {"embed_batch_size": 2}, {"dimensions": 3}])
async def test_same_requests_and_vectors_as_esperanto(kind: type, config: dict[str, Any]) -> None:
    theirs, ours = await both(kind, TEXTS, **config)
    assert ours == theirs
    assert len(ours[1]) == (3 if config.get("embed_batch_size") else 1)


async def test_the_result_is_one_array() -> None:
    vectors = await openai_wire.aembed_matrix(
        model(OpenAICompatibleEmbeddingModel, Recorder(), embed_batch_size=2), TEXTS
    )
    assert (
        isinstance(vectors, np.ndarray) and vectors.shape == (5, 3) and vectors.dtype == np.float64
    )


UNUSUAL = [
    response([[1, 2], [3]]),  # ragged
    response([[1.0, None]]),  # a null value
    response([[]]),  # empty
    response([["0.5", "1"]]),  # strings float() reads
    b'{"data": [{"embedding": [-0, -0.0, 0]}]}',  # read by the core: -0 is the int 0
    b'{"data": [{"embedding": [NaN, 1.0]}]}',
    b'{"data": [{"embedding": [1e400, 1.0]}]}',
    b'{"data": [{"embedding": [0.5]}], "data": [{"embedding": [2.5]}]}',
    b'{"data": [{"embedding": [0.5]}, {"index": 1}]}',
    b'{"data": [{"embedding": [0.5',
    b"not json",
    b'{"object": "list"}',
    b'{"data": "abc"}',
]


@pytest.mark.parametrize("kind", [OpenAICompatibleEmbeddingModel, OpenAIEmbeddingModel])
@pytest.mark.parametrize("body", UNUSUAL)
async def test_unusual_responses_end_as_with_esperanto(kind: type, body: bytes) -> None:
    texts = ["one", "two"] if body.count(b"embedding") == 2 else ["one"]
    theirs, ours = await both(kind, texts, [body])
    assert ours == theirs


async def test_mixed_batches_are_lists() -> None:
    ragged = response([[1, 2], [3]])
    theirs, ours = await both(
        OpenAICompatibleEmbeddingModel,
        ["a", "b", "c", "d"],
        [response([[0.5], [1.5]]), ragged],
        embed_batch_size=2,
    )
    assert ours == theirs


def test_supported_models() -> None:
    plain = model(OpenAICompatibleEmbeddingModel, Recorder())
    assert openai_wire.supported(plain)
    assert openai_wire.supported(model(OpenAIEmbeddingModel, Recorder()))

    class OwnCall(OpenAICompatibleEmbeddingModel):
        async def aembed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
            return []

    class OwnCleaning(OpenAIEmbeddingModel):
        def _clean_text(self, text: str) -> str:
            return text

    assert not openai_wire.supported(model(OwnCall, Recorder()))
    assert not openai_wire.supported(model(OwnCleaning, Recorder()))
    patched = model(OpenAICompatibleEmbeddingModel, Recorder())
    patched.aembed = plain.aembed
    assert not openai_wire.supported(patched)


async def test_the_provider_calls_through_the_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = openai_wire.aembed_matrix

    async def counted(model: Any, texts: list[str]) -> Any:
        calls.append(len(texts))
        return await original(model, texts)

    monkeypatch.setattr(openai_wire, "aembed_matrix", counted)
    import asyncio

    provider = Provider(
        model(OpenAICompatibleEmbeddingModel, Recorder()), 2, RetryPolicy(), asyncio.Event()
    )
    vectors = await provider.embed(TEXTS)
    assert calls == [5]
    assert all(isinstance(v, np.ndarray) for v in vectors)
    own = model(OpenAICompatibleEmbeddingModel, Recorder())
    own.aembed = own.aembed  # an instance attribute: the model is called as it is
    assert isinstance(await _model_call(own, ["x"]), list)
