"""Type stubs for the compiled core. The public API is in the Python modules."""

from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any, ClassVar, Literal, TypeAlias, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "CHUNK_STRATEGIES",
    "ENCODINGS",
    "HIGH_CONFIDENCE_THRESHOLD",
    "MAX_THINKING_INPUT_CHARS",
    "UNICODE_VERSION",
    "Chunk",
    "Edge",
    "HtmlHeaderSplitter",
    "LangchainSplitter",
    "MarkdownHeaderSplitter",
    "MarkdownSyntaxSplitter",
    "MarkupRejectedError",
    "NoteChunk",
    "NoteLink",
    "RecursiveSplitter",
    "UnsupportedTextError",
    "_Chunker",
    "_NotePlan",
    "__version__",
    "_char_class_bits",
    "_html_text",
    "_notes_body",
    "_notes_chunk",
    "_notes_chunks",
    "_notes_edges",
    "_notes_frontmatter_end",
    "_notes_link_rows",
    "_notes_normalise",
    "_notes_plan_rows",
    "_notes_split_data",
    "_panic_for_tests",
    "_relink_chunks",
    "_sentence_spans",
    "_tiktoken_ranks",
    "_token_char_classes",
    "chunk_text",
    "chunk_texts",
    "cosine_top_k",
    "decode_cbor",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
    "embedding_rows",
    "encode_chunk_rows",
    "encode_ordinary",
    "encode_vector_rows",
    "langchain_documents",
    "langchain_section_documents",
    "mean_pool",
    "mean_pool_embeddings",
    "mean_pool_segments",
    "mean_pool_tokens",
    "normalize_embedding_inputs",
    "parse_thinking_content",
    "read_vector_statements",
    "remove_non_ascii",
    "remove_non_printable",
    "row_norms",
    "sketch_rows",
    "token_count",
    "token_counts",
    "token_windows",
]

_ContentTypeName = Literal["html", "markdown", "plain"]

__version__: str
UNICODE_VERSION: str
CHUNK_SIZE: int
CHUNK_OVERLAP: int
HIGH_CONFIDENCE_THRESHOLD: float

class MarkupRejectedError(ValueError): ...
class UnsupportedTextError(ValueError): ...

MAX_THINKING_INPUT_CHARS: int

# Test hooks: present when built with the `test-hooks` cargo feature (the
# development build, `make build`, which stubtest checks); not in releases.
def _char_class_bits(start: int, end: int) -> bytes: ...
def _panic_for_tests(site: str = "detached") -> None: ...
def _token_char_classes(start: int, end: int) -> bytes: ...
def _notes_link_rows(
    body: str, suggestion_headings: list[str]
) -> list[tuple[int, int, int, str, str | None, str | None, str | None, bool]]: ...
def _notes_plan_rows(
    plan: _NotePlan,
) -> list[tuple[int, int, int, int, int, int, list[str], bool, bool, str | None]]: ...
def remove_non_ascii(text: str) -> str: ...
def remove_non_printable(text: str) -> str: ...
def parse_thinking_content(content: str) -> tuple[str, str] | None: ...
def normalize_embedding_inputs(texts: list[str]) -> list[str]: ...
def embedding_rows(body: bytes) -> np.ndarray[Any, np.dtype[np.float64]] | None: ...
def detect_content_type_from_extension(file_path: str) -> _ContentTypeName | None: ...
def detect_content_type_from_heuristics(text: str) -> tuple[_ContentTypeName, float]: ...
def detect_content_type(
    text: str, file_path: str | None = None
) -> tuple[_ContentTypeName, _ContentTypeName | None, _ContentTypeName, float]: ...
def chunk_text(
    text: str,
    content_type: str | None = None,
    file_path: str | None = None,
    chunk_size: int = 1500,
    chunk_overlap: int = 225,
    unit: str = "chars",
    encoding: str = "o200k_base",
    min_chunk_size: int | None = None,
) -> tuple[list[str], _ContentTypeName | None, int]: ...
def chunk_texts(
    texts: list[str],
    content_types: list[str | None] | None = None,
    file_paths: list[str | None] | None = None,
    chunk_size: int = 1500,
    chunk_overlap: int = 225,
    unit: str = "chars",
    encoding: str = "o200k_base",
    min_chunk_size: int | None = None,
) -> list[list[str]]: ...

