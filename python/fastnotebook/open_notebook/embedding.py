"""Embedding generation, as ``open_notebook.utils.embedding`` of Open
Notebook's current release.

- ``mean_pool_embeddings``: normalise each vector, average, normalise the
  average (in Rust).
- ``generate_embeddings``: the texts in batches of ``EMBEDDING_BATCH_SIZE``
  (``OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE``, default 50), each batch tried up to
  ``EMBEDDING_MAX_RETRIES`` times, ``EMBEDDING_RETRY_DELAY`` seconds apart.
  The three are read at each call, so that code patching them is obeyed.
- ``generate_embedding``: short text embedded directly; text over
  ``CHUNK_SIZE`` tokens chunked (``fastnotebook.open_notebook.chunking``) and
  its chunks' vectors mean-pooled.

The model is the application's: ``open_notebook.ai.models.model_manager``'s
embedding model, looked up at each call. With none configured, ``ValueError``
is raised, as the original does; there is no fallback to another model (two
models' vectors in one index would corrupt it silently).

One difference, where the original returns garbage: NaN or infinite values
make ``mean_pool_embeddings`` raise ``ValueError`` (the original returns NaNs).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from loguru import logger

from fastnotebook import _core
from fastnotebook.open_notebook._app import app_module
from fastnotebook.open_notebook.chunking import CHUNK_SIZE, ContentType, chunk_text
from fastnotebook.open_notebook.token_utils import token_count

__all__ = [
    "CHUNK_SIZE",
    "EMBEDDING_BATCH_SIZE",
    "EMBEDDING_MAX_RETRIES",
    "EMBEDDING_RETRY_DELAY",
    "ContentType",
    "chunk_text",
    "generate_embedding",
    "generate_embeddings",
    "mean_pool_embeddings",
    "token_count",
]


def _get_embedding_batch_size() -> int:
    """``OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE``: a positive integer, else 50
    (with a warning when set to something else)."""
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
    """One unit vector for many: each embedding normalised, the mean taken
    and normalised (a zero vector stays zero).

    Raises ``ValueError`` for an empty list, embeddings of different
    dimensions, or NaN/infinite values.
    """
    if not embeddings:
        raise ValueError("Cannot mean pool empty list of embeddings")
    return _core.mean_pool_embeddings(embeddings)


async def generate_embeddings(texts: list[str], command_id: str | None = None) -> list[list[float]]:
    """Embeddings of many texts with the application's embedding model, in
    batches, each tried up to ``EMBEDDING_MAX_RETRIES`` times.

    Raises ``ValueError`` if no embedding model is configured, and
    ``RuntimeError`` (naming the model, the batch and its size) when a batch
    still fails after its retries.
    """
    if not texts:
        return []

    model_manager = app_module("open_notebook.ai.models", __name__).model_manager
    embedding_model = await model_manager.get_embedding_model()
    if not embedding_model:
        raise ValueError(
            "No embedding model configured. Please configure one in the Models section."
        )
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

    # Module globals read here, at the call: patching them takes effect.
    batch_size = EMBEDDING_BATCH_SIZE
    max_retries = EMBEDDING_MAX_RETRIES
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
                    await asyncio.sleep(EMBEDDING_RETRY_DELAY)
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
    """One embedding for a text: text of at most ``CHUNK_SIZE`` tokens is
    embedded directly, longer text is chunked and its chunks' embeddings
    mean-pooled.

    Raises ``ValueError`` for empty text or no configured model, and
    ``RuntimeError`` when the model fails.
    """
    if not text or not text.strip():
        raise ValueError("Cannot generate embedding for empty text")
    text = text.strip()
    text_tokens = token_count(text)
    if text_tokens <= CHUNK_SIZE:
        logger.debug(f"Embedding short text ({text_tokens} tokens) directly")
        return (await generate_embeddings([text], command_id=command_id))[0]

    logger.debug(f"Text exceeds chunk size ({text_tokens} tokens), chunking...")
    chunks = chunk_text(text, content_type=content_type, file_path=file_path)
    if not chunks:
        raise ValueError("Text chunking produced no chunks")
    if len(chunks) == 1:
        return (await generate_embeddings(chunks, command_id=command_id))[0]

    logger.debug(f"Embedding {len(chunks)} chunks and mean pooling")
    embeddings = await generate_embeddings(chunks, command_id=command_id)
    pooled = await mean_pool_embeddings(embeddings)
    logger.debug(f"Mean pooled {len(embeddings)} embeddings into single vector")
    return pooled
