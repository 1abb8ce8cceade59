"""Mean pooling against numpy, embedding generation with fake and real models."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest
from esperanto import AIFactory
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fastnotebook import embedding
from fastnotebook.ai import local_models, model_manager
from fastnotebook.embedding import (
    generate_embedding,
    generate_embeddings,
    mean_pool,
    mean_pool_embeddings,
    mean_pool_segments,
)


def _normalised(v: np.ndarray) -> np.ndarray:
    """Unit vectors, with norms computed on rows scaled by their largest
    magnitude (mathematically the same, and exact where numpy's sum(x*x)
    would overflow or underflow)."""
    scale = np.max(np.abs(v), axis=-1, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    norms = np.linalg.norm(v / safe, axis=-1, keepdims=True) * safe
    return v / np.where(norms > 0, norms, 1.0)


def reference_pool(rows: np.ndarray) -> np.ndarray:
    """The original's algorithm in float64."""
    return _normalised(np.mean(_normalised(np.asarray(rows, dtype=np.float64)), axis=0))


def pooled_tolerance(rows: np.ndarray) -> float:
    """How far two float64 computations of the pooled vector can differ.

    The mean of unit vectors that nearly cancel is ill-conditioned: rounding
    of order 1e-16 in it becomes 1e-16 / |mean| once normalised (rows
    [[0.0078125, 103], [0, -1]] have a mean of norm 4e-5, and numpy and any
    other summation order differ by 1.5e-12). Well-conditioned means keep
    the 1e-12 bound.
    """
    mean_norm = float(np.linalg.norm(np.mean(_normalised(np.asarray(rows, np.float64)), axis=0)))
    return 1e-12 + (64 * np.finfo(np.float64).eps / mean_norm if mean_norm > 0 else 0.0)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- the original's documented cases ----------------------------------------


async def test_single_embedding_is_normalised() -> None:
    assert await mean_pool_embeddings([[3.0, 4.0]]) == pytest.approx([0.6, 0.8])
    assert await mean_pool_embeddings([[0.0, 0.0, 0.0]]) == [0.0, 0.0, 0.0]


async def test_two_orthogonal_and_identical_embeddings() -> None:
    result = await mean_pool_embeddings([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert result == pytest.approx([math.sqrt(0.5), math.sqrt(0.5), 0.0])
    e = [0.5, 0.5, 0.5, 0.5]
    assert await mean_pool_embeddings([e, e, e]) == pytest.approx([0.5] * 4)


async def test_not_unit_length_inputs_give_a_unit_result() -> None:
    result = await mean_pool_embeddings([[3.0, 4.0, 0.0], [0.0, 5.0, 0.0]])
    assert np.linalg.norm(result) == pytest.approx(1.0)


async def test_768_dim_random_matches_numpy() -> None:
    rows = np.random.default_rng(7).normal(size=(10, 768))
    result = await mean_pool_embeddings(rows.tolist())
    assert np.max(np.abs(np.array(result) - reference_pool(rows))) < 1e-12


async def test_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        await mean_pool_embeddings([])
    with pytest.raises(ValueError, match="same dimension"):
        await mean_pool_embeddings([[1.0, 2.0], [1.0]])
    with pytest.raises(ValueError, match="NaN or infinite"):
        await mean_pool_embeddings([[1.0, float("nan")]])
    with pytest.raises(ValueError, match="NaN or infinite"):
        await mean_pool_embeddings([[1.0, 2.0], [float("inf"), 0.0]])
    with pytest.raises(TypeError):
        await mean_pool_embeddings([["a", "b"]])


async def test_zero_rows_and_zero_mean() -> None:
    assert await mean_pool_embeddings([[2.0, 0.0], [0.0, 0.0]]) == pytest.approx([1.0, 0.0])
    assert await mean_pool_embeddings([[1.0, 0.0], [-1.0, 0.0]]) == [0.0, 0.0]


async def test_tuples_and_numpy_rows_are_accepted() -> None:
    rows = [(1.0, 0.0), np.array([0.0, 1.0]), [np.float32(1.0), 1]]
    expected = reference_pool(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    assert np.allclose(await mean_pool_embeddings(rows), expected, atol=1e-12)


# --- against numpy on random and adversarial data ----------------------------

magnitudes = st.sampled_from([1.0, 1e-300, 1e-150, 1e-20, 1e20, 1e150, 1e300])


@example(np.array([[7.8125e-03, 1.03e02], [0.0, -1.0]]), 1.0, 0)
@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 12), st.sampled_from([1, 2, 3, 7, 64, 384, 4096])),
        elements=st.floats(-1e3, 1e3, allow_nan=False),
    ),
    magnitudes,
    st.integers(0, 3),
)
def test_pooling_matches_numpy_in_float64(rows: np.ndarray, scale: float, zero_rows: int) -> None:
    rows = rows * scale
    rows[:zero_rows] = 0.0
    expected = reference_pool(rows)
    tolerance = pooled_tolerance(rows)
    assert np.max(np.abs(np.array(run(mean_pool_embeddings(rows.tolist()))) - expected)) < tolerance
    assert np.max(np.abs(mean_pool(rows) - expected)) < tolerance


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        st.tuples(st.integers(1, 12), st.sampled_from([1, 5, 384, 768])),
        elements=st.floats(-1e3, 1e3, allow_nan=False, width=32),
    )
)
def test_float32_arrays_match_numpy(rows: np.ndarray) -> None:
    result = mean_pool(rows)
    assert result.dtype == np.float32
    assert np.max(np.abs(result - reference_pool(rows))) < 1e-6 + pooled_tolerance(rows)