_EncodingName = Literal["o200k_base", "cl100k_base"]

ENCODINGS: tuple[_EncodingName, ...]

def token_count(text: str, encoding: _EncodingName | str = "o200k_base") -> int: ...
def token_counts(texts: list[str], encoding: _EncodingName | str = "o200k_base") -> list[int]: ...
def encode_ordinary(text: str, encoding: _EncodingName | str = "o200k_base") -> list[int]: ...
def _tiktoken_ranks(encoding: _EncodingName | str) -> list[bytes]: ...

@final
class RecursiveSplitter:
    def __new__(
        cls,
        chunk_size: int = 4000,
        chunk_overlap: int = 200,
        separators: list[str] | None = None,
        keep_separator: bool | Literal["start", "end"] | None = None,
        strip_whitespace: bool = True,
    ) -> RecursiveSplitter: ...
    def split_text(self, text: str) -> list[str]: ...

@final
class MarkdownHeaderSplitter:
    def __new__(
        cls,
        headers_to_split_on: list[tuple[str, str]],
        return_each_line: bool = False,
        strip_headers: bool = True,
    ) -> MarkdownHeaderSplitter: ...
    def split_text(self, text: str) -> list[tuple[str, dict[str, str]]]: ...

@final
class HtmlHeaderSplitter:
    def __new__(
        cls,
        headers_to_split_on: list[tuple[str, str]],
        return_each_element: bool = False,
    ) -> HtmlHeaderSplitter: ...
    def split_text(self, text: str) -> list[tuple[str, dict[str, str]]]: ...

@final
class LangchainSplitter:
    def __new__(
        cls,
        mode: Literal["recursive", "character"],
        chunk_size: int,
        chunk_overlap: int,
        separators: list[str],
        keep_separator: Literal["start", "end"] | None,
        strip_whitespace: bool,
        encoding: _EncodingName | str | None = None,
    ) -> LangchainSplitter: ...
    def split_text(self, text: str) -> list[str]: ...

@final
class MarkdownSyntaxSplitter:
    def __new__(
        cls, headers: list[tuple[str, str]], strip_headers: bool, return_each_line: bool
    ) -> MarkdownSyntaxSplitter: ...
    def split_text(
        self, text: str
    ) -> tuple[list[tuple[str, dict[str, str]]], list[tuple[int, str]]]: ...

def token_windows(
    text: str, encoding: _EncodingName | str, chunk_size: int, chunk_overlap: int
) -> list[str]: ...
def langchain_documents(
    template: Any,
    texts: list[str],
    chunk_lists: list[list[str]],
    metadatas: list[dict[Any, Any]],
    flat: list[bool],
    add_start_index: bool,
    chunk_overlap: int,
) -> list[Any]: ...
def langchain_section_documents(
    template: Any, sections: list[tuple[str, dict[str, str]]]
) -> list[Any]: ...
def mean_pool_embeddings(embeddings: Any) -> list[float]: ...
def encode_chunk_rows(
    owners: Sequence[bytes],
    counts: Sequence[int],
    texts: Sequence[str],
    vectors: npt.NDArray[Any],
    ids: tuple[str, Sequence[str]] | None = None,
) -> bytes: ...
def encode_vector_rows(ids: Sequence[bytes], vectors: npt.NDArray[Any]) -> bytes: ...
def decode_cbor(
    data: bytes,
    record_id: Callable[[Any, Any], Any],
    decode_tagged: Callable[[bytes], Any],
) -> tuple[Any] | None: ...
def read_vector_statements(
    data: bytes, dimension: int
) -> list[
    tuple[
        str,
        tuple[int, int],
        tuple[list[tuple[int, int]], np.ndarray[Any, np.dtype[np.float32]]] | None,
    ]
]: ...
def mean_pool(matrix: npt.NDArray[Any]) -> np.ndarray[Any, Any]: ...
def mean_pool_segments(
    matrix: npt.NDArray[Any], offsets: npt.NDArray[np.int64]
) -> np.ndarray[Any, Any]: ...
def mean_pool_tokens(
    hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]: ...
