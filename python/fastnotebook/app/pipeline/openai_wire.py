"""esperanto's OpenAI and OpenAI-compatible embedding calls, with the same
requests and the same vectors, and without the Python work per number.

At tens of requests in flight, esperanto's ``aembed`` kept the event loop
busy: ``response.json()`` makes a Python float of every number of every
vector (64 texts x 384 dimensions a request), its ``_clean_text`` runs four
regular expressions over every text, and the writer then turns the floats
back into an array. ``aembed_matrix`` sends the request ``aembed`` sends,
built by the model's own methods (batches, model name, options, headers,
client), with the texts normalized by the Rust core exactly as
``_clean_text`` does, and reads the response with ``_core.embedding_rows``
(in a worker thread, the GIL released): the vectors come back as one
float64 array holding the values ``float()`` gives. A response the core
does not answer for (not the usual shape, or anything Python might read
differently) is decoded as esperanto decodes it, so every outcome,
failures included, is esperanto's.

Used for a model whose class keeps esperanto's own ``aembed`` and
``_clean_text`` (``supported``); any other model is called as it is.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from esperanto.providers.embedding.base import EmbeddingModel
from esperanto.providers.embedding.openai import OpenAIEmbeddingModel
from esperanto.providers.embedding.openai_compatible import OpenAICompatibleEmbeddingModel
from esperanto.utils.embedding import validate_and_decode_embedding

from fastnotebook._core import embedding_rows, normalize_embedding_inputs

__all__ = ["aembed_matrix", "supported"]

# The classes whose ``aembed`` this module reproduces; the compatible one
# also asks for ``"encoding_format": "float"`` and wraps every error.
_CALLS = {OpenAIEmbeddingModel.aembed: False, OpenAICompatibleEmbeddingModel.aembed: True}


def supported(model: Any) -> bool:
    """Whether ``model``'s ``aembed`` is one ``aembed_matrix`` reproduces."""
    kind, own = type(model), getattr(model, "__dict__", {})
    return (
        getattr(kind, "aembed", None) in _CALLS
        and getattr(kind, "_clean_text", None) is EmbeddingModel._clean_text
        and "aembed" not in own
        and "_clean_text" not in own
    )


async def aembed_matrix(model: Any, texts: list[str]) -> np.ndarray[Any, Any] | list[list[float]]:
    """``model.aembed(texts)``'s vectors: one float64 array when every
    response was read by the core, the lists esperanto makes otherwise."""
    compatible = _CALLS[type(model).aembed]
    try:
        return await _embed(model, texts, compatible)
    except Exception as error:
        if compatible:
            raise RuntimeError(f"Failed to generate embeddings: {error}") from error
        raise


async def _embed(
    model: Any, texts: list[str], compatible: bool
) -> np.ndarray[Any, Any] | list[list[float]]:
    batches: list[np.ndarray[Any, Any] | list[list[float]]] = []
    done = 0
    for batch in model._iter_embed_batches(normalize_embedding_inputs(texts)):
        payload: dict[str, Any] = {"input": batch, "model": model.get_model_name()}
        if compatible:
            payload["encoding_format"] = "float"
        payload.update(model._get_api_kwargs())
        response = await model.async_client.post(
            f"{model.base_url}/embeddings", headers=model._get_headers(), json=payload
        )
        model._handle_error(response)
        # In a worker thread: the event loop keeps the database writes going.
        matrix = await asyncio.to_thread(embedding_rows, response.content)
        rows: np.ndarray[Any, Any] | list[list[float]] = (
            matrix if matrix is not None else _decoded(response, done)
        )
        done += len(rows)
        batches.append(rows)
    if len(batches) == 1:
        return batches[0]
    arrays = [b for b in batches if isinstance(b, np.ndarray)]
    if len(arrays) == len(batches) and len({a.shape[1] for a in arrays}) == 1:
        return np.concatenate(arrays)
    return [list(map(float, row)) for rows in batches for row in rows]


def _decoded(response: Any, start: int) -> list[list[float]]:
    """The response's vectors as esperanto decodes them."""
    return [
        validate_and_decode_embedding(index, item.get("embedding"))
        for index, item in enumerate(response.json()["data"], start=start)
    ]