def test_non_contiguous_arrays() -> None:
    rng = np.random.default_rng(1)
    base = rng.normal(size=(20, 100))
    for view in (np.asfortranarray(base), base[::2, ::3], base.T.copy().T, base[:, 10:50]):
        assert np.max(np.abs(mean_pool(view) - reference_pool(view))) < 1e-12
    f32 = np.asfortranarray(base.astype(np.float32))
    assert np.max(np.abs(mean_pool(f32) - reference_pool(f32))) < 1e-6


def test_segments_pool_each_document() -> None:
    rng = np.random.default_rng(2)
    sizes = [1, 3, 8, 2]
    matrix = rng.normal(size=(sum(sizes), 768)).astype(np.float32)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    pooled = mean_pool_segments(matrix, offsets)
    assert pooled.shape == (4, 768) and pooled.dtype == np.float32
    for i in range(4):
        expected = reference_pool(matrix[offsets[i] : offsets[i + 1]])
        assert np.max(np.abs(pooled[i] - expected)) < 1e-6
    pooled64 = mean_pool_segments(matrix.astype(np.float64)[:, ::2], offsets)
    assert pooled64.shape == (4, 384)


def test_segment_and_dtype_errors() -> None:
    matrix = np.ones((5, 3), dtype=np.float32)
    for offsets in ([0, 2, 2, 5], [0, 4], [1, 5], []):
        with pytest.raises(ValueError):
            mean_pool_segments(matrix, offsets)
    with pytest.raises(TypeError, match="float32 or float64"):
        mean_pool(np.ones((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="NaN"):
        mean_pool(np.array([[np.nan, 1.0]]))


# --- generation with fake providers ------------------------------------------


class FakeModel:
    """Embeds a text as (len, 1.0); fails its first `failures` calls."""

    model_name = "fake-model"

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.batches: list[list[str]] = []

    async def aembed(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("provider hiccup")
        return [[float(len(t)), 1.0] for t in texts]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeModel:
    model = FakeModel()

    async def get_model() -> FakeModel:
        return model

    monkeypatch.setattr(embedding.model_manager, "get_embedding_model", get_model)
    monkeypatch.setattr(embedding, "EMBEDDING_RETRY_DELAY", 0)
    return model


async def test_batches_follow_the_batch_size(
    fake: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "EMBEDDING_BATCH_SIZE", 3)
    texts = [f"t{i}" for i in range(8)]
    result = await generate_embeddings(texts)
    assert [len(b) for b in fake.batches] == [3, 3, 2]
    assert result == [[float(len(t)), 1.0] for t in texts]
    assert await generate_embeddings([]) == []


async def test_transient_failures_are_retried(fake: FakeModel) -> None:
    fake.failures = 2
    assert await generate_embeddings(["abc"]) == [[3.0, 1.0]]
    assert len(fake.batches) == 3


async def test_persistent_failure_names_model_batch_and_count(
    fake: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "EMBEDDING_BATCH_SIZE", 2)
    fake.failures = 10
    with pytest.raises(RuntimeError, match=r"model 'fake-model' \(batch 1/2, 2 texts\)"):
        await generate_embeddings(["a", "b", "c"], command_id="cmd-1")
    assert len(fake.batches) == 3


async def test_no_model_and_empty_text(monkeypatch: pytest.MonkeyPatch) -> None:
    async def none() -> None:
        return None

    monkeypatch.setattr(embedding.model_manager, "get_embedding_model", none)
    with pytest.raises(ValueError, match="No embedding model configured"):
        await generate_embeddings(["x"])
    with pytest.raises(ValueError, match="Cannot generate embedding for empty text"):
        await generate_embedding("  \n")


async def test_short_text_is_embedded_directly_long_text_pooled(fake: FakeModel) -> None:
    assert await generate_embedding("  short  ") == [5.0, 1.0]
    assert fake.batches == [["short"]]
    long_text = "word " * 1000
    pooled = await generate_embedding(long_text)
    chunks = fake.batches[-1]
    assert len(chunks) > 1
    expected = reference_pool(np.array([[float(len(c)), 1.0] for c in chunks]))
    assert np.allclose(pooled, expected, atol=1e-12)


def test_batch_size_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, expected in [("7", 7), ("0", 50), ("abc", 50), ("", 50), (" 12 ", 12)]:
        monkeypatch.setenv("OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE", raw)
        assert embedding._get_embedding_batch_size() == expected


# --- model configuration and the real local models ---------------------------


async def test_model_manager_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    model_manager.reset()
    monkeypatch.delenv(model_manager.PROVIDER_ENV, raising=False)
    assert model_manager.embedding_config() == model_manager.DEFAULT
    monkeypatch.setenv(model_manager.PROVIDER_ENV, local_models.STATIC_PROVIDER)
    first = await model_manager.get_embedding_model()
    assert first is await model_manager.get_embedding_model()  # created once
    assert first is not None and first.provider == local_models.STATIC_PROVIDER
    model_manager.configure_embedding_model(None)
    assert await model_manager.get_embedding_model() is None
    model_manager.configure_embedding_model(local_models.STATIC_PROVIDER, "x")
    assert (await model_manager.get_embedding_model()) is not first
    monkeypatch.setenv(model_manager.CONFIG_ENV, "[1]")
    model_manager.reset()
    with pytest.raises(ValueError, match="JSON object"):
        await model_manager.get_embedding_model()
    model_manager.reset()


def test_local_providers_are_registered_with_esperanto() -> None:
    model = AIFactory.create_embedding(local_models.STATIC_PROVIDER, "m")
    vectors = model.embed(["hello world", "another text"])
    assert len(vectors) == 2 and len(vectors[0]) == 64
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


PARAPHRASES = [
    ("The cat sat on the mat.", "A cat was sitting on the rug."),
    ("How do I reset my password?", "What are the steps to change my login password?"),
    ("The stock market fell sharply today.", "Share prices dropped steeply this afternoon."),
    (
        "Photosynthesis converts sunlight into chemical energy.",
        "Plants turn light into energy they can store.",
    ),
]


def test_real_local_model_embeds_meaningfully() -> None:
    model = AIFactory.create_embedding(local_models.ONNX_PROVIDER, local_models.ONNX_MODEL_NAME)
    texts = [t for pair in PARAPHRASES for t in pair]
    vectors = np.array(model.embed(texts))
    assert vectors.shape == (8, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    for i in range(len(PARAPHRASES)):
        a, b = 2 * i, 2 * i + 1
        unrelated = [similarity[a, j] for j in range(8) if j not in (a, b)]
        assert similarity[a, b] > max(unrelated), PARAPHRASES[i]


def test_the_shipped_tokenizer_is_all_minilm_l6_v2s() -> None:
    """The WordPiece tokenizer shipped in the package: BERT base uncased's
    vocabulary, lower-cased, with [CLS] and [SEP] around the text."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(local_models._tokenizer_json())
    tokenizer.no_padding()
    assert tokenizer.get_vocab_size() == 30522
    encoded = tokenizer.encode("Hello World, unaffable!")
    assert encoded.tokens == ["[CLS]", "hello", "world", ",", "una", "##ffa", "##ble", "!", "[SEP]"]
    assert encoded.ids[:3] == [101, 7592, 2088] and encoded.ids[-1] == 102


def test_real_model_truncates_past_its_window() -> None:
    model = local_models.LocalOnnxEmbeddingModel(config={"max_tokens": 16})
    head = "the quick brown fox jumps over the lazy dog " * 2
    a, b = model.embed([head + "x " * 5000, head + "completely different tail " * 500])
    assert np.dot(a, b) == pytest.approx(1.0, abs=1e-5)  # only the first 16 pieces count
    with pytest.raises(ValueError, match="max_tokens"):
        local_models.LocalOnnxEmbeddingModel(config={"max_tokens": 513})


async def test_generate_embedding_with_the_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    model_manager.reset()
    monkeypatch.delenv(model_manager.PROVIDER_ENV, raising=False)
    vector = await generate_embedding("Open Notebook keeps research private. " * 100)
    assert len(vector) == 384 and np.linalg.norm(vector) == pytest.approx(1.0)
    model_manager.reset()
