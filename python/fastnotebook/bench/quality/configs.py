"""The chunker configurations the evaluation compares, written as specs:
``KIND[,key=value...]`` with the keys ``size``, ``overlap``, ``unit``
(``chars`` or ``tokens``), ``encoding`` and, for ``recursive``,
``separators=sentences`` (``SENTENCE_SEPARATORS`` with
``keep_separator="end"``: cuts between sentences before words).

KIND is one of

- a ``chunk()`` strategy (``recursive``, ``token``, ``markdown``,
  ``sentence``, ``semantic``, ``semantic_double_pass``): fastnotebook's
  records, whose offsets are used as they are; the semantic ones embed with
  the evaluation's model;
- ``open-notebook``: ``fastnotebook.chunk_text``, Open Notebook's contract in
  characters (1500/225 by default, as Markdown), and ``open-notebook-head``:
  ``fastnotebook.open_notebook.chunking.chunk_text``, its current contract
  (400 tokens, 15% overlap);
- ``fastnotebook.langchain:CLASS`` (our LangChain classes) and
  ``langchain:CLASS`` (langchain-text-splitters), CLASS one of
  ``RecursiveCharacterTextSplitter``, ``CharacterTextSplitter``,
  ``MarkdownTextSplitter`` (token windows: the ``token`` strategy);
- ``chonkie:RecursiveChunker``, ``chonkie:TokenChunker``,
  ``chonkie:SentenceChunker``; ``semchunk``; ``text-splitter`` and
  ``text-splitter:MarkdownSplitter`` (semantic-text-splitter).

A size counts ``unit``; tokens are those of ``encoding`` (default
``cl100k_base``, the paper's). Chunkers that return strings are located in
the corpus in order (each from the previous chunk's start).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fastnotebook.bench.quality.data import find_text
from fastnotebook.bench.quality.metrics import Range

__all__ = [
    "KINDS",
    "Config",
    "Splitter",
    "grid",
    "parse",
]

Splitter = Callable[[str], list[Range]]
"""A chunker as the evaluation runs it: a corpus in, the chunks' ranges out."""

Embed = Callable[[list[str]], Any]

DEFAULT_ENCODING = "cl100k_base"
_STRATEGIES = ("recursive", "token", "markdown", "sentence", "semantic", "semantic_double_pass")
_LANGCHAIN = (
    "RecursiveCharacterTextSplitter",
    "CharacterTextSplitter",
    "MarkdownTextSplitter",
)
_CHONKIE = ("RecursiveChunker", "TokenChunker", "SentenceChunker")
KINDS: tuple[str, ...] = (
    *_STRATEGIES,
    "open-notebook",
    "open-notebook-head",
    *(f"fastnotebook.langchain:{c}" for c in _LANGCHAIN),
    *(f"langchain:{c}" for c in _LANGCHAIN),
    *(f"chonkie:{c}" for c in _CHONKIE),
    "semchunk",
    "text-splitter",
    "text-splitter:MarkdownSplitter",
)
_REQUIRES = {
    "langchain": "langchain_text_splitters",
    "chonkie": "chonkie",
    "semchunk": "semchunk",
    "text-splitter": "semantic_text_splitter",
}


@dataclass(frozen=True)
class Config:
    """One chunker configuration (see the module's docstring)."""

    kind: str
    size: int | None = None
    overlap: int = 0
    unit: str = "tokens"
    encoding: str = DEFAULT_ENCODING
    label: str | None = None
    separators: str | None = None

    @property
    def family(self) -> str:
        """``fastnotebook``, ``open-notebook`` or ``peer``."""
        if self.kind in _STRATEGIES or self.kind.startswith("fastnotebook."):
            return "fastnotebook"
        if self.kind.startswith("open-notebook"):
            return "open-notebook"
        return "peer"

    @property
    def name(self) -> str:
        """``label``, else the kind, size, overlap and unit."""
        if self.label:
            return self.label
        kind = self.kind.replace("fastnotebook.langchain:", "fastnotebook ")
        if self.kind in _STRATEGIES:
            kind = f"fastnotebook {self.kind}"
        if self.size is None:
            return f"{kind} default"
        overlap = f"/{self.overlap}" if self.overlap else ""
        separators = f", separators={self.separators}" if self.separators else ""
        return f"{kind} {self.size}{overlap} {self.unit}{separators}"

    def missing(self) -> str | None:
        """Why this configuration cannot run here, or None."""
        head = self.kind.split(":")[0]
        module = _REQUIRES.get(head)
        if module and importlib.util.find_spec(module) is None:
            return f"not installed: {module.replace('_', '-')}"
        return None

    def splitter(self, embed: Embed | None = None) -> Splitter:
        """The chunker, built (peers imported) once; ``embed`` feeds the
        semantic strategies."""
        return _build(self, embed)


