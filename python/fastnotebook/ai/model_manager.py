"""Which embedding model fastnotebook uses: created once, then cached.

esperanto's ``AIFactory.create_embedding`` builds a new model object on every
call; this module keeps one per configuration. Where the configuration comes
from, first match wins:

1. code: ``configure_embedding_model(provider, model_name, config)``;
2. the environment: ``FASTNOTEBOOK_EMBEDDING_PROVIDER`` and
   ``FASTNOTEBOOK_EMBEDDING_MODEL``;
3. the default: the local, offline all-MiniLM-L6-v2 (``fastnotebook-onnx``).

Any esperanto embedding provider can be named ("openai", "ollama", ...); its
own settings (API keys, base URLs) come from its usual environment variables
or ``config``. The provider ``none`` means no model: ``get_embedding_model()``
then returns None.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from esperanto import AIFactory, EmbeddingModel

from fastnotebook.ai import local_models

__all__ = [
    "EmbeddingConfig",
    "configure_embedding_model",
    "embedding_config",
    "get_embedding_model",
    "new_embedding_model",
    "reset",
]

PROVIDER_ENV = "FASTNOTEBOOK_EMBEDDING_PROVIDER"
MODEL_ENV = "FASTNOTEBOOK_EMBEDDING_MODEL"
CONFIG_ENV = "FASTNOTEBOOK_EMBEDDING_CONFIG"  # JSON object, passed to the provider
NO_MODEL = "none"


@dataclass(frozen=True)
class EmbeddingConfig:
    provider: str
    model_name: str
    config: dict[str, Any] = field(default_factory=dict, hash=False)

    def key(self) -> str:
        return json.dumps(
            [self.provider, self.model_name, self.config], sort_keys=True, default=str
        )


DEFAULT = EmbeddingConfig(local_models.ONNX_PROVIDER, local_models.ONNX_MODEL_NAME)

_lock = threading.Lock()
_configured: EmbeddingConfig | None = None
_configured_none = False
_models: dict[str, EmbeddingModel] = {}


def configure_embedding_model(
    provider: str | None, model_name: str | None = None, config: dict[str, Any] | None = None
) -> None:
    """Set the embedding model for this process (None or "none": no model)."""
    global _configured, _configured_none
    with _lock:
        if provider is None or provider == NO_MODEL:
            _configured, _configured_none = None, True
            return
        _configured_none = False
        _configured = EmbeddingConfig(provider, model_name or "", dict(config or {}))


def reset() -> None:
    """Forget the configuration set in code and every cached model."""
    global _configured, _configured_none
    with _lock:
        _configured, _configured_none = None, False
        _models.clear()


def embedding_config() -> EmbeddingConfig | None:
    """The configuration in effect (None: no model)."""
    if _configured_none:
        return None
    if _configured is not None:
        return _configured
    provider = os.environ.get(PROVIDER_ENV, "").strip()
    if provider == NO_MODEL:
        return None
    if provider:
        raw = os.environ.get(CONFIG_ENV, "").strip()
        try:
            config = json.loads(raw) if raw else {}
        except json.JSONDecodeError as e:
            raise ValueError(f"{CONFIG_ENV} is not a JSON object: {e}") from e
        if not isinstance(config, dict):
            raise ValueError(f"{CONFIG_ENV} must be a JSON object, got {raw!r}")
        return EmbeddingConfig(provider, os.environ.get(MODEL_ENV, "").strip(), config)
    return DEFAULT


def _create(cfg: EmbeddingConfig) -> EmbeddingModel:
    model = AIFactory.create_embedding(
        provider=cfg.provider, model_name=cfg.model_name, config=cfg.config
    )
    return model


async def get_embedding_model(**kwargs: Any) -> EmbeddingModel | None:
    """The configured embedding model, created on first use and then reused."""
    cfg = embedding_config()
    if cfg is None:
        return None
    if kwargs:
        cfg = EmbeddingConfig(cfg.provider, cfg.model_name, {**cfg.config, **kwargs})
    key = cfg.key()
    with _lock:
        model = _models.get(key)
        if model is None:
            model = _create(cfg)
            _models[key] = model
    return model


def new_embedding_model() -> EmbeddingModel:
    """A new, uncached model object for the configuration in effect (one
    that a caller configures and closes itself: the bulk pipeline gives it
    its own HTTP client). ``ValueError`` when no model is configured."""
    cfg = embedding_config()
    if cfg is None:
        raise ValueError(
            "No embedding model configured. Please configure one in the Models section."
        )
    return _create(cfg)
