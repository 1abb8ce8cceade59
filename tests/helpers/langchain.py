"""LangChain's tiktoken-based splitters, offline: tiktoken's registry gets the
encodings built from the local vocabularies (see ``helpers.corpus``)."""

from __future__ import annotations

import tiktoken.registry

from helpers.corpus import tiktoken_reference

ENCODINGS = ("o200k_base", "cl100k_base", "r50k_base")


def register_offline_encodings() -> None:
    """``tiktoken.get_encoding(name)`` returns the local build of each encoding
    (as it caches the ones it downloads), so that LangChain's classes find them."""
    for name in ENCODINGS:
        if name not in tiktoken.registry.ENCODINGS:
            tiktoken.registry.ENCODINGS[name] = tiktoken_reference(name)
