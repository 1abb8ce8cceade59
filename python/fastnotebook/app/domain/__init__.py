"""Notebooks, sources, insights and notes stored in SurrealDB, and search
over them; a drop-in for the parts of ``open_notebook.domain`` that the
context builder needs."""

from fastnotebook.app.domain.base import ObjectModel
from fastnotebook.app.domain.notebook import Asset, Note, Notebook, Source, SourceInsight
from fastnotebook.app.domain.search import text_search, vector_search

__all__ = [
    "Asset",
    "Note",
    "Notebook",
    "ObjectModel",
    "Source",
    "SourceInsight",
    "text_search",
    "vector_search",
]
