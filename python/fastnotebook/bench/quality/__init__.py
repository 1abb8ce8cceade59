"""Retrieval quality of chunkers: Chroma's evaluation (recall, precision, IoU
and precision-Omega on character ranges), as ``fastnotebook eval`` runs it.

>>> from fastnotebook.bench import quality
>>> dataset = quality.load_chroma("path/to/chunking_evaluation")  # doctest: +SKIP
>>> configs = quality.grid([quality.parse("recursive"), quality.parse("semchunk")],
...                        sizes=[200, 400], overlaps=[0])
>>> result = quality.evaluate(dataset, configs, model="default", top_k=5)  # doctest: +SKIP
>>> quality.write(result, Path("eval-results"))  # doctest: +SKIP

See docs/quality.md.
"""

from fastnotebook.bench.quality.configs import KINDS, Config, grid, locate, parse
from fastnotebook.bench.quality.data import (
    CHROMA_ENV,
    Dataset,
    Question,
    chroma_path,
    load_chroma,
    load_corpus,
    subset,
)
from fastnotebook.bench.quality.embedding import CachedEmbedder, embedder
from fastnotebook.bench.quality.evaluate import (
    ConfigResult,
    Evaluation,
    MetricSummary,
    evaluate,
    score,
)
from fastnotebook.bench.quality.report import markdown, plot, table, write, write_docs

__all__ = [
    "CHROMA_ENV",
    "KINDS",
    "CachedEmbedder",
    "Config",
    "ConfigResult",
    "Dataset",
    "Evaluation",
    "MetricSummary",
    "Question",
    "chroma_path",
    "embedder",
    "evaluate",
    "grid",
    "load_chroma",
    "load_corpus",
    "locate",
    "markdown",
    "parse",
    "plot",
    "score",
    "subset",
    "table",
    "write",
    "write_docs",
]