def parse(spec: str) -> Config:
    """A configuration from ``KIND[,key=value...]`` (``ValueError`` if invalid)."""
    kind, *pairs = [p.strip() for p in spec.split(",")]
    if kind not in KINDS:
        raise ValueError(f"unknown chunker {kind!r}; choose one of {', '.join(KINDS)}")
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in ("size", "overlap", "unit", "encoding", "label", "separators"):
            raise ValueError(
                f"{spec!r}: {pair!r} is not size=, overlap=, unit=, encoding=, label= "
                "or separators="
            )
        if key in ("size", "overlap"):
            try:
                options[key] = int(value)
            except ValueError:
                raise ValueError(f"{spec!r}: {key} must be an integer, got {value!r}") from None
        else:
            options[key] = value
    config = Config(kind, **options)
    _check(config, spec)
    return config


def _check(config: Config, spec: str) -> None:
    if config.unit not in ("chars", "tokens"):
        raise ValueError(f"{spec!r}: unit must be chars or tokens, got {config.unit!r}")
    if config.encoding not in ("cl100k_base", "o200k_base"):
        raise ValueError(f"{spec!r}: encoding must be cl100k_base or o200k_base")
    if config.size is not None and config.size < 1:
        raise ValueError(f"{spec!r}: size must be positive")
    if config.overlap < 0 or (config.size is not None and config.overlap >= config.size):
        raise ValueError(f"{spec!r}: overlap must be >= 0 and below the size")
    if config.kind in ("token", "chonkie:TokenChunker") and config.unit != "tokens":
        raise ValueError(f"{spec!r}: {config.kind} counts tokens")
    if config.separators is not None and (
        config.kind != "recursive" or config.separators != "sentences"
    ):
        raise ValueError(f"{spec!r}: separators=sentences is an option of recursive only")
    if config.kind == "open-notebook-head" and config.size is not None:
        raise ValueError(f"{spec!r}: open-notebook-head has its fixed sizes (400/60 tokens)")


def grid(configs: Iterable[Config], sizes: Sequence[int], overlaps: Sequence[int]) -> list[Config]:
    """Each configuration without a size at every size and overlap (pairs with
    the overlap not below the size are left out); the others, and Open
    Notebook's contracts without ``size=``, as they are."""
    out: list[Config] = []
    for config in configs:
        if config.size is not None or config.kind.startswith("open-notebook") or not sizes:
            out.append(config)
            continue
        for size in sizes:
            for overlap in overlaps or [config.overlap]:
                if overlap < size:
                    out.append(replace(config, size=size, overlap=overlap))
    return out


def locate(text: str, pieces: Iterable[str]) -> list[Range]:
    """The ranges of chunk strings in ``text``, each found from the previous
    chunk's start (``data.find_text``; ``ValueError`` if one is not there)."""
    spans: list[Range] = []
    cursor = 0
    for piece in pieces:
        if not piece.strip():
            continue
        found = find_text(text, piece, cursor) or find_text(text, piece)
        if found is None:
            short = piece if len(piece) <= 40 else piece[:37] + "..."
            raise ValueError(f"a chunk is not in the corpus: {short!r}")
        spans.append(found)
        cursor = found[0] + 1
    return spans


def _token_length(encoding: str, reference: bool) -> Callable[[str], int]:
    """A token count: tiktoken's (for peers; local vocabulary) or ours."""
    if reference:
        from fastnotebook.bench.reference import tiktoken_encoding

        tokens = tiktoken_encoding(encoding)
        return lambda text: len(tokens.encode_ordinary(text))
    from fastnotebook import token_utils

    return lambda text: token_utils.token_count(text, encoding)


def _size(config: Config, default_chars: int, default_tokens: int) -> int:
    if config.size is not None:
        return config.size
    return default_tokens if config.unit == "tokens" else default_chars


