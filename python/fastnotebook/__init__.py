"""fastnotebook: the text preparation of Open Notebook's ``utils``, in Rust.

``from fastnotebook import chunk_text`` works like
``from open_notebook.utils import chunk_text``; submodules mirror the
original's (``fastnotebook.chunking`` for ``open_notebook.utils.chunking``).
Names are imported lazily so that ``import fastnotebook`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastnotebook.chunking import (
        CHUNK_SIZE,
        ContentType,
        chunk_text,
        chunk_texts,
        detect_content_type,
        detect_content_type_from_extension,
        detect_content_type_from_heuristics,
    )

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "CHUNK_SIZE": "chunking",
    "ContentType": "chunking",
    "chunk_text": "chunking",
    "chunk_texts": "chunking",
    "detect_content_type": "chunking",
    "detect_content_type_from_extension": "chunking",
    "detect_content_type_from_heuristics": "chunking",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fastnotebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"fastnotebook.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
