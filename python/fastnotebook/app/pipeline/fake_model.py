"""``fastnotebook-fake``: an embedding provider that costs nothing, for
measuring and testing everything around the model.

Each text's vector is derived from a hash of the text, so the same text
always gets the same unit vector and the provider takes microseconds per
text: a run with it measures the pipeline and the database alone. Its
config (``configure_embedding_model("fastnotebook-fake", config=...)`` or
``FASTNOTEBOOK_EMBEDDING_CONFIG``) can also make it slow or failing, which is
how the tests drive interruption and error handling deterministically:

- ``dimension``: vector size (default 384, the default model's);
- ``delay``: seconds each call sleeps (a slow model);
- ``fail_every``: every n-th call raises ``ConnectionError`` (intermittent);
- ``fail_on``: a call with a text containing this string raises ``ValueError``
  (a text the provider always refuses);
- ``always_fail``: every call raises ``ConnectionError`` (a provider that is down);
- ``log``: a file to which every call appends its texts, as one JSON list
  per line (what a run sent to the model, across processes).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from esperanto import AIFactory
from esperanto.common_types import Model
from esperanto.providers.embedding.base import EmbeddingModel

__all__ = ["FAKE_MODEL_NAME", "FAKE_PROVIDER", "FakeEmbeddingModel", "register"]

FAKE_PROVIDER = "fastnotebook-fake"
FAKE_MODEL_NAME = "hash-vectors"


def hash_vectors(texts: list[str], dimension: int) -> np.ndarray:
    """Unit vectors (texts x dimension, float32) from each text's BLAKE2b digest."""
    digests = b"".join(
        hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=64).digest() for t in texts
    )
    raw = np.frombuffer(digests, dtype=np.int8).reshape(len(texts), 64).astype(np.float32)
    vectors = np.tile(raw, (1, -(-dimension // 64)))[:, :dimension]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


@dataclass
class FakeEmbeddingModel(EmbeddingModel):
    """Deterministic hash vectors; optionally slow or failing (see the module)."""

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[no-untyped-call]
        config = self._config
        self.dimension = int(config.get("dimension", 384))
        self.delay = float(config.get("delay", 0.0))
        self.fail_every = int(config.get("fail_every", 0))
        self.fail_on = str(config.get("fail_on", "")) or None
        self.always_fail = bool(config.get("always_fail", False))
        self.log = str(config.get("log", "")) or None
        self.calls = 0
        self._lock = threading.Lock()

    def _get_default_model(self) -> str:
        return FAKE_MODEL_NAME

    @property
    def provider(self) -> str:
        return FAKE_PROVIDER

    def _get_models(self) -> list[Model]:
        return [Model(id=FAKE_MODEL_NAME, owned_by="fastnotebook", context_window=None)]

    def _check(self, texts: list[str]) -> None:
        with self._lock:
            self.calls += 1
            call = self.calls
        if self.always_fail:
            raise ConnectionError("the fake provider is down")
        if self.fail_every and call % self.fail_every == 0:
            raise ConnectionError(f"the fake provider dropped call {call}")
        if self.fail_on is not None and any(self.fail_on in t for t in texts):
            raise ValueError(f"the fake provider refuses texts containing {self.fail_on!r}")
        if self.log is not None:
            line = json.dumps(texts) + "\n"
            with self._lock, open(self.log, "a", encoding="utf-8") as f:
                f.write(line)

    def embed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        self._check(texts)
        if self.delay:
            time.sleep(self.delay)
        return hash_vectors(texts, self.dimension).tolist()  # type: ignore[no-any-return]

    async def aembed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return (await self._vectors(texts)).tolist()  # type: ignore[no-any-return]

    async def aembed_matrix(self, texts: list[str]) -> np.ndarray:
        """``aembed`` as one (texts x dimension) array (see ``Provider``)."""
        return await self._vectors(texts)

    async def _vectors(self, texts: list[str]) -> np.ndarray:
        self._check(texts)
        if self.delay:
            await asyncio.sleep(self.delay)
        return hash_vectors(texts, self.dimension)


def register() -> None:
    """Make ``fastnotebook-fake`` available to ``AIFactory.create_embedding``."""
    AIFactory._provider_modules["embedding"][FAKE_PROVIDER] = f"{__name__}:FakeEmbeddingModel"


register()