def _build(config: Config, embed: Embed | None) -> Splitter:
    kind, _, cls = config.kind.partition(":")
    size = _size(config, 1000, 200)
    if kind in _STRATEGIES:
        return _strategy(config, size, embed)
    if kind == "open-notebook":
        return _open_notebook(config)
    if kind == "open-notebook-head":
        from fastnotebook.open_notebook import chunking as head

        return lambda text: locate(text, head.chunk_text(text, head.ContentType.MARKDOWN))
    if kind in ("langchain", "fastnotebook.langchain"):
        return _langchain(config, kind, cls, size)
    if kind == "chonkie":
        return _chonkie(config, cls, size)
    if kind == "semchunk":
        import semchunk

        counter: Any = len if config.unit == "chars" else _tiktoken(config.encoding)
        chunker: Any = semchunk.chunkerify(counter, size)  # type: ignore[attr-defined]

        def run_semchunk(text: str) -> list[Range]:
            _, offsets = chunker(text, offsets=True, overlap=config.overlap or None)
            return [(int(a), int(b)) for a, b in offsets]

        return run_semchunk
    if kind == "text-splitter":
        return _text_splitter(config, cls, size)
    raise ValueError(f"unknown chunker {config.kind!r}")


def _tiktoken(encoding: str) -> Any:
    from fastnotebook.bench.reference import tiktoken_encoding

    return tiktoken_encoding(encoding)


def _strategy(config: Config, size: int, embed: Embed | None) -> Splitter:
    from fastnotebook import chunk

    options: dict[str, Any] = {
        "chunk_size": size,
        "overlap": config.overlap,
        "unit": config.unit,
        "encoding": config.encoding,
    }
    if config.separators == "sentences":
        from fastnotebook.chunkers import SENTENCE_SEPARATORS

        options["separators"] = SENTENCE_SEPARATORS
        options["keep_separator"] = "end"
    if config.kind.startswith("semantic"):
        if embed is None:
            raise ValueError(f"{config.kind} needs an embedding function")
        options["embed"] = embed

    def run(text: str) -> list[Range]:
        return [(c.start, c.end) for c in chunk(text, config.kind, **options)]  # type: ignore[arg-type]

    return run


def _open_notebook(config: Config) -> Splitter:
    from fastnotebook import chunking

    settings = chunking.ChunkingConfig(
        unit="tokens" if config.size is not None and config.unit == "tokens" else "chars",
        chunk_size=config.size,
        chunk_overlap=config.overlap if config.size is not None else None,
        encoding=config.encoding,
    )

    def run(text: str) -> list[Range]:
        previous = chunking.get_chunking_config()
        chunking.set_chunking_config(settings)
        try:
            pieces = chunking.chunk_text(text, chunking.ContentType.MARKDOWN)
        finally:
            chunking.set_chunking_config(previous)
        return locate(text, pieces)

    return run


def _langchain(config: Config, kind: str, cls: str, size: int) -> Splitter:
    if kind == "langchain":
        import langchain_text_splitters as module
    else:
        from fastnotebook import langchain as module  # type: ignore[no-redef]
    length: Callable[[str], int] = (
        len if config.unit == "chars" else _token_length(config.encoding, kind == "langchain")
    )
    splitter = getattr(module, cls)(
        chunk_size=size, chunk_overlap=config.overlap, length_function=length
    )
    return lambda text: locate(text, splitter.split_text(text))


def _chonkie(config: Config, cls: str, size: int) -> Splitter:
    import chonkie

    tokenizer: Any = "character" if config.unit == "chars" else _tiktoken(config.encoding)
    options: dict[str, Any] = {"tokenizer": tokenizer, "chunk_size": size}
    if cls != "RecursiveChunker":
        options["chunk_overlap"] = config.overlap
    elif config.overlap:
        raise ValueError("chonkie's RecursiveChunker has no overlap")
    chunker = getattr(chonkie, cls)(**options)
    return lambda text: [(c.start_index, c.end_index) for c in chunker.chunk(text)]


def _text_splitter(config: Config, cls: str, size: int) -> Splitter:
    import semantic_text_splitter as sts

    splitter_class = getattr(sts, cls or "TextSplitter")
    if config.unit == "chars":
        splitter = splitter_class(size, overlap=config.overlap)
    else:
        model = "gpt-4o" if config.encoding == "o200k_base" else "gpt-3.5-turbo"
        splitter = splitter_class.from_tiktoken_model(model, size, overlap=config.overlap)

    def run(text: str) -> list[Range]:
        return [(start, start + len(piece)) for start, piece in splitter.chunk_indices(text)]

    return run
