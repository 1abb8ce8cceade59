"""Notebooks, sources, insights and notes stored in SurrealDB, and search
over them; a drop-in for the parts of ``open_notebook.domain`` that the
context builder needs. Importing it makes its database what
``fastnotebook.context_builder`` loads from by default."""

from fastnotebook.app.domain.base import ObjectModel
from fastnotebook.app.domain.context import DatabaseRecords
from fastnotebook.app.domain.notebook import Asset, Note, Notebook, Source, SourceInsight
from fastnotebook.app.domain.search import text_search, vector_search
from fastnotebook.context_builder import set_default_records

set_default_records(DatabaseRecords())

__all__ = [
    "Asset",
    "DatabaseRecords",
    "Note",
    "Notebook",
    "ObjectModel",
    "Source",
    "SourceInsight",
    "text_search",
    "vector_search",
]
