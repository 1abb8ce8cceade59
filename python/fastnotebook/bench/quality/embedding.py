"""Embeddings for the evaluation, cached by content hash: a sweep over many
configurations embeds each distinct text once (per model), and with a cache
file never again across runs.

``embedder(model)`` takes ``"default"`` (the offline model,
all-MiniLM-L6-v2 int8), ``"PROVIDER:MODEL"`` (any esperanto embedding model,
e.g. ``"openai:text-embedding-3-small"`` or ``"fastnotebook-static:x"``), an
esperanto ``EmbeddingModel``, or a callable ``list[str] -> array (n, dim)``.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CachedEmbedder", "embedder"]

Embed = Callable[[list[str]], Any]
BATCH = 64


def embedder(model: Any) -> tuple[Embed, str]:
    """The embedding function of ``model`` and a key naming it (for the cache)."""
    from fastnotebook.chunkers import _embedding_function

    if isinstance(model, str):
        if model == "default":
            return _embedding_function(model, "evaluation"), "default:all-MiniLM-L6-v2-int8"
        provider, sep, name = model.partition(":")
        if not sep or not provider or not name:
            raise ValueError(f'model {model!r}: give "default" or PROVIDER:MODEL (esperanto)')
        _register_local_providers()
        from esperanto import AIFactory

        return AIFactory.create_embedding(provider, name).embed, model
    if callable(model) and not hasattr(model, "embed"):
        return model, f"callable:{getattr(model, '__qualname__', type(model).__name__)}"
    function = _embedding_function(model, "evaluation")
    name = getattr(model, "model_name", None) or type(model).__name__
    return function, f"{type(model).__name__}:{name}"


def _register_local_providers() -> None:
    """The offline providers registered with esperanto."""
    from fastnotebook.ai import local_models

    local_models.register()


class CachedEmbedder:
    """``embed`` with a cache: vectors keyed by the SHA-256 of the model key
    and the text, in memory and, with ``path``, in an SQLite file."""

    def __init__(self, embed: Embed, key: str, path: str | Path | None = None) -> None:
        self.embed = embed
        self.key = key
        self.memory: dict[bytes, np.ndarray] = {}
        self.embedded = 0  # texts sent to the model
        self.db: sqlite3.Connection | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(path))
            self.db.execute("CREATE TABLE IF NOT EXISTS vectors (hash BLOB PRIMARY KEY, v BLOB)")

    def _hash(self, text: str) -> bytes:
        data = f"{self.key}\0{text}".encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).digest()

    def __call__(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Unit-length vectors of ``texts`` (rows); ``progress(n)`` after each batch."""
        hashes = [self._hash(t) for t in texts]
        todo = [i for i, h in enumerate(hashes) if h not in self.memory]
        if todo and self.db is not None:
            found = self._load([hashes[i] for i in todo])
            self.memory.update(found)
            if progress is not None and found:
                progress(len(found))
            todo = [i for i in todo if hashes[i] not in self.memory]
        seen: dict[bytes, int] = {}
        unique = [i for i in todo if seen.setdefault(hashes[i], i) == i]
        for at in range(0, len(unique), BATCH):
            batch = unique[at : at + BATCH]
            vectors = np.asarray(self.embed([texts[i] for i in batch]), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise ValueError(
                    f"the model returned an array of shape {vectors.shape} for {len(batch)} texts"
                )
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
            rows = {hashes[i]: vectors[j] for j, i in enumerate(batch)}
            self.memory.update(rows)
            self._store(rows)
            self.embedded += len(batch)
            if progress is not None:
                progress(len(batch))
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self.memory[h] for h in hashes])

    def _load(self, hashes: list[bytes]) -> dict[bytes, np.ndarray]:
        assert self.db is not None
        found: dict[bytes, np.ndarray] = {}
        for at in range(0, len(hashes), 500):
            part = hashes[at : at + 500]
            marks = ",".join("?" * len(part))
            query = f"SELECT hash, v FROM vectors WHERE hash IN ({marks})"
            for h, blob in self.db.execute(query, part):
                found[bytes(h)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, rows: dict[bytes, np.ndarray]) -> None:
        if self.db is None:
            return
        self.db.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
            [(h, v.astype(np.float32).tobytes()) for h, v in rows.items()],
        )
        self.db.commit()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