def row_norms(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]: ...
def cosine_top_k(
    matrix: npt.NDArray[np.float32],
    norms: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    k: int,
    sketch: tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.float32]]
    | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...
def sketch_rows(
    matrix: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.float32]]: ...

CHUNK_STRATEGIES: tuple[str, ...]

@final
class Chunk:
    """One chunk of a document: ``source[start:end] == text``."""

    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def prev_id(self) -> str | None: ...
    @property
    def next_id(self) -> str | None: ...
    @property
    def headings(self) -> tuple[str, ...]: ...
    @property
    def token_count(self) -> int: ...
    @property
    def char_count(self) -> int: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def embed_text(self) -> str: ...
    def __new__(
        cls,
        text: str,
        start: int,
        end: int,
        *,
        start_line: int = 1,
        end_line: int = 1,
        index: int = 0,
        id: str | None = None,
        prev_id: str | None = None,
        next_id: str | None = None,
        headings: Iterable[str] | None = None,
        token_count: int | None = None,
        char_count: int | None = None,
        metadata: dict[str, Any] | None = None,
        embed_text: str | None = None,
        encoding: str = "o200k_base",
    ) -> Chunk: ...
    def replace(
        self,
        *,
        text: str = ...,
        start: int = ...,
        end: int = ...,
        start_line: int = ...,
        end_line: int = ...,
        index: int = ...,
        id: str = ...,
        prev_id: str | None = ...,
        next_id: str | None = ...,
        headings: Iterable[str] = ...,
        token_count: int = ...,
        char_count: int = ...,
        metadata: dict[str, Any] = ...,
        embed_text: str = ...,
    ) -> Chunk: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class _Chunker:
    """The options of ``chunk``, parsed once (``doc_id`` given per text)."""

    def __new__(
        cls,
        strategy: str,
        chunk_size: int,
        overlap: int,
        max_size: int | None,
        unit: str | Callable[[str], int],
        encoding: str,
        context_headers: str | None,
        separators: list[str] | None,
        min_chunk_size: int | None = None,
        keep_separator: Literal["start", "end"] | None = None,
    ) -> _Chunker: ...
    @property
    def key(self) -> str: ...
    def chunk(self, text: str, doc_id: str | None = None) -> list[Chunk]: ...
    def chunk_many(
        self, texts: list[str], doc_ids: list[str | None] | None = None
    ) -> list[list[Chunk]]: ...
    def chunk_semantic(
        self,
        text: str,
        embeddings: npt.NDArray[np.float32] | npt.NDArray[np.float64],
        threshold_type: str,
        threshold: float | None,
        merge_threshold: float | None,
        doc_id: str | None = None,
    ) -> tuple[list[Chunk], str]: ...

def _relink_chunks(
    chunks: list[Chunk], key: str, doc_id: str | None = None, encoding: str = "o200k_base"
) -> list[Chunk]: ...
def _html_text(html: str) -> str: ...
def _sentence_spans(text: str) -> list[tuple[int, int]]: ...

# Note vaults (fastnotebook.notes): offsets in code points.
_LinkKind: TypeAlias = Literal["wikilink", "embed", "markdown"]
_EdgeKind: TypeAlias = Literal["belongs_to", "prev", "next", "references", "backlink"]

