"""Bulk work: ingest files as sources, then (re-)embed sources, insights and
notes through a staged pipeline that is incremental and survives
interruption. The command line (``fastnotebook ingest``, ``embed``) is a thin
layer over ``ingest()`` and ``embed()``.

Importing this package registers the zero-cost ``fastnotebook-fake``
embedding provider (``fastnotebook.app.pipeline.fake_model``), which measures the
pipeline without a model.
"""

from fastnotebook.app.pipeline import fake_model
from fastnotebook.app.pipeline.ingest import IngestReport, ingest
from fastnotebook.app.pipeline.stages import EmbedOptions, EmbedReport, KindCounts, embed
from fastnotebook.app.pipeline.state import KINDS, LABELS

__all__ = [
    "KINDS",
    "LABELS",
    "EmbedOptions",
    "EmbedReport",
    "IngestReport",
    "KindCounts",
    "embed",
    "fake_model",
    "ingest",
]
