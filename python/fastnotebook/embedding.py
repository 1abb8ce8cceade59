"""Embedding generation and mean pooling, a drop-in for
``open_notebook.utils.embedding``.

- ``mean_pool_embeddings(embeddings)``: async, as the original, pooled in Rust.
- ``mean_pool(matrix)`` / ``mean_pool_segments(matrix, offsets)``: the same
  pooling on numpy arrays (float32 or float64, no copy), the second for many
  documents at once on all cores.
- ``generate_embeddings(texts)``: batches of ``EMBEDDING_BATCH_SIZE``
  (``OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE``, default 50), each tried up to 3 times.
- ``generate_embedding(text)``: short text embedded directly, long text
  chunked (``fastnotebook.chunking``) and its chunk vectors mean-pooled.

The model comes from ``model_manager.get_embedding_model()`` (see
``fastnotebook.ai.model_manager``); code that patches
``fastnotebook.embedding.model_manager.get_embedding_model`` works as with the
original.

Differences from the original, both where it returns garbage: NaN or infinite
values make ``mean_pool_embeddings`` raise ``ValueError`` (the original returns
NaNs), and vectors of huge or tiny magnitude are normalised exactly (numpy's
``sum(x*x)`` overflows or underflows there).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from loguru import logger

from fastnotebook import _core
from fastnotebook.chunking import ContentType, chunk_text

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "EMBEDDING_BATCH_SIZE",
    "EMBEDDING_MAX_RETRIES",
    "EMBEDDING_RETRY_DELAY",
    "generate_embedding",
    "generate_embeddings",
    "mean_pool",
    "mean_pool_embeddings",
    "mean_pool_segments",
]


def __getattr__(name: str) -> Any:
    # ``model_manager`` is imported on first use: it brings in esperanto, which
    # the pooling functions do not need. Tests and callers patch it here.
    if name == "model_manager":
        from fastnotebook.ai import model_manager

        globals()["model_manager"] = model_manager
        return model_manager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _model_manager() -> Any:
    return globals().get("model_manager") or __getattr__("model_manager")


def _get_embedding_batch_size() -> int:
    raw = os.getenv("OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE", "50").strip()
    try:
        value = int(raw)
        if value < 1:
            raise ValueError
        return value
    except ValueError:
        logger.warning("Invalid OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE='{}'; falling back to 50", raw)
        return 50


EMBEDDING_BATCH_SIZE = _get_embedding_batch_size()
EMBEDDING_MAX_RETRIES = 3
EMBEDDING_RETRY_DELAY = 2  # seconds


async def mean_pool_embeddings(embeddings: Sequence[Sequence[float]]) -> list[float]:
    """Normalise each embedding, average, normalise the average.

    Raises ``ValueError`` for an empty list, embeddings of different
    dimensions, or NaN/infinite values.

    >>> import asyncio
    >>> asyncio.run(mean_pool_embeddings([[3.0, 4.0], [3.0, 4.0]]))
    [0.6, 0.8]
    """
    return _core.mean_pool_embeddings(embeddings)


def mean_pool(matrix: npt.NDArray[Any]) -> np.ndarray[Any, Any]:
    """``mean_pool_embeddings`` for one document's (rows x dim) float32 or
    float64 array, read in place; returns a vector of the same dtype.

    >>> import numpy as np
    >>> mean_pool(np.array([[3.0, 4.0], [3.0, 4.0]])).tolist()
    [0.6, 0.8]
    """
    return _core.mean_pool(matrix)


def mean_pool_segments(matrix: npt.NDArray[Any], offsets: npt.ArrayLike) -> np.ndarray[Any, Any]:
    """Pools many documents at once: rows ``offsets[i]:offsets[i+1]`` of the
    (rows x dim) array are document i. Returns (documents x dim), same dtype.

    >>> import numpy as np
    >>> rows = np.array([[3.0, 4.0], [3.0, 4.0], [1.0, 0.0]])
    >>> mean_pool_segments(rows, [0, 2, 3]).tolist()
    [[0.6, 0.8], [1.0, 0.0]]
    """
    import numpy as np

    return _core.mean_pool_segments(matrix, np.ascontiguousarray(offsets, dtype=np.int64))


async def generate_embeddings(texts: list[str], command_id: str | None = None) -> list[list[float]]:
    """Embeddings of many texts, in batches, each batch tried up to
    ``EMBEDDING_MAX_RETRIES`` times.

    Raises ``ValueError`` if no embedding model is configured and
    ``RuntimeError`` (naming the model, batch and count) when a batch fails.
    """
    if not texts:
        return []
    embedding_model = await _model_manager().get_embedding_model()
    if not embedding_model:
        raise ValueError(
            "No embedding model configured. Please configure one in the Models section."
        )
    return await embed_in_batches(
        embedding_model,
        texts,
        batch_size=EMBEDDING_BATCH_SIZE,
        max_retries=EMBEDDING_MAX_RETRIES,
        retry_delay=EMBEDDING_RETRY_DELAY,
        command_id=command_id,
    )


async def embed_in_batches(
    embedding_model: Any,
    texts: list[str],
    *,
    batch_size: int,
    max_retries: int,
    retry_delay: float,
    command_id: str | None = None,
) -> list[list[float]]:
    """The original's batch loop, shared by both contracts' ``generate_embeddings``:
    ``batch_size`` texts a call to ``embedding_model.aembed``, each batch tried
    up to ``max_retries`` times ``retry_delay`` seconds apart, then
    ``RuntimeError`` naming the model, the batch and its size."""
    model_name = getattr(embedding_model, "model_name", "unknown")
    metrics: list[tuple[int, int, int, int]] = []

    def metric(i: int) -> int:
        if not metrics:
            tokens = _core.token_counts(list(texts), "o200k_base")
            metrics.append((min(tokens), max(tokens), sum(tokens), sum(len(t) for t in texts)))
        return metrics[0][i]

    logger.opt(lazy=True).debug(
        "Generating embeddings for {} texts (tokens: min={}, max={}, total={}; chars: total={})",
        lambda: len(texts),
        lambda: metric(0),
        lambda: metric(1),
        lambda: metric(2),
        lambda: metric(3),
    )

    all_embeddings: list[list[float]] = []
    total_batches = (len(texts) + batch_size - 1) // batch_size
    for batch_idx in range(total_batches):
        batch = texts[batch_idx * batch_size : (batch_idx + 1) * batch_size]
        for attempt in range(1, max_retries + 1):
            try:
                all_embeddings.extend(await embedding_model.aembed(batch))
                break
            except Exception as e:
                context = f" (command: {command_id})" if command_id else ""
                where = f"Embedding batch {batch_idx + 1}/{total_batches}"
                if attempt < max_retries:
                    logger.debug(
                        f"{where} attempt {attempt}/{max_retries} failed "
                        f"using model '{model_name}'{context}: {e}. Retrying..."
                    )
                    await asyncio.sleep(retry_delay)
                else:
                    logger.debug(
                        f"{where} failed after {max_retries} attempts "
                        f"using model '{model_name}'{context}: {e}"
                    )
                    raise RuntimeError(
                        f"Failed to generate embeddings using model '{model_name}' "
                        f"(batch {batch_idx + 1}/{total_batches}, {len(batch)} texts): {e}"
                    ) from e
    logger.debug(f"Generated {len(all_embeddings)} embeddings in {total_batches} batch(es)")
    return all_embeddings


async def generate_embedding(
    text: str,
    content_type: ContentType | None = None,
    file_path: str | None = None,
    command_id: str | None = None,
) -> list[float]:
    """One embedding for a text: short text is embedded directly, long text is
    chunked and its chunks' embeddings mean-pooled.

    Raises ``ValueError`` for empty text or no configured model and
    ``RuntimeError`` when the model fails.
    """
    if not text or not text.strip():
        raise ValueError("Cannot generate embedding for empty text")
    text = text.strip()
    # chunk_text returns short text whole: that is the original's short-text rule.
    chunks = chunk_text(text, content_type=content_type, file_path=file_path)
    if not chunks:
        raise ValueError("Text chunking produced no chunks")
    if len(chunks) == 1:
        if chunks[0] is text:
            logger.debug(f"Embedding short text ({len(text)} characters) directly")
        return (await generate_embeddings(chunks, command_id=command_id))[0]
    logger.debug(f"Embedding {len(chunks)} chunks and mean pooling")
    embeddings = await generate_embeddings(chunks, command_id=command_id)
    pooled = await mean_pool_embeddings(embeddings)
    logger.debug(f"Mean pooled {len(embeddings)} embeddings into single vector")
    return pooled