@final
class NoteLink:
    """One link of a note body; ``start``/``end`` are code points into the body."""

    __match_args__: ClassVar[tuple[str, ...]]
    @property
    def kind(self) -> _LinkKind: ...
    @property
    def target(self) -> str: ...
    @property
    def heading(self) -> str | None: ...
    @property
    def block(self) -> str | None: ...
    @property
    def display(self) -> str | None: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def in_suggestions(self) -> bool: ...
    def __new__(
        cls,
        kind: _LinkKind,
        target: str,
        heading: str | None,
        block: str | None,
        display: str | None,
        start: int,
        end: int,
        in_suggestions: bool,
    ) -> NoteLink: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class NoteChunk:
    """One chunk of a note body: ``text == body[char_start:char_end]``."""

    __match_args__: ClassVar[tuple[str, ...]]
    @property
    def note_id(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def char_start(self) -> int: ...
    @property
    def char_end(self) -> int: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def section_title(self) -> str | None: ...
    @property
    def section_path(self) -> tuple[str, ...]: ...
    @property
    def prev_id(self) -> str | None: ...
    @property
    def next_id(self) -> str | None: ...
    @property
    def token_count(self) -> int: ...
    @property
    def char_count(self) -> int: ...
    @property
    def embed_text(self) -> str: ...
    @property
    def wikilinks(self) -> tuple[str, ...]: ...
    @property
    def references(self) -> tuple[dict[str, str], ...]: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    def __new__(
        cls,
        note_id: str,
        id: str,
        index: int,
        text: str,
        char_start: int,
        char_end: int,
        start_line: int,
        end_line: int,
        section_title: str | None,
        section_path: tuple[str, ...],
        prev_id: str | None,
        next_id: str | None,
        token_count: int,
        char_count: int,
        embed_text: str,
        wikilinks: tuple[str, ...],
        references: tuple[dict[str, str], ...],
        metadata: dict[str, Any] | None = None,
    ) -> NoteChunk: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class Edge:
    """One edge of the vault graph (``target_id`` is the raw target when unresolved)."""

    __match_args__: ClassVar[tuple[str, ...]]
    @property
    def kind(self) -> _EdgeKind: ...
    @property
    def source_id(self) -> str: ...
    @property
    def target_id(self) -> str: ...
    @property
    def scope(self) -> Literal["chunk", "note"]: ...
    @property
    def note_id(self) -> str: ...
    @property
    def status(self) -> Literal["ok", "unresolved"]: ...
    def __new__(
        cls,
        kind: _EdgeKind,
        source_id: str,
        target_id: str,
        scope: Literal["chunk", "note"],
        note_id: str,
        status: Literal["ok", "unresolved"],
    ) -> Edge: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class _NotePlan:
    """The chunk plan of one note body (opaque; see ``chunk_note``)."""

    def __len__(self) -> int: ...

def _notes_frontmatter_end(raw: str) -> int: ...
def _notes_normalise(text: str, canonical: bool) -> str: ...
def _notes_split_data(data: bytes) -> tuple[str, str, str, int] | None: ...
def _notes_chunk(
    body: str,
    limits: tuple[int, int, int, int],
    overlap: int = 50,
    encoding: str = "o200k_base",
) -> _NotePlan: ...
def _notes_body(
    body: str,
    suggestion_headings: list[str],
    limits: tuple[int, int, int, int],
    overlap: int,
    encoding: str,
    normalise: str | None,
    data: bytes | None = None,
    offset: int = 0,
) -> tuple[tuple[NoteLink, ...], str | None, bytes | None, _NotePlan]: ...
def _notes_chunks(
    note_id: str,
    body: str,
    plan: _NotePlan,
    links: tuple[NoteLink, ...],
    resolve: Callable[[str], str | None] | None = None,
) -> list[NoteChunk]: ...
def _notes_edges(
    note_id: str,
    chunks: Sequence[NoteChunk],
    known: Container[str],
    resolve: Callable[[str], str | None],
    note_scope_references: bool,
) -> list[Edge]: ...
