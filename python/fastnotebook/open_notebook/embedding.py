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

from collections.abc import Sequence

from loguru import logger

from fastnotebook import _core
from fastnotebook.embedding import _get_embedding_batch_size, embed_in_batches
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
    # Module globals read here, at the call: patching them takes effect.
    return await embed_in_batches(
        embedding_model,
        texts,
        batch_size=EMBEDDING_BATCH_SIZE,
        max_retries=EMBEDDING_MAX_RETRIES,
        retry_delay=EMBEDDING_RETRY_DELAY,
        command_id=command_id,
    )


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
