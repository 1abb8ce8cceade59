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
    from fastnotebook.embedding import (
        generate_embedding,
        generate_embeddings,
        mean_pool_embeddings,
    )
    from fastnotebook.text_utils import (
        clean_thinking_content,
        extract_text_content,
        parse_thinking_content,
        remove_non_ascii,
        remove_non_printable,
    )
    from fastnotebook.token_utils import token_cost, token_count, token_counts
    from fastnotebook.version_utils import (
        compare_versions,
        get_installed_version,
        get_version_from_github,
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
    "generate_embedding": "embedding",
    "generate_embeddings": "embedding",
    "mean_pool_embeddings": "embedding",
    "clean_thinking_content": "text_utils",
    "extract_text_content": "text_utils",
    "parse_thinking_content": "text_utils",
    "remove_non_ascii": "text_utils",
    "remove_non_printable": "text_utils",
    "token_count": "token_utils",
    "token_cost": "token_utils",
    "token_counts": "token_utils",
    "compare_versions": "version_utils",
    "get_installed_version": "version_utils",
    "get_version_from_github": "version_utils",
}

__all__ = [  # noqa: RUF022 -- grouped as the original's __init__
    "CHUNK_SIZE",
    "ContentType",
    "chunk_text",
    "chunk_texts",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
    "generate_embedding",
    "generate_embeddings",
    "mean_pool_embeddings",
    "remove_non_ascii",
    "remove_non_printable",
    "parse_thinking_content",
    "clean_thinking_content",
    "extract_text_content",
    "token_count",
    "token_cost",
    "token_counts",
    "compare_versions",
    "get_installed_version",
    "get_version_from_github",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fastnotebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"fastnotebook.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
